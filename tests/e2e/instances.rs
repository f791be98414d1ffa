//! Three `ferry serve` instances over one PostgreSQL database, with a client spreading its
//! requests over them, behave as one service: a token issued by one works on the others, an
//! account staged on one is migrated through another, concurrent duplicate transactions sent
//! to different instances are added once, a plugin installed through one is used by the
//! others within seconds, and when the instance that publishes events (the relay's lease
//! holder) is killed under write load the others keep serving, lose no acknowledged write, and
//! one of them takes the relay over: every event arrives in Redis exactly once. A key's rate
//! limit, counted in Redis, holds across the instances (and each counts its own while Redis is
//! away). A migration scheduled through one instance runs on another when its own is gone.
//!
//! PostgreSQL only (`e2e-postgres`): instances cannot share a sled directory.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STREAM: &str = "ferry:events";
const PATIENCE: Duration = Duration::from_secs(30);

fn charge(id: &str) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "transactions": [
        {"transaction_id": id, "transaction_date": "2025-01-02", "amount": "1.00", "type": "CHARGE",
         "reason": "IMPORTED_CHARGE"}]})
}

/// The relay's state on `server`, from `/readyz` (none when it does not answer).
async fn relay_state(server: &Server) -> Option<String> {
    let response = reqwest::Client::new()
        .get(server.url("/readyz"))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    let body: Value = response.json().await.ok()?;
    body["relay"].as_str().map(str::to_owned)
}

/// Waits until one of `servers` publishes events (holds the relay's lease); its index.
async fn relay_holder(servers: &[Arc<Server>]) -> usize {
    let deadline = Instant::now() + PATIENCE;
    loop {
        for (index, server) in servers.iter().enumerate() {
            if relay_state(server).await.as_deref() == Some("connected") {
                return index;
            }
        }
        assert!(Instant::now() < deadline, "no instance took the relay");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An instance per name over one new database, rate limits off unless `env` sets them.
pub(crate) fn instances_over_one_database<const N: usize>(
    dir: &std::path::Path,
    names: [&str; N],
    env: &[(&str, String)],
) -> [Server; N] {
    let mut options = Options {
        env: vec![
            ("FERRY_DATABASE_URL".into(), shared_database(dir)),
            ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
        ],
        ..Options::default()
    };
    for (name, value) in env {
        options.env.retain(|(set, _)| set != name);
        options.env.push(((*name).to_owned(), value.clone()));
    }
    names.map(|name| Server::start_in(&dir.join(name), options.clone()))
}

#[tokio::test]
async fn three_instances_over_one_database_behave_as_one_service() {
    if backend() != Backend::Postgres {
        return; // instances cannot share a sled directory
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start();
    let servers: Vec<Arc<Server>> = instances_over_one_database(
        dir.path(),
        ["a", "b", "c"],
        &[("FERRY_REDIS_URL", redis.url())],
    )
    .into_iter()
    .map(Arc::new)
    .collect();
    let (a, b, c) = (&servers[0], &servers[1], &servers[2]);

    // A token from one instance works on the others; staged on one, migrated through another.
    let token = a.supplier_with_token("OLD_CO").await;
    let mut staged = account("OLD_CO", "ACC-1");
    open_period_from(&mut staged, "2025-01-01");
    assert_eq!(b.stage(&token, &staged).await, StatusCode::CREATED);
    let number = c.migrate(&token, "OLD_CO", "ACC-1").await;
    let (status, body) = a
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["platform_account_number"], number.as_str());

    // The same transaction sent to every instance at once is added once.
    let mut sends = Vec::new();
    for _ in 0..4 {
        for server in &servers {
            let (server, token) = (server.clone(), token.clone());
            sends.push(tokio::spawn(async move {
                server.post(TRANSACTIONS, &token, &charge("T-SAME")).await
            }));
        }
    }
    let mut added = 0;
    for send in sends {
        let (status, body) = send.await.expect("send");
        assert_eq!(status, StatusCode::CREATED, "{body}");
        if body["results"][0]["status"] == "TRANSACTION_ADDED_TO_ACCOUNT" {
            added += 1;
        }
    }
    assert_eq!(added, 1, "added once across the instances");
    let view = b.account_view(&number).await;
    assert_eq!(view["ledger_entries"].as_array().map(Vec::len), Some(1));

    // A plugin installed through one instance is used by the others within seconds.
    a.install_plugin("OLD_CO", "fault_trap", json!({})).await;
    for server in [b, c] {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let (status, body) = server
                .post(VALIDATE, &token, &account("OLD_CO", "ACC-2"))
                .await;
            if status == StatusCode::INTERNAL_SERVER_ERROR {
                assert_error(&body, "plugin_failed");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the plugin installed through another instance is not used: {status} {body}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let (status, body) = a
        .admin(Method::DELETE, "/admin/v1/suppliers/OLD_CO/plugin", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for server in [b, c] {
        let deadline = Instant::now() + Duration::from_secs(5);
        while server
            .post(VALIDATE, &token, &account("OLD_CO", "ACC-2"))
            .await
            .0
            != StatusCode::OK
        {
            assert!(
                Instant::now() < deadline,
                "the removed plugin is still used"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    // One bulk migration per supplier across the instances, its accounts left alone by the
    // others.
    let bulk_token = a.supplier_with_token("BULK_CO").await;
    let mut staging = Vec::new();
    for part in 0..4 {
        let (server, token) = (servers[part % 3].clone(), bulk_token.clone());
        staging.push(tokio::spawn(async move {
            for index in 0..50 {
                server
                    .stage(&token, &account("BULK_CO", &format!("B-{part}-{index:02}")))
                    .await;
            }
        }));
    }
    for task in staging {
        task.await.expect("staged");
    }
    let (job, path) = a.start_bulk_migration("BULK_CO").await;
    assert_eq!(job["total"], 200, "{job}");
    let (status, again) = b
        .admin(Method::POST, "/admin/v1/suppliers/BULK_CO/migrations", None)
        .await;
    match status {
        StatusCode::CONFLICT => assert_error(&again, "migration_already_running"),
        // The first had already ended: nothing was left to claim.
        StatusCode::ACCEPTED => assert_eq!(again["total"], 0, "{again}"),
        other => panic!("a second bulk migration through another instance: {other} {again}"),
    }
    let done = a.bulk_migration_ended(&path, PATIENCE).await;
    assert_eq!(done["state"], "COMPLETED", "{done}");
    assert_eq!(done["processed"], 200, "{done}");
    let (_, supplier) = c
        .admin(Method::GET, "/admin/v1/suppliers/BULK_CO", None)
        .await;
    assert_eq!(supplier["counts"]["PROCESSED"], 200, "{supplier}");

    // Writers on every instance; the relay's instance is killed while they write.
    let holder = relay_holder(&servers).await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for (index, server) in servers.iter().enumerate() {
        let (server, token, stop) = (server.clone(), token.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            let mut sequence = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                sequence += 1;
                let id = format!("T-{index}-{sequence}");
                let response = reqwest::Client::new()
                    .post(server.url(TRANSACTIONS))
                    .header("Authorization", format!("Token {token}"))
                    .json(&charge(&id))
                    .timeout(Duration::from_secs(10))
                    .send()
                    .await;
                match response {
                    Ok(response) if response.status() == StatusCode::CREATED => {
                        acknowledged.push(id);
                    }
                    Ok(response) => panic!("{id}: {}", response.status()),
                    // The instance was killed: move on to the next one.
                    Err(_) => break,
                }
                let note = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
                    "notes": [{"body": format!("note {index}-{sequence}")}]});
                let _ = reqwest::Client::new()
                    .post(server.url(NOTES))
                    .header("Authorization", format!("Token {token}"))
                    .json(&note)
                    .timeout(Duration::from_secs(10))
                    .send()
                    .await;
            }
            acknowledged
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    servers[holder].kill_hard();
    let survivors: Vec<Arc<Server>> = servers
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != holder)
        .map(|(_, server)| server.clone())
        .collect();
    // The survivors keep serving, and one of them takes the relay over.
    let next = relay_holder(&survivors).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut acknowledged = BTreeSet::new();
    for writer in writers {
        acknowledged.extend(writer.await.expect("writer"));
    }
    assert!(
        acknowledged
            .iter()
            .any(|id| !id.starts_with(&format!("T-{holder}-"))),
        "the survivors took writes"
    );

    // Nothing acknowledged was lost.
    let view = survivors[0].account_view(&number).await;
    let kept: BTreeSet<String> = view["transactions"]
        .as_array()
        .expect("transactions")
        .iter()
        .filter_map(|t| t["transaction_id"].as_str().map(str::to_owned))
        .collect();
    let lost: Vec<&String> = acknowledged.difference(&kept).collect();
    assert!(lost.is_empty(), "acknowledged but lost: {lost:?}");

    // Every event of the log is in the stream, once.
    let log = survivors[next].wait_for_published().await;
    let mut in_stream: BTreeMap<String, usize> = BTreeMap::new();
    for (_, fields) in redis.entries(STREAM).await {
        *in_stream.entry(fields["id"].clone()).or_default() += 1;
    }
    let twice: Vec<_> = in_stream.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "events published twice: {twice:?}");
    let logged: BTreeSet<String> = log
        .iter()
        .filter_map(|event| event["id"].as_str().map(str::to_owned))
        .collect();
    let missing: Vec<_> = logged
        .iter()
        .filter(|id| !in_stream.contains_key(*id))
        .collect();
    assert!(missing.is_empty(), "events never published: {missing:?}");
}

#[tokio::test]
async fn a_bulk_migration_is_taken_over_when_its_instance_dies() {
    if backend() != Backend::Postgres {
        return; // instances cannot share a sled directory
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let [first, second] = instances_over_one_database(dir.path(), ["first", "second"], &[]);
    let token = first.supplier_with_token("SLOW_CO").await;
    for index in 0..40 {
        second
            .stage(&token, &account("SLOW_CO", &format!("S-{index:02}")))
            .await;
    }
    // Every migration now takes the plugin's whole deadline (and fails): a job of seconds.
    first
        .install_plugin("SLOW_CO", "fault_loop_forever", json!({}))
        .await;
    let (job, path) = first.start_bulk_migration("SLOW_CO").await;
    assert_eq!(job["total"], 40, "{job}");

    // Its progress is seen from the other instance.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (status, seen) = second.admin(Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::OK, "{seen}");
    assert_eq!(seen["state"], "RUNNING", "{seen}");
    let done = seen["processed"].as_u64().unwrap_or(0) + seen["failed"].as_u64().unwrap_or(0);
    assert!(done > 0 && done < 40, "{seen}");

    // Its instance dies; the other takes the job over and finishes it.
    first.kill_hard();
    let ended = second
        .bulk_migration_ended(&path, Duration::from_secs(90))
        .await;
    assert_eq!(ended["state"], "COMPLETED", "{ended}");
    // An account the dead instance finished in its last moment, before it recorded it, is
    // not counted: progress is recorded after each account.
    let counted = ended["processed"].as_u64().unwrap_or(0) + ended["failed"].as_u64().unwrap_or(0);
    assert!((39..=40).contains(&counted), "{ended}");
    let (_, supplier) = second
        .admin(Method::GET, "/admin/v1/suppliers/SLOW_CO", None)
        .await;
    assert_eq!(supplier["counts"]["IN_PROGRESS"], 0, "{supplier}");
    assert_eq!(supplier["counts"]["PENDING"], 0, "{supplier}");
    drop(first);
}

/// A read that every supplier request's rate limit counts (the account does not exist: 404).
const RATE_LIMITED_READ: &str = "/v1/data-import/account-transfer-status/RATE_CO/NOBODY/";

/// Sends `count` requests of one key, each to the next of `servers` in turn; how many were
/// taken (anything but 429) and how long they took.
async fn spread_requests(servers: &[&Server], token: &str, count: usize) -> (usize, Duration) {
    let started = Instant::now();
    let mut taken = 0;
    for index in 0..count {
        let (status, body) = servers[index % servers.len()]
            .get(RATE_LIMITED_READ, token)
            .await;
        match status {
            StatusCode::TOO_MANY_REQUESTS => assert_error(&body, "throttled"),
            _ => taken += 1,
        }
    }
    (taken, started.elapsed())
}

#[tokio::test]
async fn a_keys_rate_limit_holds_across_instances_through_redis() {
    if backend() != Backend::Postgres {
        return; // instances cannot share a sled directory
    }
    const BURST: usize = 4;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut redis = Redis::start();
    let [a, b] = instances_over_one_database(
        dir.path(),
        ["a", "b"],
        &[
            ("FERRY_REDIS_URL", redis.url()),
            ("FERRY_RATE_LIMIT_PER_SECOND", "1".to_owned()),
            ("FERRY_RATE_LIMIT_BURST", BURST.to_string()),
        ],
    );
    let token = a.supplier_with_token("RATE_CO").await;

    // The burst spent on one instance is spent on the other too.
    let (taken, elapsed) = spread_requests(&[&a], &token, BURST).await;
    assert_eq!(taken, BURST);
    let started = Instant::now();
    let (status, body) = b.get(RATE_LIMITED_READ, &token).await;
    // At one request a second, a request may pass again once a second has gone by.
    if elapsed + started.elapsed() < Duration::from_secs(1) {
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
        assert_error(&body, "throttled");
    }

    // Spread over both, a key gets its rate once, not once per instance: after the burst, one
    // request a second (and one more for the second under way).
    tokio::time::sleep(Duration::from_secs(BURST as u64 + 1)).await;
    let (taken, elapsed) = spread_requests(&[&a, &b], &token, 4 * BURST).await;
    let allowed = BURST + elapsed.as_secs() as usize + 1;
    assert!(
        (BURST..=allowed).contains(&taken),
        "{taken} of {} requests taken in {elapsed:?}, at most {allowed} allowed",
        4 * BURST
    );

    // Without Redis each instance counts on its own: requests are still answered, and the
    // limit still holds per instance.
    redis.stop();
    let (taken, elapsed) = spread_requests(&[&a, &b], &token, 4 * BURST).await;
    let allowed = 2 * (BURST + elapsed.as_secs() as usize + 1);
    assert!(
        (1..=allowed).contains(&taken),
        "{taken} of {} requests taken in {elapsed:?} with Redis away, at most {allowed} allowed",
        4 * BURST
    );

    // Once Redis is back, the count is shared again.
    redis.resume();
    tokio::time::sleep(Duration::from_secs(BURST as u64 + 2)).await;
    let (taken, elapsed) = spread_requests(&[&a, &b], &token, 4 * BURST).await;
    let allowed = BURST + elapsed.as_secs() as usize + 1;
    assert!(
        (BURST..=allowed).contains(&taken),
        "{taken} of {} requests taken in {elapsed:?} after Redis came back, at most {allowed} allowed",
        4 * BURST
    );
}

#[tokio::test]
async fn a_scheduled_migration_runs_on_another_instance_when_its_own_is_gone() {
    if backend() != Backend::Postgres {
        return; // instances cannot share a sled directory
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let [staging, other] = instances_over_one_database(dir.path(), ["staging", "other"], &[]);
    let token = staging.supplier_with_token("OLD_CO").await;

    // Scheduled through one instance, which dies before the window opens; the other had read
    // the schedules when it started, before this one was made.
    let start = (chrono::Utc::now() + chrono::Duration::seconds(3))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (status, answer) = staging
        .post(
            "/v2/data-import/accounts/",
            &token,
            &json!({"payload": account("OLD_CO", "ACC-1"),
                    "task_params": {"schedule_window_start": start}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    staging.kill_hard();

    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, body) = other
            .get("/v2/data-import/accounts/OLD_CO/ACC-1/", &token)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if body["status"] == "PROCESSED" {
            assert!(body["platform_identifier"].is_string(), "{body}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the other instance did not run the schedule: {body}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    drop(staging);
}
