//! PostgreSQL going away and coming back under a running server: while the database cannot
//! be reached, every request is answered within the server's wait for a connection, 503
//! `storage_unavailable` with `Retry-After` (reads, writes, tokens and `/readyz` alike), and
//! once it answers again the same server takes requests with nothing acknowledged lost and
//! nothing refused kept; a server started while it is away says so and exits. A front that
//! takes each connection and hangs up at once is the database away too. A bulk migration
//! waits out a database away and goes on where it was; when another instance took the job over
//! meanwhile, it leaves the job to it while that one runs it, and finishes what it had left
//! once that one has ended it. A network that stops passing anything on, without a word, is
//! met the same way: each operation caught in it is answered 503 within the server's time
//! limit for the database's answers, and the database ends the cut-off instance's transaction
//! once it has been idle that long, so the account it had locked is taken again by the
//! other instances. The network to the database is cut or frozen by a proxy (the database is
//! shared with the other tests).
//!
//! PostgreSQL only (`e2e-postgres`): sled is in the server's own process.

use crate::support::*;
use futures_util::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Far longer than the server's wait for a connection in this test (500 ms), and shorter
/// than sqlx's own default (30 s), which the server must not fall back to.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
const PATIENCE: Duration = Duration::from_secs(30);
/// The proxied server's time limit for the database's answers to one operation, and for a
/// transaction of its left idle: far shorter than [`ANSWER_WITHIN`].
const OPERATION_LIMIT_MS: u64 = 2000;

/// A server over a new database that it reaches through a proxy; a request waits 500 ms for
/// a connection, and an operation [`OPERATION_LIMIT_MS`] for the database's answers.
struct Outage {
    dir: tempfile::TempDir,
    database: String,
    proxy: TcpProxy,
    server: Server,
}

impl Outage {
    /// Another instance over the same database that reaches it directly, in `name`.
    fn direct(&self, name: &str) -> Server {
        Server::start_in(
            &self.dir.path().join(name),
            Options {
                env: vec![
                    ("FERRY_DATABASE_URL".into(), self.database.clone()),
                    ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
                ],
                ..Options::default()
            },
        )
    }

    /// On PostgreSQL only (none on sled).
    async fn set_up() -> Option<Outage> {
        if backend() != Backend::Postgres {
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let database = shared_database(dir.path());
        let proxy = TcpProxy::start(&address_of(&database)).await;
        let server = Server::start_in(
            &dir.path().join("server"),
            Options {
                env: vec![
                    (
                        "FERRY_DATABASE_URL".into(),
                        database_through(&database, proxy.port()),
                    ),
                    ("FERRY_DATABASE_WAIT_MS".into(), "500".into()),
                    (
                        "FERRY_DATABASE_TIMEOUT_MS".into(),
                        OPERATION_LIMIT_MS.to_string(),
                    ),
                    ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
                ],
                ..Options::default()
            },
        );
        Some(Outage {
            dir,
            database,
            proxy,
            server,
        })
    }
}

/// `host:port` of a database URL.
fn address_of(database: &str) -> String {
    let url = reqwest::Url::parse(database).expect("database URL");
    format!(
        "{}:{}",
        url.host_str().expect("the database's host"),
        url.port().unwrap_or(5432)
    )
}

fn database_through(database: &str, proxy_port: u16) -> String {
    let mut url = reqwest::Url::parse(database).expect("database URL");
    url.set_port(Some(proxy_port)).expect("a port");
    url.to_string()
}

fn note(body: &str) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "notes": [{"body": body}]})
}

/// Posts a note with `body` until `server` takes it, each refusal a 503 while the database is
/// not back yet; within [`PATIENCE`].
async fn takes_the_note_once_back(server: &Server, token: &str, body: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, answer) = server.post(NOTES, token, &note(body)).await;
        if status == StatusCode::CREATED {
            assert_eq!(answer[0]["status"], "NOTE_CREATION_SUCCESS", "{answer}");
            return;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
        assert!(
            Instant::now() < deadline,
            "the server did not take requests again"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// Threads of its own for the proxy: starting a server blocks the test's thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_away_is_answered_503_at_once_and_taken_again_when_back() {
    let Some(outage) = Outage::set_up().await else {
        return; // sled is not reached over a network
    };
    let Outage {
        dir,
        database,
        proxy,
        server,
    } = outage;
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
    takes_the_note_once_back(&server, &token, "after").await;
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
        .env(
            "FERRY_DATABASE_URL",
            database_through(&database, proxy.port()),
        )
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

/// A front that takes each connection and hangs up at once (a load balancer with no database
/// behind it, a connection pooler restarting) is the database away too: each request is
/// answered 503 `storage_unavailable`, never a 500, and the server takes requests again once
/// the front passes connections on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_front_that_hangs_up_on_each_connection_is_the_database_away() {
    let Some(outage) = Outage::set_up().await else {
        return; // sled is not reached over a network
    };
    let (proxy, server) = (&outage.proxy, &outage.server);
    let (token, _) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;

    proxy.hang_up();
    // More requests than the pool keeps connections, so that some make new ones.
    for attempt in 0..12 {
        let (status, body) = server.post(NOTES, &token, &note("during")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{attempt}: {body}");
        assert_eq!(body["code"], "storage_unavailable", "{attempt}: {body}");
        let (status, body) = server
            .get(
                "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
                &token,
            )
            .await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{attempt}: {body}");
    }

    proxy.stop_hanging_up();
    takes_the_note_once_back(server, &token, "after").await;
}

/// Accounts the bulk migration below migrates: enough for its job to run while the network to
/// the database is cut again and again.
const BULK_ACCOUNTS: usize = 600;

/// Stages `accounts` accounts of `BULK_CO` through `staging`, installs `plugin` for it if
/// given, starts their bulk migration through `starting` and waits until it has migrated one:
/// its path.
async fn bulk_migration_under_way(
    staging: &Server,
    starting: &Server,
    accounts: usize,
    plugin: Option<&str>,
) -> String {
    let token = staging.supplier_with_token("BULK_CO").await;
    futures_util::stream::iter(0..accounts)
        .for_each_concurrent(8, |index| {
            let token = &token;
            async move {
                staging
                    .stage(token, &account("BULK_CO", &format!("B-{index:04}")))
                    .await;
            }
        })
        .await;
    if let Some(plugin) = plugin {
        // Installed after staging, so that each migration calls it.
        starting.install_plugin("BULK_CO", plugin, json!({})).await;
    }
    let (_, path) = starting.start_bulk_migration("BULK_CO").await;
    loop {
        let (status, job) = starting.admin(Method::GET, &path, None).await;
        assert_eq!(status, StatusCode::OK, "{job}");
        assert_eq!(
            job["state"], "RUNNING",
            "the job ended before the outage: {job}"
        );
        if job["processed"].as_u64() > Some(0) {
            return path;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_migration_waits_out_a_database_away_and_leaves_no_account_in_progress() {
    let Some(outage) = Outage::set_up().await else {
        return; // sled is not reached over a network
    };
    // Kept to the test's end: the server's directory and database go with it.
    let Outage {
        dir: _dir,
        database: _,
        proxy,
        server,
    } = outage;
    let path = bulk_migration_under_way(&server, &server, BULK_ACCOUNTS, None).await;

    // Every cut closes the connections in use: queries in flight fail, and for a while no
    // connection can be made.
    for _ in 0..8 {
        proxy.cut();
        tokio::time::sleep(Duration::from_millis(200)).await;
        proxy.restore().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let ended = server
        .bulk_migration_ended(&path, Duration::from_secs(120))
        .await;
    server
        .assert_bulk_completed("BULK_CO", &ended, BULK_ACCOUNTS)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_migration_taken_over_while_its_instance_was_cut_off_ends_completed_once_back() {
    let Some(outage) = Outage::set_up().await else {
        return; // sled is not reached over a network
    };
    let (proxy, cut_off) = (&outage.proxy, &outage.server);
    let direct = outage.direct("direct");
    let path = bulk_migration_under_way(&direct, cut_off, BULK_ACCOUNTS, None).await;

    // Its instance is cut off: once the job's lease has passed, the other instance takes the
    // job over and finishes it.
    proxy.cut();
    let finished = direct
        .bulk_migration_ended(&path, Duration::from_secs(90))
        .await;
    assert_eq!(finished["state"], "COMPLETED", "{finished}");

    // Back, the cut-off instance's job wakes (each second): its lease passed meanwhile, and
    // the record says the instance that took the job over has ended it, so it ends its own
    // quietly, neither going on with the job nor opening its record again. (Were the other
    // still running it, it would leave the job to it.) Every instance shows the record.
    proxy.restore().await;
    let third = outage.direct("third");
    for _ in 0..16 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let (status, recorded) = third.admin(Method::GET, &path, None).await;
        assert_eq!(status, StatusCode::OK, "{recorded}");
        assert_eq!(recorded, finished, "the record changed after the job ended");
    }
    comes_to_show(cut_off, &path, &finished).await;
    direct
        .assert_bulk_completed("BULK_CO", &finished, BULK_ACCOUNTS)
        .await;
}

/// Accounts of the slow bulk migration below: each migration takes the slow plugin's ~20 ms.
const SLOW_BULK_ACCOUNTS: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_instance_back_while_another_runs_its_job_leaves_the_job_to_it() {
    let Some(outage) = Outage::set_up().await else {
        return; // sled is not reached over a network
    };
    let (proxy, cut_off) = (&outage.proxy, &outage.server);
    let direct = outage.direct("direct");
    let path =
        bulk_migration_under_way(&direct, cut_off, SLOW_BULK_ACCOUNTS, Some("fault_slow")).await;

    // Its instance is cut off; once the job's lease has passed, the other instance takes it
    // over: the count it shows moves on from what the first recorded.
    proxy.cut();
    let (status, recorded) = direct.admin(Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::OK, "{recorded}");
    let frozen = recorded["processed"].as_u64().unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, job) = direct.admin(Method::GET, &path, None).await;
        assert_eq!(status, StatusCode::OK, "{job}");
        assert_eq!(
            job["state"], "RUNNING",
            "the job ended before its first instance came back: {job}"
        );
        if job["processed"].as_u64().unwrap_or(0) >= frozen + 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the job was not taken over: {job}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Back while the other runs the job: the first finds its lease taken and ends its own run
    // of the job, leaving the accounts the other claimed to it; it then shows the job as the
    // other records it (its own run stopped at about `frozen`).
    proxy.restore().await;
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, shown) = cut_off.admin(Method::GET, &path, None).await;
        if status == StatusCode::OK && shown["processed"].as_u64() >= Some(frozen + 2) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the first instance still shows its own run: {status} {shown}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (status, job) = direct.admin(Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::OK, "{job}");
    assert_eq!(
        job["state"], "RUNNING",
        "the other ended the job before the first came back: {job}"
    );

    let ended = direct
        .bulk_migration_ended(&path, Duration::from_secs(90))
        .await;
    direct
        .assert_bulk_completed("BULK_CO", &ended, SLOW_BULK_ACCOUNTS)
        .await;
    // The other answers from its own view, which is ahead of the record by one write.
    comes_to_show(cut_off, &path, &ended).await;
}

/// Waits, within [`PATIENCE`], until `server` shows the job at `path` as `expected`.
async fn comes_to_show(server: &Server, path: &str, expected: &Value) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, shown) = server.admin(Method::GET, path, None).await;
        if status == StatusCode::OK && shown == *expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the instance shows {status} {shown}, not {expected}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A note's body and what it was answered (none: no answer within [`ANSWER_WITHIN`]).
type Answered = (String, Option<(StatusCode, Value)>);

/// Writers posting notes to `OLD_CO/ACC-1` at once, each its next as soon as its last is
/// answered, until told to stop.
struct NoteWriters {
    stop: Arc<AtomicBool>,
    writers: Vec<tokio::task::JoinHandle<Vec<Answered>>>,
}

impl NoteWriters {
    fn start(server: &Server, token: &str, writers: usize) -> NoteWriters {
        let stop = Arc::new(AtomicBool::new(false));
        let client = reqwest::Client::builder()
            .timeout(ANSWER_WITHIN)
            .build()
            .expect("client");
        let writers = (0..writers)
            .map(|writer| {
                let (stop, client) = (stop.clone(), client.clone());
                let (url, token) = (server.url(NOTES), token.to_owned());
                tokio::spawn(async move {
                    let mut answers = Vec::new();
                    for n in 0.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let body = format!("writer {writer} note {n}");
                        let response = client
                            .post(&url)
                            .header("Authorization", format!("Token {token}"))
                            .json(&note(&body))
                            .send()
                            .await;
                        let answer = match response {
                            Ok(response) => {
                                let status = response.status();
                                Some((status, response.json().await.unwrap_or(Value::Null)))
                            }
                            Err(_) => None,
                        };
                        answers.push((body, answer));
                    }
                    answers
                })
            })
            .collect();
        NoteWriters { stop, writers }
    }

    /// Every note's answer, once each writer's last is answered.
    async fn stop(self) -> Vec<Answered> {
        self.stop.store(true, Ordering::Relaxed);
        let mut answers = Vec::new();
        for writer in self.writers {
            answers.extend(writer.await.expect("a writer"));
        }
        answers
    }
}

/// The name of the database `url` names.
fn database_name(url: &str) -> String {
    let url = reqwest::Url::parse(url).expect("database URL");
    url.path().trim_start_matches('/').to_owned()
}

/// Whether a session of `database` has sat idle in a transaction for longer than a round trip
/// takes: one whose next statement the frozen network holds, and which holds what it locked.
fn idle_in_a_transaction(database: &str) -> bool {
    psql(&format!(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' \
         AND state = 'idle in transaction' AND state_change < now() - interval '200 milliseconds'",
        database_name(database)
    ))
    .trim()
        != "0"
}

/// Freezes the network while writers post notes to one account through `outage`'s server, at
/// a moment one of its units of work holds the account's lock: the answer to its
/// lock is held, so its session sits idle in the transaction. (With several writers on one
/// account the lock is always about to be held: whichever unit takes it next is caught.)
async fn frozen_holding_the_account(outage: &Outage) {
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        outage.proxy.freeze();
        tokio::time::sleep(Duration::from_millis(400)).await;
        if idle_in_a_transaction(&outage.database) {
            return;
        }
        outage.proxy.thaw();
    }
    panic!("no freeze caught a unit of work holding its account");
}

/// Every note answered 201 is on the account, as `server` shows it.
async fn every_acknowledged_note_kept(server: &Server, number: &str, answers: &[Answered]) {
    let view = server.account_view(number).await;
    let kept: std::collections::HashSet<&str> = view["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(|note| note["body"].as_str())
        .collect();
    for (body, answer) in answers {
        if matches!(answer, Some((StatusCode::CREATED, _))) {
            assert!(
                kept.contains(body.as_str()),
                "{body} was acknowledged and lost"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_stops_answering_is_answered_503_within_the_limit_and_taken_again() {
    let Some(outage) = Outage::set_up().await else {
        return; // sled is not reached over a network
    };
    let server = &outage.server;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let writers = NoteWriters::start(server, &token, 3);
    frozen_holding_the_account(&outage).await;

    // The writers' notes in flight, and those they post after, are each answered 503 within
    // the limit (well before their client gives up): none waits on the silent network.
    tokio::time::sleep(Duration::from_millis(3 * OPERATION_LIMIT_MS)).await;
    let answers = writers.stop().await;
    let unanswered: Vec<&String> = answers
        .iter()
        .filter(|(_, answer)| answer.is_none())
        .map(|(body, _)| body)
        .collect();
    assert!(unanswered.is_empty(), "not answered: {unanswered:?}");
    let refused: Vec<&Value> = answers
        .iter()
        .filter_map(|(_, answer)| answer.as_ref())
        .filter(|(status, _)| *status != StatusCode::CREATED)
        .map(|(status, body)| {
            assert_eq!(*status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
            body
        })
        .collect();
    assert!(!refused.is_empty(), "no note met the frozen network");
    for body in &refused {
        assert_eq!(body["code"], "storage_unavailable", "{body}");
    }
    let silent = refused
        .iter()
        .filter(|body| {
            body["detail"]
                .as_str()
                .is_some_and(|detail| detail.contains("did not answer within 2000 ms"))
        })
        .count();
    assert!(silent > 0, "no answer named the limit: {refused:?}");

    // Thawed, the same server takes notes again, and every note it acknowledged is kept.
    outage.proxy.thaw();
    takes_the_note_once_back(server, &token, "after").await;
    every_acknowledged_note_kept(server, &number, &answers).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_cut_off_in_a_unit_of_work_does_not_keep_its_account_from_the_others() {
    let Some(outage) = Outage::set_up().await else {
        return; // sled is not reached over a network
    };
    let (token, number) = outage
        .server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let writers = NoteWriters::start(&outage.server, &token, 3);
    frozen_holding_the_account(&outage).await;
    // Started once the freeze has caught the account's lock, so that the session caught is
    // the cut-off instance's (every one of its sessions is held by the frozen network).
    let direct = outage.direct("direct");

    // The cut-off instance holds the account's lock; the database ends its transaction once
    // it has sat idle for the limit, and the other instance's note on the account goes in.
    // (Its other writers' units queued for the lock before it, and each is caught the same way
    // in turn: with three writers the note waits up to three limits, within its own.)
    let response = direct
        .post_within(
            NOTES,
            &token,
            &note("from the other instance"),
            ANSWER_WITHIN,
        )
        .await
        .expect("the other instance's note answered while the first is cut off");
    assert_eq!(response.status(), StatusCode::CREATED);

    outage.proxy.thaw();
    let mut answers = writers.stop().await;
    answers.push((
        "from the other instance".to_owned(),
        Some((StatusCode::CREATED, Value::Null)),
    ));
    every_acknowledged_note_kept(&direct, &number, &answers).await;
}
