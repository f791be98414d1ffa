//! Operator views of imports (paging, filters, search) and bulk migrations.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::time::Duration;

fn externals(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            item["external_account_number"]
                .as_str()
                .expect("number")
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn operators_page_filter_and_search_imports() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    for index in 1..=7 {
        server
            .stage(&token, &account("OLD_CO", &format!("ACC-{index}")))
            .await;
    }
    server.stage(&token, &account("OLD_CO", "OTHER-1")).await;
    server.migrate(&token, "OLD_CO", "ACC-2").await;

    let base = "/admin/v1/suppliers/OLD_CO/imports";
    let (status, first) = server
        .admin(Method::GET, &format!("{base}?limit=3"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(externals(&first), ["ACC-1", "ACC-2", "ACC-3"]);
    assert_eq!(first["next_after"], "ACC-3");
    assert_eq!(first["items"][1]["state"], "PROCESSED");
    assert!(first["items"][1]["platform_account_number"].is_string());
    let (_, second) = server
        .admin(Method::GET, &format!("{base}?limit=3&after=ACC-3"), None)
        .await;
    assert_eq!(externals(&second), ["ACC-4", "ACC-5", "ACC-6"]);
    let (_, last) = server
        .admin(Method::GET, &format!("{base}?limit=3&after=ACC-6"), None)
        .await;
    assert_eq!(externals(&last), ["ACC-7", "OTHER-1"]);
    assert!(last["next_after"].is_null());

    let (_, processed) = server
        .admin(Method::GET, &format!("{base}?state=PROCESSED"), None)
        .await;
    assert_eq!(externals(&processed), ["ACC-2"]);
    let (_, found) = server
        .admin(Method::GET, &format!("{base}?q=other"), None)
        .await;
    assert_eq!(externals(&found), ["OTHER-1"]);

    for bad in ["state=DONE", "limit=0", "limit=501", "colour=blue"] {
        let (status, body) = server
            .admin(Method::GET, &format!("{base}?{bad}"), None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_error(&body, "validation_error");
    }
    let (status, _) = server
        .admin(Method::GET, "/admin/v1/suppliers/NOPE/imports", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// How long a bulk migration of these tests' few accounts may take.
const BULK_MIGRATION_ENDS_WITHIN: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_bulk_migration_migrates_every_pending_account() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    for index in 0..25 {
        server
            .stage(&token, &account("OLD_CO", &format!("ACC-{index:02}")))
            .await;
    }
    server.migrate(&token, "OLD_CO", "ACC-00").await;
    let (job, path) = server.start_bulk_migration("OLD_CO").await;
    assert_eq!(job["total"], 24);

    // A second start while it runs is refused; once it has ended there is nothing left.
    let (status, again) = server
        .admin(Method::POST, "/admin/v1/suppliers/OLD_CO/migrations", None)
        .await;
    match status {
        StatusCode::CONFLICT => assert_error(&again, "migration_already_running"),
        StatusCode::ACCEPTED => assert_eq!(again["total"], 0, "{again}"),
        other => panic!("unexpected {other}: {again}"),
    }

    let done = server
        .bulk_migration_ended_answering(&path, BULK_MIGRATION_ENDS_WITHIN)
        .await;
    assert_eq!(done["state"], "COMPLETED", "{done}");
    assert_eq!(
        (done["processed"].as_u64(), done["failed"].as_u64()),
        (Some(24), Some(0))
    );
    assert!(done["finished_at"].is_string());
    let (_, supplier) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO", None)
        .await;
    assert_eq!(supplier["counts"]["PROCESSED"], 25, "{supplier}");
    assert_eq!(supplier["counts"]["IN_PROGRESS"], 0);
    let (_, status_body) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-17/",
            &token,
        )
        .await;
    assert_eq!(status_body["status"], "COMPLETED");
    let (_, list) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO/migrations", None)
        .await;
    assert!(
        list.as_array()
            .is_some_and(|jobs| jobs.iter().any(|listed| listed["id"] == job["id"]))
    );
}

/// The database refusing one account's migration (a trigger or a constraint its administrator
/// added) fails that account alone: it ends `ERRORED` with a server error recorded, in words
/// for the supplier (the database's own are logged), the others are migrated, and none is left
/// `IN_PROGRESS` with no job to go on with it; migrated again once the database takes it, it
/// is made.
#[tokio::test]
async fn an_account_the_database_refuses_ends_errored_and_not_claimed() {
    if backend() != Backend::Postgres {
        return; // a PostgreSQL trigger refuses it
    }
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    for index in 0..5 {
        server
            .stage(&token, &account("OLD_CO", &format!("ACC-{index}")))
            .await;
    }
    let database = database_of(&server.data_dir);
    psql_on(
        &database,
        "CREATE FUNCTION refuse_an_account() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN RAISE EXCEPTION 'refused by the trigger'; END $$; \
         CREATE TRIGGER refuse_an_account BEFORE INSERT ON accounts FOR EACH ROW \
         WHEN (NEW.record->>'external_account_number' = 'ACC-2') \
         EXECUTE FUNCTION refuse_an_account()",
    );
    let (_, path) = server.start_bulk_migration("OLD_CO").await;
    let done = server
        .bulk_migration_ended_answering(&path, BULK_MIGRATION_ENDS_WITHIN)
        .await;
    assert_eq!(done["state"], "COMPLETED", "{done}");
    assert_eq!(
        (done["processed"].as_u64(), done["failed"].as_u64()),
        (Some(4), Some(1)),
        "{done}"
    );
    let (_, supplier) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO", None)
        .await;
    assert_eq!(supplier["counts"]["PROCESSED"], 4, "{supplier}");
    assert_eq!(supplier["counts"]["ERRORED"], 1, "{supplier}");
    assert_eq!(supplier["counts"]["IN_PROGRESS"], 0, "{supplier}");
    let (status, refused) = server
        .get("/v2/data-import/accounts/OLD_CO/ACC-2/", &token)
        .await;
    assert_eq!(status, StatusCode::OK, "{refused}");
    assert_eq!(refused["status"], "ERRORED", "{refused}");
    assert_eq!(refused["latest_error"]["code"], "server_error", "{refused}");
    let detail = refused["latest_error"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(detail.contains("migrate it again"), "{refused}");
    assert!(!detail.contains("trigger"), "{refused}");

    psql_on(&database, "DROP TRIGGER refuse_an_account ON accounts");
    server.migrate(&token, "OLD_CO", "ACC-2").await;
}

#[tokio::test]
async fn pausing_the_supplier_stops_a_bulk_migration_and_leaves_nothing_in_progress() {
    let server = Server::start_with(Options {
        env: vec![("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into())],
        ..Options::default()
    })
    .await;
    let token = server.supplier_with_token("OLD_CO").await;
    let total = 150;
    for index in 0..total {
        server
            .stage(&token, &account("OLD_CO", &format!("ACC-{index:03}")))
            .await;
    }
    let (_, path) = server.start_bulk_migration("OLD_CO").await;
    server.set_status("OLD_CO", "PAUSED").await;
    let done = server
        .bulk_migration_ended_answering(&path, BULK_MIGRATION_ENDS_WITHIN)
        .await;

    // Whenever the pause landed: nothing stays claimed, and every account is either migrated
    // or pending again.
    let (_, supplier) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO", None)
        .await;
    let counts = &supplier["counts"];
    assert_eq!(counts["IN_PROGRESS"], 0, "{supplier}");
    let processed = counts["PROCESSED"].as_u64().expect("processed");
    let pending = counts["PENDING"].as_u64().expect("pending");
    assert_eq!(processed + pending, total);
    assert_eq!(done["processed"].as_u64(), Some(processed));
    let expected_state = if pending > 0 { "STOPPED" } else { "COMPLETED" };
    assert_eq!(done["state"], expected_state, "{done}");

    let (status, body) = server
        .admin(Method::POST, "/admin/v1/suppliers/OLD_CO/migrations", None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "import_supplier_migration_not_ongoing");
}

/// SIGTERM while a bulk migration runs: the server lets the job finish the account it is on,
/// records its progress, gives its lease up and exits promptly; the job stays recorded as
/// running with the accounts it did not reach claimed, and the next start takes it over at
/// once and completes it. On PostgreSQL the data is read as the stopped server left it: no
/// lease held (another instance could take the job over at once), the record's count equal to
/// the accounts migrated, and every other account still claimed. Each account's payment
/// instruction is confirmed with a vendor that answers a tenth of a second late, so the job is
/// still running when the signal lands.
#[tokio::test]
async fn sigterm_hands_a_running_bulk_migration_over_at_a_safe_point() {
    let vendor = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("GET"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"card": {"last4": "4242"}}))
                .set_delay(Duration::from_millis(100)),
        )
        .mount(&vendor)
        .await;
    let options = Options {
        env: vec![
            ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
            ("FERRY_VENDOR_ACME_URL".into(), vendor.uri()),
            ("FERRY_VENDOR_ACME_KEY".into(), "acme-key".into()),
        ],
        ..Options::default()
    };
    let temp = tempfile::tempdir().expect("temp dir");
    let data_dir = temp.path().join("data");
    let server = Server::start_in(&data_dir, options.clone());
    let token = server.supplier_with_token("OLD_CO").await;
    let total = 100;
    for index in 0..total {
        let mut body = account("OLD_CO", &format!("ACC-{index:03}"));
        body["payment_instructions"] = serde_json::json!([
            {"vendor": "ACME", "reference": format!("PM-{index}"), "type": "CARD"}
        ]);
        assert_eq!(server.stage(&token, &body).await, StatusCode::CREATED);
    }
    let (_, path) = server.start_bulk_migration("OLD_CO").await;
    let deadline = std::time::Instant::now() + BULK_MIGRATION_ENDS_WITHIN;
    loop {
        let (_, job) = server.admin(Method::GET, &path, None).await;
        assert_eq!(job["state"], "RUNNING", "{job}");
        if job["processed"].as_u64() >= Some(1) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{job}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let signalled = std::time::Instant::now();
    assert!(server.terminate(), "ferry should exit cleanly on SIGTERM");
    let stopping = signalled.elapsed();
    assert!(
        stopping < Duration::from_secs(5),
        "ferry took {stopping:?} to stop"
    );
    if backend() == Backend::Postgres {
        let database = database_of(&data_dir);
        let held = psql_on(
            &database,
            "SELECT count(*) FROM leases \
             WHERE name = 'bulk-migration:OLD_CO' AND expires_at > now()",
        );
        assert_eq!(held.trim(), "0", "the job's lease is given up");
        let recorded = psql_on(
            &database,
            "SELECT record->>'state' || ' ' || (record->>'processed') FROM migrations",
        );
        let made = psql_on(
            &database,
            "SELECT count(*) FROM import_processes WHERE state = 'PROCESSED'",
        );
        assert_eq!(recorded.trim(), format!("RUNNING {}", made.trim()));
        let claimed = psql_on(
            &database,
            "SELECT count(*) FROM import_processes WHERE state = 'IN_PROGRESS'",
        );
        let made: u64 = made.trim().parse().expect("a count");
        assert!((1..total).contains(&made), "{made} migrated");
        assert_eq!(claimed.trim(), (total - made).to_string());
    }

    // The next start takes the job over and completes it.
    let server = Server::start_in(&data_dir, options);
    let done = server
        .bulk_migration_ended_answering(&path, BULK_MIGRATION_ENDS_WITHIN)
        .await;
    server
        .assert_bulk_completed("OLD_CO", &done, total as usize)
        .await;
}
