//! Plugins on sled ([`PluginStore`]): each supplier's plugin record, and the components by
//! their SHA-256, kept once however many suppliers run them. A component goes with the last
//! plugin that ran it; the change that decides so reads the other plugins through the
//! journal's overlay, so it sees one just given the component even before sled holds it.

use super::SledStore;
use super::codec::{decode, encode};
use super::journal::Changes;
use crate::domain::plugin::PluginRecord;
use crate::domain::storage::{PluginStore, StoreError, StoreFuture};

impl PluginStore for SledStore {
    fn put_plugin<'a>(
        &'a self,
        record: &'a PluginRecord,
        component: &'a [u8],
    ) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let previous: Option<PluginRecord> =
                    self.read(&self.plugins, record.supplier.as_bytes())?;
                changes.insert(&self.plugin_components, record.sha256.as_bytes(), component);
                changes.insert(&self.plugins, record.supplier.as_bytes(), encode(record));
                match previous {
                    Some(previous) if previous.sha256 != record.sha256 => {
                        self.remove_component_unless_used(changes, &previous)
                    }
                    _ => Ok(()),
                }
            })
        })
    }

    fn configure_plugin<'a>(
        &'a self,
        supplier: &'a str,
        sha256: &'a str,
        config: &'a std::collections::BTreeMap<String, String>,
    ) -> StoreFuture<'a, Option<PluginRecord>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let Some(mut plugin) =
                    self.read::<PluginRecord>(&self.plugins, supplier.as_bytes())?
                else {
                    return Ok(None);
                };
                if plugin.sha256 != sha256 {
                    return Err(StoreError::Conflict);
                }
                plugin.config = config.clone();
                changes.insert(&self.plugins, supplier.as_bytes(), encode(&plugin));
                Ok(Some(plugin))
            })
        })
    }

    fn plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        Box::pin(async move {
            self.plugins
                .get(supplier.as_bytes())?
                .map(|bytes| decode(supplier.as_bytes(), &bytes))
                .transpose()
        })
    }

    fn plugins(&self) -> StoreFuture<'_, Vec<PluginRecord>> {
        Box::pin(async move {
            self.plugins
                .iter()
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    fn plugin_component<'a>(&'a self, sha256: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            Ok(self
                .plugin_components
                .get(sha256.as_bytes())?
                .map(|bytes| bytes.to_vec()))
        })
    }

    fn remove_plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let plugin = self.read(&self.plugins, supplier.as_bytes())?;
                if let Some(plugin) = &plugin {
                    changes.remove(&self.plugins, supplier.as_bytes());
                    self.remove_component_unless_used(changes, plugin)?;
                }
                Ok(plugin)
            })
        })
    }
}

impl SledStore {
    /// Adds the removal of the component `replaced` (a supplier's plugin being replaced or
    /// removed) ran, unless another supplier's plugin runs it too. Under the commit lock.
    fn remove_component_unless_used(
        &self,
        changes: &mut Changes,
        replaced: &PluginRecord,
    ) -> Result<(), StoreError> {
        for supplier in self.journal.keys(&self.plugins)? {
            if supplier.as_ref() == replaced.supplier.as_bytes() {
                continue;
            }
            let other: Option<PluginRecord> = self.read(&self.plugins, &supplier)?;
            if other.is_some_and(|other| other.sha256 == replaced.sha256) {
                return Ok(());
            }
        }
        changes.remove(&self.plugin_components, replaced.sha256.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        clippy::await_holding_lock,
        reason = "the awaits are `poll!`s, which return at once; the journal's own thread is the one that waits on the lock, never a task"
    )]
    async fn a_component_another_plugin_was_just_given_is_kept_before_sled_holds_that() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        let plugin = crate::store::contract::plugin_of;
        let (first, second) = (b"first".as_slice(), b"second".as_slice());
        store
            .put_plugin(&plugin("OLD_CO", first), first)
            .await
            .expect("installed");
        // NEW_CO given the first component, journaled and not yet made in sled...
        let held = store.journal.hold_rounds();
        let given = plugin("NEW_CO", first);
        let mut new_co = store.put_plugin(&given, first);
        assert!(futures_util::poll!(&mut new_co).is_pending());
        // ...is seen when OLD_CO's plugin is replaced: the first component stays.
        let replaced = plugin("OLD_CO", second);
        let mut old_co = store.put_plugin(&replaced, second);
        assert!(futures_util::poll!(&mut old_co).is_pending());
        drop(held);
        new_co.await.expect("NEW_CO");
        old_co.await.expect("OLD_CO");
        let sha256 = crate::plugins::sha256_hex(first);
        assert_eq!(
            store
                .plugin_component(&sha256)
                .await
                .expect("read")
                .as_deref(),
            Some(first)
        );
    }
}
