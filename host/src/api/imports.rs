//! The read endpoints of the spec: the status of one account import, and the lists of all,
//! pending and imported account imports of a supplier (streamed, never held in memory).

use super::AppState;
use super::account_number::{AccountNumbers, ListedAccountNumbers};
use super::error::{ApiError, ErrorBody};
use super::extract::{PathParams, SupplierCaller};
use super::stream::json_array;
use crate::domain::import_process::{ImportListing, TransferStatus, format_datetime};
use crate::domain::imports::ListFilter;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use futures_util::StreamExt;
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/data-import/account-transfer-status/{supplier}/{external}/",
            get(account_transfer_status),
        )
        .route(
            "/v1/data-import/all-account-import-processes/{supplier}/",
            get(all_processes),
        )
        .route(
            "/v1/data-import/pending-account-import-processes/{supplier}/",
            get(pending_processes),
        )
        .route(
            "/v1/data-import/imported-account-import-processes/{supplier}/",
            get(imported_processes),
        )
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TransferStatusBody {
    pub status: TransferStatus,
    /// Empty strings while no account has been created.
    #[serde(flatten)]
    pub number: AccountNumbers,
}

/// One element of the list endpoints.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImportProcessItem {
    pub external_account_number: String,
    /// Null while pending.
    #[serde(flatten)]
    pub number: ListedAccountNumbers,
    /// `YYYY-MM-DDTHH:MM:SSZ`; null while pending.
    #[schema(required = true)]
    pub account_created_at: Option<String>,
}

impl From<ImportListing> for ImportProcessItem {
    fn from(process: ImportListing) -> Self {
        Self {
            external_account_number: process.external_account_number,
            number: ListedAccountNumbers::new(process.platform_account_number),
            account_created_at: process.account_created_at.map(format_datetime),
        }
    }
}

#[utoipa::path(get, path = "/v1/data-import/account-transfer-status/{supplier}/{external}/", tag = "imports",
    params(("supplier" = String, Path, description = "import supplier code"), ("external" = String, Path, description = "external account number")),
    responses((status = 200, body = TransferStatusBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn account_transfer_status(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    PathParams((supplier, external)): PathParams<(String, String)>,
) -> Result<Json<TransferStatusBody>, ApiError> {
    let process = state
        .imports
        .import_listing(&key, &supplier, &external)
        .await?;
    Ok(Json(TransferStatusBody {
        status: crate::domain::import_process::transfer_status(process.state),
        number: AccountNumbers::new(process.platform_account_number),
    }))
}

async fn list(
    state: &AppState,
    key: &crate::domain::api_key::ApiKeyRecord,
    supplier: &str,
    filter: ListFilter,
) -> Result<Response, ApiError> {
    let processes = state.imports.list(key, supplier, filter).await?;
    Ok(json_array(
        processes.map(|item| item.map(ImportProcessItem::from)),
    ))
}

/// Every pending or imported account import of the supplier.
#[utoipa::path(get, path = "/v1/data-import/all-account-import-processes/{supplier}/", tag = "imports",
    params(("supplier" = String, Path, description = "import supplier code")),
    responses((status = 200, body = [ImportProcessItem]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn all_processes(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    PathParams(supplier): PathParams<String>,
) -> Result<Response, ApiError> {
    list(&state, &key, &supplier, ListFilter::All).await
}

/// Account imports still pending (no platform account yet).
#[utoipa::path(get, path = "/v1/data-import/pending-account-import-processes/{supplier}/", tag = "imports",
    params(("supplier" = String, Path, description = "import supplier code")),
    responses((status = 200, body = [ImportProcessItem]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn pending_processes(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    PathParams(supplier): PathParams<String>,
) -> Result<Response, ApiError> {
    list(&state, &key, &supplier, ListFilter::Pending).await
}

/// Account imports that have a platform account.
#[utoipa::path(get, path = "/v1/data-import/imported-account-import-processes/{supplier}/", tag = "imports",
    params(("supplier" = String, Path, description = "import supplier code")),
    responses((status = 200, body = [ImportProcessItem]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn imported_processes(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    PathParams(supplier): PathParams<String>,
) -> Result<Response, ApiError> {
    list(&state, &key, &supplier, ListFilter::Imported).await
}
