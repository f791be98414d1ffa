//! The journal's checkpoint thread: the writer's chores, off its thread. A file the writer left
//! (every record in it made in sled) is checkpointed: sled flushed, then the file deleted.
//! Spares are prepared: a file as long as a journal file, of zeros written and synced, which
//! the writer then writes over. At a clean stop sled is flushed and the journal emptied.

use super::files::{SPARE, io_error, journal_files, remove_spare};
use crate::domain::storage::StoreError;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// What the writer hands the checkpoint thread.
pub(super) enum Chore {
    /// A full journal file, every record in it made in sled: flush sled, then delete it.
    Checkpoint(PathBuf),
    /// Prepare a spare file.
    PrepareSpare,
}

/// Where the checkpoint thread prepares spares, and where it sends them.
pub(super) struct Spares<'a> {
    pub(super) dir: &'a Path,
    pub(super) bytes: u64,
    /// Whether the disk has room for a spare ([`super::SpareRoom`]).
    pub(super) room: &'a (dyn Fn(u64) -> bool + Send),
    pub(super) stopping: &'a AtomicBool,
    pub(super) ready: mpsc::Sender<Option<File>>,
}

impl Spares<'_> {
    /// Writes the spare's zeros and syncs them, data and size: the writer's records over them
    /// then change no metadata. `None` where the disk has no room for it, or once the journal
    /// stops.
    fn prepare(&self) -> std::io::Result<Option<File>> {
        const CHUNK: u64 = 1 << 20;
        if !(self.room)(self.bytes) {
            tracing::debug!(
                bytes = self.bytes,
                "no room for a spare journal file: the writer appends until there is"
            );
            return Ok(None);
        }
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
pub(super) fn chore_loop(db: &sled::Db, chores: &mpsc::Receiver<Chore>, spares: &Spares<'_>) {
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
pub(super) fn close(db: &sled::Db, dir: &Path) {
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
