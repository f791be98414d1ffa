//! The Imports screen: one page of a supplier's import processes, with the state filter, the
//! search by external account number and the page number.

use super::columns::{CellText, Column, FittedTable, fit_line};
use super::{loading_text, page_footer, placeholder, time, titled};
use crate::api::ImportState;
use crate::app::{App, ImportsState, Loadable};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::TableState;

/// The list's columns: the external account number identifies a row, so it is cut last; the
/// last failure gives way first (the selected row's shows in full under the list).
const COLUMNS: [Column; 6] = [
    Column::left("External account").gives_way_last(),
    Column::left("State"),
    Column::left("Platform account"),
    Column::left("Staged"),
    Column::left("Updated"),
    Column::left("Last failure").gives_way_first(),
];

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let imports = &app.imports;
    let Some(code) = &imports.supplier else {
        let text = match app.suppliers.list {
            Loadable::Ready(_) => {
                "Choose a supplier on the Suppliers screen (1) and press Enter.".to_owned()
            }
            _ => loading_text(app, "suppliers"),
        };
        return placeholder(frame, area, titled("Imports"), text);
    };
    let [filter_area, list_area, failure_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(filter_line(imports), filter_area);

    let title = format!("Imports · {code} · page {}", imports.page_number());
    let page = match &imports.page {
        Loadable::Ready(page) => page,
        Loadable::Loading => {
            return placeholder(
                frame,
                list_area,
                titled(title),
                loading_text(app, "imports"),
            );
        }
        Loadable::Unavailable(reason) => {
            return placeholder(frame, list_area, titled(title), reason.clone());
        }
        Loadable::Failed(reason) => {
            let text = format!("Could not load the imports: {reason}");
            return placeholder(frame, list_area, titled(title), text);
        }
    };
    if page.items.is_empty() {
        let text = if imports.state_filter.is_some() || !imports.search.is_empty() {
            "No imports match. Esc clears the filter and search."
        } else {
            "No accounts have been staged for this supplier yet."
        };
        return placeholder(frame, list_area, titled(title), text);
    }

    let rows = page
        .items
        .iter()
        .map(|row| {
            let failure = row
                .last_failure
                .as_ref()
                .map(|failure| format!("{}: {}", failure.code, failure.detail))
                .unwrap_or_default();
            vec![
                CellText::from(row.external_account_number.as_str()),
                CellText::styled(row.state.as_str(), state_style(row.state)),
                CellText::from(row.platform_account_number.as_deref().unwrap_or("-")),
                CellText::from(time(&row.staged_at)),
                CellText::from(time(&row.updated_at)),
                CellText::styled(failure, Style::new().fg(Color::Red)),
            ]
        })
        .collect();
    let bottom = page_footer(
        page.items.len(),
        page.next_after.is_some(),
        imports.pages.is_first(),
    );
    let table =
        FittedTable::list(&COLUMNS, rows, list_area).block(titled(title).title_bottom(bottom));
    let mut state = TableState::new().with_selected(Some(imports.selected));
    frame.render_stateful_widget(table, list_area, &mut state);

    // The table cuts long failures short: the selected one in full, as far as the width goes.
    if let Some(row) = page.items.get(imports.selected)
        && let Some(failure) = &row.last_failure
    {
        let line = Line::from(vec![
            Span::raw(format!(
                " {} failed at {}: ",
                row.external_account_number,
                time(&failure.at)
            )),
            Span::styled(
                format!("{} ({})", failure.detail, failure.code),
                Style::new().fg(Color::Red),
            ),
        ]);
        frame.render_widget(
            fit_line(line, usize::from(failure_area.width)),
            failure_area,
        );
    }
}

/// `state: ERRORED   search: ACC-1`, or the search being typed.
fn filter_line(imports: &ImportsState) -> Line<'static> {
    let state = imports.state_filter.map_or("all", |state| state.as_str());
    let mut spans = vec![
        Span::raw(" state: "),
        Span::styled(state, Style::new().bold().fg(Color::Cyan)),
        Span::raw("   search: "),
    ];
    match &imports.search_input {
        Some(typing) => {
            spans.push(Span::styled(
                format!("/{typing}█"),
                Style::new().bold().fg(Color::Yellow),
            ));
        }
        None if imports.search.is_empty() => spans.push(Span::raw("- (press / to search)")),
        None => spans.push(Span::styled(
            format!("\"{}\"", imports.search),
            Style::new().bold().fg(Color::Cyan),
        )),
    }
    Line::from(spans)
}

pub(super) fn state_style(state: ImportState) -> Style {
    match state {
        ImportState::Processed => Style::new().fg(Color::Green),
        ImportState::Errored => Style::new().fg(Color::Red),
        ImportState::InProgress => Style::new().fg(Color::Yellow),
        ImportState::Cancelled => Style::new().fg(Color::DarkGray),
        ImportState::Pending => Style::new(),
    }
}
