//! A sandbox payment vendor served by Ferry itself for `--demo`, registered as vendor
//! `SANDBOX`: every reference exists except those starting with `missing`.

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

pub const VENDOR_CODE: &str = "SANDBOX";
pub const VENDOR_KEY: &str = "sandbox-vendor-key";
pub const BASE_PATH: &str = "/sandbox/payment-vendor";

pub fn router() -> Router {
    Router::new().route(
        &format!("{BASE_PATH}/instructions/{{reference}}"),
        get(instruction),
    )
}

async fn instruction(headers: HeaderMap, Path(reference): Path<String>) -> Response {
    let authorised = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value == format!("Bearer {VENDOR_KEY}"));
    if !authorised {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "unauthorised"})),
        )
            .into_response();
    }
    if reference.starts_with("missing") {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "no such instruction"})),
        )
            .into_response();
    }
    Json(json!({
        "reference": reference,
        "status": "ACTIVE",
        "type": "CARD",
        "card": {"brand": "VISA", "last4": "4242", "exp_month": 12, "exp_year": 2030},
    }))
    .into_response()
}
