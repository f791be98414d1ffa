//! The journal's writer thread: it takes whatever records committers have buffered (a round),
//! writes them to the current file with one sync, makes them in sled in order, and only then
//! wakes the committers whose records the round made durable (group commit).
//!
//! The writer writes over a spare's zeros where it can: straight to the disk with direct I/O
//! ([`DirectFile`]), a write that changes neither the file's size nor its blocks, so the disk
//! takes only the pages and a cache flush. A round that does not fit in the current file moves
//! the writer to the next spare, or, where none is ready (the disk short of space), to a new
//! file appended to and synced with `fdatasync`. A file left behind goes to the checkpoint
//! thread ([`super::checkpoint`]). A failed write or sync fails the journal for good: nothing
//! written after it could be trusted.

use super::checkpoint::Chore;
use super::direct_file::DirectFile;
use super::files::{SPARE, create_file, file_path, sync_dir};
use super::{Record, Shared};
use crate::domain::storage::Unwritable;
use crate::store::health::unwritable;
use metrics::{Counter, Histogram};
use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::path::PathBuf;
use std::sync::PoisonError;
#[cfg(test)]
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

/// How often an idle writer looks whether the spare it waits for is ready.
const SPARE_POLL: std::time::Duration = std::time::Duration::from_millis(5);

/// The journal file being written, and what to do once it is full.
pub(super) struct CurrentFile {
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
    /// The file `number`, just created in `dir` and empty, records to be appended to it until
    /// the first spare is ready (asked for at once).
    pub(super) fn new(
        dir: PathBuf,
        number: u64,
        file: File,
        rotate_bytes: u64,
        chores: mpsc::Sender<Chore>,
        spares: mpsc::Receiver<Option<File>>,
    ) -> Self {
        let mut current = Self {
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
        current.request_spare();
        current
    }

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
pub(super) fn write_loop(shared: &Shared, current: &mut CurrentFile) {
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

#[cfg(test)]
mod tests {
    use super::super::files::{journal_files, wait_until_over_zeros};
    use super::super::record::Changes;
    use super::super::replay::Replay;
    use super::super::tests::open_db;
    use super::super::{Journal, ROTATE_BYTES};
    use super::*;
    use crate::domain::storage::StoreError;

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

    /// A change is durable, and its committer answered, once sled has it, not as soon as it is
    /// on disk: a read that begins after the answer (the client's next request, which reads
    /// sled) finds it. Answering at the disk would save the sled step's time and break that:
    /// a process request after its staging's answer would find no import process.
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
}
