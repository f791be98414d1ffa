//! The PostgreSQL implementation of [`Store`]: typed tables (`host/migrations/`), each change
//! one SQL transaction with the events that describe it, the outbox a column of the event log.
//!
//! Every instance over one database sees the same data: an account's units of work are
//! serialized by a row lock on its summary (`SELECT … FOR UPDATE`), an import process's changes
//! by a row lock on the process, and ids come from a sequence in blocks, one per unit. A commit is durable
//! when it returns, so [`Store::flush`] has nothing to wait for. Errors are classified once
//! ([`classify`]): a serialization failure is [`StoreError::Conflict`], a full disk
//! [`StoreError::Unwritable`], a database that cannot be reached [`StoreError::Unavailable`]
//! (answered once a request has waited [`DEFAULT_DATABASE_WAIT`], or `--database-wait-ms`, for
//! a connection, or an operation [`DEFAULT_DATABASE_TIMEOUT`], or `--database-timeout-ms`, for
//! the database's answers: [`bounded`]; requests are taken again, without a restart, once the
//! database answers).

mod account;

use super::health::StorageHealth;
use super::{
    AccountRecords, AccountUnit, DecideImport, ImportChange, ImportCounts, ImportStream,
    ListingStream, Store, StoreError, StoreFuture,
};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::events::Event;
use crate::domain::import_process::{ImportListing, ImportProcess, ImportState, PlatformAccount};
use crate::domain::meter_points::MeterPoint;
use crate::domain::migrations::MigrationView;
use crate::domain::operations_team::OperationsTeam;
use crate::domain::plugin::PluginRecord;
use crate::domain::schedules::Due;
use crate::domain::storage::Unwritable;
use crate::domain::supplier::Supplier;
use crate::events::outbox::{Outbox, PendingEvent};
use crate::events::stream_record::StreamRecord;
use account::{PgAccountUnit, RecordWrites};
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sqlx::postgres::{PgArguments, PgPool, PgPoolOptions, PgRow};
use sqlx::types::Json;
use sqlx::{Arguments, Encode, Postgres, Row, Type};
use std::collections::{BTreeMap, HashSet};
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

/// Rows of a list read at a time.
const LIST_PAGE: i64 = 1000;
/// Attempts of an import change whose new platform account number was taken meanwhile.
const NUMBER_ATTEMPTS: usize = 16;

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

    /// The supplier's processes after `after`, a page of `page_query` at a time, each row
    /// read by `read`.
    fn import_range<T: Send + 'static>(
        &self,
        supplier: &str,
        after: Option<&str>,
        page_query: PageQuery,
        read: fn(&PgRow) -> Result<T, StoreError>,
    ) -> BoxStream<T> {
        struct Page {
            pool: PgPool,
            limit: Duration,
            supplier: String,
            after: Option<String>,
            done: bool,
        }
        let start = Page {
            pool: self.pool.clone(),
            limit: self.limits.operation,
            supplier: supplier.to_owned(),
            after: after.map(str::to_owned),
            done: false,
        };
        futures_util::stream::unfold(start, move |mut page| async move {
            if page.done {
                return None;
            }
            let query = match &page.after {
                None => sqlx::query(page_query.first)
                    .bind(&page.supplier)
                    .bind(LIST_PAGE),
                Some(after) => sqlx::query(page_query.after)
                    .bind(&page.supplier)
                    .bind(LIST_PAGE)
                    .bind(after),
            };
            let fetched = async { query.fetch_all(&page.pool).await.map_err(classify) };
            let rows = bounded(page.limit, fetched).await;
            let items: Vec<Result<T, StoreError>> = match rows {
                Ok(rows) => {
                    page.done = (rows.len() as i64) < LIST_PAGE;
                    page.after = rows.last().and_then(|row| row.try_get("external").ok());
                    rows.iter().map(read).collect()
                }
                Err(error) => {
                    page.done = true;
                    vec![Err(error)]
                }
            };
            Some((futures_util::stream::iter(items), page))
        })
        .flatten()
        .boxed()
    }

    /// One import change in its own transaction; `Ok(None)` when the new account's number
    /// was taken meanwhile (decide again).
    async fn try_import_change(
        &self,
        supplier: &str,
        external: &str,
        decide: &mut DecideImport<'_>,
    ) -> Result<Option<ImportChange>, DomainError> {
        let mut tx = self.pool.begin().await.map_err(classify)?;
        let current: Option<ImportProcess> = sqlx::query(
            "SELECT record FROM import_processes WHERE supplier = $1 AND external = $2 FOR UPDATE",
        )
        .bind(supplier)
        .bind(external)
        .fetch_optional(&mut *tx)
        .await
        .map_err(classify)?
        .map(|row| record(&row, external))
        .transpose()?;
        let change = decide(current.as_ref())?;
        // The whole change in one statement (one round trip): the new account, if any, then
        // the process and its events only if the account's number was still free.
        let mut write = Change::default();
        let guard = match &change.account {
            Some(account) => {
                let number = write.bind(&account.number)?;
                let record = write.bind(Json(account))?;
                write.part(
                    "account_added",
                    format!(
                        "INSERT INTO accounts (number, record) VALUES ({number}, {record}) \
                         ON CONFLICT DO NOTHING RETURNING number"
                    ),
                );
                let guard = "WHERE EXISTS (SELECT 1 FROM account_added)";
                if let Some(opening) = &change.opening {
                    RecordWrites::opening(opening).add_to(&mut write, &number, guard)?;
                }
                guard
            }
            None => "",
        };
        let process = &change.process;
        let columns = [
            write.bind(supplier)?,
            write.bind(external)?,
            write.bind(process.state.as_str())?,
            write.bind(&process.platform_account_number)?,
            write.bind(process.account_created_at)?,
            write.bind(Json(process))?,
        ]
        .join(", ");
        write.part(
            "process_written",
            format!(
                "INSERT INTO import_processes \
                 (supplier, external, state, platform_account_number, account_created_at, record) \
                 SELECT {columns} {guard} \
                 ON CONFLICT (supplier, external) DO UPDATE SET state = EXCLUDED.state, \
                 platform_account_number = EXCLUDED.platform_account_number, \
                 account_created_at = EXCLUDED.account_created_at, record = EXCLUDED.record"
            ),
        );
        write.events(&change.events, guard)?;
        let answer = if change.account.is_some() {
            "SELECT EXISTS (SELECT 1 FROM account_added) AS account_added"
        } else {
            "SELECT true AS account_added"
        };
        let (sql, arguments) = write.statement(answer);
        let written = sqlx::query_with(&sql, arguments).fetch_one(&mut *tx).await;
        let account_added: bool = match written {
            Ok(row) => row.try_get("account_added").map_err(classify)?,
            // Staged by another instance between our read and our write.
            Err(error) if current.is_none() && is_unique_violation(&error) => {
                return Err(StoreError::Conflict.into());
            }
            Err(error) => return Err(classify(error).into()),
        };
        if !account_added {
            return Ok(None);
        }
        tx.commit().await.map_err(classify)?;
        Ok(Some(change))
    }

    async fn import_change(
        &self,
        supplier: &str,
        external: &str,
        decide: &mut DecideImport<'_>,
    ) -> Result<ImportChange, DomainError> {
        self.health.check()?;
        for _ in 0..NUMBER_ATTEMPTS {
            match self
                .bounded(self.try_import_change(supplier, external, decide))
                .await
            {
                Ok(Some(change)) => return Ok(change),
                Ok(None) => continue,
                Err(DomainError::Store(StoreError::Conflict)) => continue,
                Err(other) => return Err(other),
            }
        }
        Err(StoreError::NumbersExhausted.into())
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
            Ok(()) => return Ok(()),
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

/// The queries of a page of a supplier's processes in key order: the first, and the next
/// after a key. Two texts, not one with `$2 IS NULL OR external > $2`: a prepared statement's
/// generic plan cannot start its index scan at an optional bound, so every page of that one
/// read the supplier's keys from the first (a 100 000-account list scanned 5 million rows).
#[derive(Clone, Copy)]
struct PageQuery {
    first: &'static str,
    after: &'static str,
}

macro_rules! page_query {
    ($columns:expr) => {
        PageQuery {
            first: concat!(
                "SELECT ",
                $columns,
                " FROM import_processes WHERE supplier = $1 ORDER BY external LIMIT $2"
            ),
            after: concat!(
                "SELECT ",
                $columns,
                " FROM import_processes WHERE supplier = $1 AND external > $3 \
                 ORDER BY external LIMIT $2"
            ),
        }
    };
}

/// The columns [`listing`] reads: never the account document.
macro_rules! listing_columns {
    () => {
        "external, state, platform_account_number, account_created_at"
    };
}

/// Whole processes ([`process`]).
const PROCESSES_PAGE: PageQuery = page_query!("external, record");
/// What the lists show ([`listing`]).
const LISTINGS_PAGE: PageQuery = page_query!(listing_columns!());

fn listing(row: &PgRow) -> Result<ImportListing, StoreError> {
    let external: String = row.try_get("external").map_err(classify)?;
    let state: String = row.try_get("state").map_err(classify)?;
    Ok(ImportListing {
        state: decoded(Value::String(state), &external)?,
        platform_account_number: row.try_get("platform_account_number").map_err(classify)?,
        account_created_at: row.try_get("account_created_at").map_err(classify)?,
        external_account_number: external,
    })
}

fn process(row: &PgRow) -> Result<ImportProcess, StoreError> {
    let external: String = row.try_get("external").map_err(classify)?;
    record(row, &external)
}

/// A key of `pg_advisory_xact_lock` that serializes the changes to plugins: a component is
/// removed once no plugin runs it, which a change made at the same moment could not see.
const PLUGIN_CHANGES_LOCK: i64 = 0x6665_7272_795f_706c; // "ferry_pl"

/// Waits for the changes to plugins made at the same moment (the lock is held to the end of
/// the transaction); the supplier's plugin as it stands then.
async fn plugins_changing(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    supplier: &str,
) -> Result<Option<PluginRecord>, StoreError> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(PLUGIN_CHANGES_LOCK)
        .execute(&mut **tx)
        .await
        .map_err(classify)?;
    sqlx::query("SELECT record FROM plugins WHERE supplier = $1")
        .bind(supplier)
        .fetch_optional(&mut **tx)
        .await
        .map_err(classify)?
        .map(|row| record(&row, supplier))
        .transpose()
}

/// Removes the component `replaced` (a supplier's plugin being replaced or removed) ran,
/// unless a plugin still runs it (the replacement's own, or another supplier's).
async fn remove_component_unless_used(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    replaced: &PluginRecord,
) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM plugin_components WHERE sha256 = $1 \
         AND NOT EXISTS (SELECT 1 FROM plugins WHERE sha256 = $1)",
    )
    .bind(&replaced.sha256)
    .execute(&mut **tx)
    .await
    .map_err(classify)?;
    Ok(())
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

    /// The statement, answering `answer` (a query the `WITH` queries stand before), and its
    /// arguments.
    fn statement(self, answer: &str) -> (String, PgArguments) {
        if self.sql.is_empty() {
            return (answer.to_owned(), self.arguments);
        }
        (format!("WITH {} {answer}", self.sql), self.arguments)
    }
}

/// An event of the log with its position and publication.
fn logged_event(row: &PgRow) -> Result<Event, StoreError> {
    let seq: i64 = row.try_get("seq").map_err(classify)?;
    let mut event: Event = record(row, &seq.to_string())?;
    event.seq = u64::try_from(seq).unwrap_or_default();
    event.published_at = row.try_get("published_at").map_err(classify)?;
    Ok(event)
}

fn seq_param(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

impl Store for PgStore {
    fn create_supplier<'a>(&'a self, supplier: &'a Supplier) -> StoreFuture<'a, bool> {
        self.bounded(self.insert_new(
            "INSERT INTO suppliers (code, record) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &supplier.code,
            supplier,
        ))
    }

    fn supplier<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Option<Supplier>> {
        self.bounded(self.one("SELECT record FROM suppliers WHERE code = $1", code))
    }

    fn suppliers(&self) -> StoreFuture<'_, Vec<Supplier>> {
        self.bounded(self.all("SELECT record FROM suppliers ORDER BY code"))
    }

    fn update_supplier<'a>(
        &'a self,
        code: &'a str,
        change: &'a mut (dyn FnMut(&mut Supplier) + Send),
    ) -> StoreFuture<'a, Option<Supplier>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let Some(row) = sqlx::query("SELECT record FROM suppliers WHERE code = $1 FOR UPDATE")
                .bind(code)
                .fetch_optional(&mut *tx)
                .await
                .map_err(classify)?
            else {
                return Ok(None);
            };
            let mut supplier: Supplier = record(&row, code)?;
            change(&mut supplier);
            sqlx::query("UPDATE suppliers SET record = $2 WHERE code = $1")
                .bind(code)
                .bind(Json(&supplier))
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            tx.commit().await.map_err(classify)?;
            Ok(Some(supplier))
        })
    }

    fn import_counts<'a>(&'a self, code: &'a str) -> StoreFuture<'a, ImportCounts> {
        self.bounded(async move {
            let rows = sqlx::query(
                "SELECT state, count(*) AS count FROM import_processes WHERE supplier = $1 \
                 GROUP BY state",
            )
            .bind(code)
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?;
            let mut counts = ImportCounts::default();
            for state in ImportState::ALL {
                counts.0.insert(state, 0);
            }
            for row in rows {
                let state: String = row.try_get("state").map_err(classify)?;
                let count: i64 = row.try_get("count").map_err(classify)?;
                if let Some(state) = ImportState::parse(&state) {
                    counts
                        .0
                        .insert(state, u64::try_from(count).unwrap_or_default());
                }
            }
            Ok(counts)
        })
    }

    fn create_team<'a>(&'a self, team: &'a OperationsTeam) -> StoreFuture<'a, bool> {
        self.bounded(self.insert_new(
            "INSERT INTO operations_teams (name, record) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &team.name,
            team,
        ))
    }

    fn team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        self.bounded(self.one("SELECT record FROM operations_teams WHERE name = $1", name))
    }

    fn teams(&self) -> StoreFuture<'_, Vec<OperationsTeam>> {
        self.bounded(self.all("SELECT record FROM operations_teams ORDER BY name"))
    }

    fn delete_team<'a>(&'a self, name: &'a str) -> StoreFuture<'a, Option<OperationsTeam>> {
        self.bounded(async move {
            self.health.check()?;
            sqlx::query("DELETE FROM operations_teams WHERE name = $1 RETURNING record")
                .bind(name)
                .fetch_optional(&self.pool)
                .await
                .map_err(classify)?
                .map(|row| record(&row, name))
                .transpose()
        })
    }

    fn insert_api_key<'a>(&'a self, key: &'a ApiKeyRecord) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            self.health.check()?;
            sqlx::query(
                "INSERT INTO api_keys (id, key_digest, revoked_at, record) VALUES ($1, $2, $3, $4)",
            )
            .bind(&key.id)
            .bind(&key.key_digest)
            .bind(key.revoked_at)
            .bind(Json(key))
            .execute(&self.pool)
            .await
            .map_err(classify)?;
            Ok(())
        })
    }

    fn api_key<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.bounded(self.one("SELECT record FROM api_keys WHERE id = $1", id))
    }

    fn api_key_by_digest<'a>(&'a self, digest: &'a str) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.bounded(self.one(
            "SELECT record FROM api_keys WHERE key_digest = $1 AND revoked_at IS NULL",
            digest,
        ))
    }

    fn revoke_api_key<'a>(
        &'a self,
        id: &'a str,
        at: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<ApiKeyRecord>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let Some(row) = sqlx::query("SELECT record FROM api_keys WHERE id = $1 FOR UPDATE")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(classify)?
            else {
                return Ok(None);
            };
            let mut key: ApiKeyRecord = record(&row, id)?;
            key.revoked_at.get_or_insert(at);
            sqlx::query("UPDATE api_keys SET revoked_at = $2, record = $3 WHERE id = $1")
                .bind(id)
                .bind(key.revoked_at)
                .bind(Json(&key))
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            tx.commit().await.map_err(classify)?;
            Ok(Some(key))
        })
    }

    fn import_process<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportProcess>> {
        self.bounded(async move {
            sqlx::query("SELECT record FROM import_processes WHERE supplier = $1 AND external = $2")
                .bind(supplier)
                .bind(external)
                .fetch_optional(&self.pool)
                .await
                .map_err(classify)?
                .map(|row| record(&row, external))
                .transpose()
        })
    }

    fn change_import<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<ImportChange, DomainError>> {
        // Each try is bounded on its own ([`Self::import_change`]).
        Box::pin(self.import_change(supplier, external, decide))
    }

    fn change_imports<'a>(
        &'a self,
        supplier: &'a str,
        externals: &'a [String],
        decide: &'a mut DecideImport<'a>,
    ) -> BoxFuture<'a, Result<Vec<Result<ImportChange, DomainError>>, StoreError>> {
        // Each import's try is bounded on its own: a batch may take longer than one.
        Box::pin(async move {
            self.health.check()?;
            let mut outcomes = Vec::with_capacity(externals.len());
            for external in externals {
                outcomes.push(self.import_change(supplier, external, &mut *decide).await);
            }
            Ok(outcomes)
        })
    }

    fn import_processes(&self, supplier: &str, after: Option<&str>) -> ImportStream {
        self.import_range(supplier, after, PROCESSES_PAGE, process)
    }

    fn import_listing<'a>(
        &'a self,
        supplier: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<ImportListing>> {
        self.bounded(async move {
            sqlx::query(concat!(
                "SELECT ",
                listing_columns!(),
                " FROM import_processes WHERE supplier = $1 AND external = $2"
            ))
            .bind(supplier)
            .bind(external)
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?
            .map(|row| listing(&row))
            .transpose()
        })
    }

    fn supplier_and_listing<'a>(
        &'a self,
        code: &'a str,
        external: &'a str,
    ) -> StoreFuture<'a, Option<(Supplier, Option<ImportListing>)>> {
        self.bounded(async move {
            // One round trip for both; the listing's columns are null when it has no process.
            let Some(row) = sqlx::query(concat!(
                "SELECT suppliers.record, ",
                listing_columns!(),
                " FROM suppliers LEFT JOIN import_processes",
                " ON import_processes.supplier = suppliers.code AND external = $2",
                " WHERE suppliers.code = $1"
            ))
            .bind(code)
            .bind(external)
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?
            else {
                return Ok(None);
            };
            let supplier = record(&row, code)?;
            let listed: Option<String> = row.try_get("external").map_err(classify)?;
            let listing = listed.map(|_| listing(&row)).transpose()?;
            Ok(Some((supplier, listing)))
        })
    }

    fn import_listings(&self, supplier: &str) -> ListingStream {
        self.import_range(supplier, None, LISTINGS_PAGE, listing)
    }

    fn scheduled_migrations(&self) -> StoreFuture<'_, Vec<Due>> {
        self.bounded(async move {
            // The predicate is the partial index's (0004_scheduled.sql).
            let rows = sqlx::query(
                "SELECT supplier, external, record -> 'schedule' -> 'window_start' AS at \
                 FROM import_processes \
                 WHERE jsonb_typeof(record -> 'schedule') = 'object' \
                 AND state IN ('PENDING', 'ERRORED')",
            )
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?;
            rows.iter()
                .map(|row| {
                    let supplier: String = row.try_get("supplier").map_err(classify)?;
                    let external: String = row.try_get("external").map_err(classify)?;
                    let at: Json<Value> = row.try_get("at").map_err(classify)?;
                    Ok(Due {
                        at: decoded(at.0, &external)?,
                        supplier,
                        external,
                    })
                })
                .collect()
        })
    }

    fn account<'a>(&'a self, number: &'a str) -> StoreFuture<'a, Option<PlatformAccount>> {
        self.bounded(self.one("SELECT record FROM accounts WHERE number = $1", number))
    }

    fn new_ids(&self, count: usize) -> StoreFuture<'_, Vec<u64>> {
        self.bounded(account::new_ids(&self.pool, count))
    }

    fn account_unit<'a>(
        &'a self,
        number: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn AccountUnit>, StoreError>> {
        self.bounded(async move {
            let unit: Box<dyn AccountUnit> =
                Box::new(PgAccountUnit::open(self.clone(), number).await?);
            Ok(unit)
        })
    }

    fn account_records<'a>(&'a self, number: &'a str) -> StoreFuture<'a, AccountRecords> {
        self.bounded(account::account_records(&self.pool, number))
    }

    fn meter_points<'a>(&'a self, number: &'a str) -> StoreFuture<'a, Vec<MeterPoint>> {
        self.bounded(account::meter_points(&self.pool, number))
    }

    fn put_plugin<'a>(
        &'a self,
        record: &'a PluginRecord,
        component: &'a [u8],
    ) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let replaced = plugins_changing(&mut tx, &record.supplier).await?;
            sqlx::query(
                "INSERT INTO plugin_components (sha256, component) VALUES ($1, $2) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(&record.sha256)
            .bind(component)
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
            sqlx::query(
                "INSERT INTO plugins (supplier, sha256, record) VALUES ($1, $2, $3) \
                 ON CONFLICT (supplier) DO UPDATE SET sha256 = EXCLUDED.sha256, \
                 record = EXCLUDED.record",
            )
            .bind(&record.supplier)
            .bind(&record.sha256)
            .bind(Json(record))
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
            if let Some(replaced) = replaced {
                remove_component_unless_used(&mut tx, &replaced).await?;
            }
            tx.commit().await.map_err(classify)?;
            Ok(())
        })
    }

    fn configure_plugin<'a>(
        &'a self,
        supplier: &'a str,
        sha256: &'a str,
        config: &'a BTreeMap<String, String>,
    ) -> StoreFuture<'a, Option<PluginRecord>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let Some(mut plugin) = plugins_changing(&mut tx, supplier).await? else {
                return Ok(None);
            };
            if plugin.sha256 != sha256 {
                return Err(StoreError::Conflict);
            }
            plugin.config = config.clone();
            sqlx::query("UPDATE plugins SET record = $2 WHERE supplier = $1")
                .bind(supplier)
                .bind(Json(&plugin))
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            tx.commit().await.map_err(classify)?;
            Ok(Some(plugin))
        })
    }

    fn plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        self.bounded(self.one("SELECT record FROM plugins WHERE supplier = $1", supplier))
    }

    fn plugins(&self) -> StoreFuture<'_, Vec<PluginRecord>> {
        self.bounded(self.all("SELECT record FROM plugins ORDER BY supplier"))
    }

    fn plugin_component<'a>(&'a self, sha256: &'a str) -> StoreFuture<'a, Option<Vec<u8>>> {
        self.bounded(async move {
            sqlx::query_scalar("SELECT component FROM plugin_components WHERE sha256 = $1")
                .bind(sha256)
                .fetch_optional(&self.pool)
                .await
                .map_err(classify)
        })
    }

    fn remove_plugin<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Option<PluginRecord>> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            let removed = plugins_changing(&mut tx, supplier).await?;
            sqlx::query("DELETE FROM plugins WHERE supplier = $1")
                .bind(supplier)
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
            if let Some(removed) = &removed {
                remove_component_unless_used(&mut tx, removed).await?;
            }
            tx.commit().await.map_err(classify)?;
            Ok(removed)
        })
    }

    fn publish_events<'a>(&'a self, events: &'a [Event]) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            self.health.check()?;
            let mut tx = self.pool.begin().await.map_err(classify)?;
            insert_events(&mut tx, events).await?;
            tx.commit().await.map_err(classify)
        })
    }

    fn events_after(&self, after: Option<u64>, limit: usize) -> StoreFuture<'_, Vec<Event>> {
        self.bounded(async move {
            sqlx::query(
                "SELECT seq, record, published_at FROM events WHERE seq > $1 ORDER BY seq LIMIT $2",
            )
            .bind(after.map_or(0, seq_param))
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?
            .iter()
            .map(logged_event)
            .collect()
        })
    }

    fn event_seq<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<u64>> {
        self.bounded(async move {
            let seq: Option<i64> = sqlx::query_scalar("SELECT seq FROM events WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(classify)?;
            Ok(seq.and_then(|seq| u64::try_from(seq).ok()))
        })
    }

    fn outbox_len(&self) -> StoreFuture<'_, usize> {
        self.bounded(async move {
            let count: i64 =
                sqlx::query_scalar("SELECT count(*) FROM events WHERE published_at IS NULL")
                    .fetch_one(&self.pool)
                    .await
                    .map_err(classify)?;
            Ok(usize::try_from(count).unwrap_or_default())
        })
    }

    fn prune_events(&self, made_before: DateTime<Utc>, limit: usize) -> StoreFuture<'_, usize> {
        self.bounded(async move {
            self.health.check()?;
            // The oldest `limit` events by `seq` (the primary key's order), taken while each
            // is due: the first that is not (unpublished, or too new) keeps itself and every
            // one after it. An event with no readable time is not due. The `seq`s go to the
            // delete as one array, which it looks up in the primary key: as `IN (SELECT …)`
            // PostgreSQL planned a hash join over a scan of the whole table.
            let taken = sqlx::query(
                "WITH oldest AS (                      SELECT seq, COALESCE(published_at IS NOT NULL                          AND (record->>'time')::timestamptz < $1, false) AS due                      FROM events ORDER BY seq LIMIT $2),                  prefix AS (                      SELECT seq, bool_and(due) OVER (ORDER BY seq) AS all_due FROM oldest)                  DELETE FROM events WHERE seq = ANY(ARRAY(SELECT seq FROM prefix WHERE all_due))",
            )
            .bind(made_before)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .execute(&self.pool)
            .await
            .map_err(classify)?
            .rows_affected();
            Ok(usize::try_from(taken).unwrap_or(usize::MAX))
        })
    }

    fn secret<'a>(
        &'a self,
        name: &'a str,
        make: &'a mut (dyn FnMut() -> Vec<u8> + Send),
    ) -> StoreFuture<'a, Vec<u8>> {
        self.bounded(async move {
            let existing: Option<Vec<u8>> =
                sqlx::query_scalar("SELECT value FROM secrets WHERE name = $1")
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(classify)?;
            if let Some(existing) = existing {
                return Ok(existing);
            }
            self.health.check()?;
            // The first instance to write it wins; the others read what it wrote.
            let fresh = make();
            sqlx::query("INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(name)
                .bind(&fresh)
                .execute(&self.pool)
                .await
                .map_err(classify)?;
            sqlx::query_scalar("SELECT value FROM secrets WHERE name = $1")
                .bind(name)
                .fetch_one(&self.pool)
                .await
                .map_err(classify)
        })
    }

    fn flush(&self) -> StoreFuture<'static, ()> {
        // Every change is committed, durably, before it returns.
        Box::pin(std::future::ready(Ok(())))
    }

    fn writable(&self) -> Result<(), StoreError> {
        self.health.check()
    }

    fn put_migration<'a>(&'a self, migration: &'a MigrationView) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            sqlx::query(
                "INSERT INTO migrations (supplier, id, record) VALUES ($1, $2, $3) \
                 ON CONFLICT (supplier, id) DO UPDATE SET record = EXCLUDED.record",
            )
            .bind(&migration.supplier)
            .bind(&migration.id)
            .bind(Json(migration))
            .execute(&self.pool)
            .await
            .map_err(classify)?;
            Ok(())
        })
    }

    fn migrations<'a>(&'a self, supplier: &'a str) -> StoreFuture<'a, Vec<MigrationView>> {
        self.bounded(async move {
            sqlx::query("SELECT record FROM migrations WHERE supplier = $1 ORDER BY id")
                .bind(supplier)
                .fetch_all(&self.pool)
                .await
                .map_err(classify)?
                .iter()
                .map(|row| record(row, supplier))
                .collect()
        })
    }

    fn hold_lease<'a>(
        &'a self,
        name: &'a str,
        holder: &'a str,
        ttl: std::time::Duration,
    ) -> StoreFuture<'a, bool> {
        self.bounded(async move {
            // The database's clock decides: instances' clocks may differ.
            let held: Option<String> = sqlx::query_scalar(
                "INSERT INTO leases (name, holder, expires_at)                  VALUES ($1, $2, now() + $3 * interval '1 millisecond')                  ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder,                  expires_at = EXCLUDED.expires_at                  WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < now()                  RETURNING holder",
            )
            .bind(name)
            .bind(holder)
            .bind(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?;
            Ok(held.is_some())
        })
    }

    fn release_lease<'a>(&'a self, name: &'a str, holder: &'a str) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            sqlx::query("DELETE FROM leases WHERE name = $1 AND holder = $2")
                .bind(name)
                .bind(holder)
                .execute(&self.pool)
                .await
                .map_err(classify)?;
            Ok(())
        })
    }
}

impl Outbox for PgStore {
    fn pending_events<'a>(
        &'a self,
        limit: usize,
        skip: &'a HashSet<u64>,
    ) -> StoreFuture<'a, Vec<PendingEvent>> {
        self.bounded(async move {
            let skipped: Vec<i64> = skip.iter().copied().map(seq_param).collect();
            let rows = sqlx::query(
                "SELECT seq, record, published_at FROM events \
                 WHERE published_at IS NULL AND NOT (seq = ANY($1)) ORDER BY seq LIMIT $2",
            )
            .bind(&skipped)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?;
            rows.iter()
                .map(|row| {
                    let event = logged_event(row)?;
                    Ok(PendingEvent {
                        seq: event.seq,
                        record: StreamRecord::encode(&event),
                    })
                })
                .collect()
        })
    }

    fn mark_published<'a>(&'a self, seqs: &'a [u64], at: DateTime<Utc>) -> StoreFuture<'a, ()> {
        self.bounded(async move {
            let seqs: Vec<i64> = seqs.iter().copied().map(seq_param).collect();
            sqlx::query("UPDATE events SET published_at = $2 WHERE seq = ANY($1)")
                .bind(&seqs)
                .bind(at)
                .execute(&self.pool)
                .await
                .map_err(classify)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A database of its own for one test, on the PostgreSQL of `FERRY_TEST_DATABASE_URL`
    /// (default: this machine's, trust auth); dropped with the backend.
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
            let admin_url = std::env::var("FERRY_TEST_DATABASE_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
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
