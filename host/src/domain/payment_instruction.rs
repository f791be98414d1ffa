//! Payment instructions: a vendor's reference to a customer's payment method, confirmed with
//! the vendor before it is kept.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An instruction as posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentInstructionInput {
    pub vendor: String,
    /// `reference`, or the deprecated `instruction_reference` (exactly one of them).
    pub reference: String,
    pub kind: String,
    pub terms: InstructionTerms,
}

/// What the real platform's instruction carries beyond the vendor's reference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionTerms {
    /// The ledger the instruction pays (the real platform's ledger types; Ferry keeps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<NaiveDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_for_scheduled_payments: Option<bool>,
}

/// An instruction as stored on the account, with the vendor's details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentInstruction {
    /// Vendor code, upper case.
    pub vendor: String,
    pub reference: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// What the vendor answered about the instruction.
    pub details: Value,
    pub added_at: DateTime<Utc>,
    #[serde(default, flatten)]
    pub terms: InstructionTerms,
}

/// The key of an instruction on its account.
pub fn instruction_key(vendor: &str, reference: &str) -> String {
    format!("{vendor}\u{1}{reference}")
}
