//! Version 5: an event whose id is a canonical UUID (every one Ferry makes) is found by its id
//! through the index by millisecond, never through `event_ids`.
//!
//! Up to version 4 `event_ids` may hold every event's id (id → `seq`, as the versions before
//! the index by millisecond kept them). This step indexes each canonical UUID there by its
//! millisecond, on its own, and then takes it out of `event_ids`, which keeps only the ids
//! that are not canonical UUIDs. Lookups then read one tree for an id, not two.

use crate::domain::storage::StoreError;
use crate::store::sled::codec::be_u64;
use crate::store::sled::event_ids::{canonical_uuid, index_one};

pub(super) fn upgrade(db: &sled::Db) -> Result<(), StoreError> {
    let by_id = db.open_tree("event_ids")?;
    let by_millisecond = db.open_tree("event_ids_by_millisecond")?;
    for entry in by_id.iter() {
        let (id, seq) = entry?;
        index_one(&by_millisecond, &String::from_utf8_lossy(&id), be_u64(&seq))?;
    }
    // Indexed by their millisecond before they leave `event_ids`: a crash in between runs the
    // step again, which finds them indexed already.
    by_millisecond.flush()?;
    for entry in by_id.iter().keys() {
        let id = entry?;
        if canonical_uuid(&String::from_utf8_lossy(&id)).is_some() {
            by_id.remove(id)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{event, fixture};
    use super::*;
    use crate::domain::storage::EventLog;
    use crate::store::sled::SledStore;

    #[tokio::test]
    async fn every_id_is_found_and_canonical_ones_through_their_millisecond() {
        let dir = fixture("v4-event-ids");
        let store = SledStore::open(dir.path()).expect("upgraded");
        let upper = event(9).id.to_uppercase();
        for (id, seq) in [(event(7).id, 7), ("not-a-uuid".to_owned(), 8), (upper, 9)] {
            assert_eq!(store.event_seq(&id).await.expect("seq"), Some(seq), "{id}");
        }
        assert_eq!(
            store.event_seq(&event(9).id).await.expect("seq"),
            None,
            "an id is its exact text"
        );
        drop(store);

        let db = sled::open(dir.path()).expect("sled");
        let by_id = db.open_tree("event_ids").expect("tree");
        assert_eq!(by_id.len(), 2, "the ids that are not canonical UUIDs");
        assert!(!by_id.contains_key(event(7).id).expect("read"));
        let by_millisecond = db.open_tree("event_ids_by_millisecond").expect("tree");
        assert_eq!(by_millisecond.len(), 1);
    }

    #[test]
    fn the_step_run_again_indexes_an_id_once() {
        let dir = fixture("v4-event-ids");
        let db = sled::open(dir.path()).expect("sled");
        let by_millisecond = db.open_tree("event_ids_by_millisecond").expect("tree");
        // A crash after an id was indexed by its millisecond and before it left `event_ids`.
        index_one(&by_millisecond, &event(7).id, 7).expect("indexed");
        let once = by_millisecond
            .iter()
            .collect::<Result<Vec<_>, _>>()
            .expect("read");
        upgrade(&db).expect("upgraded");
        let after = by_millisecond
            .iter()
            .collect::<Result<Vec<_>, _>>()
            .expect("read");
        assert_eq!(after, once);
    }
}
