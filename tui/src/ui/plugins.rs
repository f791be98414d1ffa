//! The Plugins screen: the plugin of each supplier (sha256, size, when installed) and, for the
//! selected supplier, its hooks, configuration and recent failures.

use super::account::flat_object;
use super::columns::{CellText, Column, FittedTable};
use super::{loaded_suppliers, placeholder, short_digest, size, time, titled, waiting_text};
use crate::api::Plugin;
use crate::app::{App, Loadable};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, TableState, Wrap};

/// The list's columns: the supplier code identifies a row, so it is cut last.
const COLUMNS: [Column; 6] = [
    Column::left("Supplier").gives_way_last(),
    Column::left("Name").gives_way_first(),
    Column::left("Plugin"),
    Column::left("sha256"),
    Column::left("Size"),
    Column::left("Installed"),
];

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let Some(suppliers) = loaded_suppliers(frame, app, area, "Plugins", "No suppliers yet.") else {
        return;
    };
    let [list_area, detail_area] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area);

    let rows = suppliers
        .iter()
        .map(|supplier| {
            let mut row = vec![
                CellText::from(supplier.code.as_str()),
                CellText::from(supplier.name.as_str()),
            ];
            row.extend(
                match &supplier.plugin {
                    Some(plugin) => [
                        label(&plugin.name, &plugin.version),
                        short_digest(&plugin.sha256, 16),
                        size(plugin.size_bytes),
                        time(&plugin.installed_at),
                    ],
                    None => ["-", "-", "-", "-"].map(str::to_owned),
                }
                .map(CellText::from),
            );
            row
        })
        .collect();
    let table = FittedTable::list(&COLUMNS, rows, list_area)
        .block(titled(format!("Plugins ({} suppliers)", suppliers.len())));
    let mut state = TableState::new().with_selected(Some(app.suppliers.selected));
    frame.render_stateful_widget(table, list_area, &mut state);

    let Some(supplier) = app.suppliers.selected() else {
        return;
    };
    let title = format!("Plugin · {}", supplier.code);
    let detail = match app.plugins.details.get(&supplier.code) {
        Some(Loadable::Ready(detail)) => detail,
        Some(Loadable::Unavailable(reason)) => {
            return placeholder(frame, detail_area, titled(title), reason.clone());
        }
        Some(Loadable::Failed(reason)) => {
            let text = format!("Could not read the plugin: {reason}");
            return placeholder(frame, detail_area, titled(title), text);
        }
        None | Some(Loadable::Loading) => {
            let text = waiting_text(app, "its plugin");
            return placeholder(frame, detail_area, titled(title), text);
        }
    };
    frame.render_widget(
        Paragraph::new(detail_lines(detail))
            .wrap(Wrap { trim: false })
            .block(titled(title)),
        detail_area,
    );
}

/// `name version`, or `-` when the host does not say.
fn label(name: &str, version: &str) -> String {
    format!("{name} {version}")
}

fn field(label: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!(" {label:<10}"), Style::new().bold()),
        Span::raw(value),
    ])
}

fn detail_lines(plugin: &Plugin) -> Vec<Line<'static>> {
    let record = &plugin.record;
    let config = if record.config.is_empty() {
        "-".to_owned()
    } else {
        flat_object(&serde_json::Value::Object(
            record
                .config
                .iter()
                .map(|(key, value)| (key.clone(), serde_json::Value::from(value.as_str())))
                .collect(),
        ))
    };
    let hooks = if record.hooks.is_empty() {
        "-".to_owned()
    } else {
        record.hooks.join(", ")
    };
    let mut lines = vec![
        field("Plugin", label(&record.name, &record.version)),
        field("sha256", record.sha256.clone()),
        field("Size", size(record.size_bytes)),
        field("Installed", time(&record.installed_at)),
        field("Hooks", hooks),
        field(
            "WIT",
            record.wit_version.clone().unwrap_or_else(|| "-".to_owned()),
        ),
        field("Config", config),
        Line::raw(""),
    ];
    let heading = format!("Recent failures ({})", plugin.recent_failures.len());
    lines.push(Line::styled(heading, Style::new().bold().fg(Color::Cyan)));
    if plugin.recent_failures.is_empty() {
        lines.push(Line::raw(" None."));
    }
    for failure in &plugin.recent_failures {
        lines.push(Line::from(vec![
            Span::raw(format!(" {}  {:<22}  ", time(&failure.at), failure.hook)),
            Span::styled(failure.error.clone(), Style::new().fg(Color::Red)),
        ]));
    }
    lines
}
