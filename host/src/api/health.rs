//! Liveness, readiness and Prometheus metrics (with every supplier's campaign figures).

use super::AppState;
use crate::domain::error::DomainError;
use crate::events::relay::RelayMode;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use ferry_admin_api::{StorageState, StorageStatus};
use serde::Serialize;
use std::time::Duration;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HealthBody {
    /// Always `ok`.
    pub status: &'static str,
}

/// Readiness: the store, whether it takes writes, and the event relay's state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ReadyBody {
    /// `ready` or `unavailable`.
    pub status: &'static str,
    /// `ok`, `read_only` (writes refused for want of space) or `error`.
    pub store: &'static str,
    /// Whether writes are taken, the free space against its watermark, and why not.
    pub storage: StorageStatus,
    pub relay: RelayMode,
    /// Null while the relay has not failed.
    #[schema(required = true)]
    pub relay_last_error: Option<String>,
    /// Events waiting in the outbox; null when the store did not answer.
    #[schema(required = true)]
    pub outbox_pending: Option<usize>,
}

/// How long readiness waits for the store to answer: a probe that hangs (a database away
/// makes each read wait for a connection) tells a load balancer less than a quick 503.
const STORE_PROBE: Duration = Duration::from_secs(2);

/// The service is up.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, body = HealthBody)))]
pub async fn healthz() -> Json<HealthBody> {
    Json(HealthBody { status: "ok" })
}

/// Ready when the store answers and takes writes; the relay's state is reported (events wait
/// durably in the outbox while Redis is away, so a relay that is retrying does not make Ferry
/// unready).
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, body = ReadyBody), (status = 503, description = "The store does not answer, or refuses writes (`storage.reason` says why)", body = ReadyBody)))]
pub async fn readyz(State(state): State<AppState>) -> Response {
    let answers = probed(state.admin.store_answers()).await.is_some();
    let storage = state.storage.status();
    let store = match storage.state {
        _ if !answers => "error",
        StorageState::Writable => "ok",
        StorageState::ReadOnly => "read_only",
        StorageState::Failed => "error",
    };
    let store_ok = store == "ok";
    let relay = state.relay.snapshot();
    let body = ReadyBody {
        status: if store_ok { "ready" } else { "unavailable" },
        store,
        storage,
        relay: relay.state,
        relay_last_error: relay.last_error,
        outbox_pending: if answers {
            probed(state.event_log.waiting()).await
        } else {
            None
        },
    };
    let status = if store_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

/// What the store answers to `read` within [`STORE_PROBE`], if it does.
async fn probed<T>(read: impl Future<Output = Result<T, DomainError>>) -> Option<T> {
    tokio::time::timeout(STORE_PROBE, read).await.ok()?.ok()
}

/// Prometheus metrics (text format): the process's own, then every supplier's campaign
/// figures ([`super::supplier_gauges`]).
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text exposition format", content_type = "text/plain", body = String)))]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let mut text = state.metrics.render();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&super::supplier_gauges::render(&state).await);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        text,
    )
}
