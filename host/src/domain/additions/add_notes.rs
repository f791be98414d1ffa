//! `notes/create/`: notes added to an imported account, each once.

use super::{Additions, Request};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::campaign::{Counts, counter};
use crate::domain::error::DomainError;
use crate::domain::notes::{
    Note, NoteInput, NoteSource, NoteStatus, duplicate_of, note_key, read_notes,
};
use crate::domain::ports::Hook;
use crate::domain::storage::{AccountUnit, retrying};
use crate::domain::validation::{FieldErrors, Reported};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// The answer for one posted note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteResult {
    pub created_at: DateTime<Utc>,
    pub body: Option<String>,
    pub external_id: Option<String>,
    pub status: NoteStatus,
}

/// Adds a note unless the account already has it (see `notes`).
pub(super) async fn add_note(
    unit: &mut dyn AccountUnit,
    input: &NoteInput,
    source: NoteSource,
    now: DateTime<Utc>,
) -> Result<NoteResult, DomainError> {
    let key = note_key(input);
    let mut dates = unit.note_dates(&key).await?;
    if let Some(at) = duplicate_of(&dates, input) {
        return Ok(NoteResult {
            created_at: at,
            body: input.body.clone(),
            external_id: input.external_id.clone(),
            status: NoteStatus::NoteAlreadyExists,
        });
    }
    let created_at = input.created_at.unwrap_or(now);
    let note = Note::new(unit.next_id().await?, input, source, created_at);
    dates.push(created_at);
    unit.add_note(&note, &key, &dates)?;
    Ok(NoteResult {
        created_at,
        body: note.body,
        external_id: note.external_id,
        status: NoteStatus::NoteCreationSuccess,
    })
}

impl Additions {
    fn parse_notes(&self, body: &Value) -> Result<(String, String, Vec<NoteInput>), DomainError> {
        let posted = read_notes(body, self.limits.max_items).map_err(DomainError::invalid)?;
        let external = posted.account.external_account_number().to_owned();
        Ok((posted.account.import_supplier, external, posted.notes))
    }

    pub async fn add_notes(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<Vec<NoteResult>>, DomainError> {
        let now = Utc::now();
        let Request {
            target,
            posted: notes,
            ignored,
            ..
        } = self
            .read_request(key, body, Hook::MapNotes, Some("notes"), |body| {
                self.parse_notes(body)
            })
            .await?;
        let mut errors = FieldErrors::default();
        for (i, note) in notes.iter().enumerate() {
            for (j, path) in note.document_paths.iter().enumerate() {
                let attr = format!("notes.{i}.document_paths.{j}.document_path");
                self.check_document(&target.supplier, path, attr, &mut errors)
                    .await?;
            }
        }
        if !errors.is_empty() {
            return Err(DomainError::invalid(errors));
        }
        let results = retrying(|| async {
            let mut unit = self.store.account_unit(&target.account.number).await?;
            let mut results = Vec::with_capacity(notes.len());
            for note in &notes {
                results.push(add_note(unit.as_mut(), note, NoteSource::Import, now).await?);
            }
            let created = results
                .iter()
                .filter(|result| result.status == NoteStatus::NoteCreationSuccess)
                .count();
            let mut counts = Counts::default();
            counts.add(counter::NOTES, i64::try_from(created).unwrap_or(i64::MAX));
            unit.count(&target.supplier.code, &counts)?;
            unit.commit().await?;
            Ok(results)
        })
        .await?;
        Ok(Reported {
            value: results,
            ignored,
        })
    }
}
