//! The storage port: what the domain needs from durable storage, whatever keeps it.
//!
//! The domain asks for records and atomic changes; it never sees the backend (`store`
//! implements this port on sled and on PostgreSQL). The port is one role trait per kind of
//! record, each in its module: [`SupplierStore`] (suppliers, API keys, operations teams),
//! [`ImportStore`] (import processes, their listings and counts), [`AccountStore`] (the
//! platform accounts and their records, changed through an [`AccountUnit`]), [`PluginStore`],
//! [`EventLog`] (and the relay's [`Outbox`] beside it), [`LeaseStore`] (leases, bulk-migration
//! records, shared secrets) and [`Durability`]. [`Store`] is all of them at once: what a use
//! case holds (`Arc<dyn Store>`), implemented by every type that implements each role.
//!
//! Every change that must be atomic (an import process, the platform account it creates and
//! its opening records) is one call here, applied in one transaction with the events that
//! describe it. An account's unit of work ([`AccountUnit::commit`]) and an import change are
//! durable when they resolve; the other writes (suppliers, keys, teams, plugins, published
//! events) are durable once [`Durability::flush`] resolves, and callers answer 2xx only after
//! it. Errors are the backend-neutral [`StoreError`].

mod accounts;
mod error;
mod events;
mod imports;
mod leases;
mod plugins;
mod suppliers;

pub use accounts::{AccountOpening, AccountRecords, AccountStore, AccountUnit};
pub use error::{BackendError, StoreError, Unwritable};
pub use events::{EventLog, Outbox, PendingEvent};
pub use imports::{
    DecideImport, ImportChange, ImportCounts, ImportStore, ImportStream, ListingStream,
};
pub use leases::LeaseStore;
pub use plugins::PluginStore;
pub use suppliers::SupplierStore;

use super::error::DomainError;
use futures_util::future::BoxFuture;

/// What a store's read or write resolves to.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// Whether writes are taken, and when what was written is durable.
pub trait Durability: Send + Sync {
    /// Resolves once everything written so far is on disk.
    fn flush(&self) -> StoreFuture<'static, ()>;
    /// Whether writes would be taken now: a use case with a side effect outside the store (a
    /// payment vendor's registration, compiling a plugin) asks before it.
    fn writable(&self) -> Result<(), StoreError>;
}

/// The whole storage port: every role at once. A backend implements each role; this trait
/// then comes with them.
pub trait Store:
    SupplierStore
    + ImportStore
    + AccountStore
    + PluginStore
    + EventLog
    + LeaseStore
    + Durability
    + Send
    + Sync
    + 'static
{
}

impl<T> Store for T where
    T: SupplierStore
        + ImportStore
        + AccountStore
        + PluginStore
        + EventLog
        + LeaseStore
        + Durability
        + Send
        + Sync
        + 'static
{
}

/// How long work that runs by itself (a bulk or scheduled migration) waits before it tries
/// again while the storage is away or refuses writes ([`StoreError::is_for_now`]): it goes on
/// where it was once the storage takes it again, rather than failing or stopping.
pub const WHILE_AWAY: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `attempt` until it does not meet a concurrent change ([`StoreError::Conflict`]), a few
/// times at most: the use cases' one answer to conflicts, whatever the backend.
pub async fn retrying<T, F, Fut>(mut attempt: F) -> Result<T, DomainError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, DomainError>>,
{
    const ATTEMPTS: usize = 5;
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(DomainError::Store(StoreError::Conflict)) if tries < ATTEMPTS => tries += 1,
            other => return other,
        }
    }
}

/// Runs `attempt` until the storage takes it ([`StoreError::is_for_now`]), waiting
/// [`WHILE_AWAY`] between tries: for work that runs by itself and must not be given up for an
/// outage or a disk short of space. Any other answer is returned.
pub async fn retrying_while_away<T, F, Fut>(mut attempt: F) -> Result<T, DomainError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, DomainError>>,
{
    loop {
        match attempt().await {
            Err(error) if error.is_store_for_now() => tokio::time::sleep(WHILE_AWAY).await,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn conflicts_are_retried_a_few_times_and_nothing_else_is() {
        let mut runs = 0;
        let kept = retrying(|| {
            runs += 1;
            let run = runs;
            async move {
                if run < 3 {
                    Err(DomainError::Store(StoreError::Conflict))
                } else {
                    Ok(run)
                }
            }
        })
        .await;
        assert_eq!(kept.ok(), Some(3));

        let mut runs = 0;
        let always = retrying(|| {
            runs += 1;
            async { Err::<(), _>(DomainError::Store(StoreError::Conflict)) }
        })
        .await;
        assert!(matches!(
            always,
            Err(DomainError::Store(StoreError::Conflict))
        ));
        assert_eq!(runs, 5);

        let mut runs = 0;
        let refused = retrying(|| {
            runs += 1;
            async { Err::<(), _>(DomainError::AccountNotFound) }
        })
        .await;
        assert!(matches!(refused, Err(DomainError::AccountNotFound)));
        assert_eq!(runs, 1);
    }

    #[tokio::test]
    async fn work_is_tried_again_while_the_storage_is_away_and_not_for_anything_else() {
        let mut runs = 0;
        let kept = retrying_while_away(|| {
            runs += 1;
            let run = runs;
            async move {
                match run {
                    1 => Err(DomainError::Store(StoreError::Unavailable("away".into()))),
                    2 => Err(DomainError::Store(StoreError::Unwritable(
                        Unwritable::BelowWatermark {
                            free_bytes: 1,
                            watermark_bytes: 2,
                        },
                    ))),
                    _ => Ok(run),
                }
            }
        })
        .await;
        assert_eq!(kept.ok(), Some(3));

        let mut runs = 0;
        let refused = retrying_while_away(|| {
            runs += 1;
            async { Err::<(), _>(DomainError::Store(StoreError::Conflict)) }
        })
        .await;
        assert!(matches!(
            refused,
            Err(DomainError::Store(StoreError::Conflict))
        ));
        assert_eq!(runs, 1);
    }
}
