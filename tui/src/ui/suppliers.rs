//! The Suppliers screen: every supplier with its status, import counts per state and plugin,
//! under it whether the host's store takes writes, and the bulk migration of the selected
//! supplier.

use super::columns::{CellText, Column, FittedTable, fit_line};
use super::{loaded_suppliers, short_digest, time, titled, waiting_text};
use crate::api::{ImportState, Migration, StorageState, StorageStatus, Supplier, SupplierStatus};
use crate::app::{App, Loadable};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Text};
use ratatui::widgets::{Gauge, Paragraph, TableState};

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
    let storage = storage_line(&app.storage);
    // Writes refused: the whole reason, for it says what to do.
    let refused = matches!(
        &app.storage,
        Loadable::Ready(status) if status.state != StorageState::Writable
    );
    let [list_area, storage_area, migration_area] = Layout::vertical([
        Constraint::Min(4),
        Constraint::Length(if refused { 3 } else { 1 }),
        Constraint::Length(5),
    ])
    .areas(area);
    render_table(frame, suppliers, app.suppliers.selected, list_area);
    if refused {
        frame.render_widget(
            Paragraph::new(storage).wrap(ratatui::widgets::Wrap { trim: true }),
            storage_area,
        );
    } else {
        frame.render_widget(
            fit_line(storage, usize::from(storage_area.width)),
            storage_area,
        );
    }
    if let Some(supplier) = app.suppliers.selected() {
        render_migration(frame, app, supplier, migration_area);
    }
}

/// One line on the store: whether it takes writes, its free space against the watermark, and
/// why writes are refused (so an operator sees why suppliers' writes fail, and what to do).
pub(super) fn storage_line(storage: &Loadable<StorageStatus>) -> Line<'static> {
    let status = match storage {
        Loadable::Loading => return Line::from(" Storage: …"),
        Loadable::Unavailable(reason) => return Line::from(format!(" Storage: {reason}")),
        Loadable::Failed(reason) => {
            return Line::styled(
                format!(" Storage: could not be read: {reason}"),
                Style::new().fg(Color::Yellow),
            );
        }
        Loadable::Ready(status) => status,
    };
    let free = status.free_bytes.map_or_else(
        || "free space unknown".to_owned(),
        |free| format!("{} free", size(free)),
    );
    let watermark = if status.watermark_bytes == 0 {
        "no watermark".to_owned()
    } else {
        format!("writes refused below {}", size(status.watermark_bytes))
    };
    match status.state {
        StorageState::Writable => Line::from(format!(" Storage: writable · {free} · {watermark}")),
        StorageState::ReadOnly | StorageState::Failed => {
            let state = if status.state == StorageState::ReadOnly {
                "READ-ONLY"
            } else {
                "FAILED"
            };
            Line::styled(
                format!(
                    " Storage: {state} · {free} · {watermark} · {}",
                    status.reason.as_deref().unwrap_or_default()
                ),
                Style::new().fg(Color::White).bg(Color::Red),
            )
        }
    }
}

/// `bytes` in the largest binary unit that keeps it at 1 or more, with one decimal.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The colour a status is shown in.
pub(super) fn status_style(status: SupplierStatus) -> Style {
    match status {
        SupplierStatus::Ongoing => Style::new().fg(Color::Green),
        SupplierStatus::Paused => Style::new().fg(Color::Yellow),
        SupplierStatus::Complete => Style::new().fg(Color::Blue),
    }
}

/// The table's columns: the code identifies a supplier and the status is what the operator
/// changes here, so those are cut last; the name gives way first.
const COLUMNS: [Column; 9] = [
    Column::left("Code").gives_way_last(),
    Column::left("Name").gives_way_first(),
    Column::left("Status").gives_way_last(),
    Column::right("Pending"),
    Column::right("In progress"),
    Column::right("Processed"),
    Column::right("Errored"),
    Column::right("Cancelled"),
    Column::left("Plugin"),
];

fn render_table(frame: &mut Frame, suppliers: &[Supplier], selected: usize, area: Rect) {
    let rows = suppliers
        .iter()
        .map(|supplier| {
            let plugin = supplier
                .plugin
                .as_ref()
                .map_or_else(|| "-".to_owned(), |p| short_digest(&p.sha256, 12));
            let count = |state| CellText::from(supplier.count(state).to_string());
            vec![
                CellText::from(supplier.code.as_str()),
                CellText::from(supplier.name.as_str()),
                CellText::styled(supplier.status.as_str(), status_style(supplier.status)),
                count(ImportState::Pending),
                count(ImportState::InProgress),
                count(ImportState::Processed),
                count(ImportState::Errored),
                count(ImportState::Cancelled),
                CellText::from(plugin),
            ]
        })
        .collect();
    let table = FittedTable::list(&COLUMNS, rows, area)
        .block(titled(format!("Suppliers ({})", suppliers.len())));
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
        None | Some(Loadable::Loading) => waiting_text(app, "its migrations"),
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
    let line = Line::from(format!(
        "RUNNING since {}: {} of {} accounts done ({} migrated, {} failed)",
        time(&migration.started_at),
        migration.done(),
        migration.total,
        migration.processed,
        migration.failed,
    ));
    frame.render_widget(fit_line(line, usize::from(summary.width)), summary);
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
