//! The journal's record format: one record per change, the writes it makes in sled, in order.
//!
//! A record is a header of eight bytes, `u32` payload length and `u32` CRC-32 of the payload
//! (both little-endian), then the payload: the record's number (`u64`), then for each write a
//! kind byte (1 insert, 2 remove), the tree's name (`u16` length, then its bytes), the key
//! (`u32` length, then its bytes) and, for an insert, the value (`u32` length, then its
//! bytes). A payload is never empty, so a length of zero is where a file's records end (the
//! zeros of a spare file written over). A record whose length runs past the file or whose
//! checksum does not hold was torn by a crash while it was written: it was never
//! acknowledged, and ends the file's records.

use super::super::generations::WriteGenerations;
use sled::IVec;

const INSERT: u8 = 1;

const REMOVE: u8 = 2;

/// The bytes before a record's payload: its length and its checksum.
pub(super) const HEADER: usize = 8;

/// The writes of one change, in the order they are made.
#[derive(Default)]
pub(in crate::store::sled) struct Changes {
    pub(super) writes: Vec<(sled::Tree, IVec, Option<IVec>)>,
}

impl Changes {
    pub(in crate::store::sled) fn insert(
        &mut self,
        tree: &sled::Tree,
        key: impl Into<IVec>,
        value: impl Into<IVec>,
    ) {
        self.writes
            .push((tree.clone(), key.into(), Some(value.into())));
    }

    pub(in crate::store::sled) fn remove(&mut self, tree: &sled::Tree, key: impl Into<IVec>) {
        self.writes.push((tree.clone(), key.into(), None));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Appends the change as record `number` to `buffer`.
    pub(super) fn encode_into(&self, number: u64, buffer: &mut Vec<u8>) {
        let start = buffer.len();
        buffer.extend_from_slice(&[0; HEADER]);
        buffer.extend_from_slice(&number.to_le_bytes());
        for (tree, key, value) in &self.writes {
            let name = tree.name();
            buffer.push(if value.is_some() { INSERT } else { REMOVE });
            // Tree names are this program's own, a few bytes long.
            buffer.extend_from_slice(&(name.len() as u16).to_le_bytes());
            buffer.extend_from_slice(&name);
            buffer.extend_from_slice(&(key.len() as u32).to_le_bytes());
            buffer.extend_from_slice(key);
            if let Some(value) = value {
                buffer.extend_from_slice(&(value.len() as u32).to_le_bytes());
                buffer.extend_from_slice(value);
            }
        }
        let payload_len = (buffer.len() - start - HEADER) as u32;
        let crc = crc32fast::hash(&buffer[start + HEADER..]);
        buffer[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
        buffer[start + 4..start + HEADER].copy_from_slice(&crc.to_le_bytes());
    }

    /// Makes the writes in sled, in order, each counted in `generations` once made (the
    /// writer's part, and [`Journal::make_now`]'s).
    pub(super) fn apply(&self, generations: &WriteGenerations) -> Result<(), sled::Error> {
        for (tree, key, value) in &self.writes {
            match value {
                Some(value) => tree.insert(key.clone(), value.clone())?,
                None => tree.remove(key)?,
            };
            generations.written(&tree.name(), key);
        }
        Ok(())
    }
}

/// Whether the records of a file end at `offset` as a file ends that no crash tore: the file
/// ends there, or its zeros begin there.
pub(super) fn ends_cleanly(bytes: &[u8], offset: usize) -> bool {
    bytes
        .get(offset..)
        .is_none_or(|rest| rest.iter().all(|byte| *byte == 0))
}

/// A record's number and writes.
pub(super) fn parse_record(payload: &[u8]) -> Option<(u64, Writes<'_>)> {
    let number = u64::from_le_bytes(payload.get(..8)?.try_into().ok()?);
    Some((number, Writes(&payload[8..])))
}

/// The payload of the whole, intact record at `offset`, if there is one (none: a torn record,
/// or the zeros after the last record of a prepared file).
pub(super) fn record_at(bytes: &[u8], offset: usize) -> Option<&[u8]> {
    let header = bytes.get(offset..offset.checked_add(HEADER)?)?;
    let len = u32::from_le_bytes(header[..4].try_into().ok()?) as usize;
    if len == 0 {
        return None;
    }
    let crc = u32::from_le_bytes(header[4..].try_into().ok()?);
    let start = offset + HEADER;
    let payload = bytes.get(start..start.checked_add(len)?)?;
    (crc32fast::hash(payload) == crc).then_some(payload)
}

/// The writes of one record's payload: (tree name, key, value or none for a remove); `None`
/// for one that cannot be read.
pub(super) struct Writes<'a>(&'a [u8]);

type Write<'a> = (&'a [u8], &'a [u8], Option<&'a [u8]>);

impl<'a> Iterator for Writes<'a> {
    type Item = Option<Write<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let write = self.read_write();
        if write.is_none() {
            self.0 = &[];
        }
        Some(write)
    }
}

impl<'a> Writes<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.0.split_at_checked(len)?;
        self.0 = rest;
        Some(taken)
    }

    fn read_write(&mut self) -> Option<Write<'a>> {
        let kind = self.take(1)?[0];
        let name_len = u16::from_le_bytes(self.take(2)?.try_into().ok()?) as usize;
        let name = self.take(name_len)?;
        let key_len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        let key = self.take(key_len)?;
        let value = match kind {
            INSERT => {
                let value_len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
                Some(self.take(value_len)?)
            }
            REMOVE => None,
            _ => return None,
        };
        Some((name, key, value))
    }
}
