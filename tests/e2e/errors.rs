//! Framework-level failures answer in the API's error format too.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn raw(
    server: &Server,
    method: Method,
    path: &str,
    token: &str,
    content_type: Option<&str>,
    body: &str,
) -> (StatusCode, Value) {
    let mut request = reqwest::Client::new()
        .request(method, server.url(path))
        .header("Authorization", format!("Token {token}"))
        .body(body.to_owned());
    if let Some(content_type) = content_type {
        request = request.header("Content-Type", content_type);
    }
    let response = request.send().await.expect("request");
    let status = response.status();
    (status, response.json().await.expect("a JSON error body"))
}

#[tokio::test]
async fn malformed_json_wrong_type_unknown_route_and_wrong_method() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;

    let (status, body) = raw(
        &server,
        Method::POST,
        STAGE,
        &token,
        Some("application/json"),
        "{\"import_supplier\": ",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "parse_error");

    let (status, body) = raw(
        &server,
        Method::POST,
        STAGE,
        &token,
        Some("text/plain"),
        "{}",
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_error(&body, "unsupported_media_type");
    let (status, body) = raw(&server, Method::POST, STAGE, &token, None, "{}").await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_error(&body, "unsupported_media_type");

    let (status, body) = raw(
        &server,
        Method::POST,
        STAGE,
        &token,
        Some("application/json; charset=utf-8"),
        "[1, 2]",
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "account_failed_validation");

    let (status, body) = raw(
        &server,
        Method::GET,
        "/v1/data-import/nothing-here/",
        &token,
        None,
        "",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "not_found");

    let response = reqwest::Client::new()
        .get(server.url(STAGE))
        .header("Authorization", format!("Token {token}"))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(
        response.headers()["allow"]
            .to_str()
            .expect("allow")
            .contains("POST")
    );
    let body: Value = response.json().await.expect("json");
    assert_error(&body, "method_not_allowed");
}

/// A compressed body is refused for what it is, not read as JSON that fails to parse; a body
/// declared `identity` is read as any other.
#[tokio::test]
async fn a_compressed_body_is_refused_with_the_codings_accepted() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let send = |encoding: &'static str, body: Vec<u8>| {
        reqwest::Client::new()
            .post(server.url(NOTES))
            .header("Authorization", format!("Token {token}"))
            .header("Content-Type", "application/json")
            .header("Content-Encoding", encoding)
            .body(body)
            .send()
    };
    let notes = json!({
        "import_supplier": "OLD_CO",
        "external_account_number": "OC-1",
        "notes": [{"body": "compressed"}],
    });
    // gzip's header and an empty deflate stream: what a client sends, not JSON.
    let gzipped = vec![
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00,
    ];
    for (encoding, body) in [
        ("gzip", gzipped),
        ("br", notes.to_string().into_bytes()),
        ("GZIP, identity", notes.to_string().into_bytes()),
    ] {
        let response = send(encoding, body).await.expect("request");
        assert_eq!(
            response.status(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{encoding}"
        );
        assert_eq!(response.headers()["accept-encoding"], "identity");
        let body: Value = response.json().await.expect("json");
        assert_error(&body, "unsupported_media_type");
        assert!(
            body["detail"]
                .as_str()
                .is_some_and(|detail| detail.contains(encoding)),
            "{body}"
        );
    }

    // Not compressed, and said so: read as usual (the account is not there: 404, not 415).
    let response = send("identity", notes.to_string().into_bytes())
        .await
        .expect("request");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body: Value = response.json().await.expect("json");
    assert_error(&body, "account_not_found");
}

#[tokio::test]
async fn bodies_and_arrays_over_the_limits_are_refused() {
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_MAX_BODY_BYTES".into(), "4096".into()),
            ("FERRY_MAX_ITEMS".into(), "3".into()),
        ],
        ..Options::default()
    })
    .await;
    let token = server.supplier_with_token("OLD_CO").await;
    let mut big = account("OLD_CO", "ACC-1");
    big["billing_name"] = json!("x".repeat(5000));
    let (status, body) = server.post(STAGE, &token, &big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_error(&body, "payload_too_large");

    let mut many = account("OLD_CO", "ACC-1");
    let customer = many["customers"][0].clone();
    many["customers"] = json!([
        customer.clone(),
        customer.clone(),
        customer.clone(),
        customer
    ]);
    let (status, body) = server.post(STAGE, &token, &many).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_pairs(&body),
        vec![("customers".to_owned(), "max_length".to_owned())]
    );
}

#[tokio::test]
async fn nulls_wrong_types_and_unknown_fields_are_named_by_path() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.set_strict("OLD_CO", true).await;
    let mut body = account("OLD_CO", "ACC-1");
    body["billing_name"] = Value::Null;
    body["billing_postcode"] = json!(12345);
    body["customers"][0]["flat"] = json!("2B");
    body["customers"][0]["unable_to_read_meters"] = json!("yes");
    body["customers"][0]["date_of_birth"] = json!("01/02/1980");
    let (status, answer) = server.post(STAGE, &token, &body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let mut pairs = error_pairs(&answer);
    pairs.sort();
    assert_eq!(
        pairs,
        vec![
            ("billing_name".to_owned(), "null".to_owned()),
            ("billing_postcode".to_owned(), "invalid".to_owned()),
            ("customers.0.date_of_birth".to_owned(), "invalid".to_owned()),
            ("customers.0.flat".to_owned(), "unknown_field".to_owned()),
            (
                "customers.0.unable_to_read_meters".to_owned(),
                "invalid".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn a_key_over_its_request_limit_is_throttled_with_retry_after() {
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_RATE_LIMIT_PER_SECOND".into(), "1".into()),
            ("FERRY_RATE_LIMIT_BURST".into(), "3".into()),
        ],
        ..Options::default()
    })
    .await;
    let token = server.supplier_with_token("OLD_CO").await;
    let other = server.supplier_with_token("OTHER_CO").await;
    let path = "/v1/data-import/all-account-import-processes/OLD_CO/";
    for _ in 0..3 {
        assert_eq!(server.get(path, &token).await.0, StatusCode::OK);
    }
    let response = reqwest::Client::new()
        .get(server.url(path))
        .header("Authorization", format!("Token {token}"))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .expect("header")
        .parse()
        .expect("seconds");
    assert!((1..=2).contains(&retry_after), "{retry_after}");
    let body: Value = response.json().await.expect("json");
    assert_error(&body, "throttled");
    // Other keys are not affected.
    let (status, _) = server
        .get(
            "/v1/data-import/all-account-import-processes/OTHER_CO/",
            &other,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

/// As the real platform, fields Ferry does not know are ignored by default, but never
/// silently: the answer names them (`Ferry-Ignored-Fields`, `Ferry-Ignored-Field-Count`) and
/// `/metrics` counts them. A supplier the operator sets strict has them refused.
#[tokio::test]
async fn unknown_fields_are_ignored_and_named_unless_the_supplier_is_strict() {
    let server = Server::start().await;
    let (token, _) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let mut account = account("OLD_CO", "ACC-2");
    account["nickname"] = json!("Ada");
    account["customers"][0]["flat"] = json!("2B");
    let notes = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
                       "source_system": "crm", "notes": [{"body": "Hello", "colour": "blue"}]});
    // The real document's own transactions example sends `reference` on a CHARGE.
    let transactions = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
        "transactions": [{"transaction_id": "T-1", "transaction_date": "2025-01-05", "amount": 10,
                          "type": "CHARGE", "reason": "IMPORTED_CHARGE", "reference": "INV-1"}]});
    let requests = [
        (
            STAGE,
            &account,
            "customers.0.flat, nickname",
            StatusCode::CREATED,
        ),
        (
            "/v1/data-import/notes/create/",
            &notes,
            "source_system, notes.0.colour",
            StatusCode::CREATED,
        ),
        (
            "/v1/data-import/transactions/create/",
            &transactions,
            "transactions.0.reference",
            StatusCode::CREATED,
        ),
    ];
    for (path, body, ignored, expected) in requests {
        let response = server.post_response(path, &token, body).await;
        assert_eq!(response.status(), expected, "{path}");
        let listed = response.headers()["ferry-ignored-fields"]
            .to_str()
            .expect("ASCII")
            .to_owned();
        let mut listed: Vec<&str> = listed.split(", ").collect();
        let mut wanted: Vec<&str> = ignored.split(", ").collect();
        listed.sort_unstable();
        wanted.sort_unstable();
        assert_eq!(listed, wanted, "{path}");
        assert_eq!(
            response.headers()["ferry-ignored-field-count"],
            wanted.len().to_string().as_str()
        );
    }
    let (_, metrics) = server.call(Method::GET, "/metrics", None, None).await;
    let metrics = metrics.as_str().expect("text");
    for line in [
        r#"ferry_ignored_fields_total{endpoint="create_or_update"} 2"#,
        r#"ferry_ignored_fields_total{endpoint="notes"} 2"#,
        r#"ferry_ignored_fields_total{endpoint="transactions"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} not in\n{metrics}");
    }
    // A request with nothing unknown carries no such header.
    let response = server
        .post_response(STAGE, &token, &crate::support::account("OLD_CO", "ACC-3"))
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert!(response.headers().get("ferry-ignored-fields").is_none());

    // Strict: refused, with every other error, and nothing kept.
    server.set_strict("OLD_CO", true).await;
    account["external_account_number"] = json!("ACC-4");
    let (status, answer) = server.post(STAGE, &token, &account).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let mut pairs = error_pairs(&answer);
    pairs.sort();
    assert_eq!(
        pairs,
        vec![
            ("customers.0.flat".to_owned(), "unknown_field".to_owned()),
            ("nickname".to_owned(), "unknown_field".to_owned()),
        ]
    );
    let (status, answer) = server
        .post("/v1/data-import/notes/create/", &token, &notes)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_error(&answer, "validation_error");
    let (status, _) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-4/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
