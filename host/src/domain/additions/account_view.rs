//! The operators' read model: everything kept on an imported account.

use super::Additions;
use crate::domain::error::DomainError;
use crate::domain::ledger::{AccountSummary, LedgerEntry, Transaction, open_period_start};
use crate::domain::notes::Note;
use crate::domain::payment_instruction::PaymentInstruction;
use crate::domain::statements::Statement;
use crate::domain::storage::AccountTable;
use chrono::{DateTime, NaiveDate, Utc};

/// Everything kept on an imported account.
#[derive(Debug, Clone)]
pub struct AccountView {
    pub platform_account_number: String,
    pub import_supplier: String,
    pub external_account_number: String,
    pub created_at: DateTime<Utc>,
    /// The account as migrated.
    pub account: crate::domain::account::AccountPayload,
    pub open_statement_period_start: NaiveDate,
    /// The operations team the account was allocated to, if any.
    pub operations_team_name: Option<String>,
    /// What the customer owes (negative: in credit).
    pub balance: crate::domain::money::Money,
    pub notes: Vec<Note>,
    pub transactions: Vec<Transaction>,
    pub ledger_entries: Vec<LedgerEntry>,
    pub statements: Vec<Statement>,
    pub payment_instructions: Vec<PaymentInstruction>,
}

impl Additions {
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
