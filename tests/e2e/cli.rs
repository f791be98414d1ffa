//! The operator CLI against a running server, and `ferry serve --demo`.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::process::Command;

fn ferry(server: &Server, args: &[&str]) -> (bool, Value, String) {
    let output = Command::new(ferry_binary())
        .args(args)
        .env("FERRY_URL", &server.base)
        .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
        .output()
        .expect("run ferry");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (output.status.success(), value, stderr)
}

#[tokio::test]
async fn operators_manage_suppliers_and_keys_from_the_command_line() {
    let server = Server::start().await;
    let (ok, created, err) = ferry(
        &server,
        &[
            "supplier",
            "create",
            "OLD_CO",
            "--name",
            "Old Co",
            "--document-root",
            "old/",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(created["code"], "OLD_CO");

    let (ok, list, _) = ferry(&server, &["supplier", "list"]);
    assert!(ok);
    assert_eq!(list[0]["name"], "Old Co");

    let (ok, team, err) = ferry(&server, &["team", "create", "Billing Operations"]);
    assert!(ok, "{err}");
    assert_eq!(team["name"], "Billing Operations");
    let (ok, teams, _) = ferry(&server, &["team", "list"]);
    assert!(ok);
    assert_eq!(teams[0]["name"], "Billing Operations");
    // A refusal names the field at fault.
    let (ok, _, err) = ferry(&server, &["supplier", "create", "bad code", "--name", "X"]);
    assert!(!ok);
    assert!(err.contains("code: ") && err.contains("(invalid)"), "{err}");

    let (ok, key, err) = ferry(
        &server,
        &[
            "api-key",
            "create",
            "--organisation",
            "Old Co Ltd",
            "--supplier",
            "OLD_CO",
        ],
    );
    assert!(ok, "{err}");
    let token = server.token_for(key["key"].as_str().expect("key")).await;

    let (ok, paused, err) = ferry(&server, &["supplier", "set-status", "OLD_CO", "paused"]);
    assert!(ok, "{err}");
    assert_eq!(paused["status"], "PAUSED");
    let (status, body) = server
        .post(STAGE, &token, &account("OLD_CO", "ACC-1"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "import_supplier_migration_not_ongoing");

    let (ok, _, err) = ferry(
        &server,
        &[
            "supplier",
            "update",
            "OLD_CO",
            "--status",
            "ONGOING",
            "--expiry-window-days",
            "10",
        ],
    );
    assert!(ok, "{err}");
    let (ok, shown, _) = ferry(&server, &["supplier", "show", "OLD_CO"]);
    assert!(ok);
    assert_eq!(shown["expiry_window_days"], 10);
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;

    // Errors from the server reach the operator, with a failing exit code.
    let (ok, _, err) = ferry(
        &server,
        &["supplier", "create", "OLD_CO", "--name", "Again"],
    );
    assert!(!ok);
    assert!(err.contains("import_supplier_already_exists"), "{err}");

    let (ok, _, err) = ferry(
        &server,
        &["api-key", "revoke", key["id"].as_str().expect("id")],
    );
    assert!(ok, "{err}");
    let (status, _) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_unreachable_server_is_a_clear_error() {
    let output = Command::new(ferry_binary())
        .args([
            "supplier",
            "list",
            "--url",
            "http://127.0.0.1:9",
            "--operator-key",
            "k",
        ])
        .output()
        .expect("run ferry");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach the Ferry server"), "{stderr}");
}

#[tokio::test]
async fn the_demo_installs_its_plugin_and_prints_a_request_that_works() {
    // Built by the test set-up as by a newcomer's first `serve --demo` (which builds it when
    // it is missing); here only so that the demo's own build finds it up to date.
    plugin("example_plugin");
    let server = Server::start_with(Options {
        args: vec!["--demo".into()],
        ..Options::default()
    })
    .await;
    let printed = server.stdout.join("\n");
    assert!(
        printed.contains("The example plugin (example-plugin 0.1.0")
            && printed.contains("normalises DEMO's phone numbers"),
        "{printed}"
    );
    let key = printed
        .split_whitespace()
        .find(|word| word.starts_with("ferry_") && word.len() > 40)
        .unwrap_or_else(|| panic!("no API key in {printed}"));
    let token = server.token_for(key).await;
    // The printed staging request, as a user would paste it (the JSON after -d).
    let data = printed
        .lines()
        .filter_map(|line| line.trim().strip_prefix("-d '"))
        .find(|data| data.contains("external_account_number"))
        .and_then(|data| data.strip_suffix('\''))
        .unwrap_or_else(|| panic!("no staging request in {printed}"));
    let body: Value = serde_json::from_str(data).expect("the printed body is JSON");
    let (status, answer) = server.post(STAGE, &token, &body).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(
        answer,
        json!({"external_account_number": "DEMO-1", "import_supplier_code": "DEMO"})
    );
}

/// `ferry plugin check FILE | head -1` and the like: when whoever reads the output goes away,
/// the command stops quietly (exit 0, nothing on stderr), never with a panic. The reader here is
/// gone before the command starts, so every write meets a closed pipe.
#[tokio::test]
async fn commands_stop_quietly_when_their_reader_goes_away() {
    let server = Server::start().await;
    let component = plugin("example_plugin");
    let component = component.to_str().expect("a UTF-8 path");
    for args in [
        vec!["plugin", "check", component],
        vec!["events", "catalogue"],
        vec!["events", "asyncapi"],
        vec!["supplier", "list"],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let output = Command::new(ferry_binary())
            .args(&args)
            .env("FERRY_URL", &server.base)
            .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
            .stdout(writer)
            .output()
            .expect("run ferry");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{args:?}: {:?} {stderr}",
            output.status
        );
        assert_eq!(stderr, "", "{args:?}");
    }
}

/// Starts `ferry serve` on a fresh data directory in `dir`, with what `command` adds (set up
/// from `ferry_binary()`), and reads its stdout until it says it listens: the server, and
/// whether it did.
fn start_serving(
    dir: &std::path::Path,
    configure: impl FnOnce(&mut Command) -> &mut Command,
) -> (std::process::Child, bool) {
    use std::io::{BufRead, BufReader};
    let mut command = Command::new(ferry_binary());
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
        .stdout(std::process::Stdio::piped());
    let mut child = configure(&mut command).spawn().expect("start ferry");
    let stdout = child.stdout.take().expect("stdout");
    let listening = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.starts_with("ferry listening on "));
    (child, listening)
}

/// Logs written to a pipe or a file carry no colour escapes.
#[test]
fn logs_to_a_pipe_have_no_colour_escapes() {
    use std::io::Read;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut child, listening) = start_serving(dir.path(), |command| {
        command
            .env("FERRY_LOG", "info")
            .env_remove("NO_COLOR")
            .stderr(std::process::Stdio::piped())
    });
    assert!(listening, "ferry did not start");
    child.kill().expect("kill");
    let mut logs = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut logs)
        .expect("read the logs");
    let _ = child.wait();
    assert!(logs.contains("ferry listening"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "{logs:?}");
}

/// `ferry serve --workers N` serves requests on N threads.
#[test]
fn the_server_runs_as_many_request_threads_as_it_is_told() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut child, listening) = start_serving(dir.path(), |command| {
        command
            .args(["--workers", "3"])
            .stderr(std::process::Stdio::null())
    });
    let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).expect("threads");
    let workers = tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .filter(|name| name.trim_end() == "tokio-rt-worker")
        .count();
    child.kill().expect("kill");
    let _ = child.wait();
    assert!(listening, "ferry did not start");
    assert_eq!(workers, 3);
}
