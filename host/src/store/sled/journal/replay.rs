//! Applying the journal's files again when the store opens: what a crash, or a stop before the
//! checkpoint, left. Each record lists the values of the trees after its change, and sled holds
//! some prefix of the records since the last checkpoint, the last perhaps half made: applying
//! them all again, in order, ends in the state after the last. A torn record ends a file's
//! records (it was never acknowledged); a whole record that cannot be read stops the open,
//! naming the file, rather than guess.

use super::files::{io_error, journal_files, remove_spare};
use super::record::{HEADER, ends_cleanly, parse_record, record_at};
use crate::domain::storage::{StoreError, Unwritable};
use std::collections::HashMap;
use std::path::Path;

/// What the replay found: where the journal goes on from.
#[derive(Debug)]
pub(in crate::store::sled) struct Replayed {
    /// The highest record number replayed (0: none); numbers go on after it.
    pub(super) last: u64,
    /// The number of the next journal file, after every file replayed.
    pub(super) next_file: u64,
}

/// Applies the records of every file in `dir/journal` to `db`, in order, then flushes sled and
/// deletes the files (and a spare a crash left, zeros and maybe not all of them).
pub(in crate::store::sled) fn replay(db: &sled::Db, dir: &Path) -> Result<Replayed, StoreError> {
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
    remove_spare(&dir).map_err(io_error)?;
    Ok(Replayed {
        last: replay.last,
        next_file: files.last().map_or(0, |(number, _)| number + 1),
    })
}

/// Applying the journal's files again on open.
pub(super) struct Replay<'a> {
    db: &'a sled::Db,
    /// The highest record number seen.
    pub(super) last: u64,
    trees: HashMap<Vec<u8>, sled::Tree>,
}

impl<'a> Replay<'a> {
    pub(super) fn new(db: &'a sled::Db) -> Self {
        Self {
            db,
            last: 0,
            trees: HashMap::new(),
        }
    }

    /// Applies the whole records of the file at `path`; the count applied.
    pub(super) fn file(&mut self, path: &Path) -> Result<usize, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::super::files::{file_path, journal_files};
    use super::super::tests::{open_db, record};
    use super::super::{Journal, ROTATE_BYTES};

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
}
