//! `POST /v1/data-import/transactions/create/`: a batch of transactions, all added or none.

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, QueryParams, SupplierCaller};
use super::ignored::IgnoredFields;
use super::schemas::{Transactions, TransactionsBadRequest};
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

/// Reads the two boolean query options (`true`/`false`, also `1`/`0`, any case); any other
/// parameter is refused.
fn options(query: &HashMap<String, String>) -> Result<TransactionOptions, ApiError> {
    let mut options = TransactionOptions::default();
    for (name, value) in query {
        let (name, option) = match name.as_str() {
            "check_previously_added" => (
                "check_previously_added",
                &mut options.check_previously_added,
            ),
            "force_add_to_current_statement" => (
                "force_add_to_current_statement",
                &mut options.force_add_to_current_statement,
            ),
            _ => {
                return Err(ApiError::Query {
                    name: "query",
                    detail: format!("unknown query parameter {name}"),
                });
            }
        };
        *option = match value.to_ascii_lowercase().as_str() {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => {
                return Err(ApiError::Query {
                    name,
                    detail: format!("\"{value}\" is not a boolean: use true or false."),
                });
            }
        };
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
    request_body = Transactions,
    responses((status = 201, body = TransactionResultsBody), (status = 400, description = "A failing transaction (nothing of the batch was added), or a request that could not be read", body = TransactionsBadRequest), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_transactions(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    QueryParams(query): QueryParams<HashMap<String, String>>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, Json<TransactionResultsBody>), ApiError> {
    let options = options(&query)?;
    let added = state
        .additions
        .add_transactions(&key, &body, options)
        .await?;
    Ok((
        StatusCode::CREATED,
        IgnoredFields::new("transactions", added.ignored),
        Json(TransactionResultsBody {
            results: added.value,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn options_are_booleans_and_nothing_else_is_accepted() {
        let read = options(&query(&[
            ("check_previously_added", "FALSE"),
            ("force_add_to_current_statement", "0"),
        ]))
        .expect("options");
        assert!(!read.check_previously_added && !read.force_add_to_current_statement);
        let Err(ApiError::Query { name, .. }) = options(&query(&[("x", "42")])) else {
            panic!("an unknown parameter was accepted");
        };
        assert_eq!(name, "query");
        let Err(ApiError::Query { name, .. }) =
            options(&query(&[("check_previously_added", "maybe")]))
        else {
            panic!("a non-boolean was accepted");
        };
        assert_eq!(name, "check_previously_added");
    }
}
