//! Staging, validating and migrating accounts, and reading their import state.
//!
//! Every call is made on behalf of an API key: suppliers outside the key's scope answer
//! exactly as if they did not exist. Writes are flushed before the call returns.

use super::account::{AccountLimits, AccountPayload, read_account};
use super::api_key::ApiKeyRecord;
use super::error::DomainError;
use super::events;
use super::import_process::{
    CheckedWith, ImportListing, ImportProcess, ImportState, PlatformAccount, ProcessEvent,
    ProcessEventKind, Schedule, Staging,
};
use super::opening::{Outside, PreparedOpening};
use super::ports::{Hook, NoRules, SupplierRules};
use super::schedules::{Due, Scheduler, read_task_params, v2_payload};
use super::supplier::{NamedSupplier, Supplier};
use super::validation::{
    FieldError, FieldErrors, ObjectReader, Optional, Reported, Required, StrRule, reading,
};
use crate::domain::storage::{ImportChange, ListingStream, Store, retrying_while_away};
use chrono::{DateTime, Utc};
use futures_util::{StreamExt, TryStreamExt};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Which import processes a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFilter {
    /// Pending or imported (not cancelled).
    All,
    /// Staged without a platform account.
    Pending,
    /// With a platform account.
    Imported,
    /// Exactly this state (operators).
    State(ImportState),
}

impl ListFilter {
    pub fn admits(self, state: ImportState) -> bool {
        match self {
            Self::All => state != ImportState::Cancelled,
            Self::Pending => super::import_process::is_pending(state),
            Self::Imported => state == ImportState::Processed,
            Self::State(wanted) => state == wanted,
        }
    }
}

/// A request to migrate one staged account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRequest {
    pub supplier_code: String,
    pub external_account_number: String,
    pub dry_run: bool,
    /// The operations team to allocate the account to; it must exist.
    pub operations_team_name: Option<String>,
}

/// An account as the supplier's rules answered it, and what it was checked with.
struct CheckedAccount {
    account: AccountPayload,
    checked_with: Option<CheckedWith>,
}

/// What a process records of a migration the storage refused (its own words are logged).
const STORAGE_FAILURE_DETAIL: &str =
    "A server error occurred while the account was migrated; migrate it again.";

/// How long one instance may hold a scheduled migration before another may run it (a run
/// takes well under a second; the lease outlives an instance that died running it).
const SCHEDULED_RUN_LEASE: std::time::Duration = std::time::Duration::from_secs(60);

/// What became of a claimed account's migration ([`Imports::migrate_claimed`]).
#[derive(Debug)]
pub enum ClaimedMigration {
    /// Its platform account is made.
    Made,
    /// Refused: the failure is recorded on the process (`ERRORED`).
    Failed(DomainError),
}

/// The import use cases over one store.
#[derive(Clone)]
pub struct Imports {
    store: Arc<dyn Store>,
    limits: AccountLimits,
    rules: Arc<dyn SupplierRules>,
    /// At most this many `process` calls at once (the real platform's optional concurrency
    /// limit); `None`: no limit.
    processing: Option<(Arc<Semaphore>, usize)>,
    /// Told of every migration scheduled through v2 (none in tests that run no scheduler).
    scheduler: Option<Scheduler>,
    /// The bucket and the vendors a migration checks the account's documents and payment
    /// instructions against.
    outside: Outside,
}

impl std::fmt::Debug for Imports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Imports")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Imports {
    /// Imports without supplier rules.
    pub fn new(store: Arc<dyn Store>, limits: AccountLimits) -> Self {
        Self::with_rules(store, limits, Arc::new(NoRules))
    }

    pub fn with_rules(
        store: Arc<dyn Store>,
        limits: AccountLimits,
        rules: Arc<dyn SupplierRules>,
    ) -> Self {
        Self {
            store,
            limits,
            rules,
            processing: None,
            scheduler: None,
            outside: Outside::default(),
        }
    }

    /// Checks migrations' documents and payment instructions against `outside`.
    pub fn with_outside(mut self, outside: Outside) -> Self {
        self.outside = outside;
        self
    }

    /// Tells `scheduler` of every migration scheduled from now on.
    pub fn with_scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = Some(scheduler);
        self
    }

    /// At most `limit` accounts processed at once (0: no limit); past it `process` answers
    /// [`DomainError::ProcessConcurrencyLimit`], to be retried.
    pub fn with_process_limit(mut self, limit: usize) -> Self {
        self.processing = (limit > 0).then(|| (Arc::new(Semaphore::new(limit)), limit));
        self
    }

    /// A place among the accounts processed at once, held while it lives.
    fn process_permit(&self) -> Result<Option<OwnedSemaphorePermit>, DomainError> {
        let Some((processing, limit)) = &self.processing else {
            return Ok(None);
        };
        processing
            .clone()
            .try_acquire_owned()
            .map(Some)
            .map_err(|_| DomainError::ProcessConcurrencyLimit(*limit))
    }

    /// The supplier `code` if it exists and the key may see it.
    pub async fn visible_supplier(
        &self,
        key: &ApiKeyRecord,
        code: &str,
    ) -> Result<Supplier, DomainError> {
        self.visible_named_supplier(key, NamedSupplier::default(), code)
            .await
    }

    /// As [`Self::visible_supplier`], with the supplier the request named already read.
    async fn visible_named_supplier(
        &self,
        key: &ApiKeyRecord,
        named: NamedSupplier,
        code: &str,
    ) -> Result<Supplier, DomainError> {
        if !key.can_see(code) {
            return Err(DomainError::SupplierNotFound);
        }
        named
            .supplier(self.store.as_ref(), code)
            .await?
            .ok_or(DomainError::SupplierNotFound)
    }

    async fn read(
        &self,
        key: &ApiKeyRecord,
        body: Value,
    ) -> Result<Reported<(CheckedAccount, Supplier)>, DomainError> {
        let named = self.named_supplier(key, &body, "import_supplier").await?;
        self.read_with(key, body, named).await
    }

    /// The supplier `body` names in `field` (see [`NamedSupplier`]).
    async fn named_supplier(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
        field: &str,
    ) -> Result<NamedSupplier, DomainError> {
        Ok(NamedSupplier::read(self.store.as_ref(), key, body, field).await?)
    }

    /// As [`Self::read`], with the supplier `body` names already read.
    async fn read_with(
        &self,
        key: &ApiKeyRecord,
        body: Value,
        named: NamedSupplier,
    ) -> Result<Reported<(CheckedAccount, Supplier)>, DomainError> {
        let (account, ignored) =
            reading(named.unknown_fields(), || read_account(body, self.limits));
        let account = account.map_err(DomainError::account_invalid)?;
        let supplier = self
            .visible_named_supplier(key, named, account.import_supplier())
            .await?;
        // Read before the rules run: should the plugin be replaced meanwhile, a migration
        // checks again (the other order could take the new plugin's identity for the old
        // one's answer).
        let checked_with = CheckedWith::now(
            self.rules
                .identity(account.import_supplier(), Hook::ValidateAccount),
        );
        let account = self.apply_rules(account).await?;
        check_vendors(&account, self.outside.vendors.as_ref())?;
        Ok(Reported {
            value: (
                CheckedAccount {
                    account,
                    checked_with,
                },
                supplier,
            ),
            ignored,
        })
    }

    /// The supplier's `validate-account` rules, whose answer Ferry validates again. The rules
    /// may change the account but not which account it is.
    async fn apply_rules(&self, account: AccountPayload) -> Result<AccountPayload, DomainError> {
        let mapped = super::rules::apply(
            self.rules.as_ref(),
            account.import_supplier(),
            Hook::ValidateAccount,
            None,
            || account.to_value(),
            DomainError::account_invalid,
        )
        .await?;
        let Some(mapped) = mapped else {
            return Ok(account);
        };
        // Rules that changed nothing: the account is the one already read (a migration's
        // rules usually answer the account they mapped at staging as it is).
        if mapped.as_object() == Some(account.document()) {
            return Ok(account);
        }
        let mapped = read_account(mapped, self.limits).map_err(DomainError::account_invalid)?;
        for (field, before, after) in [
            (
                "import_supplier",
                account.import_supplier(),
                mapped.import_supplier(),
            ),
            (
                "external_account_number",
                account.external_account_number(),
                mapped.external_account_number(),
            ),
        ] {
            if before != after {
                return Err(DomainError::account_invalid(FieldErrors::single(
                    FieldError::new(
                        field.to_owned(),
                        "plugin_changed_account_reference",
                        "The supplier's plugin may not change which account this is.",
                    ),
                )));
            }
        }
        Ok(mapped)
    }

    /// Validates an account (and applies the supplier's rules) without writing anything.
    pub async fn validate(
        &self,
        key: &ApiKeyRecord,
        body: Value,
    ) -> Result<Reported<AccountPayload>, DomainError> {
        Ok(self
            .read(key, body)
            .await?
            .map(|(checked, _)| checked.account))
    }

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
    async fn stage_with(
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

    /// `POST /v2/data-import/accounts/validate/`: the account in `payload` (or the body
    /// itself, as the real document's own example sends it), validated; nothing is written.
    pub async fn validate_v2(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<AccountPayload>, DomainError> {
        let (account, at) = v2_payload(body);
        let validated = self.validate(key, account).await.map_err(|e| e.under(at))?;
        Ok(validated.under(at))
    }

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

    /// Migrates a staged account: the platform account it created. A dry run keeps nothing
    /// and, as on the real platform, answers a refusal either way: the error the real run
    /// would give, or [`DomainError::DryRunWouldSucceed`].
    pub async fn process(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<PlatformAccount>, DomainError> {
        let named = self
            .named_supplier(key, body, "import_supplier_code")
            .await?;
        let (request, ignored) = reading(named.unknown_fields(), || read_process_request(body));
        let request = request?;
        let supplier = self
            .visible_named_supplier(key, named, &request.supplier_code)
            .await?;
        supplier.ensure_ongoing()?;
        if let Some(team) = &request.operations_team_name
            && self.store.team(team).await?.is_none()
        {
            return Err(DomainError::invalid(FieldErrors::single(FieldError::new(
                "operations_team_name".to_owned(),
                "operations_team_name_does_not_exist",
                format!("No operations team is named {team:?}."),
            ))));
        }
        let _permit = self.process_permit()?;
        let current = self
            .store
            .import_process(&supplier.code, &request.external_account_number)
            .await?
            .ok_or(DomainError::ImportProcessNotFound)?;
        if request.dry_run {
            return Err(self.dry_run(current, false).await?);
        }
        current.ensure_processable()?;
        let prepared = match self.prepare(&current, &supplier).await {
            Ok(prepared) => prepared,
            Err(failure) => {
                if !failure.is_store_for_now() {
                    self.record_failure(&current, &failure).await?;
                }
                return Err(failure);
            }
        };
        let account = self
            .create_account(
                &supplier.code,
                &request.external_account_number,
                request.operations_team_name,
                &prepared,
                ImportProcess::ensure_processable,
            )
            .await?;
        Ok(Reported {
            value: account,
            ignored,
        })
    }

    /// Everything a migration of `process` checks before it keeps anything: the supplier's
    /// rules again if they may have changed, then the opening the account document carries,
    /// against the bucket and the payment vendors.
    async fn prepare(
        &self,
        process: &ImportProcess,
        supplier: &Supplier,
    ) -> Result<PreparedOpening, DomainError> {
        self.revalidate(process).await?;
        super::opening::prepare(
            process.account.document(),
            &supplier.document_root,
            &self.outside,
            self.store.as_ref(),
            Utc::now(),
        )
        .await
    }

    /// A dry run: everything a migration does but keeping it. Its event is kept, and on a
    /// process not migrated yet its outcome becomes the latest event (the v2 status);
    /// `scheduled` says it is the scheduled run, whose schedule it ends. The refusal it
    /// answers with.
    async fn dry_run(
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
        let number = super::import_process::new_platform_account_number(&mut rand::thread_rng());
        prepared.open(&number, Utc::now()).map(drop)
    }

    /// Creates the platform account of a process that `admits` (checked again inside the
    /// transaction) with the opening `prepared` for it, and flushes.
    async fn create_account(
        &self,
        supplier_code: &str,
        external: &str,
        operations_team_name: Option<String>,
        prepared: &PreparedOpening,
        admits: fn(&ImportProcess) -> Result<(), DomainError>,
    ) -> Result<PlatformAccount, DomainError> {
        let now = Utc::now();
        // Made before the change, under a number of its own: the store keeps it unless the
        // number is taken, and then asks again (made again under another number).
        let first = super::import_process::new_platform_account_number(&mut rand::thread_rng());
        let mut opened = Some((first.clone(), prepared.open(&first, now)?));
        let change = self
            .store
            .change_import(supplier_code, external, &mut |current| {
                let current = current.ok_or(DomainError::ImportProcessNotFound)?;
                admits(current)?;
                let (number, opened) = match opened.take() {
                    Some(made) => made,
                    None => {
                        let number = super::import_process::new_platform_account_number(
                            &mut rand::thread_rng(),
                        );
                        let opened = prepared.open(&number, now)?;
                        (number, opened)
                    }
                };
                let account =
                    PlatformAccount::open_as(number, current, operations_team_name.clone(), now);
                let process = current.processed(&account);
                let mut events = vec![
                    events::import_complete(&process, &account)?,
                    events::account_created(&account)?,
                ];
                events.extend(opened.events);
                Ok(ImportChange {
                    process,
                    account: Some(account),
                    opening: Some(Box::new(opened.opening)),
                    events,
                })
            })
            .await?;
        change.account.ok_or(DomainError::ImportProcessNotFound)
    }

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

    /// Puts back to `PENDING` the `IN_PROGRESS` processes no bulk migration will go on with
    /// (claimed by a migration that a restart interrupted). A supplier with a bulk migration
    /// recorded as running (here, on another instance, or to be taken over) or whose lease is
    /// held is left alone; while this runs, none can start.
    pub async fn release_interrupted(&self) -> Result<usize, DomainError> {
        let mut released = 0;
        let holder = format!("release-{}", uuid::Uuid::new_v4().simple());
        for supplier in self.store.suppliers().await? {
            let recorded = super::migrations::running_job(self.store.as_ref(), &supplier.code);
            if recorded.await?.is_some() {
                continue;
            }
            let lease = super::migrations::bulk_lease(&supplier.code);
            if !self
                .store
                .hold_lease(&lease, &holder, super::migrations::BULK_LEASE_TTL)
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
            self.store.import_listings(supplier),
            ListFilter::State(ImportState::InProgress),
        )
        .map_ok(|process| process.external_account_number)
        .try_collect()
        .await?)
    }

    /// The rules are applied again at migration time if they may have changed since staging
    /// (a plugin installed, replaced or given another configuration, or Ferry upgraded): an
    /// account checked with the rules a migration would use now is not checked again. A
    /// plugin that breaks now fails the attempt.
    async fn revalidate(&self, process: &ImportProcess) -> Result<(), DomainError> {
        let now = CheckedWith::now(
            self.rules
                .identity(&process.supplier_code, Hook::ValidateAccount),
        );
        if now.is_some() && process.checked_with == now {
            return Ok(());
        }
        let account = read_account(process.account.to_value(), self.limits)
            .map_err(DomainError::account_invalid)?;
        self.apply_rules(account).await.map(drop)
    }

    /// Records `failure` on the process (`ERRORED`, its event kept), worded for the supplier.
    async fn record_failure(
        &self,
        process: &ImportProcess,
        failure: &DomainError,
    ) -> Result<(), DomainError> {
        let now = Utc::now();
        let detail = match failure {
            // The storage's own words are for the server's log, not the supplier.
            DomainError::Store(_) => STORAGE_FAILURE_DETAIL.to_owned(),
            other => other.to_string(),
        };
        self.store
            .change_import(
                &process.supplier_code,
                &process.external_account_number,
                &mut |current| {
                    let current = current.ok_or(DomainError::ImportProcessNotFound)?;
                    Ok(ImportChange::with_events(
                        current.errored(failure.code(), &detail, now),
                        vec![events::import_error(current, failure.code(), &detail)?],
                    ))
                },
            )
            .await?;
        Ok(())
    }

    /// What the lists show of one account's import process (its state and account), for the
    /// v1 transfer status: the account document is not read.
    pub async fn import_listing(
        &self,
        key: &ApiKeyRecord,
        supplier_code: &str,
        external: &str,
    ) -> Result<ImportListing, DomainError> {
        if !key.can_see(supplier_code) {
            return Err(DomainError::SupplierNotFound);
        }
        let (_, listing) = self
            .store
            .supplier_and_listing(supplier_code, external)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        listing.ok_or(DomainError::AccountNotFound)
    }

    /// The import process of one account, for the v2 status endpoint.
    pub async fn import_process(
        &self,
        key: &ApiKeyRecord,
        supplier_code: &str,
        external: &str,
    ) -> Result<ImportProcess, DomainError> {
        let supplier = self.visible_supplier(key, supplier_code).await?;
        self.store
            .import_process(&supplier.code, external)
            .await?
            .ok_or(DomainError::AccountNotFound)
    }

    /// The supplier's import processes that pass `filter`, streamed from the store.
    pub async fn list(
        &self,
        key: &ApiKeyRecord,
        supplier_code: &str,
        filter: ListFilter,
    ) -> Result<ListingStream, DomainError> {
        let supplier = self.visible_supplier(key, supplier_code).await?;
        Ok(filtered(self.store.import_listings(&supplier.code), filter))
    }

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

/// The account's payment instructions name vendors the operator configured (the document's
/// own list is one tenancy's: Ferry's vendors are the operator's, as for
/// `payment-instruction/create/`).
fn check_vendors(
    account: &AccountPayload,
    vendors: &dyn super::ports::PaymentVendors,
) -> Result<(), DomainError> {
    let mut errors = FieldErrors::default();
    let instructions =
        super::request_document::elements(account.document(), "payment_instructions");
    for (index, instruction) in instructions.iter().enumerate() {
        if let Some(Value::String(vendor)) = instruction.get("vendor")
            && !vendors.knows(&vendor.to_uppercase())
        {
            errors.push(FieldError::new(
                format!("payment_instructions.{index}.vendor"),
                "invalid_choice",
                format!(
                    "\"{}\" is not a configured payment vendor.",
                    vendor.to_uppercase()
                ),
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(DomainError::account_invalid(errors))
    }
}

/// Keeps the processes that pass `filter`.
pub fn filtered(listings: ListingStream, filter: ListFilter) -> ListingStream {
    listings
        .filter(move |item| {
            std::future::ready(
                item.as_ref()
                    .map_or(true, |listing| filter.admits(listing.state)),
            )
        })
        .boxed()
}

fn read_process_request(body: &Value) -> Result<ProcessRequest, DomainError> {
    let mut r = ObjectReader::root(body).map_err(DomainError::invalid)?;
    let supplier = r.string("import_supplier_code", Required, StrRule::max(64));
    let external = r.string(
        "external_account_number",
        Required,
        StrRule::max(super::account::MAX_EXTERNAL_ACCOUNT_NUMBER),
    );
    let dry_run = r.boolean("dry_run", Optional);
    let operations_team_name = r.string(
        "operations_team_name",
        Optional,
        StrRule::max(super::operations_team::MAX_TEAM_NAME),
    );
    r.finish(|| {
        Some(ProcessRequest {
            supplier_code: supplier?,
            external_account_number: external?,
            dry_run: dry_run.unwrap_or(false),
            operations_team_name,
        })
    })
    .map_err(DomainError::invalid)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::domain::account::AccountLimits;
    use crate::domain::admin::Admin;
    use crate::domain::import_process::{ImportListing, TransferStatus};
    use crate::domain::ports::{AccountTarget, RuleFailure, RuleInput};
    use crate::store::SledStore;
    use futures_util::future::BoxFuture;
    use serde_json::json;

    pub(crate) fn account(external: &str) -> Value {
        json!({
            "import_supplier": "OLD_CO",
            "external_account_number": external,
            "billing_name": "Ada Lovelace",
            "billing_address": {"address_line_1": "1 Analytical St", "town": "London", "postcode": "N1 1AA", "country": "GB"},
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com"}]
        })
    }

    /// A store with supplier OLD_CO (30-day expiry window) and a key that sees it.
    pub(crate) async fn fixture() -> (tempfile::TempDir, Arc<dyn Store>, ApiKeyRecord, Imports) {
        let dir = tempfile::tempdir().expect("temp");
        let store: Arc<dyn Store> = Arc::new(SledStore::open(dir.path()).expect("store"));
        Admin::new(store.clone())
            .create_supplier(&json!({"code": "OLD_CO", "name": "Old", "document_root": "", "expiry_window_days": 30}))
            .await
            .expect("supplier");
        let key = ApiKeyRecord {
            id: "k".into(),
            organisation: "Org".into(),
            suppliers: vec!["OLD_CO".into()],
            key_digest: String::new(),
            created_at: Utc::now(),
            revoked_at: None,
        };
        let imports = Imports::new(store.clone(), AccountLimits { max_items: 100 });
        (dir, store, key, imports)
    }

    /// Rules whose account hook waits until the test lets it go, so that a `process` call is
    /// held in flight for as long as the test wants.
    struct HeldRules {
        entered: tokio::sync::Notify,
        release: tokio::sync::Notify,
    }

    impl SupplierRules for HeldRules {
        fn apply<'a>(
            &'a self,
            _supplier: &'a str,
            _hook: Hook,
            _target: Option<&'a AccountTarget>,
            _input: RuleInput<'a>,
        ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
            Box::pin(async {
                self.entered.notify_one();
                self.release.notified().await;
                Ok(None)
            })
        }
    }

    /// Rules that count their account checks and identify themselves as the test says.
    struct CountedRules {
        checks: std::sync::atomic::AtomicUsize,
        identity: std::sync::Mutex<Option<String>>,
    }

    impl CountedRules {
        fn checks(&self) -> usize {
            self.checks.load(std::sync::atomic::Ordering::SeqCst)
        }

        fn identify_as(&self, identity: Option<&str>) {
            *self.identity.lock().expect("identity") = identity.map(str::to_owned);
        }
    }

    impl SupplierRules for CountedRules {
        fn apply<'a>(
            &'a self,
            _supplier: &'a str,
            hook: Hook,
            _target: Option<&'a AccountTarget>,
            _input: RuleInput<'a>,
        ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
            if hook == Hook::ValidateAccount {
                self.checks
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Box::pin(async { Ok(None) })
        }

        fn identity(&self, _supplier: &str, _hook: Hook) -> Option<String> {
            self.identity.lock().expect("identity").clone()
        }
    }

    #[tokio::test]
    async fn a_migration_checks_the_account_again_only_if_the_rules_changed_since_staging() {
        let (_dir, store, key, _) = fixture().await;
        let rules = Arc::new(CountedRules {
            checks: Default::default(),
            identity: std::sync::Mutex::new(Some("plugin A".into())),
        });
        let imports = Imports::with_rules(store, AccountLimits { max_items: 100 }, rules.clone());
        let process = |external: &str| json!({"import_supplier_code": "OLD_CO", "external_account_number": external});
        for external in ["ACC-1", "ACC-2", "ACC-3"] {
            imports.stage(&key, account(external)).await.expect("stage");
        }
        assert_eq!(rules.checks(), 3);

        // The rules it was checked with at staging: no second check.
        imports
            .process(&key, &process("ACC-1"))
            .await
            .expect("migrated");
        assert_eq!(rules.checks(), 3);

        // Other rules now (a plugin replaced, another configuration): checked again.
        rules.identify_as(Some("plugin B"));
        imports
            .process(&key, &process("ACC-2"))
            .await
            .expect("migrated");
        assert_eq!(rules.checks(), 4);

        // Rules that cannot say what they are: always checked again.
        rules.identify_as(None);
        let dry = json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-3", "dry_run": true});
        assert!(matches!(
            imports.process(&key, &dry).await,
            Err(DomainError::DryRunWouldSucceed)
        ));
        assert_eq!(rules.checks(), 5);

        // Staged under rules that could not say (or by an earlier version: nothing recorded):
        // checked again.
        imports
            .stage(&key, account("ACC-3"))
            .await
            .expect("staged again");
        rules.identify_as(Some("plugin B"));
        imports
            .process(&key, &process("ACC-3"))
            .await
            .expect("migrated");
        assert_eq!(rules.checks(), 7);
    }

    #[tokio::test]
    async fn past_the_concurrency_limit_process_is_refused_until_a_place_frees() {
        let (_dir, store, key, staging) = fixture().await;
        for external in ["ACC-1", "ACC-2"] {
            staging.stage(&key, account(external)).await.expect("stage");
        }
        let rules = Arc::new(HeldRules {
            entered: tokio::sync::Notify::new(),
            release: tokio::sync::Notify::new(),
        });
        let imports = Imports::with_rules(store, AccountLimits { max_items: 100 }, rules.clone())
            .with_process_limit(1);
        let request = |external: &str| json!({"import_supplier_code": "OLD_CO", "external_account_number": external});
        let first = tokio::spawn({
            let (imports, key, body) = (imports.clone(), key.clone(), request("ACC-1"));
            async move { imports.process(&key, &body).await }
        });
        rules.entered.notified().await;
        // ACC-1 is being processed: a second account (or a dry run) has to wait its turn.
        for body in [
            request("ACC-2"),
            json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-2", "dry_run": true}),
        ] {
            let refused = imports.process(&key, &body).await;
            assert!(
                matches!(refused, Err(DomainError::ProcessConcurrencyLimit(1))),
                "{refused:?}"
            );
        }
        rules.release.notify_one();
        first.await.expect("joins").expect("ACC-1 is migrated");
        let second = tokio::spawn({
            let (imports, key, body) = (imports.clone(), key.clone(), request("ACC-2"));
            async move { imports.process(&key, &body).await }
        });
        rules.entered.notified().await;
        rules.release.notify_one();
        second
            .await
            .expect("joins")
            .expect("ACC-2 is migrated once a place is free");
    }

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

#[cfg(test)]
mod claim_tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn claimed_accounts_are_released_after_a_restart() {
        let (_dir, store, key, imports) = super::tests::fixture().await;
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
