//! What the lists show of each import process ([`ImportListing`]), as the sled store keeps it
//! beside the process: a list of a hundred thousand processes reads these rather than the
//! processes, whose account documents are the bulk of each record, and decodes each without
//! a JSON parser.
//!
//! A record, under the process's own key (`supplier \0 external`, where the external account
//! number is read from):
//! - the state's spelling: its length (one byte), then its text;
//! - one byte of flags: [`CREATED_AT`] (the platform account's creation time follows),
//!   [`NUMBER`] (its number follows);
//! - the creation time: seconds since the epoch (i64) and nanoseconds (u32), big endian;
//! - the platform account number's UTF-8, to the end of the record.

use super::codec::{corrupt_record, split_pair_key};
use crate::domain::import_process::{ImportListing, ImportState};
use crate::domain::storage::StoreError;
use chrono::DateTime;

/// The flag of a record that holds the platform account's creation time.
const CREATED_AT: u8 = 1;
/// The flag of a record that holds the platform account number.
const NUMBER: u8 = 2;

/// The record of `listing` (its external account number is the key's, not written here).
pub(super) fn encode(listing: &ImportListing) -> Vec<u8> {
    let state = listing.state.as_str().as_bytes();
    let number = listing.platform_account_number.as_deref().unwrap_or("");
    let mut bytes = Vec::with_capacity(2 + state.len() + 12 + number.len());
    // A state's spelling is a few capitals, far below 256 bytes.
    bytes.push(state.len() as u8);
    bytes.extend_from_slice(state);
    let mut flags = 0;
    if listing.account_created_at.is_some() {
        flags |= CREATED_AT;
    }
    if listing.platform_account_number.is_some() {
        flags |= NUMBER;
    }
    bytes.push(flags);
    if let Some(at) = listing.account_created_at {
        bytes.extend_from_slice(&at.timestamp().to_be_bytes());
        bytes.extend_from_slice(&at.timestamp_subsec_nanos().to_be_bytes());
    }
    bytes.extend_from_slice(number.as_bytes());
    bytes
}

/// The listing whose record `bytes` is at `key` (`supplier \0 external`).
pub(super) fn decode(key: &[u8], bytes: &[u8]) -> Result<ImportListing, StoreError> {
    read(key, bytes).ok_or_else(|| corrupt_record(key, "not an import listing record"))
}

fn read(key: &[u8], bytes: &[u8]) -> Option<ImportListing> {
    let (_, external) = split_pair_key(key)?;
    let external = std::str::from_utf8(external).ok()?;
    let (&state_len, rest) = bytes.split_first()?;
    let (state, rest) = rest.split_at_checked(usize::from(state_len))?;
    let state = ImportState::parse(std::str::from_utf8(state).ok()?)?;
    let (&flags, mut rest) = rest.split_first()?;
    let account_created_at = if flags & CREATED_AT != 0 {
        let (seconds, after) = rest.split_first_chunk::<8>()?;
        let (nanos, after) = after.split_first_chunk::<4>()?;
        rest = after;
        Some(DateTime::from_timestamp(
            i64::from_be_bytes(*seconds),
            u32::from_be_bytes(*nanos),
        )?)
    } else {
        None
    };
    let platform_account_number = if flags & NUMBER != 0 {
        Some(std::str::from_utf8(rest).ok()?.to_owned())
    } else if rest.is_empty() {
        None
    } else {
        return None;
    };
    Some(ImportListing {
        external_account_number: external.to_owned(),
        state,
        platform_account_number,
        account_created_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn key(external: &str) -> Vec<u8> {
        super::super::codec::pair_key("OLD_CO", external)
    }

    #[test]
    fn every_listing_reads_back_as_written() {
        let created = Utc::now();
        let listings = [
            ImportListing {
                external_account_number: "ACC-1".into(),
                state: ImportState::Pending,
                platform_account_number: None,
                account_created_at: None,
            },
            ImportListing {
                external_account_number: "ACC-2".into(),
                state: ImportState::Processed,
                platform_account_number: Some("A-1234ABCD".into()),
                account_created_at: Some(created),
            },
            ImportListing {
                external_account_number: "ACC-3".into(),
                state: ImportState::InProgress,
                platform_account_number: Some(String::new()),
                account_created_at: None,
            },
        ];
        for listing in listings {
            let read = decode(&key(&listing.external_account_number), &encode(&listing));
            assert_eq!(read.expect("read back"), listing);
        }
    }

    #[test]
    fn a_record_cut_short_or_run_on_is_corrupt() {
        let listing = ImportListing {
            external_account_number: "ACC-2".into(),
            state: ImportState::Processed,
            platform_account_number: None,
            account_created_at: Some(Utc::now()),
        };
        let bytes = encode(&listing);
        for cut in 0..bytes.len() {
            assert!(
                matches!(
                    decode(&key("ACC-2"), &bytes[..cut]),
                    Err(StoreError::Corrupt { .. })
                ),
                "cut at {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(b'x');
        assert!(decode(&key("ACC-2"), &longer).is_err());
        assert!(decode(b"no separator", &bytes).is_err());
        let mut unknown_state = bytes;
        unknown_state[1] = b'Q';
        assert!(decode(&key("ACC-2"), &unknown_state).is_err());
    }
}
