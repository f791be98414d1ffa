//! Historical statements: the bills the old supplier issued, kept on the account. The latest
//! one imported decides where the open statement period starts.

use super::documents::{INVALID_PATH_CODE, INVALID_PATH_DETAIL, check_payload_path};
use super::money::Money;
use super::validation::{ObjectReader, Optional, Required, StrRule};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Statement {
    pub bill_period_from_date: NaiveDate,
    pub bill_period_to_date: NaiveDate,
    pub statement_id: String,
    pub issued_date: NaiveDate,
    pub number: String,
    #[schema(value_type = String, example = "120.50")]
    pub gross_amount: Money,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_path: Option<String>,
}

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
    let issued = r.date("issued_date", Required);
    let number = r.string("number", Required, StrRule::max(128));
    let gross = r.decimal("gross_amount", Required, 2);
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
    Some(Statement {
        bill_period_from_date: from?,
        bill_period_to_date: to?,
        statement_id: statement_id?,
        issued_date: issued?,
        number: number?,
        gross_amount: Money(gross?),
        statement_path: path,
    })
}
