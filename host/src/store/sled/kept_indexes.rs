//! Per-account indexes the sled store keeps in memory, derived from the account's records (the
//! notes' dedupe index, [`super::note_index`]; the transactions' ids,
//! [`super::transaction_index`]), bounded by the entries they hold in all.
//!
//! A unit of work holds its account's lock, so it takes the account's index out
//! ([`TakenIndex`]) and gives it back when its change is durable: no two units see one
//! account's index at once. A unit that did not change the index gives it back as it was
//! when it is dropped (a dry run). An index changed and not given back (a unit that failed,
//! or was dropped while its change was still to be made) is read again from the records by
//! the next unit. Past the bound, the accounts least
//! recently given back are let go, down to three quarters of it; an account whose index alone
//! is past the bound is still kept.

use crate::domain::storage::StoreError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// An account's index, as the bound counts it.
pub(super) trait AccountIndex: Default {
    /// About how many entries all the accounts' indexes hold at most, by default, and at
    /// least when the bound follows the store's memory ([`KeptIndexes::for_store_memory`]).
    const KEPT: usize;
    /// About how many bytes of memory one entry takes.
    const ENTRY_BYTES: usize;

    /// What the index counts for against the bound: its entries, and at least one (so that
    /// empty indexes are bounded too).
    fn weight(&self) -> usize;
}

/// The accounts' indexes not taken by a unit, with when each was last given back.
#[derive(Debug)]
struct Kept<I> {
    accounts: HashMap<String, (I, u64)>,
    /// The weights of the indexes kept ([`AccountIndex::weight`]).
    weight: usize,
    clock: u64,
}

impl<I> Default for Kept<I> {
    fn default() -> Self {
        Self {
            accounts: HashMap::new(),
            weight: 0,
            clock: 0,
        }
    }
}

/// Every account's index of one kind kept in memory, up to a bound on their weight in all.
#[derive(Debug)]
pub(super) struct KeptIndexes<I> {
    bound: usize,
    kept: Mutex<Kept<I>>,
}

impl<I: AccountIndex> Default for KeptIndexes<I> {
    fn default() -> Self {
        Self::new(I::KEPT)
    }
}

/// Each kind of index may hold this share of the store's memory bound (`--store-cache-mb`),
/// when that is more than [`INDEX_MEMORY_AT_LEAST`].
const SHARE_OF_STORE_MEMORY: u64 = 8;

/// The memory each kind of index may hold whatever sled's cache is bound to: 128 MiB, about
/// 2.4 million notes or 5.2 million transactions. A load whose accounts hold more than the
/// bound reads their indexes again and again from the records, so the bound does not shrink
/// with a small cache.
const INDEX_MEMORY_AT_LEAST: u64 = 128 << 20;

impl<I: AccountIndex> KeptIndexes<I> {
    /// Indexes that take about an eighth of `store_memory` bytes at most (the bound of sled's
    /// cache, `--store-cache-mb`), and at least [`INDEX_MEMORY_AT_LEAST`] and
    /// [`AccountIndex::KEPT`] entries.
    pub(super) fn for_store_memory(store_memory: u64) -> Self {
        let memory = (store_memory / SHARE_OF_STORE_MEMORY).max(INDEX_MEMORY_AT_LEAST);
        let entries = memory / I::ENTRY_BYTES.max(1) as u64;
        Self::new(usize::try_from(entries).unwrap_or(usize::MAX).max(I::KEPT))
    }

    /// Indexes that weigh about `bound` in all at most.
    pub(super) fn new(bound: usize) -> Self {
        Self {
            bound,
            kept: Mutex::new(Kept::default()),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept<I>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes account `number`'s index, if it is kept (its unit gives it back, or not).
    pub(super) fn take(&self, number: &str) -> Option<I> {
        let mut kept = self.kept();
        let (index, _) = kept.accounts.remove(number)?;
        kept.weight -= index.weight();
        Some(index)
    }

    /// Gives account `number`'s index back, as of its last durable change; lets the accounts
    /// least recently given back go if the indexes kept are past the bound.
    pub(super) fn give_back(&self, number: String, index: I) {
        let mut kept = self.kept();
        kept.clock += 1;
        let now = kept.clock;
        kept.weight += index.weight();
        if let Some((earlier, _)) = kept.accounts.insert(number.clone(), (index, now)) {
            kept.weight -= earlier.weight();
        }
        if kept.weight > self.bound {
            let mut by_use: Vec<(u64, String)> = kept
                .accounts
                .iter()
                .filter(|(account, _)| **account != number)
                .map(|(account, (_, used))| (*used, account.clone()))
                .collect();
            by_use.sort_unstable();
            let low_water = self.bound / 4 * 3;
            for (_, account) in by_use {
                if kept.weight <= low_water {
                    break;
                }
                if let Some((index, _)) = kept.accounts.remove(&account) {
                    kept.weight -= index.weight();
                }
            }
        }
    }

    /// Account `number`'s index, in `slot` once a unit took it: the one kept here, or else
    /// `read` from the account's records.
    pub(super) fn taken<'s>(
        self: &Arc<Self>,
        slot: &'s mut Option<TakenIndex<I>>,
        number: &str,
        read: impl FnOnce() -> Result<I, StoreError>,
    ) -> Result<&'s mut TakenIndex<I>, StoreError> {
        let taken = match slot.take() {
            Some(taken) => taken,
            None => TakenIndex {
                index: match self.take(number) {
                    Some(index) => index,
                    None => read()?,
                },
                indexes: self.clone(),
                number: number.to_owned(),
                changed: false,
            },
        };
        Ok(slot.insert(taken))
    }

    /// The weight of the indexes kept (for tests).
    #[cfg(test)]
    pub(super) fn weight(&self) -> usize {
        self.kept().weight
    }
}

/// An account's index a unit took ([`KeptIndexes::taken`]). Dropped, it goes back as it was
/// taken, unless the unit changed it (for a change that may not be made): then it is let go.
#[derive(Debug)]
pub(super) struct TakenIndex<I: AccountIndex> {
    indexes: Arc<KeptIndexes<I>>,
    number: String,
    index: I,
    changed: bool,
}

impl<I: AccountIndex> TakenIndex<I> {
    pub(super) fn index(&self) -> &I {
        &self.index
    }

    /// The index, to record what the unit changes (given back only by [`Self::give_back`]).
    pub(super) fn change(&mut self) -> &mut I {
        self.changed = true;
        &mut self.index
    }

    /// The unit's change is durable: the index, as it changed it, goes back.
    pub(super) fn give_back(mut self) {
        self.changed = false;
    }
}

impl<I: AccountIndex> Drop for TakenIndex<I> {
    fn drop(&mut self) {
        if !self.changed {
            self.indexes.give_back(
                std::mem::take(&mut self.number),
                std::mem::take(&mut self.index),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of `n` entries.
    #[derive(Debug, Default)]
    struct Entries(usize);

    impl AccountIndex for Entries {
        const KEPT: usize = 100;
        const ENTRY_BYTES: usize = 10;

        fn weight(&self) -> usize {
            self.0.max(1)
        }
    }

    #[test]
    fn the_bound_follows_the_stores_memory_above_a_floor_of_its_own() {
        // An eighth of 16 GiB, at 10 bytes an entry.
        assert_eq!(
            KeptIndexes::<Entries>::for_store_memory(16 << 30).bound,
            (2 << 30) / 10
        );
        // sled's default cache, or less: the floor, not an eighth of it.
        for small in [crate::store::DEFAULT_CACHE_BYTES, 800] {
            assert_eq!(
                KeptIndexes::<Entries>::for_store_memory(small).bound,
                (128 << 20) / 10
            );
        }
        assert_eq!(KeptIndexes::<Entries>::default().bound, 100);
    }

    #[test]
    fn a_taken_index_is_not_kept_until_it_is_given_back() {
        let indexes = KeptIndexes::<Entries>::default();
        indexes.give_back("A-1".into(), Entries(1));
        assert_eq!(indexes.weight(), 1);
        let taken = indexes.take("A-1").expect("kept");
        assert!(indexes.take("A-1").is_none(), "one unit at a time");
        assert_eq!(indexes.weight(), 0);
        indexes.give_back("A-1".into(), taken);
        assert!(indexes.take("A-1").is_some());
    }

    #[test]
    fn a_taken_index_goes_back_unless_it_was_changed_and_not_given_back() {
        let indexes = Arc::new(KeptIndexes::<Entries>::default());
        let mut slot = None;
        indexes
            .taken(&mut slot, "A-1", || Ok(Entries(2)))
            .expect("read");
        assert_eq!(
            indexes
                .taken(&mut slot, "A-1", || panic!("taken already"))
                .expect("taken")
                .index()
                .0,
            2
        );
        slot = None;
        assert_eq!(indexes.weight(), 2, "unchanged: back as it was");
        indexes
            .taken(&mut slot, "A-1", || panic!("kept"))
            .expect("taken")
            .change()
            .0 = 3;
        slot = None;
        assert!(indexes.take("A-1").is_none(), "changed and dropped: let go");
        let taken = indexes
            .taken(&mut slot, "A-1", || Ok(Entries(4)))
            .expect("read again");
        taken.change().0 = 5;
        slot.take().expect("taken").give_back();
        assert_eq!(indexes.take("A-1").map(|index| index.0), Some(5));
    }

    #[test]
    fn past_the_bound_the_accounts_least_recently_given_back_go() {
        let indexes = KeptIndexes::<Entries>::new(8);
        indexes.give_back("A-1".into(), Entries(3));
        indexes.give_back("A-2".into(), Entries(3));
        indexes.give_back("A-1".into(), indexes.take("A-1").expect("kept"));
        // 9 entries: past 8, so down to 6 at most, A-2 (least recently given back) first.
        indexes.give_back("A-3".into(), Entries(3));
        assert_eq!(indexes.weight(), 6);
        assert!(indexes.take("A-2").is_none());
        assert!(indexes.take("A-1").is_some());
        // An account past the bound on its own is kept, alone.
        indexes.give_back("A-4".into(), Entries(10));
        assert_eq!(indexes.weight(), 10);
        assert!(indexes.take("A-3").is_none());
        assert!(indexes.take("A-4").is_some());
        // Empty indexes count one each, so that there cannot be unboundedly many.
        for account in ["E-1", "E-2", "E-3"] {
            indexes.give_back(account.into(), Entries(0));
        }
        assert_eq!(indexes.weight(), 3);
    }
}
