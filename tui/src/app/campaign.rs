//! The Campaign screen's state: one supplier's campaign report, the group of its accounts
//! opened from it (the accounts of one error code, or the mismatched ones), page by page, and
//! the account opened from that list.

use super::{AccountView, Loadable, Pages};
use crate::api::{AccountReportPage, AccountReportRow, CampaignReport, ClientError};
use crate::calls::{AccountGroup, ApiCall};

/// The Campaign screen: the report of one supplier and what was opened from it.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignState {
    /// The supplier shown (chosen from the Suppliers screen).
    pub supplier: Option<String>,
    pub report: Loadable<CampaignReport>,
    /// The selected row of [`CampaignState::groups`].
    pub selected: usize,
    /// The group of accounts opened with Enter.
    pub accounts: Option<GroupAccounts>,
    /// The account opened from that group.
    pub detail: Option<AccountView>,
}

/// One page of a group of the report's accounts.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupAccounts {
    pub group: AccountGroup,
    pub pages: Pages,
    pub page: Loadable<AccountReportPage>,
    pub selected: usize,
}

impl GroupAccounts {
    pub fn rows(&self) -> &[AccountReportRow] {
        self.page
            .ready()
            .map(|page| page.accounts.as_slice())
            .unwrap_or_default()
    }

    /// Whether an answer to the call for `group` after `after` is this page's.
    fn is_for(&self, group: &AccountGroup, after: &Option<String>) -> bool {
        self.group == *group && self.pages.after == *after
    }
}

impl Default for CampaignState {
    fn default() -> Self {
        Self::new()
    }
}

impl CampaignState {
    pub fn new() -> Self {
        Self {
            supplier: None,
            report: Loadable::Loading,
            selected: 0,
            accounts: None,
            detail: None,
        }
    }

    /// The rows of the report's list, each with how many accounts it has: the error groups
    /// (most frequent first, as the host orders them), then the mismatched accounts.
    pub fn groups(&self) -> Vec<(AccountGroup, u64)> {
        let Some(report) = self.report.ready() else {
            return Vec::new();
        };
        report
            .errors
            .iter()
            .map(|group| (AccountGroup::Error(group.code.clone()), group.count))
            .chain([(AccountGroup::Mismatched, report.reconciliation.mismatched)])
            .collect()
    }

    /// The call that loads the report.
    pub fn report_call(&self) -> Option<ApiCall> {
        self.supplier
            .as_ref()
            .map(|code| ApiCall::Report { code: code.clone() })
    }

    /// The call that loads the open group's page.
    pub fn accounts_call(&self) -> Option<ApiCall> {
        let code = self.supplier.as_ref()?;
        let accounts = self.accounts.as_ref()?;
        Some(ApiCall::ReportAccounts {
            code: code.clone(),
            group: accounts.group.clone(),
            after: accounts.pages.after.clone(),
        })
    }

    /// Shows another supplier's report, from its top.
    pub fn show_supplier(&mut self, code: &str) {
        if self.supplier.as_deref() != Some(code) {
            *self = Self {
                supplier: Some(code.to_owned()),
                ..Self::new()
            };
        }
    }

    /// Opens the selected group's accounts, at their first page.
    pub fn open_selected_group(&mut self) -> Option<ApiCall> {
        let (group, _) = self.groups().into_iter().nth(self.selected)?;
        self.accounts = Some(GroupAccounts {
            group,
            pages: Pages::default(),
            page: Loadable::Loading,
            selected: 0,
        });
        self.accounts_call()
    }

    pub fn next_page(&mut self) -> Option<ApiCall> {
        let accounts = self.accounts.as_mut()?;
        let next = accounts.page.ready()?.next_after.clone()?;
        accounts.pages.forward(next);
        accounts.selected = 0;
        accounts.page = Loadable::Loading;
        self.accounts_call()
    }

    pub fn previous_page(&mut self) -> Option<ApiCall> {
        let accounts = self.accounts.as_mut()?;
        if !accounts.pages.back() {
            return None;
        }
        accounts.selected = 0;
        accounts.page = Loadable::Loading;
        self.accounts_call()
    }

    /// Takes in the report of `code`, keeping the selected group selected where it moved.
    pub fn take_report(&mut self, code: &str, report: CampaignReport) {
        if self.supplier.as_deref() != Some(code) {
            return;
        }
        let selected = self.groups().into_iter().nth(self.selected);
        self.report = Loadable::Ready(report);
        let groups = self.groups();
        self.selected = selected
            .and_then(|(group, _)| groups.iter().position(|(other, _)| *other == group))
            .unwrap_or(self.selected)
            .min(groups.len().saturating_sub(1));
    }

    /// Takes in a page of `group` after `after`, if it is the page shown.
    pub fn take_page(
        &mut self,
        code: &str,
        group: &AccountGroup,
        after: &Option<String>,
        page: AccountReportPage,
    ) {
        if let Some(accounts) = self.page_for(code, group, after) {
            accounts.selected = accounts.selected.min(page.accounts.len().saturating_sub(1));
            accounts.page = Loadable::Ready(page);
        }
    }

    /// Takes in why the report of `code` did not come: shown in its place when there is no
    /// report to show yet (or the host has none), otherwise returned to be said, the last
    /// report staying on screen.
    pub fn take_report_failure(&mut self, code: &str, error: &ClientError) -> Option<String> {
        if self.supplier.as_deref() != Some(code) {
            return None;
        }
        if error.is_missing_endpoint() {
            self.report = Loadable::Unavailable(
                "The campaign report is not available on this host yet.".to_owned(),
            );
        } else if self.report.ready().is_some() {
            return Some(format!(
                "Refreshing the campaign report of {code} failed: {error}"
            ));
        } else {
            self.report = Loadable::Failed(error.to_string());
        }
        None
    }

    /// Says why the page of `group` after `after` is not there, if it is the page shown.
    pub fn take_page_failure(
        &mut self,
        code: &str,
        group: &AccountGroup,
        after: &Option<String>,
        error: &ClientError,
    ) {
        if let Some(accounts) = self.page_for(code, group, after) {
            accounts.page = if error.is_missing_endpoint() {
                Loadable::Unavailable(
                    "Listing the report's accounts is not available on this host yet.".to_owned(),
                )
            } else {
                Loadable::Failed(error.to_string())
            };
        }
    }

    fn page_for(
        &mut self,
        code: &str,
        group: &AccountGroup,
        after: &Option<String>,
    ) -> Option<&mut GroupAccounts> {
        if self.supplier.as_deref() != Some(code) {
            return None;
        }
        self.accounts
            .as_mut()
            .filter(|accounts| accounts.is_for(group, after))
    }
}
