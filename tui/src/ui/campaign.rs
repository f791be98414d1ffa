//! The Campaign screen: a supplier's campaign report, what proves its migration. Bars for the
//! accounts migrated, errored and pending out of those staged, the other counts, the records
//! kept on the migrated accounts, their reconciliation (the declared and held totals and their
//! difference, in the real sign: credit positive, debit negative), and the error groups with
//! the mismatched accounts as a list. Enter on a group lists its accounts page by page, each
//! with its error or its difference.

use super::amounts::{credit_or_debit, difference, side, signed};
use super::columns::{CellText, Column, FittedTable, fit_line, text_width};
use super::{loading_text, page_footer, placeholder, ready_or_say, reconciliation_style, titled};
use crate::api::{AccountReportRow, CampaignReport};
use crate::app::{App, GroupAccounts, Loadable};
use crate::calls::AccountGroup;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, TableState};

/// The filled and the empty part of a bar.
const FILLED: &str = "█";
const EMPTY: &str = "░";
/// Width of the names before the bars.
const BAR_LABEL_WIDTH: usize = 10;

pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let campaign = &app.campaign;
    let Some(code) = &campaign.supplier else {
        let text = match app.suppliers.list {
            Loadable::Ready(_) => {
                "Choose a supplier on the Suppliers screen (1) and press R.".to_owned()
            }
            _ => loading_text(app, "suppliers"),
        };
        return placeholder(frame, area, titled("Campaign"), text);
    };
    if let Some(accounts) = &campaign.accounts {
        return render_accounts(frame, app, code, accounts, area);
    }
    let title = format!("Campaign · {code}");
    let loadable = &campaign.report;
    if let Some(report) = ready_or_say(frame, app, area, title, loadable, "the campaign report") {
        render_report(frame, app, report, area);
    }
}

fn render_report(frame: &mut Frame, app: &App, report: &CampaignReport, area: Rect) {
    let [progress_area, middle, groups_area] = Layout::vertical([
        Constraint::Length(6),
        Constraint::Length(8),
        Constraint::Min(3),
    ])
    .areas(area);
    let [records_area, reconciliation_area] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(middle);

    let block = titled(format!(
        "Campaign · {} · {} accounts staged",
        report.supplier, report.accounts.staged
    ));
    let width = usize::from(block.inner(progress_area).width);
    frame.render_widget(
        Paragraph::new(progress_lines(report, width)).block(block),
        progress_area,
    );
    frame.render_widget(
        Paragraph::new(records_lines(report)).block(titled("Records kept")),
        records_area,
    );
    frame.render_widget(
        Paragraph::new(reconciliation_lines(report)).block(titled(format!(
            "Reconciliation · {} migrated",
            report.accounts.migrated
        ))),
        reconciliation_area,
    );
    render_groups(frame, app, report, groups_area);
}

/// The bars of the migrated, errored and pending accounts out of those staged, then the other
/// counts, each line `width` columns at most.
fn progress_lines(report: &CampaignReport, width: usize) -> Vec<Line<'static>> {
    let accounts = &report.accounts;
    let bars = [
        ("Migrated", accounts.migrated, Style::new().fg(Color::Green)),
        ("Errored", accounts.errored, Style::new().fg(Color::Red)),
        ("Pending", accounts.pending, Style::new().fg(Color::Cyan)),
    ];
    let mut lines: Vec<Line<'static>> = bars
        .into_iter()
        .map(|(label, count, style)| bar_line(label, count, accounts.staged, width, style))
        .collect();
    let mut others = format!(
        " In progress {} · Cancelled {} · Dry run errored {}",
        accounts.in_progress, accounts.cancelled, accounts.dry_run_errored
    );
    if accounts.dry_run_errored > 0 {
        others.push_str(" (not migrated, their last dry run failed)");
    }
    lines.push(fit_line(Line::from(others), width));
    lines
}

/// `Migrated  ██████░░░░  842 of 974  86.4%`: the bar takes whatever room the figures leave.
fn bar_line(label: &str, count: u64, total: u64, width: usize, style: Style) -> Line<'static> {
    let figures = format!(
        " {count:>digits$} of {total} {:>6}",
        percent(count, total),
        digits = total.to_string().len()
    );
    let head = format!(" {label:<BAR_LABEL_WIDTH$}");
    let cells = width.saturating_sub(text_width(&head) + text_width(&figures));
    let filled = filled_cells(count, total, cells);
    fit_line(
        Line::from(vec![
            Span::raw(head),
            Span::styled(FILLED.repeat(filled), style),
            Span::styled(
                EMPTY.repeat(cells - filled),
                Style::new().fg(Color::DarkGray),
            ),
            Span::raw(figures),
        ]),
        width,
    )
}

/// How many of `cells` a bar of `count` out of `total` fills, to the nearest cell; never none
/// for a count above zero, never all before the count is the total.
fn filled_cells(count: u64, total: u64, cells: usize) -> usize {
    if total == 0 || cells == 0 {
        return 0;
    }
    let count = u128::from(count.min(total));
    let total = u128::from(total);
    let nearest = (count * cells as u128 * 2 + total) / (total * 2);
    let nearest = usize::try_from(nearest).unwrap_or(cells);
    if count == 0 {
        0
    } else if count == total {
        cells
    } else {
        nearest.clamp(1, cells.saturating_sub(1).max(1))
    }
}

/// `86.4%`, to the nearest tenth, except that only the whole reads `100.0%` and only nothing
/// reads `0.0%`; `-` of nothing.
fn percent(count: u64, total: u64) -> String {
    if total == 0 {
        return "-".to_owned();
    }
    let (count, total) = (u128::from(count.min(total)), u128::from(total));
    let nearest = (count * 2000 + total) / (total * 2);
    let permille = if count == 0 || count == total {
        nearest
    } else {
        nearest.clamp(1, 999)
    };
    format!("{}.{}%", permille / 10, permille % 10)
}

/// ` name  value`: the names in a column `names` wide, the values right-aligned to `width`.
fn figure(name: &str, names: usize, value: &str, width: usize, style: Style) -> Vec<Span<'static>> {
    vec![
        Span::raw(format!(" {name:<names$} ")),
        Span::styled(format!("{value:>width$}"), style),
    ]
}

/// The width of the widest of `names`.
fn widest<'a>(names: impl IntoIterator<Item = &'a str>) -> usize {
    names.into_iter().map(text_width).max().unwrap_or(0)
}

fn records_lines(report: &CampaignReport) -> Vec<Line<'static>> {
    let data = &report.data;
    let records = [
        ("Notes", data.notes),
        ("Transactions", data.transactions),
        ("Statements", data.statements),
        ("Payment instructions", data.payment_instructions),
    ]
    .map(|(name, count)| (name, count.to_string()));
    let names = widest(records.iter().map(|(name, _)| *name));
    let width = widest(records.iter().map(|(_, count)| count.as_str()));
    records
        .iter()
        .map(|(name, count)| Line::from(figure(name, names, count, width, Style::new())))
        .collect()
}

/// The migrated accounts by reconciliation, then the declared and held totals of those that
/// declared their money, and the difference between them.
fn reconciliation_lines(report: &CampaignReport) -> Vec<Line<'static>> {
    let reconciliation = &report.reconciliation;
    let gap = difference(&reconciliation.held_total, &reconciliation.declared_total);
    let counts = [
        ("Reconciled", reconciliation.reconciled, "RECONCILED"),
        ("Mismatched", reconciliation.mismatched, "MISMATCH"),
        ("Not declared", reconciliation.not_declared, "NOT_DECLARED"),
    ];
    let amounts = [
        ("Declared total", reconciliation.declared_total.clone()),
        ("Held total", reconciliation.held_total.clone()),
        ("Difference", gap.as_deref().map_or("-".to_owned(), signed)),
    ];
    let names = widest(
        counts
            .iter()
            .map(|(name, _, _)| *name)
            .chain(amounts.iter().map(|(name, _)| *name)),
    );
    let width = counts
        .iter()
        .map(|(_, count, _)| count.to_string().len())
        .chain(amounts.iter().map(|(_, amount)| text_width(amount)))
        .max()
        .unwrap_or(0);
    let mut lines: Vec<Line<'static>> = counts
        .into_iter()
        .map(|(name, count, state)| {
            let style = if count == 0 {
                Style::new()
            } else {
                reconciliation_style(state)
            };
            Line::from(figure(name, names, &count.to_string(), width, style))
        })
        .collect();
    for (name, amount) in &amounts[..2] {
        let mut spans = figure(name, names, amount, width, Style::new());
        if let Some(side) = side(amount) {
            spans.push(Span::raw(format!(" ({side})")));
        }
        lines.push(Line::from(spans));
    }
    let (gap_text, gap_style) = match gap.as_deref().map(side) {
        Some(None) => ("held = declared", reconciliation_style("RECONCILED")),
        Some(Some(_)) => ("held − declared", reconciliation_style("MISMATCH")),
        None => ("held − declared", Style::new()),
    };
    let mut spans = figure(amounts[2].0, names, &amounts[2].1, width, gap_style);
    spans.push(Span::raw(format!(" ({gap_text})")));
    lines.push(Line::from(spans));
    lines
}

/// The list Enter opens: the error groups, then the mismatched accounts.
const GROUP_COLUMNS: [Column; 2] = [
    Column::left("Group").gives_way_last(),
    Column::right("Accounts"),
];

fn render_groups(frame: &mut Frame, app: &App, report: &CampaignReport, area: Rect) {
    let rows = app
        .campaign
        .groups()
        .into_iter()
        .map(|(group, count)| {
            let style = if count == 0 {
                Style::new()
            } else {
                Style::new().fg(Color::Red)
            };
            vec![
                CellText::styled(group_name(&group), style),
                CellText::from(count.to_string()),
            ]
        })
        .collect();
    let title = match report.accounts.errored {
        0 => "Error tail · no errored accounts".to_owned(),
        errored => format!("Error tail · {errored} errored"),
    };
    let bottom = Line::from(" Enter: list the group's accounts ").right_aligned();
    let table =
        FittedTable::list(&GROUP_COLUMNS, rows, area).block(titled(title).title_bottom(bottom));
    let mut state = TableState::new().with_selected(Some(app.campaign.selected));
    frame.render_stateful_widget(table, area, &mut state);
}

/// `1 account`, `4 accounts`.
fn accounts_count(count: u64) -> String {
    match count {
        1 => "1 account".to_owned(),
        count => format!("{count} accounts"),
    }
}

/// How a group is named in the list and above its accounts.
fn group_name(group: &AccountGroup) -> String {
    match group {
        AccountGroup::Error(code) => format!("ERRORED · {code}"),
        AccountGroup::Mismatched => "MISMATCH · held ≠ declared".to_owned(),
    }
}

/// The accounts of an error group (all `ERRORED`, all with the group's code): the external
/// account number identifies a row, so it is cut last; the error's detail gives way first (the
/// selected row's shows in full under the list). The platform account only when one of them
/// has one (an account whose later migration attempt failed).
const ERROR_COLUMNS: [Column; 3] = [
    Column::left("External account").gives_way_last(),
    Column::left(PLATFORM_ACCOUNT),
    Column::left("Error detail").gives_way_first(),
];
const PLATFORM_ACCOUNT: &str = "Platform account";

/// The mismatched accounts: what each declared, what its ledger holds and the difference.
const MISMATCH_COLUMNS: [Column; 5] = [
    Column::left("External account").gives_way_last(),
    Column::left(PLATFORM_ACCOUNT),
    Column::right("Declared"),
    Column::right("Held"),
    Column::right("Difference").gives_way_last(),
];

fn render_accounts(frame: &mut Frame, app: &App, code: &str, accounts: &GroupAccounts, area: Rect) {
    let [group_area, list_area, detail_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let count = app
        .campaign
        .groups()
        .into_iter()
        .find(|(group, _)| *group == accounts.group)
        .map_or_else(String::new, |(_, count)| {
            format!(" · {}", accounts_count(count))
        });
    let line = Line::from(vec![
        Span::raw(" group: "),
        Span::styled(
            group_name(&accounts.group),
            Style::new().bold().fg(Color::Cyan),
        ),
        Span::raw(count),
    ]);
    frame.render_widget(fit_line(line, usize::from(group_area.width)), group_area);

    let title = format!("Campaign · {code} · page {}", accounts.pages.number());
    let loaded = ready_or_say(
        frame,
        app,
        list_area,
        title.clone(),
        &accounts.page,
        "the accounts",
    );
    let Some(page) = loaded else {
        return;
    };
    if page.accounts.is_empty() {
        let text = "No accounts are in this group now. Esc goes back to the report.";
        return placeholder(frame, list_area, titled(title), text);
    }
    let (columns, rows) = match accounts.group {
        AccountGroup::Error(_) => error_table(&page.accounts),
        AccountGroup::Mismatched => (MISMATCH_COLUMNS.to_vec(), mismatch_rows(&page.accounts)),
    };
    let bottom = page_footer(
        page.accounts.len(),
        page.next_after.is_some(),
        accounts.pages.is_first(),
    );
    let table =
        FittedTable::list(&columns, rows, list_area).block(titled(title).title_bottom(bottom));
    let mut state = TableState::new().with_selected(Some(accounts.selected));
    frame.render_stateful_widget(table, list_area, &mut state);

    if let Some(row) = page.accounts.get(accounts.selected) {
        let line = selected_line(row);
        frame.render_widget(fit_line(line, usize::from(detail_area.width)), detail_area);
    }
}

/// The columns and rows of an error group's accounts.
fn error_table(rows: &[AccountReportRow]) -> (Vec<Column>, Vec<Vec<CellText>>) {
    let with_platform = rows.iter().any(|row| row.platform_account_number.is_some());
    let columns = ERROR_COLUMNS
        .into_iter()
        .filter(|column| with_platform || column.header != PLATFORM_ACCOUNT)
        .collect();
    let red = Style::new().fg(Color::Red);
    let rows = rows
        .iter()
        .map(|row| {
            let mut cells = vec![CellText::from(row.external_account_number.as_str())];
            if with_platform {
                let platform = row.platform_account_number.as_deref().unwrap_or("-");
                cells.push(CellText::from(platform));
            }
            cells.push(CellText::styled(
                row.error_detail.as_deref().unwrap_or_default(),
                red,
            ));
            cells
        })
        .collect();
    (columns, rows)
}

fn mismatch_rows(rows: &[AccountReportRow]) -> Vec<Vec<CellText>> {
    let amount = |value: &Option<String>| value.as_deref().map_or("-".to_owned(), credit_or_debit);
    rows.iter()
        .map(|row| {
            vec![
                CellText::from(row.external_account_number.as_str()),
                CellText::from(row.platform_account_number.as_deref().unwrap_or("-")),
                CellText::from(amount(&row.declared)),
                CellText::from(amount(&row.held)),
                CellText::styled(
                    row.difference.as_deref().map_or("-".to_owned(), signed),
                    reconciliation_style("MISMATCH"),
                ),
            ]
        })
        .collect()
}

/// The selected account under the list: its error in full, or for an account without one,
/// what Enter shows of it.
fn selected_line(row: &AccountReportRow) -> Line<'static> {
    let number = &row.external_account_number;
    match (&row.error_code, &row.error_detail) {
        (Some(code), detail) => Line::from(vec![
            Span::raw(format!(" {number} failed: ")),
            Span::styled(
                format!("{} ({code})", detail.as_deref().unwrap_or_default()),
                Style::new().fg(Color::Red),
            ),
        ]),
        (None, _) if row.platform_account_number.is_some() => Line::from(format!(
            " {number}: Enter opens the account, its reconciliation and the first figure that diverges."
        )),
        (None, _) => Line::from(format!(" {number} has no platform account yet.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_shows_any_count_and_is_full_only_when_complete() {
        assert_eq!(filled_cells(0, 974, 50), 0);
        assert_eq!(filled_cells(1, 974, 50), 1, "one account still shows");
        assert_eq!(filled_cells(487, 974, 50), 25);
        assert_eq!(filled_cells(973, 974, 50), 49, "one short is not full");
        assert_eq!(filled_cells(974, 974, 50), 50);
        assert_eq!(filled_cells(5, 0, 50), 0);
        assert_eq!(filled_cells(5, 10, 0), 0);
        assert_eq!(filled_cells(1, 2, 1), 1);
    }

    #[test]
    fn percentages_read_a_hundred_only_when_whole_and_nothing_only_of_nothing() {
        assert_eq!(percent(842, 974), "86.4%");
        assert_eq!(percent(2, 3), "66.7%");
        assert_eq!(percent(19_999, 20_000), "99.9%", "not yet a hundred");
        assert_eq!(percent(10_000, 10_000), "100.0%");
        assert_eq!(percent(1, 20_000), "0.1%", "not nothing");
        assert_eq!(percent(0, 974), "0.0%");
        assert_eq!(percent(0, 0), "-");
    }
}
