//! The account detail opened from the Imports screen: the account, its balance, notes,
//! transactions, statements and payment instructions, as one scrollable page.

use super::{placeholder, time, titled};
use crate::api::AccountDetail;
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
        Paragraph::new(account_lines(account))
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

/// The account's text; also used to know how far it can scroll.
pub fn account_lines(account: &AccountDetail) -> Vec<Line<'static>> {
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
        Line::raw(""),
    ];

    lines.push(heading(format!("Notes ({})", account.notes.len())));
    for note in &account.notes {
        let mut text = note.body.clone().unwrap_or_default();
        if !note.document_paths.is_empty() {
            if !text.is_empty() {
                text.push_str("  ");
            }
            text.push_str(&format!("[documents: {}]", note.document_paths.join(", ")));
        }
        let pinned = if note.is_pinned { "pinned" } else { "" };
        lines.push(Line::raw(format!(
            " {}  {:<6}  {:<6}  {text}",
            time(&note.created_at),
            note.source,
            pinned
        )));
    }
    lines.push(Line::raw(""));

    lines.push(heading(format!(
        "Transactions ({}) · balance {}",
        account.transactions.len(),
        account.balance
    )));
    if !account.transactions.is_empty() {
        lines.push(Line::styled(
            format!(
                " {:<10}  {:<8}  {:>10}  {:<9}  {:<14}  {}",
                "Date", "Type", "Amount", "Status", "Reference", "Description"
            ),
            Style::new().bold(),
        ));
    }
    for transaction in &account.transactions {
        let description = transaction
            .description
            .as_ref()
            .or(transaction.reason.as_ref());
        lines.push(Line::raw(format!(
            " {:<10}  {:<8}  {:>10}  {:<9}  {:<14}  {}",
            transaction.transaction_date,
            transaction.kind,
            transaction.amount,
            transaction.status,
            optional(transaction.reference.as_ref()),
            optional(description),
        )));
    }
    lines.push(Line::raw(""));

    lines.push(heading(format!(
        "Statements ({})",
        account.statements.len()
    )));
    if !account.statements.is_empty() {
        lines.push(Line::styled(
            format!(
                " {:<10}  {:<23}  {:<10}  {:>10}  {}",
                "Number", "Period", "Issued", "Gross", "Document"
            ),
            Style::new().bold(),
        ));
    }
    for statement in &account.statements {
        lines.push(Line::raw(format!(
            " {:<10}  {:<23}  {:<10}  {:>10}  {}",
            statement.number,
            format!(
                "{} – {}",
                statement.bill_period_from_date, statement.bill_period_to_date
            ),
            statement.issued_date,
            statement.gross_amount,
            optional(statement.statement_path.as_ref()),
        )));
    }
    lines.push(Line::raw(""));

    lines.push(heading(format!(
        "Payment instructions ({})",
        account.payment_instructions.len()
    )));
    for instruction in &account.payment_instructions {
        lines.push(Line::raw(format!(
            " {:<12}  {:<14}  {:<16}  added {}  {}",
            instruction.vendor,
            instruction.kind,
            instruction.reference,
            time(&instruction.added_at),
            flat_object(&instruction.details),
        )));
    }
    lines
}

/// The staged billing address on one line.
fn address(account: &Value) -> String {
    let Some(address) = account.get("billing_address").and_then(Value::as_object) else {
        return "-".to_owned();
    };
    let parts: Vec<&str> = [
        "address_line_1",
        "address_line_2",
        "address_line_3",
        "town",
        "county",
        "postcode",
        "country",
    ]
    .iter()
    .filter_map(|key| address.get(*key).and_then(Value::as_str))
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
