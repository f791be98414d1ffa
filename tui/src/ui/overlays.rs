//! What is drawn over a screen: the `?` help listing the keys, and the confirmation dialogs
//! shown before anything is changed on the host.

use super::{KeyHint, screen_keys, suppliers::status_style};
use crate::app::{App, Dialog};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// Keys that work on every screen.
const GLOBAL_KEYS: [KeyHint; 9] = [
    ("1 2 3 4 5", "Suppliers, Imports, Events, Plugins, Campaign"),
    ("Tab/S-Tab", "next / previous screen"),
    ("↑↓ j k", "move (mouse wheel too)"),
    ("g G", "first / last"),
    ("Enter", "open"),
    ("Esc", "back / cancel"),
    ("r", "refresh now"),
    ("?", "this help"),
    ("q Ctrl-C", "quit"),
];

/// A centred box of at most `width` × `height`, within the frame.
fn centred(frame: &Frame, width: u16, height: u16) -> Rect {
    frame
        .area()
        .centered(Constraint::Length(width), Constraint::Length(height))
}

fn key_rows(keys: &[KeyHint]) -> impl Iterator<Item = Line<'static>> + '_ {
    keys.iter().map(|(key, description)| {
        Line::from(vec![
            Span::styled(format!("  {key:<12}"), Style::new().bold().fg(Color::Cyan)),
            Span::raw(*description),
        ])
    })
}

pub fn render_help(frame: &mut Frame, app: &App) {
    let screen = screen_keys(app);
    let mut lines = vec![Line::styled("Everywhere", Style::new().bold())];
    lines.extend(key_rows(&GLOBAL_KEYS));
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        format!("{} screen", app.screen.title()),
        Style::new().bold(),
    ));
    lines.extend(key_rows(&screen));
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let area = centred(frame, 64, height);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(" Keys ")
                .title_bottom(Line::from(" Esc or ? to close ").right_aligned())
                .border_style(Style::new().fg(Color::Cyan)),
        ),
        area,
    );
}

pub fn render_dialog(frame: &mut Frame, dialog: &Dialog) {
    let (title, mut lines) = match dialog {
        Dialog::ConfirmStatus {
            code,
            name,
            from,
            to,
        } => (
            " Change supplier status ",
            vec![
                Line::from(vec![
                    Span::raw(format!("Set {code} ({name}) from ")),
                    Span::styled(from.as_str(), status_style(*from).bold()),
                    Span::raw(" to "),
                    Span::styled(to.as_str(), status_style(*to).bold()),
                    Span::raw("?"),
                ]),
                Line::raw(""),
                Line::raw(crate::api::consequence(*to)),
            ],
        ),
        Dialog::ConfirmMigration {
            code,
            name,
            pending,
        } => (
            " Start bulk migration ",
            vec![
                Line::raw(format!(
                    "Migrate the {pending} pending accounts of {code} ({name})?"
                )),
                Line::raw(""),
                Line::raw("Progress shows under the suppliers list."),
            ],
        ),
    };
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        Span::styled("[y/Enter]", Style::new().bold().fg(Color::Green)),
        Span::raw(" confirm    "),
        Span::styled("[n/Esc]", Style::new().bold().fg(Color::Red)),
        Span::raw(" cancel"),
    ]));
    let area = centred(frame, 64, 8);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::bordered()
                .title(title)
                .border_style(Style::new().fg(Color::Yellow)),
        ),
        area,
    );
}
