//! Running a scheduled migration once its window opens: the schedule loop
//! ([`crate::domain::schedules::run`]) calls [`Imports::run_scheduled`] for each, on every
//! instance; the one that takes the schedule's lease runs it.

use super::Imports;
use crate::domain::error::DomainError;
use crate::domain::import_process::ImportState;
use crate::domain::schedules::Due;
use crate::domain::storage::retrying_while_away;
use chrono::{DateTime, Utc};

/// How long one instance may hold a scheduled migration before another may run it (a run
/// takes well under a second; the lease outlives an instance that died running it).
const SCHEDULED_RUN_LEASE: std::time::Duration = std::time::Duration::from_secs(60);

impl Imports {
    /// Runs the scheduled migration of a process, if it is still scheduled and pending: past
    /// its window it errors (`schedule_window_passed`), a supplier no longer ongoing errors
    /// it too, a dry run records its outcome. `Ok(Some(at))` asks to be run again at `at`:
    /// the process was busy (a bulk migration holds it), the window moved later (it was
    /// scheduled again), another instance runs it now, or something passing went wrong (a
    /// busy plugin, the store).
    ///
    /// Every instance over one database knows every schedule; the one that takes the
    /// schedule's lease (`holder` names it) runs it, so a dry run or a passed window is
    /// recorded once.
    pub async fn run_scheduled(
        &self,
        supplier: &str,
        external: &str,
        holder: &str,
    ) -> Result<Option<DateTime<Utc>>, DomainError> {
        let lease = format!("scheduled-migration:{supplier}:{external}");
        if !self
            .store
            .hold_lease(&lease, holder, SCHEDULED_RUN_LEASE)
            .await?
        {
            return Ok(Some(Utc::now() + chrono::Duration::seconds(5)));
        }
        let outcome = self.run_scheduled_holding(supplier, external).await;
        if let Err(error) = self.store.release_lease(&lease, holder).await {
            tracing::warn!(%error, lease, "cannot give the lease of a scheduled migration up");
        }
        outcome
    }

    /// [`Imports::run_scheduled`] once its lease is held.
    async fn run_scheduled_holding(
        &self,
        supplier: &str,
        external: &str,
    ) -> Result<Option<DateTime<Utc>>, DomainError> {
        let Some(current) = self.store.import_process(supplier, external).await? else {
            return Ok(None);
        };
        let Some(schedule) = current.schedule.clone() else {
            return Ok(None);
        };
        let now = Utc::now();
        let retry = (now + chrono::Duration::seconds(5) < schedule.window_end)
            .then(|| now + chrono::Duration::seconds(5));
        match current.state {
            ImportState::Pending | ImportState::Errored => {}
            ImportState::InProgress => return Ok(retry),
            ImportState::Processed | ImportState::Cancelled => return Ok(None),
        }
        if now < schedule.window_start {
            return Ok(Some(schedule.window_start));
        }
        if now > schedule.window_end {
            let failure = DomainError::ScheduleWindowPassed;
            self.record_failure(&current, &failure).await?;
            return Ok(None);
        }
        let ongoing = self
            .store
            .supplier(supplier)
            .await?
            .ok_or(DomainError::SupplierNotFound)
            .and_then(|supplier| supplier.ensure_ongoing());
        if let Err(failure) = ongoing {
            self.record_failure(&current, &failure).await?;
            return Ok(None);
        }
        if schedule.dry_run {
            let _ = self.dry_run(current, true).await?;
            return Ok(None);
        }
        let external = external.to_owned();
        if self
            .claim(supplier, std::slice::from_ref(&external))
            .await?
            .is_empty()
        {
            return Ok(retry);
        }
        match self.migrate_claimed(supplier, &external).await {
            Ok(_) => Ok(None),
            Err(other) => {
                // Put back for the retry even if the storage is away now: a claim left behind
                // would keep the account IN_PROGRESS, and every retry would find it claimed.
                retrying_while_away(|| self.release(supplier, std::slice::from_ref(&external)))
                    .await?;
                tracing::warn!(error = %other, supplier, external, "scheduled migration to be retried");
                Ok(retry)
            }
        }
    }

    /// Every process whose scheduled migration has not run yet.
    pub async fn scheduled(&self) -> Result<Vec<Due>, DomainError> {
        Ok(self.store.scheduled_migrations().await?)
    }
}
