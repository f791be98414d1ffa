//! The operators' read model: everything kept on an imported account.

use super::Additions;
use crate::domain::error::DomainError;
use crate::domain::ledger::{LedgerEntry, Transaction, open_period_start};
use crate::domain::notes::Note;
use crate::domain::payment_instruction::PaymentInstruction;
use crate::domain::statements::Statement;
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
    /// The account's balance: credit positive, debit negative.
    pub balance: crate::domain::money::Money,
    /// The initial closed statement of each of the account document's ledgers.
    pub closed_statements: Vec<crate::domain::ledger::ClosedStatement>,
    /// Whether its ledger holds what was declared.
    pub reconciliation: crate::domain::campaign::ReconciliationView,
    pub notes: Vec<Note>,
    pub transactions: Vec<Transaction>,
    pub ledger_entries: Vec<LedgerEntry>,
    pub statements: Vec<Statement>,
    pub payment_instructions: Vec<PaymentInstruction>,
}

impl Additions {
    /// Everything on the platform account `number` (operators).
    pub async fn account_view(&self, number: &str) -> Result<AccountView, DomainError> {
        let account = self
            .store
            .account(number)
            .await?
            .ok_or(DomainError::AccountNotFound)?;
        let records = self.store.account_records(number).await?;
        let account_start = account
            .data
            .open_statement_period_start()
            .unwrap_or_else(|| account.created_at.date_naive());
        Ok(AccountView {
            platform_account_number: account.number.clone(),
            import_supplier: account.supplier_code.clone(),
            external_account_number: account.external_account_number.clone(),
            created_at: account.created_at,
            operations_team_name: account.operations_team_name.clone(),
            open_statement_period_start: open_period_start(
                account_start,
                records.summary.latest_statement_to,
            ),
            balance: records.summary.balance,
            reconciliation: crate::domain::campaign::reconcile(&records.summary, || {
                crate::domain::campaign::Declared::of(account.data.document())
            }),
            closed_statements: records.summary.closed_statements,
            notes: records.notes,
            transactions: records.transactions,
            ledger_entries: records.ledger_entries,
            statements: records.statements,
            payment_instructions: records.payment_instructions,
            account: account.data,
        })
    }
}
