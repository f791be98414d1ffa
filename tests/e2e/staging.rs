//! Validation, staging, dry runs, migration and supplier status.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn validate_account_answers_the_validated_document_and_writes_nothing() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let (status, body) = server
        .post(VALIDATE, &token, &account("OLD_CO", "ACC-1"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, account("OLD_CO", "ACC-1"));
    let (status, body) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_error(&body, "account_not_found");
}

#[tokio::test]
async fn every_field_error_is_reported_at_once() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let mut body = account("OLD_CO", "ACC-1");
    body["customers"][0]["landline"] = json!("call me maybe");
    body["customers"][0]["email"] = json!("not-an-email");
    body["customers"]
        .as_array_mut()
        .expect("list")
        .push(json!({"given_name": 5, "family_name": "X"}));
    body["billing_address"] = json!({"postal_code": "N1 1AA"});
    body["supply_addresses"][0]["meter_points"][0]["supply_type"] = json!("WATER");
    body["transfer_balance"] = json!("1.00000000005");
    body["external_account_number"] = json!("x".repeat(129));
    body["nickname"] = json!("Ada");
    server.set_strict("OLD_CO", true).await;
    for path in [VALIDATE, STAGE] {
        let (status, answer) = server.post(path, &token, &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert_error(&answer, "account_failed_validation");
        let pairs = error_pairs(&answer);
        for expected in [
            ("customers.0.landline", "invalid_phone_number"),
            ("customers.0.email", "invalid"),
            ("customers.1.given_name", "invalid"),
            ("billing_address.country", "required"),
            ("billing_address", "billing_address_new_style_and_legacy"),
            (
                "supply_addresses.0.meter_points.0.supply_type",
                "invalid_choice",
            ),
            ("transfer_balance", "max_decimal_places"),
            ("external_account_number", "max_length"),
            ("nickname", "unknown_field"),
        ] {
            assert!(
                pairs.contains(&(expected.0.to_owned(), expected.1.to_owned())),
                "{expected:?} missing from {pairs:?}"
            );
        }
    }
    // Nothing was staged.
    let (_, list) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(list, json!([]));
}

#[tokio::test]
async fn staging_creates_then_updates_until_the_account_is_migrated() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let (status, body) = server
        .post(STAGE, &token, &account("OLD_CO", "ACC-1"))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        body,
        json!({"external_account_number": "ACC-1", "import_supplier_code": "OLD_CO"})
    );
    let mut changed = account("OLD_CO", "ACC-1");
    changed["billing_name"] = json!("Augusta Ada King");
    let (status, _) = server.post(STAGE, &token, &changed).await;
    assert_eq!(status, StatusCode::OK);

    let number = server.migrate(&token, "OLD_CO", "ACC-1").await;
    assert!(number.starts_with("A-") && number.len() == 10, "{number}");
    assert!(
        number[2..]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
    );

    // Staging or processing it again: refused, with the account numbers, as on the real
    // platform (its `kraken_account_number`, beside the spec's `platform_account_number` and
    // `account_number`).
    let already = json!({
        "detail": "The account import process with the account number ACC-1 has already been imported.",
        "code": "account_import_process_already_imported",
        "errors": [],
        "external_account_number": "ACC-1",
        "platform_account_number": number,
        "kraken_account_number": number,
        "account_number": number,
    });
    let (status, body) = server.post(STAGE, &token, &changed).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body, already);
    let (status, body) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body, already);

    // The account was created from the updated staging.
    let (status, stored) = server
        .admin(reqwest::Method::GET, "/admin/v1/suppliers/OLD_CO", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(stored["counts"]["PROCESSED"], 1);
    assert_eq!(stored["counts"]["PENDING"], 0);
}

#[tokio::test]
async fn a_dry_run_keeps_nothing_and_answers_as_the_real_platform() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    let request = json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1", "dry_run": true});
    // A dry run that would succeed is a 400 with the real platform's detail and code.
    let (status, body) = server.post(PROCESS, &token, &request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body,
        json!({"detail": "Account would successfully import. Rolled back due to Dry Run.",
               "code": "400", "errors": []})
    );
    let (_, status_body) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(
        status_body,
        json!({"status": "UNKNOWN", "platform_account_number": "", "kraken_account_number": "",
               "account_number": ""})
    );
    let (_, imported) = server
        .get(
            "/v1/data-import/imported-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(imported, json!([]));

    // A dry run of an account that cannot be migrated answers the real error.
    let unknown = json!({"import_supplier_code": "OLD_CO", "external_account_number": "NOPE", "dry_run": true});
    let (status, body) = server.post(PROCESS, &token, &unknown).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "import_process_does_not_exist");
    server.migrate(&token, "OLD_CO", "ACC-1").await;
    let (status, body) = server.post(PROCESS, &token, &request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "account_import_process_already_imported");
}

#[tokio::test]
async fn processing_an_account_never_staged_is_a_400_as_on_the_real_platform() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let (status, body) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "NOPE"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "import_process_does_not_exist");
    let (status, body) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "dry_run": "yes"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let pairs = error_pairs(&body);
    assert!(
        pairs.contains(&("external_account_number".into(), "required".into())),
        "{pairs:?}"
    );
    assert!(
        pairs.contains(&("dry_run".into(), "invalid".into())),
        "{pairs:?}"
    );
}

#[tokio::test]
async fn concurrent_migrations_of_one_account_create_one_platform_account() {
    let server = std::sync::Arc::new(Server::start().await);
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let server = server.clone();
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            server
                .post(
                    PROCESS,
                    &token,
                    &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1"}),
                )
                .await
        }));
    }
    let mut created = Vec::new();
    for task in tasks {
        let (status, body) = task.await.expect("task");
        match status {
            StatusCode::CREATED => created.push(body["platform_account_number"].clone()),
            StatusCode::BAD_REQUEST => {
                assert_error(&body, "account_import_process_already_imported")
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(created.len(), 1, "{created:?}");
    let (_, status) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(status["platform_account_number"], created[0]);
    assert_eq!(status["kraken_account_number"], created[0]);
}

#[tokio::test]
async fn paused_or_complete_suppliers_refuse_migrations_but_still_answer_reads() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;
    for status_name in ["PAUSED", "COMPLETE"] {
        server.set_status("OLD_CO", status_name).await;
        let (status, body) = server
            .post(STAGE, &token, &account("OLD_CO", "ACC-2"))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_error(&body, "import_supplier_migration_not_ongoing");
        for dry_run in [false, true] {
            let (status, body) = server
                .post(
                    PROCESS,
                    &token,
                    &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1", "dry_run": dry_run}),
                )
                .await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert_error(&body, "import_supplier_migration_not_ongoing");
        }
        let (status, list) = server
            .get(
                "/v1/data-import/pending-account-import-processes/OLD_CO/",
                &token,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(list.as_array().map(Vec::len), Some(1));
        let (status, _) = server
            .get(
                "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
                &token,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    server.set_status("OLD_CO", "ONGOING").await;
    server.migrate(&token, "OLD_CO", "ACC-1").await;
}

/// `operations_team_name`, as on the real platform: the team must exist (operators manage
/// them); the account is allocated to it and the admin view shows it.
#[tokio::test]
async fn an_account_is_allocated_to_an_existing_operations_team_only() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &account("OLD_CO", "ACC-1")).await;

    let team = json!({"name": "Billing Operations"});
    let (status, created) = server
        .admin(
            reqwest::Method::POST,
            "/admin/v1/operations-teams",
            Some(&team),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["name"], "Billing Operations");
    let (status, again) = server
        .admin(
            reqwest::Method::POST,
            "/admin/v1/operations-teams",
            Some(&team),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&again, "operations_team_already_exists");
    let (status, teams) = server
        .admin(reqwest::Method::GET, "/admin/v1/operations-teams", None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(teams[0]["name"], "Billing Operations");

    // An unknown team is refused with the real platform's code, and nothing happens.
    for dry_run in [false, true] {
        let (status, body) = server
            .post(
                PROCESS,
                &token,
                &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1",
                        "operations_team_name": "Nobody", "dry_run": dry_run}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            error_pairs(&body),
            [(
                "operations_team_name".to_owned(),
                "operations_team_name_does_not_exist".to_owned()
            )]
        );
    }
    let (_, transfer) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(transfer["status"], "UNKNOWN");

    let (status, body) = server
        .post(
            PROCESS,
            &token,
            &json!({"import_supplier_code": "OLD_CO", "external_account_number": "ACC-1",
                    "operations_team_name": "Billing Operations"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let number = body["platform_account_number"].as_str().expect("number");
    // Under the spec's name, the real platform's, and the real document's older one.
    assert_eq!(
        body,
        json!({"external_account_number": "ACC-1", "platform_account_number": number,
               "kraken_account_number": number, "account_number": number})
    );
    assert_eq!(
        server.account_view(number).await["operations_team_name"],
        "Billing Operations"
    );

    // A removed team can no longer be named; the account keeps it.
    let path = "/admin/v1/operations-teams/Billing%20Operations";
    let (status, _) = server.admin(reqwest::Method::DELETE, path, None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = server.admin(reqwest::Method::DELETE, path, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "not_found");
    assert_eq!(
        server.account_view(number).await["operations_team_name"],
        "Billing Operations"
    );
}
