//! The event log and its outbox on PostgreSQL ([`EventLog`], [`Outbox`]): a row per event,
//! numbered by a sequence as it is inserted, with when the relay published it; what waits is
//! every row not yet published.

use super::{PgStore, classify, insert_events, record};
use crate::domain::events::Event;
use crate::domain::storage::{EventLog, Outbox, PendingEvent, StoreError, StoreFuture};
use crate::events::stream_record::StreamRecord;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::postgres::PgRow;
use std::collections::HashSet;

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

impl EventLog for PgStore {
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
