//! The real platform's enumerations that Ferry validates against: transaction reasons and
//! payment types per transaction type, tax unit types, payment instruction types and meter
//! point registration statuses. They
//! come from the real platform's OpenAPI document, extracted into `reference_enums.json` by
//! `tools/extract-reference-enums.py` (the one place they are written down).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

#[derive(Debug, Deserialize)]
pub struct ReferenceEnums {
    /// Per transaction type (`CHARGE`, `CREDIT`, `PAYMENT`, `REPAYMENT`).
    pub transaction_reasons: BTreeMap<String, Vec<String>>,
    /// Per transaction type (`PAYMENT`, `REPAYMENT`).
    pub payment_types: BTreeMap<String, Vec<String>>,
    pub tax_unit_types: Vec<String>,
    pub payment_instruction_types: Vec<String>,
    /// The registration statuses of a meter point (`PRE_REGISTRATION`, ..., `ON_SUPPLY`, ...).
    pub meter_point_statuses: Vec<String>,
}

static REFERENCE: LazyLock<ReferenceEnums> = LazyLock::new(|| {
    serde_json::from_str(include_str!("reference_enums.json"))
        .expect("reference_enums.json is Ferry's own file and is checked by its tests")
});

/// The enumerations.
pub fn enums() -> &'static ReferenceEnums {
    &REFERENCE
}

impl ReferenceEnums {
    /// The reasons a transaction of `kind` may give (empty for one that gives none).
    pub fn reasons(&self, kind: &str) -> &[String] {
        self.transaction_reasons
            .get(kind)
            .map_or(&[], Vec::as_slice)
    }

    /// The payment types a transaction of `kind` may give.
    pub fn payment_types(&self, kind: &str) -> &[String] {
        self.payment_types.get(kind).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extracted_lists_read_and_are_complete() {
        let enums = enums();
        let sizes: Vec<usize> = ["CHARGE", "CREDIT", "PAYMENT", "REPAYMENT"]
            .iter()
            .map(|kind| enums.reasons(kind).len())
            .collect();
        assert_eq!(sizes, [77, 239, 14, 24]);
        assert_eq!(enums.payment_types("PAYMENT").len(), 35);
        assert_eq!(enums.payment_types("REPAYMENT").len(), 6);
        assert!(enums.reasons("SUPPLY_CHARGE").is_empty());
        assert_eq!(enums.tax_unit_types, ["PROPORTION", "CURRENCY_PER_KWH"]);
        assert_eq!(enums.payment_instruction_types.len(), 6);
        assert_eq!(enums.meter_point_statuses.len(), 49);
        assert_eq!(enums.meter_point_statuses[0], "PRE_REGISTRATION");
    }
}
