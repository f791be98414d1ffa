//! The sled backend's write path: a journal of our own in front of sled, so that a durable
//! write costs one share of a group `fdatasync` instead of a sled flush per request.
//!
//! Every change to the sled trees is made through [`Journal::commit`]: under one commit lock,
//! the change reads what it needs and lists its writes ([`Changes`]); the list is appended to
//! the journal's buffer as one numbered record, then applied to sled as one sled transaction,
//! which also sets the change's class marker (`journal` tree) to the record's number. One
//! writer thread appends whatever records are buffered to the current journal file with one
//! `fdatasync`, and reports how far the journal is durable; [`Journal::durable`] waits for
//! that. sled flushes in the background on its own (every 500 ms); once a journal file has
//! grown past [`ROTATE_BYTES`], the writer starts a new one and a checkpoint thread flushes
//! sled and deletes the old file.
//!
//! After a crash, sled holds whole changes only (its transactions are atomic in its own
//! recovery), in the order they were applied, up to some point that may be before or after
//! where the journal's durable part ends: sled writes its log as its buffers fill, flushed or
//! not. The markers say how far: on open, the records of every file left are applied again,
//! in order, but only those numbered past their class's marker (an older record applied over
//! a newer sled state would undo a later change). A record lists the trees' values after the
//! change. A record torn by a crash (its length or checksum does not hold) ends the replay: it
//! was never acknowledged. Since no write bypasses the journal, replay never brings back
//! something a later write removed (an event the relay had published).
//!
//! Two classes of change: those under the commit lock, in one order; and
//! [`Journal::commit_apart`], for keys no other change writes (the relay's), under a lock of
//! its own. Each class has its marker; a class's changes reach sled in the order of their
//! numbers.
//!
//! Record: `u32` payload length, `u32` CRC-32 of the payload (little-endian), the payload:
//! `u64` record number, `u8` class, then per write `u8` kind (1 insert, 2 remove), `u16`
//! tree-name length and name, `u32` key length and key, and for an insert `u32` value length
//! and value.

use crate::domain::storage::{StoreError, Unwritable};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use tokio::sync::watch;

/// A journal file this large is closed and a new one begun; sled is flushed and the old file
/// deleted in the background.
pub(super) const ROTATE_BYTES: u64 = 64 * 1024 * 1024;

const INSERT: u8 = 1;
const REMOVE: u8 = 2;
const HEADER: usize = 8;

/// The tree of the markers: each class's key → the number of its last change applied.
const MARKERS: &str = "journal";

/// Which lock a change was made under, and the key of its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// [`Journal::commit`].
    Ordered = 0,
    /// [`Journal::commit_apart`].
    Apart = 1,
}

impl Class {
    fn marker(self) -> &'static [u8] {
        match self {
            Self::Ordered => b"ordered",
            Self::Apart => b"apart",
        }
    }

    fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(Self::Ordered),
            1 => Some(Self::Apart),
            _ => None,
        }
    }
}

/// The writes of one change, in the order they are applied.
#[derive(Default)]
pub(super) struct Changes {
    writes: Vec<(sled::Tree, Vec<u8>, Option<Vec<u8>>)>,
}

impl Changes {
    pub(super) fn insert(&mut self, tree: &sled::Tree, key: impl Into<Vec<u8>>, value: Vec<u8>) {
        self.writes.push((tree.clone(), key.into(), Some(value)));
    }

    pub(super) fn remove(&mut self, tree: &sled::Tree, key: impl Into<Vec<u8>>) {
        self.writes.push((tree.clone(), key.into(), None));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Appends the change as record `number` of `class` to `buffer`.
    fn encode_into(&self, number: u64, class: Class, buffer: &mut Vec<u8>) {
        let start = buffer.len();
        buffer.extend_from_slice(&[0; HEADER]);
        buffer.extend_from_slice(&number.to_le_bytes());
        buffer.push(class as u8);
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

    /// Makes the writes in sled as one transaction, with `class`'s marker set to `number`.
    fn apply(self, markers: &sled::Tree, number: u64, class: Class) -> Result<(), StoreError> {
        let mut trees: Vec<sled::Tree> = vec![markers.clone()];
        let mut writes = Vec::with_capacity(self.writes.len());
        for (tree, key, value) in self.writes {
            let name = tree.name();
            let index = match trees.iter().position(|known| known.name() == name) {
                Some(index) => index,
                None => {
                    trees.push(tree);
                    trees.len() - 1
                }
            };
            writes.push((index, key, value));
        }
        let trees: &[sled::Tree] = &trees;
        trees
            .transaction(|views| {
                for (index, key, value) in &writes {
                    match value {
                        Some(value) => views[*index].insert(key.as_slice(), value.as_slice())?,
                        None => views[*index].remove(key.as_slice())?,
                    };
                }
                views[0].insert(class.marker(), &number.to_be_bytes())?;
                Ok::<_, ConflictableTransactionError<()>>(())
            })
            .map_err(|error| match error {
                TransactionError::Storage(error) => error.into(),
                TransactionError::Abort(()) => {
                    StoreError::from(sled::Error::Unsupported("aborted".into()))
                }
            })
    }
}

/// How far the journal is on disk.
#[derive(Debug, Clone, Default)]
struct Durability {
    /// Every record up to this number (counted from 1 since the journal opened) is on disk.
    through: u64,
    /// Set by a failed write or sync, for good: nothing after it will be durable.
    failed: Option<Unwritable>,
}

/// What committers hand the writer thread.
#[derive(Default)]
struct Pending {
    buffer: Vec<u8>,
    /// The number of the last record in `buffer` (or written before it); numbers go on from
    /// where the last run's ended.
    appended: u64,
    stop: bool,
}

struct Shared {
    /// Held while a change reads, is appended and is applied: one change at a time, so the
    /// journal's order is sled's.
    commit: Mutex<()>,
    /// Held while a change to keys no other change writes is appended and applied
    /// ([`Journal::commit_apart`]).
    apart: Mutex<()>,
    pending: Mutex<Pending>,
    wake: Condvar,
    durable: watch::Sender<Durability>,
    markers: sled::Tree,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The journal of one sled store (see the module's doc). Dropping it writes what is buffered
/// and stops its threads, which hold the sled database open.
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
        let markers = db.open_tree(MARKERS)?;
        let mut replay = Replay::new(db, &markers)?;
        let files = journal_files(&dir)?;
        for (_, path) in &files {
            let applied = replay.file(path)?;
            tracing::info!(file = %path.display(), records = applied, "journal replayed");
        }
        let last = replay.finish()?;
        if !files.is_empty() {
            db.flush()?;
            for (_, path) in &files {
                std::fs::remove_file(path).map_err(io_error)?;
            }
        }
        let number = files.last().map_or(0, |(number, _)| number + 1);
        let file = create_file(&dir, number)?;
        let journal_dir = dir.clone();
        let shared = Arc::new(Shared {
            commit: Mutex::new(()),
            apart: Mutex::new(()),
            pending: Mutex::new(Pending {
                appended: last,
                ..Pending::default()
            }),
            wake: Condvar::new(),
            durable: watch::channel(Durability {
                through: last,
                failed: None,
            })
            .0,
            markers,
        });
        let (checkpoints, checkpoint_queue) = mpsc::channel::<PathBuf>();
        let writer = {
            let shared = shared.clone();
            let mut current = CurrentFile {
                dir,
                number,
                file,
                written: 0,
                rotate_bytes,
                checkpoints,
            };
            std::thread::Builder::new()
                .name("ferry-journal".into())
                .spawn(move || write_loop(&shared, &mut current))
                .map_err(io_error)?
        };
        let checkpointer = {
            let shared = shared.clone();
            let db = db.clone();
            std::thread::Builder::new()
                .name("ferry-checkpoint".into())
                .spawn(move || {
                    checkpoint_loop(&shared, &db, &checkpoint_queue);
                    // The writer has stopped: a clean stop leaves sled flushed, the journal empty.
                    close(&db, &journal_dir);
                })
                .map_err(io_error)?
        };
        Ok(Self {
            shared,
            threads: vec![writer, checkpointer],
        })
    }

    /// Runs `change` under the commit lock: it reads what it needs and lists its writes, which
    /// are then journaled and applied, in that order. Nothing is written if it fails.
    pub(super) fn commit<T, E: From<StoreError>>(
        &self,
        change: impl FnOnce(&mut Changes) -> Result<T, E>,
    ) -> Result<T, E> {
        let _commit = self
            .shared
            .commit
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut changes = Changes::default();
        let value = change(&mut changes)?;
        self.append_and_apply(changes, Class::Ordered)?;
        Ok(value)
    }

    /// [`Self::commit`] for a change to keys that no other change writes once it can run (the
    /// relay taking published events out of the outbox: each was written by the change that
    /// made the event, before the relay could read it). Their order with other changes does
    /// not matter to a replay, so it does not wait for the commit lock, which a large change
    /// holds for milliseconds.
    pub(super) fn commit_apart(&self, changes: Changes) -> Result<(), StoreError> {
        let _apart = self
            .shared
            .apart
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.append_and_apply(changes, Class::Apart)
    }

    /// Appends the change to the buffer, then applies it (under its class's lock, held by the
    /// caller).
    fn append_and_apply(&self, changes: Changes, class: Class) -> Result<(), StoreError> {
        if changes.is_empty() {
            return Ok(());
        }
        let number = {
            let mut pending = self.shared.pending();
            let was_empty = pending.buffer.is_empty();
            pending.appended += 1;
            let number = pending.appended;
            changes.encode_into(number, class, &mut pending.buffer);
            if was_empty {
                self.shared.wake.notify_one();
            }
            number
        };
        changes.apply(&self.shared.markers, number, class)
    }

    /// The number of the last record appended.
    pub(super) fn appended(&self) -> u64 {
        self.shared.pending().appended
    }

    /// Resolves once every record up to `record` is on disk, or the journal has failed.
    pub(super) async fn durable(&self, record: u64) -> Result<(), StoreError> {
        let mut durable = self.shared.durable.subscribe();
        let reached = durable
            .wait_for(|durable| durable.failed.is_some() || durable.through >= record)
            .await;
        match reached {
            Ok(durable) => match &durable.failed {
                Some(failure) => Err(StoreError::Unwritable(failure.clone())),
                None => Ok(()),
            },
            // The writer is gone only once the journal is dropped, which `self` prevents.
            Err(_) => Err(StoreError::Unwritable(Unwritable::Failed(
                "the journal writer stopped".into(),
            ))),
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
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
    rotate_bytes: u64,
    checkpoints: mpsc::Sender<PathBuf>,
}

impl CurrentFile {
    fn write(&mut self, records: &[u8]) -> std::io::Result<()> {
        self.file.write_all(records)?;
        self.file.sync_data()?;
        self.written += records.len() as u64;
        if self.written >= self.rotate_bytes {
            let next = create_file(&self.dir, self.number + 1).map_err(std::io::Error::other)?;
            let full = file_path(&self.dir, self.number);
            self.file = next;
            self.number += 1;
            self.written = 0;
            // The checkpoint thread is gone only when this thread stops too.
            let _ = self.checkpoints.send(full);
        }
        Ok(())
    }
}

/// Writes what committers buffer, one `fdatasync` per round, until the journal is dropped.
fn write_loop(shared: &Shared, current: &mut CurrentFile) {
    let mut records = Vec::new();
    loop {
        let through = {
            let mut pending = shared.pending();
            while pending.buffer.is_empty() && !pending.stop {
                pending = shared
                    .wake
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if pending.buffer.is_empty() {
                return;
            }
            records.clear();
            std::mem::swap(&mut records, &mut pending.buffer);
            pending.appended
        };
        match current.write(&records) {
            Ok(()) => shared
                .durable
                .send_modify(|durable| durable.through = through),
            Err(error) => {
                let failure = unwritable(&error);
                tracing::error!(%error, "the journal could not be written");
                shared
                    .durable
                    .send_modify(|durable| durable.failed = Some(failure));
                // Nothing written after a failed write can be trusted: take no more.
                return;
            }
        }
    }
}

/// Flushes sled and deletes each full journal file it is handed.
fn checkpoint_loop(shared: &Shared, db: &sled::Db, queue: &mpsc::Receiver<PathBuf>) {
    for full in queue {
        // Every record of the full file was appended under one of the two locks; once each is
        // free after that, every one has been applied to sled too.
        drop(shared.commit.lock().unwrap_or_else(PoisonError::into_inner));
        drop(shared.apart.lock().unwrap_or_else(PoisonError::into_inner));
        match db.flush() {
            Ok(_) => {
                if let Err(error) = std::fs::remove_file(&full) {
                    tracing::warn!(%error, file = %full.display(), "a checkpointed journal file could not be deleted");
                }
            }
            // Kept: it is applied again on the next open.
            Err(error) => tracing::error!(%error, "sled could not be flushed at a checkpoint"),
        }
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
        });
    if let Err(error) = closed {
        // Kept: what the files hold is applied again on the next open.
        tracing::warn!(%error, "the journal could not be closed");
    }
}

fn file_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:020}.log"))
}

fn create_file(dir: &Path, number: u64) -> Result<File, StoreError> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(file_path(dir, number))
        .map_err(io_error)?;
    // The new file's name is durable before anything is acknowledged from it.
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(io_error)?;
    Ok(file)
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

/// Applying the journal's files again on open.
struct Replay<'a> {
    db: &'a sled::Db,
    markers: &'a sled::Tree,
    /// Each class's marker: its changes up to this number are in sled already.
    applied: [u64; 2],
    /// The highest record number seen.
    last: u64,
    trees: HashMap<Vec<u8>, sled::Tree>,
}

impl<'a> Replay<'a> {
    fn new(db: &'a sled::Db, markers: &'a sled::Tree) -> Result<Self, StoreError> {
        let marker = |class: Class| -> Result<u64, StoreError> {
            Ok(markers
                .get(class.marker())?
                .and_then(|bytes| <[u8; 8]>::try_from(bytes.as_ref()).ok())
                .map(u64::from_be_bytes)
                .unwrap_or(0))
        };
        let applied = [marker(Class::Ordered)?, marker(Class::Apart)?];
        Ok(Self {
            db,
            markers,
            applied,
            last: applied[0].max(applied[1]),
            trees: HashMap::new(),
        })
    }

    /// Applies the whole records of the file at `path` that sled does not have yet; the count
    /// applied.
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
            let (number, class, writes) =
                parse_record(payload).ok_or_else(|| unreadable(offset))?;
            self.last = self.last.max(number);
            if number > self.applied[class as usize] {
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
                self.applied[class as usize] = number;
                applied += 1;
            }
            offset += HEADER + payload.len();
        }
        if offset < bytes.len() {
            tracing::warn!(
                file = %path.display(),
                offset,
                ignored_bytes = bytes.len() - offset,
                "the journal ends in a torn record (a crash while it was written): it was never acknowledged, and is ignored"
            );
        }
        Ok(applied)
    }

    /// Records how far each class is applied; the highest record number seen.
    fn finish(self) -> Result<u64, StoreError> {
        for class in [Class::Ordered, Class::Apart] {
            self.markers
                .insert(class.marker(), &self.applied[class as usize].to_be_bytes())?;
        }
        Ok(self.last)
    }
}

/// A record's number, class and writes.
fn parse_record(payload: &[u8]) -> Option<(u64, Class, Writes<'_>)> {
    let number = u64::from_le_bytes(payload.get(..8)?.try_into().ok()?);
    let class = Class::from_byte(*payload.get(8)?)?;
    Some((number, class, Writes(&payload[9..])))
}

/// The payload of the whole, intact record at `offset`, if there is one.
fn record_at(bytes: &[u8], offset: usize) -> Option<&[u8]> {
    let header = bytes.get(offset..offset.checked_add(HEADER)?)?;
    let len = u32::from_le_bytes(header[..4].try_into().ok()?) as usize;
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

fn unwritable(error: &std::io::Error) -> Unwritable {
    if super::health::is_out_of_space(error) {
        Unwritable::DiskFull
    } else {
        Unwritable::Failed(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_db(dir: &Path) -> sled::Db {
        sled::Config::new().path(dir).open().expect("sled")
    }

    /// Ordered record `number`, as the journal writes it.
    fn record(number: u64, writes: &[(&str, &[u8], Option<&[u8]>)], db: &sled::Db) -> Vec<u8> {
        let mut changes = Changes::default();
        for (tree, key, value) in writes {
            let tree = db.open_tree(tree).expect("tree");
            match value {
                Some(value) => changes.insert(&tree, key.to_vec(), value.to_vec()),
                None => changes.remove(&tree, key.to_vec()),
            }
        }
        let mut bytes = Vec::new();
        changes.encode_into(number, Class::Ordered, &mut bytes);
        bytes
    }

    #[test]
    fn records_left_by_a_crash_are_applied_on_open_up_to_a_torn_one() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        db.open_tree("notes")
            .expect("tree")
            .insert("gone", "x")
            .expect("insert");
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
        let notes = db.open_tree("notes").expect("tree");
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
            Some(&b"e"[..])
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

    #[test]
    fn changes_sled_has_already_are_not_applied_again() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        // sled got ahead of the journal's durable part: it has change 3 (k = c), the journal
        // only 1 and 2, which wrote k before it.
        {
            let journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
            let tree = db.open_tree("t").expect("tree");
            for value in ["a", "b", "c"] {
                journal
                    .commit(|changes| {
                        changes.insert(&tree, b"k".to_vec(), value.as_bytes().to_vec());
                        Ok::<_, StoreError>(())
                    })
                    .expect("commit");
            }
            assert_eq!(journal.appended(), 3);
        }
        let journal_dir = data.path().join("journal");
        let mut file = record(1, &[("t", b"k", Some(b"a"))], &db);
        file.extend(record(2, &[("t", b"k", Some(b"b"))], &db));
        std::fs::write(file_path(&journal_dir, 0), &file).expect("write");

        let journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
        let tree = db.open_tree("t").expect("tree");
        assert_eq!(
            tree.get("k").expect("get").as_deref(),
            Some(&b"c"[..]),
            "not rolled back to the journal's older value"
        );
        assert_eq!(journal.appended(), 3, "numbers go on after the last change");

        // And a record past the marker is applied.
        drop(journal);
        std::fs::write(
            file_path(&journal_dir, 0),
            record(4, &[("t", b"k", Some(b"d"))], &db),
        )
        .expect("write");
        let journal = Journal::open(&db, data.path(), ROTATE_BYTES).expect("journal");
        assert_eq!(tree.get("k").expect("get").as_deref(), Some(&b"d"[..]));
        assert_eq!(journal.appended(), 4);
    }

    #[test]
    fn a_record_that_cannot_be_read_stops_the_open() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        // A whole record (its checksum holds) whose write has an unknown kind.
        let mut payload = 1u64.to_le_bytes().to_vec();
        payload.extend([Class::Ordered as u8, 9, 1, 0, b't', 0, 0, 0, 0]);
        let mut file = (payload.len() as u32).to_le_bytes().to_vec();
        file.extend(crc32fast::hash(&payload).to_le_bytes());
        file.extend(&payload);
        std::fs::create_dir_all(data.path().join("journal")).expect("dir");
        std::fs::write(file_path(&data.path().join("journal"), 0), &file).expect("write");
        let error = Journal::open(&db, data.path(), ROTATE_BYTES).expect_err("refused");
        assert!(error.to_string().contains("cannot be read"), "{error}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn commits_are_durable_in_order_and_full_files_are_checkpointed() {
        let data = tempfile::tempdir().expect("temp dir");
        let db = open_db(&data.path().join("db"));
        let tree = db.open_tree("counts").expect("tree");
        // Small files, so that some fill up and are checkpointed while the commits go on.
        let journal = Arc::new(Journal::open(&db, data.path(), 4096).expect("journal"));
        let writers: Vec<_> = (0..4u64)
            .map(|writer| {
                let journal = journal.clone();
                let tree = tree.clone();
                tokio::spawn(async move {
                    for round in 0..50u64 {
                        journal
                            .commit(|changes| {
                                changes.insert(
                                    &tree,
                                    writer.to_be_bytes().to_vec(),
                                    round.to_be_bytes().to_vec(),
                                );
                                changes.insert(
                                    &tree,
                                    b"last".to_vec(),
                                    writer.to_be_bytes().to_vec(),
                                );
                                Ok::<_, StoreError>(())
                            })
                            .expect("commit");
                        journal.durable(journal.appended()).await.expect("durable");
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.await.expect("writer");
        }
        assert_eq!(journal.appended(), 200);
        let durable = journal.shared.durable.borrow().through;
        assert_eq!(durable, 200);
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
        for writer in 0..4u64 {
            assert_eq!(
                tree.get(writer.to_be_bytes()).expect("get").as_deref(),
                Some(&49u64.to_be_bytes()[..])
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
            changes.insert(&tree, b"k".to_vec(), b"v".to_vec());
            Err(StoreError::Conflict)
        });
        assert!(failed.is_err());
        assert_eq!(journal.appended(), 0);
        assert_eq!(tree.get("k").expect("get"), None);
    }
}
