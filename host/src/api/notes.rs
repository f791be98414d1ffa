//! `POST /v1/data-import/notes/create/`: notes on an imported account.

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, SupplierCaller};
use super::ignored::IgnoredFields;
use super::schemas::AccountNote;
use crate::domain::import_process::format_datetime;
use crate::domain::notes::NoteStatus;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new().route("/v1/data-import/notes/create/", post(create_notes))
}

/// The answer for one posted note.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct NoteResultBody {
    /// `YYYY-MM-DDTHH:MM:SSZ`
    pub created_at: String,
    /// Null for a note of documents only.
    #[schema(required = true)]
    pub body: Option<String>,
    /// The note's `external_id`, when it was sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    pub status: NoteStatus,
}

/// Adds notes; each is created unless the account already has it (`NOTE_ALREADY_EXISTS`): one
/// with the same `external_id`, or, without one, the same body (and the same `created_at`, when
/// given). A note needs a `body` or at least one document path; each path is relative to the
/// supplier's document root (no `..`, `.`, empty segments or scheme) and must exist there.
/// `unpin_at` is not earlier than `created_at`. Strings may not be blank.
#[utoipa::path(post, path = "/v1/data-import/notes/create/", tag = "data",
    request_body = AccountNote,
    responses((status = 201, body = [NoteResultBody]), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_notes(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, Json<Vec<NoteResultBody>>), ApiError> {
    let results = state.additions.add_notes(&key, &body).await?;
    let answer = results
        .value
        .into_iter()
        .map(|result| NoteResultBody {
            created_at: format_datetime(result.created_at),
            body: result.body,
            external_id: result.external_id,
            status: result.status,
        })
        .collect();
    Ok((
        StatusCode::CREATED,
        IgnoredFields::new("notes", results.ignored),
        Json(answer),
    ))
}
