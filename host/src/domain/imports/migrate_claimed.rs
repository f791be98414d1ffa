//! Migrating an account a bulk or scheduled migration claimed: the platform account made, or
//! its failure recorded on the process, so that no account is left claimed with no
//! migration to go on with it.

use super::Imports;
use crate::domain::error::DomainError;
use crate::domain::import_process::ImportState;

/// What became of a claimed account's migration ([`Imports::migrate_claimed`]).
#[derive(Debug)]
pub enum ClaimedMigration {
    /// Its platform account is made.
    Made,
    /// Refused: the failure is recorded on the process (`ERRORED`).
    Failed(DomainError),
}

impl Imports {
    /// Migrates a process claimed by a bulk or scheduled migration: the platform account is
    /// made, or its failure recorded on the process (`ERRORED`). An error means neither: the
    /// process may still be claimed (the storage away, say), for the caller to try again or
    /// put back.
    pub async fn migrate_claimed(
        &self,
        supplier_code: &str,
        external: &str,
    ) -> Result<ClaimedMigration, DomainError> {
        let current = self
            .store
            .import_process(supplier_code, external)
            .await?
            .ok_or(DomainError::ImportProcessNotFound)?;
        // Made already: a try whose commit was answered by a lost connection (the storage
        // away) may have been made, and is tried again.
        if current.state == ImportState::Processed {
            return Ok(ClaimedMigration::Made);
        }
        let supplier = self
            .store
            .supplier(supplier_code)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        let made = match self.prepare(&current, &supplier).await {
            Ok(prepared) => {
                self.create_account(supplier_code, external, None, &prepared, |process| {
                    match process.state {
                        ImportState::InProgress => Ok(()),
                        _ => Err(DomainError::ImportProcessNotFound),
                    }
                })
                .await
            }
            Err(failure) => Err(failure),
        };
        match made {
            Ok(_) => Ok(ClaimedMigration::Made),
            // The storage away or refusing writes, or the process no longer claimed: nothing
            // to record.
            Err(failure)
                if failure.is_store_for_now()
                    || matches!(failure, DomainError::ImportProcessNotFound) =>
            {
                Err(failure)
            }
            // Refused by its rules, or by the storage: recorded, so that the account is not
            // left claimed with no migration to go on with it.
            Err(failure) => {
                self.record_failure(&current, &failure).await?;
                Ok(ClaimedMigration::Failed(failure))
            }
        }
    }
}
