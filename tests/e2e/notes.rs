//! Notes: creation, the dedupe rule, documents in the file store, and who may add them.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn notes(supplier: &str, external: &str, notes: Value) -> Value {
    json!({"import_supplier": supplier, "external_account_number": external, "notes": notes})
}

#[tokio::test]
async fn notes_are_created_once_by_body_and_created_at() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let first = notes(
        "OLD_CO",
        "ACC-1",
        json!([
            {"body": "Customer prefers e-mail."},
            {"body": "Meter exchanged.", "created_at": "2024-03-01T09:30:00Z", "is_pinned": true, "unpin_at": "2024-04-01T00:00:00Z"},
        ]),
    );
    let (status, body) = server.post(NOTES, &token, &first).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body[0]["status"], "NOTE_CREATION_SUCCESS");
    assert_eq!(body[0]["body"], "Customer prefers e-mail.");
    assert_eq!(
        body[1],
        json!({"created_at": "2024-03-01T09:30:00Z", "body": "Meter exchanged.", "status": "NOTE_CREATION_SUCCESS"})
    );
    let created = body[0]["created_at"].as_str().expect("created_at");
    assert!(created.len() == 20 && created.ends_with('Z'), "{created}");

    let again = notes(
        "OLD_CO",
        "ACC-1",
        json!([
            {"body": "Customer prefers e-mail."},
            {"body": "Meter exchanged.", "created_at": "2024-03-01T09:30:00Z"},
            {"body": "Meter exchanged.", "created_at": "2024-05-01T09:30:00Z"},
            {"body": "Meter exchanged."},
        ]),
    );
    let (status, body) = server.post(NOTES, &token, &again).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let statuses: Vec<&str> = body
        .as_array()
        .expect("array")
        .iter()
        .map(|n| n["status"].as_str().expect("status"))
        .collect();
    assert_eq!(
        statuses,
        [
            "NOTE_ALREADY_EXISTS",
            "NOTE_ALREADY_EXISTS",
            "NOTE_CREATION_SUCCESS",
            "NOTE_ALREADY_EXISTS"
        ]
    );
    assert_eq!(
        body[0]["created_at"], created,
        "the existing note's creation time"
    );

    let view = server.account_view(&number).await;
    let kept = view["notes"].as_array().expect("notes");
    assert_eq!(kept.len(), 3);
    assert_eq!(kept[1]["is_pinned"], true);
}

/// What the real platform's notes take beyond the spec's table: `external_id` (a note with an
/// id the account has is not added again, whatever its body), `is_archived`, a body over
/// several lines, `unpin_at` without `created_at`, and the deprecated `account_number` for
/// `external_account_number`.
#[tokio::test]
async fn external_ids_archived_and_multi_line_notes_and_the_deprecated_account_number() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    let first = json!({"import_supplier": "OLD_CO", "account_number": "ACC-1", "notes": [
        {"body": "Called about the bill.\nAgreed a plan.", "external_id": "CRM-17", "is_archived": true},
        // The real document's own example: unpin_at in the past and no created_at.
        {"body": "This is a note", "is_pinned": true, "unpin_at": "2020-06-01T00:00:00Z"},
    ]});
    let (status, body) = server.post(NOTES, &token, &first).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body[0]["external_id"], "CRM-17");
    assert_eq!(body[0]["status"], "NOTE_CREATION_SUCCESS");
    assert_eq!(body[1]["status"], "NOTE_CREATION_SUCCESS");

    let again = notes(
        "OLD_CO",
        "ACC-1",
        json!([
            {"body": "Called about the bill (edited).", "external_id": "CRM-17"},
            {"body": "Called about the bill.\nAgreed a plan.", "external_id": "CRM-18"},
        ]),
    );
    let (status, body) = server.post(NOTES, &token, &again).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body[0]["status"], "NOTE_ALREADY_EXISTS");
    assert_eq!(body[1]["status"], "NOTE_CREATION_SUCCESS");

    let view = server.account_view(&number).await;
    let kept = view["notes"].as_array().expect("notes");
    assert_eq!(kept.len(), 3, "{kept:?}");
    assert_eq!(kept[0]["body"], "Called about the bill.\nAgreed a plan.");
    assert_eq!(kept[0]["is_archived"], true);
    assert_eq!(kept[2]["external_id"], "CRM-18");

    // Neither account number: the real platform's request-level rule; a NUL is refused, as
    // the real platform's REST framework refuses it.
    let (status, body) = server
        .post(
            NOTES,
            &token,
            &json!({"import_supplier": "OLD_CO", "notes": [{"body": "nul\u{0}"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        error_values(&body),
        vec![
            (
                Value::Null,
                json!("account_number_or_external_account_number_required")
            ),
            (json!("notes.0.body"), json!("null_characters_not_allowed"))
        ]
    );
}

#[tokio::test]
async fn note_rules_are_reported_together() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    server.set_strict("OLD_CO", true).await;
    let bad = notes(
        "OLD_CO",
        "ACC-1",
        json!([
            {"is_pinned": true},
            {"body": "x", "created_at": "2024-03-01T09:30:00Z", "unpin_at": "2024-02-01T00:00:00Z"},
            {"body": "y", "document_paths": [{"path": "a.pdf"}]},
            {"document_paths": []},
        ]),
    );
    let (status, body) = server.post(NOTES, &token, &bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_error(&body, "validation_error");
    let pairs = error_pairs(&body);
    for expected in [
        ("notes.0", "note_body_or_document_path_not_found"),
        (
            "notes.1.unpin_at",
            "note_unpin_at_earlier_than_creation_date",
        ),
        ("notes.2.document_paths.0.document_path", "required"),
        ("notes.2.document_paths.0.path", "unknown_field"),
        ("notes.3", "note_body_or_document_path_not_found"),
    ] {
        assert!(
            pairs.contains(&(expected.0.to_owned(), expected.1.to_owned())),
            "{expected:?} not in {pairs:?}"
        );
    }
    // As on the real platform, an empty list adds nothing and is no error.
    let (status, body) = server
        .post(NOTES, &token, &notes("OLD_CO", "ACC-1", json!([])))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body, json!([]));
    assert_eq!(server.account_view(&number).await["notes"], json!([]));
}

#[tokio::test]
async fn document_paths_must_exist_under_the_suppliers_root_and_cannot_escape_it() {
    let server = Server::start().await;
    let (token, number) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    // The harness gives OLD_CO the document root `old_co/`.
    server.put_document("old_co/letters/welcome.pdf");
    server.put_document("other_co/secret.pdf");
    server.put_document("secret.pdf");

    let good = notes(
        "OLD_CO",
        "ACC-1",
        json!([{"document_paths": [{"document_path": "/letters/welcome.pdf"}, {"document_path": "letters/welcome.pdf"}]}]),
    );
    let (status, body) = server.post(NOTES, &token, &good).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let missing = notes(
        "OLD_CO",
        "ACC-1",
        json!([{"body": "see attached", "document_paths": [{"document_path": "letters/welcome.pdf"}, {"document_path": "letters/missing.pdf"}]}]),
    );
    let (status, body) = server.post(NOTES, &token, &missing).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        error_pairs(&body),
        vec![(
            "notes.0.document_paths.1.document_path".to_owned(),
            "path_does_not_exist_in_file_store".to_owned()
        )]
    );

    for escape in [
        "../other_co/secret.pdf",
        "../secret.pdf",
        "letters/../../secret.pdf",
        "//secret.pdf",
        "s3://bucket/secret.pdf",
        "file:///etc/passwd",
        "letters/./welcome.pdf",
        "letters\\welcome.pdf",
    ] {
        let attempt = notes(
            "OLD_CO",
            "ACC-1",
            json!([{"document_paths": [{"document_path": escape}]}]),
        );
        let (status, body) = server.post(NOTES, &token, &attempt).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{escape}: {body}");
        assert_eq!(
            error_pairs(&body),
            vec![(
                "notes.0.document_paths.0.document_path".to_owned(),
                "invalid_document_path".to_owned()
            )],
            "{escape}"
        );
    }
    assert_eq!(
        server.account_view(&number).await["notes"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn only_imported_visible_accounts_of_ongoing_suppliers_take_notes() {
    let server = Server::start().await;
    let (token, _) = server
        .imported_account("OLD_CO", "ACC-1", "2025-01-01")
        .await;
    server
        .stage(&token, &account("OLD_CO", "STAGED-ONLY"))
        .await;
    let (other_token, _) = server
        .imported_account("OTHER_CO", "ACC-9", "2025-01-01")
        .await;
    let note = json!([{"body": "hello"}]);
    for (supplier, external, token) in [
        ("OLD_CO", "STAGED-ONLY", &token),
        ("OLD_CO", "NO-SUCH", &token),
        ("NO_SUCH_CO", "ACC-1", &token),
        ("OTHER_CO", "ACC-9", &token),
        ("OLD_CO", "ACC-1", &other_token),
    ] {
        let (status, body) = server
            .post(NOTES, token, &notes(supplier, external, note.clone()))
            .await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "{supplier}/{external}: {body}"
        );
        assert_error(&body, "account_not_found");
    }
    server.set_status("OLD_CO", "PAUSED").await;
    let (status, body) = server
        .post(NOTES, &token, &notes("OLD_CO", "ACC-1", note))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, "import_supplier_migration_not_ongoing");
}
