//! Historical statements: the bills the old supplier issued, kept on the account. The latest
//! one imported decides where the open statement period starts.

use super::documents::{INVALID_PATH_CODE, INVALID_PATH_DETAIL, check_payload_path};
use super::money::Money;
use super::validation::{Nullable, ObjectReader, Optional, Required, StrRule};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// A historical statement as kept. `issued_date`, `number` and `gross_amount` are optional,
/// as on the real platform; `gross_amount` arrives in pence (the currency's lowest
/// denomination) and is kept as an amount of money.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    pub bill_period_from_date: NaiveDate,
    pub bill_period_to_date: NaiveDate,
    pub statement_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_date: Option<NaiveDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gross_amount: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_path: Option<String>,
}

/// Largest `gross_amount` in pence (a trillion pounds either way).
pub const MAX_GROSS_PENCE: i64 = 100_000_000_000_000;

/// Reads one element of `statements`.
pub fn read_statement(r: &mut ObjectReader<'_>) -> Option<Statement> {
    let from = r.date("bill_period_from_date", Required);
    let to = r.date("bill_period_to_date", Required);
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        r.error(
            r.attr("bill_period_to_date"),
            "bill_period_to_date_before_from_date",
            "bill_period_to_date must not be earlier than bill_period_from_date.",
        );
    }
    let statement_id = r.string("statement_id", Required, StrRule::max(128));
    let issued = r.date("issued_date", Nullable);
    let number = r.string("number", Optional, StrRule::max(255));
    let gross = r.integer("gross_amount", Nullable, -MAX_GROSS_PENCE, MAX_GROSS_PENCE);
    let path = r.string("statement_path", Optional, StrRule::max(1024));
    if let Some(path) = &path
        && check_payload_path(path).is_err()
    {
        r.error(
            r.attr("statement_path"),
            INVALID_PATH_CODE,
            INVALID_PATH_DETAIL,
        );
    }
    // A field given but unreadable has its own error, which fails the whole request.
    Some(Statement {
        bill_period_from_date: from?,
        bill_period_to_date: to?,
        statement_id: statement_id?,
        issued_date: issued,
        number,
        gross_amount: gross.map(Money::from_pence),
        statement_path: path,
    })
}
