//! What the benchmark sends: the request bodies (valid for the example plugin's rules: `OE-`
//! account numbers, national phone numbers, the supplier's own product code) and one
//! [`Scenario`] per measured endpoint, each a generator of operations.

use crate::load::{Generator, OpContext, Step};
use serde_json::json;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const VALIDATE: &str = "/v1/data-import/validate-account/";
pub const STAGE: &str = "/v1/data-import/account-import-process/create-or-update/";
pub const PROCESS: &str = "/v1/data-import/account-import-process/process/";
pub const NOTES: &str = "/v1/data-import/notes/create/";
pub const TRANSACTIONS: &str = "/v1/data-import/transactions/create/";

/// The supplier every scenario uses.
pub const SUPPLIER: &str = "BENCH";
/// The example plugin's settings: E.164 with country code 44, `OE-<digits>` account
/// numbers, `OLDVAR` mapped to `VAR-22`.
pub fn plugin_config() -> serde_json::Value {
    json!({"default_country_code": "44", "account_number_prefix": "OE-", "product_code.OLDVAR": "VAR-22"})
}

/// First external account numbers of each kind (`OE-<number>`), far enough apart never to meet.
pub const MIGRATED_ACCOUNTS_FROM: u64 = 10_000_000;
pub const STAGE_PROCESS_ACCOUNTS_FROM: u64 = 20_000_000;
pub const PENDING_ACCOUNTS_FROM: u64 = 50_000_000;

/// The external account number `OE-<number>`.
pub fn external(number: u64) -> String {
    format!("OE-{number}")
}

/// Transactions in each of the staged account's two lists, its historical statement's and its
/// current statement's (`--ledger-transactions`; 50: a realistic ledger to migrate, 0: an
/// account without money). Set once, before any body is made.
static LEDGER_TRANSACTIONS: AtomicUsize = AtomicUsize::new(DEFAULT_LEDGER_TRANSACTIONS);
pub const DEFAULT_LEDGER_TRANSACTIONS: usize = 50;

/// Makes every account staged from now on carry `count` transactions in each list.
pub fn set_ledger_transactions(count: usize) {
    LEDGER_TRANSACTIONS.store(count, Ordering::Relaxed);
}

/// One of the account's transactions: the `index`th of its list `prefix` (`H` or `C`), charges
/// and payments by turns, dated a week apart from `first_day` (days since 2024-01-01).
fn ledger_transaction(
    prefix: &str,
    index: usize,
    first_day: usize,
    payment: &str,
) -> serde_json::Value {
    let date = chrono_like_date(first_day + index * 7 / 2);
    if index.is_multiple_of(2) {
        json!({"transaction_id": format!("{prefix}-{index}"), "transaction_date": date,
               "amount": "30.00", "type": "CHARGE", "reason": "IMPORTED_CHARGE"})
    } else {
        json!({"transaction_id": format!("{prefix}-{index}"), "transaction_date": date,
               "amount": payment, "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT"})
    }
}

/// `YYYY-MM-DD` of the day `days` after 2024-01-01 (the benchmark needs no calendar crate).
fn chrono_like_date(days: usize) -> String {
    const MONTHS: [usize; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let (mut year, mut day) = (2024_usize, days);
    loop {
        let length = if year.is_multiple_of(4) { 366 } else { 365 };
        if day < length {
            break;
        }
        day -= length;
        year += 1;
    }
    let mut month = 0;
    while month < 12 {
        let length = if month == 1 && year % 4 != 0 {
            28
        } else {
            MONTHS[month]
        };
        if day < length {
            break;
        }
        day -= length;
        month += 1;
    }
    format!("{year}-{:02}-{:02}", month + 1, day + 1)
}

/// A valid account to stage, with its ledger ([`set_ledger_transactions`]; by default 50
/// historical transactions, 25 charges of 30.00 and 25 payments of 28.00, on the last
/// statement closed 2024-12-31, and 50 current ones, 25 charges of 30.00 and 25 payments of
/// 31.00: -50.00 on the last statement, -25.00 transferred).
pub fn account(external_account_number: &str) -> String {
    let count = LEDGER_TRANSACTIONS.load(Ordering::Relaxed);
    let historical: Vec<serde_json::Value> = (0..count)
        .map(|index| ledger_transaction("H", index, 0, "28.00"))
        .collect();
    let current: Vec<serde_json::Value> = (0..count)
        .map(|index| ledger_transaction("C", index, 366, "31.00"))
        .collect();
    // Charges and payments by turns: -2.00 each pair on the statement, +1.00 after it.
    let pairs = i64::try_from(count / 2).unwrap_or_default();
    let odd_charge = if count % 2 == 1 { 3000 } else { 0 };
    let last_statement = -200 * pairs - odd_charge;
    let transfer = last_statement + 100 * pairs - odd_charge;
    let pounds = |pence: i64| {
        format!(
            "{}{}.{:02}",
            if pence < 0 { "-" } else { "" },
            pence.abs() / 100,
            pence.abs() % 100
        )
    };
    json!({
        "import_supplier": SUPPLIER,
        "external_account_number": external_account_number,
        "account_type": "DOMESTIC",
        "billing_name": "Ada Lovelace",
        "billing_address1": "1 Analytical Street",
        "billing_address4": "London",
        "billing_postcode": "N1 1AA",
        "customers": [{
            "given_name": "Ada",
            "family_name": "Lovelace",
            "email": "ada@example.com",
            "mobile": "07700 900123",
            "landline": "+44 20 7946 0000"
        }],
        "supply_addresses": [{
            "supply_address1": "1 Analytical Street",
            "supply_postcode": "N1 1AA",
            "customer_at_supply_address_from_date": "2024-01-01",
            "meter_points": [{
                "supply_type": "ELECTRICITY",
                "identifier": "1200023305967",
                "mpid": "TENT",
                "supply_start_date": "2024-01-01",
                "agreements": [{"tariff_code": "OLDVAR", "effective_from": "2024-01-01"}]
            }]
        }],
        "last_billed_to_date": "2024-12-31",
        "transfer_balance": pounds(transfer),
        "last_statement_balance": pounds(last_statement),
        "last_statement_closing_date": "2024-12-31",
        "historical_statement_transactions": historical,
        "current_statement_transactions": current
    })
    .to_string()
}

pub fn process(external_account_number: &str) -> String {
    json!({"import_supplier_code": SUPPLIER, "external_account_number": external_account_number})
        .to_string()
}

/// One note with a body unique to `sequence` (so none is a duplicate).
pub fn one_note(external_account_number: &str, sequence: u64) -> String {
    json!({
        "import_supplier": SUPPLIER,
        "external_account_number": external_account_number,
        "notes": [{"body": format!("Benchmark note {sequence}: prefers e-mail."), "is_pinned": false}]
    })
    .to_string()
}

/// `count` charges with ids unique to `sequence`, dated inside the open statement period.
/// Written directly (a 1000-item body is built per request; the client should stay cheap).
pub fn transactions(external_account_number: &str, sequence: u64, count: usize) -> String {
    let mut body = String::with_capacity(200 + count * 160);
    let _ = write!(
        body,
        r#"{{"import_supplier":"{SUPPLIER}","external_account_number":"{external_account_number}","transactions":["#
    );
    for index in 0..count {
        if index > 0 {
            body.push(',');
        }
        let _ = write!(
            body,
            r#"{{"transaction_id":"T-{sequence}-{index}","transaction_date":"2025-01-15","amount":12.34,"type":"CHARGE","reason":"IMPORTED_CHARGE","display_note":"Old balance"}}"#
        );
    }
    body.push_str("]}");
    body
}

/// A measured endpoint.
#[derive(Clone)]
pub struct Scenario {
    /// Short name for `--only`.
    pub key: &'static str,
    /// As shown in the report.
    pub title: &'static str,
    /// Items one operation carries (transactions per request), for items/s.
    pub items_per_operation: u64,
    pub generator: Generator,
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// The migrated account of a connection: connections spread over `accounts`.
fn account_of(accounts: &[String], op: OpContext) -> &str {
    accounts
        .get(op.worker % accounts.len().max(1))
        .map_or("", String::as_str)
}

/// The scenarios measured level by level against a deployment's migrated `accounts`, in the
/// order they run (the pending list needs its own staging, and comes after).
pub fn levelled(accounts: &Arc<Vec<String>>) -> [Scenario; 5] {
    [
        notes(accounts.clone()),
        transactions_batch(accounts.clone(), 1),
        transactions_batch(accounts.clone(), 1000),
        stage_and_process(),
        transfer_status(accounts.clone()),
    ]
}

pub fn notes(accounts: Arc<Vec<String>>) -> Scenario {
    Scenario {
        key: "notes",
        title: "notes/create (1 note)",
        items_per_operation: 1,
        generator: Arc::new(move |op| {
            vec![Step::Post {
                path: NOTES.into(),
                body: one_note(account_of(&accounts, op), op.sequence),
            }]
        }),
    }
}

pub fn transactions_batch(accounts: Arc<Vec<String>>, count: usize) -> Scenario {
    let (key, title) = if count == 1 {
        ("transactions-1", "transactions/create (1 per request)")
    } else {
        (
            "transactions-1000",
            "transactions/create (1000 per request)",
        )
    };
    Scenario {
        key,
        title,
        items_per_operation: count as u64,
        generator: Arc::new(move |op| {
            vec![Step::Post {
                path: TRANSACTIONS.into(),
                body: transactions(account_of(&accounts, op), op.sequence, count),
            }]
        }),
    }
}

/// A new account staged, then migrated: two requests per operation.
pub fn stage_and_process() -> Scenario {
    Scenario {
        key: "stage-process",
        title: "create-or-update + process (2 requests)",
        items_per_operation: 1,
        generator: Arc::new(|op| {
            let number = external(STAGE_PROCESS_ACCOUNTS_FROM + op.sequence);
            vec![
                Step::Post {
                    path: STAGE.into(),
                    body: account(&number),
                },
                Step::Post {
                    path: PROCESS.into(),
                    body: process(&number),
                },
            ]
        }),
    }
}

/// Stages the pending account `PENDING_ACCOUNTS_FROM + sequence` (fixed-count runs).
pub fn stage_pending() -> Generator {
    Arc::new(|op| {
        vec![Step::Post {
            path: STAGE.into(),
            body: account(&external(PENDING_ACCOUNTS_FROM + op.sequence)),
        }]
    })
}

pub fn transfer_status(accounts: Arc<Vec<String>>) -> Scenario {
    Scenario {
        key: "transfer-status",
        title: "account-transfer-status",
        items_per_operation: 1,
        generator: Arc::new(move |op| {
            let account = accounts
                .get((op.worker + op.sequence as usize) % accounts.len().max(1))
                .map_or("", String::as_str);
            vec![Step::Get {
                path: format!("/v1/data-import/account-transfer-status/{SUPPLIER}/{account}/"),
            }]
        }),
    }
}

pub fn pending_list() -> Scenario {
    Scenario {
        key: "pending-list",
        title: "pending list",
        items_per_operation: 1,
        generator: Arc::new(|_| {
            vec![Step::Get {
                path: format!("/v1/data-import/pending-account-import-processes/{SUPPLIER}/"),
            }]
        }),
    }
}

/// The supplier's campaign report, as an operator asks for it.
pub fn campaign_report() -> Generator {
    Arc::new(|_| {
        vec![Step::Get {
            path: format!("/admin/v1/suppliers/{SUPPLIER}/report"),
        }]
    })
}

/// Every row of the supplier's campaign report as one CSV.
pub fn campaign_report_csv() -> Generator {
    Arc::new(|_| {
        vec![Step::Get {
            path: format!("/admin/v1/suppliers/{SUPPLIER}/report/accounts?format=csv"),
        }]
    })
}

#[cfg(test)]
mod ledger_tests {
    use super::*;

    #[test]
    fn the_account_s_ledger_adds_up_and_its_dates_fall_on_either_side_of_the_closing() {
        let account: serde_json::Value = serde_json::from_str(&account("OE-1")).expect("JSON");
        let sum = |list: &str| -> i64 {
            account[list]
                .as_array()
                .expect("a list")
                .iter()
                .map(|t| {
                    let pence = t["amount"]
                        .as_str()
                        .expect("amount")
                        .replace('.', "")
                        .parse::<i64>()
                        .expect("pence");
                    if t["type"] == "CHARGE" { -pence } else { pence }
                })
                .sum()
        };
        assert_eq!(sum("historical_statement_transactions"), -5000);
        assert_eq!(sum("current_statement_transactions"), 2500);
        let dates = |list: &str| -> Vec<String> {
            account[list]
                .as_array()
                .expect("a list")
                .iter()
                .map(|t| t["transaction_date"].as_str().expect("date").to_owned())
                .collect()
        };
        assert!(
            dates("historical_statement_transactions")
                .iter()
                .all(|d| d.as_str() <= "2024-12-31")
        );
        assert!(
            dates("current_statement_transactions")
                .iter()
                .all(|d| d.as_str() > "2024-12-31" && d.as_str() < "2025-12-01")
        );
        assert_eq!(account["transfer_balance"], "-25.00");
        assert_eq!(account["last_statement_balance"], "-50.00");
        assert_eq!(chrono_like_date(0), "2024-01-01");
        assert_eq!(chrono_like_date(59), "2024-02-29");
        assert_eq!(chrono_like_date(366), "2025-01-01");
        assert_eq!(chrono_like_date(366 + 59), "2025-03-01");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_batches_are_valid_json_with_unique_ids() {
        let body: serde_json::Value =
            serde_json::from_str(&transactions("OE-1", 7, 3)).expect("JSON");
        let ids: Vec<&str> = body["transactions"]
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|transaction| transaction["transaction_id"].as_str())
            .collect();
        assert_eq!(ids, ["T-7-0", "T-7-1", "T-7-2"]);
        assert_eq!(body["external_account_number"], "OE-1");
    }

    #[test]
    fn connections_spread_over_the_accounts() {
        let accounts = vec!["OE-1".to_owned(), "OE-2".to_owned()];
        let op = |worker| OpContext {
            worker,
            sequence: 0,
        };
        assert_eq!(account_of(&accounts, op(0)), "OE-1");
        assert_eq!(account_of(&accounts, op(3)), "OE-2");
    }
}
