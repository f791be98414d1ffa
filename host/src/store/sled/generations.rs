//! How often each part of the sled trees has been written: a counter per stripe of keys,
//! moved on each time a write is made in sled, so that a record kept decoded in memory
//! ([`super::decoded`]) can be known unchanged without reading sled again.
//!
//! A key's stripe is a hash of its tree's name and the key; keys that share a stripe only
//! cost each other a read of sled now and then. A write is made in sled first and its
//! stripe moved on after (`Release`); a reader loads the stripe first (`Acquire`) and reads
//! sled after. So a reader that sees a stripe's count sees every write counted in it, and a
//! record read while a write was being made is kept under the count before that write: the
//! next read finds the count moved on and reads sled again.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

/// Stripes of keys, each with its own count.
const STRIPES: usize = 1024;

/// The write counts of one sled database's stripes of keys.
pub(super) struct WriteGenerations {
    stripes: Box<[AtomicU64]>,
    hasher: std::hash::RandomState,
}

impl Default for WriteGenerations {
    fn default() -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
            hasher: std::hash::RandomState::new(),
        }
    }
}

impl WriteGenerations {
    /// How often the stripe of `key` in `tree` has been written, read before reading sled.
    pub(super) fn current(&self, tree: &[u8], key: &[u8]) -> u64 {
        self.stripe(tree, key).load(Ordering::Acquire)
    }

    /// Counts a write of `key` in `tree`, made in sled just before.
    pub(super) fn written(&self, tree: &[u8], key: &[u8]) {
        self.stripe(tree, key).fetch_add(1, Ordering::Release);
    }

    fn stripe(&self, tree: &[u8], key: &[u8]) -> &AtomicU64 {
        &self.stripes[self.hasher.hash_one((tree, key)) as usize % STRIPES]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_moves_on_its_keys_count_and_no_other_key_is_needed_to() {
        let generations = WriteGenerations::default();
        let before = generations.current(b"tree", b"key");
        generations.written(b"tree", b"key");
        assert_eq!(generations.current(b"tree", b"key"), before + 1);
        let other = (0..)
            .map(|index: u32| index.to_be_bytes())
            .find(|other| {
                !std::ptr::eq(
                    generations.stripe(b"tree", other),
                    generations.stripe(b"tree", b"key"),
                )
            })
            .expect("another stripe");
        let other_before = generations.current(b"tree", &other);
        generations.written(b"tree", b"key");
        assert_eq!(generations.current(b"tree", &other), other_before);
    }
}
