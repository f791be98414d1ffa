//! Suppliers, their API keys and the operations teams on sled ([`SupplierStore`]): one tree
//! each (and one from each key's digest to its id), JSON values. Suppliers and API keys are
//! kept decoded too, since every request reads its own ([`super::decoded`]).

use super::SledStore;
use super::codec::{decode, encode};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::operations_team::OperationsTeam;
use crate::domain::storage::{StoreFuture, SupplierStore};
use crate::domain::supplier::Supplier;
use chrono::{DateTime, Utc};

impl SupplierStore for SledStore {
    fn create_team<'a>(&'a self, team: &'a OperationsTeam) -> StoreFuture<'a, bool> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                if self.exists(&self.teams, team.name.as_bytes())? {
                    return Ok(false);
                }
                changes.insert(&self.teams, team.name.as_bytes(), encode(team));
                Ok(true)
            })
        })
    }

    fn team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        Box::pin(async move {
            self.teams
                .get(name.as_bytes())?
                .map(|bytes| decode(name.as_bytes(), &bytes))
                .transpose()
        })
    }

    fn teams(&self) -> StoreFuture<'_, Vec<OperationsTeam>> {
        Box::pin(async move {
            self.teams
                .iter()
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    fn delete_team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let team = self.read(&self.teams, name.as_bytes())?;
                if team.is_some() {
                    changes.remove(&self.teams, name.as_bytes());
                }
                Ok(team)
            })
        })
    }

    fn create_supplier<'a>(&'a self, supplier: &'a Supplier) -> StoreFuture<'a, bool> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                if self.exists(&self.suppliers, supplier.code.as_bytes())? {
                    return Ok(false);
                }
                changes.insert(&self.suppliers, supplier.code.as_bytes(), encode(supplier));
                Ok(true)
            })
        })
    }

    fn supplier<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Option<Supplier>> {
        Box::pin(std::future::ready(
            self.decoded_suppliers.get(&self.suppliers, code.as_bytes()),
        ))
    }

    fn suppliers(&self) -> StoreFuture<'_, Vec<Supplier>> {
        Box::pin(async move {
            self.suppliers
                .iter()
                .map(|entry| {
                    let (key, value) = entry?;
                    decode(&key, &value)
                })
                .collect()
        })
    }

    fn update_supplier<'a>(
        &'a self,
        code: &'a str,
        change: &'a mut (dyn FnMut(&mut Supplier) + Send),
    ) -> StoreFuture<'a, Option<Supplier>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let Some(mut supplier) = self.read::<Supplier>(&self.suppliers, code.as_bytes())?
                else {
                    return Ok(None);
                };
                change(&mut supplier);
                changes.insert(&self.suppliers, code.as_bytes(), encode(&supplier));
                Ok(Some(supplier))
            })
        })
    }

    fn insert_api_key<'a>(&'a self, key: &'a ApiKeyRecord) -> StoreFuture<'a, ()> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                changes.insert(&self.api_keys, key.id.as_bytes(), encode(key));
                changes.insert(
                    &self.api_key_digests,
                    key.key_digest.as_bytes(),
                    key.id.as_bytes(),
                );
                Ok(())
            })
        })
    }

    fn api_key<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        Box::pin(std::future::ready(
            self.decoded_api_keys.get(&self.api_keys, id.as_bytes()),
        ))
    }

    fn api_key_by_digest<'a>(&'a self, digest: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        Box::pin(async move {
            let Some(id) = self.api_key_digests.get(digest.as_bytes())? else {
                return Ok(None);
            };
            let id = String::from_utf8_lossy(&id).into_owned();
            self.api_key(&id).await
        })
    }

    fn revoke_api_key<'a>(
        &'a self,
        id: &'a str,
        at: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.noting_failures(async move {
            self.health.check()?;
            self.journal.commit(|changes| {
                let Some(mut key) = self.read::<ApiKeyRecord>(&self.api_keys, id.as_bytes())?
                else {
                    return Ok(None);
                };
                if key.revoked_at.is_none() {
                    key.revoked_at = Some(at);
                }
                changes.insert(&self.api_keys, id.as_bytes(), encode(&key));
                changes.remove(&self.api_key_digests, key.key_digest.as_bytes());
                Ok(Some(key))
            })
        })
    }
}
