//! `/admin/v1/suppliers/{code}/migrations`: start and follow bulk migrations.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{OperatorCaller, PathParams};
use crate::domain::migrations::MigrationView;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/v1/suppliers/{code}/migrations",
            get(list_migrations).post(start_migration),
        )
        .route(
            "/admin/v1/suppliers/{code}/migrations/{id}",
            get(get_migration),
        )
}

/// Starts migrating every pending account of the supplier in the background.
#[utoipa::path(post, path = "/admin/v1/suppliers/{code}/migrations", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 202, body = MigrationView), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn start_migration(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<(StatusCode, Json<MigrationView>), ApiError> {
    Ok((
        StatusCode::ACCEPTED,
        Json(state.migrations.start(&code).await?),
    ))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/migrations", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = [MigrationView]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn list_migrations(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<Vec<MigrationView>>, ApiError> {
    Ok(Json(state.migrations.list(&code)?))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/migrations/{id}", tag = "admin",
    params(("code" = String, Path, description = "import supplier code"), ("id" = String, Path, description = "migration id")),
    responses((status = 200, body = MigrationView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_migration(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams((code, id)): PathParams<(String, String)>,
) -> Result<Json<MigrationView>, ApiError> {
    Ok(Json(state.migrations.get(&code, &id)?))
}
