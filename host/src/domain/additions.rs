//! Adding data to imported accounts: notes, transactions, historical statements and payment
//! instructions, and reading it all back for operators.
//!
//! Every request names its account by supplier code and external account number; only
//! imported accounts visible to the caller's API key qualify (anything else is
//! `account_not_found`), and the supplier's migration must be ongoing. Each request's records
//! are written in one transaction and flushed before the call returns.

use super::account::AccountLimits;
use super::api_key::ApiKeyRecord;
use super::documents::{INVALID_PATH_CODE, INVALID_PATH_DETAIL, document_key};
use super::error::{DomainError, TransactionFailure};
use super::events;
use super::import_process::{ImportState, PlatformAccount};
use super::ledger::{
    AccountSummary, LedgerEntry, Placement, Transaction, open_period_start, place, read_transaction,
};
use super::notes::{Note, NoteInput, NoteSource, NoteStatus, duplicate_of, note_key, read_notes};
use super::payment_instruction::{
    PaymentInstruction, PaymentInstructionInput, instruction_key, read_payment_instruction,
};
use super::ports::{
    AccountTarget, Documents, Hook, NoRules, PaymentVendors, SupplierRules, VendorError,
};
use super::statements::{Statement, read_statements};
use super::supplier::Supplier;
use super::supplier::unknown_fields_of;
use super::validation::{
    FieldError, FieldErrors, Items, ObjectReader, Optional, Reported, Required, StrRule,
    UnknownFields, reading,
};
use crate::store::{AccountTable, AccountTx, ChangeAccount, Store, StoreError};
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

pub const TRANSACTION_IMPORT_SUCCESS: &str = "TRANSACTION_IMPORT_SUCCESS";

/// Changes of this many records or more run off the async worker (see
/// `Additions::change_account_records`).
const LARGE_CHANGE_ITEMS: usize = 100;

/// The query options of the transactions endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransactionOptions {
    pub check_previously_added: bool,
    pub force_add_to_current_statement: bool,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        Self {
            check_previously_added: true,
            force_add_to_current_statement: true,
        }
    }
}

/// The answer for one posted note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteResult {
    pub created_at: DateTime<Utc>,
    pub body: Option<String>,
    pub external_id: Option<String>,
    pub status: NoteStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransactionStatus {
    TransactionAddedToAccount,
    TransactionAlreadyExists,
}

/// The answer for one posted transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct TransactionResult {
    pub status: TransactionStatus,
    pub transaction_data: Transaction,
}

/// The real platform's code for a statement the account already has.
pub const STATEMENT_EXISTS: &str = "historical_statement_already_exists";

/// Historical statements kept on an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedStatements {
    pub import_supplier: String,
    pub external_account_number: String,
    pub statements: Vec<Statement>,
}

/// Everything kept on an imported account.
#[derive(Debug, Clone)]
pub struct AccountView {
    pub platform_account_number: String,
    pub import_supplier: String,
    pub external_account_number: String,
    pub created_at: DateTime<Utc>,
    /// The account as migrated.
    pub account: super::account::AccountPayload,
    pub open_statement_period_start: NaiveDate,
    /// The operations team the account was allocated to, if any.
    pub operations_team_name: Option<String>,
    /// What the customer owes (negative: in credit).
    pub balance: super::money::Money,
    pub notes: Vec<Note>,
    pub transactions: Vec<Transaction>,
    pub ledger_entries: Vec<LedgerEntry>,
    pub statements: Vec<Statement>,
    pub payment_instructions: Vec<PaymentInstruction>,
}

/// Each transaction read, with the JSON it was read from (for the error body).
type PostedTransactions = Vec<(Transaction, Value)>;

/// The account a request adds to.
pub(crate) struct Target {
    pub(crate) supplier: Supplier,
    pub(crate) account: PlatformAccount,
}

#[derive(Clone)]
pub struct Additions {
    pub(crate) store: Arc<dyn Store>,
    documents: Arc<dyn Documents>,
    vendors: Arc<dyn PaymentVendors>,
    rules: Arc<dyn SupplierRules>,
    limits: AccountLimits,
}

impl std::fmt::Debug for Additions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Additions")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

pub(crate) fn record<T: DeserializeOwned>(value: Value) -> Result<T, DomainError> {
    serde_json::from_value(value).map_err(|source| {
        DomainError::Store(StoreError::Corrupt {
            key: "account record".into(),
            source,
        })
    })
}

pub(crate) fn to_record<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn summary(tx: &dyn AccountTx) -> Result<AccountSummary, DomainError> {
    tx.get(AccountTable::Summary, "")?
        .map(record)
        .transpose()
        .map(Option::unwrap_or_default)
}

/// The account a transactions body names (see [`super::request_document::AccountReference`]):
/// `external_account_number` or its deprecated name `account_number`; when both are given,
/// `external_account_number` wins.
fn read_reference_or_deprecated(r: &mut ObjectReader<'_>) -> (Option<String>, Option<String>) {
    let supplier = r.string("import_supplier", Required, StrRule::max(64));
    let rule = StrRule::max(super::account::MAX_EXTERNAL_ACCOUNT_NUMBER);
    let deprecated = r.string("account_number", Optional, rule);
    let external = if r.has("external_account_number") || !r.has("account_number") {
        let external = r.string("external_account_number", Optional, rule);
        if !r.has("external_account_number") {
            // The real platform's request-level rule (a `non_field_errors` there).
            r.object_error(
                "account_number_or_external_account_number_required",
                "Either account_number or external_account_number must be provided.",
            );
        }
        external
    } else {
        deprecated
    };
    (supplier, external)
}

/// Adds a note unless the account already has it (see `notes`).
fn add_note(
    tx: &dyn AccountTx,
    input: &NoteInput,
    source: NoteSource,
    now: DateTime<Utc>,
) -> Result<NoteResult, DomainError> {
    let content = note_key(input);
    let mut existing: Vec<DateTime<Utc>> = tx
        .get(AccountTable::NoteIndex, &content)?
        .map(record)
        .transpose()?
        .unwrap_or_default();
    if let Some(at) = duplicate_of(&existing, input) {
        return Ok(NoteResult {
            created_at: at,
            body: input.body.clone(),
            external_id: input.external_id.clone(),
            status: NoteStatus::NoteAlreadyExists,
        });
    }
    let created_at = input.created_at.unwrap_or(now);
    let note = Note {
        id: tx.next_id()?,
        body: input.body.clone(),
        document_paths: input.document_paths.clone(),
        created_at,
        is_pinned: input.is_pinned,
        unpin_at: input.unpin_at,
        source,
        external_id: input.external_id.clone(),
        is_archived: input.is_archived,
    };
    tx.put(
        AccountTable::Notes,
        &format!("{:020}", note.id),
        &to_record(&note),
    )?;
    existing.push(created_at);
    tx.put(AccountTable::NoteIndex, &content, &to_record(&existing))?;
    Ok(NoteResult {
        created_at,
        body: note.body,
        external_id: note.external_id,
        status: NoteStatus::NoteCreationSuccess,
    })
}

fn transaction_failure(
    index: usize,
    posted: &Value,
    field: &str,
    code: &str,
    detail: String,
) -> DomainError {
    let attr = format!("transactions.{index}.{field}");
    DomainError::TransactionImport(Box::new(TransactionFailure {
        code: code.to_owned(),
        detail: format!("{attr}: {detail}"),
        errors: FieldErrors::single(FieldError::new(attr, code, detail)),
        transaction_data: posted.clone(),
    }))
}

impl Additions {
    pub fn new(
        store: Arc<dyn Store>,
        documents: Arc<dyn Documents>,
        vendors: Arc<dyn PaymentVendors>,
        limits: AccountLimits,
    ) -> Self {
        Self {
            store,
            documents,
            vendors,
            rules: Arc::new(NoRules),
            limits,
        }
    }

    /// The same, with the suppliers' rules (their plugins) applied to every request.
    pub fn with_rules(mut self, rules: Arc<dyn SupplierRules>) -> Self {
        self.rules = rules;
        self
    }

    /// The store's atomic change of an account's records; for a change of `items` records
    /// or more, off the async worker (see [`blocking`](super::blocking)): a large batch
    /// holds sled's lock for milliseconds, while for a small one handing the worker's tasks
    /// to another thread costs more than it saves.
    fn change_account_records(
        &self,
        number: &str,
        items: usize,
        change: &mut ChangeAccount<'_>,
    ) -> Result<(), DomainError> {
        if items >= LARGE_CHANGE_ITEMS {
            super::blocking::blocking(|| self.store.change_account_records(number, change))
        } else {
            self.store.change_account_records(number, change)
        }
    }

    /// The bounds of a request's list of items: none needed (as on the real platform, whose
    /// lists of notes, transactions and statements have no least size), at most the limit.
    fn items(&self) -> Items {
        Items {
            min: 0,
            max: self.limits.max_items,
        }
    }

    /// The imported account `(supplier, external)` if the key may see it and its supplier's
    /// migration is ongoing.
    pub(crate) fn target(
        &self,
        key: &ApiKeyRecord,
        supplier: &str,
        external: &str,
    ) -> Result<Target, DomainError> {
        let target = self.imported_account(key, supplier, external)?;
        target.supplier.ensure_ongoing()?;
        Ok(target)
    }

    /// The imported account `(supplier, external)` if the key may see it (reads work whatever
    /// the supplier's status).
    pub(crate) fn imported_account(
        &self,
        key: &ApiKeyRecord,
        supplier: &str,
        external: &str,
    ) -> Result<Target, DomainError> {
        if !key.can_see(supplier) {
            return Err(DomainError::AccountNotFound);
        }
        let supplier = self
            .store
            .supplier(supplier)?
            .ok_or(DomainError::AccountNotFound)?;
        let process = self
            .store
            .import_process(&supplier.code, external)?
            .ok_or(DomainError::AccountNotFound)?;
        let number = process
            .platform_account_number
            .filter(|_| process.state == ImportState::Processed)
            .ok_or(DomainError::AccountNotFound)?;
        let account = self
            .store
            .account(&number)?
            .ok_or(DomainError::AccountNotFound)?;
        Ok(Target { supplier, account })
    }

    /// Checks that `path` exists under the supplier's root; records an error at `attr` if not.
    async fn check_document(
        &self,
        supplier: &Supplier,
        path: &str,
        attr: String,
        errors: &mut FieldErrors,
    ) -> Result<(), DomainError> {
        let Ok(key) = document_key(&supplier.document_root, path) else {
            errors.push(FieldError::new(
                attr,
                INVALID_PATH_CODE,
                INVALID_PATH_DETAIL,
            ));
            return Ok(());
        };
        let exists = self
            .documents
            .exists(&key)
            .await
            .map_err(|error| DomainError::DocumentStore(error.to_string()))?;
        if !exists {
            errors.push(FieldError::new(
                attr,
                "path_does_not_exist_in_file_store",
                format!("No document at {path} in the supplier's document store."),
            ));
        }
        Ok(())
    }

    /// The supplier's `hook` rules applied to the `field` array of `body` (or, without a
    /// field, to the payment instruction's own fields): the body to read again, or `None`
    /// when the supplier has no such rules.
    async fn apply_rules(
        &self,
        target: &Target,
        hook: Hook,
        body: &Value,
        field: Option<&str>,
    ) -> Result<Option<Value>, DomainError> {
        let input = match field {
            Some(field) => body.get(field).cloned().unwrap_or(Value::Null),
            None => body.clone(),
        };
        let account = AccountTarget {
            import_supplier: target.supplier.code.clone(),
            external_account_number: target.account.external_account_number.clone(),
            platform_account_number: target.account.number.clone(),
        };
        let mapped = super::rules::apply(
            self.rules.as_ref(),
            &target.supplier.code,
            hook,
            Some(&account),
            input,
            DomainError::invalid,
        )
        .await?;
        Ok(mapped.map(|mapped| match field {
            Some(field) => {
                let mut body = body.clone();
                body[field] = mapped;
                body
            }
            None => {
                let mut body = body.clone();
                for key in ["vendor", "reference", "type"] {
                    body[key] = mapped.get(key).cloned().unwrap_or(Value::Null);
                }
                body
            }
        }))
    }

    /// What `body`'s supplier does with unknown fields.
    fn policy(&self, key: &ApiKeyRecord, body: &Value) -> Result<UnknownFields, DomainError> {
        Ok(unknown_fields_of(
            self.store.as_ref(),
            key,
            body,
            "import_supplier",
        )?)
    }

    fn parse_notes(&self, body: &Value) -> Result<(String, String, Vec<NoteInput>), DomainError> {
        let posted = read_notes(body, self.limits.max_items).map_err(DomainError::invalid)?;
        let external = posted.account.external_account_number().to_owned();
        Ok((posted.account.import_supplier, external, posted.notes))
    }

    pub async fn add_notes(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<Vec<NoteResult>>, DomainError> {
        let now = Utc::now();
        let policy = self.policy(key, body)?;
        let (parsed, ignored) = reading(policy, || self.parse_notes(body));
        let (supplier, external, mut notes) = parsed?;
        let target = self.target(key, &supplier, &external)?;
        if let Some(mapped) = self
            .apply_rules(&target, Hook::MapNotes, body, Some("notes"))
            .await?
        {
            notes = reading(policy, || self.parse_notes(&mapped)).0?.2;
        }
        let mut errors = FieldErrors::default();
        for (i, note) in notes.iter().enumerate() {
            for (j, path) in note.document_paths.iter().enumerate() {
                let attr = format!("notes.{i}.document_paths.{j}.document_path");
                self.check_document(&target.supplier, path, attr, &mut errors)
                    .await?;
            }
        }
        if !errors.is_empty() {
            return Err(DomainError::invalid(errors));
        }
        let mut results = Vec::new();
        self.change_account_records(&target.account.number, notes.len(), &mut |tx| {
            results.clear();
            for note in &notes {
                results.push(add_note(tx, note, NoteSource::Import, now)?);
            }
            Ok(())
        })?;
        self.store.flush().await?;
        Ok(Reported {
            value: results,
            ignored,
        })
    }

    /// Reads the envelope and every transaction; the first failing transaction fails all.
    fn parse_transactions(
        &self,
        body: &Value,
        today: NaiveDate,
    ) -> Result<(String, String, PostedTransactions, bool), DomainError> {
        let mut r = ObjectReader::root(body).map_err(DomainError::invalid)?;
        let (supplier, external) = read_reference_or_deprecated(&mut r);
        let dry_run = r.boolean("dry_run", Optional).unwrap_or(false);
        // As on the real platform, `transactions` may be left out or empty (nothing to add).
        let posted = r.array("transactions", Optional, self.items());
        let (supplier, external, posted) = r
            .finish(|| Some((supplier?, external?, posted)))
            .map_err(DomainError::invalid)?;
        let posted = posted.map(Vec::as_slice).unwrap_or_default();
        let mut transactions = Vec::with_capacity(posted.len());
        let mut seen = HashSet::new();
        for (index, value) in posted.iter().enumerate() {
            let path = format!("transactions.{index}");
            let read = read_transaction(value, &path, self.limits.max_items, today);
            let transaction = read.map_err(|errors| {
                let first = errors.0.first().cloned();
                DomainError::TransactionImport(Box::new(TransactionFailure {
                    code: first
                        .as_ref()
                        .map_or_else(|| "invalid".to_owned(), |e| e.code.clone()),
                    detail: first.map_or_else(String::new, |e| {
                        format!("{}: {}", e.attr.unwrap_or_default(), e.detail)
                    }),
                    errors,
                    transaction_data: value.clone(),
                }))
            })?;
            if !seen.insert(transaction.transaction_id.clone()) {
                return Err(transaction_failure(
                    index,
                    value,
                    "transaction_id",
                    "duplicate_transaction_ids",
                    format!(
                        "Transaction id {} appears more than once in this request.",
                        transaction.transaction_id
                    ),
                ));
            }
            transactions.push((transaction, value.clone()));
        }
        Ok((supplier, external, transactions, dry_run))
    }

    pub async fn add_transactions(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
        options: TransactionOptions,
    ) -> Result<Reported<Vec<TransactionResult>>, DomainError> {
        let now = Utc::now();
        let policy = self.policy(key, body)?;
        let (parsed, ignored) = reading(policy, || self.parse_transactions(body, now.date_naive()));
        let (supplier, external, mut transactions, dry_run) = parsed?;
        let target = self.target(key, &supplier, &external)?;
        if let Some(mapped) = self
            .apply_rules(&target, Hook::MapTransactions, body, Some("transactions"))
            .await?
        {
            transactions = reading(policy, || {
                self.parse_transactions(&mapped, now.date_naive())
            })
            .0?
            .2;
        }

        let account_start = target
            .account
            .data
            .open_statement_period_start()
            .unwrap_or_else(|| target.account.created_at.date_naive());
        let mut results = Vec::new();
        let items = transactions.len();
        let written = self.change_account_records(&target.account.number, items, &mut |tx| {
            results.clear();
            let mut summary = summary(tx)?;
            let start = open_period_start(account_start, summary.latest_statement_to);
            let mut moved = Vec::new();
            for (index, (transaction, value)) in transactions.iter().enumerate() {
                if let Some(existing) = tx.get(AccountTable::Transactions, &transaction.transaction_id)? {
                    if !options.check_previously_added {
                        return Err(transaction_failure(
                            index,
                            value,
                            "transaction_id",
                            "duplicate_transaction_ids",
                            "This transaction was already added to the account.".to_owned(),
                        ));
                    }
                    results.push(TransactionResult {
                        status: TransactionStatus::TransactionAlreadyExists,
                        transaction_data: record(existing)?,
                    });
                    continue;
                }
                let mut kept = transaction.clone();
                match place(transaction.transaction_date, start, options.force_add_to_current_statement) {
                    Placement::AsDated => {}
                    Placement::Moved { to, description } => {
                        kept.original_transaction_date = Some(kept.transaction_date);
                        kept.transaction_date = to;
                        kept.description = Some(description);
                        moved.push(kept.transaction_id.clone());
                    }
                    Placement::Refused => {
                        return Err(transaction_failure(
                            index,
                            value,
                            "transaction_date",
                            "transaction_outside_open_statement_period",
                            format!("The transaction is dated before the open statement period, which starts {start}."),
                        ));
                    }
                }
                let Some(balance_after) = summary.post(kept.kind, kept.amount) else {
                    return Err(transaction_failure(
                        index,
                        value,
                        "amount",
                        "balance_out_of_range",
                        "Adding this amount would take the account's balance out of the range of amounts that can be held.".to_owned(),
                    ));
                };
                let entry = LedgerEntry {
                    id: tx.next_id()?,
                    transaction_id: kept.transaction_id.clone(),
                    kind: kept.kind,
                    amount: kept.amount,
                    balance_after,
                    transaction_date: kept.transaction_date,
                    posted_at: now,
                };
                kept.status = Some(TRANSACTION_IMPORT_SUCCESS.to_owned());
                kept.ledger_entry_id = Some(entry.id);
                tx.publish(&events::ledger_entry_posted(&target.account.number, &entry)?)?;
                tx.put(AccountTable::Transactions, &kept.transaction_id, &to_record(&kept))?;
                tx.put(AccountTable::LedgerEntries, &format!("{:020}", entry.id), &to_record(&entry))?;
                results.push(TransactionResult {
                    status: TransactionStatus::TransactionAddedToAccount,
                    transaction_data: kept,
                });
            }
            if !moved.is_empty() {
                let note = NoteInput {
                    body: Some(format!(
                        "Imported transactions dated before the open statement period (which starts {start}) were moved to its first day: {}.",
                        moved.join(", ")
                    )),
                    document_paths: Vec::new(),
                    created_at: None,
                    is_pinned: true,
                    unpin_at: None,
                    external_id: None,
                    is_archived: false,
                };
                add_note(tx, &note, NoteSource::System, now)?;
            }
            tx.put(AccountTable::Summary, "", &to_record(&summary))?;
            // A dry run goes through everything and is rolled back here: the answer is the
            // real one, and nothing is kept.
            if dry_run {
                return Err(DomainError::DryRunWouldSucceed);
            }
            Ok(())
        });
        match written {
            Ok(()) => self.store.flush().await?,
            Err(DomainError::DryRunWouldSucceed) if dry_run => {}
            Err(error) => return Err(error),
        }
        Ok(Reported {
            value: results,
            ignored,
        })
    }

    fn parse_statements(
        &self,
        body: &Value,
    ) -> Result<(String, String, Vec<Statement>), DomainError> {
        let posted = read_statements(body, self.limits.max_items).map_err(DomainError::invalid)?;
        let external = posted.account.external_account_number().to_owned();
        let statements = posted.statements.into_iter().map(Statement::from).collect();
        Ok((posted.account.import_supplier, external, statements))
    }

    pub async fn add_statements(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<AddedStatements>, DomainError> {
        let policy = self.policy(key, body)?;
        let (parsed, ignored) = reading(policy, || self.parse_statements(body));
        let (supplier, external, mut statements) = parsed?;
        let target = self.target(key, &supplier, &external)?;
        if let Some(mapped) = self
            .apply_rules(&target, Hook::MapStatements, body, Some("statements"))
            .await?
        {
            statements = reading(policy, || self.parse_statements(&mapped)).0?.2;
        }
        let mut errors = FieldErrors::default();
        for (index, statement) in statements.iter().enumerate() {
            if let Some(path) = &statement.statement_path {
                let attr = format!("statements.{index}.statement_path");
                self.check_document(&target.supplier, path, attr, &mut errors)
                    .await?;
            }
        }
        if !errors.is_empty() {
            return Err(DomainError::invalid(errors));
        }
        self.store
            .change_account_records(&target.account.number, &mut |tx| {
                // As on the real platform, a statement the account already has (or one sent
                // twice) refuses the whole request.
                let mut errors = FieldErrors::default();
                let mut seen = std::collections::HashSet::new();
                for (index, statement) in statements.iter().enumerate() {
                    let id = statement.statement_id.as_str();
                    if !seen.insert(id) || tx.get(AccountTable::Statements, id)?.is_some() {
                        errors.push(FieldError::new(
                            format!("statements.{index}.statement_id"),
                            STATEMENT_EXISTS,
                            format!("The account already has a historical statement {id:?}."),
                        ));
                    }
                }
                if !errors.is_empty() {
                    return Err(DomainError::Invalid {
                        code: STATEMENT_EXISTS,
                        detail: "Historical statements already exist on the account.",
                        errors,
                    });
                }
                let mut summary = summary(tx)?;
                for statement in &statements {
                    tx.put(
                        AccountTable::Statements,
                        &statement.statement_id,
                        &to_record(statement),
                    )?;
                    let to = statement.bill_period_to_date;
                    summary.latest_statement_to = Some(
                        summary
                            .latest_statement_to
                            .map_or(to, |latest| latest.max(to)),
                    );
                }
                tx.put(AccountTable::Summary, "", &to_record(&summary))?;
                Ok(())
            })?;
        self.store.flush().await?;
        Ok(Reported {
            value: AddedStatements {
                import_supplier: supplier,
                external_account_number: external,
                statements,
            },
            ignored,
        })
    }

    fn parse_payment_instruction(
        &self,
        body: &Value,
    ) -> Result<(String, String, PaymentInstructionInput), DomainError> {
        let posted =
            read_payment_instruction(body, self.limits.max_items, |code| self.vendors.knows(code))
                .map_err(DomainError::invalid)?;
        let external = posted.account.external_account_number().to_owned();
        Ok((
            posted.account.import_supplier.clone(),
            external,
            posted.instruction(),
        ))
    }

    /// Confirms the instruction with its vendor and keeps it; returns the platform account
    /// number and the reference kept. Sending the same instruction again is harmless.
    pub async fn add_payment_instruction(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<(String, String)>, DomainError> {
        let policy = self.policy(key, body)?;
        let (parsed, ignored) = reading(policy, || self.parse_payment_instruction(body));
        let (supplier, external, mut input) = parsed?;
        let target = self.target(key, &supplier, &external)?;
        // A plugin's record has `reference` only: it sees the deprecated `instruction_reference`
        // under that name.
        let mut for_rules = body.clone();
        if let Some(object) = for_rules.as_object_mut()
            && !object.contains_key("reference")
            && let Some(reference) = object.remove("instruction_reference")
        {
            object.insert("reference".to_owned(), reference);
        }
        if let Some(mapped) = self
            .apply_rules(&target, Hook::MapPaymentInstruction, &for_rules, None)
            .await?
        {
            input = reading(policy, || self.parse_payment_instruction(&mapped))
                .0?
                .2;
        }
        let PaymentInstructionInput {
            vendor,
            reference,
            kind,
            terms,
        } = input;
        let number = target.account.number.clone();
        let record_key = instruction_key(&vendor, &reference);

        let mut known = false;
        self.store.change_account_records(&number, &mut |tx| {
            known = tx
                .get(AccountTable::PaymentInstructions, &record_key)?
                .is_some();
            Ok(())
        })?;
        if known {
            return Ok(Reported {
                value: (number, reference),
                ignored,
            });
        }
        let details = self
            .vendors
            .fetch_instruction(&vendor, &reference)
            .await
            .map_err(|error| match error {
                VendorError::NotFound => DomainError::VendorRejected {
                    code: "payment_instruction_not_found",
                    detail: format!(
                        "{vendor} has no payment instruction with reference {reference}."
                    ),
                },
                VendorError::Refused { status } => DomainError::VendorRejected {
                    code: "payment_vendor_refused",
                    detail: format!("{vendor} refused to confirm the instruction (HTTP {status})."),
                },
                VendorError::Unavailable(reason) => DomainError::VendorUnavailable(reason),
            })?;
        let instruction = PaymentInstruction {
            vendor,
            reference: reference.clone(),
            kind,
            details,
            added_at: Utc::now(),
            terms,
        };
        self.store.change_account_records(&number, &mut |tx| {
            if tx
                .get(AccountTable::PaymentInstructions, &record_key)?
                .is_none()
            {
                tx.put(
                    AccountTable::PaymentInstructions,
                    &record_key,
                    &to_record(&instruction),
                )?;
                tx.publish(&events::payment_method_new(&number, &instruction)?)?;
            }
            Ok(())
        })?;
        self.store.flush().await?;
        Ok(Reported {
            value: (number, reference),
            ignored,
        })
    }

    pub(crate) fn records<T: DeserializeOwned>(
        &self,
        number: &str,
        table: AccountTable,
    ) -> Result<Vec<T>, DomainError> {
        self.store
            .account_records(number, table)?
            .into_iter()
            .map(record)
            .collect()
    }

    /// Everything on the platform account `number` (operators).
    pub fn account_view(&self, number: &str) -> Result<AccountView, DomainError> {
        let account = self
            .store
            .account(number)?
            .ok_or(DomainError::AccountNotFound)?;
        let summary: AccountSummary = self
            .records(number, AccountTable::Summary)?
            .into_iter()
            .next()
            .unwrap_or_default();
        let account_start = account
            .data
            .open_statement_period_start()
            .unwrap_or_else(|| account.created_at.date_naive());
        let mut transactions: Vec<Transaction> =
            self.records(number, AccountTable::Transactions)?;
        transactions.sort_by_key(|t| t.ledger_entry_id);
        Ok(AccountView {
            platform_account_number: account.number.clone(),
            import_supplier: account.supplier_code.clone(),
            external_account_number: account.external_account_number.clone(),
            created_at: account.created_at,
            operations_team_name: account.operations_team_name.clone(),
            open_statement_period_start: open_period_start(
                account_start,
                summary.latest_statement_to,
            ),
            balance: summary.balance,
            notes: self.records(number, AccountTable::Notes)?,
            transactions,
            ledger_entries: self.records(number, AccountTable::LedgerEntries)?,
            statements: self.records(number, AccountTable::Statements)?,
            payment_instructions: self.records(number, AccountTable::PaymentInstructions)?,
            account: account.data,
        })
    }
}
