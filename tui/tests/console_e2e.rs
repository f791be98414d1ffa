//! End to end: the real `ferry` server and the real `ferry-console` inside tmux. An operator
//! pauses a supplier with keystrokes; the public API then refuses to stage its accounts.
//!
//! Needs tmux and the server binary next to the console binary (`cargo build -p ferry-host`;
//! the workspace's `cargo test` builds it for the host's own tests).

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const OPERATOR_KEY: &str = "console-e2e-operator-key";
const STAGE: &str = "/v1/data-import/account-import-process/create-or-update/";
/// How long the pane may take to show what is expected.
const SCREEN_TIMEOUT: Duration = Duration::from_secs(20);

/// The `ferry` binary built next to this crate's binary.
fn ferry_binary() -> PathBuf {
    let console = PathBuf::from(env!("CARGO_BIN_EXE_ferry-console"));
    let ferry = console.with_file_name(format!("ferry{}", std::env::consts::EXE_SUFFIX));
    assert!(
        ferry.is_file(),
        "the server binary {} is missing: run `cargo build -p ferry-host` first",
        ferry.display()
    );
    ferry
}

/// A running `ferry serve` on a free port with a temporary data directory; killed on drop.
struct Server {
    child: Child,
    base: String,
    _data: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let data = tempfile::tempdir().expect("temp dir");
        let mut child = Command::new(ferry_binary())
            .arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(data.path().join("data"))
            .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
            .env("FERRY_LOG", "warn")
            .current_dir(data.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start ferry");
        let stdout = child.stdout.take().expect("stdout");
        let (lines_tx, lines_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Own the child before waiting, so that it is killed if the wait fails.
        let mut server = Server {
            child,
            base: String::new(),
            _data: data,
        };
        server.base = loop {
            let line = lines_rx
                .recv_timeout(Duration::from_secs(60))
                .expect("ferry did not announce its address");
            if let Some(address) = line.strip_prefix("ferry listening on ") {
                break address.trim().to_owned();
            }
        };
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Blocking HTTP calls to the server.
struct Http {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    base: String,
}

impl Http {
    fn new(base: &str) -> Http {
        Http {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            client: reqwest::Client::new(),
            base: base.to_owned(),
        }
    }

    fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        self.runtime.block_on(async {
            let mut request = self.client.request(method, format!("{}{path}", self.base));
            if !token.is_empty() {
                request = request.header("Authorization", format!("Token {token}"));
            }
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request.send().await.expect("request");
            let status = response.status();
            let text = response.text().await.expect("body");
            let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            (status, value)
        })
    }

    fn post(&self, path: &str, token: &str, body: &Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::POST, path, token, Some(body))
    }
}

/// A private tmux server (its own socket) running one session; killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(command: &str) -> Tmux {
        let tmux = Tmux {
            socket: format!("ferry-console-e2e-{}", std::process::id()),
        };
        let output = tmux.run(&[
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "40",
            "-s",
            "console",
            command,
        ]);
        assert!(
            output.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("run tmux (is it installed?)")
    }

    fn screen(&self) -> String {
        let output = self.run(&["capture-pane", "-p", "-t", "console"]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn send(&self, key: &str) {
        let output = self.run(&["send-keys", "-t", "console", key]);
        assert!(output.status.success(), "tmux send-keys {key} failed");
    }

    /// Polls the pane until a line satisfies `check`; fails with the last screen after the
    /// timeout.
    fn wait_for_line(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + SCREEN_TIMEOUT;
        loop {
            let screen = self.screen();
            if screen.lines().any(&check) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the console did not show {what} within {SCREEN_TIMEOUT:?}; the screen was:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait_for_line(text, |line| line.contains(text))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// `'text'` for sh.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn account(number: &str) -> Value {
    json!({
        "import_supplier": "OLD_CO",
        "external_account_number": number,
        "billing_name": "Ada Lovelace",
        "billing_address1": "1 Analytical St",
        "billing_address4": "London",
        "billing_postcode": "N1 1AA",
        "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com"}]
    })
}

#[test]
fn pausing_a_supplier_from_the_console_makes_the_host_refuse_staging() {
    let has_tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        has_tmux,
        "tmux is needed for this test (apt-get install tmux)"
    );

    let server = Server::start();
    let http = Http::new(&server.base);

    // A supplier, an organisation key for it, a platform token, and one staged account.
    let (status, body) = http.post(
        "/admin/v1/suppliers",
        OPERATOR_KEY,
        &json!({"code": "OLD_CO", "name": "Old Co", "document_root": "old_co/"}),
    );
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = http.post(
        "/admin/v1/api-keys",
        OPERATOR_KEY,
        &json!({"organisation": "Org", "suppliers": ["OLD_CO"]}),
    );
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let api_key = body["key"].as_str().expect("key").to_owned();
    let (status, body) = http.post(
        "/v1/graphql/",
        "",
        &json!({
            "query": "mutation($input: ObtainJSONWebTokenInput!) { obtainPlatformToken(input: $input) { token } }",
            "variables": {"input": {"APIKey": api_key}}
        }),
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["data"]["obtainPlatformToken"]["token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token in {body}"))
        .to_owned();
    let (status, body) = http.post(STAGE, &token, &account("ACC-1"));
    assert_eq!(
        status,
        StatusCode::CREATED,
        "staging works while ONGOING: {body}"
    );

    // The console, in a fixed-size window; its exit status stays on screen when it ends.
    let console = [
        env!("CARGO_BIN_EXE_ferry-console"),
        "--url",
        &server.base,
        "--operator-key",
        OPERATOR_KEY,
        "--refresh-seconds",
        "1",
    ]
    .map(quoted)
    .join(" ");
    let tmux = Tmux::start(&format!(
        "{console}; echo \"console exited with $?\"; sleep 600"
    ));

    tmux.wait_for_line("OLD_CO as ONGOING with its staged account", |line| {
        line.contains("OLD_CO") && line.contains("ONGOING") && line.contains(" 1 ")
    });
    tmux.send("p");
    tmux.wait_for("Change supplier status");
    let (_, body) = http.call(
        reqwest::Method::GET,
        "/admin/v1/suppliers/OLD_CO",
        OPERATOR_KEY,
        None,
    );
    assert_eq!(
        body["status"], "ONGOING",
        "nothing changes before confirming"
    );
    tmux.send("y");
    tmux.wait_for_line("OLD_CO as PAUSED", |line| {
        line.contains("OLD_CO") && line.contains("PAUSED") && !line.contains("Set OLD_CO")
    });

    // The host persisted it: staging is refused.
    let (status, body) = http.call(
        reqwest::Method::GET,
        "/admin/v1/suppliers/OLD_CO",
        OPERATOR_KEY,
        None,
    );
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "PAUSED", "{body}");
    let (status, body) = http.post(STAGE, &token, &account("ACC-2"));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["code"], "import_supplier_migration_not_ongoing",
        "{body}"
    );

    // Enter shows the supplier's imports, read from the host.
    tmux.send("Enter");
    tmux.wait_for_line("ACC-1 as PENDING on the Imports screen", |line| {
        line.contains("ACC-1") && line.contains("PENDING")
    });

    // q quits cleanly.
    tmux.send("q");
    tmux.wait_for("console exited with 0");
}
