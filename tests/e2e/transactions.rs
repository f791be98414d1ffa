//! Transactions: every type, exact amounts, atomic batches, duplicates, the open statement
//! period, and concurrent submissions.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;

fn batch(transactions: Value) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "transactions": transactions})
}

fn charge(id: &str, date: &str, amount: Value) -> Value {
    json!({"transaction_id": id, "transaction_date": date, "amount": amount, "type": "CHARGE", "reason": "IMPORTED_CHARGE", "display_note": "Imported charge"})
}

fn every_type() -> Value {
    json!([
        {"transaction_id": "C-1", "transaction_date": "2025-01-05", "amount": 1234567.89, "type": "CHARGE", "reason": "IMPORTED_CHARGE", "display_note": "Old balance", "note": "from ledger 7"},
        {"transaction_id": "C-2", "transaction_date": "2025-01-06", "amount": 0.1, "type": "CHARGE", "reason": "IMPORTED_CHARGE"},
        {"transaction_id": "CR-1", "transaction_date": "2025-01-07", "amount": "-25.5", "type": "CREDIT", "reason": "IMPORTED_CREDIT"},
        {"transaction_id": "P-1", "transaction_date": "2025-01-08", "amount": "100", "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT", "reference": "DD-1", "payment_type": "DD_REGULAR_COLLECTION"},
        {"transaction_id": "R-1", "transaction_date": "2025-01-09", "amount": 40.00, "type": "REPAYMENT", "reason": "FULL_CREDIT_REFUND", "reference": "RF-1", "payment_type": "DIRECT_CREDIT"},
        {"transaction_id": "S-1", "transaction_date": "2025-01-10", "amount": 52.5, "type": "SUPPLY_CHARGE", "product_code": "VAR-22", "display_note": "January",
         "line_items": [{"rate_band": "CONSUMPTION_STANDARD", "start_date": "2025-01-01", "end_date": "2025-01-31", "number_of_units": 200.5, "net_amount": 50, "price_per_unit": 0.2493766, "units": [100, 100.5]}],
         "tax_items": [{"amount": 2.5, "tax_type": "VAT", "value_taxed": 50, "rate": 0.05, "unit_type": "PROPORTION"}]}
    ])
}

#[tokio::test]
async fn every_type_is_added_with_exact_amounts_and_a_ledger() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server
        .post(TRANSACTIONS, &token, &batch(every_type()))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let results = body["results"].as_array().expect("results");
    assert_eq!(results.len(), 6);
    for result in results {
        assert_eq!(result["status"], "TRANSACTION_ADDED_TO_ACCOUNT");
        assert_eq!(
            result["transaction_data"]["status"],
            "TRANSACTION_IMPORT_SUCCESS"
        );
    }
    let amounts: Vec<&str> = results
        .iter()
        .map(|r| r["transaction_data"]["amount"].as_str().expect("amount"))
        .collect();
    assert_eq!(
        amounts,
        ["1234567.89", "0.10", "-25.50", "100.00", "40.00", "52.50"]
    );
    let supply = &results[5]["transaction_data"];
    assert_eq!(supply["line_items"][0]["net_amount"], "50.00");
    assert_eq!(supply["line_items"][0]["price_per_unit"], "0.2493766");
    assert_eq!(supply["tax_items"][0]["rate"], "0.05");
    assert_eq!(supply["type"], "SUPPLY_CHARGE");

    // Charges, supply charges and repayments add; credits and payments subtract.
    // 1234567.89 + 0.10 - (-25.50) - 100 + 40 + 52.50
    let view = server.account_view(&number).await;
    // The real platform's sign: charges are debits.
    assert_eq!(view["balance"], "-1234585.99");
    assert_eq!(view["ledger_entries"].as_array().map(Vec::len), Some(6));
    assert_eq!(view["ledger_entries"][5]["balance_after"], "-1234585.99");
    assert_eq!(view["transactions"][0]["transaction_id"], "C-1");
}

#[tokio::test]
async fn a_batch_with_one_bad_transaction_leaves_nothing_behind() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let bad = json!({"transaction_id": "P-9", "transaction_date": "2025-01-08", "amount": 10, "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT", "payment_type": "DIRECT_DEBIT"});
    let posted = json!([
        charge("C-1", "2025-01-02", json!(10)),
        charge("C-2", "2025-01-03", json!(5)),
        bad.clone()
    ]);
    let (status, body) = server.post(TRANSACTIONS, &token, &batch(posted)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["status"], "TRANSACTION_IMPORT_ERROR");
    assert_eq!(body["transaction_data"], bad);
    assert!(
        body["error_detail"]
            .as_str()
            .is_some_and(|d| d.contains("transactions.2")),
        "{body}"
    );
    let view = server.account_view(&number).await;
    assert_eq!(view["transactions"], json!([]));
    assert_eq!(view["balance"], "0.00");
}

#[tokio::test]
async fn per_transaction_failures_name_the_first_failing_transaction() {
    let server = Server::start().await;
    let (token, _) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let cases = [
        (
            json!([{"transaction_date": "2025-01-02", "amount": 1, "type": "CHARGE", "reason": "IMPORTED_CHARGE"}]),
            "missing_transaction_id",
        ),
        (
            json!([charge("C-1", "2999-01-01", json!(1))]),
            "transaction_in_future",
        ),
        (
            json!([
                charge("C-1", "2025-01-02", json!(1)),
                charge("C-1", "2025-01-03", json!(2))
            ]),
            "duplicate_transaction_ids",
        ),
        (
            json!([charge("C-1", "2025-01-02", json!("1.00000000001"))]),
            "max_decimal_places",
        ),
        (
            json!([charge("C-1", "2025-01-02", json!(1)), {"transaction_id": "X", "transaction_date": "2025-01-02", "amount": 1, "type": "REFUND"}]),
            "invalid_choice",
        ),
    ];
    for (transactions, code) in cases {
        let posted = transactions.as_array().expect("array").clone();
        let (status, body) = server
            .post(TRANSACTIONS, &token, &batch(transactions))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{code}: {body}");
        assert_eq!(body["status"], "TRANSACTION_IMPORT_ERROR");
        assert_eq!(body["error_code"], code, "{body}");
        assert_eq!(
            &body["transaction_data"],
            posted.last().expect("last"),
            "{body}"
        );
    }
    // Envelope errors keep the standard error format.
    let (status, body) = server
        .post(
            TRANSACTIONS,
            &token,
            &json!({"import_supplier": "OLD_CO", "transactions": "none"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_values(&body),
        vec![
            (
                Value::Null,
                json!("account_number_or_external_account_number_required")
            ),
            (json!("transactions"), json!("invalid")),
        ]
    );
    let (status, body) = server
        .post(
            &format!("{TRANSACTIONS}?check_previously_added=maybe"),
            &token,
            &batch(json!([charge("C-1", "2025-01-02", json!(1))])),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_pairs(&body),
        vec![("check_previously_added".to_owned(), "invalid".to_owned())]
    );
}

#[tokio::test]
async fn previously_added_transactions_are_skipped_or_refused() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let first = batch(json!([charge("C-1", "2025-01-02", json!(10))]));
    assert_eq!(
        server.post(TRANSACTIONS, &token, &first).await.0,
        StatusCode::CREATED
    );
    let again = batch(json!([
        charge("C-1", "2025-01-02", json!(10)),
        charge("C-2", "2025-01-03", json!(5))
    ]));
    let (status, body) = server.post(TRANSACTIONS, &token, &again).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["results"][0]["status"], "TRANSACTION_ALREADY_EXISTS");
    assert_eq!(body["results"][0]["transaction_data"]["amount"], "10.00");
    assert_eq!(body["results"][1]["status"], "TRANSACTION_ADDED_TO_ACCOUNT");

    let third = batch(json!([
        charge("C-3", "2025-01-04", json!(1)),
        charge("C-1", "2025-01-02", json!(10))
    ]));
    let (status, body) = server
        .post(
            &format!("{TRANSACTIONS}?check_previously_added=false"),
            &token,
            &third,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error_code"], "duplicate_transaction_ids");
    let view = server.account_view(&number).await;
    assert_eq!(
        view["transactions"].as_array().map(Vec::len),
        Some(2),
        "C-3 was not added either"
    );
    assert_eq!(view["balance"], "-15.00");
}

#[tokio::test]
async fn early_transactions_are_moved_into_the_open_period_or_refused() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let early = batch(json!([
        charge("E-1", "2024-12-15", json!(3)),
        charge("E-2", "2024-11-01", json!(4)),
        charge("OK-1", "2025-01-01", json!(1))
    ]));
    let (status, body) = server
        .post(
            &format!("{TRANSACTIONS}?force_add_to_current_statement=false"),
            &token,
            &early,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error_code"],
        "transaction_outside_open_statement_period"
    );
    assert_eq!(body["transaction_data"]["transaction_id"], "E-1");

    let (status, body) = server.post(TRANSACTIONS, &token, &early).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let moved = &body["results"][0]["transaction_data"];
    assert_eq!(moved["transaction_date"], "2025-01-01");
    assert_eq!(moved["original_transaction_date"], "2024-12-15");
    assert!(
        moved["description"]
            .as_str()
            .is_some_and(|d| d.contains("2024-12-15")),
        "{moved}"
    );
    assert!(body["results"][2]["transaction_data"]["description"].is_null());

    let view = server.account_view(&number).await;
    let pinned: Vec<&Value> = view["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter(|n| n["is_pinned"] == true)
        .collect();
    assert_eq!(pinned.len(), 1, "one pinned note for the batch: {pinned:?}");
    assert!(
        pinned[0]["body"]
            .as_str()
            .is_some_and(|b| b.contains("E-1") && b.contains("E-2"))
    );

    // A historical statement moves the open period to the day after its end.
    let statement = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "statements": [
        {"bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-03-31", "statement_id": "ST-1", "issued_date": "2025-04-02", "number": "1", "gross_amount": 10}
    ]});
    let (status, _) = server
        .post(
            "/v1/data-import/historical-statements/create/",
            &token,
            &statement,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let february = batch(json!([charge("F-1", "2025-02-01", json!(1))]));
    let (status, body) = server
        .post(
            &format!("{TRANSACTIONS}?force_add_to_current_statement=false"),
            &token,
            &february,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error_code"],
        "transaction_outside_open_statement_period"
    );
    let (_, body) = server.post(TRANSACTIONS, &token, &february).await;
    assert_eq!(
        body["results"][0]["transaction_data"]["transaction_date"],
        "2025-04-01"
    );
}

#[tokio::test]
async fn twenty_concurrent_identical_transactions_are_added_once() {
    let server = Arc::new(Server::start().await);
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let posted = batch(json!([charge("C-1", "2025-01-02", json!(19.99))]));
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (server, token, posted) = (server.clone(), token.clone(), posted.clone());
        tasks.push(tokio::spawn(async move {
            server.post(TRANSACTIONS, &token, &posted).await
        }));
    }
    let mut added = 0;
    for task in tasks {
        let (status, body) = task.await.expect("task");
        assert_eq!(status, StatusCode::CREATED, "{body}");
        match body["results"][0]["status"].as_str() {
            Some("TRANSACTION_ADDED_TO_ACCOUNT") => added += 1,
            Some("TRANSACTION_ALREADY_EXISTS") => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(added, 1);
    let view = server.account_view(&number).await;
    assert_eq!(view["ledger_entries"].as_array().map(Vec::len), Some(1));
    assert_eq!(view["balance"], "-19.99");
}

#[tokio::test]
async fn transactions_need_an_imported_account() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    let (status, body) = server
        .post(
            TRANSACTIONS,
            &token,
            &batch(json!([charge("C-1", "2025-01-02", json!(1))])),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "account_not_found");
}

/// The real platform's deprecated `account_number` names the account as
/// `external_account_number` does.
#[tokio::test]
async fn the_deprecated_account_number_names_the_account() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let posted = json!({"import_supplier": "OLD_CO", "account_number": "ACC-1",
                        "transactions": [charge("C-1", "2025-01-05", json!(10))]});
    let (status, body) = server.post(TRANSACTIONS, &token, &posted).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let view = server.account_view(&number).await;
    assert_eq!(view["transactions"][0]["transaction_id"], "C-1");
}

/// Every reason and payment type the real platform lists for a type is accepted (the lists
/// are the real document's, in the schema the requests are checked against), one outside is refused,
/// and `dry_run` answers as a real run without keeping anything.
#[tokio::test]
async fn every_real_reason_and_payment_type_is_accepted_and_a_dry_run_keeps_nothing() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let schemas = &ferry_host::domain::request_document::request_schemas()["$defs"];
    let list = |kind: &str, field: &str| {
        let name = match kind {
            "CHARGE" => "EnergyCharge",
            "CREDIT" => "EnergyCredit",
            "PAYMENT" => "EnergyPayment",
            _ => "EnergyRepayment",
        };
        schemas[name]["properties"][field]["enum"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let mut posted = Vec::new();
    for kind in ["CHARGE", "CREDIT", "PAYMENT", "REPAYMENT"] {
        for (index, reason) in list(kind, "reason").iter().enumerate() {
            posted.push(json!({"transaction_id": format!("{kind}-R{index}"), "transaction_date": "2025-01-05",
                               "amount": 1, "type": kind, "reason": reason}));
        }
    }
    for kind in ["PAYMENT", "REPAYMENT"] {
        for (index, payment_type) in list(kind, "payment_type").iter().enumerate() {
            posted.push(json!({"transaction_id": format!("{kind}-P{index}"), "transaction_date": "2025-01-05",
                               "amount": 1, "type": kind, "payment_type": payment_type}));
        }
    }
    assert_eq!(posted.len(), 77 + 239 + 14 + 24 + 35 + 6);
    for chunk in posted.chunks(100) {
        let body = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
                          "dry_run": true, "transactions": chunk});
        let (status, answer) = server.post(TRANSACTIONS, &token, &body).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
        assert_eq!(
            answer["results"].as_array().map(Vec::len),
            Some(chunk.len())
        );
        assert_eq!(
            answer["results"][0]["status"],
            "TRANSACTION_ADDED_TO_ACCOUNT"
        );
    }
    // The dry runs kept nothing.
    let view = server.account_view(&number).await;
    assert_eq!(view["transactions"], json!([]));
    assert_eq!(view["balance"], "0.00");

    let outside = json!([{"transaction_id": "X-1", "transaction_date": "2025-01-05", "amount": 1,
                          "type": "REPAYMENT", "payment_type": "DD_REGULAR_COLLECTION"}]);
    let (status, body) = server.post(TRANSACTIONS, &token, &batch(outside)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error_code"], "invalid_choice");

    // For real: kept.
    let (status, _) = server
        .post(TRANSACTIONS, &token, &batch(json!(posted[..3].to_vec())))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let view = server.account_view(&number).await;
    assert_eq!(view["transactions"].as_array().map(Vec::len), Some(3));
}
