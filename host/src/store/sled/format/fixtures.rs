//! The committed data directories the upgrader is tested on (`host/tests/fixtures/sled/`), and
//! how they were made.
//!
//! Each of versions 1 to 5 has a directory in the layout its step converts, written directly
//! with sled by [`write_format_fixtures`], once (`cargo test -p ferry-host --lib --
//! --ignored write_format_fixtures`), from the records the builders here make: the tests
//! build the same records to compare with what the upgraded store reads. `unversioned-9d6d717`
//! was written by the release before versions were recorded, through its API (`make.py` in
//! it, and `expected.json`, what that release answered before it stopped); `v6-supplier-counts`
//! the same way by the last release of version 6 (e21bace: `make.py BIN DIR expected.json`, the
//! directory's `db/` kept).

use super::v3_event_records::uncompressed_group;
use super::v4_relay_cursor::{OUTBOX_TREE, PUBLISHED_TREE};
use super::v6_derived_trees::{IMPORT_COUNTS_TREE, NOTE_INDEX_TREE};
use super::{FORMAT_FILE, write};
use crate::domain::account::{AccountLimits, read_account};
use crate::domain::events::Event;
use crate::domain::import_process::ImportProcess;
use crate::domain::ledger::{LedgerEntry, Transaction, TransactionType};
use crate::domain::money::Money;
use crate::events::stream_record::StreamRecord;
use crate::store::sled::accounts::{AccountTable, TransactionRecord, numbered};
use crate::store::sled::codec::{encode, pair_key};
use crate::store::sled::event_records::LoggedEvents;
use crate::store::sled::transaction_index::{batch_key, encode_batch};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Where the fixtures are.
fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sled")
}

/// A copy of the fixture `name`, to be opened (and so changed) by a test.
pub(in crate::store::sled) fn fixture(name: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("temp dir");
    copy_dir(&fixtures_dir().join(name), copy.path());
    copy
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for entry in std::fs::read_dir(from).unwrap_or_else(|error| {
        panic!("fixture {}: {error}", from.display());
    }) {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// A moment of the fixtures' history: `seconds` after 2025-01-01.
pub(in crate::store::sled) fn at(seconds: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0)
        .single()
        .expect("a date")
        + chrono::Duration::seconds(seconds)
}

/// Event `n` of the fixtures: made at second `n` of their history, its id a UUIDv7 of that
/// millisecond.
pub(in crate::store::sled) fn event(n: u8) -> Event {
    let account = format!("A-{n:08X}");
    let mut event = Event::new(
        "account.occupied",
        "v1",
        Some(&account),
        json!({"account_number": account}),
    )
    .expect("a catalogued event");
    event.time = at(i64::from(n));
    let millisecond = u64::try_from(event.time.timestamp_millis()).expect("after 1970");
    event.id = uuid::Builder::from_unix_timestamp_millis(millisecond, &[n; 10])
        .into_uuid()
        .to_string();
    event
}

/// The transaction `id` of the fixtures, posted with ledger entry `entry`.
pub(in crate::store::sled) fn transaction(id: &str, entry: u64) -> (Transaction, LedgerEntry) {
    let mut transaction: Transaction = serde_json::from_value(json!({"transaction_id": id,
        "transaction_date": "2025-01-05", "amount": "1.00", "type": "CHARGE"}))
    .expect("a transaction");
    transaction.ledger_entry_id = Some(entry);
    let posted = LedgerEntry {
        id: entry,
        transaction_id: id.to_owned(),
        kind: TransactionType::Charge,
        amount: Money::from_pence(100),
        balance_after: Money::from_pence(100 * i64::try_from(entry).unwrap_or(0)),
        transaction_date: transaction.transaction_date,
        posted_at: at(60),
    };
    (transaction, posted)
}

/// The import process of `external` at supplier `OLD_CO`, staged.
pub(in crate::store::sled) fn process(external: &str) -> ImportProcess {
    let body = json!({"import_supplier": "OLD_CO", "external_account_number": external});
    let payload = read_account(body, AccountLimits { max_items: 100 }).expect("an account");
    ImportProcess::stage(None, payload, None, at(120))
        .expect("staged")
        .0
}

/// The record of `transaction` with its ledger entry inside, as batch records hold them (and
/// as version 1 held some records of one transaction).
fn with_entry<'a>(transaction: &'a Transaction, entry: &'a LedgerEntry) -> TransactionRecord<'a> {
    TransactionRecord {
        transaction,
        ledger_entry: Some(entry),
    }
}

/// An empty directory for the fixture `name`, its sled database open in it.
fn fresh(name: &str) -> (PathBuf, sled::Db) {
    let dir = fixtures_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let db = sled::open(&dir).expect("sled");
    (dir, db)
}

/// Flushes `db`, closes it, and records `version` (none: version 1, no file).
fn close(dir: &Path, db: sled::Db, version: Option<u32>) {
    db.flush().expect("flush");
    drop(db);
    if let Some(version) = version {
        write(dir, version).expect("format");
    }
    assert_eq!(dir.join(FORMAT_FILE).exists(), version.is_some());
}

fn tree(db: &sled::Db, name: &str) -> sled::Tree {
    db.open_tree(name).expect("tree")
}

/// Writes the fixtures of versions 1 to 5 (see the module's doc).
#[test]
#[ignore = "writes the committed fixtures: run once, when a layout's fixture is added"]
fn write_format_fixtures() {
    write_v1_transactions();
    write_v2_event_records();
    write_v3_relay_cursor();
    write_v4_event_ids();
    write_v5_derived_trees();
}

/// Version 1, the layouts of transactions: one record each, with the entry inside or apart,
/// and batch records uncompressed and compressed.
fn write_v1_transactions() {
    let (dir, db) = fresh("v1-transactions");
    let own = tree(&db, super::v2_transaction_batches::OWN_TRANSACTIONS_TREE);
    let apart = tree(&db, super::v2_transaction_batches::LEDGER_ENTRIES_TREE);
    let batches = tree(&db, &AccountTable::TransactionBatches.tree_name());
    let first = "A-00000001";
    let (old, old_entry) = transaction("T-old", 5);
    own.insert(pair_key(first, "T-old"), encode(&old))
        .expect("insert");
    apart
        .insert(pair_key(first, &numbered(5)), encode(&old_entry))
        .expect("insert");
    let (inside, inside_entry) = transaction("T-inside", 6);
    own.insert(
        pair_key(first, "T-inside"),
        encode(&with_entry(&inside, &inside_entry)),
    )
    .expect("insert");
    let (plain, plain_entry) = transaction("T-plain", 7);
    batches
        .insert(
            pair_key(first, &batch_key(7, "T-plain")),
            encode(&[with_entry(&plain, &plain_entry)]),
        )
        .expect("insert");
    let (new, new_entry) = transaction("T-new", 9);
    batches
        .insert(
            pair_key(first, &batch_key(9, "T-new")),
            encode_batch(&[with_entry(&new, &new_entry)]),
        )
        .expect("insert");
    // A transaction that does not name its entry; the entry names it.
    let second = "A-00000002";
    let (mut unnamed, unnamed_entry) = transaction("T-unnamed", 3);
    unnamed.ledger_entry_id = None;
    own.insert(pair_key(second, "T-unnamed"), encode(&unnamed))
        .expect("insert");
    apart
        .insert(pair_key(second, &numbered(3)), encode(&unnamed_entry))
        .expect("insert");
    close(&dir, db, None);
}

/// Version 2, the layouts of the event log: an event's JSON alone, groups uncompressed (of
/// stream records, and of JSON), and the current records beside them.
fn write_v2_event_records() {
    let (dir, db) = fresh("v2-event-records");
    let events = tree(&db, "events");
    let json = |n: u8| encode(&event(n));
    let stream = |n: u8| StreamRecord::encode(&event(n));
    events
        .insert(10u64.to_be_bytes(), json(10))
        .expect("insert");
    events
        .insert(
            11u64.to_be_bytes(),
            uncompressed_group(&[stream(11), stream(12), stream(13)]),
        )
        .expect("insert");
    let mut mixed = vec![super::v3_event_records::GROUP_TAG];
    for bytes in [json(14), stream(15).into_bytes()] {
        mixed.extend_from_slice(&u32::try_from(bytes.len()).expect("small").to_be_bytes());
        mixed.extend_from_slice(&bytes);
    }
    events.insert(14u64.to_be_bytes(), mixed).expect("insert");
    let current: Vec<Event> = (16..=18).map(event).collect();
    let logged = LoggedEvents::new(&current);
    events
        .insert(16u64.to_be_bytes(), logged.records[0].clone())
        .expect("insert");
    events
        .insert(19u64.to_be_bytes(), stream(19).into_bytes())
        .expect("insert");
    tree(&db, "outbox_cursor")
        .insert(b"next_unpublished", &10u64.to_be_bytes())
        .expect("insert");
    close(&dir, db, Some(2));
}

/// Version 3, an outbox of its own and publication times one by one: events 10 to 16 logged,
/// 14 and 16 waiting in the outbox (as JSON and as a stream record), 10 to 12 published at
/// recorded times, 13 and 15 published at times not recorded, and no cursor.
fn write_v3_relay_cursor() {
    let (dir, db) = fresh("v3-relay-cursor");
    let events = tree(&db, "events");
    for n in 10..=16u8 {
        events
            .insert(
                u64::from(n).to_be_bytes(),
                StreamRecord::encode(&event(n)).into_bytes(),
            )
            .expect("insert");
    }
    let outbox = tree(&db, OUTBOX_TREE);
    outbox
        .insert(14u64.to_be_bytes(), encode(&event(14)))
        .expect("insert");
    outbox
        .insert(
            16u64.to_be_bytes(),
            StreamRecord::encode(&event(16)).into_bytes(),
        )
        .expect("insert");
    let published = tree(&db, PUBLISHED_TREE);
    for (seq, seconds) in [(10u64, 100), (11, 100), (12, 200)] {
        published
            .insert(seq.to_be_bytes(), at(seconds).to_rfc3339().as_bytes())
            .expect("insert");
    }
    close(&dir, db, Some(3));
}

/// Version 4, every event's id in `event_ids`: a canonical UUID, and two ids that are not.
fn write_v4_event_ids() {
    let (dir, db) = fresh("v4-event-ids");
    let by_id = tree(&db, "event_ids");
    by_id
        .insert(event(7).id.as_bytes(), &7u64.to_be_bytes())
        .expect("insert");
    by_id
        .insert("not-a-uuid", &8u64.to_be_bytes())
        .expect("insert");
    by_id
        .insert(event(9).id.to_uppercase().as_bytes(), &9u64.to_be_bytes())
        .expect("insert");
    close(&dir, db, Some(4));
}

/// Version 5, trees of derived data: processes without listings (and no mark saying they
/// have them), stale counts, a notes index tree, and ids handed out by sled's counter.
fn write_v5_derived_trees() {
    let (dir, db) = fresh("v5-derived-trees");
    let imports = tree(&db, "imports");
    for external in ["ACC-0", "ACC-1", "ACC-2"] {
        imports
            .insert(pair_key("OLD_CO", external), encode(&process(external)))
            .expect("insert");
    }
    tree(&db, IMPORT_COUNTS_TREE)
        .insert(pair_key("OLD_CO", "PENDING"), &7u64.to_be_bytes())
        .expect("insert");
    tree(&db, NOTE_INDEX_TREE)
        .insert(pair_key("A-1", "key"), b"[]".as_slice())
        .expect("insert");
    for _ in 0..1000 {
        db.generate_id().expect("an id");
    }
    close(&dir, db, Some(5));
}
