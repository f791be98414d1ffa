//! Proving a migration: what each account's supplier declared its money to be against what
//! its ledger holds (its reconciliation), and the counts a supplier's campaign report is read
//! from.
//!
//! **Reconciliation.** Staging records what the document declares as the supplier sent it,
//! before its rules map it ([`Declared`]: the transfer balance and each ledger's last statement
//! balance). Processing keeps it with the account's ledger ([`Reconciliation`], in the
//! [`AccountSummary`]), and every later `transactions/create/` adds the amounts as the supplier
//! posted them, in the same unit of work that posts them: so the declaration and the ledger
//! move together and a check never drifts. An account is `RECONCILED` when its ledger holds
//! what was declared (its balance and each closed statement's), `MISMATCH` otherwise (a plugin
//! that changed an amount, an account migrated before the money moved, a defect), with the
//! difference and the first figure that diverges, and `NOT_DECLARED` when its document declared
//! no money at all.
//!
//! **Counts.** A supplier's report is read from counters, never by reading its accounts: each
//! change says how it moves them ([`Counts`], deltas the store adds in the same commit as the
//! change). [`Counts::of_process`] is what one import process contributes (its state, whether
//! its last dry run failed, its error code); [`Counts::of_reconciliation`] what one account's
//! reconciliation contributes; the data counters move as records are added.

use super::account_ledger::LEDGER_FIELDS;
use super::import_process::{ImportProcess, ImportState, ProcessEventKind};
use super::ledger::{AccountSummary, Transaction, to_the_penny};
use super::money::Money;
use super::validation::parse_decimal_value;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Counter names.
pub mod counter {
    /// Every account ever staged.
    pub const STAGED: &str = "staged";
    /// Processes in a state: `state.` and the state's name (`state.PENDING`, ...).
    pub const STATE: &str = "state.";
    /// Processes not migrated yet whose last dry run failed.
    pub const DRY_RUN_ERRORED: &str = "dry_run_errored";
    /// `ERRORED` processes by the code of their failure: `error.` and the code.
    pub const ERROR: &str = "error.";
    pub const NOTES: &str = "data.notes";
    pub const TRANSACTIONS: &str = "data.transactions";
    pub const STATEMENTS: &str = "data.statements";
    pub const PAYMENT_INSTRUCTIONS: &str = "data.payment_instructions";
    /// Migrated accounts by reconciliation: `reconciliation.` and the state's name.
    pub const RECONCILIATION: &str = "reconciliation.";
    /// The sum of the declared balances of the declaring accounts, in pence.
    pub const DECLARED_PENCE: &str = "reconciliation.declared_pence";
    /// The sum of their ledgers' balances, in pence.
    pub const HELD_PENCE: &str = "reconciliation.held_pence";
}

/// Counters of one supplier (or how a change moves them: deltas), by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Counts(pub BTreeMap<String, i64>);

impl Counts {
    pub fn get(&self, name: &str) -> i64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    /// Adds `by` to counter `name`.
    pub fn add(&mut self, name: impl Into<String>, by: i64) {
        if by == 0 {
            return;
        }
        let name = name.into();
        let value = self.0.entry(name.clone()).or_default();
        *value += by;
        if *value == 0 {
            self.0.remove(&name);
        }
    }

    /// Adds every counter of `other`.
    pub fn add_all(&mut self, other: &Counts) {
        for (name, by) in &other.0 {
            self.add(name.clone(), *by);
        }
    }

    /// What `after` adds to `before`: the deltas of a change from one to the other.
    pub fn moved(before: &Counts, after: &Counts) -> Counts {
        let mut moved = after.clone();
        for (name, by) in &before.0 {
            moved.add(name.clone(), -by);
        }
        moved
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The counters whose names start with `prefix`, by the rest of their names.
    pub fn under(&self, prefix: &str) -> impl Iterator<Item = (&str, i64)> {
        self.0
            .iter()
            .filter_map(move |(name, value)| Some((name.strip_prefix(prefix)?, *value)))
    }

    /// What one import process counts for: its state, whether it awaits migration after a
    /// failed dry run, the code of its failure when it is `ERRORED`.
    pub fn of_process(process: &ImportProcess) -> Counts {
        let mut counts = Counts::default();
        counts.add(format!("{}{}", counter::STATE, process.state.as_str()), 1);
        if process.awaits_migration()
            && process
                .latest_event
                .as_ref()
                .is_some_and(|event| event.kind == ProcessEventKind::DryRunErrored)
        {
            counts.add(counter::DRY_RUN_ERRORED, 1);
        }
        if process.state == ImportState::Errored
            && let Some(failure) = &process.last_failure
        {
            counts.add(format!("{}{}", counter::ERROR, failure.code), 1);
        }
        counts
    }

    /// How a change of one process from `before` (none: it is new) to `after` moves the
    /// counters: a new process is one more staged.
    pub fn of_process_change(before: Option<&ImportProcess>, after: &ImportProcess) -> Counts {
        let mut moved = Counts::moved(
            &before.map(Counts::of_process).unwrap_or_default(),
            &Counts::of_process(after),
        );
        if before.is_none() {
            moved.add(counter::STAGED, 1);
        }
        moved
    }

    /// What one migrated account's reconciliation counts for.
    pub fn of_reconciliation(view: &ReconciliationView) -> Counts {
        let mut counts = Counts::default();
        counts.add(
            format!("{}{}", counter::RECONCILIATION, view.state.as_str()),
            1,
        );
        if let Some(declared) = view.declared {
            counts.add(counter::DECLARED_PENCE, declared.pence());
            counts.add(counter::HELD_PENCE, view.held.pence());
        }
        counts
    }
}

/// How many records of each kind are kept on an account.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordCounts {
    pub notes: usize,
    pub transactions: usize,
    pub statements: usize,
    pub payment_instructions: usize,
}

impl Counts {
    /// What `records` count for.
    pub fn of_records(records: RecordCounts) -> Counts {
        let mut counts = Counts::default();
        for (name, count) in [
            (counter::NOTES, records.notes),
            (counter::TRANSACTIONS, records.transactions),
            (counter::STATEMENTS, records.statements),
            (counter::PAYMENT_INSTRUCTIONS, records.payment_instructions),
        ] {
            counts.add(name, i64::try_from(count).unwrap_or(i64::MAX));
        }
        counts
    }

    /// What a migrated account counts for, from what is kept on it: its records, and its
    /// reconciliation (its `document`'s declaration standing for one never kept).
    pub fn of_account(
        summary: &AccountSummary,
        document: &Map<String, Value>,
        records: RecordCounts,
    ) -> Counts {
        let mut counts = Counts::of_records(records);
        counts.add_all(&Counts::of_reconciliation(&reconcile(summary, || {
            Declared::of(document)
        })));
        counts
    }
}

impl Reconciliation {
    /// The reconciliation of an account stored before reconciliations were kept, from what is
    /// stored: its `document`'s declaration and, added to it, every transaction kept on its
    /// ledger that the document did not bring (those posted through `transactions/create/`
    /// since, as they are kept). An account migrated before its money moved holds none of
    /// what its document declared, and so is found a mismatch.
    pub fn of_stored<'a>(
        document: &Map<String, Value>,
        kept: impl IntoIterator<Item = &'a Transaction>,
    ) -> Reconciliation {
        let mut reconciliation = Reconciliation::opened(Declared::of(document).as_ref());
        let brought = document_transaction_ids(document);
        for transaction in kept {
            if !brought.contains(transaction.transaction_id.as_str()) {
                reconciliation.posted(transaction.kind.signed(transaction.amount));
            }
        }
        reconciliation
    }
}

/// The ids of the transactions an account document brings (its statement transactions, at
/// the top level and in its ledgers).
fn document_transaction_ids(document: &Map<String, Value>) -> std::collections::HashSet<&str> {
    fn lists(fields: &Map<String, Value>) -> impl Iterator<Item = &str> {
        [
            "historical_statement_transactions",
            "current_statement_transactions",
        ]
        .into_iter()
        .filter_map(|name| fields.get(name)?.as_array())
        .flatten()
        .filter_map(|transaction| transaction.get("transaction_id")?.as_str())
    }
    let mut ids: std::collections::HashSet<&str> = lists(document).collect();
    if let Some(Value::Array(ledgers)) = document.get("ledgers") {
        for ledger in ledgers.iter().filter_map(Value::as_object) {
            ids.extend(lists(ledger));
        }
    }
    ids
}

/// What a document declares of an account's money, as the supplier sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    /// `transfer_balance` (zero when omitted).
    pub balance: Money,
    /// Each ledger's `last_statement_balance` (zero when omitted), in the document's order,
    /// for the ledgers that have a closed statement (historical transactions or a closing
    /// date).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<Money>,
}

impl Declared {
    /// What `document` declares; `None` when it declares no money at all (no transfer balance,
    /// no ledger fields).
    pub fn of(document: &Map<String, Value>) -> Option<Declared> {
        let declares = document.contains_key("transfer_balance")
            || document.contains_key("ledgers")
            || LEDGER_FIELDS
                .iter()
                .any(|field| document.contains_key(*field));
        if !declares {
            return None;
        }
        let ledgers: Vec<&Map<String, Value>> = match document.get("ledgers") {
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_object).collect(),
            _ => vec![document],
        };
        let statements = ledgers
            .iter()
            .filter(|ledger| {
                ledger.contains_key("last_statement_closing_date")
                    || ledger
                        .get("historical_statement_transactions")
                        .and_then(Value::as_array)
                        .is_some_and(|list| !list.is_empty())
            })
            .map(|ledger| amount(ledger, "last_statement_balance"))
            .collect();
        Some(Declared {
            balance: amount(document, "transfer_balance"),
            statements,
        })
    }
}

/// An amount of the document, to the penny (zero when it is missing or not one).
fn amount(fields: &Map<String, Value>, name: &str) -> Money {
    fields
        .get(name)
        .and_then(|value| parse_decimal_value(value, super::ledger::AMOUNT_PLACES).ok())
        .map(to_the_penny)
        .unwrap_or_default()
}

/// What was declared of an account's money, kept with its ledger: the document's declaration
/// and, since, the amounts the supplier posted through `transactions/create/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconciliation {
    /// What the balance should be; `None`: the document declared no money.
    pub declared: Option<Money>,
    /// What each closed statement's closing balance should be, in the order of the summary's
    /// closed statements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared_statements: Vec<Money>,
}

impl Reconciliation {
    /// The reconciliation of an account opened from a document that declared `declared`.
    pub fn opened(declared: Option<&Declared>) -> Reconciliation {
        Reconciliation {
            declared: declared.map(|declared| declared.balance),
            declared_statements: declared
                .map(|declared| declared.statements.clone())
                .unwrap_or_default(),
        }
    }

    /// The supplier posted `signed` more (credit positive).
    pub fn posted(&mut self, signed: rust_decimal::Decimal) {
        if let Some(declared) = &mut self.declared {
            *declared = Money(declared.0 + signed);
        }
    }
}

/// The three outcomes of a reconciliation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReconciliationState {
    Reconciled,
    Mismatch,
    NotDeclared,
}

impl ReconciliationState {
    pub const ALL: [ReconciliationState; 3] = [Self::Reconciled, Self::Mismatch, Self::NotDeclared];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reconciled => "RECONCILED",
            Self::Mismatch => "MISMATCH",
            Self::NotDeclared => "NOT_DECLARED",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == text)
    }
}

/// An account's reconciliation as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconciliationView {
    pub state: ReconciliationState,
    /// What was declared (none: nothing).
    pub declared: Option<Money>,
    /// What the ledger holds.
    pub held: Money,
    /// `held - declared`, when something was declared.
    pub difference: Option<Money>,
    /// The first figure that diverges, for a mismatch: a closed statement's closing balance
    /// (`last_statement_balance`, `ledgers.N.last_statement_balance`) or the balance
    /// (`transfer_balance`).
    pub first_diverging: Option<String>,
}

/// The reconciliation of the account whose ledger is `summary`. An account migrated before
/// reconciliations were kept has none: what its document `declared` stands for it.
pub fn reconcile(
    summary: &AccountSummary,
    declared: impl FnOnce() -> Option<Declared>,
) -> ReconciliationView {
    let kept = match &summary.reconciliation {
        Some(kept) => kept.clone(),
        None => Reconciliation::opened(declared().as_ref()),
    };
    let held = summary.balance;
    let Some(declared) = kept.declared else {
        return ReconciliationView {
            state: ReconciliationState::NotDeclared,
            declared: None,
            held,
            difference: None,
            first_diverging: None,
        };
    };
    let several = summary.closed_statements.len() > 1;
    let statement = kept
        .declared_statements
        .iter()
        .enumerate()
        .find(|(index, declared)| {
            summary
                .closed_statements
                .get(*index)
                .is_none_or(|closed| closed.closing_balance != **declared)
        })
        .map(|(index, _)| {
            if several {
                format!("ledgers.{index}.last_statement_balance")
            } else {
                "last_statement_balance".to_owned()
            }
        });
    let first_diverging =
        statement.or_else(|| (held != declared).then(|| "transfer_balance".to_owned()));
    ReconciliationView {
        state: if first_diverging.is_some() {
            ReconciliationState::Mismatch
        } else {
            ReconciliationState::Reconciled
        },
        declared: Some(declared),
        held,
        difference: Some(Money(held.0 - declared.0)),
        first_diverging,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ledger::ClosedStatement;
    use chrono::NaiveDate;
    use serde_json::json;

    fn money(text: &str) -> Money {
        Money(text.parse().expect("decimal"))
    }

    fn document(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn a_document_declares_its_balance_and_its_statements() {
        let declared = Declared::of(&document(json!({
            "transfer_balance": "-35.00", "last_statement_balance": -20,
            "last_statement_closing_date": "2025-01-31"})))
        .expect("declared");
        assert_eq!(declared.balance, money("-35.00"));
        assert_eq!(declared.statements, [money("-20.00")]);
        assert_eq!(
            Declared::of(&document(json!({"billing_name": "Ada"}))),
            None
        );
        let ledgers = Declared::of(&document(json!({"transfer_balance": "30.00", "ledgers": [
            {"last_statement_balance": "20.00", "historical_statement_transactions": [{}]},
            {"ledger_balance": "10.00"}]})))
        .expect("declared");
        assert_eq!(ledgers.statements, [money("20.00")]);
    }

    fn summary(
        balance: &str,
        closing: Option<&str>,
        kept: Option<Reconciliation>,
    ) -> AccountSummary {
        AccountSummary {
            balance: money(balance),
            closed_statements: closing
                .map(|closing| ClosedStatement {
                    ledger: None,
                    first_transaction_date: None,
                    closing_date: NaiveDate::from_ymd_opt(2025, 1, 31).expect("date"),
                    issued_date: NaiveDate::from_ymd_opt(2025, 2, 3).expect("date"),
                    closing_balance: money(closing),
                    transactions: 2,
                })
                .into_iter()
                .collect(),
            reconciliation: kept,
            ..AccountSummary::default()
        }
    }

    #[test]
    fn a_ledger_that_holds_what_was_declared_is_reconciled_and_one_that_does_not_names_the_first_figure()
     {
        let declared = Declared {
            balance: money("-35.00"),
            statements: vec![money("-20.00")],
        };
        let kept = Some(Reconciliation::opened(Some(&declared)));
        let view = reconcile(&summary("-35.00", Some("-20.00"), kept.clone()), || None);
        assert_eq!(view.state, ReconciliationState::Reconciled);
        assert_eq!(view.difference, Some(Money::ZERO));

        let view = reconcile(&summary("-40.00", Some("-25.00"), kept.clone()), || None);
        assert_eq!(view.state, ReconciliationState::Mismatch);
        assert_eq!(view.difference, Some(money("-5.00")));
        assert_eq!(
            view.first_diverging.as_deref(),
            Some("last_statement_balance")
        );

        let view = reconcile(&summary("-40.00", Some("-20.00"), kept), || None);
        assert_eq!(view.first_diverging.as_deref(), Some("transfer_balance"));

        // Migrated before reconciliations were kept: its document stands for it.
        let view = reconcile(&summary("0.00", None, None), || Some(declared.clone()));
        assert_eq!(view.state, ReconciliationState::Mismatch);
        assert_eq!(view.difference, Some(money("35.00")));

        let view = reconcile(
            &summary("0.00", None, Some(Reconciliation::opened(None))),
            || None,
        );
        assert_eq!(view.state, ReconciliationState::NotDeclared);
    }

    #[test]
    fn a_stored_accounts_declaration_adds_what_was_posted_since_and_not_what_it_brought() {
        let document = document(json!({"transfer_balance": "-35.00",
            "current_statement_transactions": [{"transaction_id": "C-1"}]}));
        let kept = |id: &str, kind: &str, amount: &str| -> Transaction {
            serde_json::from_value(
                json!({"transaction_id": id, "transaction_date": "2025-03-01",
                "amount": amount, "type": kind}),
            )
            .expect("a transaction")
        };
        let stored = [
            kept("C-1", "CHARGE", "25.00"),
            kept("T-1", "CHARGE", "40.00"),
        ];
        let reconciliation = Reconciliation::of_stored(&document, &stored);
        assert_eq!(reconciliation.declared, Some(money("-75.00")));
        let none = Reconciliation::of_stored(&self::document(json!({})), &stored);
        assert_eq!(none.declared, None);
    }

    #[test]
    fn counts_move_by_what_a_change_adds_and_takes() {
        let mut counts = Counts::default();
        counts.add("state.PENDING", 1);
        let mut after = Counts::default();
        after.add("state.ERRORED", 1);
        after.add("error.plugin_failed", 1);
        let moved = Counts::moved(&counts, &after);
        assert_eq!(moved.get("state.PENDING"), -1);
        assert_eq!(moved.get("state.ERRORED"), 1);
        let mut total = counts.clone();
        total.add_all(&moved);
        assert_eq!(total, after);
        assert_eq!(
            total.under("error.").collect::<Vec<_>>(),
            [("plugin_failed", 1)]
        );
    }
}
