//! Cancelling staged accounts older than their supplier's expiry window (`CANCELLED`, with
//! their event): what the server's expiry sweep runs.

use super::Imports;
use crate::domain::error::DomainError;
use crate::domain::events;
use crate::domain::import_process::ImportProcess;
use crate::domain::storage::ImportChange;
use chrono::{DateTime, Utc};
use futures_util::StreamExt;

impl Imports {
    /// Cancels every staged process older than its supplier's expiry window.
    pub async fn cancel_expired(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Vec<ImportProcess>, DomainError> {
        let mut cancelled = Vec::new();
        for supplier in self.store.suppliers().await? {
            let window = supplier.expiry_window_days;
            let mut expired = Vec::new();
            let mut processes = self.store.import_processes(&supplier.code, None);
            while let Some(process) = processes.next().await {
                let process = process?;
                if process.is_expired(window, now) {
                    expired.push(process.external_account_number);
                }
            }
            if expired.is_empty() {
                continue;
            }
            let outcomes = self
                .store
                .change_imports(&supplier.code, &expired, &mut |current| match current {
                    Some(current) if current.is_expired(window, now) => {
                        Ok(ImportChange::with_events(
                            current.cancelled(now),
                            vec![events::import_cancelled(
                                current,
                                current.expires_at(window),
                            )?],
                        ))
                    }
                    _ => Err(DomainError::ImportInProgress),
                })
                .await?;
            for outcome in outcomes {
                match outcome {
                    Ok(change) => cancelled.push(change.process),
                    Err(DomainError::ImportInProgress) => {}
                    Err(other) => return Err(other),
                }
            }
        }
        Ok(cancelled)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ListFilter;
    use super::super::tests::{account, fixture};
    use super::*;
    use crate::domain::import_process::{ImportListing, ImportState, Staging, TransferStatus};
    use futures_util::{StreamExt, TryStreamExt};
    use serde_json::json;

    #[tokio::test]
    async fn the_sweep_cancels_only_expired_stagings_and_restaging_revives_them() {
        let (_dir, store, key, imports) = fixture().await;
        imports.stage(&key, account("OLD")).await.expect("stage");
        imports
            .stage(&key, account("MIGRATED"))
            .await
            .expect("stage");
        let migrate =
            json!({"import_supplier_code": "OLD_CO", "external_account_number": "MIGRATED"});
        imports.process(&key, &migrate).await.expect("process");

        // The lists read what they show of each process, the account document left unread.
        let listed: Vec<_> = imports
            .list(&key, "OLD_CO", ListFilter::All)
            .await
            .expect("list")
            .try_collect()
            .await
            .expect("readable");
        let migrated = imports
            .import_process(&key, "OLD_CO", "MIGRATED")
            .await
            .expect("process");
        assert_eq!(
            listed,
            [
                ImportListing {
                    external_account_number: "MIGRATED".into(),
                    state: ImportState::Processed,
                    platform_account_number: migrated.platform_account_number.clone(),
                    account_created_at: migrated.account_created_at,
                },
                ImportListing {
                    external_account_number: "OLD".into(),
                    state: ImportState::Pending,
                    platform_account_number: None,
                    account_created_at: None,
                },
            ]
        );
        assert!(migrated.platform_account_number.is_some());

        let not_yet = imports
            .cancel_expired(Utc::now() + chrono::Duration::days(29))
            .await
            .expect("sweep");
        assert!(not_yet.is_empty());
        let cancelled = imports
            .cancel_expired(Utc::now() + chrono::Duration::days(31))
            .await
            .expect("sweep");
        let names: Vec<_> = cancelled
            .iter()
            .map(|p| p.external_account_number.as_str())
            .collect();
        assert_eq!(names, ["OLD"]);

        let process = imports
            .import_process(&key, "OLD_CO", "OLD")
            .await
            .expect("process");
        assert_eq!(process.state, ImportState::Cancelled);
        assert_eq!(
            crate::domain::import_process::transfer_status(process.state),
            TransferStatus::Unknown
        );
        let all: Vec<_> = imports
            .list(&key, "OLD_CO", ListFilter::All)
            .await
            .expect("list")
            .collect()
            .await;
        assert_eq!(all.len(), 1, "cancelled processes are not listed");
        let counts = store.import_counts("OLD_CO").await.expect("counts");
        assert_eq!(
            (
                counts.get(ImportState::Cancelled),
                counts.get(ImportState::Pending)
            ),
            (1, 0)
        );
        let log = store.events_after(None, 100).await.expect("event log");
        let cancelled_event = log
            .iter()
            .find(|event| event.event_type == "data_import.import_process.cancelled")
            .expect("a cancelled event in the log");
        assert!(
            cancelled_event.published_at.is_none(),
            "waiting in the outbox"
        );
        let data = cancelled_event.data.to_value();
        assert_eq!(data["external_identifier"], "OLD");
        assert_eq!(data["resource_type"], "ACCOUNT");

        let blocked = json!({"import_supplier_code": "OLD_CO", "external_account_number": "OLD"});
        assert!(matches!(
            imports.process(&key, &blocked).await,
            Err(DomainError::ImportCancelled)
        ));
        let (revived, how) = imports
            .stage(&key, account("OLD"))
            .await
            .expect("restage")
            .value;
        assert_eq!(
            (revived.state, how),
            (ImportState::Pending, Staging::Updated)
        );
        let counts = store.import_counts("OLD_CO").await.expect("counts");
        assert_eq!(
            (
                counts.get(ImportState::Cancelled),
                counts.get(ImportState::Pending)
            ),
            (0, 1)
        );
    }
}
