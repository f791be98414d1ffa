//! Every migrated account's reconciliation: what its old supplier declared against what its
//! ledger holds, kept with the ledger by every change. An account that holds what was
//! declared is `RECONCILED` and stays so as transactions are added; one whose supplier's
//! plugin changed an amount is `MISMATCH`, with the difference; one whose document declared no
//! money is `NOT_DECLARED`; and the supplier's report, read from its counters, sums them to
//! the penny, on one instance or several.

use super::opening::{account_with_money, transaction};
use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The account (-35.00 transferred, -20.00 on its last statement), without the
/// documents and instruction that need a bucket and a vendor.
fn money(external: &str) -> Value {
    let mut body = account_with_money(external);
    for field in ["notes", "statements", "payment_instructions"] {
        body.as_object_mut().expect("object").remove(field);
    }
    body
}

fn charge(external: &str, id: &str, amount: &str) -> Value {
    json!({"import_supplier": "OLD_CO", "external_account_number": external,
           "transactions": [transaction(id, "2025-03-01", "CHARGE", amount)]})
}

/// The account view's reconciliation of `number`.
async fn reconciliation(server: &Server, number: &str) -> Value {
    server.account_view(number).await["reconciliation"].clone()
}

/// The supplier's campaign report.
async fn report(server: &Server) -> Value {
    let (status, body) = server
        .admin(Method::GET, "/admin/v1/suppliers/OLD_CO/report", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

#[tokio::test]
async fn an_account_that_holds_what_was_declared_stays_reconciled() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server.stage(&token, &money("ACC-1")).await;
    let number = server.migrate(&token, "OLD_CO", "ACC-1").await;
    assert_eq!(
        reconciliation(&server, &number).await,
        json!({"state": "RECONCILED", "declared": "-35.00", "held": "-35.00", "difference": "0.00"})
    );
    let (status, body) = server
        .post(TRANSACTIONS, &token, &charge("ACC-1", "N-1", "40.00"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        reconciliation(&server, &number).await,
        json!({"state": "RECONCILED", "declared": "-75.00", "held": "-75.00", "difference": "0.00"})
    );

    // A document that declared no money.
    server.stage(&token, &account("OLD_CO", "ACC-2")).await;
    let mut quiet = account("OLD_CO", "ACC-3");
    quiet
        .as_object_mut()
        .expect("object")
        .remove("transfer_balance");
    server.stage(&token, &quiet).await;
    let number = server.migrate(&token, "OLD_CO", "ACC-3").await;
    assert_eq!(
        reconciliation(&server, &number).await["state"],
        "NOT_DECLARED"
    );
    server.migrate(&token, "OLD_CO", "ACC-2").await;

    let report = report(&server).await;
    assert_eq!(
        report["reconciliation"],
        json!({"reconciled": 2, "mismatched": 0, "not_declared": 1,
               "declared_total": "-75.00", "held_total": "-75.00"})
    );
    assert_eq!(report["accounts"]["migrated"], 3);
    assert_eq!(report["accounts"]["staged"], 3);
    assert_eq!(report["data"]["transactions"], 5);
}

#[tokio::test]
async fn a_plugin_that_changes_an_amount_leaves_its_account_mismatched() {
    let server = Server::start().await;
    let token = server.supplier_with_token("OLD_CO").await;
    server
        .install_plugin("OLD_CO", "fault_shifted_amounts", json!({}))
        .await;
    server.stage(&token, &money("ACC-1")).await;
    let number = server.migrate(&token, "OLD_CO", "ACC-1").await;
    // The plugin charged 1.00 more than the supplier declared.
    assert_eq!(
        reconciliation(&server, &number).await,
        json!({"state": "MISMATCH", "declared": "-35.00", "held": "-36.00", "difference": "-1.00",
               "first_diverging": "transfer_balance"})
    );
    // And 0.50 more of every charge posted since.
    let (status, body) = server
        .post(TRANSACTIONS, &token, &charge("ACC-1", "N-1", "40.00"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        reconciliation(&server, &number).await,
        json!({"state": "MISMATCH", "declared": "-75.00", "held": "-76.50", "difference": "-1.50",
               "first_diverging": "transfer_balance"})
    );
    assert_eq!(
        report(&server).await["reconciliation"],
        json!({"reconciled": 0, "mismatched": 1, "not_declared": 0,
               "declared_total": "-75.00", "held_total": "-76.50"})
    );
}

/// Instances over one database count into the same counters: each answers the same report.
#[tokio::test]
async fn instances_over_one_database_keep_one_report() {
    if backend() != Backend::Postgres {
        return; // instances cannot share a sled directory
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let servers = super::instances::instances_over_one_database(dir.path(), ["a", "b"], &[]);
    let [a, b] = &servers;
    let token = a.supplier_with_token("OLD_CO").await;
    for (index, external) in ["ACC-1", "ACC-2", "ACC-3", "ACC-4"].iter().enumerate() {
        let (stage_on, migrate_on) = if index % 2 == 0 { (a, b) } else { (b, a) };
        stage_on.stage(&token, &money(external)).await;
        migrate_on.migrate(&token, "OLD_CO", external).await;
    }
    let posts = ["ACC-1", "ACC-2", "ACC-3", "ACC-4"].map(|external| {
        let (server, token) = (if external.ends_with('1') { a } else { b }, token.clone());
        async move {
            server
                .post(TRANSACTIONS, &token, &charge(external, "N-1", "0.01"))
                .await
        }
    });
    for (status, body) in futures_util::future::join_all(posts).await {
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let expected = json!({"reconciled": 4, "mismatched": 0, "not_declared": 0,
                          "declared_total": "-140.04", "held_total": "-140.04"});
    for server in [a, b] {
        let report = report(server).await;
        assert_eq!(report["reconciliation"], expected, "{report}");
        assert_eq!(report["data"]["transactions"], 20);
        assert_eq!(report["accounts"]["migrated"], 4);
    }
}
