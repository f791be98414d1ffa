//! `/admin/v1/suppliers/{code}/plugin`: install, inspect, configure and remove a supplier's
//! plugin. The body of `PUT` is the component itself (`application/wasm` or
//! `application/octet-stream`); it is checked against the world before it is accepted.

use super::moment;
use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, PathParams, QueryParams, body_error};
use crate::api::schemas::ComponentBytes;
use crate::domain::error::DomainError;
use crate::domain::plugin::PluginRecord;
use crate::domain::validation::{FieldError, FieldErrors};
use crate::plugins::PluginView;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request, State};
use axum::routing::{get, put};
use axum::{Json, Router};
use ferry_admin_api::{Plugin, PluginFailure};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Largest component accepted.
pub const MAX_COMPONENT_BYTES: usize = 32 << 20;

/// The body of `PUT .../plugin`: the component's bytes, at most [`MAX_COMPONENT_BYTES`]. A
/// larger body (announced or streamed in chunks) answers 413 `payload_too_large` in the error
/// format, like every other route.
#[derive(Debug)]
pub struct ComponentBody(pub Bytes);

impl FromRequest<AppState> for ComponentBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        Bytes::from_request(request, state)
            .await
            .map(Self)
            .map_err(|rejection| body_error(&rejection, MAX_COMPONENT_BYTES, state))
    }
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/v1/suppliers/{code}/plugin",
            get(get_plugin)
                .put(install_plugin)
                .delete(remove_plugin)
                .layer(DefaultBodyLimit::max(MAX_COMPONENT_BYTES)),
        )
        .route(
            "/admin/v1/suppliers/{code}/plugin/config",
            put(set_plugin_config),
        )
}

fn record_answer(record: PluginRecord) -> ferry_admin_api::PluginRecord {
    ferry_admin_api::PluginRecord {
        supplier: record.supplier,
        sha256: record.sha256,
        name: record.name,
        version: record.version,
        size_bytes: record.size_bytes,
        installed_at: moment(record.installed_at),
        hooks: record
            .hooks
            .into_iter()
            .map(|hook| hook.as_str().to_owned())
            .collect(),
        config: record.config,
        wit_version: record.wit_version,
    }
}

fn plugin_answer(view: PluginView) -> Plugin {
    Plugin {
        record: record_answer(view.record),
        recent_failures: view
            .recent_failures
            .into_iter()
            .map(|failure| PluginFailure {
                at: moment(failure.at),
                hook: failure.hook.as_str().to_owned(),
                error: failure.error,
            })
            .collect(),
        low_priority: view.low_priority,
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct InstallParams {
    /// A name for the plugin (default `plugin`).
    #[param(nullable = false)]
    pub name: Option<String>,
    /// Its version (default: the first 12 digits of its sha256).
    #[param(nullable = false)]
    pub version: Option<String>,
}

#[utoipa::path(put, path = "/admin/v1/suppliers/{code}/plugin", tag = "admin",
    params(("code" = String, Path, description = "import supplier code"), InstallParams),
    request_body(description = "The component's bytes (any content type; `application/wasm` by convention)",
        content(
            (ComponentBytes = "application/octet-stream"),
            (ComponentBytes = "application/wasm"),
        )),
    responses((status = 200, body = ferry_admin_api::PluginRecord), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 413, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn install_plugin(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    QueryParams(params): QueryParams<InstallParams>,
    ComponentBody(component): ComponentBody,
) -> Result<Json<ferry_admin_api::PluginRecord>, ApiError> {
    if component.is_empty() {
        return Err(ApiError::Domain(DomainError::PluginRejected(
            "The body must be the component's bytes.".into(),
        )));
    }
    let record = state
        .plugins
        .install(&code, component.to_vec(), params.name, params.version, None)
        .await?;
    Ok(Json(record_answer(record)))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/plugin", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = Plugin), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_plugin(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<Plugin>, ApiError> {
    Ok(Json(plugin_answer(state.plugins.view(&code).await?)))
}

#[utoipa::path(delete, path = "/admin/v1/suppliers/{code}/plugin", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = ferry_admin_api::PluginRecord), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn remove_plugin(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<ferry_admin_api::PluginRecord>, ApiError> {
    Ok(Json(record_answer(state.plugins.remove(&code).await?)))
}

/// Replaces the plugin's configuration: a JSON object of string values.
#[utoipa::path(put, path = "/admin/v1/suppliers/{code}/plugin/config", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    request_body(content = BTreeMap<String, String>),
    responses((status = 200, body = ferry_admin_api::PluginRecord), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn set_plugin_config(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<ferry_admin_api::PluginRecord>, ApiError> {
    let Some(object) = body.as_object() else {
        return Err(DomainError::invalid(FieldErrors::single(FieldError::new(
            None,
            "invalid",
            "Expected a JSON object of strings.",
        )))
        .into());
    };
    let mut config = BTreeMap::new();
    let mut errors = FieldErrors::default();
    for (key, value) in object {
        match value.as_str() {
            Some(text) => {
                config.insert(key.clone(), text.to_owned());
            }
            None => errors.push(FieldError::new(
                key.clone(),
                "invalid",
                "Expected a string.",
            )),
        }
    }
    if !errors.is_empty() {
        return Err(DomainError::invalid(errors).into());
    }
    Ok(Json(record_answer(
        state.plugins.set_config(&code, config).await?,
    )))
}
