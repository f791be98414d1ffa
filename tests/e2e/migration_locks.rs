//! Migrations on PostgreSQL that need a lock a long transaction holds: a start waits for it
//! at most `--database-timeout-ms` a try, rather than for as long as the transaction lasts
//! (with every write to the table queued behind its wait), then fails saying why; started
//! again once the transaction is over, it applies them.
//!
//! PostgreSQL only (`e2e-postgres`).

use crate::support::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `application_name` of the session holding the lock.
const HOLDER: &str = "ferry-test-lock-holder";
/// Far longer than the tries of a start whose migrations wait 500 ms for a lock each time.
const PATIENCE: Duration = Duration::from_secs(30);

/// `sql`'s one value, run on the database at `url`.
fn value_on(url: &str, sql: &str) -> String {
    psql_on(url, sql).trim().to_owned()
}

/// A session holding a write lock on the import processes in a transaction that sleeps, until
/// dropped (then ended: a client gone does not end its session's sleep).
struct LockHolder {
    url: String,
    client: std::process::Child,
}

impl LockHolder {
    fn start(url: &str) -> LockHolder {
        let client = Command::new("psql")
            .args([
                url,
                "-c",
                "BEGIN; LOCK TABLE import_processes IN ROW EXCLUSIVE MODE; SELECT pg_sleep(120);",
            ])
            .env("PGAPPNAME", HOLDER)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("psql");
        LockHolder {
            url: url.to_owned(),
            client,
        }
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        // Not `psql_on`, which panics on a failure: a drop while a test fails must not.
        let _ = Command::new("psql")
            .args([
                self.url.as_str(),
                "-c",
                &format!(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE application_name = '{HOLDER}'"
                ),
            ])
            .output();
        let _ = self.client.kill();
        let _ = self.client.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_waiting_on_a_long_transactions_lock_gives_up_and_says_why() {
    if backend() != Backend::Postgres {
        return;
    }
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    assert!(Server::start_in(&data_dir, Options::default()).terminate());
    let url = database_of(&data_dir);
    // The last migration undone, as if this start were the release that brings it: it indexes
    // the import processes, which waits for every transaction that wrote to them to end.
    psql_on(
        &url,
        "DROP INDEX import_processes_scheduled; DELETE FROM _sqlx_migrations WHERE version = 4",
    );
    let holder = LockHolder::start(&url);
    let holding = Instant::now();
    while value_on(
        &url,
        "SELECT count(*) FROM pg_locks JOIN pg_class ON pg_class.oid = pg_locks.relation \
         WHERE relname = 'import_processes' AND mode = 'RowExclusiveLock' AND granted",
    ) == "0"
    {
        assert!(
            holding.elapsed() < PATIENCE,
            "the transaction did not take its lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut starting = Command::new(ferry_binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(temp.path().join("second"))
        .env("FERRY_DATABASE_URL", &url)
        .env("FERRY_DATABASE_TIMEOUT_MS", "500")
        .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
        .env("FERRY_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ferry");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = starting.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > PATIENCE {
            let _ = starting.kill();
            panic!("the start still waited on the lock after {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut said = String::new();
    std::io::Read::read_to_string(&mut starting.stderr.take().expect("stderr"), &mut said)
        .expect("read");
    assert!(!status.success(), "{said}");
    assert!(said.contains("waited 500 ms for a lock"), "{said}");
    assert_eq!(
        value_on(
            &url,
            "SELECT count(*) FROM _sqlx_migrations WHERE version = 4"
        ),
        "0",
        "nothing of the migration kept"
    );

    // The transaction over, the next start applies it.
    drop(holder);
    let server = Server::start_in(&data_dir, Options::default());
    let (status, _) = server
        .call(reqwest::Method::GET, "/readyz", None, None)
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(
        value_on(
            &url,
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'import_processes_scheduled'"
        ),
        "1"
    );
}
