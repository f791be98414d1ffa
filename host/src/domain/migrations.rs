//! Bulk migrations: an operator starts the migration of every pending account of a supplier
//! as a background job, or of a part of them ([`Selection`]): its error tail (the accounts
//! whose last attempt failed, re-staged since or not, of one error code or all) or the
//! accounts the operator names. The job first claims the accounts (they show `IN_PROGRESS`),
//! then migrates them one by one; pausing the supplier stops it and puts the unmigrated
//! accounts back to `PENDING`. Its record says what it was started over.
//!
//! A job is a row in the store
//! ([`LeaseStore::put_migration`](crate::domain::storage::LeaseStore::put_migration)), its
//! progress written after every account, so every instance over a shared database lists it.
//! While it runs it holds its supplier's bulk-migration lease ([`bulk_lease`]): one job runs per supplier across the instances, and
//! when its instance dies (or the server restarts) the lease expires and the first instance
//! to notice ([`Migrations::resume_orphans`]) takes the job over, with the accounts it had
//! claimed and its counts so far.
//!
//! Jobs run as the server's background tasks ([`Background`]). At shutdown a job is handed
//! over: it finishes the account it is on, records its progress and gives its lease up, its
//! record still `RUNNING` and the accounts it did not reach still claimed, so that another
//! instance over the same database takes it over within [`ORPHANS_EVERY`]'s look-out, or the
//! next start does at once. (One that cannot write for the storage away leaves its lease to
//! expire.)

use super::background::Background;
use super::error::DomainError;
use super::import_process::ImportState;
use super::imports::{ClaimedMigration, Imports};
use super::supplier::SupplierStatus;
use crate::domain::storage::{Store, StoreError, WHILE_AWAY};
use chrono::{DateTime, Utc};
use ferry_admin_api::migrations::MigrationSelection;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

mod selection;

pub use ferry_admin_api::MigrationState;
pub use selection::{MAX_NAMED_ACCOUNTS, Selection};

/// A snapshot of a job, as answered and as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationView {
    pub id: String,
    pub supplier: String,
    pub state: MigrationState,
    /// Accounts claimed by the job.
    pub total: u64,
    /// Accounts migrated.
    pub processed: u64,
    /// Accounts whose migration failed: now `ERRORED`, or `PENDING` again where the failure
    /// could not be recorded.
    pub failed: u64,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The account the job goes on with, as recorded with the counts of those before it (none
    /// once it has ended; stored, not answered): an instance that takes the job over counts
    /// it if it finds it migrated, its outcome made but not counted when the job's instance
    /// went away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The accounts the job was started over (recorded before it was kept: every account
    /// awaiting migration).
    #[serde(default, skip_serializing_if = "MigrationSelection::is_everything")]
    pub selection: MigrationSelection,
}

#[derive(Debug)]
struct Job {
    id: String,
    supplier: String,
    selection: MigrationSelection,
    total: u64,
    processed: AtomicU64,
    failed: AtomicU64,
    started_at: DateTime<Utc>,
    at: Mutex<Option<String>>,
    end: Mutex<Option<(MigrationState, DateTime<Utc>)>>,
}

impl Job {
    /// A job over `selection` starting now, with nothing done.
    fn starting(id: &str, supplier: &str, selection: MigrationSelection, total: u64) -> Self {
        Self::from_view(&MigrationView {
            id: id.to_owned(),
            supplier: supplier.to_owned(),
            state: MigrationState::Running,
            total,
            processed: 0,
            failed: 0,
            started_at: Utc::now(),
            finished_at: None,
            at: None,
            selection,
        })
    }

    /// A job going on from where `view` recorded it (taken over from another instance).
    fn from_view(view: &MigrationView) -> Self {
        Self {
            id: view.id.clone(),
            supplier: view.supplier.clone(),
            selection: view.selection.clone(),
            total: view.total,
            processed: AtomicU64::new(view.processed),
            failed: AtomicU64::new(view.failed),
            started_at: view.started_at,
            at: Mutex::new(view.at.clone()),
            end: Mutex::new(None),
        }
    }

    /// Records that the job goes on with `external` (none: it has no account left).
    fn go_on_with(&self, external: Option<&String>) {
        *self.at.lock().unwrap_or_else(PoisonError::into_inner) = external.cloned();
    }

    fn view(&self) -> MigrationView {
        let end = *self.end.lock().unwrap_or_else(PoisonError::into_inner);
        MigrationView {
            id: self.id.clone(),
            supplier: self.supplier.clone(),
            state: end.map_or(MigrationState::Running, |(state, _)| state),
            total: self.total,
            processed: self.processed.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            started_at: self.started_at,
            finished_at: end.map(|(_, at)| at),
            at: match end {
                Some(_) => None,
                None => self
                    .at
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
            },
            selection: self.selection.clone(),
        }
    }

    fn finish(&self, state: MigrationState) {
        *self.end.lock().unwrap_or_else(PoisonError::into_inner) = Some((state, Utc::now()));
    }

    fn is_running(&self) -> bool {
        self.end
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }
}

/// Accounts migrated between two yields to the runtime.
const YIELD_EVERY: u64 = 64;

/// How often a server looks for jobs to take over: those recorded as running whose lease is
/// free (their instance gone, or stopped and handing them over).
pub const ORPHANS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// How long a job's lease lasts unless renewed, and how often the job renews it.
pub const BULK_LEASE_TTL: std::time::Duration = std::time::Duration::from_secs(10);
const BULK_LEASE_RENEW: std::time::Duration = std::time::Duration::from_secs(2);

/// Waits before a bulk migration tries again while the storage is away or refuses writes:
/// whether to try again (not once the server is shutting down).
async fn wait_while_away(supplier: &str, error: &StoreError, background: &Background) -> bool {
    tracing::warn!(supplier, %error, "bulk migration waits for the storage");
    let shutdown = background.shutdown();
    tokio::select! {
        () = tokio::time::sleep(WHILE_AWAY) => !shutdown.is_cancelled(),
        () = shutdown.cancelled() => false,
    }
}

/// The supplier's bulk migration recorded as running (here, on another instance, or on one
/// that is gone), if any.
pub async fn running_job(
    store: &dyn Store,
    supplier: &str,
) -> Result<Option<MigrationView>, DomainError> {
    Ok(store
        .migrations(supplier)
        .await?
        .into_iter()
        .find(|view| view.state == MigrationState::Running))
}

/// The lease a supplier's running bulk migration holds.
pub fn bulk_lease(supplier: &str) -> String {
    format!("bulk-migration:{supplier}")
}

#[derive(Clone)]
pub struct Migrations {
    store: Arc<dyn Store>,
    imports: Imports,
    jobs: Arc<Mutex<HashMap<String, Vec<Arc<Job>>>>>,
    /// This process, as the holder of its jobs' leases.
    holder: String,
    /// Where the jobs run, and what tells them the server is stopping.
    background: Background,
}

impl std::fmt::Debug for Migrations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Migrations").finish_non_exhaustive()
    }
}

impl Migrations {
    pub fn new(store: Arc<dyn Store>, imports: Imports) -> Self {
        Self {
            store,
            imports,
            jobs: Arc::default(),
            holder: format!("bulk-{}", uuid::Uuid::new_v4().simple()),
            background: Background::new(),
        }
    }

    /// The same, its jobs run among `background`'s tasks (and stopped with them).
    pub fn with_background(mut self, background: Background) -> Self {
        self.background = background;
        self
    }

    /// Runs `job` over its `claimed` accounts as a background task.
    fn spawn(&self, job: Arc<Job>, claimed: Vec<String>) {
        let name = format!("bulk migration {} of {}", job.id, job.supplier);
        self.background.spawn(name, self.clone().run(job, claimed));
    }

    fn jobs_of(&self, supplier: &str) -> Vec<Arc<Job>> {
        let jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        jobs.get(supplier).cloned().unwrap_or_default()
    }

    /// Claims the supplier's accounts that `selection` names and that await migration, and
    /// starts migrating them in the background.
    pub async fn start(
        &self,
        supplier_code: &str,
        selection: &Selection,
    ) -> Result<MigrationView, DomainError> {
        let supplier = self
            .store
            .supplier(supplier_code)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        supplier.ensure_ongoing()?;
        let lease = bulk_lease(&supplier.code);
        // Another instance's job for this supplier holds it.
        if !self
            .store
            .hold_lease(&lease, &self.holder, BULK_LEASE_TTL)
            .await?
        {
            return Err(DomainError::MigrationAlreadyRunning);
        }
        let job_id = uuid::Uuid::now_v7().to_string();
        {
            let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
            let list = jobs.entry(supplier.code.clone()).or_default();
            if list.iter().any(|job| job.is_running()) {
                // This process's own job holds the lease: it stays held.
                return Err(DomainError::MigrationAlreadyRunning);
            }
            // A placeholder keeps a second start out while this one claims accounts.
            let placeholder = Job::starting(&job_id, &supplier.code, selection.record(), 0);
            list.push(Arc::new(placeholder));
        }
        let claimed = self.claim(&supplier.code, selection).await;
        let claimed = match claimed {
            Ok(claimed) => claimed,
            Err(error) => {
                self.replace(&supplier.code, &job_id, None);
                let _ = self.store.release_lease(&lease, &self.holder).await;
                return Err(error);
            }
        };
        let job = Arc::new(Job::starting(
            &job_id,
            &supplier.code,
            selection.record(),
            claimed.len() as u64,
        ));
        job.go_on_with(claimed.first());
        if let Err(error) = self.store.put_migration(&job.view()).await {
            self.replace(&supplier.code, &job_id, None);
            let _ = self.imports.release(&supplier.code, &claimed).await;
            let _ = self.store.release_lease(&lease, &self.holder).await;
            return Err(error.into());
        }
        self.replace(&supplier.code, &job_id, Some(job.clone()));
        tracing::info!(supplier = %supplier.code, job = %job_id, ?selection, accounts = claimed.len(), "bulk migration started");
        self.spawn(job.clone(), claimed);
        Ok(job.view())
    }

    /// Swaps the placeholder of `id` for `job` (or drops it).
    fn replace(&self, supplier: &str, id: &str, job: Option<Arc<Job>>) {
        let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        let list = jobs.entry(supplier.to_owned()).or_default();
        list.retain(|existing| existing.id != id);
        if let Some(job) = job {
            list.push(job);
        }
    }

    /// Claims the supplier's accounts `selection` names that await migration.
    async fn claim(
        &self,
        supplier: &str,
        selection: &Selection,
    ) -> Result<Vec<String>, DomainError> {
        let selected = selection::candidates(&self.store, supplier, selection).await?;
        self.imports.claim(supplier, &selected).await
    }

    async fn run(self, job: Arc<Job>, claimed: Vec<String>) {
        // An account is taken off once its migration has an outcome: while the storage is
        // away the job waits and tries the same account again, so an outage neither stops it
        // nor leaves an account claimed (IN_PROGRESS) with no job to go on with it.
        let mut remaining = claimed.into_iter().peekable();
        let mut since_yield = 0u64;
        let lease = bulk_lease(&job.supplier);
        let mut renewed = std::time::Instant::now();
        // The lease may have passed while it was not renewed (the storage away, the process
        // paused): another instance may have taken the job over, and ended it since.
        let mut lapsed = false;
        // The job and its claimed accounts are left as they are, for the instance that takes
        // it over (or took it over already).
        let mut left_to_another = false;
        // The server is stopping: the job is left to the instance that takes it over, its
        // lease given up.
        let mut handing_over = false;
        let mut unrecorded = Vec::new();
        let state = loop {
            if renewed.elapsed() >= BULK_LEASE_RENEW {
                lapsed |= renewed.elapsed() >= BULK_LEASE_TTL;
                // Held from before it is asked for (not from the answer): never later than
                // the store's own reckoning.
                let asking = std::time::Instant::now();
                match self
                    .store
                    .hold_lease(&lease, &self.holder, BULK_LEASE_TTL)
                    .await
                {
                    Ok(true) => renewed = asking,
                    Ok(false) => {
                        tracing::error!(supplier = %job.supplier, "the bulk migration's lease passed to another instance: stopping");
                        left_to_another = true;
                        break MigrationState::Stopped;
                    }
                    // Once it may have lapsed, nothing is done until it is held again: the
                    // instance that took the job over could end it meanwhile, and a progress
                    // written after that would open its record again.
                    Err(error) if lapsed => {
                        if !wait_while_away(&job.supplier, &error, &self.background).await {
                            left_to_another = true;
                            break MigrationState::Stopped;
                        }
                        continue;
                    }
                    Err(error) => tracing::warn!(%error, "cannot renew the bulk migration's lease"),
                }
            }
            if lapsed {
                match self.recorded(&job).await {
                    Ok(Some(recorded)) if recorded.state != MigrationState::Running => {
                        tracing::warn!(supplier = %job.supplier, job = %job.id, state = ?recorded.state, "the bulk migration was ended by the instance that took it over: stopping");
                        left_to_another = true;
                        break recorded.state;
                    }
                    Ok(_) => lapsed = false,
                    Err(error) if error.is_for_now() => {
                        if !wait_while_away(&job.supplier, &error, &self.background).await {
                            left_to_another = true;
                            break MigrationState::Stopped;
                        }
                        continue;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "cannot read the bulk migration's record");
                        lapsed = false;
                    }
                }
            }
            let ongoing = match self.store.supplier(&job.supplier).await {
                Ok(supplier) => {
                    matches!(supplier, Some(supplier) if supplier.status == SupplierStatus::Ongoing)
                }
                Err(error) if error.is_for_now() => {
                    if !wait_while_away(&job.supplier, &error, &self.background).await {
                        left_to_another = true;
                        break MigrationState::Stopped;
                    }
                    continue;
                }
                Err(error) => {
                    tracing::error!(supplier = %job.supplier, %error, "cannot read the supplier of a bulk migration: stopping");
                    false
                }
            };
            if !ongoing {
                break MigrationState::Stopped;
            }
            let Some(external) = remaining.peek().cloned() else {
                break MigrationState::Completed;
            };
            // The lease is held and no account is half done: the job is handed over from here.
            if self.background.is_shutting_down() {
                handing_over = true;
                break MigrationState::Running;
            }
            match self.imports.migrate_claimed(&job.supplier, &external).await {
                Ok(ClaimedMigration::Made) => job.processed.fetch_add(1, Ordering::Relaxed),
                Ok(ClaimedMigration::Failed(error)) => {
                    tracing::warn!(supplier = %job.supplier, %external, %error, "bulk migration of an account failed");
                    job.failed.fetch_add(1, Ordering::Relaxed)
                }
                Err(DomainError::Store(error)) if error.is_for_now() => {
                    if !wait_while_away(&job.supplier, &error, &self.background).await {
                        left_to_another = true;
                        break MigrationState::Stopped;
                    }
                    continue;
                }
                Err(error) => {
                    // Neither made nor its failure recorded: put back with those left at the end.
                    tracing::error!(supplier = %job.supplier, %external, %error, "bulk migration of an account failed unrecorded");
                    unrecorded.push(external.clone());
                    job.failed.fetch_add(1, Ordering::Relaxed)
                }
            };
            remaining.next();
            job.go_on_with(remaining.peek());
            // Progress after every account, for every instance to see and one to go on from.
            if let Err(error) = self.store.put_migration(&job.view()).await {
                tracing::warn!(%error, "cannot record the bulk migration's progress");
            }
            since_yield += 1;
            if since_yield >= YIELD_EVERY {
                since_yield = 0;
                tokio::task::yield_now().await;
            }
        };
        if left_to_another {
            // The instance that took the lease took the job over with its claimed accounts
            // (after a database away longer than the lease, say), or will once this one is
            // gone (it stopped while the storage was away): they and the job's record are its
            // own, and this instance shows the job as recorded.
            job.finish(state);
            self.replace(&job.supplier, &job.id, None);
            return;
        }
        if handing_over {
            // Counted as failed already: put back now, as the job's end would, rather than
            // tried again by the instance that takes the job over.
            if !unrecorded.is_empty()
                && let Err(error) = self.imports.release(&job.supplier, &unrecorded).await
            {
                tracing::error!(accounts = unrecorded.len(), %error, "cannot release the accounts whose failure was not recorded");
            }
            if let Err(error) = self.store.put_migration(&job.view()).await {
                tracing::warn!(%error, "cannot record the bulk migration's progress");
            }
            let _ = self.store.release_lease(&lease, &self.holder).await;
            self.replace(&job.supplier, &job.id, None);
            tracing::info!(supplier = %job.supplier, job = %job.id, processed = job.processed.load(Ordering::Relaxed), "the server is stopping: the bulk migration is left to the instance that takes it over");
            return;
        }
        let remaining: Vec<String> = unrecorded.into_iter().chain(remaining).collect();
        if !remaining.is_empty()
            && let Err(error) = self.imports.release(&job.supplier, &remaining).await
        {
            tracing::error!(accounts = remaining.len(), %error, "cannot release the claimed accounts");
        }
        job.finish(state);
        if let Err(error) = self.store.put_migration(&job.view()).await {
            tracing::error!(%error, job = %job.id, "cannot record the end of the bulk migration");
        }
        let _ = self.store.release_lease(&lease, &self.holder).await;
        tracing::info!(supplier = %job.supplier, job = %job.id, ?state, "bulk migration ended");
    }

    /// `job` as recorded in the store (by this instance, or one that took it over).
    async fn recorded(&self, job: &Job) -> Result<Option<MigrationView>, StoreError> {
        Ok(self
            .store
            .migrations(&job.supplier)
            .await?
            .into_iter()
            .find(|view| view.id == job.id))
    }

    /// Counts the account a job taken over was at when its instance went away, if that
    /// account's migration was made (it is no longer claimed) but the job's instance went away
    /// before it recorded the count: a job records its counts after each account's change,
    /// not with it.
    async fn count_what_was_made_uncounted(
        &self,
        job: &Job,
        orphan: &MigrationView,
        claimed: &[String],
    ) -> Result<(), DomainError> {
        let Some(at) = &orphan.at else {
            return Ok(());
        };
        if claimed.contains(at) {
            return Ok(()); // still to be made
        }
        let made = self.store.import_process(&job.supplier, at).await?;
        match made.map(|process| process.state) {
            Some(ImportState::Processed) => job.processed.fetch_add(1, Ordering::Relaxed),
            Some(ImportState::Errored) => job.failed.fetch_add(1, Ordering::Relaxed),
            _ => return Ok(()),
        };
        tracing::info!(supplier = %job.supplier, job = %job.id, account = %at, "a bulk migration taken over counts the account its instance made last");
        Ok(())
    }

    /// The supplier's jobs, newest first: as stored, those running here as they are now.
    pub async fn list(&self, supplier: &str) -> Result<Vec<MigrationView>, DomainError> {
        self.store
            .supplier(supplier)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        let mut views: HashMap<String, MigrationView> = self
            .store
            .migrations(supplier)
            .await?
            .into_iter()
            .map(|view| (view.id.clone(), view))
            .collect();
        for job in self.jobs_of(supplier) {
            views.insert(job.id.clone(), job.view());
        }
        let mut views: Vec<MigrationView> = views.into_values().collect();
        views.sort_by(|a, b| {
            b.started_at
                .cmp(&a.started_at)
                .then_with(|| b.id.cmp(&a.id))
        });
        Ok(views)
    }

    pub async fn get(&self, supplier: &str, id: &str) -> Result<MigrationView, DomainError> {
        if let Some(job) = self.jobs_of(supplier).iter().find(|job| job.id == id) {
            return Ok(job.view());
        }
        self.store
            .migrations(supplier)
            .await?
            .into_iter()
            .find(|view| view.id == id)
            .ok_or(DomainError::MigrationNotFound)
    }

    /// Takes over the jobs recorded as running whose instance is gone (their lease is free):
    /// each goes on with the accounts it had claimed (those still `IN_PROGRESS`) and its
    /// counts so far. Returns how many were taken over.
    pub async fn resume_orphans(&self) -> Result<usize, DomainError> {
        let mut resumed = 0;
        for supplier in self.store.suppliers().await? {
            // A job taken over now would be handed over again at once: left to the next.
            if self.background.is_shutting_down() {
                break;
            }
            let running_here = self
                .jobs_of(&supplier.code)
                .iter()
                .any(|job| job.is_running());
            if running_here {
                continue;
            }
            let Some(orphan) = running_job(self.store.as_ref(), &supplier.code).await? else {
                continue;
            };
            let lease = bulk_lease(&supplier.code);
            if !self
                .store
                .hold_lease(&lease, &self.holder, BULK_LEASE_TTL)
                .await?
            {
                continue; // its instance is alive
            }
            let claimed = self.imports.in_progress(&supplier.code).await?;
            let job = Arc::new(Job::from_view(&orphan));
            self.count_what_was_made_uncounted(&job, &orphan, &claimed)
                .await?;
            self.replace(&supplier.code, &job.id, Some(job.clone()));
            tracing::warn!(supplier = %supplier.code, job = %job.id, accounts = claimed.len(), "bulk migration taken over from an instance that is gone");
            self.spawn(job, claimed);
            resumed += 1;
        }
        Ok(resumed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::imports::tests::{account, fixture};

    #[tokio::test]
    async fn a_job_taken_over_counts_the_account_its_instance_made_but_did_not_count() {
        let (_dir, store, key, imports) = fixture().await;
        let externals: Vec<String> = ["A-1", "A-2", "A-3"].map(str::to_owned).into();
        for external in &externals {
            imports
                .stage(&key, account(external))
                .await
                .expect("staged");
        }
        let claimed = imports.claim("OLD_CO", &externals).await.expect("claimed");
        assert_eq!(claimed, externals);
        // The job's instance made A-1's migration and went away before it recorded the
        // count: its record still has nothing done and says it was at A-1.
        imports
            .migrate_claimed("OLD_CO", "A-1")
            .await
            .expect("migrated");
        let recorded = MigrationView {
            id: "job-1".into(),
            supplier: "OLD_CO".into(),
            state: MigrationState::Running,
            total: 3,
            processed: 0,
            failed: 0,
            started_at: Utc::now(),
            finished_at: None,
            at: Some("A-1".into()),
            selection: MigrationSelection::default(),
        };
        store.put_migration(&recorded).await.expect("recorded");

        let migrations = Migrations::new(store.clone(), imports);
        assert_eq!(migrations.resume_orphans().await.expect("taken over"), 1);
        let ended = loop {
            let view = migrations.get("OLD_CO", "job-1").await.expect("the job");
            if view.state != MigrationState::Running {
                break view;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        };
        assert_eq!(ended.state, MigrationState::Completed, "{ended:?}");
        assert_eq!((ended.processed, ended.failed), (3, 0), "{ended:?}");
        assert_eq!(ended.at, None, "{ended:?}");
        let stored = store.migrations("OLD_CO").await.expect("stored");
        assert_eq!(stored, [ended]);
    }
}
