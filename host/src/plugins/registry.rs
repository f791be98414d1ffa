//! The installed plugins: one per supplier, kept in the store, loaded into the runtime, and
//! swapped atomically (a request in flight finishes on the version it started with).
//!
//! Each supplier's hook calls pass a bulkhead: at most [`Bulkhead::calls_per_supplier`] run
//! at once, the others wait their turn for at most [`Bulkhead::queue_wait`] and are then
//! refused as busy. A call runs on the async workers, in the task of the request that made it
//! (and to its end, holding its slot, should the request be dropped: [`super::to_its_end`]);
//! it hands the worker back to the other tasks at every tick of the epoch (5 ms, see
//! [`super::runtime`]). A supplier whose plugin overran its deadline in the last [`DEMOTION`]
//! has its calls run on the [`LowPriorityThreads`] instead. A plugin that burns its whole
//! deadline on every call thus occupies a bounded share of the cores, and yields even that to
//! the host's own work and to the other suppliers' plugins, which keep the host's priority.

use super::runtime::{HookRun, LoadedComponent, PluginConfig, PluginError, Runtime};
use super::threads::LowPriorityThreads;
use super::to_its_end::ToItsEnd;
use crate::domain::error::DomainError;
use crate::domain::plugin::PluginRecord;
use crate::domain::ports::{
    AccountTarget, Hook, NO_RULES_IDENTITY, RuleFailure, RuleInput, SupplierRules,
};
use crate::store::{Store, retrying};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use metrics::{Counter, Histogram};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, TryAcquireError};

const RECENT_FAILURES: usize = 20;
/// How long a supplier's calls run on the low-priority threads after its plugin last overran
/// its deadline (installing a new version ends it at once).
pub const DEMOTION: Duration = Duration::from_secs(60);

/// How many hook calls of one supplier may run at once, and how long a call waits for its
/// turn before it is refused with [`PluginError::Busy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bulkhead {
    pub calls_per_supplier: usize,
    pub queue_wait: Duration,
}

impl Bulkhead {
    /// Half the machine's cores (at least one) per supplier.
    pub fn default_calls_per_supplier() -> usize {
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        (cores / 2).max(1)
    }
}

impl Default for Bulkhead {
    fn default() -> Self {
        Self {
            calls_per_supplier: Self::default_calls_per_supplier(),
            queue_wait: Duration::from_secs(1),
        }
    }
}

/// A failed hook call, for operators.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PluginFailure {
    pub at: DateTime<Utc>,
    pub hook: Hook,
    pub error: String,
}

/// A plugin as operators see it.
#[derive(Debug, Clone)]
pub struct PluginView {
    pub record: PluginRecord,
    pub recent_failures: Vec<PluginFailure>,
    /// Its calls run below the host's CPU priority: it overran its deadline within the last
    /// minute (a new version starts at the normal priority).
    pub low_priority: bool,
}

struct Installed {
    record: PluginRecord,
    /// The record's configuration, in the form each call passes.
    config: PluginConfig,
    component: Arc<LoadedComponent>,
    /// The component's and the configuration's digests ([`SupplierRules::identity`]).
    identity: String,
    /// The metric handles of its calls, by hook.
    handles: [OnceLock<CallHandles>; Hook::ALL.len()],
}

/// The metric handles of one hook's calls that succeed or wait for a slot, made on its first
/// call (a hook never called shows no series). Calls that fail are rare, and have their
/// handles made each time.
struct CallHandles {
    succeeded: Counter,
    seconds: Histogram,
    /// How long a call that found every slot taken waited (under load, a third of the calls).
    queue_wait: Histogram,
}

impl CallHandles {
    fn new(supplier: &str, hook: Hook) -> Self {
        Self {
            succeeded: metrics::counter!("ferry_plugin_calls_total", "supplier" => supplier.to_owned(), "hook" => hook.as_str(), "outcome" => "ok"),
            seconds: metrics::histogram!("ferry_plugin_call_seconds", "hook" => hook.as_str()),
            queue_wait: metrics::histogram!("ferry_plugin_queue_wait_seconds", "supplier" => supplier.to_owned(), "hook" => hook.as_str()),
        }
    }
}

impl Installed {
    fn new(record: PluginRecord, component: Arc<LoadedComponent>) -> Self {
        let config = config_pairs(&record.config);
        let mut digest = Sha256::new();
        for (key, value) in config.iter() {
            for part in [key, value] {
                digest.update((part.len() as u64).to_be_bytes());
                digest.update(part.as_bytes());
            }
        }
        let identity = format!(
            "plugin {} config {}",
            record.sha256,
            hex::encode(digest.finalize())
        );
        Self {
            config,
            record,
            component,
            identity,
            handles: Default::default(),
        }
    }

    /// The metric handles of `hook`'s calls.
    fn handles(&self, hook: Hook) -> &CallHandles {
        self.handles[hook as usize].get_or_init(|| CallHandles::new(&self.record.supplier, hook))
    }
}

pub struct Plugins {
    runtime: Arc<Runtime>,
    store: Arc<dyn Store>,
    installed: RwLock<HashMap<String, Arc<Installed>>>,
    failures: Mutex<HashMap<String, VecDeque<PluginFailure>>>,
    bulkhead: Bulkhead,
    /// Each supplier's call slots (kept across plugin versions).
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// When each supplier's plugin last overran its deadline.
    overruns: Mutex<HashMap<String, Instant>>,
    low_priority: LowPriorityThreads,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins").finish_non_exhaustive()
    }
}

fn config_pairs(config: &BTreeMap<String, String>) -> PluginConfig {
    config.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

impl Plugins {
    /// Loads every stored plugin; one that no longer loads is logged and left out. Calls pass
    /// the default [`Bulkhead`] (see [`Plugins::with_bulkhead`]).
    pub async fn open(runtime: Arc<Runtime>, store: Arc<dyn Store>) -> Result<Self, DomainError> {
        let plugins = Self {
            runtime,
            store,
            installed: RwLock::default(),
            failures: Mutex::default(),
            bulkhead: Bulkhead::default(),
            slots: Mutex::default(),
            overruns: Mutex::default(),
            low_priority: LowPriorityThreads::default(),
        };
        plugins.sync_with_store().await?;
        // What earlier runs compiled for plugins since replaced or removed, or with an
        // earlier Ferry's engine.
        plugins.forget_unused_compiled();
        Ok(plugins)
    }

    /// Removes from the disk cache the compiled components no plugin here runs.
    fn forget_unused_compiled(&self) {
        let in_use: Vec<String> = self
            .installed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|installed| installed.record.sha256.clone())
            .collect();
        self.runtime
            .keep_compiled_only(&in_use.iter().map(String::as_str).collect());
    }

    /// Makes the plugins in use those the store holds: loads the ones installed or replaced
    /// (through another instance over the same database), takes a new configuration, drops
    /// the ones removed. One that no longer loads is logged and left out.
    pub async fn sync_with_store(&self) -> Result<(), DomainError> {
        let stored = self.store.plugins().await?;
        let kept: std::collections::HashSet<&str> = stored
            .iter()
            .map(|record| record.supplier.as_str())
            .collect();
        let gone: Vec<String> = self
            .installed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .filter(|supplier| !kept.contains(supplier.as_str()))
            .cloned()
            .collect();
        for supplier in gone {
            tracing::info!(supplier, "plugin removed elsewhere");
            self.swap(&supplier, None);
        }
        for record in stored {
            let current = self.current(&record.supplier);
            let component = match current {
                Some(current)
                    if current.record.sha256 == record.sha256
                        && current.record.config == record.config =>
                {
                    continue;
                }
                Some(current) if current.record.sha256 == record.sha256 => {
                    current.component.clone()
                }
                _ => match self.load_stored(&record).await? {
                    Some(component) => Arc::new(component),
                    None => continue,
                },
            };
            let supplier = record.supplier.clone();
            let record = PluginRecord {
                wit_version: Some(component.version().as_str().to_owned()),
                ..record
            };
            tracing::info!(supplier, plugin = %record.label(), "plugin in use");
            self.swap(&supplier, Some(Installed::new(record, component)));
        }
        Ok(())
    }

    /// Compiles a stored plugin's component (below the host's priority); `None` when it
    /// cannot be used.
    async fn load_stored(
        &self,
        record: &PluginRecord,
    ) -> Result<Option<LoadedComponent>, DomainError> {
        let Some(bytes) = self.store.plugin_component(&record.sha256).await? else {
            // Replaced (or removed) through another instance since the record was read, its
            // component went with it: the next sync reads what stands now.
            let replaced = self
                .store
                .plugin(&record.supplier)
                .await?
                .is_none_or(|now| now.sha256 != record.sha256);
            if replaced {
                tracing::info!(supplier = %record.supplier, "a plugin was replaced as it was read: taking the new one next");
            } else {
                tracing::error!(supplier = %record.supplier, "a stored plugin has no component");
            }
            return Ok(None);
        };
        let runtime = self.runtime.clone();
        let loaded = self
            .low_priority
            .spawn(move || runtime.load(&bytes))
            .map_err(DomainError::PluginFailed)?
            .await
            .map_err(|error| DomainError::PluginFailed(error.to_string()))?;
        match loaded {
            Ok(component) => Ok(Some(component)),
            Err(error) => {
                tracing::error!(supplier = %record.supplier, %error, "a stored plugin no longer loads");
                Ok(None)
            }
        }
    }

    /// The same plugins, their calls passing `bulkhead`.
    pub fn with_bulkhead(mut self, bulkhead: Bulkhead) -> Self {
        self.bulkhead = Bulkhead {
            calls_per_supplier: bulkhead.calls_per_supplier.max(1),
            ..bulkhead
        };
        self
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    fn slots(&self, supplier: &str) -> Arc<Semaphore> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = slots.get(supplier) {
            return known.clone();
        }
        slots
            .entry(supplier.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(self.bulkhead.calls_per_supplier)))
            .clone()
    }

    /// Whether `supplier`'s calls run on the low-priority threads.
    fn demoted(&self, supplier: &str) -> bool {
        let overruns = self.overruns.lock().unwrap_or_else(PoisonError::into_inner);
        overruns
            .get(supplier)
            .is_some_and(|last| last.elapsed() < DEMOTION)
    }

    fn record_overrun(&self, supplier: &str, overran: bool) {
        let mut overruns = self.overruns.lock().unwrap_or_else(PoisonError::into_inner);
        if overran {
            overruns.insert(supplier.to_owned(), Instant::now());
        } else {
            overruns.remove(supplier);
        }
    }

    fn swap(&self, supplier: &str, installed: Option<Installed>) {
        let (replaced, still_run) = {
            let mut map = self
                .installed
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let replaced = match installed {
                Some(installed) => map.insert(supplier.to_owned(), Arc::new(installed)),
                None => map.remove(supplier),
            };
            let still_run = replaced.as_ref().is_some_and(|replaced| {
                map.values()
                    .any(|installed| installed.record.sha256 == replaced.record.sha256)
            });
            (replaced, still_run)
        };
        // A component no plugin here runs any more: its compiled form goes from the disk.
        if replaced.is_some() && !still_run {
            self.forget_unused_compiled();
        }
    }

    fn current(&self, supplier: &str) -> Option<Arc<Installed>> {
        self.installed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(supplier)
            .cloned()
    }

    /// The supplier's plugin, if it has one that implements `hook`.
    fn current_for(&self, supplier: &str, hook: Hook) -> Option<Arc<Installed>> {
        self.current(supplier)
            .filter(|installed| installed.record.hooks.contains(&hook))
    }

    /// Checks `component` against the world and installs it for `supplier`, replacing any
    /// plugin it had (keeping its configuration unless `config` is given).
    pub async fn install(
        &self,
        supplier: &str,
        component: Vec<u8>,
        name: Option<String>,
        version: Option<String>,
        config: Option<BTreeMap<String, String>>,
    ) -> Result<PluginRecord, DomainError> {
        self.store
            .supplier(supplier)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        // Compiling is long: not for a component that could not be kept.
        self.store.writable()?;
        let runtime = self.runtime.clone();
        // Compiling takes long: below the host's priority, so that serving goes on meanwhile.
        let (component, bytes) = self
            .low_priority
            .spawn(move || runtime.load(&component).map(|loaded| (loaded, component)))
            .map_err(DomainError::PluginFailed)?
            .await
            .map_err(|error| DomainError::PluginRejected(error.to_string()))?
            .map_err(|error| {
                DomainError::PluginRejected(format!("The component was refused: {error}"))
            })?;
        let previous = self.store.plugin(supplier).await?;
        let config = config
            .or_else(|| previous.map(|p| p.config))
            .unwrap_or_default();
        let record = PluginRecord {
            supplier: supplier.to_owned(),
            sha256: component.sha256.clone(),
            name: name
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "plugin".to_owned()),
            version: version
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| component.sha256.get(..12).unwrap_or_default().to_owned()),
            size_bytes: bytes.len() as u64,
            installed_at: Utc::now(),
            hooks: component.hooks(),
            config,
            wit_version: Some(component.version().as_str().to_owned()),
        };
        self.store.put_plugin(&record, &bytes).await?;
        self.store.flush().await?;
        self.record_overrun(supplier, false);
        self.swap(
            supplier,
            Some(Installed::new(record.clone(), Arc::new(component))),
        );
        tracing::info!(supplier, plugin = %record.label(), hooks = ?record.hooks, "plugin installed");
        Ok(record)
    }

    /// Replaces the supplier's plugin configuration.
    pub async fn set_config(
        &self,
        supplier: &str,
        config: BTreeMap<String, String>,
    ) -> Result<PluginRecord, DomainError> {
        // The stored plugin, not the one in use here: another instance may have replaced it
        // within the last second. Replaced between the read and the change, it is read again.
        let record = retrying(|| async {
            let stored = self
                .store
                .plugin(supplier)
                .await?
                .ok_or(DomainError::PluginNotFound)?;
            self.store
                .configure_plugin(supplier, &stored.sha256, &config)
                .await?
                .ok_or(DomainError::PluginNotFound)
        })
        .await?;
        self.store.flush().await?;
        // Were another component in use here, the sync would bring the stored one in a second.
        if let Some(current) = self.current(supplier)
            && current.record.sha256 == record.sha256
        {
            self.swap(
                supplier,
                Some(Installed::new(record.clone(), current.component.clone())),
            );
        }
        Ok(record)
    }

    pub async fn remove(&self, supplier: &str) -> Result<PluginRecord, DomainError> {
        let removed = self
            .store
            .remove_plugin(supplier)
            .await?
            .ok_or(DomainError::PluginNotFound)?;
        self.store.flush().await?;
        self.swap(supplier, None);
        tracing::info!(supplier, plugin = %removed.label(), "plugin removed");
        Ok(removed)
    }

    pub async fn view(&self, supplier: &str) -> Result<PluginView, DomainError> {
        let record = self
            .store
            .plugin(supplier)
            .await?
            .ok_or(DomainError::PluginNotFound)?;
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let recent_failures = failures
            .get(supplier)
            .map(|list| list.iter().rev().cloned().collect())
            .unwrap_or_default();
        drop(failures);
        Ok(PluginView {
            low_priority: self.demoted(supplier),
            record,
            recent_failures,
        })
    }

    fn record_failure(&self, supplier: &str, hook: Hook, error: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let list = failures.entry(supplier.to_owned()).or_default();
        if list.len() == RECENT_FAILURES {
            list.pop_front();
        }
        list.push_back(PluginFailure {
            at: Utc::now(),
            hook,
            error: error.to_owned(),
        });
    }

    /// Runs the hook once one of the supplier's call slots is free: in the caller's task, or
    /// on a low-priority thread if the supplier is demoted. The slot is held until the call
    /// ends, even if the request that made it is abandoned.
    async fn run(
        &self,
        supplier: &str,
        installed: Arc<Installed>,
        hook: Hook,
        target: Option<AccountTarget>,
        input: Value,
    ) -> Result<HookRun, PluginError> {
        let Bulkhead {
            calls_per_supplier,
            queue_wait,
        } = self.bulkhead;
        let slots = self.slots(supplier);
        // A free slot is taken at once, without a timer for the wait there is none of.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(TryAcquireError::NoPermits) => {
                let waiting = Instant::now();
                let slot = tokio::time::timeout(queue_wait, slots.acquire_owned()).await;
                installed.handles(hook).queue_wait.record(waiting.elapsed());
                slot.map_err(|_| PluginError::Busy {
                    slots: calls_per_supplier,
                    waited: queue_wait,
                })?
                .map_err(|error| PluginError::Runtime(error.to_string()))?
            }
            Err(error @ TryAcquireError::Closed) => {
                return Err(PluginError::Runtime(error.to_string()));
            }
        };
        let runtime = self.runtime.clone();
        let call = async move {
            let _slot = slot;
            runtime
                .call(
                    &installed.component,
                    hook,
                    &installed.config,
                    target.as_ref(),
                    input,
                )
                .await
        };
        let result = if self.demoted(supplier) {
            self.low_priority
                .spawn_future(call)
                .map_err(PluginError::Runtime)?
                .await
                .map_err(|error| PluginError::Runtime(error.to_string()))?
        } else {
            // In this task, on this worker; to its end even if the request is dropped.
            ToItsEnd::new(call).await.map_err(PluginError::Runtime)?
        };
        if let Err(PluginError::Deadline(_)) = &result {
            self.record_overrun(supplier, true);
        }
        result
    }
}

impl SupplierRules for Plugins {
    fn identity(&self, supplier: &str, hook: Hook) -> Option<String> {
        Some(self.current_for(supplier, hook).map_or_else(
            || NO_RULES_IDENTITY.to_owned(),
            |installed| installed.identity.clone(),
        ))
    }

    fn apply<'a>(
        &'a self,
        supplier: &'a str,
        hook: Hook,
        target: Option<&'a AccountTarget>,
        input: RuleInput<'a>,
    ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
        Box::pin(async move {
            let Some(installed) = self.current_for(supplier, hook) else {
                return Ok(None);
            };
            let label = installed.record.label();
            let result = self
                .run(supplier, installed.clone(), hook, target.cloned(), input())
                .await;
            let kind = match &result {
                Ok(_) => "ok",
                Err(PluginError::Deadline(_)) => "deadline",
                Err(PluginError::Memory(_)) => "memory",
                Err(PluginError::Busy { .. }) => "busy",
                Err(_) => "trap",
            };
            match &result {
                Ok(run) => {
                    let handles = installed.handles(hook);
                    handles.succeeded.increment(1);
                    handles.seconds.record(run.elapsed.as_secs_f64());
                }
                Err(_) => {
                    metrics::counter!("ferry_plugin_calls_total", "supplier" => supplier.to_owned(), "hook" => hook.as_str(), "outcome" => kind).increment(1);
                }
            }
            match result {
                Ok(run) => {
                    for line in &run.logs {
                        tracing::info!(supplier, plugin = %label, hook = hook.as_str(), level = %line.level, fields = ?line.fields, "plugin: {}", line.message);
                    }
                    if !run.output.is_empty() {
                        tracing::info!(supplier, plugin = %label, output = %run.output, "plugin output");
                    }
                    run.outcome.map(Some).map_err(RuleFailure::Rejected)
                }
                Err(error @ PluginError::Busy { .. }) => {
                    // Not the plugin's failure on this request: it did not run. Kept out of
                    // `recent_failures`, which should show why its calls take so long.
                    let detail = format!(
                        "Plugin {label} could not run {}: {error}; retry later.",
                        hook.as_str()
                    );
                    tracing::warn!(supplier, hook = hook.as_str(), %detail, "plugin busy");
                    metrics::counter!("ferry_plugin_failures_total", "supplier" => supplier.to_owned(), "hook" => hook.as_str(), "kind" => kind).increment(1);
                    Err(RuleFailure::Busy(detail))
                }
                Err(error) => {
                    let detail = format!("Plugin {label} failed in {}: {error}.", hook.as_str());
                    tracing::warn!(supplier, hook = hook.as_str(), %detail, "plugin failure");
                    metrics::counter!("ferry_plugin_failures_total", "supplier" => supplier.to_owned(), "hook" => hook.as_str(), "kind" => kind).increment(1);
                    self.record_failure(supplier, hook, &detail);
                    Err(RuleFailure::Broken(detail))
                }
            }
        })
    }
}
