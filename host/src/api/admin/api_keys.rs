//! `/admin/v1/api-keys`: issue an organisation's key (shown once) and revoke it.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, PathParams};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::import_process::format_datetime;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, post};
use axum::{Json, Router};
use ferry_admin_api::{ApiKey, IssuedApiKey, NewApiKey};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/v1/api-keys", post(create_api_key))
        .route("/admin/v1/api-keys/{id}", delete(revoke_api_key))
}

fn key_answer(record: ApiKeyRecord) -> ApiKey {
    ApiKey {
        id: record.id,
        organisation: record.organisation,
        suppliers: record.suppliers,
        created_at: format_datetime(record.created_at),
        revoked_at: record.revoked_at.map(format_datetime),
    }
}

#[utoipa::path(post, path = "/admin/v1/api-keys", tag = "admin",
    request_body = NewApiKey,
    responses((status = 201, body = IssuedApiKey), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn create_api_key(
    State(state): State<AppState>,
    _: OperatorCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<IssuedApiKey>), ApiError> {
    let issued = state.admin.create_api_key(&body).await?;
    Ok((
        StatusCode::CREATED,
        Json(IssuedApiKey {
            id: issued.record.id,
            key: issued.key,
            organisation: issued.record.organisation,
            suppliers: issued.record.suppliers,
            created_at: format_datetime(issued.record.created_at),
        }),
    ))
}

/// Revokes the key; its tokens stop working at once. Revoking twice is harmless.
#[utoipa::path(delete, path = "/admin/v1/api-keys/{id}", tag = "admin",
    params(("id" = String, Path, description = "API key id")),
    responses((status = 200, body = ApiKey), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn revoke_api_key(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(id): PathParams<String>,
) -> Result<Json<ApiKey>, ApiError> {
    Ok(Json(key_answer(state.admin.revoke_api_key(&id).await?)))
}
