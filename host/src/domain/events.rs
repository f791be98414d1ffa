//! The events Ferry emits, as typed, versioned payloads of the event catalogue.
//!
//! Every event is checked against the catalogue when it is made; an event that does not
//! match is a bug, fails the change it belongs to, and is never stored or published. The one
//! exception is an event of a fixed shape made in bulk (a ledger entry, a thousand to a
//! batch): it is a struct whose every field is Ferry's own, serialized straight to its JSON,
//! and its tests check every kind of it against the catalogue. Events are written to the
//! outbox in the same transaction as the change they describe.

use super::error::DomainError;
use super::import_process::{ImportProcess, PlatformAccount, format_datetime};
use super::ledger::{LedgerEntry, TransactionType};
use super::payment_instruction::PaymentInstruction;
use crate::domain::catalogue::{Catalogue, CatalogueError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
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
    #[schema(value_type = Object)]
    pub data: EventData,
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
        Ok(Event::unchecked(
            event_type,
            version,
            subject,
            EventData::of(&data),
        ))
    }

    /// A new event whose payload the caller vouches for (see the module's documentation).
    fn unchecked(event_type: &str, version: &str, subject: Option<&str>, data: EventData) -> Event {
        Event {
            seq: 0,
            id: uuid::Uuid::now_v7().to_string(),
            event_type: event_type.to_owned(),
            version: version.to_owned(),
            time: now_to_the_millisecond(),
            subject: subject.map(str::to_owned),
            data,
            published_at: None,
        }
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

/// An event's payload as its JSON text, written once when the event is made and then copied
/// as it is into the stream record and the stores.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EventData(Box<RawValue>);

impl EventData {
    /// The payload of a JSON value.
    pub fn of(value: &impl Serialize) -> EventData {
        // A `Value`, or one of the structs below, always serializes.
        EventData(
            serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned()),
        )
    }

    /// The payload of JSON text, checked to be JSON.
    pub fn from_text(text: String) -> Result<EventData, serde_json::Error> {
        RawValue::from_string(text).map(EventData)
    }

    /// The JSON text, as it goes on the stream.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The payload read as a JSON value.
    pub fn to_value(&self) -> Value {
        // The text was JSON when it was made, so it reads back.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

/// Two payloads are equal as JSON values, however their text is spaced or ordered (a store
/// may keep JSON in its own form).
impl PartialEq for EventData {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() || self.to_value() == other.to_value()
    }
}

impl std::fmt::Debug for EventData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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

/// The payload of `billing.ledger.entry_posted` v2, its fields in the order Ferry has
/// always written them.
#[derive(Serialize)]
struct EntryPosted<'a> {
    ledger: PostedLedger<'a>,
    entry: PostedEntry,
}

#[derive(Serialize)]
struct PostedLedger<'a> {
    account: LedgerAccount<'a>,
    number: &'a str,
    id: &'a str,
}

#[derive(Serialize)]
struct LedgerAccount<'a> {
    number: &'a str,
}

#[derive(Serialize)]
struct PostedEntry {
    id: u64,
    is_charge: bool,
    is_credit: bool,
    is_payment: bool,
    is_repayment: bool,
    is_reversal: bool,
    is_reversed: bool,
    source_id: u64,
    source_type: &'static str,
}

/// One per transaction, a thousand for a batch: a typed payload serialized straight to its
/// JSON, not checked against the catalogue here (its tests check every kind of entry).
pub fn ledger_entry_posted(account_number: &str, entry: &LedgerEntry) -> Event {
    let ledger = ledger_number(account_number);
    let payload = EntryPosted {
        ledger: PostedLedger {
            account: LedgerAccount {
                number: account_number,
            },
            number: &ledger,
            id: &ledger,
        },
        entry: PostedEntry {
            id: entry.id,
            is_charge: matches!(
                entry.kind,
                TransactionType::Charge | TransactionType::SupplyCharge
            ),
            is_credit: entry.kind == TransactionType::Credit,
            is_payment: entry.kind == TransactionType::Payment,
            is_repayment: entry.kind == TransactionType::Repayment,
            is_reversal: false,
            is_reversed: false,
            source_id: entry.id,
            source_type: "IMPORTED_TRANSACTION",
        },
    };
    Event::unchecked(
        "billing.ledger.entry_posted",
        "v2",
        Some(account_number),
        EventData::of(&payload),
    )
}

/// When an instruction becomes usable: when it was added, or, for one recorded pending, the
/// start of the day its account document says it is valid from.
fn usable_from(instruction: &PaymentInstruction) -> DateTime<Utc> {
    instruction
        .terms
        .valid_from
        .filter(|_| instruction.pending)
        .and_then(|day| day.and_hms_opt(0, 0, 0))
        .map_or(instruction.added_at, |midnight| midnight.and_utc())
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
            "usable_from": format_datetime(usable_from(instruction)),
            "payment_instruction_id": format!("{}:{}", instruction.vendor, instruction.reference),
            "usable_to": usable_to(&instruction.details),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::{EventData, ledger_entry_posted, usable_to};
    use crate::domain::catalogue::Catalogue;
    use crate::domain::ledger::{LedgerEntry, TransactionType};
    use crate::domain::money::Money;
    use serde_json::json;

    fn entry(kind: TransactionType) -> LedgerEntry {
        LedgerEntry {
            id: 7,
            transaction_id: "T-1".into(),
            kind,
            amount: Money::ZERO,
            balance_after: Money::ZERO,
            transaction_date: chrono::NaiveDate::from_ymd_opt(2025, 1, 15).expect("date"),
            posted_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_posted_entry_names_its_ledger_and_what_kind_of_entry_it_is() {
        let event = ledger_entry_posted("A-1234ABCD", &entry(TransactionType::SupplyCharge));
        assert_eq!(event.subject.as_deref(), Some("A-1234ABCD"));
        // In the order Ferry has always written them on the stream.
        assert_eq!(
            event.data.as_str(),
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

    /// The one payload not checked when it is made: every kind of entry matches the catalogue.
    #[test]
    fn every_kind_of_posted_entry_matches_the_catalogue() {
        for kind in [
            TransactionType::Charge,
            TransactionType::Credit,
            TransactionType::Payment,
            TransactionType::Repayment,
            TransactionType::SupplyCharge,
        ] {
            let event = ledger_entry_posted("A-1234ABCD", &entry(kind));
            Catalogue::embedded()
                .validate(&event.event_type, &event.version, &event.data.to_value())
                .unwrap_or_else(|error| panic!("{kind:?}: {error}"));
            let flags = event.data.to_value()["entry"]
                .as_object()
                .expect("an entry")
                .iter()
                .filter(|(name, value)| name.starts_with("is_") && value == &&json!(true))
                .count();
            assert_eq!(flags, 1, "{kind:?}: one kind, and no reversal");
        }
    }

    #[test]
    fn a_payload_reads_back_as_the_value_it_was_made_of_and_compares_as_json() {
        let value = json!({"b": 1, "a": [true, null, "x"], "n": 12});
        let data = EventData::of(&value);
        assert_eq!(data.to_value(), value);
        let respaced =
            EventData::from_text(r#"{ "a": [true, null, "x"], "n": 12, "b": 1 }"#.into())
                .expect("JSON");
        assert_eq!(data, respaced);
        assert_ne!(data, EventData::of(&json!({"b": 2})));
        assert!(EventData::from_text("{not json".into()).is_err());
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
