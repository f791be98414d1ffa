//! The storage port on PostgreSQL: typed tables (`host/migrations/`), each change
//! one SQL transaction with the events that describe it, the outbox a column of the event log.
//!
//! Every instance over one database sees the same data: an account's units of work are
//! serialized by a row lock on its summary (`SELECT … FOR UPDATE`), an import process's changes
//! by a row lock on the process, and ids come from a sequence in blocks, one per unit. A commit
//! is durable when it returns, so [`Durability::flush`] has nothing to wait for. Errors are classified once
//! ([`classify`]): a serialization failure is [`StoreError::Conflict`], a full disk
//! [`StoreError::Unwritable`], a database that cannot be reached [`StoreError::Unavailable`]
//! (answered once a request has waited [`DEFAULT_DATABASE_WAIT`], or `--database-wait-ms`, for
//! a connection, or an operation [`DEFAULT_DATABASE_TIMEOUT`], or `--database-timeout-ms`, for
//! the database's answers: [`bounded`]; requests are taken again, without a restart, once the
//! database answers).
//!
//! Each role of the port is implemented in a module of its own: [`suppliers`], [`imports`],
//! [`accounts`] (and the account's unit of work), [`plugins`], [`events`] (the log and the
//! relay's outbox) and [`leases`]; the schema's migrations are `host/migrations/`.

mod accounts;
mod events;
mod imports;
mod leases;
mod plugins;
mod suppliers;

use super::health::StorageHealth;
use crate::domain::campaign::Counts;
use crate::domain::events::Event;
use crate::domain::storage::{Durability, StoreError, StoreFuture, Unwritable};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sqlx::postgres::{PgArguments, PgPool, PgPoolOptions, PgRow};
use sqlx::types::Json;
use sqlx::{Arguments, Encode, Postgres, Row, Type};
use std::sync::Arc;
use std::time::Duration;

/// The migrations, embedded: applied on start and by `ferry db migrate`, without sqlx's
/// advisory lock (which Postgres-compatible distributed databases do not all have).
fn migrator() -> sqlx::migrate::Migrator {
    let mut migrator = sqlx::migrate!("./migrations");
    migrator.set_locking(false);
    migrator
}

/// How many times a start applies the migrations before it gives up: instances started
/// together may apply one at once, and each migration is one transaction, so all but one of
/// them fail on it (a duplicate table or version) and find it applied when they try again.
const MIGRATION_ATTEMPTS: u32 = 5;

#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    health: Arc<StorageHealth>,
    limits: DatabaseLimits,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").finish_non_exhaustive()
    }
}

/// How long a request waits for one of the pool's connections unless told otherwise. While the
/// database cannot be reached, each request waits this long (sqlx tries to connect again
/// until then) and is answered 503 `storage_unavailable`; sqlx's own default is 30 s, longer
/// than many clients wait for an answer.
pub const DEFAULT_DATABASE_WAIT: Duration = Duration::from_secs(5);

/// How long one operation waits for the database's answers unless told otherwise: far longer
/// than any of them takes on a database that answers, and short enough that a client is
/// answered before it gives up.
pub const DEFAULT_DATABASE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long Ferry waits on its database before it reports the database away
/// ([`StoreError::Unavailable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseLimits {
    /// For one of the pool's connections (`--database-wait-ms`): how soon a database that
    /// refuses connections, or cannot be reached at all, is reported.
    pub connection_wait: Duration,
    /// For the answers of one operation once it has its connection (`--database-timeout-ms`):
    /// how soon a database that stops answering is reported, when the network to it drops its
    /// packets silently or its host is gone without a reset (TCP itself would wait for up to
    /// fifteen minutes, or for ever on a connection with nothing unacknowledged). The database
    /// is told the same bound as `idle_in_transaction_session_timeout`, so a unit of work cut
    /// off that way does not keep its account's lock from the other instances.
    pub operation: Duration,
}

impl Default for DatabaseLimits {
    fn default() -> Self {
        Self {
            connection_wait: DEFAULT_DATABASE_WAIT,
            operation: DEFAULT_DATABASE_TIMEOUT,
        }
    }
}

impl PgStore {
    /// Connects to `url` and applies the migrations not applied yet.
    pub async fn connect(url: &str, health: Arc<StorageHealth>) -> Result<Self, StoreError> {
        Self::connect_with(url, DatabaseLimits::default(), health).await
    }

    /// [`Self::connect`], waiting on the database as long as `limits` say.
    pub async fn connect_with(
        url: &str,
        limits: DatabaseLimits,
        health: Arc<StorageHealth>,
    ) -> Result<Self, StoreError> {
        let idle_in_transaction = limits.operation.as_millis().max(1).to_string();
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(limits.connection_wait)
            .after_connect(move |connection, _| {
                let idle_in_transaction = idle_in_transaction.clone();
                Box::pin(async move {
                    sqlx::query(
                        "SELECT set_config('idle_in_transaction_session_timeout', $1, false)",
                    )
                    .bind(idle_in_transaction)
                    .execute(connection)
                    .await
                    .map(drop)
                })
            })
            .connect(url)
            .await
            .map_err(classify)?;
        migrate(&pool, limits.operation).await?;
        Ok(Self {
            pool,
            health,
            limits,
        })
    }

    /// `work`, bounded by [`DatabaseLimits::operation`] ([`bounded`]).
    fn bounded<'a, T, E>(
        &self,
        work: impl Future<Output = Result<T, E>> + Send + 'a,
    ) -> BoxFuture<'a, Result<T, E>>
    where
        E: From<StoreError> + 'a,
    {
        bounded(self.limits.operation, work)
    }

    fn operation_limit(&self) -> Duration {
        self.limits.operation
    }

    async fn one<T: DeserializeOwned>(
        &self,
        sql: &'static str,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        sqlx::query(sql)
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?
            .map(|row| record(&row, key))
            .transpose()
    }

    async fn all<T: DeserializeOwned>(&self, sql: &'static str) -> Result<Vec<T>, StoreError> {
        sqlx::query(sql)
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?
            .iter()
            .map(|row| record(row, sql))
            .collect()
    }

    /// Inserts `value` under `key` unless the key is taken; whether it was inserted.
    async fn insert_new<T: Serialize + Sync>(
        &self,
        sql: &'static str,
        key: &str,
        value: &T,
    ) -> Result<bool, StoreError> {
        self.health.check()?;
        let done = sqlx::query(sql)
            .bind(key)
            .bind(Json(value))
            .execute(&self.pool)
            .await
            .map_err(classify)?;
        Ok(done.rows_affected() == 1)
    }
}

type BoxStream<T> = futures_util::stream::BoxStream<'static, Result<T, StoreError>>;

/// Applies the migrations not applied yet (`ferry db migrate`, and every start), each
/// statement waiting at most `lock_wait` for a lock ([`migrate_once`]).
pub async fn migrate(pool: &PgPool, lock_wait: Duration) -> Result<(), StoreError> {
    let migrator = migrator();
    let mut attempt = 1;
    loop {
        match migrate_once(&migrator, pool, lock_wait).await {
            Ok(()) => return count_what_was_stored(pool).await,
            Err(error) if attempt < MIGRATION_ATTEMPTS => {
                tracing::warn!(%error, attempt, "migrations met another session's: trying again");
                tokio::time::sleep(std::time::Duration::from_millis(200 * u64::from(attempt)))
                    .await;
                attempt += 1;
            }
            Err(error) if waited_for_a_lock(&error) => {
                return Err(StoreError::Backend(Box::new(MigrationLockWait {
                    wait_ms: lock_wait.as_millis(),
                    attempts: attempt,
                    source: error,
                })));
            }
            Err(error) => return Err(StoreError::Backend(Box::new(error))),
        }
    }
}

/// Counts each supplier's counters from what is stored, once (the `supplier_counts` mark of
/// `store_marks`): the counters of the processes and accounts stored before they were kept,
/// as the changes would have moved them (`domain::campaign`), each account's summary given
/// its reconciliation from what is stored first (`Reconciliation::of_stored`). In one transaction that holds
/// the tables it reads against writers (an instance of an earlier version still running waits
/// for it), so that nothing is counted twice or missed; another instance starting meanwhile
/// waits for the mark and finds it.
async fn count_what_was_stored(pool: &PgPool) -> Result<(), StoreError> {
    use crate::domain::campaign::{Counts, Reconciliation, RecordCounts};
    use crate::domain::import_process::{ImportProcess, PlatformAccount};
    use crate::domain::ledger::{AccountSummary, Transaction};
    use futures_util::TryStreamExt;
    use std::collections::HashMap;

    let mut tx = pool.begin().await.map_err(classify)?;
    let first = sqlx::query(
        "INSERT INTO store_marks (name) VALUES ('supplier_counts') ON CONFLICT DO NOTHING \
         RETURNING name",
    )
    .fetch_optional(&mut *tx)
    .await
    .map_err(classify)?;
    if first.is_none() {
        return tx.commit().await.map_err(classify);
    }
    sqlx::query(
        "LOCK TABLE import_processes, accounts, account_summaries, notes, transactions, \
         statements, payment_instructions IN SHARE MODE",
    )
    .execute(&mut *tx)
    .await
    .map_err(classify)?;
    let mut suppliers: HashMap<String, Counts> = HashMap::new();
    // The summaries given their reconciliation, written once the accounts are read.
    let mut reconciled: Vec<(String, AccountSummary)> = Vec::new();
    {
        let mut processes =
            sqlx::query("SELECT supplier, record FROM import_processes").fetch(&mut *tx);
        while let Some(row) = processes.try_next().await.map_err(classify)? {
            let supplier: String = row.try_get("supplier").map_err(classify)?;
            let process: ImportProcess = record(&row, &supplier)?;
            suppliers
                .entry(supplier)
                .or_default()
                .add_all(&Counts::of_process_change(None, &process));
        }
    }
    {
        let mut accounts = sqlx::query(
            "SELECT accounts.number, accounts.record, summary.record AS summary, \
             (SELECT count(*) FROM notes WHERE account = accounts.number) AS notes, \
             (SELECT coalesce(jsonb_agg(record), '[]') FROM transactions \
             WHERE account = accounts.number) AS transactions, \
             (SELECT count(*) FROM statements WHERE account = accounts.number) AS statements, \
             (SELECT count(*) FROM payment_instructions WHERE account = accounts.number) \
             AS payment_instructions \
             FROM accounts LEFT JOIN account_summaries AS summary \
             ON summary.account = accounts.number",
        )
        .fetch(&mut *tx);
        while let Some(row) = accounts.try_next().await.map_err(classify)? {
            let number: String = row.try_get("number").map_err(classify)?;
            let account: PlatformAccount = record(&row, &number)?;
            let kept: Vec<Transaction> =
                decoded(row.try_get("transactions").map_err(classify)?, &number)?;
            let summary: Option<Option<Value>> = row.try_get("summary").map_err(classify)?;
            let summary: AccountSummary = match summary.flatten() {
                Some(value) => {
                    let mut summary: AccountSummary = decoded(value, &number)?;
                    if summary.reconciliation.is_none() {
                        summary.reconciliation =
                            Some(Reconciliation::of_stored(account.data.document(), &kept));
                        reconciled.push((number.clone(), summary.clone()));
                    }
                    summary
                }
                None => AccountSummary::default(),
            };
            let count = |column: &str| -> Result<usize, StoreError> {
                let counted: i64 = row.try_get(column).map_err(classify)?;
                Ok(usize::try_from(counted).unwrap_or_default())
            };
            let records = RecordCounts {
                notes: count("notes")?,
                transactions: kept.len(),
                statements: count("statements")?,
                payment_instructions: count("payment_instructions")?,
            };
            suppliers
                .entry(account.supplier_code.clone())
                .or_default()
                .add_all(&Counts::of_account(
                    &summary,
                    account.data.document(),
                    records,
                ));
        }
    }
    for (number, summary) in &reconciled {
        sqlx::query("UPDATE account_summaries SET record = $2 WHERE account = $1")
            .bind(number)
            .bind(Json(summary))
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
    }
    let mut counted = 0;
    for (supplier, counts) in &suppliers {
        let mut write = Change::default();
        write.counts(supplier, counts, "")?;
        let (sql, arguments) = write.statement("SELECT 1");
        sqlx::query_with(&sql, arguments)
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
        counted += 1;
    }
    tx.commit().await.map_err(classify)?;
    tracing::info!(
        suppliers = counted,
        "each supplier's counters counted from the accounts stored before they were kept"
    );
    Ok(())
}

/// The migrations gave up waiting for a lock, every time they tried.
#[derive(Debug, thiserror::Error)]
#[error(
    "the migrations waited {wait_ms} ms for a lock, {attempts} times, and gave up: a session of \
     the database holds a lock on a table they change (a long transaction, a report); end it, \
     or start again later"
)]
struct MigrationLockWait {
    wait_ms: u128,
    attempts: u32,
    #[source]
    source: sqlx::migrate::MigrateError,
}

/// One run of the migrations, on a connection whose statements wait at most `lock_wait` for a
/// lock (`lock_timeout`). A migration changing a table waits for every transaction on it to
/// end, and while it waits every other statement on the table waits behind it: a report
/// running for an hour would stop Ferry's traffic for an hour. Bounded, the migration gives
/// up instead (its transaction rolled back), the traffic goes on, and the start is tried again
/// or fails saying why.
async fn migrate_once(
    migrator: &sqlx::migrate::Migrator,
    pool: &PgPool,
    lock_wait: Duration,
) -> Result<(), sqlx::migrate::MigrateError> {
    let mut connection = pool.acquire().await?;
    sqlx::query("SELECT set_config('lock_timeout', $1, false)")
        .bind(lock_wait.as_millis().max(1).to_string())
        .execute(&mut *connection)
        .await?;
    // `run_direct`, not `run`: the future of `run` over a connection is not `Send` for every
    // lifetime, which a spawned start needs (sqlx's own note on it).
    let applied = migrator.run_direct(&mut *connection).await;
    // Back to the pool as every other connection is: without the bound.
    let reset = sqlx::query("SELECT set_config('lock_timeout', '0', false)")
        .execute(&mut *connection)
        .await;
    if reset.is_err() {
        connection.close_on_drop();
    }
    applied
}

/// Whether a migration failed waiting for a lock (`lock_not_available`).
fn waited_for_a_lock(error: &sqlx::migrate::MigrateError) -> bool {
    let cause = match error {
        sqlx::migrate::MigrateError::Execute(cause)
        | sqlx::migrate::MigrateError::ExecuteMigration(cause, _) => cause,
        _ => return false,
    };
    cause
        .as_database_error()
        .and_then(|database| database.code())
        .is_some_and(|code| code == "55P03")
}

/// `work`, given at most `limit` for the database's answers; then the database is reported
/// away. The work is dropped where it was: its transaction, if any, is rolled back (by the
/// database itself when the connection does not answer again) and its connection is not used
/// again until it answers.
fn bounded<'a, T, E>(
    limit: Duration,
    work: impl Future<Output = Result<T, E>> + Send + 'a,
) -> BoxFuture<'a, Result<T, E>>
where
    E: From<StoreError> + 'a,
{
    Box::pin(async move {
        tokio::time::timeout(limit, work)
            .await
            .unwrap_or_else(|_| Err(gone_silent(limit).into()))
    })
}

/// The database did not answer one operation within `limit`.
fn gone_silent(limit: Duration) -> StoreError {
    StoreError::Unavailable(format!("it did not answer within {} ms", limit.as_millis()))
}

/// The backend-neutral error of a PostgreSQL one.
fn classify(error: sqlx::Error) -> StoreError {
    if let sqlx::Error::Database(database) = &error {
        match database.code().as_deref() {
            // serialization_failure, deadlock_detected: nothing was kept; run it again.
            Some("40001" | "40P01") => return StoreError::Conflict,
            // disk_full, insufficient_resources
            Some("53100" | "53000") => return StoreError::Unwritable(Unwritable::DiskFull),
            // the server is shutting down or refuses connections
            Some(code) if code.starts_with("57P") || code.starts_with("08") => {
                return StoreError::Unavailable(database.message().to_owned());
            }
            _ => {}
        }
    }
    match error {
        // A connection closed under its first exchange (a front that hangs up, a database
        // going down) reads as an answer out of protocol ("unexpected response from
        // SSLRequest: 0x00"); a connection's worker gone is the same connection lost.
        sqlx::Error::Io(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed => StoreError::Unavailable(error.to_string()),
        other => StoreError::Backend(Box::new(other)),
    }
}

fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(database) if database.code().as_deref() == Some("23505"))
}

/// The `record` column of `row`, as a `T`.
fn record<T: DeserializeOwned>(row: &PgRow, key: &str) -> Result<T, StoreError> {
    decoded(row.try_get("record").map_err(classify)?, key)
}

/// A stored JSON value (of the record at `key`) as a `T`.
fn decoded<T: DeserializeOwned>(value: Value, key: &str) -> Result<T, StoreError> {
    serde_json::from_value(value).map_err(|source| StoreError::Corrupt {
        key: key.to_owned(),
        source,
    })
}

/// Writes `events` to the log, unpublished, in their order.
async fn insert_events(
    tx: &mut sqlx::Transaction<'static, Postgres>,
    events: &[Event],
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let mut write = Change::default();
    write.events(events, "")?;
    let (sql, arguments) = write.statement("SELECT 1");
    sqlx::query_with(&sql, arguments)
        .execute(&mut **tx)
        .await
        .map_err(classify)?;
    Ok(())
}

/// How many rows each supplier counter is spread over ([`Change::counts`]).
const COUNT_SHARDS: i16 = 8;

/// A change as one statement: a data-modifying `WITH` query for each kind of record it
/// writes. PostgreSQL runs each of them once and to the end, as one atomic statement, and
/// checks the foreign keys once all are done. No table may be written by two of them (which
/// CockroachDB would refuse). Each statement is a round trip, and on PostgreSQL a round trip
/// is most of what a small statement costs, on both sides.
#[derive(Default)]
struct Change {
    /// The `WITH` queries so far: `name AS (query), ...`.
    sql: String,
    arguments: PgArguments,
}

impl Change {
    /// The placeholder (`$n`) of `value`, bound.
    fn bind<'q, T>(&mut self, value: T) -> Result<String, StoreError>
    where
        T: 'q + Encode<'q, Postgres> + Type<Postgres>,
    {
        self.arguments.add(value).map_err(StoreError::Backend)?;
        Ok(format!("${}", self.arguments.len()))
    }

    /// The placeholder (`$n`) of the array of `values`, bound.
    fn bind_array<'q, T>(&mut self, values: impl Iterator<Item = T>) -> Result<String, StoreError>
    where
        Vec<T>: 'q + Encode<'q, Postgres> + Type<Postgres>,
    {
        self.bind(values.collect::<Vec<_>>())
    }

    /// Adds the data-modifying query `query`, named `name`.
    fn part(&mut self, name: &str, query: String) {
        if !self.sql.is_empty() {
            self.sql.push_str(", ");
        }
        self.sql.push_str(name);
        self.sql.push_str(" AS (");
        self.sql.push_str(&query);
        self.sql.push(')');
    }

    /// Adds the insert of `events` into the log, unpublished, in their order (`where_clause`:
    /// the condition they are written on, if any).
    fn events(&mut self, events: &[Event], where_clause: &str) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let ids = self.bind_array(events.iter().map(|event| event.id.as_str()))?;
        let subjects = self.bind_array(events.iter().map(|event| event.subject.as_deref()))?;
        let records = self.bind_array(events.iter().map(Json))?;
        self.part(
            "events_logged",
            format!(
                "INSERT INTO events (id, subject, record) SELECT id, subject, record \
                 FROM UNNEST({ids}::text[], {subjects}::text[], {records}::jsonb[]) \
                 WITH ORDINALITY AS event (id, subject, record, position) {where_clause} \
                 ORDER BY position"
            ),
        );
        Ok(())
    }

    /// Adds the move of `supplier`'s counters by `counts` (`where_clause`: the condition it is
    /// written on, if any). Each counter is spread over [`COUNT_SHARDS`] rows, one picked at
    /// random per change, so that concurrent changes of one supplier seldom wait for one row.
    fn counts(
        &mut self,
        supplier: &str,
        counts: &Counts,
        where_clause: &str,
    ) -> Result<(), StoreError> {
        if counts.is_empty() {
            return Ok(());
        }
        let supplier = self.bind(supplier.to_owned())?;
        let shard = self.bind(rand::Rng::gen_range(
            &mut rand::thread_rng(),
            0..COUNT_SHARDS,
        ))?;
        let names = self.bind_array(counts.0.keys().map(String::as_str))?;
        let values = self.bind_array(counts.0.values().copied())?;
        self.part(
            "counts_moved",
            format!(
                "INSERT INTO supplier_counts (supplier, name, shard, value) \
                 SELECT {supplier}, name, {shard}, value \
                 FROM UNNEST({names}::text[], {values}::bigint[]) AS moved (name, value) \
                 {where_clause} \
                 ON CONFLICT (supplier, name, shard) \
                 DO UPDATE SET value = supplier_counts.value + EXCLUDED.value"
            ),
        );
        Ok(())
    }

    /// The statement, answering `answer` (a query the `WITH` queries stand before), and its
    /// arguments.
    fn statement(self, answer: &str) -> (String, PgArguments) {
        if self.sql.is_empty() {
            return (answer.to_owned(), self.arguments);
        }
        (format!("WITH {} {answer}", self.sql), self.arguments)
    }
}

impl Durability for PgStore {
    fn flush(&self) -> StoreFuture<'static, ()> {
        // Every change is committed, durably, before it returns.
        Box::pin(std::future::ready(Ok(())))
    }

    fn writable(&self) -> Result<(), StoreError> {
        self.health.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::error::DomainError;
    use crate::domain::storage::{Outbox, Store};

    #[test]
    fn a_change_numbers_its_placeholders_across_its_parts() {
        let mut change = Change::default();
        let account = change.bind("A-1").expect("bound");
        let ids = change.bind_array([1_i64, 2].into_iter()).expect("bound");
        change.part(
            "notes_added",
            format!("INSERT INTO notes SELECT {account}, id FROM UNNEST({ids}::bigint[])"),
        );
        change.part("summary_set", format!("UPDATE t SET a = {account}"));
        let (sql, arguments) = change.statement("SELECT 1");
        assert_eq!(
            sql,
            "WITH notes_added AS (INSERT INTO notes SELECT $1, id FROM UNNEST($2::bigint[])), \
             summary_set AS (UPDATE t SET a = $1) SELECT 1"
        );
        assert_eq!(arguments.len(), 2);
        let (empty, _) = Change::default().statement("SELECT 1");
        assert_eq!(empty, "SELECT 1", "no parts, no WITH");
    }

    #[tokio::test]
    async fn an_operation_not_answered_within_its_limit_is_the_database_away() {
        let limit = Duration::from_millis(20);
        let silent: Result<(), StoreError> = bounded(limit, std::future::pending()).await;
        match silent {
            Err(error @ StoreError::Unavailable(_)) => {
                assert!(error.is_unavailable());
                assert!(
                    error
                        .to_string()
                        .contains("(it did not answer within 20 ms)"),
                    "{error}"
                );
            }
            other => panic!("{other:?}"),
        }
        let answered: Result<u8, StoreError> = bounded(limit, async { Ok(7) }).await;
        assert_eq!(answered.ok(), Some(7));
        let failed: Result<(), DomainError> =
            bounded(limit, async { Err(StoreError::Conflict.into()) }).await;
        assert!(matches!(
            failed,
            Err(DomainError::Store(StoreError::Conflict))
        ));
    }

    /// A database of its own for one test, on the tests' PostgreSQL (`ferry_test_support`:
    /// `FERRY_TEST_DATABASE_URL`'s, this machine's, or a private one); dropped with the backend.
    struct PgBackend {
        admin_url: String,
        name: String,
        url: String,
    }

    fn blocking<T>(work: impl std::future::Future<Output = T>) -> T {
        tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(work))
    }

    impl PgBackend {
        fn new() -> Self {
            let admin_url = ferry_test_support::postgres_admin_url();
            let name = format!("ferry_test_{}", uuid::Uuid::new_v4().simple());
            blocking(async {
                let pool = PgPool::connect(&admin_url).await.expect("PostgreSQL");
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&pool)
                    .await
                    .expect("a database of the test's own");
            });
            let base = admin_url
                .rsplit_once('/')
                .map_or(admin_url.as_str(), |(base, _)| base);
            let url = format!("{base}/{name}");
            Self {
                admin_url,
                name,
                url,
            }
        }
    }

    impl Drop for PgBackend {
        fn drop(&mut self) {
            let admin_url = self.admin_url.clone();
            let name = self.name.clone();
            // Off the test's runtime, which may be ending.
            let _ = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                runtime.block_on(async {
                    if let Ok(pool) = PgPool::connect(&admin_url).await {
                        let _ =
                            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                                .execute(&pool)
                                .await;
                    }
                });
            })
            .join();
        }
    }

    impl crate::store::contract::Backend for PgBackend {
        fn open_with_health(
            &self,
            health: Arc<StorageHealth>,
        ) -> (Arc<dyn Store>, Arc<dyn Outbox>) {
            let store = Arc::new(blocking(PgStore::connect(&self.url, health)).expect("store"));
            (store.clone(), store)
        }

        fn shared(&self) -> bool {
            true
        }
    }

    crate::store::contract::contract_tests!(PgBackend::new);

    /// A database whose counters were never kept (an earlier version's) is counted once, after
    /// the migrations: its processes, its accounts' records, and each account's summary given
    /// the reconciliation its document and its transactions make.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn what_was_stored_before_counters_is_counted_once() {
        use crate::store::contract::{Backend, migrate as migrated, staged, transaction};
        let backend = PgBackend::new();
        let store = backend.open();
        staged(store.as_ref(), "OLD_CO", "ACC-1", None).await;
        staged(store.as_ref(), "OLD_CO", "ACC-2", None).await;
        let number = migrated(store.as_ref(), "ACC-1", Vec::new(), chrono::Utc::now())
            .await
            .account
            .expect("an account")
            .number;
        let mut unit = store.account_unit(&number).await.expect("a unit");
        let (mut posted, mut entry) = transaction("T-1");
        entry.id = unit.next_id().await.expect("an id");
        posted.ledger_entry_id = Some(entry.id);
        unit.add_transaction(&posted, &entry).await.expect("added");
        let mut summary = unit.summary().await.expect("summary");
        summary.balance = crate::domain::money::Money::from_pence(-100);
        unit.set_summary(&summary).expect("summary set");
        unit.commit().await.expect("committed");

        // As an earlier version left it: no counters, no reconciliations.
        let pool = PgPool::connect(&backend.url).await.expect("PostgreSQL");
        for statement in [
            "DELETE FROM supplier_counts",
            "DELETE FROM store_marks",
            "UPDATE account_summaries SET record = record - 'reconciliation'",
        ] {
            sqlx::query(statement)
                .execute(&pool)
                .await
                .expect(statement);
        }
        assert!(
            store
                .supplier_counts("OLD_CO")
                .await
                .expect("counts")
                .is_empty()
        );
        super::migrate(&pool, Duration::from_secs(5))
            .await
            .expect("migrated and counted");
        let expected: Vec<(String, i64)> = [
            ("data.transactions", 1),
            // Its document declared no money.
            ("reconciliation.NOT_DECLARED", 1),
            ("staged", 2),
            ("state.PENDING", 1),
            ("state.PROCESSED", 1),
        ]
        .map(|(name, value)| (name.to_owned(), value))
        .to_vec();
        let counted = |counts: crate::domain::campaign::Counts| -> Vec<(String, i64)> {
            counts.0.into_iter().collect()
        };
        assert_eq!(
            counted(store.supplier_counts("OLD_CO").await.expect("counts")),
            expected
        );
        let summary = store.account_summary(&number).await.expect("summary");
        assert!(summary.reconciliation.is_some(), "{summary:?}");
        // Once: a second start counts nothing again.
        super::migrate(&pool, Duration::from_secs(5))
            .await
            .expect("migrated");
        assert_eq!(
            counted(store.supplier_counts("OLD_CO").await.expect("counts")),
            expected
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn instances_starting_together_migrate_one_database_without_advisory_locks() {
        let backend = PgBackend::new();
        // A role that may not take advisory locks in this database (as on databases that
        // have none): sqlx's migration lock would fail for it.
        let role = format!("ferry_role_{}", uuid::Uuid::new_v4().simple());
        let owner = PgPool::connect(&backend.url).await.expect("PostgreSQL");
        for statement in [
            format!("CREATE ROLE {role} LOGIN"),
            format!("GRANT ALL ON DATABASE {} TO {role}", backend.name),
            format!("GRANT ALL ON SCHEMA public TO {role}"),
            "REVOKE EXECUTE ON FUNCTION pg_advisory_lock(bigint), pg_advisory_unlock(bigint) \
             FROM PUBLIC"
                .to_owned(),
        ] {
            sqlx::query(&statement)
                .execute(&owner)
                .await
                .expect("set-up");
        }
        let mut url = reqwest::Url::parse(&backend.url).expect("the test database's URL");
        url.set_username(&role).expect("a URL with a user");
        url.set_password(None).expect("a URL with a user");
        let url = url.to_string();

        let starts = (0..4).map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                PgStore::connect(&url, Arc::new(StorageHealth::unwatched())).await
            })
        });
        let started = futures_util::future::join_all(starts).await;
        let applied: Result<i64, _> = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations")
            .fetch_one(&owner)
            .await;
        for statement in [
            format!("REASSIGN OWNED BY {role} TO postgres"),
            format!("DROP OWNED BY {role}"),
            format!("DROP ROLE {role}"),
        ] {
            let _ = sqlx::query(&statement).execute(&owner).await;
        }
        for start in started {
            start.expect("joined").expect("started and migrated");
        }
        assert_eq!(
            applied.expect("the applied migrations"),
            migrator().iter().count() as i64
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_url_that_asks_for_tls_is_served_over_tls() {
        let backend = PgBackend::new();
        let plain = PgPool::connect(&backend.url).await.expect("PostgreSQL");
        let offered: String = sqlx::query_scalar("SHOW ssl")
            .fetch_one(&plain)
            .await
            .expect("SHOW ssl");
        let tls_url = format!("{}?sslmode=require", backend.url);
        let health = Arc::new(StorageHealth::unwatched());
        if offered != "on" {
            // A server without TLS refuses a client that requires it: never plain text.
            assert!(PgStore::connect(&tls_url, health).await.is_err());
            return;
        }
        let store = PgStore::connect(&tls_url, health).await.expect("over TLS");
        let encrypted: bool =
            sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .fetch_one(&store.pool)
                .await
                .expect("pg_stat_ssl");
        assert!(encrypted, "the connection is not encrypted");
    }
}
