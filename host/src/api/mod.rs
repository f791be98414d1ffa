//! The HTTP edge: one router per resource, merged; one [`AppState`]; one error type.
//!
//! Handlers stay thin: they extract the caller and the body, call a domain use case and shape
//! the answer. Framework-level failures (unknown route, wrong method, wrong content type,
//! oversized or malformed body) answer in the same error format as everything else.

pub mod admin;
pub mod error;
pub mod extract;
pub mod graphql;
pub mod health;
pub mod imports;
pub mod openapi;
pub mod staging;
pub mod stream;

use crate::auth::Authenticator;
use crate::domain::account::AccountLimits;
use crate::domain::admin::Admin;
use crate::domain::imports::Imports;
use crate::store::Store;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::{Json, Router, middleware};
use error::ApiError;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::{Arc, OnceLock};
use utoipa::OpenApi;

/// Request limits (configurable).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_body_bytes: usize,
    pub max_items: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 2 * 1024 * 1024,
            max_items: 1000,
        }
    }
}

/// Everything a handler may reach.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<dyn Store>,
    pub imports: Imports,
    pub admin: Admin,
    pub auth: Authenticator,
    pub graphql: graphql::PlatformSchema,
    pub metrics: PrometheusHandle,
    pub limits: Limits,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl AppState {
    pub fn new(store: Arc<dyn Store>, auth: Authenticator, limits: Limits) -> Self {
        let account_limits = AccountLimits {
            max_items: limits.max_items,
        };
        Self {
            imports: Imports::new(store.clone(), account_limits),
            admin: Admin::new(store.clone()),
            graphql: graphql::schema(auth.clone()),
            auth,
            store,
            metrics: metrics_handle(),
            limits,
        }
    }
}

/// The process-wide Prometheus recorder, installed on first use.
pub fn metrics_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            if metrics::set_global_recorder(recorder).is_err() {
                tracing::warn!("a metrics recorder was already installed");
            }
            handle
        })
        .clone()
}

/// The whole HTTP API.
pub fn router(state: AppState) -> Router {
    let max_body = state.limits.max_body_bytes;
    Router::new()
        .merge(health::router())
        .merge(graphql::router())
        .merge(staging::router())
        .merge(imports::router())
        .merge(admin::router())
        .route("/v1/openapi.json", get(openapi_json))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn(health::track))
        .with_state(state)
}

async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(openapi::ApiDoc::openapi())
}

async fn not_found() -> ApiError {
    ApiError::NotFound
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
