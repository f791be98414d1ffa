//! Staging an account (`account-import-process/create-or-update/`): validated as
//! `validate-account/` is, then created, or updated while it is not yet migrated.

use super::{CheckedAccount, Imports};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::import_process::{
    ImportProcess, ProcessEvent, ProcessEventKind, Schedule, Staging,
};
use crate::domain::schedules::Due;
use crate::domain::storage::ImportChange;
use crate::domain::supplier::NamedSupplier;
use crate::domain::validation::Reported;
use chrono::Utc;
use serde_json::Value;

impl Imports {
    /// Validates and stages an account (created, or updated while not yet migrated).
    pub async fn stage(
        &self,
        key: &ApiKeyRecord,
        body: Value,
    ) -> Result<Reported<(ImportProcess, Staging)>, DomainError> {
        let named = self.named_supplier(key, &body, "import_supplier").await?;
        self.stage_with(key, body, named, None).await
    }

    /// Stages the account `body`, and with `schedule` records its migration to run then (in
    /// the same write).
    pub(super) async fn stage_with(
        &self,
        key: &ApiKeyRecord,
        body: Value,
        named: NamedSupplier,
        schedule: Option<Schedule>,
    ) -> Result<Reported<(ImportProcess, Staging)>, DomainError> {
        let Reported {
            value:
                (
                    CheckedAccount {
                        account,
                        checked_with,
                        declared,
                    },
                    supplier,
                ),
            ignored,
        } = self.read_with(key, body, named).await?;
        supplier.ensure_ongoing()?;
        let now = Utc::now();
        let mut staging = Staging::Created;
        let change = self
            .store
            .change_import(
                &supplier.code,
                account.external_account_number(),
                &mut |current| {
                    let (mut process, how) =
                        ImportProcess::stage(current, account.clone(), checked_with.clone(), now)?;
                    process.declared = Some(declared.clone());
                    staging = how;
                    if let Some(schedule) = &schedule {
                        process.schedule = Some(schedule.clone());
                        process.latest_event =
                            Some(ProcessEvent::new(ProcessEventKind::Scheduled, now));
                    }
                    Ok(ImportChange::process(process))
                },
            )
            .await?;
        if let (Some(schedule), Some(scheduler)) = (&schedule, &self.scheduler) {
            scheduler.due(Due {
                at: schedule.window_start,
                supplier: supplier.code.clone(),
                external: account.external_account_number().to_owned(),
            });
        }
        Ok(Reported {
            value: (change.process, staging),
            ignored,
        })
    }
}
