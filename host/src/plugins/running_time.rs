//! The time a hook call has spent running: what its deadline counts.
//!
//! A call runs on an async worker and hands it back at every tick of the epoch
//! ([`super::runtime`]). Before it runs again it may wait for a worker behind the runtime's
//! other tasks: on a busy server, the requests parsing and checking large bodies. That wait is
//! the host's doing, not the plugin's. Counted against the deadline, it failed healthy plugins
//! under load (a 1000-item `map-transactions` call "exceeded its 100ms deadline" while 32
//! batches ran on two cores) and moved their supplier to the low-priority threads.
//!
//! So the deadline counts the CPU time the call's thread used while it polled the call's
//! future: the guest's work and the host's lowering and lifting around it. Not what the
//! operating system took from the thread meanwhile, which is the machine's doing too: an
//! instance prepared ahead is instantiated by a thread that runs only when a core would idle
//! ([`super::prepared`]), and counted in wall-clock time, a busy machine's preemption of that
//! thread mid-instantiation (up to a third of a second, measured) was charged to the call that
//! took the instance, which then failed its request at its first tick with "exceeded its
//! 100ms deadline" (an identity `map-notes` hook, while other processes kept both cores busy).
//! A call that never returns uses CPU time as it spins, and still stops at its deadline; the
//! waits between its ticks are bounded by the supplier's bulkhead and its queue.
//!
//! A poll runs on one thread from its start to its end, so the thread's own CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`), read at both ends, is the poll's.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Duration;

/// The running time of one call, shared by the future that runs it and its epoch callback.
#[derive(Debug, Clone, Default)]
pub(super) struct RunningTime {
    spent: Arc<Mutex<Spent>>,
}

#[derive(Debug, Default)]
struct Spent {
    /// The CPU time of the polls that have ended.
    ended: Duration,
    /// The polling thread's CPU clock when the poll under way began, if one is.
    polling_since: Option<Duration>,
}

/// The CPU time the calling thread has used so far.
fn thread_cpu_time() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::try_from(now).unwrap_or_default()
}

impl RunningTime {
    /// The time the call has run so far, the poll under way included: called from inside the
    /// poll (the epoch's callback), or between polls.
    pub(super) fn elapsed(&self) -> Duration {
        let spent = self.lock();
        spent.ended
            + spent.polling_since.map_or(Duration::ZERO, |since| {
                thread_cpu_time().saturating_sub(since)
            })
    }

    /// Runs `future`, counting the CPU time each of its polls takes.
    pub(super) async fn counting<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        std::future::poll_fn(|context| {
            self.lock().polling_since = Some(thread_cpu_time());
            let poll: Poll<F::Output> = future.as_mut().poll(context);
            let mut spent = self.lock();
            if let Some(since) = spent.polling_since.take() {
                spent.ended += thread_cpu_time().saturating_sub(since);
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
    use super::{RunningTime, thread_cpu_time};
    use std::time::Duration;

    /// Keeps the thread's CPU busy for `cpu` of its own time.
    fn spin(cpu: Duration) {
        let until = thread_cpu_time() + cpu;
        while thread_cpu_time() < until {
            std::hint::spin_loop();
        }
    }

    /// Time spent suspended is not counted; CPU time used inside a poll is, the current poll's
    /// included.
    #[tokio::test(flavor = "current_thread")]
    async fn only_the_time_inside_polls_is_counted() {
        let running = RunningTime::default();
        let inside = running.clone();
        let (release, released) = tokio::sync::oneshot::channel();
        let (counted_during, ()) = tokio::join!(
            running.counting(async {
                spin(Duration::from_millis(30));
                let during = inside.elapsed();
                released.await.ok();
                during
            }),
            async {
                // Holds the thread while the call waits, suspended.
                tokio::task::yield_now().await;
                spin(Duration::from_millis(500));
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

    /// Time a poll's thread spends off its CPU does not count: here it sleeps, as a thread the
    /// operating system has preempted waits for a core. (Counted in wall-clock time, a busy
    /// machine's preemption of the thread that prepares instances ahead failed healthy calls
    /// with "exceeded its 100ms deadline".)
    #[tokio::test(flavor = "current_thread")]
    async fn time_the_thread_is_off_its_cpu_inside_a_poll_does_not_count() {
        let running = RunningTime::default();
        let inside = running.clone();
        let counted_during = running
            .counting(async {
                std::thread::sleep(Duration::from_millis(300));
                inside.elapsed()
            })
            .await;
        let counted = running.elapsed();
        assert!(
            counted_during < Duration::from_millis(100) && counted < Duration::from_millis(100),
            "300 ms asleep inside the poll were counted: {counted_during:?} during it, \
             {counted:?} after"
        );
    }
}
