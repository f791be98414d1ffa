//! The admin API, operational endpoints, and durability across restarts.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn suppliers_are_created_listed_read_and_changed() {
    let server = Server::start().await;
    let (status, created) = server
        .admin(
            Method::POST,
            "/admin/v1/suppliers",
            Some(&json!({"code": "OLD_CO", "name": "Old Co", "document_root": "old-co/", "send_migration_emails": true})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["status"], "ONGOING");
    assert_eq!(created["expiry_window_days"], 30);
    assert_eq!(
        created["counts"],
        json!({"PENDING": 0, "IN_PROGRESS": 0, "PROCESSED": 0, "ERRORED": 0, "CANCELLED": 0})
    );

    let (status, body) = server
        .admin(
            Method::POST,
            "/admin/v1/suppliers",
            Some(&json!({"code": "OLD_CO", "name": "Again", "document_root": ""})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "import_supplier_already_exists");
    assert_eq!(
        error_pairs(&body),
        vec![("code".to_owned(), "unique".to_owned())]
    );

    let (status, body) = server
        .admin(
            Method::POST,
            "/admin/v1/suppliers",
            Some(&json!({"code": "bad code", "status": "DONE", "colour": 1})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let mut pairs = error_pairs(&body);
    pairs.sort();
    assert_eq!(
        pairs,
        vec![
            ("code".to_owned(), "invalid".to_owned()),
            ("colour".to_owned(), "unknown_field".to_owned()),
            ("document_root".to_owned(), "required".to_owned()),
            ("name".to_owned(), "required".to_owned()),
            ("status".to_owned(), "invalid_choice".to_owned()),
        ]
    );

    let (status, changed) = server
        .admin(
            Method::PATCH,
            "/admin/v1/suppliers/OLD_CO",
            Some(&json!({"status": "PAUSED", "name": "Old Co Ltd"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["status"], "PAUSED");
    assert_eq!(changed["name"], "Old Co Ltd");
    assert_eq!(changed["document_root"], "old-co/");

    let (_, list) = server.admin(Method::GET, "/admin/v1/suppliers", None).await;
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert_eq!(list[0]["status"], "PAUSED");
    let (status, body) = server
        .admin(Method::GET, "/admin/v1/suppliers/NOPE", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "import_supplier_not_found");
    let (status, _) = server
        .admin(
            Method::PATCH,
            "/admin/v1/suppliers/NOPE",
            Some(&json!({"status": "PAUSED"})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn supplier_counts_follow_the_import_states() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    for external in ["A", "B", "C"] {
        server.stage(&token, &account("OLD_CO", external)).await;
    }
    server.stage(&token, &account("OLD_CO", "A")).await; // an update does not count twice
    server.migrate(&token, "OLD_CO", "B").await;
    let (_, supplier) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO", None)
        .await;
    assert_eq!(supplier["counts"]["PENDING"], 2);
    assert_eq!(supplier["counts"]["PROCESSED"], 1);
}

#[tokio::test]
async fn api_keys_need_existing_suppliers_and_can_be_revoked() {
    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    let (status, body) = server
        .admin(
            Method::POST,
            "/admin/v1/api-keys",
            Some(&json!({"organisation": "Org", "suppliers": ["OLD_CO", "GHOST"]})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_pairs(&body),
        vec![("suppliers.1".to_owned(), "does_not_exist".to_owned())]
    );
    let (status, body) = server
        .admin(
            Method::POST,
            "/admin/v1/api-keys",
            Some(&json!({"organisation": "Org", "suppliers": []})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_pairs(&body),
        vec![("suppliers".to_owned(), "min_length".to_owned())]
    );

    let (id, key) = server.create_api_key(&["OLD_CO"]).await;
    assert!(key.starts_with("ferry_") && key.len() > 40);
    let (status, _) = server
        .admin(Method::DELETE, &format!("/admin/v1/api-keys/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = server
        .admin(Method::DELETE, &format!("/admin/v1/api-keys/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "revoking twice is harmless");
    let (status, body) = server
        .admin(Method::DELETE, "/admin/v1/api-keys/no-such-key", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "not_found");
}

#[tokio::test]
async fn health_readiness_metrics_and_openapi() {
    let server = Server::start().await;
    let (status, body) = server.call(Method::GET, "/healthz", None, None).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ok"})));
    let (status, body) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["store"], "ok");

    let (_, openapi) = server
        .call(Method::GET, "/v1/openapi.json", None, None)
        .await;
    assert!(
        openapi["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3."))
    );
    for path in [
        "/v1/data-import/validate-account/",
        "/v1/data-import/account-import-process/create-or-update/",
        "/v1/data-import/account-import-process/process/",
        "/v1/data-import/account-transfer-status/{supplier}/{external}/",
        "/v1/data-import/all-account-import-processes/{supplier}/",
        "/v1/data-import/pending-account-import-processes/{supplier}/",
        "/v1/data-import/imported-account-import-processes/{supplier}/",
        "/admin/v1/suppliers",
        "/admin/v1/api-keys",
    ] {
        assert!(
            openapi["paths"][path].is_object(),
            "{path} missing from the OpenAPI document"
        );
    }
    // The account document as the reader checks it (the real platform's, extracted).
    let account = &openapi["components"]["schemas"]["EnergyAccount"];
    assert!(
        account["properties"]["supply_addresses"].is_object(),
        "{account}"
    );

    let (_, metrics) = server.call(Method::GET, "/metrics", None, None).await;
    let metrics = metrics.as_str().expect("text");
    assert!(metrics.contains("ferry_http_requests_total"), "{metrics}");
    assert!(metrics.contains("route=\"/v1/openapi.json\""), "{metrics}");
}

/// On sled, each round of the journal's writer is on `/metrics`: the records it wrote, its
/// `fdatasync`, making it in sled, and how long each record's committers waited.
#[tokio::test]
async fn the_journals_rounds_and_the_waits_for_them_are_on_metrics() {
    if backend() != Backend::Sled {
        return;
    }
    let server = Server::start().await;
    let token = server.supplier_with_token("ROUNDS_CO").await;
    let before = server
        .counter_total("ferry_journal_commit_wait_seconds_count", &[])
        .await;
    for index in 0..3 {
        let (status, body) = server
            .post(STAGE, &token, &account("ROUNDS_CO", &format!("R-{index}")))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    // Each staged account committed at least one record, whose committers waited for it.
    let waited = server
        .counter_total("ferry_journal_commit_wait_seconds_count", &[])
        .await;
    assert!(waited >= before + 3, "{before} then {waited}");
    let records = server
        .counter_total("ferry_journal_records_total", &[])
        .await;
    assert!(records >= waited, "{records} records, {waited} waits");
    let rounds = server
        .counter_total("ferry_journal_sync_seconds_count", &[])
        .await;
    assert!(
        (1..=records).contains(&rounds),
        "{rounds} rounds of {records}"
    );
    assert_eq!(
        server
            .counter_total("ferry_journal_apply_seconds_count", &[])
            .await,
        rounds,
        "each round is made in sled once it is on disk"
    );
}

#[tokio::test]
async fn acknowledged_writes_survive_a_restart() {
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    let server = Server::start_in(&data_dir, Options::default());
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    let number = server.migrate(&token, "OLD_CO", "ACC-1").await;
    server.stage(&token, &account("OLD_CO", "ACC-2")).await;
    assert!(server.terminate(), "ferry should exit cleanly on SIGTERM");

    let server = Server::start_in(&data_dir, Options::default());
    // The signing secret survived too: the old token still works.
    let (_, body) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(
        body,
        json!({"status": "COMPLETED", "platform_account_number": number,
               "kraken_account_number": number, "account_number": number})
    );
    let (_, pending) = server
        .get(
            "/v1/data-import/pending-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(pending.as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn the_operator_key_is_generated_once_and_kept_private() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    let options = Options {
        no_operator_key: true,
        ..Options::default()
    };
    let server = Server::start_in(&data_dir, options.clone());
    let key_file = data_dir.join("operator.key");
    let key = std::fs::read_to_string(&key_file).expect("operator.key");
    let mode = std::fs::metadata(&key_file)
        .expect("metadata")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(
        server.stdout.iter().any(|line| line.contains(key.trim())),
        "printed once: {:?}",
        server.stdout
    );
    let (status, _) = server
        .call(Method::GET, "/admin/v1/suppliers", Some(key.trim()), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(server.terminate());

    let server = Server::start_in(&data_dir, options);
    assert!(
        !server.stdout.iter().any(|line| line.contains(key.trim())),
        "not printed again"
    );
    let (status, _) = server
        .call(Method::GET, "/admin/v1/suppliers", Some(key.trim()), None)
        .await;
    assert_eq!(status, StatusCode::OK);
}
