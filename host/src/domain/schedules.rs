//! Scheduled migrations (`POST /v2/data-import/accounts/`): the task's window, and the loop
//! that runs each migration when its window opens.
//!
//! The schedule is written with the staged account (so a restart loses none: the loop reads
//! every pending schedule when it starts), and the [`Scheduler`] is told of new ones as they
//! are made. The loop keeps them in time order and runs each through
//! [`Imports::run_scheduled`](super::imports::Imports::run_scheduled), one at a time. Over a
//! shared database every instance also reads every schedule again now and then, so each
//! schedule runs on whichever instance takes it first, even when the one that staged it is
//! gone.

use super::error::DomainError;
use super::import_process::Schedule;
use super::imports::Imports;
use super::storage::StoreError;
use super::validation::{FieldError, FieldErrors, Nullable, ObjectReader, Optional};
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use std::collections::BTreeSet;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How far ahead a window may end (the real platform's rule).
pub const MAX_WINDOW_AHEAD: Duration = Duration::days(4);
/// How far in the past a window may start, for clocks that differ a little.
const CLOCK_SKEW: Duration = Duration::minutes(1);

/// A scheduled migration that becomes due at `at`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Due {
    pub at: DateTime<Utc>,
    pub supplier: String,
    pub external: String,
}

/// Tells the schedule loop of a new schedule.
#[derive(Debug, Clone)]
pub struct Scheduler(mpsc::UnboundedSender<Due>);

impl Scheduler {
    /// A scheduler and the receiving end its loop reads.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Due>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Self(sender), receiver)
    }

    pub fn due(&self, due: Due) {
        // The loop only stops at shutdown; a schedule it misses then is read back at start.
        let _ = self.0.send(due);
    }
}

/// The account of a v2 body and where it is in the body: its `payload` (at `payload`), or the
/// body itself less `task_params` (at the top; the real document's own examples send the
/// account bare).
pub fn v2_payload(body: &Value) -> (Value, &'static str) {
    match body.get("payload").filter(|payload| payload.is_object()) {
        Some(payload) => (payload.clone(), "payload"),
        None => {
            let mut account = body.clone();
            if let Some(object) = account.as_object_mut() {
                object.remove("task_params");
            }
            (account, "")
        }
    }
}

/// Reads `task_params` of a v2 body: `is_dry_run` (default false), `schedule_window_start`
/// (default now; not in the past) and `schedule_window_end` (default and at most four days
/// ahead; after the start).
pub fn read_task_params(body: &Value, now: DateTime<Utc>) -> Result<Schedule, DomainError> {
    let Some(params) = body.get("task_params").filter(|params| !params.is_null()) else {
        return Ok(Schedule {
            window_start: now,
            window_end: now + MAX_WINDOW_AHEAD,
            dry_run: false,
        });
    };
    let mut r = ObjectReader::root_at(params, "task_params").map_err(DomainError::invalid)?;
    let dry_run = r.boolean("is_dry_run", Optional).unwrap_or(false);
    let start = r.datetime("schedule_window_start", Nullable);
    let end = r.datetime("schedule_window_end", Nullable);
    let (start, end) = r
        .finish(|| Some((start, end)))
        .map_err(DomainError::invalid)?;
    let mut errors = FieldErrors::default();
    let window_start = start.unwrap_or(now);
    let window_end = end.unwrap_or(now + MAX_WINDOW_AHEAD);
    if window_start < now - CLOCK_SKEW {
        errors.push(FieldError::new(
            "task_params.schedule_window_start".to_owned(),
            "schedule_window_start_in_past",
            "schedule_window_start must not be in the past.",
        ));
    }
    if window_end > now + MAX_WINDOW_AHEAD {
        errors.push(FieldError::new(
            "task_params.schedule_window_end".to_owned(),
            "schedule_window_end_too_far_in_future",
            "schedule_window_end must be at most 4 days in the future.",
        ));
    }
    if window_start >= window_end {
        errors.push(FieldError::new(
            "task_params".to_owned(),
            "schedule_window_start__after_end",
            "schedule_window_start must be before schedule_window_end.",
        ));
    }
    if !errors.is_empty() {
        return Err(DomainError::invalid(errors));
    }
    Ok(Schedule {
        window_start,
        window_end,
        dry_run,
    })
}

/// Runs scheduled migrations as their windows open, until told to stop: first every schedule
/// already written, then each new one `arrivals` brings. With `rescan`, every schedule is read
/// again that often, so that a schedule staged through another instance over the same
/// database runs here too when that instance is gone (`instance` names this one in the
/// schedules' leases).
pub async fn run(
    imports: Imports,
    instance: String,
    rescan: Option<std::time::Duration>,
    mut arrivals: mpsc::UnboundedReceiver<Due>,
    stop: CancellationToken,
) {
    let mut queue = BTreeSet::new();
    read_every_schedule(&imports, &mut queue).await;
    let mut rescans = rescan.map(|every| {
        let mut rescans = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        rescans.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        rescans
    });
    loop {
        let now = Utc::now();
        while let Some(due) = queue.first().filter(|due| due.at <= now).cloned() {
            if stop.is_cancelled() {
                return;
            }
            queue.remove(&due);
            match imports
                .run_scheduled(&due.supplier, &due.external, &instance)
                .await
            {
                Ok(None) => {}
                Ok(Some(again)) => {
                    queue.insert(Due { at: again, ..due });
                }
                // Writes refused (a full disk), or the database away: tried again once they
                // may be taken.
                Err(DomainError::Store(
                    reason @ (StoreError::Unwritable(_) | StoreError::Unavailable(_)),
                )) => {
                    tracing::warn!(%reason, supplier = %due.supplier, external = %due.external, "scheduled migration waits for the store to take writes");
                    queue.insert(Due {
                        at: now + Duration::seconds(5),
                        ..due
                    });
                }
                Err(error) => {
                    tracing::error!(%error, supplier = %due.supplier, external = %due.external, "scheduled migration failed");
                }
            }
        }
        let wait = queue
            .first()
            .map_or(std::time::Duration::from_secs(3600), |due| {
                (due.at - Utc::now()).to_std().unwrap_or_default()
            });
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = next_rescan(&mut rescans) => read_every_schedule(&imports, &mut queue).await,
            arrived = arrivals.recv() => match arrived {
                Some(due) => { queue.insert(due); }
                None => return,
            },
            () = stop.cancelled() => return,
        }
    }
}

/// Resolves at the next tick of `rescans`; never without them.
async fn next_rescan(rescans: &mut Option<tokio::time::Interval>) {
    match rescans {
        Some(rescans) => {
            rescans.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Adds every schedule written so far to `queue` (one already there is kept once).
async fn read_every_schedule(imports: &Imports, queue: &mut BTreeSet<Due>) {
    match imports.scheduled().await {
        Ok(pending) => queue.extend(pending),
        Err(error) => tracing::error!(%error, "cannot read the scheduled migrations"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(body: Value, now: DateTime<Utc>) -> Vec<(String, String)> {
        match read_task_params(&body, now) {
            Err(DomainError::Invalid { errors, .. }) => errors
                .0
                .into_iter()
                .map(|e| (e.attr.unwrap_or_default(), e.code))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_window_defaults_to_now_and_four_days_and_follows_the_real_rules() {
        let now: DateTime<Utc> = "2025-10-07T09:00:00Z".parse().expect("time");
        let schedule = read_task_params(&json!({"payload": {}}), now).expect("defaults");
        assert_eq!(schedule.window_start, now);
        assert_eq!(schedule.window_end, now + MAX_WINDOW_AHEAD);
        assert!(!schedule.dry_run);
        let dry = json!({"task_params": {"is_dry_run": true, "schedule_window_start": null}});
        assert!(read_task_params(&dry, now).expect("a dry run").dry_run);
        assert_eq!(
            codes(
                json!({"task_params": {"schedule_window_start": "2025-10-06T09:00:00Z",
                                        "schedule_window_end": "2025-10-12T09:00:00Z"}}),
                now
            ),
            [
                (
                    "task_params.schedule_window_start".to_owned(),
                    "schedule_window_start_in_past".to_owned()
                ),
                (
                    "task_params.schedule_window_end".to_owned(),
                    "schedule_window_end_too_far_in_future".to_owned()
                )
            ]
        );
        assert_eq!(
            codes(
                json!({"task_params": {"schedule_window_start": "2025-10-08T09:00:00Z",
                                        "schedule_window_end": "2025-10-07T10:00:00Z"}}),
                now
            ),
            [(
                "task_params".to_owned(),
                "schedule_window_start__after_end".to_owned()
            )]
        );
        assert_eq!(
            codes(json!({"task_params": {"is_dry_run": "yes"}}), now),
            [("task_params.is_dry_run".to_owned(), "invalid".to_owned())]
        );
    }
}
