//! Historical statements: validation, documents, amounts in pence, a statement never added
//! twice, and the open period they move.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn statement(id: &str, from: &str, to: &str) -> Value {
    json!({
        "bill_period_from_date": from, "bill_period_to_date": to, "statement_id": id,
        "issued_date": to, "number": format!("S-{id}"), "gross_amount": 12050
    })
}

fn body(statements: Value) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": "ACC-1", "statements": statements})
}

#[tokio::test]
async fn statements_are_kept_in_pence_and_a_resent_one_is_refused() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2024-01-01")
        .await;
    server.put_document("old_co/statements/2024-01.pdf");
    let mut first = statement("ST-1", "2024-01-01", "2024-01-31");
    first["statement_path"] = json!("/statements/2024-01.pdf");
    let posted = body(json!([
        first,
        statement("ST-2", "2024-02-01", "2024-02-29")
    ]));
    let (status, answer) = server.post(STATEMENTS, &token, &posted).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    // Answered as sent: the gross amount in pence.
    assert_eq!(answer["statements"][0]["gross_amount"], 12050);
    assert_eq!(
        answer["statements"][0]["statement_path"],
        "/statements/2024-01.pdf"
    );
    assert_eq!(answer["external_account_number"], "ACC-1");
    let view = server.account_view(&number).await;
    // 12 050 pence is £120.50 (it was once stored as £12 050.00).
    assert_eq!(view["statements"][0]["gross_amount"], "120.50");
    assert_eq!(view["statements"].as_array().map(Vec::len), Some(2));
    assert_eq!(view["open_statement_period_start"], "2024-03-01");

    // Sent again, with one new statement: the whole request is refused, as on the real
    // platform, and the new one is not added.
    let again = body(json!([
        statement("ST-3", "2024-03-01", "2024-03-31"),
        statement("ST-2", "2024-02-01", "2024-02-29")
    ]));
    let (status, answer) = server.post(STATEMENTS, &token, &again).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_error(&answer, "historical_statement_already_exists");
    assert_eq!(
        error_pairs(&answer),
        vec![(
            "statements.1.statement_id".to_owned(),
            "historical_statement_already_exists".to_owned()
        )]
    );
    let view = server.account_view(&number).await;
    assert_eq!(view["statements"].as_array().map(Vec::len), Some(2));
    assert_eq!(view["open_statement_period_start"], "2024-03-01");
}

/// `issued_date`, `number` and `gross_amount` are optional (and the first and last nullable),
/// as on the real platform; the real document's own example is accepted.
#[tokio::test]
async fn the_optional_fields_may_be_left_out_or_null() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2024-01-01")
        .await;
    let bare = json!({"bill_period_from_date": "2024-01-01", "bill_period_to_date": "2024-01-31",
                      "statement_id": "ST-1"});
    let nulls = json!({"bill_period_from_date": "2024-02-01", "bill_period_to_date": "2024-02-29",
                       "statement_id": "ST-2", "issued_date": null, "gross_amount": null});
    // The real document's example (its statement_path left out: no such file here).
    let example = json!({"bill_period_from_date": "2020-01-01", "bill_period_to_date": "2020-01-31",
                         "statement_id": "ABC123", "issued_date": "2020-02-01", "number": "123",
                         "gross_amount": 100});
    let (status, answer) = server
        .post(STATEMENTS, &token, &body(json!([bare, nulls, example])))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["statements"][0], bare);
    assert_eq!(answer["statements"][2]["gross_amount"], 100);
    let view = server.account_view(&number).await;
    let by_id = |id: &str| {
        view["statements"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["statement_id"] == id).cloned())
            .unwrap_or_else(|| panic!("no statement {id}: {view}"))
    };
    assert!(by_id("ST-1").get("gross_amount").is_none());
    assert!(by_id("ST-2").get("issued_date").is_none());
    assert_eq!(by_id("ABC123")["gross_amount"], "1.00");
}

#[tokio::test]
async fn bad_statements_are_refused_with_every_error() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2024-01-01")
        .await;
    let mut missing_file = statement("ST-2", "2024-02-01", "2024-02-29");
    missing_file["statement_path"] = json!("statements/nope.pdf");
    let (status, answer) = server
        .post(STATEMENTS, &token, &body(json!([missing_file])))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_pairs(&answer),
        vec![(
            "statements.0.statement_path".to_owned(),
            "path_does_not_exist_in_file_store".to_owned()
        )]
    );

    let mut reversed = statement("ST-1", "2024-02-01", "2024-01-01");
    reversed["gross_amount"] = json!(123.45);
    let mut escaping = statement("ST-3", "2024-01-01", "2024-01-31");
    escaping["statement_path"] = json!("../../etc/passwd");
    let no_id = json!({"bill_period_from_date": "2024-01-01", "bill_period_to_date": "2024-01-31", "issued_date": "2024-02-01", "number": "9", "gross_amount": 1});
    let (status, answer) = server
        .post(
            STATEMENTS,
            &token,
            &body(json!([reversed, escaping, no_id])),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let mut pairs = error_pairs(&answer);
    pairs.sort();
    assert_eq!(
        pairs,
        vec![
            (
                "statements.0.bill_period_to_date".to_owned(),
                "bill_period_to_date_before_from_date".to_owned()
            ),
            ("statements.0.gross_amount".to_owned(), "invalid".to_owned()),
            (
                "statements.1.statement_path".to_owned(),
                "invalid_document_path".to_owned()
            ),
            (
                "statements.2.statement_id".to_owned(),
                "required".to_owned()
            ),
        ]
    );
    assert_eq!(server.account_view(&number).await["statements"], json!([]));
}
