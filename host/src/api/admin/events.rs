//! `/admin/v1/events`: the event log (the outbox and what was published), with the relay's
//! state; and operators publishing any catalogued event (validated like Ferry's own).

use super::moment;
use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, QueryParams};
use crate::domain::events::Event;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use ferry_admin_api::{EventPage, PublishEvent, RelayStatus};
use serde::Deserialize;

pub const DEFAULT_PAGE: usize = 100;
pub const MAX_PAGE: usize = 1000;

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/v1/events", get(list_events).post(publish_event))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EventsParams {
    /// The `seq` or the `id` of the last event seen. An id the retention took out of the log
    /// (`--event-retention-seconds`) is refused; a `seq` reads on from the first event kept.
    #[param(nullable = false)]
    pub after: Option<String>,
    /// Page size (default 100).
    #[param(nullable = false, minimum = 1, maximum = 1000)]
    pub limit: Option<usize>,
}

fn event_answer(event: Event) -> ferry_admin_api::Event {
    ferry_admin_api::Event {
        seq: event.seq,
        id: event.id,
        kind: event.event_type,
        version: event.version,
        time: moment(event.time),
        subject: event.subject,
        data: event.data.to_value(),
        published_at: event.published_at.map(moment),
    }
}

#[utoipa::path(get, path = "/admin/v1/events", tag = "admin",
    params(EventsParams),
    responses((status = 200, body = EventPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn list_events(
    State(state): State<AppState>,
    _: OperatorCaller,
    QueryParams(params): QueryParams<EventsParams>,
) -> Result<Json<EventPage>, ApiError> {
    let limit = params.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::Query {
            name: "limit",
            detail: format!("use 1 to {MAX_PAGE}"),
        });
    }
    let after = match params.after.as_deref().filter(|a| !a.is_empty()) {
        None => None,
        Some(text) => Some(state.event_log.position(text).await?.ok_or_else(|| {
            ApiError::Query {
                name: "after",
                detail: format!(
                    "no event {text} in the log: never made, or published and older than the \
                     event retention"
                ),
            }
        })?),
    };
    let page = state.event_log.page(after, limit).await?;
    let relay = state.relay.snapshot();
    Ok(Json(EventPage {
        events: page.events.into_iter().map(event_answer).collect(),
        next_after: page.next_after.map(|seq| seq.to_string()),
        relay: RelayStatus {
            state: relay.state.as_str().to_owned(),
            last_error: relay.last_error,
            published: relay.published,
            last_published_at: relay.last_published_at.map(moment),
            lag: page.waiting as u64,
        },
    }))
}

/// Publishes a catalogued event: `{type, version, data, subject?}`. The payload is validated
/// against the catalogue; 201 with the event as stored in the outbox.
#[utoipa::path(post, path = "/admin/v1/events", tag = "admin",
    request_body = PublishEvent,
    responses((status = 201, body = ferry_admin_api::Event), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn publish_event(
    State(state): State<AppState>,
    _: OperatorCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<ferry_admin_api::Event>), ApiError> {
    let event = state.event_log.publish(&body).await?;
    Ok((StatusCode::CREATED, Json(event_answer(event))))
}
