//! The Suppliers screen: every supplier with its status, import counts per state and plugin,
//! and under it the bulk migration of the selected supplier.

use super::{loaded_suppliers, short_digest, time, titled};
use crate::api::{ImportState, Migration, Supplier};
use crate::app::{App, Loadable};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Text};
use ratatui::widgets::{Cell, Gauge, Paragraph, Row, Table, TableState};

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let Some(suppliers) = loaded_suppliers(
        frame,
        app,
        area,
        "Suppliers",
        "No suppliers yet. Create one with `ferry supplier create`.",
    ) else {
        return;
    };
    let [list_area, migration_area] =
        Layout::vertical([Constraint::Min(4), Constraint::Length(5)]).areas(area);
    render_table(frame, suppliers, app.suppliers.selected, list_area);
    if let Some(supplier) = app.suppliers.selected() {
        render_migration(frame, app, supplier, migration_area);
    }
}

/// The colour a status is shown in.
pub(super) fn status_style(status: &str) -> Style {
    match status {
        "ONGOING" => Style::new().fg(Color::Green),
        "PAUSED" => Style::new().fg(Color::Yellow),
        "COMPLETE" => Style::new().fg(Color::Blue),
        _ => Style::new(),
    }
}

fn number(value: u64) -> Cell<'static> {
    Cell::from(Line::from(value.to_string()).right_aligned())
}

fn render_table(frame: &mut Frame, suppliers: &[Supplier], selected: usize, area: Rect) {
    let header = Row::new([
        Cell::from("Code"),
        Cell::from("Name"),
        Cell::from("Status"),
        Cell::from(Line::from("Pending").right_aligned()),
        Cell::from(Line::from("In progress").right_aligned()),
        Cell::from(Line::from("Processed").right_aligned()),
        Cell::from(Line::from("Errored").right_aligned()),
        Cell::from(Line::from("Cancelled").right_aligned()),
        Cell::from("Plugin"),
    ])
    .bold();
    let rows = suppliers.iter().map(|supplier| {
        let plugin = supplier
            .plugin
            .as_ref()
            .map_or_else(|| "-".to_owned(), |p| short_digest(&p.sha256, 12));
        Row::new([
            Cell::from(supplier.code.clone()),
            Cell::from(supplier.name.clone()),
            Cell::from(supplier.status.clone()).style(status_style(&supplier.status)),
            number(supplier.count(ImportState::Pending)),
            number(supplier.count(ImportState::InProgress)),
            number(supplier.count(ImportState::Processed)),
            number(supplier.count(ImportState::Errored)),
            number(supplier.count(ImportState::Cancelled)),
            Cell::from(plugin),
        ])
    });
    let widths = [
        Constraint::Length(12),
        Constraint::Min(16),
        Constraint::Length(9),
        Constraint::Length(8),
        Constraint::Length(11),
        Constraint::Length(9),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(14),
    ];
    let table = Table::new(rows, widths)
        .header(header)
        .block(titled(format!("Suppliers ({})", suppliers.len())))
        .row_highlight_style(Style::new().reversed())
        .highlight_symbol("▶ ");
    let mut state = TableState::new().with_selected(Some(selected));
    frame.render_stateful_widget(table, area, &mut state);
}

fn render_migration(frame: &mut Frame, app: &App, supplier: &Supplier, area: Rect) {
    let block = titled(format!("Bulk migration · {}", supplier.code));
    let pending = supplier.count(ImportState::Pending);
    let invitation = if pending == 0 {
        "No accounts are pending.".to_owned()
    } else {
        format!("Press m to migrate the {pending} pending accounts.")
    };
    let text = match app.suppliers.migrations.get(&supplier.code) {
        None | Some(Loadable::Loading) => "…".to_owned(),
        Some(Loadable::Ready(Some(migration))) if migration.is_running() => {
            return render_progress(frame, migration, block, area);
        }
        Some(Loadable::Ready(Some(migration))) => format!(
            "Last migration {} at {}: {} migrated, {} failed of {}. {invitation}",
            migration.state,
            time(migration.finished_at.as_deref().unwrap_or_default()),
            migration.processed,
            migration.failed,
            migration.total,
        ),
        Some(Loadable::Ready(None)) => {
            format!("No migration has run yet. {invitation}")
        }
        Some(Loadable::Unavailable(reason)) => reason.clone(),
        Some(Loadable::Failed(reason)) => format!("Could not read the migrations: {reason}"),
    };
    frame.render_widget(
        Paragraph::new(Text::from(text))
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(block),
        area,
    );
}

fn render_progress(
    frame: &mut Frame,
    migration: &Migration,
    block: ratatui::widgets::Block<'static>,
    area: Rect,
) {
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [summary, bar] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(inner);
    frame.render_widget(
        Line::from(format!(
            "RUNNING since {}: {} of {} accounts done ({} migrated, {} failed)",
            time(&migration.started_at),
            migration.done(),
            migration.total,
            migration.processed,
            migration.failed,
        )),
        summary,
    );
    let ratio = if migration.total == 0 {
        0.0
    } else {
        (migration.done() as f64 / migration.total as f64).clamp(0.0, 1.0)
    };
    frame.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(format!("{}/{}", migration.done(), migration.total))
            .gauge_style(Style::new().fg(Color::Green)),
        bar,
    );
}
