//! Fitting text into table columns. Each column is as wide as its widest value or header, as
//! far as the width allows; when the table is too wide, columns give way in a fixed order (see
//! [`share_width`]) and whatever must still be cut ends in a visible `…`, never silently. Both
//! the list screens (ratatui [`Table`]s) and the account page (tables written as lines of text)
//! lay out their columns here.

use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};

/// The mark left where text was cut.
const ELLIPSIS: char = '…';
/// The mark before the selected row of a list.
const HIGHLIGHT_SYMBOL: &str = "▶ ";
/// Columns between two columns of a list.
const LIST_GAP: usize = 2;
/// How narrow the column that gives way first may become before others give way.
const FIRST_TO_GIVE_WAY_FLOOR: usize = 10;
/// How narrow a header may be cut to keep its column's values whole.
const HEADER_FLOOR: usize = 4;
/// How narrow an ordinary column may become before the flexible one shrinks further.
const ORDINARY_FLOOR: usize = 6;
/// How narrow any column but those that give way last may become before those are cut.
const LAST_RESORT_FLOOR: usize = 3;

/// Terminal columns `text` takes, as ratatui measures it (wide characters take two).
pub(crate) fn text_width(text: &str) -> usize {
    Span::raw(text).width()
}

/// `text` on one line in at most `width` columns: whole when it fits, otherwise cut and ended
/// with `…`. Line breaks and tabs become spaces.
pub(crate) fn fit(text: &str, width: usize) -> String {
    let text = one_line(text);
    if text_width(&text) <= width {
        return text;
    }
    let Some(room) = width.checked_sub(1) else {
        return String::new();
    };
    let mut kept = leading(&text, room);
    kept.push(ELLIPSIS);
    kept
}

/// `line` in at most `width` columns: whole when it fits, otherwise cut where the width runs out
/// and ended with `…` (styles and alignment kept).
pub(crate) fn fit_line(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut room = width.saturating_sub(1);
    let mut spans = Vec::new();
    for span in line.spans {
        let span_width = span.width();
        if span_width <= room {
            room -= span_width;
            spans.push(span);
        } else {
            spans.push(Span::styled(leading(&span.content, room), span.style));
            spans.push(Span::styled(ELLIPSIS.to_string(), span.style));
            break;
        }
    }
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}

/// `text` with line breaks and tabs as spaces.
fn one_line(text: &str) -> String {
    if text.contains(char::is_control) {
        text.replace(char::is_control, " ")
    } else {
        text.to_owned()
    }
}

/// The longest start of `text` that takes at most `width` columns, whole characters only.
fn leading(text: &str, width: usize) -> String {
    let mut kept = String::new();
    let mut used = 0;
    let span = Span::raw(text);
    for grapheme in span.styled_graphemes(Style::new()) {
        let grapheme_width = text_width(grapheme.symbol);
        if used + grapheme_width > width {
            break;
        }
        kept.push_str(grapheme.symbol);
        used += grapheme_width;
    }
    kept
}

/// The width a column needs to show its header and every value whole.
pub(crate) fn column_width<'a>(header: &str, values: impl IntoIterator<Item = &'a str>) -> usize {
    values
        .into_iter()
        .map(text_width)
        .fold(text_width(header), usize::max)
}

/// When a column gives up room, relative to the others of its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GivesWay {
    /// The flexible column (a name, a description): shrinks first, down to a few characters.
    First,
    Ordinary,
    /// What identifies a row (a supplier code, an event type): cut only when nothing else can
    /// give.
    Last,
}

/// How a column is headed, aligned and sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Column {
    pub header: &'static str,
    pub alignment: Alignment,
    pub gives_way: GivesWay,
}

impl Column {
    /// A left-aligned column that gives way in the ordinary order.
    pub(crate) const fn left(header: &'static str) -> Self {
        Self {
            header,
            alignment: Alignment::Left,
            gives_way: GivesWay::Ordinary,
        }
    }

    /// A right-aligned column (amounts and counts).
    pub(crate) const fn right(header: &'static str) -> Self {
        Self {
            alignment: Alignment::Right,
            ..Self::left(header)
        }
    }

    /// This column shrinks before any other.
    pub(crate) const fn gives_way_first(self) -> Self {
        Self {
            gives_way: GivesWay::First,
            ..self
        }
    }

    /// This column is cut only when nothing else can give.
    pub(crate) const fn gives_way_last(self) -> Self {
        Self {
            gives_way: GivesWay::Last,
            ..self
        }
    }
}

/// One cell's text and style, before it is fitted to its column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CellText {
    pub text: String,
    pub style: Style,
}

impl CellText {
    pub(crate) fn styled(text: impl Into<String>, style: Style) -> Self {
        Self {
            text: text.into(),
            style,
        }
    }
}

impl From<String> for CellText {
    fn from(text: String) -> Self {
        Self::styled(text, Style::new())
    }
}

impl From<&str> for CellText {
    fn from(text: &str) -> Self {
        Self::styled(text, Style::new())
    }
}

/// Column widths within `room` columns (gaps excluded) for columns whose headers need
/// `header_widths` and whose widest values need `value_widths`. Every column starts as wide as
/// it needs; while the total is too wide, the widest column taking part in the current step
/// loses one column, step after step:
///
/// 1. the columns that give way first, down to [`FIRST_TO_GIVE_WAY_FLOOR`];
/// 2. headers wider than their column's values, down to [`HEADER_FLOOR`] (values stay whole);
/// 3. ordinary columns, down to [`ORDINARY_FLOOR`];
/// 4. the columns that give way first and ordinary ones, down to [`LAST_RESORT_FLOOR`];
/// 5. any column, down to one.
///
/// Whatever does not fit after that is left to the terminal to clip.
pub(crate) fn share_width(
    columns: &[Column],
    header_widths: &[usize],
    value_widths: &[usize],
    room: usize,
) -> Vec<usize> {
    let mut widths: Vec<usize> = header_widths
        .iter()
        .zip(value_widths)
        .map(|(header, values)| (*header).max(*values))
        .collect();
    let mut excess = widths.iter().sum::<usize>().saturating_sub(room);
    for step in Step::ALL {
        // A column not taking part in the step, or already narrower than its floor, keeps its
        // width.
        let floors: Vec<usize> = columns
            .iter()
            .zip(value_widths)
            .zip(&widths)
            .map(|((column, values), width)| {
                step.floor(column, *values)
                    .map_or(*width, |floor| floor.min(*width))
            })
            .collect();
        give_way(&mut widths, &mut excess, &floors);
    }
    widths
}

/// The steps of [`share_width`], in order.
#[derive(Debug, Clone, Copy)]
enum Step {
    FirstToGiveWay,
    Headers,
    Ordinary,
    AllButLast,
    Any,
}

impl Step {
    const ALL: [Step; 5] = [
        Self::FirstToGiveWay,
        Self::Headers,
        Self::Ordinary,
        Self::AllButLast,
        Self::Any,
    ];

    /// How narrow `column`, whose widest value takes `values` columns, may become in this
    /// step; `None` if it takes no part.
    fn floor(self, column: &Column, values: usize) -> Option<usize> {
        match self {
            Self::FirstToGiveWay => {
                (column.gives_way == GivesWay::First).then_some(FIRST_TO_GIVE_WAY_FLOOR)
            }
            Self::Headers => Some(values.max(HEADER_FLOOR)),
            Self::Ordinary => (column.gives_way == GivesWay::Ordinary).then_some(ORDINARY_FLOOR),
            Self::AllButLast => (column.gives_way != GivesWay::Last).then_some(LAST_RESORT_FLOOR),
            Self::Any => Some(1),
        }
    }
}

/// Takes one column at a time from the widest column still above its floor (the rightmost of
/// equals) until nothing is in excess or every column is at its floor.
fn give_way(widths: &mut [usize], excess: &mut usize, floors: &[usize]) {
    while *excess > 0 {
        let widest = widths
            .iter()
            .zip(floors)
            .enumerate()
            .filter(|(_, (width, floor))| width > floor)
            .max_by_key(|(_, (width, _))| **width)
            .map(|(index, _)| index);
        let Some(index) = widest else {
            return;
        };
        widths[index] -= 1;
        *excess -= 1;
    }
}

/// A table whose columns are sized and whose cells are cut to fit a width.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FittedTable {
    pub columns: Vec<Column>,
    pub widths: Vec<usize>,
    /// The headers, cut to their columns.
    pub headers: Vec<String>,
    /// The cells, cut to their columns.
    pub rows: Vec<Vec<CellText>>,
    /// Columns between two columns.
    pub gap: usize,
}

impl FittedTable {
    /// Lays out `rows` under `columns` in `width` columns in all, `gap` between columns, or
    /// one if that is what it takes to keep every header and value whole.
    pub(crate) fn new(
        columns: &[Column],
        rows: Vec<Vec<CellText>>,
        width: usize,
        gap: usize,
    ) -> Self {
        let rows: Vec<Vec<CellText>> = rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|cell| CellText::styled(one_line(&cell.text), cell.style))
                    .collect()
            })
            .collect();
        let header_widths: Vec<usize> = columns.iter().map(|c| text_width(c.header)).collect();
        let value_widths: Vec<usize> = (0..columns.len())
            .map(|index| {
                column_width(
                    "",
                    rows.iter()
                        .filter_map(|row| row.get(index))
                        .map(|cell| cell.text.as_str()),
                )
            })
            .collect();
        let share = |gap: usize| {
            let gaps = gap * columns.len().saturating_sub(1);
            let room = width.saturating_sub(gaps);
            share_width(columns, &header_widths, &value_widths, room)
        };
        let wanted: Vec<usize> = header_widths
            .iter()
            .zip(&value_widths)
            .map(|(header, values)| (*header).max(*values))
            .collect();
        let mut gap = gap;
        let mut widths = share(gap);
        if widths != wanted && gap > 1 {
            gap = 1;
            widths = share(gap);
        }
        let headers = columns
            .iter()
            .zip(&widths)
            .map(|(column, width)| fit(column.header, *width))
            .collect();
        let rows = rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .zip(&widths)
                    .map(|(cell, width)| CellText::styled(fit(&cell.text, *width), cell.style))
                    .collect()
            })
            .collect();
        Self {
            columns: columns.to_vec(),
            widths,
            headers,
            rows,
            gap,
        }
    }

    /// The table as a list with a selectable row, for a bordered block of `area`.
    pub(crate) fn list(columns: &[Column], rows: Vec<Vec<CellText>>, area: Rect) -> Table<'static> {
        let borders = 2;
        let width = usize::from(area.width)
            .saturating_sub(borders)
            .saturating_sub(text_width(HIGHLIGHT_SYMBOL));
        Self::new(columns, rows, width, LIST_GAP).into_table()
    }

    fn into_table(self) -> Table<'static> {
        let aligned = |text: String, column: &Column| Line::from(text).alignment(column.alignment);
        let header = Row::new(
            self.headers
                .into_iter()
                .zip(&self.columns)
                .map(|(text, column)| Cell::from(aligned(text, column))),
        )
        .bold();
        let columns = self.columns;
        let rows = self.rows.into_iter().map(|row| {
            Row::new(
                row.into_iter()
                    .zip(&columns)
                    .map(|(cell, column)| Cell::from(aligned(cell.text, column)).style(cell.style))
                    .collect::<Vec<_>>(),
            )
        });
        let widths = self
            .widths
            .iter()
            .map(|width| Constraint::Length(u16::try_from(*width).unwrap_or(u16::MAX)));
        Table::new(rows.collect::<Vec<_>>(), widths)
            .header(header)
            .column_spacing(u16::try_from(self.gap).unwrap_or(u16::MAX))
            .row_highlight_style(Style::new().reversed())
            .highlight_symbol(HIGHLIGHT_SYMBOL)
    }

    /// The header (bold) and the rows as lines of text, each line starting with `indent`.
    pub(crate) fn into_lines(self, indent: &str) -> Vec<Line<'static>> {
        let header: Vec<CellText> = self
            .headers
            .iter()
            .map(|text| CellText::styled(text.clone(), Style::new().bold()))
            .collect();
        std::iter::once(header)
            .chain(self.rows.iter().cloned())
            .map(|row| self.line(indent, row))
            .collect()
    }

    fn line(&self, indent: &str, row: Vec<CellText>) -> Line<'static> {
        let mut spans = vec![Span::raw(indent.to_owned())];
        let last = self.columns.len().saturating_sub(1);
        for (index, ((cell, column), width)) in row
            .into_iter()
            .zip(&self.columns)
            .zip(&self.widths)
            .enumerate()
        {
            let padding = " ".repeat(width.saturating_sub(text_width(&cell.text)));
            let is_last = index == last;
            if column.alignment == Alignment::Right {
                spans.push(Span::raw(padding));
                spans.push(Span::styled(cell.text, cell.style));
            } else {
                spans.push(Span::styled(cell.text, cell.style));
                if !is_last {
                    spans.push(Span::raw(padding));
                }
            }
            if !is_last {
                spans.push(Span::raw(" ".repeat(self.gap)));
            }
        }
        Line::from(spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_fits_is_kept_whole() {
        assert_eq!(
            fit("SSE_ENERGY_NORTH_LEGACY", 23),
            "SSE_ENERGY_NORTH_LEGACY"
        );
        assert_eq!(fit("", 0), "");
    }

    #[test]
    fn text_that_does_not_fit_is_cut_with_an_ellipsis() {
        assert_eq!(fit("SSE_ENERGY_NORTH_LEGACY", 12), "SSE_ENERGY_…");
        assert_eq!(fit("SSE_ENERGY_NORTH_LEGACY", 1), "…");
        assert_eq!(fit("SSE_ENERGY_NORTH_LEGACY", 0), "");
    }

    #[test]
    fn wide_characters_count_twice_and_are_not_split() {
        assert_eq!(text_width("電気"), 4);
        assert_eq!(fit("電気料金", 5), "電気…");
        assert_eq!(fit("電気料金", 4), "電…");
        assert_eq!(text_width(&fit("電気料金", 4)), 3);
    }

    #[test]
    fn line_breaks_become_spaces() {
        assert_eq!(fit("two\nlines", 20), "two lines");
    }

    #[test]
    fn a_line_too_long_is_cut_with_an_ellipsis_in_the_style_where_it_was_cut() {
        let red = Style::new().fg(ratatui::style::Color::Red);
        let line = Line::from(vec![
            Span::raw("Could not set "),
            Span::styled("PAUSED", red),
        ]);
        let cut = fit_line(line.clone(), 17);
        assert_eq!(cut.to_string(), "Could not set PA…");
        assert_eq!(cut.spans.last().map(|span| span.style), Some(red));
        assert_eq!(fit_line(line.clone(), 14).to_string(), "Could not set…");
        assert_eq!(fit_line(line.clone(), 20), line);
    }

    #[test]
    fn a_column_is_as_wide_as_its_widest_value_or_header() {
        assert_eq!(
            column_width("Code", ["OLD_CO", "SSE_ENERGY_NORTH_LEGACY"]),
            23
        );
        assert_eq!(column_width("In progress", ["3", "0"]), 11);
        assert_eq!(column_width("Code", []), 4);
    }

    fn share(columns: &[Column], values: &[usize], room: usize) -> Vec<usize> {
        let headers: Vec<usize> = columns.iter().map(|c| text_width(c.header)).collect();
        share_width(columns, &headers, values, room)
    }

    #[test]
    fn columns_that_fit_get_what_they_need() {
        let columns = [
            Column::left("Code").gives_way_last(),
            Column::left("Name").gives_way_first(),
        ];
        assert_eq!(share(&columns, &[25, 30], 100), [25, 30]);
    }

    #[test]
    fn the_flexible_column_gives_way_first_and_the_identifying_one_last() {
        let columns = [
            Column::left("Code").gives_way_last(),
            Column::left("Name").gives_way_first(),
            Column::left("Digest"),
        ];
        // The name alone gives way.
        assert_eq!(share(&columns, &[25, 30, 13], 60), [25, 22, 13]);
        // The name down to its floor, then the digest down to its floor.
        assert_eq!(share(&columns, &[25, 30, 13], 45), [25, 10, 10]);
        // Then both down to the last resort, and only then the code.
        assert_eq!(share(&columns, &[25, 30, 13], 30), [24, 3, 3]);
    }

    #[test]
    fn headers_wider_than_their_values_are_cut_before_values() {
        let columns = [
            Column::left("Code").gives_way_last(),
            Column::right("In progress"),
        ];
        assert_eq!(share(&columns, &[25, 2], 30), [25, 5]);
        assert_eq!(share(&columns, &[25, 2], 20), [17, 3]);
    }

    #[test]
    fn a_fitted_table_cuts_cells_visibly_to_their_columns() {
        let columns = [Column::left("Reference"), Column::right("Amount")];
        let rows = vec![vec![
            CellText::from("INV-2025-01-ADJUSTMENT-0003"),
            CellText::from("1058.40"),
        ]];
        // Two columns between columns would cut more: one it is.
        let table = FittedTable::new(&columns, rows, 20, 2);
        assert_eq!(table.widths, [12, 7]);
        assert_eq!(table.gap, 1);
        assert_eq!(table.headers, ["Reference", "Amount"]);
        assert_eq!(table.rows[0][0].text, "INV-2025-01…");
    }

    #[test]
    fn a_fitted_table_as_lines_aligns_every_value_with_its_header() {
        let columns = [
            Column::left("Status"),
            Column::right("Amount"),
            Column::left("Description").gives_way_first(),
        ];
        let rows = vec![
            vec![
                CellText::from("TRANSACTION_IMPORT_SUCCESS"),
                CellText::from("-40.00"),
                CellText::from("Direct Debit payment, thank you"),
            ],
            vec![
                CellText::from("POSTED"),
                CellText::from("1058.40"),
                CellText::from(""),
            ],
        ];
        let lines: Vec<String> = FittedTable::new(&columns, rows, 70, 2)
            .into_lines(" ")
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                " Status                       Amount  Description",
                " TRANSACTION_IMPORT_SUCCESS   -40.00  Direct Debit payment, thank you",
                " POSTED                      1058.40  ",
            ]
        );
    }
}
