//! The campaign report of a supplier, for operators: what proves its migration
//! ([`super::campaign`] says what is counted and reconciled).
//!
//! [`Reports::campaign`] is read from the supplier's counters alone, never from its accounts,
//! so it answers as fast for a million accounts as for ten. [`Reports::account_rows`] streams
//! one row per account in external-account-number order, from the import listings, reading
//! a migrated account's summary for its reconciliation and an `ERRORED` account's process for
//! its failure: the error tail, workable account by account.

use super::campaign::{Counts, Declared, ReconciliationState, counter, reconcile};
use super::error::DomainError;
use super::import_process::{ImportListing, ImportState};
use super::money::Money;
use super::storage::Store;
use super::validation::{FieldError, FieldErrors};
use ferry_admin_api::{
    AccountReconciliation, AccountReportRow, CampaignReport, ErrorGroup, ReportAccounts,
    ReportData, ReportReconciliation,
};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use std::sync::Arc;

/// The report use cases over one store.
#[derive(Clone)]
pub struct Reports {
    store: Arc<dyn Store>,
}

impl std::fmt::Debug for Reports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reports").finish_non_exhaustive()
    }
}

/// Which accounts a report lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowFilter {
    pub state: Option<ImportState>,
    pub reconciliation: Option<ReconciliationState>,
    pub error_code: Option<String>,
}

impl RowFilter {
    /// The filter a query names (each as the API spells it), or what is wrong with it.
    pub fn read(
        state: Option<&str>,
        reconciliation: Option<&str>,
        error_code: Option<&str>,
    ) -> Result<RowFilter, DomainError> {
        let mut errors = FieldErrors::default();
        let state = state.and_then(|text| {
            let parsed = ImportState::parse(text);
            if parsed.is_none() {
                errors.push(FieldError::new(
                    "state".to_owned(),
                    "invalid_choice",
                    format!("{text:?} is not an import state."),
                ));
            }
            parsed
        });
        let reconciliation = reconciliation.and_then(|text| {
            let parsed = ReconciliationState::parse(text);
            if parsed.is_none() {
                errors.push(FieldError::new(
                    "reconciliation".to_owned(),
                    "invalid_choice",
                    format!("{text:?} is not RECONCILED, MISMATCH or NOT_DECLARED."),
                ));
            }
            parsed
        });
        if !errors.is_empty() {
            return Err(DomainError::invalid(errors));
        }
        Ok(RowFilter {
            state,
            reconciliation,
            error_code: error_code.map(str::to_owned),
        })
    }

    fn admits(&self, row: &AccountReportRow) -> bool {
        self.state.is_none_or(|state| row.state == state.as_str())
            && self
                .reconciliation
                .is_none_or(|wanted| row.reconciliation.as_deref() == Some(wanted.as_str()))
            && self
                .error_code
                .as_ref()
                .is_none_or(|code| row.error_code.as_ref() == Some(code))
    }

    /// Whether a row in `state` could pass, before its account is read.
    fn may_admit(&self, state: ImportState) -> bool {
        self.state.is_none_or(|wanted| wanted == state)
            && (self.reconciliation.is_none() || state == ImportState::Processed)
            && (self.error_code.is_none() || state == ImportState::Errored)
    }
}

impl Reports {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// The supplier's campaign report (`SupplierNotFound` when it does not exist).
    pub async fn campaign(&self, supplier: &str) -> Result<CampaignReport, DomainError> {
        self.store
            .supplier(supplier)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        let counts = self.store.supplier_counts(supplier).await?;
        Ok(campaign_report(supplier, &counts))
    }

    /// The report's row of every account of `supplier` that `filter` admits, after the
    /// external account number `after`, in order.
    pub async fn account_rows(
        &self,
        supplier: &str,
        filter: RowFilter,
        after: Option<&str>,
    ) -> Result<BoxStream<'static, Result<AccountReportRow, DomainError>>, DomainError> {
        self.store
            .supplier(supplier)
            .await?
            .ok_or(DomainError::SupplierNotFound)?;
        let store = self.store.clone();
        let supplier = supplier.to_owned();
        Ok(self
            .store
            .import_listings(&supplier, after)
            .filter_map(move |listing| {
                let (store, supplier, filter) = (store.clone(), supplier.clone(), filter.clone());
                async move {
                    let listing = match listing {
                        Ok(listing) if filter.may_admit(listing.state) => listing,
                        Ok(_) => return None,
                        Err(error) => return Some(Err(error.into())),
                    };
                    match row(store.as_ref(), &supplier, listing).await {
                        Ok(row) if filter.admits(&row) => Some(Ok(row)),
                        Ok(_) => None,
                        Err(error) => Some(Err(error)),
                    }
                }
            })
            .boxed())
    }
}

/// The report's row of the account `listing` names.
async fn row(
    store: &dyn Store,
    supplier: &str,
    listing: ImportListing,
) -> Result<AccountReportRow, DomainError> {
    let mut row = AccountReportRow {
        external_account_number: listing.external_account_number.clone(),
        platform_account_number: listing.platform_account_number.clone(),
        state: listing.state.as_str().to_owned(),
        reconciliation: None,
        declared: None,
        held: None,
        difference: None,
        error_code: None,
        error_detail: None,
    };
    match (listing.state, &listing.platform_account_number) {
        (ImportState::Processed, Some(number)) => {
            let reconciled = account_reconciliation(store, number).await?;
            row.reconciliation = Some(reconciled.state);
            row.declared = reconciled.declared;
            row.held = Some(reconciled.held);
            row.difference = reconciled.difference;
        }
        (ImportState::Errored, _) => {
            let failure = store
                .import_process(supplier, &listing.external_account_number)
                .await?
                .and_then(|process| process.last_failure);
            if let Some(failure) = failure {
                row.error_code = Some(failure.code);
                row.error_detail = Some(failure.detail);
            }
        }
        _ => {}
    }
    Ok(row)
}

/// The reconciliation of platform account `number`, as the account view shows it.
pub async fn account_reconciliation(
    store: &dyn Store,
    number: &str,
) -> Result<AccountReconciliation, DomainError> {
    let summary = store.account_summary(number).await?;
    let document = match summary.reconciliation {
        Some(_) => None,
        // Migrated before reconciliations were kept: its document's declaration stands in.
        None => store.account(number).await?,
    };
    let view = reconcile(&summary, || {
        document
            .as_ref()
            .and_then(|account| Declared::of(account.data.document()))
    });
    Ok(AccountReconciliation {
        state: view.state.as_str().to_owned(),
        declared: view.declared.map(|money| money.to_string()),
        held: view.held.to_string(),
        difference: view.difference.map(|money| money.to_string()),
        first_diverging: view.first_diverging,
    })
}

/// The report the counters `counts` of `supplier` make.
fn campaign_report(supplier: &str, counts: &Counts) -> CampaignReport {
    let count = |name: &str| u64::try_from(counts.get(name)).unwrap_or(0);
    let state = |state: ImportState| count(&format!("{}{}", counter::STATE, state.as_str()));
    let reconciliation = |state: ReconciliationState| {
        count(&format!("{}{}", counter::RECONCILIATION, state.as_str()))
    };
    let mut errors: Vec<ErrorGroup> = counts
        .under(counter::ERROR)
        .filter(|(_, count)| *count > 0)
        .map(|(code, count)| ErrorGroup {
            code: code.to_owned(),
            count: u64::try_from(count).unwrap_or(0),
        })
        .collect();
    errors.sort_by(|one, other| other.count.cmp(&one.count).then(one.code.cmp(&other.code)));
    CampaignReport {
        supplier: supplier.to_owned(),
        accounts: ReportAccounts {
            staged: count(counter::STAGED),
            pending: state(ImportState::Pending),
            in_progress: state(ImportState::InProgress),
            migrated: state(ImportState::Processed),
            errored: state(ImportState::Errored),
            dry_run_errored: count(counter::DRY_RUN_ERRORED),
            cancelled: state(ImportState::Cancelled),
        },
        data: ReportData {
            notes: count(counter::NOTES),
            transactions: count(counter::TRANSACTIONS),
            statements: count(counter::STATEMENTS),
            payment_instructions: count(counter::PAYMENT_INSTRUCTIONS),
        },
        reconciliation: ReportReconciliation {
            reconciled: reconciliation(ReconciliationState::Reconciled),
            mismatched: reconciliation(ReconciliationState::Mismatch),
            not_declared: reconciliation(ReconciliationState::NotDeclared),
            declared_total: Money::from_pence(counts.get(counter::DECLARED_PENCE)).to_string(),
            held_total: Money::from_pence(counts.get(counter::HELD_PENCE)).to_string(),
        },
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_reads_the_counters_and_lists_the_errors_most_frequent_first() {
        let mut counts = Counts::default();
        for (name, value) in [
            ("staged", 5),
            ("state.PROCESSED", 2),
            ("state.ERRORED", 3),
            ("error.plugin_failed", 1),
            ("error.path_does_not_exist_in_file_store", 2),
            ("reconciliation.RECONCILED", 1),
            ("reconciliation.MISMATCH", 1),
            ("reconciliation.declared_pence", -3500),
            ("reconciliation.held_pence", -4000),
            ("data.transactions", 8),
        ] {
            counts.add(name, value);
        }
        let report = campaign_report("OLD_CO", &counts);
        assert_eq!(report.accounts.staged, 5);
        assert_eq!(report.accounts.migrated, 2);
        assert_eq!(report.accounts.pending, 0);
        assert_eq!(report.data.transactions, 8);
        assert_eq!(report.reconciliation.declared_total, "-35.00");
        assert_eq!(report.reconciliation.held_total, "-40.00");
        assert_eq!(
            report.errors,
            [
                ErrorGroup {
                    code: "path_does_not_exist_in_file_store".into(),
                    count: 2
                },
                ErrorGroup {
                    code: "plugin_failed".into(),
                    count: 1
                },
            ]
        );
    }

    #[test]
    fn a_filter_names_what_it_cannot_read() {
        let error = RowFilter::read(Some("DONE"), Some("MAYBE"), None).expect_err("refused");
        assert_eq!(error.code(), "validation_error");
        let filter = RowFilter::read(Some("PROCESSED"), Some("MISMATCH"), None).expect("read");
        assert!(filter.may_admit(ImportState::Processed));
        assert!(!filter.may_admit(ImportState::Errored));
    }
}
