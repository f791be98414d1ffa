//! An event in the form the relay sends it: the fields of one Redis stream entry, with their
//! CloudEvents names, encoded once when the event is stored.
//!
//! The sled store's event log holds these records instead of the event's JSON, and its relay
//! reads them from there, so publishing an event reads a few length-prefixed byte strings and
//! hands them to `XADD`: no JSON decoding, no date formatting, no re-serialising the payload
//! on the relay's hot path. The admin API's log reads them back ([`StreamRecord::to_event`]).
//!
//! Layout: a version byte ([`RECORD_V1`]), then for each field a one-byte name length, the
//! name, a four-byte little-endian value length and the value. `id` is always the first
//! field. Outbox records written before this format existed are the event's JSON object
//! (first byte `{`); [`StreamRecord::from_stored`] converts them.

use crate::domain::events::{Event, EventData};
use chrono::SecondsFormat;
use std::borrow::Cow;

/// The `source` field of every event Ferry publishes.
pub const SOURCE: &str = "ferry";

/// First byte of a record in this layout.
const RECORD_V1: u8 = 0xF1;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("outbox record is cut short")]
    Truncated,
    #[error("outbox record has an unknown layout (first byte {0:#04x})")]
    UnknownLayout(u8),
    #[error("outbox record holds unreadable event JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("outbox record has no id field first")]
    NoId,
    #[error("stored event record has no readable {0} field")]
    Field(&'static str),
}

/// The fields of one stream entry (CloudEvents names), in the order they are sent. The
/// payload is written with `serde_json::to_string`, not `Display` (the same bytes, without
/// going through a formatter: a tenth of an event's encoding).
pub fn stream_fields(event: &Event) -> Vec<(&'static str, Cow<'_, str>)> {
    let mut fields = vec![
        ("id", Cow::Borrowed(event.id.as_str())),
        ("source", Cow::Borrowed(SOURCE)),
        ("specversion", Cow::Borrowed("1.0")),
        ("type", Cow::Borrowed(event.event_type.as_str())),
        ("dataversion", Cow::Borrowed(event.version.as_str())),
        (
            "time",
            Cow::Owned(event.time.to_rfc3339_opts(SecondsFormat::Millis, true)),
        ),
    ];
    if let Some(subject) = &event.subject {
        fields.push(("subject", Cow::Borrowed(subject.as_str())));
    }
    fields.push(("datacontenttype", Cow::Borrowed("application/json")));
    fields.push(("data", Cow::Borrowed(event.data.as_str())));
    fields
}

/// An encoded, stream-ready event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamRecord(Vec<u8>);

impl StreamRecord {
    pub fn encode(event: &Event) -> StreamRecord {
        let fields = stream_fields(event);
        let size: usize = fields
            .iter()
            .map(|(name, value)| 5 + name.len() + value.len())
            .sum();
        let mut bytes = Vec::with_capacity(1 + size);
        bytes.push(RECORD_V1);
        for (name, value) in fields {
            // Names are the fixed CloudEvents names above: all shorter than 256 bytes.
            bytes.push(name.len() as u8);
            bytes.extend_from_slice(name.as_bytes());
            // Values are bounded by the request body limit, far below 4 GiB.
            bytes.extend_from_slice(&(value.len() as u32).to_le_bytes());
            bytes.extend_from_slice(value.as_bytes());
        }
        StreamRecord(bytes)
    }

    /// A record as stored in the outbox: this layout, or an older record's event JSON.
    pub fn from_stored(bytes: &[u8]) -> Result<StreamRecord, RecordError> {
        match bytes.first() {
            Some(&RECORD_V1) => {
                let record = StreamRecord(bytes.to_vec());
                // Check the whole layout once, so iterating it later cannot fail.
                for field in record.raw_fields() {
                    field?;
                }
                record.id()?;
                Ok(record)
            }
            Some(b'{') => Ok(StreamRecord::encode(&serde_json::from_slice::<Event>(
                bytes,
            )?)),
            Some(&other) => Err(RecordError::UnknownLayout(other)),
            None => Err(RecordError::Truncated),
        }
    }

    /// The event this record was encoded from, with its `seq` and `published_at` unset. Its
    /// time is to the millisecond, as the stream has it (events are made to the millisecond,
    /// [`Event::new`]).
    pub fn to_event(&self) -> Result<Event, RecordError> {
        let (mut id, mut event_type, mut version, mut time, mut subject, mut data) =
            (None, None, None, None, None, None);
        for field in self.raw_fields() {
            let (name, value) = field?;
            let text = || std::str::from_utf8(value).ok().map(str::to_owned);
            match name {
                b"id" => id = text(),
                b"type" => event_type = text(),
                b"dataversion" => version = text(),
                b"time" => time = time_of(value),
                b"subject" => subject = Some(text().ok_or(RecordError::Field("subject"))?),
                b"data" => {
                    let text = text().ok_or(RecordError::Field("data"))?;
                    data = Some(EventData::from_text(text)?);
                }
                _ => {}
            }
        }
        Ok(Event {
            seq: 0,
            id: id.ok_or(RecordError::NoId)?,
            event_type: event_type.ok_or(RecordError::Field("type"))?,
            version: version.ok_or(RecordError::Field("dataversion"))?,
            time: time.ok_or(RecordError::Field("time"))?,
            subject,
            data: data.ok_or(RecordError::Field("data"))?,
            published_at: None,
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// When the event stored as `bytes` (this layout, or an older record's event JSON) was
    /// made, read without decoding the rest of it.
    pub fn stored_time(bytes: &[u8]) -> Result<chrono::DateTime<chrono::Utc>, RecordError> {
        match bytes.first() {
            Some(&RECORD_V1) => {
                let fields = FieldIter {
                    rest: bytes.get(1..).unwrap_or_default(),
                };
                for field in fields {
                    if let (b"time", value) = field? {
                        return time_of(value).ok_or(RecordError::Field("time"));
                    }
                }
                Err(RecordError::Field("time"))
            }
            Some(b'{') => {
                #[derive(serde::Deserialize)]
                struct Made {
                    time: chrono::DateTime<chrono::Utc>,
                }
                Ok(serde_json::from_slice::<Made>(bytes)?.time)
            }
            Some(&other) => Err(RecordError::UnknownLayout(other)),
            None => Err(RecordError::Truncated),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The event id (the first field).
    pub fn id(&self) -> Result<&str, RecordError> {
        match self.raw_fields().next() {
            Some(Ok((b"id", value))) => std::str::from_utf8(value).map_err(|_| RecordError::NoId),
            _ => Err(RecordError::NoId),
        }
    }

    /// The (name, value) pairs, in order. Records come from [`StreamRecord::encode`] or were
    /// checked by [`StreamRecord::from_stored`], so malformed fields are skipped, not raised.
    pub fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.raw_fields().map_while(Result::ok)
    }

    fn raw_fields(&self) -> FieldIter<'_> {
        FieldIter {
            rest: self.0.get(1..).unwrap_or_default(),
        }
    }
}

/// The value of a record's `time` field, read.
fn time_of(value: &[u8]) -> Option<chrono::DateTime<chrono::Utc>> {
    let at = chrono::DateTime::parse_from_rfc3339(std::str::from_utf8(value).ok()?).ok()?;
    Some(at.with_timezone(&chrono::Utc))
}

struct FieldIter<'a> {
    rest: &'a [u8],
}

impl<'a> FieldIter<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], RecordError> {
        if self.rest.len() < count {
            self.rest = &[];
            return Err(RecordError::Truncated);
        }
        let (taken, rest) = self.rest.split_at(count);
        self.rest = rest;
        Ok(taken)
    }

    fn field(&mut self) -> Result<(&'a [u8], &'a [u8]), RecordError> {
        let name_len = self.take(1)?[0] as usize;
        let name = self.take(name_len)?;
        let mut len = [0u8; 4];
        len.copy_from_slice(self.take(4)?);
        let value = self.take(u32::from_le_bytes(len) as usize)?;
        Ok((name, value))
    }
}

impl<'a> Iterator for FieldIter<'a> {
    type Item = Result<(&'a [u8], &'a [u8]), RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            None
        } else {
            Some(self.field())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event() -> Event {
        Event::new(
            "account.occupied",
            "v1",
            Some("A-0000BEEF"),
            json!({"account_number": "A-0000BEEF"}),
        )
        .expect("a catalogued event")
    }

    #[test]
    fn a_stored_events_time_is_read_in_either_layout() {
        let event = event();
        let record = StreamRecord::encode(&event);
        let made = StreamRecord::stored_time(record.as_bytes()).expect("a time");
        assert_eq!(made, record.to_event().expect("an event").time);
        let json = serde_json::to_vec(&event).expect("json");
        assert_eq!(
            StreamRecord::stored_time(&json).expect("a time"),
            event.time
        );
        assert!(StreamRecord::stored_time(&record.as_bytes()[..20]).is_err());
        assert!(StreamRecord::stored_time(b"{}").is_err());
        assert!(StreamRecord::stored_time(b"").is_err());
    }

    fn as_strings(record: &StreamRecord) -> Vec<(String, String)> {
        record
            .fields()
            .map(|(name, value)| {
                (
                    String::from_utf8_lossy(name).into_owned(),
                    String::from_utf8_lossy(value).into_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn a_record_holds_exactly_the_stream_fields_with_the_id_first() {
        let event = event();
        let record = StreamRecord::encode(&event);
        let expected: Vec<(String, String)> = stream_fields(&event)
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value.into_owned()))
            .collect();
        assert_eq!(as_strings(&record), expected);
        assert_eq!(
            expected.last().map(|(_, data)| data),
            Some(&event.data.as_str().to_owned())
        );
        assert_eq!(record.id().expect("id"), event.id);
        let stored = StreamRecord::from_stored(record.as_bytes()).expect("stored form");
        assert_eq!(stored, record);
    }

    #[test]
    fn a_record_reads_back_as_its_event() {
        let mut with_subject = event();
        with_subject.data = EventData::of(&json!({"account_number": "A-0000BEEF",
                                                  "amount": -12.5, "lines": [1, {"x": null}]}));
        let mut without_subject = event();
        without_subject.subject = None;
        for event in [with_subject, without_subject] {
            let record = StreamRecord::encode(&event);
            assert_eq!(record.to_event().expect("read back"), event);
        }
    }

    #[test]
    fn older_json_records_read_as_the_same_fields() {
        let event = event();
        let json = serde_json::to_vec(&event).expect("json");
        let record = StreamRecord::from_stored(&json).expect("legacy record");
        assert_eq!(record, StreamRecord::encode(&event));
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let record = StreamRecord::encode(&event());
        let bytes = record.as_bytes();
        for cut in 0..bytes.len() {
            // Every prefix is either refused or (at a field boundary) a shorter valid record.
            if let Ok(shorter) = StreamRecord::from_stored(&bytes[..cut]) {
                assert!(shorter.fields().count() < record.fields().count());
            }
        }
        assert!(matches!(
            StreamRecord::from_stored(&[0x07, 1, 2]),
            Err(RecordError::UnknownLayout(0x07))
        ));
        assert!(StreamRecord::from_stored(b"{not json").is_err());
    }
}
