//! `/admin/v1/suppliers/{code}/migrations`: start bulk migrations (of every pending account,
//! of the error tail, or of the accounts named) and follow them.

use super::moment;
use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{OperatorCaller, OptionalJsonBody, PathParams};
use crate::domain::migrations::{MigrationView, Selection};
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use ferry_admin_api::Migration;
use ferry_admin_api::migrations::MigrationSelection;

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

fn migration_answer(view: MigrationView) -> Migration {
    Migration {
        id: view.id,
        supplier: view.supplier,
        state: view.state,
        total: view.total,
        processed: view.processed,
        failed: view.failed,
        started_at: moment(view.started_at),
        finished_at: view.finished_at.map(moment),
        selection: view.selection,
    }
}

/// Starts migrating the supplier's accounts awaiting migration in the background: every one
/// (no body, or `{}`), its error tail (`{"only": "errored"}`, with `error_code` one group of
/// it) or the accounts named (`{"accounts": [...]}`). A selection that cannot be read, or names
/// an account never staged, is refused (400).
#[utoipa::path(post, path = "/admin/v1/suppliers/{code}/migrations", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    request_body(content = Option<MigrationSelection>, description = "Which accounts to migrate; none: every account awaiting migration."),
    responses((status = 202, body = Migration), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn start_migration(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    OptionalJsonBody(body): OptionalJsonBody,
) -> Result<(StatusCode, Json<Migration>), ApiError> {
    let selection = Selection::read(body.as_ref())?;
    Ok((
        StatusCode::ACCEPTED,
        Json(migration_answer(
            state.migrations.start(&code, &selection).await?,
        )),
    ))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/migrations", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = [Migration]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn list_migrations(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<Vec<Migration>>, ApiError> {
    Ok(Json(
        state
            .migrations
            .list(&code)
            .await?
            .into_iter()
            .map(migration_answer)
            .collect(),
    ))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/migrations/{id}", tag = "admin",
    params(("code" = String, Path, description = "import supplier code"), ("id" = String, Path, description = "migration id")),
    responses((status = 200, body = Migration), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_migration(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams((code, id)): PathParams<(String, String)>,
) -> Result<Json<Migration>, ApiError> {
    Ok(Json(migration_answer(
        state.migrations.get(&code, &id).await?,
    )))
}
