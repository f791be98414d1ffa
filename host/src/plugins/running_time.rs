//! The time a hook call has spent running: what its deadline counts.
//!
//! A call runs on an async worker and hands it back at every tick of the epoch
//! ([`super::runtime`]). Before it runs again it may wait for a worker behind the runtime's
//! other tasks: on a busy server, the requests parsing and checking large bodies. That wait is
//! the host's doing, not the plugin's. Counted against the deadline, it failed healthy plugins
//! under load (a 1000-item `map-transactions` call "exceeded its 100ms deadline" while 32
//! batches ran on two cores) and moved their supplier to the low-priority threads.
//!
//! So the deadline counts the time the call's future was being polled: the guest's work, the
//! host's lowering and lifting around it, and whatever the operating system took from its
//! thread meanwhile (a call on the low-priority threads still counts the time it was starved
//! of a core). A call that never returns still stops after its deadline of running time;
//! the waits between its ticks are bounded by the supplier's bulkhead and its queue.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::{Duration, Instant};

/// The running time of one call, shared by the future that runs it and its epoch callback.
#[derive(Debug, Clone, Default)]
pub(super) struct RunningTime {
    spent: Arc<Mutex<Spent>>,
}

#[derive(Debug, Default)]
struct Spent {
    /// The time of the polls that have ended.
    ended: Duration,
    /// When the poll under way began, if one is.
    polling_since: Option<Instant>,
}

impl RunningTime {
    /// The time the call has run so far, the poll under way included.
    pub(super) fn elapsed(&self) -> Duration {
        let spent = self.lock();
        spent.ended
            + spent
                .polling_since
                .map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// Runs `future`, counting the time each of its polls takes.
    pub(super) async fn counting<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        std::future::poll_fn(|context| {
            self.lock().polling_since = Some(Instant::now());
            let poll: Poll<F::Output> = future.as_mut().poll(context);
            let mut spent = self.lock();
            if let Some(since) = spent.polling_since.take() {
                spent.ended += since.elapsed();
            }
            poll
        })
        .await
    }

    fn lock(&self) -> MutexGuard<'_, Spent> {
        self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::RunningTime;
    use std::time::Duration;

    /// Time spent suspended is not counted; time spent inside a poll is, the current poll's
    /// included.
    #[tokio::test(flavor = "current_thread")]
    async fn only_the_time_inside_polls_is_counted() {
        let running = RunningTime::default();
        let inside = running.clone();
        let (release, released) = tokio::sync::oneshot::channel();
        let (counted_during, ()) = tokio::join!(
            running.counting(async {
                std::thread::sleep(Duration::from_millis(30));
                let during = inside.elapsed();
                released.await.ok();
                during
            }),
            async {
                // Holds the thread while the call waits, suspended.
                tokio::task::yield_now().await;
                std::thread::sleep(Duration::from_millis(500));
                release.send(()).ok();
            }
        );
        let counted = running.elapsed();
        assert!(
            counted_during >= Duration::from_millis(30),
            "the poll under way counts: {counted_during:?}"
        );
        assert!(
            counted >= counted_during && counted < Duration::from_millis(500),
            "the other task's 500 ms, spent while the call was suspended, do not count: {counted:?}"
        );
    }
}
