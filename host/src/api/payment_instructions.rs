//! `POST /v1/data-import/payment-instruction/create/`: a payment instruction, confirmed with
//! its vendor.

use super::AppState;
use super::account_number::AccountNumbers;
use super::error::{ApiError, ErrorBody};
use super::extract::{JsonBody, SupplierCaller};
use super::ignored::IgnoredFields;
use super::schemas::LegacyPaymentInstruction;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/v1/data-import/payment-instruction/create/",
        post(create_payment_instruction),
    )
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PaymentInstructionCreated {
    #[serde(flatten)]
    pub number: AccountNumbers,
    pub reference: String,
}

/// Confirms a payment instruction with its vendor and keeps it. `vendor` is one the operator
/// configured (any case); exactly one of `reference` and the deprecated
/// `instruction_reference` (`mutually_exclusive_field_required`). 400 when the vendor does not
/// confirm the instruction (do not retry as is); 500 when the vendor cannot be reached in time
/// (retry as is).
#[utoipa::path(post, path = "/v1/data-import/payment-instruction/create/", tag = "data",
    request_body = LegacyPaymentInstruction,
    responses((status = 201, body = PaymentInstructionCreated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 500, body = ErrorBody)),
    security(("token" = [])))]
pub async fn create_payment_instruction(
    State(state): State<AppState>,
    SupplierCaller(key): SupplierCaller,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, IgnoredFields, Json<PaymentInstructionCreated>), ApiError> {
    let added = state.additions.add_payment_instruction(&key, &body).await?;
    let (platform_account_number, reference) = added.value;
    Ok((
        StatusCode::CREATED,
        IgnoredFields::new("payment_instructions", added.ignored),
        Json(PaymentInstructionCreated {
            number: AccountNumbers::new(Some(platform_account_number)),
            reference,
        }),
    ))
}
