//! What one hook call runs in: its store, whose data ([`PluginState`]) holds WASI granting
//! nothing (no files, network, environment or arguments; clocks at the Unix epoch) with
//! stdout and stderr captured up to a cap, the memory cap, the supplier's configuration and
//! the plugin's log lines; Ferry's `host` interface, which the plugin imports; and the ticker
//! that advances the engine's epoch, by which a call yields to the async runtime every tick and
//! stops at its deadline.

use super::output::CappedOutput;
use super::running_time::RunningTime;
use super::runtime::{PluginConfig, PluginLimits};
use super::wit::latest::ferry::supplier_rules::host;
use super::wit::{PACKAGE, WitVersion};
use std::time::Duration;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};

/// How often the epoch advances: a call yields to the async runtime at every tick.
const TICK: Duration = Duration::from_millis(5);
const MAX_LOG_MESSAGE_CHARS: usize = 1000;
const MAX_LOG_FIELDS: usize = 20;
const MAX_LOG_LINES: usize = 100;

/// One structured log line written by a plugin.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    pub level: String,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

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

    /// Gives a call in an instance prepared ahead its supplier's configuration.
    pub(super) fn set_config(&mut self, config: PluginConfig) {
        self.config = config;
    }

    /// The log lines the plugin wrote.
    pub(super) fn take_logs(&mut self) -> Vec<LogLine> {
        std::mem::take(&mut self.logs)
    }

    /// Whether the plugin hit the memory cap.
    pub(super) fn memory_exhausted(&self) -> bool {
        self.limits.memory_exhausted
    }

    /// What the guest wrote to stdout and stderr.
    pub(super) fn output(&self) -> String {
        self.wasi
            .as_ref()
            .map(|wasi| wasi.output.contents())
            .unwrap_or_default()
    }
}

/// Ferry's `host` interface under every version (it is the same in each): `log`, and
/// `config` lowered from the shared configuration.
pub(super) fn add_host_to_linker(linker: &mut Linker<PluginState>) -> wasmtime::Result<()> {
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

/// A fresh store for one call, whose deadline counts the call's `running` time.
pub(super) fn new_store(
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
pub(super) fn start_ticker(engine: &Engine) {
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
