//! The suppliers' plugins: each one's record (the component it runs, its settings) and the
//! components' bytes, kept once however many suppliers run them.

use super::StoreFuture;
use crate::domain::plugin::PluginRecord;
use std::collections::BTreeMap;

/// The installed plugins and their components.
pub trait PluginStore: Send + Sync {
    /// Installs (or replaces) a supplier's plugin: its record and its component bytes. A
    /// component no plugin runs any more goes with the change.
    fn put_plugin<'a>(
        &'a self,
        record: &'a PluginRecord,
        component: &'a [u8],
    ) -> StoreFuture<'a, ()>;
    /// Gives the supplier's plugin the settings `config`, if it still runs the component
    /// `sha256`: the plugin as changed; `None` when the supplier has no plugin;
    /// [`StoreError::Conflict`] when its plugin was replaced meanwhile.
    fn configure_plugin<'a>(
        &'a self,
        supplier: &'a str,
        sha256: &'a str,
        config: &'a BTreeMap<String, String>,
    ) -> StoreFuture<'a, Option<PluginRecord>>;
    fn plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>>;
    fn plugins(&self) -> StoreFuture<'_, Vec<PluginRecord>>;
    fn plugin_component<'a>(&'a self, sha256: &'a str) -> StoreFuture<'a, Option<Vec<u8>>>;
    /// Removes the supplier's plugin; `None` when it had none.
    fn remove_plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>>;
}
