//! Meter points: their registration statuses, registration flows a supplier sends, and an
//! operator moving a flow on (Ferry has no industry connection), as on the real platform.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn statuses_path(external: &str) -> String {
    format!("/v1/data-import/meterpoint-statuses-for-account/OLD_CO/{external}/")
}

fn flows_path(external: &str) -> String {
    format!("/v1/data-import/send-registration-flows/OLD_CO/{external}/")
}

#[tokio::test]
async fn flows_are_sent_recorded_published_and_moved_on_by_an_operator() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let mut body = account("OLD_CO", "ACC-1");
    body["supply_addresses"][0]["meter_points"] = json!([
        {"supply_type": "ELECTRICITY", "identifier": "1200023305967", "mpid": "TENT", "supply_start_date": "2024-01-01"},
        {"supply_type": "GAS", "identifier": "3406086401", "mpid": "TENT", "shipper_mpid": "TEN", "supply_start_date": "2024-01-01"}
    ]);
    server.stage(&token, &body).await;
    let number = server.migrate(&token, "OLD_CO", "ACC-1").await;

    let (status, points) = server.get(&statuses_path("ACC-1"), &token).await;
    assert_eq!(status, StatusCode::OK, "{points}");
    assert_eq!(
        points,
        json!([{"mpxn": "1200023305967", "status": "PRE_REGISTRATION"},
               {"mpxn": "3406086401", "status": "PRE_REGISTRATION"}])
    );

    let (status, sent) = server.post(&flows_path("ACC-1"), &token, &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    assert_eq!(
        sent,
        json!({"external_account_number": "ACC-1", "import_supplier_code": "OLD_CO", "meter_points": [
            {"mpxn": "1200023305967", "status": "REGISTRATION_FLOW_SUCCESS"},
            {"mpxn": "3406086401", "status": "REGISTRATION_FLOW_SUCCESS"}]})
    );
    let (_, points) = server.get(&statuses_path("ACC-1"), &token).await;
    assert_eq!(points[0]["status"], "REGISTRATION_REQUESTED");

    // One gain event per meter point, for its market.
    let (_, log) = server.admin(Method::GET, "/admin/v1/events", None).await;
    let gains: Vec<(Value, Value)> = log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|event| {
            event["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("gain.initiated"))
        })
        .map(|event| {
            (
                event["type"].clone(),
                event["data"]["meter_point_identifier"].clone(),
            )
        })
        .collect();
    assert_eq!(
        gains,
        [
            (
                json!("industry.electricity.change_of_supply.gain.initiated"),
                json!("1200023305967")
            ),
            (
                json!("industry.gas.change_of_supply.gain.initiated"),
                json!("3406086401")
            ),
        ]
    );

    // Sent again: under way, so refused per meter point, with the reason.
    let (status, again) = server.post(&flows_path("ACC-1"), &token, &json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        again["meter_points"][0]["status"],
        "REGISTRATION_FLOW_ERROR"
    );
    assert!(
        again["meter_points"][0]["error_detail"]
            .as_str()
            .is_some_and(|detail| detail.contains("REGISTRATION_REQUESTED")),
        "{again}"
    );

    // The operator moves one on; the supplier sees it, and so does the admin view.
    let path = format!("/admin/v1/accounts/{number}/meter-points/1200023305967");
    let (status, moved) = server
        .admin(Method::PATCH, &path, Some(&json!({"status": "ON_SUPPLY"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["market"], "ELECTRICITY");
    let (_, points) = server.get(&statuses_path("ACC-1"), &token).await;
    assert_eq!(points[0]["status"], "ON_SUPPLY");
    // The same from the command line.
    let output = std::process::Command::new(ferry_binary())
        .args([
            "meter-point",
            "set-status",
            &number,
            "3406086401",
            "registration_rejected",
        ])
        .env("FERRY_URL", &server.base)
        .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
        .output()
        .expect("run ferry");
    assert!(output.status.success(), "{output:?}");
    let (_, points) = server.get(&statuses_path("ACC-1"), &token).await;
    assert_eq!(points[1]["status"], "REGISTRATION_REJECTED");
    // A rejected registration may be sent again.
    let (_, again) = server.post(&flows_path("ACC-1"), &token, &json!({})).await;
    assert_eq!(
        again["meter_points"][1]["status"],
        "REGISTRATION_FLOW_SUCCESS"
    );
    let view = server.account_view(&number).await;
    assert_eq!(view["meter_points"][1]["status"], "REGISTRATION_REQUESTED");
    assert_eq!(view["meter_points"][0]["status"], "ON_SUPPLY");
    assert!(view["meter_points"][1]["flow_sent_at"].is_string());
    let (status, refused) = server
        .admin(Method::PATCH, &path, Some(&json!({"status": "SOMEWHERE"})))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&refused, "validation_error");
    let (status, _) = server
        .admin(
            Method::PATCH,
            &format!("/admin/v1/accounts/{number}/meter-points/999"),
            Some(&json!({"status": "ON_SUPPLY"})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A paused supplier still answers the statuses, and sends no flow.
    server.set_status("OLD_CO", "PAUSED").await;
    let (status, _) = server.get(&statuses_path("ACC-1"), &token).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = server.post(&flows_path("ACC-1"), &token, &json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "import_supplier_migration_not_ongoing");
}

#[tokio::test]
async fn an_account_without_meter_points_or_not_imported_is_a_404() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    let mut body = account("OLD_CO", "ACC-1");
    body.as_object_mut()
        .expect("object")
        .remove("supply_addresses");
    server.stage(&token, &body).await;
    let (status, answer) = server.get(&statuses_path("ACC-1"), &token).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&answer, "account_not_found");
    server.migrate(&token, "OLD_CO", "ACC-1").await;
    for (status, answer) in [
        server.get(&statuses_path("ACC-1"), &token).await,
        server.post(&flows_path("ACC-1"), &token, &json!({})).await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_error(&answer, "meter_points_not_found");
    }
}
