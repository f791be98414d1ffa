//! Applying a supplier's rules (its plugin) to a request: a refusal becomes the request's
//! field errors, a broken or busy plugin fails only this request.

use super::error::DomainError;
use super::ports::{AccountTarget, Hook, RuleFailure, SupplierRules};
use super::validation::FieldErrors;
use serde_json::Value;

/// The rules' version of the input `input` builds (`None`: no rules for this hook, and the
/// input is not built: for a supplier without a plugin, no copy of the request is made).
pub async fn apply<'a>(
    rules: &'a dyn SupplierRules,
    supplier: &'a str,
    hook: Hook,
    target: Option<&'a AccountTarget>,
    input: impl FnOnce() -> Value + Send + 'a,
    invalid: fn(FieldErrors) -> DomainError,
) -> Result<Option<Value>, DomainError> {
    match rules.apply(supplier, hook, target, Box::new(input)).await {
        Ok(mapped) => Ok(mapped),
        Err(RuleFailure::Rejected(errors)) => Err(invalid(errors)),
        Err(RuleFailure::Broken(detail)) => Err(DomainError::PluginFailed(detail)),
        Err(RuleFailure::Busy(detail)) => Err(DomainError::PluginBusy(detail)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ports::{NoRules, RuleInput};
    use futures_util::future::BoxFuture;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Rules for `MapNotes` only, which answer what they were given.
    struct NotesOnly;

    impl SupplierRules for NotesOnly {
        fn apply<'a>(
            &'a self,
            _supplier: &'a str,
            hook: Hook,
            _target: Option<&'a AccountTarget>,
            input: RuleInput<'a>,
        ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
            Box::pin(async move { Ok((hook == Hook::MapNotes).then(input)) })
        }
    }

    /// Applies `rules` for `hook`, counting how often the input was built.
    async fn applied(rules: &dyn SupplierRules, hook: Hook) -> (Option<Value>, usize) {
        let built = AtomicUsize::new(0);
        let mapped = apply(
            rules,
            "OLD_CO",
            hook,
            None,
            || {
                built.fetch_add(1, Ordering::SeqCst);
                json!([{"body": "a note"}])
            },
            DomainError::invalid,
        )
        .await
        .expect("applied");
        (mapped, built.into_inner())
    }

    #[tokio::test]
    async fn the_input_is_built_only_for_a_hook_the_supplier_has_rules_for() {
        assert_eq!(applied(&NoRules, Hook::MapNotes).await, (None, 0));
        assert_eq!(applied(&NotesOnly, Hook::MapTransactions).await, (None, 0));
        assert_eq!(
            applied(&NotesOnly, Hook::MapNotes).await,
            (Some(json!([{"body": "a note"}])), 1)
        );
    }
}
