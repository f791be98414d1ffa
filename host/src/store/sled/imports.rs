//! Import processes on sled ([`ImportStore`]): each process's JSON by supplier and external
//! account number, its listing beside it under the same key ([`super::listing`]); each
//! supplier's counts by state are among its counters ([`super::supplier_counts`]). A change reads the process
//! through the journal's overlay under the commit lock, so it sees the change before it even
//! before sled holds that.

use super::SledStore;
use super::codec::{SEPARATOR, decode, encode, pair_key};
use super::decoded::RecordReader;
use super::event_records::LoggedEvents;
use super::listing;
use crate::domain::campaign::Counts;
use crate::domain::error::DomainError;
use crate::domain::import_process::{ImportListing, ImportProcess};
use crate::domain::storage::{
    DecideImport, Durability, ImportChange, ImportStore, ImportStream, ListingStream, StoreError,
    StoreFuture,
};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use sled::IVec;

/// How many account numbers a migration tries before it gives up
/// ([`StoreError::NumbersExhausted`]).
const NUMBER_ATTEMPTS: usize = 16;

impl ImportStore for SledStore {
    fn supplier_counts<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Counts> {
        Box::pin(std::future::ready(Ok(self.supplier_counts.of(code))))
    }

    fn import_process<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportProcess>> {
        Box::pin(std::future::ready(
            self.decoded_imports
                .get(&self.imports, &pair_key(supplier, external)),
        ))
    }

    fn change_import<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<ImportChange, DomainError>> {
        Box::pin(async move {
            self.health.check()?;
            let change = self
                .apply_import_change(supplier, external, decide)
                .map_err(|error| self.health.noted_domain(error))?;
            Durability::flush(self).await?;
            Ok(change)
        })
    }

    fn change_imports<'a>(
        &'a self,
        supplier: &'a str,
        externals: &'a [String],
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<Vec<Result<ImportChange, DomainError>>, StoreError>> {
        Box::pin(async move {
            self.health.check()?;
            let outcomes = externals
                .iter()
                .map(|external| {
                    self.apply_import_change(supplier, external, &mut *decide)
                        .map_err(|error| self.health.noted_domain(error))
                })
                .collect();
            Durability::flush(self).await?;
            Ok(outcomes)
        })
    }

    fn import_processes(&self, supplier: &str, after: Option<&str>) -> ImportStream {
        futures_util::stream::iter(Self::import_range(&self.imports, supplier, after, decode))
            .boxed()
    }

    fn import_listing<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportListing>> {
        Box::pin(std::future::ready(
            self.decoded_listings
                .get(&self.import_listings, &pair_key(supplier, external)),
        ))
    }

    fn import_listings(&self, supplier: &str, after: Option<&str>) -> ListingStream {
        futures_util::stream::iter(Self::import_range(
            &self.import_listings,
            supplier,
            after,
            listing::decode,
        ))
        .boxed()
    }
}

impl SledStore {
    /// One import change, committed (not yet durable).
    fn apply_import_change(
        &self,
        supplier: &str,
        external: &str,
        decide: &mut DecideImport<'_>,
    ) -> Result<ImportChange, DomainError> {
        let key = pair_key(supplier, external);
        self.journal.commit(|changes| {
            for _ in 0..NUMBER_ATTEMPTS {
                let current = self
                    .journal
                    .get(&self.imports, &key)?
                    .map(|bytes| self.decoded_imports.decoded(&key, bytes))
                    .transpose()?;
                let change = decide(current.as_ref())?;
                if let Some(account) = &change.account {
                    if self.exists(&self.accounts, account.number.as_bytes())? {
                        continue;
                    }
                    // The account's records before the account and its listing: sled makes a
                    // change's writes in order, so whoever finds the account finds them.
                    if let Some(opening) = &change.opening {
                        self.write_opening(changes, &account.number, opening);
                    }
                    changes.insert(&self.accounts, account.number.as_bytes(), encode(account));
                }
                changes.insert(
                    &self.import_listings,
                    key.as_slice(),
                    listing::encode(&ImportListing::of(&change.process)),
                );
                let record = IVec::from(encode(&change.process));
                changes.insert(&self.imports, key.as_slice(), record.clone());
                self.decoded_imports
                    .written(&key, record, change.process.clone());
                self.write_events(changes, LoggedEvents::new(&change.events));
                self.supplier_counts.moved(
                    changes,
                    supplier,
                    &change.counts_from(current.as_ref()),
                );
                return Ok(change);
            }
            Err(StoreError::NumbersExhausted.into())
        })
    }

    /// The records in `tree` of the supplier's import processes from after `after` on
    /// ([`Self::imports`] or [`Self::import_listings`]), each read by `read`.
    fn import_range<T: 'static>(
        tree: &sled::Tree,
        supplier: &str,
        after: Option<&str>,
        read: RecordReader<T>,
    ) -> Box<dyn Iterator<Item = Result<T, StoreError>> + Send> {
        let start = match after {
            // The first key greater than `supplier\0after` and every key beginning with it.
            Some(after) => {
                let mut key = pair_key(supplier, after);
                key.push(SEPARATOR);
                key
            }
            None => pair_key(supplier, ""),
        };
        let mut end = supplier.as_bytes().to_vec();
        end.push(SEPARATOR + 1);
        Box::new(tree.range(start..end).map(move |entry| {
            let (key, value) = entry?;
            read(&key, &value)
        }))
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
    async fn a_change_to_a_process_reads_the_change_before_it_even_before_sled_holds_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SledStore::open(dir.path()).expect("store");
        crate::store::contract::staged(&store, "OLD_CO", "ACC-1", None).await;
        // Read once more, so that the process is kept decoded and verified.
        let staged = store
            .import_process("OLD_CO", "ACC-1")
            .await
            .expect("read")
            .expect("staged");

        // A change journaled and not yet made in sled (the writer is held back)...
        let held = store.journal.hold_rounds();
        let changed_at = staged.updated_at + chrono::Duration::seconds(1);
        let mut change = |current: Option<&ImportProcess>| {
            let mut process = current.cloned().expect("the staged process");
            process.updated_at = changed_at;
            Ok(ImportChange::process(process))
        };
        let mut first = store.change_import("OLD_CO", "ACC-1", &mut change);
        assert!(
            futures_util::poll!(&mut first).is_pending(),
            "journaled, not yet durable"
        );
        // ...is what the next change to the process reads (not the copy kept decoded, not
        // sled's).
        let mut seen = None;
        let mut read_again = |current: Option<&ImportProcess>| {
            let process = current.cloned().expect("the process");
            seen = Some(process.updated_at);
            Ok(ImportChange::process(process))
        };
        let mut second = store.change_import("OLD_CO", "ACC-1", &mut read_again);
        assert!(futures_util::poll!(&mut second).is_pending());
        drop(held);
        first.await.expect("first change");
        second.await.expect("second change");
        assert_eq!(seen, Some(changed_at));
    }
}
