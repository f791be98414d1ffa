//! `/admin/v1/events`: the event log (the outbox and what was published), with the relay's
//! state; and operators publishing any catalogued event (validated like Ferry's own).

use super::moment;
use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, QueryParams};
use crate::domain::error::DomainError;
use crate::domain::events::Event;
use crate::domain::validation::{ObjectReader, Optional, Required, StrRule};
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
        Some(text) => match text.parse::<u64>() {
            Ok(seq) => Some(seq),
            Err(_) => Some(
                state
                    .store
                    .event_seq(text)
                    .await
                    .map_err(DomainError::from)?
                    .ok_or_else(|| ApiError::Query {
                        name: "after",
                        detail: format!(
                            "no event {text} in the log: never made, or published and older \
                             than the event retention"
                        ),
                    })?,
            ),
        },
    };
    let events = state
        .store
        .events_after(after, limit)
        .await
        .map_err(DomainError::from)?;
    let next_after = (events.len() == limit)
        .then(|| events.last().map(|event| event.seq.to_string()))
        .flatten();
    let relay = state.relay.snapshot();
    let lag = state.store.outbox_len().await.map_err(DomainError::from)?;
    Ok(Json(EventPage {
        events: events.into_iter().map(event_answer).collect(),
        next_after,
        relay: RelayStatus {
            state: relay.state.as_str().to_owned(),
            last_error: relay.last_error,
            published: relay.published,
            last_published_at: relay.last_published_at.map(moment),
            lag: lag as u64,
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
    let mut r = ObjectReader::root(&body).map_err(DomainError::invalid)?;
    let event_type = r.string("type", Required, StrRule::max(200));
    let version = r.string("version", Required, StrRule::max(16));
    let subject = r.string("subject", Optional, StrRule::max(128));
    let data = r.take("data", Required).cloned();
    if let Some(data) = &data
        && !data.is_object()
    {
        r.error(
            r.attr("data"),
            "invalid",
            "Expected the payload as a JSON object.",
        );
    }
    let (event_type, version, data) = r
        .finish(|| Some((event_type?, version?, data?)))
        .map_err(DomainError::invalid)?;
    let mut event = Event::new(&event_type, &version, subject.as_deref(), data)
        .map_err(|error| DomainError::InvalidEvent(error.to_string()))?;
    state
        .store
        .publish_events(std::slice::from_ref(&event))
        .await
        .map_err(DomainError::from)?;
    state.store.flush().await.map_err(DomainError::from)?;
    event.seq = state
        .store
        .event_seq(&event.id)
        .await
        .map_err(DomainError::from)?
        .unwrap_or_default();
    Ok((StatusCode::CREATED, Json(event_answer(event))))
}
