//! Staging, validating and migrating accounts, and reading their import state.
//!
//! Every call is made on behalf of an API key: suppliers outside the key's scope answer
//! exactly as if they did not exist. Writes are durable before the call returns.
//!
//! One module per use case: `validate` and `stage` (v1, and v2's validation), `schedule`
//! (v2: staged with a migration to run in a window) and `run_scheduled` (running it),
//! `process` (one account migrated on request) and `dry_run`, `claim` and `migrate_claimed`
//! (what bulk and scheduled migrations do to the accounts they take), `status` (the reads
//! and lists) and `cancel_expired` (the expiry sweep). This one holds the service and what
//! they share: reading an account ([`Imports::read_with`]: the supplier it names, the
//! supplier's policy on unknown fields, its rules, the payment vendors), and the steps of
//! every migration (checking it again, making the platform account, recording a failure).

use super::account::{AccountLimits, AccountPayload, read_account};
use super::api_key::ApiKeyRecord;
use super::campaign::{Declared, Reconciliation};
use super::error::DomainError;
use super::events;
use super::import_process::{CheckedWith, ImportProcess, PlatformAccount};
use super::opening::{Outside, PreparedOpening};
use super::ports::{Hook, NoRules, SupplierRules};
use super::schedules::Scheduler;
use super::supplier::{NamedSupplier, Supplier};
use super::validation::{FieldError, FieldErrors, Reported, reading};
use crate::domain::storage::{ImportChange, Store};
use chrono::Utc;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::Semaphore;

mod cancel_expired;
mod claim;
mod dry_run;
mod migrate_claimed;
mod process;
mod run_scheduled;
mod schedule;
mod stage;
mod status;
mod validate;

pub use migrate_claimed::ClaimedMigration;
pub use process::ProcessRequest;
pub use status::{ListFilter, filtered};

/// An account as the supplier's rules answered it, what it was checked with, and what it
/// declared of its money before they did.
struct CheckedAccount {
    account: AccountPayload,
    checked_with: Option<CheckedWith>,
    declared: Reconciliation,
}

/// What a process records of a migration the storage refused (its own words are logged).
const STORAGE_FAILURE_DETAIL: &str =
    "A server error occurred while the account was migrated; migrate it again.";

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
        let declared = Reconciliation::opened(Declared::of(account.document()).as_ref());
        let account = self.apply_rules(account).await?;
        check_vendors(&account, self.outside.vendors.as_ref())?;
        Ok(Reported {
            value: (
                CheckedAccount {
                    account,
                    checked_with,
                    declared,
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

    /// Everything a migration of `process` checks before it keeps anything: the supplier's
    /// rules again if they may have changed, then the opening the account document carries,
    /// against the bucket and the payment vendors.
    async fn prepare(
        &self,
        process: &ImportProcess,
        supplier: &Supplier,
    ) -> Result<PreparedOpening, DomainError> {
        self.revalidate(process).await?;
        let declared = process.declared.clone().unwrap_or_else(|| {
            Reconciliation::opened(Declared::of(process.account.document()).as_ref())
        });
        super::opening::prepare(
            process.account.document(),
            declared,
            &supplier.document_root,
            &self.outside,
            self.store.as_ref(),
            Utc::now(),
        )
        .await
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
                    counts: opened.counts,
                    events,
                })
            })
            .await?;
        change.account.ok_or(DomainError::ImportProcessNotFound)
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::domain::admin::Admin;
    use crate::store::SledStore;
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
}
