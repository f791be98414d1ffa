//! Account validation, staging and migration: the spec's "not shown" endpoints, on the real
//! platform's paths.

use super::AppState;
use super::account_number::AccountNumbers;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, SupplierCaller};
use super::ignored::IgnoredFields;
use super::schemas::{EnergyAccount, ProcessRequest};
use crate::domain::account::AccountPayload;
use crate::domain::import_process::Staging;
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

/// Answer of `process/`: the platform account created.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ProcessedAccount {
    pub external_account_number: String,
    #[serde(flatten)]
    pub number: AccountNumbers,
}

/// Validates an account and returns it as it would be staged. Writes nothing.
#[utoipa::path(post, path = "/v1/data-import/validate-account/", tag = "staging",
    request_body = EnergyAccount,
    responses((status = 200, body = EnergyAccount), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn validate_account(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(IgnoredFields, Json<AccountPayload>), ApiError> {
    let validated = state.imports.validate(&key, body).await?;
    Ok((
        IgnoredFields::new("validate_account", validated.ignored),
        Json(validated.value),
    ))
}

/// Validates and stages an account: 201 when first staged, 200 when re-staging updates it.
#[utoipa::path(post, path = "/v1/data-import/account-import-process/create-or-update/", tag = "staging",
    request_body = EnergyAccount,
    responses((status = 201, body = StagedAccount), (status = 200, body = StagedAccount), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_or_update(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, Json<StagedAccount>), ApiError> {
    let staged = state.imports.stage(&key, body).await?;
    let (process, staging) = staged.value;
    let status = match staging {
        Staging::Created => StatusCode::CREATED,
        Staging::Updated => StatusCode::OK,
    };
    Ok((
        status,
        IgnoredFields::new("create_or_update", staged.ignored),
        Json(StagedAccount {
            external_account_number: process.external_account_number,
            import_supplier_code: process.supplier_code,
        }),
    ))
}

/// Creates the platform account of a staged account (201). A dry run keeps nothing and
/// answers 400 either way, as the real platform does: the error the real run would give, or
/// `Account would successfully import. Rolled back due to Dry Run.` Past the optional limit of
/// accounts processed at once: 429 with `Retry-After`.
#[utoipa::path(post, path = "/v1/data-import/account-import-process/process/", tag = "staging",
    request_body = ProcessRequest,
    responses((status = 201, body = ProcessedAccount), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("token" = [])))]
pub async fn process(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, Json<ProcessedAccount>), ApiError> {
    let processed = state.imports.process(&key, &body).await?;
    let account = processed.value;
    Ok((
        StatusCode::CREATED,
        IgnoredFields::new("process", processed.ignored),
        Json(ProcessedAccount {
            external_account_number: account.external_account_number,
            number: AccountNumbers::new(Some(account.number)),
        }),
    ))
}
