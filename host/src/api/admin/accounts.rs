//! `/admin/v1/accounts/{number}`: everything on an imported account.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{OperatorCaller, PathParams};
use crate::domain::additions::AccountView;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/v1/accounts/{number}", get(get_account))
}

#[utoipa::path(get, path = "/admin/v1/accounts/{number}", tag = "admin",
    params(("number" = String, Path, description = "platform account number")),
    responses((status = 200, body = AccountView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_account(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(number): PathParams<String>,
) -> Result<Json<AccountView>, ApiError> {
    Ok(Json(state.additions.account_view(&number)?))
}
