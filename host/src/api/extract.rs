//! Extractors that turn requests into what handlers need, failing in the API's error format:
//! the JSON body (content type and coding, size, syntax), the authenticated caller, path
//! parameters and query parameters.

use super::AppState;
use super::connections::is_body_timeout;
use super::error::ApiError;
use crate::domain::api_key::ApiKeyRecord;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde_json::Value;

/// A JSON request body, parsed but not yet validated (validation reports every field error).
#[derive(Debug)]
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let is_json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .map(|mime| {
                let mime = mime.trim().to_ascii_lowercase();
                mime == "application/json"
                    || (mime.starts_with("application/") && mime.ends_with("+json"))
            })
            .unwrap_or(false);
        if !is_json {
            return Err(ApiError::UnsupportedMediaType);
        }
        if let Some(encoding) = request.headers().get(header::CONTENT_ENCODING) {
            let encoding = String::from_utf8_lossy(encoding.as_bytes())
                .trim()
                .to_owned();
            if !(encoding.is_empty() || encoding.eq_ignore_ascii_case("identity")) {
                return Err(ApiError::UnsupportedContentEncoding(encoding));
            }
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| body_error(&rejection, state.limits.max_body_bytes, state))?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|error| ApiError::Parse(error.to_string()))
    }
}

/// A JSON request body that may be left out: an empty body (whatever its content type) is
/// `None`, any other is read as a [`JsonBody`].
#[derive(Debug)]
pub struct OptionalJsonBody(pub Option<Value>);

impl FromRequest<AppState> for OptionalJsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let (parts, body) = request.into_parts();
        let bytes = Bytes::from_request(Request::from_parts(parts.clone(), body), state)
            .await
            .map_err(|rejection| body_error(&rejection, state.limits.max_body_bytes, state))?;
        if bytes.is_empty() {
            return Ok(Self(None));
        }
        JsonBody::from_request(Request::from_parts(parts, bytes.into()), state)
            .await
            .map(|JsonBody(body)| Self(Some(body)))
    }
}

/// A body that could not be read, in the API's error format: larger than `max_bytes` (413), no
/// longer arriving (408), or cut off (400).
pub fn body_error(rejection: &BytesRejection, max_bytes: usize, state: &AppState) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge(max_bytes)
    } else if let Some(timeout) = state.limits.client_timeout
        && is_body_timeout(rejection)
    {
        ApiError::RequestTimeout(timeout)
    } else {
        ApiError::Parse(rejection.body_text())
    }
}

fn authorization(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
}

/// A supplier integration, identified by its platform token or API key, sent bare or after
/// `Token ` ([`crate::auth::Authenticator::supplier_caller`]).
#[derive(Debug)]
pub struct SupplierCaller(pub ApiKeyRecord);

impl FromRequestParts<AppState> for SupplierCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let key = state.auth.supplier_caller(authorization(parts)).await?;
        state
            .throttle
            .check(&key.id)
            .await
            .map_err(ApiError::Throttled)?;
        Ok(Self(key))
    }
}

/// The operator team, identified by the operator key.
#[derive(Debug)]
pub struct OperatorCaller;

impl FromRequestParts<AppState> for OperatorCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        state.auth.operator_caller(authorization(parts)).await?;
        Ok(Self)
    }
}

/// Query parameters, refused in the API's error format (unknown or malformed parameters).
#[derive(Debug)]
pub struct QueryParams<T>(pub T);

impl<T: serde::de::DeserializeOwned + Send> FromRequestParts<AppState> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| Self(value))
            .map_err(|rejection| ApiError::Query {
                name: "query",
                detail: rejection.body_text(),
            })
    }
}

/// Path parameters. A segment that does not decode (percent-encoded bytes that are not UTF-8)
/// cannot be the name of anything, so it answers `not_found` like an unknown path.
#[derive(Debug)]
pub struct PathParams<T>(pub T);

impl<T: serde::de::DeserializeOwned + Send> FromRequestParts<AppState> for PathParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| Self(value))
            .map_err(|rejection| {
                tracing::debug!(%rejection, "undecodable path parameter");
                ApiError::NotFound
            })
    }
}
