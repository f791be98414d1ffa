//! The tests of [`super`].

use super::*;
use proptest::prelude::*;
use serde_json::json;

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 6, 1).expect("date")
}

/// A body holding `transaction` alone.
fn body(transaction: &Value) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "A-1",
           "transactions": [transaction]})
}

fn codes(value: Value) -> Vec<(String, String)> {
    let errors = read_transactions(&body(&value), 100, today()).expect_err("invalid");
    crate::domain::validation::codes(&errors)
}

/// Reads in a reading that refuses unknown fields (as for a strict supplier).
fn strict(value: &Value) -> Result<Transaction, FieldErrors> {
    use crate::domain::validation::{UnknownFields, reading};
    reading(UnknownFields::Refuse, || {
        read_transactions(&body(value), 100, today())
    })
    .0
    .map(|mut posted| posted.transactions.remove(0))
}

fn strict_codes(value: Value) -> Vec<(String, String)> {
    crate::domain::validation::codes(&strict(&value).expect_err("invalid"))
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
fn every_problem_of_a_body_is_reported_in_the_order_of_the_document() {
    use crate::domain::validation::pairs;
    let charge = |id: &str, amount: Value| {
        json!({"transaction_id": id,
        "transaction_date": "2025-05-01", "amount": amount, "type": "CHARGE",
        "reason": "IMPORTED_CHARGE"})
    };
    let body = json!({"import_supplier": "OLD_CO", "transactions": [
        charge("T1", json!("1.00000000001")),
        charge("T1", json!(1.00000000001)),
        {"transaction_id": " ", "transaction_date": "2025-05-01", "amount": 1,
         "type": "PAYMENT", "reason": "", "payment_type": "", "note": "  "},
        {"transaction_id": "T3", "transaction_date": "2025-05-01", "amount": 1,
         "type": "CHARGE", "reason": ""},
        {"transaction_id": "T4", "transaction_date": "2025-05-01", "amount": "12345678901",
         "type": "SUPPLY_CHARGE", "product_code": "P", "line_items": [
            {"start_date": "2025-04-02", "end_date": "2025-04-01", "number_of_units": 1.23456,
             "net_amount": "1", "units": ["1", "x"]}]},
    ]});
    let errors = read_transactions(&body, 100, today()).expect_err("invalid");
    let expected = [
        ("", "account_number_or_external_account_number_required"),
        ("transactions.0.amount", "max_decimal_places"),
        ("transactions.1.transaction_id", "duplicate_transaction_ids"),
        ("transactions.1.amount", "max_decimal_places"),
        ("transactions.2.transaction_id", "missing_transaction_id"),
        ("transactions.2.note", "blank"),
        ("transactions.3.reason", "invalid_choice"),
        ("transactions.4.amount", "max_whole_digits"),
        (
            "transactions.4.line_items.0.end_date",
            "start_date_later_than_end_date",
        ),
        (
            "transactions.4.line_items.0.number_of_units",
            "max_decimal_places",
        ),
        ("transactions.4.line_items.0.units.1", "invalid"),
    ];
    assert_eq!(crate::domain::validation::codes(&errors), pairs(&expected));
    assert_eq!(
        errors.0.iter().map(transaction_index).collect::<Vec<_>>(),
        [
            None,
            Some(0),
            Some(1),
            Some(1),
            Some(2),
            Some(2),
            Some(3),
            Some(4),
            Some(4),
            Some(4),
            Some(4)
        ]
    );
}

#[test]
fn posted_amounts_are_read_exactly_and_kept_to_the_penny() {
    let body = json!({"import_supplier": "OLD_CO", "account_number": "A-1", "dry_run": true,
        "transactions": [{"transaction_id": "T1", "transaction_date": "2025-05-01",
            "amount": 0.125, "type": "SUPPLY_CHARGE", "product_code": "P", "line_items": [
            {"start_date": "2025-04-01", "end_date": "2025-04-30", "number_of_units": "10.5",
             "net_amount": 1.005, "price_per_unit": 0.1234567, "units": [1, "2.25"]}],
            "tax_items": [{"amount": "0.055", "tax_type": "VAT", "value_taxed": 1.1,
             "rate": "0.05", "unit_type": "PROPORTION"}]}]});
    let posted = read_transactions(&body, 100, today()).expect("valid");
    assert_eq!(posted.account.external_account_number(), "A-1");
    assert!(posted.dry_run);
    let read = &posted.transactions[0];
    assert_eq!(read.amount.to_string(), "0.13");
    let item = &read.line_items.as_ref().expect("items")[0];
    assert_eq!(item.net_amount.to_string(), "1.01");
    assert_eq!(
        item.price_per_unit.map(|p| p.to_string()).as_deref(),
        Some("0.1234567")
    );
    assert_eq!(
        item.units
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["1", "2.25"]
    );
    let tax = &read.tax_items.as_ref().expect("taxes")[0];
    assert_eq!(
        (tax.amount.to_string(), tax.value_taxed.to_string()),
        ("0.06".into(), "1.1".into())
    );
    // What is kept reads back as it was written.
    let kept: Transaction =
        serde_json::from_value(serde_json::to_value(read).expect("json")).expect("record");
    assert_eq!(&kept, read);
}

#[test]
fn a_batch_is_posted_in_order_moved_into_the_open_period_or_refused_whole() {
    let transaction = |id: &str, date: &str, kind: &str, amount: &str| -> Transaction {
        serde_json::from_value(json!({"transaction_id": id, "transaction_date": date,
            "amount": amount, "type": kind}))
        .expect("transaction")
    };
    let start = NaiveDate::from_ymd_opt(2025, 3, 1).expect("date");
    let batch = [
        transaction("C-1", "2025-03-05", "CHARGE", "10.00"),
        transaction("P-1", "2025-02-01", "PAYMENT", "4.50"),
        transaction("C-0", "2025-03-01", "CHARGE", "1.00"),
    ];
    let known = [None, None, Some("the record kept")];
    let posted = post_batch(
        AccountSummary::default(),
        start,
        TransactionOptions::default(),
        batch.iter().zip(known),
    )
    .expect("posted");
    // Credit positive: 10.00 charged, 4.50 paid.
    assert_eq!(posted.summary.balance.to_string(), "-5.50");
    assert_eq!(posted.moved, ["P-1"]);
    let Posting::Added {
        kept,
        balance_after,
    } = &posted.postings[1]
    else {
        panic!("not added: {:?}", posted.postings[1]);
    };
    assert_eq!(
        (kept.transaction_date, balance_after.to_string()),
        (start, "-5.50".into())
    );
    assert_eq!(
        kept.original_transaction_date
            .map(|d| d.to_string())
            .as_deref(),
        Some("2025-02-01")
    );
    assert_eq!(posted.postings[2], Posting::AlreadyAdded("the record kept"));

    let strict = TransactionOptions {
        check_previously_added: false,
        force_add_to_current_statement: false,
    };
    let refusal = post_batch(
        AccountSummary::default(),
        start,
        strict,
        batch.iter().zip(known),
    )
    .expect_err("refused");
    assert_eq!(
        (refusal.index, refusal.code),
        (1, "transaction_outside_open_statement_period")
    );
    let refusal = post_batch(
        AccountSummary::default(),
        start,
        strict,
        batch[2..].iter().zip([Some(())]),
    )
    .expect_err("refused");
    assert_eq!((refusal.index, refusal.field), (0, "transaction_id"));
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
    assert_eq!(summary.balance.to_string(), "-0.03");
}

#[test]
fn a_balance_out_of_range_is_refused_and_left_as_it_was() {
    let mut summary = AccountSummary {
        balance: Money(Decimal::ONE),
        ..AccountSummary::default()
    };
    assert_eq!(
        summary.post(TransactionType::Credit, Money(Decimal::MAX)),
        None
    );
    assert_eq!(summary.balance, Money(Decimal::ONE));
    assert_eq!(
        summary.post(TransactionType::Charge, Money(Decimal::MAX)),
        Some(Money(Decimal::ONE - Decimal::MAX))
    );
}

/// Summaries and ledger entries written before the real platform's sign was taken held
/// what the customer owed: read, they keep their meaning in the real sign.
#[test]
fn balances_stored_as_owed_are_read_in_the_real_sign() {
    let earlier: AccountSummary =
        serde_json::from_value(json!({"balance": "40.00", "latest_statement_to": null}))
            .expect("an earlier summary");
    assert_eq!(earlier.balance.to_string(), "-40.00");
    let now = serde_json::to_value(&earlier).expect("stored");
    assert_eq!(now["ledger_balance"], "-40.00");
    assert!(now.get("balance").is_none(), "{now}");
    let back: AccountSummary = serde_json::from_value(now).expect("read back");
    assert_eq!(back, earlier);

    let entry = json!({"id": 7, "transaction_id": "T1", "type": "CHARGE", "amount": "40.00",
        "balance_after": "40.00", "transaction_date": "2025-05-01",
        "posted_at": "2025-05-01T10:00:00Z"});
    let earlier: LedgerEntry = serde_json::from_value(entry).expect("an earlier entry");
    assert_eq!(earlier.balance_after.to_string(), "-40.00");
    let now = serde_json::to_value(&earlier).expect("stored");
    assert_eq!(now["ledger_balance"], "-40.00");
    let back: LedgerEntry = serde_json::from_value(now).expect("read back");
    assert_eq!(back, earlier);
}

#[test]
fn payments_and_credits_add_charges_and_repayments_take_away() {
    let mut summary = AccountSummary::default();
    for (kind, amount) in [
        (TransactionType::Payment, 20),
        (TransactionType::Credit, 5),
        (TransactionType::Charge, 12),
        (TransactionType::SupplyCharge, 3),
        (TransactionType::Repayment, 4),
    ] {
        summary.post(kind, Money(Decimal::from(amount)));
    }
    assert_eq!(summary.balance.to_string(), "6.00");
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
