//! `/admin/v1/events`: the event log (the outbox and what was published) with the relay's
//! state, and operators publishing a catalogued event.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// An event as stored and published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Event {
    /// Position in the event log.
    pub seq: u64,
    /// UUIDv7.
    pub id: String,
    /// The catalogue's name of the event (`account.created`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Payload version (`v1`, `v2`, … or `1.0.0`).
    pub version: String,
    pub time: String,
    /// The account number, when the event is about an account.
    #[schema(required = true)]
    pub subject: Option<String>,
    #[schema(value_type = Object)]
    pub data: Value,
    /// When the relay wrote it to the stream.
    #[schema(required = true)]
    pub published_at: Option<String>,
}

/// One page of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventPage {
    pub events: Vec<Event>,
    /// Pass as `after` for the next page; null when this page is the end of the log.
    #[schema(required = true)]
    pub next_after: Option<String>,
    pub relay: RelayStatus,
}

/// How the relay that publishes events to Redis is doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RelayStatus {
    /// `disabled` (no Redis configured), `connecting`, `connected`, `retrying`, or `standby`
    /// (another instance over the same database publishes).
    pub state: String,
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// Events published since the server started.
    pub published: u64,
    #[schema(required = true)]
    pub last_published_at: Option<String>,
    /// Events waiting in the outbox.
    pub lag: u64,
}

/// Body of `POST /admin/v1/events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishEvent {
    /// A type of the event catalogue.
    #[serde(rename = "type")]
    #[schema(min_length = 1, max_length = 200, example = "account.occupied")]
    pub kind: String,
    #[schema(min_length = 1, max_length = 16, example = "v1")]
    pub version: String,
    /// The payload, valid against the catalogue.
    #[schema(value_type = Object)]
    pub data: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, min_length = 1, max_length = 128)]
    pub subject: Option<String>,
}
