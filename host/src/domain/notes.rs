//! Notes on an imported account: what a posted note must contain, and when it is a duplicate.
//!
//! A note is created only when no note with the same body (and the same `created_at`, when
//! one is given) is already on the account; otherwise it is reported `NOTE_ALREADY_EXISTS`.
//! A note with documents and no body is identified by its document paths instead. A note with
//! an `external_id` (the real platform's "unique identifier for this note to avoid duplicate
//! entries") is a duplicate exactly when the account has a note with that id.

use super::documents::{INVALID_PATH_CODE, INVALID_PATH_DETAIL, check_payload_path};
use super::request_document::{
    AccountReference, RequestDocument, elements, formats, parse_drf_datetime,
};
use super::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// A `notes/create/` body as accepted (the real `AccountNote`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PostedNotes {
    #[serde(flatten)]
    pub account: AccountReference,
    pub notes: Vec<NoteInput>,
}

/// A note as posted (the real `Note`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NoteInput {
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default, deserialize_with = "document_paths")]
    pub document_paths: Vec<String>,
    #[serde(default, deserialize_with = "formats::datetime")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub is_pinned: bool,
    #[serde(default, deserialize_with = "formats::datetime")]
    pub unpin_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub external_id: Option<String>,
    #[serde(default)]
    pub is_archived: bool,
}

/// `document_paths` as sent (`[{"document_path": ...}]`), as the paths.
fn document_paths<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    struct NoteDocument {
        document_path: String,
    }
    let documents = Vec::<NoteDocument>::deserialize(deserializer)?;
    Ok(documents.into_iter().map(|d| d.document_path).collect())
}

/// Who wrote a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NoteSource {
    /// Posted by the supplier's integration.
    Import,
    /// Written by Ferry (e.g. about transactions moved into the open statement period).
    System,
}

/// A note as stored on the account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Note {
    pub id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default)]
    pub document_paths: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub is_pinned: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpin_at: Option<DateTime<Utc>>,
    pub source: NoteSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Archived on the account's support page.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_archived: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NoteStatus {
    NoteCreationSuccess,
    NoteAlreadyExists,
}

/// Reads and checks a `notes/create/` body, reporting every problem at once.
pub fn read_notes(body: &Value, max_items: usize) -> Result<PostedNotes, FieldErrors> {
    RequestDocument::Notes.read(body, max_items, |document, errors| {
        AccountReference::check(document, errors);
        for (index, note) in elements(document, "notes").iter().enumerate() {
            if let Value::Object(note) = note {
                check_note(note, &format!("notes.{index}"), errors);
            }
        }
    })
}

/// The rules of a note the schema does not state.
pub(crate) fn check_note(note: &Map<String, Value>, at: &str, errors: &mut FieldErrors) {
    for (index, document) in elements(note, "document_paths").iter().enumerate() {
        if let Some(Value::String(path)) = document.get("document_path")
            && check_payload_path(path).is_err()
        {
            errors.push(FieldError::new(
                format!("{at}.document_paths.{index}.document_path"),
                INVALID_PATH_CODE,
                INVALID_PATH_DETAIL,
            ));
        }
    }
    // A `body` or `document_paths` given but invalid has its own error; only a note with
    // neither is this one.
    let has_content = note.contains_key("body")
        || note
            .get("document_paths")
            .is_some_and(|paths| paths.as_array().is_none_or(|paths| !paths.is_empty()));
    if !has_content {
        errors.push(FieldError::new(
            at.to_owned(),
            "note_body_or_document_path_not_found",
            "A note needs a body or at least one document path.",
        ));
    }
    // As on the real platform: only when both are given.
    let moment = |name: &str| parse_drf_datetime(note.get(name)?.as_str()?);
    if let (Some(unpin), Some(created)) = (moment("unpin_at"), moment("created_at"))
        && unpin < created
    {
        errors.push(FieldError::new(
            format!("{at}.unpin_at"),
            "note_unpin_at_earlier_than_creation_date",
            "unpin_at must not be earlier than the note's creation date.",
        ));
    }
}

/// The key under which notes are indexed on an account: by `external_id` when the note has
/// one, else by content.
pub fn note_key(note: &NoteInput) -> String {
    dedupe_key(
        note.external_id.as_deref(),
        note.body.as_deref(),
        &note.document_paths,
    )
}

impl Note {
    /// The note `input` posted, kept as note `id`, created at `created_at` (its own
    /// `created_at`, or when it was added).
    pub fn new(id: u64, input: &NoteInput, source: NoteSource, created_at: DateTime<Utc>) -> Self {
        Note {
            id,
            body: input.body.clone(),
            document_paths: input.document_paths.clone(),
            created_at,
            is_pinned: input.is_pinned,
            unpin_at: input.unpin_at,
            source,
            external_id: input.external_id.clone(),
            is_archived: input.is_archived,
        }
    }

    /// The [`note_key`] the note was added under (a store can derive its index from its notes).
    pub fn key(&self) -> String {
        dedupe_key(
            self.external_id.as_deref(),
            self.body.as_deref(),
            &self.document_paths,
        )
    }
}

fn dedupe_key(external_id: Option<&str>, body: Option<&str>, document_paths: &[String]) -> String {
    match external_id {
        Some(id) => format!("external\u{0}{id}"),
        None => content_key(body, document_paths),
    }
}

/// The key under which notes of the same content are indexed on an account.
pub fn content_key(body: Option<&str>, document_paths: &[String]) -> String {
    let mut hasher = Sha256::new();
    match body {
        Some(body) => {
            hasher.update(b"body\0");
            hasher.update(body.as_bytes());
        }
        None => {
            hasher.update(b"documents\0");
            for path in document_paths {
                hasher.update(path.as_bytes());
                hasher.update(b"\0");
            }
        }
    }
    hex::encode(hasher.finalize())
}

/// Which of the `existing` creation times (of notes under the same [`note_key`]) makes `posted`
/// a duplicate: with an `external_id`, any; without, any when `posted` has no `created_at`, the
/// same one otherwise.
pub fn duplicate_of(existing: &[DateTime<Utc>], posted: &NoteInput) -> Option<DateTime<Utc>> {
    match (&posted.external_id, posted.created_at) {
        (None, Some(moment)) => existing.iter().copied().find(|at| *at == moment),
        _ => existing.first().copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::validation::{codes, pairs};
    use serde_json::json;

    #[test]
    fn reads_the_real_note_document() {
        let body = json!({"import_supplier": "OLD_CO", "account_number": "A-1", "notes": [{
            "body": "Called.", "created_at": "2024-01-01", "unpin_at": "2024-01-02 10:00+01:00",
            "is_pinned": true, "external_id": "CRM-1", "is_archived": true,
            "document_paths": [{"document_path": "letters/a.pdf"}],
        }]});
        let posted = read_notes(&body, 10).expect("valid");
        assert_eq!(posted.account.import_supplier, "OLD_CO");
        assert_eq!(posted.account.external_account_number(), "A-1");
        let at = |text: &str| Some(text.parse::<DateTime<Utc>>().expect("time"));
        assert_eq!(
            posted.notes,
            [NoteInput {
                body: Some("Called.".into()),
                document_paths: vec!["letters/a.pdf".into()],
                created_at: at("2024-01-01T00:00:00Z"),
                is_pinned: true,
                unpin_at: at("2024-01-02T09:00:00Z"),
                external_id: Some("CRM-1".into()),
                is_archived: true,
            }]
        );
    }

    #[test]
    fn reports_every_problem_at_once_in_the_order_of_the_document() {
        let body = json!({"import_supplier": "OLD_CO", "notes": [
            {"body": "  "},
            {},
            {"body": "x", "created_at": "2024-01-02T00:00Z", "unpin_at": "2024-01-01"},
            {"document_paths": [{"document_path": "../x"}], "is_pinned": "yes"},
            {"body": "x".repeat(10_001), "created_at": "tomorrow", "external_id": null},
        ]});
        let errors = read_notes(&body, 10).expect_err("invalid");
        let expected = [
            ("", "account_number_or_external_account_number_required"),
            ("notes.0.body", "blank"),
            ("notes.1", "note_body_or_document_path_not_found"),
            (
                "notes.2.unpin_at",
                "note_unpin_at_earlier_than_creation_date",
            ),
            (
                "notes.3.document_paths.0.document_path",
                "invalid_document_path",
            ),
            ("notes.3.is_pinned", "invalid"),
            ("notes.4.body", "max_length"),
            ("notes.4.created_at", "invalid"),
            ("notes.4.external_id", "null"),
        ];
        assert_eq!(codes(&errors), pairs(&expected));
        let many = json!({"import_supplier": "OLD_CO", "external_account_number": "A-1",
            "notes": vec![json!({"body": "x"}); 3]});
        assert_eq!(
            codes(&read_notes(&many, 2).expect_err("too many")),
            pairs(&[("notes", "max_length")])
        );
    }

    #[test]
    fn dedupe_rule() {
        let t1 = "2024-01-01T10:00:00Z"
            .parse::<DateTime<Utc>>()
            .expect("time");
        let t2 = "2024-01-02T10:00:00Z"
            .parse::<DateTime<Utc>>()
            .expect("time");
        let posted = |created_at, external_id: Option<&str>| NoteInput {
            body: Some("a".into()),
            document_paths: Vec::new(),
            created_at,
            is_pinned: false,
            unpin_at: None,
            external_id: external_id.map(str::to_owned),
            is_archived: false,
        };
        assert_eq!(duplicate_of(&[], &posted(None, None)), None);
        assert_eq!(duplicate_of(&[t1], &posted(None, None)), Some(t1));
        assert_eq!(duplicate_of(&[t1], &posted(Some(t1), None)), Some(t1));
        assert_eq!(duplicate_of(&[t1], &posted(Some(t2), None)), None);
        // With an external id, the id alone decides (its index holds that id's note).
        assert_eq!(
            duplicate_of(&[t1], &posted(Some(t2), Some("N-1"))),
            Some(t1)
        );
        assert_ne!(
            note_key(&posted(None, Some("N-1"))),
            note_key(&posted(None, None))
        );
        assert_ne!(
            content_key(Some("a"), &[]),
            content_key(None, &["a".into()])
        );
    }

    #[test]
    fn a_stored_note_has_the_key_it_was_posted_under() {
        let posted = |body: Option<&str>, paths: &[&str], external_id: Option<&str>| NoteInput {
            body: body.map(str::to_owned),
            document_paths: paths.iter().map(|path| (*path).to_owned()).collect(),
            created_at: None,
            is_pinned: false,
            unpin_at: None,
            external_id: external_id.map(str::to_owned),
            is_archived: false,
        };
        let stored = |input: &NoteInput| Note {
            id: 7,
            body: input.body.clone(),
            document_paths: input.document_paths.clone(),
            created_at: Utc::now(),
            is_pinned: false,
            unpin_at: None,
            source: NoteSource::Import,
            external_id: input.external_id.clone(),
            is_archived: false,
        };
        for input in [
            posted(Some("Called."), &[], None),
            posted(None, &["letters/a.pdf", "letters/b.pdf"], None),
            posted(Some("Called."), &[], Some("CRM-1")),
        ] {
            assert_eq!(stored(&input).key(), note_key(&input));
        }
    }
}
