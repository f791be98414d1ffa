//! The relay: carries events from the durable outbox to the Redis stream.
//!
//! It reads the oldest unpublished events, writes them with one pipelined `XADD` each
//! (approximate `MAXLEN`), and only then takes them out of the outbox. While Redis is down it
//! retries with backoff; events wait in the outbox, so none is lost. After any failure, and
//! at start, it first reads the stream's newest entries and skips events whose id is already
//! there, so an event written just before a crash or a dropped connection does not appear
//! twice.

use crate::domain::storage::{Outbox, PendingEvent};
use chrono::{DateTime, Utc};
use redis::aio::MultiplexedConnection;
use serde::Serialize;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub use super::stream_record::{SOURCE, stream_fields};
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
    /// Another instance over the same database publishes the events (it holds the relay's
    /// lease); this one takes over if that one stops.
    Standby,
}

impl RelayMode {
    /// The spelling `/readyz` and the admin API use.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Retrying => "retrying",
            Self::Standby => "standby",
        }
    }
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

    /// Another instance holds the relay's lease.
    pub fn standing_by(&self) {
        self.update(|s| {
            s.state = RelayMode::Standby;
            s.last_error = None;
        });
    }
}

/// Runs until `stop` fires.
///
/// The relay works in two overlapping steps: while Redis appends one batch, it takes the
/// previous batch out of the outbox and reads the next one from it, so the store's work and
/// Redis's work run side by side instead of in turn.
pub async fn run(
    outbox: Arc<dyn Outbox>,
    config: RelayConfig,
    status: Arc<RelayStatus>,
    stop: CancellationToken,
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
    let mut outbox = OutboxReader {
        outbox,
        status: status.clone(),
        acknowledged: Vec::new(),
    };
    let mut connection: Option<MultiplexedConnection> = None;
    let mut reconcile = true;
    let mut backoff = FIRST_BACKOFF;
    let mut prefetched: Option<Vec<PendingEvent>> = None;
    loop {
        if stop.is_cancelled() {
            outbox.settle(&mut reconcile).await;
            return;
        }
        let batch = match prefetched.take() {
            Some(batch) => batch,
            None => outbox.read(config.batch, &HashSet::new()).await,
        };
        if batch.is_empty() {
            outbox.settle(&mut reconcile).await;
            metrics::gauge!("ferry_outbox_pending").set(0.0);
            tokio::select! {
                _ = tokio::time::sleep(IDLE_POLL) => {}
                () = stop.cancelled() => return,
            }
            continue;
        }
        let sent = async {
            let con = match &connection {
                Some(con) => con.clone(),
                None => connection
                    .insert(client.get_multiplexed_async_connection().await?)
                    .clone(),
            };
            let already = if reconcile {
                reconcile = false;
                // Whatever was acknowledged is recorded first, so only this batch is in doubt;
                // if recording fails, `settle` asks for the next round to reconcile again.
                outbox.settle(&mut reconcile).await;
                recent_ids(&con, &config.stream, (config.batch * 4).max(1000)).await?
            } else {
                HashSet::new()
            };
            let (pipeline, commands) = xadd_pipeline(&config, &batch, &already);
            // Every event of the batch may already be in the stream (written just before a
            // failure): then there is nothing to send, and an empty pipeline is an error.
            let sending = (commands > 0).then(|| {
                let mut sending_con = con;
                tokio::spawn(async move { pipeline.query_async::<()>(&mut sending_con).await })
            });
            // While Redis appends this batch: record the previous one, read the next one.
            outbox.settle(&mut reconcile).await;
            let in_flight: HashSet<u64> = batch.iter().map(|event| event.seq).collect();
            prefetched = Some(outbox.read(config.batch, &in_flight).await);
            match sending {
                None => Ok(()),
                Some(sending) => match sending.await {
                    Ok(result) => result,
                    Err(error) => Err(redis::RedisError::from((
                        redis::ErrorKind::Io,
                        "the XADD task failed",
                        error.to_string(),
                    ))),
                },
            }
        }
        .await;
        match sent {
            Ok(()) => {
                outbox
                    .acknowledged
                    .extend(batch.iter().map(|event| event.seq));
                metrics::gauge!("ferry_relay_connected").set(1.0);
                status.update(|s| {
                    s.state = RelayMode::Connected;
                    s.last_error = None;
                });
                backoff = FIRST_BACKOFF;
            }
            Err(error) => {
                tracing::warn!(%error, retry_in_ms = backoff.as_millis() as u64, "cannot publish events to Redis");
                metrics::gauge!("ferry_relay_connected").set(0.0);
                connection = None;
                reconcile = true;
                prefetched = None;
                status.update(|s| {
                    s.state = RelayMode::Retrying;
                    s.last_error = Some(error.to_string());
                });
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    () = stop.cancelled() => {
                        outbox.settle(&mut reconcile).await;
                        return;
                    }
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// The relay's hold on the outbox: reading pending events, and taking out those Redis has
/// acknowledged.
struct OutboxReader {
    outbox: Arc<dyn Outbox>,
    status: Arc<RelayStatus>,
    /// Appended by Redis, not yet taken out of the outbox.
    acknowledged: Vec<u64>,
}

impl OutboxReader {
    async fn read(&self, limit: usize, skip: &HashSet<u64>) -> Vec<PendingEvent> {
        match self.outbox.pending_events(limit, skip).await {
            Ok(batch) => batch,
            Err(error) => {
                tracing::error!(%error, "cannot read the outbox");
                Vec::new()
            }
        }
    }

    /// Takes the acknowledged events out of the outbox. If that fails they stay in it, and
    /// `reconcile` makes the next round skip those already in the stream.
    async fn settle(&mut self, reconcile: &mut bool) {
        if self.acknowledged.is_empty() {
            return;
        }
        let seqs = std::mem::take(&mut self.acknowledged);
        let now = Utc::now();
        match self.outbox.mark_published(&seqs, now).await {
            Ok(()) => {
                metrics::counter!("ferry_events_published_total").increment(seqs.len() as u64);
                self.status.update(|s| {
                    s.published += seqs.len() as u64;
                    s.last_published_at = Some(now);
                });
            }
            Err(error) => {
                tracing::error!(%error, "cannot mark events published");
                *reconcile = true;
            }
        }
    }
}

/// One `XADD` per event not already in the stream, trimmed to about `max_len`; and how many
/// there are.
fn xadd_pipeline(
    config: &RelayConfig,
    batch: &[PendingEvent],
    already: &HashSet<String>,
) -> (redis::Pipeline, usize) {
    let mut pipe = redis::pipe();
    let mut commands = 0;
    for event in batch {
        if !already.is_empty() && event.record.id().is_ok_and(|id| already.contains(id)) {
            continue;
        }
        let mut xadd = redis::cmd("XADD");
        xadd.arg(&config.stream)
            .arg("MAXLEN")
            .arg("~")
            .arg(config.max_len)
            .arg("*");
        for (name, value) in event.record.fields() {
            xadd.arg(name).arg(value);
        }
        pipe.add_command(xadd).ignore();
        commands += 1;
    }
    (pipe, commands)
}

/// The event ids among the newest `count` entries of the stream.
async fn recent_ids(
    con: &MultiplexedConnection,
    stream: &str,
    count: usize,
) -> Result<HashSet<String>, redis::RedisError> {
    let reply: redis::streams::StreamRangeReply = redis::cmd("XREVRANGE")
        .arg(stream)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(count)
        .query_async(&mut con.clone())
        .await?;
    Ok(reply
        .ids
        .iter()
        .filter_map(|entry| entry.get::<String>("id"))
        .collect())
}
