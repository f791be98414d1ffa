//! Account import processes: the staged account, its state, and the platform account it
//! becomes.
//!
//! States: `PENDING` (staged), `IN_PROGRESS` (a migration is creating the account),
//! `PROCESSED` (a platform account exists), `ERRORED` (the last attempt failed; re-stage or
//! retry), `CANCELLED` (staged longer than the supplier's expiry window). The v1 status
//! endpoint shows these as `COMPLETED`, `IN_PROGRESS` or `UNKNOWN`.
//!
//! An account whose migration failed is in the error tail until it is migrated: its process
//! keeps the failure's code ([`ImportProcess::failed_with`]) when it is re-staged, so that a
//! bulk migration can be started over exactly those accounts once they are fixed.

use super::account::AccountPayload;
use super::error::DomainError;
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The state of an account's import process (the admin API's vocabulary, defined once in
/// `ferry-admin-api`).
pub use ferry_admin_api::ImportState;

/// The status the v1 status endpoint shows for a state.
pub fn transfer_status(state: ImportState) -> TransferStatus {
    match state {
        ImportState::Processed => TransferStatus::Completed,
        ImportState::InProgress => TransferStatus::InProgress,
        ImportState::Pending | ImportState::Errored | ImportState::Cancelled => {
            TransferStatus::Unknown
        }
    }
}

/// Pending in the spec's sense: staged, no platform account, not cancelled.
pub fn is_pending(state: ImportState) -> bool {
    matches!(
        state,
        ImportState::Pending | ImportState::InProgress | ImportState::Errored
    )
}

/// The status of the v1 `account-transfer-status` endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransferStatus {
    Unknown,
    Completed,
    InProgress,
}

/// Why the last attempt to migrate failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProcessFailure {
    pub code: String,
    pub detail: String,
    pub at: DateTime<Utc>,
}

/// What the lists show of an import process, without its account document (the bulk of
/// the record), which a list of a hundred thousand processes would otherwise read to emit
/// three fields. A store may keep it apart from the process, or read it out of the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportListing {
    pub external_account_number: String,
    pub state: ImportState,
    pub platform_account_number: Option<String>,
    pub account_created_at: Option<DateTime<Utc>>,
}

impl ImportListing {
    /// What the lists show of `process`.
    pub fn of(process: &ImportProcess) -> Self {
        Self {
            external_account_number: process.external_account_number.clone(),
            state: process.state,
            platform_account_number: process.platform_account_number.clone(),
            account_created_at: process.account_created_at,
        }
    }
}

/// One account import process as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportProcess {
    pub supplier_code: String,
    pub external_account_number: String,
    pub state: ImportState,
    pub account: AccountPayload,
    pub staged_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub platform_account_number: Option<String>,
    pub account_created_at: Option<DateTime<Utc>>,
    pub last_failure: Option<ProcessFailure>,
    /// When the process was first staged (records written before it was kept: `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    /// The last thing that happened to the process (the v2 status' `latest_event`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_event: Option<ProcessEvent>,
    /// A migration scheduled through `POST /v2/data-import/accounts/`, until it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// What the account was checked with when it was staged (records written before it was
    /// kept, or staged under rules that cannot say: `None`, and a migration checks again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_with: Option<CheckedWith>,
    /// What the document declared of the account's money as the supplier sent it, before its
    /// rules mapped it (staged before it was kept: `None`, and the staged document stands
    /// for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<super::campaign::Reconciliation>,
    /// The code of the failure that put the account in the error tail: set when a migration
    /// attempt fails, kept when the account is re-staged (which clears `last_failure`) or put
    /// back, cleared once it is migrated (records written before it was kept: `None`, and
    /// [`Self::tail_code`] reads an `ERRORED` one's `last_failure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_with: Option<String>,
}

/// What a staged account was checked with: this version of Ferry's own rules, and the
/// supplier's `validate-account` rules as they identify themselves
/// ([`super::ports::SupplierRules::identity`]). An account checked with the same as a
/// migration would use needs no second check (the same rules give the same answer, and a
/// plugin's mapping is idempotent: PLUGINS.md).
///
/// Kept as the first 8 bytes of a SHA-256 of the two, in hex: every staged process carries
/// it, and the names in full (a plugin's SHA-256 and its configuration's) add some 400 bytes
/// of memory to each staged account. Two different sets of rules alike in 64 bits are not a
/// risk worth the memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CheckedWith(String);

impl CheckedWith {
    /// Ferry's rules as built, and the supplier's rules of identity `rules` (none: rules that
    /// cannot say, so nothing is recorded).
    pub fn now(rules: Option<String>) -> Option<Self> {
        let rules = rules?;
        let mut digest = Sha256::new();
        digest.update(env!("CARGO_PKG_VERSION").as_bytes());
        digest.update([0]);
        digest.update(rules.as_bytes());
        Some(Self(hex::encode(&digest.finalize()[..8])))
    }
}

/// What happened to an import process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProcessEventKind {
    Created,
    Updated,
    Scheduled,
    InProgress,
    Processed,
    Errored,
    Cancelled,
    DryRunSucceeded,
    DryRunErrored,
}

impl ProcessEventKind {
    /// The real platform's name of the event (`EVENT_ACCOUNT_IMPORT_PROCESS_CREATED`, ...).
    pub fn event_name(self) -> String {
        let kind = serde_json::to_value(self)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        format!("EVENT_ACCOUNT_IMPORT_PROCESS_{kind}")
    }
}

/// One thing that happened to an import process, with the failure it reported, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessEvent {
    pub kind: ProcessEventKind,
    pub at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProcessFailure>,
}

impl ProcessEvent {
    pub fn new(kind: ProcessEventKind, at: DateTime<Utc>) -> Self {
        Self {
            kind,
            at,
            error: None,
        }
    }
}

/// When a scheduled migration may run, and whether it is a dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    pub window_start: DateTime<Utc>,
    pub window_end: DateTime<Utc>,
    pub dry_run: bool,
}

/// Whether staging created the process or updated a staged one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staging {
    Created,
    Updated,
}

impl ImportProcess {
    /// Stages `account`, over `existing` if there is one.
    pub fn stage(
        existing: Option<&ImportProcess>,
        account: AccountPayload,
        checked_with: Option<CheckedWith>,
        now: DateTime<Utc>,
    ) -> Result<(ImportProcess, Staging), DomainError> {
        let Some(existing) = existing else {
            let process = ImportProcess {
                supplier_code: account.import_supplier().to_owned(),
                external_account_number: account.external_account_number().to_owned(),
                state: ImportState::Pending,
                account,
                staged_at: now,
                updated_at: now,
                platform_account_number: None,
                account_created_at: None,
                last_failure: None,
                created_at: Some(now),
                latest_event: Some(ProcessEvent::new(ProcessEventKind::Created, now)),
                schedule: None,
                checked_with,
                declared: None,
                failed_with: None,
            };
            return Ok((process, Staging::Created));
        };
        match existing.state {
            ImportState::Processed => Err(existing.already_imported()),
            ImportState::InProgress => Err(DomainError::ImportInProgress),
            ImportState::Pending | ImportState::Errored | ImportState::Cancelled => {
                let mut process = existing.clone();
                process.account = account;
                process.state = ImportState::Pending;
                process.staged_at = now;
                process.updated_at = now;
                // Its `failed_with` stays: re-staged, it is still in the error tail.
                process.last_failure = None;
                process.latest_event = Some(ProcessEvent::new(ProcessEventKind::Updated, now));
                process.schedule = None;
                process.checked_with = checked_with;
                Ok((process, Staging::Updated))
            }
        }
    }

    /// Checks that this process may be migrated now.
    pub fn ensure_processable(&self) -> Result<(), DomainError> {
        match self.state {
            ImportState::Pending | ImportState::Errored => Ok(()),
            ImportState::Processed => Err(self.already_imported()),
            ImportState::InProgress => Err(DomainError::ImportInProgress),
            ImportState::Cancelled => Err(DomainError::ImportCancelled),
        }
    }

    /// The refusal of a process that was migrated already, naming its platform account.
    pub fn already_imported(&self) -> DomainError {
        DomainError::AlreadyImported {
            external_account_number: self.external_account_number.clone(),
            platform_account_number: self.platform_account_number.clone().unwrap_or_default(),
        }
    }

    /// The process after a successful migration that created `account`.
    pub fn processed(&self, account: &PlatformAccount) -> ImportProcess {
        let mut process = self.clone();
        process.state = ImportState::Processed;
        process.platform_account_number = Some(account.number.clone());
        process.account_created_at = Some(account.created_at);
        process.updated_at = account.created_at;
        process.last_failure = None;
        process.failed_with = None;
        process.latest_event = Some(ProcessEvent::new(
            ProcessEventKind::Processed,
            account.created_at,
        ));
        process.schedule = None;
        process
    }

    /// The process after a failed migration attempt.
    pub fn errored(&self, code: &str, detail: &str, now: DateTime<Utc>) -> ImportProcess {
        let mut process = self.clone();
        process.state = ImportState::Errored;
        process.updated_at = now;
        let failure = ProcessFailure {
            code: code.to_owned(),
            detail: detail.to_owned(),
            at: now,
        };
        process.latest_event = Some(ProcessEvent {
            kind: ProcessEventKind::Errored,
            at: now,
            error: Some(failure.clone()),
        });
        process.last_failure = Some(failure);
        process.failed_with = Some(code.to_owned());
        process.schedule = None;
        process
    }

    /// The code of the failure that keeps the account in the error tail, if it is in it:
    /// awaiting migration after a failed attempt, re-staged since or not.
    pub fn tail_code(&self) -> Option<&str> {
        if !self.awaits_migration() {
            return None;
        }
        match (&self.failed_with, &self.last_failure) {
            (Some(code), _) => Some(code),
            // Failed before the code was kept apart: known while it is still `ERRORED`.
            (None, Some(failure)) if self.state == ImportState::Errored => Some(&failure.code),
            (None, _) => None,
        }
    }

    /// The process after a dry run: its outcome becomes the latest event; the scheduled dry
    /// run (`scheduled`) also ends the schedule, another one leaves it.
    pub fn dry_run(
        &self,
        failure: Option<(&str, &str)>,
        scheduled: bool,
        now: DateTime<Utc>,
    ) -> ImportProcess {
        let mut process = self.clone();
        process.updated_at = now;
        process.latest_event = Some(match failure {
            None => ProcessEvent::new(ProcessEventKind::DryRunSucceeded, now),
            Some((code, detail)) => ProcessEvent {
                kind: ProcessEventKind::DryRunErrored,
                at: now,
                error: Some(ProcessFailure {
                    code: code.to_owned(),
                    detail: detail.to_owned(),
                    at: now,
                }),
            },
        });
        if scheduled {
            process.schedule = None;
        }
        process
    }

    /// The status `GET /v2/data-import/accounts/...` answers: the state, or the outcome of a
    /// dry run that is the latest thing to have happened to a process not yet migrated.
    pub fn v2_status(&self) -> &'static str {
        match self.latest_event.as_ref().map(|event| event.kind) {
            Some(ProcessEventKind::DryRunSucceeded) if self.awaits_migration() => {
                "DRY_RUN_SUCCEEDED"
            }
            Some(ProcessEventKind::DryRunErrored) if self.awaits_migration() => "DRY_RUN_ERRORED",
            _ => self.state.as_str(),
        }
    }

    /// Staged and not migrated, nor being migrated, nor cancelled: `PENDING` or `ERRORED`.
    pub fn awaits_migration(&self) -> bool {
        matches!(self.state, ImportState::Pending | ImportState::Errored)
    }

    /// The latest event, for records written before events were kept: read off the state.
    pub fn latest_event_or_state(&self) -> ProcessEvent {
        if let Some(event) = &self.latest_event {
            return event.clone();
        }
        let kind = match self.state {
            ImportState::Pending => ProcessEventKind::Updated,
            ImportState::InProgress => ProcessEventKind::InProgress,
            ImportState::Processed => ProcessEventKind::Processed,
            ImportState::Errored => ProcessEventKind::Errored,
            ImportState::Cancelled => ProcessEventKind::Cancelled,
        };
        ProcessEvent {
            kind,
            at: self.updated_at,
            error: self
                .last_failure
                .clone()
                .filter(|_| kind == ProcessEventKind::Errored),
        }
    }

    /// When a staged process expires, for a supplier whose window is `window_days`.
    pub fn expires_at(&self, window_days: i64) -> DateTime<Utc> {
        self.staged_at + Duration::days(window_days)
    }

    /// Whether the expiry sweep should cancel this process at `now`.
    pub fn is_expired(&self, window_days: i64, now: DateTime<Utc>) -> bool {
        self.awaits_migration() && now >= self.expires_at(window_days)
    }

    /// The process after the expiry sweep cancelled it.
    pub fn cancelled(&self, now: DateTime<Utc>) -> ImportProcess {
        let mut process = self.clone();
        process.state = ImportState::Cancelled;
        process.updated_at = now;
        process.latest_event = Some(ProcessEvent::new(ProcessEventKind::Cancelled, now));
        process.schedule = None;
        process
    }
}

/// A platform account created by a migration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformAccount {
    /// `A-` and 8 upper-case hex digits, unique.
    pub number: String,
    pub supplier_code: String,
    pub external_account_number: String,
    pub created_at: DateTime<Utc>,
    pub data: AccountPayload,
    /// The operations team the account was allocated to when it was migrated, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations_team_name: Option<String>,
}

impl PlatformAccount {
    /// A new account for `process`, numbered `number` (see [`new_platform_account_number`];
    /// the store checks it is unique).
    pub fn open_as(
        number: String,
        process: &ImportProcess,
        operations_team_name: Option<String>,
        now: DateTime<Utc>,
    ) -> PlatformAccount {
        PlatformAccount {
            number,
            supplier_code: process.supplier_code.clone(),
            external_account_number: process.external_account_number.clone(),
            created_at: now,
            data: process.account.clone(),
            operations_team_name,
        }
    }
}

/// `A-` + 8 upper-case hex digits.
pub fn new_platform_account_number(rng: &mut impl Rng) -> String {
    format!("A-{:08X}", rng.r#gen::<u32>())
}

pub fn is_platform_account_number(text: &str) -> bool {
    text.strip_prefix("A-").is_some_and(|hex| {
        hex.len() == 8
            && hex
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, 'A'..='F'))
    })
}

/// Datetimes in responses: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_datetime(moment: DateTime<Utc>) -> String {
    moment.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::account::{AccountLimits, read_account};
    use serde_json::json;

    fn staged(external: &str, now: DateTime<Utc>) -> ImportProcess {
        let account = read_account(
            json!({
                "import_supplier": "OLD_CO",
                "external_account_number": external,
                "billing_name": "Ada Lovelace",
                "billing_address1": "1 Analytical Street",
                "billing_address4": "London",
                "billing_postcode": "N1 1AA",
                "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com"}]
            }),
            AccountLimits { max_items: 100 },
        )
        .expect("a valid account");
        ImportProcess::stage(None, account, None, now)
            .expect("staged")
            .0
    }

    #[test]
    fn a_failure_stays_in_the_tail_through_re_staging_until_the_account_is_migrated() {
        let now = Utc::now();
        let process = staged("A-1", now);
        assert_eq!(
            (process.failed_with.as_deref(), process.tail_code()),
            (None, None)
        );

        let errored = process.errored("account_failed_validation", "No statement.", now);
        assert_eq!(
            errored.failed_with.as_deref(),
            Some("account_failed_validation")
        );
        assert_eq!(errored.tail_code(), Some("account_failed_validation"));

        // Re-staged: pending, its last failure forgotten, still in the tail.
        let (restaged, _) =
            ImportProcess::stage(Some(&errored), errored.account.clone(), None, now)
                .expect("re-staged");
        assert_eq!(restaged.state, ImportState::Pending);
        assert_eq!(restaged.last_failure, None);
        assert_eq!(restaged.tail_code(), Some("account_failed_validation"));

        // Failing again with another code: the tail's code is the latest.
        let again = restaged.errored("payment_vendor_unavailable", "Away.", now);
        assert_eq!(again.tail_code(), Some("payment_vendor_unavailable"));

        // Migrated: out of the tail for good.
        let account = PlatformAccount::open_as("A-0000000A".into(), &again, None, now);
        let migrated = again.processed(&account);
        assert_eq!(
            (migrated.failed_with.as_deref(), migrated.tail_code()),
            (None, None)
        );
    }

    #[test]
    fn the_tail_code_is_kept_only_while_the_account_awaits_migration() {
        let now = Utc::now();
        let errored = staged("A-1", now).errored("plugin_failed", "Trapped.", now);
        let mut claimed = errored.clone();
        claimed.state = ImportState::InProgress;
        assert_eq!(claimed.tail_code(), None);
        assert_eq!(claimed.failed_with.as_deref(), Some("plugin_failed"));
        assert_eq!(errored.cancelled(now).tail_code(), None);

        // Written before the code was kept apart: an ERRORED record's last failure names it;
        // a pending one cannot say.
        let mut older = errored.clone();
        older.failed_with = None;
        assert_eq!(older.tail_code(), Some("plugin_failed"));
        let stored = serde_json::to_value(&older).expect("serialized");
        assert!(stored.get("failed_with").is_none(), "{stored}");
        let read: ImportProcess = serde_json::from_value(stored).expect("read back");
        assert_eq!(read, older);
        older.state = ImportState::Pending;
        assert_eq!(older.tail_code(), None);
    }

    #[test]
    fn numbers_have_the_platform_shape() {
        let mut rng = rand::thread_rng();
        for _ in 0..100 {
            assert!(is_platform_account_number(&new_platform_account_number(
                &mut rng
            )));
        }
        assert!(!is_platform_account_number("A-1234567"));
        assert!(!is_platform_account_number("A-1234567g"));
    }

    #[test]
    fn v1_status_mapping() {
        assert_eq!(
            transfer_status(ImportState::Processed),
            TransferStatus::Completed
        );
        assert_eq!(
            transfer_status(ImportState::InProgress),
            TransferStatus::InProgress
        );
        for state in [
            ImportState::Pending,
            ImportState::Errored,
            ImportState::Cancelled,
        ] {
            assert_eq!(transfer_status(state), TransferStatus::Unknown);
        }
    }
}
