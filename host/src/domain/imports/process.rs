//! Migrating one staged account on the supplier's request
//! (`account-import-process/process/`): the platform account made from the account's
//! document, or, with `dry_run`, everything checked and nothing kept.

use super::Imports;
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::import_process::{ImportProcess, PlatformAccount};
use crate::domain::validation::{
    FieldError, FieldErrors, ObjectReader, Optional, Reported, Required, StrRule, reading,
};
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

/// A request to migrate one staged account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRequest {
    pub supplier_code: String,
    pub external_account_number: String,
    pub dry_run: bool,
    /// The operations team to allocate the account to; it must exist.
    pub operations_team_name: Option<String>,
}

impl Imports {
    /// A place among the accounts processed at once, held while it lives.
    fn process_permit(&self) -> Result<Option<OwnedSemaphorePermit>, DomainError> {
        let Some((processing, limit)) = &self.processing else {
            return Ok(None);
        };
        processing
            .clone()
            .try_acquire_owned()
            .map(Some)
            .map_err(|_| DomainError::ProcessConcurrencyLimit(*limit))
    }

    /// Migrates a staged account: the platform account it created. A dry run keeps nothing
    /// and, as on the real platform, answers a refusal either way: the error the real run
    /// would give, or [`DomainError::DryRunWouldSucceed`].
    pub async fn process(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<PlatformAccount>, DomainError> {
        let named = self
            .named_supplier(key, body, "import_supplier_code")
            .await?;
        let (request, ignored) = reading(named.unknown_fields(), || read_process_request(body));
        let request = request?;
        let supplier = self
            .visible_named_supplier(key, named, &request.supplier_code)
            .await?;
        supplier.ensure_ongoing()?;
        if let Some(team) = &request.operations_team_name
            && self.store.team(team).await?.is_none()
        {
            return Err(DomainError::invalid(FieldErrors::single(FieldError::new(
                "operations_team_name".to_owned(),
                "operations_team_name_does_not_exist",
                format!("No operations team is named {team:?}."),
            ))));
        }
        let _permit = self.process_permit()?;
        let current = self
            .store
            .import_process(&supplier.code, &request.external_account_number)
            .await?
            .ok_or(DomainError::ImportProcessNotFound)?;
        if request.dry_run {
            return Err(self.dry_run(current, false).await?);
        }
        current.ensure_processable()?;
        let prepared = match self.prepare(&current, &supplier).await {
            Ok(prepared) => prepared,
            Err(failure) => {
                if !failure.is_store_for_now() {
                    self.record_failure(&current, &failure).await?;
                }
                return Err(failure);
            }
        };
        let account = self
            .create_account(
                &supplier.code,
                &request.external_account_number,
                request.operations_team_name,
                &prepared,
                ImportProcess::ensure_processable,
            )
            .await?;
        Ok(Reported {
            value: account,
            ignored,
        })
    }
}

fn read_process_request(body: &Value) -> Result<ProcessRequest, DomainError> {
    let mut r = ObjectReader::root(body).map_err(DomainError::invalid)?;
    let supplier = r.string("import_supplier_code", Required, StrRule::max(64));
    let external = r.string(
        "external_account_number",
        Required,
        StrRule::max(crate::domain::account::MAX_EXTERNAL_ACCOUNT_NUMBER),
    );
    let dry_run = r.boolean("dry_run", Optional);
    let operations_team_name = r.string(
        "operations_team_name",
        Optional,
        StrRule::max(crate::domain::operations_team::MAX_TEAM_NAME),
    );
    r.finish(|| {
        Some(ProcessRequest {
            supplier_code: supplier?,
            external_account_number: external?,
            dry_run: dry_run.unwrap_or(false),
            operations_team_name,
        })
    })
    .map_err(DomainError::invalid)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{account, fixture};
    use super::*;
    use crate::domain::account::AccountLimits;
    use crate::domain::ports::{AccountTarget, Hook, RuleFailure, RuleInput, SupplierRules};
    use futures_util::future::BoxFuture;
    use serde_json::json;
    use std::sync::Arc;

    /// Rules whose account hook waits until the test lets it go, so that a `process` call is
    /// held in flight for as long as the test wants.
    struct HeldRules {
        entered: tokio::sync::Notify,
        release: tokio::sync::Notify,
    }

    impl SupplierRules for HeldRules {
        fn apply<'a>(
            &'a self,
            _supplier: &'a str,
            _hook: Hook,
            _target: Option<&'a AccountTarget>,
            _input: RuleInput<'a>,
        ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
            Box::pin(async {
                self.entered.notify_one();
                self.release.notified().await;
                Ok(None)
            })
        }
    }

    /// Rules that count their account checks and identify themselves as the test says.
    struct CountedRules {
        checks: std::sync::atomic::AtomicUsize,
        identity: std::sync::Mutex<Option<String>>,
    }

    impl CountedRules {
        fn checks(&self) -> usize {
            self.checks.load(std::sync::atomic::Ordering::SeqCst)
        }

        fn identify_as(&self, identity: Option<&str>) {
            *self.identity.lock().expect("identity") = identity.map(str::to_owned);
        }
    }

    impl SupplierRules for CountedRules {
        fn apply<'a>(
            &'a self,
            _supplier: &'a str,
            hook: Hook,
            _target: Option<&'a AccountTarget>,
            _input: RuleInput<'a>,
        ) -> BoxFuture<'a, Result<Option<Value>, RuleFailure>> {
            if hook == Hook::ValidateAccount {
                self.checks
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Box::pin(async { Ok(None) })
        }

        fn identity(&self, _supplier: &str, _hook: Hook) -> Option<String> {
            self.identity.lock().expect("identity").clone()
        }
    }

    #[tokio::test]
    async fn a_migration_checks_the_account_again_only_if_the_rules_changed_since_staging() {
        let (_dir, store, key, _) = fixture().await;
        let rules = Arc::new(CountedRules {
            checks: Default::default(),
            identity: std::sync::Mutex::new(Some("plugin A".into())),
        });
        let imports = Imports::with_rules(store, AccountLimits { max_items: 100 }, rules.clone());
        let process = |external: &str| json!({"import_supplier_code": "OLD_CO", "external_account_number": external});
        for external in ["ACC-1", "ACC-2", "ACC-3"] {
            imports.stage(&key, account(external)).await.expect("stage");
        }
        assert_eq!(rules.checks(), 3);

        // The rules it was checked with at staging: no second check.
        imports
            .process(&key, &process("ACC-1"))
            .await
            .expect("migrated");
        assert_eq!(rules.checks(), 3);

        // Other rules now (a plugin replaced, another configuration): checked again.
        rules.identify_as(Some("plugin B"));
        imports
            .process(&key, &process("ACC-2"))
            .await
            .expect("migrated");
        assert_eq!(rules.checks(), 4);

        // Rules that cannot say what they are: always checked again.
        rules.identify_as(None);
        let dry = json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-3", "dry_run": true});
        assert!(matches!(
            imports.process(&key, &dry).await,
            Err(DomainError::DryRunWouldSucceed)
        ));
        assert_eq!(rules.checks(), 5);

        // Staged under rules that could not say (or by an earlier version: nothing recorded):
        // checked again.
        imports
            .stage(&key, account("ACC-3"))
            .await
            .expect("staged again");
        rules.identify_as(Some("plugin B"));
        imports
            .process(&key, &process("ACC-3"))
            .await
            .expect("migrated");
        assert_eq!(rules.checks(), 7);
    }

    #[tokio::test]
    async fn past_the_concurrency_limit_process_is_refused_until_a_place_frees() {
        let (_dir, store, key, staging) = fixture().await;
        for external in ["ACC-1", "ACC-2"] {
            staging.stage(&key, account(external)).await.expect("stage");
        }
        let rules = Arc::new(HeldRules {
            entered: tokio::sync::Notify::new(),
            release: tokio::sync::Notify::new(),
        });
        let imports = Imports::with_rules(store, AccountLimits { max_items: 100 }, rules.clone())
            .with_process_limit(1);
        let request = |external: &str| json!({"import_supplier_code": "OLD_CO", "external_account_number": external});
        let first = tokio::spawn({
            let (imports, key, body) = (imports.clone(), key.clone(), request("ACC-1"));
            async move { imports.process(&key, &body).await }
        });
        rules.entered.notified().await;
        // ACC-1 is being processed: a second account (or a dry run) has to wait its turn.
        for body in [
            request("ACC-2"),
            json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-2", "dry_run": true}),
        ] {
            let refused = imports.process(&key, &body).await;
            assert!(
                matches!(refused, Err(DomainError::ProcessConcurrencyLimit(1))),
                "{refused:?}"
            );
        }
        rules.release.notify_one();
        first.await.expect("joins").expect("ACC-1 is migrated");
        let second = tokio::spawn({
            let (imports, key, body) = (imports.clone(), key.clone(), request("ACC-2"));
            async move { imports.process(&key, &body).await }
        });
        rules.entered.notified().await;
        rules.release.notify_one();
        second
            .await
            .expect("joins")
            .expect("ACC-2 is migrated once a place is free");
    }
}
