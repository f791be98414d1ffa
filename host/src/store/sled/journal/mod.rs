//! The sled backend's write path: a write-ahead journal of our own in front of sled, so that a
//! durable write costs one share of a group sync instead of a sled flush (or a sled
//! transaction, which writes out sled's log buffer too) per request.
//!
//! Every change to the sled trees is one record of the journal. Under one commit lock a
//! change lists its writes ([`Changes`]) and is appended to the journal's buffer; one writer
//! thread takes whatever records are buffered, appends them to the current journal file with
//! one sync, then makes their writes in sled, in the journal's order, and only then
//! reports them done ([`Journal::durable`], which every write of the store waits for). So sled
//! never holds a change the journal could lose, and nothing reads a change before it is
//! durable (the relay included). sled flushes in the background on its own (every 500 ms);
//! once a journal file has grown past [`ROTATE_BYTES`], the writer starts a new one and a
//! checkpoint thread flushes sled and deletes the old file.
//!
//! The writer writes over zeros. The checkpoint thread prepares spare files: zeros, as long
//! as a full journal file, written and synced beforehand; one at open, and the next once the
//! writer is half-way through the current one. The writer moves to the spare as soon as it is
//! ready (at once after opening, or when a round would not fit). A record
//! written over such zeros changes neither the file's size nor its blocks. So a round needs
//! the disk to take only its pages and a cache flush: it is written straight to the disk,
//! bypassing the page cache, in one `pwrite` that returns once the disk has it
//! ([`DirectFile`]; through the page cache and `fdatasync` where the filesystem has no direct
//! I/O). An appended round also sends the inode and the new blocks' metadata: three or four
//! requests to the disk where two will do, each an exit to the hypervisor on a virtual disk,
//! and each a wait. When no spare is ready, the writer appends, as it did before.
//!
//! A change that decides from what is stored ([`Journal::commit`]: an import's state, a
//! supplier's settings) reads through [`Journal::get`], which sees the changes committed but
//! not yet in sled (an overlay, emptied by the writer as it makes them); blind writes
//! ([`Journal::commit_blind`]: an account's records under its own lock, and their events)
//! skip the overlay, and are listed before the commit lock is taken.
//!
//! On open, the records of every file left (a crash, or a stop before the checkpoint) are
//! applied again, in order. Each lists the trees' values after the change, and sled holds
//! some prefix of the records since the last checkpoint, with a change perhaps half made: so
//! applying them all again in order ends in the state after the last. A record torn by a crash
//! (its length or checksum does not hold) ends the replay: it was never acknowledged. Since no
//! write bypasses the journal, replay never brings back something a later write removed (an
//! event the relay had published).
//!
//! Each round is on `/metrics`: `ferry_journal_records_total` (records written; over the count
//! of `ferry_journal_sync_seconds`, the records a round carries), `ferry_journal_sync_seconds`
//! (writing the round and syncing it), `ferry_journal_apply_seconds` (making it in sled),
//! and `ferry_journal_commit_wait_seconds`, per record, from its commit until it is durable:
//! what a durable write waits for before its request can answer. A round is recorded before
//! its committers are woken, so a request answered has its round counted.
//!
//! Record: `u32` payload length, `u32` CRC-32 of the payload (little-endian), the payload:
//! `u64` record number, then per write `u8` kind (1 insert, 2 remove), `u16` tree-name length
//! and name, `u32` key length and key, and for an insert `u32` value length and value. A
//! payload is never empty, so a length of zero is where the records of a file end, in the
//! zeros of a prepared file. (Files written by earlier versions, appended only, read the same.)

mod direct_file;

use super::generations::WriteGenerations;
use crate::domain::storage::{StoreError, Unwritable};
use crate::store::health::unwritable;
use direct_file::DirectFile;
use metrics::{Counter, Histogram};
use sled::IVec;
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;
use tokio::sync::oneshot;

/// A journal file this large is closed and a new one begun; sled is flushed and the old file
/// deleted in the background. Also the size of a spare file, written with zeros beforehand.
pub(super) const ROTATE_BYTES: u64 = 16 * 1024 * 1024;

/// The name of the spare file in the journal's directory, until the writer takes it and
/// gives it the next journal file's name.
const SPARE: &str = "spare";

/// How often an idle writer looks whether the spare it waits for is ready.
const SPARE_POLL: std::time::Duration = std::time::Duration::from_millis(5);

const INSERT: u8 = 1;
const REMOVE: u8 = 2;
const HEADER: usize = 8;

/// The writes of one change, in the order they are made.
#[derive(Default)]
pub(super) struct Changes {
    writes: Vec<(sled::Tree, IVec, Option<IVec>)>,
}

impl Changes {
    pub(super) fn insert(
        &mut self,
        tree: &sled::Tree,
        key: impl Into<IVec>,
        value: impl Into<IVec>,
    ) {
        self.writes
            .push((tree.clone(), key.into(), Some(value.into())));
    }

    pub(super) fn remove(&mut self, tree: &sled::Tree, key: impl Into<IVec>) {
        self.writes.push((tree.clone(), key.into(), None));
    }

    fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Appends the change as record `number` to `buffer`.
    fn encode_into(&self, number: u64, buffer: &mut Vec<u8>) {
        let start = buffer.len();
        buffer.extend_from_slice(&[0; HEADER]);
        buffer.extend_from_slice(&number.to_le_bytes());
        for (tree, key, value) in &self.writes {
            let name = tree.name();
            buffer.push(if value.is_some() { INSERT } else { REMOVE });
            // Tree names are this program's own, a few bytes long.
            buffer.extend_from_slice(&(name.len() as u16).to_le_bytes());
            buffer.extend_from_slice(&name);
            buffer.extend_from_slice(&(key.len() as u32).to_le_bytes());
            buffer.extend_from_slice(key);
            if let Some(value) = value {
                buffer.extend_from_slice(&(value.len() as u32).to_le_bytes());
                buffer.extend_from_slice(value);
            }
        }
        let payload_len = (buffer.len() - start - HEADER) as u32;
        let crc = crc32fast::hash(&buffer[start + HEADER..]);
        buffer[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
        buffer[start + 4..start + HEADER].copy_from_slice(&crc.to_le_bytes());
    }

    /// Makes the writes in sled, in order, each counted in `generations` once made (the
    /// writer's part, and [`Journal::make_now`]'s).
    fn apply(&self, generations: &WriteGenerations) -> Result<(), sled::Error> {
        for (tree, key, value) in &self.writes {
            match value {
                Some(value) => tree.insert(key.clone(), value.clone())?,
                None => tree.remove(key)?,
            };
            generations.written(&tree.name(), key);
        }
        Ok(())
    }
}

/// How far the journal is on disk and in sled, and who waits for more.
#[derive(Debug, Default)]
struct Durability {
    /// Every record up to this number is on disk and made in sled.
    through: u64,
    /// Set by a failed write or sync, for good: nothing after it will be durable.
    failed: Option<Unwritable>,
    /// The committers waiting, by the record each waits for. The writer wakes those its round
    /// made durable and no others: a watch channel woke every waiting request at each round,
    /// most of them to wait again (~1.5 % of a note's CPU at 32 connections, more with more).
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
    /// Applies what the journal files in `dir/journal` hold to `db`, flushes it, deletes the
    /// files and starts a new one.
    pub(super) fn open(db: &sled::Db, dir: &Path, rotate_bytes: u64) -> Result<Self, StoreError> {
        let dir = dir.join("journal");
        std::fs::create_dir_all(&dir).map_err(io_error)?;
        let files = journal_files(&dir)?;
        let mut replay = Replay::new(db);
        for (_, path) in &files {
            let applied = replay.file(path)?;
            tracing::info!(file = %path.display(), records = applied, "journal replayed");
        }
        if !files.is_empty() {
            db.flush()?;
            for (_, path) in &files {
                std::fs::remove_file(path).map_err(io_error)?;
            }
        }
        // A spare left by a crash: zeros, and maybe not all of them.
        remove_spare(&dir).map_err(io_error)?;
        let number = files.last().map_or(0, |(number, _)| number + 1);
        let file = create_file(&dir, number).map_err(io_error)?;
        let journal_dir = dir.clone();
        let shared = Arc::new(Shared {
            commit: Mutex::new(()),
            pending: Mutex::new(Pending {
                appended: replay.last,
                ..Pending::default()
            }),
            wake: Condvar::new(),
            durable: Mutex::new(Durability {
                through: replay.last,
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
            let mut current = CurrentFile {
                dir,
                number,
                file,
                written: 0,
                zeros: 0,
                direct: None,
                rotate_bytes,
                chores,
                spares,
                spare_requested: false,
            };
            // The first file is appended to until the first spare is ready.
            current.request_spare();
            std::thread::Builder::new()
                .name("ferry-journal".into())
                .spawn(move || write_loop(&shared, &mut current))
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
                        stopping: &shared.stopping,
                        ready: spare_sender,
                    };
                    chore_loop(&db, &chore_queue, &spares);
                    // The writer has stopped. A clean stop leaves sled flushed, the journal
                    // empty. After a failure sled may hold a round half made: the files stay,
                    // to make it whole on the next open.
                    match &shared.durable().failed {
                        None => close(&db, &journal_dir),
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

/// The journal file being written, and what to do once it is full.
struct CurrentFile {
    dir: PathBuf,
    number: u64,
    file: File,
    written: u64,
    /// How many bytes at the file's start were zeros written and synced before it was taken
    /// (none: a file that records are appended to).
    zeros: u64,
    /// The file opened again for direct writes over its zeros (none: a file appended to, or a
    /// filesystem without direct I/O).
    direct: Option<DirectFile>,
    rotate_bytes: u64,
    chores: mpsc::Sender<Chore>,
    /// Spares, as the checkpoint thread prepares them (`None`: it could not).
    spares: mpsc::Receiver<Option<File>>,
    /// Whether a spare has been asked for and not yet received.
    spare_requested: bool,
}

impl CurrentFile {
    /// Writes a round after what is written, and syncs it: straight to the disk over zeros,
    /// through the page cache and `fdatasync` past them.
    fn write(&mut self, records: &[u8]) -> std::io::Result<()> {
        let end = self.written + records.len() as u64;
        match &mut self.direct {
            Some(direct) if end <= self.zeros => direct.write_at(records, self.written)?,
            _ => {
                self.file.write_all_at(records, self.written)?;
                self.file.sync_data()?;
            }
        }
        self.written = end;
        Ok(())
    }

    /// Before a round of `len` bytes: unless it fits in this file's zeros, moves to the spare
    /// if one is ready, or else to a new file to append to once this one is full. The file
    /// left is handed to the checkpoint thread (everything in it is made in sled).
    fn make_room(&mut self, len: usize) -> std::io::Result<()> {
        // The next spare is asked for once this file is half written (at once for a file
        // without zeros): a server that writes little keeps one file of zeros on disk, not two.
        if self.written >= self.zeros / 2 {
            self.request_spare();
        }
        if self.written.saturating_add(len as u64) <= self.zeros {
            return Ok(());
        }
        if !self.take_spare()? && self.written >= self.rotate_bytes {
            let number = self.number + 1;
            let file = create_file(&self.dir, number)?;
            self.begin(file, number, 0);
            self.request_spare();
        }
        Ok(())
    }

    /// Moves to the spare if it is ready: whether it did.
    fn take_spare(&mut self) -> std::io::Result<bool> {
        match self.spares.try_recv() {
            Ok(Some(spare)) => {
                let number = self.number + 1;
                std::fs::rename(self.dir.join(SPARE), file_path(&self.dir, number))?;
                // The name is durable before anything is acknowledged from the file.
                sync_dir(&self.dir)?;
                self.begin(spare, number, self.rotate_bytes);
                self.spare_requested = false;
                Ok(true)
            }
            Ok(None) => {
                self.spare_requested = false;
                Ok(false)
            }
            Err(_) => Ok(false),
        }
    }

    /// Whether records are appended to this file while a spare is being prepared.
    fn awaits_spare(&self) -> bool {
        self.zeros == 0 && self.spare_requested
    }

    fn begin(&mut self, file: File, number: u64, zeros: u64) {
        let full = file_path(&self.dir, self.number);
        self.file = file;
        self.number = number;
        self.written = 0;
        self.zeros = zeros;
        self.direct = if zeros == 0 {
            None
        } else {
            match DirectFile::open(&file_path(&self.dir, number)) {
                Ok(direct) => Some(direct),
                Err(error) => {
                    tracing::debug!(%error, "no direct writes: the journal writes through the page cache");
                    None
                }
            }
        };
        // The checkpoint thread is gone only when this thread stops too.
        let _ = self.chores.send(Chore::Checkpoint(full));
    }

    fn request_spare(&mut self) {
        if !self.spare_requested {
            self.spare_requested = self.chores.send(Chore::PrepareSpare).is_ok();
        }
    }
}

/// Writes what committers buffer, one sync per round, then makes it in sled, until the
/// journal is dropped.
fn write_loop(shared: &Shared, current: &mut CurrentFile) {
    let metrics = RoundMetrics::new();
    let mut bytes = Vec::new();
    let mut records = Vec::new();
    loop {
        let through = {
            let mut pending = shared.pending();
            while pending.buffer.is_empty() && !pending.stop {
                if !current.awaits_spare() {
                    pending = shared
                        .wake
                        .wait(pending)
                        .unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
                // Idle, appending, a spare on its way: moves to it once it is ready, rather
                // than in the round of the next request.
                pending = shared
                    .wake
                    .wait_timeout(pending, SPARE_POLL)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                if pending.buffer.is_empty() {
                    drop(pending);
                    if let Err(error) = current.take_spare() {
                        return fail(shared, unwritable(&error));
                    }
                    pending = shared.pending();
                }
            }
            if pending.buffer.is_empty() {
                return;
            }
            bytes.clear();
            std::mem::swap(&mut bytes, &mut pending.buffer);
            std::mem::swap(&mut records, &mut pending.records);
            pending.appended
        };
        let mut round = || -> Result<RoundTimes, Unwritable> {
            current
                .make_room(bytes.len())
                .map_err(|error| unwritable(&error))?;
            let started = Instant::now();
            current.write(&bytes).map_err(|error| unwritable(&error))?;
            let synced = Instant::now();
            // Waits while a test holds the round between the disk and sled.
            #[cfg(test)]
            drop(
                shared
                    .making_held
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            make(shared, &records)?;
            let made = Instant::now();
            Ok(RoundTimes {
                started,
                synced,
                made,
            })
        };
        // Waits while a test holds rounds back (`Journal::hold_rounds`).
        #[cfg(test)]
        drop(
            shared
                .rounds_held
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        match round() {
            Ok(times) => {
                // Recorded before anyone is woken: a request answered has its round counted.
                times.record(&metrics, &records);
                records.clear();
                let reached = shared.durable().reached(through);
                for committer in reached {
                    let _ = committer.send(());
                }
            }
            // Nothing written after a failed write can be trusted: take no more.
            Err(failure) => return fail(shared, failure),
        }
    }
}

/// The journal can take no more: every committer waiting, and every one to come, is told.
fn fail(shared: &Shared, failure: Unwritable) {
    tracing::error!(%failure, "the journal could not be written or made in sled");
    let mut durability = shared.durable();
    durability.failed = Some(failure);
    // Each learns of the failure as it wakes.
    durability.waiting.clear();
}

/// The writer's metric handles (see the module's doc), made when the journal opens: the
/// server installs its recorder before it opens the store.
struct RoundMetrics {
    records: Counter,
    sync: Histogram,
    apply: Histogram,
    commit_wait: Histogram,
}

impl RoundMetrics {
    fn new() -> Self {
        Self {
            records: metrics::counter!("ferry_journal_records_total"),
            sync: metrics::histogram!("ferry_journal_sync_seconds"),
            apply: metrics::histogram!("ferry_journal_apply_seconds"),
            commit_wait: metrics::histogram!("ferry_journal_commit_wait_seconds"),
        }
    }
}

/// When a round of the writer wrote its records, had them on disk, and had made them in sled.
struct RoundTimes {
    started: Instant,
    synced: Instant,
    made: Instant,
}

impl RoundTimes {
    /// Records the round, once it is on disk and in sled.
    fn record(&self, metrics: &RoundMetrics, records: &[Record]) {
        metrics.records.increment(records.len() as u64);
        metrics
            .sync
            .record(self.synced.duration_since(self.started));
        metrics.apply.record(self.made.duration_since(self.synced));
        let durable = Instant::now();
        for record in records {
            metrics
                .commit_wait
                .record(durable.duration_since(record.committed));
        }
    }
}

/// Makes `records` (on disk now) in sled, in order, and takes them out of the overlay.
fn make(shared: &Shared, records: &[Record]) -> Result<(), Unwritable> {
    for record in records.iter() {
        #[cfg(test)]
        if shared.fail_in_sled.load(Ordering::Relaxed) {
            if let Some((tree, key, Some(value))) = record.changes.writes.first() {
                let _ = tree.insert(key.clone(), value.clone());
            }
            return Err(Unwritable::Failed("sled failed, as a test asked".into()));
        }
        record
            .changes
            .apply(&shared.generations)
            .map_err(|error| match error {
                sled::Error::Io(io) => unwritable(&io),
                other => Unwritable::Failed(other.to_string()),
            })?;
    }
    if records.iter().any(|record| record.overlaid) {
        let mut overlay = shared.overlay();
        for record in records.iter().filter(|record| record.overlaid) {
            for (tree, key, _) in &record.changes.writes {
                let entry = (tree.name(), key.clone());
                // Unless a later change, still to be made, wrote it again.
                if overlay
                    .get(&entry)
                    .is_some_and(|(number, _)| *number == record.number)
                {
                    overlay.remove(&entry);
                }
            }
        }
    }
    Ok(())
}

/// What the writer hands the checkpoint thread.
enum Chore {
    /// A full journal file, every record in it made in sled: flush sled, then delete it.
    Checkpoint(PathBuf),
    /// Prepare a spare file.
    PrepareSpare,
}

/// Where the checkpoint thread prepares spares, and where it sends them.
struct Spares<'a> {
    dir: &'a Path,
    bytes: u64,
    stopping: &'a AtomicBool,
    ready: mpsc::Sender<Option<File>>,
}

impl Spares<'_> {
    /// Writes the spare's zeros and syncs them, data and size: the writer's records over them
    /// then change no metadata. `None` once the journal stops.
    fn prepare(&self) -> std::io::Result<Option<File>> {
        const CHUNK: u64 = 1 << 20;
        let path = self.dir.join(SPARE);
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)?;
        let zeros = vec![0; CHUNK.min(self.bytes) as usize];
        let mut left = self.bytes;
        while left > 0 {
            if self.stopping.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let chunk = left.min(CHUNK);
            file.write_all(&zeros[..chunk as usize])?;
            left -= chunk;
        }
        file.sync_all()?;
        Ok(Some(file))
    }
}

/// Does the writer's chores in order, until the writer stops.
fn chore_loop(db: &sled::Db, chores: &mpsc::Receiver<Chore>, spares: &Spares<'_>) {
    for chore in chores {
        match chore {
            Chore::Checkpoint(full) => checkpoint(db, &full),
            Chore::PrepareSpare => {
                let spare = spares.prepare().unwrap_or_else(|error| {
                    // Not a failure: the writer appends until a spare can be made.
                    tracing::warn!(%error, "a spare journal file could not be prepared");
                    let _ = remove_spare(spares.dir);
                    None
                });
                // The writer is gone only when this thread stops too.
                let _ = spares.ready.send(spare);
            }
        }
    }
}

/// Flushes sled and deletes `full`, a journal file every record of which is made in sled.
fn checkpoint(db: &sled::Db, full: &Path) {
    match db.flush() {
        Ok(_) => {
            if let Err(error) = std::fs::remove_file(full) {
                tracing::warn!(%error, file = %full.display(), "a checkpointed journal file could not be deleted");
            }
        }
        // Kept: it is applied again on the next open.
        Err(error) => tracing::error!(%error, "sled could not be flushed at a checkpoint"),
    }
}

/// Flushes sled and deletes the journal's files, once nothing writes to them any more.
fn close(db: &sled::Db, dir: &Path) {
    let closed = db
        .flush()
        .map_err(StoreError::from)
        .and_then(|_| journal_files(dir))
        .and_then(|files| {
            files
                .iter()
                .try_for_each(|(_, path)| std::fs::remove_file(path).map_err(io_error))
        })
        .and_then(|()| remove_spare(dir).map_err(io_error));
    if let Err(error) = closed {
        // Kept: what the files hold is applied again on the next open.
        tracing::warn!(%error, "the journal could not be closed");
    }
}

fn file_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:020}.log"))
}

/// A new, empty journal file, records to be appended to it.
fn create_file(dir: &Path, number: u64) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(file_path(dir, number))?;
    // The new file's name is durable before anything is acknowledged from it.
    sync_dir(dir)?;
    Ok(file)
}

/// Deletes the spare in `dir`, if there is one.
fn remove_spare(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(dir.join(SPARE)) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The journal files in `dir`, oldest first.
fn journal_files(dir: &Path) -> Result<Vec<(u64, PathBuf)>, StoreError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        let number = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".log"))
            .and_then(|number| number.parse::<u64>().ok());
        if let Some(number) = number {
            files.push((number, path));
        }
    }
    files.sort();
    Ok(files)
}

/// Waits until the journal in `data_dir`, its files `rotate_bytes` long, has moved to its
/// first spare and checkpointed the file it began with (for tests that copy its files).
#[cfg(test)]
pub(super) fn wait_until_over_zeros(data_dir: &Path, rotate_bytes: u64) {
    let dir = data_dir.join("journal");
    for _ in 0..1000 {
        if let Ok([(_, path)]) = journal_files(&dir).as_deref()
            && std::fs::metadata(path).is_ok_and(|file| file.len() >= rotate_bytes)
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the journal in {} never moved to a spare", dir.display());
}

/// Applying the journal's files again on open.
struct Replay<'a> {
    db: &'a sled::Db,
    /// The highest record number seen.
    last: u64,
    trees: HashMap<Vec<u8>, sled::Tree>,
}

impl<'a> Replay<'a> {
    fn new(db: &'a sled::Db) -> Self {
        Self {
            db,
            last: 0,
            trees: HashMap::new(),
        }
    }

    /// Applies the whole records of the file at `path`; the count applied.
    fn file(&mut self, path: &Path) -> Result<usize, StoreError> {
        let bytes = std::fs::read(path).map_err(io_error)?;
        let unreadable = |offset: usize| {
            StoreError::Unwritable(Unwritable::Failed(format!(
                "journal {} holds a record that cannot be read at byte {offset}",
                path.display()
            )))
        };
        let mut offset = 0;
        let mut applied = 0;
        while let Some(payload) = record_at(&bytes, offset) {
            let (number, writes) = parse_record(payload).ok_or_else(|| unreadable(offset))?;
            self.last = self.last.max(number);
            for write in writes {
                let (name, key, value) = write.ok_or_else(|| unreadable(offset))?;
                let tree = match self.trees.get(name) {
                    Some(tree) => tree,
                    None => self
                        .trees
                        .entry(name.to_vec())
                        .or_insert(self.db.open_tree(name)?),
                };
                match value {
                    Some(value) => tree.insert(key, value)?,
                    None => tree.remove(key)?,
                };
            }
            applied += 1;
            offset += HEADER + payload.len();
        }
        if !ends_cleanly(&bytes, offset) {
            tracing::warn!(
                file = %path.display(),
                offset,
                ignored_bytes = bytes.len() - offset,
                "the journal ends in a torn record (a crash while it was written): it was never acknowledged, and is ignored"
            );
        }
        Ok(applied)
    }
}

/// Whether the records of a file end at `offset` as a file ends that no crash tore: the file
/// ends there, or its zeros begin there.
fn ends_cleanly(bytes: &[u8], offset: usize) -> bool {
    bytes
        .get(offset..)
        .is_none_or(|rest| rest.iter().all(|byte| *byte == 0))
}

/// A record's number and writes.
fn parse_record(payload: &[u8]) -> Option<(u64, Writes<'_>)> {
    let number = u64::from_le_bytes(payload.get(..8)?.try_into().ok()?);
    Some((number, Writes(&payload[8..])))
}

/// The payload of the whole, intact record at `offset`, if there is one (none: a torn record,
/// or the zeros after the last record of a prepared file).
fn record_at(bytes: &[u8], offset: usize) -> Option<&[u8]> {
    let header = bytes.get(offset..offset.checked_add(HEADER)?)?;
    let len = u32::from_le_bytes(header[..4].try_into().ok()?) as usize;
    if len == 0 {
        return None;
    }
    let crc = u32::from_le_bytes(header[4..].try_into().ok()?);
    let start = offset + HEADER;
    let payload = bytes.get(start..start.checked_add(len)?)?;
    (crc32fast::hash(payload) == crc).then_some(payload)
}

/// The writes of one record's payload: (tree name, key, value or none for a remove); `None`
/// for one that cannot be read.
struct Writes<'a>(&'a [u8]);

type Write<'a> = (&'a [u8], &'a [u8], Option<&'a [u8]>);

impl<'a> Iterator for Writes<'a> {
    type Item = Option<Write<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let write = self.read_write();
        if write.is_none() {
            self.0 = &[];
        }
        Some(write)
    }
}

impl<'a> Writes<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.0.split_at_checked(len)?;
        self.0 = rest;
        Some(taken)
    }

    fn read_write(&mut self) -> Option<Write<'a>> {
        let kind = self.take(1)?[0];
        let name_len = u16::from_le_bytes(self.take(2)?.try_into().ok()?) as usize;
        let name = self.take(name_len)?;
        let key_len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        let key = self.take(key_len)?;
        let value = match kind {
            INSERT => {
                let value_len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
                Some(self.take(value_len)?)
            }
            REMOVE => None,
            _ => return None,
        };
        Some((name, key, value))
    }
}

fn io_error(error: std::io::Error) -> StoreError {
    StoreError::Unwritable(unwritable(&error))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_db(dir: &Path) -> sled::Db {
        sled::Config::new().path(dir).open().expect("sled")
    }

    /// A write as a test lists it: tree, key, value (`None`: a remove).
    type TestWrite<'a> = (&'a str, &'a [u8], Option<&'a [u8]>);

    /// Record `number`, as the journal writes it.
    fn record(number: u64, writes: &[TestWrite<'_>], db: &sled::Db) -> Vec<u8> {
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
    fn records_left_by_a_crash_are_applied_on_open_up_to_a_torn_one() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        let notes = db.open_tree("notes").expect("tree");
        notes.insert("gone", "x").expect("insert");
        // Record 1 half made in sled when the process died: its first write only.
        notes.insert("a", "1").expect("insert");
        let mut file = record(
            1,
            &[
                ("notes", b"a", Some(b"1")),
                ("events", b"\0\0\0\x07", Some(b"e")),
            ],
            &db,
        );
        file.extend(record(2, &[("notes", b"gone", None)], &db));
        let torn = record(3, &[("notes", b"b", Some(b"2"))], &db);
        file.extend_from_slice(&torn[..torn.len() - 1]);
        let journal_dir = data.path().join("journal");
        std::fs::create_dir_all(&journal_dir).expect("dir");
        std::fs::write(file_path(&journal_dir, 3), &file).expect("write");

        let journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
        assert_eq!(notes.get("a").expect("get").as_deref(), Some(&b"1"[..]));
        assert_eq!(
            notes.get("gone").expect("get"),
            None,
            "removes are replayed"
        );
        assert_eq!(notes.get("b").expect("get"), None, "the torn record is not");
        let events = db.open_tree("events").expect("tree");
        assert_eq!(
            events.get(b"\0\0\0\x07").expect("get").as_deref(),
            Some(&b"e"[..]),
            "the half-made change is made whole"
        );
        assert_eq!(
            journal.appended(),
            2,
            "numbers go on after the replayed ones"
        );
        let files = journal_files(&journal_dir).expect("files");
        assert_eq!(
            files.iter().map(|(number, _)| *number).collect::<Vec<_>>(),
            [4],
            "the replayed file is gone, a new one is begun after it"
        );
        drop(journal);
        assert_eq!(
            journal_files(&journal_dir).expect("files"),
            [],
            "a clean stop leaves the journal empty"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn records_are_written_over_a_spares_zeros_and_read_back_up_to_them() {
        const BYTES: u64 = 64 * 1024;
        let data = tempfile::tempdir().expect("temp dir");
        let dir = data.path().join("journal");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join(SPARE), b"half a spare, left by a crash").expect("spare");
        let db = open_db(&data.path().join("db"));
        let tree = db.open_tree("t").expect("tree");
        let journal = Journal::open(&db, data.path(), BYTES).expect("journal");
        // Idle, the writer moves to the spare once it is ready, and the first file is
        // checkpointed.
        wait_until_over_zeros(data.path(), BYTES);
        let write = |numbers: std::ops::Range<u32>| {
            let (journal, tree) = (&journal, &tree);
            async move {
                for number in numbers {
                    let record = journal
                        .commit_blind(Changes::default(), |changes| {
                            changes.insert(tree, &number.to_be_bytes(), vec![7; 100]);
                        })
                        .expect("a record");
                    journal.durable(record).await.expect("durable");
                }
            }
        };
        // 132 bytes a record: less than half the file.
        write(0..20).await;
        assert!(!dir.join(SPARE).exists(), "no second spare yet");
        // Past half of it: the next spare is prepared.
        write(20..270).await;
        for _ in 0..1000 {
            if std::fs::metadata(dir.join(SPARE)).is_ok_and(|spare| spare.len() == BYTES) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(dir.join(SPARE).exists(), "the next spare");
        let files = journal_files(&dir).expect("files");
        let [(_, current)] = files.as_slice() else {
            panic!("one file: {files:?}");
        };
        let written = std::fs::read(current).expect("read");
        assert_eq!(written.len() as u64, BYTES, "written over, not appended");
        assert!(written.ends_with(&[0; 1024]), "zeros after the records");
        // What a crash would leave: read back into another database, the zeros end it.
        let elsewhere = tempfile::tempdir().expect("temp dir");
        let other = open_db(elsewhere.path());
        let mut replay = Replay::new(&other);
        assert_eq!(replay.file(current).expect("replayed"), 270);
        assert_eq!(replay.last, journal.appended());
        assert_eq!(other.open_tree("t").expect("tree").len(), 270);
        // A clean stop leaves no file behind, the spare included.
        drop(journal);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_record_that_cannot_be_read_stops_the_open() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        // A whole record (its checksum holds) whose write has an unknown kind.
        let mut payload = 1u64.to_le_bytes().to_vec();
        payload.extend([9, 1, 0, b't', 0, 0, 0, 0]);
        let mut file = (payload.len() as u32).to_le_bytes().to_vec();
        file.extend(crc32fast::hash(&payload).to_le_bytes());
        file.extend(&payload);
        std::fs::create_dir_all(data.path().join("journal")).expect("dir");
        std::fs::write(file_path(&data.path().join("journal"), 0), &file).expect("write");
        let error = Journal::open(&db, data.path(), ROTATE_BYTES).expect_err("refused");
        assert!(error.to_string().contains("cannot be read"), "{error}");
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

    /// A change is durable, and its committer answered, once sled has it, not as soon as it is
    /// on disk: a read that begins after the answer (the client's next request, which reads
    /// sled) finds it. Answering at the disk saves the sled step's time and breaks that
    /// (BENCHMARKS.md, "answering before sled has the change").
    #[tokio::test]
    #[expect(
        clippy::await_holding_lock,
        reason = "the one await before the lock goes is a `poll!`, which returns at once; the journal's own thread is the one that waits on the lock"
    )]
    async fn a_change_is_durable_once_sled_has_it_not_once_it_is_on_disk() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        let tree = db.open_tree("imports").expect("tree");
        let journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
        const KEY: &[u8] = b"staged-account";
        let making = journal.hold_making();
        journal
            .commit(|changes| {
                changes.insert(&tree, KEY, "staged");
                Ok::<_, StoreError>(())
            })
            .expect("commit");
        let mut durable = std::pin::pin!(journal.durable(journal.appended()));

        // The round reaches the disk, and stops before sled.
        let journal_dir = data.path().join("journal");
        let on_disk = || {
            journal_files(&journal_dir)
                .expect("files")
                .iter()
                .any(|(_, path)| {
                    let bytes = std::fs::read(path).expect("read");
                    bytes.windows(KEY.len()).any(|window| window == KEY)
                })
        };
        let started = Instant::now();
        while !on_disk() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "the round is written"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            futures_util::poll!(&mut durable).is_pending(),
            "not durable while sled lacks it"
        );
        assert_eq!(tree.get(KEY).expect("get"), None);
        assert_eq!(
            journal.get(&tree, KEY).expect("get").as_deref(),
            Some(&b"staged"[..]),
            "the next change sees it meanwhile"
        );

        drop(making);
        durable.await.expect("durable");
        assert_eq!(
            tree.get(KEY).expect("get").as_deref(),
            Some(&b"staged"[..]),
            "in sled once durable"
        );
    }

    #[tokio::test]
    async fn a_round_that_failed_in_sled_is_made_whole_on_the_next_open() {
        let data = tempfile::tempdir().expect("temp dir");
        let db_dir = data.path().join("db");
        {
            let db = open_db(&db_dir);
            let tree = db.open_tree("t").expect("tree");
            let journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
            let commit = |writes: &[(&str, &str)]| {
                journal
                    .commit_blind(Changes::default(), |changes| {
                        for (key, value) in writes {
                            changes.insert(&tree, *key, *value);
                        }
                    })
                    .expect("a record")
            };
            let first = commit(&[("a", "1")]);
            journal.durable(first).await.expect("durable");
            journal.shared.fail_in_sled.store(true, Ordering::Relaxed);
            let second = commit(&[("b", "2"), ("c", "3")]);
            assert!(journal.durable(second).await.is_err(), "the round failed");
            assert!(tree.get("b").expect("get").is_some(), "half made in sled");
            assert!(tree.get("c").expect("get").is_none(), "half made in sled");
            // Stops as a server stops after a storage failure.
        }
        assert!(
            !journal_files(&data.path().join("journal"))
                .expect("files")
                .is_empty(),
            "the journal is kept"
        );
        let db = open_db(&db_dir);
        let _journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
        let tree = db.open_tree("t").expect("tree");
        for (key, value) in [("a", "1"), ("b", "2"), ("c", "3")] {
            assert_eq!(
                tree.get(key).expect("get").as_deref(),
                Some(value.as_bytes()),
                "{key}"
            );
        }
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
