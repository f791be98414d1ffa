//! Notes on an imported account: what a posted note must contain, and when it is a duplicate.
//!
//! A note is created only when no note with the same body (and the same `created_at`, when
//! one is given) is already on the account; otherwise it is reported `NOTE_ALREADY_EXISTS`.
//! A note with documents and no body is identified by its document paths instead. A note with
//! an `external_id` (the real platform's "unique identifier for this note to avoid duplicate
//! entries") is a duplicate exactly when the account has a note with that id.

use super::documents::{INVALID_PATH_CODE, INVALID_PATH_DETAIL, check_payload_path};
use super::validation::{Items, ObjectReader, Optional, Required, StrRule};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub const MAX_NOTE_BODY: usize = 10_000;
pub const MAX_EXTERNAL_ID: usize = 255;

/// A note as posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteInput {
    pub body: Option<String>,
    pub document_paths: Vec<String>,
    pub created_at: Option<DateTime<Utc>>,
    pub is_pinned: bool,
    pub unpin_at: Option<DateTime<Utc>>,
    pub external_id: Option<String>,
    pub is_archived: bool,
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

/// Reads one element of `notes` (`r` is at `notes.<i>`).
pub fn read_note(r: &mut ObjectReader<'_>, max_items: usize) -> Option<NoteInput> {
    let body = r.string("body", Optional, StrRule::text(MAX_NOTE_BODY));
    let body_given = r.has("body");
    let paths = r.object_array(
        "document_paths",
        Optional,
        Items {
            min: 0,
            max: max_items,
        },
        |o| {
            let path = o.string("document_path", Required, StrRule::max(1024))?;
            if check_payload_path(&path).is_err() {
                o.error(
                    o.attr("document_path"),
                    INVALID_PATH_CODE,
                    INVALID_PATH_DETAIL,
                );
                return None;
            }
            Some(path)
        },
    );
    // An invalid `body` or `document_paths` has its own error; only a note with neither is this one.
    let has_content =
        body_given || (r.has("document_paths") && paths.as_ref().is_none_or(|p| !p.is_empty()));
    let created_at = r.datetime("created_at", Optional);
    let is_pinned = r.boolean("is_pinned", Optional);
    let unpin_at = r.datetime("unpin_at", Optional);
    let external_id = r.string("external_id", Optional, StrRule::max(MAX_EXTERNAL_ID));
    let is_archived = r.boolean("is_archived", Optional);
    if !has_content {
        r.error(
            r.path().to_owned(),
            "note_body_or_document_path_not_found",
            "A note needs a body or at least one document path.",
        );
    }
    // As on the real platform: only when both are given.
    if let (Some(unpin), Some(created)) = (unpin_at, created_at)
        && unpin < created
    {
        r.error(
            r.attr("unpin_at"),
            "note_unpin_at_earlier_than_creation_date",
            "unpin_at must not be earlier than the note's creation date.",
        );
    }
    Some(NoteInput {
        body,
        document_paths: paths.unwrap_or_default(),
        created_at,
        is_pinned: is_pinned.unwrap_or(false),
        unpin_at,
        external_id,
        is_archived: is_archived.unwrap_or(false),
    })
}

/// The key under which notes are indexed on an account: by `external_id` when the note has
/// one, else by content.
pub fn note_key(note: &NoteInput) -> String {
    match &note.external_id {
        Some(id) => format!("external\u{0}{id}"),
        None => content_key(note.body.as_deref(), &note.document_paths),
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
}
