//! The format version of a sled data directory, and the upgrader that brings an older
//! directory to the current format, one step per version.
//!
//! The directory's `FORMAT` file holds its version: a number in decimal and a newline. A new
//! directory is written in the current format ([`CURRENT`]) and says so before its first
//! change. A directory without the file was written before versions were recorded: it is
//! version 1, and may hold any layout the code can still read ([`v2_transaction_batches`]
//! and the steps after it say which). A directory whose version is above [`CURRENT`] was
//! written by a later Ferry and is not opened: this one would misread it.
//!
//! Opening a directory of an earlier version runs the steps from its version up, in order,
//! after the journal's replay (whose records are in the layout of the version that wrote
//! them) and before the journal takes a change. Each step rewrites in sled what it converts,
//! flushes sled, and only then is the next version written to `FORMAT`: a crash during a step
//! leaves the version before it, and the step runs again. So every step may find its work
//! half done, and converts what is left of the older layout without harm to what it already
//! converted.

mod v2_transaction_batches;
mod v3_event_records;
mod v4_relay_cursor;
mod v5_event_ids;
mod v6_derived_trees;
mod v7_supplier_counts;

#[cfg(test)]
mod fixtures;

use crate::domain::storage::StoreError;
use crate::store::health::unwritable;
use std::fs::File;
use std::io::Write as _;
use std::path::Path;

/// The format this code writes: the layout of every tree as `docs/STORAGE.md` describes it.
pub(super) const CURRENT: u32 = 7;

/// The version of a directory without a `FORMAT` file.
const UNRECORDED: u32 = 1;

/// The name of the file that holds the directory's format version.
const FORMAT_FILE: &str = "FORMAT";

/// One step of the upgrader: takes a directory of version `from` to `from + 1`.
struct Step {
    from: u32,
    what: &'static str,
    run: fn(&sled::Db) -> Result<(), StoreError>,
}

/// Every step, in order: step `n` takes version `n + 1` to `n + 2`.
const STEPS: [Step; (CURRENT - UNRECORDED) as usize] = [
    Step {
        from: 1,
        what: "transactions kept one record each, and ledger entries kept apart, into batches",
        run: v2_transaction_batches::upgrade,
    },
    Step {
        from: 2,
        what: "the event log's JSON records and uncompressed groups into stream records",
        run: v3_event_records::upgrade,
    },
    Step {
        from: 3,
        what: "the outbox tree and per-event publication times into the relay's cursor and runs",
        run: v4_relay_cursor::upgrade,
    },
    Step {
        from: 4,
        what: "event ids indexed one by one into the index by millisecond",
        run: v5_event_ids::upgrade,
    },
    Step {
        from: 5,
        what: "the import listings built, trees of derived data dropped, ids reserved",
        run: v6_derived_trees::upgrade,
    },
    Step {
        from: 6,
        what: "each supplier's counters counted from the stored accounts",
        run: v7_supplier_counts::upgrade,
    },
];

/// Why a data directory's format cannot be opened.
#[derive(Debug, thiserror::Error)]
pub(super) enum FormatError {
    #[error(
        "the data directory {dir} is in format {found}, written by a later version of Ferry: \
         this one reads formats up to {CURRENT}, and would misread it"
    )]
    Later { dir: String, found: u32 },
    #[error("the data directory's {file} holds {text:?}, not a format version")]
    Unreadable { file: String, text: String },
}

impl From<FormatError> for StoreError {
    fn from(error: FormatError) -> Self {
        StoreError::Backend(Box::new(error))
    }
}

/// The version `dir`'s `FORMAT` file records (none: no file).
pub(super) fn recorded(dir: &Path) -> Result<Option<u32>, StoreError> {
    let path = dir.join(FORMAT_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error(&error)),
    };
    let version = text
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|version| *version >= UNRECORDED)
        .ok_or_else(|| FormatError::Unreadable {
            file: path.display().to_string(),
            text: text.clone(),
        })?;
    if version > CURRENT {
        return Err(FormatError::Later {
            dir: dir.display().to_string(),
            found: version,
        }
        .into());
    }
    Ok(Some(version))
}

/// Brings the directory `dir`, whose sled database `db` is open and its journal replayed, to
/// the current format: `recorded` is what its `FORMAT` file said ([`recorded`]). A new
/// database (nothing recovered, no file) is in the current format already.
pub(super) fn bring_up_to_date(
    db: &sled::Db,
    dir: &Path,
    recorded: Option<u32>,
) -> Result<(), StoreError> {
    let mut version = match recorded {
        Some(version) => version,
        None if !db.was_recovered() => return write(dir, CURRENT),
        None => UNRECORDED,
    };
    let from = version;
    for step in STEPS.iter().skip_while(|step| step.from < from) {
        tracing::info!(
            dir = %dir.display(),
            from = step.from,
            to = step.from + 1,
            step = step.what,
            "upgrading the data directory"
        );
        (step.run)(db)?;
        db.flush()?;
        version = step.from + 1;
        write(dir, version)?;
    }
    Ok(())
}

/// Records `version` in `dir`'s `FORMAT` file, durably: written beside it, synced, renamed
/// over it, and the directory synced.
fn write(dir: &Path, version: u32) -> Result<(), StoreError> {
    let written = (|| {
        let new = dir.join(format!("{FORMAT_FILE}.new"));
        let mut file = File::create(&new)?;
        writeln!(file, "{version}")?;
        file.sync_all()?;
        std::fs::rename(&new, dir.join(FORMAT_FILE))?;
        File::open(dir)?.sync_all()
    })();
    written.map_err(|error| io_error(&error))
}

fn io_error(error: &std::io::Error) -> StoreError {
    StoreError::Unwritable(unwritable(error))
}

/// A tree of `db` that an older layout kept and the current one does not: dropped once its
/// records are converted.
fn drop_tree(db: &sled::Db, name: &str) -> Result<(), StoreError> {
    db.drop_tree(name)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sled::SledStore;

    #[test]
    fn a_new_directory_is_written_in_the_current_format_and_opens_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        drop(SledStore::open(dir.path()).expect("created"));
        assert_eq!(recorded(dir.path()).expect("read"), Some(CURRENT));
        drop(SledStore::open(dir.path()).expect("opened again"));
        assert_eq!(recorded(dir.path()).expect("read"), Some(CURRENT));
    }

    #[test]
    fn a_directory_without_a_format_is_the_first_and_is_brought_up_to_date() {
        let dir = tempfile::tempdir().expect("temp dir");
        drop(sled::open(dir.path()).expect("sled"));
        assert_eq!(recorded(dir.path()).expect("read"), None);
        drop(SledStore::open(dir.path()).expect("upgraded"));
        assert_eq!(recorded(dir.path()).expect("read"), Some(CURRENT));
    }

    #[test]
    fn a_later_format_or_an_unreadable_one_is_not_opened() {
        let dir = tempfile::tempdir().expect("temp dir");
        write(dir.path(), CURRENT + 1).expect("written");
        let later = SledStore::open(dir.path()).expect_err("refused");
        assert!(later.to_string().contains("later version"), "{later}");
        std::fs::write(dir.path().join(FORMAT_FILE), "six\n").expect("written");
        let unreadable = SledStore::open(dir.path()).expect_err("refused");
        assert!(
            unreadable.to_string().contains("not a format"),
            "{unreadable}"
        );
    }

    #[test]
    fn the_steps_go_one_version_at_a_time_up_to_the_current_one() {
        let versions: Vec<u32> = STEPS.iter().map(|step| step.from).collect();
        let expected: Vec<u32> = (UNRECORDED..CURRENT).collect();
        assert_eq!(versions, expected);
    }

    /// What the release before versions were recorded answered about the fixture it wrote.
    fn expected() -> serde_json::Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sled/unversioned-9d6d717/expected.json");
        serde_json::from_slice(&std::fs::read(path).expect("expected.json")).expect("JSON")
    }

    /// The strings at `field` of each item of the array `items`.
    fn each(items: &serde_json::Value, field: &str) -> Vec<String> {
        items
            .as_array()
            .expect("an array")
            .iter()
            .map(|item| item[field].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_directory_of_the_release_before_versions_opens_with_everything_it_held() {
        use crate::domain::import_process::ImportState;
        use crate::domain::storage::{AccountStore, EventLog, ImportStore, Outbox, SupplierStore};
        use futures_util::TryStreamExt;
        let dir = super::fixtures::fixture("unversioned-9d6d717/db");
        let store = SledStore::open(dir.path()).expect("upgraded");
        assert_eq!(recorded(dir.path()).expect("read"), Some(CURRENT));
        let expected = expected();

        assert!(store.supplier("OLD_ENERGY").await.expect("read").is_some());
        assert!(store.team("Billing").await.expect("read").is_some());
        let listed: Vec<_> = store
            .import_listings("OLD_ENERGY", None)
            .try_collect()
            .await
            .expect("listings");
        let externals: Vec<&str> = listed
            .iter()
            .map(|listing| listing.external_account_number.as_str())
            .collect();
        assert_eq!(externals, each(&expected["all"], "external_account_number"));
        let numbers: Vec<String> = listed
            .iter()
            .map(|listing| listing.platform_account_number.clone().unwrap_or_default())
            .collect();
        assert_eq!(numbers, each(&expected["all"], "platform_account_number"));
        let counts = store.import_counts("OLD_ENERGY").await.expect("counts");
        assert_eq!(
            (
                counts.get(ImportState::Processed),
                counts.get(ImportState::Pending)
            ),
            (2, 1)
        );

        let account = &expected["account"];
        let number = expected["account_number"].as_str().expect("a number");
        let records = store.account_records(number).await.expect("records");
        let notes: Vec<String> = records
            .notes
            .iter()
            .map(|note| note.body.clone().unwrap_or_default())
            .collect();
        assert_eq!(notes, each(&account["notes"], "body"));
        let transactions: Vec<&str> = records
            .transactions
            .iter()
            .map(|transaction| transaction.transaction_id.as_str())
            .collect();
        assert_eq!(
            transactions,
            each(&account["transactions"], "transaction_id")
        );
        let entries: Vec<String> = records
            .ledger_entries
            .iter()
            .map(|entry| entry.balance_after.to_string())
            .collect();
        assert_eq!(entries, each(&account["ledger_entries"], "balance_after"));
        assert_eq!(
            records.summary.balance.to_string(),
            account["balance"].as_str().expect("a balance")
        );
        let mut unit = store.account_unit(number).await.expect("a unit");
        let kept = unit.transaction("T-1").await.expect("read");
        assert_eq!(kept.map(|kept| kept.transaction_id), Some("T-1".to_owned()));
        drop(unit);

        let log = store.events_after(None, 1000).await.expect("log");
        let ids: Vec<&str> = log.iter().map(|event| event.id.as_str()).collect();
        assert_eq!(ids, each(&expected["events"]["events"], "id"));
        for event in &log {
            assert_eq!(
                store.event_seq(&event.id).await.expect("seq"),
                Some(event.seq)
            );
        }
        let waiting = store
            .pending_events(1000, &std::collections::HashSet::new())
            .await
            .expect("pending");
        assert_eq!(
            Some(waiting.len() as u64),
            expected["ready"]["outbox_pending"].as_u64(),
            "what waited for the relay still waits"
        );

        assert_counted(&store, number).await;

        // And it takes writes: a change after the upgrade is kept.
        store
            .publish_events(&[super::fixtures::event(1)])
            .await
            .expect("published");
        drop(store);
        let store = SledStore::open(dir.path()).expect("reopened");
        assert_eq!(
            store.events_after(None, 1000).await.expect("log").len(),
            log.len() + 1
        );
    }

    /// What the accounts `make.py` writes count for once counted: three staged, two migrated,
    /// the first with four transactions from its document and three posted since (its ledger
    /// holds what was declared: -35.00 and -41.00 posted), three notes; both reconciled.
    async fn assert_counted(store: &SledStore, number: &str) {
        use crate::domain::storage::{AccountStore, ImportStore};
        let counts = store.supplier_counts("OLD_ENERGY").await.expect("counts");
        let counted: Vec<(&str, i64)> = counts.0.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        assert_eq!(
            counted,
            [
                ("data.notes", 3),
                ("data.transactions", 7),
                ("reconciliation.RECONCILED", 2),
                ("reconciliation.declared_pence", -7600),
                ("reconciliation.held_pence", -7600),
                ("staged", 3),
                ("state.PENDING", 1),
                ("state.PROCESSED", 2),
            ]
        );
        let summary = store.account_summary(number).await.expect("summary");
        let kept = summary.reconciliation.expect("given its reconciliation");
        assert_eq!(
            kept.declared.map(|money| money.to_string()).as_deref(),
            Some("-76.00")
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_version_6_directory_gets_its_counters_and_reconciliations() {
        let dir = super::fixtures::fixture("v6-supplier-counts");
        assert_eq!(recorded(dir.path()).expect("read"), Some(6));
        let store = SledStore::open(dir.path()).expect("upgraded");
        assert_eq!(recorded(dir.path()).expect("read"), Some(CURRENT));
        let expected: serde_json::Value = serde_json::from_slice(
            &std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/sled/v6-supplier-counts/expected.json"),
            )
            .expect("expected.json"),
        )
        .expect("JSON");
        let number = expected["account_number"].as_str().expect("a number");
        assert_counted(&store, number).await;
        // Counted once: opened again, the counters are as they were.
        drop(store);
        let store = SledStore::open(dir.path()).expect("reopened");
        assert_counted(&store, number).await;
    }
}
