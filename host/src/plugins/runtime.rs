//! The wasmtime runtime of plugins: one [`Engine`] (pooling allocator, epoch interruption),
//! one [`Linker`] with WASI p2 and Ferry's `host` interface, one
//! [`InstancePre`](wasmtime::component::InstancePre) per component, and a fresh, isolated
//! [`Store`] for every hook call ([`super::sandbox`]: an epoch deadline, a memory cap, WASI
//! granting nothing and stdout/stderr captured with a cap).
//!
//! A call runs on the async task that makes it ([`Runtime::call`]): wasmtime runs the guest on
//! a fiber of its own, and each tick of the epoch (every 5 ms) hands the worker back to the
//! runtime's other tasks, so a plugin running to its deadline delays nothing else for longer
//! than a tick. Handing every call to a blocking thread and back would cost as much CPU as the
//! call itself.
//!
//! A call costs little beyond instantiating the component: the WASI context is only built if
//! the guest calls WASI, the supplier's configuration is shared rather than copied, the
//! request is lowered straight from its JSON and the answer written back over it
//! ([`super::wit`]). The instance is made ahead of the call and its store dropped after
//! it by a thread that uses the machine's idle time ([`super::prepared`]), when there is any.

use super::cache::ArtifactCache;
use super::prepared::{Prepared, Spare, Stock};
use super::running_time::RunningTime;
use super::sandbox::{LogLine, PluginState, add_host_to_linker, new_store, start_ticker};
use super::wit::{self, ExportedHook, WitVersion};
use crate::domain::ports::{AccountTarget, Hook};
use crate::domain::validation::FieldErrors;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, Trap,
};

/// Bytes of each pooled memory kept resident between instances.
const KEEP_RESIDENT: usize = 256 << 10;

/// Per-call limits.
#[derive(Debug, Clone, Copy)]
pub struct PluginLimits {
    pub deadline: Duration,
    pub memory_bytes: usize,
    /// Bytes of stdout/stderr kept per call.
    pub output_bytes: usize,
}

impl Default for PluginLimits {
    fn default() -> Self {
        Self {
            deadline: Duration::from_millis(100),
            memory_bytes: 64 << 20,
            output_bytes: 64 << 10,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The bytes are not a component of a `ferry:supplier-rules` world.
    #[error("not a valid plugin: {0}")]
    Invalid(String),
    #[error("exceeded its {0:?} deadline")]
    Deadline(Duration),
    #[error("exceeded its memory cap of {0} MiB")]
    Memory(usize),
    #[error("trapped: {0}")]
    Trap(String),
    #[error("the plugin runtime failed: {0}")]
    Runtime(String),
    /// The call did not run: all of the supplier's call slots stayed taken while it waited
    /// (the registry's bulkhead).
    #[error("all {slots} of its supplier's call slots stayed taken for {waited:?}")]
    Busy { slots: usize, waited: Duration },
}

/// What one hook call did.
#[derive(Debug)]
pub struct HookRun {
    /// The mapped value (request shape), or the plugin's field errors.
    pub outcome: Result<Value, FieldErrors>,
    pub logs: Vec<LogLine>,
    pub output: String,
    pub elapsed: Duration,
    /// It ran in an instance prepared ahead of it ([`super::prepared`]), not one made for it.
    pub prepared_ahead: bool,
}

/// The supplier's plugin configuration, shared by all of its calls.
pub type PluginConfig = Arc<[(String, String)]>;

/// A component ready to instantiate, with the hooks it implements.
pub struct LoadedComponent {
    /// The component ready to instantiate, and its instances prepared ahead of their calls.
    stock: Arc<Stock>,
    hooks: HashMap<Hook, ExportedHook>,
    pub sha256: String,
}

impl std::fmt::Debug for LoadedComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedComponent")
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl LoadedComponent {
    /// The hooks, in WIT order.
    pub fn hooks(&self) -> Vec<Hook> {
        Hook::ALL
            .into_iter()
            .filter(|hook| self.hooks.contains_key(hook))
            .collect()
    }

    /// The version it was built against (the newest its hooks are exported under).
    pub fn version(&self) -> WitVersion {
        self.hooks
            .values()
            .map(|hook| hook.version)
            .max()
            .unwrap_or(WitVersion::LATEST)
    }
}

/// The engine, linker and limits shared by every plugin.
pub struct Runtime {
    engine: Engine,
    linker: Linker<PluginState>,
    limits: PluginLimits,
    cache: Option<ArtifactCache>,
    /// Prepares instances and drops used stores in the machine's idle time.
    spare: Spare,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// A runtime whose compiled components are cached in `cache_dir` (none: no disk cache).
    pub fn new(limits: PluginLimits, cache_dir: Option<PathBuf>) -> Result<Self, PluginError> {
        let runtime_error = |error: wasmtime::Error| PluginError::Runtime(format!("{error:#}"));
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(256)
            .total_core_instances(2048)
            .total_memories(512)
            .total_tables(1024)
            .max_memories_per_component(8)
            .max_core_instances_per_component(32)
            .max_tables_per_component(32)
            .max_memory_size(limits.memory_bytes.max(1 << 20))
            // Reset the first pages of a slot by zeroing rather than by handing them back to
            // the kernel: a fresh instance per call then does not fault its stack back in.
            .linear_memory_keep_resident(KEEP_RESIDENT)
            .table_keep_resident(64 << 10)
            // Where the kernel has PAGEMAP_SCAN (Linux 6.7+), reset only the pages a call
            // touched instead of zeroing the whole resident prefix of every memory and table.
            .pagemap_scan(Enabled::Auto);
        let mut config = Config::new();
        config
            .epoch_interruption(true)
            .memory_reservation(limits.memory_bytes.max(1 << 20) as u64)
            .memory_guard_size(64 << 10)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config).map_err(runtime_error)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(runtime_error)?;
        add_host_to_linker(&mut linker).map_err(runtime_error)?;
        start_ticker(&engine);
        let spare = Spare::new(Box::new({
            let engine = engine.clone();
            move |running| new_store(&engine, limits, PluginConfig::from([]), running)
        }));
        Ok(Self {
            engine,
            linker,
            limits,
            cache: cache_dir.map(ArtifactCache::new),
            spare,
        })
    }

    pub fn limits(&self) -> PluginLimits {
        self.limits
    }

    /// Removes from the disk cache every compiled component but those of `kept` (SHA-256s).
    pub fn keep_compiled_only(&self, kept: &std::collections::HashSet<&str>) {
        if let Some(cache) = &self.cache {
            cache.retain(&self.engine, kept);
        }
    }

    /// Compiles (or loads from the cache), links and checks a component: it must be a
    /// component whose imports Ferry provides and whose hooks have the WIT signatures.
    pub fn load(&self, bytes: &[u8]) -> Result<LoadedComponent, PluginError> {
        let invalid = |error: wasmtime::Error| PluginError::Invalid(format!("{error:#}"));
        let sha256 = super::cache::sha256_hex(bytes);
        let component = match &self.cache {
            Some(cache) => cache.component(&self.engine, &sha256, bytes),
            None => Component::new(&self.engine, bytes),
        }
        .map_err(invalid)?;
        let pre = self.linker.instantiate_pre(&component).map_err(|error| {
            PluginError::Invalid(format!(
                "its imports are not what Ferry provides: {error:#}"
            ))
        })?;
        let hooks = wit::exported_hooks(&component)?;
        let loaded = LoadedComponent {
            stock: Stock::new(pre, &self.spare),
            hooks,
            sha256,
        };
        // Instantiate once to check every hook's signature against the WIT.
        let running = RunningTime::default();
        let mut store = self.store(PluginConfig::from([]), &running);
        let instance = block_on(running.counting(loaded.stock.pre().instantiate_async(&mut store)))
            .map_err(invalid)?;
        for (hook, exported) in &loaded.hooks {
            wit::check_signature(&mut store, &instance, *hook, exported).map_err(|error| {
                PluginError::Invalid(format!(
                    "{} does not have the {} signature: {error:#}",
                    hook.as_str(),
                    exported.version.world()
                ))
            })?;
        }
        Ok(loaded)
    }

    /// A fresh store for one call, whose deadline counts the call's `running` time.
    fn store(&self, config: PluginConfig, running: &RunningTime) -> Store<PluginState> {
        new_store(&self.engine, self.limits, config, running)
    }

    /// Runs `hook` of `component` on `input` (request shape) in a fresh store; the hook's
    /// answer is written over `input`. Dropping the future stops the call.
    pub async fn call(
        &self,
        component: &LoadedComponent,
        hook: Hook,
        config: &PluginConfig,
        target: Option<&AccountTarget>,
        input: Value,
    ) -> Result<HookRun, PluginError> {
        let exported = *component.hooks.get(&hook).ok_or_else(|| {
            PluginError::Invalid(format!("it does not implement {}", hook.as_str()))
        })?;
        let started = Instant::now();
        // An instance prepared ahead if one is ready, else one made here.
        let (mut store, running, prepared) = match component.stock.take(&self.spare) {
            Some(Prepared {
                mut store,
                instance,
                running,
            }) => {
                store.data_mut().set_config(config.clone());
                // The deadline's first tick from now, not from when it was prepared.
                store.set_epoch_deadline(1);
                (store, running, Some(instance))
            }
            None => {
                let running = RunningTime::default();
                (self.store(config.clone(), &running), running, None)
            }
        };
        let result = running
            .counting(async {
                let instance = match prepared {
                    Some(instance) => instance,
                    None => component.stock.pre().instantiate_async(&mut store).await?,
                };
                wit::invoke(&mut store, &instance, hook, exported, target, input).await
            })
            .await;
        let elapsed = started.elapsed();
        let prepared_ahead = prepared.is_some();
        let run = match result {
            Ok(outcome) => {
                let state = store.data_mut();
                Ok(HookRun {
                    outcome,
                    logs: state.take_logs(),
                    output: state.output(),
                    elapsed,
                    prepared_ahead,
                })
            }
            Err(error) => Err(self.classify(&store, error)),
        };
        self.spare.dispose(store);
        run
    }

    fn classify(&self, store: &Store<PluginState>, error: wasmtime::Error) -> PluginError {
        if store.data().memory_exhausted() {
            return PluginError::Memory(self.limits.memory_bytes >> 20);
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => PluginError::Deadline(self.limits.deadline),
            Some(trap) => PluginError::Trap(trap.to_string()),
            None => PluginError::Trap(format!("{error:#}")),
        }
    }
}

/// Runs `future` to its end on the calling thread, which sleeps while it waits: for a
/// component's instantiation when it is loaded, a demoted supplier's calls on the low-priority
/// threads ([`super::threads`]), and calls from outside async code (the examples, the
/// benchmarks). Nothing a plugin is given waits on anything but its epoch's yields (WASI
/// grants no I/O; its output is captured in memory), so no async runtime is needed to drive
/// it: the `futures` executor's, already among the dependencies, does.
pub use futures_executor::block_on;

#[cfg(test)]
mod tests {
    use super::{HookRun, LoadedComponent, PluginError, PluginLimits, Runtime, block_on};
    use crate::domain::ports::Hook;
    use crate::plugins::dev;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    fn component(runtime: &Runtime, file: &str) -> LoadedComponent {
        let dir = dev::build_plugins().unwrap_or_else(|error| panic!("{error}"));
        let bytes = std::fs::read(dir.join(file)).expect("the component");
        runtime.load(&bytes).expect("loaded")
    }

    fn loop_forever(runtime: &Runtime) -> LoadedComponent {
        component(runtime, "fault_loop_forever.wasm")
    }

    /// A runtime whose calls stop at `deadline`.
    fn runtime_with_deadline(deadline: Duration) -> Runtime {
        let limits = PluginLimits {
            deadline,
            ..PluginLimits::default()
        };
        Runtime::new(limits, None).expect("runtime")
    }

    /// A runtime for tests whose calls are not about deadlines, which must not depend on the
    /// machine's speed: an ordinary call of the debug build once took more than the default
    /// 100 ms of CPU time in a full run of the suite on a busy virtual machine. 10 s.
    fn roomy_runtime() -> Runtime {
        runtime_with_deadline(Duration::from_secs(10))
    }

    /// Waits until `done` holds, failing with `what` if it has not `within` that time.
    async fn eventually(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
        let waited = Instant::now();
        while !done() {
            assert!(waited.elapsed() < within, "{what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until `component`'s instances prepared ahead are all there and the thread has
    /// done preparing them (its first call asked for them): the next call takes one.
    async fn prepared(component: &LoadedComponent) {
        eventually(
            "no instance was prepared ahead",
            Duration::from_secs(20),
            || component.stock.full(),
        )
        .await;
    }

    /// `validate-account` of `component` on the sample account, with the sample configuration.
    async fn validate_sample(
        runtime: &Runtime,
        component: &LoadedComponent,
    ) -> Result<HookRun, PluginError> {
        runtime
            .call(
                component,
                Hook::ValidateAccount,
                &dev::sample_config(),
                None,
                dev::sample_account(),
            )
            .await
    }

    /// A plugin that never returns holds the async worker it runs on for a tick at a time,
    /// not for its whole deadline: on a runtime of one thread, another task runs while the
    /// call spins, and the call still ends at its deadline.
    #[tokio::test(flavor = "current_thread")]
    async fn a_spinning_plugin_gives_its_worker_back_until_its_deadline() {
        let runtime = Runtime::new(PluginLimits::default(), None).expect("runtime");
        let component = loop_forever(&runtime);
        let other_ran = AtomicBool::new(false);
        let call = async {
            let result = validate_sample(&runtime, &component).await;
            (result, other_ran.load(Ordering::SeqCst))
        };
        let other = async { other_ran.store(true, Ordering::SeqCst) };
        let ((result, other_ran_during_the_call), ()) = tokio::join!(call, other);
        assert!(
            matches!(result, Err(PluginError::Deadline(_))),
            "stopped at its deadline: {result:?}"
        );
        assert!(
            other_ran_during_the_call,
            "the other task waited for the whole call"
        );
    }

    /// The deadline counts the time a call runs, not the time it waits for a worker after
    /// handing it back at a tick: a call kept waiting by another task for longer than its
    /// whole deadline still runs for its deadline afterwards. (Counted in wall-clock time,
    /// the first tick after the wait stopped it, and a healthy plugin failed its request
    /// when the server was busy.)
    #[tokio::test(flavor = "current_thread")]
    async fn time_spent_waiting_for_a_worker_does_not_count_against_the_deadline() {
        let deadline = Duration::from_millis(200);
        let held = Duration::from_millis(600);
        let runtime = runtime_with_deadline(deadline);
        let component = loop_forever(&runtime);
        let call = async {
            let started = Instant::now();
            let result = validate_sample(&runtime, &component).await;
            (result, started.elapsed())
        };
        // Another task holds the one worker while the call waits, having yielded at a tick.
        let other = async {
            tokio::task::yield_now().await;
            std::thread::sleep(held);
        };
        let ((result, took), ()) = tokio::join!(call, other);
        assert!(
            matches!(result, Err(PluginError::Deadline(_))),
            "stopped at its deadline: {result:?}"
        );
        assert!(
            took >= held + deadline,
            "the call ran for its whole deadline besides the {held:?} it waited: it took {took:?}"
        );
    }

    /// A call in an instance prepared ahead runs in an instance nothing ran in before, as a
    /// call in one made for it does: `fault_chatty` counts the calls its instance has seen.
    #[tokio::test]
    async fn every_call_runs_in_a_fresh_instance_prepared_ahead_or_not() {
        let runtime = roomy_runtime();
        let chatty = component(&runtime, "fault_chatty.wasm");
        let mut prepared_ahead = 0;
        for call in 0..10 {
            if call > 0 {
                prepared(&chatty).await;
            }
            let run = validate_sample(&runtime, &chatty).await.expect("a call");
            assert!(run.outcome.is_ok(), "{:?}", run.outcome);
            assert!(
                run.output
                    .starts_with("chatty: call 1 of this instance, checking OE-1001\n"),
                "call {call}: {:.80}",
                run.output
            );
            prepared_ahead += usize::from(run.prepared_ahead);
        }
        assert_eq!(
            prepared_ahead, 9,
            "every call after the first takes an instance prepared ahead"
        );
    }

    /// An instance prepared ahead is prepared without the supplier's configuration; its call
    /// gets the configuration it was made with (`product_code.OLDVAR` maps the tariff).
    #[tokio::test]
    async fn a_call_in_a_prepared_instance_gets_its_own_configuration() {
        let runtime = roomy_runtime();
        let example = component(&runtime, "example_plugin.wasm");
        let first = validate_sample(&runtime, &example).await.expect("a call");
        prepared(&example).await;
        let second = validate_sample(&runtime, &example).await.expect("a call");
        assert!(!first.prepared_ahead && second.prepared_ahead);
        for run in [first, second] {
            let account = run.outcome.expect("accepted");
            assert_eq!(
                account["supply_addresses"][0]["meter_points"][0]["agreements"][0]["tariff_code"],
                "VAR-22",
                "{account}"
            );
        }
    }

    /// A call in an instance prepared ahead still stops at its deadline: its running time is
    /// counted from the instance's store.
    #[tokio::test]
    async fn a_spinning_plugin_in_a_prepared_instance_stops_at_its_deadline() {
        let deadline = Duration::from_millis(50);
        let runtime = runtime_with_deadline(deadline);
        let component = loop_forever(&runtime);
        let first = validate_sample(&runtime, &component).await;
        assert!(matches!(first, Err(PluginError::Deadline(_))), "{first:?}");
        prepared(&component).await;
        let started = Instant::now();
        let second = tokio::time::timeout(
            Duration::from_secs(20),
            validate_sample(&runtime, &component),
        )
        .await
        .expect("the call ended");
        assert!(
            matches!(second, Err(PluginError::Deadline(_))),
            "{second:?}"
        );
        assert!(started.elapsed() >= deadline);
    }

    /// However many components are called, the instances prepared ahead of all of them stay
    /// within their bound, far below the pooling allocator's slots.
    #[tokio::test]
    async fn instances_prepared_ahead_stay_within_their_bound() {
        use super::super::prepared::{IN_ALL, Stock};
        let runtime = roomy_runtime();
        let example = component(&runtime, "example_plugin.wasm");
        let stocks: Vec<_> = (0..IN_ALL)
            .map(|_| Stock::new(example.stock.pre().clone(), &runtime.spare))
            .collect();
        for stock in &stocks {
            assert!(stock.take(&runtime.spare).is_none(), "an empty stock");
        }
        let ready = || stocks.iter().map(|stock| stock.ready()).sum::<usize>();
        // 60 s for both waits together.
        let started = Instant::now();
        let left = || Duration::from_secs(60).saturating_sub(started.elapsed());
        eventually(
            "fewer instances were prepared than the bound",
            left(),
            || ready() >= IN_ALL,
        )
        .await;
        // Every stock has been asked to fill up and had its turn; none went past the bound.
        eventually("still preparing", left(), || {
            stocks.iter().all(|stock| stock.done_preparing())
        })
        .await;
        assert_eq!(ready(), IN_ALL);
    }

    /// The thread that prepares instances ends with its runtime.
    #[tokio::test]
    async fn the_thread_that_prepares_instances_ends_with_its_runtime() {
        let runtime = roomy_runtime();
        let example = component(&runtime, "example_plugin.wasm");
        validate_sample(&runtime, &example).await.expect("a call");
        prepared(&example).await;
        let thread = runtime.spare.watch();
        drop(example);
        drop(runtime);
        eventually("the thread still runs", Duration::from_secs(20), || {
            thread.upgrade().is_none()
        })
        .await;
    }

    /// Outside async code (a component's check at load, the low-priority threads) the same
    /// call runs to its deadline on the calling thread.
    #[test]
    fn a_spinning_plugin_called_from_a_thread_stops_at_its_deadline() {
        let runtime = Runtime::new(PluginLimits::default(), None).expect("runtime");
        let component = loop_forever(&runtime);
        let result = block_on(validate_sample(&runtime, &component));
        assert!(
            matches!(result, Err(PluginError::Deadline(_))),
            "stopped at its deadline: {result:?}"
        );
    }
}
