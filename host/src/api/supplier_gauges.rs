//! The per-supplier gauges of `/metrics`, so that a dashboard can follow a campaign: each
//! supplier's campaign report (its accounts by state, the records kept on them, their
//! reconciliations and totals, the error tail by code) in the Prometheus text format.
//!
//! They are read from the store's counters when `/metrics` is scraped, for every supplier,
//! and written after the process's own metrics, rather than kept in the process's recorder:
//! so every instance over one database answers the same figures, and a figure that fell to
//! nothing (an error code no account has any more) is not left behind at its last value.
//! Labels are bounded: the supplier's code, a fixed set of names, and the error codes, which
//! are Ferry's own (a code that is not a short snake_case word is counted as `other`).

use super::AppState;
use crate::domain::error::DomainError;
use ferry_admin_api::CampaignReport;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// How long a scrape waits for the suppliers' counters before it answers without them.
const READ_WITHIN: Duration = Duration::from_secs(5);

/// The gauges of every supplier, or nothing (logged) when the store does not answer in time.
pub async fn render(state: &AppState) -> String {
    match tokio::time::timeout(READ_WITHIN, reports(state)).await {
        Ok(Ok(reports)) => exposition(&reports),
        Ok(Err(error)) => {
            tracing::warn!(%error, "the supplier gauges were left out of /metrics");
            String::new()
        }
        Err(_) => {
            tracing::warn!(
                "the supplier gauges were left out of /metrics: the store took longer than {READ_WITHIN:?}"
            );
            String::new()
        }
    }
}

/// Every supplier's campaign report.
async fn reports(state: &AppState) -> Result<Vec<CampaignReport>, DomainError> {
    let mut reports = Vec::new();
    for view in state.admin.suppliers().await? {
        match state.reports.campaign(&view.supplier.code).await {
            Ok(report) => reports.push(report),
            Err(DomainError::SupplierNotFound) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(reports)
}

/// One gauge family: its name, help and series.
struct Family {
    name: &'static str,
    help: &'static str,
    series: Vec<Series>,
}

/// One supplier's series of a family: its other labels and its value.
struct Series {
    supplier: String,
    labels: Vec<(&'static str, String)>,
    value: String,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Self {
        Self {
            name,
            help,
            series: Vec::new(),
        }
    }

    fn add(&mut self, supplier: &str, labels: Vec<(&'static str, String)>, value: impl ToString) {
        self.series.push(Series {
            supplier: supplier.to_owned(),
            labels,
            value: value.to_string(),
        });
    }

    fn write(&self, text: &mut String) {
        let _ = writeln!(text, "# HELP {} {}", self.name, self.help);
        let _ = writeln!(text, "# TYPE {} gauge", self.name);
        for series in &self.series {
            let supplier = escaped(&series.supplier);
            let _ = write!(text, "{}{{supplier=\"{supplier}\"", self.name);
            for (label, value) in &series.labels {
                let _ = write!(text, ",{label}=\"{}\"", escaped(value));
            }
            let _ = writeln!(text, "}} {}", series.value);
        }
    }
}

/// The gauges of `reports`, in the Prometheus text format.
pub fn exposition(reports: &[CampaignReport]) -> String {
    let mut accounts = Family::new(
        "ferry_supplier_accounts",
        "The supplier's accounts by import state (pending, in_progress, migrated, errored, cancelled).",
    );
    let mut staged = Family::new(
        "ferry_supplier_accounts_staged",
        "Every account of the supplier ever staged.",
    );
    let mut dry_run_errored = Family::new(
        "ferry_supplier_accounts_dry_run_errored",
        "The supplier's accounts not migrated yet whose last dry run failed.",
    );
    let mut records = Family::new(
        "ferry_supplier_records",
        "Records kept on the supplier's migrated accounts, by kind.",
    );
    let mut reconciliation = Family::new(
        "ferry_supplier_reconciliation",
        "The supplier's migrated accounts by reconciliation (reconciled, mismatched, not_declared).",
    );
    let mut balance = Family::new(
        "ferry_supplier_balance_pounds",
        "What the supplier's declaring accounts declared and what their ledgers hold, summed, in pounds (credit positive).",
    );
    let mut errors = Family::new(
        "ferry_supplier_errors",
        "The supplier's ERRORED accounts by the code of their failure.",
    );
    for report in reports {
        let code = report.supplier.as_str();
        let counts = &report.accounts;
        for (state, count) in [
            ("pending", counts.pending),
            ("in_progress", counts.in_progress),
            ("migrated", counts.migrated),
            ("errored", counts.errored),
            ("cancelled", counts.cancelled),
        ] {
            accounts.add(code, vec![("state", state.to_owned())], count);
        }
        staged.add(code, Vec::new(), counts.staged);
        dry_run_errored.add(code, Vec::new(), counts.dry_run_errored);
        let data = &report.data;
        for (kind, count) in [
            ("notes", data.notes),
            ("transactions", data.transactions),
            ("statements", data.statements),
            ("payment_instructions", data.payment_instructions),
        ] {
            records.add(code, vec![("kind", kind.to_owned())], count);
        }
        let reconciled = &report.reconciliation;
        for (state, count) in [
            ("reconciled", reconciled.reconciled),
            ("mismatched", reconciled.mismatched),
            ("not_declared", reconciled.not_declared),
        ] {
            reconciliation.add(code, vec![("state", state.to_owned())], count);
        }
        for (figure, total) in [
            ("declared", &reconciled.declared_total),
            ("held", &reconciled.held_total),
        ] {
            // A decimal string with two places is a Prometheus value as it is.
            if total.parse::<f64>().is_ok() {
                balance.add(code, vec![("figure", figure.to_owned())], total);
            }
        }
        let mut groups: BTreeMap<&str, u64> = BTreeMap::new();
        for group in &report.errors {
            *groups.entry(error_label(&group.code)).or_default() += group.count;
        }
        for (error, count) in groups {
            errors.add(code, vec![("code", error.to_owned())], count);
        }
    }
    let mut text = String::new();
    for family in [
        accounts,
        staged,
        dry_run_errored,
        records,
        reconciliation,
        balance,
        errors,
    ] {
        family.write(&mut text);
    }
    text
}

/// The label of an error code: the code itself when it is one of Ferry's (a short snake_case
/// word), else `other`.
fn error_label(code: &str) -> &str {
    let ferrys = !code.is_empty()
        && code.len() <= 64
        && code
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_');
    if ferrys { code } else { "other" }
}

/// A label value as the text format writes it: backslash, double quote and line feed escaped.
fn escaped(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_admin_api::{ErrorGroup, ReportAccounts, ReportData, ReportReconciliation};

    fn report(supplier: &str) -> CampaignReport {
        CampaignReport {
            supplier: supplier.to_owned(),
            accounts: ReportAccounts {
                staged: 6,
                pending: 1,
                migrated: 3,
                errored: 2,
                ..ReportAccounts::default()
            },
            data: ReportData {
                transactions: 6,
                ..ReportData::default()
            },
            reconciliation: ReportReconciliation {
                reconciled: 2,
                not_declared: 1,
                declared_total: "14.01".to_owned(),
                held_total: "-0.99".to_owned(),
                ..ReportReconciliation::default()
            },
            errors: vec![
                ErrorGroup {
                    code: "payment_vendor_unavailable".to_owned(),
                    count: 1,
                },
                ErrorGroup {
                    code: "Not Ours\n".to_owned(),
                    count: 1,
                },
            ],
        }
    }

    #[test]
    fn every_supplier_has_each_figure_once_under_one_help_and_type() {
        let text = exposition(&[report("OLD_CO"), report("NEW\"CO")]);
        for line in [
            "# TYPE ferry_supplier_accounts gauge",
            "ferry_supplier_accounts{supplier=\"OLD_CO\",state=\"migrated\"} 3",
            "ferry_supplier_accounts{supplier=\"OLD_CO\",state=\"cancelled\"} 0",
            "ferry_supplier_accounts_staged{supplier=\"OLD_CO\"} 6",
            "ferry_supplier_records{supplier=\"OLD_CO\",kind=\"transactions\"} 6",
            "ferry_supplier_reconciliation{supplier=\"OLD_CO\",state=\"not_declared\"} 1",
            "ferry_supplier_balance_pounds{supplier=\"OLD_CO\",figure=\"declared\"} 14.01",
            "ferry_supplier_balance_pounds{supplier=\"OLD_CO\",figure=\"held\"} -0.99",
            "ferry_supplier_errors{supplier=\"OLD_CO\",code=\"payment_vendor_unavailable\"} 1",
            "ferry_supplier_errors{supplier=\"OLD_CO\",code=\"other\"} 1",
            "ferry_supplier_accounts{supplier=\"NEW\\\"CO\",state=\"pending\"} 1",
        ] {
            assert_eq!(
                text.lines().filter(|candidate| *candidate == line).count(),
                1,
                "{line} in\n{text}"
            );
        }
        assert_eq!(text.matches("# TYPE ").count(), 7, "{text}");
    }

    #[test]
    fn no_suppliers_no_series() {
        let text = exposition(&[]);
        assert!(text.lines().all(|line| line.starts_with('#')), "{text}");
    }
}
