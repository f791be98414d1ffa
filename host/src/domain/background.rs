//! The server's background work, in one owner: every task it runs besides answering requests
//! (the event relay, the expiry sweep, the event retention, the scheduled migrations, the
//! plugins' sync and watch, the storage watch, and each bulk migration) is spawned through one
//! [`Background`], and stopped through it.
//!
//! A task is handed the shutdown signal ([`Background::shutdown`], a [`CancellationToken`])
//! and stops at a safe point of its own once the signal fires: a bulk migration after the
//! account it is on, putting the accounts it did not reach back to `PENDING`; work under a
//! lease gives the lease up. [`Background::stop`] fires the signal and waits for every task,
//! for a grace period at most: a task still running after it is left as if the process had
//! died (its lease expires, and another instance, or the next start, takes its work over).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The owner of the server's background tasks (clones share them).
#[derive(Clone, Default)]
pub struct Background {
    tracker: TaskTracker,
    shutdown: CancellationToken,
    /// The tasks running, by a number of their own: named in the log should any outlast the
    /// grace period.
    running: Arc<Mutex<BTreeMap<u64, String>>>,
    next: Arc<AtomicU64>,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background")
            .field("running", &self.tracker.len())
            .field("shutting_down", &self.shutdown.is_cancelled())
            .finish()
    }
}

/// Takes a task out of [`Background`]'s list when it ends (or is dropped with the runtime).
struct Running {
    id: u64,
    running: Arc<Mutex<BTreeMap<u64, String>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

impl Background {
    pub fn new() -> Self {
        Self::default()
    }

    /// The shutdown signal, for a task to stop on.
    pub fn shutdown(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Whether the shutdown signal has fired.
    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// Runs `task` (named `name` in the log) on the runtime, tracked until it ends.
    pub fn spawn(&self, name: impl Into<String>, task: impl Future<Output = ()> + Send + 'static) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, name.into());
        let running = Running {
            id,
            running: self.running.clone(),
        };
        self.tracker.spawn(async move {
            let _running = running;
            task.await;
        });
    }

    /// Fires the shutdown signal and waits until every task has ended, for `grace` at most:
    /// whether they all did. Those still running are named in the log and left.
    pub async fn stop(&self, grace: Duration) -> bool {
        self.shutdown.cancel();
        self.tracker.close();
        if tokio::time::timeout(grace, self.tracker.wait())
            .await
            .is_ok()
        {
            return true;
        }
        let left: Vec<String> = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        tracing::warn!(
            grace_seconds = grace.as_secs_f64(),
            tasks = ?left,
            "background tasks still running at shutdown are left: their leases expire and their work is taken over"
        );
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stop_waits_for_the_tasks_that_stop_on_the_signal_and_leaves_the_others() {
        let background = Background::new();
        let stopped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let shutdown = background.shutdown();
        background.spawn("polite", {
            let stopped = stopped.clone();
            async move {
                shutdown.cancelled().await;
                // A safe point a moment later.
                tokio::time::sleep(Duration::from_millis(20)).await;
                stopped.store(true, Ordering::SeqCst);
            }
        });
        assert!(background.stop(Duration::from_secs(5)).await);
        assert!(stopped.load(Ordering::SeqCst));
        assert!(background.running.lock().expect("list").is_empty());

        let background = Background::new();
        background.spawn("deaf", std::future::pending());
        assert!(!background.stop(Duration::from_millis(50)).await);
        let left: Vec<String> = background
            .running
            .lock()
            .expect("list")
            .values()
            .cloned()
            .collect();
        assert_eq!(left, ["deaf"]);
    }
}
