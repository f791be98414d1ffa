//! A map shared between threads that holds at most a fixed number of entries: once full, it
//! starts again empty. For values that are cheap to find again and only worth keeping while
//! they are used often (verified tokens, decoded records): no eviction order to keep, and a
//! full map costs one clear.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};

#[derive(Debug)]
pub struct BoundedMap<K, V> {
    bound: usize,
    entries: Mutex<HashMap<K, V>>,
}

impl<K: Eq + Hash, V: Clone> BoundedMap<K, V> {
    /// A map of at most `bound` entries.
    pub fn new(bound: usize) -> Self {
        Self {
            bound,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The value kept at `key`, if any.
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.lock().get(key).cloned()
    }

    /// Keeps `value` at `key`, emptying the map first when it is full.
    pub fn keep(&self, key: K, value: V) {
        let mut entries = self.lock();
        if entries.len() >= self.bound {
            entries.clear();
        }
        entries.insert(key, value);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, V>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_map_starts_again_empty() {
        let map = BoundedMap::new(3);
        for key in 0..3 {
            map.keep(key, key * 10);
        }
        assert_eq!((map.len(), map.get(&2)), (3, Some(20)));
        map.keep(2, 21);
        assert_eq!(map.len(), 1, "a key kept again counts as new once full");
        map.keep(3, 30);
        assert_eq!((map.len(), map.get(&0), map.get(&3)), (2, None, Some(30)));
    }
}
