//! What the instances of one service share to work as one: the leases under which one of
//! them at a time does a piece of work (the relay, the expiry sweep, a bulk migration), the
//! records of the bulk migrations such work runs, and the secrets every instance uses alike
//! (the token signing key).

use super::StoreFuture;
use crate::domain::migrations::MigrationView;

/// Leases, bulk-migration records and shared secrets.
pub trait LeaseStore: Send + Sync {
    /// Records a bulk migration as it stands (a new one, or its progress).
    fn put_migration<'a>(&'a self, migration: &'a MigrationView) -> StoreFuture<'a, ()>;
    /// The supplier's bulk migrations as last recorded.
    fn migrations<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Vec<MigrationView>>;

    /// Takes the lease `name` for `holder`, or keeps it, until `ttl` from now; whether
    /// `holder` holds it. Only one holder at a time does the work a lease names (the relay, the
    /// expiry sweep), whichever instance it runs on.
    fn hold_lease<'a>(
        &'a self,
        name: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> StoreFuture<'a, bool>;
    /// Gives the lease up, if `holder` holds it.
    fn release_lease<'a>(&'a self, name: &'a str, holder: &'a str) -> StoreFuture<'a, ()>;

    /// A named secret, created by `make` on first use.
    fn secret<'a>(
        &'a self,
        name: &'a str,
        make: &'a mut (dyn FnMut() -> Vec<u8> + Send),
    ) -> StoreFuture<'a, Vec<u8>>;
}
