//! The storage's health: whether writes are taken, and why not.
//!
//! Two things stop writes. Below the free-space watermark of the data directory, writes are
//! refused before the disk is full (as Elasticsearch's flood stage does), reads go on, and
//! writes are taken again by themselves once space is back above the mark. A write that fails
//! anyway for storage reasons (the disk filled regardless, an I/O error) marks the storage
//! failed for good: a backend such as sled keeps its first I/O error, so the server stops once
//! the requests in flight are done and its supervisor starts it again ([`StorageHealth::failed`]).
//! Every backend answers both with [`StoreError::Unwritable`]; `/readyz`, `/metrics`, the
//! admin API and the console report the same [`StorageStatus`].

use crate::domain::error::DomainError;
use crate::domain::storage::{StoreError, Unwritable};
use ferry_admin_api::{StorageState, StorageStatus};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How old a free-space reading may be when a write is checked against the watermark: fresh
/// enough that writes cannot overshoot the mark by much, rare enough to cost nothing.
const READING_MAX_AGE: Duration = Duration::from_millis(100);

/// How often the server reads the free space when no write asks (for recovery, metrics and
/// the console): [`StorageHealth::refresh`].
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The default watermark: 256 MiB, or a tenth of the filesystem when that is less, and never
/// below [`MIN_WATERMARK_BYTES`].
pub const DEFAULT_WATERMARK_BYTES: u64 = 256 * 1024 * 1024;

/// The least watermark a watched directory is given (16.5 MiB): what one write step of the
/// embedded store can take at once ([`crate::store::sled::WRITE_STEP_BYTES`]). A tenth of a
/// small volume (4.8 MiB of 48) is less than the journal's next file, and the disk could fill
/// for real (a failed write, and a restart) before the watermark refused anything.
pub const MIN_WATERMARK_BYTES: u64 = crate::store::sled::WRITE_STEP_BYTES;

#[derive(Debug)]
struct Reading {
    free_bytes: Option<u64>,
    at: Instant,
}

#[derive(Debug)]
pub struct StorageHealth {
    /// The directory whose filesystem is watched; none for a backend without one.
    dir: Option<PathBuf>,
    watermark_bytes: u64,
    reading: Mutex<Reading>,
    /// Set by the first failed write, and never cleared.
    failure: watch::Sender<Option<Unwritable>>,
}

impl StorageHealth {
    /// Watches the filesystem of `dir`: writes are refused while its free space is below
    /// `watermark_bytes`, raised to [`MIN_WATERMARK_BYTES`] where it is less (0: never, and
    /// no watermark at all).
    pub fn watching(dir: &Path, watermark_bytes: u64) -> Self {
        let raised = match watermark_bytes {
            0 => 0,
            asked => asked.max(MIN_WATERMARK_BYTES),
        };
        if raised != watermark_bytes {
            tracing::info!(
                asked = watermark_bytes,
                watermark_bytes = raised,
                "the free-space watermark is raised to what one write step of the store can take"
            );
        }
        let health = Self {
            dir: Some(dir.to_owned()),
            watermark_bytes: raised,
            ..Self::unwatched()
        };
        health.refresh();
        health
    }

    /// No watermark: only failed writes stop writes.
    pub fn unwatched() -> Self {
        Self {
            dir: None,
            watermark_bytes: 0,
            reading: Mutex::new(Reading {
                free_bytes: None,
                at: Instant::now(),
            }),
            failure: watch::channel(None).0,
        }
    }

    /// Whether a write may go ahead now.
    pub fn check(&self) -> Result<(), StoreError> {
        let refusal = self.refusal();
        if let Some(reason) = &refusal {
            let kind = if reason.is_want_of_space() {
                "insufficient_storage"
            } else {
                "storage_failed"
            };
            metrics::counter!("ferry_storage_refused_writes_total", "reason" => kind).increment(1);
        }
        refusal.map_or(Ok(()), |reason| Err(StoreError::Unwritable(reason)))
    }

    /// Why writes are refused now, on a reading at most [`READING_MAX_AGE`] old.
    fn refusal(&self) -> Option<Unwritable> {
        if self.watermark_bytes == 0 {
            return self.refusal_given(None);
        }
        let fresh = {
            let reading = self.reading.lock().unwrap_or_else(PoisonError::into_inner);
            (reading.at.elapsed() < READING_MAX_AGE).then_some(reading.free_bytes)
        };
        let free_bytes = match fresh {
            Some(free) => free,
            None => self.refresh(),
        };
        self.refusal_given(free_bytes)
    }

    /// Why writes are refused, given this reading of the free space.
    fn refusal_given(&self, free_bytes: Option<u64>) -> Option<Unwritable> {
        if let Some(failure) = self.failure.borrow().clone() {
            return Some(failure);
        }
        free_bytes
            .filter(|free| *free < self.watermark_bytes)
            .map(|free_bytes| Unwritable::BelowWatermark {
                free_bytes,
                watermark_bytes: self.watermark_bytes,
            })
    }

    /// Whether writing `bytes` more would leave the free space at or above the watermark
    /// (always, with no watermark, or no reading): what a store asks before a large write of
    /// its own that no request's check covers (the sled journal preparing its next file).
    pub fn leaves_room_for(&self, bytes: u64) -> bool {
        if self.watermark_bytes == 0 {
            return true;
        }
        self.dir
            .as_deref()
            .and_then(free_bytes)
            .is_none_or(|free| free.saturating_sub(bytes) >= self.watermark_bytes)
    }

    /// Reads the free space again; logs crossing the watermark either way.
    pub fn refresh(&self) -> Option<u64> {
        let free_bytes = self.dir.as_deref().and_then(free_bytes);
        let previous = {
            let mut reading = self.reading.lock().unwrap_or_else(PoisonError::into_inner);
            let previous = reading.free_bytes;
            *reading = Reading {
                free_bytes,
                at: Instant::now(),
            };
            previous
        };
        if let Some(free) = free_bytes {
            metrics::gauge!("ferry_storage_free_bytes").set(free as f64);
            let below = |bytes: u64| bytes < self.watermark_bytes;
            match (previous.map(below), below(free)) {
                (Some(false) | None, true) => tracing::error!(
                    free_bytes = free,
                    watermark_bytes = self.watermark_bytes,
                    "free space of the data directory is below the watermark: writes are refused until an operator frees space"
                ),
                (Some(true), false) => tracing::info!(
                    free_bytes = free,
                    watermark_bytes = self.watermark_bytes,
                    "free space of the data directory is back above the watermark: writes are taken again"
                ),
                _ => {}
            }
        }
        metrics::gauge!("ferry_storage_watermark_bytes").set(self.watermark_bytes as f64);
        let writable = self.refusal_given(free_bytes).is_none();
        metrics::gauge!("ferry_storage_writable").set(if writable { 1.0 } else { 0.0 });
        free_bytes
    }

    /// Records a write that failed for storage reasons: from now on writes are refused, and
    /// [`Self::failed`] resolves. The first failure is the one kept.
    pub fn fail(&self, reason: Unwritable) -> Unwritable {
        let mut first = None;
        self.failure.send_if_modified(|failure| {
            if failure.is_some() {
                return false;
            }
            *failure = Some(reason.clone());
            first = Some(reason.clone());
            true
        });
        if let Some(reason) = first {
            metrics::counter!("ferry_storage_failures_total").increment(1);
            metrics::gauge!("ferry_storage_writable").set(0.0);
            tracing::error!(%reason, "a write failed for storage reasons: writes are refused, and the server stops once the requests in flight are done");
        }
        self.failure.borrow().clone().unwrap_or(reason)
    }

    /// Why writes failed, once one has.
    pub fn failure(&self) -> Option<Unwritable> {
        self.failure.borrow().clone()
    }

    /// `error`, a write's: a failure for storage reasons is noted ([`Self::fail`]) and
    /// answered as the first one kept.
    pub fn noted(&self, error: StoreError) -> StoreError {
        match error {
            StoreError::Unwritable(reason @ (Unwritable::DiskFull | Unwritable::Failed(_))) => {
                StoreError::Unwritable(self.fail(reason))
            }
            other => other,
        }
    }

    /// [`Self::noted`] for a use case's error.
    pub fn noted_domain(&self, error: DomainError) -> DomainError {
        match error {
            DomainError::Store(error) => DomainError::Store(self.noted(error)),
            other => other,
        }
    }

    /// Resolves with the reason once a write has failed for storage reasons.
    pub async fn failed(&self) -> Unwritable {
        let mut failure = self.failure.subscribe();
        loop {
            if let Some(reason) = failure.borrow_and_update().clone() {
                return reason;
            }
            if failure.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    pub fn status(&self) -> StorageStatus {
        // The refusal first: it may take a new reading, which the status then shows.
        let refusal = self.refusal();
        let free_bytes = {
            let reading = self.reading.lock().unwrap_or_else(PoisonError::into_inner);
            reading.free_bytes
        };
        let state = match &refusal {
            None => StorageState::Writable,
            Some(Unwritable::BelowWatermark { .. }) => StorageState::ReadOnly,
            Some(_) => StorageState::Failed,
        };
        StorageStatus {
            state,
            free_bytes,
            watermark_bytes: self.watermark_bytes,
            reason: refusal.map(|reason| reason.to_string()),
        }
    }
}

/// The watermark when none is set: [`DEFAULT_WATERMARK_BYTES`], or a tenth of the
/// filesystem of `dir` when that is less, and never below [`MIN_WATERMARK_BYTES`].
pub fn default_watermark(dir: &Path) -> u64 {
    filesystem_bytes(dir)
        .map_or(DEFAULT_WATERMARK_BYTES, |size| {
            DEFAULT_WATERMARK_BYTES.min(size / 10)
        })
        .max(MIN_WATERMARK_BYTES)
}

/// Bytes an unprivileged process may still write on the filesystem of `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    space(dir).map(|(free, _)| free)
}

fn filesystem_bytes(dir: &Path) -> Option<u64> {
    space(dir).map(|(_, size)| size)
}

/// The free bytes (for an unprivileged process) and the size of the filesystem of `dir`.
#[cfg(target_os = "linux")]
fn space(dir: &Path) -> Option<(u64, u64)> {
    let stats = rustix::fs::statvfs(dir).ok()?;
    Some((
        stats.f_bavail.saturating_mul(stats.f_frsize),
        stats.f_blocks.saturating_mul(stats.f_frsize),
    ))
}

#[cfg(not(target_os = "linux"))]
fn space(_dir: &Path) -> Option<(u64, u64)> {
    None
}

/// Why an I/O error stops writes: the disk (or the user's quota) full, or another failure.
pub fn unwritable(error: &std::io::Error) -> Unwritable {
    match error.kind() {
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => Unwritable::DiskFull,
        _ => Unwritable::Failed(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_stop_below_the_watermark_and_after_a_failure() {
        let dir = tempfile::tempdir().expect("temp dir");
        let free = free_bytes(dir.path()).expect("free space");

        let roomy = StorageHealth::watching(dir.path(), 1);
        assert!(roomy.check().is_ok());
        assert_eq!(roomy.status().state, StorageState::Writable);

        let cramped = StorageHealth::watching(dir.path(), free.saturating_mul(2));
        assert!(matches!(
            cramped.check(),
            Err(StoreError::Unwritable(Unwritable::BelowWatermark { .. }))
        ));
        let status = cramped.status();
        assert_eq!(status.state, StorageState::ReadOnly);
        assert!(
            status
                .reason
                .is_some_and(|reason| reason.contains("frees space"))
        );

        let kept = roomy.fail(Unwritable::DiskFull);
        assert_eq!(kept, Unwritable::DiskFull);
        assert_eq!(
            roomy.fail(Unwritable::Failed("later".into())),
            Unwritable::DiskFull
        );
        assert!(matches!(
            roomy.check(),
            Err(StoreError::Unwritable(Unwritable::DiskFull))
        ));
        assert_eq!(roomy.status().state, StorageState::Failed);
    }

    #[test]
    fn the_watermark_is_never_below_one_write_step_of_the_store() {
        let dir = tempfile::tempdir().expect("temp dir");
        let watermark = |asked| StorageHealth::watching(dir.path(), asked).watermark_bytes;
        assert_eq!(watermark(1), MIN_WATERMARK_BYTES);
        assert_eq!(watermark(0), 0, "off");
        assert_eq!(watermark(2 * MIN_WATERMARK_BYTES), 2 * MIN_WATERMARK_BYTES);
        assert!(default_watermark(dir.path()) >= MIN_WATERMARK_BYTES);

        // A large write of the store's own is left out where it would cross the mark.
        let free = free_bytes(dir.path()).expect("free space");
        let watched = StorageHealth::watching(dir.path(), MIN_WATERMARK_BYTES);
        assert!(watched.leaves_room_for(0) == (free >= MIN_WATERMARK_BYTES));
        assert!(!watched.leaves_room_for(free.saturating_add(1 << 30)));
        assert!(StorageHealth::watching(dir.path(), 0).leaves_room_for(u64::MAX));
        assert!(StorageHealth::unwatched().leaves_room_for(u64::MAX));
    }

    #[tokio::test]
    async fn a_failure_is_announced_to_those_waiting() {
        let health = std::sync::Arc::new(StorageHealth::unwatched());
        let waiting = tokio::spawn({
            let health = health.clone();
            async move { health.failed().await }
        });
        tokio::task::yield_now().await;
        health.fail(Unwritable::Failed("EIO".into()));
        let reason = waiting.await.expect("joined");
        assert_eq!(reason, Unwritable::Failed("EIO".into()));
    }
}
