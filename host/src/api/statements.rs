//! `POST /v1/data-import/historical-statements/create/`: the old supplier's statements.

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, SupplierCaller};
use super::schemas::StatementsRequest;
use crate::domain::additions::StatementsBody;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/data-import/historical-statements/create/",
        post(create_statements),
    )
}

/// Keeps historical statements (a re-sent `statement_id` is not duplicated) and answers the
/// validated data.
#[utoipa::path(post, path = "/v1/data-import/historical-statements/create/", tag = "data",
    request_body = StatementsRequest,
    responses((status = 201, body = StatementsBody), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_statements(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<StatementsBody>), ApiError> {
    Ok((
        StatusCode::CREATED,
        Json(state.additions.add_statements(&key, &body).await?),
    ))
}
