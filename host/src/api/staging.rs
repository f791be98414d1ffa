//! Account validation, staging and migration: the spec's "not shown" endpoints, on the real
//! platform's paths.

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, SupplierCaller};
use super::schemas::{AccountRequest, ProcessRequest};
use crate::domain::account::AccountPayload;
use crate::domain::import_process::Staging;
use crate::domain::imports::ProcessOutcome;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/data-import/validate-account/", post(validate_account))
        .route(
            "/v1/data-import/account-import-process/create-or-update/",
            post(create_or_update),
        )
        .route(
            "/v1/data-import/account-import-process/process/",
            post(process),
        )
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StagedAccount {
    pub external_account_number: String,
    pub import_supplier_code: String,
}

/// Answer of `process/`: the account created, or (dry run) that it would have been.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ProcessedAccount {
    pub external_account_number: String,
    /// Absent on a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_account_number: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// On a dry run: the migration would have succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_succeed: Option<bool>,
}

/// Validates an account and returns it as it would be staged. Writes nothing.
#[utoipa::path(post, path = "/v1/data-import/validate-account/", tag = "staging",
    request_body = AccountRequest,
    responses((status = 200, body = AccountPayload), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn validate_account(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<Json<AccountPayload>, ApiError> {
    Ok(Json(state.imports.validate(&key, &body).await?))
}

/// Validates and stages an account: 201 when first staged, 200 when re-staging updates it.
#[utoipa::path(post, path = "/v1/data-import/account-import-process/create-or-update/", tag = "staging",
    request_body = AccountRequest,
    responses((status = 201, body = StagedAccount), (status = 200, body = StagedAccount), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_or_update(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<StagedAccount>), ApiError> {
    let (process, staging) = state.imports.stage(&key, &body).await?;
    let status = match staging {
        Staging::Created => StatusCode::CREATED,
        Staging::Updated => StatusCode::OK,
    };
    Ok((
        status,
        Json(StagedAccount {
            external_account_number: process.external_account_number,
            import_supplier_code: process.supplier_code,
        }),
    ))
}

/// Creates the platform account of a staged account; with `dry_run` keeps nothing and says
/// whether it would have succeeded (200), or answers the error the real run would give.
#[utoipa::path(post, path = "/v1/data-import/account-import-process/process/", tag = "staging",
    request_body = ProcessRequest,
    responses((status = 201, body = ProcessedAccount), (status = 200, description = "dry run: would succeed", body = ProcessedAccount), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("token" = [])))]
pub async fn process(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<ProcessedAccount>), ApiError> {
    let answer = match state.imports.process(&key, &body).await? {
        ProcessOutcome::Created(account) => (
            StatusCode::CREATED,
            ProcessedAccount {
                external_account_number: account.external_account_number,
                platform_account_number: Some(account.number),
                dry_run: false,
                would_succeed: None,
            },
        ),
        ProcessOutcome::WouldSucceed {
            external_account_number,
        } => (
            StatusCode::OK,
            ProcessedAccount {
                external_account_number,
                platform_account_number: None,
                dry_run: true,
                would_succeed: Some(true),
            },
        ),
    };
    Ok((answer.0, Json(answer.1)))
}
