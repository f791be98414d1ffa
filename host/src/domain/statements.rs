//! Historical statements: the bills the old supplier issued, kept on the account. The latest
//! one imported decides where the open statement period starts.

use super::documents::{INVALID_PATH_CODE, INVALID_PATH_DETAIL, check_payload_path};
use super::money::Money;
use super::request_document::{AccountReference, RequestDocument, elements};
use super::validation::{FieldError, FieldErrors};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The real platform's code for a statement the account already has (or is sent twice).
pub const STATEMENT_EXISTS: &str = "historical_statement_already_exists";

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

/// A `historical-statements/create/` body as accepted (the real `HistoricalStatements`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PostedStatements {
    #[serde(flatten)]
    pub account: AccountReference,
    pub statements: Vec<PostedStatement>,
}

/// A statement as posted (the real `Statement`): `gross_amount` in pence.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PostedStatement {
    bill_period_from_date: NaiveDate,
    bill_period_to_date: NaiveDate,
    statement_id: String,
    #[serde(default)]
    issued_date: Option<NaiveDate>,
    #[serde(default)]
    number: Option<String>,
    #[serde(default)]
    gross_amount: Option<i64>,
    #[serde(default)]
    statement_path: Option<String>,
}

impl From<PostedStatement> for Statement {
    fn from(posted: PostedStatement) -> Self {
        Statement {
            bill_period_from_date: posted.bill_period_from_date,
            bill_period_to_date: posted.bill_period_to_date,
            statement_id: posted.statement_id,
            issued_date: posted.issued_date,
            number: posted.number,
            gross_amount: posted.gross_amount.map(Money::from_pence),
            statement_path: posted.statement_path,
        }
    }
}

/// The `statements` of a checked account document, as kept.
pub fn document_statements(
    document: &Map<String, Value>,
) -> Result<Vec<Statement>, serde_json::Error> {
    elements(document, "statements")
        .iter()
        .map(|statement| PostedStatement::deserialize(statement).map(Statement::from))
        .collect()
}

/// Reads and checks a `historical-statements/create/` body, reporting every problem at once.
pub fn read_statements(body: &Value, max_items: usize) -> Result<PostedStatements, FieldErrors> {
    RequestDocument::Statements.read(body, max_items, |document, errors| {
        for (index, statement) in elements(document, "statements").iter().enumerate() {
            if let Value::Object(statement) = statement {
                check_statement(statement, &format!("statements.{index}"), errors);
            }
        }
    })
}

/// The rules of a statement the schema does not state.
pub(crate) fn check_statement(statement: &Map<String, Value>, at: &str, errors: &mut FieldErrors) {
    let date =
        |name: &str| NaiveDate::parse_from_str(statement.get(name)?.as_str()?, "%Y-%m-%d").ok();
    if let (Some(from), Some(to)) = (date("bill_period_from_date"), date("bill_period_to_date"))
        && from > to
    {
        errors.push(FieldError::new(
            format!("{at}.bill_period_to_date"),
            "bill_period_to_date_before_from_date",
            "bill_period_to_date must not be earlier than bill_period_from_date.",
        ));
    }
    if let Some(Value::String(path)) = statement.get("statement_path")
        && check_payload_path(path).is_err()
    {
        errors.push(FieldError::new(
            format!("{at}.statement_path"),
            INVALID_PATH_CODE,
            INVALID_PATH_DETAIL,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::validation::{codes, pairs};
    use serde_json::json;

    #[test]
    fn reads_statements_in_pence_with_the_optional_fields() {
        let body = json!({"import_supplier": "OLD_CO", "external_account_number": "A-1",
        "statements": [
            {"bill_period_from_date": "2024-01-01", "bill_period_to_date": "2024-01-31",
             "statement_id": "S-1", "issued_date": null, "gross_amount": 10000,
             "number": "7", "statement_path": "bills/s-1.pdf"},
            {"bill_period_from_date": "2024-02-01", "bill_period_to_date": "2024-02-29",
             "statement_id": "S-2", "gross_amount": null},
        ]});
        let posted = read_statements(&body, 10).expect("valid");
        let statements: Vec<Statement> =
            posted.statements.into_iter().map(Statement::from).collect();
        assert_eq!(
            statements[0].gross_amount.map(|m| m.to_string()).as_deref(),
            Some("100.00")
        );
        assert_eq!(statements[0].issued_date, None);
        assert_eq!(
            statements[0].statement_path.as_deref(),
            Some("bills/s-1.pdf")
        );
        assert_eq!(statements[1].gross_amount, None);
        assert_eq!(statements[1].number, None);
    }

    #[test]
    fn reports_every_problem_at_once() {
        let body = json!({"import_supplier": "OLD_CO", "statements": [
            {"bill_period_from_date": "2024-02-01", "bill_period_to_date": "2024-01-31",
             "statement_id": " ", "gross_amount": 10.5, "statement_path": "/../x.pdf"},
            {"bill_period_from_date": "2024-02-30", "statement_id": "S-2",
             "gross_amount": 100_000_000_000_001_i64},
        ]});
        let errors = read_statements(&body, 10).expect_err("invalid");
        let expected = [
            ("external_account_number", "required"),
            (
                "statements.0.bill_period_to_date",
                "bill_period_to_date_before_from_date",
            ),
            ("statements.0.statement_id", "blank"),
            ("statements.0.gross_amount", "invalid"),
            ("statements.0.statement_path", "invalid_document_path"),
            ("statements.1.bill_period_to_date", "required"),
            ("statements.1.bill_period_from_date", "invalid"),
            ("statements.1.gross_amount", "max_value"),
        ];
        assert_eq!(codes(&errors), pairs(&expected));
    }
}
