//! Supplier plugins: real WebAssembly components from `plugins/`, installed while the
//! server runs, mapping and refusing requests, and failing safely.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn example_config() -> Value {
    json!({"default_country_code": "44", "account_number_prefix": "OE-", "product_code.OLDVAR": "VAR-22"})
}

fn oe_account(external: &str) -> Value {
    let mut body = account("OLD_CO", external);
    body["customers"][0]["mobile"] = json!("07700 900123");
    body["customers"][0]["landline"] = json!("+44 20 7946 0000");
    body["supply_addresses"][0]["meter_points"][0]["agreements"][0]["tariff_code"] =
        json!("OLDVAR");
    body
}

/// `oe_account` with its money in two ledgers, as the real document sends it: electricity in
/// credit (a payment on its last statement, a supply charge on the current one, in the
/// supplier's product code), gas in debt; their balances add up to the transfer balance.
/// The transactions have fields the WIT's `transaction` record does not carry, and numbers.
fn oe_account_with_ledgers(external: &str) -> Value {
    let mut body = oe_account(external);
    body["transfer_balance"] = json!("-12.50");
    body["ledgers"] = json!([
        {"ledger_code": "ELECTRICITY", "ledger_identifier": "E-1", "ledger_balance": "30.00",
         "last_statement_balance": 40, "last_statement_closing_date": "2025-01-31",
         "last_statement_issue_date": "2025-02-03",
         "historical_statement_transactions": [
             {"transaction_id": "EH-1", "transaction_date": "2025-01-05", "amount": "40.00",
              "type": "PAYMENT", "payment_type": "DD_REGULAR_COLLECTION",
              "billing_document_identifier": "B-1"}],
         "current_statement_transactions": [
             {"transaction_id": "EC-1", "transaction_date": "2025-02-10", "amount": 10,
              "type": "SUPPLY_CHARGE", "product_code": "OLDVAR",
              "supply_point_identifier": "1200023305967",
              "line_items": [{"rate_band": "CONSUMPTION_STANDARD", "start_date": "2025-02-01",
                              "end_date": "2025-02-10", "number_of_units": 40, "net_amount": "10.00",
                              "price_per_unit": "0.25", "rate_specification_code": "STANDARD"}]}]},
        {"ledger_code": "GAS", "ledger_identifier": "G-1", "ledger_balance": "-42.50",
         "last_statement_balance": "-42.50", "last_statement_closing_date": "2025-01-31",
         "historical_statement_transactions": [
             {"transaction_id": "GH-1", "transaction_date": "2025-01-10", "amount": "42.50",
              "type": "CHARGE", "reason": "IMPORTED_CHARGE"}]}
    ]);
    body
}

#[tokio::test]
async fn the_example_plugin_maps_what_is_validated_and_stored() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let installed = server
        .install_plugin("OLD_CO", "example_plugin", example_config())
        .await;
    example_plugin_at_work(&server, &token, &installed).await;
}

/// The example plugin, built against `ferry:supplier-rules@0.3.0`, sees the account's ledgers:
/// it maps the supplier's product codes of their statement transactions, keeping every field
/// its record does not carry, and refuses a last statement balance below its setting.
#[tokio::test]
async fn the_example_plugin_sees_the_money_of_the_account() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server
        .install_plugin("OLD_CO", "example_plugin", example_config())
        .await;
    ledgers_at_work(&server, &token, LedgerView::Mapped).await;

    let (status, body) = server
        .admin(
            Method::PUT,
            "/admin/v1/suppliers/OLD_CO/plugin/config",
            Some(&json!({"min_statement_balance": "-40.00"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = server
        .post(VALIDATE, &token, &oe_account_with_ledgers("OE-2002"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        error_pairs(&body),
        vec![(
            "ledgers.1.last_statement_balance".to_owned(),
            "statement_balance_below_minimum".to_owned()
        )]
    );
}

/// The example plugin as built against `ferry:supplier-rules@0.1.0` and committed then
/// (`tests/fixtures/plugins/`): the same behaviour from the same bytes, now that the host's
/// newest version is 0.3.0 (the example plugin itself is built against 0.3.0, whose account
/// record is the document's own fields: the two map the same fields the same way), and the
/// account's ledgers, which its record does not have, pass through as sent.
#[tokio::test]
async fn a_component_built_against_wit_0_1_0_keeps_working() {
    committed_example_plugin_at_work("0.1.0", LedgerView::Unseen).await;
}

/// The same for `ferry:supplier-rules@0.2.0`.
#[tokio::test]
async fn a_component_built_against_wit_0_2_0_keeps_working() {
    committed_example_plugin_at_work("0.2.0", LedgerView::Unseen).await;
}

/// The same for `ferry:supplier-rules@0.3.0`, which sees the ledgers.
#[tokio::test]
async fn a_component_built_against_wit_0_3_0_keeps_working() {
    committed_example_plugin_at_work("0.3.0", LedgerView::Mapped).await;
}

/// What a version of the example plugin does with the account's ledgers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LedgerView {
    /// Its account record has none (before 0.3.0): they pass through as sent.
    Unseen,
    /// It maps the product codes of their transactions.
    Mapped,
}

/// Validates, stages and migrates an account with ledgers for OLD_CO, whose plugin is the
/// example plugin with [`example_config`], and checks what came of its ledgers.
async fn ledgers_at_work(server: &Server, token: &str, view: LedgerView) {
    let sent = oe_account_with_ledgers("OE-2001");
    let mut expected = sent["ledgers"].clone();
    if view == LedgerView::Mapped {
        expected[0]["current_statement_transactions"][0]["product_code"] = json!("VAR-22");
    }
    let (status, body) = server.post(VALIDATE, token, &sent).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ledgers"], expected, "{body}");
    assert_eq!(body["transfer_balance"], "-12.50", "{body}");

    server.stage(token, &sent).await;
    let number = server.migrate(token, "OLD_CO", "OE-2001").await;
    let migrated = server.account_view(&number).await;
    assert_eq!(migrated["account"]["ledgers"], expected, "{migrated}");
}

/// The example plugin as committed when `version` was the newest (`tests/fixtures/plugins/`),
/// at work on a supplier, then on an account with ledgers.
async fn committed_example_plugin_at_work(version: &str, ledgers: LedgerView) {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../tests/fixtures/plugins/example_plugin-wit-{version}.wasm"
    ));
    let bytes = std::fs::read(&fixture).expect("the committed component");
    let name = format!("example_plugin_{}", version.replace('.', "_"));
    let installed = server
        .install_component("OLD_CO", &name, bytes, example_config())
        .await;
    // The operator sees which version of the world it was built against.
    assert_eq!(installed["wit_version"], version, "{installed}");
    example_plugin_at_work(&server, &token, &installed).await;
    ledgers_at_work(&server, &token, ledgers).await;
}

/// What the example plugin does to OLD_CO's accounts and supply charges.
async fn example_plugin_at_work(server: &Server, token: &str, installed: &Value) {
    assert_eq!(
        installed["hooks"].as_array().map(Vec::len),
        Some(5),
        "{installed}"
    );

    let (status, body) = server.post(VALIDATE, token, &oe_account("OE-1001")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["customers"][0]["mobile"], "+447700900123");
    assert_eq!(body["customers"][0]["landline"], "+442079460000");
    let tariff = "/supply_addresses/0/meter_points/0/agreements/0/tariff_code";
    assert_eq!(body.pointer(tariff), Some(&json!("VAR-22")), "{body}");

    server.stage(token, &oe_account("OE-1001")).await;
    let number = server.migrate(token, "OLD_CO", "OE-1001").await;
    let view = server.account_view(&number).await;
    assert_eq!(view["account"]["customers"][0]["mobile"], "+447700900123");
    assert_eq!(view["account"].pointer(tariff), Some(&json!("VAR-22")));

    let supply = json!({"import_supplier": "OLD_CO", "external_account_number": "OE-1001", "transactions": [
        {"transaction_id": "S-1", "transaction_date": "2025-01-10", "amount": 10, "type": "SUPPLY_CHARGE", "product_code": "OLDVAR",
         "line_items": [{"rate_band": "CONSUMPTION_STANDARD", "start_date": "2025-01-01", "end_date": "2025-01-31", "number_of_units": 40, "net_amount": 10, "price_per_unit": 0.25}]}
    ]});
    let (status, body) = server
        .post("/v1/data-import/transactions/create/", token, &supply)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        body["results"][0]["transaction_data"]["product_code"],
        "VAR-22"
    );
    assert_eq!(
        body["results"][0]["transaction_data"]["line_items"][0]["net_amount"],
        "10.00"
    );
}

#[tokio::test]
async fn plugin_errors_reach_the_client_in_the_standard_format() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server
        .install_plugin("OLD_CO", "example_plugin", example_config())
        .await;
    let mut bad = oe_account("XYZ-1");
    bad["customers"][0]["mobile"] = json!("12345678");
    let (status, body) = server.post(STAGE, &token, &bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_error(&body, "account_failed_validation");
    let mut pairs = error_pairs(&body);
    pairs.sort();
    assert_eq!(
        pairs,
        vec![
            (
                "customers.0.mobile".to_owned(),
                "invalid_phone_number".to_owned()
            ),
            (
                "external_account_number".to_owned(),
                "invalid_account_number".to_owned()
            ),
        ]
    );
    let (_, list) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(list, json!([]), "nothing was staged");
}

#[tokio::test]
async fn faulty_plugins_fail_only_their_own_requests() {
    let server = Arc::new(Server::start().await);
    let fixtures = [
        ("LOOP_CO", "fault_loop_forever", "deadline"),
        ("MEMORY_CO", "fault_grow_memory", "memory cap"),
        ("TRAP_CO", "fault_trap", "trapped"),
    ];
    let mut tokens = Vec::new();
    for (supplier, component, _) in fixtures {
        let token = server.supplier_with_token(supplier).await;
        server.install_plugin(supplier, component, json!({})).await;
        tokens.push(token);
    }
    let healthy = server.supplier_with_token("HEALTHY_CO").await;

    // Everyone at once: the faulty suppliers fail, the healthy one is served.
    let mut tasks = Vec::new();
    for ((supplier, _, expected), token) in fixtures.iter().zip(&tokens) {
        let (server, token, supplier, expected) = (
            server.clone(),
            token.clone(),
            supplier.to_string(),
            expected.to_string(),
        );
        tasks.push(tokio::spawn(async move {
            let started = Instant::now();
            let (status, body) = server
                .post(STAGE, &token, &account(&supplier, "ACC-1"))
                .await;
            assert_eq!(
                status,
                StatusCode::INTERNAL_SERVER_ERROR,
                "{supplier}: {body}"
            );
            assert_error(&body, "plugin_failed");
            let detail = body["detail"].as_str().expect("detail");
            assert!(
                detail.contains(&supplier)
                    && detail.contains("0.1.0")
                    && detail.contains(&expected),
                "{detail}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{supplier} took {:?}",
                started.elapsed()
            );
        }));
    }
    for index in 0..20 {
        let (server, healthy) = (server.clone(), healthy.clone());
        tasks.push(tokio::spawn(async move {
            let (status, body) = server
                .post(
                    STAGE,
                    &healthy,
                    &account("HEALTHY_CO", &format!("H-{index}")),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    // The host is still up, and says what happened.
    let (status, _) = server.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let (_, metrics) = server.call(Method::GET, "/metrics", None, None).await;
    let metrics = metrics.as_str().expect("text");
    for kind in ["deadline", "memory", "trap"] {
        assert!(
            metrics.contains(&format!("kind=\"{kind}\"")),
            "no {kind} failure in {metrics}"
        );
    }
    let (_, view) = server
        .admin(Method::GET, "/admin/v1/suppliers/LOOP_CO/plugin", None)
        .await;
    assert_eq!(
        view["recent_failures"][0]["hook"], "validate-account",
        "{view}"
    );
}

#[tokio::test]
async fn plugins_get_no_files_environment_clock_or_network() {
    let server = Server::start().await;
    let token = server.supplier_with_token("NOSY_CO").await;
    server
        .install_plugin("NOSY_CO", "fault_touch_host", json!({}))
        .await;
    let (status, body) = server
        .post(VALIDATE, &token, &account("NOSY_CO", "ACC-1"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let seen: std::collections::BTreeMap<String, String> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            (
                e["attr"].as_str().unwrap_or("").to_owned(),
                e["detail"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert!(seen["file"].starts_with("error"), "{seen:?}");
    assert_eq!(seen["env"], "0 variables");
    assert_eq!(seen["clock"], "0 seconds since the epoch");
    assert!(seen["network"].starts_with("error"), "{seen:?}");
}

#[tokio::test]
async fn output_past_the_cap_is_cut_short_and_the_request_still_served() {
    let server = Server::start().await;
    let token = server.supplier_with_token("CHATTY_CO").await;
    server
        .install_plugin("CHATTY_CO", "fault_chatty", json!({}))
        .await;
    let (status, body) = server
        .post(VALIDATE, &token, &account("CHATTY_CO", "ACC-1"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let temp = tempfile::tempdir().expect("temp");
    let input = temp.path().join("account.json");
    std::fs::write(&input, account("CHATTY_CO", "ACC-1").to_string()).expect("input");
    let (ok, ran, err) = ferry(&[
        "plugin",
        "run",
        &plugin("fault_chatty").display().to_string(),
        "--hook",
        "validate-account",
        "--input",
        &input.display().to_string(),
    ]);
    assert!(ok, "{err}");
    assert_eq!(ran["outcome"], "ok", "{ran}");
    let output = ran["stdout"].as_str().expect("stdout");
    assert!(
        output.starts_with("chatty: call 1 of this instance, checking ACC-1\n"),
        "{output:.80}"
    );
    let (kept, note) = output.rsplit_once('\n').expect("a last line");
    assert_eq!(kept.len(), 64 << 10);
    assert!(note.contains("more bytes not kept"), "{note}");
}

#[tokio::test]
async fn swapping_plugins_under_load_loses_no_request() {
    let server = Arc::new(
        Server::start_with(Options {
            env: vec![("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into())],
            ..Options::default()
        })
        .await,
    );
    let token = server.supplier_with_token("OLD_CO").await;
    server
        .install_plugin(
            "OLD_CO",
            "example_plugin",
            json!({"default_country_code": "44"}),
        )
        .await;
    let mut tasks = Vec::new();
    for worker in 0..4 {
        let (server, token) = (server.clone(), token.clone());
        tasks.push(tokio::spawn(async move {
            for index in 0..30 {
                let (status, body) = server
                    .post(
                        STAGE,
                        &token,
                        &oe_account(&format!("OE-{worker}{index:03}")),
                    )
                    .await;
                assert_eq!(status, StatusCode::CREATED, "{body}");
                assert!(body["external_account_number"].is_string());
            }
        }));
    }
    for round in 0..6 {
        let country = if round % 2 == 0 { "33" } else { "44" };
        server
            .install_plugin(
                "OLD_CO",
                "example_plugin",
                json!({"default_country_code": country}),
            )
            .await;
    }
    for task in tasks {
        task.await.expect("worker");
    }
    let (_, pending) = server
        .get(
            "/v1/data-import/pending-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(pending.as_array().map(Vec::len), Some(120));
}

#[tokio::test]
async fn components_of_another_world_are_refused() {
    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    for (bytes, expected) in [
        (
            std::fs::read(plugin("fault_wrong_world")).expect("component"),
            "signature",
        ),
        (b"\0asm\x01\0\0\0".to_vec(), "not a valid plugin"),
        (b"not wasm at all".to_vec(), "not a valid plugin"),
    ] {
        let response = reqwest::Client::new()
            .put(server.url("/admin/v1/suppliers/OLD_CO/plugin"))
            .header("Authorization", format!("Token {OPERATOR_KEY}"))
            .header("Content-Type", "application/wasm")
            .body(bytes)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body: Value = response.json().await.expect("json");
        assert_error(&body, "plugin_rejected");
        assert!(
            body["detail"]
                .as_str()
                .is_some_and(|d| d.contains(expected)),
            "{body}"
        );
    }
    let (status, body) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO/plugin", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "plugin_not_found");
}

#[tokio::test]
async fn installed_plugins_survive_a_restart_compiled_once() {
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    let server = Server::start_in(&data_dir, Options::default());
    let token = server.supplier_with_token("OLD_CO").await;
    server
        .install_plugin("OLD_CO", "example_plugin", example_config())
        .await;
    assert!(server.terminate());
    let cached: Vec<_> = std::fs::read_dir(data_dir.join("plugin-cache"))
        .expect("cache")
        .collect();
    assert_eq!(cached.len(), 1, "one compiled artifact");

    let server = Server::start_in(&data_dir, Options::default());
    let (status, body) = server.post(VALIDATE, &token, &oe_account("OE-7")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["customers"][0]["mobile"], "+447700900123");
    let (_, removed) = server
        .admin(Method::DELETE, "/admin/v1/suppliers/OLD_CO/plugin", None)
        .await;
    assert_eq!(removed["supplier"], "OLD_CO");
    let (_, body) = server.post(VALIDATE, &token, &oe_account("OE-7")).await;
    assert_eq!(
        body["customers"][0]["mobile"], "07700 900123",
        "no plugin: Ferry's own rules only, which keep the number as sent"
    );
}

/// The compiled components in `data_dir`'s cache, by their sources' SHA-256.
fn compiled_in(data_dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir.join("plugin-cache"))
        .expect("cache")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.ends_with(".cwasm"))
        .filter_map(|name| Some(name.split_once('-')?.0.to_owned()))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_component_no_plugin_runs_is_not_kept_stored_or_compiled() {
    let temp = tempfile::tempdir().expect("temp");
    let data_dir = temp.path().join("data");
    let server = Server::start_in(&data_dir, Options::default());
    for supplier in ["OLD_CO", "NEW_CO"] {
        server.create_supplier(supplier).await;
        server
            .install_plugin(supplier, "example_plugin", example_config())
            .await;
    }
    let sha256 =
        |name: &str| ferry_host::plugins::sha256_hex(&std::fs::read(plugin(name)).expect("read"));
    let (example, trap) = (sha256("example_plugin"), sha256("fault_trap"));
    // OLD_CO's replaced: NEW_CO still runs the example.
    server
        .install_plugin("OLD_CO", "fault_trap", json!({}))
        .await;
    let mut both = vec![example.clone(), trap.clone()];
    both.sort();
    assert_eq!(compiled_in(&data_dir), both);
    // NEW_CO's removed: nothing runs the example any more.
    let (status, _) = server
        .admin(Method::DELETE, "/admin/v1/suppliers/NEW_CO/plugin", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(compiled_in(&data_dir), std::slice::from_ref(&trap));
    if backend() == Backend::Postgres {
        let stored = psql_on(
            &database_of(&data_dir),
            "SELECT sha256 FROM plugin_components",
        );
        assert_eq!(stored.trim(), trap);
    }
    assert!(server.terminate());

    // What an earlier Ferry's engine compiled is not loaded again: gone on the next start.
    let stale = data_dir
        .join("plugin-cache")
        .join(format!("{example}-0000000000000000.cwasm"));
    std::fs::write(&stale, b"compiled by another engine").expect("write");
    let server = Server::start_in(&data_dir, Options::default());
    assert!(!stale.exists(), "removed on start");
    assert_eq!(compiled_in(&data_dir), std::slice::from_ref(&trap));
    let (status, plugin) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO/plugin", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{plugin}");
    assert_eq!(plugin["sha256"], trap);
}

#[tokio::test]
async fn the_plugin_directory_is_hot_reloaded() {
    let temp = tempfile::tempdir().expect("temp");
    let plugin_dir = temp.path().join("plugins");
    let server = Server::start_with(Options {
        args: vec!["--plugin-dir".into(), plugin_dir.display().to_string()],
        ..Options::default()
    })
    .await;
    server.create_supplier("OLD_CO").await;
    std::fs::create_dir_all(&plugin_dir).expect("dir");
    std::fs::copy(plugin("example_plugin"), plugin_dir.join("OLD_CO.wasm")).expect("copy");
    let mut installed = Value::Null;
    for _ in 0..200 {
        let (status, body) = server
            .admin(Method::GET, "/admin/v1/suppliers/OLD_CO/plugin", None)
            .await;
        if status == StatusCode::OK {
            installed = body;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(installed["name"], "OLD_CO.wasm", "{installed}");
    std::fs::remove_file(plugin_dir.join("OLD_CO.wasm")).expect("remove");
    let mut gone = false;
    for _ in 0..200 {
        let (status, _) = server
            .admin(Method::GET, "/admin/v1/suppliers/OLD_CO/plugin", None)
            .await;
        if status == StatusCode::NOT_FOUND {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the plugin was not removed with its file");
}

fn ferry(args: &[&str]) -> (bool, Value, String) {
    let output = Command::new(ferry_binary())
        .args(args)
        .output()
        .expect("run ferry");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (
        output.status.success(),
        serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr,
    )
}

#[tokio::test]
async fn the_plugin_commands_check_run_and_install() {
    let example = plugin("example_plugin").display().to_string();
    let (ok, checked, err) = ferry(&["plugin", "check", &example]);
    assert!(ok, "{err}");
    assert_eq!(checked["hooks"].as_array().map(Vec::len), Some(5));
    assert_eq!(checked["world"], "ferry:supplier-rules@0.3.0");
    for version in ["0.1.0", "0.2.0"] {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "../tests/fixtures/plugins/example_plugin-wit-{version}.wasm"
        ));
        let (ok, checked, err) = ferry(&["plugin", "check", &fixture.display().to_string()]);
        assert!(ok, "{err}");
        assert_eq!(checked["world"], format!("ferry:supplier-rules@{version}"));
    }
    let wrong = plugin("fault_wrong_world").display().to_string();
    let (ok, _, err) = ferry(&["plugin", "check", &wrong]);
    assert!(!ok);
    assert!(err.contains("signature"), "{err}");

    let temp = tempfile::tempdir().expect("temp");
    let input = temp.path().join("account.json");
    std::fs::write(&input, oe_account("OE-1").to_string()).expect("input");
    let input = input.display().to_string();
    let (ok, ran, err) = ferry(&[
        "plugin",
        "run",
        &example,
        "--hook",
        "validate-account",
        "--input",
        &input,
        "--config",
        "default_country_code=44",
    ]);
    assert!(ok, "{err}");
    assert_eq!(ran["outcome"], "ok");
    assert_eq!(ran["output"]["customers"][0]["mobile"], "+447700900123");
    assert_eq!(ran["logs"][0]["message"], "account checked");
    assert!(ran["elapsed_us"].is_u64());
    let (ok, ran, _) = ferry(&[
        "plugin",
        "run",
        &example,
        "--hook",
        "validate-account",
        "--input",
        &input,
        "--config",
        "account_number_prefix=ZZ-",
    ]);
    assert!(ok);
    assert_eq!(ran["outcome"], "rejected");
    assert_eq!(ran["errors"][0]["code"], "invalid_account_number");
    let (ok, _, err) = ferry(&[
        "plugin",
        "run",
        &plugin("fault_loop_forever").display().to_string(),
        "--hook",
        "validate-account",
        "--input",
        &input,
    ]);
    assert!(!ok);
    assert!(err.contains("deadline"), "{err}");

    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    let (ok, installed, err) = ferry(&[
        "plugin",
        "install",
        "OLD_CO",
        &example,
        "--name",
        "example-plugin",
        "--version",
        "0.1.0",
        "--url",
        &server.base,
        "--operator-key",
        OPERATOR_KEY,
    ]);
    assert!(ok, "{err}");
    assert_eq!(installed["version"], "0.1.0");
    let (_, supplier) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO", None)
        .await;
    assert_eq!(supplier["plugin"]["sha256"], installed["sha256"]);
}

/// `validate-account` calls of OLD_CO's plugin so far, from `/metrics`.
async fn account_checks(server: &Server) -> u64 {
    server
        .counter_total(
            "ferry_plugin_calls_total",
            &[("supplier", "OLD_CO"), ("hook", "validate-account")],
        )
        .await
}

#[tokio::test]
async fn a_migration_calls_the_plugin_again_only_if_it_changed_since_staging() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server
        .install_plugin("OLD_CO", "example_plugin", example_config())
        .await;
    for external in ["OE-1", "OE-2"] {
        server.stage(&token, &oe_account(external)).await;
    }
    assert_eq!(account_checks(&server).await, 2);

    // The plugin and configuration that checked OE-1 at staging: not called again.
    server.migrate(&token, "OLD_CO", "OE-1").await;
    assert_eq!(account_checks(&server).await, 2);

    // Another configuration since OE-2 was staged: called again, and it now refuses it.
    let (status, body) = server
        .admin(
            Method::PUT,
            "/admin/v1/suppliers/OLD_CO/plugin/config",
            Some(&json!({"account_number_prefix": "XX-"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "OE-2"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["errors"][0]["code"], "invalid_account_number",
        "{body}"
    );
    assert_eq!(account_checks(&server).await, 3);
}
