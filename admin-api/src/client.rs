//! [`AdminClient`]: the admin API over HTTP with the operator key, one typed method per call.
//!
//! Every failure is a [`ClientError`]: no answer at all is `Unreachable`, an error answer is
//! `Refused` with the server's error body, a 2xx that does not read as the documented shape is
//! `Unreadable`.

use crate::events::Event;
use crate::{
    AccountDetail, AccountReportPage, AccountReportQuery, ApiKey, CampaignReport, ErrorBody,
    EventPage, FieldErrorBody, ImportPage, ImportQuery, IssuedApiKey, Migration, NewApiKey,
    NewOperationsTeam, NewSupplier, OperationsTeam, Plugin, PluginRecord, PublishEvent,
    StorageStatus, Supplier, SupplierChange, SupplierStatus,
};
use reqwest::{Method, RequestBuilder, Response, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long one call may take before the server counts as unreachable (a component upload
/// and the start of a bulk migration get longer: see [`LONG_TIMEOUT`]).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
pub const LONG_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a streamed answer (the report's CSV) may send nothing before the server counts
/// as unreachable; the whole of it may take as long as it takes.
pub const STREAM_READ_TIMEOUT: Duration = LONG_TIMEOUT;

/// Why an admin call did not give an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The base URL given is not an `http://` or `https://` URL.
    #[error("invalid server URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// No HTTP answer at all: the server is down, unreachable or too slow.
    #[error("cannot reach the server: {0}")]
    Unreachable(String),
    /// The server answered with an error body.
    #[error("{detail} ({code})")]
    Refused {
        status: u16,
        code: String,
        detail: String,
        errors: Vec<FieldErrorBody>,
    },
    /// The server answered 2xx with something that is not the documented shape.
    #[error("unreadable answer: {0}")]
    Unreadable(String),
}

impl ClientError {
    /// The error code of a refusal (`""` for the other kinds).
    pub fn code(&self) -> &str {
        match self {
            Self::Refused { code, .. } => code,
            _ => "",
        }
    }

    /// The server does not have this endpoint: a plain 404 rather than a missing record.
    pub fn is_missing_endpoint(&self) -> bool {
        matches!(self, Self::Refused { status: 404, code, .. } if code == "not_found" || code.is_empty())
    }

    /// The operator key was missing or refused.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, Self::Refused { status: 401, .. })
    }

    /// The whole refusal for a person: the detail and code, then each field's problem.
    pub fn explain(&self) -> String {
        let mut text = self.to_string();
        if let Self::Refused { status, errors, .. } = self {
            text = format!("{text} [HTTP {status}]");
            for error in errors {
                let attr = error.attr.as_deref().unwrap_or("(request)");
                text.push_str(&format!("\n  {attr}: {} ({})", error.detail, error.code));
            }
        }
        text
    }
}

/// The admin API of one Ferry server.
#[derive(Debug, Clone)]
pub struct AdminClient {
    http: reqwest::Client,
    /// For streamed answers: no deadline for the whole answer, one for each read.
    streaming: reqwest::Client,
    base: Url,
    operator_key: String,
}

impl AdminClient {
    /// A client of the server at `base_url` (`http://host:port`, any path prefix kept).
    pub fn new(base_url: &str, operator_key: &str) -> Result<Self, ClientError> {
        let invalid = |reason: String| ClientError::InvalidUrl {
            url: base_url.to_owned(),
            reason,
        };
        let base = Url::parse(base_url).map_err(|error| invalid(error.to_string()))?;
        if base.cannot_be_a_base() || !matches!(base.scheme(), "http" | "https") {
            return Err(invalid("expected an http:// or https:// URL".to_owned()));
        }
        let client = |builder: reqwest::ClientBuilder| {
            builder
                .connect_timeout(CONNECT_TIMEOUT)
                .build()
                .map_err(|error| invalid(format!("cannot make an HTTP client: {error}")))
        };
        let http = client(reqwest::Client::builder())?;
        let streaming = client(reqwest::Client::builder().read_timeout(STREAM_READ_TIMEOUT))?;
        Ok(Self {
            http,
            streaming,
            base,
            operator_key: operator_key.to_owned(),
        })
    }

    /// The base URL, as given.
    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// `<base>/admin/v1/<segments...>`, each segment percent-encoded.
    pub fn url(&self, segments: &[&str]) -> Result<Url, ClientError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ClientError::InvalidUrl {
                url: self.base.to_string(),
                reason: "the URL cannot take a path".to_owned(),
            })?
            .pop_if_empty()
            .extend(["admin", "v1"])
            .extend(segments);
        Ok(url)
    }

    fn request(&self, method: Method, url: Url) -> RequestBuilder {
        self.http
            .request(method, url)
            .timeout(CALL_TIMEOUT)
            .header("Authorization", format!("Token {}", self.operator_key))
    }

    async fn send<T: DeserializeOwned>(request: RequestBuilder) -> Result<T, ClientError> {
        let bytes = Self::answer(request)
            .await?
            .bytes()
            .await
            .map_err(|error| ClientError::Unreachable(describe(&error)))?;
        serde_json::from_slice(&bytes).map_err(|error| ClientError::Unreadable(error.to_string()))
    }

    /// The answer to `request` when it is a success, its body not read yet; else the refusal.
    async fn answer(request: RequestBuilder) -> Result<Response, ClientError> {
        let response = request
            .send()
            .await
            .map_err(|error| ClientError::Unreachable(describe(&error)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|error| ClientError::Unreachable(describe(&error)))?;
        let body = serde_json::from_slice::<ErrorBody>(&bytes).unwrap_or_else(|_| ErrorBody {
            detail: status.canonical_reason().unwrap_or("error").to_owned(),
            code: String::new(),
            errors: Vec::new(),
        });
        Err(ClientError::Refused {
            status: status.as_u16(),
            code: body.code,
            detail: body.detail,
            errors: body.errors,
        })
    }

    async fn get<T: DeserializeOwned>(&self, segments: &[&str]) -> Result<T, ClientError> {
        Self::send(self.request(Method::GET, self.url(segments)?)).await
    }

    async fn with_body<T: DeserializeOwned>(
        &self,
        method: Method,
        segments: &[&str],
        body: &impl Serialize,
    ) -> Result<T, ClientError> {
        Self::send(self.request(method, self.url(segments)?).json(body)).await
    }

    pub async fn suppliers(&self) -> Result<Vec<Supplier>, ClientError> {
        self.get(&["suppliers"]).await
    }

    pub async fn supplier(&self, code: &str) -> Result<Supplier, ClientError> {
        self.get(&["suppliers", code]).await
    }

    pub async fn create_supplier(&self, supplier: &NewSupplier) -> Result<Supplier, ClientError> {
        self.with_body(Method::POST, &["suppliers"], supplier).await
    }

    pub async fn update_supplier(
        &self,
        code: &str,
        change: &SupplierChange,
    ) -> Result<Supplier, ClientError> {
        self.with_body(Method::PATCH, &["suppliers", code], change)
            .await
    }

    pub async fn set_supplier_status(
        &self,
        code: &str,
        status: SupplierStatus,
    ) -> Result<Supplier, ClientError> {
        let change = SupplierChange {
            status: Some(status),
            ..SupplierChange::default()
        };
        self.update_supplier(code, &change).await
    }

    pub async fn create_api_key(&self, key: &NewApiKey) -> Result<IssuedApiKey, ClientError> {
        self.with_body(Method::POST, &["api-keys"], key).await
    }

    pub async fn revoke_api_key(&self, id: &str) -> Result<ApiKey, ClientError> {
        Self::send(self.request(Method::DELETE, self.url(&["api-keys", id])?)).await
    }

    pub async fn operations_teams(&self) -> Result<Vec<OperationsTeam>, ClientError> {
        self.get(&["operations-teams"]).await
    }

    pub async fn create_operations_team(
        &self,
        team: &NewOperationsTeam,
    ) -> Result<OperationsTeam, ClientError> {
        self.with_body(Method::POST, &["operations-teams"], team)
            .await
    }

    pub async fn delete_operations_team(&self, name: &str) -> Result<OperationsTeam, ClientError> {
        Self::send(self.request(Method::DELETE, self.url(&["operations-teams", name])?)).await
    }

    pub async fn imports(
        &self,
        code: &str,
        query: &ImportQuery,
    ) -> Result<ImportPage, ClientError> {
        let mut url = self.url(&["suppliers", code, "imports"])?;
        url.query_pairs_mut().extend_pairs(query.pairs());
        Self::send(self.request(Method::GET, url)).await
    }

    /// The supplier's campaign report.
    pub async fn campaign_report(&self, code: &str) -> Result<CampaignReport, ClientError> {
        self.get(&["suppliers", code, "report"]).await
    }

    /// One page of the rows of the supplier's report that `query` selects.
    pub async fn report_accounts(
        &self,
        code: &str,
        query: &AccountReportQuery,
    ) -> Result<AccountReportPage, ClientError> {
        let mut url = self.url(&["suppliers", code, "report", "accounts"])?;
        url.query_pairs_mut().extend_pairs(query.pairs());
        Self::send(self.request(Method::GET, url)).await
    }

    /// Every row of the supplier's report that `query` selects, as CSV with its header row
    /// (RFC 4180), read as the server streams it. The CSV is the whole list: a query with an
    /// `after` or a `limit` is refused.
    pub async fn report_accounts_csv(
        &self,
        code: &str,
        query: &AccountReportQuery,
    ) -> Result<CsvAnswer, ClientError> {
        let mut url = self.url(&["suppliers", code, "report", "accounts"])?;
        url.query_pairs_mut()
            .extend_pairs(query.pairs())
            .append_pair("format", "csv");
        let request = self
            .streaming
            .get(url)
            .header("Authorization", format!("Token {}", self.operator_key));
        Ok(CsvAnswer {
            response: Self::answer(request).await?,
        })
    }

    pub async fn account(
        &self,
        platform_account_number: &str,
    ) -> Result<AccountDetail, ClientError> {
        self.get(&["accounts", platform_account_number]).await
    }

    /// Moves a meter point's registration on (`ON_SUPPLY`, `REGISTRATION_REJECTED`, ...).
    pub async fn set_meter_point_status(
        &self,
        platform_account_number: &str,
        mpxn: &str,
        change: &crate::MeterPointChange,
    ) -> Result<crate::MeterPoint, ClientError> {
        self.with_body(
            Method::PATCH,
            &["accounts", platform_account_number, "meter-points", mpxn],
            change,
        )
        .await
    }

    /// Starts a bulk migration of every account awaiting migration (the server claims them
    /// before it answers, so this may take longer than other calls).
    pub async fn start_migration(&self, code: &str) -> Result<Migration, ClientError> {
        self.start_migration_over(code, &crate::migrations::MigrationSelection::default())
            .await
    }

    /// Starts a bulk migration of the accounts `selection` names that await migration: the
    /// error tail, one group of it, or the accounts listed.
    pub async fn start_migration_over(
        &self,
        code: &str,
        selection: &crate::migrations::MigrationSelection,
    ) -> Result<Migration, ClientError> {
        let request = self
            .request(Method::POST, self.url(&["suppliers", code, "migrations"])?)
            .timeout(LONG_TIMEOUT)
            .json(selection);
        Self::send(request).await
    }

    /// The supplier's migrations, newest first.
    pub async fn migrations(&self, code: &str) -> Result<Vec<Migration>, ClientError> {
        self.get(&["suppliers", code, "migrations"]).await
    }

    pub async fn migration(&self, code: &str, id: &str) -> Result<Migration, ClientError> {
        self.get(&["suppliers", code, "migrations", id]).await
    }

    pub async fn plugin(&self, code: &str) -> Result<Plugin, ClientError> {
        self.get(&["suppliers", code, "plugin"]).await
    }

    /// Installs (or replaces) the supplier's plugin: `component` is the component's bytes.
    pub async fn install_plugin(
        &self,
        code: &str,
        component: Vec<u8>,
        name: Option<&str>,
        version: Option<&str>,
    ) -> Result<PluginRecord, ClientError> {
        let mut url = self.url(&["suppliers", code, "plugin"])?;
        {
            let mut pairs = url.query_pairs_mut();
            if let Some(name) = name {
                pairs.append_pair("name", name);
            }
            if let Some(version) = version {
                pairs.append_pair("version", version);
            }
        }
        let request = self
            .request(Method::PUT, url)
            .timeout(LONG_TIMEOUT)
            .header("Content-Type", "application/wasm")
            .body(component);
        Self::send(request).await
    }

    pub async fn remove_plugin(&self, code: &str) -> Result<PluginRecord, ClientError> {
        Self::send(self.request(Method::DELETE, self.url(&["suppliers", code, "plugin"])?)).await
    }

    /// Replaces the plugin's configuration.
    pub async fn set_plugin_config(
        &self,
        code: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<PluginRecord, ClientError> {
        self.with_body(
            Method::PUT,
            &["suppliers", code, "plugin", "config"],
            config,
        )
        .await
    }

    /// Events after the event with `seq` or id `after` (from the start when `None`).
    pub async fn events(&self, after: Option<&str>, limit: u32) -> Result<EventPage, ClientError> {
        let mut url = self.url(&["events"])?;
        {
            let mut pairs = url.query_pairs_mut();
            if let Some(after) = after {
                pairs.append_pair("after", after);
            }
            pairs.append_pair("limit", &limit.to_string());
        }
        Self::send(self.request(Method::GET, url)).await
    }

    pub async fn publish_event(&self, event: &PublishEvent) -> Result<Event, ClientError> {
        self.with_body(Method::POST, &["events"], event).await
    }

    /// Whether the store takes writes, and why not.
    pub async fn storage(&self) -> Result<StorageStatus, ClientError> {
        Self::send(self.request(Method::GET, self.url(&["storage"])?)).await
    }
}

/// A CSV answer being received: its bytes as they come.
#[derive(Debug)]
pub struct CsvAnswer {
    response: Response,
}

impl CsvAnswer {
    /// The next piece of the CSV; `None` once it is whole. An answer cut short (the server
    /// failed part-way, or went quiet for [`STREAM_READ_TIMEOUT`]) is an error, never a
    /// shorter CSV.
    pub async fn chunk(&mut self) -> Result<Option<Vec<u8>>, ClientError> {
        self.response
            .chunk()
            .await
            .map(|chunk| chunk.map(|bytes| bytes.to_vec()))
            .map_err(|error| {
                ClientError::Unreachable(format!(
                    "the answer stopped part-way: {}",
                    describe(&error)
                ))
            })
    }

    /// The whole CSV.
    pub async fn text(mut self) -> Result<String, ClientError> {
        let mut bytes = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            bytes.extend_from_slice(&chunk);
        }
        String::from_utf8(bytes).map_err(|error| ClientError::Unreadable(error.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ImportState;

    #[test]
    fn paths_are_built_under_admin_v1_with_segments_encoded() {
        let api = AdminClient::new("http://127.0.0.1:8080/", "key").expect("client");
        let url = api.url(&["accounts", "A/1 2"]).expect("url");
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:8080/admin/v1/accounts/A%2F1%202"
        );
        let api = AdminClient::new("http://ferry.internal:9000", "key").expect("client");
        let url = api.url(&["suppliers", "OLD_CO"]).expect("url");
        assert_eq!(
            url.as_str(),
            "http://ferry.internal:9000/admin/v1/suppliers/OLD_CO"
        );
    }

    #[test]
    fn a_url_that_is_not_http_is_refused() {
        assert!(AdminClient::new("ferry.internal", "key").is_err());
        assert!(AdminClient::new("ftp://ferry.internal", "key").is_err());
    }

    #[tokio::test]
    async fn an_absent_host_is_unreachable_not_an_error_answer() {
        // A port that was free a moment ago: nothing listens there.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
        let port = listener.local_addr().expect("address").port();
        drop(listener);
        let api = AdminClient::new(&format!("http://127.0.0.1:{port}"), "key").expect("client");
        let error = api.suppliers().await.expect_err("nothing listens");
        assert!(matches!(error, ClientError::Unreachable(_)), "{error:?}");
        let query = ImportQuery {
            state: Some(ImportState::Errored),
            ..ImportQuery::default()
        };
        let error = api
            .imports("OLD_CO", &query)
            .await
            .expect_err("nothing listens");
        assert!(matches!(error, ClientError::Unreachable(_)), "{error:?}");
    }

    #[tokio::test]
    async fn a_migration_is_started_over_the_selection_it_names() {
        let body = r#"{"id": "m-1", "supplier": "OLD_CO", "state": "RUNNING", "total": 2,
            "processed": 0, "failed": 0, "started_at": "2025-03-07T11:00:00Z", "finished_at": null,
            "selection": {"only": "errored", "error_code": "plugin_failed"}}"#;
        let (base, request) = answer_once("202 Accepted", body);
        let api = AdminClient::new(&base, "operator-key").expect("client");
        let selection = crate::migrations::MigrationSelection {
            only: Some(crate::migrations::MigrationTail::Errored),
            error_code: Some("plugin_failed".to_owned()),
            accounts: None,
        };
        let started = api
            .start_migration_over("OLD_CO", &selection)
            .await
            .expect("started");
        assert_eq!(started.selection, selection);
        let request = request.recv().expect("the request");
        assert!(
            request.starts_with("POST /admin/v1/suppliers/OLD_CO/migrations HTTP/1.1"),
            "{request}"
        );
        assert!(
            request.ends_with(r#"{"only":"errored","error_code":"plugin_failed"}"#),
            "{request}"
        );
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
        let api = AdminClient::new(&base, "operator-key").expect("client");
        let error = api.plugin("OLD_CO").await.expect_err("a 404");
        assert_eq!(
            error,
            ClientError::Refused {
                status: 404,
                code: "plugin_not_found".to_owned(),
                detail: "This supplier has no plugin.".to_owned(),
                errors: Vec::new(),
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
        let body = r#"{"code": "OLD_CO", "name": "Old Co", "document_root": "", "send_migration_emails": false,
            "status": "PAUSED", "expiry_window_days": 30, "created_at": "2025-03-01T09:00:00Z",
            "updated_at": "2025-03-01T09:00:00Z", "counts": {}, "plugin": null}"#;
        let (base, request) = answer_once("200 OK", body);
        let api = AdminClient::new(&base, "operator-key").expect("client");
        let supplier = api
            .set_supplier_status("OLD_CO", SupplierStatus::Paused)
            .await
            .expect("the answer reads");
        assert_eq!(supplier.status, SupplierStatus::Paused);
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
        let api = AdminClient::new(&base, "operator-key").expect("client");
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

    #[tokio::test]
    async fn the_report_rows_query_carries_the_filters_and_the_cursor() {
        let (base, request) = answer_once("200 OK", r#"{"accounts": [], "next_after": null}"#);
        let api = AdminClient::new(&base, "operator-key").expect("client");
        let query = AccountReportQuery {
            error_code: Some("payment_vendor_unavailable".to_owned()),
            after: Some("ACC 7".to_owned()),
            limit: 1000,
            ..AccountReportQuery::default()
        };
        let page = api
            .report_accounts("OLD_CO", &query)
            .await
            .expect("the answer reads");
        assert_eq!((page.accounts, page.next_after), (vec![], None));
        let request = request.recv().expect("the request");
        assert!(
            request.starts_with(
                "GET /admin/v1/suppliers/OLD_CO/report/accounts?error_code=payment_vendor_unavailable&after=ACC+7&limit=1000 HTTP/1.1"
            ),
            "{request}"
        );
    }

    #[tokio::test]
    async fn the_report_csv_is_asked_for_by_format_and_read_whole() {
        let csv = "external_account_number,state\r\n\"A,1\",PENDING\r\n";
        let (base, request) = answer_once("200 OK", csv);
        let api = AdminClient::new(&base, "operator-key").expect("client");
        let query = AccountReportQuery {
            state: Some("PENDING".to_owned()),
            ..AccountReportQuery::default()
        };
        let answer = api
            .report_accounts_csv("OLD_CO", &query)
            .await
            .expect("an answer");
        assert_eq!(answer.text().await.expect("the CSV"), csv);
        let request = request.recv().expect("the request");
        assert!(
            request.starts_with(
                "GET /admin/v1/suppliers/OLD_CO/report/accounts?state=PENDING&format=csv HTTP/1.1"
            ),
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
    async fn a_refusal_keeps_every_field_error_and_explains_them() {
        let body = r#"{"detail": "Invalid input.", "code": "invalid", "errors": [
            {"detail": "This field is required.", "code": "required", "attr": "name"},
            {"detail": "Unknown status.", "code": "invalid_choice", "attr": "status"}]}"#;
        let (base, _request) = answer_once("400 Bad Request", body);
        let api = AdminClient::new(&base, "operator-key").expect("client");
        let error = api
            .create_supplier(&NewSupplier {
                code: "OLD_CO".to_owned(),
                name: String::new(),
                document_root: String::new(),
                send_migration_emails: false,
                status: None,
                expiry_window_days: None,
                strict_unknown_fields: None,
            })
            .await
            .expect_err("a 400");
        assert_eq!(error.code(), "invalid");
        assert_eq!(
            error.explain(),
            "Invalid input. (invalid) [HTTP 400]\n  name: This field is required. (required)\n  status: Unknown status. (invalid_choice)"
        );
    }

    #[tokio::test]
    async fn a_component_is_put_as_wasm_with_its_name_and_version() {
        let body = r#"{"supplier": "OLD_CO", "sha256": "ab", "name": "rules", "version": "1.0",
            "size_bytes": 3, "installed_at": "2025-03-01T09:00:00Z", "hooks": [], "config": {}}"#;
        let (base, request) = answer_once("200 OK", body);
        let api = AdminClient::new(&base, "operator-key").expect("client");
        let record = api
            .install_plugin("OLD_CO", b"\0as".to_vec(), Some("rules"), Some("1.0"))
            .await
            .expect("the answer reads");
        assert_eq!(record.version, "1.0");
        let request = request.recv().expect("the request");
        assert!(
            request.starts_with(
                "PUT /admin/v1/suppliers/OLD_CO/plugin?name=rules&version=1.0 HTTP/1.1"
            ),
            "{request}"
        );
        assert!(
            request
                .to_lowercase()
                .contains("content-type: application/wasm"),
            "{request}"
        );
    }
}
