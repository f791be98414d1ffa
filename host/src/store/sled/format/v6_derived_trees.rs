//! Version 6: every import process has its listing; nothing is kept in a tree that is derived
//! from other records and kept in memory now; and the ids handed out go on past every id sled
//! ever generated.
//!
//! Up to version 5 a directory may have import processes without their listing (versions
//! before listings were kept; `layout`'s `import_listings_built` said once they were all
//! written), the tree of each supplier's counts by state (`import_counts`) and of the notes'
//! dedupe index (`account_NoteIndex`), and ids handed out by sled's own counter (versions
//! before ids were reserved in blocks by the journal). This step writes every process's
//! listing (unless `layout` says they were), drops those three trees, and reserves the ids up
//! to sled's counter, so that the store reads its ids from its reservation alone.

use super::drop_tree;
use crate::domain::import_process::{ImportListing, ImportProcess};
use crate::domain::storage::StoreError;
use crate::store::sled::codec::{be_u64, decode};
use crate::store::sled::{ID_BLOCKS_TREE, IDS_RESERVED, listing};

/// The tree of version 5 and before whose key [`LISTINGS_BUILT`] said every process had its
/// listing.
pub(super) const LAYOUT_TREE: &str = "layout";
/// The key of [`LAYOUT_TREE`] that said every process had its listing.
pub(super) const LISTINGS_BUILT: &[u8] = b"import_listings_built";
/// The tree of version 5 and before that kept each supplier's counts by state.
pub(super) const IMPORT_COUNTS_TREE: &str = "import_counts";
/// The tree of version 5 and before that kept the notes' dedupe index.
pub(super) const NOTE_INDEX_TREE: &str = "account_NoteIndex";

pub(super) fn upgrade(db: &sled::Db) -> Result<(), StoreError> {
    let layout = db.open_tree(LAYOUT_TREE)?;
    if !layout.contains_key(LISTINGS_BUILT)? {
        let imports = db.open_tree("imports")?;
        let listings = db.open_tree("import_listings")?;
        let mut built = 0_usize;
        for entry in imports.iter() {
            let (key, value) = entry?;
            let process: ImportProcess = decode(&key, &value)?;
            listings.insert(key, listing::encode(&ImportListing::of(&process)))?;
            built += 1;
        }
        tracing::info!(
            built,
            "import listings written for the processes stored before them"
        );
    }
    let id_blocks = db.open_tree(ID_BLOCKS_TREE)?;
    let reserved = id_blocks
        .get(IDS_RESERVED)?
        .map_or(0, |bytes| be_u64(&bytes));
    let generated = db.generate_id()?;
    if generated > reserved {
        id_blocks.insert(IDS_RESERVED, &generated.to_be_bytes())?;
    }
    db.flush()?;
    drop_tree(db, LAYOUT_TREE)?;
    drop_tree(db, IMPORT_COUNTS_TREE)?;
    drop_tree(db, NOTE_INDEX_TREE)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{fixture, process};
    use super::*;
    use crate::domain::import_process::ImportState;
    use crate::domain::storage::{AccountStore, ImportStore};
    use crate::store::sled::SledStore;
    use futures_util::TryStreamExt;

    #[tokio::test]
    async fn processes_are_listed_and_counted_and_ids_go_on_past_sleds() {
        let dir = fixture("v5-derived-trees");
        let generated = {
            let db = sled::open(dir.path()).expect("sled");
            db.generate_id().expect("an id")
        };
        let store = SledStore::open(dir.path()).expect("upgraded");
        let listed: Vec<ImportListing> = store
            .import_listings("OLD_CO", None)
            .try_collect()
            .await
            .expect("the listings");
        let expected: Vec<ImportListing> = ["ACC-0", "ACC-1", "ACC-2"]
            .into_iter()
            .map(|external| ImportListing::of(&process(external)))
            .collect();
        assert_eq!(listed, expected);
        assert_eq!(
            store.import_listing("OLD_CO", "ACC-1").await.expect("read"),
            Some(expected[1].clone())
        );
        let counts = store.import_counts("OLD_CO").await.expect("counts");
        assert_eq!(
            counts.get(ImportState::Pending),
            3,
            "counted, not the stale tree's"
        );
        let ids = store.new_ids(1).await.expect("ids");
        assert!(ids[0] >= generated, "{} after sled's {generated}", ids[0]);
        drop(store);

        let db = sled::open(dir.path()).expect("sled");
        for gone in [LAYOUT_TREE, IMPORT_COUNTS_TREE, NOTE_INDEX_TREE] {
            assert!(
                !db.tree_names()
                    .iter()
                    .any(|name| name.as_ref() == gone.as_bytes()),
                "{gone}"
            );
        }
    }
}
