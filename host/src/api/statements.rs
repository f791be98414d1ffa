//! `POST /v1/data-import/historical-statements/create/`: the old supplier's statements.

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, SupplierCaller};
use super::ignored::IgnoredFields;
use super::schemas::HistoricalStatements;
use crate::domain::additions::AddedStatements;
use crate::domain::statements::Statement;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;

/// The statements kept, echoed as they were sent (`gross_amount` in pence).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StatementsBody {
    pub import_supplier: String,
    pub external_account_number: String,
    pub statements: Vec<StatementBody>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StatementBody {
    #[schema(value_type = String, format = Date)]
    pub bill_period_from_date: chrono::NaiveDate,
    #[schema(value_type = String, format = Date)]
    pub bill_period_to_date: chrono::NaiveDate,
    pub statement_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Date)]
    pub issued_date: Option<chrono::NaiveDate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    /// In pence (the currency's lowest denomination), as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gross_amount: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statement_path: Option<String>,
}

impl From<Statement> for StatementBody {
    fn from(statement: Statement) -> Self {
        Self {
            bill_period_from_date: statement.bill_period_from_date,
            bill_period_to_date: statement.bill_period_to_date,
            statement_id: statement.statement_id,
            issued_date: statement.issued_date,
            number: statement.number,
            gross_amount: statement.gross_amount.map(|money| money.pence()),
            statement_path: statement.statement_path,
        }
    }
}

impl From<AddedStatements> for StatementsBody {
    fn from(added: AddedStatements) -> Self {
        Self {
            import_supplier: added.import_supplier,
            external_account_number: added.external_account_number,
            statements: added.statements.into_iter().map(Into::into).collect(),
        }
    }
}

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/data-import/historical-statements/create/",
        post(create_statements),
    )
}

/// Keeps historical statements and answers them as sent. A `statement_id` the account already
/// has refuses the request (400 `historical_statement_already_exists`), as on the real
/// platform. `gross_amount` is in the currency's lowest denomination (pence: `12050` is
/// £120.50); `bill_period_to_date` is not earlier than `bill_period_from_date`; a
/// `statement_path` must exist in the supplier's document root. Strings may not be blank.
#[utoipa::path(post, path = "/v1/data-import/historical-statements/create/", tag = "data",
    request_body = HistoricalStatements,
    responses((status = 201, body = StatementsBody), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_statements(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, Json<StatementsBody>), ApiError> {
    let added = state.additions.add_statements(&key, &body).await?;
    Ok((
        StatusCode::CREATED,
        IgnoredFields::new("historical_statements", added.ignored),
        Json(added.value.into()),
    ))
}
