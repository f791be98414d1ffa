//! The notes' dedupe index on sled, kept in memory: for each account, the creation dates of
//! its notes under each dedupe key ([`crate::domain::notes::note_key`]).
//!
//! The index is derived from the notes themselves. A unit that first asks about an account's
//! notes reads them all once ([`AccountNotes::from_notes`]); after that, each note a unit adds
//! is recorded here once its commit is durable. Nothing of it is written to disk, so adding a
//! note is one sled insert (the note), and looking for a duplicate reads no sled tree: a tree
//! of the index, keyed by a content hash, would cost a lookup and an insert in a leaf of their
//! own per note, about a tenth of a note's CPU.
//!
//! A unit takes the account's index out of [`NoteIndexes`] and gives it back when it commits
//! ([`super::kept_indexes`]); a unit that added notes and then fails or is dropped does
//! not give it back (it recorded notes it did not keep), and the next one reads the notes
//! again. A unit that only looked gives it back as it was. The indexes kept are bounded by
//! the notes they hold in all.

use super::kept_indexes::{AccountIndex, KeptIndexes};
use crate::domain::notes::Note;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// Every account's notes' dedupe index kept in memory.
pub(super) type NoteIndexes = KeptIndexes<AccountNotes>;

/// A key as an index keeps it: the first 16 bytes of its SHA-256 (a key can be a long
/// external id; two keys alike in 128 bits are not a risk worth the memory).
pub(super) type KeyDigest = u128;

pub(super) fn digest(key: &str) -> KeyDigest {
    let hash = Sha256::digest(key.as_bytes());
    let mut first = [0_u8; 16];
    first.copy_from_slice(&hash[..16]);
    u128::from_be_bytes(first)
}

/// The creation dates of one account's notes, by dedupe key, in the order they were added.
#[derive(Debug, Default)]
pub(super) struct AccountNotes {
    dates: HashMap<KeyDigest, Vec<DateTime<Utc>>>,
    notes: usize,
}

impl AccountNotes {
    /// The index of `notes`, given in the order they were added (by id).
    pub(super) fn from_notes(notes: impl IntoIterator<Item = Note>) -> Self {
        let mut index = Self::default();
        for note in notes {
            index
                .dates
                .entry(digest(&note.key()))
                .or_default()
                .push(note.created_at);
            index.notes += 1;
        }
        index
    }

    /// When the notes with dedupe key `key` were created (none: no such note).
    pub(super) fn dates(&self, key: &str) -> Vec<DateTime<Utc>> {
        self.dates.get(&digest(key)).cloned().unwrap_or_default()
    }

    /// Records that the notes of `key` are now those created at `dates` (the earlier ones and
    /// the one added).
    pub(super) fn set(&mut self, key: &str, dates: &[DateTime<Utc>]) {
        let before = self
            .dates
            .insert(digest(key), dates.to_vec())
            .map_or(0, |dates| dates.len());
        self.notes = (self.notes + dates.len()).saturating_sub(before);
    }
}

impl AccountIndex for AccountNotes {
    const KEPT: usize = 500_000;
    /// A key's digest and its dates, in a hash map.
    const ENTRY_BYTES: usize = 56;

    fn weight(&self) -> usize {
        self.notes.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::notes::NoteSource;

    fn note(id: u64, body: &str, at: &str) -> Note {
        Note {
            id,
            body: Some(body.into()),
            document_paths: Vec::new(),
            created_at: at.parse().expect("time"),
            is_pinned: false,
            unpin_at: None,
            source: NoteSource::Import,
            external_id: None,
            is_archived: false,
        }
    }

    #[test]
    fn the_index_of_notes_lists_each_keys_dates_in_the_order_added() {
        let notes = [
            note(1, "a", "2024-01-02T00:00:00Z"),
            note(2, "b", "2024-01-01T00:00:00Z"),
            note(3, "a", "2024-01-01T00:00:00Z"),
        ];
        let key_a = notes[0].key();
        let index = AccountNotes::from_notes(notes.clone());
        assert_eq!(index.notes, 3);
        assert_eq!(
            index.dates(&key_a),
            [notes[0].created_at, notes[2].created_at]
        );
        assert_eq!(index.dates(&notes[1].key()), [notes[1].created_at]);
        assert!(
            index
                .dates(&note(4, "c", "2024-01-01T00:00:00Z").key())
                .is_empty()
        );
    }

    #[test]
    fn setting_a_keys_dates_counts_only_the_notes_added() {
        let first = note(1, "a", "2024-01-01T00:00:00Z");
        let mut index = AccountNotes::from_notes([first.clone()]);
        let later = "2024-02-01T00:00:00Z".parse().expect("time");
        index.set(&first.key(), &[first.created_at, later]);
        index.set("another key", &[later]);
        assert_eq!(index.notes, 3);
        assert_eq!(index.dates(&first.key()), [first.created_at, later]);
    }
}
