//! The storage port's contract, as tests every backend runs: a unit of work is all or
//! nothing and keeps every kind of record it adds, concurrent units that insert one key keep
//! exactly one, ids are never handed out twice and grow, on one account, in the order of its
//! changes (whichever instance made them), the outbox keeps the order changes committed in,
//! old events leave the log only once published and only from its start, a plugin's
//! component leaves the store once no plugin runs it (and settings go only to the component
//! they were meant for), an import change carries its
//! account, counts and events together (and a migration's opening records with its account),
//! what was committed is there after the store is
//! opened again, lists come whole and in key order however many pages they take, a record
//! read again once its change is durable is read changed (a backend may keep what it read),
//! and while its [`StorageHealth`] refuses writes every write answers
//! [`StoreError::Unwritable`], changes nothing, and reads and the relay go on.
//!
//! A backend runs the whole suite with [`contract_tests!`], given a constructor of a fresh,
//! empty [`Backend`]:
//!
//! ```ignore
//! contract_tests!(SledBackend::new);
//! ```

use crate::domain::account::{AccountLimits, read_account};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::campaign::Counts;
use crate::domain::error::DomainError;
use crate::domain::events::Event;
use crate::domain::import_process::{
    ImportProcess, ImportState, PlatformAccount, new_platform_account_number,
};
use crate::domain::ledger::{LedgerEntry, Transaction, TransactionType};
use crate::domain::meter_points::MeterPoint;
use crate::domain::money::Money;
use crate::domain::notes::{Note, NoteSource};
use crate::domain::payment_instruction::PaymentInstruction;
use crate::domain::plugin::PluginRecord;
use crate::domain::statements::Statement;
use crate::domain::storage::Outbox;
use crate::domain::storage::{
    AccountOpening, AccountUnit, ImportChange, Store, StoreError, Unwritable,
};
use crate::domain::supplier::read_new_supplier;
use crate::store::StorageHealth;
use chrono::{DateTime, Utc};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A place a backend keeps its data in, for the length of one test.
pub trait Backend {
    /// Opens the store on this backend's data, its writes taken while `health` allows them,
    /// with the relay's side of the same store; again after every handle was dropped, the
    /// same data.
    fn open_with_health(&self, health: Arc<StorageHealth>) -> (Arc<dyn Store>, Arc<dyn Outbox>);
    /// Whether several instances share the backend's data (then a lease has one holder at a
    /// time); one that only one process opens gives every lease to whoever asks.
    fn shared(&self) -> bool;

    /// [`Backend::open_with_health`], always writable.
    fn open_with_outbox(&self) -> (Arc<dyn Store>, Arc<dyn Outbox>) {
        self.open_with_health(Arc::new(StorageHealth::unwatched()))
    }

    fn open(&self) -> Arc<dyn Store> {
        self.open_with_outbox().0
    }
}

/// One test per scenario of the contract, for the backend `$fresh()` makes.
#[macro_export]
#[doc(hidden)]
macro_rules! contract_tests {
    ($fresh:expr) => {
        $crate::store::contract::contract_tests!(
            @scenarios $fresh;
            a_failed_change_leaves_nothing,
            concurrent_inserts_of_one_key_keep_one,
            ids_are_never_handed_out_twice,
            an_accounts_ids_grow_in_the_order_of_its_changes,
            a_unit_keeps_every_kind_of_record_it_adds,
            the_outbox_keeps_the_order_of_commits,
            the_relay_reads_the_outbox_in_commit_order,
            old_published_events_leave_the_log_and_nothing_after_one_waiting,
            a_component_leaves_the_store_once_no_plugin_runs_it,
            an_import_change_carries_its_account_counts_and_events,
            a_migration_to_a_taken_account_number_is_decided_again,
            a_migration_opens_its_account_with_every_record,
            a_change_moves_its_suppliers_counters_with_it,
            refused_writes_change_nothing_and_reads_go_on,
            a_lease_has_one_holder_at_a_time,
            flushed_changes_are_there_after_a_reopen,
            lists_come_in_key_order_page_after_page,
            a_record_read_is_read_changed_once_its_change_is_durable,
            a_supplier_and_its_listing_read_together_are_what_each_reads,
        );
    };
    (@scenarios $fresh:expr; $($scenario:ident),* $(,)?) => {
        mod contract {
            use super::*;

            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    $crate::store::contract::$scenario(&$fresh()).await;
                }
            )*
        }
    };
}

pub use contract_tests;

fn event(account: &str) -> Event {
    Event::new(
        "account.occupied",
        "v1",
        Some(account),
        json!({"account_number": account}),
    )
    .expect("a catalogued event")
}

fn note(id: u64, body: &str) -> Note {
    Note {
        id,
        body: Some(body.to_owned()),
        document_paths: Vec::new(),
        created_at: Utc::now(),
        is_pinned: false,
        unpin_at: None,
        source: NoteSource::Import,
        external_id: None,
        is_archived: false,
    }
}

/// Adds `note` as the domain does: under its dedupe key, whose dates it joins.
fn add(unit: &mut dyn AccountUnit, note: &Note) {
    unit.add_note(note, &note.key(), &[note.created_at])
        .expect("note");
}

pub(super) fn transaction(id: &str) -> (Transaction, LedgerEntry) {
    let transaction: Transaction = serde_json::from_value(json!({"transaction_id": id,
        "transaction_date": "2025-01-05", "amount": "1.00", "type": "CHARGE"}))
    .expect("a transaction");
    let entry = LedgerEntry {
        id: 1,
        transaction_id: id.to_owned(),
        kind: TransactionType::Charge,
        amount: Money::from_pence(100),
        balance_after: Money::from_pence(100),
        transaction_date: transaction.transaction_date,
        posted_at: Utc::now(),
    };
    (transaction, entry)
}

/// The events in the log, oldest first.
async fn logged(store: &dyn Store) -> Vec<Event> {
    store
        .events_after(None, 100_000)
        .await
        .expect("the event log")
}

pub async fn a_failed_change_leaves_nothing(backend: &dyn Backend) {
    let store = backend.open();
    {
        let mut unit = store.account_unit("A-00000001").await.expect("a unit");
        add(unit.as_mut(), &note(1, "half"));
        unit.enqueue(event("A-00000001")).expect("event");
        // Dropped without a commit.
    }
    let staged = store
        .change_import("OLD_CO", "ACC-1", &mut |_| {
            Err(DomainError::ImportInProgress)
        })
        .await;
    assert!(
        matches!(staged, Err(DomainError::ImportInProgress)),
        "{staged:?}"
    );
    store.flush().await.expect("flush");
    let records = store.account_records("A-00000001").await.expect("records");
    assert!(records.notes.is_empty());
    assert!(logged(store.as_ref()).await.is_empty());
    assert_eq!(store.outbox_len().await.expect("outbox"), 0);
    assert!(
        store
            .import_process("OLD_CO", "ACC-1")
            .await
            .expect("read")
            .is_none()
    );
    assert_eq!(
        store
            .import_counts("OLD_CO")
            .await
            .expect("counts")
            .get(ImportState::Pending),
        0
    );
    // What a unit wrote, it reads back before its commit; another unit sees it after.
    let mut unit = store.account_unit("A-00000001").await.expect("a unit");
    let (kept, entry) = transaction("T-1");
    unit.add_transaction(&kept, &entry).await.expect("added");
    assert_eq!(
        unit.transaction("T-1").await.expect("read"),
        Some(kept.clone())
    );
    assert!(matches!(
        unit.add_transaction(&kept, &entry).await,
        Err(StoreError::Duplicate { .. })
    ));
    unit.commit().await.expect("commit");
    let mut unit = store.account_unit("A-00000001").await.expect("a unit");
    assert_eq!(unit.transaction("T-1").await.expect("read"), Some(kept));
}

pub async fn concurrent_inserts_of_one_key_keep_one(backend: &dyn Backend) {
    let store = backend.open();
    let writers: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut unit = store.account_unit("A-00000001").await?;
                if unit.transaction("T-1").await?.is_some() {
                    return Ok(false);
                }
                let (kept, entry) = transaction("T-1");
                unit.add_transaction(&kept, &entry).await?;
                unit.enqueue(event("A-00000001"))?;
                unit.commit().await?;
                Ok::<_, StoreError>(true)
            })
        })
        .collect();
    let mut inserted = 0;
    for writer in writers {
        if writer.await.expect("joins").expect("the unit") {
            inserted += 1;
        }
    }
    assert_eq!(inserted, 1);
    let records = store.account_records("A-00000001").await.expect("records");
    assert_eq!(records.transactions.len(), 1);
    assert_eq!(records.ledger_entries.len(), 1);
    assert_eq!(
        logged(store.as_ref()).await.len(),
        1,
        "one event, with the one insert"
    );
}

pub async fn ids_are_never_handed_out_twice(backend: &dyn Backend) {
    let store = backend.open();
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..50 {
                    let mut unit = store.account_unit(&format!("A-{writer:08X}")).await?;
                    ids.push(unit.next_id().await?);
                }
                Ok::<_, StoreError>(ids)
            })
        })
        .collect();
    let mut ids = Vec::new();
    for writer in writers {
        ids.extend(writer.await.expect("joins").expect("ids"));
    }
    let distinct: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len());
}

/// The units of one account, spread over two instances where the backend is shared, each take
/// an id while they hold the account: the notes listed by id come in the order the units held
/// it.
pub async fn an_accounts_ids_grow_in_the_order_of_its_changes(backend: &dyn Backend) {
    let first = backend.open();
    let second = if backend.shared() {
        backend.open()
    } else {
        first.clone()
    };
    let turns = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..8)
        .map(|writer| {
            let store = if writer % 2 == 0 {
                first.clone()
            } else {
                second.clone()
            };
            let turns = turns.clone();
            tokio::spawn(async move {
                for _ in 0..10 {
                    let mut unit = store.account_unit("A-00000001").await?;
                    // Taken under the account's lock: the turns count the units in the order
                    // they held it.
                    let turn = turns.fetch_add(1, Ordering::SeqCst);
                    let id = unit.next_id().await?;
                    add(unit.as_mut(), &note(id, &format!("turn {turn:03}")));
                    unit.commit().await?;
                }
                Ok::<_, StoreError>(())
            })
        })
        .collect();
    for writer in writers {
        writer.await.expect("joins").expect("the units");
    }
    let records = first.account_records("A-00000001").await.expect("records");
    let listed: Vec<String> = records
        .notes
        .iter()
        .map(|note| note.body.clone().unwrap_or_default())
        .collect();
    let expected: Vec<String> = (0..80).map(|turn| format!("turn {turn:03}")).collect();
    assert_eq!(
        listed, expected,
        "notes by id, against the order of the units"
    );
}

/// One unit that adds a record of every kind, with the summary and an event: all of them are
/// there after its commit, and the transaction's ledger entry with it.
pub async fn a_unit_keeps_every_kind_of_record_it_adds(backend: &dyn Backend) {
    let store = backend.open();
    let (kept, mut entry) = transaction("T-1");
    let statement: Statement = serde_json::from_value(json!({"statement_id": "S-1",
        "bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31"}))
    .expect("a statement");
    let instruction: PaymentInstruction = serde_json::from_value(json!({"vendor": "GOCARDLESS",
        "reference": "MD-1", "type": "DIRECT_DEBIT", "details": {"mandate": "MD-1"},
        "added_at": "2025-01-02T00:00:00Z"}))
    .expect("an instruction");
    let point: MeterPoint = serde_json::from_value(json!({"mpxn": "1200023305967",
        "market": "ELECTRICITY", "status": "ON_SUPPLY", "updated_at": "2025-01-03T00:00:00Z"}))
    .expect("a meter point");
    let mut unit = store.account_unit("A-00000001").await.expect("a unit");
    let mut summary = unit.summary().await.expect("summary");
    summary.balance = Money::from_pence(100);
    unit.set_summary(&summary).expect("summary set");
    entry.id = unit.next_id().await.expect("an id");
    let note = note(unit.next_id().await.expect("an id"), "kept");
    unit.add_transaction(&kept, &entry)
        .await
        .expect("transaction");
    add(unit.as_mut(), &note);
    unit.add_statement(&statement).await.expect("statement");
    unit.add_payment_instruction(&instruction)
        .await
        .expect("instruction");
    unit.set_meter_point(&point).expect("meter point");
    unit.enqueue(event("A-00000001")).expect("event");
    unit.commit().await.expect("commit");

    let records = store.account_records("A-00000001").await.expect("records");
    assert_eq!(records.summary, summary);
    assert_eq!(records.transactions, vec![kept]);
    assert_eq!(records.ledger_entries, vec![entry]);
    assert_eq!(records.notes, vec![note]);
    assert_eq!(records.statements, vec![statement]);
    assert_eq!(records.payment_instructions, vec![instruction]);
    assert_eq!(records.meter_points, vec![point]);
    assert_eq!(logged(store.as_ref()).await.len(), 1);
}

pub async fn the_outbox_keeps_the_order_of_commits(backend: &dyn Backend) {
    let store = backend.open();
    let per_account = 40;
    // Each writer's events, in the order it committed them.
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                let account = format!("A-{writer:08X}");
                let mut ids = Vec::new();
                for index in 0..per_account {
                    let event = event(&account);
                    let mut unit = store.account_unit(&account).await?;
                    let note = note(index, &format!("n{index}"));
                    unit.add_note(&note, &note.key(), &[note.created_at])?;
                    ids.push(event.id.clone());
                    unit.enqueue(event)?;
                    unit.commit().await?;
                }
                Ok::<_, StoreError>((account, ids))
            })
        })
        .collect();
    let mut committed = BTreeMap::new();
    for writer in writers {
        let (account, ids) = writer.await.expect("joins").expect("the units");
        committed.insert(account, ids);
    }
    let log = store
        .events_after(None, 100_000)
        .await
        .expect("the event log");
    assert_eq!(log.len(), 4 * per_account as usize);
    assert!(
        log.windows(2).all(|pair| pair[0].seq < pair[1].seq),
        "in seq order"
    );
    for (account, ids) in &committed {
        let logged: Vec<&str> = log
            .iter()
            .filter(|event| event.subject.as_deref() == Some(account.as_str()))
            .map(|event| event.id.as_str())
            .collect();
        assert_eq!(
            &logged, ids,
            "{account}: its events in the order of its changes"
        );
    }
    // The outbox holds every one of them for the relay.
    assert_eq!(store.outbox_len().await.expect("outbox"), log.len());
}

pub async fn the_relay_reads_the_outbox_in_commit_order(backend: &dyn Backend) {
    let (store, outbox) = backend.open_with_outbox();
    let mut committed = Vec::new();
    for account in ["A-0000000A", "A-0000000B", "A-0000000A"] {
        let mut unit = store.account_unit(account).await.expect("a unit");
        for _ in 0..2 {
            let event = event(account);
            committed.push(event.id.clone());
            unit.enqueue(event).expect("event");
        }
        unit.commit().await.expect("commit");
    }
    {
        // Not committed: nothing of it reaches the outbox.
        let mut unit = store.account_unit("A-0000000C").await.expect("a unit");
        unit.enqueue(event("A-0000000C")).expect("event");
    }
    let ids = |pending: &[crate::domain::storage::PendingEvent]| -> Vec<String> {
        pending
            .iter()
            .map(|event| event.record.id().expect("an id").to_owned())
            .collect()
    };
    let pending = outbox
        .pending_events(100, &HashSet::new())
        .await
        .expect("pending");
    assert_eq!(ids(&pending), committed, "in the order of the commits");
    let seqs: Vec<u64> = pending.iter().map(|event| event.seq).collect();
    // What the relay is already sending is left out.
    let skip: HashSet<u64> = seqs[..2].iter().copied().collect();
    let next = outbox.pending_events(2, &skip).await.expect("pending");
    assert_eq!(ids(&next), committed[2..4]);
    // Published events leave the outbox and are marked in the log.
    let at = Utc::now();
    outbox.mark_published(&seqs[..3], at).await.expect("marked");
    assert_eq!(store.outbox_len().await.expect("outbox"), 3);
    let rest = outbox
        .pending_events(100, &HashSet::new())
        .await
        .expect("pending");
    assert_eq!(ids(&rest), committed[3..]);
    let published: Vec<bool> = logged(store.as_ref())
        .await
        .iter()
        .map(|event| event.published_at.is_some())
        .collect();
    assert_eq!(published, [true, true, true, false, false, false]);
}

/// Commits one change to `account` with `count` events made at `made`; their ids.
async fn events_made_at(
    store: &dyn Store,
    account: &str,
    count: usize,
    made: DateTime<Utc>,
) -> Vec<String> {
    let mut unit = store.account_unit(account).await.expect("a unit");
    let mut ids = Vec::new();
    for _ in 0..count {
        let mut event = event(account);
        event.time = made;
        ids.push(event.id.clone());
        unit.enqueue(event).expect("event");
    }
    unit.commit().await.expect("commit");
    ids
}

pub async fn old_published_events_leave_the_log_and_nothing_after_one_waiting(
    backend: &dyn Backend,
) {
    let (store, outbox) = backend.open_with_outbox();
    let old = Utc::now() - chrono::Duration::hours(2);
    let made_before = Utc::now() - chrono::Duration::hours(1);
    // A change of 100 events is more than one group of a backend that keeps them in groups.
    let a = events_made_at(store.as_ref(), "A-00000001", 2, old).await;
    let b = events_made_at(store.as_ref(), "A-00000002", 100, old).await;
    let c = events_made_at(store.as_ref(), "A-00000001", 2, old).await;
    let d = events_made_at(store.as_ref(), "A-00000002", 2, Utc::now()).await;
    let seq_of = |id: String| {
        let store = store.clone();
        async move { store.event_seq(&id).await.expect("a lookup") }
    };
    let pending = outbox
        .pending_events(1000, &HashSet::new())
        .await
        .expect("pending");
    let seqs: Vec<u64> = pending.iter().map(|event| event.seq).collect();
    assert_eq!(seqs.len(), 106);
    // Published: a, c and d; b waits.
    let published: Vec<u64> = [&seqs[..2], &seqs[102..]].concat();
    outbox
        .mark_published(&published, Utc::now())
        .await
        .expect("marked");

    let taken = store.prune_events(made_before, 1000).await.expect("pruned");
    assert_eq!(taken, 2, "a alone: b waits, and c comes after it");
    let log: Vec<String> = logged(store.as_ref())
        .await
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(log, [&b[..], &c[..], &d[..]].concat());
    assert_eq!(seq_of(a[0].clone()).await, None, "its id is gone too");
    assert_eq!(seq_of(b[0].clone()).await, Some(seqs[2]));
    assert_eq!(
        store.prune_events(made_before, 1000).await.expect("pruned"),
        0
    );

    // Published, b goes, and c with it, a little at a time; d is too new.
    outbox
        .mark_published(&seqs[2..102], Utc::now())
        .await
        .expect("marked");
    let first = store.prune_events(made_before, 50).await.expect("pruned");
    assert!(
        (1..102).contains(&first),
        "about 50 at a time, took {first}"
    );
    let mut taken = first;
    loop {
        let more = store.prune_events(made_before, 50).await.expect("pruned");
        if more == 0 {
            break;
        }
        taken += more;
    }
    assert_eq!(taken, 102);
    let log = logged(store.as_ref()).await;
    assert_eq!(
        log.iter()
            .map(|event| event.id.as_str())
            .collect::<Vec<_>>(),
        d,
        "the log after them, as it was"
    );
    assert!(
        log.iter().all(|event| event.published_at.is_some()),
        "still published"
    );
    for id in [&b[0], &b[99], &c[1]] {
        assert_eq!(seq_of(id.clone()).await, None, "{id}");
    }
    assert_eq!(seq_of(d[1].clone()).await, Some(seqs[105]));
    assert_eq!(store.outbox_len().await.expect("outbox"), 0);

    // Taken for good; and what is made next is published as ever.
    drop((store, outbox));
    let (store, outbox) = backend.open_with_outbox();
    let log: Vec<String> = logged(store.as_ref())
        .await
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(log, d);
    let e = events_made_at(store.as_ref(), "A-00000003", 1, old).await;
    let pending = outbox
        .pending_events(1000, &HashSet::new())
        .await
        .expect("pending");
    assert_eq!(
        pending
            .iter()
            .map(|event| event.record.id().expect("an id"))
            .collect::<Vec<_>>(),
        e
    );
    assert_eq!(
        store.prune_events(made_before, 1000).await.expect("pruned"),
        0
    );
}

/// A plugin record of `supplier` running `component`.
pub(crate) fn plugin_of(supplier: &str, component: &[u8]) -> PluginRecord {
    PluginRecord {
        supplier: supplier.to_owned(),
        sha256: crate::plugins::sha256_hex(component),
        name: "plugin".to_owned(),
        version: "1".to_owned(),
        size_bytes: component.len() as u64,
        installed_at: Utc::now(),
        hooks: Vec::new(),
        config: BTreeMap::new(),
        wit_version: None,
    }
}

pub async fn a_component_leaves_the_store_once_no_plugin_runs_it(backend: &dyn Backend) {
    let store = backend.open();
    let (first, second) = (
        b"first component".as_slice(),
        b"second component".as_slice(),
    );
    let component = |bytes: &[u8]| {
        let store = store.clone();
        let sha256 = crate::plugins::sha256_hex(bytes);
        async move { store.plugin_component(&sha256).await.expect("a read") }
    };
    for supplier in ["OLD_CO", "NEW_CO"] {
        let plugin = plugin_of(supplier, first);
        store.put_plugin(&plugin, first).await.expect("installed");
    }
    // OLD_CO's plugin replaced: NEW_CO still runs the first component.
    let replacement = plugin_of("OLD_CO", second);
    store
        .put_plugin(&replacement, second)
        .await
        .expect("replaced");
    assert_eq!(component(first).await.as_deref(), Some(first));
    // Its settings changed: for the component it runs, not for one it no longer runs.
    let config = BTreeMap::from([("region".to_owned(), "north".to_owned())]);
    assert!(matches!(
        store
            .configure_plugin("OLD_CO", &plugin_of("", first).sha256, &config)
            .await,
        Err(StoreError::Conflict)
    ));
    let configured = store
        .configure_plugin("OLD_CO", &replacement.sha256, &config)
        .await
        .expect("configured")
        .expect("a plugin");
    assert_eq!(configured.config, config);
    assert_eq!(configured.sha256, replacement.sha256);
    let stored = store
        .plugin("OLD_CO")
        .await
        .expect("read")
        .expect("a plugin");
    assert_eq!(stored.config, config);
    assert_eq!(component(second).await.as_deref(), Some(second));
    assert!(
        store
            .configure_plugin("NO_CO", &replacement.sha256, &config)
            .await
            .expect("no plugin")
            .is_none()
    );
    // NEW_CO's plugin removed: nothing runs the first component any more.
    let removed = store.remove_plugin("NEW_CO").await.expect("removed");
    assert_eq!(
        removed.map(|plugin| plugin.sha256),
        Some(plugin_of("", first).sha256)
    );
    assert_eq!(component(first).await, None);
    assert_eq!(component(second).await.as_deref(), Some(second));
    // And OLD_CO's: none left.
    store.remove_plugin("OLD_CO").await.expect("removed");
    assert_eq!(component(second).await, None);
    assert!(store.plugins().await.expect("plugins").is_empty());
    // Installed again, it is there again.
    store.put_plugin(&replacement, second).await.expect("again");
    assert_eq!(component(second).await.as_deref(), Some(second));
}

pub async fn an_import_change_carries_its_account_counts_and_events(backend: &dyn Backend) {
    let store = backend.open();
    let body = json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1",
                      "billing_name": "Ada Lovelace"});
    let payload = read_account(body, AccountLimits { max_items: 100 }).expect("an account");
    let now = Utc::now();
    let staged = store
        .change_import("OLD_CO", "ACC-1", &mut |current| {
            let (process, _) = ImportProcess::stage(current, payload.clone(), None, now)?;
            Ok(ImportChange::with_events(process, vec![event("ACC-1")]))
        })
        .await
        .expect("staged");
    assert_eq!(staged.process.state, ImportState::Pending);
    let counts = store.import_counts("OLD_CO").await.expect("counts");
    assert_eq!(counts.get(ImportState::Pending), 1);

    let migrated = migrate(store.as_ref(), "ACC-1", vec![event("ACC-1")], now).await;
    let number = migrated
        .account
        .as_ref()
        .map(|account| account.number.clone())
        .expect("an account");
    store.flush().await.expect("flush");
    assert!(store.account(&number).await.expect("read").is_some());
    let counts = store.import_counts("OLD_CO").await.expect("counts");
    assert_eq!(
        (
            counts.get(ImportState::Pending),
            counts.get(ImportState::Processed)
        ),
        (0, 1)
    );
    assert_eq!(
        process_account(store.as_ref(), "ACC-1").await,
        Some(number.clone())
    );
    // What the lists show follows the process (to the second the lists show: PostgreSQL
    // keeps the listing's time in a column, to the microsecond).
    let listing = store
        .import_listing("OLD_CO", "ACC-1")
        .await
        .expect("read")
        .expect("listed");
    let second = |at: Option<DateTime<Utc>>| at.map(|at| at.timestamp());
    assert_eq!(
        (
            listing.state,
            listing.platform_account_number,
            second(listing.account_created_at)
        ),
        (
            ImportState::Processed,
            Some(number),
            second(migrated.process.account_created_at)
        )
    );
    assert!(listing.account_created_at.is_some());
    assert_eq!(logged(store.as_ref()).await.len(), 2);

    // Several processes at once: each its own change, each its own outcome.
    let externals = ["ACC-1".to_owned(), "ACC-2".to_owned()];
    let second = read_account(
        json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-2"}),
        AccountLimits { max_items: 100 },
    )
    .expect("an account");
    let outcomes = store
        .change_imports("OLD_CO", &externals, &mut |current| match current {
            Some(current) => Err(current.already_imported()),
            None => {
                let (process, _) = ImportProcess::stage(None, second.clone(), None, now)?;
                Ok(ImportChange::process(process))
            }
        })
        .await
        .expect("the changes");
    assert!(matches!(
        outcomes[0],
        Err(DomainError::AlreadyImported { .. })
    ));
    assert!(outcomes[1].is_ok());
    let counts = store.import_counts("OLD_CO").await.expect("counts");
    assert_eq!(counts.get(ImportState::Pending), 1);
}

/// A migration whose new account's number is taken (by an account made meanwhile) is decided
/// again, and nothing of the first decision is kept: not its process, not its events.
pub async fn a_migration_to_a_taken_account_number_is_decided_again(backend: &dyn Backend) {
    let store = backend.open();
    let now = Utc::now();
    staged(store.as_ref(), "OLD_CO", "ACC-1", None).await;
    staged(store.as_ref(), "OLD_CO", "ACC-2", None).await;
    let taken = migrate(store.as_ref(), "ACC-1", Vec::new(), now)
        .await
        .account
        .expect("an account")
        .number;
    let mut decisions = 0;
    let migrated = store
        .change_import("OLD_CO", "ACC-2", &mut |current| {
            let current = current.ok_or(DomainError::AccountNotFound)?;
            let mut account = opened(current, now);
            decisions += 1;
            if decisions == 1 {
                account.number = taken.clone();
            }
            // Each decision opens the account with records of its own.
            let mut opening = AccountOpening::default();
            opening.summary.balance = Money::from_pence(decisions);
            Ok(ImportChange {
                process: current.processed(&account),
                account: Some(account),
                opening: Some(Box::new(opening)),
                counts: Counts::default(),
                events: vec![event(&format!("decision {decisions}"))],
            })
        })
        .await
        .expect("migrated");
    assert_eq!(decisions, 2);
    let number = migrated.account.expect("an account").number;
    assert_ne!(number, taken);
    let balance = |number: String| {
        let store = store.clone();
        async move {
            let records = store.account_records(&number).await.expect("records");
            records.summary.balance
        }
    };
    assert_eq!(
        balance(taken.clone()).await,
        Money::ZERO,
        "the taken account is as it was"
    );
    assert_eq!(balance(number.clone()).await, Money::from_pence(2));
    let owner = |number: String| {
        let store = store.clone();
        async move {
            store
                .account(&number)
                .await
                .expect("read")
                .map(|account| account.external_account_number)
        }
    };
    assert_eq!(owner(taken).await.as_deref(), Some("ACC-1"));
    assert_eq!(owner(number.clone()).await.as_deref(), Some("ACC-2"));
    assert_eq!(process_account(store.as_ref(), "ACC-2").await, Some(number));
    let subjects: Vec<Option<String>> = logged(store.as_ref())
        .await
        .into_iter()
        .map(|event| event.subject)
        .collect();
    assert_eq!(subjects, [Some("decision 2".to_owned())]);
}

/// The records every request reads (its API key, its supplier, its account's listing and
/// process), read once so that a backend keeping them may keep them, then changed: each read
/// after its change answers the change.
pub async fn a_record_read_is_read_changed_once_its_change_is_durable(backend: &dyn Backend) {
    let store = backend.open();
    let supplier = read_new_supplier(
        &json!({"code": "OLD_CO", "name": "Old Co", "document_root": ""}),
        Utc::now(),
    )
    .expect("a supplier");
    assert!(store.create_supplier(&supplier).await.expect("created"));
    let key = ApiKeyRecord {
        id: "key-1".into(),
        organisation: "Old Co".into(),
        suppliers: vec!["OLD_CO".into()],
        key_digest: "digest-1".into(),
        created_at: Utc::now(),
        revoked_at: None,
    };
    store.insert_api_key(&key).await.expect("key");
    staged(store.as_ref(), "OLD_CO", "ACC-1", None).await;
    let staged_state = (true, "Old Co".to_owned(), ImportState::Pending);
    assert_eq!(read_as_a_request(store.as_ref()).await, staged_state);
    assert_eq!(read_as_a_request(store.as_ref()).await, staged_state);

    store
        .revoke_api_key("key-1", Utc::now())
        .await
        .expect("revoked")
        .expect("the key");
    assert!(!read_as_a_request(store.as_ref()).await.0, "revoked");

    store
        .update_supplier("OLD_CO", &mut |supplier| supplier.name = "New Co".into())
        .await
        .expect("updated")
        .expect("the supplier");
    assert_eq!(read_as_a_request(store.as_ref()).await.1, "New Co");

    migrate(store.as_ref(), "ACC-1", Vec::new(), Utc::now()).await;
    assert_eq!(
        read_as_a_request(store.as_ref()).await.2,
        ImportState::Processed
    );
    let process = store
        .import_process("OLD_CO", "ACC-1")
        .await
        .expect("read")
        .expect("a process");
    assert_eq!(process.state, ImportState::Processed);
}

/// The platform account number the process of `external` of `OLD_CO` names.
async fn process_account(store: &dyn Store, external: &str) -> Option<String> {
    store
        .import_process("OLD_CO", external)
        .await
        .expect("read")
        .and_then(|process| process.platform_account_number)
}

/// Migrates the staged account `external` of `OLD_CO`, with `events`.
pub(super) async fn migrate(
    store: &dyn Store,
    external: &str,
    events: Vec<Event>,
    now: DateTime<Utc>,
) -> ImportChange {
    store
        .change_import("OLD_CO", external, &mut |current| {
            let current = current.ok_or(DomainError::AccountNotFound)?;
            let account = opened(current, now);
            Ok(ImportChange {
                process: current.processed(&account),
                account: Some(account),
                opening: None,
                counts: Counts::default(),
                events: events.clone(),
            })
        })
        .await
        .expect("migrated")
}

/// A change moves its supplier's counters in its own commit: an import change by how its
/// process moved and what it adds, a unit by what it counts; a change refused moves nothing;
/// the counters are there after a reopen.
pub async fn a_change_moves_its_suppliers_counters_with_it(backend: &dyn Backend) {
    let store = backend.open();
    staged(store.as_ref(), "OLD_CO", "ACC-1", None).await;
    staged(store.as_ref(), "OLD_CO", "ACC-2", None).await;
    let counts = store.supplier_counts("OLD_CO").await.expect("counts");
    assert_eq!(counts.get("staged"), 2);
    assert_eq!(counts.get("state.PENDING"), 2);
    let now = Utc::now();
    let mut added = Counts::default();
    added.add("data.notes", 3);
    let migrated = store
        .change_import("OLD_CO", "ACC-1", &mut |current| {
            let current = current.ok_or(DomainError::AccountNotFound)?;
            let account = opened(current, now);
            Ok(ImportChange {
                process: current.processed(&account),
                account: Some(account),
                opening: None,
                counts: added.clone(),
                events: Vec::new(),
            })
        })
        .await
        .expect("migrated");
    let refused = store
        .change_import("OLD_CO", "ACC-2", &mut |_| {
            Err(DomainError::ImportInProgress)
        })
        .await;
    assert!(refused.is_err());
    let number = migrated.account.expect("an account").number;
    let mut unit = store.account_unit(&number).await.expect("a unit");
    let mut posted = Counts::default();
    posted.add("data.transactions", 2);
    posted.add("reconciliation.held_pence", -150);
    unit.count("OLD_CO", &posted).expect("counted");
    unit.commit().await.expect("committed");
    let mut dropped = store.account_unit(&number).await.expect("a unit");
    dropped.count("OLD_CO", &posted).expect("counted");
    drop(dropped);
    store.flush().await.expect("flushed");

    let expected = [
        ("staged", 2),
        ("state.PENDING", 1),
        ("state.PROCESSED", 1),
        ("data.notes", 3),
        ("data.transactions", 2),
        ("reconciliation.held_pence", -150),
    ];
    for counts in [store.supplier_counts("OLD_CO").await.expect("counts"), {
        drop(store);
        backend
            .open()
            .supplier_counts("OLD_CO")
            .await
            .expect("counts after a reopen")
    }] {
        let found: Vec<(&str, i64)> = counts.0.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let mut wanted = expected.to_vec();
        wanted.sort();
        assert_eq!(found, wanted);
    }
    assert!(
        backend
            .open()
            .supplier_counts("NOBODY")
            .await
            .expect("counts")
            .is_empty()
    );
}

/// A new account for `process`, with a fresh number.
fn opened(process: &ImportProcess, now: DateTime<Utc>) -> PlatformAccount {
    let number = new_platform_account_number(&mut rand::thread_rng());
    PlatformAccount::open_as(number, process, None, now)
}

/// A migration opens its account with every kind of record in the change that creates it: the
/// account's units then find them as if they had added them, and what they add comes after.
pub async fn a_migration_opens_its_account_with_every_record(backend: &dyn Backend) {
    let store = backend.open();
    staged(store.as_ref(), "OLD_CO", "ACC-1", None).await;
    let ids = store.new_ids(3).await.expect("ids");
    assert_eq!(ids.len(), 3);
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "{ids:?}");
    let (first, mut first_entry) = transaction("T-1");
    let (second, mut second_entry) = transaction("T-2");
    first_entry.id = ids[0];
    second_entry.id = ids[1];
    let note = note(ids[2], "brought from the old supplier");
    let statement: Statement = serde_json::from_value(json!({"statement_id": "S-1",
        "bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31"}))
    .expect("a statement");
    let instruction: PaymentInstruction = serde_json::from_value(json!({"vendor": "STRIPE",
        "reference": "PM-1", "type": "CARD", "details": {}, "added_at": "2025-01-02T00:00:00Z",
        "pending": true, "valid_from": "2099-01-01"}))
    .expect("an instruction");
    let mut opening = AccountOpening {
        transactions: vec![
            Transaction {
                ledger_entry_id: Some(ids[0]),
                ..first
            },
            Transaction {
                ledger_entry_id: Some(ids[1]),
                ..second
            },
        ],
        ledger_entries: vec![first_entry.clone(), second_entry.clone()],
        notes: vec![note.clone()],
        note_keys: BTreeMap::from([(note.key(), vec![note.created_at])]),
        statements: vec![statement.clone()],
        payment_instructions: vec![instruction.clone()],
        ..AccountOpening::default()
    };
    opening.summary.balance = Money::from_pence(-200);
    opening
        .summary
        .closed_through(statement.bill_period_to_date);
    let expected = opening.clone();
    let now = Utc::now();
    let mut opening = Some(opening);
    let migrated = store
        .change_import("OLD_CO", "ACC-1", &mut |current| {
            let current = current.ok_or(DomainError::AccountNotFound)?;
            let account = opened(current, now);
            Ok(ImportChange {
                process: current.processed(&account),
                account: Some(account),
                opening: opening.take().map(Box::new),
                counts: Counts::default(),
                events: vec![event("ACC-1")],
            })
        })
        .await
        .expect("migrated");
    let number = migrated.account.expect("an account").number;

    let records = store.account_records(&number).await.expect("records");
    assert_eq!(records.summary, expected.summary);
    assert_eq!(records.transactions, expected.transactions);
    assert_eq!(records.ledger_entries, expected.ledger_entries);
    assert_eq!(records.notes, expected.notes);
    assert_eq!(records.statements, expected.statements);
    assert_eq!(records.payment_instructions, expected.payment_instructions);

    let mut unit = store.account_unit(&number).await.expect("a unit");
    assert_eq!(unit.summary().await.expect("summary"), expected.summary);
    assert!(unit.transaction("T-2").await.expect("read").is_some());
    assert_eq!(
        unit.note_dates(&note.key()).await.expect("dates"),
        vec![note.created_at]
    );
    assert!(unit.has_statement("S-1").await.expect("read"));
    assert!(
        unit.payment_instruction("STRIPE", "PM-1")
            .await
            .expect("read")
            .is_some()
    );
    let (mut third, mut third_entry) = transaction("T-3");
    third_entry.id = unit.next_id().await.expect("an id");
    third.ledger_entry_id = Some(third_entry.id);
    assert!(
        ids.iter().all(|id| *id < third_entry.id),
        "{ids:?} then {}",
        third_entry.id
    );
    let refused = unit
        .add_transaction(&first_entry_transaction(&expected), &third_entry)
        .await;
    assert!(
        matches!(refused, Err(StoreError::Duplicate { .. })),
        "{refused:?}"
    );
    unit.add_transaction(&third, &third_entry)
        .await
        .expect("added after the opening");
    unit.commit().await.expect("commit");
    let records = store.account_records(&number).await.expect("records");
    let ids_kept: Vec<&str> = records
        .transactions
        .iter()
        .map(|t| t.transaction_id.as_str())
        .collect();
    assert_eq!(ids_kept, ["T-1", "T-2", "T-3"]);
    assert_eq!(logged(store.as_ref()).await.len(), 1);
}

/// The opening's first transaction, as a request would post it again.
fn first_entry_transaction(opening: &AccountOpening) -> Transaction {
    Transaction {
        ledger_entry_id: None,
        ..opening.transactions[0].clone()
    }
}

/// What a request about account `ACC-1` of `OLD_CO` with key `key-1` reads: whether the key
/// is active, the supplier's name, the state its account's listing shows.
async fn read_as_a_request(store: &dyn Store) -> (bool, String, ImportState) {
    let key = store.api_key("key-1").await.expect("read").expect("a key");
    let supplier = store
        .supplier("OLD_CO")
        .await
        .expect("read")
        .expect("a supplier");
    let listing = store
        .import_listing("OLD_CO", "ACC-1")
        .await
        .expect("read")
        .expect("listed");
    let together = store
        .supplier_and_listing("OLD_CO", "ACC-1")
        .await
        .expect("read");
    assert_eq!(together, Some((supplier.clone(), Some(listing.clone()))));
    (key.is_active(), supplier.name, listing.state)
}

/// A data-adding request reads its supplier and its account's listing in one call: the same
/// answers as the two reads apart, whether the supplier, the process or neither exists.
pub async fn a_supplier_and_its_listing_read_together_are_what_each_reads(backend: &dyn Backend) {
    let store = backend.open();
    let together = |code: &'static str, external: &'static str| {
        let store = store.clone();
        async move {
            store
                .supplier_and_listing(code, external)
                .await
                .expect("read")
        }
    };
    assert_eq!(together("OLD_CO", "ACC-1").await, None, "no supplier yet");
    let mut suppliers = Vec::new();
    for code in ["OLD_CO", "OTHER_CO"] {
        let supplier = read_new_supplier(
            &json!({"code": code, "name": code, "document_root": ""}),
            Utc::now(),
        )
        .expect("a supplier");
        assert!(store.create_supplier(&supplier).await.expect("created"));
        suppliers.push(supplier);
    }
    assert_eq!(
        together("OLD_CO", "ACC-1").await,
        Some((suppliers[0].clone(), None)),
        "no process yet"
    );
    staged(store.as_ref(), "OLD_CO", "ACC-1", None).await;
    let staged_listing = store
        .import_listing("OLD_CO", "ACC-1")
        .await
        .expect("read")
        .expect("listed");
    assert_eq!(staged_listing.state, ImportState::Pending);
    assert_eq!(
        together("OLD_CO", "ACC-1").await,
        Some((suppliers[0].clone(), Some(staged_listing)))
    );
    assert_eq!(
        together("OTHER_CO", "ACC-1").await,
        Some((suppliers[1].clone(), None)),
        "another supplier's account of the same number"
    );
    assert_eq!(
        together("OLD_CO", "ACC-2").await,
        Some((suppliers[0].clone(), None))
    );
    migrate(store.as_ref(), "ACC-1", Vec::new(), Utc::now()).await;
    let (_, migrated) = together("OLD_CO", "ACC-1").await.expect("the supplier");
    let migrated = migrated.expect("listed");
    assert_eq!(migrated.state, ImportState::Processed);
    assert_eq!(
        migrated.platform_account_number,
        process_account(store.as_ref(), "ACC-1").await
    );
    assert!(migrated.account_created_at.is_some());
}

/// Stages `external` of `supplier`, with `schedule` if given.
pub(super) async fn staged(
    store: &dyn Store,
    supplier: &str,
    external: &str,
    schedule: Option<crate::domain::import_process::Schedule>,
) {
    let body = json!({"import_supplier": supplier, "external_account_number": external});
    let payload = read_account(body, AccountLimits { max_items: 100 }).expect("an account");
    let now = Utc::now();
    store
        .change_import(supplier, external, &mut |current| {
            let (mut process, _) = ImportProcess::stage(current, payload.clone(), None, now)?;
            process.schedule = schedule.clone();
            Ok(ImportChange::process(process))
        })
        .await
        .expect("staged");
}

pub async fn lists_come_in_key_order_page_after_page(backend: &dyn Backend) {
    use futures_util::{StreamExt, TryStreamExt};
    const ACCOUNTS: usize = 2_100; // past two of PostgreSQL's pages of 1 000
    let store = backend.open();
    for code in ["OLD_CO", "NEW_CO", "A_CO"] {
        let supplier = read_new_supplier(
            &json!({"code": code, "name": code, "document_root": ""}),
            Utc::now(),
        )
        .expect("a supplier");
        assert!(store.create_supplier(&supplier).await.expect("created"));
    }
    let start = Utc::now() + chrono::Duration::hours(1);
    let schedule = crate::domain::import_process::Schedule {
        window_start: start,
        window_end: start + chrono::Duration::hours(1),
        dry_run: false,
    };
    // Staged out of order, with another supplier's around them; three scheduled.
    futures_util::stream::iter((0..ACCOUNTS).rev())
        .for_each_concurrent(16, |index| {
            let store = store.clone();
            let schedule = (index % 1_000 == 7).then(|| schedule.clone());
            async move { staged(store.as_ref(), "OLD_CO", &format!("K-{index:05}"), schedule).await }
        })
        .await;
    staged(store.as_ref(), "NEW_CO", "K-00001", Some(schedule.clone())).await;
    staged(store.as_ref(), "A_CO", "K-99999", None).await;

    let expected: Vec<String> = (0..ACCOUNTS).map(|index| format!("K-{index:05}")).collect();
    let listed: Vec<String> = store
        .import_listings("OLD_CO", None)
        .map_ok(|listing| listing.external_account_number)
        .try_collect()
        .await
        .expect("the listings");
    assert_eq!(listed, expected);
    let after: Vec<String> = store
        .import_processes("OLD_CO", Some("K-00999"))
        .map_ok(|process| process.external_account_number)
        .try_collect()
        .await
        .expect("the processes after a key");
    assert_eq!(after, expected[1_000..]);
    let one = store
        .import_listing("OLD_CO", "K-00007")
        .await
        .expect("read")
        .expect("staged");
    assert_eq!(
        (one.external_account_number.as_str(), one.state),
        ("K-00007", ImportState::Pending)
    );
    assert!(
        store
            .import_listing("OLD_CO", "K-99999")
            .await
            .expect("read")
            .is_none()
    );

    let mut due: Vec<(String, String)> = store
        .scheduled_migrations()
        .await
        .expect("the schedules")
        .into_iter()
        .map(|due| {
            assert_eq!(due.at, start);
            (due.supplier, due.external)
        })
        .collect();
    due.sort();
    let pair = |supplier: &str, external: &str| (supplier.to_owned(), external.to_owned());
    assert_eq!(
        due,
        [
            pair("NEW_CO", "K-00001"),
            pair("OLD_CO", "K-00007"),
            pair("OLD_CO", "K-01007"),
            pair("OLD_CO", "K-02007"),
        ]
    );
}

pub async fn flushed_changes_are_there_after_a_reopen(backend: &dyn Backend) {
    let kept = Note {
        created_at: "2024-01-01T10:00:00Z".parse().expect("a time"),
        ..note(1, "kept")
    };
    {
        let store = backend.open();
        let mut unit = store.account_unit("A-00000001").await.expect("a unit");
        add(unit.as_mut(), &kept);
        unit.enqueue(event("A-00000001")).expect("event");
        unit.commit().await.expect("commit");
        staged(store.as_ref(), "OLD_CO", "ACC-1", None).await;
        staged(store.as_ref(), "OLD_CO", "ACC-2", None).await;
    }
    let store = backend.open();
    // The import counts too (the sled store counts them from its listings on open).
    let counts = store.import_counts("OLD_CO").await.expect("counts");
    assert_eq!(
        (
            counts.get(ImportState::Pending),
            counts.get(ImportState::Processed)
        ),
        (2, 0)
    );
    let records = store.account_records("A-00000001").await.expect("records");
    assert_eq!(
        records
            .notes
            .iter()
            .map(|note| note.body.as_deref())
            .collect::<Vec<_>>(),
        [Some("kept")]
    );
    // Its dedupe key finds it too.
    let mut unit = store.account_unit("A-00000001").await.expect("a unit");
    assert_eq!(
        unit.note_dates(&kept.key()).await.expect("dates"),
        [kept.created_at]
    );
    assert!(
        unit.note_dates(&note(2, "another").key())
            .await
            .expect("dates")
            .is_empty()
    );
    drop(unit);
    assert_eq!(logged(store.as_ref()).await.len(), 1);
    assert_eq!(store.outbox_len().await.expect("outbox"), 1);
}

pub async fn refused_writes_change_nothing_and_reads_go_on(backend: &dyn Backend) {
    let health = Arc::new(StorageHealth::unwatched());
    let (store, outbox) = backend.open_with_health(health.clone());
    let supplier = read_new_supplier(
        &json!({"code": "OLD_CO", "name": "Old Co", "document_root": ""}),
        Utc::now(),
    )
    .expect("a supplier");
    assert!(store.create_supplier(&supplier).await.expect("taken"));
    let mut unit = store.account_unit("A-00000001").await.expect("a unit");
    unit.enqueue(event("A-00000001")).expect("enqueued");
    unit.commit().await.expect("committed");

    let reason = Unwritable::Failed("the disk went away".into());
    health.fail(reason.clone());
    let refused = |result: Result<(), StoreError>| match result {
        Err(StoreError::Unwritable(why)) => assert_eq!(why, reason),
        other => panic!("a write was not refused: {other:?}"),
    };
    let mut renamed = supplier.clone();
    renamed.code = "NEW_CO".into();
    refused(store.create_supplier(&renamed).await.map(|_| ()));
    refused(store.publish_events(&[event("A-00000001")]).await);
    refused(store.prune_events(Utc::now(), 10).await.map(|_| ()));
    refused(store.writable());
    let mut unit = store.account_unit("A-00000001").await.expect("a unit");
    add(unit.as_mut(), &note(1, "refused"));
    refused(unit.commit().await);
    let staged = store
        .change_import("OLD_CO", "ACC-1", &mut |_| {
            Err(DomainError::AccountNotFound)
        })
        .await;
    assert!(
        matches!(
            staged,
            Err(DomainError::Store(StoreError::Unwritable(ref why))) if *why == reason
        ),
        "{staged:?}"
    );

    // Nothing of them is there; reads, and the relay's draining, go on.
    assert!(store.supplier("NEW_CO").await.expect("read").is_none());
    assert!(store.supplier("OLD_CO").await.expect("read").is_some());
    let records = store.account_records("A-00000001").await.expect("records");
    assert!(records.notes.is_empty());
    assert!(
        store
            .import_process("OLD_CO", "ACC-1")
            .await
            .expect("read")
            .is_none()
    );
    let pending = outbox
        .pending_events(10, &HashSet::new())
        .await
        .expect("pending");
    assert_eq!(pending.len(), 1);
    outbox
        .mark_published(&[pending[0].seq], Utc::now())
        .await
        .expect("published while writes are refused");
    assert_eq!(store.outbox_len().await.expect("outbox"), 0);
}

pub async fn a_lease_has_one_holder_at_a_time(backend: &dyn Backend) {
    let first = backend.open();
    let minute = std::time::Duration::from_secs(60);
    assert!(first.hold_lease("relay", "a", minute).await.expect("lease"));
    assert!(
        first
            .hold_lease("relay", "a", minute)
            .await
            .expect("renewed")
    );
    if !backend.shared() {
        return;
    }
    // Another instance on the same data.
    let second = backend.open();
    assert!(
        !second
            .hold_lease("relay", "b", minute)
            .await
            .expect("asked")
    );
    assert!(
        second
            .hold_lease("sweep", "b", minute)
            .await
            .expect("another lease")
    );
    first.release_lease("relay", "a").await.expect("released");
    assert!(
        second
            .hold_lease("relay", "b", minute)
            .await
            .expect("taken")
    );
    // An expired lease goes to whoever asks next.
    let instant = std::time::Duration::from_millis(1);
    assert!(
        second
            .hold_lease("relay", "b", instant)
            .await
            .expect("shortened")
    );
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(
        first
            .hold_lease("relay", "a", minute)
            .await
            .expect("taken over")
    );
    assert!(
        !second
            .hold_lease("relay", "b", minute)
            .await
            .expect("asked")
    );
}
