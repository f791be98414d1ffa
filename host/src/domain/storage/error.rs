//! Why the store could not do what was asked, whatever the backend: [`StoreError`], and
//! [`Unwritable`] for the reasons writes are refused, worded for the operator who can end
//! them.

/// Why the store could not do what was asked, whatever the backend.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backend failed (an I/O error, a full disk, a lost connection): nothing of the
    /// change was made.
    #[error("storage failure: {0}")]
    Backend(#[source] BackendError),
    #[error("stored record {key} could not be read: {source}")]
    Corrupt {
        key: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("outbox record {seq} could not be read: {source}")]
    Outbox {
        seq: u64,
        #[source]
        source: BackendError,
    },
    #[error("could not find a free platform account number")]
    NumbersExhausted,
    /// A record with this key is there already (an insert that must be the first).
    #[error("{what} {key} is there already")]
    Duplicate { what: &'static str, key: String },
    /// A concurrent change met this one and nothing of it was kept: run it again
    /// ([`retrying`]). A backend whose changes cannot meet (sled's, under its per-account
    /// locks) retries its own internal conflicts and never answers this.
    #[error("the change met a concurrent one")]
    Conflict,
    /// Writes are refused until an operator acts: nothing of the change was made, reads go on.
    #[error("{0}")]
    Unwritable(Unwritable),
    /// A server database could not be reached (stopped, restarting, the network to it down):
    /// neither reads nor writes are answered until it is back, and then they are, without an
    /// operator or a restart. Nothing acknowledged was lost.
    #[error(
        "The database could not be reached ({0}): retry the request in a few seconds. Nothing \
         acknowledged was lost."
    )]
    Unavailable(String),
}

impl StoreError {
    /// Whether the storage as a whole is away for now (HTTP 503 `storage_unavailable`), not
    /// failing this request: a database that cannot be reached, or a store that refuses
    /// writes for a reason other than want of space.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Unavailable(_) => true,
            Self::Unwritable(reason) => !reason.is_want_of_space(),
            _ => false,
        }
    }

    /// Whether the storage as a whole cannot take work for now, not this work: it is away
    /// ([`Self::is_unavailable`]), or it refuses writes until space is back or an operator
    /// acts ([`Self::Unwritable`]). The same work, unchanged, may be taken later.
    pub fn is_for_now(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Unwritable(_))
    }
}

/// Why the store refuses writes, worded for the operator who can end it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unwritable {
    /// The data directory's free space is below the watermark: refused before the disk is
    /// full, and taken again once space is back above the mark.
    #[error(
        "The server's data directory has {} free, below its watermark of {}: writes are refused \
         until an operator frees space there or grows the volume, and are taken again by \
         themselves once it is back above the mark. Reads still work.",
        mebibytes(*free_bytes),
        mebibytes(*watermark_bytes)
    )]
    BelowWatermark {
        free_bytes: u64,
        watermark_bytes: u64,
    },
    /// A write found the disk full.
    #[error(
        "The server's disk is full: writes are refused until an operator frees space on the \
         data directory's volume; the server then restarts to take writes again. Nothing \
         acknowledged was lost."
    )]
    DiskFull,
    /// A write failed for another storage reason (an I/O error, a lost database).
    #[error(
        "The server's storage failed to write ({0}): writes are refused until an operator \
         repairs it; the server then restarts to take writes again. Nothing acknowledged \
         was lost."
    )]
    Failed(String),
}

impl Unwritable {
    /// Whether want of space is the reason (HTTP 507), not a failure of the storage (503).
    pub fn is_want_of_space(&self) -> bool {
        matches!(self, Self::BelowWatermark { .. } | Self::DiskFull)
    }
}

/// `bytes` in MiB with one decimal.
fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A backend's own error, kept as the source of [`StoreError::Backend`].
pub type BackendError = Box<dyn std::error::Error + Send + Sync>;
