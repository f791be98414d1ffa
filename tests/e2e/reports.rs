//! A supplier's campaign report over HTTP, `/metrics` and the CLI: a campaign with accounts
//! that reconcile, one that declared no money, accounts that failed with two different codes
//! and accounts still pending; its figures to the penny, its rows as JSON pages and as CSV
//! agreeing with each other, the filters, the gauges and `ferry supplier report`.

use super::opening::{account_with_money, transaction};
use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::process::Command;

/// The CSV's header row.
const HEADER: &str = "external_account_number,platform_account_number,state,reconciliation,declared,held,difference,error_code,error_detail";

/// The account whose external number needs quoting in CSV.
const QUOTED: &str = "ACC-5,\"Q\"";

/// The payment instruction reference of [`QUOTED`]: its vendor cannot be reached, and the
/// failure's detail names the reference, comma and all.
const UNREACHED_REFERENCE: &str = "PM,1";

/// A campaign of supplier OLD_CO, its accounts in external-number order:
/// - ACC-1: -35.00 declared and held (four transactions, a note), `RECONCILED`;
/// - ACC-2: 49.01 declared and held (two transactions), `RECONCILED`;
/// - ACC-3: no money declared, `NOT_DECLARED`;
/// - ACC-4: a note's document missing from the bucket, `ERRORED` `account_failed_validation`;
/// - [`QUOTED`]: an instruction its vendor cannot confirm, `ERRORED`
///   `payment_vendor_unavailable`;
/// - ACC-6: staged; ACC-7: staged, its dry run failed.
///
/// Returns the server and ACC-1's, ACC-2's and ACC-3's platform numbers.
async fn campaign() -> (Server, [String; 3]) {
    // A vendor that was listening a moment ago: nothing answers there now.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
    let vendor = format!("http://{}", listener.local_addr().expect("address"));
    drop(listener);
    let server = Server::start_with(Options {
        env: vec![
            ("FERRY_VENDOR_ACME_URL".into(), vendor),
            ("FERRY_VENDOR_DEADLINE_MS".into(), "300".into()),
        ],
        ..Options::default()
    })
    .await;
    let token = server.supplier_with_token("OLD_CO").await;

    let mut first = account_with_money("ACC-1");
    first["notes"] = json!([{"body": "Moved from Old Energy."}]);
    for field in ["statements", "payment_instructions"] {
        first.as_object_mut().expect("object").remove(field);
    }
    let mut second = account("OLD_CO", "ACC-2");
    for (field, value) in [
        ("transfer_balance", json!("49.01")),
        ("last_statement_balance", json!("50.00")),
        ("last_statement_closing_date", json!("2025-01-31")),
        ("last_statement_issue_date", json!("2025-02-03")),
        (
            "historical_statement_transactions",
            json!([transaction("H-1", "2025-01-10", "PAYMENT", "50.00")]),
        ),
        (
            "current_statement_transactions",
            json!([transaction("C-1", "2025-02-05", "CHARGE", "0.99")]),
        ),
    ] {
        second[field] = value;
    }
    let mut undeclared = account("OLD_CO", "ACC-3");
    undeclared
        .as_object_mut()
        .expect("object")
        .remove("transfer_balance");
    let missing_document = |external: &str| {
        let mut body = account("OLD_CO", external);
        body["notes"] = json!([{"body": "A letter.",
            "document_paths": [{"document_path": "letters/missing.pdf"}]}]);
        body
    };
    let mut unreached = account("OLD_CO", QUOTED);
    unreached["payment_instructions"] =
        json!([{"vendor": "ACME", "reference": UNREACHED_REFERENCE, "type": "CARD"}]);
    for body in [
        &first,
        &second,
        &undeclared,
        &missing_document("ACC-4"),
        &unreached,
        &account("OLD_CO", "ACC-6"),
        &missing_document("ACC-7"),
    ] {
        server.stage(&token, body).await;
    }

    let mut numbers = Vec::new();
    for external in ["ACC-1", "ACC-2", "ACC-3"] {
        numbers.push(server.migrate(&token, "OLD_CO", external).await);
    }
    for (external, dry_run, expected) in [
        ("ACC-4", false, StatusCode::BAD_REQUEST),
        (QUOTED, false, StatusCode::INTERNAL_SERVER_ERROR),
        ("ACC-7", true, StatusCode::BAD_REQUEST),
    ] {
        let (status, body) = server
            .post(
                PROCESS,
                &token,
                &json!({"import_supplier_code": "OLD_CO", "external_account_number": external,
                        "dry_run": dry_run}),
            )
            .await;
        assert_eq!(status, expected, "{external}: {body}");
    }
    let numbers = numbers.try_into().expect("three numbers");
    (server, numbers)
}

/// An admin GET answered 200; its body.
async fn admin_get(server: &Server, path: &str) -> Value {
    let (status, body) = server.admin(Method::GET, path, None).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

/// A GET of the report's CSV answered 200 as `text/csv`; its text.
async fn csv(server: &Server, query: &str) -> String {
    let response = reqwest::Client::new()
        .get(server.url(&format!(
            "/admin/v1/suppliers/OLD_CO/report/accounts?format=csv{query}"
        )))
        .header("Authorization", format!("Token {OPERATOR_KEY}"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(content_type.starts_with("text/csv"), "{content_type}");
    response.text().await.expect("the CSV")
}

/// The records of an RFC 4180 text: fields unquoted, doubled quotes made single, each record
/// ended by CRLF.
fn records(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut field) = (Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(
        field.is_empty() && record.is_empty() && !quoted,
        "the last record is not ended by CRLF: {text:?}"
    );
    records
}

/// A JSON row as its CSV record: the header's fields in order, null as empty.
fn as_record(row: &Value) -> Vec<String> {
    HEADER
        .split(',')
        .map(|name| match &row[name] {
            Value::Null => String::new(),
            Value::String(text) => text.clone(),
            other => panic!("{name} is {other}"),
        })
        .collect()
}

/// The external numbers of a page's rows.
fn externals(page: &Value) -> Vec<String> {
    page["accounts"]
        .as_array()
        .expect("accounts")
        .iter()
        .map(|row| {
            row["external_account_number"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

const EVERY_ACCOUNT: [&str; 7] = ["ACC-1", "ACC-2", "ACC-3", "ACC-4", QUOTED, "ACC-6", "ACC-7"];

#[tokio::test]
async fn the_report_accounts_for_every_account_to_the_penny() {
    let (server, [first, second, third]) = campaign().await;
    let report = admin_get(&server, "/admin/v1/suppliers/OLD_CO/report").await;
    assert_eq!(
        report,
        json!({
            "supplier": "OLD_CO",
            "accounts": {"staged": 7, "pending": 2, "in_progress": 0, "migrated": 3,
                         "errored": 2, "dry_run_errored": 1, "cancelled": 0},
            "data": {"notes": 1, "transactions": 6, "statements": 0, "payment_instructions": 0},
            "reconciliation": {"reconciled": 2, "mismatched": 0, "not_declared": 1,
                               "declared_total": "14.01", "held_total": "14.01"},
            "errors": [{"code": "account_failed_validation", "count": 1},
                       {"code": "payment_vendor_unavailable", "count": 1}]
        })
    );

    // Every row, in external-number order, in one page.
    let page = admin_get(&server, "/admin/v1/suppliers/OLD_CO/report/accounts").await;
    assert_eq!(externals(&page), EVERY_ACCOUNT);
    assert_eq!(page["next_after"], Value::Null);
    let rows = page["accounts"].as_array().expect("rows").clone();
    let row = |external: &str| {
        rows.iter()
            .find(|row| row["external_account_number"] == external)
            .cloned()
            .unwrap_or_else(|| panic!("no row {external}"))
    };
    let settled = |number: &str, state: &str, declared: Value, held: &str, difference: Value| {
        json!({"platform_account_number": number, "state": "PROCESSED", "reconciliation": state,
               "declared": declared, "held": held, "difference": difference,
               "error_code": null, "error_detail": null})
    };
    let without_external = |mut row: Value| {
        row.as_object_mut()
            .expect("a row")
            .remove("external_account_number");
        row
    };
    assert_eq!(
        without_external(row("ACC-1")),
        settled(
            &first,
            "RECONCILED",
            json!("-35.00"),
            "-35.00",
            json!("0.00")
        )
    );
    assert_eq!(
        without_external(row("ACC-2")),
        settled(
            &second,
            "RECONCILED",
            json!("49.01"),
            "49.01",
            json!("0.00")
        )
    );
    assert_eq!(
        without_external(row("ACC-3")),
        settled(&third, "NOT_DECLARED", Value::Null, "0.00", Value::Null)
    );
    let failed = row("ACC-4");
    assert_eq!(
        (
            &failed["state"],
            &failed["error_code"],
            &failed["platform_account_number"]
        ),
        (
            &json!("ERRORED"),
            &json!("account_failed_validation"),
            &Value::Null
        ),
        "{failed}"
    );
    let unreached = row(QUOTED);
    assert_eq!(unreached["error_code"], "payment_vendor_unavailable");
    let detail = unreached["error_detail"].as_str().unwrap_or_default();
    assert!(detail.contains(UNREACHED_REFERENCE), "{detail}");
    for pending in ["ACC-6", "ACC-7"] {
        let row = row(pending);
        assert_eq!(row["state"], "PENDING", "{row}");
        for field in ["reconciliation", "declared", "held", "error_code"] {
            assert_eq!(row[field], Value::Null, "{row}");
        }
    }

    // The CSV: the header, then the same rows, quoted where they must be.
    let text = csv(&server, "").await;
    let mut lines = text.split("\r\n");
    assert_eq!(lines.next(), Some(HEADER));
    assert!(
        text.contains(&format!(
            "\r\n\"ACC-5,\"\"Q\"\"\",,ERRORED,,,,,payment_vendor_unavailable,\"{}\"\r\n",
            detail.replace('"', "\"\"")
        )),
        "{text}"
    );
    assert!(text.contains("\r\nACC-6,,PENDING,,,,,,\r\n"), "{text}");
    let parsed = records(&text);
    assert_eq!(parsed[0], HEADER.split(',').collect::<Vec<_>>());
    assert_eq!(
        parsed[1..].to_vec(),
        rows.iter().map(as_record).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn the_rows_are_filtered_and_paged() {
    let (server, _) = campaign().await;
    let path = |query: &str| format!("/admin/v1/suppliers/OLD_CO/report/accounts?{query}");
    for (query, expected) in [
        ("state=ERRORED", &["ACC-4", QUOTED][..]),
        ("state=PENDING", &["ACC-6", "ACC-7"]),
        ("error_code=payment_vendor_unavailable", &[QUOTED]),
        ("error_code=account_failed_validation", &["ACC-4"]),
        ("reconciliation=RECONCILED", &["ACC-1", "ACC-2"]),
        ("reconciliation=NOT_DECLARED&state=PROCESSED", &["ACC-3"]),
        ("reconciliation=MISMATCH", &[]),
        ("state=CANCELLED", &[]),
        ("error_code=&after=", &EVERY_ACCOUNT),
    ] {
        let page = admin_get(&server, &path(query)).await;
        assert_eq!(externals(&page), expected, "{query}");
        // The CSV of the same filter has the same rows.
        let text = csv(&server, &format!("&{query}")).await;
        let listed: Vec<String> = records(&text)[1..]
            .iter()
            .map(|record| record[0].clone())
            .collect();
        assert_eq!(listed, expected, "{query}: {text}");
    }

    // Pages of three: each names where the next starts, the last none.
    let mut after: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let query = match &after {
            Some(after) => format!("limit=3&after={after}"),
            None => "limit=3".to_owned(),
        };
        let page = admin_get(&server, &path(&query)).await;
        pages.push(externals(&page));
        match page["next_after"].as_str() {
            Some(next) => {
                assert_eq!(
                    Some(next),
                    pages.last().and_then(|p| p.last()).map(String::as_str)
                );
                after = Some(next.to_owned());
            }
            None => break,
        }
    }
    assert_eq!(
        pages,
        [
            &EVERY_ACCOUNT[..3],
            &EVERY_ACCOUNT[3..6],
            &EVERY_ACCOUNT[6..]
        ]
    );
    // A page that ends exactly at the last row says there is no next one.
    let page = admin_get(&server, &path("limit=7")).await;
    assert_eq!(
        (externals(&page).len(), &page["next_after"]),
        (7, &Value::Null)
    );
    let page = admin_get(&server, &path("limit=2&state=PENDING")).await;
    assert_eq!(page["next_after"], Value::Null, "{page}");
}

#[tokio::test]
async fn bad_queries_are_refused_and_unknown_suppliers_not_found() {
    let server = Server::start().await;
    server.create_supplier("OLD_CO").await;
    let rows = "/admin/v1/suppliers/OLD_CO/report/accounts";
    for (query, attr) in [
        ("format=xml", "format"),
        ("format=", "format"),
        ("state=DONE", "state"),
        ("state=", "state"),
        ("reconciliation=MAYBE", "reconciliation"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=many", "query"),
        ("format=csv&limit=10", "limit"),
        ("format=csv&after=ACC-1", "after"),
        ("sort=state", "query"),
    ] {
        let (status, body) = server
            .admin(Method::GET, &format!("{rows}?{query}"), None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert_error(&body, "validation_error");
        assert_eq!(error_pairs(&body)[0].0, attr, "{query}: {body}");
    }
    for path in [
        "/admin/v1/suppliers/NOPE/report",
        "/admin/v1/suppliers/NOPE/report/accounts",
        "/admin/v1/suppliers/NOPE/report/accounts?format=csv",
    ] {
        let (status, body) = server.admin(Method::GET, path, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_error(&body, "import_supplier_not_found");
        let (status, body) = server.call(Method::GET, path, None, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
    }
    // A supplier with no accounts: zeros, and a CSV of its header alone.
    let report = admin_get(&server, "/admin/v1/suppliers/OLD_CO/report").await;
    assert_eq!(report["accounts"]["staged"], 0, "{report}");
    assert_eq!(
        report["reconciliation"]["declared_total"], "0.00",
        "{report}"
    );
    assert_eq!(report["errors"], json!([]), "{report}");
    assert_eq!(csv(&server, "").await, format!("{HEADER}\r\n"));
}

#[tokio::test]
async fn metrics_carry_every_suppliers_figures() {
    let (server, _) = campaign().await;
    server.create_supplier("EMPTY_CO").await;
    let (status, metrics) = server.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let metrics = metrics.as_str().expect("the metrics' text");
    let series = [
        r#"ferry_supplier_accounts{supplier="OLD_CO",state="pending"} 2"#,
        r#"ferry_supplier_accounts{supplier="OLD_CO",state="in_progress"} 0"#,
        r#"ferry_supplier_accounts{supplier="OLD_CO",state="migrated"} 3"#,
        r#"ferry_supplier_accounts{supplier="OLD_CO",state="errored"} 2"#,
        r#"ferry_supplier_accounts{supplier="OLD_CO",state="cancelled"} 0"#,
        r#"ferry_supplier_accounts_staged{supplier="OLD_CO"} 7"#,
        r#"ferry_supplier_accounts_dry_run_errored{supplier="OLD_CO"} 1"#,
        r#"ferry_supplier_records{supplier="OLD_CO",kind="notes"} 1"#,
        r#"ferry_supplier_records{supplier="OLD_CO",kind="transactions"} 6"#,
        r#"ferry_supplier_reconciliation{supplier="OLD_CO",state="reconciled"} 2"#,
        r#"ferry_supplier_reconciliation{supplier="OLD_CO",state="mismatched"} 0"#,
        r#"ferry_supplier_reconciliation{supplier="OLD_CO",state="not_declared"} 1"#,
        r#"ferry_supplier_balance_pounds{supplier="OLD_CO",figure="declared"} 14.01"#,
        r#"ferry_supplier_balance_pounds{supplier="OLD_CO",figure="held"} 14.01"#,
        r#"ferry_supplier_errors{supplier="OLD_CO",code="account_failed_validation"} 1"#,
        r#"ferry_supplier_errors{supplier="OLD_CO",code="payment_vendor_unavailable"} 1"#,
        r#"ferry_supplier_accounts{supplier="EMPTY_CO",state="pending"} 0"#,
        r#"ferry_supplier_accounts_staged{supplier="EMPTY_CO"} 0"#,
    ];
    // Each figure once, with this value.
    for line in series {
        assert!(
            metrics.lines().any(|candidate| candidate == line),
            "{line} in\n{metrics}"
        );
        let (name_and_labels, _) = line.rsplit_once(' ').expect("a value");
        let prefix = format!("{name_and_labels} ");
        assert_eq!(metrics.matches(&prefix).count(), 1, "{prefix}");
    }
    assert!(
        !metrics.contains("ferry_supplier_errors{supplier=\"EMPTY_CO\""),
        "{metrics}"
    );
    for family in ["ferry_supplier_accounts", "ferry_supplier_errors"] {
        assert_eq!(
            metrics.matches(&format!("# TYPE {family} gauge\n")).count(),
            1,
            "{metrics}"
        );
    }
}

/// Runs `ferry supplier report ARGS` (split at spaces) against `server`: whether it
/// succeeded, its stdout and stderr.
fn report_command(server: &Server, args: &str) -> (bool, String, String) {
    let output = Command::new(ferry_binary())
        .args(["supplier", "report"])
        .args(args.split_whitespace())
        .env("FERRY_URL", &server.base)
        .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
        .output()
        .expect("run ferry");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn operators_export_the_report_from_the_command_line() {
    let (server, _) = campaign().await;
    let report = admin_get(&server, "/admin/v1/suppliers/OLD_CO/report").await;
    let (ok, out, err) = report_command(&server, "OLD_CO");
    assert!(ok, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).ok(), Some(report));

    // Every row as one JSON array: the API's rows.
    let page = admin_get(&server, "/admin/v1/suppliers/OLD_CO/report/accounts").await;
    let (ok, out, err) = report_command(&server, "OLD_CO --accounts");
    assert!(ok, "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).ok().as_ref(),
        Some(&page["accounts"]),
        "{out}"
    );

    // The CSV to a file: the API's CSV, byte for byte.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("old_co.csv");
    let file_arg = file.to_str().expect("a UTF-8 path");
    let (ok, out, err) = report_command(
        &server,
        &format!("OLD_CO --accounts --format csv --output {file_arg}"),
    );
    assert!(ok, "{err}");
    assert_eq!(out, "");
    let written = std::fs::read_to_string(&file).expect("the file");
    assert_eq!(written, csv(&server, "").await);
    assert_eq!(records(&written).len(), 1 + EVERY_ACCOUNT.len());

    // One error group, to stdout.
    let (ok, out, err) = report_command(
        &server,
        "OLD_CO --accounts --format csv --error-code payment_vendor_unavailable",
    );
    assert!(ok, "{err}");
    let listed = records(&out);
    assert_eq!(listed.len(), 2, "{out}");
    assert_eq!(listed[1][0], QUOTED);

    // Refusals name their reason, and leave no file.
    let missing = dir.path().join("missing.json");
    let missing_arg = missing.to_str().expect("a UTF-8 path");
    let (ok, _, err) = report_command(&server, &format!("NOPE --output {missing_arg}"));
    assert!(!ok);
    assert!(err.contains("import_supplier_not_found"), "{err}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    assert_eq!(
        names,
        ["old_co.csv"],
        "no partial file left, nor one for the refusal"
    );
    let (ok, _, err) = report_command(&server, "OLD_CO --accounts --state DONE");
    assert!(!ok);
    assert!(
        err.contains("state: ") && err.contains("invalid_choice"),
        "{err}"
    );
    let (ok, _, err) = report_command(&server, "OLD_CO --format csv");
    assert!(!ok);
    assert!(err.contains("--accounts"), "{err}");
}
