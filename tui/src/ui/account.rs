//! The account detail opened from the Imports or the Campaign screen, as one scrollable page:
//! the account, its balance and whether it reconciles with what the old supplier declared, its
//! operations team, notes, the initial closed statement of each ledger, the transactions
//! (those on a closed statement marked apart from the open ones, each with the balance after
//! it), statements, meter points and payment instructions (pending ones marked), then the rest
//! of the staged document, one line a field, so that nothing it carried goes unseen. Balances
//! are in the real platform's sign, credit positive and debit negative, and say which they
//! are. Its tables size their columns to their content and the width, cutting visibly with `…`
//! what cannot fit.

use super::amounts::{credit_or_debit, signed};
use super::columns::{CellText, Column, FittedTable, column_width, text_width};
use super::{placeholder, reconciliation_style, time, titled};
use crate::api::{
    AccountDetail, AccountReconciliation, ClosedStatement, LedgerEntry, Note, PaymentInstruction,
};
use crate::app::{AccountView, Loadable};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use serde_json::{Map, Value};

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

fn field(name: &str, value: String) -> Line<'static> {
    Line::from(vec![label(name), Span::raw(value)])
}

/// A field's name, in the column where field names go.
fn label(name: &str) -> Span<'static> {
    Span::styled(format!(" {name:<18}"), Style::new().bold())
}

fn optional(value: Option<&String>) -> &str {
    value.map_or("", String::as_str)
}

/// Columns of the transactions table: the id (how suppliers and operators find a transaction)
/// and the amount are cut last; the description gives way first. `Statement` says whether the
/// transaction is on the initial closed statement or in the open period. Columns that would
/// say nothing are left out (see [`transaction_table`]): the ledger when no transaction names
/// one, the status when every transaction has the one each kept transaction has.
const TRANSACTION_COLUMNS: [Column; 10] = [
    Column::left("Id").gives_way_last(),
    Column::left("Date"),
    Column::left("Type"),
    Column::right("Amount").gives_way_last(),
    Column::right("Balance after"),
    Column::left("Statement"),
    Column::left(LEDGER_HEADER),
    Column::left(STATUS_HEADER),
    Column::left("Reference"),
    Column::left("Description").gives_way_first(),
];
const LEDGER_HEADER: &str = "Ledger";
const STATUS_HEADER: &str = "Status";
/// The status of every transaction kept on an account.
const KEPT: &str = "TRANSACTION_IMPORT_SUCCESS";

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

/// `Status` is `confirmed` (by the vendor) or `pending from` the day it becomes valid.
const PAYMENT_INSTRUCTION_COLUMNS: [Column; 6] = [
    Column::left("Vendor"),
    Column::left("Type"),
    Column::left("Reference").gives_way_last(),
    Column::left("Status").gives_way_last(),
    Column::left("Added"),
    Column::left("Details").gives_way_first(),
];

/// The rest of the document: each top-level field and a one-line summary of its value.
const DOCUMENT_COLUMNS: [Column; 2] = [
    Column::left("Field").gives_way_last(),
    Column::left("Value").gives_way_first(),
];

/// Where every line of the page starts.
const INDENT: &str = " ";
/// Columns between two columns of the page's tables (one where that keeps more whole).
const GAP: usize = 2;

/// The staged document's structured billing address, which the page shows when there is one.
const BILLING_ADDRESS: &str = "billing_address";
/// The parts of the structured billing address, in the order they are shown.
const BILLING_ADDRESS_PARTS: [&str; 6] = [
    "street_address",
    "dependent_locality",
    "locality",
    "administrative_area",
    "postal_code",
    "country",
];
/// The flat top-level fields shown as the billing address when there is no structured one.
const FLAT_BILLING_ADDRESS: [&str; 6] = [
    "billing_address1",
    "billing_address2",
    "billing_address3",
    "billing_address4",
    "billing_address5",
    "billing_postcode",
];

/// Top-level fields of the staged document that the page shows above the rest of the
/// document (besides the billing address): in its fields, or as the records Ferry made of them
/// (notes, statements, payment instructions, and each ledger's transactions and closed
/// statement).
const SHOWN_ABOVE: [&str; 12] = [
    "import_supplier",
    "external_account_number",
    "billing_name",
    "notes",
    "statements",
    "payment_instructions",
    "ledgers",
    "historical_statement_transactions",
    "current_statement_transactions",
    "last_statement_balance",
    "last_statement_closing_date",
    "last_statement_issue_date",
];

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
        field("Balance", credit_or_debit(&account.balance)),
    ];
    lines.extend(reconciliation_lines(account.reconciliation.as_ref()));
    lines.extend([
        field(
            "Operations team",
            account
                .operations_team_name
                .clone()
                .unwrap_or_else(|| "-".to_owned()),
        ),
        Line::raw(""),
    ]);

    lines.push(heading(format!("Notes ({})", account.notes.len())));
    lines.extend(note_lines(&account.notes));
    lines.push(Line::raw(""));

    for statement in &account.closed_statements {
        lines.extend(closed_statement_lines(statement));
        lines.push(Line::raw(""));
    }

    let historical = account
        .transactions
        .iter()
        .filter(|transaction| transaction.historical)
        .count();
    let count = match historical {
        0 => account.transactions.len().to_string(),
        _ => format!(
            "{}: {historical} closed, {} open",
            account.transactions.len(),
            account.transactions.len() - historical
        ),
    };
    lines.push(heading(format!(
        "Transactions ({count}) · balance {}",
        credit_or_debit(&account.balance)
    )));
    if !account.transactions.is_empty() {
        let (columns, rows) = transaction_table(account);
        lines.extend(table(&columns, rows));
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

    let pending = account
        .payment_instructions
        .iter()
        .filter(|instruction| instruction.pending)
        .count();
    lines.push(heading(if pending == 0 {
        format!(
            "Payment instructions ({})",
            account.payment_instructions.len()
        )
    } else {
        format!(
            "Payment instructions ({}, {pending} pending)",
            account.payment_instructions.len()
        )
    }));
    if !account.payment_instructions.is_empty() {
        let rows = account
            .payment_instructions
            .iter()
            .map(|instruction| {
                vec![
                    CellText::from(instruction.vendor.as_str()),
                    CellText::from(instruction.kind.as_str()),
                    CellText::from(instruction.reference.as_str()),
                    instruction_status(instruction),
                    CellText::from(time(&instruction.added_at)),
                    CellText::from(flat_object(&instruction.details)),
                ]
            })
            .collect();
        lines.extend(table(&PAYMENT_INSTRUCTION_COLUMNS, rows));
    }
    lines.push(Line::raw(""));

    let rest = rest_of_document(&account.account);
    lines.push(heading(format!(
        "Rest of the document ({} fields)",
        rest.len()
    )));
    if !rest.is_empty() {
        let rows = rest
            .into_iter()
            .map(|(key, value)| {
                vec![
                    CellText::from(key.as_str()),
                    CellText::from(summary(value, table_width)),
                ]
            })
            .collect();
        lines.extend(table(&DOCUMENT_COLUMNS, rows));
    }
    lines
}

/// Whether the ledger holds what the old supplier declared: one line when it does or when
/// nothing was declared; for a mismatch, what was declared, what is held, the difference and
/// the first figure that diverges.
fn reconciliation_lines(reconciliation: Option<&AccountReconciliation>) -> Vec<Line<'static>> {
    let Some(reconciliation) = reconciliation else {
        return vec![field(
            "Reconciliation",
            "not reported by this host".to_owned(),
        )];
    };
    let state = Span::styled(
        reconciliation.state.clone(),
        reconciliation_style(&reconciliation.state),
    );
    let held = credit_or_debit(&reconciliation.held);
    let summary = match reconciliation.state.as_str() {
        "RECONCILED" => format!(": holds the {held} declared"),
        "NOT_DECLARED" => format!(": nothing declared to check; holds {held}"),
        _ => String::new(),
    };
    let mut lines = vec![Line::from(vec![
        label("Reconciliation"),
        state,
        Span::raw(summary),
    ])];
    if reconciliation.state == "RECONCILED" || reconciliation.state == "NOT_DECLARED" {
        return lines;
    }
    let declared = reconciliation
        .declared
        .as_deref()
        .map_or_else(|| "-".to_owned(), credit_or_debit);
    lines.push(field("Declared", declared));
    lines.push(field("Held", held));
    if let Some(difference) = &reconciliation.difference {
        lines.push(field(
            "Difference",
            format!("{} (held − declared)", signed(difference)),
        ));
    }
    if let Some(first) = &reconciliation.first_diverging {
        lines.push(field("First diverging", first.clone()));
    }
    lines
}

/// The initial closed statement of a ledger: its heading (naming the ledger, when the document
/// declared ledgers) and its dates, balance and transactions.
fn closed_statement_lines(statement: &ClosedStatement) -> Vec<Line<'static>> {
    let title = match &statement.ledger {
        Some(ledger) => format!("Closed statement · ledger {ledger}"),
        None => "Closed statement".to_owned(),
    };
    let transactions = match &statement.first_transaction_date {
        Some(first) => format!("{} (the first on {first})", statement.transactions),
        None => statement.transactions.to_string(),
    };
    vec![
        heading(title),
        field("Closing date", statement.closing_date.clone()),
        field("Issued", statement.issued_date.clone()),
        field(
            "Closing balance",
            credit_or_debit(&statement.closing_balance),
        ),
        field("Transactions", transactions),
    ]
}

/// The transactions table's columns and rows: each transaction with the balance after its
/// ledger entry, and whether it is on the closed statement or in the open period.
fn transaction_table(account: &AccountDetail) -> (Vec<Column>, Vec<Vec<CellText>>) {
    let balance_after = |entry_id: Option<u64>, transaction_id: &str| {
        let matches = |entry: &&LedgerEntry| match entry_id {
            Some(id) => entry.id == id,
            None => entry.transaction_id == transaction_id,
        };
        account
            .ledger_entries
            .iter()
            .find(matches)
            .map_or("", |entry| entry.balance_after.as_str())
    };
    let with_ledger = account
        .transactions
        .iter()
        .any(|transaction| transaction.ledger.is_some());
    let with_status = account
        .transactions
        .iter()
        .any(|transaction| transaction.status.as_deref() != Some(KEPT));
    let shown = |column: &Column| match column.header {
        LEDGER_HEADER => with_ledger,
        STATUS_HEADER => with_status,
        _ => true,
    };
    let columns = TRANSACTION_COLUMNS.into_iter().filter(shown).collect();
    let rows = account
        .transactions
        .iter()
        .map(|transaction| {
            let description = transaction
                .display_note
                .as_ref()
                .or(transaction.description.as_ref());
            let statement = if transaction.historical {
                "closed"
            } else {
                "open"
            };
            let cells = [
                CellText::from(transaction.transaction_id.as_str()),
                CellText::from(transaction.transaction_date.as_str()),
                CellText::from(transaction.kind.as_str()),
                CellText::from(transaction.amount.as_str()),
                CellText::from(balance_after(
                    transaction.ledger_entry_id,
                    &transaction.transaction_id,
                )),
                CellText::from(statement),
                CellText::from(optional(transaction.ledger.as_ref())),
                CellText::from(transaction.status.as_deref().unwrap_or("")),
                CellText::from(optional(transaction.reference.as_ref())),
                CellText::from(optional(description)),
            ];
            TRANSACTION_COLUMNS
                .iter()
                .zip(cells)
                .filter(|(column, _)| shown(column))
                .map(|(_, cell)| cell)
                .collect()
        })
        .collect();
    (columns, rows)
}

/// `confirmed` by its vendor, or `pending from` the day it becomes valid (in yellow).
fn instruction_status(instruction: &PaymentInstruction) -> CellText {
    if !instruction.pending {
        return CellText::from("confirmed");
    }
    let text = match &instruction.valid_from {
        Some(day) => format!("pending from {day}"),
        None => "pending".to_owned(),
    };
    CellText::styled(text, Style::new().fg(Color::Yellow))
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
    let (fields, keys): (&Value, &[&str]) = match account.get(BILLING_ADDRESS) {
        Some(address) if address.is_object() => (address, &BILLING_ADDRESS_PARTS),
        _ => (account, &FLAT_BILLING_ADDRESS),
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

/// The top-level fields of the staged document the page does not show above, in the
/// document's order: the billing address is shown from either its structured or its flat
/// fields (see [`address`]), so the other form stays in the rest.
fn rest_of_document(account: &Value) -> Vec<(&String, &Value)> {
    let Some(fields) = account.as_object() else {
        return Vec::new();
    };
    let address_shown: &[&str] = match fields.get(BILLING_ADDRESS) {
        Some(address) if address.is_object() => &[BILLING_ADDRESS],
        _ => &FLAT_BILLING_ADDRESS,
    };
    fields
        .iter()
        .filter(|(key, _)| {
            !SHOWN_ABOVE.contains(&key.as_str()) && !address_shown.contains(&key.as_str())
        })
        .collect()
}

/// A value of the document on one line: a scalar as it is; a list as its count, then its
/// entries; an object as its fields. Lists within are shortened to their count. Stops adding
/// once wider than `room`, where the table cuts it with `…` anyway.
fn summary(value: &Value, room: usize) -> String {
    match value {
        Value::Array(items) if items.is_empty() => "none".to_owned(),
        Value::Array(items) => {
            let count = match items.len() {
                1 => "1 entry".to_owned(),
                count => format!("{count} entries"),
            };
            let entries = joined(items.iter().map(|item| inner(item, room)), "; ", room);
            format!("{count}: {entries}")
        }
        Value::Object(map) => fields(map, room),
        other => scalar(other),
    }
}

/// A value within a list or object: lists as their count in brackets, objects as their fields
/// in braces.
fn inner(value: &Value, room: usize) -> String {
    match value {
        Value::Array(items) => format!("[{}]", items.len()),
        Value::Object(map) => format!("{{{}}}", fields(map, room)),
        other => scalar(other),
    }
}

/// `key=value key=value`, each value as [`inner`] shows it.
fn fields(map: &Map<String, Value>, room: usize) -> String {
    if map.is_empty() {
        return "{}".to_owned();
    }
    let pairs = map
        .iter()
        .map(|(key, value)| format!("{key}={}", inner(value, room)));
    joined(pairs, " ", room)
}

/// Text as it is (`""` when empty, so that it shows), numbers, booleans and null as in JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) if text.is_empty() => "\"\"".to_owned(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `parts` joined by `separator`, stopping once the text is wider than `room`.
fn joined(parts: impl Iterator<Item = String>, separator: &str, room: usize) -> String {
    let mut text = String::new();
    let mut width = 0;
    for part in parts {
        if width > room {
            break;
        }
        if !text.is_empty() {
            text.push_str(separator);
            width += text_width(separator);
        }
        width += text_width(&part);
        text.push_str(&part);
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|line| {
                line.spans
                    .iter()
                    .map(|span| span.content.as_ref())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_rest_of_the_document_is_what_the_page_does_not_show_above() {
        let document = json!({
            "import_supplier": "OLD_CO", "external_account_number": "ACC-1",
            "billing_name": "Ada", "billing_address1": "1 Analytical St",
            "billing_postcode": "N1 1AA", "notes": [], "statements": [],
            "payment_instructions": [], "ledgers": [], "last_statement_balance": "1.00",
            "consents": [], "metadata": [], "transfer_balance": "1.00"
        });
        let rest: Vec<&str> = rest_of_document(&document)
            .into_iter()
            .map(|(key, _)| key.as_str())
            .collect();
        assert_eq!(rest, ["consents", "metadata", "transfer_balance"]);

        // Shown from the structured address, the flat fields are part of the rest.
        let document = json!({
            "billing_address": {"street_address": "1 Analytical St"},
            "billing_address1": "1 Analytical Street"
        });
        let rest: Vec<&str> = rest_of_document(&document)
            .into_iter()
            .map(|(key, _)| key.as_str())
            .collect();
        assert_eq!(rest, ["billing_address1"]);
    }

    #[test]
    fn document_values_are_summarised_on_one_line() {
        let value = json!([{"slug": "winter", "payments": [1, 2], "terms": {"day": 14}}, "x"]);
        assert_eq!(
            summary(&value, usize::MAX),
            "2 entries: {slug=winter payments=[2] terms={day=14}}; x"
        );
        assert_eq!(summary(&json!([]), usize::MAX), "none");
        assert_eq!(summary(&json!({}), usize::MAX), "{}");
        assert_eq!(summary(&json!(""), usize::MAX), "\"\"");
        assert_eq!(summary(&json!(null), usize::MAX), "null");
        assert_eq!(summary(&json!(10), usize::MAX), "10");
    }

    #[test]
    fn a_long_list_is_summarised_only_as_far_as_the_table_can_show() {
        let value = Value::Array(vec![json!({"key": "legacy_tariff"}); 10_000]);
        let text = summary(&value, 40);
        assert!(text.starts_with("10000 entries: {key=legacy_tariff}; "));
        // Wider than the room, so that the table cuts it visibly, but not much wider.
        assert!((41..80).contains(&text_width(&text)), "{text}");
    }

    #[test]
    fn ledgers_and_unusual_statuses_get_their_columns() {
        let account: AccountDetail = serde_json::from_value(json!({
            "platform_account_number": "A-1", "import_supplier": "OLD_CO",
            "external_account_number": "ACC-1", "created_at": "2025-03-03T10:02:00Z",
            "account": {}, "open_statement_period_start": "2025-03-01",
            "operations_team_name": null, "balance": "5.00",
            "closed_statements": [
                {"ledger": "ELEC", "first_transaction_date": null, "closing_date": "2025-02-28",
                 "issued_date": "2025-03-01", "closing_balance": "0.00", "transactions": 0},
                {"ledger": "GAS", "first_transaction_date": "2025-02-01",
                 "closing_date": "2025-02-28", "issued_date": "2025-03-01",
                 "closing_balance": "5.00", "transactions": 1}
            ],
            "notes": [],
            "transactions": [
                {"transaction_id": "G-1", "transaction_date": "2025-02-01", "amount": "5.00",
                 "type": "CREDIT", "status": "TRANSACTION_IMPORT_SUCCESS", "ledger_entry_id": 7,
                 "historical": true, "ledger": "GAS"},
                {"transaction_id": "E-1", "transaction_date": "2025-03-02", "amount": "1.00",
                 "type": "CHARGE"}
            ],
            "ledger_entries": [
                {"id": 7, "transaction_id": "G-1", "type": "CREDIT", "amount": "5.00",
                 "balance_after": "5.00", "transaction_date": "2025-02-01",
                 "posted_at": "2025-03-03T10:02:00Z"}
            ],
            "statements": [], "payment_instructions": []
        }))
        .expect("the account reads");
        let lines = text(&account_lines(&account, 200));
        let at = |start: &str| {
            lines
                .iter()
                .position(|line| line.starts_with(start))
                .unwrap_or_else(|| panic!("no line starting {start:?} in {lines:#?}"))
        };
        assert!(at("Closed statement · ledger ELEC") < at("Closed statement · ledger GAS"));
        assert_eq!(
            lines[at("Closed statement · ledger GAS") + 4].trim_end(),
            " Transactions      1 (the first on 2025-02-01)"
        );
        let header = at(" Id");
        let squeeze = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            squeeze(&lines[header]),
            "Id Date Type Amount Balance after Statement Ledger Status Reference Description"
        );
        assert_eq!(
            squeeze(&lines[header + 1]),
            "G-1 2025-02-01 CREDIT 5.00 5.00 closed GAS TRANSACTION_IMPORT_SUCCESS"
        );
        assert_eq!(
            squeeze(&lines[header + 2]),
            "E-1 2025-03-02 CHARGE 1.00 open"
        );
        assert_eq!(
            lines[at("Rest of the document")],
            "Rest of the document (0 fields)"
        );
    }
}
