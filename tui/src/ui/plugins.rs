//! The Plugins screen: the plugin of each supplier (sha256, size, when installed) and, for the
//! selected supplier, its hooks, configuration and recent failures.

use super::account::flat_object;
use super::{loaded_suppliers, placeholder, short_digest, size, time, titled};
use crate::api::PluginDetail;
use crate::app::{App, Loadable};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table, TableState, Wrap};

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let Some(suppliers) = loaded_suppliers(frame, app, area, "Plugins", "No suppliers yet.") else {
        return;
    };
    let [list_area, detail_area] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area);

    let rows = suppliers.iter().map(|supplier| match &supplier.plugin {
        Some(plugin) => Row::new([
            supplier.code.clone(),
            supplier.name.clone(),
            label(plugin.name.as_deref(), plugin.version.as_deref()),
            short_digest(&plugin.sha256, 16),
            plugin.size_bytes.map_or_else(|| "-".to_owned(), size),
            time(&plugin.installed_at),
        ]),
        None => Row::new([
            supplier.code.clone(),
            supplier.name.clone(),
            "-".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
        ]),
    });
    let widths = [
        Constraint::Length(12),
        Constraint::Min(16),
        Constraint::Length(22),
        Constraint::Length(18),
        Constraint::Length(10),
        Constraint::Length(19),
    ];
    let table = Table::new(rows, widths)
        .header(Row::new(["Supplier", "Name", "Plugin", "sha256", "Size", "Installed"]).bold())
        .block(titled(format!("Plugins ({} suppliers)", suppliers.len())))
        .row_highlight_style(Style::new().reversed())
        .highlight_symbol("▶ ");
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
            return placeholder(frame, detail_area, titled(title), "…");
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
fn label(name: Option<&str>, version: Option<&str>) -> String {
    match (name, version) {
        (Some(name), Some(version)) => format!("{name} {version}"),
        (Some(name), None) => name.to_owned(),
        (None, _) => "-".to_owned(),
    }
}

fn field(label: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!(" {label:<10}"), Style::new().bold()),
        Span::raw(value),
    ])
}

fn detail_lines(plugin: &PluginDetail) -> Vec<Line<'static>> {
    let config = if plugin.config.is_empty() {
        "-".to_owned()
    } else {
        flat_object(&serde_json::Value::Object(
            plugin
                .config
                .iter()
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        ))
    };
    let hooks = if plugin.hooks.is_empty() {
        "-".to_owned()
    } else {
        plugin.hooks.join(", ")
    };
    let mut lines = vec![
        field(
            "Plugin",
            label(plugin.name.as_deref(), plugin.version.as_deref()),
        ),
        field("sha256", plugin.sha256.clone()),
        field(
            "Size",
            plugin.size_bytes.map_or_else(|| "-".to_owned(), size),
        ),
        field("Installed", time(&plugin.installed_at)),
        field("Hooks", hooks),
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
