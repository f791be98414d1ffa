//! Documents in an S3 bucket (`--bucket s3://…`), with S3 faked by a real local HTTP server
//! (wiremock) that the server reaches as it would reach S3 (path-style, requests signed): a
//! note's document is asked for by its key under the supplier's root, and a bucket that fails
//! or stops answering is reported within the bucket's deadline (`--bucket-deadline-ms`), retries
//! included, rather than after object_store's own minutes of retries.
//!
//! On sled only: the bucket is the same whatever the store.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const BUCKET: &str = "docs";

/// Far longer than the server's deadline for the bucket in these tests (1 s), and shorter than
/// what object_store alone would take (30 s an attempt; minutes of retries).
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// Whether these tests run here: on sled, as the bucket is the same whatever the store.
fn on_sled() -> bool {
    backend() == Backend::Sled
}

/// A server whose bucket is `BUCKET` on the fake S3 `s3`.
async fn server_with_bucket(s3: &MockServer) -> Server {
    let env = [
        ("FERRY_BUCKET", format!("s3://{BUCKET}")),
        ("FERRY_BUCKET_DEADLINE_MS", "1000".to_owned()),
        ("AWS_ENDPOINT", s3.uri()),
        ("AWS_ALLOW_HTTP", "true".to_owned()),
        ("AWS_REGION", "eu-west-2".to_owned()),
        ("AWS_ACCESS_KEY_ID", "AKIDFERRYTEST".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "ferry-test-secret".to_owned()),
    ];
    Server::start_with(Options {
        env: env
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
        ..Options::default()
    })
    .await
}

fn note_with_document(document_path: &str) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "notes": [
        {"body": "see attached", "document_paths": [{"document_path": document_path}]}
    ]})
}

/// What S3 answers to `HEAD` for an object it has.
fn object_head() -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-length", "4")
        .insert_header("last-modified", "Sun, 29 Nov 2026 10:00:00 GMT")
        .insert_header("etag", "\"5d41402abc4b2a76b9719d911017c592\"")
}

#[tokio::test]
async fn a_notes_document_is_asked_of_s3_by_its_key_under_the_suppliers_root() {
    if !on_sled() {
        return;
    }
    let s3 = MockServer::start().await;
    Mock::given(method("HEAD"))
        .and(path(format!("/{BUCKET}/old_co/letters/welcome.pdf")))
        .respond_with(object_head())
        .mount(&s3)
        .await;
    // Anything else: S3's 404.
    let server = server_with_bucket(&s3).await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;

    let (status, body) = server
        .post(NOTES, &token, &note_with_document("letters/welcome.pdf"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = server
        .post(NOTES, &token, &note_with_document("letters/missing.pdf"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        error_pairs(&body),
        vec![(
            "notes.0.document_paths.0.document_path".to_owned(),
            "path_does_not_exist_in_file_store".to_owned()
        )]
    );

    let asked = s3.received_requests().await.expect("requests recorded");
    let heads: Vec<&str> = asked
        .iter()
        .filter(|request| request.method.as_str() == "HEAD")
        .map(|request| request.url.path())
        .collect();
    assert_eq!(
        heads,
        [
            "/docs/old_co/letters/welcome.pdf",
            "/docs/old_co/letters/missing.pdf"
        ]
    );
    for request in &asked {
        let signed = request
            .headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        assert!(
            signed.starts_with("AWS4-HMAC-SHA256 Credential=AKIDFERRYTEST/"),
            "{signed}"
        );
    }
    let view = server.account_view(&number).await;
    assert_eq!(view["notes"].as_array().map(Vec::len), Some(1), "{view}");
}

/// A note with a document is answered 500 `document_store_unavailable` within
/// [`ANSWER_WITHIN`] by a server whose bucket is `s3`, and nothing of it is kept.
async fn refused_within_the_deadline(s3: &MockServer) {
    let server = server_with_bucket(s3).await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let document = note_with_document("letters/welcome.pdf");
    let response = server
        .post_within(NOTES, &token, &document, ANSWER_WITHIN)
        .await
        .expect("an answer within the bucket's deadline");
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let body: Value = response.json().await.expect("an error body");
    assert_error(&body, "document_store_unavailable");
    let view = server.account_view(&number).await;
    assert_eq!(view["notes"], json!([]), "{view}");
}

#[tokio::test]
async fn an_s3_that_stops_answering_is_reported_within_the_buckets_deadline() {
    if !on_sled() {
        return;
    }
    let s3 = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(object_head().set_delay(Duration::from_secs(120)))
        .mount(&s3)
        .await;
    refused_within_the_deadline(&s3).await;
}

#[tokio::test]
async fn an_s3_that_keeps_failing_is_reported_within_the_buckets_deadline() {
    if !on_sled() {
        return;
    }
    let s3 = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&s3)
        .await;
    refused_within_the_deadline(&s3).await;
    // A failure is tried again, but not for longer than the deadline allows: object_store's
    // own retries (ten, with backoffs of up to 15 s) would take the request far past it.
    let asked = s3
        .received_requests()
        .await
        .expect("requests recorded")
        .len();
    assert!((2..=10).contains(&asked), "S3 was asked {asked} times");
}
