//! PostgreSQL going away and coming back under a running server: while the database cannot
//! be reached, every request is answered within the server's wait for a connection, 503
//! `storage_unavailable` with `Retry-After` (reads, writes, tokens and `/readyz` alike), and
//! once it answers again the same server takes requests with nothing acknowledged lost and
//! nothing refused kept; a server started while it is away says so and exits. The network to
//! the database is cut by a proxy (the database is shared with the other tests).
//!
//! PostgreSQL only (`e2e-postgres`): sled is in the server's own process.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Far longer than the server's wait for a connection in this test (500 ms), and shorter
/// than sqlx's own default (30 s), which the server must not fall back to.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
const PATIENCE: Duration = Duration::from_secs(30);

fn note(body: &str) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "notes": [{"body": body}]})
}

// Threads of its own for the proxy: starting a server blocks the test's thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_away_is_answered_503_at_once_and_taken_again_when_back() {
    if backend() != Backend::Postgres {
        return; // sled is not reached over a network
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut url = reqwest::Url::parse(&shared_database(dir.path())).expect("database URL");
    let target = format!(
        "{}:{}",
        url.host_str().expect("the database's host"),
        url.port().unwrap_or(5432)
    );
    let proxy = TcpProxy::start(&target).await;
    url.set_port(Some(proxy.port())).expect("a port");
    let server = Server::start_in(
        &dir.path().join("server"),
        Options {
            env: vec![
                ("FERRY_DATABASE_URL".into(), url.to_string()),
                ("FERRY_DATABASE_WAIT_MS".into(), "500".into()),
                ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
            ],
            ..Options::default()
        },
    );
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server.post(NOTES, &token, &note("before")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    proxy.cut();
    let client = reqwest::Client::builder()
        .timeout(ANSWER_WITHIN)
        .build()
        .expect("client");
    let requests = [
        client
            .post(server.url(NOTES))
            .header("Authorization", format!("Token {token}"))
            .json(&note("during")),
        client
            .get(server.url("/v1/data-import/account-transfer-status/OLD_CO/ACC-1/"))
            .header("Authorization", format!("Token {token}")),
        client
            .get(server.url(&format!("/admin/v1/accounts/{number}")))
            .header("Authorization", format!("Token {OPERATOR_KEY}")),
    ];
    for request in requests {
        let response = request
            .send()
            .await
            .expect("an answer while the database is away");
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()["retry-after"], "5");
        let body: Value = response.json().await.expect("an error body");
        assert_eq!(body["code"], "storage_unavailable", "{body}");
        let detail = body["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("database could not be reached"), "{detail}");
        assert!(!detail.contains("restarts"), "{detail}");
    }
    // A token cannot be issued either: the key is read from the database.
    let response = client
        .post(server.url("/v1/graphql/"))
        .json(&json!({
            "query": "mutation { obtainPlatformToken(input: {APIKey: \"ferry_not_a_key\"}) { token } }"
        }))
        .send()
        .await
        .expect("an answer while the database is away");
    let body: Value = response.json().await.expect("a GraphQL answer");
    assert_eq!(
        body["errors"][0]["extensions"]["errorCode"], "storage_unavailable",
        "{body}"
    );
    let response = client
        .get(server.url("/readyz"))
        .send()
        .await
        .expect("readiness while the database is away");
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = response.json().await.expect("readiness body");
    assert_eq!(body["store"], "error", "{body}");
    assert_eq!(body["outbox_pending"], Value::Null, "{body}");

    // Back: the same server takes requests again, by itself.
    proxy.restore().await;
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, body) = server.post(NOTES, &token, &note("after")).await;
        if status == StatusCode::CREATED {
            assert_eq!(body[0]["status"], "NOTE_CREATION_SUCCESS", "{body}");
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(
            Instant::now() < deadline,
            "the server did not take requests again"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (status, body) = server.get("/readyz", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let view = server.account_view(&number).await;
    let bodies: Vec<&str> = view["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(|note| note["body"].as_str())
        .collect();
    assert_eq!(bodies, ["before", "after"], "{view}");

    // A server started while the database is away says so and exits, for its supervisor to
    // start it again.
    proxy.cut();
    let output = tokio::process::Command::new(ferry_binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("second"))
        .env("FERRY_DATABASE_URL", url.as_str())
        .env("FERRY_DATABASE_WAIT_MS", "500")
        .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
        .env_remove("RUST_BACKTRACE")
        .output();
    let output = tokio::time::timeout(ANSWER_WITHIN, output)
        .await
        .expect("the server gave up within its wait")
        .expect("ferry ran");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Error: cannot reach the database ("),
        "{stderr}"
    );
}
