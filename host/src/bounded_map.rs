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

    /// What `f` makes of the value kept at `key` (which it may change), if one is kept.
    pub fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&mut V) -> R) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.lock().get_mut(key).map(f)
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

    #[test]
    fn a_value_kept_is_changed_in_place_and_a_missing_one_is_not_made() {
        let map = BoundedMap::new(3);
        map.keep("a", 1);
        assert_eq!(map.with("a", |value| std::mem::replace(value, 2)), Some(1));
        assert_eq!(map.get("a"), Some(2));
        assert_eq!(map.with("b", |value| *value), None);
        assert_eq!(map.len(), 1);
    }
}
