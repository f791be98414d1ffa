//! Key-handling tests against the recording fake: what reaches the host, and when.

use super::fake::{FakeApi, Host, Request, press, settle, started, typed};
use crate::api::SupplierStatus;
use crate::app::{Action, Dialog, HostStatus, Screen};
use crate::keys::{handle_key, handle_mouse};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::json;

fn patch(code: &str, status: &str) -> Request {
    Request {
        method: "PATCH",
        path: format!("/admin/v1/suppliers/{code}"),
        body: Some(json!({ "status": status })),
    }
}

fn selected(app: &crate::app::App) -> &crate::api::Supplier {
    app.suppliers.selected().expect("a supplier is selected")
}

fn paths(api: &FakeApi) -> Vec<String> {
    api.requests().into_iter().map(|r| r.path).collect()
}

#[tokio::test]
async fn pausing_asks_first_and_sends_the_patch_only_once_confirmed() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;

    press(&mut app, &api, &[KeyCode::Char('p')]).await;
    assert!(matches!(
        app.dialog,
        Some(Dialog::ConfirmStatus { ref code, .. }) if code == "OLD_CO"
    ));
    assert_eq!(api.changes(), [], "nothing is sent before confirming");

    press(&mut app, &api, &[KeyCode::Char('y')]).await;
    assert_eq!(api.changes(), [patch("OLD_CO", "PAUSED")]);
    assert_eq!(app.dialog, None);
    // Visible at once (from the PATCH answer), and kept by the host.
    assert_eq!(selected(&app).status, SupplierStatus::Paused);
    assert_eq!(api.supplier("OLD_CO").status, SupplierStatus::Paused);
}

#[tokio::test]
async fn each_status_key_sends_its_status_to_the_selected_supplier() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    // BRIGHT is PAUSED: set it ONGOING with Enter, then COMPLETE with y.
    press(
        &mut app,
        &api,
        &[KeyCode::Char('j'), KeyCode::Char('o'), KeyCode::Enter],
    )
    .await;
    press(&mut app, &api, &typed("cy")).await;
    assert_eq!(
        api.changes(),
        [patch("BRIGHT", "ONGOING"), patch("BRIGHT", "COMPLETE")]
    );
    assert_eq!(api.supplier("BRIGHT").status, SupplierStatus::Complete);
}

#[tokio::test]
async fn escape_cancels_the_dialog_and_sends_nothing() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('p'), KeyCode::Esc]).await;
    assert_eq!(app.dialog, None);
    press(&mut app, &api, &[KeyCode::Char('c'), KeyCode::Char('n')]).await;
    assert_eq!(app.dialog, None);
    assert_eq!(api.changes(), []);
    assert_eq!(api.supplier("OLD_CO").status, SupplierStatus::Ongoing);
    assert_eq!(selected(&app).status, SupplierStatus::Ongoing);
}

#[tokio::test]
async fn other_keys_do_nothing_while_the_dialog_is_open() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('p')]).await;
    let action = handle_key(&mut app, KeyEvent::from(KeyCode::Char('q')));
    assert_eq!(action, None, "q does not quit from a dialog");
    press(&mut app, &api, &[KeyCode::Char('j'), KeyCode::Char('2')]).await;
    assert!(app.dialog.is_some());
    assert_eq!(app.suppliers.selected, 0);
    assert_eq!(app.screen, Screen::Suppliers);
    assert_eq!(api.changes(), []);
}

#[tokio::test]
async fn asking_for_the_current_status_opens_no_dialog() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('o')]).await;
    assert_eq!(app.dialog, None);
    assert_eq!(
        app.message.as_ref().map(|m| m.text.as_str()),
        Some("OLD_CO is already ONGOING.")
    );
    assert_eq!(api.changes(), []);
}

#[tokio::test]
async fn a_bulk_migration_is_posted_after_confirmation_and_shows_progress() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    // The fixture host already has a running migration for OLD_CO: m refuses.
    press(&mut app, &api, &[KeyCode::Char('m')]).await;
    assert_eq!(app.dialog, None);
    assert_eq!(api.changes(), []);

    let api = FakeApi::new(Host::Complete);
    let mut app = started(&FakeApi::new(Host::Today)).await;
    press(&mut app, &api, &[KeyCode::Char('m')]).await;
    assert!(matches!(
        app.dialog,
        Some(Dialog::ConfirmMigration { pending: 120, .. })
    ));
    assert_eq!(api.changes(), []);
    press(&mut app, &api, &[KeyCode::Char('y')]).await;
    assert_eq!(
        api.changes(),
        [Request {
            method: "POST",
            path: "/admin/v1/suppliers/OLD_CO/migrations".to_owned(),
            body: Some(json!({})),
        }]
    );
    // The next refresh polls the running migration by id.
    assert_eq!(
        app.refresh_calls().last(),
        Some(&crate::calls::ApiCall::Migration {
            code: "OLD_CO".to_owned(),
            id: "mig-0007".to_owned()
        })
    );
}

#[tokio::test]
async fn a_paused_supplier_cannot_be_migrated_from_the_console() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("jm")).await;
    assert_eq!(app.dialog, None);
    assert!(app.message.as_ref().expect("a message").is_error());
    assert_eq!(api.changes(), []);
}

#[tokio::test]
async fn imports_page_forward_and_back_by_cursor() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    assert_eq!(app.screen, Screen::Imports);
    assert_eq!(app.imports.rows().len(), 50);

    press(&mut app, &api, &[KeyCode::Char('n')]).await;
    assert_eq!(app.imports.page_number(), 2);
    assert_eq!(app.imports.rows().len(), 18);
    assert_eq!(app.imports.rows()[0].external_account_number, "ACC-2042");
    press(&mut app, &api, &[KeyCode::Char('n')]).await;
    assert_eq!(app.imports.page_number(), 2, "there is no third page");

    press(&mut app, &api, &[KeyCode::Char('b')]).await;
    assert_eq!(app.imports.page_number(), 1);
    let imports: Vec<String> = paths(&api)
        .into_iter()
        .filter(|path| path.contains("/imports"))
        .collect();
    assert_eq!(
        imports,
        [
            "/admin/v1/suppliers/OLD_CO/imports?limit=50",
            "/admin/v1/suppliers/OLD_CO/imports?limit=50&after=ACC-2041",
            "/admin/v1/suppliers/OLD_CO/imports?limit=50",
        ]
    );
}

#[tokio::test]
async fn search_and_filter_go_to_the_host_and_escape_clears_them() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    press(&mut app, &api, &typed("/acc-101q")).await;
    press(&mut app, &api, &[KeyCode::Backspace, KeyCode::Enter]).await;
    let numbers: Vec<&str> = app
        .imports
        .rows()
        .iter()
        .map(|row| row.external_account_number.as_str())
        .collect();
    assert_eq!(numbers, ["ACC-1010", "ACC-1011", "ACC-1012"]);

    press(&mut app, &api, &typed("ffff")).await;
    assert_eq!(app.imports.rows().len(), 1);
    assert_eq!(
        paths(&api).last().expect("a request"),
        "/admin/v1/suppliers/OLD_CO/imports?limit=50&state=ERRORED&q=acc-101"
    );

    press(&mut app, &api, &[KeyCode::Esc]).await;
    assert_eq!(app.imports.state_filter, None);
    assert_eq!(app.imports.search, "");
    assert_eq!(app.screen, Screen::Imports);
    press(&mut app, &api, &[KeyCode::Esc]).await;
    assert_eq!(app.screen, Screen::Suppliers);
}

#[tokio::test]
async fn enter_opens_the_account_and_escape_closes_it() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Enter]).await;
    assert_eq!(
        paths(&api).last().expect("a request"),
        "/admin/v1/accounts/A-1B2C3D4E"
    );
    let detail = app.imports.detail.as_ref().expect("the account is open");
    assert!(detail.account.ready().is_some());
    press(&mut app, &api, &typed("jjj")).await;
    assert_eq!(
        app.imports
            .detail
            .as_ref()
            .expect("the account is open")
            .scroll,
        3
    );
    press(&mut app, &api, &[KeyCode::Esc]).await;
    assert_eq!(app.imports.detail, None);
    assert_eq!(app.screen, Screen::Imports);

    // A pending account has no platform account to open.
    press(&mut app, &api, &[KeyCode::Char('j'), KeyCode::Char('j')]).await;
    let before = api.requests().len();
    press(&mut app, &api, &[KeyCode::Enter]).await;
    assert_eq!(app.imports.detail, None);
    assert_eq!(api.requests().len(), before);
}

#[tokio::test]
async fn the_event_tail_asks_only_for_events_after_the_last_one_seen() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('3')]).await;
    assert_eq!(app.events.events.len(), 4);
    assert_eq!(app.events.selected, 3, "follows the newest");
    press(&mut app, &api, &[KeyCode::Char('r')]).await;
    assert_eq!(app.events.events.len(), 4, "no event twice");
    let events: Vec<String> = paths(&api)
        .into_iter()
        .filter(|path| path.contains("/events"))
        .collect();
    assert_eq!(
        events,
        [
            "/admin/v1/events?limit=200",
            "/admin/v1/events?limit=200&after=4"
        ]
    );
    press(&mut app, &api, &[KeyCode::Char('k')]).await;
    assert!(!app.events.follow);
    press(&mut app, &api, &[KeyCode::Char('G')]).await;
    assert!(app.events.follow);
}

#[tokio::test]
async fn the_event_tail_goes_on_once_the_events_it_saw_left_the_log() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('3')]).await;
    assert_eq!(app.events.events.len(), 4);
    // The host's retention takes every event seen out of the log; then one more is made.
    api.take_out_events_through(4);
    api.log_event(
        serde_json::from_value(serde_json::json!({"seq": 5, "id": "evt-0005",
            "type": "account.created", "version": "v1", "time": "2025-03-07T12:00:00Z",
            "subject": "A-0000BEEF", "data": {}, "published_at": null}))
        .expect("an event"),
    );
    press(&mut app, &api, &[KeyCode::Char('r')]).await;
    assert_eq!(app.events.problem, None);
    let ids: Vec<&str> = app
        .events
        .events
        .iter()
        .map(|event| event.id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["evt-0001", "evt-0002", "evt-0003", "evt-0004", "evt-0005"]
    );
}

#[tokio::test]
async fn an_unreachable_host_is_reported_and_a_change_is_not_claimed() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    let down = FakeApi::new(Host::Down);
    press(&mut app, &down, &typed("py")).await;
    assert!(matches!(app.host, HostStatus::Unreachable(_)));
    let message = app.message.clone().expect("a message");
    assert!(message.is_error());
    assert!(
        message.text.contains("no answer from the host"),
        "{message:?}"
    );
    assert_eq!(selected(&app).status, SupplierStatus::Ongoing);
    // And it recovers on the next answer, which also takes the message away.
    press(&mut app, &api, &[KeyCode::Char('r')]).await;
    assert_eq!(app.host, HostStatus::Connected);
    assert_eq!(app.message, None);
}

#[tokio::test]
async fn screens_switch_by_number_and_tab_and_quit_is_q_or_ctrl_c() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('4')]).await;
    assert_eq!(app.screen, Screen::Plugins);
    press(&mut app, &api, &[KeyCode::Tab]).await;
    assert_eq!(app.screen, Screen::Campaign);
    press(&mut app, &api, &[KeyCode::Tab]).await;
    assert_eq!(app.screen, Screen::Suppliers);
    press(&mut app, &api, &[KeyCode::BackTab]).await;
    assert_eq!(app.screen, Screen::Campaign);
    press(&mut app, &api, &[KeyCode::Char('2'), KeyCode::Char('5')]).await;
    assert_eq!(app.screen, Screen::Campaign);
    assert_eq!(app.campaign.supplier.as_deref(), Some("OLD_CO"));
    assert_eq!(
        handle_key(&mut app, KeyEvent::from(KeyCode::Char('q'))),
        Some(Action::Quit)
    );
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(handle_key(&mut app, ctrl_c), Some(Action::Quit));
    assert!(settle(&mut app, &api, Some(Action::Quit)).await);
}

#[tokio::test]
async fn q_is_typed_into_the_search_not_quit() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Char('/')]).await;
    assert_eq!(
        handle_key(&mut app, KeyEvent::from(KeyCode::Char('q'))),
        None
    );
    assert_eq!(app.imports.search_input.as_deref(), Some("q"));
}

#[tokio::test]
async fn the_help_overlay_opens_with_question_mark_and_closes_with_escape() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('?')]).await;
    assert!(app.show_help);
    press(&mut app, &api, &[KeyCode::Char('p')]).await;
    assert_eq!(app.dialog, None, "keys under the overlay are not acted on");
    press(&mut app, &api, &[KeyCode::Esc]).await;
    assert!(!app.show_help);
}

#[tokio::test]
async fn the_mouse_wheel_moves_the_selection() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    let wheel = |kind| MouseEvent {
        kind,
        column: 10,
        row: 5,
        modifiers: KeyModifiers::NONE,
    };
    let action = handle_mouse(&mut app, wheel(MouseEventKind::ScrollDown));
    settle(&mut app, &api, action).await;
    assert_eq!(selected(&app).code, "BRIGHT");
    let action = handle_mouse(&mut app, wheel(MouseEventKind::ScrollUp));
    settle(&mut app, &api, action).await;
    assert_eq!(selected(&app).code, "OLD_CO");
}

#[tokio::test]
async fn a_refresh_keeps_the_selected_supplier_by_code() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("jj")).await;
    assert_eq!(selected(&app).code, "NORTHWIND");
    press(&mut app, &api, &[KeyCode::Char('r')]).await;
    assert_eq!(selected(&app).code, "NORTHWIND");
}
