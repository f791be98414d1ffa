//! An account's records on PostgreSQL, and the units of work that change them.
//!
//! A unit is one SQL transaction. It opens by locking the account's summary row (created on
//! first use), so two units of one account never interleave, on this instance or another, and
//! takes its block of ids in the same statement. Like sled's units it buffers its writes (its
//! reads see them) and writes them at commit in one statement, whatever the change holds
//! (`UNNEST` of arrays for each kind of record, its events with them); the constraints (one
//! transaction id per account, one row per note dedupe key) stand behind the checks the unit
//! makes first. A note is so `BEGIN`, the lock, its dedupe key's read, the write and `COMMIT`:
//! each statement is a round trip, and on PostgreSQL a round trip is most of what a statement
//! costs, on both sides.

use super::{Change, PgStore, bounded, classify, decoded, is_unique_violation, record};
use crate::domain::campaign::Counts;
use crate::domain::events::Event;
use crate::domain::import_process::PlatformAccount;
use crate::domain::ledger::{AccountSummary, LedgerEntry, Transaction};
use crate::domain::meter_points::MeterPoint;
use crate::domain::notes::Note;
use crate::domain::payment_instruction::PaymentInstruction;
use crate::domain::statements::Statement;
use crate::domain::storage::{
    AccountOpening, AccountRecords, AccountStore, AccountUnit, StoreError, StoreFuture,
};
use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use sqlx::postgres::{PgPool, PgRow};
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
    /// How the change moves its supplier's counters.
    counts: Option<(String, Counts)>,
    /// What is left of the unit's block of ids, `[next, end)`, taken once it held the lock.
    ids: (u64, u64),
}

/// How many ids one `nextval` of `record_id_blocks` stands for.
const ID_BLOCK: u64 = 1000;

impl PgAccountUnit {
    pub(super) async fn open(store: PgStore, number: &str) -> Result<Self, StoreError> {
        let mut tx = store.pool.begin().await.map_err(classify)?;
        let row = match lock_summary(&mut tx, number).await? {
            Some(row) => row,
            None => {
                // The account's first unit: its row, then the lock (another instance may have
                // made the row meanwhile; the insert then waits for it and does nothing).
                sqlx::query(
                    "INSERT INTO account_summaries (account) VALUES ($1) ON CONFLICT DO NOTHING",
                )
                .bind(number)
                .execute(&mut *tx)
                .await
                .map_err(classify)?;
                lock_summary(&mut tx, number).await?.ok_or_else(|| {
                    StoreError::Backend(
                        format!("account {number}'s summary row is missing once inserted").into(),
                    )
                })?
            }
        };
        let summary = summary_of(row.try_get("record").map_err(classify)?, number)?;
        let block: i64 = row.try_get("block").map_err(classify)?;
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
            counts: None,
            ids: id_block(block),
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

    /// Writes the unit's change in one statement, then commits: one round trip for the
    /// change, whatever it holds ([`Change`]).
    async fn write(mut self) -> Result<(), StoreError> {
        let mut change = Change::default();
        let account = change.bind(&self.number)?;
        RecordWrites {
            summary: self
                .summary_changed
                .then_some(SummaryWrite::Update(&self.summary)),
            entries: &self.entries,
            transactions: &self.transactions,
            notes: &self.notes,
            note_keys: &self.note_keys,
            statements: &self.statements,
            instructions: self.instructions.values().collect(),
            meter_points: self.meter_points.values().collect(),
        }
        .add_to(&mut change, &account, "")?;
        change.events(&self.events, "")?;
        if let Some((supplier, counts)) = &self.counts {
            change.counts(supplier, counts, "")?;
        }
        let (sql, arguments) = change.statement("SELECT 1");
        sqlx::query_with(&sql, arguments)
            .execute(&mut *self.tx)
            .await
            .map_err(|error| self.duplicate_or(error))?;
        self.tx.commit().await.map_err(classify)
    }

    /// The duplicate a unique violation of the unit's write stands for: a record the unit
    /// checked for under the account's lock, so only a backstop (the key named is the one
    /// record of its kind the unit added, or the account's when it added several).
    fn duplicate_or(&self, error: sqlx::Error) -> StoreError {
        let constraint = match &error {
            sqlx::Error::Database(database) if is_unique_violation(&error) => {
                database.constraint().unwrap_or_default().to_owned()
            }
            _ => return classify(error),
        };
        let sole = |keys: Vec<&str>| match keys.as_slice() {
            [key] => (*key).to_owned(),
            _ => self.number.clone(),
        };
        let (what, key) = match constraint.as_str() {
            "transactions_pkey" => ("transaction", self.number.clone()),
            "statements_pkey" => (
                "historical statement",
                sole(
                    self.statements
                        .iter()
                        .map(|s| s.statement_id.as_str())
                        .collect(),
                ),
            ),
            "payment_instructions_pkey" => (
                "payment instruction",
                sole(self.instructions.keys().map(|(_, r)| r.as_str()).collect()),
            ),
            _ => return classify(error),
        };
        StoreError::Duplicate { what, key }
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
            && self
                .counts
                .as_ref()
                .is_none_or(|(_, counts)| counts.is_empty())
    }
}

/// The records a change adds to one account (or sets on it), whoever made them: a unit of
/// work, or a migration opening the account ([`AccountOpening`]). Each kind is one part of the
/// change's statement (`UNNEST` of arrays), so a change is one round trip whatever it holds.
pub(super) struct RecordWrites<'a> {
    pub(super) summary: Option<SummaryWrite<'a>>,
    pub(super) entries: &'a [LedgerEntry],
    pub(super) transactions: &'a [Transaction],
    pub(super) notes: &'a [Note],
    pub(super) note_keys: &'a BTreeMap<String, Vec<DateTime<Utc>>>,
    pub(super) statements: &'a [Statement],
    pub(super) instructions: Vec<&'a PaymentInstruction>,
    pub(super) meter_points: Vec<&'a MeterPoint>,
}

/// How an account's summary row is written: set on the row its units lock, or made with the
/// account it opens.
pub(super) enum SummaryWrite<'a> {
    Update(&'a AccountSummary),
    Insert(&'a AccountSummary),
}

impl<'a> RecordWrites<'a> {
    /// The records a migration opens a new account with.
    pub(super) fn opening(opening: &'a AccountOpening) -> Self {
        Self {
            summary: Some(SummaryWrite::Insert(&opening.summary)),
            entries: &opening.ledger_entries,
            transactions: &opening.transactions,
            notes: &opening.notes,
            note_keys: &opening.note_keys,
            statements: &opening.statements,
            instructions: opening.payment_instructions.iter().collect(),
            meter_points: Vec::new(),
        }
    }

    /// Adds the parts that write these records of the account bound at `account` to `change`,
    /// each written only where `guard` (a `WHERE` clause, or nothing) holds.
    pub(super) fn add_to(
        &self,
        change: &mut Change,
        account: &str,
        guard: &str,
    ) -> Result<(), StoreError> {
        match self.summary {
            Some(SummaryWrite::Update(summary)) => {
                let balance = change.bind(summary.balance.to_string())?;
                let record = change.bind(Json(summary))?;
                change.part(
                    "summary_set",
                    format!(
                        "UPDATE account_summaries SET balance = {balance}::numeric, \
                         record = {record} WHERE account = {account}"
                    ),
                );
            }
            Some(SummaryWrite::Insert(summary)) => {
                let balance = change.bind(summary.balance.to_string())?;
                let record = change.bind(Json(summary))?;
                change.part(
                    "summary_set",
                    format!(
                        "INSERT INTO account_summaries (account, balance, record) \
                         SELECT {account}, {balance}::numeric, {record} {guard}"
                    ),
                );
            }
            None => {}
        }
        if !self.entries.is_empty() {
            let ids = change.bind_array(self.entries.iter().map(|e| id_param(e.id)))?;
            let amounts = change.bind_array(self.entries.iter().map(|e| e.amount.to_string()))?;
            let balances =
                change.bind_array(self.entries.iter().map(|e| e.balance_after.to_string()))?;
            let records = change.bind_array(self.entries.iter().map(Json))?;
            change.part(
                "ledger_entries_added",
                format!(
                    "INSERT INTO ledger_entries (account, id, amount, balance_after, record) \
                     SELECT {account}, id, amount::numeric, balance::numeric, record \
                     FROM UNNEST({ids}::bigint[], {amounts}::text[], {balances}::text[], \
                     {records}::jsonb[]) AS entry (id, amount, balance, record) {guard}"
                ),
            );
        }
        if !self.transactions.is_empty() {
            let ids =
                change.bind_array(self.transactions.iter().map(|t| t.transaction_id.as_str()))?;
            let entries = change.bind_array(
                self.transactions
                    .iter()
                    .map(|t| t.ledger_entry_id.map(id_param)),
            )?;
            let records = change.bind_array(self.transactions.iter().map(Json))?;
            change.part(
                "transactions_added",
                format!(
                    "INSERT INTO transactions (account, transaction_id, ledger_entry_id, record) \
                     SELECT {account}, id, entry, record \
                     FROM UNNEST({ids}::text[], {entries}::bigint[], {records}::jsonb[]) \
                     AS kept (id, entry, record) {guard}"
                ),
            );
        }
        if !self.notes.is_empty() {
            let ids = change.bind_array(self.notes.iter().map(|n| id_param(n.id)))?;
            let records = change.bind_array(self.notes.iter().map(Json))?;
            change.part(
                "notes_added",
                format!(
                    "INSERT INTO notes (account, id, record) SELECT {account}, id, record \
                     FROM UNNEST({ids}::bigint[], {records}::jsonb[]) AS note (id, record) \
                     {guard}"
                ),
            );
        }
        if !self.note_keys.is_empty() {
            let keys = change.bind_array(self.note_keys.keys().map(|key| key.as_bytes()))?;
            let dates = change.bind_array(self.note_keys.values().map(Json))?;
            change.part(
                "note_keys_set",
                format!(
                    "INSERT INTO note_keys (account, dedupe_key, created_at) \
                     SELECT {account}, dedupe_key, created_at \
                     FROM UNNEST({keys}::bytea[], {dates}::jsonb[]) AS kept (dedupe_key, created_at) \
                     {guard} \
                     ON CONFLICT (account, dedupe_key) DO UPDATE SET created_at = EXCLUDED.created_at"
                ),
            );
        }
        if !self.statements.is_empty() {
            let ids = change.bind_array(self.statements.iter().map(|s| s.statement_id.as_str()))?;
            let records = change.bind_array(self.statements.iter().map(Json))?;
            change.part(
                "statements_added",
                format!(
                    "INSERT INTO statements (account, statement_id, record) \
                     SELECT {account}, id, record \
                     FROM UNNEST({ids}::text[], {records}::jsonb[]) AS kept (id, record) {guard}"
                ),
            );
        }
        if !self.instructions.is_empty() {
            let vendors = change.bind_array(self.instructions.iter().map(|i| i.vendor.as_str()))?;
            let references =
                change.bind_array(self.instructions.iter().map(|i| i.reference.as_str()))?;
            let records = change.bind_array(self.instructions.iter().map(Json))?;
            change.part(
                "payment_instructions_added",
                format!(
                    "INSERT INTO payment_instructions (account, vendor, reference, record) \
                     SELECT {account}, vendor, reference, record \
                     FROM UNNEST({vendors}::text[], {references}::text[], {records}::jsonb[]) \
                     AS kept (vendor, reference, record) {guard}"
                ),
            );
        }
        if !self.meter_points.is_empty() {
            let mpxns = change.bind_array(self.meter_points.iter().map(|p| p.mpxn.as_str()))?;
            let records = change.bind_array(self.meter_points.iter().map(Json))?;
            change.part(
                "meter_points_set",
                format!(
                    "INSERT INTO meter_points (account, mpxn, record) SELECT {account}, mpxn, record \
                     FROM UNNEST({mpxns}::text[], {records}::jsonb[]) AS kept (mpxn, record) \
                     {guard} \
                     ON CONFLICT (account, mpxn) DO UPDATE SET record = EXCLUDED.record"
                ),
            );
        }
        Ok(())
    }
}

/// `count` new ids, in increasing order, from as many blocks of `record_id_blocks` as they
/// need (taken in one statement).
pub(super) async fn new_ids(pool: &PgPool, count: usize) -> Result<Vec<u64>, StoreError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let blocks = count.div_ceil(ID_BLOCK as usize);
    let mut taken: Vec<i64> =
        sqlx::query_scalar("SELECT nextval('record_id_blocks') FROM generate_series(1, $1)")
            .bind(i64::try_from(blocks).unwrap_or(i64::MAX))
            .fetch_all(pool)
            .await
            .map_err(classify)?;
    taken.sort_unstable();
    Ok(taken
        .into_iter()
        .flat_map(|block| {
            let (start, end) = id_block(block);
            start..end
        })
        .take(count)
        .collect())
}

/// The ids `[start, end)` of block `block` of `record_id_blocks`.
fn id_block(block: i64) -> (u64, u64) {
    let start = u64::try_from(block).unwrap_or_default() * ID_BLOCK;
    (start, start + ID_BLOCK)
}

/// Locks account `number`'s summary row for the unit and takes the unit's block of ids in the
/// same round trip: the row's `record` and `block`, or none if the account has no row yet.
/// The block is taken once the lock is held: the outer `nextval` reads the row the `WITH`
/// query locked (PostgreSQL never folds a `WITH` query that locks rows into the outer one), so
/// an account's ids grow in the order its units held the lock, whichever instance ran them.
async fn lock_summary(
    tx: &mut sqlx::Transaction<'static, Postgres>,
    number: &str,
) -> Result<Option<PgRow>, StoreError> {
    sqlx::query(
        "WITH locked AS (SELECT record FROM account_summaries WHERE account = $1 FOR UPDATE) \
         SELECT record, nextval('record_id_blocks') AS block FROM locked",
    )
    .bind(number)
    .fetch_optional(&mut **tx)
    .await
    .map_err(classify)
}

fn id_param(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(i64::MAX)
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
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
        bounded(self.store.operation_limit(), async move {
            let (next, end) = &mut self.ids;
            if *next < *end {
                *next += 1;
                return Ok(*next - 1);
            }
            let block: i64 = sqlx::query_scalar("SELECT nextval('record_id_blocks')")
                .fetch_one(&mut *self.tx)
                .await
                .map_err(classify)?;
            let (start, end) = id_block(block);
            self.ids = (start + 1, end);
            Ok(start)
        })
    }

    fn enqueue(&mut self, event: Event) -> Result<(), StoreError> {
        self.events.push(event);
        Ok(())
    }

    fn count(&mut self, supplier: &str, counts: &Counts) -> Result<(), StoreError> {
        match &mut self.counts {
            Some((of, kept)) if of == supplier => kept.add_all(counts),
            _ => self.counts = Some((supplier.to_owned(), counts.clone())),
        }
        Ok(())
    }

    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), StoreError>> {
        bounded(self.store.operation_limit(), async move {
            let unit = *self;
            if unit.changes_nothing() {
                return Ok(());
            }
            crate::domain::storage::Durability::writable(&unit.store)?;
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

/// Account `number`'s summary, as its units last wrote it.
async fn account_summary(pool: &PgPool, number: &str) -> Result<AccountSummary, StoreError> {
    let summary: Option<Option<serde_json::Value>> =
        sqlx::query_scalar("SELECT record FROM account_summaries WHERE account = $1")
            .bind(number)
            .fetch_optional(pool)
            .await
            .map_err(classify)?;
    summary_of(summary.flatten(), number)
}

pub(super) async fn account_records(
    pool: &PgPool,
    number: &str,
) -> Result<AccountRecords, StoreError> {
    let summary = account_summary(pool, number).await?;
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

impl AccountStore for PgStore {
    fn account<'a>(&'a self, number: &'a str) -> StoreFuture<'a, Option<PlatformAccount>> {
        self.bounded(self.one("SELECT record FROM accounts WHERE number = $1", number))
    }

    fn new_ids(&self, count: usize) -> StoreFuture<'_, Vec<u64>> {
        self.bounded(new_ids(&self.pool, count))
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

    fn account_summary<'a>(&'a self, number: &'a str) -> StoreFuture<'a, AccountSummary> {
        self.bounded(account_summary(&self.pool, number))
    }

    fn account_records<'a>(&'a self, number: &'a str) -> StoreFuture<'a, AccountRecords> {
        self.bounded(account_records(&self.pool, number))
    }

    fn meter_points<'a>(&'a self, number: &'a str) -> StoreFuture<'a, Vec<MeterPoint>> {
        self.bounded(meter_points(&self.pool, number))
    }
}
