//! Imported transactions and the account's ledger.
//!
//! Each transaction type has its own required and permitted fields (the spec's table). A
//! transaction dated before the open statement period is either moved to its first day
//! (`force_add_to_current_statement`) or refused. The ledger keeps every entry and the running
//! balance: charges, supply charges and repayments raise what the customer owes; credits and
//! payments lower it (a negative amount reverses the direction).

use super::money::Money;
use super::validation::{
    FieldError, FieldErrors, Items, ObjectReader, Optional, Required, StrRule,
};
use chrono::{DateTime, Days, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    const ALL: [TransactionType; 5] = [
        Self::Charge,
        Self::Credit,
        Self::Payment,
        Self::Repayment,
        Self::SupplyCharge,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Charge => "CHARGE",
            Self::Credit => "CREDIT",
            Self::Payment => "PAYMENT",
            Self::Repayment => "REPAYMENT",
            Self::SupplyCharge => "SUPPLY_CHARGE",
        }
    }

    /// Whether the amount adds to what the customer owes.
    pub fn is_debit(self) -> bool {
        matches!(self, Self::Charge | Self::SupplyCharge | Self::Repayment)
    }

    /// The optional fields each type carries, and which of them it requires.
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Self::Charge | Self::Credit => (&["reason", "display_note", "note"], &["reason"]),
            Self::Payment | Self::Repayment => (
                &["reason", "reference", "payment_type", "note"],
                &["reason", "reference", "payment_type"],
            ),
            Self::SupplyCharge => (
                &[
                    "product_code",
                    "line_items",
                    "tax_items",
                    "display_note",
                    "note",
                ],
                &["product_code", "line_items"],
            ),
        }
    }
}

pub const REASONS: [&str; 5] = [
    "IMPORTED_CHARGE",
    "IMPORTED_CREDIT",
    "ACCOUNT_CHARGE_PAYMENT",
    "FULL_CREDIT_REFUND",
    "GENERAL_CREDIT",
];
pub const PAYMENT_TYPES: [&str; 3] = ["DD_REGULAR_COLLECTION", "DIRECT_CREDIT", "DEBIT_CARD"];
const TYPE_SPECIFIC: [&str; 7] = [
    "reason",
    "reference",
    "payment_type",
    "display_note",
    "product_code",
    "line_items",
    "tax_items",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LineItem {
    pub rate_band: String,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    #[schema(value_type = String)]
    pub number_of_units: Decimal,
    #[schema(value_type = String)]
    pub net_amount: Money,
    #[schema(value_type = String)]
    pub price_per_unit: Decimal,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<String>)]
    pub units: Vec<Decimal>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TaxItem {
    #[schema(value_type = String)]
    pub amount: Money,
    pub tax_type: String,
    #[schema(value_type = String)]
    pub value_taxed: Money,
    #[schema(value_type = String)]
    pub rate: Decimal,
    pub unit_type: String,
}

/// A transaction as posted (validated) or as kept on the account (with its ledger entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Transaction {
    pub transaction_id: String,
    pub transaction_date: NaiveDate,
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
    /// Why the date differs from the one posted (moved into the open statement period).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LedgerEntry {
    pub id: u64,
    pub transaction_id: String,
    #[serde(rename = "type")]
    pub kind: TransactionType,
    #[schema(value_type = String)]
    pub amount: Money,
    /// What the customer owes after this entry.
    #[schema(value_type = String)]
    pub balance_after: Money,
    pub transaction_date: NaiveDate,
    pub posted_at: DateTime<Utc>,
}

/// The running state of an account's imported data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountSummary {
    /// What the customer owes (negative: in credit).
    pub balance: Money,
    /// `bill_period_to_date` of the latest imported historical statement.
    pub latest_statement_to: Option<NaiveDate>,
}

impl AccountSummary {
    /// Posts `transaction`, returning the new balance; `None` (and nothing posted) when the
    /// balance would leave the range of amounts Ferry can hold exactly.
    pub fn post(&mut self, kind: TransactionType, amount: Money) -> Option<Money> {
        let signed = if kind.is_debit() { amount.0 } else { -amount.0 };
        self.balance = Money(self.balance.0.checked_add(signed)?);
        Some(self.balance)
    }
}

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

/// Reads one element of `transactions` (at `transactions.<i>`), applying the per-type rules.
pub fn read_transaction(
    value: &Value,
    path: &str,
    max_items: usize,
    today: NaiveDate,
) -> Result<Transaction, FieldErrors> {
    let not_an_object = || {
        FieldErrors::single(FieldError::new(
            path.to_owned(),
            "invalid",
            "Expected a JSON object.",
        ))
    };
    let mut r = ObjectReader::root(value).map_err(|_| not_an_object())?;
    let items = Items {
        min: 0,
        max: max_items,
    };
    let id = r.string("transaction_id", Required, StrRule::max(128));
    let date = r.date("transaction_date", Required);
    if let Some(date) = date
        && date > today
    {
        r.error(
            r.attr("transaction_date"),
            "transaction_in_future",
            "The transaction date is in the future.",
        );
    }
    let amount = r.decimal("amount", Required, 2);
    let kind_text = r.string("type", Required, StrRule::max(32));
    let kind = kind_text.as_deref().and_then(|text| {
        TransactionType::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
    });
    if let (Some(text), None) = (&kind_text, kind) {
        r.error(
            r.attr("type"),
            "invalid_choice",
            format!("\"{text}\" is not a valid choice: use CHARGE, CREDIT, PAYMENT, REPAYMENT or SUPPLY_CHARGE."),
        );
    }
    let reason = read_choice(&mut r, "reason", &REASONS);
    let reference = r.string("reference", Optional, StrRule::max(128));
    let payment_type = read_choice(&mut r, "payment_type", &PAYMENT_TYPES);
    let display_note = r.string("display_note", Optional, StrRule::max(1000));
    let note = r.string("note", Optional, StrRule::max(2000));
    let product_code = r.string("product_code", Optional, StrRule::max(64));
    let line_items = r.object_array(
        "line_items",
        Optional,
        Items { min: 1, ..items },
        read_line_item,
    );
    let tax_items = r.object_array("tax_items", Optional, items, read_tax_item);
    if let Some(kind) = kind {
        let (permitted, required) = kind.fields();
        for field in TYPE_SPECIFIC {
            let present = r.has(field);
            if required.contains(&field) && !present {
                r.error(
                    r.attr(field),
                    "required",
                    format!("This field is required for {} transactions.", kind.as_str()),
                );
            } else if present && !permitted.contains(&field) {
                r.error(
                    r.attr(field),
                    "not_allowed_for_transaction_type",
                    format!("This field is not sent for {} transactions.", kind.as_str()),
                );
            }
        }
    }
    let result = r.finish(|| {
        Some(Transaction {
            transaction_id: id?,
            transaction_date: date?,
            amount: Money(amount?),
            kind: kind?,
            reason,
            reference,
            payment_type,
            display_note,
            note,
            product_code,
            line_items,
            tax_items,
            description: None,
            original_transaction_date: None,
            status: None,
            ledger_entry_id: None,
        })
    });
    result.map_err(|errors| {
        FieldErrors(
            errors
                .0
                .into_iter()
                .map(|mut error| {
                    let attr = error.attr.take().unwrap_or_default();
                    if attr == "transaction_id"
                        && matches!(error.code.as_str(), "required" | "blank" | "null")
                    {
                        error.code = "missing_transaction_id".to_owned();
                    }
                    error.attr = Some(if attr.is_empty() {
                        path.to_owned()
                    } else {
                        format!("{path}.{attr}")
                    });
                    error
                })
                .collect(),
        )
    })
}

fn read_choice(r: &mut ObjectReader<'_>, name: &'static str, choices: &[&str]) -> Option<String> {
    let text = r.string(name, Optional, StrRule::max(64))?;
    if choices.contains(&text.as_str()) {
        Some(text)
    } else {
        r.error(
            r.attr(name),
            "invalid_choice",
            format!(
                "\"{text}\" is not a valid choice: use {}.",
                choices.join(", ")
            ),
        );
        None
    }
}

const UNIT_PLACES: u32 = 10;

fn read_line_item(r: &mut ObjectReader<'_>) -> Option<LineItem> {
    let rate_band = r.string("rate_band", Required, StrRule::max(64));
    let start = r.date("start_date", Required);
    let end = r.date("end_date", Required);
    if let (Some(start), Some(end)) = (start, end)
        && start > end
    {
        r.error(
            r.attr("end_date"),
            "end_date_before_start_date",
            "end_date must not be earlier than start_date.",
        );
    }
    let units_count = r.decimal("number_of_units", Required, UNIT_PLACES);
    let net = r.decimal("net_amount", Required, 2);
    let price = r.decimal("price_per_unit", Required, UNIT_PLACES);
    let mut units = Vec::new();
    if let Some(values) = r.array(
        "units",
        Optional,
        Items {
            min: 0,
            max: 10_000,
        },
    ) {
        for (index, value) in values.iter().enumerate() {
            match super::validation::parse_decimal_value(value, UNIT_PLACES) {
                Ok(number) => units.push(number),
                Err(error) => r.error(
                    r.attr(&format!("units.{index}")),
                    error.code(),
                    error.detail(UNIT_PLACES),
                ),
            }
        }
    }
    Some(LineItem {
        rate_band: rate_band?,
        start_date: start?,
        end_date: end?,
        number_of_units: units_count?,
        net_amount: Money(net?),
        price_per_unit: price?,
        units,
    })
}

fn read_tax_item(r: &mut ObjectReader<'_>) -> Option<TaxItem> {
    let amount = r.decimal("amount", Required, 2);
    let tax_type = r.string("tax_type", Required, StrRule::max(32));
    let value_taxed = r.decimal("value_taxed", Required, 2);
    let rate = r.decimal("rate", Required, UNIT_PLACES);
    let unit_type = r.string("unit_type", Required, StrRule::max(32));
    Some(TaxItem {
        amount: Money(amount?),
        tax_type: tax_type?,
        value_taxed: Money(value_taxed?),
        rate: rate?,
        unit_type: unit_type?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 6, 1).expect("date")
    }

    fn codes(value: Value) -> Vec<(String, String)> {
        read_transaction(&value, "transactions.0", 100, today())
            .expect_err("invalid")
            .0
            .into_iter()
            .map(|e| (e.attr.unwrap_or_default(), e.code))
            .collect()
    }

    #[test]
    fn per_type_fields() {
        let charge = json!({"transaction_id": "T1", "transaction_date": "2025-05-01", "amount": 10, "type": "CHARGE", "reason": "IMPORTED_CHARGE"});
        assert!(read_transaction(&charge, "transactions.0", 100, today()).is_ok());
        let payment = json!({"transaction_id": "T1", "transaction_date": "2025-05-01", "amount": 10, "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT", "display_note": "x"});
        let found = codes(payment);
        assert!(
            found.contains(&("transactions.0.reference".into(), "required".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&("transactions.0.payment_type".into(), "required".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&(
                "transactions.0.display_note".into(),
                "not_allowed_for_transaction_type".into()
            )),
            "{found:?}"
        );
        let supply = json!({"transaction_id": "T1", "transaction_date": "2025-05-01", "amount": 10, "type": "SUPPLY_CHARGE", "reason": "IMPORTED_CHARGE"});
        let found = codes(supply);
        assert!(
            found.contains(&(
                "transactions.0.reason".into(),
                "not_allowed_for_transaction_type".into()
            )),
            "{found:?}"
        );
        assert!(
            found.contains(&("transactions.0.line_items".into(), "required".into())),
            "{found:?}"
        );
        let found = codes(
            json!({"transaction_date": "2025-07-01", "amount": 1, "type": "CREDIT", "reason": "GENERAL_CREDIT"}),
        );
        assert!(
            found.contains(&(
                "transactions.0.transaction_id".into(),
                "missing_transaction_id".into()
            )),
            "{found:?}"
        );
        assert!(
            found.contains(&(
                "transactions.0.transaction_date".into(),
                "transaction_in_future".into()
            )),
            "{found:?}"
        );
        assert_eq!(
            codes(json!(5)),
            vec![("transactions.0".into(), "invalid".into())]
        );
    }

    #[test]
    fn a_balance_out_of_range_is_refused_and_left_as_it_was() {
        let mut summary = AccountSummary {
            balance: Money(Decimal::ONE),
            latest_statement_to: None,
        };
        assert_eq!(
            summary.post(TransactionType::Charge, Money(Decimal::MAX)),
            None
        );
        assert_eq!(summary.balance, Money(Decimal::ONE));
        assert_eq!(
            summary.post(TransactionType::Credit, Money(Decimal::MAX)),
            Some(Money(Decimal::ONE - Decimal::MAX))
        );
    }

    fn date(days: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2020, 1, 1).expect("date") + Days::new(u64::from(days))
    }

    proptest! {
        #[test]
        fn amounts_print_exactly_what_was_parsed(units in -10_000_000_000i64..10_000_000_000i64) {
            let amount = Decimal::new(units, 2);
            let text = amount.to_string();
            let value: Value = serde_json::from_str(&text).expect("json number");
            let parsed = super::super::validation::parse_decimal_value(&value, 2).expect("parses");
            prop_assert_eq!(parsed, amount);
            let printed = Money(parsed).to_string();
            prop_assert_eq!(printed.split('.').nth(1).map(str::len), Some(2));
            prop_assert_eq!(printed.parse::<Decimal>().expect("decimal"), amount);
            let from_string = super::super::validation::parse_decimal_value(&Value::String(printed), 2).expect("string");
            prop_assert_eq!(from_string, amount);
        }

        #[test]
        fn the_open_period_starts_after_the_latest_statement(
            account_start in 0u32..3000, latest in proptest::option::of(0u32..3000), posted in 0u32..3000, force: bool,
        ) {
            let start = open_period_start(date(account_start), latest.map(date));
            match latest {
                Some(to) => prop_assert_eq!(start, date(to + 1)),
                None => prop_assert_eq!(start, date(account_start)),
            }
            match place(date(posted), start, force) {
                Placement::AsDated => prop_assert!(date(posted) >= start),
                Placement::Moved { to, .. } => prop_assert!(force && date(posted) < start && to == start),
                Placement::Refused => prop_assert!(!force && date(posted) < start),
            }
        }
    }
}
