//! Taking old events out of the sled event log ([`EventLog::prune_events`]): the records at the
//! log's start whose every event the relay published and was made before a moment, with what
//! indexes them (their ids' records, the runs recorded published).
//!
//! The log is a prefix in `seq` order of what changes wrote, and only its start is taken, so
//! what is left is the log from some `seq` on (the bound), as it was. The records are read
//! from sled outside the commit lock: below the relay's cursor nothing is written any more.
//! Their removal is journaled like any change, so it is made again after a crash; a removal
//! lost with the journal's last record leaves the records for the next call.
//!
//! [`EventLog::prune_events`]: crate::domain::storage::EventLog::prune_events

use super::SledStore;
use super::StoreError;
use super::codec::be_u64;
use super::event_ids;
use super::event_records::{LogRecord, corrupt, logged_time};
use super::journal::Changes;
use chrono::{DateTime, Utc};

impl SledStore {
    /// Whether the log's first event is due (published, and made before `made_before`): if it
    /// is not, no event is. One record read, for the rounds with nothing to take.
    pub(super) fn log_start_is_due(&self, made_before: DateTime<Utc>) -> Result<bool, StoreError> {
        let Some((key, value)) = self.events.first()? else {
            return Ok(false);
        };
        let first = be_u64(&key);
        if first >= self.first_unpublished() {
            return Ok(false);
        }
        let record = LogRecord::read(first, &value)?;
        match record.events().next().flatten() {
            Some(stored) => Ok(logged_time(first, stored)? < made_before),
            None => Err(corrupt(first, "a group of events cut short")),
        }
    }

    /// Journals the removal of the log's oldest records while every event in them was
    /// published and made before `made_before`, about `limit` events' worth; how many events
    /// they held. Not yet durable.
    pub(super) fn prune_logged(
        &self,
        made_before: DateTime<Utc>,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let unpublished = self.first_unpublished();
        let mut changes = Changes::default();
        let mut taken = 0;
        // Every `seq` below it is out of the log once the change is made.
        let mut bound = None;
        for entry in self.events.iter() {
            if taken >= limit {
                break;
            }
            let (key, value) = entry?;
            let first = be_u64(&key);
            let record = LogRecord::read(first, &value)?;
            let mut held = 0;
            let mut due = true;
            for (seq, stored) in (first..).zip(record.events()) {
                let stored = stored.ok_or_else(|| corrupt(first, "a group of events cut short"))?;
                if seq >= unpublished || logged_time(seq, stored)? >= made_before {
                    due = false;
                    break;
                }
                held += 1;
            }
            if !due {
                break;
            }
            changes.remove(&self.events, key);
            taken += held;
            bound = Some(first + held as u64);
        }
        let Some(bound) = bound else {
            return Ok(0);
        };
        for key in event_ids::records_before(&self.event_ids_by_millisecond, bound)? {
            changes.remove(&self.event_ids_by_millisecond, key);
        }
        // A run is keyed by its last `seq`; one that reaches the bound still names events kept.
        for run in self.published_runs.range(..bound.to_be_bytes()) {
            changes.remove(&self.published_runs, run?.0);
        }
        self.journal.commit_blind(changes, |_| {});
        Ok(taken)
    }
}
