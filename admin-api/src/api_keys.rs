//! `/admin/v1/api-keys`: an organisation's API keys, scoped to suppliers.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /admin/v1/api-keys`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewApiKey {
    #[schema(min_length = 1, max_length = 255)]
    pub organisation: String,
    /// Codes of existing suppliers the key may reach.
    #[schema(min_items = 1, max_items = 1000)]
    pub suppliers: Vec<String>,
}

/// A key as listed or revoked (never the key itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ApiKey {
    pub id: String,
    pub organisation: String,
    pub suppliers: Vec<String>,
    pub created_at: String,
    /// Null while the key is active.
    #[schema(required = true)]
    pub revoked_at: Option<String>,
}

/// A new key; `key` is shown only in this answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct IssuedApiKey {
    pub id: String,
    pub key: String,
    pub organisation: String,
    pub suppliers: Vec<String>,
    pub created_at: String,
}
