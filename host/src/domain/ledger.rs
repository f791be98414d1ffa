//! Imported transactions and the account's ledger.
//!
//! Each transaction type has its own fields, required flags and enumerations, as the real
//! platform's `oneOf` on `type` defines them (the enumerations in `reference_enums.json`). A
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
}

/// Places after the point the real platform accepts in amounts (`amount`, `net_amount`, tax
/// `amount`): its pattern `^-?\d{0,10}(?:\.\d{0,10})?$`.
pub const AMOUNT_PLACES: u32 = 10;

/// An amount as the ledger keeps it: to the penny, half away from zero, so that what is
/// posted, stored and answered is one figure, whatever the batches.
pub fn to_the_penny(amount: Decimal) -> Money {
    Money(amount.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LineItem {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_band: Option<String>,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    #[schema(value_type = String)]
    pub number_of_units: Decimal,
    #[schema(value_type = String)]
    pub net_amount: Money,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub price_per_unit: Option<Decimal>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<String>)]
    pub units: Vec<Decimal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_rate_identifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_specification_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_series_specification_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TaxItem {
    #[schema(value_type = String)]
    pub amount: Money,
    pub tax_type: String,
    #[schema(value_type = String)]
    pub value_taxed: Decimal,
    #[schema(value_type = String)]
    pub rate: Decimal,
    /// `PROPORTION` or `CURRENCY_PER_KWH`.
    pub unit_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_document_identifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_prepay_meter_serial_number: Option<String>,
    /// `SUPPLY_CHARGE` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supply_point_identifier: Option<String>,
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
    let mut r = ObjectReader::root_at(value, path).map_err(|_| not_an_object())?;
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
    let amount = r.decimal("amount", Required, AMOUNT_PLACES);
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
    // The fields every type has.
    let note = r.string("note", Optional, StrRule::text(MAX_NOTE));
    let display_note = r.string("display_note", Optional, StrRule::text(MAX_NOTE));
    let billing_document_identifier =
        r.string("billing_document_identifier", Optional, StrRule::max(255));
    let to_prepay_meter_serial_number =
        r.string("to_prepay_meter_serial_number", Optional, StrRule::max(255));
    // Each type's own fields, as the real platform's `oneOf`; the fields another type has are
    // unknown here (ignored and named, or refused for a strict supplier).
    let specific = match kind {
        Some(kind) => read_type_fields(&mut r, kind, items),
        None => {
            // Which fields belong is unknown: take them all unread, so that only the type is
            // reported.
            for field in TYPE_SPECIFIC {
                let _ = r.take_unread(field);
            }
            TypeFields::default()
        }
    };
    // The real platform's code for a transaction without its id.
    let id_attr = r.attr("transaction_id");
    let result = r.finish(|| {
        Some(Transaction {
            transaction_id: id?,
            transaction_date: date?,
            amount: to_the_penny(amount?),
            kind: kind?,
            reason: specific.reason,
            reference: specific.reference,
            payment_type: specific.payment_type,
            display_note,
            note,
            product_code: specific.product_code,
            line_items: specific.line_items,
            tax_items: specific.tax_items,
            billing_document_identifier,
            to_prepay_meter_serial_number,
            supply_point_identifier: specific.supply_point_identifier,
            description: None,
            original_transaction_date: None,
            status: None,
            ledger_entry_id: None,
        })
    });
    result.map_err(|mut errors| {
        for error in &mut errors.0 {
            if error.attr.as_deref() == Some(id_attr.as_str())
                && matches!(error.code.as_str(), "required" | "blank" | "null")
            {
                error.code = "missing_transaction_id".to_owned();
            }
        }
        errors
    })
}

/// The fields only some transaction types have.
const TYPE_SPECIFIC: [&str; 7] = [
    "reason",
    "reference",
    "payment_type",
    "product_code",
    "line_items",
    "tax_items",
    "supply_point_identifier",
];

/// Longest note or display note.
const MAX_NOTE: usize = 2000;

/// The type-specific fields of one transaction.
#[derive(Debug, Default)]
struct TypeFields {
    reason: Option<String>,
    reference: Option<String>,
    payment_type: Option<String>,
    product_code: Option<String>,
    line_items: Option<Vec<LineItem>>,
    tax_items: Option<Vec<TaxItem>>,
    supply_point_identifier: Option<String>,
}

/// Reads the fields `kind` has on the real platform (`EnergyCharge`, `EnergyCredit`,
/// `EnergyPayment`, `EnergyRepayment`, `EnergySupplyCharge`), with its enumerations.
fn read_type_fields(r: &mut ObjectReader<'_>, kind: TransactionType, items: Items) -> TypeFields {
    let enums = super::reference::enums();
    let name = kind.as_str();
    let mut fields = TypeFields::default();
    match kind {
        TransactionType::Charge | TransactionType::Credit => {
            fields.reason = read_choice(r, "reason", Required, enums.reasons(name));
        }
        TransactionType::Payment | TransactionType::Repayment => {
            fields.reason = read_choice(r, "reason", Optional, enums.reasons(name));
            fields.reference = r.string("reference", Optional, StrRule::blank_ok(512));
            fields.payment_type =
                read_choice(r, "payment_type", Optional, enums.payment_types(name));
        }
        TransactionType::SupplyCharge => {
            fields.product_code = r.string("product_code", Required, StrRule::max(255));
            // Required, but may be empty: the real document sets no minimum.
            fields.line_items = r.object_array("line_items", Required, items, read_line_item);
            fields.supply_point_identifier =
                r.string("supply_point_identifier", Optional, StrRule::max(255));
        }
    }
    if matches!(
        kind,
        TransactionType::Charge | TransactionType::SupplyCharge
    ) {
        fields.tax_items = r.object_array("tax_items", Optional, items, read_tax_item);
    }
    fields
}

/// A value of `choices` (which may include the empty string, as some real enumerations do).
fn read_choice(
    r: &mut ObjectReader<'_>,
    name: &'static str,
    presence: super::validation::Presence,
    choices: &[String],
) -> Option<String> {
    let text = r.string(name, presence, StrRule::blank_ok(128))?;
    if choices.contains(&text) {
        Some(text)
    } else {
        let shown: Vec<&str> = choices.iter().take(8).map(String::as_str).collect();
        r.error(
            r.attr(name),
            "invalid_choice",
            format!(
                "\"{text}\" is not a valid choice (valid: {}{}).",
                shown.join(", "),
                if choices.len() > shown.len() {
                    format!(" and {} more", choices.len() - shown.len())
                } else {
                    String::new()
                }
            ),
        );
        None
    }
}

/// Places the real platform accepts in `number_of_units` (its `dec(12.4)`), `price_per_unit`
/// (`dec(8.7)`) and tax `rate` / `value_taxed` (`dec(15.5)`).
const UNIT_PLACES: u32 = 4;
const PRICE_PLACES: u32 = 7;
const TAX_PLACES: u32 = 5;

fn read_params(r: &mut ObjectReader<'_>) -> Option<Value> {
    let params = r.take("params", Optional)?;
    if params.is_object() {
        Some(params.clone())
    } else {
        r.error(
            r.attr("params"),
            "invalid",
            "Expected a JSON object of parameters.",
        );
        None
    }
}

fn read_line_item(r: &mut ObjectReader<'_>) -> Option<LineItem> {
    let rate_band = r.string("rate_band", Optional, StrRule::max(255));
    let start = r.date("start_date", Required);
    let end = r.date("end_date", Required);
    if let (Some(start), Some(end)) = (start, end)
        && start > end
    {
        r.error(
            r.attr("end_date"),
            "start_date_later_than_end_date",
            "end_date must not be earlier than start_date.",
        );
    }
    let units_count = r.decimal("number_of_units", Required, UNIT_PLACES);
    let net = r.decimal("net_amount", Required, AMOUNT_PLACES);
    let price = r.decimal("price_per_unit", Optional, PRICE_PLACES);
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
    let external_rate_identifier =
        r.string("external_rate_identifier", Optional, StrRule::max(255));
    let rate_specification_code = r.string("rate_specification_code", Optional, StrRule::max(255));
    let time_series_specification_code = r.string(
        "time_series_specification_code",
        Optional,
        StrRule::max(255),
    );
    let params = read_params(r);
    Some(LineItem {
        rate_band,
        start_date: start?,
        end_date: end?,
        number_of_units: units_count?,
        net_amount: to_the_penny(net?),
        price_per_unit: price,
        units,
        external_rate_identifier,
        rate_specification_code,
        time_series_specification_code,
        params,
    })
}

fn read_tax_item(r: &mut ObjectReader<'_>) -> Option<TaxItem> {
    let amount = r.decimal("amount", Required, AMOUNT_PLACES);
    let tax_type = r.string("tax_type", Required, StrRule::max(64));
    let value_taxed = r.decimal("value_taxed", Required, TAX_PLACES);
    let rate = r.decimal("rate", Required, TAX_PLACES);
    let unit_type = read_choice(
        r,
        "unit_type",
        Required,
        &super::reference::enums().tax_unit_types,
    );
    let params = read_params(r);
    Some(TaxItem {
        amount: to_the_penny(amount?),
        tax_type: tax_type?,
        value_taxed: value_taxed?,
        rate: rate?,
        unit_type: unit_type?,
        params,
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

    /// Reads in a reading that refuses unknown fields (as for a strict supplier).
    fn strict(value: &Value) -> Result<Transaction, FieldErrors> {
        use crate::domain::validation::{UnknownFields, reading};
        reading(UnknownFields::Refuse, || {
            read_transaction(value, "transactions.0", 100, today())
        })
        .0
    }

    fn strict_codes(value: Value) -> Vec<(String, String)> {
        strict(&value)
            .expect_err("invalid")
            .0
            .into_iter()
            .map(|e| (e.attr.unwrap_or_default(), e.code))
            .collect()
    }

    #[test]
    fn each_type_has_the_real_platforms_fields() {
        let base = |kind: &str| json!({"transaction_id": "T1", "transaction_date": "2025-05-01", "amount": 10, "type": kind});
        // PAYMENT and REPAYMENT: reason, reference and payment_type optional; a deprecated
        // display_note accepted; "" among the enumerations.
        let mut payment = base("PAYMENT");
        payment["display_note"] = json!("x");
        payment["payment_type"] = json!("");
        let read = strict(&payment).expect("a bare payment");
        assert_eq!(read.payment_type.as_deref(), Some(""));
        let mut repayment = base("REPAYMENT");
        repayment["reason"] = json!("CHARGEBACK");
        repayment["payment_type"] = json!("CARD_REFUND");
        assert!(strict(&repayment).is_ok());
        // CHARGE and CREDIT need a reason of their own list.
        let mut charge = base("CHARGE");
        charge["reason"] = json!("LATE_PAYMENT_FEE_CHARGE");
        charge["tax_items"] = json!([{"amount": "1.0000000001", "tax_type": "VAT", "value_taxed": 10,
                                      "rate": "0.05", "unit_type": "PROPORTION"}]);
        charge["billing_document_identifier"] = json!("BD-1");
        assert!(strict(&charge).is_ok());
        let mut credit = base("CREDIT");
        credit["reason"] = json!("LATE_PAYMENT_FEE_CHARGE");
        assert_eq!(
            strict_codes(credit),
            [(
                "transactions.0.reason".to_owned(),
                "invalid_choice".to_owned()
            )]
        );
        assert_eq!(
            strict_codes(base("CHARGE")),
            [("transactions.0.reason".to_owned(), "required".to_owned())]
        );
        // A field another type has is unknown here.
        let mut supply = base("SUPPLY_CHARGE");
        supply["reason"] = json!("IMPORTED_CHARGE");
        let found = strict_codes(supply);
        for expected in [
            ("transactions.0.reason", "unknown_field"),
            ("transactions.0.line_items", "required"),
            ("transactions.0.product_code", "required"),
        ] {
            assert!(
                found.contains(&(expected.0.into(), expected.1.into())),
                "{expected:?} not in {found:?}"
            );
        }
        // SUPPLY_CHARGE line items: rate_band and price_per_unit optional; the real fields.
        let mut supply = base("SUPPLY_CHARGE");
        supply["product_code"] = json!("VAR-22");
        supply["supply_point_identifier"] = json!("1200023305967");
        supply["line_items"] = json!([{"start_date": "2025-04-01", "end_date": "2025-04-30",
            "number_of_units": "100.1234", "net_amount": 12.5, "external_rate_identifier": "R1",
            "params": {"band": "day"}}]);
        let read = strict(&supply).expect("a supply charge");
        let mut without_items = supply.clone();
        without_items["line_items"] = json!([]);
        assert_eq!(
            strict(&without_items).map(|read| read.line_items),
            Ok(Some(vec![])),
            "line_items is required but may be empty, as in the real document"
        );
        assert_eq!(
            read.line_items
                .as_ref()
                .map(|items| items[0].price_per_unit),
            Some(None)
        );

        let found = strict_codes(
            json!({"transaction_date": "2025-07-01", "amount": 1, "type": "CREDIT", "reason": "GOODWILL"}),
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
        // An unknown type: only the type is reported.
        let mut odd = base("CHEQUE");
        odd["reason"] = json!("X");
        assert_eq!(
            strict_codes(odd),
            [(
                "transactions.0.type".to_owned(),
                "invalid_choice".to_owned()
            )]
        );
        assert_eq!(
            codes(json!(5)),
            vec![("transactions.0".into(), "invalid".into())]
        );
    }

    #[test]
    fn amounts_are_kept_to_the_penny_half_away_from_zero() {
        let kept = |text: &str| to_the_penny(text.parse().expect("decimal")).to_string();
        assert_eq!(kept("0.005"), "0.01");
        assert_eq!(kept("-0.005"), "-0.01");
        assert_eq!(kept("12.3449999999"), "12.34");
        // Three half-pennies post 0.03 whether sent together or one by one.
        let mut summary = AccountSummary::default();
        for _ in 0..3 {
            summary.post(
                TransactionType::Charge,
                to_the_penny("0.005".parse().expect("decimal")),
            );
        }
        assert_eq!(summary.balance.to_string(), "0.03");
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
