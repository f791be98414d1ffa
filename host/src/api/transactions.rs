//! `POST /v1/data-import/transactions/create/`: a batch of transactions, all added or none.

use super::AppState;
use super::error::{ApiError, ErrorBody, TransactionImportErrorBody};
use super::extract::{JsonBody, QueryParams, SupplierCaller};
use crate::domain::additions::{TransactionOptions, TransactionResult};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use std::collections::HashMap;

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/data-import/transactions/create/",
        post(create_transactions),
    )
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TransactionResultsBody {
    pub results: Vec<TransactionResult>,
}

/// Reads the two boolean query options (`true`/`false`, also `1`/`0`, any case).
fn options(query: &HashMap<String, String>) -> Result<TransactionOptions, ApiError> {
    let mut options = TransactionOptions::default();
    for (name, value) in query {
        let flag = match value.to_ascii_lowercase().as_str() {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => {
                return Err(ApiError::Query {
                    name: if name == "check_previously_added" {
                        "check_previously_added"
                    } else {
                        "force_add_to_current_statement"
                    },
                    detail: format!("\"{value}\" is not a boolean: use true or false."),
                });
            }
        };
        match name.as_str() {
            "check_previously_added" => options.check_previously_added = flag,
            "force_add_to_current_statement" => options.force_add_to_current_statement = flag,
            _ => {
                return Err(ApiError::Query {
                    name: "query",
                    detail: format!("unknown query parameter {name}"),
                });
            }
        }
    }
    Ok(options)
}

/// Adds transactions to the account's ledger. A failing transaction answers
/// `TRANSACTION_IMPORT_ERROR` and nothing of the batch is added.
#[utoipa::path(post, path = "/v1/data-import/transactions/create/", tag = "data",
    params(
        ("check_previously_added" = Option<bool>, Query, description = "skip (and report) transactions already added; default true"),
        ("force_add_to_current_statement" = Option<bool>, Query, description = "move transactions dated before the open statement period into it; default true"),
    ),
    request_body(content = serde_json::Value, description = "{import_supplier, external_account_number, transactions: [...]}"),
    responses((status = 201, body = TransactionResultsBody), (status = 400, body = TransactionImportErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_transactions(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    QueryParams(query): QueryParams<HashMap<String, String>>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<TransactionResultsBody>), ApiError> {
    let options = options(&query)?;
    let results = state
        .additions
        .add_transactions(&key, &body, options)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(TransactionResultsBody { results }),
    ))
}
