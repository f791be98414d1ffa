//! `/admin/v1/operations-teams`: create, list and remove the operations teams accounts are
//! allocated to when they are migrated.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, PathParams};
use crate::domain::import_process::format_datetime;
use crate::domain::operations_team;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get};
use axum::{Json, Router};
use ferry_admin_api::{NewOperationsTeam, OperationsTeam};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/v1/operations-teams",
            get(list_teams).post(create_team),
        )
        .route("/admin/v1/operations-teams/{name}", delete(delete_team))
}

fn team_answer(team: operations_team::OperationsTeam) -> OperationsTeam {
    OperationsTeam {
        name: team.name,
        created_at: format_datetime(team.created_at),
    }
}

#[utoipa::path(post, path = "/admin/v1/operations-teams", tag = "admin",
    request_body = NewOperationsTeam,
    responses((status = 201, body = OperationsTeam), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn create_team(
    State(state): State<AppState>,
    _: OperatorCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<OperationsTeam>), ApiError> {
    let team = state.admin.create_team(&body).await?;
    Ok((StatusCode::CREATED, Json(team_answer(team))))
}

#[utoipa::path(get, path = "/admin/v1/operations-teams", tag = "admin",
    responses((status = 200, body = [OperationsTeam]), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn list_teams(
    State(state): State<AppState>,
    _: OperatorCaller,
) -> Result<Json<Vec<OperationsTeam>>, ApiError> {
    Ok(Json(
        state
            .admin
            .teams()
            .await?
            .into_iter()
            .map(team_answer)
            .collect(),
    ))
}

/// Removes the team: it can no longer be named; accounts allocated to it keep its name.
#[utoipa::path(delete, path = "/admin/v1/operations-teams/{name}", tag = "admin",
    params(("name" = String, Path, description = "team name")),
    responses((status = 200, body = OperationsTeam), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn delete_team(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(name): PathParams<String>,
) -> Result<Json<OperationsTeam>, ApiError> {
    Ok(Json(team_answer(state.admin.delete_team(&name).await?)))
}
