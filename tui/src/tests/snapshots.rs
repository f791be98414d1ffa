//! Snapshot tests: every screen and dialog drawn on a 120×32 test terminal from the fixtures,
//! reached with the same keys an operator would press; the list screens and the account page
//! also at 80 and 200 columns with long codes, types and references (the account page whole,
//! on a terminal tall enough).

use super::fake::{FakeApi, Host, press, started, typed};
use crate::app::App;
use crate::ui::render;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

/// Rows that show the fixture account's page whole, with the tab bar, message line and footer.
const ACCOUNT_PAGE_HEIGHT: u16 = 68;

fn draw(app: &App) -> String {
    draw_at(app, 120, 32)
}

fn draw_at(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal.draw(|frame| render(frame, app)).expect("draw");
    terminal.backend().to_string()
}

#[tokio::test]
async fn suppliers_with_a_running_migration() {
    let api = FakeApi::new(Host::Complete);
    let app = started(&api).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn suppliers_on_a_host_whose_disk_is_below_the_watermark() {
    let api = FakeApi::new(Host::Complete);
    api.fill_disk();
    let app = started(&api).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn suppliers_without_a_migration() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('j')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn suppliers_status_confirmation() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('p')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn suppliers_after_pausing() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("py")).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn suppliers_migration_confirmation() {
    let api = FakeApi::new(Host::Today);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('m')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn suppliers_with_long_codes_at_80_columns() {
    let api = FakeApi::with_long_names(Host::Complete);
    let app = started(&api).await;
    insta::assert_snapshot!(draw_at(&app, 80, 24));
}

#[tokio::test]
async fn suppliers_with_long_codes_at_200_columns() {
    let api = FakeApi::with_long_names(Host::Complete);
    let app = started(&api).await;
    insta::assert_snapshot!(draw_at(&app, 200, 24));
}

#[tokio::test]
async fn suppliers_while_the_host_is_unreachable() {
    // BRIGHT's migrations were never loaded: the host went away first.
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    let down = FakeApi::new(Host::Down);
    press(&mut app, &down, &[KeyCode::Char('j')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn help_overlay() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('?')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn imports_first_page() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn imports_filtered_by_state() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    // All → PENDING → IN_PROGRESS → PROCESSED → ERRORED.
    press(&mut app, &api, &[KeyCode::Enter]).await;
    press(&mut app, &api, &typed("ffff")).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn imports_search_being_typed() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    press(&mut app, &api, &typed("/acc-101")).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn imports_searched() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    press(&mut app, &api, &typed("/acc-101")).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn imports_not_available_on_todays_host() {
    let api = FakeApi::new(Host::Today);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn account_detail() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Enter]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn account_detail_scrolled_to_the_rest_of_the_document() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Enter]).await;
    press(&mut app, &api, &[KeyCode::PageDown; 3]).await;
    insta::assert_snapshot!(draw(&app));
}

/// The whole page, tall enough to show every section.
#[tokio::test]
async fn account_detail_at_80_columns() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Enter]).await;
    insta::assert_snapshot!(draw_at(&app, 80, ACCOUNT_PAGE_HEIGHT));
}

/// The whole page, tall enough to show every section.
#[tokio::test]
async fn account_detail_at_200_columns() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Enter]).await;
    insta::assert_snapshot!(draw_at(&app, 200, ACCOUNT_PAGE_HEIGHT));
}

#[tokio::test]
async fn events_with_the_selected_payload() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('3'), KeyCode::Char('k')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn events_with_long_types_at_80_columns() {
    let api = FakeApi::with_long_names(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('3')]).await;
    insta::assert_snapshot!(draw_at(&app, 80, 24));
}

#[tokio::test]
async fn events_with_long_types_at_200_columns() {
    let api = FakeApi::with_long_names(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('3')]).await;
    insta::assert_snapshot!(draw_at(&app, 200, 24));
}

#[tokio::test]
async fn events_not_available_on_todays_host() {
    let api = FakeApi::new(Host::Today);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('3')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn plugins() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('4')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn plugins_with_long_names_at_80_columns() {
    let api = FakeApi::with_long_names(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('4'), KeyCode::Char('j')]).await;
    insta::assert_snapshot!(draw_at(&app, 80, 24));
}

#[tokio::test]
async fn plugins_with_long_names_at_200_columns() {
    let api = FakeApi::with_long_names(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('4'), KeyCode::Char('j')]).await;
    insta::assert_snapshot!(draw_at(&app, 200, 24));
}

#[tokio::test]
async fn plugins_of_a_supplier_without_one() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('4'), KeyCode::Char('j')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_report() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('R')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_report_at_80_columns() {
    let api = FakeApi::with_long_names(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("jR")).await;
    insta::assert_snapshot!(draw_at(&app, 80, 24));
}

#[tokio::test]
async fn campaign_error_group_accounts() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('R'), KeyCode::Enter]).await;
    press(&mut app, &api, &typed("jj")).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_error_group_accounts_at_80_columns() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('R'), KeyCode::Enter]).await;
    press(&mut app, &api, &typed("jj")).await;
    insta::assert_snapshot!(draw_at(&app, 80, 24));
}

#[tokio::test]
async fn campaign_mismatched_accounts() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("RG")).await;
    press(&mut app, &api, &[KeyCode::Enter]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_mismatched_account_detail() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("RG")).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Enter]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_second_page_of_a_group() {
    let api = FakeApi::with_long_names(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("jR")).await;
    press(&mut app, &api, &[KeyCode::Enter, KeyCode::Char('n')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_not_available_on_todays_host() {
    let api = FakeApi::new(Host::Today);
    let mut app = started(&api).await;
    press(&mut app, &api, &[KeyCode::Char('R')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_while_the_host_is_unreachable() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    let down = FakeApi::new(Host::Down);
    press(&mut app, &down, &[KeyCode::Char('R')]).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn campaign_help_overlay() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    press(&mut app, &api, &typed("R?")).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn unreachable_host_before_any_answer() {
    let api = FakeApi::new(Host::Down);
    let app = started(&api).await;
    insta::assert_snapshot!(draw(&app));
}

#[tokio::test]
async fn unreachable_host_after_data_arrived() {
    let api = FakeApi::new(Host::Complete);
    let mut app = started(&api).await;
    let down = FakeApi::new(Host::Down);
    press(&mut app, &down, &[KeyCode::Char('r')]).await;
    insta::assert_snapshot!(draw(&app));
}
