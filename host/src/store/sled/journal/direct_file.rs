//! Writing the journal's rounds over a spare's zeros straight to the disk: the file opened with
//! `O_DIRECT | O_DSYNC` (on Linux), each round one `pwrite` from block-aligned memory that
//! returns once the disk has it, instead of a `pwrite` into the page cache and an `fdatasync`
//! that writes the dirty pages back and waits for them. Over zeros the file's size and blocks never change,
//! so the write needs nothing but the data and the disk's cache flush.
//!
//! Direct I/O moves whole blocks from block-aligned memory to block-aligned offsets. A round
//! that ends part-way through a block is written with the rest of the block as zeros, and the
//! block's written part kept in memory: the next round writes the block again, that part
//! unchanged, followed by its own records. A crash while the block is written again leaves
//! each of its sectors old or new, and the part already acknowledged is the same in both: only
//! the new records can be torn, which their checksum catches on replay.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::Path;

/// The alignment of direct writes: a page, which is a multiple of every disk's logical block.
const BLOCK: usize = 4096;

/// A journal file over zeros, written with direct I/O.
pub(super) struct DirectFile {
    file: File,
    /// Memory whose part from `start` on is block-aligned.
    buffer: Vec<u8>,
    start: usize,
    /// How many bytes of the file's last block are written (kept at `buffer[start..]`).
    kept: usize,
}

impl DirectFile {
    /// Opens `path`, a file of zeros not yet written over, for direct writes (an error where
    /// its filesystem does not do direct I/O).
    pub(super) fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(direct_flags()?)
            .open(path)?;
        let mut direct = Self {
            file,
            buffer: Vec::new(),
            start: 0,
            kept: 0,
        };
        direct.reserve(64 * 1024);
        Ok(direct)
    }

    /// Writes `records` at `offset`, the end of what is written, and returns once they are on
    /// the disk.
    pub(super) fn write_at(&mut self, records: &[u8], offset: u64) -> std::io::Result<()> {
        let Some(block_start) = offset
            .checked_sub(self.kept as u64)
            .filter(|start| start % BLOCK as u64 == 0)
        else {
            return Err(std::io::Error::other(format!(
                "a direct write at {offset} does not follow the last ({} bytes into its block)",
                self.kept
            )));
        };
        let end = self.kept + records.len();
        let rounded = end.div_ceil(BLOCK) * BLOCK;
        self.reserve(rounded);
        let blocks = &mut self.buffer[self.start..self.start + rounded];
        blocks[self.kept..end].copy_from_slice(records);
        blocks[end..].fill(0);
        self.file.write_all_at(blocks, block_start)?;
        let kept = end % BLOCK;
        if kept > 0 {
            let last = rounded - BLOCK;
            blocks.copy_within(last..last + kept, 0);
        }
        self.kept = kept;
        Ok(())
    }

    /// Makes room for `len` aligned bytes, keeping the last block's written part.
    fn reserve(&mut self, len: usize) {
        if self.buffer.len() - self.start >= len {
            return;
        }
        let mut buffer = vec![0; len.next_power_of_two() + BLOCK];
        let start = buffer.as_ptr().align_offset(BLOCK);
        buffer[start..start + self.kept]
            .copy_from_slice(&self.buffer[self.start..self.start + self.kept]);
        self.buffer = buffer;
        self.start = start;
    }
}

/// `O_DIRECT | O_DSYNC`: `O_DSYNC`, not `O_SYNC`, so that a write waits for its data and not
/// for the file's times too.
#[cfg(target_os = "linux")]
fn direct_flags() -> std::io::Result<i32> {
    Ok(libc::O_DIRECT | libc::O_DSYNC)
}

/// Elsewhere the journal writes through the page cache.
#[cfg(not(target_os = "linux"))]
fn direct_flags() -> std::io::Result<i32> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On Linux only (elsewhere the journal writes through the page cache). The temporary
    /// directory must be on a filesystem with direct I/O (ext4, xfs, btrfs; tmpfs since Linux
    /// 6.6): the test fails rather than pass without writing anything.
    #[cfg(target_os = "linux")]
    #[test]
    fn rounds_that_end_inside_a_block_read_back_whole_and_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("zeros");
        std::fs::write(&path, vec![0; 4 * BLOCK + 70_000]).expect("zeros");
        let mut direct = DirectFile::open(&path).unwrap_or_else(|error| {
            panic!(
                "direct I/O in {}: {error} (set TMPDIR to a directory on a filesystem that has it)",
                dir.path().display()
            )
        });
        let mut expected = Vec::new();
        // Ends inside the first block, within it, across two, exactly on one, then larger
        // than the buffer.
        for (round, len) in [100, 1000, 5000, BLOCK * 2 - 6100, 70_000]
            .into_iter()
            .enumerate()
        {
            let records = vec![round as u8 + 1; len];
            direct
                .write_at(&records, expected.len() as u64)
                .expect("written");
            expected.extend(records);
        }
        let written = std::fs::read(&path).expect("read");
        assert_eq!(&written[..expected.len()], expected.as_slice());
        assert!(written[expected.len()..].iter().all(|byte| *byte == 0));
        assert_eq!(
            written.len(),
            4 * BLOCK + 70_000,
            "no longer than the zeros"
        );
        assert!(
            direct.write_at(b"x", 1).is_err(),
            "a write that does not follow the last"
        );
    }
}
