//! `notes/create/`: notes added to an imported account, each once.

use super::{Additions, record, to_record};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::error::DomainError;
use crate::domain::notes::{
    Note, NoteInput, NoteSource, NoteStatus, duplicate_of, note_key, read_notes,
};
use crate::domain::ports::Hook;
use crate::domain::storage::{AccountTable, AccountTx};
use crate::domain::validation::{FieldErrors, Reported, reading};
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
pub(super) fn add_note(
    tx: &dyn AccountTx,
    input: &NoteInput,
    source: NoteSource,
    now: DateTime<Utc>,
) -> Result<NoteResult, DomainError> {
    let content = note_key(input);
    let mut existing: Vec<DateTime<Utc>> = tx
        .get(AccountTable::NoteIndex, &content)?
        .map(record)
        .transpose()?
        .unwrap_or_default();
    if let Some(at) = duplicate_of(&existing, input) {
        return Ok(NoteResult {
            created_at: at,
            body: input.body.clone(),
            external_id: input.external_id.clone(),
            status: NoteStatus::NoteAlreadyExists,
        });
    }
    let created_at = input.created_at.unwrap_or(now);
    let note = Note {
        id: tx.next_id()?,
        body: input.body.clone(),
        document_paths: input.document_paths.clone(),
        created_at,
        is_pinned: input.is_pinned,
        unpin_at: input.unpin_at,
        source,
        external_id: input.external_id.clone(),
        is_archived: input.is_archived,
    };
    tx.put(
        AccountTable::Notes,
        &format!("{:020}", note.id),
        &to_record(&note),
    )?;
    existing.push(created_at);
    tx.put(AccountTable::NoteIndex, &content, &to_record(&existing))?;
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
        let policy = self.policy(key, body)?;
        let (parsed, ignored) = reading(policy, || self.parse_notes(body));
        let (supplier, external, mut notes) = parsed?;
        let target = self.target(key, &supplier, &external)?;
        if let Some(mapped) = self
            .apply_rules(&target, Hook::MapNotes, body, Some("notes"))
            .await?
        {
            notes = reading(policy, || self.parse_notes(&mapped)).0?.2;
        }
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
        let mut results = Vec::new();
        self.change_account_records(&target.account.number, notes.len(), &mut |tx| {
            results.clear();
            for note in &notes {
                results.push(add_note(tx, note, NoteSource::Import, now)?);
            }
            Ok(())
        })?;
        self.store.flush().await?;
        Ok(Reported {
            value: results,
            ignored,
        })
    }
}
