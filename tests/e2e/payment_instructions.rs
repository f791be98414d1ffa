//! Payment instructions, with the vendor faked by a real local HTTP server (wiremock).

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const VENDOR_KEY: &str = "vendor-secret";

async fn server_with_vendor(vendor: &MockServer) -> Server {
    Server::start_with(Options {
        env: vec![
            ("FERRY_VENDOR_ACME_URL".into(), vendor.uri()),
            ("FERRY_VENDOR_ACME_KEY".into(), VENDOR_KEY.into()),
            ("FERRY_VENDOR_DEADLINE_MS".into(), "1500".into()),
        ],
        ..Options::default()
    })
    .await
}

fn instruction(reference: &str) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "vendor": "acme", "reference": reference, "type": "CARD"})
}

fn details(reference: &str) -> Value {
    json!({"reference": reference, "status": "ACTIVE", "card": {"last4": "4242"}})
}

#[tokio::test]
async fn a_confirmed_instruction_is_stored_once() {
    let vendor = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/instructions/PM-1"))
        .and(header(
            "Authorization",
            format!("Bearer {VENDOR_KEY}").as_str(),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(details("PM-1")))
        .expect(1)
        .mount(&vendor)
        .await;
    let server = server_with_vendor(&vendor).await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    for _ in 0..2 {
        let (status, body) = server
            .post(INSTRUCTIONS, &token, &instruction("PM-1"))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(
            body,
            json!({"platform_account_number": number, "kraken_account_number": number,
                   "account_number": number, "reference": "PM-1"})
        );
    }
    let view = server.account_view(&number).await;
    let kept = view["payment_instructions"]
        .as_array()
        .expect("instructions");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["vendor"], "ACME");
    assert_eq!(kept[0]["type"], "CARD");
    assert_eq!(kept[0]["details"], details("PM-1"));
    vendor.verify().await;
}

#[tokio::test]
async fn an_instruction_the_vendor_does_not_know_is_a_400() {
    let vendor = MockServer::start().await;
    Mock::given(path("/instructions/PM-404"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&vendor)
        .await;
    Mock::given(path("/instructions/PM-403"))
        .respond_with(ResponseTemplate::new(403))
        .expect(1)
        .mount(&vendor)
        .await;
    let server = server_with_vendor(&vendor).await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server
        .post(INSTRUCTIONS, &token, &instruction("PM-404"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "payment_instruction_not_found");
    assert_eq!(
        error_pairs(&body),
        vec![(
            "reference".to_owned(),
            "payment_instruction_not_found".to_owned()
        )]
    );
    let (status, body) = server
        .post(INSTRUCTIONS, &token, &instruction("PM-403"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "payment_vendor_refused");
    assert_eq!(
        server.account_view(&number).await["payment_instructions"],
        json!([])
    );
    vendor.verify().await;
}

#[tokio::test]
async fn a_passing_vendor_outage_is_retried() {
    let vendor = MockServer::start().await;
    Mock::given(path("/instructions/PM-2"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .expect(1)
        .mount(&vendor)
        .await;
    Mock::given(path("/instructions/PM-2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(details("PM-2")))
        .mount(&vendor)
        .await;
    let server = server_with_vendor(&vendor).await;
    let (token, _) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server
        .post(INSTRUCTIONS, &token, &instruction("PM-2"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    vendor.verify().await;
}

#[tokio::test]
async fn a_persistent_vendor_outage_is_a_500_to_retry_as_is() {
    let vendor = MockServer::start().await;
    Mock::given(path("/instructions/PM-3"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&vendor)
        .await;
    let server = server_with_vendor(&vendor).await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server
        .post(INSTRUCTIONS, &token, &instruction("PM-3"))
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert_error(&body, "payment_vendor_unavailable");
    let attempts = vendor
        .received_requests()
        .await
        .map(|r| r.len())
        .unwrap_or(0);
    assert!(attempts >= 2, "the vendor was asked {attempts} times");
    assert_eq!(
        server.account_view(&number).await["payment_instructions"],
        json!([])
    );
}

#[tokio::test]
async fn instructions_are_validated_before_the_vendor_is_asked() {
    let vendor = MockServer::start().await;
    let server = server_with_vendor(&vendor).await;
    let (token, _) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    server.set_strict("OLD_CO", true).await;
    let bad = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "vendor": "nobody", "type": "CHEQUE", "extra": 1});
    let (status, body) = server.post(INSTRUCTIONS, &token, &bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let mut pairs = error_pairs(&body);
    pairs.sort();
    assert_eq!(
        pairs,
        vec![
            ("extra".to_owned(), "unknown_field".to_owned()),
            (
                "reference".to_owned(),
                "mutually_exclusive_field_required".to_owned()
            ),
            ("type".to_owned(), "invalid_choice".to_owned()),
            ("vendor".to_owned(), "invalid_choice".to_owned()),
        ]
    );
    assert_eq!(vendor.received_requests().await.map(|r| r.len()), Some(0));
}

#[tokio::test]
async fn the_demo_sandbox_vendor_confirms_instructions() {
    let server = Server::start_with(Options {
        args: vec!["--demo".into()],
        ..Options::default()
    })
    .await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let mut body = instruction("PM-DEMO");
    body["vendor"] = json!("SANDBOX");
    let (status, answer) = server.post(INSTRUCTIONS, &token, &body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    body["reference"] = json!("missing-1");
    let (status, _) = server.post(INSTRUCTIONS, &token, &body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let view = server.account_view(&number).await;
    assert_eq!(
        view["payment_instructions"][0]["details"]["card"]["last4"],
        "4242"
    );
}

/// The real platform's instruction: the deprecated `instruction_reference` in place of
/// `reference` (exactly one of them), its six types, and `ledger_code`, `valid_from` and
/// `use_for_scheduled_payments`, kept and shown to operators.
#[tokio::test]
async fn the_real_platforms_instruction_fields_are_taken_and_kept() {
    let vendor = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/instructions/PM-7"))
        .respond_with(ResponseTemplate::new(200).set_body_json(details("PM-7")))
        .mount(&vendor)
        .await;
    let server = server_with_vendor(&vendor).await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let body = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
                      "vendor": "acme", "instruction_reference": "PM-7", "type": "PAYMENT_SLIP",
                      "ledger_code": "MAIN", "valid_from": "2025-02-01",
                      "use_for_scheduled_payments": null});
    let (status, answer) = server.post(INSTRUCTIONS, &token, &body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["reference"], "PM-7");
    let kept = &server.account_view(&number).await["payment_instructions"][0];
    assert_eq!(kept["type"], "PAYMENT_SLIP");
    assert_eq!(kept["ledger_code"], "MAIN");
    assert_eq!(kept["valid_from"], "2025-02-01");
    assert!(kept.get("use_for_scheduled_payments").is_none(), "{kept}");

    let mut both = body.clone();
    both["reference"] = json!("PM-7");
    let (status, answer) = server.post(INSTRUCTIONS, &token, &both).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        error_pairs(&answer),
        vec![(
            "reference".to_owned(),
            "mutually_exclusive_field_required".to_owned()
        )]
    );
}
