//! The money an account document carries: its ledgers, checked as the real platform checks
//! them, and read for the ledger a migration opens.
//!
//! A document declares its ledgers in `ledgers`, or, in the real document's deprecated form,
//! in the same fields at its top level, which make one ledger. Each ledger's transactions are
//! read by the reader of `transactions/create/` ([`read_transactions`]: the same schema, rules
//! and codes), then the real `EnergyAccount`'s rules apply, each with its real code:
//!
//! - the historical transactions sum to `last_statement_balance` (zero when omitted):
//!   `historical_statement_transactions_balance_mismatch`;
//! - `last_statement_balance` plus the current transactions add up to the ledger's balance
//!   (`transfer_balance` at the top level, `ledger_balance` in `ledgers`; a missing transfer
//!   balance is zero): `balance_mismatch_on_transfer_balance`; the ledgers' balances add up to
//!   `transfer_balance`: `ledger_balances_not_equal_to_transfer_balance`;
//! - payments and credits add to a balance, charges, supply charges and repayments take from
//!   it; prepay transactions (`to_prepay_meter_serial_number`) are left out of the sums, as
//!   the real platform treats them apart, and off the ledger;
//! - historical transactions are on or before the statement closing date
//!   (`last_statement_closing_date`, else the earliest `last_billed_to_date` of the account and
//!   its supply points), current ones strictly after it; without a closing date, either
//!   current or historical transactions (not both) may be on the `last_billed_to_date`, and
//!   the statement closes the day before the first current one there;
//! - the issue date is not before the closing date, the closing date is not in the future,
//!   every transaction id appears once in the whole document.
//!
//! Each error is at the dot path of what is at fault: a transaction's date, a balance field.

use super::ledger::{Transaction, read_transactions, to_the_penny};
use super::money::Money;
use super::validation::{
    FieldError, FieldErrors, UnknownFields, parse_date, parse_decimal_value, reading,
};
use chrono::{Days, NaiveDate};
use rust_decimal::Decimal;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The fields a ledger has, in `ledgers` or (deprecated there) at the document's top level.
pub const LEDGER_FIELDS: [&str; 5] = [
    HISTORICAL,
    CURRENT,
    "last_statement_balance",
    "last_statement_closing_date",
    "last_statement_issue_date",
];
const HISTORICAL: &str = "historical_statement_transactions";
const CURRENT: &str = "current_statement_transactions";

/// The ledgers a valid account document declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredLedgers {
    /// `transfer_balance` (zero when omitted): what the account's balance is once migrated.
    pub transfer_balance: Money,
    pub ledgers: Vec<DeclaredLedger>,
}

/// One ledger of an account document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredLedger {
    /// Its `ledger_code`, else its `ledger_identifier`, when it is one of `ledgers`.
    pub name: Option<String>,
    /// The transactions of its initial closed statement, in the document's order.
    pub historical: Vec<Transaction>,
    /// The transactions of its open statement, in the document's order.
    pub current: Vec<Transaction>,
    /// `last_statement_balance`, zero when omitted: the closed statement's closing balance.
    pub last_statement_balance: Money,
    /// Its initial closed statement's closing and issue dates, when it has one (historical
    /// transactions, or a closing date).
    pub closed: Option<Closing>,
}

/// When a ledger's initial closed statement closed, and when it was issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closing {
    pub closing_date: NaiveDate,
    pub issued_date: NaiveDate,
}

impl DeclaredLedger {
    /// Its transactions the ledger takes (prepay ones are kept apart), historical first.
    pub fn postings(&self) -> impl Iterator<Item = &Transaction> {
        self.historical
            .iter()
            .chain(&self.current)
            .filter(|transaction| !is_prepay(transaction))
    }
}

impl DeclaredLedgers {
    /// The last day a closed statement of the document covers: the open statement period
    /// starts the day after.
    pub fn closed_through(&self) -> Option<NaiveDate> {
        self.ledgers
            .iter()
            .filter_map(|ledger| Some(ledger.closed?.closing_date))
            .max()
    }
}

/// A prepay meter's transaction: the real platform treats these apart from the account's
/// ledger.
pub fn is_prepay(transaction: &Transaction) -> bool {
    transaction.to_prepay_meter_serial_number.is_some()
}

/// Reads the ledgers of `document` and checks their rules, as of `today`. `found` are the
/// errors already found in the document: a list of transactions with an error of its own is
/// not read again, and the rules that need it are left until it is right. Every problem is
/// returned at once.
pub fn read_ledgers(
    document: &Map<String, Value>,
    today: NaiveDate,
    found: &FieldErrors,
) -> Result<DeclaredLedgers, FieldErrors> {
    let mut errors = FieldErrors::default();
    let billed_to = earliest_billed_to(document);
    let sources: Vec<(String, &Map<String, Value>)> = match document.get("ledgers") {
        Some(Value::Array(list)) => {
            for field in LEDGER_FIELDS {
                if document.contains_key(field) {
                    errors.push(FieldError::new(
                        field.to_owned(),
                        "ledger_fields_outside_ledgers",
                        format!(
                            "{field} is given both at the top level and in `ledgers`: give \
                             it in `ledgers` only."
                        ),
                    ));
                }
            }
            check_ledger_names(list, &mut errors);
            list.iter()
                .enumerate()
                .filter_map(|(index, ledger)| {
                    Some((format!("ledgers.{index}."), ledger.as_object()?))
                })
                .collect()
        }
        _ => vec![(String::new(), document)],
    };
    let transfer_balance = money(document, "transfer_balance");
    let mut ledgers = Vec::with_capacity(sources.len());
    let mut balances = Some(Decimal::ZERO);
    let mut seen = HashSet::new();
    for (at, fields) in &sources {
        let ledger = read_ledger(at, fields, billed_to, today, found, &mut seen, &mut errors);
        let declared = if at.is_empty() {
            Some(("transfer_balance".to_owned(), transfer_balance))
        } else {
            fields.get("ledger_balance").map(|_| {
                (
                    format!("{at}ledger_balance"),
                    money(fields, "ledger_balance"),
                )
            })
        };
        let held = ledger.as_ref().and_then(|ledger| {
            ledger
                .current
                .iter()
                .filter(|transaction| !is_prepay(transaction))
                .try_fold(ledger.last_statement_balance.0, |sum, transaction| {
                    sum.checked_add(transaction.kind.signed(transaction.amount))
                })
        });
        if let (Some((attr, Some(declared))), Some(held)) = (&declared, held)
            && declared.0 != held
        {
            errors.push(FieldError::new(
                attr.clone(),
                "balance_mismatch_on_transfer_balance",
                format!(
                    "The current statement transactions plus the last statement balance come to \
                     {}, not {declared}.",
                    Money(held)
                ),
            ));
        }
        let ledger_balance = match declared {
            Some((_, declared)) => declared.map(|money| money.0),
            None => held,
        };
        balances = balances
            .zip(ledger_balance)
            .and_then(|(sum, balance)| sum.checked_add(balance));
        ledgers.extend(ledger);
    }
    if !sources.is_empty()
        && document.get("ledgers").is_some_and(Value::is_array)
        && let (Some(sum), Some(transfer)) = (balances, transfer_balance)
        && sum != transfer.0
    {
        errors.push(FieldError::new(
            "transfer_balance".to_owned(),
            "ledger_balances_not_equal_to_transfer_balance",
            format!(
                "The ledgers' balances add up to {}, not the transfer balance {transfer}.",
                Money(sum)
            ),
        ));
    }
    if !errors.is_empty() || ledgers.len() != sources.len() {
        return Err(errors);
    }
    Ok(DeclaredLedgers {
        transfer_balance: transfer_balance.unwrap_or_default(),
        ledgers,
    })
}

/// A ledger's code, and its identifier, are each used once among `ledgers`.
fn check_ledger_names(ledgers: &[Value], errors: &mut FieldErrors) {
    for (field, code, what) in [
        (
            "ledger_code",
            "duplicate_ledger_entries_found",
            "ledger code",
        ),
        (
            "ledger_identifier",
            "duplicate_identifiers_entries_found",
            "ledger identifier",
        ),
    ] {
        let mut seen = HashSet::new();
        for (index, ledger) in ledgers.iter().enumerate() {
            if let Some(Value::String(name)) = ledger.get(field)
                && !seen.insert(name.as_str())
            {
                errors.push(FieldError::new(
                    format!("ledgers.{index}.{field}"),
                    code,
                    format!("The {what} {name:?} is given to two ledgers."),
                ));
            }
        }
    }
}

/// One ledger, whose fields start at `at` (`""`, or `ledgers.N.`), and its rules but the sum
/// of the ledgers. `None` when something of it cannot be read (reported, here or before).
fn read_ledger(
    at: &str,
    fields: &Map<String, Value>,
    billed_to: Option<NaiveDate>,
    today: NaiveDate,
    found: &FieldErrors,
    seen: &mut HashSet<String>,
    errors: &mut FieldErrors,
) -> Option<DeclaredLedger> {
    let historical = read_list(fields, at, HISTORICAL, today, found, errors);
    let current = read_list(fields, at, CURRENT, today, found, errors);
    for (name, list) in [(HISTORICAL, &historical), (CURRENT, &current)] {
        for (index, transaction) in list.iter().flatten().enumerate() {
            if !seen.insert(transaction.transaction_id.clone()) {
                errors.push(FieldError::new(
                    format!("{at}{name}.{index}.transaction_id"),
                    "duplicate_transaction_ids",
                    format!(
                        "Transaction id {} appears more than once in the account.",
                        transaction.transaction_id
                    ),
                ));
            }
        }
    }
    let date = |name: &str| parse_date(fields.get(name)?.as_str()?);
    let explicit_closing = date("last_statement_closing_date");
    let issue = date("last_statement_issue_date");
    let last_statement_balance = fields
        .get("last_statement_balance")
        .map_or(Some(Money::ZERO), |_| {
            money(fields, "last_statement_balance")
        });
    let (historical, current, last_statement_balance) =
        (historical?, current?, last_statement_balance?);

    if let Some(closing) = explicit_closing
        && closing > today
    {
        errors.push(FieldError::new(
            format!("{at}last_statement_closing_date"),
            "historical_statement_period_end_in_future",
            "The last statement cannot have closed in the future.",
        ));
    }
    let inferred_closing = explicit_closing.or(billed_to);
    if let (Some(issue), Some(closing)) = (issue, inferred_closing)
        && issue < closing
    {
        errors.push(FieldError::new(
            format!("{at}last_statement_issue_date"),
            "last_statement_issued_before_closing_date",
            format!("The last statement was issued before it closed ({closing})."),
        ));
    }
    let closing_date = match (explicit_closing, billed_to) {
        (Some(closing), _) => {
            check_dates(at, &historical, &current, closing, closing, errors);
            Some(closing)
        }
        (None, Some(billed_to)) => {
            // Either current or historical transactions may be on the last billed-to date,
            // not both: the statement then closes the day before the first current one.
            let current_on = current.iter().any(|t| t.transaction_date == billed_to);
            if current_on {
                for (index, transaction) in historical.iter().enumerate() {
                    if transaction.transaction_date == billed_to {
                        errors.push(FieldError::new(
                            format!("{at}{HISTORICAL}.{index}.transaction_date"),
                            "historical_statement_transaction_after_current_statement_transaction",
                            format!(
                                "Historical and current transactions are both dated {billed_to}, \
                                 the last billed-to date: give the last statement's closing date."
                            ),
                        ));
                    }
                }
            }
            let closing = if current_on {
                billed_to
                    .checked_sub_days(Days::new(1))
                    .unwrap_or(billed_to)
            } else {
                billed_to
            };
            check_dates(at, &historical, &current, billed_to, closing, errors);
            Some(closing)
        }
        (None, None) => {
            if !historical.is_empty() {
                errors.push(FieldError::new(
                    format!("{at}{HISTORICAL}"),
                    "historical_statement_transactions_without_last_statement_closing_date_or_last_billed_to_date",
                    "Historical statement transactions need a last statement closing date or a \
                     last billed-to date.",
                ));
            }
            None
        }
    };

    let historical_sum = historical
        .iter()
        .filter(|transaction| !is_prepay(transaction))
        .try_fold(Decimal::ZERO, |sum, transaction| {
            sum.checked_add(transaction.kind.signed(transaction.amount))
        });
    if historical_sum != Some(last_statement_balance.0) {
        let attr = if fields.contains_key("last_statement_balance") {
            "last_statement_balance"
        } else {
            HISTORICAL
        };
        errors.push(FieldError::new(
            format!("{at}{attr}"),
            "historical_statement_transactions_balance_mismatch",
            format!(
                "The historical statement transactions come to {}, not the last statement \
                 balance {last_statement_balance}.",
                historical_sum.map_or_else(
                    || "more than can be held".to_owned(),
                    |sum| Money(sum).to_string()
                )
            ),
        ));
    }

    let closed = closing_date
        .filter(|_| !historical.is_empty() || explicit_closing.is_some())
        .map(|closing_date| Closing {
            closing_date,
            issued_date: issue
                .or(explicit_closing)
                .or(billed_to)
                .unwrap_or(closing_date),
        });
    let name = ["ledger_code", "ledger_identifier"]
        .iter()
        .find_map(|field| fields.get(*field)?.as_str())
        .filter(|_| !at.is_empty())
        .map(str::to_owned);
    Some(DeclaredLedger {
        name,
        historical,
        current,
        last_statement_balance,
        closed,
    })
}

/// Historical transactions on or before `historical_by`, current ones after `current_after`.
fn check_dates(
    at: &str,
    historical: &[Transaction],
    current: &[Transaction],
    historical_by: NaiveDate,
    current_after: NaiveDate,
    errors: &mut FieldErrors,
) {
    for (index, transaction) in historical.iter().enumerate() {
        if transaction.transaction_date > historical_by {
            errors.push(FieldError::new(
                format!("{at}{HISTORICAL}.{index}.transaction_date"),
                "historical_statement_transaction_after_last_statement_closing_date",
                format!(
                    "A historical statement transaction must be dated on or before the last \
                     statement's closing date, {historical_by}."
                ),
            ));
        }
    }
    for (index, transaction) in current.iter().enumerate() {
        if transaction.transaction_date <= current_after {
            errors.push(FieldError::new(
                format!("{at}{CURRENT}.{index}.transaction_date"),
                "current_statement_transaction_before_current_statement_opening_date",
                format!(
                    "A current statement transaction must be dated after the last statement's \
                     closing date, {current_after}."
                ),
            ));
        }
    }
}

/// The transactions of the list `name` of a ledger (none when it has no such list), read by
/// the reader of `transactions/create/`; its errors are reported at the list's own path. `None`
/// when the list cannot be read (its errors reported, here or in `found`).
fn read_list(
    fields: &Map<String, Value>,
    at: &str,
    name: &str,
    today: NaiveDate,
    found: &FieldErrors,
    errors: &mut FieldErrors,
) -> Option<Vec<Transaction>> {
    let Some(list) = fields.get(name) else {
        return Some(Vec::new());
    };
    let path = format!("{at}{name}");
    let within = format!("{path}.");
    if found.0.iter().any(|error| {
        error
            .attr
            .as_deref()
            .is_some_and(|attr| attr == path || attr.starts_with(&within))
    }) || !list.is_array()
    {
        return None;
    }
    // The list cloned, not serialised again (`json!` would walk it through a serialiser).
    let body = Value::Object(Map::from_iter([
        ("import_supplier".to_owned(), Value::from("-")),
        ("external_account_number".to_owned(), Value::from("-")),
        ("transactions".to_owned(), list.clone()),
    ]));
    // Unknown fields were named (or refused) by the account's own check.
    let (read, _) = reading(UnknownFields::Ignore, || {
        read_transactions(&body, usize::MAX, today)
    });
    match read {
        Ok(posted) => Some(posted.transactions),
        Err(list_errors) => {
            for mut error in list_errors.0 {
                error.attr = error
                    .attr
                    .map(|attr| match attr.strip_prefix("transactions") {
                        Some(rest) => format!("{path}{rest}"),
                        None => attr,
                    });
                errors.push(error);
            }
            None
        }
    }
}

/// An amount of the document, to the penny (`None` when it is not one: the schema says why).
fn money(fields: &Map<String, Value>, name: &str) -> Option<Money> {
    match fields.get(name) {
        None | Some(Value::Null) => Some(Money::ZERO),
        Some(value) => parse_decimal_value(value, super::ledger::AMOUNT_PLACES)
            .ok()
            .map(to_the_penny),
    }
}

/// The earliest `last_billed_to_date` of the account and of its supply points (their meter
/// points, meters and registers).
pub fn earliest_billed_to(document: &Map<String, Value>) -> Option<NaiveDate> {
    fn walk(value: &Value, earliest: &mut Option<NaiveDate>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match value {
                        Value::String(text) if key == "last_billed_to_date" => {
                            if let Some(date) = parse_date(text) {
                                *earliest = Some(earliest.map_or(date, |e| e.min(date)));
                            }
                        }
                        _ => walk(value, earliest),
                    }
                }
            }
            Value::Array(list) => list.iter().for_each(|value| walk(value, earliest)),
            _ => {}
        }
    }
    let mut earliest = document
        .get("last_billed_to_date")
        .and_then(Value::as_str)
        .and_then(parse_date);
    if let Some(addresses) = document.get("supply_addresses") {
        walk(addresses, &mut earliest);
    }
    earliest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::validation::codes;
    use serde_json::json;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 6, 1).expect("date")
    }

    fn transaction(id: &str, date: &str, kind: &str, amount: &str) -> Value {
        let mut transaction =
            json!({"transaction_id": id, "transaction_date": date, "amount": amount, "type": kind});
        match kind {
            "CHARGE" => transaction["reason"] = json!("IMPORTED_CHARGE"),
            "CREDIT" => transaction["reason"] = json!("IMPORTED_CREDIT"),
            _ => {}
        }
        transaction
    }

    /// The issue's own document: -35.00 transferred, -20.00 on the last statement.
    fn document() -> Map<String, Value> {
        let value = json!({
            "import_supplier": "OLD_CO", "external_account_number": "ACC-1",
            "transfer_balance": "-35.00",
            "last_statement_balance": "-20.00",
            "last_statement_closing_date": "2025-01-31",
            "last_statement_issue_date": "2025-02-03",
            "historical_statement_transactions": [
                transaction("H-1", "2025-01-05", "CHARGE", "30.00"),
                transaction("H-2", "2025-01-20", "PAYMENT", "10.00"),
            ],
            "current_statement_transactions": [
                transaction("C-1", "2025-02-10", "CHARGE", "25.00"),
                transaction("C-2", "2025-02-20", "CREDIT", "10.00"),
            ],
        });
        value.as_object().cloned().expect("object")
    }

    fn errors_of(document: &Map<String, Value>) -> Vec<(String, String)> {
        codes(&read_ledgers(document, today(), &FieldErrors::default()).expect_err("refused"))
    }

    fn pair(attr: &str, code: &str) -> (String, String) {
        (attr.to_owned(), code.to_owned())
    }

    #[test]
    fn a_ledger_that_adds_up_is_read_with_its_closed_statement() {
        let read = read_ledgers(&document(), today(), &FieldErrors::default()).expect("valid");
        assert_eq!(read.transfer_balance.to_string(), "-35.00");
        let [ledger] = read.ledgers.as_slice() else {
            panic!("one ledger: {read:?}");
        };
        assert_eq!(ledger.name, None);
        assert_eq!(ledger.last_statement_balance.to_string(), "-20.00");
        assert_eq!(
            ledger.closed,
            Some(Closing {
                closing_date: NaiveDate::from_ymd_opt(2025, 1, 31).expect("date"),
                issued_date: NaiveDate::from_ymd_opt(2025, 2, 3).expect("date"),
            })
        );
        assert_eq!(
            ledger
                .postings()
                .map(|t| t.transaction_id.as_str())
                .collect::<Vec<_>>(),
            ["H-1", "H-2", "C-1", "C-2"]
        );
        assert_eq!(read.closed_through(), NaiveDate::from_ymd_opt(2025, 1, 31));
    }

    #[test]
    fn balances_that_do_not_add_up_are_refused_with_the_real_codes() {
        let mut document = document();
        document.insert("transfer_balance".into(), json!("999.00"));
        assert_eq!(
            errors_of(&document),
            [pair(
                "transfer_balance",
                "balance_mismatch_on_transfer_balance"
            )]
        );
        let mut document = self::document();
        document.insert("last_statement_balance".into(), json!(-25));
        let found = errors_of(&document);
        assert!(
            found.contains(&pair(
                "last_statement_balance",
                "historical_statement_transactions_balance_mismatch"
            )),
            "{found:?}"
        );
        // Without a last statement balance, the historical transactions must sum to zero.
        let mut document = self::document();
        document.remove("last_statement_balance");
        let found = errors_of(&document);
        assert!(
            found.contains(&pair(
                HISTORICAL,
                "historical_statement_transactions_balance_mismatch"
            )),
            "{found:?}"
        );
    }

    #[test]
    fn prepay_transactions_are_left_out_of_the_sums() {
        let mut document = document();
        let mut prepay = transaction("P-1", "2025-02-11", "PAYMENT", "5.00");
        prepay["to_prepay_meter_serial_number"] = json!("Z16N389556");
        document["current_statement_transactions"]
            .as_array_mut()
            .expect("list")
            .push(prepay);
        let read = read_ledgers(&document, today(), &FieldErrors::default()).expect("valid");
        assert_eq!(read.ledgers[0].current.len(), 3);
        assert_eq!(read.ledgers[0].postings().count(), 4);
    }

    #[test]
    fn dates_are_refused_at_the_transaction_at_fault() {
        let mut document = document();
        document["historical_statement_transactions"][1]["transaction_date"] = json!("2025-02-01");
        document["current_statement_transactions"][0]["transaction_date"] = json!("2025-01-31");
        document.insert("last_statement_issue_date".into(), json!("2025-01-30"));
        assert_eq!(
            errors_of(&document),
            [
                pair(
                    "last_statement_issue_date",
                    "last_statement_issued_before_closing_date"
                ),
                pair(
                    "historical_statement_transactions.1.transaction_date",
                    "historical_statement_transaction_after_last_statement_closing_date"
                ),
                pair(
                    "current_statement_transactions.0.transaction_date",
                    "current_statement_transaction_before_current_statement_opening_date"
                ),
            ]
        );
        let mut document = self::document();
        document.insert("last_statement_closing_date".into(), json!("2025-07-01"));
        assert!(errors_of(&document).contains(&pair(
            "last_statement_closing_date",
            "historical_statement_period_end_in_future"
        )));
    }

    #[test]
    fn without_a_closing_date_the_last_billed_to_date_closes_the_statement() {
        let mut document = document();
        document.remove("last_statement_closing_date");
        document.remove("last_statement_issue_date");
        assert_eq!(
            errors_of(&document),
            [pair(
                HISTORICAL,
                "historical_statement_transactions_without_last_statement_closing_date_or_last_billed_to_date"
            )]
        );
        // A meter point's billed-to date counts, the earliest one.
        document.insert(
            "supply_addresses".into(),
            json!([{"meter_points": [{"last_billed_to_date": "2025-02-10"}]}]),
        );
        document.insert("last_billed_to_date".into(), json!("2025-02-12"));
        let read = read_ledgers(&document, today(), &FieldErrors::default()).expect("valid");
        let closing = read.ledgers[0].closed.expect("closed");
        // The current transaction on the billed-to date opens the period that day.
        let day = |d| NaiveDate::from_ymd_opt(2025, 2, d).expect("date");
        assert_eq!(
            (closing.closing_date, closing.issued_date),
            (day(9), day(10))
        );
        // Not both historical and current transactions on it.
        document["historical_statement_transactions"][1]["transaction_date"] = json!("2025-02-10");
        let found = errors_of(&document);
        assert_eq!(
            found,
            [pair(
                "historical_statement_transactions.1.transaction_date",
                "historical_statement_transaction_after_current_statement_transaction"
            )]
        );
    }

    #[test]
    fn each_transaction_is_read_as_transactions_create_reads_it() {
        let mut document = document();
        document["current_statement_transactions"][1]["transaction_id"] = json!("H-1");
        document["current_statement_transactions"][0]["transaction_date"] = json!("2026-01-01");
        document["historical_statement_transactions"][0]
            .as_object_mut()
            .expect("object")
            .remove("transaction_id");
        let found = errors_of(&document);
        for expected in [
            pair(
                "historical_statement_transactions.0.transaction_id",
                "missing_transaction_id",
            ),
            pair(
                "current_statement_transactions.0.transaction_date",
                "transaction_in_future",
            ),
        ] {
            assert!(found.contains(&expected), "{expected:?} not in {found:?}");
        }
        let mut document = self::document();
        document["current_statement_transactions"][1]["transaction_id"] = json!("H-1");
        assert_eq!(
            errors_of(&document),
            [pair(
                "current_statement_transactions.1.transaction_id",
                "duplicate_transaction_ids"
            )]
        );
    }

    #[test]
    fn ledgers_are_checked_each_and_together() {
        let top = document();
        let mut ledger = Map::new();
        for field in LEDGER_FIELDS {
            ledger.insert(field.to_owned(), top[field].clone());
        }
        ledger.insert("ledger_code".into(), json!("MAIN"));
        ledger.insert("ledger_balance".into(), json!("-35.00"));
        let mut document = Map::new();
        document.insert("transfer_balance".into(), json!("-35.00"));
        document.insert("ledgers".into(), json!([ledger]));
        let read = read_ledgers(&document, today(), &FieldErrors::default()).expect("valid");
        assert_eq!(read.ledgers[0].name.as_deref(), Some("MAIN"));

        let mut second = ledger.clone();
        for list in [HISTORICAL, CURRENT] {
            for transaction in second[list].as_array_mut().expect("list") {
                let id = format!(
                    "2-{}",
                    transaction["transaction_id"].as_str().unwrap_or_default()
                );
                transaction["transaction_id"] = json!(id);
            }
        }
        second.insert("ledger_balance".into(), json!("-30.00"));
        document.insert("ledgers".into(), json!([ledger, second]));
        document.insert("current_statement_transactions".into(), json!([]));
        assert_eq!(
            errors_of(&document),
            [
                pair(CURRENT, "ledger_fields_outside_ledgers"),
                pair("ledgers.1.ledger_code", "duplicate_ledger_entries_found"),
                pair(
                    "ledgers.1.ledger_balance",
                    "balance_mismatch_on_transfer_balance"
                ),
                pair(
                    "transfer_balance",
                    "ledger_balances_not_equal_to_transfer_balance"
                ),
            ]
        );
    }

    #[test]
    fn a_document_without_money_has_an_empty_ledger() {
        let document = json!({"import_supplier": "OLD_CO", "external_account_number": "A"});
        let read = read_ledgers(
            document.as_object().expect("object"),
            today(),
            &FieldErrors::default(),
        )
        .expect("valid");
        assert_eq!(read.transfer_balance, Money::ZERO);
        assert_eq!(read.ledgers.len(), 1);
        assert_eq!(read.ledgers[0].closed, None);
        assert_eq!(read.closed_through(), None);
    }
}
