//! What a migration opens an account with: everything its document carries.
//!
//! [`prepare`] reads the account document once more: its ledgers (checked by
//! [`super::account_ledger`]), its `statements`, `notes` and `payment_instructions`. What lives
//! outside Ferry is checked before anything is kept, as each data-adding endpoint checks it:
//! every document path is in the supplier's bucket (`historical-statements/create/`,
//! `notes/create/`), every payment instruction is confirmed by its vendor
//! (`payment-instruction/create/`), or recorded pending when the document says it is valid only
//! from a day still to come. Nothing is written, so a dry run prepares too.
//!
//! [`PreparedOpening::open`] then makes the records under the new account's number: each
//! transaction posted with its ledger entry and `billing.ledger.entry_posted` event, as
//! `transactions/create/` posts them, the historical ones on the ledger's initial closed
//! statement and the balance ending at `transfer_balance`; the statements, which close the
//! account through their last day as `historical-statements/create/` does; the notes,
//! deduplicated as `notes/create/` does; the instructions with their
//! `payments.payment_method.new` events. The store keeps them in the change that creates the
//! account ([`AccountOpening`]): all of it, or none.

use super::account_ledger::{DeclaredLedgers, read_ledgers};
use super::campaign::{Counts, Reconciliation, RecordCounts, reconcile};
use super::error::DomainError;
use super::events::{self, Event};
use super::ledger::{ClosedStatement, kept_with_entry};
use super::notes::{Note, NoteInput, NoteSource, duplicate_of, note_key};
use super::payment_instruction::{DocumentInstruction, PaymentInstruction, confirm_with_vendor};
use super::ports::{Documents, PaymentVendors};
use super::request_document::elements;
use super::statements::{Statement, document_statements};
use super::storage::{AccountOpening, Store};
use super::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The world outside Ferry that an opening is checked against: the supplier documents' bucket
/// and the payment vendors.
#[derive(Clone)]
pub struct Outside {
    pub documents: std::sync::Arc<dyn Documents>,
    pub vendors: std::sync::Arc<dyn PaymentVendors>,
}

impl Default for Outside {
    /// No bucket and no vendors: an opening with documents or instructions is refused.
    fn default() -> Self {
        Self {
            documents: std::sync::Arc::new(super::ports::NoDocuments),
            vendors: std::sync::Arc::new(super::ports::NoVendors),
        }
    }
}

impl std::fmt::Debug for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outside").finish_non_exhaustive()
    }
}

/// An account's opening, checked and ready to be made under any account number.
#[derive(Debug, Clone)]
pub struct PreparedOpening {
    ledgers: DeclaredLedgers,
    statements: Vec<Statement>,
    notes: Vec<NoteInput>,
    instructions: Vec<PaymentInstruction>,
    /// New ids: one per posted transaction and per note.
    ids: Vec<u64>,
    /// What the supplier declared, kept with the ledger.
    declared: Reconciliation,
}

/// An opening made under an account number: the records, the events that describe them, and
/// how they move the supplier's counters.
#[derive(Debug, Clone)]
pub struct OpenedAccount {
    pub opening: AccountOpening,
    pub events: Vec<Event>,
    pub counts: Counts,
}

/// Reads the opening of account `document` of the supplier whose documents are under
/// `document_root`, and checks it against the world outside (see the module's doc), as of
/// `now`; `declared` is what the supplier declared of its money. A refusal names what is at
/// fault at its dot path in the document.
pub async fn prepare(
    document: &Map<String, Value>,
    declared: Reconciliation,
    document_root: &str,
    outside: &Outside,
    store: &dyn Store,
    now: DateTime<Utc>,
) -> Result<PreparedOpening, DomainError> {
    let today = now.date_naive();
    let ledgers = read_ledgers(document, today, &FieldErrors::default())
        .map_err(|errors| DomainError::account_invalid(or_unreadable(errors)))?;
    let unreadable = |error: serde_json::Error| {
        DomainError::account_invalid(FieldErrors::single(FieldError::new(
            None,
            "invalid",
            format!("The account document could not be read: {error}"),
        )))
    };
    let statements = document_statements(document).map_err(unreadable)?;
    let notes = elements(document, "notes")
        .iter()
        .map(NoteInput::deserialize)
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    let instructions = elements(document, "payment_instructions")
        .iter()
        .map(DocumentInstruction::deserialize)
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;

    let mut errors = FieldErrors::default();
    let documents = outside.documents.as_ref();
    for (index, statement) in statements.iter().enumerate() {
        if let Some(path) = &statement.statement_path {
            let attr = format!("statements.{index}.statement_path");
            super::documents::check_document(documents, document_root, path, attr, &mut errors)
                .await?;
        }
    }
    for (i, note) in notes.iter().enumerate() {
        for (j, path) in note.document_paths.iter().enumerate() {
            let attr = format!("notes.{i}.document_paths.{j}.document_path");
            super::documents::check_document(documents, document_root, path, attr, &mut errors)
                .await?;
        }
    }
    let instructions = confirm_instructions(instructions, outside, now, &mut errors).await?;
    if !errors.is_empty() {
        return Err(DomainError::account_invalid(errors));
    }
    let postings: usize = ledgers
        .ledgers
        .iter()
        .map(|ledger| ledger.postings().count())
        .sum();
    let ids = store.new_ids(postings + notes.len()).await?;
    Ok(PreparedOpening {
        ledgers,
        statements,
        notes,
        instructions,
        ids,
        declared,
    })
}

/// The document's instructions, each once, confirmed by its vendor or recorded pending; a
/// vendor that is not configured, or that refuses an instruction, is an error at its path.
async fn confirm_instructions(
    instructions: Vec<DocumentInstruction>,
    outside: &Outside,
    now: DateTime<Utc>,
    errors: &mut FieldErrors,
) -> Result<Vec<PaymentInstruction>, DomainError> {
    let mut kept = Vec::with_capacity(instructions.len());
    let mut seen = HashSet::new();
    for (index, instruction) in instructions.into_iter().enumerate() {
        let vendor = instruction.vendor.to_uppercase();
        if !outside.vendors.knows(&vendor) {
            errors.push(FieldError::new(
                format!("payment_instructions.{index}.vendor"),
                "invalid_choice",
                format!("\"{vendor}\" is not a configured payment vendor."),
            ));
            continue;
        }
        if !seen.insert((vendor.clone(), instruction.reference.clone())) {
            continue;
        }
        let pending = instruction.is_pending(now.date_naive());
        let details = if pending {
            Value::Object(Map::new())
        } else {
            match confirm_with_vendor(outside.vendors.as_ref(), &vendor, &instruction.reference)
                .await
            {
                Ok(details) => details,
                Err(DomainError::VendorRejected { code, detail }) => {
                    errors.push(FieldError::new(
                        format!("payment_instructions.{index}.reference"),
                        code,
                        detail,
                    ));
                    continue;
                }
                Err(other) => return Err(other),
            }
        };
        kept.push(PaymentInstruction {
            vendor,
            reference: instruction.reference,
            kind: instruction.kind,
            details,
            added_at: now,
            pending,
            terms: instruction.terms,
        });
    }
    Ok(kept)
}

/// `errors`, or, when a ledger could not be read without one being named, an error saying so.
fn or_unreadable(errors: FieldErrors) -> FieldErrors {
    if errors.is_empty() {
        FieldErrors::single(FieldError::new(
            None,
            "invalid",
            "The account document's ledger could not be read.",
        ))
    } else {
        errors
    }
}

impl PreparedOpening {
    /// The records under account `number`, posted at `now`, and their events.
    pub fn open(&self, number: &str, now: DateTime<Utc>) -> Result<OpenedAccount, DomainError> {
        let mut opening = AccountOpening::default();
        let mut events = Vec::new();
        let mut ids = self.ids.iter().copied();
        let mut next_id = || {
            ids.next().ok_or_else(|| {
                DomainError::Store(super::storage::StoreError::Backend(
                    "fewer ids were reserved than the opening needs".into(),
                ))
            })
        };
        let summary = &mut opening.summary;
        for ledger in &self.ledgers.ledgers {
            let historical = ledger.historical.len();
            for (index, transaction) in ledger.postings().enumerate() {
                let Some(balance_after) = summary.post(transaction.kind, transaction.amount) else {
                    return Err(balance_out_of_range());
                };
                let mut kept = transaction.clone();
                kept.historical = index < historical;
                kept.ledger.clone_from(&ledger.name);
                let (kept, entry) = kept_with_entry(kept, next_id()?, balance_after, now);
                events.push(events::ledger_entry_posted(number, &entry));
                opening.transactions.push(kept);
                opening.ledger_entries.push(entry);
            }
            if let Some(closing) = ledger.closed {
                let on_it = ledger
                    .historical
                    .iter()
                    .filter(|t| !super::account_ledger::is_prepay(t));
                summary.closed_statements.push(ClosedStatement {
                    ledger: ledger.name.clone(),
                    first_transaction_date: on_it.clone().map(|t| t.transaction_date).min(),
                    closing_date: closing.closing_date,
                    issued_date: closing.issued_date,
                    closing_balance: ledger.last_statement_balance,
                    transactions: on_it.count(),
                });
                summary.closed_through(closing.closing_date);
            }
        }
        if summary.balance != self.ledgers.transfer_balance {
            // The document's rules make it so; a ledger that says otherwise is not opened.
            return Err(DomainError::account_invalid(FieldErrors::single(
                FieldError::new(
                    "transfer_balance".to_owned(),
                    "balance_mismatch_on_transfer_balance",
                    format!(
                        "The account's transactions come to {}, not the transfer balance {}.",
                        summary.balance, self.ledgers.transfer_balance
                    ),
                ),
            )));
        }
        for statement in &self.statements {
            summary.closed_through(statement.bill_period_to_date);
        }
        opening.statements.clone_from(&self.statements);
        for input in &self.notes {
            let key = note_key(input);
            let dates = opening.note_keys.entry(key).or_default();
            if duplicate_of(dates, input).is_some() {
                continue;
            }
            let created_at = input.created_at.unwrap_or(now);
            dates.push(created_at);
            opening
                .notes
                .push(Note::new(next_id()?, input, NoteSource::Import, created_at));
        }
        for instruction in &self.instructions {
            events.push(events::payment_method_new(number, instruction)?);
        }
        opening.payment_instructions.clone_from(&self.instructions);
        opening.summary.reconciliation = Some(self.declared.clone());
        let mut counts = Counts::of_records(RecordCounts {
            notes: opening.notes.len(),
            transactions: opening.transactions.len(),
            statements: opening.statements.len(),
            payment_instructions: opening.payment_instructions.len(),
        });
        counts.add_all(&Counts::of_reconciliation(&reconcile(
            &opening.summary,
            || None,
        )));
        Ok(OpenedAccount {
            opening,
            events,
            counts,
        })
    }
}

fn balance_out_of_range() -> DomainError {
    DomainError::account_invalid(FieldErrors::single(FieldError::new(
        "transfer_balance".to_owned(),
        "balance_out_of_range",
        "The account's transactions take its balance out of the range of amounts that can be held.",
    )))
}
