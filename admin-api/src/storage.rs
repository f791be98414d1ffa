//! `/admin/v1/storage`: whether the store takes writes, and why not (the free space of the
//! data directory against its watermark, or a failed write).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Whether the store takes writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StorageState {
    /// Writes are taken.
    Writable,
    /// The data directory's free space is below the watermark: writes are refused, reads
    /// go on, and writes resume by themselves once space is back above the mark.
    ReadOnly,
    /// A write failed for storage reasons (the disk filled anyway, an I/O error): writes are
    /// refused and the server stops once the requests in flight are done, for its
    /// supervisor to start it again.
    Failed,
}

/// The store's state, as `/readyz` and the console show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StorageStatus {
    pub state: StorageState,
    /// Free space of the data directory's filesystem, in bytes (null: not known, as with a
    /// server database).
    #[schema(required = true)]
    pub free_bytes: Option<u64>,
    /// Below this many free bytes writes are refused (0: no watermark).
    pub watermark_bytes: u64,
    /// Why writes are refused, and what an operator can do; null while they are taken.
    #[schema(required = true)]
    pub reason: Option<String>,
}
