//! Fresh instances made ahead of their calls, and used stores dropped after them, by one
//! thread that runs only when a core would otherwise idle (`plugin-spare`).
//!
//! Every hook call still runs in a fresh store that nothing ran in before
//! ([`super::runtime`]): a prepared instance is taken by one call and dropped after it. What
//! moves is the host's work around the call: instantiating the component and dropping its
//! store (which resets its pooled memory) were about an eighth of a note's CPU on the request's
//! thread, and under load a sixth to a quarter of the machine's cores idled while the
//! journal's writer waited for the disk (BENCHMARKS.md). The thread has Linux's idle
//! scheduling class, so it takes only such time. Where there is none it falls behind, and a
//! call instantiates on its own thread and drops its store there, as it did without it.
//!
//! Bounds: each component keeps a few instances, all components a few dozen, and a few used
//! stores wait to be dropped; past that a call drops its own store. All of it is well within
//! the pooling allocator's slots, and few slots in turn keep their pages warm.
//!
//! A request's thread never waits for this one: it takes a prepared instance or hands over a
//! used store only if the lock is free (the thread, which any other work preempts, may hold
//! it), and does the work itself otherwise. Nor does it wake the thread while it works: the
//! thread does one round of the work given each millisecond while there is some, sleeps when
//! there is none, and is woken by the first work after that.

use super::running_time::RunningTime;
use super::runtime::block_on;
use super::sandbox::PluginState;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError, Weak};
use std::thread::Thread;
use std::time::Duration;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

/// How many prepared instances one component keeps.
const PER_COMPONENT: usize = 4;
/// How many prepared instances all components keep together.
pub(super) const IN_ALL: usize = 64;
/// How many used stores may wait for the thread to drop them; past that a call drops its own.
const WAITING_TO_DROP: usize = 8;
/// How often the thread looks for work while there is some.
const TICK: Duration = Duration::from_millis(1);

/// A fresh instance nothing has run in, and its store, whose deadline counts `running`.
pub(super) struct Prepared {
    pub store: Store<PluginState>,
    pub instance: Instance,
    pub running: RunningTime,
}

/// Makes a fresh store whose deadline counts `running` (the runtime's settings).
pub(super) type NewStore = dyn Fn(&RunningTime) -> Store<PluginState> + Send + Sync;

/// One component's prepared instances.
pub(super) struct Stock {
    pre: InstancePre<PluginState>,
    ready: Mutex<Vec<Prepared>>,
    /// A refill has been asked for and not yet done.
    refill_asked: AtomicBool,
    /// Prepared instances of every component of the runtime.
    in_all: Arc<AtomicUsize>,
}

impl Stock {
    /// A stock of `pre`'s instances, empty until its first call asks for it to be filled.
    pub(super) fn new(pre: InstancePre<PluginState>, spare: &Spare) -> Arc<Self> {
        Arc::new(Self {
            pre,
            ready: Mutex::new(Vec::new()),
            refill_asked: AtomicBool::new(false),
            in_all: spare.shared.stocked.clone(),
        })
    }

    /// The component ready to instantiate.
    pub(super) fn pre(&self) -> &InstancePre<PluginState> {
        &self.pre
    }

    /// A prepared instance, if one is ready; asks `spare` to make more.
    pub(super) fn take(self: &Arc<Self>, spare: &Spare) -> Option<Prepared> {
        // Never waits for the thread, which may hold the lock and be waiting for a core.
        let taken = try_lock(&self.ready).and_then(|mut ready| ready.pop());
        if taken.is_some() {
            self.in_all.fetch_sub(1, Ordering::Relaxed);
        }
        if !self.refill_asked.swap(true, Ordering::AcqRel)
            && !spare.give(|work| work.refills.push(Arc::downgrade(self)))
        {
            // Not asked after all: the next call asks.
            self.refill_asked.store(false, Ordering::Release);
        }
        taken
    }

    /// How many prepared instances are ready.
    #[cfg(test)]
    pub(super) fn ready(&self) -> usize {
        lock(&self.ready).len()
    }

    /// The thread has done the refill last asked for (or none was asked).
    #[cfg(test)]
    pub(super) fn done_preparing(&self) -> bool {
        !self.refill_asked.load(Ordering::Acquire)
    }

    /// Every instance it keeps is ready, and the thread is done preparing them.
    #[cfg(test)]
    pub(super) fn full(&self) -> bool {
        self.done_preparing() && lock(&self.ready).len() == PER_COMPONENT
    }

    /// Prepares instances until the stock is full or no more may be kept (on the thread).
    fn fill(&self, new_store: &NewStore) {
        while lock(&self.ready).len() < PER_COMPONENT {
            if self.in_all.fetch_add(1, Ordering::Relaxed) >= IN_ALL {
                self.in_all.fetch_sub(1, Ordering::Relaxed);
                break;
            }
            let running = RunningTime::default();
            let mut store = new_store(&running);
            match block_on(running.counting(self.pre.instantiate_async(&mut store))) {
                Ok(instance) => lock(&self.ready).push(Prepared {
                    store,
                    instance,
                    running,
                }),
                Err(error) => {
                    // The call that takes no prepared instance instantiates on its own
                    // thread and reports the error.
                    self.in_all.fetch_sub(1, Ordering::Relaxed);
                    tracing::debug!(error = %format!("{error:#}"), "cannot prepare a plugin instance");
                    break;
                }
            }
        }
        self.refill_asked.store(false, Ordering::Release);
    }
}

impl Drop for Stock {
    fn drop(&mut self) {
        let ready = lock(&self.ready).len();
        self.in_all.fetch_sub(ready, Ordering::Relaxed);
    }
}

/// The thread that prepares instances and drops used stores, started by its first work.
pub(super) struct Spare {
    shared: Arc<Shared>,
}

struct Shared {
    new_store: Box<NewStore>,
    work: Mutex<Work>,
    /// The thread has found no work and sleeps until woken.
    asleep: AtomicBool,
    /// The runtime is gone: the thread ends.
    closed: AtomicBool,
    /// The thread, once started (`None`: it could not be started).
    thread: OnceLock<Option<Thread>>,
    stocked: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Work {
    used: Vec<Store<PluginState>>,
    refills: Vec<Weak<Stock>>,
}

impl Work {
    fn is_empty(&self) -> bool {
        self.used.is_empty() && self.refills.is_empty()
    }
}

impl Spare {
    pub(super) fn new(new_store: Box<NewStore>) -> Self {
        Self {
            shared: Arc::new(Shared {
                new_store,
                work: Mutex::new(Work::default()),
                asleep: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                thread: OnceLock::new(),
                stocked: Arc::new(AtomicUsize::new(0)),
            }),
        }
    }

    /// Drops a used store on the thread, or here if too many are waiting already.
    pub(super) fn dispose(&self, store: Store<PluginState>) {
        let mut store = Some(store);
        self.give(|work| {
            if work.used.len() < WAITING_TO_DROP {
                work.used.extend(store.take());
            }
        });
        // Not given: dropped here.
        drop(store);
    }

    /// Hands the thread work, and wakes it if it sleeps. Gives nothing rather than wait for
    /// the lock, which the thread may hold while it waits for a core.
    fn give(&self, add: impl FnOnce(&mut Work)) -> bool {
        let Some(thread) = self.thread() else {
            return false;
        };
        let Some(mut work) = try_lock(&self.shared.work) else {
            return false;
        };
        add(&mut work);
        drop(work);
        if self.shared.asleep.swap(false, Ordering::AcqRel) {
            thread.unpark();
        }
        true
    }

    fn thread(&self) -> Option<&Thread> {
        self.shared
            .thread
            .get_or_init(|| {
                let shared = self.shared.clone();
                std::thread::Builder::new()
                    .name("plugin-spare".into())
                    .spawn(move || work(&shared))
                    .map(|handle| handle.thread().clone())
                    .inspect_err(|error| {
                        tracing::warn!(%error, "cannot start the thread that prepares plugin instances");
                    })
                    .ok()
            })
            .as_ref()
    }

    /// What the thread holds while it runs: gone once it has ended.
    #[cfg(test)]
    pub(super) fn watch(&self) -> Weak<impl Sized + use<>> {
        Arc::downgrade(&self.shared)
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        if let Some(Some(thread)) = self.shared.thread.get() {
            thread.unpark();
        }
    }
}

/// The thread's loop, until its runtime is dropped: the work given each tick, or sleep
/// until woken when there was none.
///
/// One round of work a tick, not work for as long as there is some: a core that runs this
/// thread does not count as idle, and the kernel moves a request's thread queued behind
/// another onto an idle core, not onto one running this thread. Working without pause cost
/// notes at 32 connections 7 % (BENCHMARKS.md).
fn work(shared: &Shared) {
    super::threads::run_only_when_idle();
    while !shared.closed.load(Ordering::Acquire) {
        let work = std::mem::take(&mut *lock(&shared.work));
        if work.is_empty() {
            shared.asleep.store(true, Ordering::Release);
            // Work given before `asleep` was set did not wake the thread: look again.
            if lock(&shared.work).is_empty() {
                std::thread::park();
            }
            shared.asleep.store(false, Ordering::Release);
            continue;
        }
        // Instances first: a call waits for one, while a used store can wait.
        for stock in work.refills.iter().filter_map(Weak::upgrade) {
            stock.fill(&shared.new_store);
        }
        drop(work.used);
        std::thread::park_timeout(TICK);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The lock if no one holds it.
fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}
