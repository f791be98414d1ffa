//! The real platform's enumerations of its answers that Ferry uses: the registration
//! statuses of a meter point. They come from the real platform's OpenAPI document, extracted
//! into `reference_enums.json` by `tools/extract-reference-enums.py` (the one place they are
//! written down); the enumerations of the request bodies are part of their schemas
//! ([`super::request_document`]).

use serde::Deserialize;
use std::sync::LazyLock;

#[derive(Debug, Deserialize)]
pub struct ReferenceEnums {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extracted_lists_read_and_are_complete() {
        let enums = enums();
        assert_eq!(enums.meter_point_statuses.len(), 49);
        assert_eq!(enums.meter_point_statuses[0], "PRE_REGISTRATION");
    }
}
