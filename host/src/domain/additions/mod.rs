//! Adding data to imported accounts: notes, transactions, historical statements and payment
//! instructions, and reading it all back for operators.
//!
//! Every request names its account by supplier code and external account number; only
//! imported accounts visible to the caller's API key qualify (anything else is
//! `account_not_found`), and the supplier's migration must be ongoing. Each request's records
//! are written in one unit of work on the account, committed (durably) before the call
//! returns.
//!
//! One module per use case (`add_notes`, `add_transactions`, `add_statements`,
//! `add_payment_instruction`) and the operators' read model (`account_view`); this one holds
//! what they share: reading a request ([`Additions::read_request`]: the supplier's policy on
//! unknown fields, the account it adds to, the supplier's rules) and the documents check.

use super::account::AccountLimits;
use super::api_key::ApiKeyRecord;
use super::error::DomainError;
use super::import_process::{ImportState, PlatformAccount};
use super::ports::{AccountTarget, Documents, Hook, NoRules, PaymentVendors, SupplierRules};
use super::supplier::NamedSupplier;
use super::supplier::Supplier;
use super::validation::{FieldErrors, reading};
use crate::domain::storage::Store;
use serde_json::{Map, Value};
use std::sync::Arc;

mod account_view;
mod add_notes;
mod add_payment_instruction;
mod add_statements;
mod add_transactions;

pub use account_view::AccountView;
pub use add_notes::NoteResult;
pub use add_statements::{AddedStatements, STATEMENT_EXISTS};
pub use add_transactions::{
    TRANSACTION_IMPORT_SUCCESS, TransactionOptions, TransactionResult, TransactionStatus,
};

/// A data-adding request as read ([`Additions::read_request`]): the account it adds to, what
/// it posted (as the supplier's rules mapped it), and the unknown fields it ignored.
struct Request<T> {
    target: Target,
    posted: T,
    ignored: Vec<String>,
    /// The body as the supplier's rules mapped it, when they did: what `posted` was read
    /// from (else the request's own body).
    mapped: Option<Value>,
    /// What the request itself posted, before the rules mapped it, when they did.
    sent: Option<T>,
}

/// The account a request adds to.
pub(crate) struct Target {
    pub(crate) supplier: Supplier,
    pub(crate) account: TargetAccount,
}

/// The platform account a request adds to, as its import's listing names it: most additions
/// need no more, and reading and parsing the account's document is work a note need not do.
/// Those that need the document read it ([`Additions::platform_account`]).
pub(crate) struct TargetAccount {
    pub(crate) number: String,
    pub(crate) external_account_number: String,
}

#[derive(Clone)]
pub struct Additions {
    pub(crate) store: Arc<dyn Store>,
    documents: Arc<dyn Documents>,
    vendors: Arc<dyn PaymentVendors>,
    rules: Arc<dyn SupplierRules>,
    limits: AccountLimits,
}

impl std::fmt::Debug for Additions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Additions")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Additions {
    pub fn new(
        store: Arc<dyn Store>,
        documents: Arc<dyn Documents>,
        vendors: Arc<dyn PaymentVendors>,
        limits: AccountLimits,
    ) -> Self {
        Self {
            store,
            documents,
            vendors,
            rules: Arc::new(NoRules),
            limits,
        }
    }

    /// The same, with the suppliers' rules (their plugins) applied to every request.
    pub fn with_rules(mut self, rules: Arc<dyn SupplierRules>) -> Self {
        self.rules = rules;
        self
    }

    /// The imported account `(supplier, external)` if the key may see it and its supplier's
    /// migration is ongoing (`named`: the supplier the request named, if read already).
    pub(crate) async fn target(
        &self,
        key: &ApiKeyRecord,
        named: NamedSupplier,
        supplier: &str,
        external: &str,
    ) -> Result<Target, DomainError> {
        let target = self
            .imported_account(key, named, supplier, external)
            .await?;
        target.supplier.ensure_ongoing()?;
        Ok(target)
    }

    /// The imported account `(supplier, external)` if the key may see it (reads work whatever
    /// the supplier's status).
    pub(crate) async fn imported_account(
        &self,
        key: &ApiKeyRecord,
        named: NamedSupplier,
        supplier: &str,
        external: &str,
    ) -> Result<Target, DomainError> {
        if !key.can_see(supplier) {
            return Err(DomainError::AccountNotFound);
        }
        let (supplier, process) = named
            .supplier_and_listing(self.store.as_ref(), supplier, external)
            .await?
            .ok_or(DomainError::AccountNotFound)?;
        let process = process.ok_or(DomainError::AccountNotFound)?;
        let number = process
            .platform_account_number
            .filter(|_| process.state == ImportState::Processed)
            .ok_or(DomainError::AccountNotFound)?;
        let account = TargetAccount {
            number,
            external_account_number: process.external_account_number,
        };
        Ok(Target { supplier, account })
    }

    /// The platform account `number`, document and all.
    pub(crate) async fn platform_account(
        &self,
        number: &str,
    ) -> Result<PlatformAccount, DomainError> {
        self.store
            .account(number)
            .await?
            .ok_or(DomainError::AccountNotFound)
    }

    /// Checks that `path` exists under the supplier's root; records an error at `attr` if not.
    async fn check_document(
        &self,
        supplier: &Supplier,
        path: &str,
        attr: String,
        errors: &mut FieldErrors,
    ) -> Result<(), DomainError> {
        super::documents::check_document(
            self.documents.as_ref(),
            &supplier.document_root,
            path,
            attr,
            errors,
        )
        .await
    }

    /// Reads a data-adding request: `parse` reads `body` (its unknown fields ignored and named,
    /// or refused, as the supplier wants); the account it names must be one the key may add
    /// to; the supplier's `hook` rules, if it has any, map the `field` array (or, without a
    /// field, the payment instruction's own fields), and `parse` reads the mapped body again.
    async fn read_request<T>(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
        hook: Hook,
        field: Option<&str>,
        parse: impl Fn(&Value) -> Result<(String, String, T), DomainError>,
    ) -> Result<Request<T>, DomainError> {
        let named =
            NamedSupplier::read_with_listing(self.store.as_ref(), key, body, "import_supplier")
                .await?;
        let policy = named.unknown_fields();
        let (parsed, ignored) = reading(policy, || parse(body));
        let (supplier, external, mut posted) = parsed?;
        let target = self.target(key, named, &supplier, &external).await?;
        let mapped = self.apply_rules(&target, hook, body, field).await?;
        let mut sent = None;
        if let Some(mapped) = &mapped {
            sent = Some(std::mem::replace(
                &mut posted,
                reading(policy, || parse(mapped)).0?.2,
            ));
        }
        Ok(Request {
            target,
            posted,
            ignored,
            mapped,
            sent,
        })
    }

    /// The supplier's `hook` rules applied to the `field` array of `body` (or, without a
    /// field, to the payment instruction's own fields): the body to read again, or `None`
    /// when the supplier has no such rules or they kept the array as it was.
    async fn apply_rules(
        &self,
        target: &Target,
        hook: Hook,
        body: &Value,
        field: Option<&str>,
    ) -> Result<Option<Value>, DomainError> {
        let input = || match field {
            Some(field) => body.get(field).cloned().unwrap_or(Value::Null),
            None => {
                // A plugin's payment instruction has `reference` only: it sees the deprecated
                // `instruction_reference` under that name.
                let mut input = body.clone();
                if let Some(object) = input.as_object_mut()
                    && !object.contains_key("reference")
                    && let Some(reference) = object.remove("instruction_reference")
                {
                    object.insert("reference".to_owned(), reference);
                }
                input
            }
        };
        let account = AccountTarget {
            import_supplier: target.supplier.code.clone(),
            external_account_number: target.account.external_account_number.clone(),
            platform_account_number: target.account.number.clone(),
        };
        let mapped = super::rules::apply(
            self.rules.as_ref(),
            &target.supplier.code,
            hook,
            Some(&account),
            input,
            DomainError::invalid,
        )
        .await?;
        let Some(mapped) = mapped else {
            return Ok(None);
        };
        Ok(match field {
            // Rules that kept the array as it was (nothing in it to map): the body already
            // read is what they answered, neither copied nor read again.
            Some(field) if body.get(field) == Some(&mapped) => None,
            Some(field) => Some(with_field(body, field, mapped)),
            None => {
                let mut body = body.clone();
                for key in ["vendor", "reference", "type"] {
                    body[key] = mapped.get(key).cloned().unwrap_or(Value::Null);
                }
                Some(body)
            }
        })
    }
}

/// `body` with `value` at `field` in place of what was there, where it was: the other fields
/// copied, not the value replaced (a batch's array, which the rules' answer replaces).
fn with_field(body: &Value, field: &str, value: Value) -> Value {
    let mut object: Map<String, Value> = body
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, kept)| {
            let kept = if name == field {
                Value::Null
            } else {
                kept.clone()
            };
            (name.clone(), kept)
        })
        .collect();
    object.insert(field.to_owned(), value);
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_rules_array_takes_the_place_of_the_body_s_own() {
        let body = json!({"import_supplier": "OLD_CO", "transactions": [{"product_code": "OLDVAR"}], "external_account_number": "A-1"});
        let mapped = with_field(&body, "transactions", json!([{"product_code": "VAR-22"}]));
        assert_eq!(
            serde_json::to_string(&mapped).expect("serialised"),
            r#"{"import_supplier":"OLD_CO","transactions":[{"product_code":"VAR-22"}],"external_account_number":"A-1"}"#
        );
        let without = json!({"import_supplier": "OLD_CO"});
        assert_eq!(
            with_field(&without, "notes", json!([])),
            json!({"import_supplier": "OLD_CO", "notes": []})
        );
    }
}
