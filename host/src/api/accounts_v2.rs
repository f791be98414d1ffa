//! The v2 account endpoints, over the same import processes as v1: validate an account,
//! schedule its creation (staged now, migrated in the background within the task's window),
//! and follow its import status.

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, PathParams, SupplierCaller};
use super::ignored::IgnoredFields;
use super::schemas::{ScheduleAccountRequest, ValidateAccountV2Request};
use crate::domain::error::DomainError;
use crate::domain::import_process::{ProcessFailure, format_datetime};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v2/data-import/accounts/", post(schedule_account))
        .route("/v2/data-import/accounts/validate/", post(validate_account))
        .route(
            "/v2/data-import/accounts/{supplier}/{external}/",
            get(import_status),
        )
}

/// What the import of one account has come to.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImportStatusBody {
    /// `PENDING`, `IN_PROGRESS`, `PROCESSED`, `ERRORED`, `CANCELLED`, `DRY_RUN_SUCCEEDED` or
    /// `DRY_RUN_ERRORED`.
    pub status: &'static str,
    /// The platform account number once the account exists.
    #[schema(required = true)]
    pub platform_identifier: Option<String>,
    /// The same number under the real platform's name.
    #[schema(required = true)]
    pub kraken_identifier: Option<String>,
    pub created_at: String,
    pub modified_at: String,
    pub latest_event: ImportEventBody,
    /// The most recent failure, if any.
    #[schema(required = true)]
    pub latest_error: Option<LatestErrorBody>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImportEventBody {
    /// `EVENT_ACCOUNT_IMPORT_PROCESS_CREATED`, `..._UPDATED`, `..._SCHEDULED`,
    /// `..._IN_PROGRESS`, `..._PROCESSED`, `..._ERRORED`, `..._CANCELLED`,
    /// `..._DRY_RUN_SUCCEEDED` or `..._DRY_RUN_ERRORED`.
    pub event: String,
    pub occurred_at: String,
    /// The failure the event reported; null otherwise.
    #[schema(required = true, value_type = Option<LatestErrorBody>)]
    pub data: Option<LatestErrorBody>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LatestErrorBody {
    pub code: String,
    pub detail: String,
    /// Always `import_process`.
    pub domain: &'static str,
}

impl From<ProcessFailure> for LatestErrorBody {
    fn from(failure: ProcessFailure) -> Self {
        Self {
            code: failure.code,
            detail: failure.detail,
            domain: "import_process",
        }
    }
}

/// Validates an account (in `payload`, or bare as the real document's own examples send it);
/// 200 with no body, nothing written.
#[utoipa::path(post, path = "/v2/data-import/accounts/validate/", tag = "staging",
    request_body = ValidateAccountV2Request,
    responses((status = 200, description = "The account is valid."), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn validate_account(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, ()), ApiError> {
    let validated = state.imports.validate_v2(&key, &body).await?;
    Ok((
        StatusCode::OK,
        IgnoredFields::new("v2_validate", validated.ignored),
        (),
    ))
}

/// Stages the account and schedules its migration within `task_params`' window (a dry run
/// when `is_dry_run`); 201 with no body. `GET` the status to follow it.
#[utoipa::path(post, path = "/v2/data-import/accounts/", tag = "staging",
    request_body = ScheduleAccountRequest,
    responses((status = 201, description = "The migration is scheduled."), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("token" = [])))]
pub async fn schedule_account(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, ()), ApiError> {
    let scheduled = state.imports.schedule(&key, &body).await?;
    Ok((
        StatusCode::CREATED,
        IgnoredFields::new("v2_schedule", scheduled.ignored),
        (),
    ))
}

/// The import status of one account, with its latest event and error.
#[utoipa::path(get, path = "/v2/data-import/accounts/{supplier}/{external}/", tag = "imports",
    params(("supplier" = String, Path, description = "import supplier code"), ("external" = String, Path, description = "external account number")),
    responses((status = 200, body = ImportStatusBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn import_status(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    PathParams((supplier, external)): PathParams<(String, String)>,
) -> Result<Json<ImportStatusBody>, ApiError> {
    let process = state
        .imports
        .import_process(&key, &supplier, &external)
        .await
        .map_err(|error| match error {
            DomainError::AccountNotFound | DomainError::SupplierNotFound => ApiError::NotFound,
            other => other.into(),
        })?;
    let event = process.latest_event_or_state();
    Ok(Json(ImportStatusBody {
        status: process.v2_status(),
        platform_identifier: process.platform_account_number.clone(),
        kraken_identifier: process.platform_account_number.clone(),
        created_at: format_datetime(process.created_at.unwrap_or(process.staged_at)),
        modified_at: format_datetime(process.updated_at),
        latest_event: ImportEventBody {
            event: event.kind.event_name(),
            occurred_at: format_datetime(event.at),
            data: event.error.map(LatestErrorBody::from),
        },
        latest_error: process.last_failure.map(LatestErrorBody::from),
    }))
}
