//! The installed plugins: one per supplier, kept in the store, loaded into the runtime, and
//! swapped atomically (a request in flight finishes on the version it started with).

use super::runtime::{HookRun, LoadedComponent, PluginError, Runtime};
use crate::domain::error::DomainError;
use crate::domain::plugin::PluginRecord;
use crate::domain::ports::{AccountTarget, Hook, RuleFailure, SupplierRules};
use crate::store::Store;
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

const RECENT_FAILURES: usize = 20;

/// A failed hook call, for operators.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PluginFailure {
    pub at: DateTime<Utc>,
    pub hook: Hook,
    pub error: String,
}

/// A plugin as operators see it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PluginView {
    #[serde(flatten)]
    pub record: PluginRecord,
    pub recent_failures: Vec<PluginFailure>,
}

struct Installed {
    record: PluginRecord,
    config: Vec<(String, String)>,
    component: Arc<LoadedComponent>,
}

pub struct Plugins {
    runtime: Arc<Runtime>,
    store: Arc<dyn Store>,
    installed: RwLock<HashMap<String, Arc<Installed>>>,
    failures: Mutex<HashMap<String, VecDeque<PluginFailure>>>,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins").finish_non_exhaustive()
    }
}

fn config_pairs(config: &BTreeMap<String, String>) -> Vec<(String, String)> {
    config.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

impl Plugins {
    /// Loads every stored plugin; one that no longer loads is logged and left out.
    pub fn open(runtime: Arc<Runtime>, store: Arc<dyn Store>) -> Result<Self, DomainError> {
        let plugins = Self {
            runtime,
            store,
            installed: RwLock::default(),
            failures: Mutex::default(),
        };
        for record in plugins.store.plugins()? {
            let Some(bytes) = plugins.store.plugin_component(&record.sha256)? else {
                tracing::error!(supplier = %record.supplier, "a stored plugin has no component");
                continue;
            };
            match plugins.runtime.load(&bytes) {
                Ok(component) => {
                    let supplier = record.supplier.clone();
                    plugins.swap(
                        &supplier,
                        Some(Installed {
                            config: config_pairs(&record.config),
                            record,
                            component: Arc::new(component),
                        }),
                    );
                }
                Err(error) => {
                    tracing::error!(supplier = %record.supplier, %error, "a stored plugin no longer loads")
                }
            }
        }
        Ok(plugins)
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    fn swap(&self, supplier: &str, installed: Option<Installed>) {
        let mut map = self
            .installed
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        match installed {
            Some(installed) => map.insert(supplier.to_owned(), Arc::new(installed)),
            None => map.remove(supplier),
        };
    }

    fn current(&self, supplier: &str) -> Option<Arc<Installed>> {
        self.installed
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(supplier)
            .cloned()
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
            .supplier(supplier)?
            .ok_or(DomainError::SupplierNotFound)?;
        let runtime = self.runtime.clone();
        let (component, bytes) = tokio::task::spawn_blocking(move || {
            runtime.load(&component).map(|loaded| (loaded, component))
        })
        .await
        .map_err(|error| DomainError::PluginRejected(error.to_string()))?
        .map_err(|error| {
            DomainError::PluginRejected(format!("The component was refused: {error}"))
        })?;
        let previous = self.store.plugin(supplier)?;
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
        };
        self.store.put_plugin(&record, &bytes)?;
        self.store.flush().await?;
        self.swap(
            supplier,
            Some(Installed {
                config: config_pairs(&record.config),
                record: record.clone(),
                component: Arc::new(component),
            }),
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
        let current = self.current(supplier).ok_or(DomainError::PluginNotFound)?;
        let mut record = current.record.clone();
        record.config = config;
        let bytes = self
            .store
            .plugin_component(&record.sha256)?
            .unwrap_or_default();
        self.store.put_plugin(&record, &bytes)?;
        self.store.flush().await?;
        self.swap(
            supplier,
            Some(Installed {
                config: config_pairs(&record.config),
                record: record.clone(),
                component: current.component.clone(),
            }),
        );
        Ok(record)
    }

    pub async fn remove(&self, supplier: &str) -> Result<PluginRecord, DomainError> {
        let removed = self
            .store
            .remove_plugin(supplier)?
            .ok_or(DomainError::PluginNotFound)?;
        self.store.flush().await?;
        self.swap(supplier, None);
        tracing::info!(supplier, plugin = %removed.label(), "plugin removed");
        Ok(removed)
    }

    pub fn view(&self, supplier: &str) -> Result<PluginView, DomainError> {
        let record = self
            .store
            .plugin(supplier)?
            .ok_or(DomainError::PluginNotFound)?;
        let failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let recent_failures = failures
            .get(supplier)
            .map(|list| list.iter().rev().cloned().collect())
            .unwrap_or_default();
        Ok(PluginView {
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

    async fn run(
        &self,
        installed: Arc<Installed>,
        hook: Hook,
        target: Option<AccountTarget>,
        input: Value,
    ) -> Result<HookRun, PluginError> {
        let runtime = self.runtime.clone();
        tokio::task::spawn_blocking(move || {
            runtime.call(
                &installed.component,
                hook,
                &installed.config,
                target.as_ref(),
                &input,
            )
        })
        .await
        .map_err(|error| PluginError::Runtime(error.to_string()))?
    }
}

impl SupplierRules for Plugins {
    fn apply<'a>(
        &'a self,
        supplier: &'a str,
        hook: Hook,
        target: Option<&'a AccountTarget>,
        input: Value,
    ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
        Box::pin(async move {
            let Some(installed) = self
                .current(supplier)
                .filter(|i| i.record.hooks.contains(&hook))
            else {
                return Ok(None);
            };
            let label = installed.record.label();
            let result = self.run(installed, hook, target.cloned(), input).await;
            let kind = match &result {
                Ok(_) => "ok",
                Err(PluginError::Deadline(_)) => "deadline",
                Err(PluginError::Memory(_)) => "memory",
                Err(_) => "trap",
            };
            metrics::counter!("ferry_plugin_calls_total", "supplier" => supplier.to_owned(), "hook" => hook.as_str(), "outcome" => kind).increment(1);
            match result {
                Ok(run) => {
                    for line in &run.logs {
                        tracing::info!(supplier, plugin = %label, hook = hook.as_str(), level = %line.level, fields = ?line.fields, "plugin: {}", line.message);
                    }
                    if !run.output.is_empty() {
                        tracing::info!(supplier, plugin = %label, output = %run.output, "plugin output");
                    }
                    metrics::histogram!("ferry_plugin_call_seconds", "hook" => hook.as_str())
                        .record(run.elapsed.as_secs_f64());
                    run.outcome.map(Some).map_err(RuleFailure::Rejected)
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
