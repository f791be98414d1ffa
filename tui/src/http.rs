//! The real [`AdminApi`]: the host's admin API over HTTP with the operator key.
//!
//! Every failure becomes an [`ApiError`]: no answer at all is `Unreachable`, an error answer is
//! `Refused` with the host's `code` and `detail`.

use crate::api::{
    AccountDetail, AdminApi, ApiError, EventPage, ImportPage, ImportQuery, Migration, PluginDetail,
    Supplier, SupplierStatus,
};
use reqwest::{Method, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;

/// How long one call may take before the host counts as unreachable.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
pub struct HttpAdminApi {
    http: reqwest::Client,
    base: Url,
    operator_key: String,
}

/// Why a client could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid host URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error("cannot make an HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// The error body every admin endpoint answers with.
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    detail: String,
    #[serde(default)]
    code: String,
}

impl HttpAdminApi {
    pub fn new(base_url: &str, operator_key: &str) -> Result<Self, ClientError> {
        let invalid = |reason: String| ClientError::InvalidUrl {
            url: base_url.to_owned(),
            reason,
        };
        let base = Url::parse(base_url).map_err(|error| invalid(error.to_string()))?;
        if base.cannot_be_a_base() || !matches!(base.scheme(), "http" | "https") {
            return Err(invalid("expected an http:// or https:// URL".to_owned()));
        }
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .build()?;
        Ok(Self {
            http,
            base,
            operator_key: operator_key.to_owned(),
        })
    }

    /// The URL of `/admin/v1/<segments...>`, each segment percent-encoded.
    fn url(&self, segments: &[&str]) -> Result<Url, ApiError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ApiError::Unreadable("the host URL cannot take a path".to_owned()))?
            .pop_if_empty()
            .extend(["admin", "v1"])
            .extend(segments);
        Ok(url)
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        url: Url,
        body: Option<Value>,
    ) -> Result<T, ApiError> {
        let mut request = self
            .http
            .request(method, url)
            .header("Authorization", format!("Token {}", self.operator_key));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|error| ApiError::Unreachable(describe(&error)))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|error| ApiError::Unreachable(describe(&error)))?;
        if !status.is_success() {
            let (code, detail) = match serde_json::from_slice::<ErrorBody>(&bytes) {
                Ok(body) => (body.code, body.detail),
                Err(_) => (
                    String::new(),
                    status.canonical_reason().unwrap_or("error").to_owned(),
                ),
            };
            return Err(ApiError::Refused {
                status: status.as_u16(),
                code,
                detail,
            });
        }
        serde_json::from_slice(&bytes).map_err(|error| ApiError::Unreadable(error.to_string()))
    }
}

/// A short reason for a failed request, without reqwest's nesting of causes.
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "connection refused".to_owned()
    } else {
        let mut reason = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            reason = cause.to_string();
            source = cause.source();
        }
        reason
    }
}

impl AdminApi for HttpAdminApi {
    async fn suppliers(&self) -> Result<Vec<Supplier>, ApiError> {
        self.call(Method::GET, self.url(&["suppliers"])?, None)
            .await
    }

    async fn set_supplier_status(
        &self,
        code: &str,
        status: SupplierStatus,
    ) -> Result<Supplier, ApiError> {
        let body = json!({ "status": status.as_str() });
        self.call(Method::PATCH, self.url(&["suppliers", code])?, Some(body))
            .await
    }

    async fn imports(&self, code: &str, query: &ImportQuery) -> Result<ImportPage, ApiError> {
        let mut url = self.url(&["suppliers", code, "imports"])?;
        {
            let mut pairs = url.query_pairs_mut();
            if let Some(state) = query.state {
                pairs.append_pair("state", state.as_str());
            }
            if !query.search.is_empty() {
                pairs.append_pair("q", &query.search);
            }
            if query.limit > 0 {
                pairs.append_pair("limit", &query.limit.to_string());
            }
            if let Some(after) = &query.after {
                pairs.append_pair("after", after);
            }
        }
        self.call(Method::GET, url, None).await
    }

    async fn account(&self, platform_account_number: &str) -> Result<AccountDetail, ApiError> {
        let url = self.url(&["accounts", platform_account_number])?;
        self.call(Method::GET, url, None).await
    }

    async fn start_migration(&self, code: &str) -> Result<Migration, ApiError> {
        let url = self.url(&["suppliers", code, "migrations"])?;
        self.call(Method::POST, url, Some(json!({}))).await
    }

    async fn migrations(&self, code: &str) -> Result<Vec<Migration>, ApiError> {
        let url = self.url(&["suppliers", code, "migrations"])?;
        self.call(Method::GET, url, None).await
    }

    async fn migration(&self, code: &str, id: &str) -> Result<Migration, ApiError> {
        let url = self.url(&["suppliers", code, "migrations", id])?;
        self.call(Method::GET, url, None).await
    }

    async fn plugin(&self, code: &str) -> Result<PluginDetail, ApiError> {
        let url = self.url(&["suppliers", code, "plugin"])?;
        self.call(Method::GET, url, None).await
    }

    async fn events(&self, after: Option<&str>, limit: u32) -> Result<EventPage, ApiError> {
        let mut url = self.url(&["events"])?;
        {
            let mut pairs = url.query_pairs_mut();
            if let Some(after) = after {
                pairs.append_pair("after", after);
            }
            pairs.append_pair("limit", &limit.to_string());
        }
        self.call(Method::GET, url, None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ImportState;

    #[test]
    fn paths_are_built_under_admin_v1_with_segments_encoded() {
        let api = HttpAdminApi::new("http://127.0.0.1:8080/", "key").expect("client");
        let url = api.url(&["accounts", "A/1 2"]).expect("url");
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:8080/admin/v1/accounts/A%2F1%202"
        );
        let api = HttpAdminApi::new("http://ferry.internal:9000", "key").expect("client");
        let url = api.url(&["suppliers", "OLD_CO"]).expect("url");
        assert_eq!(
            url.as_str(),
            "http://ferry.internal:9000/admin/v1/suppliers/OLD_CO"
        );
    }

    #[test]
    fn a_url_that_is_not_http_is_refused() {
        assert!(HttpAdminApi::new("ferry.internal", "key").is_err());
        assert!(HttpAdminApi::new("ftp://ferry.internal", "key").is_err());
    }

    #[tokio::test]
    async fn an_absent_host_is_unreachable_not_an_error_answer() {
        // A port that was free a moment ago: nothing listens there.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
        let port = listener.local_addr().expect("address").port();
        drop(listener);
        let api = HttpAdminApi::new(&format!("http://127.0.0.1:{port}"), "key").expect("client");
        let error = api.suppliers().await.expect_err("nothing listens");
        assert!(matches!(error, ApiError::Unreachable(_)), "{error:?}");
        let query = ImportQuery {
            state: Some(ImportState::Errored),
            ..ImportQuery::default()
        };
        let error = api
            .imports("OLD_CO", &query)
            .await
            .expect_err("nothing listens");
        assert!(matches!(error, ApiError::Unreachable(_)), "{error:?}");
    }

    /// Answers one HTTP request with `status` and `body`; hands back the request's text.
    fn answer_once(status: &str, body: &str) -> (String, std::sync::mpsc::Receiver<String>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept");
            let mut request = Vec::new();
            let mut buffer = [0_u8; 4096];
            // Headers, then the body its Content-Length announces.
            loop {
                let read = stream.read(&mut buffer).expect("read");
                request.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&request).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|line| {
                            line.to_lowercase()
                                .strip_prefix("content-length:")
                                .map(|n| n.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length || read == 0 {
                        break;
                    }
                }
            }
            stream.write_all(response.as_bytes()).expect("write");
            let _ = sender.send(String::from_utf8_lossy(&request).into_owned());
        });
        (base, receiver)
    }

    #[tokio::test]
    async fn an_error_answer_becomes_a_refusal_with_the_hosts_code() {
        let body = r#"{"detail": "This supplier has no plugin.", "code": "plugin_not_found", "errors": []}"#;
        let (base, request) = answer_once("404 Not Found", body);
        let api = HttpAdminApi::new(&base, "operator-key").expect("client");
        let error = api.plugin("OLD_CO").await.expect_err("a 404");
        assert_eq!(
            error,
            ApiError::Refused {
                status: 404,
                code: "plugin_not_found".to_owned(),
                detail: "This supplier has no plugin.".to_owned(),
            }
        );
        assert!(!error.is_missing_endpoint());
        let request = request.recv().expect("the request");
        assert!(
            request.starts_with("GET /admin/v1/suppliers/OLD_CO/plugin HTTP/1.1"),
            "{request}"
        );
        assert!(
            request
                .to_lowercase()
                .contains("authorization: token operator-key"),
            "{request}"
        );
    }

    #[tokio::test]
    async fn a_status_change_is_a_patch_with_the_status_in_the_body() {
        let body = r#"{"code": "OLD_CO", "name": "Old Co", "status": "PAUSED", "counts": {}, "plugin": null}"#;
        let (base, request) = answer_once("200 OK", body);
        let api = HttpAdminApi::new(&base, "operator-key").expect("client");
        let supplier = api
            .set_supplier_status("OLD_CO", SupplierStatus::Paused)
            .await
            .expect("the answer reads");
        assert_eq!(supplier.status, "PAUSED");
        let request = request.recv().expect("the request");
        assert!(
            request.starts_with("PATCH /admin/v1/suppliers/OLD_CO HTTP/1.1"),
            "{request}"
        );
        assert!(request.ends_with(r#"{"status":"PAUSED"}"#), "{request}");
    }

    #[tokio::test]
    async fn the_imports_query_carries_state_search_limit_and_cursor() {
        let (base, request) = answer_once("200 OK", r#"{"items": [], "next_after": null}"#);
        let api = HttpAdminApi::new(&base, "operator-key").expect("client");
        let query = ImportQuery {
            state: Some(ImportState::Errored),
            search: "acc 1".to_owned(),
            after: Some("ACC-1049".to_owned()),
            limit: 50,
        };
        let page = api
            .imports("OLD_CO", &query)
            .await
            .expect("the answer reads");
        assert_eq!(page.items, []);
        let request = request.recv().expect("the request");
        assert!(
            request.starts_with(
                "GET /admin/v1/suppliers/OLD_CO/imports?state=ERRORED&q=acc+1&limit=50&after=ACC-1049 HTTP/1.1"
            ),
            "{request}"
        );
    }
}
