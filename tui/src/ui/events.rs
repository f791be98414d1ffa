//! The Events screen: the live tail of the event log (time, type, subject) and the payload of
//! the selected event, with the relay's state in the title.

use super::columns::{CellText, Column, FittedTable};
use super::{loading_text, placeholder, time, titled};
use crate::app::App;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, TableState, Wrap};

/// The list's columns: when, what happened and which event are cut last; the subject gives
/// way first.
const COLUMNS: [Column; 4] = [
    Column::left("Time").gives_way_last(),
    Column::left("Type").gives_way_last(),
    Column::left("Subject").gives_way_first(),
    Column::left("Id").gives_way_last(),
];

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let events = &app.events;
    let mut title = format!("Events ({})", events.events.len());
    if events.follow && !events.events.is_empty() {
        title.push_str(" · following");
    }
    if let Some(relay) = &events.relay {
        title.push_str(&format!(" · relay {}, lag {}", relay.state, relay.lag));
        if let Some(error) = &relay.last_error {
            title.push_str(&format!(" ({error})"));
        }
    }
    if let Some(problem) = &events.problem {
        if events.events.is_empty() {
            return placeholder(frame, area, titled(title), problem.clone());
        }
        title.push_str(&format!(" · {problem}"));
    }
    if events.events.is_empty() {
        let text = if events.loaded {
            "No events yet. New events appear here as they happen.".to_owned()
        } else {
            loading_text(app, "the event log")
        };
        return placeholder(frame, area, titled(title), text);
    }

    let [list_area, payload_area] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    let rows = events
        .events
        .iter()
        .map(|event| {
            vec![
                CellText::from(time(&event.time)),
                CellText::from(event.kind.as_str()),
                CellText::from(event.subject.as_deref().unwrap_or("-")),
                CellText::from(event.id.as_str()),
            ]
        })
        .collect();
    let table = FittedTable::list(&COLUMNS, rows, list_area).block(titled(title));
    let mut state = TableState::new().with_selected(Some(events.selected));
    frame.render_stateful_widget(table, list_area, &mut state);

    let Some(event) = events.selected() else {
        return;
    };
    let payload =
        serde_json::to_string_pretty(&event.data).unwrap_or_else(|_| event.data.to_string());
    let mut lines = vec![Line::raw(format!(
        "version {} · published {}",
        event.version,
        event
            .published_at
            .as_deref()
            .map_or_else(|| "not yet".to_owned(), time)
    ))];
    lines.extend(payload.lines().map(|line| Line::raw(line.to_owned())));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(titled(format!("Payload · {} · {}", event.kind, event.id))),
        payload_area,
    );
}
