//! The money moves with the account: processing an account creates everything its document
//! carries (the ledger with its initial closed statement, statements, notes, payment
//! instructions) in one change, refuses a document whose amounts or dates do not add up with
//! the real platform's codes, and leaves nothing behind when something outside Ferry refuses.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub(crate) fn transaction(id: &str, date: &str, kind: &str, amount: &str) -> Value {
    let mut transaction =
        json!({"transaction_id": id, "transaction_date": date, "amount": amount, "type": kind});
    match kind {
        "CHARGE" => transaction["reason"] = json!("IMPORTED_CHARGE"),
        "CREDIT" => transaction["reason"] = json!("IMPORTED_CREDIT"),
        _ => {}
    }
    transaction
}

/// An account whose document carries its money: -35.00 transferred, -20.00 on the last
/// statement (a 30.00 charge, a 10.00 payment), then a 25.00 charge and a 10.00 credit; a note
/// with a document, a statement with its PDF and a card instruction at vendor ACME.
pub(crate) fn account_with_money(external: &str) -> Value {
    let mut body = account("OLD_CO", external);
    for (field, value) in [
        ("transfer_balance", json!("-35.00")),
        ("last_statement_balance", json!("-20.00")),
        ("last_statement_closing_date", json!("2025-01-31")),
        ("last_statement_issue_date", json!("2025-02-03")),
        (
            "historical_statement_transactions",
            json!([
                transaction("H-1", "2025-01-05", "CHARGE", "30.00"),
                transaction("H-2", "2025-01-20", "PAYMENT", "10.00"),
            ]),
        ),
        (
            "current_statement_transactions",
            json!([
                transaction("C-1", "2025-02-10", "CHARGE", "25.00"),
                transaction("C-2", "2025-02-20", "CREDIT", "10.00"),
            ]),
        ),
        (
            "notes",
            json!([{"body": "Moved from Old Energy.", "document_paths": [{"document_path": "letters/welcome.pdf"}]},
                   {"body": "Moved from Old Energy."}]),
        ),
        (
            "statements",
            json!([{"statement_id": "S-1", "bill_period_from_date": "2025-01-01",
                    "bill_period_to_date": "2025-01-31", "issued_date": "2025-02-03",
                    "gross_amount": 3000, "statement_path": "statements/s-1.pdf"}]),
        ),
        (
            "payment_instructions",
            json!([{"vendor": "ACME", "reference": "PM-1", "type": "CARD"}]),
        ),
    ] {
        body[field] = value;
    }
    body
}

/// A server with payment vendor ACME at `vendor`, supplier OLD_CO and a token for it.
async fn server_with_vendor(vendor: &MockServer) -> (Server, String) {
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_VENDOR_ACME_URL".into(), vendor.uri()),
            ("FERRY_VENDOR_ACME_KEY".into(), "acme-key".into()),
            ("FERRY_VENDOR_DEADLINE_MS".into(), "1500".into()),
        ],
        ..Options::default()
    })
    .await;
    let token = server.supplier_with_token("OLD_CO").await;
    (server, token)
}

async fn vendor_knowing(references: &[&str]) -> MockServer {
    let vendor = MockServer::start().await;
    for reference in references {
        Mock::given(method("GET"))
            .and(path(format!("/instructions/{reference}")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"reference": reference, "card": {"last4": "4242"}})),
            )
            .mount(&vendor)
            .await;
    }
    vendor
}

fn put_documents(server: &Server) {
    server.put_document("old_co/letters/welcome.pdf");
    server.put_document("old_co/statements/s-1.pdf");
}

async fn process(
    server: &Server,
    token: &str,
    external: &str,
    dry_run: bool,
) -> (StatusCode, Value) {
    server
        .post(
            PROCESS,
            token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": external,
                    "dry_run": dry_run}),
        )
        .await
}

/// The supplier's imported accounts, as the real list shows them.
async fn imported(server: &Server, token: &str) -> Value {
    let (status, list) = server
        .get(
            "/v1/data-import/imported-account-import-processes/OLD_CO/",
            token,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list
}

/// The event log's events about `number`, by type, in order.
async fn events_of(server: &Server, number: &str) -> Vec<String> {
    let (status, page) = server
        .admin(Method::GET, "/admin/v1/events?limit=1000", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|event| event["subject"] == number)
        .map(|event| event["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn strings(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|item| match &item[field] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn an_account_is_migrated_whole_with_its_money() {
    let vendor = vendor_knowing(&["PM-1"]).await;
    let (server, token) = server_with_vendor(&vendor).await;
    put_documents(&server);
    server.stage(&token, &account_with_money("ACC-1")).await;
    let (status, body) = process(&server, &token, "ACC-1", false).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let number = body["platform_account_number"]
        .as_str()
        .expect("number")
        .to_owned();

    let view = server.account_view(&number).await;
    assert_eq!(view["balance"], "-35.00", "{view}");
    assert_eq!(
        view["closed_statements"],
        json!([{"first_transaction_date": "2025-01-05", "closing_date": "2025-01-31",
                "issued_date": "2025-02-03", "closing_balance": "-20.00", "transactions": 2}])
    );
    assert_eq!(view["open_statement_period_start"], "2025-02-01");
    assert_eq!(
        strings(&view["transactions"], "transaction_id"),
        ["H-1", "H-2", "C-1", "C-2"]
    );
    assert_eq!(
        strings(&view["transactions"], "historical"),
        ["true", "true", "false", "false"]
    );
    assert_eq!(
        strings(&view["ledger_entries"], "balance_after"),
        ["-30.00", "-20.00", "-45.00", "-35.00"]
    );
    assert_eq!(strings(&view["statements"], "statement_id"), ["S-1"]);
    assert_eq!(view["statements"][0]["gross_amount"], "30.00");
    // The second note is the first one again (same body, no creation date): kept once.
    assert_eq!(strings(&view["notes"], "body"), ["Moved from Old Energy."]);
    assert_eq!(view["payment_instructions"][0]["reference"], "PM-1");
    assert_eq!(
        view["payment_instructions"][0]["details"]["card"]["last4"],
        "4242"
    );
    // The rest of the document stays with the account.
    assert_eq!(view["account"]["transfer_balance"], "-35.00");

    let mut events = events_of(&server, &number).await;
    events.sort();
    assert_eq!(
        events,
        [
            "account.created",
            "billing.ledger.entry_posted",
            "billing.ledger.entry_posted",
            "billing.ledger.entry_posted",
            "billing.ledger.entry_posted",
            "data_import.import_process.complete",
            "payments.payment_method.new",
        ]
    );

    // A transaction the document brought is not added twice; a new charge comes off the
    // balance, in the real platform's sign.
    let (status, body) = server
        .post(
            TRANSACTIONS,
            &token,
            &json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
                    "transactions": [transaction("C-1", "2025-02-10", "CHARGE", "25.00"),
                                     transaction("N-1", "2025-03-01", "CHARGE", "40.00")]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        strings(&body["results"], "status"),
        ["TRANSACTION_ALREADY_EXISTS", "TRANSACTION_ADDED_TO_ACCOUNT"]
    );
    let view = server.account_view(&number).await;
    assert_eq!(view["balance"], "-75.00");
    assert_eq!(view["ledger_entries"][4]["balance_after"], "-75.00");
}

#[tokio::test]
async fn amounts_and_dates_that_do_not_add_up_are_refused_with_the_real_codes() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let mut body = account_with_money("ACC-1");
    body["payment_instructions"] = json!([]);
    body["transfer_balance"] = json!("999.00");
    body["historical_statement_transactions"][1]["transaction_date"] = json!("2025-02-01");
    body["current_statement_transactions"][0]["transaction_date"] = json!("2025-01-31");
    body["last_statement_balance"] = json!("-25.00");
    let expected = [
        ("transfer_balance", "balance_mismatch_on_transfer_balance"),
        (
            "last_statement_balance",
            "historical_statement_transactions_balance_mismatch",
        ),
        (
            "historical_statement_transactions.1.transaction_date",
            "historical_statement_transaction_after_last_statement_closing_date",
        ),
        (
            "current_statement_transactions.0.transaction_date",
            "current_statement_transaction_before_current_statement_opening_date",
        ),
    ];
    for path in [VALIDATE, STAGE, "/v2/data-import/accounts/validate/"] {
        let (status, answer) = server.post(path, &token, &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {answer}");
        assert_eq!(
            answer["code"], "account_failed_validation",
            "{path} {answer}"
        );
        let mut found = error_pairs(&answer);
        found.sort();
        let mut wanted: Vec<(String, String)> = expected
            .iter()
            .map(|(attr, code)| ((*attr).to_owned(), (*code).to_owned()))
            .collect();
        wanted.sort();
        assert_eq!(found, wanted, "{path}");
    }

    // Historical transactions need a date to close on.
    let mut body = account_with_money("ACC-2");
    body["payment_instructions"] = json!([]);
    body.as_object_mut()
        .expect("object")
        .remove("last_statement_closing_date");
    body.as_object_mut()
        .expect("object")
        .remove("last_statement_issue_date");
    let (status, answer) = server.post(VALIDATE, &token, &body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        error_pairs(&answer),
        [(
            "historical_statement_transactions".to_owned(),
            "historical_statement_transactions_without_last_statement_closing_date_or_last_billed_to_date"
                .to_owned()
        )]
    );
    // The last billed-to date closes it instead.
    body["last_billed_to_date"] = json!("2025-01-31");
    let (status, answer) = server.post(VALIDATE, &token, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

#[tokio::test]
async fn a_failure_halfway_leaves_nothing_and_a_retry_succeeds_once() {
    let vendor = MockServer::start().await;
    Mock::given(path("/instructions/PM-1"))
        .respond_with(ResponseTemplate::new(404))
        .up_to_n_times(2)
        .mount(&vendor)
        .await;
    Mock::given(path("/instructions/PM-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"card": {"last4": "4242"}})))
        .mount(&vendor)
        .await;
    let (server, token) = server_with_vendor(&vendor).await;
    server.stage(&token, &account_with_money("ACC-1")).await;

    // A document missing from the bucket and an instruction the vendor does not have: each
    // refused at its path, nothing kept.
    server.put_document("old_co/letters/welcome.pdf");
    let (status, body) = process(&server, &token, "ACC-1", false).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        error_pairs(&body),
        [
            (
                "statements.0.statement_path".to_owned(),
                "path_does_not_exist_in_file_store".to_owned()
            ),
            (
                "payment_instructions.0.reference".to_owned(),
                "payment_instruction_not_found".to_owned()
            ),
        ]
    );
    let (_, status_answer) = server
        .get("/v2/data-import/accounts/OLD_CO/ACC-1/", &token)
        .await;
    assert_eq!(status_answer["status"], "ERRORED", "{status_answer}");

    // The vendor still refusing the instruction: refused alone, nothing kept.
    server.put_document("old_co/statements/s-1.pdf");
    let (status, body) = process(&server, &token, "ACC-1", false).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        error_pairs(&body),
        [(
            "payment_instructions.0.reference".to_owned(),
            "payment_instruction_not_found".to_owned()
        )]
    );
    let listed = imported(&server, &token).await;
    assert_eq!(listed, json!([]));

    // Once all is there, the account is made, once.
    let (status, body) = process(&server, &token, "ACC-1", false).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let number = body["platform_account_number"]
        .as_str()
        .expect("number")
        .to_owned();
    let (status, again) = process(&server, &token, "ACC-1", false).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{again}");
    assert_eq!(again["code"], "account_import_process_already_imported");
    let view = server.account_view(&number).await;
    assert_eq!(view["balance"], "-35.00");
    assert_eq!(view["transactions"].as_array().map(Vec::len), Some(4));
    let events = events_of(&server, &number).await;
    assert_eq!(
        events
            .iter()
            .filter(|kind| *kind == "billing.ledger.entry_posted")
            .count(),
        4
    );
    let listed = imported(&server, &token).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_dry_run_runs_everything_and_keeps_nothing() {
    let vendor = vendor_knowing(&["PM-1"]).await;
    let (server, token) = server_with_vendor(&vendor).await;
    server.stage(&token, &account_with_money("ACC-1")).await;
    let (status, body) = process(&server, &token, "ACC-1", true).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        error_pairs(&body),
        [
            (
                "statements.0.statement_path".to_owned(),
                "path_does_not_exist_in_file_store".to_owned()
            ),
            (
                "notes.0.document_paths.0.document_path".to_owned(),
                "path_does_not_exist_in_file_store".to_owned()
            ),
        ]
    );
    put_documents(&server);
    let (status, body) = process(&server, &token, "ACC-1", true).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["detail"],
        "Account would successfully import. Rolled back due to Dry Run."
    );
    let listed = imported(&server, &token).await;
    assert_eq!(listed, json!([]));
    // The vendor was asked (a dry run checks everything), and no ledger event was kept.
    assert!(
        !vendor
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty()
    );
    let (_, page) = server
        .admin(Method::GET, "/admin/v1/events?limit=1000", None)
        .await;
    assert!(
        page["events"]
            .as_array()
            .expect("events")
            .iter()
            .all(|event| event["type"] != "billing.ledger.entry_posted"),
        "{page}"
    );
}

/// An instruction the document says is valid only from a day to come is recorded pending,
/// without asking the vendor.
#[tokio::test]
async fn an_instruction_valid_from_a_day_to_come_is_recorded_pending() {
    let vendor = MockServer::start().await;
    let (server, token) = server_with_vendor(&vendor).await;
    put_documents(&server);
    let mut body = account_with_money("ACC-1");
    body["payment_instructions"] = json!([{"vendor": "acme", "reference": "PM-9", "type": "DIRECT_DEBIT", "valid_from": "2099-01-01"}]);
    server.stage(&token, &body).await;
    let (status, answer) = process(&server, &token, "ACC-1", false).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let number = answer["platform_account_number"].as_str().expect("number");
    let view = server.account_view(number).await;
    let instruction = &view["payment_instructions"][0];
    assert_eq!(
        (
            &instruction["vendor"],
            &instruction["pending"],
            &instruction["valid_from"]
        ),
        (&json!("ACME"), &json!(true), &json!("2099-01-01"))
    );
    assert!(
        vendor
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty()
    );
    // A vendor the operator did not configure is refused when staged.
    body["external_account_number"] = json!("ACC-2");
    body["payment_instructions"][0]["vendor"] = json!("NOBODY");
    let (status, answer) = server.post(STAGE, &token, &body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        error_pairs(&answer),
        [(
            "payment_instructions.0.vendor".to_owned(),
            "invalid_choice".to_owned()
        )]
    );
}

/// The real document's own account example, with its ledger in `ledgers`, migrates with the
/// balance it declares and the statements, notes and documents it names.
#[tokio::test]
async fn the_real_documents_account_example_migrates_with_its_balance() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-examples.json");
    let examples: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("the examples")).expect("JSON");
    let mut body =
        examples["examples"]["POST /v2/data-import/accounts/validate/"]["ExamplePayload"].clone();
    body["import_supplier"] = json!("OLD_CO");
    body["external_account_number"] = json!("ACC-1");
    for document in [
        "old_co/notes/1234/attachment.jpg",
        "old_co/EXTERNAL-1234/2019-06-01-to-2019-07-01.pdf",
        "old_co/EXTERNAL-1234/2019-07-01-to-2019-08-01.pdf",
    ] {
        server.put_document(document);
    }
    server.stage(&token, &body).await;
    let (status, answer) = process(&server, &token, "ACC-1", false).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let number = answer["platform_account_number"].as_str().expect("number");
    let view = server.account_view(number).await;
    assert_eq!(view["balance"], "30.00", "{view}");
    assert_eq!(view["closed_statements"][0]["closing_balance"], "20.00");
    assert_eq!(view["closed_statements"][0]["closing_date"], "2019-07-31");
    assert_eq!(view["transactions"].as_array().map(Vec::len), Some(4));
    assert_eq!(view["statements"].as_array().map(Vec::len), Some(2));
    assert_eq!(view["notes"].as_array().map(Vec::len), Some(1));
    // The open period starts after the later of the closed statement and the statements.
    assert_eq!(view["open_statement_period_start"], "2019-08-02");
}
