//! Organisation API keys: what they may reach (a set of supplier codes) and how they are kept.
//!
//! The key itself is shown once, when created; only its SHA-256 digest is stored.

use super::validation::{FieldErrors, Items, ObjectReader, Required, StrRule};
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// An API key as stored (without the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyRecord {
    pub id: String,
    pub organisation: String,
    pub suppliers: Vec<String>,
    /// Hex SHA-256 of the key.
    pub key_digest: String,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl ApiKeyRecord {
    pub fn is_active(&self) -> bool {
        self.revoked_at.is_none()
    }
    /// Whether this key may see the supplier `code`.
    pub fn can_see(&self, code: &str) -> bool {
        self.suppliers.iter().any(|allowed| allowed == code)
    }
}

/// A request to create a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiKey {
    pub organisation: String,
    pub suppliers: Vec<String>,
}

pub fn read_new_api_key(body: &Value) -> Result<NewApiKey, FieldErrors> {
    let mut r = ObjectReader::root(body)?;
    let organisation = r.string("organisation", Required, StrRule::max(255));
    let mut suppliers = Vec::new();
    if let Some(items) = r.array("suppliers", Required, Items { min: 1, max: 1000 }) {
        for (index, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(code) if !code.is_empty() => {
                    if !suppliers.iter().any(|known| known == code) {
                        suppliers.push(code.to_owned());
                    }
                }
                _ => r.error(
                    r.attr(&format!("suppliers.{index}")),
                    "invalid",
                    "Expected a supplier code.",
                ),
            }
        }
    }
    r.finish(|| {
        Some(NewApiKey {
            organisation: organisation?,
            suppliers,
        })
    })
}

/// A fresh random key: `ferry_` and 64 hex digits (256 bits).
pub fn generate_key() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("ferry_{}", hex::encode(bytes))
}

/// The digest under which a key is stored and looked up.
pub fn digest(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}
