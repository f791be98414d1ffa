//! The real platform's own request examples (extracted from its OpenAPI document into
//! `tests/fixtures/real-examples.json` by `tools/extract-reference-examples.py`), sent as they
//! are with only the supplier code and account number adapted, get the answers the real
//! document gives.

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
        json!({"platform_account_number": number, "kraken_account_number": number,
               "account_number": number, "reference": "THIS-IS-A-FAKE-REFERENCE"})
    );
}

/// Every field of the real document's answer examples that name the account is in Ferry's
/// answer, with the value it means: a client reading `kraken_account_number` (or the status's
/// `account_number`, or the v2 status's `kraken_identifier`) reads the platform account's
/// number, as it does from the real platform.
#[tokio::test]
async fn answers_name_the_account_as_the_real_documents_examples_do() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    server.stage(&token, &account("OLD_CO", "ACC-2")).await;
    let (status, processed) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-2"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{processed}");
    let number = processed["platform_account_number"].clone();
    let created_at = |list: &Value| list[0]["account_created_at"].clone();

    // (path, the real example's answer with its values as Ferry's mean them)
    let (_, imported) = server
        .get(
            "/v1/data-import/imported-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    let checks = [
        (
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-2/",
            json!({"status": "COMPLETED", "account_number": number, "kraken_account_number": number}),
        ),
        (
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            json!({"status": "UNKNOWN", "account_number": "", "kraken_account_number": ""}),
        ),
        (
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            json!([{"external_account_number": "ACC-1", "kraken_account_number": null, "account_created_at": null},
                   {"external_account_number": "ACC-2", "kraken_account_number": number,
                    "account_created_at": created_at(&imported)}]),
        ),
        (
            "/v1/data-import/pending-account-import-processes/OLD_CO/",
            json!([{"external_account_number": "ACC-1", "kraken_account_number": null, "account_created_at": null}]),
        ),
        (
            "/v1/data-import/imported-account-import-processes/OLD_CO/",
            json!([{"external_account_number": "ACC-2", "kraken_account_number": number,
                    "account_created_at": created_at(&imported)}]),
        ),
        (
            "/v2/data-import/accounts/OLD_CO/ACC-2/",
            json!({"status": "PROCESSED", "kraken_identifier": number}),
        ),
        (
            "/v2/data-import/accounts/OLD_CO/ACC-1/",
            json!({"status": "PENDING", "kraken_identifier": null}),
        ),
    ];
    assert!(created_at(&imported).is_string(), "{imported}");
    for (path, real) in checks {
        let (status, answer) = server.get(path, &token).await;
        assert_eq!(status, StatusCode::OK, "{path} {answer}");
        assert_contains(path, &answer, &real);
    }
    // `process/`'s example: `external_account_number`, `kraken_account_number`, `account_number`.
    assert_contains(
        PROCESS,
        &processed,
        &json!({"external_account_number": "ACC-2", "kraken_account_number": number, "account_number": number}),
    );
    // And its already-imported answer: `external_account_number`, `kraken_account_number`.
    let (status, again) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-2"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{again}");
    assert_contains(
        PROCESS,
        &again,
        &json!({"external_account_number": "ACC-2", "kraken_account_number": number}),
    );
}

/// Every field of `real` (objects, and arrays element by element) is in `answer` with the
/// same value.
fn assert_contains(path: &str, answer: &Value, real: &Value) {
    match (answer, real) {
        (Value::Object(answer), Value::Object(real)) => {
            for (name, value) in real {
                let Some(found) = answer.get(name) else {
                    panic!("{path}: no {name} in {answer:?}");
                };
                assert_contains(&format!("{path} {name}"), found, value);
            }
        }
        (Value::Array(answer), Value::Array(real)) => {
            assert_eq!(answer.len(), real.len(), "{path}: {answer:?}");
            for (answer, real) in answer.iter().zip(real) {
                assert_contains(path, answer, real);
            }
        }
        (answer, real) => assert_eq!(answer, real, "{path}"),
    }
}

/// A POST's status, `Ferry-Ignored-Fields` and body.
async fn post_naming_ignored(
    server: &Server,
    path: &str,
    token: &str,
    body: &Value,
) -> (StatusCode, Option<String>, String) {
    let response = server.post_response(path, token, body).await;
    let ignored = response
        .headers()
        .get("ferry-ignored-fields")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    (
        response.status(),
        ignored,
        response.text().await.expect("body"),
    )
}

/// The real document's account examples (the v2 operations'; v1's `validate-account/` and
/// `create-or-update/` take the same document): valid as they are, every field kept (their
/// `ledgers` included), and migrated with the meter point, the money and the documents they
/// name.
#[tokio::test]
async fn the_real_account_examples_are_validated_staged_and_migrated() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let validate = example("POST /v2/data-import/accounts/validate/");
    let (status, ignored, body) = post_naming_ignored(
        &server,
        "/v2/data-import/accounts/validate/",
        &token,
        &validate,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(ignored, None);

    let (status, ignored, body) = post_naming_ignored(&server, VALIDATE, &token, &validate).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(ignored, None);
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON"),
        validate
    );

    // The documents its notes and statements name, in the supplier's root of the file store.
    for document in [
        "old_co/notes/1234/attachment.jpg",
        "old_co/EXTERNAL-1234/2019-06-01-to-2019-07-01.pdf",
        "old_co/EXTERNAL-1234/2019-07-01-to-2019-08-01.pdf",
    ] {
        server.put_document(document);
    }
    let schedule = example("POST /v2/data-import/accounts/");
    let (status, ignored, body) =
        post_naming_ignored(&server, "/v2/data-import/accounts/", &token, &schedule).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(ignored, None);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        let (status, body) = server
            .get("/v2/data-import/accounts/OLD_CO/ACC-1/", &token)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if body["status"] != "PENDING" && body["status"] != "IN_PROGRESS" {
            break body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never migrated: {body}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(status["status"], "PROCESSED", "{status}");
    let number = status["platform_identifier"].as_str().expect("a number");
    assert_eq!(status["kraken_identifier"], number);
    let view = server.account_view(number).await;
    assert_eq!(view["balance"], "30.00", "{view}");
    assert_eq!(view["closed_statements"][0]["closing_balance"], "20.00");
    assert_eq!(view["account"]["billing_postcode"], "W1F 9DE");
    assert_eq!(
        view["account"]["supply_addresses"][0]["meter_points"][0]["identifier"],
        "1200060176720"
    );
    let (status, points) = server
        .get(
            "/v1/data-import/meterpoint-statuses-for-account/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{points}");
    let identifiers: Vec<&Value> = points
        .as_array()
        .expect("a list")
        .iter()
        .map(|point| &point["mpxn"])
        .collect();
    assert!(identifiers.contains(&&json!("1200060176720")), "{points}");
}
