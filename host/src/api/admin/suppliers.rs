//! `/admin/v1/suppliers`: create, list (with counts per import state), read and change
//! suppliers.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, PathParams};
use crate::api::schemas::{NewSupplierRequest, SupplierChangeRequest};
use crate::domain::admin::SupplierView;
use crate::domain::import_process::format_datetime;
use crate::domain::supplier::SupplierStatus;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use std::collections::BTreeMap;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/v1/suppliers",
            get(list_suppliers).post(create_supplier),
        )
        .route(
            "/admin/v1/suppliers/{code}",
            get(get_supplier).patch(update_supplier),
        )
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SupplierBody {
    pub code: String,
    pub name: String,
    pub document_root: String,
    pub send_migration_emails: bool,
    pub status: SupplierStatus,
    pub expiry_window_days: i64,
    pub created_at: String,
    pub updated_at: String,
    /// Number of import processes in each state (`PENDING`, `IN_PROGRESS`, `PROCESSED`,
    /// `ERRORED`, `CANCELLED`).
    pub counts: BTreeMap<String, u64>,
    /// The supplier's plugin; null when it has none.
    #[schema(required = true)]
    pub plugin: Option<SupplierPlugin>,
}

/// What the supplier list shows of a plugin.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SupplierPlugin {
    pub sha256: String,
    pub name: String,
    pub version: String,
    pub size_bytes: u64,
    pub installed_at: String,
}

impl From<SupplierView> for SupplierBody {
    fn from(view: SupplierView) -> Self {
        let supplier = view.supplier;
        Self {
            plugin: view.plugin.map(|plugin| SupplierPlugin {
                sha256: plugin.sha256,
                name: plugin.name,
                version: plugin.version,
                size_bytes: plugin.size_bytes,
                installed_at: format_datetime(plugin.installed_at),
            }),
            counts: view
                .counts
                .0
                .iter()
                .map(|(state, count)| (state.as_str().to_owned(), *count))
                .collect(),
            code: supplier.code,
            name: supplier.name,
            document_root: supplier.document_root,
            send_migration_emails: supplier.send_migration_emails,
            status: supplier.status,
            expiry_window_days: supplier.expiry_window_days,
            created_at: format_datetime(supplier.created_at),
            updated_at: format_datetime(supplier.updated_at),
        }
    }
}

#[utoipa::path(post, path = "/admin/v1/suppliers", tag = "admin",
    request_body = NewSupplierRequest,
    responses((status = 201, body = SupplierBody), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn create_supplier(
    State(state): State<AppState>,
    _: OperatorCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<SupplierBody>), ApiError> {
    let view = state.admin.create_supplier(&body).await?;
    Ok((StatusCode::CREATED, Json(view.into())))
}

#[utoipa::path(get, path = "/admin/v1/suppliers", tag = "admin",
    responses((status = 200, body = [SupplierBody]), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn list_suppliers(
    State(state): State<AppState>,
    _: OperatorCaller,
) -> Result<Json<Vec<SupplierBody>>, ApiError> {
    Ok(Json(
        state
            .admin
            .suppliers()?
            .into_iter()
            .map(SupplierBody::from)
            .collect(),
    ))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = SupplierBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_supplier(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<SupplierBody>, ApiError> {
    Ok(Json(state.admin.supplier(&code)?.into()))
}

#[utoipa::path(patch, path = "/admin/v1/suppliers/{code}", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    request_body = SupplierChangeRequest,
    responses((status = 200, body = SupplierBody), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn update_supplier(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<SupplierBody>, ApiError> {
    Ok(Json(
        state.admin.update_supplier(&code, &body).await?.into(),
    ))
}
