//! The v2 account endpoints: validate, schedule (a migration run in the background within
//! its window, kept across a restart), and the import status with its latest event, over the
//! same import processes as v1.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

const VALIDATE_V2: &str = "/v2/data-import/accounts/validate/";
const ACCOUNTS_V2: &str = "/v2/data-import/accounts/";

fn status_path(external: &str) -> String {
    format!("/v2/data-import/accounts/OLD_CO/{external}/")
}

/// Reads the v2 status until `done` says it has arrived (the migration runs in the
/// background); panics after 30 s.
async fn status_until(
    server: &Server,
    token: &str,
    external: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = server.get(&status_path(external), token).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if done(&body) {
            return body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the status never arrived: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn in_seconds(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(seconds))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[tokio::test]
async fn validate_takes_the_account_bare_or_in_payload_and_writes_nothing() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    for body in [
        account("OLD_CO", "ACC-1"),
        json!({"payload": account("OLD_CO", "ACC-1")}),
    ] {
        let (status, answer) = server.post(VALIDATE_V2, &token, &body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    // Errors and ignored fields are named by their path in the body: under `payload` when
    // the account is sent in it.
    let mut bad = account("OLD_CO", "ACC-1");
    bad["customers"][0]["landline"] = json!("abcde");
    let (status, answer) = server
        .post(VALIDATE_V2, &token, &json!({"payload": bad}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&answer, "account_failed_validation");
    assert_eq!(
        error_pairs(&answer),
        [(
            "payload.customers.0.landline".to_owned(),
            "invalid_phone_number".to_owned()
        )]
    );
    let (status, answer) = server.post(VALIDATE_V2, &token, &bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_pairs(&answer)[0].0, "customers.0.landline");
    let mut extra = account("OLD_CO", "ACC-1");
    extra["nickname"] = json!("Ada");
    let response = server
        .post_response(VALIDATE_V2, &token, &json!({"payload": extra}))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["ferry-ignored-fields"],
        "payload.nickname"
    );
    let (status, body) = server.get(&status_path("ACC-1"), &token).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "not_found");
}

#[tokio::test]
async fn a_scheduled_creation_runs_in_the_background_and_reports_its_events() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let (status, answer) = server
        .post(
            ACCOUNTS_V2,
            &token,
            &json!({"payload": account("OLD_CO", "ACC-1"), "task_params": {"is_dry_run": false}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let done = status_until(&server, &token, "ACC-1", |body| {
        body["status"] == "PROCESSED"
    })
    .await;
    assert_eq!(
        done["latest_event"]["event"],
        "EVENT_ACCOUNT_IMPORT_PROCESS_PROCESSED"
    );
    assert_eq!(done["latest_error"], Value::Null);
    let number = done["platform_identifier"].as_str().expect("the account");
    // The real platform's name beside the spec's.
    assert_eq!(done["kraken_identifier"], number);
    // v1 sees the same process.
    let (_, v1) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(v1["platform_account_number"], number);
    assert_eq!(v1["kraken_account_number"], number);
    // Scheduling it again: already imported, with its numbers.
    let (status, answer) = server
        .post(
            ACCOUNTS_V2,
            &token,
            &json!({"payload": account("OLD_CO", "ACC-1")}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&answer, "account_import_process_already_imported");
    assert_eq!(answer["account_number"], number);
    assert_eq!(answer["kraken_account_number"], number);

    // A dry run: recorded, nothing created.
    let (status, _) = server
        .post(
            ACCOUNTS_V2,
            &token,
            &json!({"payload": account("OLD_CO", "ACC-2"), "task_params": {"is_dry_run": true}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let dry = status_until(&server, &token, "ACC-2", |body| {
        body["status"] == "DRY_RUN_SUCCEEDED"
    })
    .await;
    assert_eq!(dry["platform_identifier"], Value::Null);
    assert_eq!(dry["kraken_identifier"], Value::Null);
    assert!(
        dry.as_object()
            .is_some_and(|o| o.contains_key("kraken_identifier")),
        "{dry}"
    );
    assert_eq!(
        dry["latest_event"]["event"],
        "EVENT_ACCOUNT_IMPORT_PROCESS_DRY_RUN_SUCCEEDED"
    );

    // A v1 dry run shows in v2 too; a failed one with its error.
    server.stage(&token, &account("OLD_CO", "ACC-3")).await;
    let (_, fresh) = server.get(&status_path("ACC-3"), &token).await;
    assert_eq!(fresh["status"], "PENDING");
    assert_eq!(
        fresh["latest_event"]["event"],
        "EVENT_ACCOUNT_IMPORT_PROCESS_CREATED"
    );
    let (status, _) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-3", "dry_run": true}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, dry) = server.get(&status_path("ACC-3"), &token).await;
    assert_eq!(dry["status"], "DRY_RUN_SUCCEEDED", "{dry}");
}

#[tokio::test]
async fn the_window_is_checked_and_a_pending_schedule_survives_a_restart() {
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    let server = Server::start_in(&data_dir, Options::default());
    let token = server.supplier_with_token("OLD_CO").await;

    let (status, answer) = server
        .post(
            ACCOUNTS_V2,
            &token,
            &json!({"payload": account("OLD_CO", "ACC-1"),
                    "task_params": {"schedule_window_start": in_seconds(-3600),
                                    "schedule_window_end": in_seconds(10 * 86_400)}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let mut pairs = error_pairs(&answer);
    pairs.sort();
    assert_eq!(
        pairs,
        [
            (
                "task_params.schedule_window_end".to_owned(),
                "schedule_window_end_too_far_in_future".to_owned()
            ),
            (
                "task_params.schedule_window_start".to_owned(),
                "schedule_window_start_in_past".to_owned()
            ),
        ]
    );
    // Nothing was staged by the refused request.
    let (status, _) = server.get(&status_path("ACC-1"), &token).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Scheduled to start in a few seconds; the server stops before then.
    let (status, answer) = server
        .post(
            ACCOUNTS_V2,
            &token,
            &json!({"payload": account("OLD_CO", "ACC-1"),
                    "task_params": {"schedule_window_start": in_seconds(3)}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (_, waiting) = server.get(&status_path("ACC-1"), &token).await;
    assert_eq!(waiting["status"], "PENDING");
    assert_eq!(
        waiting["latest_event"]["event"],
        "EVENT_ACCOUNT_IMPORT_PROCESS_SCHEDULED"
    );
    assert!(server.terminate(), "ferry should exit cleanly on SIGTERM");

    let server = Server::start_in(&data_dir, Options::default());
    let done = status_until(&server, &token, "ACC-1", |body| {
        body["status"] == "PROCESSED"
    })
    .await;
    assert!(done["platform_identifier"].is_string(), "{done}");
}

/// A v1 dry run does not cancel a pending schedule; scheduling again moves the window (the
/// old one does not run it early); a supplier paused meanwhile has its scheduled migration
/// refused with the reason.
#[tokio::test]
async fn schedules_survive_dry_runs_move_when_rescheduled_and_stop_for_a_paused_supplier() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let schedule = |external: &str, seconds: i64| {
        json!({"payload": account("OLD_CO", external),
               "task_params": {"schedule_window_start": in_seconds(seconds)}})
    };
    for (external, seconds) in [("ACC-1", 2), ("ACC-2", 2)] {
        let (status, answer) = server
            .post(ACCOUNTS_V2, &token, &schedule(external, seconds))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");
    }
    let (status, _) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1", "dry_run": true}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = server
        .post(ACCOUNTS_V2, &token, &schedule("ACC-2", 120))
        .await;
    assert_eq!(status, StatusCode::CREATED);

    status_until(&server, &token, "ACC-1", |body| {
        body["status"] == "PROCESSED"
    })
    .await;
    let (_, later) = server.get(&status_path("ACC-2"), &token).await;
    assert_eq!(later["status"], "PENDING", "{later}");
    assert_eq!(
        later["latest_event"]["event"],
        "EVENT_ACCOUNT_IMPORT_PROCESS_SCHEDULED"
    );

    // Paused before its window opens: refused with the reason when it does.
    let (status, _) = server
        .post(ACCOUNTS_V2, &token, &schedule("ACC-3", 2))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    server.set_status("OLD_CO", "PAUSED").await;
    let refused = status_until(&server, &token, "ACC-3", |body| body["status"] == "ERRORED").await;
    assert_eq!(
        refused["latest_error"]["code"],
        "import_supplier_migration_not_ongoing"
    );
}

/// A bare v2 body's `task_params` are the task's, not an unknown field of the account, also
/// for a strict supplier; unknown fields inside them follow the supplier's rule.
#[tokio::test]
async fn task_params_of_a_bare_body_are_not_account_fields() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.set_strict("OLD_CO", true).await;
    let mut body = account("OLD_CO", "ACC-1");
    body["task_params"] = json!({"is_dry_run": true});
    let (status, answer) = server.post(ACCOUNTS_V2, &token, &body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    body["external_account_number"] = json!("ACC-2");
    body["task_params"] = json!({"is_dry_run": true, "priority": "high"});
    let (status, answer) = server.post(ACCOUNTS_V2, &token, &body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        error_pairs(&answer),
        [(
            "task_params.priority".to_owned(),
            "unknown_field".to_owned()
        )]
    );
}
