//! Leases, bulk-migration records and secrets on sled ([`LeaseStore`]). One process holds a
//! sled directory, so it holds every lease; the records are JSON in a tree each.

use super::SledStore;
use super::codec::{decode, encode, pair_key};
use crate::domain::migrations::MigrationView;
use crate::domain::storage::{LeaseStore, StoreFuture};

impl LeaseStore for SledStore {
    fn put_migration<'a>(&'a self, migration: &'a MigrationView) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.journal.commit(|changes| {
                changes.insert(
                    &self.migrations,
                    pair_key(&migration.supplier, &migration.id),
                    encode(migration),
                );
                Ok(())
            })
        })
    }

    fn migrations<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Vec<MigrationView>> {
        Box::pin(async move {
            self.migrations
                .scan_prefix(pair_key(supplier, ""))
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    /// One process holds a sled directory: it holds every lease.
    fn hold_lease<'a>(
        &'a self,
        _name: &'a str,
        _holder: &'a str,
        _ttl: std::time::Duration,
    ) -> StoreFuture<'a, bool> {
        Box::pin(std::future::ready(Ok(true)))
    }

    fn release_lease<'a>(&'a self, _name: &'a str, _holder: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn secret<'a>(
        &'a self,
        name: &'a str,
        make: &'a mut (dyn FnMut() -> Vec<u8> + Send),
    ) -> StoreFuture<'a, Vec<u8>> {
        self.noting_failures(async move {
            if let Some(existing) = self.secrets.get(name.as_bytes())? {
                return Ok(existing.to_vec());
            }
            self.health.check()?;
            self.journal.commit(|changes| {
                if let Some(raced) = self.journal.get(&self.secrets, name.as_bytes())? {
                    return Ok(raced.to_vec());
                }
                let fresh = make();
                changes.insert(&self.secrets, name.as_bytes(), fresh.clone());
                Ok(fresh)
            })
        })
    }
}
