//! The error body every route answers with: `{detail, code, errors[]}`.

use serde::{Deserialize, Serialize};

/// What a refused request answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Human-readable text; its wording may change.
    pub detail: String,
    /// Machine-readable, stable identifier.
    pub code: String,
    #[serde(default)]
    pub errors: Vec<FieldErrorBody>,
}

/// One problem with one input field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldErrorBody {
    pub detail: String,
    pub code: String,
    /// Dot path of the offending input; null for the request as a whole.
    pub attr: Option<String>,
}
