//! `transactions/create/`: a batch of transactions posted to the account's ledger, all or
//! none.

use super::add_notes::add_note;
use super::{Additions, Request};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::campaign::{Counts, Declared, Reconciliation, counter, reconcile};
use crate::domain::error::{DomainError, TransactionFailure};
use crate::domain::events;
pub use crate::domain::ledger::TransactionOptions;
use crate::domain::ledger::{
    Posting, PostingRefusal, Transaction, kept_with_entry, open_period_start, post_batch,
    read_transactions, transaction_index,
};
use crate::domain::notes::{NoteInput, NoteSource, NoteStatus};
use crate::domain::ports::Hook;
use crate::domain::storage::retrying;
use crate::domain::validation::{FieldError, FieldErrors, Reported};
use chrono::{NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::Value;

pub use crate::domain::ledger::TRANSACTION_IMPORT_SUCCESS;

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

/// Each transaction read, in the order of the body's array (whose element answers a failure).
type ReadBatch = Vec<Transaction>;

/// The answer of a batch refused at the transaction `posted`.
fn transaction_failure(posted: &Value, refusal: PostingRefusal) -> DomainError {
    let attr = format!("transactions.{}.{}", refusal.index, refusal.field);
    DomainError::TransactionImport(Box::new(TransactionFailure {
        code: refusal.code.to_owned(),
        detail: format!("{attr}: {}", refusal.detail),
        errors: FieldErrors::single(FieldError::new(attr, refusal.code, refusal.detail)),
        transaction_data: posted.clone(),
    }))
}

/// What the supplier posted of each transaction, as it moves a balance (credit positive): its
/// own amount, before the supplier's rules mapped the batch (`sent`, when they did). A
/// transaction the rules added, or whose place they changed, counts as mapped.
fn declared_amounts(posted: &[Transaction], sent: Option<&Vec<Transaction>>) -> Vec<Decimal> {
    posted
        .iter()
        .enumerate()
        .map(|(index, transaction)| {
            let own = sent.and_then(|sent| {
                sent.get(index)
                    .filter(|sent| sent.transaction_id == transaction.transaction_id)
                    .or_else(|| {
                        sent.iter()
                            .find(|sent| sent.transaction_id == transaction.transaction_id)
                    })
            });
            let transaction = own.unwrap_or(transaction);
            transaction.kind.signed(transaction.amount)
        })
        .collect()
}

impl Additions {
    /// Reads the body: every transaction, with the body's element it was read from (for the
    /// answer of a failure). A problem of the request itself is answered in the error format;
    /// else the first failing transaction fails all, with its own errors.
    fn parse_transactions(
        &self,
        body: &Value,
        today: NaiveDate,
    ) -> Result<(String, String, (ReadBatch, bool)), DomainError> {
        let posted = read_transactions(body, self.limits.max_items, today).map_err(|errors| {
            let (request, transactions): (Vec<_>, Vec<_>) = errors
                .0
                .into_iter()
                .partition(|error| transaction_index(error).is_none());
            let Some(index) = transactions.first().and_then(transaction_index) else {
                return DomainError::invalid(FieldErrors(request));
            };
            if !request.is_empty() {
                return DomainError::invalid(FieldErrors(request));
            }
            let errors: Vec<FieldError> = transactions
                .into_iter()
                .filter(|error| transaction_index(error) == Some(index))
                .collect();
            let first = &errors[0];
            DomainError::TransactionImport(Box::new(TransactionFailure {
                code: first.code.clone(),
                detail: format!(
                    "{}: {}",
                    first.attr.as_deref().unwrap_or_default(),
                    first.detail
                ),
                transaction_data: body["transactions"][index].clone(),
                errors: FieldErrors(errors),
            }))
        })?;
        let external = posted.account.external_account_number().to_owned();
        Ok((
            posted.account.import_supplier,
            external,
            (posted.transactions, posted.dry_run),
        ))
    }

    pub async fn add_transactions(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
        options: TransactionOptions,
    ) -> Result<Reported<Vec<TransactionResult>>, DomainError> {
        let now = Utc::now();
        let Request {
            target,
            posted: (transactions, dry_run),
            ignored,
            mapped,
            sent,
        } = self
            .read_request(
                key,
                body,
                Hook::MapTransactions,
                Some("transactions"),
                |body| self.parse_transactions(body, now.date_naive()),
            )
            .await?;

        // The account's document says where its open statement period starts.
        let account = self.platform_account(&target.account.number).await?;
        let account_start = account
            .data
            .open_statement_period_start()
            .unwrap_or_else(|| account.created_at.date_naive());
        let number = &target.account.number;
        let declared = declared_amounts(&transactions, sent.as_ref().map(|(sent, _)| sent));
        let results = retrying(|| async {
            let mut unit = self.store.account_unit(number).await?;
            let summary = unit.summary().await?;
            let reconciled_before = reconcile(&summary, || Declared::of(account.data.document()));
            let mut kept = summary.reconciliation.clone().unwrap_or_else(|| {
                Reconciliation::opened(Declared::of(account.data.document()).as_ref())
            });
            let mut counts = Counts::default();
            let start = open_period_start(account_start, summary.latest_statement_to);
            let mut existing = Vec::with_capacity(transactions.len());
            for transaction in &transactions {
                existing.push(unit.transaction(&transaction.transaction_id).await?);
            }
            let batch = transactions.iter().zip(existing);
            let posted = post_batch(summary, start, options, batch).map_err(|refusal| {
                let read_from = mapped.as_ref().unwrap_or(body);
                transaction_failure(&read_from["transactions"][refusal.index], refusal)
            })?;
            let mut results = Vec::with_capacity(transactions.len());
            for (posting, declared) in posted.postings.into_iter().zip(&declared) {
                let (added, balance_after) = match posting {
                    Posting::AlreadyAdded(existing) => {
                        results.push(TransactionResult {
                            status: TransactionStatus::TransactionAlreadyExists,
                            transaction_data: existing,
                        });
                        continue;
                    }
                    Posting::Added {
                        kept,
                        balance_after,
                    } => (kept, balance_after),
                };
                let (added, entry) =
                    kept_with_entry(added, unit.next_id().await?, balance_after, now);
                unit.enqueue(events::ledger_entry_posted(number, &entry))?;
                unit.add_transaction(&added, &entry).await?;
                kept.posted(*declared);
                counts.add(counter::TRANSACTIONS, 1);
                results.push(TransactionResult {
                    status: TransactionStatus::TransactionAddedToAccount,
                    transaction_data: added,
                });
            }
            if !posted.moved.is_empty() {
                let note = NoteInput {
                    body: Some(format!(
                        "Imported transactions dated before the open statement period (which starts {start}) were moved to its first day: {}.",
                        posted.moved.join(", ")
                    )),
                    document_paths: Vec::new(),
                    created_at: None,
                    is_pinned: true,
                    unpin_at: None,
                    external_id: None,
                    is_archived: false,
                };
                let noted = add_note(unit.as_mut(), &note, NoteSource::System, now).await?;
                if noted.status == NoteStatus::NoteCreationSuccess {
                    counts.add(counter::NOTES, 1);
                }
            }
            let mut summary = posted.summary;
            summary.reconciliation = Some(kept);
            counts.add_all(&Counts::moved(
                &Counts::of_reconciliation(&reconciled_before),
                &Counts::of_reconciliation(&reconcile(&summary, || None)),
            ));
            unit.set_summary(&summary)?;
            unit.count(&target.supplier.code, &counts)?;
            // A dry run goes through everything and keeps nothing: the unit ends uncommitted,
            // and the answer is the real one.
            if !dry_run {
                unit.commit().await?;
            }
            Ok(results)
        })
        .await?;
        Ok(Reported {
            value: results,
            ignored,
        })
    }
}
