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

/// No bucket: every document is missing (imports without a document store configured).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoDocuments;

impl Documents for NoDocuments {
    fn exists<'a>(&'a self, _key: &'a str) -> BoxFuture<'a, Result<bool, DocumentStoreError>> {
        Box::pin(async { Ok(false) })
    }
}

/// No payment vendor is configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoVendors;

impl PaymentVendors for NoVendors {
    fn knows(&self, _vendor: &str) -> bool {
        false
    }

    fn fetch_instruction<'a>(
        &'a self,
        _vendor: &'a str,
        _reference: &'a str,
    ) -> BoxFuture<'a, Result<Value, VendorError>> {
        Box::pin(async { Err(VendorError::NotFound) })
    }
}

/// The hooks a supplier's rules may implement.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Hook {
    ValidateAccount,
    MapNotes,
    MapTransactions,
    MapStatements,
    MapPaymentInstruction,
}

impl Hook {
    pub const ALL: [Hook; 5] = [
        Self::ValidateAccount,
        Self::MapNotes,
        Self::MapTransactions,
        Self::MapStatements,
        Self::MapPaymentInstruction,
    ];

    /// The hook's function name in the WIT package.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValidateAccount => "validate-account",
            Self::MapNotes => "map-notes",
            Self::MapTransactions => "map-transactions",
            Self::MapStatements => "map-statements",
            Self::MapPaymentInstruction => "map-payment-instruction",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|hook| hook.as_str() == text)
    }
}

/// The imported account a data-adding hook is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountTarget {
    pub import_supplier: String,
    pub external_account_number: String,
    pub platform_account_number: String,
}

/// Why a supplier's rules did not pass a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleFailure {
    /// The rules refused the request with these field errors.
    Rejected(crate::domain::validation::FieldErrors),
    /// The rules broke (trap, deadline, memory cap); the text names the plugin and version.
    Broken(String),
    /// The rules did not run: the supplier's rules were busy with other requests for longer
    /// than a request may wait. Retrying later may succeed.
    Busy(String),
}

/// The input of a supplier's rules, built by the rules only if they exist: for a supplier
/// without a plugin, no copy of the account or of a request's array is made.
pub type RuleInput<'a> = Box<dyn FnOnce() -> Value + Send + 'a>;

/// A supplier's validation and mapping rules (its plugin, if any).
///
/// Input and output are in the request's JSON shape: the account, the array of notes,
/// transactions or statements, or the payment instruction. `Ok(None)`: the supplier has no
/// rules for this hook, keep the input (which they leave unbuilt).
pub trait SupplierRules: Send + Sync + 'static {
    fn apply<'a>(
        &'a self,
        supplier: &'a str,
        hook: Hook,
        target: Option<&'a AccountTarget>,
        input: RuleInput<'a>,
    ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>>;

    /// What identifies the rules that answer `hook` for `supplier` now: the same identity
    /// gives the same answer to the same input (a plugin gets no clock, randomness or I/O from
    /// the host), so an answer given under it still holds. `None`: rules that cannot say, whose
    /// earlier answers prove nothing.
    fn identity(&self, _supplier: &str, _hook: Hook) -> Option<String> {
        None
    }
}

/// The identity of rules that keep every input as it is ([`SupplierRules::identity`]).
pub const NO_RULES_IDENTITY: &str = "none";

/// Rules for nobody: every hook keeps its input.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRules;

impl SupplierRules for NoRules {
    fn apply<'a>(
        &'a self,
        _supplier: &'a str,
        _hook: Hook,
        _target: Option<&'a AccountTarget>,
        _input: RuleInput<'a>,
    ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
        Box::pin(async { Ok(None) })
    }

    fn identity(&self, _supplier: &str, _hook: Hook) -> Option<String> {
        Some(NO_RULES_IDENTITY.to_owned())
    }
}
