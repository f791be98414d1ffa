//! The sled backend's write path: a write-ahead journal of Ferry's own in front of sled, so
//! that a durable write costs one share of a group sync instead of a sled flush (or a sled
//! transaction, which writes out sled's log buffer too) per request.
//!
//! Every change to the sled trees is one record of the journal ([`record`] has the format).
//! Under one commit lock a change lists its writes ([`Changes`]) and is appended to the
//! journal's buffer; one writer thread ([`writer`]) takes whatever records are buffered,
//! writes them to the current journal file with one sync, then makes their writes in sled, in
//! the journal's order, and only then reports them done ([`Journal::durable`], which every
//! write of the store waits for). So sled never holds a change the journal could lose, and
//! nothing reads a change before it is durable (the relay included). sled flushes in the
//! background on its own (every 500 ms); once a journal file is full ([`ROTATE_BYTES`]), the
//! writer moves to the next and a checkpoint thread ([`checkpoint`]) flushes sled and deletes
//! the full one. The same thread prepares spare files of zeros for the writer to write over.
//!
//! A change that decides from what is stored ([`Journal::commit`]: an import's state, a
//! supplier's settings) reads through [`Journal::get`], which sees the changes committed but
//! not yet in sled (an overlay, emptied by the writer as it makes them); blind writes
//! ([`Journal::commit_blind`]: an account's records under its own lock, and their events)
//! skip the overlay, and are listed before the commit lock is taken.
//!
//! On open, the records of every file left (a crash, or a stop before the checkpoint) are
//! applied again, in order ([`replay`]). Since no write bypasses the journal, replay never
//! brings back something a later write removed (an event the relay had published).
//!
//! Each round is on `/metrics`: `ferry_journal_records_total` (records written; over the count
//! of `ferry_journal_sync_seconds`, the records a round carries), `ferry_journal_sync_seconds`
//! (writing the round and syncing it), `ferry_journal_apply_seconds` (making it in sled),
//! and `ferry_journal_commit_wait_seconds`, per record, from its commit until it is durable:
//! what a durable write waits for before its request can answer. A round is recorded before
//! its committers are woken, so a request answered has its round counted.

mod checkpoint;
mod direct_file;
mod files;
mod record;
mod replay;
mod writer;

pub(super) use record::Changes;
pub(super) use replay::{Replayed, replay};

use super::generations::WriteGenerations;
use crate::domain::storage::{StoreError, Unwritable};
use checkpoint::{Chore, Spares};
use files::{create_file, io_error};
use sled::IVec;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;
use tokio::sync::oneshot;
use writer::CurrentFile;

#[cfg(test)]
pub(super) use files::wait_until_over_zeros;

/// Whether the disk has room for a spare of this many bytes: asked before each spare is
/// prepared, so that preparing one never takes the store's disk below its free-space
/// watermark (and never fills it), where the writes themselves are checked.
pub(super) type SpareRoom = Box<dyn Fn(u64) -> bool + Send>;

/// A journal file this large is closed and a new one begun; sled is flushed and the old file
/// deleted in the background. Also the size of a spare file, written with zeros beforehand.
pub(super) const ROTATE_BYTES: u64 = 16 * 1024 * 1024;

/// How far the journal is on disk and in sled, and who waits for more.
#[derive(Debug, Default)]
struct Durability {
    /// Every record up to this number is on disk and made in sled.
    through: u64,
    /// Set by a failed write or sync, for good: nothing after it will be durable.
    failed: Option<Unwritable>,
    /// The committers waiting, by the record each waits for. The writer wakes those its round
    /// made durable and no others: a request is woken once, when it may answer, not at every
    /// round to wait again.
    waiting: BTreeMap<u64, Vec<oneshot::Sender<()>>>,
}

impl Durability {
    /// What a committer waiting for `record` is told, if it need not wait.
    fn outcome_for(&self, record: u64) -> Option<Result<(), StoreError>> {
        match &self.failed {
            Some(failure) => Some(Err(StoreError::Unwritable(failure.clone()))),
            None => (self.through >= record).then_some(Ok(())),
        }
    }

    /// Every record up to `through` is durable: the committers waiting for them, to wake.
    fn reached(&mut self, through: u64) -> Vec<oneshot::Sender<()>> {
        self.through = through;
        let later = self.waiting.split_off(&through.saturating_add(1));
        std::mem::replace(&mut self.waiting, later)
            .into_values()
            .flatten()
            .collect()
    }
}

/// A record waiting for the writer thread.
struct Record {
    number: u64,
    changes: Changes,
    /// Whether its writes are in the overlay (to be taken out once made).
    overlaid: bool,
    /// When it was committed: its committers wait from then until its round is durable.
    committed: Instant,
}

/// What committers hand the writer thread.
#[derive(Default)]
struct Pending {
    /// The records, encoded.
    buffer: Vec<u8>,
    records: Vec<Record>,
    /// The number of the last record appended; numbers go on from the last run's.
    appended: u64,
    stop: bool,
}

/// A write committed and not yet made in sled: the record's number and the value (`None`: a
/// remove).
type Overlay = HashMap<(IVec, IVec), (u64, Option<IVec>)>;

struct Shared {
    /// Held while a change is decided and appended: one change at a time, numbered in order.
    commit: Mutex<()>,
    pending: Mutex<Pending>,
    wake: Condvar,
    durable: Mutex<Durability>,
    overlay: Mutex<Overlay>,
    /// Set when the journal is dropped: a spare being prepared is given up.
    stopping: AtomicBool,
    /// Counts the writes made in sled, for the records kept decoded.
    generations: Arc<WriteGenerations>,
    /// Makes the next round fail in sled part-way through its first record, as a failing
    /// sled would (tests: nothing else makes sled fail an insert).
    #[cfg(test)]
    fail_in_sled: AtomicBool,
    /// Held by a test to keep rounds from being written ([`Journal::hold_rounds`]).
    #[cfg(test)]
    rounds_held: Mutex<()>,
    /// Held by a test to keep a round that is on disk from being made in sled
    /// ([`Journal::hold_making`]).
    #[cfg(test)]
    making_held: Mutex<()>,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn overlay(&self) -> MutexGuard<'_, Overlay> {
        self.overlay.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn durable(&self) -> MutexGuard<'_, Durability> {
        self.durable.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The journal of one sled store (see the module's doc). Dropping it writes what is buffered,
/// stops its threads (which hold the sled database open), flushes sled and empties the journal.
pub(super) struct Journal {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").finish_non_exhaustive()
    }
}

impl Journal {
    /// Applies what the journal files in `dir/journal` hold to `db` ([`replay::replay`]), then
    /// starts the journal ([`Self::start`]).
    #[cfg(test)]
    pub(super) fn open(db: &sled::Db, dir: &Path, rotate_bytes: u64) -> Result<Self, StoreError> {
        let replayed = replay::replay(db, dir)?;
        Self::start(db, dir, &replayed, rotate_bytes, Box::new(|_| true))
    }

    /// Starts the journal in `dir/journal`, after `replayed` emptied it: a new file to write,
    /// numbered after the files replayed, the writer thread and the checkpoint thread.
    ///
    /// A spare is prepared only while `room` says the disk has room for it
    /// ([`SpareRoom`]); the writer appends meanwhile.
    pub(super) fn start(
        db: &sled::Db,
        dir: &Path,
        replayed: &Replayed,
        rotate_bytes: u64,
        room: SpareRoom,
    ) -> Result<Self, StoreError> {
        let dir = dir.join("journal");
        let number = replayed.next_file;
        let file = create_file(&dir, number).map_err(io_error)?;
        let journal_dir = dir.clone();
        let shared = Arc::new(Shared {
            commit: Mutex::new(()),
            pending: Mutex::new(Pending {
                appended: replayed.last,
                ..Pending::default()
            }),
            wake: Condvar::new(),
            durable: Mutex::new(Durability {
                through: replayed.last,
                ..Durability::default()
            }),
            overlay: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
            generations: Arc::default(),
            #[cfg(test)]
            fail_in_sled: AtomicBool::new(false),
            #[cfg(test)]
            rounds_held: Mutex::new(()),
            #[cfg(test)]
            making_held: Mutex::new(()),
        });
        let (chores, chore_queue) = mpsc::channel::<Chore>();
        let (spare_sender, spares) = mpsc::channel::<Option<File>>();
        let writer = {
            let shared = shared.clone();
            let mut current = CurrentFile::new(dir, number, file, rotate_bytes, chores, spares);
            std::thread::Builder::new()
                .name("ferry-journal".into())
                .spawn(move || writer::write_loop(&shared, &mut current))
                .map_err(io_error)?
        };
        let checkpointer = {
            let db = db.clone();
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("ferry-checkpoint".into())
                .spawn(move || {
                    let spares = Spares {
                        dir: &journal_dir,
                        bytes: rotate_bytes,
                        room: &*room,
                        stopping: &shared.stopping,
                        ready: spare_sender,
                    };
                    checkpoint::chore_loop(&db, &chore_queue, &spares);
                    // The writer has stopped. A clean stop leaves sled flushed, the journal
                    // empty. After a failure sled may hold a round half made: the files stay,
                    // to make it whole on the next open.
                    match &shared.durable().failed {
                        None => checkpoint::close(&db, &journal_dir),
                        Some(failure) => tracing::warn!(
                            %failure,
                            dir = %journal_dir.display(),
                            "the journal failed: its files are kept, to be applied again on the next open"
                        ),
                    }
                })
                .map_err(io_error)?
        };
        Ok(Self {
            shared,
            threads: vec![writer, checkpointer],
        })
    }

    /// Runs `change` under the commit lock: it reads what it needs through [`Self::get`] and
    /// lists its writes, which are then journaled (and seen by the next change's reads at
    /// once). Nothing is written if it fails. Durable, and in sled, once [`Self::durable`]
    /// says so.
    pub(super) fn commit<T, E: From<StoreError>>(
        &self,
        change: impl FnOnce(&mut Changes) -> Result<T, E>,
    ) -> Result<T, E> {
        let _commit = self.commit_lock();
        let mut changes = Changes::default();
        let value = change(&mut changes)?;
        self.push(changes, true);
        Ok(value)
    }

    /// Journals `changes`, listed beforehand, for writes that decide nothing from what is
    /// stored and that no [`Self::commit`] reads (an account's records, written under the
    /// account's own lock, and their events): kept out of the overlay. Only `finish` runs
    /// under the commit lock: what must follow the order of the journal (event seqs). The
    /// record's number, for [`Self::durable`] (none: nothing to write).
    pub(super) fn commit_blind(
        &self,
        mut changes: Changes,
        finish: impl FnOnce(&mut Changes),
    ) -> Option<u64> {
        let _commit = self.commit_lock();
        finish(&mut changes);
        self.push(changes, false)
    }

    /// The counts of the writes this journal makes in sled (its rounds, and
    /// [`Self::make_now`]).
    pub(super) fn generations(&self) -> &Arc<WriteGenerations> {
        &self.shared.generations
    }

    /// What is stored at `key` of `tree`, the changes committed but not yet made included.
    pub(super) fn get(&self, tree: &sled::Tree, key: &[u8]) -> Result<Option<IVec>, StoreError> {
        let committed = self
            .shared
            .overlay()
            .get(&(tree.name(), IVec::from(key)))
            .map(|(_, value)| value.clone());
        match committed {
            Some(value) => Ok(value),
            None => Ok(tree.get(key)?),
        }
    }

    /// The keys of `tree`, the changes committed but not yet made included: for a change that
    /// must see every record of a small tree (under the commit lock, like [`Self::get`]).
    pub(super) fn keys(&self, tree: &sled::Tree) -> Result<Vec<IVec>, StoreError> {
        let mut keys = std::collections::BTreeSet::new();
        for entry in tree.iter().keys() {
            keys.insert(entry?);
        }
        let name = tree.name();
        for ((of, key), (_, value)) in self.shared.overlay().iter() {
            if *of == name {
                match value {
                    Some(_) => keys.insert(key.clone()),
                    None => keys.remove(key),
                };
            }
        }
        Ok(keys.into_iter().collect())
    }

    /// Journals `changes` at once, without the commit lock, whoever holds it: for a record that
    /// must come before the changes that follow (an id block's reservation, which a change
    /// holding the commit lock may need).
    pub(super) fn append_now(&self, changes: Changes) {
        self.push(changes, false);
    }

    /// Makes `changes` in sled at once, counted, and journals them as [`Self::append_now`]
    /// does: for writes that may be seen before they are durable (the relay's records, which
    /// no change reads under the commit lock, see `mark_published`).
    pub(super) fn make_now(&self, changes: Changes) -> Result<(), sled::Error> {
        changes.apply(&self.shared.generations)?;
        self.append_now(changes);
        Ok(())
    }

    fn commit_lock(&self) -> MutexGuard<'_, ()> {
        self.shared
            .commit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends `changes` to the buffer for the writer: the number of their record (none:
    /// nothing to write).
    fn push(&self, changes: Changes, overlaid: bool) -> Option<u64> {
        if changes.is_empty() {
            return None;
        }
        let mut pending = self.shared.pending();
        pending.appended += 1;
        let number = pending.appended;
        if overlaid {
            let mut overlay = self.shared.overlay();
            for (tree, key, value) in &changes.writes {
                overlay.insert((tree.name(), key.clone()), (number, value.clone()));
            }
        }
        let was_empty = pending.buffer.is_empty();
        changes.encode_into(number, &mut pending.buffer);
        pending.records.push(Record {
            number,
            changes,
            overlaid,
            committed: Instant::now(),
        });
        if was_empty {
            self.shared.wake.notify_one();
        }
        Some(number)
    }

    /// Keeps the writer from writing any round until the guard is dropped: for tests that need
    /// a change journaled and not yet durable, whatever the machine's speed.
    #[cfg(test)]
    pub(super) fn hold_rounds(&self) -> MutexGuard<'_, ()> {
        self.shared
            .rounds_held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the writer from making a round in sled, once it is on disk, until the guard is
    /// dropped: for tests of what a change on disk and not yet in sled is.
    #[cfg(test)]
    fn hold_making(&self) -> MutexGuard<'_, ()> {
        self.shared
            .making_held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of the last record appended.
    pub(super) fn appended(&self) -> u64 {
        self.shared.pending().appended
    }

    /// Resolves once every record up to `record` is on disk and in sled, or the journal has
    /// failed.
    pub(super) async fn durable(&self, record: u64) -> Result<(), StoreError> {
        let reached = {
            let mut durability = self.shared.durable();
            if let Some(outcome) = durability.outcome_for(record) {
                return outcome;
            }
            let (reached, waiting) = oneshot::channel();
            durability.waiting.entry(record).or_default().push(reached);
            waiting
        };
        // Dropped unsent when the writer fails (or stops, which `self` prevents).
        let _ = reached.await;
        self.shared
            .durable()
            .outcome_for(record)
            .unwrap_or_else(|| {
                Err(StoreError::Unwritable(Unwritable::Failed(
                    "the journal writer stopped".into(),
                )))
            })
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        self.shared.pending().stop = true;
        self.shared.wake.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use files::journal_files;
    use std::path::Path;

    pub(super) fn open_db(dir: &Path) -> sled::Db {
        sled::Config::new().path(dir).open().expect("sled")
    }

    /// A write as a test lists it: tree, key, value (`None`: a remove).
    pub(super) type TestWrite<'a> = (&'a str, &'a [u8], Option<&'a [u8]>);

    /// Record `number`, as the journal writes it.
    pub(super) fn record(number: u64, writes: &[TestWrite<'_>], db: &sled::Db) -> Vec<u8> {
        let mut changes = Changes::default();
        for (tree, key, value) in writes {
            let tree = db.open_tree(tree).expect("tree");
            match value {
                Some(value) => changes.insert(&tree, *key, *value),
                None => changes.remove(&tree, *key),
            }
        }
        let mut bytes = Vec::new();
        changes.encode_into(number, &mut bytes);
        bytes
    }

    #[test]
    fn a_round_wakes_the_committers_it_made_durable_and_no_others() {
        let mut durability = Durability::default();
        let mut waiting = |record: u64| {
            let (reached, waiting) = oneshot::channel();
            durability.waiting.entry(record).or_default().push(reached);
            waiting
        };
        let (mut third, mut fourth, mut fifth) = (waiting(3), waiting(4), waiting(5));
        let second_third = waiting(3);
        for committer in durability.reached(4) {
            committer.send(()).expect("waiting");
        }
        assert_eq!(third.try_recv(), Ok(()));
        assert_eq!(fourth.try_recv(), Ok(()));
        assert!(second_third.blocking_recv().is_ok());
        assert_eq!(fifth.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        assert!(matches!(durability.outcome_for(4), Some(Ok(()))));
        assert!(durability.outcome_for(5).is_none());
        assert_eq!(durability.waiting.keys().copied().collect::<Vec<_>>(), [5]);
    }

    /// The count a test stores as eight big-endian bytes, if there is one.
    fn count_in(stored: Option<IVec>) -> Option<u64> {
        stored
            .and_then(|bytes| <[u8; 8]>::try_from(bytes.as_ref()).ok())
            .map(u64::from_be_bytes)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn changes_are_seen_by_the_next_change_at_once_and_by_readers_once_durable() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        let tree = db.open_tree("counts").expect("tree");
        // Small files, so that some fill up and are checkpointed while the commits go on.
        let journal = Arc::new(Journal::open(&db, data.path(), 4096).expect("journal"));
        let writers: Vec<_> = (0..4u64)
            .map(|_| {
                let journal = journal.clone();
                let tree = tree.clone();
                tokio::spawn(async move {
                    for _ in 0..50 {
                        // Read, add one, write: only right if each change sees the last.
                        let written = journal
                            .commit(|changes| {
                                let count = count_in(journal.get(&tree, b"count")?).unwrap_or(0);
                                changes.insert(&tree, "count", &(count + 1).to_be_bytes());
                                Ok::<_, StoreError>(count + 1)
                            })
                            .expect("commit");
                        let committed = journal.appended();
                        journal.durable(committed).await.expect("durable");
                        let in_sled = count_in(tree.get("count").expect("get"));
                        assert!(
                            in_sled >= Some(written),
                            "in sled once durable: {in_sled:?} after writing {written}"
                        );
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.await.expect("writer");
        }
        assert_eq!(journal.appended(), 200);
        assert_eq!(
            tree.get("count").expect("get").as_deref(),
            Some(&200u64.to_be_bytes()[..])
        );
        assert!(journal.shared.overlay().is_empty(), "the overlay empties");
        let files = journal_files(&data.path().join("journal")).expect("files");
        assert!(
            files.last().expect("a file").0 > 0,
            "files filled up: {files:?}"
        );
        // The checkpoint thread deletes full files behind the writer.
        for _ in 0..500 {
            if journal_files(&data.path().join("journal"))
                .expect("files")
                .len()
                == 1
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let files = journal_files(&data.path().join("journal")).expect("files");
        assert_eq!(files.len(), 1, "full files are checkpointed: {files:?}");
    }

    #[test]
    fn a_failed_change_writes_nothing() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        let tree = db.open_tree("t").expect("tree");
        let journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
        let failed: Result<(), StoreError> = journal.commit(|changes| {
            changes.insert(&tree, "k", "v");
            Err(StoreError::Conflict)
        });
        assert!(failed.is_err());
        assert_eq!(journal.appended(), 0);
        assert_eq!(journal.get(&tree, b"k").expect("get"), None);
    }
}
