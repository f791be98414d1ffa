//! What the domain needs from the outside world, as traits: the document bucket and the
//! payment vendors. `documents` and `vendors` implement them; tests may use real local
//! servers behind the same traits.

use futures_util::future::BoxFuture;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
#[error("the document store failed: {0}")]
pub struct DocumentStoreError(pub String);

/// The bucket of supplier documents.
pub trait Documents: Send + Sync + 'static {
    /// Whether an object exists at `key` (a path inside the bucket).
    fn exists<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DocumentStoreError>>;
}

/// Why a payment vendor did not confirm an instruction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VendorError {
    /// The vendor has no such instruction (its 404).
    #[error("the vendor has no instruction with this reference")]
    NotFound,
    /// The vendor refused the request (another 4xx): do not retry as it is.
    #[error("the vendor refused the request ({status})")]
    Refused { status: u16 },
    /// The vendor could not be reached in time (5xx, time-outs, bad answers): retry as it is.
    #[error("the vendor could not be reached: {0}")]
    Unavailable(String),
}

/// The configured payment vendors.
pub trait PaymentVendors: Send + Sync + 'static {
    /// Whether `vendor` (a code such as `STRIPE`) is configured.
    fn knows(&self, vendor: &str) -> bool;
    /// The vendor's details of the instruction `reference`, as a JSON object.
    fn fetch_instruction<'a>(
        &'a self,
        vendor: &'a str,
        reference: &'a str,
    ) -> BoxFuture<'a, Result<Value, VendorError>>;
}
