//! `/admin/v1/suppliers/{code}/plugin`: install, inspect, configure and remove a supplier's
//! plugin. The body of `PUT` is the component itself (`application/wasm` or
//! `application/octet-stream`); it is checked against the world before it is accepted.

use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, PathParams, QueryParams};
use crate::api::schemas::ComponentBytes;
use crate::domain::error::DomainError;
use crate::domain::plugin::PluginRecord;
use crate::domain::validation::{FieldError, FieldErrors};
use crate::plugins::PluginView;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::routing::{get, put};
use axum::{Json, Router};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Largest component accepted.
pub const MAX_COMPONENT_BYTES: usize = 32 << 20;

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
    responses((status = 200, body = PluginRecord), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 413, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn install_plugin(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    QueryParams(params): QueryParams<InstallParams>,
    component: Bytes,
) -> Result<Json<PluginRecord>, ApiError> {
    if component.is_empty() {
        return Err(ApiError::Domain(DomainError::PluginRejected(
            "The body must be the component's bytes.".into(),
        )));
    }
    let record = state
        .plugins
        .install(&code, component.to_vec(), params.name, params.version, None)
        .await?;
    Ok(Json(record))
}

#[utoipa::path(get, path = "/admin/v1/suppliers/{code}/plugin", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = PluginView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_plugin(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<PluginView>, ApiError> {
    Ok(Json(state.plugins.view(&code)?))
}

#[utoipa::path(delete, path = "/admin/v1/suppliers/{code}/plugin", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    responses((status = 200, body = PluginRecord), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn remove_plugin(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
) -> Result<Json<PluginRecord>, ApiError> {
    Ok(Json(state.plugins.remove(&code).await?))
}

/// Replaces the plugin's configuration: a JSON object of string values.
#[utoipa::path(put, path = "/admin/v1/suppliers/{code}/plugin/config", tag = "admin",
    params(("code" = String, Path, description = "import supplier code")),
    request_body(content = BTreeMap<String, String>),
    responses((status = 200, body = PluginRecord), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn set_plugin_config(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(code): PathParams<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<PluginRecord>, ApiError> {
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
    Ok(Json(state.plugins.set_config(&code, config).await?))
}
