//! The events Ferry emits, as typed, versioned payloads of the event catalogue.
//!
//! Every event is checked against the catalogue when it is made; an event that does not
//! match is a bug, fails the change it belongs to, and is never stored or published. Events
//! are written to the outbox in the same transaction as the change they describe.

use super::error::DomainError;
use super::import_process::{ImportProcess, PlatformAccount, format_datetime};
use super::ledger::{LedgerEntry, TransactionType};
use super::payment_instruction::PaymentInstruction;
use crate::domain::catalogue::{Catalogue, CatalogueError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// An event as stored (outbox and log) and published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Event {
    /// Position in the event log, assigned when stored.
    #[serde(default)]
    pub seq: u64,
    /// UUIDv7.
    pub id: String,
    #[serde(rename = "type")]
    pub event_type: String,
    /// Payload version (`v1`, `v2`, … or `1.0.0`).
    pub version: String,
    pub time: DateTime<Utc>,
    /// The account number, when the event is about an account.
    pub subject: Option<String>,
    pub data: Value,
    /// When the relay wrote it to the stream.
    #[serde(default)]
    pub published_at: Option<DateTime<Utc>>,
}

impl Event {
    /// A new event, checked against the catalogue.
    pub fn new(
        event_type: &str,
        version: &str,
        subject: Option<&str>,
        data: Value,
    ) -> Result<Event, CatalogueError> {
        Catalogue::embedded().validate(event_type, version, &data)?;
        Ok(Event {
            seq: 0,
            id: uuid::Uuid::now_v7().to_string(),
            event_type: event_type.to_owned(),
            version: version.to_owned(),
            time: now_to_the_millisecond(),
            subject: subject.map(str::to_owned),
            data,
            published_at: None,
        })
    }

    /// One of Ferry's own events: a mismatch with the catalogue is a bug.
    fn own(
        event_type: &str,
        version: &str,
        subject: Option<&str>,
        data: Value,
    ) -> Result<Event, DomainError> {
        Event::new(event_type, version, subject, data).map_err(|error| {
            tracing::error!(%error, "Ferry made an event that does not match the catalogue");
            DomainError::InvalidEvent(error.to_string())
        })
    }
}

/// The time now, to the millisecond: the precision of an event's `time` on the stream, and
/// so of every event's time, wherever it is read back.
pub fn now_to_the_millisecond() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

const ACCOUNT: &str = "ACCOUNT";

pub fn import_complete(
    process: &ImportProcess,
    account: &PlatformAccount,
) -> Result<Event, DomainError> {
    Event::own(
        "data_import.import_process.complete",
        "v1",
        Some(&account.number),
        json!({"resource_type": ACCOUNT, "external_identifier": process.external_account_number, "identifier": account.number}),
    )
}

pub fn import_error(
    process: &ImportProcess,
    code: &str,
    detail: &str,
) -> Result<Event, DomainError> {
    Event::own(
        "data_import.import_process.error",
        "v1",
        None,
        json!({"resource_type": ACCOUNT, "external_identifier": process.external_account_number, "error_code": code, "error_detail": detail}),
    )
}

pub fn dry_run_complete(process: &ImportProcess) -> Result<Event, DomainError> {
    Event::own(
        "data_import.import_process.dry_run_complete",
        "v1",
        None,
        json!({"resource_type": ACCOUNT, "external_identifier": process.external_account_number}),
    )
}

pub fn dry_run_error(
    process: &ImportProcess,
    code: &str,
    detail: &str,
) -> Result<Event, DomainError> {
    Event::own(
        "data_import.import_process.dry_run_error",
        "v1",
        None,
        json!({"resource_type": ACCOUNT, "external_identifier": process.external_account_number, "error_code": code, "error_detail": detail}),
    )
}

pub fn import_cancelled(
    process: &ImportProcess,
    expiry_window_end: DateTime<Utc>,
) -> Result<Event, DomainError> {
    Event::own(
        "data_import.import_process.cancelled",
        "v1",
        None,
        json!({"resource_type": ACCOUNT, "external_identifier": process.external_account_number, "expiry_window_end": format_datetime(expiry_window_end)}),
    )
}

pub fn account_created(account: &PlatformAccount) -> Result<Event, DomainError> {
    let emails = account.data.customer_emails();
    Event::own(
        "account.created",
        "v1",
        Some(&account.number),
        json!({"account_number": account.number, "account_user_emails": emails, "is_imported": true}),
    )
}

/// The ledger of a platform account: `L-` and the account's hex digits.
pub fn ledger_number(account_number: &str) -> String {
    format!(
        "L-{}",
        account_number.strip_prefix("A-").unwrap_or(account_number)
    )
}

pub fn ledger_entry_posted(
    account_number: &str,
    entry: &LedgerEntry,
) -> Result<Event, DomainError> {
    let ledger = ledger_number(account_number);
    // One per transaction (a thousand for a batch): its objects are built at their size.
    Event::own(
        "billing.ledger.entry_posted",
        "v2",
        Some(account_number),
        object([
            (
                "ledger",
                object([
                    ("account", object([("number", json!(account_number))])),
                    ("number", json!(ledger)),
                    ("id", json!(ledger)),
                ]),
            ),
            (
                "entry",
                object([
                    ("id", json!(entry.id)),
                    (
                        "is_charge",
                        json!(matches!(
                            entry.kind,
                            TransactionType::Charge | TransactionType::SupplyCharge
                        )),
                    ),
                    ("is_credit", json!(entry.kind == TransactionType::Credit)),
                    ("is_payment", json!(entry.kind == TransactionType::Payment)),
                    (
                        "is_repayment",
                        json!(entry.kind == TransactionType::Repayment),
                    ),
                    ("is_reversal", json!(false)),
                    ("is_reversed", json!(false)),
                    ("source_id", json!(entry.id)),
                    ("source_type", json!("IMPORTED_TRANSACTION")),
                ]),
            ),
        ]),
    )
}

/// The JSON object of `fields`, in their order, its map allocated once at its size (`json!`
/// grows it field by field, rehashing as it goes).
fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
    )
}

/// When an instruction stops being usable: the card's expiry (end of its month) when the
/// vendor gives one (a year Ferry can write as a date), else open-ended (`9999-12-31`).
fn usable_to(details: &Value) -> String {
    let card = details.get("card").unwrap_or(details);
    let year = card.get("exp_year").and_then(Value::as_i64);
    let month = card.get("exp_month").and_then(Value::as_i64);
    match (year, month) {
        (Some(year), Some(month)) if (1..=12).contains(&month) && (1..=9998).contains(&year) => {
            let (next_year, next_month) = if month == 12 {
                (year + 1, 1)
            } else {
                (year, month + 1)
            };
            chrono::NaiveDate::from_ymd_opt(next_year as i32, next_month as u32, 1)
                .and_then(|first| first.pred_opt())
                .map_or_else(|| "9999-12-31".to_owned(), |last| last.to_string())
        }
        _ => "9999-12-31".to_owned(),
    }
}

/// A registration flow sent for meter point `mpxn` of `market` on account `account_number`.
pub fn gain_initiated(
    account_number: &str,
    market: super::account::Market,
    mpxn: &str,
) -> Result<Event, DomainError> {
    let event_type = match market {
        super::account::Market::Electricity => {
            "industry.electricity.change_of_supply.gain.initiated"
        }
        super::account::Market::Gas => "industry.gas.change_of_supply.gain.initiated",
    };
    Event::own(
        event_type,
        "v1",
        Some(account_number),
        json!({"meter_point_identifier": mpxn}),
    )
}

pub fn payment_method_new(
    account_number: &str,
    instruction: &PaymentInstruction,
) -> Result<Event, DomainError> {
    Event::own(
        "payments.payment_method.new",
        "v1",
        Some(account_number),
        json!({
            "account_number": account_number,
            "ledger_identifier": ledger_number(account_number),
            "usable_from": format_datetime(instruction.added_at),
            "payment_instruction_id": format!("{}:{}", instruction.vendor, instruction.reference),
            "usable_to": usable_to(&instruction.details),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::{ledger_entry_posted, usable_to};
    use crate::domain::ledger::{LedgerEntry, TransactionType};
    use crate::domain::money::Money;
    use serde_json::json;

    #[test]
    fn a_posted_entry_names_its_ledger_and_what_kind_of_entry_it_is() {
        let entry = LedgerEntry {
            id: 7,
            transaction_id: "T-1".into(),
            kind: TransactionType::SupplyCharge,
            amount: Money::ZERO,
            balance_after: Money::ZERO,
            transaction_date: chrono::NaiveDate::from_ymd_opt(2025, 1, 15).expect("date"),
            posted_at: chrono::Utc::now(),
        };
        let event = ledger_entry_posted("A-1234ABCD", &entry).expect("a catalogued event");
        assert_eq!(event.subject.as_deref(), Some("A-1234ABCD"));
        // In the order Ferry has always written them on the stream.
        assert_eq!(
            serde_json::to_string(&event.data).expect("serialised"),
            json!({
                "ledger": {"account": {"number": "A-1234ABCD"}, "number": "L-1234ABCD", "id": "L-1234ABCD"},
                "entry": {
                    "id": 7,
                    "is_charge": true,
                    "is_credit": false,
                    "is_payment": false,
                    "is_repayment": false,
                    "is_reversal": false,
                    "is_reversed": false,
                    "source_id": 7,
                    "source_type": "IMPORTED_TRANSACTION",
                }
            })
            .to_string()
        );
    }

    #[test]
    fn usable_to_is_the_end_of_the_cards_expiry_month_or_open_ended() {
        let card = |year: i64, month: i64| json!({"card": {"exp_year": year, "exp_month": month}});
        assert_eq!(usable_to(&card(2027, 2)), "2027-02-28");
        assert_eq!(usable_to(&card(2028, 12)), "2028-12-31");
        assert_eq!(
            usable_to(&json!({"exp_year": 2030, "exp_month": 6})),
            "2030-06-30"
        );
        // What no card can say: open-ended, never a panic or a wrapped year.
        for (year, month) in [(i64::MAX, 12), (i64::MIN, 1), (0, 5), (2027, 13), (2027, 0)] {
            assert_eq!(
                usable_to(&card(year, month)),
                "9999-12-31",
                "{year}-{month}"
            );
        }
        assert_eq!(usable_to(&json!({"bank_account": "GB00"})), "9999-12-31");
    }
}
