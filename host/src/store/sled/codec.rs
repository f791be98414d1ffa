//! The bytes of the sled store's records: JSON values, blocks compressed with LZ4 behind a
//! tag byte, keys of two parts, and numbers as eight big-endian bytes.

use crate::domain::storage::StoreError;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Between the two parts of a [`pair_key`]: no supplier code or account number holds it.
pub(super) const SEPARATOR: u8 = 0;

pub(super) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Records are plain structs of strings, numbers and dates: serialising cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

pub(super) fn decode<T: DeserializeOwned>(key: &[u8], bytes: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|source| StoreError::Corrupt {
        key: String::from_utf8_lossy(key).into_owned(),
        source,
    })
}

/// The record at `key` is not what Ferry wrote, for the reason `problem` gives.
pub(super) fn corrupt_record(key: &[u8], problem: &'static str) -> StoreError {
    StoreError::Corrupt {
        key: String::from_utf8_lossy(key).into_owned(),
        source: serde::de::Error::custom(problem),
    }
}

/// A record compressed as one LZ4 block behind a one-byte `tag` saying so: the tag, then the
/// size of `body` (u32, little endian), then the block. sled rewrites a leaf whole when it
/// splits or consolidates it, so large records cost in proportion to their bytes on every
/// write near them; records of many similar items (groups of events, batches of
/// transactions) shrink several times over.
pub(super) fn compressed(tag: u8, body: &[u8]) -> Vec<u8> {
    let block = lz4_flex::block::compress_prepend_size(body);
    let mut record = Vec::with_capacity(1 + block.len());
    record.push(tag);
    record.extend_from_slice(&block);
    record
}

/// No compressed record decompresses to more than this: one claiming more is corrupt, and is
/// not given the memory it claims.
pub(super) const MAX_DECOMPRESSED_BYTES: usize = 1 << 30;

/// The body of a record [`compressed`] wrote, given what follows its tag; `None` if it does
/// not decompress to the size it states.
pub(super) fn decompressed(block: &[u8]) -> Option<Vec<u8>> {
    let (size, block) = block.split_first_chunk::<4>()?;
    let size = u32::from_le_bytes(*size) as usize;
    if size > MAX_DECOMPRESSED_BYTES {
        return None;
    }
    lz4_flex::block::decompress(block, size)
        .ok()
        .filter(|body| body.len() == size)
}

pub(super) fn pair_key(first: &str, second: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(first.len() + second.len() + 1);
    key.extend_from_slice(first.as_bytes());
    key.push(SEPARATOR);
    key.extend_from_slice(second.as_bytes());
    key
}

/// The two parts of a [`pair_key`] (none: `key` is not one).
pub(super) fn split_pair_key(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let separator = key.iter().position(|&byte| byte == SEPARATOR)?;
    Some((&key[..separator], &key[separator + 1..]))
}

/// A number stored as 8 big-endian bytes (a `seq` key, a count, an id reservation); 0 for
/// anything else.
pub(super) fn be_u64(key: &[u8]) -> u64 {
    <[u8; 8]>::try_from(key)
        .map(u64::from_be_bytes)
        .unwrap_or(0)
}
