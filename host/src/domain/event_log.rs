//! The event log as operators see it: read page by page with what still waits in the outbox,
//! and any catalogued event published by hand (checked against the catalogue as Ferry's own
//! are, then stored in the outbox for the relay).

use super::error::DomainError;
use super::events::Event;
use super::validation::{ObjectReader, Optional, Required, StrRule};
use crate::domain::storage::Store;
use serde_json::Value;
use std::sync::Arc;

/// One page of the event log.
#[derive(Debug, Clone)]
pub struct EventLogPage {
    pub events: Vec<Event>,
    /// Pass as `after` for the next page; `None` on the last one.
    pub next_after: Option<u64>,
    /// Events stored and not yet published.
    pub waiting: usize,
}

#[derive(Clone)]
pub struct EventLog {
    store: Arc<dyn Store>,
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog").finish_non_exhaustive()
    }
}

impl EventLog {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// The position `after` names: a `seq` as it is, or the `seq` of the event with that id
    /// (`None`: no such event in the log, never made or taken out by the retention).
    pub async fn position(&self, after: &str) -> Result<Option<u64>, DomainError> {
        match after.parse::<u64>() {
            Ok(seq) => Ok(Some(seq)),
            Err(_) => Ok(self.store.event_seq(after).await?),
        }
    }

    /// Up to `limit` events after the position `after` (from the first kept, without one).
    pub async fn page(
        &self,
        after: Option<u64>,
        limit: usize,
    ) -> Result<EventLogPage, DomainError> {
        let events = self.store.events_after(after, limit).await?;
        let next_after = (events.len() == limit)
            .then(|| events.last().map(|event| event.seq))
            .flatten();
        let waiting = self.waiting().await?;
        Ok(EventLogPage {
            events,
            next_after,
            waiting,
        })
    }

    /// How many events are stored and not yet published.
    pub async fn waiting(&self) -> Result<usize, DomainError> {
        Ok(self.store.outbox_len().await?)
    }

    /// Publishes the event `body` describes (`{type, version, data, subject?}`), its payload
    /// checked against the catalogue: the event as stored, its `seq` assigned, once durable.
    pub async fn publish(&self, body: &Value) -> Result<Event, DomainError> {
        let mut event = read_event(body)?;
        self.store
            .publish_events(std::slice::from_ref(&event))
            .await?;
        self.store.flush().await?;
        event.seq = self.store.event_seq(&event.id).await?.unwrap_or_default();
        Ok(event)
    }
}

/// An operator's event: `type`, `version` and `data` (an object) required, `subject`
/// optional; the payload must match the catalogue's entry for the type and version.
fn read_event(body: &Value) -> Result<Event, DomainError> {
    let mut r = ObjectReader::root(body).map_err(DomainError::invalid)?;
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
    Event::new(&event_type, &version, subject.as_deref(), data)
        .map_err(|error| DomainError::InvalidEvent(error.to_string()))
}
