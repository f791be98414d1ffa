//! Key and mouse handling: a pure function from the state and one input event to a changed
//! state and, at most, one [`Action`] for the event loop (quit, refresh, or an admin call).
//!
//! Nothing here talks to the host: a status change only becomes an [`ApiCall::SetStatus`]
//! once the operator confirms the dialog.

use crate::api::{ImportState, SupplierStatus};
use crate::app::{AccountView, Action, App, Dialog, Loadable, Screen};
use crate::calls::ApiCall;
use crate::ui;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};

/// Lines scrolled by PageUp/PageDown in the account detail.
const DETAIL_PAGE: isize = 10;

/// Handles one key press.
pub fn handle_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    if app.screen == Screen::Imports && app.imports.search_input.is_some() {
        return search_key(app, key);
    }
    if app.dialog.is_some() {
        return dialog_key(app, key);
    }
    if app.show_help {
        return match key.code {
            KeyCode::Char('q') => Some(Action::Quit),
            KeyCode::Esc | KeyCode::Char('?') => {
                app.show_help = false;
                None
            }
            _ => None,
        };
    }
    match key.code {
        KeyCode::Char('q') => return Some(Action::Quit),
        KeyCode::Char('?') => {
            app.show_help = true;
            return None;
        }
        KeyCode::Char(digit @ '1'..='5') => {
            let index = usize::from(digit as u8 - b'1');
            return app.show(Screen::ALL[index]);
        }
        KeyCode::Tab => return app.show(app.screen.next()),
        KeyCode::BackTab => return app.show(app.screen.previous()),
        KeyCode::Char('r') => return Some(Action::Refresh),
        _ => {}
    }
    match app.screen {
        Screen::Suppliers => suppliers_key(app, key),
        Screen::Imports => match app.imports.detail {
            Some(_) => account_key(&mut app.imports.detail, key),
            None => imports_key(app, key),
        },
        Screen::Events => events_key(app, key),
        Screen::Plugins => plugins_key(app, key),
        Screen::Campaign if app.campaign.detail.is_some() => {
            account_key(&mut app.campaign.detail, key)
        }
        Screen::Campaign if app.campaign.accounts.is_some() => group_accounts_key(app, key),
        Screen::Campaign => campaign_key(app, key),
    }
}

/// Mouse wheel scrolls whatever list or text is in front; other mouse events are ignored.
pub fn handle_mouse(app: &mut App, mouse: MouseEvent) -> Option<Action> {
    let code = match mouse.kind {
        MouseEventKind::ScrollDown => KeyCode::Down,
        MouseEventKind::ScrollUp => KeyCode::Up,
        _ => return None,
    };
    if app.dialog.is_some() || app.show_help || app.imports.search_input.is_some() {
        return None;
    }
    handle_key(app, KeyEvent::from(code))
}

/// A movement key as a change of selection: `Some(delta)` or, for Home/End, a jump.
enum Movement {
    By(isize),
    Top,
    Bottom,
}

fn movement(key: &KeyEvent) -> Option<Movement> {
    match key.code {
        KeyCode::Down | KeyCode::Char('j') => Some(Movement::By(1)),
        KeyCode::Up | KeyCode::Char('k') => Some(Movement::By(-1)),
        KeyCode::Home | KeyCode::Char('g') => Some(Movement::Top),
        KeyCode::End | KeyCode::Char('G') => Some(Movement::Bottom),
        _ => None,
    }
}

/// The new index after a movement in a list of `len` items.
fn moved(current: usize, len: usize, movement: &Movement) -> usize {
    let last = len.saturating_sub(1);
    match movement {
        Movement::By(delta) => current.saturating_add_signed(*delta).min(last),
        Movement::Top => 0,
        Movement::Bottom => last,
    }
}

/// Moves the shared supplier selection; true when it changed.
fn move_supplier(app: &mut App, movement: &Movement) -> bool {
    let before = app.suppliers.selected;
    app.suppliers.selected = moved(before, app.suppliers.all().len(), movement);
    app.suppliers.selected != before
}

fn suppliers_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    if let Some(movement) = movement(&key) {
        if !move_supplier(app, &movement) {
            return None;
        }
        let code = app.suppliers.selected()?.code.clone();
        return Some(Action::Call(app.migration_call(&code)));
    }
    let supplier = app.suppliers.selected()?.clone();
    match key.code {
        KeyCode::Enter => {
            app.imports.show_supplier(&supplier.code);
            app.show(Screen::Imports)
        }
        KeyCode::Char('R') => {
            app.campaign.show_supplier(&supplier.code);
            app.show(Screen::Campaign)
        }
        KeyCode::Char(letter @ ('o' | 'p' | 'c')) => {
            let to = match letter {
                'o' => SupplierStatus::Ongoing,
                'p' => SupplierStatus::Paused,
                _ => SupplierStatus::Complete,
            };
            if supplier.status == to {
                app.say_info(format!("{} is already {}.", supplier.code, supplier.status));
            } else {
                app.message = None;
                app.dialog = Some(Dialog::ConfirmStatus {
                    code: supplier.code,
                    name: supplier.name,
                    from: supplier.status,
                    to,
                });
            }
            None
        }
        KeyCode::Char('m') => {
            let running = matches!(
                app.suppliers.migrations.get(&supplier.code),
                Some(Loadable::Ready(Some(migration))) if migration.is_running()
            );
            let pending = supplier.count(ImportState::Pending);
            if running {
                app.say_error(format!(
                    "A migration is already running for {}.",
                    supplier.code
                ));
            } else if supplier.status != SupplierStatus::Ongoing {
                app.say_error(format!(
                    "{} is {}: set it ONGOING (o) before migrating.",
                    supplier.code, supplier.status
                ));
            } else if pending == 0 {
                app.say_info(format!(
                    "{} has no pending accounts to migrate.",
                    supplier.code
                ));
            } else {
                app.message = None;
                app.dialog = Some(Dialog::ConfirmMigration {
                    code: supplier.code,
                    name: supplier.name,
                    pending,
                });
            }
            None
        }
        KeyCode::Esc => {
            app.message = None;
            None
        }
        _ => None,
    }
}

fn dialog_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    match key.code {
        KeyCode::Char('y') | KeyCode::Enter => match app.dialog.take()? {
            Dialog::ConfirmStatus { code, to, .. } => {
                Some(Action::Call(ApiCall::SetStatus { code, status: to }))
            }
            Dialog::ConfirmMigration { code, .. } => {
                Some(Action::Call(ApiCall::StartMigration { code }))
            }
        },
        KeyCode::Char('n') | KeyCode::Esc => {
            app.dialog = None;
            None
        }
        _ => None,
    }
}

fn search_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    let input = app.imports.search_input.as_mut()?;
    match key.code {
        KeyCode::Char(letter) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
            input.push(letter);
            None
        }
        KeyCode::Backspace => {
            input.pop();
            None
        }
        KeyCode::Enter => {
            let search = input.trim().to_owned();
            app.imports.search_input = None;
            let state = app.imports.state_filter;
            app.imports.filter(state, search).map(Action::Call)
        }
        KeyCode::Esc => {
            app.imports.search_input = None;
            None
        }
        _ => None,
    }
}

/// The state filter after `current`, in the order All, PENDING, ..., CANCELLED, All.
fn cycle_filter(current: Option<ImportState>, forward: bool) -> Option<ImportState> {
    let mut choices = vec![None];
    choices.extend(ImportState::ALL.map(Some));
    let index = choices
        .iter()
        .position(|choice| *choice == current)
        .unwrap_or(0);
    let len = choices.len();
    let next = if forward {
        (index + 1) % len
    } else {
        (index + len - 1) % len
    };
    choices[next]
}

fn imports_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    if let Some(movement) = movement(&key) {
        let imports = &mut app.imports;
        imports.selected = moved(imports.selected, imports.rows().len(), &movement);
        return None;
    }
    match key.code {
        KeyCode::Enter => {
            let row = app.imports.rows().get(app.imports.selected)?.clone();
            open_account(
                app,
                Screen::Imports,
                row.platform_account_number,
                &row.external_account_number,
                row.state.as_str(),
            )
        }
        KeyCode::Char('/') => {
            app.imports.search_input = Some(app.imports.search.clone());
            None
        }
        KeyCode::Char(letter @ ('f' | 'F')) => {
            let state = cycle_filter(app.imports.state_filter, letter == 'f');
            let search = app.imports.search.clone();
            app.imports.filter(state, search).map(Action::Call)
        }
        KeyCode::Char('n') | KeyCode::PageDown => {
            let call = app.imports.next_page();
            next_page(app, call)
        }
        KeyCode::Char('b') | KeyCode::PageUp => app.imports.previous_page().map(Action::Call),
        KeyCode::Char(letter @ ('[' | ']')) => {
            let code = next_supplier(app, letter)?;
            app.imports.show_supplier(&code);
            app.imports.call().map(Action::Call)
        }
        KeyCode::Esc => {
            if app.imports.state_filter.is_some() || !app.imports.search.is_empty() {
                app.imports.filter(None, String::new()).map(Action::Call)
            } else {
                app.show(Screen::Suppliers)
            }
        }
        _ => None,
    }
}

/// The call that loads the next page of a list, or, when there is none, says so.
fn next_page(app: &mut App, call: Option<ApiCall>) -> Option<Action> {
    if call.is_none() {
        app.say_info("This is the last page.");
    }
    call.map(Action::Call)
}

/// `[` or `]`: selects the supplier before or after the selected one; its code, when there is
/// one there.
fn next_supplier(app: &mut App, letter: char) -> Option<String> {
    let delta = if letter == ']' { 1 } else { -1 };
    if !move_supplier(app, &Movement::By(delta)) {
        return None;
    }
    Some(app.suppliers.selected()?.code.clone())
}

/// Opens the account of a row of the Imports or the Campaign screen, when it has one.
fn open_account(
    app: &mut App,
    screen: Screen,
    platform_account_number: Option<String>,
    external_account_number: &str,
    state: &str,
) -> Option<Action> {
    let Some(number) = platform_account_number else {
        app.say_info(format!(
            "{external_account_number} has no platform account yet ({state})."
        ));
        return None;
    };
    let view = Some(AccountView::new(number.clone()));
    match screen {
        Screen::Campaign => app.campaign.detail = view,
        _ => app.imports.detail = view,
    }
    Some(Action::Call(ApiCall::Account { number }))
}

/// Keys of an open account: scrolling, and Esc closes it.
fn account_key(view: &mut Option<AccountView>, key: KeyEvent) -> Option<Action> {
    let detail = view.as_mut()?;
    let lines = match &detail.account {
        Loadable::Ready(account) => ui::account_line_count(account),
        _ => 0,
    };
    let scroll = usize::from(detail.scroll);
    let scroll = match key.code {
        KeyCode::Esc | KeyCode::Backspace => {
            *view = None;
            return None;
        }
        KeyCode::PageDown => moved(scroll, lines, &Movement::By(DETAIL_PAGE)),
        KeyCode::PageUp => moved(scroll, lines, &Movement::By(-DETAIL_PAGE)),
        _ => match movement(&key) {
            Some(movement) => moved(scroll, lines, &movement),
            None => return None,
        },
    };
    detail.scroll = u16::try_from(scroll).unwrap_or(u16::MAX);
    None
}

fn events_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    if let Some(movement) = movement(&key) {
        let events = &mut app.events;
        events.selected = moved(events.selected, events.events.len(), &movement);
        events.follow = events.selected + 1 >= events.events.len();
        return None;
    }
    match key.code {
        KeyCode::Esc => app.show(Screen::Suppliers),
        _ => None,
    }
}

/// The report's screen: moving through its groups, Enter lists the selected group's accounts.
fn campaign_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    if let Some(movement) = movement(&key) {
        let campaign = &mut app.campaign;
        campaign.selected = moved(campaign.selected, campaign.groups().len(), &movement);
        return None;
    }
    match key.code {
        KeyCode::Enter => app.campaign.open_selected_group().map(Action::Call),
        KeyCode::Char(letter @ ('[' | ']')) => {
            let code = next_supplier(app, letter)?;
            app.campaign.show_supplier(&code);
            app.campaign.report_call().map(Action::Call)
        }
        KeyCode::Esc => app.show(Screen::Suppliers),
        _ => None,
    }
}

/// The accounts of one group of the report, page by page.
fn group_accounts_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    let accounts = app.campaign.accounts.as_mut()?;
    if let Some(movement) = movement(&key) {
        accounts.selected = moved(accounts.selected, accounts.rows().len(), &movement);
        return None;
    }
    match key.code {
        KeyCode::Enter => {
            let row = accounts.rows().get(accounts.selected)?.clone();
            open_account(
                app,
                Screen::Campaign,
                row.platform_account_number,
                &row.external_account_number,
                &row.state,
            )
        }
        KeyCode::Char('n') | KeyCode::PageDown => {
            let call = app.campaign.next_page();
            next_page(app, call)
        }
        KeyCode::Char('b') | KeyCode::PageUp => app.campaign.previous_page().map(Action::Call),
        KeyCode::Esc | KeyCode::Backspace => {
            app.campaign.accounts = None;
            None
        }
        _ => None,
    }
}

fn plugins_key(app: &mut App, key: KeyEvent) -> Option<Action> {
    if let Some(movement) = movement(&key) {
        if !move_supplier(app, &movement) {
            return None;
        }
        let code = app.suppliers.selected()?.code.clone();
        return Some(Action::Call(ApiCall::Plugin { code }));
    }
    match key.code {
        KeyCode::Esc => app.show(Screen::Suppliers),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_filter_cycles_through_every_state_and_back_to_all() {
        let mut seen = Vec::new();
        let mut current = None;
        for _ in 0..6 {
            current = cycle_filter(current, true);
            seen.push(current);
        }
        assert_eq!(
            seen,
            [
                Some(ImportState::Pending),
                Some(ImportState::InProgress),
                Some(ImportState::Processed),
                Some(ImportState::Errored),
                Some(ImportState::Cancelled),
                None
            ]
        );
        assert_eq!(cycle_filter(None, false), Some(ImportState::Cancelled));
    }

    #[test]
    fn movement_stays_inside_the_list() {
        assert_eq!(moved(0, 3, &Movement::By(-1)), 0);
        assert_eq!(moved(2, 3, &Movement::By(1)), 2);
        assert_eq!(moved(1, 3, &Movement::Bottom), 2);
        assert_eq!(moved(0, 0, &Movement::By(1)), 0);
    }
}
