//! The wasmtime runtime of plugins: one [`Engine`] (pooling allocator, epoch interruption),
//! one [`Linker`] with WASI p2 and Ferry's `host` interface, one [`InstancePre`](wasmtime::component::InstancePre) per
//! component, and a fresh, isolated [`Store`] for every hook call, with an epoch deadline, a
//! memory cap, WASI granting nothing (no files, network, environment or arguments; clocks at
//! the Unix epoch) and stdout/stderr captured with a cap.
//!
//! A call runs on the async task that makes it ([`Runtime::call`]): wasmtime runs the guest on
//! a fiber of its own, and each tick of the epoch (every 5 ms) hands the worker back to the
//! runtime's other tasks, so a plugin running to its deadline delays nothing else for longer
//! than a tick. Handing every call to a blocking thread and back cost as much CPU as the call
//! itself (BENCHMARKS.md).
//!
//! A call costs little beyond instantiating the component: the WASI context is only built if
//! the guest calls WASI, the supplier's configuration is shared rather than copied, the
//! request is lowered straight from its JSON ([`super::wire`]) and the answer written back
//! over it ([`convert`]). The instance is made ahead of the call and its store dropped after
//! it by a thread that uses the machine's idle time ([`super::prepared`]), when there is any.

use super::bindings::latest::ferry::supplier_rules::{host, types};
use super::bindings::since_v0_1_0::ferry::supplier_rules::types as types_v0_1_0;
use super::cache::ArtifactCache;
use super::output::CappedOutput;
use super::prepared::{Prepared, Spare, Stock};
use super::running_time::RunningTime;
use super::{account_v0_1_0, account_v0_2_0, account_v0_3_0, convert, wire};
use crate::domain::ports::{AccountTarget, Hook};
use crate::domain::validation::FieldErrors;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, Instance, Lift, Linker, Lower,
    ResourceTable, TypedFunc,
};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter,
    Store, Trap, UpdateDeadline,
};
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};

/// The WIT package plugins are built against.
pub const PACKAGE: &str = "ferry:supplier-rules";

/// A published version of the WIT package (`wit/since_v*/`). Ferry serves every one: a
/// plugin built against any of them keeps working.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WitVersion {
    V0_1_0,
    V0_2_0,
    V0_3_0,
}

impl WitVersion {
    /// Newest first: a hook is looked for under the newest version first.
    pub const ALL: [WitVersion; 3] = [WitVersion::V0_3_0, WitVersion::V0_2_0, WitVersion::V0_1_0];
    pub const LATEST: WitVersion = WitVersion::V0_3_0;

    pub fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_1_0 => "0.1.0",
            WitVersion::V0_2_0 => "0.2.0",
            WitVersion::V0_3_0 => "0.3.0",
        }
    }

    /// `ferry:supplier-rules@<version>`.
    pub fn world(self) -> String {
        format!("{PACKAGE}@{}", self.as_str())
    }
}
const TICK: Duration = Duration::from_millis(5);
const MAX_LOG_MESSAGE_CHARS: usize = 1000;
const MAX_LOG_FIELDS: usize = 20;
const MAX_LOG_LINES: usize = 100;
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

/// One structured log line written by a plugin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    pub level: String,
    pub message: String,
    pub fields: Vec<(String, String)>,
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

/// The data of one hook call's store.
pub struct PluginState {
    /// Built when the guest first calls WASI (most hook calls never do).
    wasi: Option<WasiState>,
    output_bytes: usize,
    limits: CallLimits,
    config: PluginConfig,
    logs: Vec<LogLine>,
}

/// WASI granting nothing, with stdout and stderr captured together.
struct WasiState {
    ctx: WasiCtx,
    table: ResourceTable,
    output: CappedOutput,
}

impl WasiState {
    fn new(output_bytes: usize) -> Self {
        let output = CappedOutput::new(output_bytes);
        let ctx = WasiCtxBuilder::new()
            .stdout(output.clone())
            .stderr(output.clone())
            .wall_clock(FrozenClock)
            .monotonic_clock(FrozenClock)
            .build();
        Self {
            ctx,
            table: ResourceTable::new(),
            output,
        }
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let output_bytes = self.output_bytes;
        let wasi = self
            .wasi
            .get_or_insert_with(|| WasiState::new(output_bytes));
        WasiCtxView {
            ctx: &mut wasi.ctx,
            table: &mut wasi.table,
        }
    }
}

impl PluginState {
    fn log(&mut self, level: host::Level, mut message: String, mut fields: Vec<(String, String)>) {
        if self.logs.len() >= MAX_LOG_LINES {
            return;
        }
        if let Some((end, _)) = message.char_indices().nth(MAX_LOG_MESSAGE_CHARS) {
            message.truncate(end);
        }
        fields.truncate(MAX_LOG_FIELDS);
        let level = match level {
            host::Level::Trace => "trace",
            host::Level::Debug => "debug",
            host::Level::Info => "info",
            host::Level::Warn => "warn",
            host::Level::Error => "error",
        };
        self.logs.push(LogLine {
            level: level.to_owned(),
            message,
            fields,
        });
    }

    /// What the guest wrote to stdout and stderr.
    fn output(&self) -> String {
        self.wasi
            .as_ref()
            .map(|wasi| wasi.output.contents())
            .unwrap_or_default()
    }
}

/// Ferry's `host` interface under every version (it is the same in each): `log`, and
/// `config` lowered from the shared configuration.
fn add_host_to_linker(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
    for version in WitVersion::ALL {
        let mut host = linker.instance(&format!("{PACKAGE}/host@{}", version.as_str()))?;
        host.func_wrap(
            "log",
            |mut store, (level, message, fields): (host::Level, String, Vec<(String, String)>)| {
                store.data_mut().log(level, message, fields);
                Ok(())
            },
        )?;
        host.func_wrap("config", |store, (): ()| Ok((store.data().config.clone(),)))?;
    }
    Ok(())
}

/// Caps memory and tables, and remembers when a plugin hit the memory cap.
struct CallLimits {
    memory_bytes: usize,
    memory_exhausted: bool,
}

impl ResourceLimiter for CallLimits {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired <= self.memory_bytes;
        if !allowed {
            self.memory_exhausted = true;
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// Clocks frozen at the Unix epoch: plugins get no time from the host.
struct FrozenClock;

impl HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A component ready to instantiate, with the hooks it implements.
pub struct LoadedComponent {
    /// The component ready to instantiate, and its instances prepared ahead of their calls.
    stock: Arc<Stock>,
    hooks: HashMap<Hook, ExportedHook>,
    pub sha256: String,
}

/// Where a component exports a hook, and under which version.
#[derive(Debug, Clone, Copy)]
struct ExportedHook {
    index: ComponentExportIndex,
    version: WitVersion,
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

fn interface_of(hook: Hook) -> &'static str {
    match hook {
        Hook::ValidateAccount => "account-rules",
        Hook::MapNotes => "note-rules",
        Hook::MapTransactions => "transaction-rules",
        Hook::MapStatements => "statement-rules",
        Hook::MapPaymentInstruction => "payment-instruction-rules",
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
        let mut hooks = HashMap::new();
        for hook in Hook::ALL {
            for version in WitVersion::ALL {
                let interface = format!("{PACKAGE}/{}@{}", interface_of(hook), version.as_str());
                let Some(exported) = component.get_export_index(None, &interface) else {
                    continue;
                };
                let index = component
                    .get_export_index(Some(&exported), hook.as_str())
                    .ok_or_else(|| {
                        PluginError::Invalid(format!(
                            "{interface} does not export {}",
                            hook.as_str()
                        ))
                    })?;
                hooks.insert(hook, ExportedHook { index, version });
                break;
            }
        }
        if hooks.is_empty() {
            let versions: Vec<&str> = WitVersion::ALL.iter().map(|v| v.as_str()).collect();
            return Err(PluginError::Invalid(format!(
                "it exports none of the {PACKAGE} rules interfaces (versions {})",
                versions.join(", ")
            )));
        }
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
            check_signature(&mut store, &instance, *hook, exported).map_err(|error| {
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
                store.data_mut().config = config.clone();
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
                invoke(&mut store, &instance, hook, exported, target, input).await
            })
            .await;
        let elapsed = started.elapsed();
        let prepared_ahead = prepared.is_some();
        let run = match result {
            Ok(outcome) => {
                let state = store.data_mut();
                Ok(HookRun {
                    outcome,
                    logs: std::mem::take(&mut state.logs),
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
        if store.data().limits.memory_exhausted {
            return PluginError::Memory(self.limits.memory_bytes >> 20);
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => PluginError::Deadline(self.limits.deadline),
            Some(trap) => PluginError::Trap(trap.to_string()),
            None => PluginError::Trap(format!("{error:#}")),
        }
    }
}

/// A fresh store for one call, whose deadline counts the call's `running` time.
fn new_store(
    engine: &Engine,
    limits: PluginLimits,
    config: PluginConfig,
    running: &RunningTime,
) -> Store<PluginState> {
    let state = PluginState {
        wasi: None,
        output_bytes: limits.output_bytes,
        limits: CallLimits {
            memory_bytes: limits.memory_bytes,
            memory_exhausted: false,
        },
        config,
        logs: Vec::new(),
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limits);
    // Each tick yields to the async runtime; the first one past the deadline traps
    // (`Trap::Interrupt`). The time the call has run, not the time it waited for a worker
    // after yielding (`running_time`).
    let deadline = limits.deadline;
    let running = running.clone();
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        Ok(if running.elapsed() >= deadline {
            UpdateDeadline::Interrupt
        } else {
            UpdateDeadline::Yield(1)
        })
    });
    store
}

/// One thread per engine advances its epoch every tick, until the engine is dropped.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new()
        .name("plugin-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(TICK);
            }
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start the plugin deadline ticker");
    }
}

/// The WIT signature of one hook as Rust types: what Ferry lowers into it ([`wire`]
/// records borrowed from the request) and what it lifts out of it (owned records).
trait Signature {
    type Params<'a>: ComponentNamedList + Lower;
    type Results: ComponentNamedList + Lift;
}

type Answer<T> = (Result<T, Vec<types::FieldError>>,);

struct ValidateAccountV0_1_0;
impl Signature for ValidateAccountV0_1_0 {
    type Params<'a> = (wire::Account<'a>,);
    type Results = Answer<types_v0_1_0::Account>;
}

struct ValidateAccountV0_2_0;
impl Signature for ValidateAccountV0_2_0 {
    type Params<'a> = (account_v0_2_0::account::Wire<'a>,);
    type Results = Answer<account_v0_2_0::account::Owned>;
}

struct ValidateAccountV0_3_0;
impl Signature for ValidateAccountV0_3_0 {
    type Params<'a> = (account_v0_3_0::account::Wire<'a>,);
    type Results = Answer<account_v0_3_0::account::Owned>;
}

struct MapNotes;
impl Signature for MapNotes {
    type Params<'a> = (wire::AccountRef<'a>, Vec<wire::Note<'a>>);
    type Results = Answer<Vec<types::Note>>;
}

struct MapTransactions;
impl Signature for MapTransactions {
    type Params<'a> = (wire::AccountRef<'a>, Vec<wire::Transaction<'a>>);
    type Results = Answer<Vec<types::Transaction>>;
}

struct MapStatements;
impl Signature for MapStatements {
    type Params<'a> = (wire::AccountRef<'a>, Vec<wire::Statement<'a>>);
    type Results = Answer<Vec<types::Statement>>;
}

struct MapPaymentInstruction;
impl Signature for MapPaymentInstruction {
    type Params<'a> = (wire::AccountRef<'a>, wire::PaymentInstruction<'a>);
    type Results = Answer<types::PaymentInstruction>;
}

/// Checks that `hook`'s export has its [`Signature`] (done once, when a component is loaded).
fn check_signature(
    store: &mut Store<PluginState>,
    instance: &Instance,
    hook: Hook,
    exported: &ExportedHook,
) -> wasmtime::Result<()> {
    fn check<S: Signature>(
        store: &mut Store<PluginState>,
        instance: &Instance,
        index: &ComponentExportIndex,
    ) -> wasmtime::Result<()> {
        hook_func::<S>(store, instance, index).map(drop)
    }
    let index = &exported.index;
    match hook {
        Hook::ValidateAccount => match exported.version {
            WitVersion::V0_1_0 => check::<ValidateAccountV0_1_0>(store, instance, index),
            WitVersion::V0_2_0 => check::<ValidateAccountV0_2_0>(store, instance, index),
            WitVersion::V0_3_0 => check::<ValidateAccountV0_3_0>(store, instance, index),
        },
        Hook::MapNotes => check::<MapNotes>(store, instance, index),
        Hook::MapTransactions => check::<MapTransactions>(store, instance, index),
        Hook::MapStatements => check::<MapStatements>(store, instance, index),
        Hook::MapPaymentInstruction => check::<MapPaymentInstruction>(store, instance, index),
    }
}

/// `hook`'s function in a fresh instance, typed by its [`Signature`].
fn hook_func<'a, S: Signature>(
    store: &mut Store<PluginState>,
    instance: &Instance,
    index: &ComponentExportIndex,
) -> wasmtime::Result<TypedFunc<S::Params<'a>, S::Results>> {
    instance.get_typed_func(store, index)
}

/// Runs `future` to its end on the calling thread, which sleeps while it waits: for a
/// component's instantiation when it is loaded, a demoted supplier's calls on the low-priority
/// threads ([`super::threads`]), and calls from outside async code (the examples, the
/// benchmarks). Nothing a plugin is given waits on anything but its epoch's yields (WASI
/// grants no I/O; its output is captured in memory), so no async runtime is needed to drive
/// it: the `futures` executor's, already among the dependencies, does.
pub use futures_executor::block_on;

/// Calls `hook` with `input` (request shape) and writes its answer over `input`.
async fn invoke(
    store: &mut Store<PluginState>,
    instance: &Instance,
    hook: Hook,
    exported: ExportedHook,
    target: Option<&AccountTarget>,
    mut input: Value,
) -> wasmtime::Result<Result<Value, FieldErrors>> {
    let target = convert::account_ref(target);
    let index = &exported.index;
    let answer = match hook {
        Hook::ValidateAccount => match exported.version {
            WitVersion::V0_1_0 => {
                let function = hook_func::<ValidateAccountV0_1_0>(store, instance, index)?;
                let start = account_v0_1_0::open_period_start(&input);
                let account = account_v0_1_0::account_to_wit(&input, start.as_deref());
                let (result,) = function.call_async(&mut *store, (account,)).await?;
                result.map(|account| account_v0_1_0::write_account(&mut input, account))
            }
            WitVersion::V0_2_0 => {
                let function = hook_func::<ValidateAccountV0_2_0>(store, instance, index)?;
                let account = account_v0_2_0::account::read(&input);
                let (result,) = function.call_async(&mut *store, (account,)).await?;
                result.map(|account| account_v0_2_0::account::write(&mut input, account))
            }
            WitVersion::V0_3_0 => {
                let function = hook_func::<ValidateAccountV0_3_0>(store, instance, index)?;
                let account = account_v0_3_0::account::read(&input);
                let (result,) = function.call_async(&mut *store, (account,)).await?;
                result.map(|account| account_v0_3_0::account::write(&mut input, account))
            }
        },
        Hook::MapNotes => {
            let function = hook_func::<MapNotes>(store, instance, index)?;
            let notes = convert::list(&input, convert::note_to_wit);
            let (result,) = function.call_async(&mut *store, (target, notes)).await?;
            result.map(|notes| convert::write_notes(&mut input, notes))
        }
        Hook::MapTransactions => {
            let function = hook_func::<MapTransactions>(store, instance, index)?;
            let transactions = convert::list(&input, convert::transaction_to_wit);
            let (result,) = function
                .call_async(&mut *store, (target, transactions))
                .await?;
            result.map(|list| convert::write_transactions(&mut input, list))
        }
        Hook::MapStatements => {
            let function = hook_func::<MapStatements>(store, instance, index)?;
            let statements = convert::list(&input, convert::statement_to_wit);
            let (result,) = function
                .call_async(&mut *store, (target, statements))
                .await?;
            result.map(|list| convert::write_statements(&mut input, list))
        }
        Hook::MapPaymentInstruction => {
            let function = hook_func::<MapPaymentInstruction>(store, instance, index)?;
            let instruction = convert::instruction_to_wit(&input);
            let (result,) = function
                .call_async(&mut *store, (target, instruction))
                .await?;
            result.map(|instruction| convert::write_instruction(&mut input, instruction))
        }
    };
    Ok(answer.map(|()| input).map_err(convert::field_errors))
}

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
