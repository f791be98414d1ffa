//! An account's records on PostgreSQL, and the units of work that change them.
//!
//! A unit is one SQL transaction. It opens by locking the account's summary row (created on
//! first use), so two units of one account never interleave, on this instance or another.
//! Like sled's units it buffers its writes (its reads see them) and writes them at commit, a
//! few statements for the whole change (`UNNEST` of arrays for a batch's entries and
//! transactions), with its events; the constraints (one transaction id per account, one row
//! per note dedupe key) stand behind the checks the unit makes first.

use super::postgres_store::{
    PgStore, classify, decoded, insert_events, is_unique_violation, record,
};
use crate::domain::events::Event;
use crate::domain::ledger::{AccountSummary, LedgerEntry, Transaction};
use crate::domain::meter_points::MeterPoint;
use crate::domain::notes::Note;
use crate::domain::payment_instruction::PaymentInstruction;
use crate::domain::statements::Statement;
use crate::domain::storage::{AccountRecords, AccountUnit, StoreError};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use sqlx::postgres::PgPool;
use sqlx::types::Json;
use sqlx::{Postgres, Row};
use std::collections::{BTreeMap, HashMap, HashSet};

pub(super) struct PgAccountUnit {
    store: PgStore,
    number: String,
    tx: sqlx::Transaction<'static, Postgres>,
    summary: AccountSummary,
    summary_changed: bool,
    entries: Vec<LedgerEntry>,
    transactions: Vec<Transaction>,
    transaction_ids: HashMap<String, usize>,
    notes: Vec<Note>,
    note_keys: BTreeMap<String, Vec<DateTime<Utc>>>,
    statements: Vec<Statement>,
    statement_ids: HashSet<String>,
    instructions: BTreeMap<(String, String), PaymentInstruction>,
    meter_points: BTreeMap<String, MeterPoint>,
    events: Vec<Event>,
    /// The unit's block of ids, `[next, end)`, taken once it held the lock.
    ids: Option<(u64, u64)>,
}

/// How many ids one `nextval` of `record_id_blocks` stands for.
const ID_BLOCK: u64 = 1000;

impl PgAccountUnit {
    pub(super) async fn open(store: PgStore, number: &str) -> Result<Self, StoreError> {
        let mut tx = store.pool.begin().await.map_err(classify)?;
        sqlx::query("INSERT INTO account_summaries (account) VALUES ($1) ON CONFLICT DO NOTHING")
            .bind(number)
            .execute(&mut *tx)
            .await
            .map_err(classify)?;
        let row = sqlx::query("SELECT record FROM account_summaries WHERE account = $1 FOR UPDATE")
            .bind(number)
            .fetch_one(&mut *tx)
            .await
            .map_err(classify)?;
        let summary = summary_of(row.try_get("record").map_err(classify)?, number)?;
        Ok(Self {
            store,
            number: number.to_owned(),
            tx,
            summary,
            summary_changed: false,
            entries: Vec::new(),
            transactions: Vec::new(),
            transaction_ids: HashMap::new(),
            notes: Vec::new(),
            note_keys: BTreeMap::new(),
            statements: Vec::new(),
            statement_ids: HashSet::new(),
            instructions: BTreeMap::new(),
            meter_points: BTreeMap::new(),
            events: Vec::new(),
            ids: None,
        })
    }

    /// The `record` of the one row `sql` (bound to the account and `keys`) selects.
    async fn kept<T: DeserializeOwned>(
        &mut self,
        sql: &'static str,
        keys: &[&str],
    ) -> Result<Option<T>, StoreError> {
        let mut query = sqlx::query(sql).bind(&self.number);
        for key in keys {
            query = query.bind(*key);
        }
        query
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(classify)?
            .map(|row| record(&row, &keys.join("/")))
            .transpose()
    }

    async fn write(mut self) -> Result<(), StoreError> {
        let number = self.number.clone();
        let tx = &mut self.tx;
        if self.summary_changed {
            sqlx::query(
                "UPDATE account_summaries SET balance = $2::numeric, record = $3 WHERE account = $1",
            )
            .bind(&number)
            .bind(self.summary.balance.to_string())
            .bind(Json(&self.summary))
            .execute(&mut **tx)
            .await
            .map_err(classify)?;
        }
        if !self.entries.is_empty() {
            let ids: Vec<i64> = self
                .entries
                .iter()
                .map(|entry| id_param(entry.id))
                .collect();
            let amounts: Vec<String> = self.entries.iter().map(|e| e.amount.to_string()).collect();
            let balances: Vec<String> = self
                .entries
                .iter()
                .map(|e| e.balance_after.to_string())
                .collect();
            let records: Vec<Json<&LedgerEntry>> = self.entries.iter().map(Json).collect();
            sqlx::query(
                "INSERT INTO ledger_entries (account, id, amount, balance_after, record) \
                 SELECT $1, id, amount::numeric, balance::numeric, record \
                 FROM UNNEST($2::bigint[], $3::text[], $4::text[], $5::jsonb[]) \
                 AS entry (id, amount, balance, record)",
            )
            .bind(&number)
            .bind(&ids)
            .bind(&amounts)
            .bind(&balances)
            .bind(&records)
            .execute(&mut **tx)
            .await
            .map_err(classify)?;
        }
        if !self.transactions.is_empty() {
            let ids: Vec<&str> = self
                .transactions
                .iter()
                .map(|t| t.transaction_id.as_str())
                .collect();
            let entries: Vec<Option<i64>> = self
                .transactions
                .iter()
                .map(|t| t.ledger_entry_id.map(id_param))
                .collect();
            let records: Vec<Json<&Transaction>> = self.transactions.iter().map(Json).collect();
            sqlx::query(
                "INSERT INTO transactions (account, transaction_id, ledger_entry_id, record) \
                 SELECT $1, id, entry, record FROM UNNEST($2::text[], $3::bigint[], $4::jsonb[]) \
                 AS kept (id, entry, record)",
            )
            .bind(&number)
            .bind(&ids)
            .bind(&entries)
            .bind(&records)
            .execute(&mut **tx)
            .await
            .map_err(|error| duplicate_or(error, "transaction", &number))?;
        }
        if !self.notes.is_empty() {
            let ids: Vec<i64> = self.notes.iter().map(|note| id_param(note.id)).collect();
            let records: Vec<Json<&Note>> = self.notes.iter().map(Json).collect();
            sqlx::query(
                "INSERT INTO notes (account, id, record) \
                 SELECT $1, id, record FROM UNNEST($2::bigint[], $3::jsonb[]) AS note (id, record)",
            )
            .bind(&number)
            .bind(&ids)
            .bind(&records)
            .execute(&mut **tx)
            .await
            .map_err(classify)?;
        }
        for (key, dates) in &self.note_keys {
            sqlx::query(
                "INSERT INTO note_keys (account, dedupe_key, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (account, dedupe_key) DO UPDATE SET created_at = EXCLUDED.created_at",
            )
            .bind(&number)
            .bind(key.as_bytes())
            .bind(Json(dates))
            .execute(&mut **tx)
            .await
            .map_err(classify)?;
        }
        for statement in &self.statements {
            sqlx::query(
                "INSERT INTO statements (account, statement_id, record) VALUES ($1, $2, $3)",
            )
            .bind(&number)
            .bind(&statement.statement_id)
            .bind(Json(statement))
            .execute(&mut **tx)
            .await
            .map_err(|error| {
                duplicate_or(error, "historical statement", &statement.statement_id)
            })?;
        }
        for ((vendor, reference), instruction) in &self.instructions {
            sqlx::query(
                "INSERT INTO payment_instructions (account, vendor, reference, record) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(&number)
            .bind(vendor)
            .bind(reference)
            .bind(Json(instruction))
            .execute(&mut **tx)
            .await
            .map_err(|error| duplicate_or(error, "payment instruction", reference))?;
        }
        for (mpxn, point) in &self.meter_points {
            sqlx::query(
                "INSERT INTO meter_points (account, mpxn, record) VALUES ($1, $2, $3) \
                 ON CONFLICT (account, mpxn) DO UPDATE SET record = EXCLUDED.record",
            )
            .bind(&number)
            .bind(mpxn)
            .bind(Json(point))
            .execute(&mut **tx)
            .await
            .map_err(classify)?;
        }
        insert_events(tx, &self.events).await?;
        self.tx.commit().await.map_err(classify)
    }

    fn changes_nothing(&self) -> bool {
        !self.summary_changed
            && self.entries.is_empty()
            && self.transactions.is_empty()
            && self.notes.is_empty()
            && self.note_keys.is_empty()
            && self.statements.is_empty()
            && self.instructions.is_empty()
            && self.meter_points.is_empty()
            && self.events.is_empty()
    }
}

fn id_param(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(i64::MAX)
}

/// A unique violation is the insert of a record that is there already.
fn duplicate_or(error: sqlx::Error, what: &'static str, key: &str) -> StoreError {
    if is_unique_violation(&error) {
        StoreError::Duplicate {
            what,
            key: key.to_owned(),
        }
    } else {
        classify(error)
    }
}

impl AccountUnit for PgAccountUnit {
    fn summary(&mut self) -> BoxFuture<'_, Result<AccountSummary, StoreError>> {
        Box::pin(std::future::ready(Ok(self.summary.clone())))
    }

    fn set_summary(&mut self, summary: &AccountSummary) -> Result<(), StoreError> {
        self.summary = summary.clone();
        self.summary_changed = true;
        Ok(())
    }

    fn transaction<'a>(
        &'a mut self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Transaction>, StoreError>> {
        Box::pin(async move {
            if let Some(&index) = self.transaction_ids.get(id) {
                return Ok(self.transactions.get(index).cloned());
            }
            self.kept(
                "SELECT record FROM transactions WHERE account = $1 AND transaction_id = $2",
                &[id],
            )
            .await
        })
    }

    fn add_transaction<'a>(
        &'a mut self,
        transaction: &'a Transaction,
        entry: &'a LedgerEntry,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let id = transaction.transaction_id.as_str();
            if self.transaction(id).await?.is_some() {
                return Err(StoreError::Duplicate {
                    what: "transaction",
                    key: id.to_owned(),
                });
            }
            self.transaction_ids
                .insert(id.to_owned(), self.transactions.len());
            self.transactions.push(transaction.clone());
            self.entries.push(entry.clone());
            Ok(())
        })
    }

    fn note_dates<'a>(
        &'a mut self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Vec<DateTime<Utc>>, StoreError>> {
        Box::pin(async move {
            if let Some(dates) = self.note_keys.get(key) {
                return Ok(dates.clone());
            }
            let row = sqlx::query(
                "SELECT created_at FROM note_keys WHERE account = $1 AND dedupe_key = $2",
            )
            .bind(&self.number)
            .bind(key.as_bytes())
            .fetch_optional(&mut *self.tx)
            .await
            .map_err(classify)?;
            let Some(row) = row else {
                return Ok(Vec::new());
            };
            decoded(row.try_get("created_at").map_err(classify)?, key)
        })
    }

    fn add_note(
        &mut self,
        note: &Note,
        key: &str,
        dates: &[DateTime<Utc>],
    ) -> Result<(), StoreError> {
        self.notes.push(note.clone());
        self.note_keys.insert(key.to_owned(), dates.to_vec());
        Ok(())
    }

    fn has_statement<'a>(&'a mut self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            if self.statement_ids.contains(id) {
                return Ok(true);
            }
            let kept: Option<Statement> = self
                .kept(
                    "SELECT record FROM statements WHERE account = $1 AND statement_id = $2",
                    &[id],
                )
                .await?;
            Ok(kept.is_some())
        })
    }

    fn add_statement<'a>(
        &'a mut self,
        statement: &'a Statement,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if self.has_statement(&statement.statement_id).await? {
                return Err(StoreError::Duplicate {
                    what: "historical statement",
                    key: statement.statement_id.clone(),
                });
            }
            self.statement_ids.insert(statement.statement_id.clone());
            self.statements.push(statement.clone());
            Ok(())
        })
    }

    fn payment_instruction<'a>(
        &'a mut self,
        vendor: &'a str,
        reference: &'a str,
    ) -> BoxFuture<'a, Result<Option<PaymentInstruction>, StoreError>> {
        Box::pin(async move {
            let key = (vendor.to_owned(), reference.to_owned());
            if let Some(instruction) = self.instructions.get(&key) {
                return Ok(Some(instruction.clone()));
            }
            self.kept(
                "SELECT record FROM payment_instructions \
                 WHERE account = $1 AND vendor = $2 AND reference = $3",
                &[vendor, reference],
            )
            .await
        })
    }

    fn add_payment_instruction<'a>(
        &'a mut self,
        instruction: &'a PaymentInstruction,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let (vendor, reference) = (&instruction.vendor, &instruction.reference);
            if self.payment_instruction(vendor, reference).await?.is_some() {
                return Err(StoreError::Duplicate {
                    what: "payment instruction",
                    key: format!("{vendor}/{reference}"),
                });
            }
            self.instructions
                .insert((vendor.clone(), reference.clone()), instruction.clone());
            Ok(())
        })
    }

    fn meter_point<'a>(
        &'a mut self,
        mpxn: &'a str,
    ) -> BoxFuture<'a, Result<Option<MeterPoint>, StoreError>> {
        Box::pin(async move {
            if let Some(point) = self.meter_points.get(mpxn) {
                return Ok(Some(point.clone()));
            }
            self.kept(
                "SELECT record FROM meter_points WHERE account = $1 AND mpxn = $2",
                &[mpxn],
            )
            .await
        })
    }

    fn set_meter_point(&mut self, point: &MeterPoint) -> Result<(), StoreError> {
        self.meter_points.insert(point.mpxn.clone(), point.clone());
        Ok(())
    }

    fn next_id(&mut self) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            if let Some((next, end)) = self.ids.as_mut()
                && *next < *end
            {
                *next += 1;
                return Ok(*next - 1);
            }
            let block: i64 = sqlx::query_scalar("SELECT nextval('record_id_blocks')")
                .fetch_one(&mut *self.tx)
                .await
                .map_err(classify)?;
            let start = u64::try_from(block).unwrap_or_default() * ID_BLOCK;
            self.ids = Some((start + 1, start + ID_BLOCK));
            Ok(start)
        })
    }

    fn enqueue(&mut self, event: Event) -> Result<(), StoreError> {
        self.events.push(event);
        Ok(())
    }

    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), StoreError>> {
        Box::pin(async move {
            let unit = *self;
            if unit.changes_nothing() {
                return Ok(());
            }
            crate::domain::storage::Store::writable(&unit.store)?;
            unit.write().await
        })
    }
}

/// An account's summary as stored (none: nothing posted yet, the default).
fn summary_of(
    stored: Option<serde_json::Value>,
    number: &str,
) -> Result<AccountSummary, StoreError> {
    stored.map_or_else(
        || Ok(AccountSummary::default()),
        |value| decoded(value, number),
    )
}

/// Every record of one kind of account `number`, in key order.
async fn records<T: DeserializeOwned>(
    pool: &PgPool,
    sql: &'static str,
    number: &str,
) -> Result<Vec<T>, StoreError> {
    sqlx::query(sql)
        .bind(number)
        .fetch_all(pool)
        .await
        .map_err(classify)?
        .iter()
        .map(|row| record(row, number))
        .collect()
}

pub(super) async fn account_records(
    pool: &PgPool,
    number: &str,
) -> Result<AccountRecords, StoreError> {
    let summary: Option<Option<serde_json::Value>> =
        sqlx::query_scalar("SELECT record FROM account_summaries WHERE account = $1")
            .bind(number)
            .fetch_optional(pool)
            .await
            .map_err(classify)?;
    let summary = summary_of(summary.flatten(), number)?;
    Ok(AccountRecords {
        summary,
        notes: records(
            pool,
            "SELECT record FROM notes WHERE account = $1 ORDER BY id",
            number,
        )
        .await?,
        transactions: records(
            pool,
            "SELECT record FROM transactions WHERE account = $1 ORDER BY ledger_entry_id",
            number,
        )
        .await?,
        ledger_entries: records(
            pool,
            "SELECT record FROM ledger_entries WHERE account = $1 ORDER BY id",
            number,
        )
        .await?,
        statements: records(
            pool,
            "SELECT record FROM statements WHERE account = $1 ORDER BY statement_id",
            number,
        )
        .await?,
        payment_instructions: records(
            pool,
            "SELECT record FROM payment_instructions WHERE account = $1 \
             ORDER BY vendor, reference",
            number,
        )
        .await?,
        meter_points: meter_points(pool, number).await?,
    })
}

pub(super) async fn meter_points(
    pool: &PgPool,
    number: &str,
) -> Result<Vec<MeterPoint>, StoreError> {
    records(
        pool,
        "SELECT record FROM meter_points WHERE account = $1 ORDER BY mpxn",
        number,
    )
    .await
}
