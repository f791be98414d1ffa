//! Import processes on PostgreSQL ([`ImportStore`]): a row each, with the columns the lists
//! read beside the record, so that a list never reads the account documents. An import change
//! is one transaction of one statement: the new account and its opening records, the process
//! and its events, written only if the account's number was still free.

use super::accounts::RecordWrites;
use super::{BoxStream, Change, PgStore, bounded, classify, decoded, is_unique_violation, record};
use crate::domain::campaign::Counts;
use crate::domain::error::DomainError;
use crate::domain::import_process::{ImportListing, ImportProcess};
use crate::domain::schedules::Due;
use crate::domain::storage::{
    DecideImport, ImportChange, ImportStore, ImportStream, ListingStream, StoreError, StoreFuture,
};
use crate::domain::supplier::Supplier;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::{PgPool, PgRow};
use sqlx::types::Json;
use std::time::Duration;

/// How many processes a page of a list reads.
/// Rows of a list read at a time.
const LIST_PAGE: i64 = 1000;

/// How many account numbers a migration tries before it gives up
/// ([`StoreError::NumbersExhausted`]).
/// Attempts of an import change whose new platform account number was taken meanwhile.
const NUMBER_ATTEMPTS: usize = 16;

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

impl ImportStore for PgStore {
    fn supplier_counts<'a>(&'a self, code: &'a str) -> StoreFuture<'a, Counts> {
        self.bounded(async move {
            let rows = sqlx::query(
                "SELECT name, sum(value)::bigint AS value FROM supplier_counts \
                 WHERE supplier = $1 GROUP BY name",
            )
            .bind(code)
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?;
            let mut counts = Counts::default();
            for row in rows {
                let name: String = row.try_get("name").map_err(classify)?;
                let value: i64 = row.try_get("value").map_err(classify)?;
                counts.add(name, value);
            }
            Ok(counts)
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

    fn import_listings(&self, supplier: &str, after: Option<&str>) -> ListingStream {
        self.import_range(supplier, after, LISTINGS_PAGE, listing)
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
}

impl PgStore {
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
        write.counts(supplier, &change.counts_from(current.as_ref()), guard)?;
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
}
