//! `/admin/v1/suppliers/{code}/report`: a supplier's campaign report, read from its counters;
//! and `/report/accounts`, one row per account, as JSON pages (`limit`, `after`) or as the
//! whole list in CSV with a header row, streamed as the rows are read so that a supplier of a
//! million accounts is never held in memory. The CSV is the whole list: it takes the filters
//! but not `limit` or `after`, which it refuses rather than ignores.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{OperatorCaller, PathParams, QueryParams};
use crate::api::stream::csv_table;
use crate::domain::campaign::ReconciliationState;
use crate::domain::import_process::ImportState;
use crate::domain::report::RowFilter;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use ferry_admin_api::{AccountReportPage, AccountReportRow, CampaignReport};
use futures_util::{StreamExt, TryStreamExt};
use serde::Deserialize;
use utoipa::openapi::schema::{ObjectBuilder, Type};

/// Rows of a JSON page when `limit` is not given.
pub const DEFAULT_PAGE: usize = 100;
pub const MAX_PAGE: usize = 1000;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/v1/suppliers/{code}/report", get(campaign_report))
        .route(
            "/admin/v1/suppliers/{code}/report/accounts",
            get(report_accounts),
        )
}

/// The supplier's campaign report: its accounts by state, the records kept on them, their
/// reconciliations with the declared and held totals, and the error tail by code.
#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/report", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = CampaignReport), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn campaign_report(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<CampaignReport>, ApiError> {
    Ok(Json(state.reports.campaign(&code).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ReportAccountsParams {
    // These three are described by their schemas, which list their values.
    #[param(schema_with = format_schema)]
    pub format: Option<String>,
    #[param(schema_with = state_schema)]
    pub state: Option<String>,
    #[param(schema_with = reconciliation_schema)]
    pub reconciliation: Option<String>,
    /// Only `ERRORED` accounts whose failure has this code (one group of the error tail).
    #[param(nullable = false)]
    pub error_code: Option<String>,
    /// Rows of a JSON page (default 100); not with `format=csv`.
    #[param(nullable = false, minimum = 1, maximum = 1000)]
    pub limit: Option<usize>,
    /// The `next_after` of the previous JSON page; not with `format=csv`.
    #[param(nullable = false)]
    pub after: Option<String>,
}

fn choice(values: &[&str], description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
        .description(Some(description))
}

fn format_schema() -> ObjectBuilder {
    choice(
        &["json", "csv"],
        "`json` (default): a page of rows; `csv`: every row, after a header row.",
    )
}

fn state_schema() -> ObjectBuilder {
    choice(
        &ImportState::ALL.map(ImportState::as_str),
        "Only the accounts in this import state.",
    )
}

fn reconciliation_schema() -> ObjectBuilder {
    choice(
        &ReconciliationState::ALL.map(ReconciliationState::as_str),
        "Only the migrated accounts of this reconciliation.",
    )
}

/// How the rows are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Csv,
}

/// A free-text query value as given; an empty one is no value (as the imports listing reads
/// them). The values of a choice are taken as they are: an empty one is not one of them.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|text| !text.is_empty())
}

/// One row per account of the supplier, in external-account-number order, that the filters
/// admit: a page of JSON, or every row in CSV.
#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/report/accounts", tag = "admin",
    params(("code" = String, Path, description = "import supplier code"), ReportAccountsParams),
    responses(
        (status = 200, description = "A page of rows (`format=json`), or every row with a header row (`format=csv`, RFC 4180)",
            content(
                (AccountReportPage = "application/json"),
                (String = "text/csv"),
            )),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn report_accounts(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    QueryParams(params): QueryParams<ReportAccountsParams>,
) -> Result<Response, ApiError> {
    let format = match params.format.as_deref() {
        None | Some("json") => Format::Json,
        Some("csv") => Format::Csv,
        Some(other) => {
            return Err(ApiError::Query {
                name: "format",
                detail: format!("\"{other}\" is not json or csv"),
            });
        }
    };
    let filter = RowFilter::read(
        params.state.as_deref(),
        params.reconciliation.as_deref(),
        given(&params.error_code),
    )?;
    let after = given(&params.after);
    if format == Format::Csv {
        let paged = [
            ("limit", params.limit.is_some()),
            ("after", after.is_some()),
        ];
        if let Some((name, _)) = paged.into_iter().find(|(_, given)| *given) {
            return Err(ApiError::Query {
                name,
                detail: "the CSV is the whole list; page through the rows with format=json"
                    .to_owned(),
            });
        }
        let rows = state.reports.account_rows(&code, filter, None).await?;
        return Ok(csv_table(
            AccountReportRow::CSV_HEADER,
            AccountReportRow::csv_values,
            rows,
        ));
    }
    let limit = params.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::Query {
            name: "limit",
            detail: format!("use 1 to {MAX_PAGE}"),
        });
    }
    let rows = state.reports.account_rows(&code, filter, after).await?;
    // One row more than the page tells whether another page follows.
    let mut accounts: Vec<AccountReportRow> = rows.take(limit + 1).try_collect().await?;
    let next_after = if accounts.len() > limit {
        accounts.truncate(limit);
        accounts
            .last()
            .map(|row| row.external_account_number.clone())
    } else {
        None
    };
    Ok(Json(AccountReportPage {
        accounts,
        next_after,
    })
    .into_response())
}
