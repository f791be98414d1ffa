//! A dry run of a migration: every check the migration makes and its opening made, nothing
//! kept but the outcome's event (and, on a process not yet migrated, its v2 status). Asked
//! for through `process/` with `dry_run`, or scheduled through v2 with `is_dry_run`.

use super::Imports;
use crate::domain::error::DomainError;
use crate::domain::events;
use crate::domain::import_process::{ImportProcess, new_platform_account_number};
use crate::domain::storage::ImportChange;
use chrono::Utc;

impl Imports {
    /// A dry run: everything a migration does but keeping it. Its event is kept, and on a
    /// process not migrated yet its outcome becomes the latest event (the v2 status);
    /// `scheduled` says it is the scheduled run, whose schedule it ends. The refusal it
    /// answers with.
    pub(super) async fn dry_run(
        &self,
        current: ImportProcess,
        scheduled: bool,
    ) -> Result<DomainError, DomainError> {
        let verdict = match current.ensure_processable() {
            Ok(()) => self.dry_run_verdict(&current).await,
            Err(refusal) => Err(refusal),
        };
        // The storage away: no verdict to record.
        if let Err(failure) = &verdict
            && failure.is_store_for_now()
        {
            return Err(verdict.err().unwrap_or(DomainError::DryRunWouldSucceed));
        }
        let now = Utc::now();
        let detail = verdict.as_ref().err().map(ToString::to_string);
        let outcome = verdict
            .as_ref()
            .err()
            .map(|failure| (failure.code(), detail.as_deref().unwrap_or_default()));
        // The outcome becomes the process's latest event (the v2 status), in the same write
        // as its event.
        self.store
            .change_import(
                &current.supplier_code,
                &current.external_account_number,
                &mut |stored| {
                    let stored = stored.ok_or(DomainError::ImportProcessNotFound)?;
                    let event = match outcome {
                        None => events::dry_run_complete(stored)?,
                        Some((code, detail)) => events::dry_run_error(stored, code, detail)?,
                    };
                    let process = if stored.awaits_migration() {
                        stored.dry_run(outcome, scheduled, now)
                    } else {
                        stored.clone()
                    };
                    Ok(ImportChange::with_events(process, vec![event]))
                },
            )
            .await?;
        Ok(verdict.err().unwrap_or(DomainError::DryRunWouldSucceed))
    }

    /// What a dry run of `process` would find: the migration's checks, and its opening made
    /// (under a number of no account), nothing kept.
    async fn dry_run_verdict(&self, process: &ImportProcess) -> Result<(), DomainError> {
        let supplier = self
            .store
            .supplier(&process.supplier_code)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        let prepared = self.prepare(process, &supplier).await?;
        let number = new_platform_account_number(&mut rand::thread_rng());
        prepared.open(&number, Utc::now()).map(drop)
    }
}
