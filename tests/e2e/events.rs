//! Events: every change published to a private, real Redis stream with CloudEvents fields and
//! a payload valid for its catalogue entry; exactly once across Redis outages and crashes.

use crate::support::*;
use ferry_host::domain::catalogue::Catalogue;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

const STREAM: &str = "ferry:events";

fn with_redis(redis: &Redis) -> Options {
    Options {
        env: vec![
            ("FERRY_REDIS_URL".into(), redis.url()),
            ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
        ],
        ..Options::default()
    }
}

/// Every entry is a well-formed CloudEvents entry whose data is valid for its catalogue
/// entry; returns the entries by event id, asserting no id appears twice.
fn check_entries(
    entries: &[(String, HashMap<String, String>)],
) -> BTreeMap<String, HashMap<String, String>> {
    let mut by_id = BTreeMap::new();
    for (_, fields) in entries {
        let id = fields.get("id").cloned().unwrap_or_default();
        assert_eq!(
            uuid::Uuid::parse_str(&id).map(|u| u.get_version_num()).ok(),
            Some(7),
            "{fields:?}"
        );
        assert_eq!(fields["source"], "ferry");
        assert_eq!(fields["specversion"], "1.0");
        assert_eq!(fields["datacontenttype"], "application/json");
        assert!(
            chrono::DateTime::parse_from_rfc3339(&fields["time"]).is_ok(),
            "{fields:?}"
        );
        let data: Value = serde_json::from_str(&fields["data"]).expect("data is JSON");
        Catalogue::embedded()
            .validate(&fields["type"], &fields["dataversion"], &data)
            .unwrap_or_else(|error| panic!("{error}: {fields:?}"));
        assert!(
            by_id.insert(id.clone(), fields.clone()).is_none(),
            "event {id} appears twice"
        );
    }
    by_id
}

/// Stages and migrates one account of a new `supplier`, waits until every event is
/// published, and reads the stream.
async fn migrate_one_and_read_the_stream(
    server: &Server,
    redis: &Redis,
    supplier: &str,
    external: &str,
) -> BTreeMap<String, HashMap<String, String>> {
    let token = server.supplier_with_token(supplier).await;
    server.stage(&token, &account(supplier, external)).await;
    server.migrate(&token, supplier, external).await;
    server.wait_for_published().await;
    check_entries(&redis.entries(STREAM).await)
}

fn types_of(by_id: &BTreeMap<String, HashMap<String, String>>) -> Vec<String> {
    let mut types: Vec<String> = by_id
        .values()
        .map(|f| format!("{} {}", f["type"], f["dataversion"]))
        .collect();
    types.sort();
    types
}

#[tokio::test]
async fn every_change_is_published_with_its_catalogue_payload() {
    let redis = Redis::start();
    let vendor = MockServer::start().await;
    Mock::given(path("/instructions/PM-1"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"card": {"exp_month": 2, "exp_year": 2028}})),
        )
        .mount(&vendor)
        .await;
    let mut options = with_redis(&redis);
    options
        .env
        .push(("FERRY_VENDOR_ACME_URL".into(), vendor.uri()));
    let server = Server::start_with(options).await;
    let token = server.supplier_with_token("OLD_CO").await;

    for external in ["ACC-1", "ACC-2", "ACC-3"] {
        server.stage(&token, &account("OLD_CO", external)).await;
    }
    let dry = json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1", "dry_run": true});
    let (status, body) = server.post(PROCESS, &token, &dry).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_error(&body, "400");
    let number = server.migrate(&token, "OLD_CO", "ACC-1").await;
    assert_eq!(
        server.post(PROCESS, &token, &dry).await.0,
        StatusCode::BAD_REQUEST,
        "dry run of an imported account"
    );
    // A rule installed after staging makes ACC-2's migration fail.
    server
        .install_plugin(
            "OLD_CO",
            "example_plugin",
            json!({"account_number_prefix": "OE-"}),
        )
        .await;
    let failing = json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-2"});
    assert_eq!(
        server.post(PROCESS, &token, &failing).await.0,
        StatusCode::BAD_REQUEST
    );
    server
        .admin(Method::DELETE, "/admin/v1/suppliers/OLD_CO/plugin", None)
        .await;

    let transactions = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "transactions": [
        {"transaction_id": "C-1", "transaction_date": "2025-01-02", "amount": 10, "type": "CHARGE", "reason": "IMPORTED_CHARGE"},
        {"transaction_id": "P-1", "transaction_date": "2025-01-03", "amount": 4, "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT", "reference": "R", "payment_type": "DEBIT_CARD"}
    ]});
    assert_eq!(
        server
            .post(
                "/v1/data-import/transactions/create/",
                &token,
                &transactions
            )
            .await
            .0,
        StatusCode::CREATED
    );
    let instruction = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "vendor": "ACME", "reference": "PM-1", "type": "CARD"});
    assert_eq!(
        server
            .post(
                "/v1/data-import/payment-instruction/create/",
                &token,
                &instruction
            )
            .await
            .0,
        StatusCode::CREATED
    );

    let log = server.wait_for_published().await;
    let by_id = check_entries(&redis.entries(STREAM).await);
    assert_eq!(
        by_id.len(),
        log.len(),
        "every logged event is in the stream once"
    );
    // The log pages from an event's id as from its seq.
    for (index, event) in log.iter().enumerate() {
        let id = event["id"].as_str().expect("id");
        let (status, page) = server
            .admin(Method::GET, &format!("/admin/v1/events?after={id}"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(
            page["events"].as_array().expect("events")[..],
            log[index + 1..]
        );
    }
    let unknown = "0190aaaa-0000-7000-8000-000000000000";
    let (status, answer) = server
        .admin(
            Method::GET,
            &format!("/admin/v1/events?after={unknown}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        types_of(&by_id),
        [
            "account.created v1",
            "billing.ledger.entry_posted v2",
            "billing.ledger.entry_posted v2",
            "data_import.import_process.complete v1",
            "data_import.import_process.dry_run_complete v1",
            "data_import.import_process.dry_run_error v1",
            "data_import.import_process.error v1",
            "payments.payment_method.new v1",
        ]
    );
    let created = by_id
        .values()
        .find(|f| f["type"] == "account.created")
        .expect("account.created");
    assert_eq!(created["subject"], number);
    let data: Value = serde_json::from_str(&created["data"]).expect("json");
    assert_eq!(
        data,
        json!({"account_number": number, "account_user_emails": ["ada@example.com"], "is_imported": true})
    );
    let method = by_id
        .values()
        .find(|f| f["type"] == "payments.payment_method.new")
        .expect("payment method");
    let data: Value = serde_json::from_str(&method["data"]).expect("json");
    assert_eq!(data["usable_to"], "2028-02-29");
    let error = by_id
        .values()
        .find(|f| f["type"] == "data_import.import_process.error")
        .expect("error");
    let data: Value = serde_json::from_str(&error["data"]).expect("json");
    assert_eq!(data["external_identifier"], "ACC-2");
    assert_eq!(data["error_code"], "account_failed_validation");

    let (_, ready) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(ready["relay"], "connected", "{ready}");
    let (_, metrics) = server.call(Method::GET, "/metrics", None, None).await;
    assert!(
        metrics
            .as_str()
            .is_some_and(|m| m.contains("ferry_events_published_total"))
    );
}

#[tokio::test]
async fn a_redis_outage_delays_events_but_loses_or_repeats_none() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let mut redis = Redis::start();
    let server = std::sync::Arc::new(Server::start_with(with_redis(&redis)).await);
    let token = server.supplier_with_token("OLD_CO").await;
    let running = std::sync::Arc::new(AtomicBool::new(true));
    let migrated = std::sync::Arc::new(AtomicUsize::new(0));
    // Writes until told to stop, through the outage.
    let writer = {
        let (server, token, running, migrated) = (
            server.clone(),
            token.clone(),
            running.clone(),
            migrated.clone(),
        );
        tokio::spawn(async move {
            let mut index = 0;
            while running.load(Ordering::SeqCst) {
                let external = format!("ACC-{index:04}");
                server.stage(&token, &account("OLD_CO", &external)).await;
                server.migrate(&token, "OLD_CO", &external).await;
                migrated.fetch_add(1, Ordering::SeqCst);
                index += 1;
            }
        })
    };
    let wait_until = |what: &'static str, done: Box<dyn Fn() -> bool>| async move {
        for _ in 0..400 {
            if done() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!("timed out waiting for {what}");
    };
    let so_far = migrated.clone();
    wait_until(
        "writes before the outage",
        Box::new(move || so_far.load(Ordering::SeqCst) >= 10),
    )
    .await;
    redis.stop();
    let mut retrying = false;
    for _ in 0..400 {
        let (_, ready) = server.call(Method::GET, "/readyz", None, None).await;
        if ready["relay"] == "retrying" {
            retrying = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(retrying, "the relay never noticed Redis was gone");
    // Several seconds down, so the relay's backoff grows well past its first retries.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let before_resume = migrated.load(Ordering::SeqCst);
    let so_far = migrated.clone();
    wait_until(
        "writes during the outage",
        Box::new(move || so_far.load(Ordering::SeqCst) >= before_resume + 5),
    )
    .await;
    redis.resume();
    let after_resume = migrated.load(Ordering::SeqCst);
    let so_far = migrated.clone();
    wait_until(
        "writes after the outage",
        Box::new(move || so_far.load(Ordering::SeqCst) >= after_resume + 5),
    )
    .await;
    running.store(false, Ordering::SeqCst);
    writer.await.expect("writer");

    let total = migrated.load(Ordering::SeqCst);
    let log = server.wait_for_published().await;
    assert_eq!(log.len(), 2 * total, "two events per migrated account");
    let by_id = check_entries(&redis.entries(STREAM).await);
    assert_eq!(
        by_id.len(),
        2 * total,
        "each event in the stream exactly once"
    );
    for event in &log {
        assert!(
            by_id.contains_key(event["id"].as_str().expect("id")),
            "{event} missing from the stream"
        );
    }
}

/// The ids in the event log as the admin API shows it, oldest first, and what it says waits.
async fn logged_ids(server: &Server) -> (Vec<String>, Value) {
    let (status, page) = server
        .admin(Method::GET, "/admin/v1/events?limit=1000", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let ids = page["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|event| event["id"].as_str().expect("an id").to_owned())
        .collect();
    (ids, page["relay"]["lag"].clone())
}

#[tokio::test]
async fn published_events_leave_the_log_after_the_retention_and_waiting_ones_stay() {
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    let retention = ("FERRY_EVENT_RETENTION_SECONDS".to_owned(), "1".to_owned());
    // No Redis yet: the events wait in the outbox, however old they grow.
    let server = Server::start_in(
        &data_dir,
        Options {
            env: vec![
                retention.clone(),
                ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
            ],
            ..Options::default()
        },
    );
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    server.migrate(&token, "OLD_CO", "ACC-1").await;
    let (made, lag) = logged_ids(&server).await;
    assert!(made.len() >= 2, "{made:?}");
    assert_eq!(lag, made.len(), "none published");
    // Three times the retention, a dozen rounds of it: every one is still there.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(logged_ids(&server).await, (made.clone(), json!(made.len())));
    assert!(server.terminate(), "stopped");

    // With Redis, each is published, then taken out of the log within a few rounds.
    let redis = Redis::start();
    let mut options = with_redis(&redis);
    options.env.push(retention);
    let server = Server::start_in(&data_dir, options);
    let mut left = made.clone();
    for _ in 0..400 {
        left = logged_ids(&server).await.0;
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        left,
        Vec::<String>::new(),
        "published and past the retention"
    );
    let streamed = check_entries(&redis.entries(STREAM).await);
    assert_eq!(
        streamed.keys().cloned().collect::<Vec<_>>(),
        {
            let mut made = made.clone();
            made.sort();
            made
        },
        "each in the stream, once"
    );
    assert!(server.counter_total("ferry_events_pruned_total", &[]).await >= made.len() as u64);
    let (status, body) = server
        .admin(
            Method::GET,
            &format!("/admin/v1/events?after={}", made[0]),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("event retention"), "{body}");

    // What is made next is published and logged as ever.
    server.stage(&token, &account("OLD_CO", "ACC-2")).await;
    server.migrate(&token, "OLD_CO", "ACC-2").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while redis.entries(STREAM).await.len() == made.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "the next event was not published"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    check_entries(&redis.entries(STREAM).await);
}

/// Commits 10 events with Redis down, SIGKILLs the server, writes the first `already` of them
/// to the stream as a previous run would have just before dying, and restarts: each must be
/// in the stream exactly once, and events after that must flow as usual.
async fn restart_after_a_crash_with_events_already_in_the_stream(already: usize) {
    let mut redis = Redis::start();
    redis.stop();
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    let server = Server::start_in(&data_dir, with_redis(&redis));
    let token = server.supplier_with_token("OLD_CO").await;
    for index in 0..5 {
        let external = format!("ACC-{index}");
        server.stage(&token, &account("OLD_CO", &external)).await;
        server.migrate(&token, "OLD_CO", &external).await;
    }
    let (_, page) = server.admin(Method::GET, "/admin/v1/events", None).await;
    assert_eq!(page["relay"]["lag"], 10, "{page}");
    let committed: Vec<Value> = page["events"].as_array().cloned().unwrap_or_default();
    // SIGKILL: no chance to publish anything.
    drop(server);

    redis.resume();
    {
        let client = redis::Client::open(redis.url()).expect("client");
        let mut con = client
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        for event in committed.iter().take(already) {
            let _: String = redis::cmd("XADD")
                .arg(STREAM)
                .arg("*")
                .arg("id")
                .arg(event["id"].as_str().expect("id"))
                .arg("source")
                .arg("ferry")
                .arg("specversion")
                .arg("1.0")
                .arg("type")
                .arg(event["type"].as_str().expect("type"))
                .arg("dataversion")
                .arg(event["version"].as_str().expect("version"))
                .arg("time")
                .arg(event["time"].as_str().expect("time"))
                .arg("subject")
                .arg(event["subject"].as_str().unwrap_or(""))
                .arg("datacontenttype")
                .arg("application/json")
                .arg("data")
                .arg(event["data"].to_string())
                .query_async(&mut con)
                .await
                .expect("XADD");
        }
    }
    let server = Server::start_in(&data_dir, with_redis(&redis));
    server.wait_for_published().await;
    let by_id = check_entries(&redis.entries(STREAM).await);
    assert_eq!(by_id.len(), 10, "each committed event exactly once");
    for event in &committed {
        assert!(by_id.contains_key(event["id"].as_str().expect("id")));
    }

    // The relay goes on with what comes next.
    let by_id = migrate_one_and_read_the_stream(&server, &redis, "NEW_CO", "ACC-NEXT").await;
    assert_eq!(
        by_id.len(),
        12,
        "and the next change's two events once each"
    );
}

#[tokio::test]
async fn events_committed_before_a_crash_are_published_once_after_restart() {
    restart_after_a_crash_with_events_already_in_the_stream(2).await;
}

#[tokio::test]
async fn a_crash_after_the_whole_batch_reached_the_stream_repeats_nothing_and_stalls_nothing() {
    restart_after_a_crash_with_events_already_in_the_stream(10).await;
}

/// The names of the threads of process `pid`.
fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                .map(|name| name.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// On sled the relay has a thread of its own, so that it is not one task among every
/// connection's on the shared workers (where it fell behind the events being written). Over
/// PostgreSQL it stays on the shared workers (the pool's connections belong to their runtime).
#[tokio::test]
async fn on_sled_the_relay_runs_on_a_thread_of_its_own() {
    let redis = Redis::start();
    let server = Server::start_with(with_redis(&redis)).await;
    let has_relay_thread = || {
        thread_names(server.pid())
            .iter()
            .any(|name| name == ferry_host::server::RELAY_THREAD)
    };
    match backend() {
        Backend::Sled => {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !has_relay_thread() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no {} thread among {:?}",
                    ferry_host::server::RELAY_THREAD,
                    thread_names(server.pid())
                );
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
        Backend::Postgres => assert!(!has_relay_thread()),
    }
    // And it publishes.
    let by_id = migrate_one_and_read_the_stream(&server, &redis, "OLD_CO", "ACC-1").await;
    assert_eq!(
        types_of(&by_id),
        [
            "account.created v1",
            "data_import.import_process.complete v1"
        ]
    );
}

#[tokio::test]
async fn operators_publish_catalogued_events_only() {
    let redis = Redis::start();
    let server = Server::start_with(with_redis(&redis)).await;
    let (status, event) = server
        .admin(
            Method::POST,
            "/admin/v1/events",
            Some(&json!({"type": "account.occupied", "version": "v1", "data": {"account_number": "A-00000001"}, "subject": "A-00000001"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{event}");
    for (body, why) in [
        (
            json!({"type": "account.occupied", "version": "v1", "data": {}}),
            "missing required field",
        ),
        (
            json!({"type": "account.occupied", "version": "v1", "data": {"account_number": 7}}),
            "wrong type",
        ),
        (
            json!({"type": "account.occupied", "version": "v9", "data": {"account_number": "A"}}),
            "unknown version",
        ),
        (
            json!({"type": "no.such.event", "version": "v1", "data": {}}),
            "unknown type",
        ),
        (
            json!({"type": "account.occupied", "version": "v1", "data": {"account_number": "A", "extra": 1}}),
            "unknown field",
        ),
    ] {
        let (status, answer) = server
            .admin(Method::POST, "/admin/v1/events", Some(&body))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {answer}");
        assert_error(&answer, "invalid_event");
    }
    server.wait_for_published().await;
    let by_id = check_entries(&redis.entries(STREAM).await);
    assert_eq!(types_of(&by_id), ["account.occupied v1"]);
}

#[tokio::test]
async fn the_events_commands_tail_the_stream_and_describe_the_catalogue() {
    let redis = Redis::start();
    let server = Server::start_with(with_redis(&redis)).await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    server.migrate(&token, "OLD_CO", "ACC-1").await;
    server.wait_for_published().await;

    let tail = |extra: &[&str]| {
        let output = std::process::Command::new(ferry_binary())
            .args([
                "events",
                "tail",
                "--redis-url",
                &redis.url(),
                "--count",
                "2",
            ])
            .args(extra)
            .output()
            .expect("tail");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let lines = tail(&["--from-start"]);
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("data_import.import_process.complete v1"),
        "{lines:?}"
    );
    assert!(lines[1].contains("account.created v1"), "{lines:?}");
    let grouped = tail(&["--from-start", "--group", "billing", "--consumer", "one"]);
    assert_eq!(grouped.lines().count(), 2, "{grouped}");

    let output = std::process::Command::new(ferry_binary())
        .args(["events", "catalogue"])
        .output()
        .expect("catalogue");
    let listing = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(listing.lines().count() >= 250, "{listing}");
    for line in [
        "billing.ledger.entry_posted v2",
        "lifecycle.support-site.sale 1.0.0",
        "data_import.import_process.cancelled v1",
    ] {
        assert!(listing.lines().any(|l| l == line), "{line} missing");
    }
    let temp = tempfile::tempdir().expect("temp");
    let file = temp.path().join("asyncapi.json");
    let status = std::process::Command::new(ferry_binary())
        .args(["events", "asyncapi", "--output"])
        .arg(&file)
        .status()
        .expect("asyncapi");
    assert!(status.success());
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("file")).expect("json");
    assert_eq!(document["asyncapi"], "3.0.0");
}
