//! Claiming pending accounts for a bulk or scheduled migration (`IN_PROGRESS`), and putting
//! them back (`PENDING`) when the migration stops or was interrupted by a restart.

use super::Imports;
use super::status::{ListFilter, filtered};
use crate::domain::error::DomainError;
use crate::domain::import_process::{ImportState, ProcessEvent, ProcessEventKind};
use crate::domain::migrations::{BULK_LEASE_TTL, bulk_lease, running_job};
use crate::domain::storage::ImportChange;
use chrono::Utc;
use futures_util::TryStreamExt;

impl Imports {
    /// Marks pending processes `IN_PROGRESS` for a bulk migration, in one durable write: the
    /// ones claimed (those no longer pending are left out).
    pub async fn claim(
        &self,
        supplier_code: &str,
        externals: &[String],
    ) -> Result<Vec<String>, DomainError> {
        let now = Utc::now();
        let outcomes = self
            .store
            .change_imports(supplier_code, externals, &mut |current| match current {
                Some(process) if process.awaits_migration() => {
                    let mut process = process.clone();
                    process.state = ImportState::InProgress;
                    process.updated_at = now;
                    process.latest_event =
                        Some(ProcessEvent::new(ProcessEventKind::InProgress, now));
                    Ok(ImportChange::process(process))
                }
                _ => Err(DomainError::ImportInProgress),
            })
            .await?;
        let mut claimed = Vec::with_capacity(externals.len());
        for (external, outcome) in externals.iter().zip(outcomes) {
            match outcome {
                Ok(_) => claimed.push(external.clone()),
                Err(DomainError::ImportInProgress) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(claimed)
    }

    /// Puts claimed processes back to `PENDING` (a stopped or interrupted bulk migration), in
    /// one durable write; those no longer claimed are left as they are.
    pub async fn release(
        &self,
        supplier_code: &str,
        externals: &[String],
    ) -> Result<(), DomainError> {
        let now = Utc::now();
        let outcomes = self
            .store
            .change_imports(supplier_code, externals, &mut |current| match current {
                Some(process) if process.state == ImportState::InProgress => {
                    let mut process = process.clone();
                    process.state = ImportState::Pending;
                    process.updated_at = now;
                    process.latest_event = Some(ProcessEvent::new(ProcessEventKind::Updated, now));
                    Ok(ImportChange::process(process))
                }
                _ => Err(DomainError::ImportProcessNotFound),
            })
            .await?;
        for outcome in outcomes {
            match outcome {
                Ok(_) | Err(DomainError::ImportProcessNotFound) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// Puts back to `PENDING` the `IN_PROGRESS` processes no bulk migration will go on with
    /// (claimed by a migration that a restart interrupted). A supplier with a bulk migration
    /// recorded as running (here, on another instance, or to be taken over) or whose lease is
    /// held is left alone; while this runs, none can start.
    pub async fn release_interrupted(&self) -> Result<usize, DomainError> {
        let mut released = 0;
        let holder = format!("release-{}", uuid::Uuid::new_v4().simple());
        for supplier in self.store.suppliers().await? {
            let recorded = running_job(self.store.as_ref(), &supplier.code);
            if recorded.await?.is_some() {
                continue;
            }
            let lease = bulk_lease(&supplier.code);
            if !self
                .store
                .hold_lease(&lease, &holder, BULK_LEASE_TTL)
                .await?
            {
                continue;
            }
            let outcome = match self.in_progress(&supplier.code).await {
                Ok(stuck) if !stuck.is_empty() => self
                    .release(&supplier.code, &stuck)
                    .await
                    .map(|_| stuck.len()),
                Ok(_) => Ok(0),
                Err(error) => Err(error),
            };
            let _ = self.store.release_lease(&lease, &holder).await;
            released += outcome?;
        }
        Ok(released)
    }

    /// The external numbers of the supplier's `IN_PROGRESS` processes (claimed by a migration).
    pub async fn in_progress(&self, supplier: &str) -> Result<Vec<String>, DomainError> {
        Ok(filtered(
            self.store.import_listings(supplier, None),
            ListFilter::State(ImportState::InProgress),
        )
        .map_ok(|process| process.external_account_number)
        .try_collect()
        .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn claimed_accounts_are_released_after_a_restart() {
        let (_dir, store, key, imports) = super::super::tests::fixture().await;
        let account = json!({
            "import_supplier": "OLD_CO", "external_account_number": "A", "billing_name": "Ada",
            "billing_address": {"address_line_1": "1 St", "town": "London", "postcode": "N1", "country": "GB"},
            "customers": [{"given_name": "Ada", "family_name": "L", "email": "ada@example.com"}]
        });
        imports.stage(&key, account).await.expect("stage");
        let a = ["A".to_owned()];
        assert_eq!(imports.claim("OLD_CO", &a).await.expect("claim"), a);
        assert!(
            imports
                .claim("OLD_CO", &a)
                .await
                .expect("claimed once")
                .is_empty()
        );
        let status = imports
            .import_process(&key, "OLD_CO", "A")
            .await
            .expect("process")
            .state;
        assert_eq!(status, ImportState::InProgress);
        let process = json!({"import_supplier_code": "OLD_CO", "external_account_number": "A"});
        assert!(matches!(
            imports.process(&key, &process).await,
            Err(DomainError::ImportInProgress)
        ));

        assert_eq!(imports.release_interrupted().await.expect("release"), 1);
        let status = imports
            .import_process(&key, "OLD_CO", "A")
            .await
            .expect("process")
            .state;
        assert_eq!(status, ImportState::Pending);
        let counts = store.import_counts("OLD_CO").await.expect("counts");
        assert_eq!(
            (
                counts.get(ImportState::Pending),
                counts.get(ImportState::InProgress)
            ),
            (1, 0)
        );
    }
}
