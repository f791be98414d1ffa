//! How many import processes each supplier has in each state, as the sled store keeps it: in
//! memory, counted from the listings ([`super::listing`]) when the store opens and moved
//! by each import change under the commit lock.
//!
//! The counts are derived from the listings and not stored, so they cannot drift from them,
//! and a change of state costs no sled write (it cost one or two: a migration three). Counting
//! on open reads every listing, a few bytes each.
//!
//! A count moves when its change is committed, a moment before the change is durable; a
//! change the journal then fails to write leaves the store unwritable, and the next open
//! counts again from what is stored.

use super::StoreError;
use super::codec::split_pair_key;
use super::listing;
use crate::domain::import_process::ImportState;
use crate::domain::storage::ImportCounts;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Each supplier's count of import processes by state.
#[derive(Debug, Default)]
pub(super) struct ImportCountsByState {
    suppliers: Mutex<HashMap<String, ImportCounts>>,
}

impl ImportCountsByState {
    /// The counts of the processes `listings` holds (keys `supplier \0 external`).
    pub(super) fn counted(listings: &sled::Tree) -> Result<Self, StoreError> {
        let mut suppliers: HashMap<String, ImportCounts> = HashMap::new();
        for entry in listings.iter() {
            let (key, value) = entry?;
            // A key that is not `supplier \0 external` is corrupt: `state_of` says so.
            let state = listing::state_of(&key, &value)?;
            let supplier = split_pair_key(&key).map_or(&key[..], |(supplier, _)| supplier);
            change_counts(
                &mut suppliers,
                &String::from_utf8_lossy(supplier),
                |counts| {
                    *counts.0.entry(state).or_default() += 1;
                },
            );
        }
        Ok(Self {
            suppliers: Mutex::new(suppliers),
        })
    }

    /// One of the supplier's processes went from `before` (none: it is new) to `after`.
    pub(super) fn moved(&self, supplier: &str, before: Option<ImportState>, after: ImportState) {
        if before == Some(after) {
            return;
        }
        change_counts(&mut self.suppliers(), supplier, |counts| {
            if let Some(before) = before {
                let count = counts.0.entry(before).or_default();
                *count = count.saturating_sub(1);
            }
            *counts.0.entry(after).or_default() += 1;
        });
    }

    /// The supplier's counts, every state named (0 where it has none).
    pub(super) fn of(&self, supplier: &str) -> ImportCounts {
        let suppliers = self.suppliers();
        let stored = suppliers.get(supplier);
        ImportCounts(
            ImportState::ALL
                .into_iter()
                .map(|state| (state, stored.map_or(0, |counts| counts.get(state))))
                .collect(),
        )
    }

    fn suppliers(&self) -> MutexGuard<'_, HashMap<String, ImportCounts>> {
        self.suppliers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Changes the supplier's counts in `suppliers`, added if it has none (its name copied only
/// then).
fn change_counts(
    suppliers: &mut HashMap<String, ImportCounts>,
    supplier: &str,
    change: impl FnOnce(&mut ImportCounts),
) {
    match suppliers.get_mut(supplier) {
        Some(counts) => change(counts),
        None => change(suppliers.entry(supplier.to_owned()).or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::import_process::ImportListing;
    use crate::store::sled::codec::pair_key;

    fn listing(state: ImportState) -> Vec<u8> {
        listing::encode(&ImportListing {
            external_account_number: String::new(),
            state,
            platform_account_number: None,
            account_created_at: None,
        })
    }

    #[test]
    fn the_counts_are_those_of_the_listings_and_move_with_each_change() {
        let db = sled::Config::new().temporary(true).open().expect("sled");
        let listings = db.open_tree("import_listings").expect("tree");
        for (supplier, external, state) in [
            ("OLD_CO", "A-1", ImportState::Pending),
            ("OLD_CO", "A-2", ImportState::Pending),
            ("OLD_CO", "A-3", ImportState::Processed),
            ("OTHER", "B-1", ImportState::Errored),
        ] {
            listings
                .insert(pair_key(supplier, external), listing(state))
                .expect("insert");
        }
        let counts = ImportCountsByState::counted(&listings).expect("counted");
        let old_co = counts.of("OLD_CO");
        assert_eq!(old_co.get(ImportState::Pending), 2);
        assert_eq!(old_co.get(ImportState::Processed), 1);
        assert_eq!(old_co.get(ImportState::Errored), 0);
        assert_eq!(old_co.0.len(), ImportState::ALL.len(), "every state named");
        assert_eq!(counts.of("OTHER").get(ImportState::Errored), 1);
        assert_eq!(counts.of("NOBODY").0.values().sum::<u64>(), 0);

        counts.moved("OLD_CO", Some(ImportState::Pending), ImportState::Processed);
        counts.moved(
            "OLD_CO",
            Some(ImportState::Processed),
            ImportState::Processed,
        );
        counts.moved("NEW_CO", None, ImportState::Pending);
        let old_co = counts.of("OLD_CO");
        assert_eq!(old_co.get(ImportState::Pending), 1);
        assert_eq!(old_co.get(ImportState::Processed), 2);
        assert_eq!(counts.of("NEW_CO").get(ImportState::Pending), 1);
    }

    #[test]
    fn a_listing_that_cannot_be_read_is_corrupt() {
        let db = sled::Config::new().temporary(true).open().expect("sled");
        let listings = db.open_tree("import_listings").expect("tree");
        listings
            .insert(pair_key("OLD_CO", "A-1"), b"\x05WRONG\x00".as_slice())
            .expect("insert");
        assert!(matches!(
            ImportCountsByState::counted(&listings),
            Err(StoreError::Corrupt { .. })
        ));
    }
}
