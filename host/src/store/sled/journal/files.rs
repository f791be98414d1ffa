//! The journal's directory (`journal/` in the data directory): files named by their number,
//! twenty digits and `.log` (`00000000000000000003.log`), written in turn, and at most one
//! `spare` being prepared or waiting to be taken.

use crate::domain::storage::StoreError;
use crate::store::health::unwritable;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The name of the spare file in the journal's directory, until the writer takes it and
/// gives it the next journal file's name.
pub(super) const SPARE: &str = "spare";

pub(super) fn file_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:020}.log"))
}

/// A new, empty journal file, records to be appended to it.
pub(super) fn create_file(dir: &Path, number: u64) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(file_path(dir, number))?;
    // The new file's name is durable before anything is acknowledged from it.
    sync_dir(dir)?;
    Ok(file)
}

/// Deletes the spare in `dir`, if there is one.
pub(super) fn remove_spare(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(dir.join(SPARE)) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

pub(super) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The journal files in `dir`, oldest first.
pub(super) fn journal_files(dir: &Path) -> Result<Vec<(u64, PathBuf)>, StoreError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        let number = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".log"))
            .and_then(|number| number.parse::<u64>().ok());
        if let Some(number) = number {
            files.push((number, path));
        }
    }
    files.sort();
    Ok(files)
}

/// Waits until the journal in `data_dir`, its files `rotate_bytes` long, has moved to its
/// first spare and checkpointed the file it began with (for tests that copy its files).
#[cfg(test)]
pub(in crate::store::sled) fn wait_until_over_zeros(data_dir: &Path, rotate_bytes: u64) {
    let dir = data_dir.join("journal");
    for _ in 0..1000 {
        if let Ok([(_, path)]) = journal_files(&dir).as_deref()
            && std::fs::metadata(path).is_ok_and(|file| file.len() >= rotate_bytes)
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the journal in {} never moved to a spare", dir.display());
}

/// An I/O error of the journal's files: writes stop ([`unwritable`]).
pub(super) fn io_error(error: std::io::Error) -> StoreError {
    StoreError::Unwritable(unwritable(&error))
}
