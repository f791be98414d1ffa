//! Low-priority threads: a blocking pool of its own, apart from the async workers that serve
//! HTTP and run healthy plugins, whose threads run 10 nice levels below the rest of the host
//! (on Linux). The registry runs plugins that overran their deadline here, and compiles
//! components here: such work then gives way to the host's own work and to other suppliers'
//! plugins instead of competing with them as an equal.
//!
//! Only work that overran goes here: a healthy plugin must not wait behind every other busy
//! process of the machine (its deadline counts only the CPU time it used,
//! `plugins/running_time.rs`, so the wait would slow its requests, not fail them).
//!
//! [`run_only_when_idle`] gives a thread the lowest class there is, for work that only uses
//! time a core would otherwise idle ([`super::prepared`]).

use std::sync::OnceLock;
use tokio::runtime::{Builder, Runtime};
use tokio::task::JoinHandle;

/// How many nice levels below the host's own threads these threads run.
pub const NICE_LEVELS_BELOW_HOST: i32 = 10;

/// The pool, started by its first work (commands that only check a component start none).
#[derive(Default)]
pub struct LowPriorityThreads {
    pool: OnceLock<Result<Runtime, String>>,
}

impl std::fmt::Debug for LowPriorityThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LowPriorityThreads")
            .field("started", &self.pool.get().is_some())
            .finish()
    }
}

impl LowPriorityThreads {
    /// Runs `work` on a low-priority thread; `Err` if the pool cannot be started.
    pub fn spawn<R: Send + 'static>(
        &self,
        work: impl FnOnce() -> R + Send + 'static,
    ) -> Result<JoinHandle<R>, String> {
        match self.pool.get_or_init(start_pool) {
            Ok(pool) => Ok(pool.spawn_blocking(work)),
            Err(error) => Err(error.clone()),
        }
    }

    /// Runs `work` to its end on a low-priority thread (a plugin call of a demoted supplier).
    pub fn spawn_future<R: Send + 'static>(
        &self,
        work: impl Future<Output = R> + Send + 'static,
    ) -> Result<JoinHandle<R>, String> {
        self.spawn(move || crate::plugins::runtime::block_on(work))
    }
}

impl Drop for LowPriorityThreads {
    fn drop(&mut self) {
        // Dropping a runtime waits for its threads, which an async context must not do.
        if let Some(Ok(pool)) = self.pool.take() {
            pool.shutdown_background();
        }
    }
}

fn start_pool() -> Result<Runtime, String> {
    Builder::new_multi_thread()
        // The one async worker stays idle: all work goes to the blocking threads.
        .worker_threads(1)
        .thread_name("low-priority")
        .on_thread_start(lower_priority)
        .build()
        .map_err(|error| format!("cannot start the low-priority threads: {error}"))
}

/// Lowers the calling thread's priority by [`NICE_LEVELS_BELOW_HOST`].
fn lower_priority() {
    lower_priority_by(NICE_LEVELS_BELOW_HOST);
}

/// Gives the calling thread the idle scheduling class (Linux's `SCHED_IDLE`): it runs only
/// on a core that has nothing else to run, and the kernel places a waking thread on a core
/// that runs only such threads as readily as on an idle one. (A thread at nice 19 still
/// takes its small share of a busy core, and keeps the core from counting as idle.)
#[cfg(target_os = "linux")]
pub(super) fn run_only_when_idle() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads `param`, a valid value that lives across the call;
    // pid 0 is the calling thread.
    #[allow(unsafe_code)]
    let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if set != 0 {
        tracing::warn!(error = %std::io::Error::last_os_error(), "cannot give a thread the idle scheduling class");
        lower_priority_by(LOWEST_PRIORITY);
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn run_only_when_idle() {}

/// The highest nice value: the lowest priority.
const LOWEST_PRIORITY: i32 = 19;

/// Lowers the calling thread's priority by `levels` (Linux: the nice value of the thread
/// alone), to the lowest at most.
#[cfg(target_os = "linux")]
fn lower_priority_by(levels: i32) {
    let thread = Some(rustix::thread::gettid());
    let lowered = rustix::process::getpriority_process(thread).and_then(|nice| {
        rustix::process::setpriority_process(thread, (nice + levels).min(LOWEST_PRIORITY))
    });
    if let Err(error) = lowered {
        tracing::warn!(%error, "cannot lower the priority of a thread");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority_by(_levels: i32) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_on_threads_below_the_hosts_priority() {
        let threads = LowPriorityThreads::default();
        let host = rustix::process::getpriority_process(Some(rustix::thread::gettid()))
            .expect("host priority");
        let (name, nice) = threads
            .spawn(|| {
                let nice = rustix::process::getpriority_process(Some(rustix::thread::gettid()));
                (std::thread::current().name().map(str::to_owned), nice)
            })
            .expect("pool")
            .await
            .expect("work");
        assert_eq!(name.as_deref(), Some("low-priority"));
        assert_eq!(
            nice.expect("thread priority"),
            (host + NICE_LEVELS_BELOW_HOST).min(19)
        );
        drop(threads);
    }

    #[test]
    fn a_thread_that_runs_only_when_idle_has_the_idle_class() {
        let policy = std::thread::spawn(|| {
            run_only_when_idle();
            std::fs::read_to_string("/proc/thread-self/sched").expect("the thread's sched")
        })
        .join()
        .expect("the thread");
        let policy = policy
            .lines()
            .find(|line| line.starts_with("policy"))
            .and_then(|line| line.rsplit(' ').next())
            .expect("a policy line");
        assert_eq!(policy, libc::SCHED_IDLE.to_string());
    }
}
