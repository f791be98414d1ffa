//! Import suppliers: the group a migrated account belongs to, its status and settings.

use super::api_key::ApiKeyRecord;
use super::error::DomainError;
use super::import_process::ImportListing;
use super::validation::{
    FieldErrors, ObjectReader, Optional, Presence, Required, StrRule, UnknownFields,
};
use crate::domain::storage::{Store, StoreError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The status the operator team sets on a supplier (the admin API's vocabulary, defined once
/// in `ferry-admin-api`).
pub use ferry_admin_api::SupplierStatus;

pub const DEFAULT_EXPIRY_WINDOW_DAYS: i64 = 30;

/// An import supplier as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Supplier {
    /// Upper-case code, e.g. `OLD_ENERGY`.
    pub code: String,
    pub name: String,
    /// Root location of the supplier's documents inside the bucket.
    pub document_root: String,
    pub send_migration_emails: bool,
    pub status: SupplierStatus,
    /// Staged accounts older than this many days are cancelled.
    pub expiry_window_days: i64,
    /// Fields the supplier's requests carry that Ferry does not know are refused
    /// (`unknown_field`) instead of ignored and named, as the real platform does by default.
    #[serde(default)]
    pub strict_unknown_fields: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Supplier {
    /// What the supplier's requests do with fields Ferry does not know.
    pub fn unknown_fields(&self) -> UnknownFields {
        if self.strict_unknown_fields {
            UnknownFields::Refuse
        } else {
            UnknownFields::Ignore
        }
    }

    /// Staging, processing and every data-adding request need an ongoing migration.
    pub fn ensure_ongoing(&self) -> Result<(), DomainError> {
        match self.status {
            SupplierStatus::Ongoing => Ok(()),
            SupplierStatus::Paused | SupplierStatus::Complete => {
                Err(DomainError::MigrationNotOngoing)
            }
        }
    }

    /// Applies an operator's change.
    pub fn apply(&mut self, change: SupplierChange, now: DateTime<Utc>) {
        if let Some(name) = change.name {
            self.name = name;
        }
        if let Some(root) = change.document_root {
            self.document_root = root;
        }
        if let Some(flag) = change.send_migration_emails {
            self.send_migration_emails = flag;
        }
        if let Some(status) = change.status {
            self.status = status;
        }
        if let Some(days) = change.expiry_window_days {
            self.expiry_window_days = days;
        }
        if let Some(strict) = change.strict_unknown_fields {
            self.strict_unknown_fields = strict;
        }
        self.updated_at = now;
    }
}

/// The fields an operator may change on a supplier (`PATCH`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SupplierChange {
    pub name: Option<String>,
    pub document_root: Option<String>,
    pub send_migration_emails: Option<bool>,
    pub status: Option<SupplierStatus>,
    pub expiry_window_days: Option<i64>,
    pub strict_unknown_fields: Option<bool>,
}

const NAME: StrRule = StrRule::max(255);
const ROOT: StrRule = StrRule::blank_ok(512);

/// Reads a supplier-creation body.
pub fn read_new_supplier(body: &Value, now: DateTime<Utc>) -> Result<Supplier, FieldErrors> {
    let mut r = ObjectReader::root(body)?;
    let code = r.string("code", Required, StrRule::max(32));
    if let Some(code) = &code
        && !is_valid_code(code)
    {
        r.error(
            r.attr("code"),
            "invalid",
            "Use upper-case letters, digits and underscores, starting with a letter.",
        );
    }
    let fields = read_settings(&mut r, Required);
    r.finish(|| {
        Some(Supplier {
            code: code?,
            name: fields.name?,
            document_root: fields.document_root?,
            send_migration_emails: fields.send_migration_emails.unwrap_or(false),
            status: fields.status.unwrap_or(SupplierStatus::Ongoing),
            expiry_window_days: fields
                .expiry_window_days
                .unwrap_or(DEFAULT_EXPIRY_WINDOW_DAYS),
            strict_unknown_fields: fields.strict_unknown_fields.unwrap_or(false),
            created_at: now,
            updated_at: now,
        })
    })
}

/// Reads a supplier-change body.
pub fn read_supplier_change(body: &Value) -> Result<SupplierChange, FieldErrors> {
    let mut r = ObjectReader::root(body)?;
    let change = read_settings(&mut r, Optional);
    r.finish(|| Some(change))
}

/// The settings shared by creation and change; `names` says whether name and document root
/// must be present.
fn read_settings(r: &mut ObjectReader<'_>, names: Presence) -> SupplierChange {
    let name = r.string("name", names, NAME);
    let document_root = r.string("document_root", names, ROOT);
    if let Some(root) = &document_root {
        check_document_root(r, root);
    }
    SupplierChange {
        name,
        document_root,
        send_migration_emails: r.boolean("send_migration_emails", Optional),
        status: read_status(r),
        expiry_window_days: r.integer("expiry_window_days", Optional, 1, 3650),
        strict_unknown_fields: r.boolean("strict_unknown_fields", Optional),
    }
}

fn read_status(r: &mut ObjectReader<'_>) -> Option<SupplierStatus> {
    let text = r.string("status", Optional, StrRule::max(16))?;
    let status = SupplierStatus::parse(&text);
    if status.is_none() {
        r.error(
            r.attr("status"),
            "invalid_choice",
            format!("\"{text}\" is not a valid choice: use ONGOING, PAUSED or COMPLETE."),
        );
    }
    status
}

fn check_document_root(r: &mut ObjectReader<'_>, root: &str) {
    let escapes = root.contains("://") || root.split('/').any(|segment| segment == "..");
    if escapes {
        r.error(
            r.attr("document_root"),
            "invalid",
            "The document root is a path inside the bucket: no scheme and no `..`.",
        );
    }
}

/// The supplier a request's body names, read once for the whole request: its policy on
/// unknown fields is needed before the body can be read, and the supplier itself once the
/// request is checked. A request that adds data to an account reads the account's import
/// listing with it ([`NamedSupplier::read_with_listing`]).
#[derive(Debug, Default)]
pub struct NamedSupplier {
    supplier: Option<Supplier>,
    /// The listing of the external account number the body names, when it was read.
    listed: Option<Listed>,
}

#[derive(Debug)]
struct Listed {
    external: String,
    listing: Option<ImportListing>,
}

impl NamedSupplier {
    /// The supplier `body`'s `field` (`import_supplier`, `import_supplier_code`) names, when
    /// the key may see it and it exists.
    pub async fn read(
        store: &dyn Store,
        key: &ApiKeyRecord,
        body: &Value,
        field: &str,
    ) -> Result<Self, StoreError> {
        let Some(code) = visible_code(key, body, field) else {
            return Ok(Self::default());
        };
        Ok(Self {
            supplier: store.supplier(code).await?,
            listed: None,
        })
    }

    /// [`NamedSupplier::read`], and with the supplier the listing of the account the body
    /// names (`external_account_number`, else `account_number`), in one read of the store.
    pub async fn read_with_listing(
        store: &dyn Store,
        key: &ApiKeyRecord,
        body: &Value,
        field: &str,
    ) -> Result<Self, StoreError> {
        let Some(code) = visible_code(key, body, field) else {
            return Ok(Self::default());
        };
        let external = ["external_account_number", "account_number"]
            .into_iter()
            .find_map(|name| body.get(name))
            .and_then(Value::as_str);
        let Some(external) = external else {
            return Self::read(store, key, body, field).await;
        };
        Ok(match store.supplier_and_listing(code, external).await? {
            Some((supplier, listing)) => Self {
                supplier: Some(supplier),
                listed: Some(Listed {
                    external: external.to_owned(),
                    listing,
                }),
            },
            None => Self::default(),
        })
    }

    /// What the request does with fields Ferry does not know: the named supplier's policy;
    /// without one, ignore them (such a request is refused for its supplier anyway).
    pub fn unknown_fields(&self) -> UnknownFields {
        self.supplier
            .as_ref()
            .map_or(UnknownFields::Ignore, Supplier::unknown_fields)
    }

    /// The supplier `code`: the one read, when it is that one, else read now. The caller
    /// checks that its key may see `code`.
    pub async fn supplier(
        self,
        store: &dyn Store,
        code: &str,
    ) -> Result<Option<Supplier>, StoreError> {
        match self.supplier {
            Some(supplier) if supplier.code == code => Ok(Some(supplier)),
            _ => store.supplier(code).await,
        }
    }

    /// The supplier `code` and the listing of its process `external`: the ones read, when
    /// they are those, else read now. The caller checks that its key may see `code`.
    pub async fn supplier_and_listing(
        self,
        store: &dyn Store,
        code: &str,
        external: &str,
    ) -> Result<Option<(Supplier, Option<ImportListing>)>, StoreError> {
        match self {
            Self {
                supplier: Some(supplier),
                listed: Some(listed),
            } if supplier.code == code && listed.external == external => {
                Ok(Some((supplier, listed.listing)))
            }
            _ => store.supplier_and_listing(code, external).await,
        }
    }
}

/// The supplier code `body`'s `field` names, when the key may see it.
fn visible_code<'a>(key: &ApiKeyRecord, body: &'a Value, field: &str) -> Option<&'a str> {
    body.get(field)
        .and_then(Value::as_str)
        .filter(|code| key.can_see(code))
}

/// Supplier codes: `[A-Z][A-Z0-9_]*`.
pub fn is_valid_code(code: &str) -> bool {
    let mut chars = code.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn creation_defaults_and_errors() {
        let now = Utc::now();
        let supplier = read_new_supplier(
            &json!({"code": "OLD_CO", "name": "Old Co", "document_root": "old-co/"}),
            now,
        )
        .expect("valid");
        assert_eq!(supplier.status, SupplierStatus::Ongoing);
        assert_eq!(supplier.expiry_window_days, 30);
        let errors = read_new_supplier(
            &json!({"code": "old", "document_root": "../x", "status": "DONE"}),
            now,
        )
        .expect_err("invalid");
        let codes: Vec<_> = errors
            .0
            .iter()
            .map(|e| (e.attr.clone().unwrap_or_default(), e.code.clone()))
            .collect();
        assert!(codes.contains(&("code".into(), "invalid".into())));
        assert!(codes.contains(&("name".into(), "required".into())));
        assert!(codes.contains(&("document_root".into(), "invalid".into())));
        assert!(codes.contains(&("status".into(), "invalid_choice".into())));
    }
}
