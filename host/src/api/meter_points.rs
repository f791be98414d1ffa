//! The meter points of an imported account: their registration statuses, and the
//! registration flows a supplier sends (`GET meterpoint-statuses-for-account/...`,
//! `POST send-registration-flows/...`, as on the real platform).

use super::AppState;
use super::error::{ApiError, ErrorBody};
use super::extract::{PathParams, SupplierCaller};
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/v1/data-import/meterpoint-statuses-for-account/{supplier}/{external}/",
            get(meter_point_statuses),
        )
        .route(
            "/v1/data-import/send-registration-flows/{supplier}/{external}/",
            post(send_registration_flows),
        )
}

/// A meter point and its registration status.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct MeterPointStatusBody {
    /// The MPAN or MPRN.
    pub mpxn: String,
    /// One of the real platform's statuses (`PRE_REGISTRATION`, `REGISTRATION_REQUESTED`,
    /// `ON_SUPPLY`, ...).
    pub status: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RegistrationFlowsBody {
    pub external_account_number: String,
    pub import_supplier_code: String,
    pub meter_points: Vec<RegistrationFlowBody>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RegistrationFlowBody {
    pub mpxn: String,
    /// `REGISTRATION_FLOW_SUCCESS` or `REGISTRATION_FLOW_ERROR`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<String>,
}

/// The meter points of the account with their status; 404 `meter_points_not_found` when it
/// has none.
#[utoipa::path(get, path = "/v1/data-import/meterpoint-statuses-for-account/{supplier}/{external}/", tag = "imports",
    params(("supplier" = String, Path, description = "import supplier code"), ("external" = String, Path, description = "external account number")),
    responses((status = 200, body = [MeterPointStatusBody]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn meter_point_statuses(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    PathParams((supplier, external)): PathParams<(String, String)>,
) -> Result<Json<Vec<MeterPointStatusBody>>, ApiError> {
    let points = state
        .additions
        .meter_point_statuses(&key, &supplier, &external)
        .await?;
    Ok(Json(
        points
            .into_iter()
            .map(|point| MeterPointStatusBody {
                mpxn: point.mpxn,
                status: point.status,
            })
            .collect(),
    ))
}

/// Marks the account's meter points for registration: `REGISTRATION_FLOW_SUCCESS` for each
/// marked (`REGISTRATION_REQUESTED`, with its gain event), `REGISTRATION_FLOW_ERROR` with the
/// reason for one whose registration is under way or done.
#[utoipa::path(post, path = "/v1/data-import/send-registration-flows/{supplier}/{external}/", tag = "data",
    params(("supplier" = String, Path, description = "import supplier code"), ("external" = String, Path, description = "external account number")),
    responses((status = 200, body = RegistrationFlowsBody), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("token" = [])))]
pub async fn send_registration_flows(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    PathParams((supplier, external)): PathParams<(String, String)>,
) -> Result<Json<RegistrationFlowsBody>, ApiError> {
    let results = state
        .additions
        .send_registration_flows(&key, &supplier, &external)
        .await?;
    Ok(Json(RegistrationFlowsBody {
        external_account_number: external,
        import_supplier_code: supplier,
        meter_points: results
            .into_iter()
            .map(|result| RegistrationFlowBody {
                mpxn: result.mpxn,
                status: if result.sent {
                    "REGISTRATION_FLOW_SUCCESS"
                } else {
                    "REGISTRATION_FLOW_ERROR"
                },
                error_detail: result.error_detail,
            })
            .collect(),
    }))
}
