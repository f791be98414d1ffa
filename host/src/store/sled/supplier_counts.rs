//! Each supplier's counters ([`Counts`]: its campaign report's figures), as the sled store
//! keeps them: one record per supplier and counter in the `supplier_counts` tree (key
//! `supplier \0 name`, value the count as an `i64`, big endian), and in memory, read from the
//! tree when the store opens.
//!
//! A change moves them under the journal's commit lock ([`SupplierCounters::moved`]): the new
//! values are written in the change's own journal record, so a counter is durable exactly
//! when the change that moved it is, and replaying the journal brings both back together. The
//! memory moves when the change is committed, a moment before it is durable; a change the
//! journal then fails to write leaves the store unwritable, and the next open reads the
//! counters again from what is stored.

use super::codec::{be_u64, pair_key, split_pair_key};
use super::journal::Changes;
use crate::domain::campaign::Counts;
use crate::domain::storage::StoreError;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The name of the counters' tree.
pub(super) const TREE: &str = "supplier_counts";

/// Every supplier's counters, in memory and in their tree.
#[derive(Debug)]
pub(super) struct SupplierCounters {
    tree: sled::Tree,
    suppliers: Mutex<HashMap<String, Counts>>,
}

impl SupplierCounters {
    /// The counters as `tree` holds them.
    pub(super) fn read(tree: sled::Tree) -> Result<Self, StoreError> {
        let mut suppliers: HashMap<String, Counts> = HashMap::new();
        for entry in tree.iter() {
            let (key, value) = entry?;
            let Some((supplier, name)) = split_pair_key(&key) else {
                return Err(super::codec::corrupt_record(
                    &key,
                    "not a supplier's counter",
                ));
            };
            suppliers
                .entry(String::from_utf8_lossy(supplier).into_owned())
                .or_default()
                .add(String::from_utf8_lossy(name), be_u64(&value) as i64);
        }
        Ok(Self {
            tree,
            suppliers: Mutex::new(suppliers),
        })
    }

    /// The supplier's counters.
    pub(super) fn of(&self, supplier: &str) -> Counts {
        self.suppliers().get(supplier).cloned().unwrap_or_default()
    }

    /// Moves the supplier's counters by `deltas` and lists the writes of their new values in
    /// `changes`. Under the commit lock.
    pub(super) fn moved(&self, changes: &mut Changes, supplier: &str, deltas: &Counts) {
        if deltas.is_empty() {
            return;
        }
        let mut suppliers = self.suppliers();
        let counts = suppliers.entry(supplier.to_owned()).or_default();
        for (name, by) in &deltas.0 {
            counts.add(name.clone(), *by);
            let key = pair_key(supplier, name);
            match counts.get(name) {
                0 => changes.remove(&self.tree, key),
                value => changes.insert(&self.tree, key, value.to_be_bytes().to_vec()),
            }
        }
    }

    fn suppliers(&self) -> MutexGuard<'_, HashMap<String, Counts>> {
        self.suppliers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The record of a counter's value, as [`SupplierCounters`] writes it (for the upgrader).
pub(super) fn value_record(value: i64) -> Vec<u8> {
    value.to_be_bytes().to_vec()
}
