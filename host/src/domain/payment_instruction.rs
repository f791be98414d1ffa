//! Payment instructions: a vendor's reference to a customer's payment method, confirmed with
//! the vendor before it is kept.

use super::error::DomainError;
use super::ports::{PaymentVendors, VendorError};
use super::request_document::{AccountReference, RequestDocument};
use super::validation::{FieldError, FieldErrors};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `payment-instruction/create/` body as accepted (the real `LegacyPaymentInstruction`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PostedPaymentInstruction {
    #[serde(flatten)]
    pub account: AccountReference,
    vendor: String,
    #[serde(default)]
    reference: Option<String>,
    #[serde(default)]
    instruction_reference: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    #[serde(flatten)]
    terms: InstructionTerms,
}

impl PostedPaymentInstruction {
    /// The instruction: the vendor's code in upper case, the reference under either name.
    pub fn instruction(self) -> PaymentInstructionInput {
        PaymentInstructionInput {
            vendor: self.vendor.to_uppercase(),
            reference: self
                .reference
                .or(self.instruction_reference)
                .unwrap_or_default(),
            kind: self.kind,
            terms: self.terms,
        }
    }
}

/// Reads and checks a `payment-instruction/create/` body, reporting every problem at once;
/// `knows_vendor` says whether an (upper-case) vendor code is one the operator configured.
pub fn read_payment_instruction(
    body: &Value,
    max_items: usize,
    knows_vendor: impl Fn(&str) -> bool,
) -> Result<PostedPaymentInstruction, FieldErrors> {
    RequestDocument::PaymentInstruction.read(body, max_items, |document, errors| {
        if let Some(Value::String(vendor)) = document.get("vendor") {
            let code = vendor.to_uppercase();
            if !code.trim().is_empty() && !knows_vendor(&code) {
                errors.push(FieldError::new(
                    "vendor".to_owned(),
                    "invalid_choice",
                    format!("\"{code}\" is not a configured payment vendor."),
                ));
            }
        }
        // Exactly one of `reference` and the deprecated `instruction_reference`.
        if document.contains_key("reference") == document.contains_key("instruction_reference") {
            errors.push(FieldError::new(
                "reference".to_owned(),
                "mutually_exclusive_field_required",
                "Give exactly one of reference and instruction_reference.",
            ));
        }
    })
}

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
    /// The customer's reference at the vendor (an account document's instruction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_reference: Option<String>,
    /// What the rest of the account document calls the instruction (its payment preferences).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction_identifier: Option<String>,
}

/// An instruction as stored on the account, with the vendor's details.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentInstruction {
    /// Vendor code, upper case.
    pub vendor: String,
    pub reference: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// What the vendor answered about the instruction (pending: nothing yet).
    pub details: Value,
    pub added_at: DateTime<Utc>,
    /// Recorded, not yet confirmed with the vendor: its account document says it is valid
    /// only from a day still to come (`valid_from`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    #[serde(default, flatten)]
    pub terms: InstructionTerms,
}

/// An instruction of an account document (the real `PaymentInstruction`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DocumentInstruction {
    pub vendor: String,
    pub reference: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub terms: InstructionTerms,
}

impl DocumentInstruction {
    /// Whether it is recorded pending rather than confirmed now: valid only from after `today`.
    pub fn is_pending(&self, today: NaiveDate) -> bool {
        self.terms.valid_from.is_some_and(|from| from > today)
    }
}

/// Asks `vendor` to confirm the instruction `reference`: its details, or why not in the
/// answers of `payment-instruction/create/` (a refusal not to retry as is, or a vendor that
/// could not be reached in time, to retry).
pub async fn confirm_with_vendor(
    vendors: &dyn PaymentVendors,
    vendor: &str,
    reference: &str,
) -> Result<Value, DomainError> {
    vendors
        .fetch_instruction(vendor, reference)
        .await
        .map_err(|error| match error {
            VendorError::NotFound => DomainError::VendorRejected {
                code: INSTRUCTION_NOT_FOUND,
                detail: format!("{vendor} has no payment instruction with reference {reference}."),
            },
            VendorError::Refused { status } => DomainError::VendorRejected {
                code: "payment_vendor_refused",
                detail: format!("{vendor} refused to confirm the instruction (HTTP {status})."),
            },
            VendorError::Unavailable(reason) => DomainError::VendorUnavailable(reason),
        })
}

/// The code of an instruction its vendor does not have.
pub const INSTRUCTION_NOT_FOUND: &str = "payment_instruction_not_found";

/// The key of an instruction on its account.
pub fn instruction_key(vendor: &str, reference: &str) -> String {
    format!("{vendor}\u{1}{reference}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::validation::{codes, pairs};
    use serde_json::json;

    #[test]
    fn reads_the_real_instruction_with_either_reference() {
        let body = json!({"import_supplier": "OLD_CO", "external_account_number": "A-1",
            "vendor": "sandbox", "instruction_reference": "MANDATE-1", "type": "DIRECT_DEBIT",
            "ledger_code": "ENERGY", "valid_from": "2024-01-01",
            "use_for_scheduled_payments": null});
        let posted = read_payment_instruction(&body, 10, |code| code == "SANDBOX").expect("valid");
        assert_eq!(posted.account.external_account_number(), "A-1");
        let instruction = posted.instruction();
        assert_eq!(
            (instruction.vendor.as_str(), instruction.reference.as_str()),
            ("SANDBOX", "MANDATE-1")
        );
        assert_eq!(instruction.kind, "DIRECT_DEBIT");
        assert_eq!(
            instruction.terms,
            InstructionTerms {
                ledger_code: Some("ENERGY".into()),
                valid_from: NaiveDate::from_ymd_opt(2024, 1, 1),
                use_for_scheduled_payments: None,
                ..InstructionTerms::default()
            }
        );
    }

    #[test]
    fn every_instruction_type_of_the_real_document_is_taken_and_no_other() {
        let schema = &crate::domain::request_document::request_schemas()["$defs"]["LegacyPaymentInstruction"]
            ["properties"]["type"]["enum"];
        let types = schema.as_array().expect("an enumeration");
        assert_eq!(types.len(), 6, "{types:?}");
        let body = |kind: &Value| {
            json!({"import_supplier": "OLD_CO", "external_account_number": "A-1",
                "vendor": "SANDBOX", "reference": "R-1", "type": kind, "valid_from": null})
        };
        for kind in types {
            let posted = read_payment_instruction(&body(kind), 10, |_| true).expect("valid");
            assert_eq!(Some(posted.instruction().kind.as_str()), kind.as_str());
        }
        assert_eq!(
            codes(
                &read_payment_instruction(&body(&json!("CHEQUE")), 10, |_| true).expect_err("no")
            ),
            pairs(&[("type", "invalid_choice")])
        );
    }

    #[test]
    fn reports_every_problem_at_once() {
        let body = json!({"import_supplier": "OLD_CO", "external_account_number": "A-1",
            "vendor": "ACME", "reference": "R", "instruction_reference": "R", "type": "CHEQUE",
            "valid_from": "01/01/2024"});
        let errors =
            read_payment_instruction(&body, 10, |code| code == "SANDBOX").expect_err("invalid");
        assert_eq!(
            codes(&errors),
            pairs(&[
                ("vendor", "invalid_choice"),
                ("reference", "mutually_exclusive_field_required"),
                ("type", "invalid_choice"),
                ("valid_from", "invalid"),
            ])
        );
        let neither = json!({"import_supplier": "OLD_CO", "external_account_number": "A-1",
            "vendor": "SANDBOX", "type": "CARD"});
        assert_eq!(
            codes(&read_payment_instruction(&neither, 10, |_| true).expect_err("no reference")),
            pairs(&[("reference", "mutually_exclusive_field_required")])
        );
    }
}
