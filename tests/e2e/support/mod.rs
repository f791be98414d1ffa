//! The harness of the end-to-end tests: the real `ferry` binary, started on a free port with a
//! temporary data directory, driven over HTTP.

#![allow(dead_code)]

mod tcp_proxy;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
pub use tcp_proxy::TcpProxy;

pub const OPERATOR_KEY: &str = "test-operator-key";

/// No request of the tests may take longer: a hang fails the test instead of the run.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest the demo may take to print its staging request after the server listens.
const DEMO_TIMEOUT: Duration = Duration::from_secs(600);

pub fn ferry_binary() -> &'static str {
    env!("CARGO_BIN_EXE_ferry")
}

/// The component `name` (`example_plugin`, `fault_trap`, ...) built from `plugins/` for
/// wasm32-wasip2. The first call builds them all.
pub fn plugin(name: &str) -> PathBuf {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match BUILT.get_or_init(ferry_host::plugins::dev::build_plugins) {
        Ok(dir) => dir.join(format!("{name}.wasm")),
        Err(error) => panic!("{error}"),
    }
}

/// The store the servers of this test binary run on: `e2e` and `e2e-measured` run them on
/// sled, `e2e-postgres` and `e2e-measured-postgres` (the same tests) on PostgreSQL, a
/// database of their own each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sled,
    Postgres,
}

pub fn backend() -> Backend {
    if env!("CARGO_CRATE_NAME").ends_with("_postgres") {
        Backend::Postgres
    } else {
        Backend::Sled
    }
}

/// The administrator URL of the PostgreSQL the tests run on (trust auth):
/// `FERRY_TEST_DATABASE_URL`'s, the machine's at `127.0.0.1:5432`, or else one this test
/// binary starts of its own (`ferry_test_support`).
fn postgres_admin_url() -> String {
    ferry_test_support::postgres_admin_url()
}

/// `sql`'s rows, unaligned, run by `psql` as the tests' PostgreSQL's administrator.
pub fn psql(sql: &str) -> String {
    psql_on(&postgres_admin_url(), sql)
}

/// `sql`'s rows, unaligned, run by `psql` on the database at `url`.
pub fn psql_on(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .arg(url)
        .args(["-XqAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .expect("run psql");
    assert!(
        output.status.success(),
        "psql {sql}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The database of the server on `data_dir`: made on its first start (its URL kept beside
/// the directory, so that a restart finds it again).
pub fn database_of(data_dir: &Path) -> String {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(drop_abandoned_databases);
    let kept = data_dir.with_extension("database-url");
    if let Ok(url) = std::fs::read_to_string(&kept) {
        return url;
    }
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = format!(
        "ferry_e2e_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    psql(&format!("CREATE DATABASE {name}"));
    let admin = postgres_admin_url();
    let base = admin
        .rsplit_once('/')
        .map_or(admin.as_str(), |(base, _)| base);
    let url = format!("{base}/{name}");
    std::fs::create_dir_all(data_dir.parent().expect("parent")).expect("parent dir");
    std::fs::write(&kept, &url).expect("keep the database URL");
    url
}

/// A new database for servers to share, dropped with `dir` (its URL kept in it).
pub fn shared_database(dir: &Path) -> String {
    database_of(&dir.join("shared"))
}

/// Drops the databases earlier runs of these tests left (their process is gone).
fn drop_abandoned_databases() {
    let names = psql("SELECT datname FROM pg_database WHERE datname LIKE 'ferry_e2e_%'");
    for name in names.lines() {
        let pid = name.split('_').nth(2).unwrap_or_default();
        if pid != std::process::id().to_string() && !Path::new(&format!("/proc/{pid}")).exists() {
            psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

/// A running `ferry serve`; killed when dropped.
pub struct Server {
    child: Child,
    pub base: String,
    pub data_dir: PathBuf,
    /// Lines the server printed on stdout.
    pub stdout: Vec<String>,
    _temp: Option<tempfile::TempDir>,
    http: reqwest::Client,
}

/// How to start a server.
#[derive(Default, Clone)]
pub struct Options {
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
    /// Don't pass FERRY_OPERATOR_KEY (the server then makes its own).
    pub no_operator_key: bool,
    /// The server's soft and hard limits of open files (`prlimit --nofile`), instead of the
    /// test's own.
    pub open_files: Option<(u64, u64)>,
}

impl Server {
    pub async fn start() -> Server {
        Self::start_with(Options::default()).await
    }

    pub async fn start_with(options: Options) -> Server {
        let temp = tempfile::tempdir().expect("temp dir");
        let data_dir = temp.path().join("data");
        let mut server = Self::start_in(&data_dir, options);
        server._temp = Some(temp);
        server
    }

    /// Starts a server on `data_dir` (which the caller keeps).
    pub fn start_in(data_dir: &Path, options: Options) -> Server {
        let mut command = match options.open_files {
            Some((soft, hard)) => {
                // prlimit sets its own limits, then runs ferry in its place (the same pid).
                let mut command = Command::new("prlimit");
                command
                    .arg(format!("--nofile={soft}:{hard}"))
                    .arg(ferry_binary());
                command
            }
            None => Command::new(ferry_binary()),
        };
        command
            .arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(data_dir)
            .args(&options.args)
            .env_remove("FERRY_OPERATOR_KEY")
            .env("FERRY_LOG", "warn")
            .current_dir(data_dir.parent().expect("parent"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if !options.no_operator_key {
            command.env("FERRY_OPERATOR_KEY", OPERATOR_KEY);
        }
        if backend() == Backend::Postgres {
            command.env("FERRY_DATABASE_URL", database_of(data_dir));
        }
        for (name, value) in &options.env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("start ferry");
        let stdout = child.stdout.take().expect("stdout");
        let (lines_tx, lines_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut printed = Vec::new();
        let base = loop {
            let line = lines_rx
                .recv_timeout(Duration::from_secs(60))
                .expect("ferry did not announce its address");
            printed.push(line.clone());
            if let Some(address) = line.strip_prefix("ferry listening on ") {
                break address.trim().to_owned();
            }
        };
        // Collect what the demo prints after the announcement, up to its staging request. It
        // may build the example plugin first (a cargo run, however slow the machine is): no
        // idle gap ends the wait, only the request's lines or the server's end.
        if options.args.iter().any(|arg| arg == "--demo") {
            while let Ok(line) = lines_rx.recv_timeout(DEMO_TIMEOUT) {
                let done = line.starts_with("  curl") && line.contains("create-or-update");
                printed.push(line);
                if done {
                    // The data line follows the curl line.
                    while let Ok(line) = lines_rx.recv_timeout(DEMO_TIMEOUT) {
                        let data = line.trim().starts_with("-d '");
                        printed.push(line);
                        if data {
                            break;
                        }
                    }
                    break;
                }
            }
        }
        Server {
            child,
            base,
            data_dir: data_dir.to_owned(),
            stdout: printed,
            _temp: None,
            http: reqwest::Client::builder()
                .timeout(REQUEST_TIMEOUT)
                .build()
                .expect("http client"),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `within` for the server to stop by itself; its exit status if it did.
    pub fn wait_for_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Some(exit) = self.child.try_wait().expect("wait") {
                return Some(exit);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL: the server dies at once, as on a crash (its process is reaped when dropped).
    pub fn kill_hard(&self) {
        let status = Command::new("kill")
            .args(["-9", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// SIGTERM, then wait for a clean exit; returns whether it exited successfully.
    pub fn terminate(mut self) -> bool {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(exit) = self.child.try_wait().expect("wait") {
                return exit.success();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "ferry did not shut down within 30 s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The sum of the `/metrics` counter `name` over its series carrying every label of
    /// `labels` (0 when none does); with no labels asked for, a series without labels counts.
    pub async fn counter_total(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        let (_, metrics) = self.call(Method::GET, "/metrics", None, None).await;
        let metrics = metrics.as_str().expect("the metrics' text");
        let series = format!("{name}{{");
        let unlabelled = format!("{name} ");
        let labels: Vec<String> = labels
            .iter()
            .map(|(label, value)| format!("{label}=\"{value}\""))
            .collect();
        metrics
            .lines()
            .filter(|line| {
                (line.starts_with(&series) && labels.iter().all(|label| line.contains(label)))
                    || (labels.is_empty() && line.starts_with(&unlabelled))
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }

    /// Any HTTP call; the answer's status and JSON body (Null when empty, a string when not JSON).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        auth: Option<&str>,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.http.request(method, self.url(path));
        if let Some(token) = auth {
            request = request.header("Authorization", format!("Token {token}"));
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status();
        let text = response.text().await.expect("body");
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, value)
    }

    /// A POST with a token, answered as it came (for its headers).
    pub async fn post_response(&self, path: &str, token: &str, body: &Value) -> reqwest::Response {
        self.post_within(path, token, body, REQUEST_TIMEOUT)
            .await
            .expect("request")
    }

    /// A POST with a token, answered as it came, or the client's error when no answer came
    /// within `within`.
    pub async fn post_within(
        &self,
        path: &str,
        token: &str,
        body: &Value,
        within: Duration,
    ) -> reqwest::Result<reqwest::Response> {
        self.http
            .post(self.url(path))
            .timeout(within)
            .header("Authorization", format!("Token {token}"))
            .json(body)
            .send()
            .await
    }

    pub async fn post(&self, path: &str, token: &str, body: &Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }

    pub async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, Some(token), None).await
    }

    pub async fn admin(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        self.call(method, path, Some(OPERATOR_KEY), body).await
    }

    pub async fn create_supplier(&self, code: &str) {
        let (status, body) = self
            .admin(
                Method::POST,
                "/admin/v1/suppliers",
                Some(&json!({"code": code, "name": format!("{code} Energy"), "document_root": format!("{}/", code.to_lowercase())})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    /// Makes the supplier refuse (or, with `false`, ignore and name) unknown request fields.
    pub async fn set_strict(&self, code: &str, strict: bool) {
        let (status, body) = self
            .admin(
                Method::PATCH,
                &format!("/admin/v1/suppliers/{code}"),
                Some(&json!({"strict_unknown_fields": strict})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["strict_unknown_fields"], strict);
    }

    pub async fn set_status(&self, code: &str, status: &str) {
        let (answer, body) = self
            .admin(
                Method::PATCH,
                &format!("/admin/v1/suppliers/{code}"),
                Some(&json!({"status": status})),
            )
            .await;
        assert_eq!(answer, StatusCode::OK, "{body}");
    }

    /// Issues an API key for `suppliers`; returns (id, key).
    pub async fn create_api_key(&self, suppliers: &[&str]) -> (String, String) {
        let (status, body) = self
            .admin(
                Method::POST,
                "/admin/v1/api-keys",
                Some(&json!({"organisation": "Test Org", "suppliers": suppliers})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        (
            body["id"].as_str().expect("id").to_owned(),
            body["key"].as_str().expect("key").to_owned(),
        )
    }

    /// The raw GraphQL answer of `obtainPlatformToken`.
    pub async fn obtain_token(&self, input: Value) -> Value {
        let query = "mutation Obtain($input: ObtainJSONWebTokenInput!) { obtainPlatformToken(input: $input) { token refreshToken refreshExpiresIn payload } }";
        let (status, body) = self
            .call(
                Method::POST,
                "/v1/graphql/",
                None,
                Some(&json!({"query": query, "variables": {"input": input}})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// A platform token for an API key.
    pub async fn token_for(&self, key: &str) -> String {
        let body = self.obtain_token(json!({"APIKey": key})).await;
        body["data"]["obtainPlatformToken"]["token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token in {body}"))
            .to_owned()
    }

    /// A supplier with an API key scoped to it; returns the token.
    pub async fn supplier_with_token(&self, code: &str) -> String {
        self.create_supplier(code).await;
        let (_, key) = self.create_api_key(&[code]).await;
        self.token_for(&key).await
    }

    /// Stages `account`, asserting success; returns the status.
    pub async fn stage(&self, token: &str, account: &Value) -> StatusCode {
        let (status, body) = self.post(STAGE, token, account).await;
        assert!(status.is_success(), "staging failed: {status} {body}");
        status
    }

    /// Migrates a staged account; returns its platform account number.
    pub async fn migrate(&self, token: &str, supplier: &str, external: &str) -> String {
        let (status, body) = self
            .post(
                PROCESS,
                token,
                &json!({"import_supplier_code": supplier, "external_account_number": external}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(
            body["account_number"], body["platform_account_number"],
            "{body}"
        );
        body["platform_account_number"]
            .as_str()
            .expect("number")
            .to_owned()
    }
}

impl Server {
    /// A supplier `code` with one imported account `external` whose open statement period
    /// starts `period_start`; returns (token, platform account number).
    pub async fn imported_account(
        &self,
        code: &str,
        external: &str,
        period_start: &str,
    ) -> (String, String) {
        let token = self.supplier_with_token(code).await;
        let mut body = account(code, external);
        open_period_from(&mut body, period_start);
        self.stage(&token, &body).await;
        let number = self.migrate(&token, code, external).await;
        (token, number)
    }

    /// Writes a document into the bucket at `key` (a path inside the bucket).
    pub fn put_document(&self, key: &str) {
        let path = self.data_dir.join("bucket").join(key);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, b"%PDF-1.4 test").expect("document");
    }

    /// Installs the component `name` (built from `plugins/`) for `supplier` with `config`.
    pub async fn install_plugin(&self, supplier: &str, name: &str, config: Value) -> Value {
        let bytes = std::fs::read(plugin(name)).expect("component");
        self.install_component(supplier, name, bytes, config).await
    }

    /// Installs the component `bytes` for `supplier` with `config`.
    pub async fn install_component(
        &self,
        supplier: &str,
        name: &str,
        bytes: Vec<u8>,
        config: Value,
    ) -> Value {
        let response = self
            .http
            .put(self.url(&format!(
                "/admin/v1/suppliers/{supplier}/plugin?name={name}&version=0.1.0"
            )))
            .header("Authorization", format!("Token {OPERATOR_KEY}"))
            .header("Content-Type", "application/wasm")
            .body(bytes)
            .send()
            .await
            .expect("install");
        let status = response.status();
        let body: Value = response.json().await.expect("json");
        assert_eq!(status, StatusCode::OK, "{body}");
        if config.as_object().is_some_and(|c| !c.is_empty()) {
            let (status, body) = self
                .admin(
                    Method::PUT,
                    &format!("/admin/v1/suppliers/{supplier}/plugin/config"),
                    Some(&config),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            return body;
        }
        body
    }

    /// Starts the bulk migration of `supplier`'s pending accounts: the job as answered, and
    /// its path.
    pub async fn start_bulk_migration(&self, supplier: &str) -> (Value, String) {
        let (status, job) = self
            .admin(
                Method::POST,
                &format!("/admin/v1/suppliers/{supplier}/migrations"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{job}");
        let path = format!(
            "/admin/v1/suppliers/{supplier}/migrations/{}",
            job["id"].as_str().expect("the job's id")
        );
        (job, path)
    }

    /// Asserts that `job` ended `COMPLETED` with every one of `supplier`'s `accounts` processed
    /// and none failed, and that each is `PROCESSED`, as this server counts them.
    pub async fn assert_bulk_completed(&self, supplier: &str, job: &Value, accounts: usize) {
        assert_eq!(job["state"], "COMPLETED", "{job}");
        assert_eq!(job["processed"], accounts, "{job}");
        assert_eq!(job["failed"], 0, "{job}");
        let (_, counted) = self
            .admin(
                Method::GET,
                &format!("/admin/v1/suppliers/{supplier}"),
                None,
            )
            .await;
        assert_eq!(counted["counts"]["PROCESSED"], accounts, "{counted}");
        for state in ["IN_PROGRESS", "PENDING", "ERRORED"] {
            assert_eq!(counted["counts"][state], 0, "{state}: {counted}");
        }
    }

    /// The bulk migration at `path` (`/admin/v1/suppliers/{code}/migrations/{id}`) once it has
    /// ended, as this server shows it; a moment this server cannot answer is waited out.
    pub async fn bulk_migration_ended(&self, path: &str, within: Duration) -> Value {
        self.poll_bulk_migration(path, within, false).await
    }

    /// The same for a server that must answer every poll: an answer other than 200 fails.
    pub async fn bulk_migration_ended_answering(&self, path: &str, within: Duration) -> Value {
        self.poll_bulk_migration(path, within, true).await
    }

    async fn poll_bulk_migration(
        &self,
        path: &str,
        within: Duration,
        every_poll_answered: bool,
    ) -> Value {
        let deadline = std::time::Instant::now() + within;
        loop {
            let (status, job) = self.admin(Method::GET, path, None).await;
            if every_poll_answered {
                assert_eq!(status, StatusCode::OK, "{job}");
            }
            if status == StatusCode::OK && job["state"] != "RUNNING" {
                return job;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the bulk migration did not end: {status} {job}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// What operators see of an account.
    pub async fn account_view(&self, number: &str) -> Value {
        let (status, body) = self
            .admin(Method::GET, &format!("/admin/v1/accounts/{number}"), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A server on a directory of its own: its database goes with it.
        if self._temp.is_some()
            && let Ok(url) = std::fs::read_to_string(self.data_dir.with_extension("database-url"))
            && let Some((_, name)) = url.rsplit_once('/')
        {
            psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

pub const VALIDATE: &str = "/v1/data-import/validate-account/";
pub const STAGE: &str = "/v1/data-import/account-import-process/create-or-update/";
pub const PROCESS: &str = "/v1/data-import/account-import-process/process/";
pub const NOTES: &str = "/v1/data-import/notes/create/";
pub const TRANSACTIONS: &str = "/v1/data-import/transactions/create/";
pub const STATEMENTS: &str = "/v1/data-import/historical-statements/create/";
pub const INSTRUCTIONS: &str = "/v1/data-import/payment-instruction/create/";

/// A valid account payload for `supplier`: the real platform's account document, with one
/// customer and one electricity meter point.
pub fn account(supplier: &str, external: &str) -> Value {
    json!({
        "import_supplier": supplier,
        "external_account_number": external,
        "account_type": "DOMESTIC",
        "billing_name": "Ada Lovelace",
        "billing_address1": "1 Analytical Street",
        "billing_address4": "London",
        "billing_postcode": "N1 1AA",
        "customers": [{
            "given_name": "Ada",
            "family_name": "Lovelace",
            "email": "ada@example.com",
            "mobile": "07700 900123"
        }],
        "supply_addresses": [{
            "supply_address1": "1 Analytical Street",
            "supply_postcode": "N1 1AA",
            "customer_at_supply_address_from_date": "2024-01-01",
            "meter_points": [{
                "supply_type": "ELECTRICITY",
                "identifier": "1200023305967",
                "mpid": "TENT",
                "supply_start_date": "2024-01-01",
                "agreements": [{"tariff_code": "VAR-22", "effective_from": "2024-01-01"}]
            }]
        }],
        "transfer_balance": "0.00"
    })
}

/// Sets the account's open statement period to start on `period_start` (`YYYY-MM-DD`): the
/// real document says so by the day before it, `last_billed_to_date`.
pub fn open_period_from(body: &mut Value, period_start: &str) {
    let start = chrono::NaiveDate::parse_from_str(period_start, "%Y-%m-%d").expect("a date");
    let billed_to = start.pred_opt().expect("a day before");
    body["last_billed_to_date"] = json!(billed_to.to_string());
}

/// The (attr, code) pairs of an error body as JSON, in order: a request-level error has a
/// null `attr`.
pub fn error_values(body: &Value) -> Vec<(Value, Value)> {
    body["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .map(|error| (error["attr"].clone(), error["code"].clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The (attr, code) pairs of an error body.
pub fn error_pairs(body: &Value) -> Vec<(String, String)> {
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors in {body}"))
        .iter()
        .map(|error| {
            (
                error["attr"].as_str().unwrap_or("").to_owned(),
                error["code"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Asserts the standard error format and the top-level code.
pub fn assert_error(body: &Value, code: &str) {
    assert_eq!(body["code"], code, "{body}");
    assert!(body["detail"].is_string(), "{body}");
    assert!(body["errors"].is_array(), "{body}");
}

/// A private `redis-server` on a unix socket in a temporary directory, keeping what it
/// acknowledges on disk (`appendfsync always`), so it can be stopped and started again.
pub struct Redis {
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Redis {
    pub fn start() -> Redis {
        let mut redis = Redis {
            dir: tempfile::tempdir().expect("temp"),
            child: None,
        };
        redis.resume();
        redis
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("redis.sock")
    }

    /// The URL Ferry and the tests use.
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket().display())
    }

    /// Starts the server (again), on the same data.
    pub fn resume(&mut self) {
        let _ = std::fs::remove_file(self.socket());
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(self.socket())
            .args([
                "--unixsocketperm",
                "700",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server (is it installed?)");
        self.child = Some(child);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if self.answers_ping() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not start");
    }

    /// Whether the server takes commands: its socket accepts connections before it has
    /// loaded its data, and until then it answers `-LOADING`.
    fn answers_ping(&self) -> bool {
        use std::io::{Read as _, Write as _};
        let Ok(mut stream) = std::os::unix::net::UnixStream::connect(self.socket()) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut reply = [0u8; 5];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG"
    }

    /// Stops the server (SIGKILL; what it acknowledged is already on disk).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Every entry of `stream`: (entry id, fields).
    pub async fn entries(
        &self,
        stream: &str,
    ) -> Vec<(String, std::collections::HashMap<String, String>)> {
        let client = redis::Client::open(self.url()).expect("client");
        let mut con = client
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
            .arg(stream)
            .arg("-")
            .arg("+")
            .query_async(&mut con)
            .await
            .expect("XRANGE");
        reply
            .ids
            .into_iter()
            .map(|entry| {
                let fields = entry
                    .map
                    .keys()
                    .map(|key| (key.clone(), entry.get::<String>(key).unwrap_or_default()))
                    .collect();
                (entry.id, fields)
            })
            .collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Server {
    /// Waits until the relay has published everything (the outbox is empty); returns the
    /// whole log, page by page.
    pub async fn wait_for_published(&self) -> Vec<Value> {
        for _ in 0..400 {
            let (status, page) = self
                .admin(Method::GET, "/admin/v1/events?limit=1000", None)
                .await;
            assert_eq!(status, StatusCode::OK, "{page}");
            if page["relay"]["lag"] == 0 {
                let mut log = page["events"].as_array().cloned().unwrap_or_default();
                let mut next = page["next_after"].as_str().map(str::to_owned);
                while let Some(after) = next {
                    let path = format!("/admin/v1/events?limit=1000&after={after}");
                    let (status, page) = self.admin(Method::GET, &path, None).await;
                    assert_eq!(status, StatusCode::OK, "{page}");
                    log.extend(page["events"].as_array().cloned().unwrap_or_default());
                    next = page["next_after"].as_str().map(str::to_owned);
                }
                // The relay records an event's publication just after Redis took it (the lag
                // already counts it out): a moment later than the lag's zero.
                if log.iter().all(|event| event["published_at"].is_string()) {
                    return log;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the relay did not empty the outbox");
    }
}

/// The supplier of the plugin-load tests whose plugin (the example) works.
pub const HEALTHY: &str = "HEALTHY_CO";

/// An account the example plugin validates and maps (its mobile number to E.164).
pub fn healthy_account(external: &str) -> Value {
    let mut body = account(HEALTHY, external);
    body["customers"][0]["mobile"] = json!("07700 900123");
    body
}

/// `ferry_plugin_failures_total` of `supplier` and failure `kind`, from /metrics.
pub async fn failures_counted(server: &Server, supplier: &str, kind: &str) -> u64 {
    server
        .counter_total(
            "ferry_plugin_failures_total",
            &[("supplier", supplier), ("kind", kind)],
        )
        .await
}

/// The healthy supplier, with the example plugin installed; its token.
pub async fn healthy_supplier(server: &Server) -> String {
    let token = server.supplier_with_token(HEALTHY).await;
    server
        .install_plugin(
            HEALTHY,
            "example_plugin",
            json!({"default_country_code": "44"}),
        )
        .await;
    token
}
