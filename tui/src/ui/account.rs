//! The account detail opened from the Imports screen: the account, its balance and operations
//! team, notes, transactions, statements, meter points and payment instructions, as one
//! scrollable page. Its tables size
//! their columns to their content and the width, cutting visibly with `…` what cannot fit.

use super::columns::{CellText, Column, FittedTable, column_width, text_width};
use super::{placeholder, time, titled};
use crate::api::{AccountDetail, Note};
use crate::app::{AccountView, Loadable};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use serde_json::Value;

pub fn render(frame: &mut Frame, view: &AccountView, area: Rect) {
    let title = format!("Account {}", view.number);
    let account = match &view.account {
        Loadable::Ready(account) => account,
        Loadable::Loading => {
            return placeholder(frame, area, titled(title), "Loading the account…");
        }
        Loadable::Unavailable(reason) => {
            return placeholder(frame, area, titled(title), reason.clone());
        }
        Loadable::Failed(reason) => {
            let text = format!("Could not load the account: {reason}");
            return placeholder(frame, area, titled(title), text);
        }
    };
    let title = format!(
        "Account {} · {} {}",
        account.platform_account_number, account.import_supplier, account.external_account_number
    );
    frame.render_widget(
        Paragraph::new(account_lines(
            account,
            usize::from(area.width.saturating_sub(2)),
        ))
        .wrap(Wrap { trim: false })
        .scroll((view.scroll, 0))
        .block(titled(title)),
        area,
    );
}

fn heading(text: String) -> Line<'static> {
    Line::from(Span::styled(text, Style::new().bold().fg(Color::Cyan)))
}

fn field(label: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!(" {label:<18}"), Style::new().bold()),
        Span::raw(value),
    ])
}

fn optional(value: Option<&String>) -> &str {
    value.map_or("", String::as_str)
}

/// Columns of the transactions table: the id (how suppliers and operators find a transaction)
/// and the amount are cut last; the description gives way first.
const TRANSACTION_COLUMNS: [Column; 7] = [
    Column::left("Id").gives_way_last(),
    Column::left("Date"),
    Column::left("Type"),
    Column::right("Amount").gives_way_last(),
    Column::left("Status"),
    Column::left("Reference"),
    Column::left("Description").gives_way_first(),
];

const STATEMENT_COLUMNS: [Column; 5] = [
    Column::left("Number").gives_way_last(),
    Column::left("Period"),
    Column::left("Issued"),
    Column::right("Gross").gives_way_last(),
    Column::left("Document").gives_way_first(),
];

const METER_POINT_COLUMNS: [Column; 4] = [
    Column::left("MPAN / MPRN").gives_way_last(),
    Column::left("Market"),
    Column::left("Registration").gives_way_last(),
    Column::left("Flow sent").gives_way_first(),
];

const PAYMENT_INSTRUCTION_COLUMNS: [Column; 5] = [
    Column::left("Vendor"),
    Column::left("Type"),
    Column::left("Reference").gives_way_last(),
    Column::left("Added"),
    Column::left("Details").gives_way_first(),
];

/// Where every line of the page starts.
const INDENT: &str = " ";
/// Columns between two columns of the page's tables (one where that keeps more whole).
const GAP: usize = 2;

/// How many lines the account's page has, for scrolling. Table rows are cut, not wrapped, so
/// the count does not depend on the width.
pub fn account_line_count(account: &AccountDetail) -> usize {
    account_lines(account, usize::MAX).len()
}

/// The account's page for a width of `width` columns: its tables fit that width.
fn account_lines(account: &AccountDetail, width: usize) -> Vec<Line<'static>> {
    let table_width = width.saturating_sub(text_width(INDENT));
    let table = |columns: &[Column], rows: Vec<Vec<CellText>>| {
        FittedTable::new(columns, rows, table_width, GAP).into_lines(INDENT)
    };
    let billing_name = account
        .account
        .get("billing_name")
        .and_then(Value::as_str)
        .unwrap_or("-")
        .to_owned();
    let mut lines = vec![
        field("Platform account", account.platform_account_number.clone()),
        field(
            "External account",
            format!(
                "{} ({})",
                account.external_account_number, account.import_supplier
            ),
        ),
        field("Billing name", billing_name),
        field("Billing address", address(&account.account)),
        field("Created", time(&account.created_at)),
        field(
            "Statement period",
            format!("open since {}", account.open_statement_period_start),
        ),
        field("Balance", account.balance.clone()),
        field(
            "Operations team",
            account
                .operations_team_name
                .clone()
                .unwrap_or_else(|| "-".to_owned()),
        ),
        Line::raw(""),
    ];

    lines.push(heading(format!("Notes ({})", account.notes.len())));
    lines.extend(note_lines(&account.notes));
    lines.push(Line::raw(""));

    lines.push(heading(format!(
        "Transactions ({}) · balance {}",
        account.transactions.len(),
        account.balance
    )));
    if !account.transactions.is_empty() {
        let rows = account
            .transactions
            .iter()
            .map(|transaction| {
                let description = transaction
                    .display_note
                    .as_ref()
                    .or(transaction.description.as_ref());
                vec![
                    CellText::from(transaction.transaction_id.as_str()),
                    CellText::from(transaction.transaction_date.as_str()),
                    CellText::from(transaction.kind.as_str()),
                    CellText::from(transaction.amount.as_str()),
                    CellText::from(transaction.status.as_deref().unwrap_or("")),
                    CellText::from(optional(transaction.reference.as_ref())),
                    CellText::from(optional(description)),
                ]
            })
            .collect();
        lines.extend(table(&TRANSACTION_COLUMNS, rows));
    }
    lines.push(Line::raw(""));

    lines.push(heading(format!(
        "Statements ({})",
        account.statements.len()
    )));
    if !account.statements.is_empty() {
        let rows = account
            .statements
            .iter()
            .map(|statement| {
                vec![
                    CellText::from(statement.number.as_deref().unwrap_or("-")),
                    CellText::from(format!(
                        "{} – {}",
                        statement.bill_period_from_date, statement.bill_period_to_date
                    )),
                    CellText::from(statement.issued_date.as_deref().unwrap_or("-")),
                    CellText::from(statement.gross_amount.as_deref().unwrap_or("-")),
                    CellText::from(optional(statement.statement_path.as_ref())),
                ]
            })
            .collect();
        lines.extend(table(&STATEMENT_COLUMNS, rows));
    }
    lines.push(Line::raw(""));

    lines.push(heading(format!(
        "Meter points ({})",
        account.meter_points.len()
    )));
    if !account.meter_points.is_empty() {
        let rows = account
            .meter_points
            .iter()
            .map(|point| {
                vec![
                    CellText::from(point.mpxn.as_str()),
                    CellText::from(point.market.as_str()),
                    CellText::from(point.status.as_str()),
                    CellText::from(
                        point
                            .flow_sent_at
                            .as_deref()
                            .map_or_else(|| "-".to_owned(), time),
                    ),
                ]
            })
            .collect();
        lines.extend(table(&METER_POINT_COLUMNS, rows));
    }
    lines.push(Line::raw(""));

    lines.push(heading(format!(
        "Payment instructions ({})",
        account.payment_instructions.len()
    )));
    if !account.payment_instructions.is_empty() {
        let rows = account
            .payment_instructions
            .iter()
            .map(|instruction| {
                vec![
                    CellText::from(instruction.vendor.as_str()),
                    CellText::from(instruction.kind.as_str()),
                    CellText::from(instruction.reference.as_str()),
                    CellText::from(time(&instruction.added_at)),
                    CellText::from(flat_object(&instruction.details)),
                ]
            })
            .collect();
        lines.extend(table(&PAYMENT_INSTRUCTION_COLUMNS, rows));
    }
    lines
}

/// One line per note: when, from where, pinned or not, then the note itself (which wraps
/// rather than being cut: it is the only place it can be read).
fn note_lines(notes: &[Note]) -> Vec<Line<'static>> {
    let source_width = column_width("", notes.iter().map(|note| note.source.as_str()));
    notes
        .iter()
        .map(|note| {
            let mut text = note.body.clone().unwrap_or_default();
            if !note.document_paths.is_empty() {
                if !text.is_empty() {
                    text.push_str("  ");
                }
                text.push_str(&format!("[documents: {}]", note.document_paths.join(", ")));
            }
            let pinned = if note.is_pinned { "pinned" } else { "" };
            let source = format!(
                "{}{}",
                note.source,
                " ".repeat(source_width.saturating_sub(text_width(&note.source)))
            );
            Line::raw(format!(
                "{INDENT}{}  {source}  {pinned:<6}  {text}",
                time(&note.created_at)
            ))
        })
        .collect()
}

/// The staged billing address on one line: the real document's structured `billing_address`,
/// else its flat `billing_address1..5` and `billing_postcode`.
fn address(account: &Value) -> String {
    let (fields, keys): (&Value, &[&str]) = match account.get("billing_address") {
        Some(address) if address.is_object() => (
            address,
            &[
                "street_address",
                "dependent_locality",
                "locality",
                "administrative_area",
                "postal_code",
                "country",
            ],
        ),
        _ => (
            account,
            &[
                "billing_address1",
                "billing_address2",
                "billing_address3",
                "billing_address4",
                "billing_address5",
                "billing_postcode",
            ],
        ),
    };
    let parts: Vec<&str> = keys
        .iter()
        .filter_map(|key| fields.get(*key).and_then(Value::as_str))
        .flat_map(|part| part.split('\n'))
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect();
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(", ")
    }
}

/// `key=value key=value` for a JSON object; its JSON text otherwise.
pub(super) fn flat_object(value: &Value) -> String {
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => format!("{key}={text}"),
                other => format!("{key}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
