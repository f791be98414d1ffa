//! Imported transactions and the account's ledger.
//!
//! Each transaction type has its own fields, required flags and enumerations, as the real
//! platform's `oneOf` on `type` defines them (its `Transactions` document, checked by
//! [`RequestDocument`]). A
//! transaction dated before the open statement period is either moved to its first day
//! (`force_add_to_current_statement`) or refused. The ledger keeps every entry and the running
//! balance in the real platform's sign: credit balances are positive, debit balances negative.
//! Payments and credits add to the balance; charges, supply charges and repayments subtract
//! from it (a negative amount reverses the direction).

use super::money::Money;
use super::request_document::{AccountReference, RequestDocument, elements};
use super::validation::{FieldError, FieldErrors, parse_date};
use chrono::{DateTime, Days, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransactionType {
    Charge,
    Credit,
    Payment,
    Repayment,
    SupplyCharge,
}

impl TransactionType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Charge => "CHARGE",
            Self::Credit => "CREDIT",
            Self::Payment => "PAYMENT",
            Self::Repayment => "REPAYMENT",
            Self::SupplyCharge => "SUPPLY_CHARGE",
        }
    }

    /// Whether the amount is taken from the balance (a debit) rather than added to it.
    pub fn is_debit(self) -> bool {
        matches!(self, Self::Charge | Self::SupplyCharge | Self::Repayment)
    }

    /// `amount` as it moves the balance: added for payments and credits, taken away for
    /// charges, supply charges and repayments.
    pub fn signed(self, amount: Money) -> Decimal {
        if self.is_debit() { -amount.0 } else { amount.0 }
    }
}

/// Places after the point the real platform accepts in amounts (`amount`, `net_amount`, tax
/// `amount`): its pattern `^-?\d{0,10}(?:\.\d{0,10})?$`.
pub const AMOUNT_PLACES: u32 = 10;

/// An amount as the ledger keeps it: to the penny, half away from zero, so that what is
/// posted, stored and answered is one figure, whatever the batches.
pub fn to_the_penny(amount: Decimal) -> Money {
    Money(amount.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LineItem {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_band: Option<String>,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    #[serde(deserialize_with = "decimals::decimal")]
    #[schema(value_type = String)]
    pub number_of_units: Decimal,
    #[serde(deserialize_with = "decimals::amount")]
    #[schema(value_type = String)]
    pub net_amount: Money,
    #[serde(
        default,
        deserialize_with = "decimals::optional",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub price_per_unit: Option<Decimal>,
    #[serde(
        default,
        deserialize_with = "decimals::list",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[schema(value_type = Vec<String>)]
    pub units: Vec<Decimal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_rate_identifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_specification_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_series_specification_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TaxItem {
    #[serde(deserialize_with = "decimals::amount")]
    #[schema(value_type = String)]
    pub amount: Money,
    pub tax_type: String,
    #[serde(deserialize_with = "decimals::decimal")]
    #[schema(value_type = String)]
    pub value_taxed: Decimal,
    #[serde(deserialize_with = "decimals::decimal")]
    #[schema(value_type = String)]
    pub rate: Decimal,
    /// `PROPORTION` or `CURRENCY_PER_KWH`.
    pub unit_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
}

/// A transaction as posted (validated) or as kept on the account (with its ledger entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Transaction {
    pub transaction_id: String,
    pub transaction_date: NaiveDate,
    #[serde(deserialize_with = "decimals::amount")]
    #[schema(value_type = String, example = "12.30")]
    pub amount: Money,
    #[serde(rename = "type")]
    pub kind: TransactionType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_items: Option<Vec<LineItem>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tax_items: Option<Vec<TaxItem>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_document_identifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_prepay_meter_serial_number: Option<String>,
    /// `SUPPLY_CHARGE` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supply_point_identifier: Option<String>,
    /// Why the date differs from the one posted (moved into the open statement period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// On the account's initial closed statement: one of the account document's
    /// `historical_statement_transactions`, not billed by the platform.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub historical: bool,
    /// The ledger of the account document it came from (its `ledger_code`, else its
    /// `ledger_identifier`), when the document declared `ledgers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
    /// The date as posted, when it was moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_transaction_date: Option<NaiveDate>,
    /// `TRANSACTION_IMPORT_SUCCESS` once kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_entry_id: Option<u64>,
}

/// One posting on the account's ledger.
///
/// Stored with the balance under `ledger_balance`, credit positive. Records written before
/// the real platform's sign was taken hold `balance_after`, what the customer owed (debit
/// positive): read, it is turned round, so that a stored account keeps its meaning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(from = "StoredLedgerEntry")]
pub struct LedgerEntry {
    pub id: u64,
    pub transaction_id: String,
    #[serde(rename = "type")]
    pub kind: TransactionType,
    #[schema(value_type = String)]
    pub amount: Money,
    /// The ledger's balance after this entry: credit positive, debit negative.
    #[serde(rename = "ledger_balance")]
    #[schema(value_type = String)]
    pub balance_after: Money,
    pub transaction_date: NaiveDate,
    pub posted_at: DateTime<Utc>,
}

/// A ledger entry as stored, in either sign ([`LedgerEntry`]).
#[derive(Deserialize)]
struct StoredLedgerEntry {
    id: u64,
    transaction_id: String,
    #[serde(rename = "type")]
    kind: TransactionType,
    amount: Money,
    #[serde(default)]
    ledger_balance: Option<Money>,
    /// What the customer owed after the entry (the earlier records' sign).
    #[serde(default)]
    balance_after: Option<Money>,
    transaction_date: NaiveDate,
    posted_at: DateTime<Utc>,
}

impl From<StoredLedgerEntry> for LedgerEntry {
    fn from(stored: StoredLedgerEntry) -> Self {
        Self {
            id: stored.id,
            transaction_id: stored.transaction_id,
            kind: stored.kind,
            amount: stored.amount,
            balance_after: balance_in_real_sign(stored.ledger_balance, stored.balance_after),
            transaction_date: stored.transaction_date,
            posted_at: stored.posted_at,
        }
    }
}

/// A balance as stored: `credit_positive` as written now, else `owed` as written before the
/// real platform's sign was taken (what the customer owed), turned round.
fn balance_in_real_sign(credit_positive: Option<Money>, owed: Option<Money>) -> Money {
    match (credit_positive, owed) {
        (Some(balance), _) => balance,
        (None, Some(owed)) => Money(-owed.0),
        (None, None) => Money::ZERO,
    }
}

/// The initial closed statement of an account's ledger: the account document's historical
/// transactions, closed on its `last_statement_closing_date` (else its
/// `last_billed_to_date`) and issued on its `last_statement_issue_date` (else the closing
/// date), with its `last_statement_balance`. The platform bills from the day after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClosedStatement {
    /// The document's ledger (its code, else its identifier), when it declared `ledgers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
    /// The date of its earliest transaction (none: it has no transactions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_transaction_date: Option<NaiveDate>,
    pub closing_date: NaiveDate,
    pub issued_date: NaiveDate,
    /// Credit positive, debit negative.
    pub closing_balance: Money,
    /// How many transactions are on it.
    pub transactions: usize,
}

/// The running state of an account's ledger and imported data.
///
/// Stored with the balance under `ledger_balance`, credit positive; records written before the
/// real platform's sign was taken hold `balance`, what the customer owed, and are read turned
/// round ([`LedgerEntry`] likewise).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredSummary")]
pub struct AccountSummary {
    /// The account's balance: credit positive, debit negative.
    #[serde(rename = "ledger_balance")]
    pub balance: Money,
    /// The last day the account's closed statements cover: the initial closed statement's
    /// closing date, or the `bill_period_to_date` of the latest historical statement, whichever
    /// is later. The open statement period starts the day after.
    pub latest_statement_to: Option<NaiveDate>,
    /// The initial closed statement of each of the document's ledgers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closed_statements: Vec<ClosedStatement>,
    /// What the supplier declared the ledger should hold, moved with it (none: an account
    /// migrated before it was kept; its document stands for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<super::campaign::Reconciliation>,
}

/// An account summary as stored, in either sign ([`AccountSummary`]).
#[derive(Deserialize)]
struct StoredSummary {
    #[serde(default)]
    ledger_balance: Option<Money>,
    /// What the customer owed (the earlier records' sign).
    #[serde(default)]
    balance: Option<Money>,
    #[serde(default)]
    latest_statement_to: Option<NaiveDate>,
    #[serde(default)]
    closed_statements: Vec<ClosedStatement>,
    #[serde(default)]
    reconciliation: Option<super::campaign::Reconciliation>,
}

impl From<StoredSummary> for AccountSummary {
    fn from(stored: StoredSummary) -> Self {
        Self {
            balance: balance_in_real_sign(stored.ledger_balance, stored.balance),
            latest_statement_to: stored.latest_statement_to,
            closed_statements: stored.closed_statements,
            reconciliation: stored.reconciliation,
        }
    }
}

impl AccountSummary {
    /// Posts `transaction`, returning the new balance; `None` (and nothing posted) when the
    /// balance would leave the range of amounts Ferry can hold exactly.
    pub fn post(&mut self, kind: TransactionType, amount: Money) -> Option<Money> {
        self.balance = Money(self.balance.0.checked_add(kind.signed(amount))?);
        Some(self.balance)
    }

    /// Records that the account's statements are closed through `to`.
    pub fn closed_through(&mut self, to: NaiveDate) {
        self.latest_statement_to =
            Some(self.latest_statement_to.map_or(to, |latest| latest.max(to)));
    }
}

/// `transaction`, posted as ledger entry `id` at `posted_at` with the ledger's balance after it:
/// the transaction as kept (imported, naming its entry) and the entry.
pub fn kept_with_entry(
    mut transaction: Transaction,
    id: u64,
    balance_after: Money,
    posted_at: DateTime<Utc>,
) -> (Transaction, LedgerEntry) {
    let entry = LedgerEntry {
        id,
        transaction_id: transaction.transaction_id.clone(),
        kind: transaction.kind,
        amount: transaction.amount,
        balance_after,
        transaction_date: transaction.transaction_date,
        posted_at,
    };
    transaction.status = Some(TRANSACTION_IMPORT_SUCCESS.to_owned());
    transaction.ledger_entry_id = Some(id);
    (transaction, entry)
}

/// The status of a transaction once kept.
pub const TRANSACTION_IMPORT_SUCCESS: &str = "TRANSACTION_IMPORT_SUCCESS";

/// The first day of the open statement period: the day after the latest imported statement,
/// else the account's own `open_statement_period_start`.
pub fn open_period_start(
    account_start: NaiveDate,
    latest_statement_to: Option<NaiveDate>,
) -> NaiveDate {
    match latest_statement_to {
        Some(to) => to.checked_add_days(Days::new(1)).unwrap_or(to),
        None => account_start,
    }
}

/// Where a transaction dated `date` lands in a period starting `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Inside the period as dated.
    AsDated,
    /// Moved to the period's first day, with an explanation.
    Moved { to: NaiveDate, description: String },
    /// Before the period, and moving was not allowed.
    Refused,
}

pub fn place(date: NaiveDate, start: NaiveDate, force: bool) -> Placement {
    if date >= start {
        Placement::AsDated
    } else if force {
        Placement::Moved {
            to: start,
            description: format!(
                "Dated {date} by the previous supplier; moved to {start}, the start of the open statement period."
            ),
        }
    } else {
        Placement::Refused
    }
}

/// The query options of the transactions endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransactionOptions {
    /// Skip (and report) a transaction whose id is already on the account; else the batch
    /// fails.
    pub check_previously_added: bool,
    /// Move a transaction dated before the open statement period to its first day; else the
    /// batch fails.
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

/// What posting did with one transaction of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "most postings are additions, each consumed at once: boxing would only add an allocation"
)]
pub enum Posting<E> {
    /// Its id is already on the account: skipped, with what the account has.
    AlreadyAdded(E),
    /// Posted: the transaction as kept (its date perhaps moved) and the balance after it.
    Added {
        kept: Transaction,
        balance_after: Money,
    },
}

/// A batch as posted: one posting per transaction in the batch's order, the ledger's state
/// after it, and the ids of the transactions moved into the open period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedBatch<E> {
    pub postings: Vec<Posting<E>>,
    pub summary: AccountSummary,
    pub moved: Vec<String>,
}

/// Why a batch was not posted: the transaction at `index`, the field at fault, its code and
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostingRefusal {
    pub index: usize,
    pub field: &'static str,
    pub code: &'static str,
    pub detail: String,
}

/// Posts `batch` to a ledger in the state `summary`, whose open statement period starts
/// `start`; each transaction comes with what the account already has under its id, if
/// anything. Decides everything and writes nothing: the caller keeps what it returns, or
/// nothing of the batch when one transaction is refused.
pub fn post_batch<'a, E>(
    mut summary: AccountSummary,
    start: NaiveDate,
    options: TransactionOptions,
    batch: impl IntoIterator<Item = (&'a Transaction, Option<E>)>,
) -> Result<PostedBatch<E>, PostingRefusal> {
    let mut postings = Vec::new();
    let mut moved = Vec::new();
    for (index, (transaction, existing)) in batch.into_iter().enumerate() {
        let refuse = |field, code, detail: String| PostingRefusal {
            index,
            field,
            code,
            detail,
        };
        if let Some(existing) = existing {
            if !options.check_previously_added {
                return Err(refuse(
                    "transaction_id",
                    "duplicate_transaction_ids",
                    "This transaction was already added to the account.".to_owned(),
                ));
            }
            postings.push(Posting::AlreadyAdded(existing));
            continue;
        }
        let mut kept = transaction.clone();
        match place(
            transaction.transaction_date,
            start,
            options.force_add_to_current_statement,
        ) {
            Placement::AsDated => {}
            Placement::Moved { to, description } => {
                kept.original_transaction_date = Some(kept.transaction_date);
                kept.transaction_date = to;
                kept.description = Some(description);
                moved.push(kept.transaction_id.clone());
            }
            Placement::Refused => {
                return Err(refuse(
                    "transaction_date",
                    "transaction_outside_open_statement_period",
                    format!(
                        "The transaction is dated before the open statement period, which starts {start}."
                    ),
                ));
            }
        }
        let Some(balance_after) = summary.post(kept.kind, kept.amount) else {
            return Err(refuse(
                "amount",
                "balance_out_of_range",
                "Adding this amount would take the account's balance out of the range of amounts that can be held.".to_owned(),
            ));
        };
        postings.push(Posting::Added {
            kept,
            balance_after,
        });
    }
    Ok(PostedBatch {
        postings,
        summary,
        moved,
    })
}

/// A transactions body, checked against the real document's `Transactions`: the account it
/// names, whether it is a dry run, and its transactions (none when left out, as on the real
/// platform).
#[derive(Debug, Deserialize)]
pub struct PostedTransactions {
    #[serde(flatten)]
    pub account: AccountReference,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub transactions: Vec<Transaction>,
}

/// Checks a transactions body: the real document's schema (each type's own fields, required
/// flags and enumerations, its `oneOf` on `type`), then the rules it does not state (the
/// account named by either of its two names, no transaction in the future or twice in one
/// request, no line item ending before it starts). Every problem is reported, in the order of
/// the document; a transaction without its id has the real platform's own code.
pub fn read_transactions(
    body: &Value,
    max_items: usize,
    today: NaiveDate,
) -> Result<PostedTransactions, FieldErrors> {
    RequestDocument::Transactions
        .read(body, max_items, |document, errors| {
            AccountReference::check(document, errors);
            let mut seen = HashSet::new();
            for (index, transaction) in elements(document, "transactions").iter().enumerate() {
                if let Value::Object(transaction) = transaction {
                    let at = format!("transactions.{index}");
                    check_transaction(transaction, &at, today, &mut seen, errors);
                }
            }
        })
        .map_err(with_missing_transaction_ids)
}

/// `errors` with the real platform's own code for a transaction without its id
/// (`missing_transaction_id`, where the schema says `required`, `blank` or `null`), wherever the
/// transaction is: in a transactions body, or in an account document's ledger.
pub fn with_missing_transaction_ids(mut errors: FieldErrors) -> FieldErrors {
    for error in &mut errors.0 {
        let Some(attr) = error.attr.as_deref() else {
            continue;
        };
        if attr.ends_with(".transaction_id")
            && attr.contains("transactions.")
            && matches!(error.code.as_str(), "required" | "blank" | "null")
        {
            error.code = "missing_transaction_id".to_owned();
        }
    }
    errors
}

/// The index of the transaction an error of [`read_transactions`] is about (`None` for an
/// error of the request itself).
pub fn transaction_index(error: &FieldError) -> Option<usize> {
    transaction_field(error).map(|(index, _)| index)
}

/// The transaction an error is about and the path inside it (`""` for the transaction
/// itself).
fn transaction_field(error: &FieldError) -> Option<(usize, &str)> {
    let rest = error.attr.as_deref()?.strip_prefix("transactions.")?;
    let (index, field) = rest.split_once('.').unwrap_or((rest, ""));
    Some((index.parse().ok()?, field))
}

/// The rules of one transaction the schema does not state.
fn check_transaction(
    transaction: &Map<String, Value>,
    at: &str,
    today: NaiveDate,
    seen: &mut HashSet<String>,
    errors: &mut FieldErrors,
) {
    let date = |object: &Map<String, Value>, name: &str| parse_date(object.get(name)?.as_str()?);
    if let Some(Value::String(id)) = transaction.get("transaction_id")
        && !seen.insert(id.clone())
    {
        errors.push(FieldError::new(
            format!("{at}.transaction_id"),
            "duplicate_transaction_ids",
            format!("Transaction id {id} appears more than once in this request."),
        ));
    }
    if date(transaction, "transaction_date").is_some_and(|date| date > today) {
        errors.push(FieldError::new(
            format!("{at}.transaction_date"),
            "transaction_in_future",
            "The transaction date is in the future.",
        ));
    }
    for (index, item) in elements(transaction, "line_items").iter().enumerate() {
        if let Value::Object(item) = item
            && let (Some(start), Some(end)) = (date(item, "start_date"), date(item, "end_date"))
            && start > end
        {
            errors.push(FieldError::new(
                format!("{at}.line_items.{index}.end_date"),
                "start_date_later_than_end_date",
                "end_date must not be earlier than start_date.",
            ));
        }
    }
}

/// Serde readers for the decimals of a checked document (a JSON number, kept as its text, or
/// a string; the schema has bounded their digits) and of Ferry's own records (strings).
mod decimals {
    use super::{AMOUNT_PLACES, to_the_penny};
    use crate::domain::money::Money;
    use crate::domain::validation::parse_decimal_value;
    use rust_decimal::Decimal;
    use serde::{Deserialize, Deserializer, de::Error};
    use serde_json::Value;

    /// The most places any decimal of the documents has.
    const MAX_PLACES: u32 = 28;

    fn exact<E: Error>(value: &Value, places: u32) -> Result<Decimal, E> {
        parse_decimal_value(value, places).map_err(|_| {
            E::custom(format!(
                "{value} is not a decimal with at most {places} places"
            ))
        })
    }

    /// An amount, kept to the penny ([`to_the_penny`]).
    pub fn amount<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Money, D::Error> {
        Ok(to_the_penny(exact(
            &Value::deserialize(deserializer)?,
            AMOUNT_PLACES,
        )?))
    }

    pub fn decimal<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
        exact(&Value::deserialize(deserializer)?, MAX_PLACES)
    }

    pub fn optional<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Decimal>, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Null => Ok(None),
            value => exact(&value, MAX_PLACES).map(Some),
        }
    }

    pub fn list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Decimal>, D::Error> {
        Vec::<Value>::deserialize(deserializer)?
            .iter()
            .map(|value| exact(value, MAX_PLACES))
            .collect()
    }
}

#[cfg(test)]
mod tests;
