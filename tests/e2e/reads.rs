//! The status endpoint and the three list endpoints, with the spec's exact shapes.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn is_api_datetime(value: &Value) -> bool {
    value.as_str().is_some_and(|text| {
        text.len() == 20
            && text.ends_with('Z')
            && chrono::DateTime::parse_from_rfc3339(text).is_ok()
    })
}

#[tokio::test]
async fn status_and_lists_have_the_spec_shapes() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    for external in ["ACC-3", "ACC-1", "ACC-2"] {
        server.stage(&token, &account("OLD_CO", external)).await;
    }
    let number = server.migrate(&token, "OLD_CO", "ACC-2").await;

    let (status, body) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-1/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"status": "UNKNOWN", "platform_account_number": "", "kraken_account_number": "",
               "account_number": ""})
    );
    let (_, body) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-2/",
            &token,
        )
        .await;
    assert_eq!(
        body,
        json!({"status": "COMPLETED", "platform_account_number": number,
               "kraken_account_number": number, "account_number": number})
    );
    let (status, body) = server
        .get(
            "/v1/data-import/account-transfer-status/OLD_CO/ACC-404/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, "account_not_found");

    let (status, all) = server
        .get(
            "/v1/data-import/all-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let all = all.as_array().expect("array").clone();
    let numbers: Vec<&str> = all
        .iter()
        .map(|item| item["external_account_number"].as_str().expect("number"))
        .collect();
    assert_eq!(numbers, ["ACC-1", "ACC-2", "ACC-3"]);
    assert_eq!(
        all[0],
        json!({"external_account_number": "ACC-1", "platform_account_number": null,
               "kraken_account_number": null, "account_created_at": null})
    );
    assert_eq!(all[1]["platform_account_number"], number.as_str());
    assert_eq!(all[1]["kraken_account_number"], number.as_str());
    assert!(is_api_datetime(&all[1]["account_created_at"]), "{}", all[1]);
    assert_eq!(all[1].as_object().map(|o| o.len()), Some(4));

    let (_, pending) = server
        .get(
            "/v1/data-import/pending-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(
        pending,
        json!([
            {"external_account_number": "ACC-1", "platform_account_number": null,
             "kraken_account_number": null, "account_created_at": null},
            {"external_account_number": "ACC-3", "platform_account_number": null,
             "kraken_account_number": null, "account_created_at": null}
        ])
    );
    let (_, imported) = server
        .get(
            "/v1/data-import/imported-account-import-processes/OLD_CO/",
            &token,
        )
        .await;
    assert_eq!(imported, json!([all[1].clone()]));
}

#[tokio::test]
async fn a_supplier_without_accounts_lists_empty_arrays() {
    let server = Server::start().await;
    let token = server.supplier_with_token("EMPTY_CO").await;
    for list in ["all", "pending", "imported"] {
        let (status, body) = server
            .get(
                &format!("/v1/data-import/{list}-account-import-processes/EMPTY_CO/"),
                &token,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, json!([]));
    }
}

#[tokio::test]
async fn long_lists_stream_as_one_valid_array() {
    let no_limit = Options {
        env: vec![("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into())],
        ..Options::default()
    };
    let server = std::sync::Arc::new(Server::start_with(no_limit).await);
    let token = server.supplier_with_token("BIG_CO").await;
    let count = 600; // several 32 KiB chunks
    let mut tasks = Vec::new();
    for worker in 0..4 {
        let server = server.clone();
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            for index in (worker..count).step_by(4) {
                server
                    .stage(
                        &token,
                        &account("BIG_CO", &format!("ACCOUNT-WITH-A-LONG-NUMBER-{index:06}")),
                    )
                    .await;
            }
        }));
    }
    for task in tasks {
        task.await.expect("staging");
    }
    let response = reqwest::Client::new()
        .get(server.url("/v1/data-import/pending-account-import-processes/BIG_CO/"))
        .header("Authorization", format!("Token {token}"))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert!(
        response.headers().get("content-length").is_none(),
        "the list should be streamed"
    );
    let body: Vec<Value> = response.json().await.expect("one valid JSON array");
    assert_eq!(body.len(), count);
    for (index, item) in body.iter().enumerate() {
        assert_eq!(
            item["external_account_number"],
            format!("ACCOUNT-WITH-A-LONG-NUMBER-{index:06}")
        );
    }
}
