//! `/admin/v1/suppliers/{code}/imports`: page through a supplier's import processes.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{OperatorCaller, PathParams, QueryParams};
use crate::domain::admin::ImportQuery;
use crate::domain::import_process::{ImportProcess, ImportState, format_datetime};
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use ferry_admin_api::{ImportFailure, ImportItem, ImportPage};
use serde::Deserialize;

pub const DEFAULT_PAGE: usize = 50;
pub const MAX_PAGE: usize = 500;

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/v1/suppliers/{code}/imports", get(list_imports))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ImportsParams {
    /// `PENDING`, `IN_PROGRESS`, `PROCESSED`, `ERRORED` or `CANCELLED` (empty: any).
    #[param(nullable = false)]
    pub state: Option<String>,
    /// Case-insensitive part of the external account number.
    #[param(nullable = false)]
    pub q: Option<String>,
    /// Page size (default 50).
    #[param(nullable = false, minimum = 1, maximum = 500)]
    pub limit: Option<usize>,
    /// The last external account number of the previous page.
    #[param(nullable = false)]
    pub after: Option<String>,
}

fn import_answer(process: ImportProcess) -> ImportItem {
    ImportItem {
        external_account_number: process.external_account_number,
        state: process.state,
        platform_account_number: process.platform_account_number,
        account_created_at: process.account_created_at.map(format_datetime),
        staged_at: format_datetime(process.staged_at),
        updated_at: format_datetime(process.updated_at),
        last_failure: process.last_failure.map(|failure| ImportFailure {
            code: failure.code,
            detail: failure.detail,
            at: format_datetime(failure.at),
        }),
    }
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/imports", tag = "admin",
    params(("code" = String, Path, description = "import supplier code"), ImportsParams),
    responses((status = 200, body = ImportPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn list_imports(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    QueryParams(params): QueryParams<ImportsParams>,
) -> Result<Json<ImportPage>, ApiError> {
    let import_state = match params.state.as_deref() {
        None | Some("") => None,
        Some(text) => Some(ImportState::parse(text).ok_or_else(|| ApiError::Query {
            name: "state",
            detail: format!("\"{text}\" is not an import state"),
        })?),
    };
    let limit = params.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::Query {
            name: "limit",
            detail: format!("use 1 to {MAX_PAGE}"),
        });
    }
    let query = ImportQuery {
        state: import_state,
        search: params.q.filter(|q| !q.is_empty()),
        limit,
        after: params.after.filter(|a| !a.is_empty()),
    };
    let page = state.admin.import_page(&code, &query).await?;
    Ok(Json(ImportPage {
        items: page.items.into_iter().map(import_answer).collect(),
        next_after: page.next_after,
    }))
}
