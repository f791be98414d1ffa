//! The real platform's own request examples (extracted from its OpenAPI document into
//! `tests/fixtures/real-examples.json` by `tools/extract-reference-examples.py`), sent as they
//! are with only the supplier code and account number adapted, get the answers the real
//! document gives. (Its two account examples wait for Ferry to take the real account
//! document.)

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The example of `operation`, with the real supplier code and account number replaced.
fn example(operation: &str) -> Value {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/real-examples.json");
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("the examples")).expect("JSON");
    let mut example = document["examples"][operation]["ExamplePayload"].clone();
    assert!(example.is_object(), "no example for {operation}");
    example["import_supplier"] = json!("OLD_CO");
    example["external_account_number"] = json!("ACC-1");
    example
}

#[tokio::test]
async fn the_real_documents_own_examples_get_the_real_answers() {
    let vendor = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/instructions/THIS-IS-A-FAKE-REFERENCE"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"brand": "visa"})))
        .mount(&vendor)
        .await;
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_VENDOR_STRIPE_URL".into(), vendor.uri()),
            ("FERRY_VENDOR_STRIPE_KEY".into(), "stripe-key".into()),
        ],
        ..Options::default()
    })
    .await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2019-01-01")
        .await;
    // The documents its examples name, in the supplier's root of the file store.
    server.put_document("old_co/some/path/to/a/document.pdf");
    server.put_document("old_co/path/to/statement-1.pdf");

    // Notes: the pinned note's unpin_at is in the past and it has no created_at.
    let (status, notes) = server
        .post(
            "/v1/data-import/notes/create/",
            &token,
            &example("POST /v1/data-import/notes/create/"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{notes}");
    assert_eq!(notes[0]["status"], "NOTE_CREATION_SUCCESS");
    assert_eq!(notes[1]["created_at"], "2020-02-01T12:00:00Z");

    // Transactions: every type, a `reference` on the types without one (ignored and
    // named), a prepay meter serial number.
    let (status, transactions) = server
        .post(
            "/v1/data-import/transactions/create/",
            &token,
            &example("POST /v1/data-import/transactions/create/"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{transactions}");
    let results = transactions["results"].as_array().expect("results");
    assert_eq!(results.len(), 6);
    assert!(
        results
            .iter()
            .all(|result| result["status"] == "TRANSACTION_ADDED_TO_ACCOUNT"),
        "{transactions}"
    );
    assert_eq!(
        results[1]["transaction_data"]["to_prepay_meter_serial_number"],
        "Z16N389556"
    );

    // Statements: 100 is £1.00.
    let (status, statements) = server
        .post(
            "/v1/data-import/historical-statements/create/",
            &token,
            &example("POST /v1/data-import/historical-statements/create/"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{statements}");
    assert_eq!(statements["statements"][0]["gross_amount"], 100);
    let view = server.account_view(&number).await;
    assert_eq!(view["statements"][0]["gross_amount"], "1.00");

    // A payment instruction, confirmed with the vendor.
    let (status, instruction) = server
        .post(
            "/v1/data-import/payment-instruction/create/",
            &token,
            &example("POST /v1/data-import/payment-instruction/create/"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{instruction}");
    assert_eq!(
        instruction,
        json!({"platform_account_number": number, "account_number": number,
               "reference": "THIS-IS-A-FAKE-REFERENCE"})
    );
}
