//! Test fixture: a plugin that changes amounts, keeping every document it answers valid. Its
//! `validate-account` adds 1.00 to the account's first current statement transaction and moves
//! the transfer balance to match; its `map-transactions` adds 0.50 to every transaction. So
//! what its accounts' ledgers hold is not what their supplier declared: Ferry's reconciliation
//! must say so. The other hooks pass their input through.

wit_bindgen::generate!({ path: "../../../wit/since_v0.3.0", world: "plugin" });

use exports::ferry::supplier_rules::{
    account_rules, note_rules, payment_instruction_rules, statement_rules, transaction_rules,
};
use ferry::supplier_rules::types::{
    Account, AccountRef, FieldError, Note, PaymentInstruction, Statement, Transaction,
};

struct Plugin;

/// A decimal amount in pence (`"25"`, `"25.5"`, `"-3.05"`); `None` when it is not one of two
/// places at most.
fn pence(amount: &str) -> Option<i64> {
    let (negative, digits) = match amount.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, amount),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if fraction.len() > 2 {
        return None;
    }
    let whole: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let fraction: i64 = format!("{fraction:0<2}").parse().ok()?;
    let value = whole * 100 + fraction;
    Some(if negative { -value } else { value })
}

fn amount(pence: i64) -> String {
    let sign = if pence < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", pence.abs() / 100, pence.abs() % 100)
}

/// `text` plus `by` pence (unchanged when it is not an amount).
fn shifted(text: &str, by: i64) -> String {
    pence(text).map_or_else(|| text.to_owned(), |value| amount(value + by))
}

fn is_debit(kind: &str) -> bool {
    matches!(kind, "CHARGE" | "SUPPLY_CHARGE" | "REPAYMENT")
}

impl account_rules::Guest for Plugin {
    fn validate_account(mut account: Account) -> Result<Account, Vec<FieldError>> {
        if let Some(first) = account.current_statement_transactions.first_mut() {
            first.amount = shifted(&first.amount, 100);
            let moved = if is_debit(&first.type_) { -100 } else { 100 };
            let transfer = account.transfer_balance.as_deref().unwrap_or("0");
            account.transfer_balance = Some(shifted(transfer, moved));
        }
        Ok(account)
    }
}

impl transaction_rules::Guest for Plugin {
    fn map_transactions(
        _target: AccountRef,
        transactions: Vec<Transaction>,
    ) -> Result<Vec<Transaction>, Vec<FieldError>> {
        Ok(transactions
            .into_iter()
            .map(|mut transaction| {
                transaction.amount = shifted(&transaction.amount, 50);
                transaction
            })
            .collect())
    }
}

impl note_rules::Guest for Plugin {
    fn map_notes(_target: AccountRef, notes: Vec<Note>) -> Result<Vec<Note>, Vec<FieldError>> {
        Ok(notes)
    }
}

impl statement_rules::Guest for Plugin {
    fn map_statements(
        _target: AccountRef,
        statements: Vec<Statement>,
    ) -> Result<Vec<Statement>, Vec<FieldError>> {
        Ok(statements)
    }
}

impl payment_instruction_rules::Guest for Plugin {
    fn map_payment_instruction(
        _target: AccountRef,
        instruction: PaymentInstruction,
    ) -> Result<PaymentInstruction, Vec<FieldError>> {
        Ok(instruction)
    }
}

export!(Plugin);
