//! The import processes: each staged account of a supplier, its state and its document, changed
//! atomically with the account its migration creates and the events that describe it; the
//! slim listings the lists read; and the counts of a supplier's processes by state.

use super::StoreFuture;
use super::accounts::AccountOpening;
use super::error::StoreError;
use super::suppliers::SupplierStore;
use crate::domain::campaign::{Counts, counter};
use crate::domain::error::DomainError;
use crate::domain::events::Event;
use crate::domain::import_process::{ImportListing, ImportProcess, ImportState, PlatformAccount};
use crate::domain::schedules::Due;
use crate::domain::supplier::Supplier;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde::Serialize;
use std::collections::BTreeMap;

/// The suppliers' import processes. Reads of a supplier go with them (a request adding data to
/// an account reads both, [`Self::supplier_and_listing`]).
pub trait ImportStore: SupplierStore {
    /// How many of the supplier's processes are in each state: their counters
    /// ([`Self::supplier_counts`]), which every change moves in its own commit.
    fn import_counts<'a>(&'a self, code: &'a str) -> StoreFuture<'a, ImportCounts> {
        Box::pin(async move { Ok(ImportCounts::of(&self.supplier_counts(code).await?)) })
    }
    /// The supplier's counters ([`Counts`]), as every change committed so far moved them.
    fn supplier_counts<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Counts>;
    fn import_process<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportProcess>>;
    /// Reads the process, lets `decide` make the change and keeps it, with any new account,
    /// the state counts and its events, in one atomic change; resolves once it is durable.
    /// `decide` may run more than once.
    fn change_import<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<ImportChange, DomainError>>;
    /// [`Self::change_import`] for several processes of one supplier (a bulk migration's
    /// claims): each its own atomic change, all durable when it resolves; each one's outcome,
    /// in order.
    fn change_imports<'a>(
        &'a self,
        supplier: &'a str,
        externals: &'a [String],
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<Vec<Result<ImportChange, DomainError>>, StoreError>>;
    /// The supplier's processes in external-account-number order, starting after `after`.
    fn import_processes(&self, supplier: &str, after: Option<&str>) -> ImportStream;
    /// What the lists show of the supplier's processes, in external-account-number order,
    /// starting after `after`.
    fn import_listings(&self, supplier: &str, after: Option<&str>) -> ListingStream;
    /// What the lists show of one process (its state and account), without reading its
    /// account document: what a request adding data to the account needs of it.
    fn import_listing<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportListing>>;
    /// The supplier `code` and, when it exists, [`Self::import_listing`] of its process
    /// `external`: what a request adding data to an account reads before its unit of work. A
    /// backend whose reads are round trips answers both in one.
    fn supplier_and_listing<'a>(
        &'a self,
        code: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<(Supplier, Option<ImportListing>)>> {
        Box::pin(async move {
            let Some(supplier) = self.supplier(code).await? else {
                return Ok(None);
            };
            let listing = self.import_listing(code, external).await?;
            Ok(Some((supplier, listing)))
        })
    }
    /// Every process whose scheduled migration has not run yet, with when it is due. This
    /// reads every process of every supplier; a backend with an index of schedules answers
    /// from it instead.
    fn scheduled_migrations(&self) -> StoreFuture<'_, Vec<Due>> {
        Box::pin(async move {
            let mut due = Vec::new();
            for supplier in self.suppliers().await? {
                let mut processes = self.import_processes(&supplier.code, None);
                while let Some(process) = processes.next().await {
                    let process = process?;
                    if let Some(schedule) = &process.schedule
                        && process.awaits_migration()
                    {
                        due.push(Due {
                            at: schedule.window_start,
                            supplier: process.supplier_code,
                            external: process.external_account_number,
                        });
                    }
                }
            }
            Ok(due)
        })
    }
}

/// The result of an atomic change to one import process.
#[derive(Debug, Clone)]
pub struct ImportChange {
    pub process: ImportProcess,
    /// A platform account created by this change.
    pub account: Option<PlatformAccount>,
    /// The records the new account opens with, kept in the same transaction as the account.
    pub opening: Option<Box<AccountOpening>>,
    /// How the change moves the supplier's counters beyond the process's own move
    /// ([`Self::counts_from`]): what the opening adds.
    pub counts: Counts,
    /// Events describing the change, written to the outbox in the same transaction.
    pub events: Vec<Event>,
}

impl ImportChange {
    /// A change of the process alone.
    pub fn process(process: ImportProcess) -> Self {
        Self::with_events(process, Vec::new())
    }

    /// A change of the process alone, described by `events`.
    pub fn with_events(process: ImportProcess, events: Vec<Event>) -> Self {
        Self {
            process,
            account: None,
            opening: None,
            counts: Counts::default(),
            events,
        }
    }

    /// How the change moves the supplier's counters, from the process as it was (`before`;
    /// none: new): kept by the store in the change's own commit.
    pub fn counts_from(&self, before: Option<&ImportProcess>) -> Counts {
        let mut counts = Counts::of_process_change(before, &self.process);
        counts.add_all(&self.counts);
        counts
    }
}

/// How many import processes of a supplier are in each state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ImportCounts(pub BTreeMap<ImportState, u64>);

impl ImportCounts {
    /// The counts by state among a supplier's `counters`, every state named (0 where it has
    /// none).
    pub fn of(counters: &Counts) -> Self {
        Self(
            ImportState::ALL
                .into_iter()
                .map(|state| {
                    let name = format!("{}{}", counter::STATE, state.as_str());
                    (
                        state,
                        u64::try_from(counters.get(&name)).unwrap_or_default(),
                    )
                })
                .collect(),
        )
    }

    pub fn get(&self, state: ImportState) -> u64 {
        self.0.get(&state).copied().unwrap_or(0)
    }
}

/// Streams of import processes own what they read from (a response streams them out).
pub type ImportStream = BoxStream<'static, Result<ImportProcess, StoreError>>;
pub type ListingStream = BoxStream<'static, Result<ImportListing, StoreError>>;

/// Decides a change to an import process from its current version (`None`: not staged yet).
pub type DecideImport<'a> =
    dyn FnMut(Option<&ImportProcess>) -> Result<ImportChange, DomainError> + Send + 'a;
