//! Plugin faults under load, what keeps the other suppliers served: a supplier's calls past
//! its slots wait, then fail cleanly, and a plugin that overran its deadline runs below the
//! host's priority. The latency under a fault load is measured in `plugin_latency.rs`, in a
//! test binary of its own.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;

#[tokio::test]
async fn calls_past_a_suppliers_slots_wait_then_fail_as_busy_and_overruns_lower_its_priority() {
    let server = Arc::new(
        Server::start_with(Options {
            env: vec![
                ("FERRY_PLUGIN_CONCURRENCY".into(), "1".into()),
                // Shorter than the loop's 100 ms deadline: whoever waits behind it gives up.
                ("FERRY_PLUGIN_QUEUE_MS".into(), "30".into()),
            ],
            ..Options::default()
        })
        .await,
    );
    let looping = server.supplier_with_token("LOOP_CO").await;
    server
        .install_plugin("LOOP_CO", "fault_loop_forever", json!({}))
        .await;
    let healthy = healthy_supplier(&server).await;

    let mut calls = Vec::new();
    for index in 0..4 {
        let (server, looping) = (server.clone(), looping.clone());
        calls.push(tokio::spawn(async move {
            let response = reqwest::Client::new()
                .post(server.url(VALIDATE))
                .header("Authorization", format!("Token {looping}"))
                .json(&account("LOOP_CO", &format!("L-{index}")))
                .send()
                .await
                .expect("request");
            let status = response.status();
            let retry_after = response.headers().get("retry-after").cloned();
            let body: Value = response.json().await.expect("json");
            (status, retry_after, body)
        }));
    }
    // Meanwhile the healthy supplier has slots of its own.
    let (status, body) = server
        .post(VALIDATE, &healthy, &healthy_account("H-1"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let mut busy = 0;
    let mut failed = 0;
    for call in calls {
        let (status, retry_after, body) = call.await.expect("call");
        match status {
            StatusCode::INTERNAL_SERVER_ERROR => {
                assert_error(&body, "plugin_failed");
                failed += 1;
            }
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_error(&body, "plugin_busy");
                let detail = body["detail"].as_str().expect("detail");
                assert!(
                    detail.contains("LOOP_CO") && detail.contains("retry later"),
                    "{detail}"
                );
                assert_eq!(
                    retry_after.as_ref().and_then(|v| v.to_str().ok()),
                    Some("1"),
                    "{body}"
                );
                busy += 1;
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert!(
        failed >= 1,
        "the call holding the slot ran into its deadline"
    );
    assert!(
        busy >= 1,
        "4 calls at once, one slot, a 30 ms wait: some were busy"
    );
    assert_eq!(
        failures_counted(&server, "LOOP_CO", "busy").await,
        busy,
        "busy refusals are counted"
    );
    let queued = server
        .counter_total(
            "ferry_plugin_queue_wait_seconds_count",
            &[("supplier", "LOOP_CO"), ("hook", "validate-account")],
        )
        .await;
    assert!(
        queued >= busy,
        "each call refused busy had queued: {queued} waits, {busy} busy"
    );
    let (_, view) = server
        .admin(Method::GET, "/admin/v1/suppliers/LOOP_CO/plugin", None)
        .await;
    let recent = view["recent_failures"].as_array().expect("recent failures");
    assert!(
        recent.iter().all(|failure| failure["error"]
            .as_str()
            .is_some_and(|e| e.contains("deadline"))),
        "recent_failures keeps the plugin's own failures: {view}"
    );
    assert_eq!(
        view["low_priority"], true,
        "a plugin that overran runs below the host's priority: {view}"
    );
    let (_, view) = server
        .admin(
            Method::GET,
            &format!("/admin/v1/suppliers/{HEALTHY}/plugin"),
            None,
        )
        .await;
    assert_eq!(view["low_priority"], false, "{view}");
    let reinstalled = server
        .install_plugin("LOOP_CO", "fault_loop_forever", json!({}))
        .await;
    assert_eq!(reinstalled["supplier"], "LOOP_CO", "{reinstalled}");
    let (_, view) = server
        .admin(Method::GET, "/admin/v1/suppliers/LOOP_CO/plugin", None)
        .await;
    assert_eq!(
        view["low_priority"], false,
        "a new version starts at the host's priority: {view}"
    );
}

/// A call whose request is abandoned runs to its end and holds its slot until then: a plugin
/// that loops cannot escape its supplier's bulkhead by having its callers give up.
#[tokio::test]
async fn a_call_whose_request_was_abandoned_holds_its_slot_to_its_end() {
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_PLUGIN_CONCURRENCY".into(), "1".into()),
            ("FERRY_PLUGIN_QUEUE_MS".into(), "100".into()),
            // Far longer than the caller waits: the call is still running when it gives up.
            ("FERRY_PLUGIN_DEADLINE_MS".into(), "3000".into()),
        ],
        ..Options::default()
    })
    .await;
    let looping = server.supplier_with_token("LOOP_CO").await;
    server
        .install_plugin("LOOP_CO", "fault_loop_forever", json!({}))
        .await;
    let abandoned = reqwest::Client::new()
        .post(server.url(VALIDATE))
        .header("Authorization", format!("Token {looping}"))
        .timeout(std::time::Duration::from_millis(700))
        .json(&account("LOOP_CO", "L-ABANDONED"))
        .send()
        .await;
    assert!(
        abandoned.as_ref().is_err_and(reqwest::Error::is_timeout),
        "the caller gave up: {abandoned:?}"
    );

    // The abandoned call still holds the one slot.
    let (status, body) = server
        .post(VALIDATE, &looping, &account("LOOP_CO", "L-NEXT"))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_error(&body, "plugin_busy");

    // Until it ends at its deadline; then the next call gets the slot (and loops in its turn).
    let started = std::time::Instant::now();
    loop {
        let (status, body) = server
            .post(VALIDATE, &looping, &account("LOOP_CO", "L-LATER"))
            .await;
        if status == StatusCode::SERVICE_UNAVAILABLE {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "the abandoned call never gave its slot back"
            );
            continue;
        }
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
        assert_error(&body, "plugin_failed");
        break;
    }
}
