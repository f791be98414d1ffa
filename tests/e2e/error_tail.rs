//! Working the error tail: accounts that failed in a bulk migration, for different reasons,
//! are fixed by their supplier (re-staged) or outside Ferry (the document put in the bucket,
//! the vendor back), and the operator migrates exactly them again, group by group, while the
//! campaign report and the imports listing show the tail shrinking.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const MIGRATIONS: &str = "/admin/v1/suppliers/OLD_CO/migrations";
const DOCUMENT_MISSING: &str = "account_failed_validation";
const VENDOR_AWAY: &str = "payment_vendor_unavailable";

/// An account whose statement's PDF is `document` under the supplier's root.
fn with_statement(external: &str, document: &str) -> Value {
    let mut body = account("OLD_CO", external);
    body["statements"] = json!([{"statement_id": format!("S-{external}"),
        "bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31",
        "issued_date": "2025-02-03", "gross_amount": 3000, "statement_path": document}]);
    body
}

/// An account whose card instruction vendor ACME confirms when it is migrated.
fn with_instruction(external: &str) -> Value {
    let mut body = account("OLD_CO", external);
    body["payment_instructions"] =
        json!([{"vendor": "ACME", "reference": format!("PM-{external}"), "type": "CARD"}]);
    body
}

/// A server whose payment vendor ACME is `vendor` (given up on after half a second), with
/// supplier OLD_CO and a token for it.
async fn server_with_vendor(vendor: &MockServer) -> (Server, String) {
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_VENDOR_ACME_URL".into(), vendor.uri()),
            ("FERRY_VENDOR_ACME_KEY".into(), "acme-key".into()),
            ("FERRY_VENDOR_DEADLINE_MS".into(), "500".into()),
            ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
        ],
        ..Options::default()
    })
    .await;
    let token = server.supplier_with_token("OLD_CO").await;
    (server, token)
}

/// Makes `vendor` answer every request with `status`.
async fn vendor_answers(vendor: &MockServer, status: u16) {
    vendor.reset().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(status).set_body_json(json!({"card": {"last4": "4242"}})),
        )
        .mount(vendor)
        .await;
}

/// Starts a bulk migration of OLD_CO over `selection` (none: no body) and waits for its end.
async fn migrate(server: &Server, selection: Option<Value>) -> Value {
    let (status, job) = server
        .admin(Method::POST, MIGRATIONS, selection.as_ref())
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    assert_eq!(
        job["selection"],
        selection.unwrap_or_else(|| json!({})),
        "{job}"
    );
    let path = format!("{MIGRATIONS}/{}", job["id"].as_str().expect("the job's id"));
    let done = server
        .bulk_migration_ended_answering(&path, Duration::from_secs(60))
        .await;
    assert_eq!(done["state"], "COMPLETED", "{done}");
    assert_eq!(done["selection"], job["selection"], "{done}");
    done
}

/// `(total, processed, failed)` of an ended job.
fn counts(job: &Value) -> (u64, u64, u64) {
    let count = |name: &str| job[name].as_u64().unwrap_or(u64::MAX);
    (count("total"), count("processed"), count("failed"))
}

/// Each OLD_CO account's import state, as the operators' listing shows it.
async fn states(server: &Server) -> BTreeMap<String, String> {
    let (status, page) = server
        .admin(
            Method::GET,
            "/admin/v1/suppliers/OLD_CO/imports?limit=500",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            let field = |name: &str| item[name].as_str().unwrap_or_default().to_owned();
            (field("external_account_number"), field("state"))
        })
        .collect()
}

/// The accounts in `state`, in order.
async fn in_state(server: &Server, state: &str) -> Vec<String> {
    let states = states(server).await;
    states
        .into_iter()
        .filter(|(_, in_state)| in_state == state)
        .map(|(external, _)| external)
        .collect()
}

/// The campaign report's `ERRORED` count and error groups (code: count).
async fn reported_tail(server: &Server) -> (u64, BTreeMap<String, u64>) {
    let (status, report) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO/report", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let groups = report["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|group| {
            let code = group["code"].as_str().expect("a code").to_owned();
            (code, group["count"].as_u64().expect("a count"))
        })
        .collect();
    let errored = report["accounts"]["errored"].as_u64().expect("errored");
    (errored, groups)
}

fn groups(groups: &[(&str, u64)]) -> BTreeMap<String, u64> {
    groups
        .iter()
        .map(|(code, count)| ((*code).to_owned(), *count))
        .collect()
}

#[tokio::test]
async fn the_error_tail_is_migrated_again_group_by_group_and_shrinks() {
    let vendor = MockServer::start().await;
    vendor_answers(&vendor, 503).await;
    let (server, token) = server_with_vendor(&vendor).await;
    server.stage(&token, &account("OLD_CO", "OK-1")).await;
    for external in ["DOC-1", "DOC-2", "DOC-3"] {
        let document = format!("statements/{external}.pdf");
        server
            .stage(&token, &with_statement(external, &document))
            .await;
    }
    for external in ["VEN-1", "VEN-2"] {
        server.stage(&token, &with_instruction(external)).await;
    }

    // The first run: the statements' documents are not in the bucket, the vendor is away.
    let first = migrate(&server, None).await;
    assert_eq!(counts(&first), (6, 1, 5), "{first}");
    let tail = ["DOC-1", "DOC-2", "DOC-3", "VEN-1", "VEN-2"];
    assert_eq!(in_state(&server, "ERRORED").await, tail);
    assert_eq!(
        reported_tail(&server).await,
        (5, groups(&[(DOCUMENT_MISSING, 3), (VENDOR_AWAY, 2)]))
    );

    // An account staged since never failed; the supplier re-stages DOC-1 with a document that
    // is in the bucket, and puts DOC-2's there; DOC-3's stays missing.
    server.stage(&token, &account("OLD_CO", "NEW-1")).await;
    server.put_document("old_co/statements/DOC-1-fixed.pdf");
    let fixed = with_statement("DOC-1", "statements/DOC-1-fixed.pdf");
    assert_eq!(server.stage(&token, &fixed).await, StatusCode::OK);
    server.put_document("old_co/statements/DOC-2.pdf");
    assert_eq!(in_state(&server, "PENDING").await, ["DOC-1", "NEW-1"]);
    assert_eq!(
        reported_tail(&server).await,
        (4, groups(&[(DOCUMENT_MISSING, 2), (VENDOR_AWAY, 2)]))
    );

    // The documents' group: exactly its accounts, the re-staged one with them; none other.
    let group = json!({"only": "errored", "error_code": DOCUMENT_MISSING});
    let second = migrate(&server, Some(group)).await;
    assert_eq!(counts(&second), (3, 2, 1), "{second}");
    let states_now = states(&server).await;
    for (external, state) in [
        ("OK-1", "PROCESSED"),
        ("DOC-1", "PROCESSED"),
        ("DOC-2", "PROCESSED"),
        ("DOC-3", "ERRORED"),
        ("VEN-1", "ERRORED"),
        ("VEN-2", "ERRORED"),
        ("NEW-1", "PENDING"),
    ] {
        assert_eq!(states_now[external], state, "{external}: {states_now:?}");
    }
    assert_eq!(
        reported_tail(&server).await,
        (3, groups(&[(DOCUMENT_MISSING, 1), (VENDOR_AWAY, 2)]))
    );

    // The vendor is back. The operator names one account from the command line (a migrated
    // one named with it is left alone), then takes what is left of the tail.
    vendor_answers(&vendor, 200).await;
    let output = Command::new(ferry_binary())
        .args(["supplier", "migrate", "OLD_CO", "--account", "VEN-1,OK-1"])
        .env("FERRY_URL", &server.base)
        .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
        .output()
        .expect("run ferry");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let named: Value = serde_json::from_slice(&output.stdout).expect("the job as JSON");
    assert_eq!(named["selection"], json!({"accounts": ["VEN-1", "OK-1"]}));
    assert_eq!(named["total"], 1, "{named}");
    let path = format!(
        "{MIGRATIONS}/{}",
        named["id"].as_str().expect("the job's id")
    );
    let named = server
        .bulk_migration_ended_answering(&path, Duration::from_secs(60))
        .await;
    assert_eq!(counts(&named), (1, 1, 0), "{named}");

    let rest = migrate(&server, Some(json!({"only": "errored"}))).await;
    assert_eq!(counts(&rest), (2, 1, 1), "{rest}");
    assert_eq!(in_state(&server, "ERRORED").await, ["DOC-3"]);
    assert_eq!(in_state(&server, "PENDING").await, ["NEW-1"]);
    assert_eq!(
        reported_tail(&server).await,
        (1, groups(&[(DOCUMENT_MISSING, 1)]))
    );

    // Each run is listed with what it was started over.
    let (_, runs) = server.admin(Method::GET, MIGRATIONS, None).await;
    let selections: Vec<&Value> = runs
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| &run["selection"])
        .collect();
    assert_eq!(
        selections,
        [
            &json!({"only": "errored"}),
            &json!({"accounts": ["VEN-1", "OK-1"]}),
            &json!({"only": "errored", "error_code": DOCUMENT_MISSING}),
            &json!({}),
        ]
    );
}

#[tokio::test]
async fn a_selection_that_cannot_be_migrated_is_refused_and_claims_nothing() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;

    let (status, body) = server
        .admin(
            Method::POST,
            MIGRATIONS,
            Some(&json!({"only": "mismatched"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_error(&body, "validation_error");
    assert_eq!(
        error_pairs(&body),
        [("only".to_owned(), "invalid_choice".to_owned())]
    );
    let detail = body["errors"][0]["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("migrated already") && detail.contains("transactions/create/"),
        "{body}"
    );

    for (selection, attr) in [
        (json!({"only": "everything"}), "only"),
        (json!({"error_code": DOCUMENT_MISSING}), "error_code"),
        (
            json!({"only": "errored", "accounts": ["ACC-1"]}),
            "accounts",
        ),
        (json!({"accounts": []}), "accounts"),
        (json!({"accounts": ["ACC-1", "NOPE-1"]}), "accounts.1"),
        (json!({"colour": "blue"}), "colour"),
    ] {
        let (status, body) = server
            .admin(Method::POST, MIGRATIONS, Some(&selection))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{selection}: {body}");
        assert_error(&body, "validation_error");
        assert_eq!(body["errors"][0]["attr"], attr, "{selection}: {body}");
    }
    let response = reqwest::Client::new()
        .post(server.url(MIGRATIONS))
        .header("Authorization", format!("Token {OPERATOR_KEY}"))
        .header("Content-Type", "text/plain")
        .body("only errored")
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let (status, body) = server
        .admin(
            Method::POST,
            "/admin/v1/suppliers/NOPE/migrations",
            Some(&json!({"only": "errored"})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // Nothing was started, nothing claimed.
    let (_, runs) = server.admin(Method::GET, MIGRATIONS, None).await;
    assert_eq!(runs, json!([]));
    assert_eq!(in_state(&server, "PENDING").await, ["ACC-1"]);
    // An empty object is no selection: every account awaiting migration.
    let everything = migrate(&server, Some(json!({}))).await;
    assert_eq!(counts(&everything), (1, 1, 0), "{everything}");
}
