//! Applying a supplier's rules (its plugin) to a request: a refusal becomes the request's
//! field errors, a broken or busy plugin fails only this request.

use super::error::DomainError;
use super::ports::{AccountTarget, Hook, RuleFailure, SupplierRules};
use super::validation::FieldErrors;
use serde_json::Value;

/// The rules' version of `input` (`None`: no rules for this hook).
pub async fn apply(
    rules: &dyn SupplierRules,
    supplier: &str,
    hook: Hook,
    target: Option<&AccountTarget>,
    input: Value,
    invalid: fn(FieldErrors) -> DomainError,
) -> Result<Option<Value>, DomainError> {
    match rules.apply(supplier, hook, target, input).await {
        Ok(mapped) => Ok(mapped),
        Err(RuleFailure::Rejected(errors)) => Err(invalid(errors)),
        Err(RuleFailure::Broken(detail)) => Err(DomainError::PluginFailed(detail)),
        Err(RuleFailure::Busy(detail)) => Err(DomainError::PluginBusy(detail)),
    }
}
