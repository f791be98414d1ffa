//! Drawing: [`render`] is a pure function of the [`App`] state. It lays out the tab bar, the
//! host banner, the current screen, the message line and the footer of keys, then the overlays
//! (help, confirmation dialogs) on top.

mod account;
mod amounts;
mod campaign;
mod columns;
mod events;
mod imports;
mod overlays;
mod plugins;
mod suppliers;

pub use account::account_line_count;

use crate::app::{App, HostStatus, Loadable, Screen};
use columns::fit_line;
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// Draws the whole console.
pub fn render(frame: &mut Frame, app: &App) {
    let banner = host_banner(app);
    let [header, banner_area, body, message, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(u16::from(banner.is_some())),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());

    render_header(frame, app, header);
    if let Some(banner) = banner {
        frame.render_widget(
            fit_line(banner, usize::from(banner_area.width)),
            banner_area,
        );
    }
    match app.screen {
        Screen::Suppliers => suppliers::render(frame, app, body),
        Screen::Imports => match &app.imports.detail {
            Some(detail) => account::render(frame, detail, body),
            None => imports::render(frame, app, body),
        },
        Screen::Events => events::render(frame, app, body),
        Screen::Plugins => plugins::render(frame, app, body),
        Screen::Campaign => match &app.campaign.detail {
            Some(detail) => account::render(frame, detail, body),
            None => campaign::render(frame, app, body),
        },
    }
    if let Some(text) = &app.message {
        let style = if text.is_error() {
            Style::new().fg(Color::Red)
        } else {
            Style::new().fg(Color::Green)
        };
        let line = Line::styled(format!(" {}", text.text), style);
        frame.render_widget(fit_line(line, usize::from(message.width)), message);
    }
    let keys = key_line(&footer_keys(app));
    frame.render_widget(fit_line(keys, usize::from(footer.width)), footer);

    if app.show_help {
        overlays::render_help(frame, app);
    }
    if let Some(dialog) = &app.dialog {
        overlays::render_dialog(frame, dialog);
    }
}

fn render_header(frame: &mut Frame, app: &App, area: Rect) {
    let (mark, style) = match app.host {
        HostStatus::Connecting => ("connecting", Style::new().fg(Color::Yellow)),
        HostStatus::Connected => ("connected", Style::new().fg(Color::Green)),
        HostStatus::Unreachable(_) => ("unreachable", Style::new().fg(Color::Red)),
        HostStatus::Unauthorized(_) => ("key refused", Style::new().fg(Color::Red)),
    };
    let mark = Span::styled(format!("● {mark} "), style);
    let with_url = Line::from(vec![Span::raw(format!("{} ", app.host_url)), mark.clone()]);
    let width = usize::from(area.width);
    let fits = |tabs: &Line, status: &Line| tabs.width() + 1 + status.width() <= width;
    // The tabs spaced out, then closer together; the host's address, then only its mark, then
    // nothing, so that the status never runs over the tabs (the red line under them says when
    // the host is away).
    let spaced = tab_line(app.screen, " ");
    let close = tab_line(app.screen, "");
    let (tabs, status) = if fits(&spaced, &with_url) {
        (spaced, Some(with_url))
    } else if fits(&spaced, &Line::from(mark.clone())) {
        (spaced, Some(Line::from(mark)))
    } else if fits(&close, &Line::from(mark.clone())) {
        (close, Some(Line::from(mark)))
    } else {
        (close, None)
    };
    frame.render_widget(fit_line(tabs, width), area);
    if let Some(status) = status {
        frame.render_widget(status.alignment(Alignment::Right), area);
    }
}

/// The name of the console, then a tab a screen, `gap` between them; the current one marked.
fn tab_line(current: Screen, gap: &'static str) -> Line<'static> {
    let mut spans = vec![Span::styled(" Ferry ", Style::new().bold().reversed())];
    for (index, screen) in Screen::ALL.iter().enumerate() {
        let (label, style) = if *screen == current {
            (
                format!("[{} {}]", index + 1, screen.title()),
                Style::new().bold().fg(Color::Yellow).reversed(),
            )
        } else {
            (format!(" {} {} ", index + 1, screen.title()), Style::new())
        };
        spans.push(Span::raw(gap));
        spans.push(Span::styled(label, style));
    }
    Line::from(spans)
}

/// The red line under the tabs while the host cannot be used.
fn host_banner(app: &App) -> Option<Line<'static>> {
    let text = match &app.host {
        HostStatus::Unreachable(reason) => format!(
            " Cannot reach the Ferry host at {} ({reason}). Retrying every {}s; data shown may be stale.",
            app.host_url, app.refresh_seconds
        ),
        HostStatus::Unauthorized(reason) => format!(
            " The host refused the operator key ({reason}). Check --operator-key / FERRY_OPERATOR_KEY."
        ),
        HostStatus::Connecting | HostStatus::Connected => return None,
    };
    Some(Line::styled(
        text,
        Style::new().fg(Color::White).bg(Color::Red).bold(),
    ))
}

/// A key and what it does.
pub(crate) type KeyHint = (&'static str, &'static str);

/// The keys of whatever has focus, for the footer.
fn footer_keys(app: &App) -> Vec<KeyHint> {
    if app.dialog.is_some() {
        return vec![("y/Enter", "confirm"), ("n/Esc", "cancel")];
    }
    if app.show_help {
        return vec![("Esc/?", "close help"), ("q", "quit")];
    }
    if app.screen == Screen::Imports && app.imports.search_input.is_some() {
        return vec![
            ("Enter", "search"),
            ("Esc", "cancel"),
            ("Backspace", "delete"),
        ];
    }
    let mut keys = screen_keys(app);
    keys.extend([("?", "help"), ("q", "quit")]);
    keys
}

/// The keys particular to the current screen (and view within it).
pub(crate) fn screen_keys(app: &App) -> Vec<KeyHint> {
    match app.screen {
        Screen::Suppliers => vec![
            ("↑↓/jk", "move"),
            ("Enter", "imports"),
            ("o/p/c", "set ONGOING/PAUSED/COMPLETE"),
            ("m", "migrate pending"),
            ("R", "campaign"),
            ("r", "refresh"),
        ],
        Screen::Imports if app.imports.detail.is_some() => vec![
            ("↑↓/jk", "scroll"),
            ("PgUp/PgDn", "page"),
            ("Esc", "back to imports"),
        ],
        Screen::Imports => vec![
            ("↑↓/jk", "move"),
            ("Enter", "account"),
            ("/", "search"),
            ("f/F", "state"),
            ("n/b", "next/prev page"),
            ("[/]", "supplier"),
            ("Esc", "clear/back"),
        ],
        Screen::Events => vec![
            ("↑↓/jk", "move"),
            ("G", "follow newest"),
            ("g", "oldest"),
            ("Esc", "back"),
        ],
        Screen::Plugins => vec![("↑↓/jk", "move"), ("r", "refresh"), ("Esc", "back")],
        Screen::Campaign if app.campaign.detail.is_some() => vec![
            ("↑↓/jk", "scroll"),
            ("PgUp/PgDn", "page"),
            ("Esc", "back to the accounts"),
        ],
        Screen::Campaign if app.campaign.accounts.is_some() => vec![
            ("↑↓/jk", "move"),
            ("Enter", "account"),
            ("n/b", "next/prev page"),
            ("Esc", "back to the report"),
        ],
        Screen::Campaign => vec![
            ("↑↓/jk", "move"),
            ("Enter", "list the accounts"),
            ("[/]", "supplier"),
            ("r", "refresh"),
            ("Esc", "back"),
        ],
    }
}

/// The colour a reconciliation state is shown in.
pub(crate) fn reconciliation_style(state: &str) -> Style {
    match state {
        "RECONCILED" => Style::new().fg(Color::Green),
        "MISMATCH" => Style::new().fg(Color::Red),
        _ => Style::new().fg(Color::Yellow),
    }
}

/// `key description  key description ...`, keys highlighted.
fn key_line(keys: &[KeyHint]) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    for (key, description) in keys {
        spans.push(Span::styled(
            *key,
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::raw(format!(" {description}  ")));
    }
    Line::from(spans)
}

/// A bordered block with a title.
fn titled(title: impl Into<String>) -> Block<'static> {
    Block::bordered().title(Span::styled(
        format!(" {} ", title.into()),
        Style::new().bold(),
    ))
}

/// The bottom line of a list read page by page: `50 rows · n: next page · b: previous page`.
fn page_footer(rows: usize, has_next: bool, is_first: bool) -> Line<'static> {
    let more = if has_next {
        "n: next page"
    } else {
        "last page"
    };
    let back = if is_first { "" } else { " · b: previous page" };
    Line::from(format!(" {rows} rows · {more}{back} ")).right_aligned()
}

/// What `loadable` holds once it is ready; until then draws, under `title`, what there is to
/// say instead (waiting for `what`, not available, or why it could not be loaded) and returns
/// `None`.
fn ready_or_say<'a, T>(
    frame: &mut Frame,
    app: &App,
    area: Rect,
    title: String,
    loadable: &'a Loadable<T>,
    what: &str,
) -> Option<&'a T> {
    let text = match loadable {
        Loadable::Ready(value) => return Some(value),
        Loadable::Loading => waiting_text(app, what),
        Loadable::Unavailable(reason) => reason.clone(),
        Loadable::Failed(reason) => format!("Could not load {what}: {reason}"),
    };
    placeholder(frame, area, titled(title), text);
    None
}

/// A message in place of a list: loading, empty, unavailable or failed.
fn placeholder(
    frame: &mut Frame,
    area: Rect,
    block: Block<'static>,
    text: impl Into<Text<'static>>,
) {
    frame.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .block(block)
            .style(Style::new().italic()),
        area,
    );
}

/// The suppliers when they are loaded and there is at least one; otherwise draws what there
/// is to say instead (loading, failed, `empty`) under `title` and returns `None`.
fn loaded_suppliers<'a>(
    frame: &mut Frame,
    app: &'a App,
    area: Rect,
    title: &str,
    empty: &str,
) -> Option<&'a [crate::api::Supplier]> {
    match &app.suppliers.list {
        Loadable::Ready(list) if !list.is_empty() => Some(list),
        Loadable::Ready(_) => {
            placeholder(frame, area, titled(title), empty.to_owned());
            None
        }
        Loadable::Loading => {
            placeholder(frame, area, titled(title), loading_text(app, "suppliers"));
            None
        }
        Loadable::Unavailable(reason) | Loadable::Failed(reason) => {
            let text = format!("Could not load the suppliers: {reason}");
            placeholder(frame, area, titled(title), text);
            None
        }
    }
}

/// What to say while something is loading: waiting for the host if it is away.
fn loading_text(app: &App, what: &str) -> String {
    match &app.host {
        HostStatus::Unreachable(_) => format!(
            "Waiting for the host at {} to answer… Is `ferry serve` running there? Check --url / FERRY_URL.",
            app.host_url
        ),
        HostStatus::Unauthorized(_) => format!("Cannot load {what}: the operator key was refused."),
        HostStatus::Connecting | HostStatus::Connected => format!("Loading {what}…"),
    }
}

/// What to say in a box whose content has not arrived yet: why, when the host is away.
fn waiting_text(app: &App, what: &str) -> String {
    match &app.host {
        HostStatus::Unreachable(reason) => format!(
            "Cannot reach the host: {reason} — retrying every {}s to load {what}.",
            app.refresh_seconds
        ),
        HostStatus::Unauthorized(_) => format!("Cannot load {what}: the operator key was refused."),
        HostStatus::Connecting | HostStatus::Connected => format!("Loading {what}…"),
    }
}

/// An RFC 3339 time as `YYYY-MM-DD HH:MM:SS` (UTC as sent); anything else unchanged, `-` if empty.
pub(crate) fn time(text: &str) -> String {
    if text.is_empty() {
        return "-".to_owned();
    }
    match chrono::DateTime::parse_from_rfc3339(text) {
        Ok(moment) => moment.format("%Y-%m-%d %H:%M:%S").to_string(),
        Err(_) => text.to_owned(),
    }
}

/// A byte count for people.
pub(crate) fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes < KIB {
        format!("{bytes} B")
    } else if bytes < MIB {
        format!("{}.{} KiB", bytes / KIB, bytes % KIB * 10 / KIB)
    } else {
        format!("{}.{} MiB", bytes / MIB, bytes % MIB * 10 / MIB)
    }
}

/// The first `length` characters of a digest, marked as shortened.
pub(crate) fn short_digest(digest: &str, length: usize) -> String {
    if digest.chars().count() <= length {
        digest.to_owned()
    } else {
        let head: String = digest.chars().take(length).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_utc_without_fractions() {
        assert_eq!(time("2025-03-01T10:15:00.123456Z"), "2025-03-01 10:15:00");
        assert_eq!(time("2025-03-01"), "2025-03-01");
        assert_eq!(time(""), "-");
    }

    #[test]
    fn sizes_use_binary_units_with_one_decimal() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(3 * 1024 * 1024 + 1024 * 1024 / 2), "3.5 MiB");
    }

    #[test]
    fn digests_are_shortened_with_a_mark() {
        assert_eq!(short_digest("abcdef", 4), "abcd…");
        assert_eq!(short_digest("abc", 4), "abc");
    }
}
