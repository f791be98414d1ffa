//! The HTTP edge: one router per resource, merged; one [`AppState`]; one error type.
//!
//! Handlers stay thin: they extract the caller and the body, call a domain use case and shape
//! the answer. Framework-level failures (unknown route, wrong method, wrong content type,
//! oversized or malformed body) answer in the same error format as everything else.

pub mod account_number;
pub mod accounts_v2;
pub mod admin;
pub mod connections;
pub mod error;
pub mod extract;
pub mod graphql;
pub mod health;
pub mod ignored;
pub mod imports;
pub mod meter_points;
pub mod metrics_recorder;
pub mod notes;
pub mod openapi;
pub mod payment_instructions;
pub mod request_metrics;
pub mod sandbox;
pub mod schemas;
pub mod staging;
pub mod statements;
pub mod stream;
pub mod supplier_gauges;
pub mod throttle;
pub mod transactions;

use crate::auth::Authenticator;
use crate::domain::account::AccountLimits;
use crate::domain::additions::Additions;
use crate::domain::admin::Admin;
use crate::domain::event_log::EventLog;
use crate::domain::imports::Imports;
use crate::domain::migrations::Migrations;
use crate::domain::ports::{Documents, PaymentVendors};
use crate::domain::report::Reports;
use crate::plugins::Plugins;
use crate::store::Store;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::{Json, Router, middleware};
use error::ApiError;
use metrics_exporter_prometheus::PrometheusHandle;
pub use metrics_recorder::metrics_handle;
use std::sync::Arc;

/// Request limits (configurable).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_body_bytes: usize,
    pub max_items: usize,
    /// Average requests a second allowed per API key (0: no limit).
    pub requests_per_second: u32,
    /// Requests a key may send at once before the average applies.
    pub request_burst: u32,
    /// Accounts `process/` migrates at once (0: no limit); past it 429.
    pub max_concurrent_processes: usize,
    /// How long a client may send nothing of a request before it is let go (none: for ever):
    /// [`connections`].
    pub client_timeout: Option<std::time::Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 2 * 1024 * 1024,
            max_items: 1000,
            requests_per_second: 100,
            request_burst: 200,
            max_concurrent_processes: 0,
            client_timeout: Some(connections::DEFAULT_CLIENT_TIMEOUT),
        }
    }
}

/// Everything a handler may reach: [`Services`] behind one `Arc`, since axum clones the state
/// for each request (several times), and one `Arc` is cheaper to clone than the services
/// field by field. Changing a service (before the server starts) changes this state's own
/// copy.
#[derive(Clone)]
pub struct AppState(Arc<Services>);

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

impl std::ops::DerefMut for AppState {
    fn deref_mut(&mut self) -> &mut Services {
        Arc::make_mut(&mut self.0)
    }
}

/// The services of [`AppState`].
#[derive(Clone)]
pub struct Services {
    pub imports: Imports,
    pub additions: Additions,
    pub admin: Admin,
    pub event_log: EventLog,
    pub reports: Reports,
    pub migrations: Migrations,
    pub plugins: Arc<Plugins>,
    pub auth: Authenticator,
    pub graphql: graphql::PlatformSchema,
    pub metrics: PrometheusHandle,
    pub throttle: throttle::Throttle,
    /// The event relay's live state (replaced by the server when it starts one).
    pub relay: Arc<crate::events::relay::RelayStatus>,
    /// Whether the store takes writes (replaced by the server with the store's own).
    pub storage: Arc<crate::store::StorageHealth>,
    pub limits: Limits,
    /// New scheduled migrations, for the server's schedule loop to take (once).
    pub schedule_arrivals: Arc<
        std::sync::Mutex<
            Option<tokio::sync::mpsc::UnboundedReceiver<crate::domain::schedules::Due>>,
        >,
    >,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl AppState {
    pub fn new(
        store: Arc<dyn Store>,
        auth: Authenticator,
        limits: Limits,
        documents: Arc<dyn Documents>,
        vendors: Arc<dyn PaymentVendors>,
        plugins: Arc<Plugins>,
    ) -> Self {
        let account_limits = AccountLimits {
            max_items: limits.max_items,
        };
        let (scheduler, arrivals) = crate::domain::schedules::Scheduler::new();
        let outside = crate::domain::opening::Outside {
            documents: documents.clone(),
            vendors: vendors.clone(),
        };
        let imports = Imports::with_rules(store.clone(), account_limits, plugins.clone())
            .with_process_limit(limits.max_concurrent_processes)
            .with_scheduler(scheduler)
            .with_outside(outside);
        Self(Arc::new(Services {
            migrations: Migrations::new(store.clone(), imports.clone()),
            imports,
            additions: Additions::new(store.clone(), documents, vendors, account_limits)
                .with_rules(plugins.clone()),
            admin: Admin::new(store.clone()),
            reports: Reports::new(store.clone()),
            event_log: EventLog::new(store),
            graphql: graphql::schema(auth.clone()),
            plugins,
            auth,
            metrics: metrics_handle(),
            throttle: throttle::Throttle::new(limits.requests_per_second, limits.request_burst),
            relay: Arc::new(crate::events::relay::RelayStatus::new(false)),
            storage: Arc::new(crate::store::StorageHealth::unwatched()),
            limits,
            schedule_arrivals: Arc::new(std::sync::Mutex::new(Some(arrivals))),
        }))
    }
}

/// The whole HTTP API.
pub fn router(state: AppState) -> Router {
    let max_body = state.limits.max_body_bytes;
    let client_timeout = state.limits.client_timeout;
    Router::new()
        .merge(health::router())
        .merge(graphql::router())
        .merge(staging::router())
        .merge(accounts_v2::router())
        .merge(meter_points::router())
        .merge(imports::router())
        .merge(notes::router())
        .merge(transactions::router())
        .merge(statements::router())
        .merge(payment_instructions::router())
        .merge(admin::router())
        .route("/v1/openapi.json", get(openapi_json))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(tower::util::MapRequestLayer::new(
            move |request| match client_timeout {
                Some(timeout) => connections::with_body_timeout(timeout, request),
                None => request,
            },
        ))
        .layer(middleware::from_fn(request_metrics::track))
        .with_state(state)
}

/// This document.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "operations",
    responses((status = 200, description = "The OpenAPI document of the HTTP API", body = Object)))]
async fn openapi_json() -> Json<serde_json::Value> {
    static DOCUMENT: std::sync::LazyLock<serde_json::Value> =
        std::sync::LazyLock::new(openapi::document);
    Json(DOCUMENT.clone())
}

async fn not_found() -> ApiError {
    ApiError::NotFound
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;
    use axum::body::Body;
    use axum::http::{Request, StatusCode, header};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    async fn app() -> (tempfile::TempDir, Router) {
        let dir = tempfile::tempdir().expect("temp");
        let store: Arc<dyn Store> = Arc::new(SledStore::open(dir.path()).expect("store"));
        let auth = Authenticator::new(store.clone(), "operator")
            .await
            .expect("auth");
        let bucket = crate::documents::Bucket::open(
            &format!("file://{}", dir.path().join("bucket").display()),
            crate::documents::DEFAULT_BUCKET_DEADLINE,
        )
        .expect("bucket");
        let vendors = crate::vendors::HttpVendors::new(
            &Default::default(),
            std::time::Duration::from_secs(1),
        )
        .expect("vendors");
        let runtime = crate::plugins::Runtime::new(Default::default(), None).expect("runtime");
        let plugins = Arc::new(
            Plugins::open(Arc::new(runtime), store.clone())
                .await
                .expect("plugins"),
        );
        let state = AppState::new(
            store,
            auth,
            Limits::default(),
            Arc::new(bucket),
            Arc::new(vendors),
            plugins,
        );
        (dir, router(state))
    }

    async fn send(router: Router, request: Request<Body>) -> (StatusCode, serde_json::Value) {
        let response = router.oneshot(request).await.expect("response");
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
        )
    }

    #[tokio::test]
    async fn unknown_routes_and_methods_answer_in_the_error_format() {
        let (_dir, router) = app().await;
        let (status, body) = send(
            router.clone(),
            Request::get("/nowhere")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("not_found"))
        );
        let (status, body) = send(
            router,
            Request::delete("/healthz")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed"))
        );
    }

    #[tokio::test]
    async fn the_caller_is_checked_before_the_body() {
        let (_dir, router) = app().await;
        let request = Request::post("/v1/data-import/validate-account/")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{not json"))
            .expect("request");
        let (status, body) = send(router, request).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (StatusCode::UNAUTHORIZED, Some("not_authenticated"))
        );
    }

    #[tokio::test]
    async fn operators_create_suppliers_through_the_router() {
        let (_dir, router) = app().await;
        let request = Request::post("/admin/v1/suppliers")
            .header(header::AUTHORIZATION, "Token operator")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                r#"{"code": "OLD_CO", "name": "Old", "document_root": ""}"#,
            ))
            .expect("request");
        let (status, body) = send(router.clone(), request).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let request = Request::get("/admin/v1/suppliers/OLD_CO")
            .header(header::AUTHORIZATION, "Token operator")
            .body(Body::empty())
            .expect("request");
        let (status, body) = send(router, request).await;
        assert_eq!(
            (status, body["status"].as_str()),
            (StatusCode::OK, Some("ONGOING"))
        );
    }
}
