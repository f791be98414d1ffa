//! A payment vendor for the campaign: `payment-instruction/create/` makes Ferry confirm each
//! instruction with its vendor (`GET {url}/instructions/{reference}` with
//! `Authorization: Bearer <key>`), so the benchmark serves that call itself, on a local port in
//! its own process, for every deployment of a run. Every reference exists: the answer is the
//! instruction's details, as a card vendor gives them; a request without the key is refused.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header::AUTHORIZATION};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde_json::json;
use std::sync::Arc;

/// The vendor's code, as the campaign's instructions name it (`FERRY_VENDOR_<CODE>_URL`).
pub const CODE: &str = "BENCHPAY";
/// The key Ferry must send.
const KEY: &str = "ferry-bench-vendor-key";

/// The vendor, serving until dropped.
#[derive(Debug)]
pub struct Vendor {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Vendor {
    /// Starts serving on a free local port.
    pub async fn start() -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let router = router(Arc::from(format!("Bearer {KEY}")));
        let task = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, router).await {
                eprintln!("the payment vendor stopped: {error}");
            }
        });
        Ok(Self { url, task })
    }

    /// The settings that make a `ferry` confirm instructions with this vendor.
    pub fn server_environment(&self) -> Vec<(String, String)> {
        vec![
            (format!("FERRY_VENDOR_{CODE}_URL"), self.url.clone()),
            (format!("FERRY_VENDOR_{CODE}_KEY"), KEY.to_owned()),
        ]
    }
}

impl Drop for Vendor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn router(authorization: Arc<str>) -> Router {
    Router::new()
        .route("/instructions/{reference}", get(instruction))
        .with_state(authorization)
}

/// The instruction's details, to a caller with the key.
async fn instruction(
    State(authorization): State<Arc<str>>,
    headers: HeaderMap,
    Path(reference): Path<String>,
) -> Response {
    let given = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    if given != Some(&*authorization) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    Json(json!({
        "reference": reference,
        "status": "ACTIVE",
        "type": "CARD",
        "card": {"brand": "VISA", "last4": "4242", "expiry": "12/29"}
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn it_confirms_every_reference_to_a_caller_with_the_key() {
        let vendor = Vendor::start().await.expect("vendor");
        let client = reqwest::Client::new();
        let url = format!("{}/instructions/PM-OE-70000001", vendor.url);
        let answer: serde_json::Value = client
            .get(&url)
            .bearer_auth(KEY)
            .send()
            .await
            .expect("answer")
            .error_for_status()
            .expect("200")
            .json()
            .await
            .expect("JSON");
        assert_eq!(answer["reference"], "PM-OE-70000001");
        let refused = client.get(&url).send().await.expect("answer");
        assert_eq!(refused.status(), reqwest::StatusCode::UNAUTHORIZED);
        let environment = vendor.server_environment();
        assert_eq!(environment[0].0, "FERRY_VENDOR_BENCHPAY_URL");
        assert_eq!(
            environment[1],
            ("FERRY_VENDOR_BENCHPAY_KEY".into(), KEY.into())
        );
    }
}
