//! `/admin/v1/accounts/{number}`: everything kept on an imported account — the account as
//! staged, its balance, notes, transactions with their ledger entries, statements and payment
//! instructions.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// An imported account with everything added to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AccountDetail {
    pub platform_account_number: String,
    pub import_supplier: String,
    pub external_account_number: String,
    pub created_at: String,
    /// The account as migrated (the staged document).
    #[schema(value_type = Object)]
    pub account: Value,
    pub open_statement_period_start: String,
    /// The operations team the account was allocated to when it was migrated; null when none.
    #[schema(required = true)]
    pub operations_team_name: Option<String>,
    /// The account's balance in the real platform's sign: credit positive, debit negative.
    pub balance: String,
    /// Whether its ledger holds what the old supplier declared (and was added since).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciliation: Option<crate::reports::AccountReconciliation>,
    /// The initial closed statement of each of the account document's ledgers: its historical
    /// transactions, closed on the last statement's closing date.
    #[serde(default)]
    pub closed_statements: Vec<ClosedStatement>,
    pub notes: Vec<Note>,
    pub transactions: Vec<Transaction>,
    pub ledger_entries: Vec<LedgerEntry>,
    pub statements: Vec<Statement>,
    pub payment_instructions: Vec<PaymentInstruction>,
    /// The account's meter points and their registration.
    #[serde(default)]
    pub meter_points: Vec<MeterPoint>,
}

/// The initial closed statement of a ledger: the account document's historical transactions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClosedStatement {
    /// The document's ledger (its code, else its identifier), when it declared `ledgers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
    /// The date of its earliest transaction; none when it has none.
    #[schema(required = true)]
    pub first_transaction_date: Option<String>,
    pub closing_date: String,
    pub issued_date: String,
    /// Credit positive, debit negative: the document's `last_statement_balance`.
    pub closing_balance: String,
    /// How many transactions are on it.
    pub transactions: usize,
}

/// A meter point of the account and its registration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MeterPoint {
    /// The MPAN or MPRN.
    pub mpxn: String,
    /// `ELECTRICITY` or `GAS`.
    pub market: String,
    /// One of the real platform's statuses (`PRE_REGISTRATION`, `REGISTRATION_REQUESTED`,
    /// `ON_SUPPLY`, ...).
    pub status: String,
    pub updated_at: String,
    /// When the last registration flow was sent.
    #[schema(required = true)]
    pub flow_sent_at: Option<String>,
}

/// Body of `PATCH /admin/v1/accounts/{number}/meter-points/{mpxn}`: moves a registration on
/// (Ferry has no industry connection).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MeterPointChange {
    /// One of the real platform's meter point statuses.
    #[schema(min_length = 1, max_length = 64, example = "ON_SUPPLY")]
    pub status: String,
}

/// A note on the account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Note {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default)]
    pub document_paths: Vec<String>,
    pub created_at: String,
    pub is_pinned: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpin_at: Option<String>,
    /// `IMPORT` (sent by the supplier) or `SYSTEM` (written by Ferry).
    pub source: String,
    /// The supplier's identifier of the note, when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Archived on the account's support page.
    #[serde(default)]
    pub is_archived: bool,
}

/// A transaction as kept on the account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Transaction {
    /// The supplier's id of the transaction (unique on the account).
    pub transaction_id: String,
    pub transaction_date: String,
    pub amount: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_type: Option<String>,
    /// The text the customer sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub line_items: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub tax_items: Option<Vec<Value>>,
    /// Why the date differs from the one posted (moved into the open statement period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The date as posted, when it was moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_transaction_date: Option<String>,
    /// `TRANSACTION_IMPORT_SUCCESS` once kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_entry_id: Option<u64>,
    /// On the initial closed statement (one of the document's historical transactions), not
    /// billed by the platform.
    #[serde(default)]
    pub historical: bool,
    /// The document's ledger it came from, when the document declared `ledgers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<String>,
}

/// One posting on the account's ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LedgerEntry {
    pub id: u64,
    pub transaction_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub amount: String,
    /// The ledger's balance after this entry: credit positive, debit negative.
    pub balance_after: String,
    pub transaction_date: String,
    pub posted_at: String,
}

/// A historical statement of the old supplier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Statement {
    pub bill_period_from_date: String,
    pub bill_period_to_date: String,
    pub statement_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    /// In pounds, with two places (sent in pence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gross_amount: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_path: Option<String>,
}

/// A payment instruction, as its vendor confirmed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PaymentInstruction {
    /// Vendor code, upper case.
    pub vendor: String,
    pub reference: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// What the vendor answered about the instruction (pending: nothing yet).
    #[schema(value_type = Object)]
    pub details: Value,
    pub added_at: String,
    /// Recorded from the account document without the vendor's confirmation: valid only from
    /// `valid_from`, a day still to come when it was migrated.
    #[serde(default)]
    pub pending: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_for_scheduled_payments: Option<bool>,
}
