//! Which accounts a bulk migration is started over ([`Selection`]): every account awaiting
//! migration, the error tail (the accounts whose last attempt failed, of one error code or
//! all), or the accounts an operator names. Read from the start's optional body
//! ([`Selection::read`]), recorded with the job as the admin API spells it
//! ([`Selection::record`]), and turned into the accounts the job claims ([`candidates`]).

use crate::domain::account::MAX_EXTERNAL_ACCOUNT_NUMBER;
use crate::domain::error::DomainError;
use crate::domain::import_process::ImportState;
use crate::domain::imports::{ListFilter, filtered};
use crate::domain::storage::{Store, StoreError};
use crate::domain::validation::{
    FieldError, FieldErrors, Items, Nullable, ObjectReader, StrRule, json_kind,
};
use ferry_admin_api::migrations::{MigrationSelection, MigrationTail};
use futures_util::{StreamExt, TryStreamExt};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// The most accounts a start may name.
pub const MAX_NAMED_ACCOUNTS: usize = 10_000;
/// The longest error code a start may name.
const MAX_ERROR_CODE: usize = 100;
/// Processes read at once while the error tail is looked for (each a round trip on a
/// database).
const READ_AHEAD: usize = 16;

/// Which accounts a bulk migration claims.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Selection {
    /// Every account awaiting migration (`PENDING` or `ERRORED`).
    #[default]
    Everything,
    /// The error tail: the accounts awaiting migration whose last attempt failed (re-staged
    /// since or not), with the error code `code` when one is given.
    Errored { code: Option<String> },
    /// Exactly these accounts, those of them awaiting migration.
    Accounts(Vec<String>),
}

impl Selection {
    /// The selection a start's body names (none, or `null`: every account awaiting
    /// migration), or what is wrong with it.
    pub fn read(body: Option<&Value>) -> Result<Selection, DomainError> {
        match body {
            None | Some(Value::Null) => Ok(Selection::Everything),
            Some(body) => read_body(body).map_err(DomainError::invalid),
        }
    }

    /// The selection as the job's record and answer spell it.
    pub fn record(&self) -> MigrationSelection {
        match self {
            Self::Everything => MigrationSelection::default(),
            Self::Errored { code } => MigrationSelection {
                only: Some(MigrationTail::Errored),
                error_code: code.clone(),
                accounts: None,
            },
            Self::Accounts(accounts) => MigrationSelection {
                accounts: Some(accounts.clone()),
                ..MigrationSelection::default()
            },
        }
    }
}

fn read_body(body: &Value) -> Result<Selection, FieldErrors> {
    let mut r = ObjectReader::root(body)?;
    let only = r.string("only", Nullable, StrRule::max(32));
    let only = only.and_then(|text| match text.as_str() {
        "errored" => Some(MigrationTail::Errored),
        "mismatched" => {
            r.error(
                r.attr("only"),
                "invalid_choice",
                "Mismatched accounts are migrated already: there is nothing to migrate again. \
                 A mismatch is worked by correcting the account's ledger with \
                 transactions/create/.",
            );
            None
        }
        other => {
            r.error(
                r.attr("only"),
                "invalid_choice",
                format!("{other:?} is not a valid choice: use \"errored\"."),
            );
            None
        }
    });
    let error_code = r.string("error_code", Nullable, StrRule::max(MAX_ERROR_CODE));
    let accounts = r
        .array(
            "accounts",
            Nullable,
            Items {
                min: 1,
                max: MAX_NAMED_ACCOUNTS,
            },
        )
        .map(|elements| read_accounts(&mut r, elements));
    let given = |name: &str| body.get(name).is_some_and(|value| !value.is_null());
    if given("only") && given("accounts") {
        r.error(
            r.attr("accounts"),
            "invalid",
            "Give either `only` or `accounts`, not both.",
        );
    }
    if given("error_code") && !given("only") {
        r.error(
            r.attr("error_code"),
            "invalid",
            "An error code picks a group of the error tail: give it with \"only\": \"errored\".",
        );
    }
    r.finish(|| {
        Some(match (only, accounts) {
            (Some(MigrationTail::Errored), _) => Selection::Errored { code: error_code },
            (None, Some(accounts)) => Selection::Accounts(accounts),
            (None, None) => Selection::Everything,
        })
    })
}

/// The external account numbers of `elements`, each once, in their order.
fn read_accounts(r: &mut ObjectReader<'_>, elements: &[Value]) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut accounts = Vec::with_capacity(elements.len());
    for (index, element) in elements.iter().enumerate() {
        let attr = format!("{}.{index}", r.attr("accounts"));
        let problem = match element {
            Value::String(text) if text.trim().is_empty() => "This field may not be blank.".into(),
            Value::String(text) if text.chars().count() > MAX_EXTERNAL_ACCOUNT_NUMBER => format!(
                "Ensure this field has no more than {MAX_EXTERNAL_ACCOUNT_NUMBER} characters."
            ),
            Value::String(text) => {
                if seen.insert(text.as_str()) {
                    accounts.push(text.clone());
                }
                continue;
            }
            other => format!(
                "Expected an external account number, but got {}.",
                json_kind(other)
            ),
        };
        r.error(attr, "invalid", problem);
    }
    accounts
}

/// The external account numbers of `supplier`'s accounts that `selection` names and that
/// await migration now, in the order the job takes them (the claim checks each again). A named
/// account the supplier never staged is refused, each at its place in the start's body.
pub async fn candidates(
    store: &Arc<dyn Store>,
    supplier: &str,
    selection: &Selection,
) -> Result<Vec<String>, DomainError> {
    let awaiting =
        |state: ImportState| matches!(state, ImportState::Pending | ImportState::Errored);
    match selection {
        Selection::Everything => Ok(filtered(
            store.import_listings(supplier, None),
            ListFilter::Pending,
        )
        .try_filter_map(|listing| {
            std::future::ready(Ok(
                awaiting(listing.state).then_some(listing.external_account_number)
            ))
        })
        .try_collect()
        .await?),
        Selection::Errored { code } => {
            // The tail is read off each process (the listings do not carry it); an `ERRORED`
            // one is in it whatever its code, so it is read only to match one.
            let tail = filtered(store.import_listings(supplier, None), ListFilter::Pending)
                .try_filter(move |listing| std::future::ready(awaiting(listing.state)))
                .map_ok(|listing| {
                    let store = store.clone();
                    async move {
                        if code.is_none() && listing.state == ImportState::Errored {
                            return Ok(Some(listing.external_account_number));
                        }
                        let process = store
                            .import_process(supplier, &listing.external_account_number)
                            .await?;
                        Ok::<_, StoreError>(process.and_then(|process| {
                            let in_tail = process.tail_code().is_some_and(|failed| {
                                code.as_deref().is_none_or(|wanted| wanted == failed)
                            });
                            in_tail.then_some(process.external_account_number)
                        }))
                    }
                })
                .try_buffered(READ_AHEAD)
                .try_filter_map(|selected| std::future::ready(Ok(selected)));
            Ok(tail.try_collect().await?)
        }
        Selection::Accounts(accounts) => {
            let mut errors = FieldErrors::default();
            let mut selected = Vec::with_capacity(accounts.len());
            let mut listings = futures_util::stream::iter(accounts.iter().cloned().enumerate())
                .map(|(index, external)| {
                    let store = store.clone();
                    async move {
                        let listing = store.import_listing(supplier, &external).await;
                        (index, external, listing)
                    }
                })
                .buffered(READ_AHEAD);
            while let Some((index, external, listing)) = listings.next().await {
                match listing? {
                    None => errors.push(FieldError::new(
                        format!("accounts.{index}"),
                        "import_process_does_not_exist",
                        format!("{supplier} has no account {external:?} staged."),
                    )),
                    Some(listing) if awaiting(listing.state) => selected.push(external),
                    Some(_) => {}
                }
            }
            if !errors.is_empty() {
                return Err(DomainError::invalid(errors));
            }
            Ok(selected)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::import_process::ImportProcess;
    use crate::domain::imports::tests::{account, fixture};
    use crate::domain::storage::ImportChange;
    use crate::domain::validation::{codes, pairs};
    use chrono::Utc;
    use serde_json::json;

    fn refusal(body: Value) -> Vec<(String, String)> {
        match Selection::read(Some(&body)) {
            Err(DomainError::Invalid { errors, .. }) => codes(&errors),
            other => panic!("{body} was not refused: {other:?}"),
        }
    }

    #[test]
    fn a_start_names_everything_the_tail_or_accounts() {
        // A null field is one left out, as the document says.
        let nulls = json!({"only": null, "error_code": null, "accounts": null});
        for body in [None, Some(json!(null)), Some(json!({})), Some(nulls)] {
            assert_eq!(
                Selection::read(body.as_ref()).expect("read"),
                Selection::Everything
            );
        }
        for tail in [
            json!({"only": "errored"}),
            json!({"only": "errored", "accounts": null}),
        ] {
            assert_eq!(
                Selection::read(Some(&tail)).expect("read"),
                Selection::Errored { code: None }
            );
        }
        let group = json!({"only": "errored", "error_code": "account_failed_validation"});
        let group = Selection::read(Some(&group)).expect("read");
        assert_eq!(
            group,
            Selection::Errored {
                code: Some("account_failed_validation".into())
            }
        );
        assert_eq!(
            serde_json::to_value(group.record()).expect("recorded"),
            json!({"only": "errored", "error_code": "account_failed_validation"})
        );
        let named = json!({"accounts": ["A-2", "A-1", "A-2"]});
        let named = Selection::read(Some(&named)).expect("read");
        assert_eq!(named, Selection::Accounts(vec!["A-2".into(), "A-1".into()]));
        assert_eq!(
            serde_json::to_value(named.record()).expect("recorded"),
            json!({"accounts": ["A-2", "A-1"]})
        );
        assert!(Selection::Everything.record().is_everything());
    }

    #[test]
    fn bad_selections_are_refused_field_by_field() {
        let mismatched = Selection::read(Some(&json!({"only": "mismatched"})));
        let Err(DomainError::Invalid { errors, .. }) = mismatched else {
            panic!("mismatched accounts were selected: {mismatched:?}");
        };
        assert_eq!(codes(&errors), [("only".into(), "invalid_choice".into())]);
        assert!(
            errors.0[0].detail.contains("transactions/create/"),
            "{errors:?}"
        );

        let cases = [
            (json!([]), ("", "invalid")),
            (json!({"only": "everything"}), ("only", "invalid_choice")),
            (json!({"only": 1}), ("only", "invalid")),
            (json!({"error_code": "x"}), ("error_code", "invalid")),
            (
                json!({"only": "errored", "error_code": ""}),
                ("error_code", "blank"),
            ),
            (
                json!({"only": "errored", "accounts": ["A-1"]}),
                ("accounts", "invalid"),
            ),
            (json!({"accounts": []}), ("accounts", "min_length")),
            (json!({"accounts": "A-1"}), ("accounts", "invalid")),
            (json!({"accounts": ["A-1", 2]}), ("accounts.1", "invalid")),
            (json!({"accounts": [" "]}), ("accounts.0", "invalid")),
            (json!({"colour": "blue"}), ("colour", "unknown_field")),
        ];
        for (body, expected) in cases {
            assert_eq!(refusal(body.clone()), pairs(&[expected]), "{body}");
        }
    }

    /// Fails `external`'s migration with `code`, as a migration attempt records it.
    async fn fail(store: &Arc<dyn Store>, external: &str, code: &str) {
        store
            .change_import("OLD_CO", external, &mut |current| {
                let current: &ImportProcess = current.ok_or(DomainError::ImportProcessNotFound)?;
                Ok(ImportChange::process(current.errored(
                    code,
                    "Failed.",
                    Utc::now(),
                )))
            })
            .await
            .expect("failed");
    }

    #[tokio::test]
    async fn the_tail_is_the_accounts_whose_last_attempt_failed_re_staged_or_not() {
        let (_dir, store, key, imports) = fixture().await;
        for external in ["A-1", "A-2", "A-3", "A-4", "A-5"] {
            imports
                .stage(&key, account(external))
                .await
                .expect("staged");
        }
        fail(&store, "A-1", "account_failed_validation").await;
        fail(&store, "A-2", "payment_vendor_unavailable").await;
        fail(&store, "A-3", "account_failed_validation").await;
        fail(&store, "A-5", "account_failed_validation").await;
        // A-3 is re-staged (pending again, still in the tail); A-5 is migrated.
        imports
            .stage(&key, account("A-3"))
            .await
            .expect("re-staged");
        imports
            .claim("OLD_CO", &["A-5".into()])
            .await
            .expect("claimed");
        imports
            .migrate_claimed("OLD_CO", "A-5")
            .await
            .expect("migrated");

        let select = |selection: Selection| {
            let store = store.clone();
            async move { candidates(&store, "OLD_CO", &selection).await }
        };
        let names = |names: &[&str]| {
            names
                .iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            select(Selection::Everything).await.expect("selected"),
            names(&["A-1", "A-2", "A-3", "A-4"])
        );
        assert_eq!(
            select(Selection::Errored { code: None })
                .await
                .expect("selected"),
            names(&["A-1", "A-2", "A-3"])
        );
        let group = Selection::Errored {
            code: Some("account_failed_validation".into()),
        };
        assert_eq!(
            select(group).await.expect("selected"),
            names(&["A-1", "A-3"])
        );
        let none = Selection::Errored {
            code: Some("plugin_failed".into()),
        };
        assert!(select(none).await.expect("selected").is_empty());

        // Named: those awaiting migration, in the order given; one never staged is refused.
        let named = Selection::Accounts(names(&["A-4", "A-5", "A-2"]));
        assert_eq!(
            select(named).await.expect("selected"),
            names(&["A-4", "A-2"])
        );
        let unknown = Selection::Accounts(names(&["A-4", "NOPE"]));
        let Err(DomainError::Invalid { errors, .. }) = select(unknown).await else {
            panic!("an account never staged was selected");
        };
        assert_eq!(
            codes(&errors),
            [(
                "accounts.1".to_owned(),
                "import_process_does_not_exist".to_owned()
            )]
        );
    }
}
