//! The relay: carries events from the durable outbox to the Redis stream.
//!
//! It reads the oldest unpublished events, writes them with one pipelined `XADD` each
//! (approximate `MAXLEN`), and only then takes them out of the outbox. While Redis is down it
//! retries with backoff; events wait in the outbox, so none is lost. After any failure, and
//! at start, it first reads the stream's newest entries and skips events whose id is already
//! there, so an event written just before a crash or a dropped connection does not appear
//! twice.

use crate::domain::events::Event;
use crate::store::Store;
use chrono::{DateTime, SecondsFormat, Utc};
use redis::aio::MultiplexedConnection;
use serde::Serialize;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;

pub const SOURCE: &str = "ferry";
const IDLE_POLL: Duration = Duration::from_millis(100);
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct RelayConfig {
    pub url: String,
    pub stream: String,
    /// Approximate length the stream is trimmed to.
    pub max_len: usize,
    /// Events per pipelined batch.
    pub batch: usize,
}

/// Where the relay stands, for `/readyz`, `/metrics` and the admin API.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelayMode {
    /// No Redis URL is configured: events wait in the outbox.
    Disabled,
    Connecting,
    Connected,
    /// Redis cannot be reached; retrying with backoff.
    Retrying,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RelayState {
    pub state: RelayMode,
    pub last_error: Option<String>,
    /// Events published since the server started.
    pub published: u64,
    pub last_published_at: Option<DateTime<Utc>>,
}

/// The shared, live state of the relay.
#[derive(Debug)]
pub struct RelayStatus(Mutex<RelayState>);

impl RelayStatus {
    pub fn new(enabled: bool) -> Self {
        Self(Mutex::new(RelayState {
            state: if enabled {
                RelayMode::Connecting
            } else {
                RelayMode::Disabled
            },
            last_error: None,
            published: 0,
            last_published_at: None,
        }))
    }

    pub fn snapshot(&self) -> RelayState {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn update(&self, change: impl FnOnce(&mut RelayState)) {
        change(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// The fields of one stream entry (CloudEvents names).
pub fn stream_fields(event: &Event) -> Vec<(&'static str, String)> {
    let mut fields = vec![
        ("id", event.id.clone()),
        ("source", SOURCE.to_owned()),
        ("specversion", "1.0".to_owned()),
        ("type", event.event_type.clone()),
        ("dataversion", event.version.clone()),
        (
            "time",
            event.time.to_rfc3339_opts(SecondsFormat::Millis, true),
        ),
    ];
    if let Some(subject) = &event.subject {
        fields.push(("subject", subject.clone()));
    }
    fields.push(("datacontenttype", "application/json".to_owned()));
    fields.push(("data", event.data.to_string()));
    fields
}

/// Runs until `stop` changes.
pub async fn run(
    store: Arc<dyn Store>,
    config: RelayConfig,
    status: Arc<RelayStatus>,
    mut stop: watch::Receiver<bool>,
) {
    let client = match redis::Client::open(config.url.as_str()) {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "invalid Redis URL: the relay is off");
            status.update(|s| {
                s.state = RelayMode::Retrying;
                s.last_error = Some(format!("invalid Redis URL: {error}"));
            });
            return;
        }
    };
    let mut connection: Option<MultiplexedConnection> = None;
    let mut reconcile = true;
    let mut backoff = FIRST_BACKOFF;
    loop {
        if *stop.borrow() {
            return;
        }
        let batch = match store.pending_events(config.batch) {
            Ok(batch) => batch,
            Err(error) => {
                tracing::error!(%error, "cannot read the outbox");
                Vec::new()
            }
        };
        if batch.is_empty() {
            metrics::gauge!("ferry_outbox_pending").set(0.0);
            tokio::select! {
                _ = tokio::time::sleep(IDLE_POLL) => {}
                _ = stop.changed() => return,
            }
            continue;
        }
        match publish(&client, &mut connection, &config, &batch, &mut reconcile).await {
            Ok(()) => {
                let seqs: Vec<u64> = batch.iter().map(|event| event.seq).collect();
                let now = Utc::now();
                if let Err(error) = store.mark_published(&seqs, now) {
                    // Published but still in the outbox: the next round reconciles.
                    tracing::error!(%error, "cannot mark events published");
                    reconcile = true;
                    continue;
                }
                metrics::counter!("ferry_events_published_total").increment(batch.len() as u64);
                metrics::gauge!("ferry_relay_connected").set(1.0);
                status.update(|s| {
                    s.state = RelayMode::Connected;
                    s.last_error = None;
                    s.published += batch.len() as u64;
                    s.last_published_at = Some(now);
                });
                backoff = FIRST_BACKOFF;
            }
            Err(error) => {
                tracing::warn!(%error, retry_in_ms = backoff.as_millis() as u64, "cannot publish events to Redis");
                metrics::gauge!("ferry_relay_connected").set(0.0);
                connection = None;
                reconcile = true;
                status.update(|s| {
                    s.state = RelayMode::Retrying;
                    s.last_error = Some(error.to_string());
                });
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stop.changed() => return,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

async fn publish(
    client: &redis::Client,
    connection: &mut Option<MultiplexedConnection>,
    config: &RelayConfig,
    batch: &[Event],
    reconcile: &mut bool,
) -> Result<(), redis::RedisError> {
    let con = match connection {
        Some(con) => con,
        None => connection.insert(client.get_multiplexed_async_connection().await?),
    };
    let already = if *reconcile {
        recent_ids(con, &config.stream, (config.batch * 4).max(1000)).await?
    } else {
        HashSet::new()
    };
    *reconcile = false;
    let mut pipe = redis::pipe();
    for event in batch.iter().filter(|event| !already.contains(&event.id)) {
        let mut xadd = redis::cmd("XADD");
        xadd.arg(&config.stream)
            .arg("MAXLEN")
            .arg("~")
            .arg(config.max_len)
            .arg("*");
        for (name, value) in stream_fields(event) {
            xadd.arg(name).arg(value);
        }
        pipe.add_command(xadd).ignore();
    }
    pipe.query_async::<()>(con).await
}

/// The event ids among the newest `count` entries of the stream.
async fn recent_ids(
    con: &mut MultiplexedConnection,
    stream: &str,
    count: usize,
) -> Result<HashSet<String>, redis::RedisError> {
    let reply: redis::streams::StreamRangeReply = redis::cmd("XREVRANGE")
        .arg(stream)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(count)
        .query_async(con)
        .await?;
    Ok(reply
        .ids
        .iter()
        .filter_map(|entry| entry.get::<String>("id"))
        .collect())
}
