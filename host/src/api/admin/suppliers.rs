//! `/admin/v1/suppliers`: create, list (with counts per import state), read and change
//! suppliers.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, PathParams};
use crate::domain::admin::SupplierView;
use crate::domain::import_process::format_datetime;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use ferry_admin_api::{NewSupplier, Supplier, SupplierChange, SupplierPlugin};

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

/// A supplier as answered: its record, counts per import state and plugin.
pub(super) fn supplier_answer(view: SupplierView) -> Supplier {
    let supplier = view.supplier;
    Supplier {
        plugin: view.plugin.map(|plugin| SupplierPlugin {
            sha256: plugin.sha256,
            name: plugin.name,
            version: plugin.version,
            size_bytes: plugin.size_bytes,
            installed_at: format_datetime(plugin.installed_at),
        }),
        counts: view.counts.0,
        code: supplier.code,
        name: supplier.name,
        document_root: supplier.document_root,
        send_migration_emails: supplier.send_migration_emails,
        status: supplier.status,
        expiry_window_days: supplier.expiry_window_days,
        strict_unknown_fields: supplier.strict_unknown_fields,
        created_at: format_datetime(supplier.created_at),
        updated_at: format_datetime(supplier.updated_at),
    }
}

#[utoipa::path(post, path = "/admin/v1/suppliers", tag = "admin",
    request_body = NewSupplier,
    responses((status = 201, body = Supplier), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn create_supplier(
    State(state): State<AppState>,
    _: OperatorCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Supplier>), ApiError> {
    let view = state.admin.create_supplier(&body).await?;
    Ok((StatusCode::CREATED, Json(supplier_answer(view))))
}

#[utoipa::path(get, path = "/admin/v1/suppliers", tag = "admin",
    responses((status = 200, body = [Supplier]), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn list_suppliers(
    State(state): State<AppState>,
    _: OperatorCaller,
) -> Result<Json<Vec<Supplier>>, ApiError> {
    Ok(Json(
        state
            .admin
            .suppliers()
            .await?
            .into_iter()
            .map(supplier_answer)
            .collect(),
    ))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = Supplier), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_supplier(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<Supplier>, ApiError> {
    Ok(Json(supplier_answer(state.admin.supplier(&code).await?)))
}

#[utoipa::path(patch, path = "/admin/v1/suppliers/{code}", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    request_body = SupplierChange,
    responses((status = 200, body = Supplier), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn update_supplier(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<Supplier>, ApiError> {
    Ok(Json(supplier_answer(
        state.admin.update_supplier(&code, &body).await?,
    )))
}
