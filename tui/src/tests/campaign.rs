//! The Campaign screen's keys against the recording fake: opening a supplier's report, listing
//! the accounts of a group page by page, opening an account, going back, and what the screen
//! asks the host for on a refresh.

use super::fake::{FakeApi, Host, press, started, typed};
use super::fixtures;
use crate::api::{CampaignReport, ErrorGroup};
use crate::app::{App, Loadable, Screen};
use crate::calls::{AccountGroup, ApiCall, ApiReply, Completed};
use ratatui::crossterm::event::KeyCode;

fn paths(api: &FakeApi) -> Vec<String> {
    api.requests().into_iter().map(|r| r.path).collect()
}

fn last_path(api: &FakeApi) -> String {
    paths(api).pop().expect("a request")
}

/// The external account numbers of the open group's page.
fn listed(app: &App) -> Vec<String> {
    let accounts = app.campaign.accounts.as_ref().expect("a group is open");
    accounts
        .rows()
        .iter()
        .map(|row| row.external_account_number.clone())
        .collect()
}

/// A console on OLD_CO's report.
async fn on_the_report(api: &FakeApi) -> App {
    let mut app = started(api).await;
    press(&mut app, api, &[KeyCode::Char('R')]).await;
    app
}

#[tokio::test]
async fn capital_r_opens_the_report_of_the_selected_supplier() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("jR")).await;
    assert_eq!(app.screen, Screen::Campaign);
    assert_eq!(app.campaign.supplier.as_deref(), Some("BRIGHT"));
    assert_eq!(last_path(&api), "/admin/v1/suppliers/BRIGHT/report");
    let report = app.campaign.report.ready().expect("the report is loaded");
    assert_eq!(report.accounts.staged, 1546);
    // Its error groups, then the mismatched accounts.
    assert_eq!(
        app.campaign.groups(),
        [
            (
                AccountGroup::Error("plugin_deadline_exceeded".to_owned()),
                8
            ),
            (AccountGroup::Error("invalid_postcode".to_owned()), 4),
            (AccountGroup::Mismatched, 0),
        ]
    );
    assert_eq!(api.changes(), [], "reading a report changes nothing");
}

#[tokio::test]
async fn enter_lists_an_error_groups_accounts_and_escape_goes_back_step_by_step() {
    let api = FakeApi::new(Host::Complete);
    let mut app = on_the_report(&api).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    assert_eq!(
        last_path(&api),
        "/admin/v1/suppliers/OLD_CO/report/accounts?error_code=invalid_postcode&limit=50"
    );
    assert_eq!(
        listed(&app),
        ["ACC-1003", "ACC-1013", "ACC-1014", "ACC-1015"]
    );

    // An errored account has no platform account to open: said, nothing asked.
    let before = api.requests().len();
    press(&mut app, &api, &[KeyCode::Enter]).await;
    assert_eq!(app.campaign.detail, None);
    assert_eq!(api.requests().len(), before);
    let message = app.message.as_ref().expect("a message");
    assert_eq!(
        message.text,
        "ACC-1003 has no platform account yet (ERRORED)."
    );

    press(&mut app, &api, &[KeyCode::Esc]).await;
    assert_eq!(app.campaign.accounts, None);
    assert_eq!(app.screen, Screen::Campaign);
    press(&mut app, &api, &[KeyCode::Char('j'), KeyCode::Enter]).await;
    assert_eq!(listed(&app), ["ACC-1010", "ACC-1016"]);
    press(&mut app, &api, &[KeyCode::Esc, KeyCode::Esc]).await;
    assert_eq!(app.screen, Screen::Suppliers);
}

#[tokio::test]
async fn the_mismatched_accounts_are_listed_and_open_with_their_reconciliation() {
    let api = FakeApi::new(Host::Complete);
    let mut app = on_the_report(&api).await;
    // The last row of the list: the mismatched accounts.
    press(&mut app, &api, &[KeyCode::Char('G'), KeyCode::Enter]).await;
    assert_eq!(
        last_path(&api),
        "/admin/v1/suppliers/OLD_CO/report/accounts?reconciliation=MISMATCH&limit=50"
    );
    assert_eq!(listed(&app), ["ACC-1002", "ACC-1012", "ACC-1020"]);

    press(&mut app, &api, &[KeyCode::Enter]).await;
    assert_eq!(last_path(&api), "/admin/v1/accounts/A-2C3D4E5F");
    let detail = app.campaign.detail.as_ref().expect("the account is open");
    let account = detail.account.ready().expect("the account is loaded");
    let reconciliation = account.reconciliation.as_ref().expect("its reconciliation");
    assert_eq!(reconciliation.state, "MISMATCH");
    // The Imports screen's own account view is not touched.
    assert_eq!(app.imports.detail, None);
    assert_eq!(
        app.refresh_calls(),
        [ApiCall::Account {
            number: "A-2C3D4E5F".to_owned()
        }]
    );

    press(&mut app, &api, &typed("jj")).await;
    assert_eq!(app.campaign.detail.as_ref().map(|d| d.scroll), Some(2));
    press(&mut app, &api, &[KeyCode::Esc]).await;
    assert_eq!(app.campaign.detail, None);
    assert_eq!(listed(&app).len(), 3, "back on the same list");
}

#[tokio::test]
async fn a_groups_accounts_page_forward_and_back_by_cursor() {
    let api = FakeApi::with_long_names(Host::Complete);
    let mut app = started(&api).await;
    // SSE_ENERGY_NORTH_LEGACY: 65 accounts past the plugin's deadline.
    press(&mut app, &api, &typed("jR")).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    assert_eq!(listed(&app).len(), 50);
    press(&mut app, &api, &[KeyCode::Char('n')]).await;
    assert_eq!(listed(&app).len(), 15);
    assert_eq!(listed(&app)[0], "ERR-00051");
    press(&mut app, &api, &[KeyCode::PageDown]).await;
    let accounts = app.campaign.accounts.as_ref().expect("a group is open");
    assert_eq!(accounts.pages.number(), 2, "there is no third page");
    assert_eq!(
        app.message.as_ref().map(|m| m.text.as_str()),
        Some("This is the last page.")
    );
    press(&mut app, &api, &[KeyCode::Char('b')]).await;
    assert_eq!(listed(&app)[0], "ERR-00001");
    let pages: Vec<String> = paths(&api)
        .into_iter()
        .filter(|path| path.contains("/report/accounts"))
        .collect();
    let base = "/admin/v1/suppliers/SSE_ENERGY_NORTH_LEGACY/report/accounts?error_code=plugin_deadline_exceeded";
    assert_eq!(
        pages,
        [
            format!("{base}&limit=50"),
            format!("{base}&after=ERR-00050&limit=50"),
            format!("{base}&limit=50"),
        ]
    );
}

#[tokio::test]
async fn a_refresh_reloads_the_report_and_the_open_page() {
    let api = FakeApi::new(Host::Complete);
    let mut app = on_the_report(&api).await;
    let report = || ApiCall::Report {
        code: "OLD_CO".to_owned(),
    };
    assert_eq!(app.refresh_calls(), [report()]);
    press(&mut app, &api, &[KeyCode::Enter]).await;
    assert_eq!(
        app.refresh_calls(),
        [
            report(),
            ApiCall::ReportAccounts {
                code: "OLD_CO".to_owned(),
                group: AccountGroup::Error("invalid_postcode".to_owned()),
                after: None,
            }
        ]
    );
    press(&mut app, &api, &[KeyCode::Char('r')]).await;
    assert_eq!(listed(&app).len(), 4);
}

#[tokio::test]
async fn brackets_switch_the_supplier_of_the_report() {
    let api = FakeApi::new(Host::Complete);
    let mut app = on_the_report(&api).await;
    press(&mut app, &api, &[KeyCode::Char('j')]).await;
    assert_eq!(app.campaign.selected, 1);
    press(&mut app, &api, &[KeyCode::Char(']')]).await;
    assert_eq!(app.campaign.supplier.as_deref(), Some("BRIGHT"));
    assert_eq!(app.campaign.selected, 0, "another report starts at its top");
    assert_eq!(last_path(&api), "/admin/v1/suppliers/BRIGHT/report");
    press(&mut app, &api, &[KeyCode::Char('[')]).await;
    assert_eq!(app.campaign.supplier.as_deref(), Some("OLD_CO"));
    assert_eq!(
        app.suppliers.selected().map(|s| s.code.as_str()),
        Some("OLD_CO")
    );
}

#[tokio::test]
async fn the_selected_group_stays_selected_when_the_report_reorders_its_groups() {
    let api = FakeApi::new(Host::Complete);
    let mut app = on_the_report(&api).await;
    press(&mut app, &api, &[KeyCode::Char('j')]).await;
    // duplicate_email, now the most frequent, comes first.
    let mut report: CampaignReport = fixtures::campaign_report(&fixtures::suppliers()[0]);
    report.errors = vec![
        ErrorGroup {
            code: "duplicate_email".to_owned(),
            count: 9,
        },
        ErrorGroup {
            code: "invalid_postcode".to_owned(),
            count: 4,
        },
    ];
    app.apply(Completed {
        call: ApiCall::Report {
            code: "OLD_CO".to_owned(),
        },
        result: Ok(ApiReply::Report(Box::new(report))),
    });
    assert_eq!(app.campaign.selected, 0);
    assert_eq!(
        app.campaign.groups()[0].0,
        AccountGroup::Error("duplicate_email".to_owned())
    );
}

#[tokio::test]
async fn a_host_without_the_report_says_so() {
    let api = FakeApi::new(Host::Today);
    let app = on_the_report(&api).await;
    assert_eq!(
        app.campaign.report,
        Loadable::Unavailable("The campaign report is not available on this host yet.".to_owned())
    );
    assert_eq!(app.message, None, "not an error of the operator's");
}

#[tokio::test]
async fn an_unreachable_host_leaves_the_report_loading_and_the_host_marked() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    let down = FakeApi::new(Host::Down);
    press(&mut app, &down, &[KeyCode::Char('R')]).await;
    assert_eq!(app.campaign.report, Loadable::Loading);
    assert!(matches!(app.host, crate::app::HostStatus::Unreachable(_)));
    // And it loads once the host answers again.
    press(&mut app, &api, &[KeyCode::Char('r')]).await;
    assert!(app.campaign.report.ready().is_some());
}

#[tokio::test]
async fn a_refresh_the_host_refuses_keeps_the_report_on_screen_and_says_why() {
    let api = FakeApi::new(Host::Complete);
    let mut app = on_the_report(&api).await;
    app.apply(Completed {
        call: ApiCall::Report {
            code: "OLD_CO".to_owned(),
        },
        result: Err(crate::api::ClientError::Refused {
            status: 503,
            code: "storage_unavailable".to_owned(),
            detail: "The store is not answering.".to_owned(),
            errors: Vec::new(),
        }),
    });
    assert!(app.campaign.report.ready().is_some());
    let message = app.message.as_ref().expect("a message");
    assert!(message.is_error());
    assert_eq!(
        message.text,
        "Refreshing the campaign report of OLD_CO failed: The store is not answering. (storage_unavailable)"
    );
}
