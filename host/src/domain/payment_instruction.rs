//! Payment instructions: a vendor's reference to a customer's payment method, confirmed with
//! the vendor before it is kept.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const INSTRUCTION_TYPES: [&str; 2] = ["CARD", "DIRECT_DEBIT"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentInstructionInput {
    pub vendor: String,
    pub reference: String,
    pub kind: String,
}

/// An instruction as stored on the account, with the vendor's details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PaymentInstruction {
    /// Vendor code, upper case.
    pub vendor: String,
    pub reference: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// What the vendor answered about the instruction.
    pub details: Value,
    pub added_at: DateTime<Utc>,
}

/// The key of an instruction on its account.
pub fn instruction_key(vendor: &str, reference: &str) -> String {
    format!("{vendor}\u{1}{reference}")
}
