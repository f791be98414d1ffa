//! Keeping the event log to a window of time: published events made longer ago than the
//! retention (`--event-retention-seconds`) are taken out of the log, oldest first, so that the
//! store does not grow with every event ever made. An event the relay has not published yet is
//! never taken, however old, nor any after it
//! ([`EventLog::prune_events`](crate::domain::storage::EventLog::prune_events)): nothing leaves Ferry
//! before it reached the stream. One instance at a time does it (the lease
//! [`LEASE`]), every [`pause`], a batch of [`BATCH`] events after another until none is due.

use crate::domain::storage::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The lease of the work.
pub const LEASE: &str = "event-retention";
/// Events taken out of the log in one store call.
pub const BATCH: usize = 10_000;
/// The longest pause between two rounds.
const LONGEST_PAUSE: Duration = Duration::from_secs(60);
/// The shortest (for a retention of a second or so, as tests use).
const SHORTEST_PAUSE: Duration = Duration::from_millis(100);

/// The pause between two rounds: a quarter of the retention, within a minute. An event leaves
/// the log within this pause of its time to go, once published.
pub fn pause(retention: Duration) -> Duration {
    (retention / 4).clamp(SHORTEST_PAUSE, LONGEST_PAUSE)
}

/// Takes the published events older than `retention` out of the log every [`pause`], until
/// `stop`.
pub async fn run(store: Arc<dyn Store>, retention: Duration, stop: CancellationToken) {
    let every = pause(retention);
    let retention_seconds = retention.as_secs_f64();
    let Ok(window) = chrono::Duration::from_std(retention) else {
        tracing::warn!(
            retention_seconds,
            "the event retention is too long to count: events are kept"
        );
        return;
    };
    loop {
        let made_before = chrono::Utc::now() - window;
        let mut taken = 0;
        loop {
            match store.prune_events(made_before, BATCH).await {
                Ok(count) => {
                    taken += count;
                    if count < BATCH || stop.is_cancelled() {
                        break;
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot take old events out of the event log");
                    break;
                }
            }
        }
        if taken > 0 {
            metrics::counter!("ferry_events_pruned_total").increment(taken as u64);
            tracing::info!(
                count = taken,
                retention_seconds,
                "took published events older than the retention out of the event log"
            );
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            () = stop.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_every_quarter_of_the_retention_within_a_minute() {
        assert_eq!(pause(Duration::from_secs(2)), Duration::from_millis(500));
        assert_eq!(pause(Duration::from_millis(10)), SHORTEST_PAUSE);
        assert_eq!(pause(Duration::from_secs(30 * 24 * 3600)), LONGEST_PAUSE);
    }
}
