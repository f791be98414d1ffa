//! The suppliers Ferry imports for, the API keys their integrations call with, and the
//! operations teams accounts are assigned to: what the operators manage.

use super::StoreFuture;
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::operations_team::OperationsTeam;
use crate::domain::supplier::Supplier;
use chrono::{DateTime, Utc};

/// Suppliers, their API keys and the operations teams.
pub trait SupplierStore: Send + Sync {
    /// Inserts a new supplier; `false` when the code is taken.
    fn create_supplier<'a>(&'a self, supplier: &'a Supplier) -> StoreFuture<'a, bool>;
    fn supplier<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Option<Supplier>>;
    fn suppliers(&self) -> StoreFuture<'_, Vec<Supplier>>;
    /// Applies `change` to the supplier atomically; `None` when it does not exist.
    fn update_supplier<'a>(
        &'a self,
        code: &'a str,
        change: &'a mut (dyn FnMut(&mut Supplier) + Send),
    ) -> StoreFuture<'a, Option<Supplier>>;

    /// Inserts a new operations team; `false` when the name is taken.
    fn create_team<'a>(&'a self, team: &'a OperationsTeam) -> StoreFuture<'a, bool>;
    fn team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>>;
    /// Every team, by name.
    fn teams(&self) -> StoreFuture<'_, Vec<OperationsTeam>>;
    /// Removes the team; `None` when it did not exist.
    fn delete_team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>>;

    fn insert_api_key<'a>(&'a self, key: &'a ApiKeyRecord) -> StoreFuture<'a, ()>;
    fn api_key<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>>;
    fn api_key_by_digest<'a>(&'a self, digest: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>>;
    /// Marks the key revoked; `None` when it never existed.
    fn revoke_api_key<'a>(
        &'a self,
        id: &'a str,
        at: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<ApiKeyRecord>>;
}
