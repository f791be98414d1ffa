//! The one error type of the HTTP edge, and the error body every failure is written in:
//! `{detail, code, errors: [{detail, code, attr}]}`.

use crate::auth::AuthError;
use crate::domain::error::DomainError;
use crate::domain::storage::StoreError;
use crate::domain::validation::FieldError;
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The error body of every endpoint (the transactions endpoint adds its own for
/// per-transaction failures).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Human-readable text; its wording may change.
    pub detail: String,
    /// Machine-readable, stable identifier.
    pub code: String,
    pub errors: Vec<FieldError>,
    /// With `account_import_process_already_imported`: the account's external number, its
    /// platform account number, and the same number under the real platform's names
    /// `kraken_account_number` and `account_number`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_account_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_account_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kraken_account_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_number: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("JSON parse error - {0}")]
    Parse(String),
    #[error("Unsupported media type; send Content-Type: application/json.")]
    UnsupportedMediaType,
    /// A body sent with a `Content-Encoding` other than `identity` (gzip, say): the API reads
    /// bodies as they are sent, so a compressed one would fail as JSON that is not JSON.
    #[error("Unsupported Content-Encoding {0:?}; send the body uncompressed.")]
    UnsupportedContentEncoding(String),
    #[error("The request body is larger than {0} bytes.")]
    PayloadTooLarge(usize),
    /// The client stopped sending the request's body: nothing of it came for this long.
    #[error(
        "The request body stopped arriving: nothing of it came for {} seconds. Send the request again.",
        .0.as_secs_f64()
    )]
    RequestTimeout(std::time::Duration),
    #[error("Not found.")]
    NotFound,
    #[error("Method not allowed.")]
    MethodNotAllowed,
    #[error("Request was throttled; retry after {} seconds.", retry_after_seconds(*.0))]
    Throttled(std::time::Duration),
    #[error("Invalid query parameter {name}: {detail}")]
    Query { name: &'static str, detail: String },
}

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Domain(error) => match error {
                DomainError::Invalid { .. }
                | DomainError::SupplierExists(_)
                | DomainError::TeamExists(_)
                | DomainError::MigrationNotOngoing
                | DomainError::AlreadyImported { .. }
                | DomainError::DryRunWouldSucceed
                | DomainError::ImportProcessNotFound
                | DomainError::ImportCancelled
                | DomainError::ScheduleWindowPassed
                | DomainError::TransactionImport(_)
                | DomainError::VendorRejected { .. }
                | DomainError::PluginRejected(_) => StatusCode::BAD_REQUEST,
                DomainError::SupplierNotFound
                | DomainError::AccountNotFound
                | DomainError::NoMeterPoints(_)
                | DomainError::MeterPointNotFound
                | DomainError::ApiKeyNotFound
                | DomainError::TeamNotFound
                | DomainError::MigrationNotFound
                | DomainError::PluginNotFound => StatusCode::NOT_FOUND,
                DomainError::ImportInProgress | DomainError::MigrationAlreadyRunning => {
                    StatusCode::CONFLICT
                }
                DomainError::Store(error) => store_status(error),
                DomainError::VendorUnavailable(_)
                | DomainError::DocumentStore(_)
                | DomainError::PluginFailed(_) => StatusCode::INTERNAL_SERVER_ERROR,
                DomainError::PluginBusy(_) => StatusCode::SERVICE_UNAVAILABLE,
                DomainError::ProcessConcurrencyLimit(_) => StatusCode::TOO_MANY_REQUESTS,
                DomainError::InvalidEvent(_) => StatusCode::BAD_REQUEST,
            },
            Self::Auth(error) => match error {
                AuthError::NotAuthenticated | AuthError::AuthenticationFailed => {
                    StatusCode::UNAUTHORIZED
                }
                AuthError::PermissionDenied => StatusCode::FORBIDDEN,
                AuthError::InvalidApiKey
                | AuthError::InvalidRefreshToken
                | AuthError::MissingCredentials => StatusCode::BAD_REQUEST,
                AuthError::Store(error) => store_status(error),
            },
            Self::Parse(_) | Self::Query { .. } => StatusCode::BAD_REQUEST,
            Self::UnsupportedMediaType | Self::UnsupportedContentEncoding(_) => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Throttled(_) => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    fn body(&self) -> ErrorBody {
        let (code, errors) = match self {
            Self::Domain(DomainError::Invalid { code, errors, .. }) => (*code, errors.0.clone()),
            Self::Domain(DomainError::SupplierExists(code)) => (
                "import_supplier_already_exists",
                vec![FieldError::new(
                    "code".to_owned(),
                    "unique",
                    format!("An import supplier with code {code} already exists."),
                )],
            ),
            Self::Domain(DomainError::TeamExists(name)) => (
                "operations_team_already_exists",
                vec![FieldError::new(
                    "name".to_owned(),
                    "unique",
                    format!("An operations team named {name:?} already exists."),
                )],
            ),
            Self::Domain(DomainError::VendorRejected { code, detail }) => (
                *code,
                vec![FieldError::new(
                    "reference".to_owned(),
                    code,
                    detail.clone(),
                )],
            ),
            Self::Domain(error) => (error.code(), Vec::new()),
            Self::Auth(error) => (error.code(), Vec::new()),
            Self::Parse(_) => ("parse_error", Vec::new()),
            Self::UnsupportedMediaType | Self::UnsupportedContentEncoding(_) => {
                ("unsupported_media_type", Vec::new())
            }
            Self::PayloadTooLarge(_) => ("payload_too_large", Vec::new()),
            Self::RequestTimeout(_) => ("request_timeout", Vec::new()),
            Self::NotFound => ("not_found", Vec::new()),
            Self::MethodNotAllowed => ("method_not_allowed", Vec::new()),
            Self::Throttled(_) => ("throttled", Vec::new()),
            Self::Query { name, detail } => (
                "validation_error",
                vec![FieldError::new(name.to_string(), "invalid", detail.clone())],
            ),
        };
        let detail = match self {
            Self::Domain(DomainError::VendorUnavailable(_)) => {
                "The payment vendor could not be reached; retry the request as it is.".to_owned()
            }
            // Worded for the operator who can end it (retrying as it is does not help), or, for
            // a database away, for the client (retry in a few seconds).
            Self::Domain(DomainError::Store(
                error @ (StoreError::Unwritable(_) | StoreError::Unavailable(_)),
            ))
            | Self::Auth(AuthError::Store(
                error @ (StoreError::Unwritable(_) | StoreError::Unavailable(_)),
            )) => error.to_string(),
            Self::Domain(DomainError::Store(_) | DomainError::DocumentStore(_))
            | Self::Auth(AuthError::Store(_)) => {
                "A server error occurred; retry the request as it is.".to_owned()
            }
            other => other.to_string(),
        };
        let (external_account_number, platform_account_number) = match self {
            Self::Domain(DomainError::AlreadyImported {
                external_account_number,
                platform_account_number,
            }) => (
                Some(external_account_number.clone()),
                Some(platform_account_number.clone()),
            ),
            _ => (None, None),
        };
        ErrorBody {
            detail,
            code: code.to_owned(),
            errors,
            kraken_account_number: platform_account_number.clone(),
            account_number: platform_account_number.clone(),
            external_account_number,
            platform_account_number,
        }
    }
}

/// The transactions endpoint's own 400 body: the first failing transaction.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct TransactionImportErrorBody {
    /// Always `TRANSACTION_IMPORT_ERROR`.
    pub status: &'static str,
    pub error_detail: String,
    /// The first failing transaction, as posted.
    pub transaction_data: serde_json::Value,
    /// Machine-readable code of the failure (an addition to the spec's body).
    pub error_code: String,
    /// The field errors of that transaction (an addition to the spec's body).
    pub errors: Vec<FieldError>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Self::Domain(DomainError::TransactionImport(failure)) = self {
            let failure = *failure;
            let body = TransactionImportErrorBody {
                status: "TRANSACTION_IMPORT_ERROR",
                error_detail: failure.detail,
                transaction_data: failure.transaction_data,
                error_code: failure.code,
                errors: failure.errors.0,
            };
            return (StatusCode::BAD_REQUEST, Json(body)).into_response();
        }
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %self, "request failed");
        }
        let mut response = (status, Json(self.body())).into_response();
        let retry_after = match &self {
            Self::Throttled(wait) => Some(retry_after_seconds(*wait)),
            Self::Domain(DomainError::PluginBusy(_) | DomainError::ProcessConcurrencyLimit(_)) => {
                Some(1)
            }
            Self::Domain(DomainError::Store(StoreError::Unavailable(_)))
            | Self::Auth(AuthError::Store(StoreError::Unavailable(_))) => {
                Some(DATABASE_RETRY_AFTER_SECONDS)
            }
            _ => None,
        };
        if let Some(seconds) = retry_after
            && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        if let Self::UnsupportedContentEncoding(_) = self {
            // RFC 9110, 12.5.3: the codings the server accepts in a request.
            response.headers_mut().insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        if let Self::RequestTimeout(_) = self {
            // RFC 9110, 15.5.9: the server closes the connection; the rest of the body, were
            // it to come, is not read.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Token"));
        }
        response
    }
}

/// What a request the database could not answer is told to wait before it is sent again: a
/// restarting database is back in seconds, and clients retrying at once would only add to the
/// requests waiting for it.
const DATABASE_RETRY_AFTER_SECONDS: u64 = 5;

/// The status of a store's failure: 507 for want of space, 503 while the storage is away
/// (writes refused, or a database not reached), else 500.
fn store_status(error: &StoreError) -> StatusCode {
    match error {
        StoreError::Unwritable(reason) if reason.is_want_of_space() => {
            StatusCode::INSUFFICIENT_STORAGE
        }
        error if error.is_unavailable() => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Whole seconds to wait, at least one.
fn retry_after_seconds(wait: std::time::Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn answer(error: impl Into<ApiError>) -> (StatusCode, Option<String>, serde_json::Value) {
        let response = error.into().into_response();
        let status = response.status();
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        let body = serde_json::from_slice(&bytes).expect("JSON");
        (status, retry_after, body)
    }

    #[tokio::test]
    async fn the_process_concurrency_limit_is_a_429_to_retry() {
        let (status, retry_after, body) = answer(DomainError::ProcessConcurrencyLimit(4)).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(retry_after.as_deref(), Some("1"));
        assert_eq!(body["code"], "process_concurrency_limit_reached");
        assert_eq!(body["errors"], serde_json::json!([]));
    }

    #[tokio::test]
    async fn refused_writes_say_why_and_do_not_ask_for_a_retry_as_is() {
        use crate::domain::storage::Unwritable;
        let unwritable = |reason| DomainError::Store(StoreError::Unwritable(reason));
        let cases = [
            (
                Unwritable::BelowWatermark {
                    free_bytes: 10 << 20,
                    watermark_bytes: 256 << 20,
                },
                StatusCode::INSUFFICIENT_STORAGE,
                "insufficient_storage",
                "10.0 MiB free, below its watermark of 256.0 MiB",
            ),
            (
                Unwritable::DiskFull,
                StatusCode::INSUFFICIENT_STORAGE,
                "insufficient_storage",
                "disk is full",
            ),
            (
                Unwritable::Failed("Input/output error".into()),
                StatusCode::SERVICE_UNAVAILABLE,
                "storage_unavailable",
                "(Input/output error)",
            ),
        ];
        for (reason, expected_status, code, says) in cases {
            let (status, retry_after, body) = answer(unwritable(reason)).await;
            assert_eq!(status, expected_status, "{body}");
            assert_eq!(retry_after, None);
            assert_eq!(body["code"], code);
            let detail = body["detail"].as_str().unwrap_or_default();
            assert!(detail.contains(says), "{detail}");
            assert!(detail.contains("operator"), "{detail}");
            assert!(!detail.contains("retry the request as it is"), "{detail}");
        }
    }

    #[tokio::test]
    async fn a_database_away_is_a_503_to_retry_in_a_few_seconds_wherever_it_is_met() {
        let away = || StoreError::Unavailable("connection refused".into());
        for error in [
            ApiError::Domain(DomainError::Store(away())),
            ApiError::Auth(AuthError::Store(away())),
        ] {
            let (status, retry_after, body) = answer(error).await;
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
            assert_eq!(retry_after.as_deref(), Some("5"));
            assert_eq!(body["code"], "storage_unavailable");
            let detail = body["detail"].as_str().unwrap_or_default();
            assert!(detail.contains("(connection refused)"), "{detail}");
            assert!(
                detail.contains("retry the request in a few seconds"),
                "{detail}"
            );
            assert!(!detail.contains("operator"), "{detail}");
        }
        // Another failure of the store, met reading the key, is still a 500 to retry as is.
        let (status, retry_after, body) =
            answer(AuthError::Store(StoreError::NumbersExhausted)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(retry_after, None);
        assert_eq!(body["code"], "server_error");
    }

    #[tokio::test]
    async fn only_an_already_imported_answer_carries_account_numbers() {
        let (status, _, body) = answer(DomainError::AlreadyImported {
            external_account_number: "EXT-1".to_owned(),
            platform_account_number: "A-00C0FFEE".to_owned(),
        })
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["platform_account_number"], "A-00C0FFEE");
        assert_eq!(body["kraken_account_number"], "A-00C0FFEE");
        assert_eq!(body["account_number"], "A-00C0FFEE");
        assert_eq!(body["external_account_number"], "EXT-1");
        let (_, _, body) = answer(DomainError::DryRunWouldSucceed).await;
        assert!(body.get("account_number").is_none(), "{body}");
        assert!(body.get("kraken_account_number").is_none(), "{body}");
        assert_eq!(
            body["detail"],
            "Account would successfully import. Rolled back due to Dry Run."
        );
    }
}
