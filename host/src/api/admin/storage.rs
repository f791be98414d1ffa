//! `/admin/v1/storage`: whether the store takes writes, and why not, for the console's main
//! screen.

use crate::api::AppState;
use crate::api::error::ErrorBody;
use crate::api::extract::OperatorCaller;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use ferry_admin_api::StorageStatus;

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/v1/storage", get(storage_status))
}

/// The store's state: writable, read-only below the free-space watermark, or failed.
#[utoipa::path(get, path = "/admin/v1/storage", tag = "admin",
    responses((status = 200, body = StorageStatus), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn storage_status(
    State(state): State<AppState>,
    _: OperatorCaller,
) -> Json<StorageStatus> {
    Json(state.storage.status())
}
