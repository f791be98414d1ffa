//! Scheduling an account's migration (`POST /v2/data-import/accounts/`): the account is
//! staged and its migration recorded with it, to run in the background within the task's
//! window ([`Imports::run_scheduled`]).

use super::Imports;
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::schedules::{read_task_params, v2_payload};
use crate::domain::validation::{Reported, reading};
use chrono::Utc;
use serde_json::Value;

impl Imports {
    /// `POST /v2/data-import/accounts/`: stages the account and schedules its migration
    /// within the task's window (a dry run when `is_dry_run`). The migration runs in the
    /// background; `GET /v2/...` follows it.
    pub async fn schedule(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<()>, DomainError> {
        let now = Utc::now();
        let (account, at) = v2_payload(body);
        let named = self
            .named_supplier(key, &account, "import_supplier")
            .await?;
        let (schedule, mut ignored) =
            reading(named.unknown_fields(), || read_task_params(body, now));
        let schedule = schedule?;
        let staged = self
            .stage_with(key, account, named, Some(schedule))
            .await
            .map(|staged| staged.under(at))
            .map_err(|error| match error.under(at) {
                DomainError::Invalid { errors, .. } => DomainError::Invalid {
                    code: "import_process_failed_validation",
                    detail: "Import process validation failed during account creation. Please validate the import process to get full details of the validation errors.",
                    errors,
                },
                other => other,
            })?;
        ignored.extend(staged.ignored);
        Ok(Reported { value: (), ignored })
    }
}
