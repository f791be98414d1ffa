//! The notes' dedupe index on sled, kept in memory: for each account, the creation dates of
//! its notes under each dedupe key ([`crate::domain::notes::note_key`]).
//!
//! The index is derived from the notes themselves. A unit that first asks about an account's
//! notes reads them all once ([`AccountNotes::from_notes`]); after that, each note a unit adds
//! is recorded here once its commit is durable. Nothing of it is written to disk, so adding a
//! note is one sled insert (the note), and looking for a duplicate reads no sled tree.
//! (Versions before kept the index in a tree of its own: one sled lookup and one more insert
//! per note, about a tenth of a note's CPU; that tree is dropped on open.)
//!
//! A unit holds its account's lock, so it takes the account's index out of
//! [`NoteIndexes`] and gives it back when it commits: no two units see one account's index at
//! once. A unit that fails or is dropped does not give it back, and the next one reads the
//! notes again. The indexes kept are bounded by the notes they hold in all
//! ([`NoteIndexes::new`]): past the bound, the accounts least recently used are let go, down
//! to three quarters of it. An account whose notes alone are past the bound is still kept.

use crate::domain::notes::Note;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Notes the indexes kept in memory hold in all, by default (~56 bytes each).
pub(super) const KEPT_NOTES: usize = 500_000;

/// A dedupe key as the index keeps it: the first 16 bytes of its SHA-256 (a key can be a
/// long external id; two keys alike in 128 bits are not a risk worth the memory).
type KeyDigest = u128;

fn digest(key: &str) -> KeyDigest {
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

    /// What the index counts for against the bound: its notes, and at least one (so that
    /// empty indexes are bounded too).
    fn weight(&self) -> usize {
        self.notes.max(1)
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

/// The accounts' indexes not taken by a unit, with when each was last given back.
#[derive(Debug, Default)]
struct Kept {
    accounts: HashMap<String, (AccountNotes, u64)>,
    /// The weights of the indexes kept ([`AccountNotes::weight`]): their notes, mostly.
    notes: usize,
    clock: u64,
}

/// Every account's [`AccountNotes`] kept in memory, up to a bound on their notes in all.
#[derive(Debug)]
pub(super) struct NoteIndexes {
    bound: usize,
    kept: Mutex<Kept>,
}

impl Default for NoteIndexes {
    fn default() -> Self {
        Self::new(KEPT_NOTES)
    }
}

impl NoteIndexes {
    /// Indexes that hold about `bound` notes in all at most.
    pub(super) fn new(bound: usize) -> Self {
        Self {
            bound,
            kept: Mutex::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes account `number`'s index, if it is kept (its unit gives it back, or not).
    pub(super) fn take(&self, number: &str) -> Option<AccountNotes> {
        let mut kept = self.kept();
        let (index, _) = kept.accounts.remove(number)?;
        kept.notes -= index.weight();
        Some(index)
    }

    /// Gives account `number`'s index back, as of its last durable change; lets the accounts
    /// least recently given back go if the notes kept are past the bound.
    pub(super) fn give_back(&self, number: String, index: AccountNotes) {
        let mut kept = self.kept();
        kept.clock += 1;
        let now = kept.clock;
        kept.notes += index.weight();
        if let Some((earlier, _)) = kept.accounts.insert(number.clone(), (index, now)) {
            kept.notes -= earlier.weight();
        }
        if kept.notes > self.bound {
            let mut by_use: Vec<(u64, String)> = kept
                .accounts
                .iter()
                .filter(|(account, _)| **account != number)
                .map(|(account, (_, used))| (*used, account.clone()))
                .collect();
            by_use.sort_unstable();
            let low_water = self.bound / 4 * 3;
            for (_, account) in by_use {
                if kept.notes <= low_water {
                    break;
                }
                if let Some((index, _)) = kept.accounts.remove(&account) {
                    kept.notes -= index.weight();
                }
            }
        }
    }

    /// Notes kept in all (for tests).
    #[cfg(test)]
    fn notes(&self) -> usize {
        self.kept().notes
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

    #[test]
    fn a_taken_index_is_not_kept_until_it_is_given_back() {
        let indexes = NoteIndexes::new(100);
        let notes = || AccountNotes::from_notes([note(1, "a", "2024-01-01T00:00:00Z")]);
        indexes.give_back("A-1".into(), notes());
        assert_eq!(indexes.notes(), 1);
        let taken = indexes.take("A-1").expect("kept");
        assert!(indexes.take("A-1").is_none(), "one unit at a time");
        assert_eq!(indexes.notes(), 0);
        indexes.give_back("A-1".into(), taken);
        assert!(indexes.take("A-1").is_some());
    }

    #[test]
    fn past_the_bound_the_accounts_least_recently_given_back_go() {
        let indexes = NoteIndexes::new(8);
        let three = || {
            AccountNotes::from_notes(
                (1..=3).map(|id| note(id, &format!("note {id}"), "2024-01-01T00:00:00Z")),
            )
        };
        indexes.give_back("A-1".into(), three());
        indexes.give_back("A-2".into(), three());
        indexes.give_back("A-1".into(), indexes.take("A-1").expect("kept"));
        // 9 notes: past 8, so down to 6 at most, A-2 (least recently given back) first.
        indexes.give_back("A-3".into(), three());
        assert_eq!(indexes.notes(), 6);
        assert!(indexes.take("A-2").is_none());
        assert!(indexes.take("A-1").is_some());
        // An account past the bound on its own is kept, alone.
        let many = AccountNotes::from_notes(
            (1..=10).map(|id| note(id, &format!("n{id}"), "2024-01-01T00:00:00Z")),
        );
        indexes.give_back("A-4".into(), many);
        assert_eq!(indexes.notes(), 10);
        assert!(indexes.take("A-3").is_none());
        assert!(indexes.take("A-4").is_some());
        // Empty indexes count one each, so that there cannot be unboundedly many.
        for account in ["E-1", "E-2", "E-3"] {
            indexes.give_back(account.into(), AccountNotes::default());
        }
        assert_eq!(indexes.notes(), 3);
    }
}
