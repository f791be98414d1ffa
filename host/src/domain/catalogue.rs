//! The event catalogue: every event type and payload version the platform emits, with the
//! fields of each payload, as listed in `shared/spec/event-catalogue.md`. The catalogue is data
//! (`catalogue.json`, embedded at build time); this module loads it, checks payloads against it
//! (every event Ferry stores or publishes is validated here first), and renders the whole
//! catalogue as an AsyncAPI 3.0.0 document for consumers of the Redis stream.
//!
//! Payloads are closed: a field the catalogue does not list is refused. Fields the document
//! writes without a type are strings, except where the document gives the same thing a richer
//! type elsewhere; such fields are marked `inferred` in `catalogue.json`. Events the document
//! marks `†` carry no requirement information, so none of their fields is required.

#![forbid(unsafe_code)]

use super::validation::DotPath;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

/// The catalogue as shipped with Ferry.
const EMBEDDED_CATALOGUE: &str = include_str!("catalogue.json");

/// The address of the one channel events are published on: the Redis stream.
pub const STREAM_ADDRESS: &str = "ferry:events";

/// The catalogue: event schemas in document order, and the shared shapes they refer to.
pub struct Catalogue {
    events: Vec<EventSchema>,
    /// Event type → indices into `events`, in document order.
    versions_by_type: HashMap<String, Vec<usize>>,
    shapes: Vec<ShapeSchema>,
    shape_index: HashMap<String, usize>,
}

impl fmt::Debug for Catalogue {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Catalogue")
            .field("events", &self.events.len())
            .field("shapes", &self.shapes.len())
            .finish_non_exhaustive()
    }
}

/// One payload version of one event type.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSchema {
    #[serde(rename = "type")]
    pub event_type: String,
    pub version: String,
    /// False for the events the document marks `†`: none of their fields is required.
    pub requirements_known: bool,
    /// The payload's fields, in document order.
    #[serde(deserialize_with = "deserialize_fields")]
    pub fields: Vec<FieldSchema>,
}

/// A named shape shared by several events (`LedgerRef`, `Actor`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeSchema {
    pub name: String,
    pub description: Option<String>,
    pub fields: Vec<FieldSchema>,
}

/// One field of a payload, nested object or shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSchema {
    pub name: String,
    pub field_type: FieldType,
    /// Must be present and not null.
    pub required: bool,
    /// The document writes this field without a type; the type was inferred from elsewhere.
    pub inferred: bool,
}

/// The type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    String,
    Integer,
    Boolean,
    /// Any JSON number.
    Number,
    /// A JSON object with unspecified content.
    AnyObject,
    Array(Box<FieldType>),
    /// A nested object with exactly these fields.
    Object(Vec<FieldSchema>),
    /// One of the catalogue's shared shapes, by name.
    Shape(String),
}

/// One problem with a payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PayloadError {
    /// Where: field names and array indices joined by dots (`ledger.account.number`,
    /// `entries.0.id`); empty for the payload itself.
    pub path: String,
    pub problem: String,
}

impl PayloadError {
    fn new(path: &DotPath<'_>, problem: impl Into<String>) -> PayloadError {
        PayloadError {
            path: path.to_string(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for PayloadError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            formatter.write_str(&self.problem)
        } else {
            write!(formatter, "{}: {}", self.path, self.problem)
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("unknown event {event_type} {version}")]
    UnknownEvent { event_type: String, version: String },
    #[error("invalid {event_type} {version} payload: {}", join_errors(.errors))]
    InvalidPayload {
        event_type: String,
        version: String,
        errors: Vec<PayloadError>,
    },
}

fn join_errors(errors: &[PayloadError]) -> String {
    errors
        .iter()
        .map(PayloadError::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl Catalogue {
    /// The catalogue shipped with Ferry, parsed on first use.
    pub fn embedded() -> &'static Catalogue {
        static EMBEDDED: OnceLock<Catalogue> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            // `catalogue.json` is part of the source tree and covered by the tests: failing to
            // load it is a bug in the build, not a runtime condition to recover from.
            #[allow(clippy::expect_used)]
            Catalogue::from_json(EMBEDDED_CATALOGUE)
                .expect("the embedded catalogue.json is invalid")
        })
    }

    /// Loads a catalogue in the format of `catalogue.json`, checking that event types and
    /// versions are unique and that every shape referred to exists.
    fn from_json(json: &str) -> Result<Catalogue, String> {
        let file: CatalogueFile = serde_json::from_str(json).map_err(|error| error.to_string())?;
        let mut shape_index = HashMap::new();
        for (position, shape) in file.shapes.iter().enumerate() {
            if shape_index.insert(shape.name.clone(), position).is_some() {
                return Err(format!("shape {} is defined twice", shape.name));
            }
        }
        let mut versions_by_type: HashMap<String, Vec<usize>> = HashMap::new();
        for (position, event) in file.events.iter().enumerate() {
            let versions = versions_by_type
                .entry(event.event_type.clone())
                .or_default();
            if versions
                .iter()
                .any(|&other| file.events[other].version == event.version)
            {
                return Err(format!(
                    "event {} {} is listed twice",
                    event.event_type, event.version
                ));
            }
            versions.push(position);
        }
        let catalogue = Catalogue {
            events: file.events,
            versions_by_type,
            shapes: file.shapes,
            shape_index,
        };
        for shape in &catalogue.shapes {
            catalogue.check_shape_references(&shape.fields, &format!("shape {}", shape.name))?;
        }
        for event in &catalogue.events {
            let owner = format!("event {} {}", event.event_type, event.version);
            catalogue.check_shape_references(&event.fields, &owner)?;
        }
        Ok(catalogue)
    }

    fn check_shape_references(&self, fields: &[FieldSchema], owner: &str) -> Result<(), String> {
        fn check(catalogue: &Catalogue, field_type: &FieldType, owner: &str) -> Result<(), String> {
            match field_type {
                FieldType::Array(element) => check(catalogue, element, owner),
                FieldType::Object(fields) => catalogue.check_shape_references(fields, owner),
                FieldType::Shape(name) if catalogue.shape(name).is_none() => {
                    Err(format!("{owner} refers to the unknown shape {name}"))
                }
                _ => Ok(()),
            }
        }
        fields
            .iter()
            .try_for_each(|field| check(self, &field.field_type, owner))
    }

    /// The schema of one payload version of an event type.
    pub fn get(&self, event_type: &str, version: &str) -> Option<&EventSchema> {
        self.versions_by_type
            .get(event_type)?
            .iter()
            .map(|&position| &self.events[position])
            .find(|event| event.version == version)
    }

    /// Every event type and payload version, in document order.
    pub fn entries(&self) -> impl Iterator<Item = &EventSchema> {
        self.events.iter()
    }

    /// The payload versions of an event type, in document order (empty if it is unknown).
    pub fn versions(&self, event_type: &str) -> Vec<&str> {
        self.versions_by_type
            .get(event_type)
            .map(|positions| {
                positions
                    .iter()
                    .map(|&position| self.events[position].version.as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The shared shapes, in document order.
    pub fn shapes(&self) -> impl Iterator<Item = &ShapeSchema> {
        self.shapes.iter()
    }

    /// A shared shape by name.
    pub fn shape(&self, name: &str) -> Option<&ShapeSchema> {
        self.shape_index
            .get(name)
            .map(|&position| &self.shapes[position])
    }

    /// Validates a payload: a JSON object; every required field present and not null; every
    /// present field of its type (integers must be integers, numbers any JSON number, nested
    /// objects and arrays element by element, shapes recursively); unknown fields are refused
    /// (payloads are closed). Optional fields may be absent or null. Reports every problem at
    /// once.
    pub fn validate(
        &self,
        event_type: &str,
        version: &str,
        data: &Value,
    ) -> Result<(), CatalogueError> {
        let schema = self
            .get(event_type, version)
            .ok_or_else(|| CatalogueError::UnknownEvent {
                event_type: event_type.to_owned(),
                version: version.to_owned(),
            })?;
        let mut errors = Vec::new();
        self.check_object(&schema.fields, data, &DotPath::Root, &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(CatalogueError::InvalidPayload {
                event_type: event_type.to_owned(),
                version: version.to_owned(),
                errors,
            })
        }
    }

    fn check_object(
        &self,
        fields: &[FieldSchema],
        value: &Value,
        path: &DotPath<'_>,
        errors: &mut Vec<PayloadError>,
    ) {
        let Value::Object(object) = value else {
            errors.push(PayloadError::new(path, mismatch("an object", value)));
            return;
        };
        for field in fields {
            let field_path = DotPath::Key(path, &field.name);
            match object.get(&field.name) {
                None if field.required => {
                    errors.push(PayloadError::new(&field_path, "required field is missing"));
                }
                Some(Value::Null) if field.required => {
                    errors.push(PayloadError::new(&field_path, "required field is null"));
                }
                None | Some(Value::Null) => {}
                Some(present) => self.check_value(&field.field_type, present, &field_path, errors),
            }
        }
        for name in object.keys() {
            if !fields.iter().any(|field| field.name == *name) {
                errors.push(PayloadError::new(
                    &DotPath::Key(path, name),
                    "unknown field",
                ));
            }
        }
    }

    fn check_value(
        &self,
        field_type: &FieldType,
        value: &Value,
        path: &DotPath<'_>,
        errors: &mut Vec<PayloadError>,
    ) {
        let expected = match field_type {
            FieldType::String if !value.is_string() => "a string",
            FieldType::Integer if !is_integer(value) => "an integer",
            FieldType::Boolean if !value.is_boolean() => "a boolean",
            FieldType::Number if !value.is_number() => "a number",
            FieldType::AnyObject if !value.is_object() => "an object",
            FieldType::Array(element) => {
                match value.as_array() {
                    Some(items) => {
                        for (index, item) in items.iter().enumerate() {
                            let item_path = DotPath::Index(path, index);
                            self.check_value(element, item, &item_path, errors);
                        }
                    }
                    None => errors.push(PayloadError::new(path, mismatch("an array", value))),
                }
                return;
            }
            FieldType::Object(fields) => return self.check_object(fields, value, path, errors),
            FieldType::Shape(name) => {
                match self.shape(name) {
                    Some(shape) => self.check_object(&shape.fields, value, path, errors),
                    // Unreachable for a loaded catalogue: references are checked when loading.
                    None => errors.push(PayloadError::new(path, format!("unknown shape {name}"))),
                }
                return;
            }
            _ => return,
        };
        errors.push(PayloadError::new(path, mismatch(expected, value)));
    }

    /// An AsyncAPI 3.0.0 document of the whole catalogue: one channel (the Redis stream), one
    /// message per event type and payload version, one `send` operation referencing them all,
    /// and the shared shapes as component schemas.
    pub fn asyncapi(&self) -> Value {
        let mut component_messages = Map::new();
        let mut channel_messages = Map::new();
        let mut operation_messages = Vec::new();
        for event in &self.events {
            let id = message_id(event);
            let pointer_id = json_pointer_escape(&id);
            let mut message = json!({
                "name": format!("{} {}", event.event_type, event.version),
                "title": format!("{} ({})", event.event_type, event.version),
                "contentType": "application/json",
                "payload": object_schema(&event.fields),
            });
            if !event.requirements_known {
                message["summary"] = json!(
                    "The catalogue gives no requirement information for this event: every field is optional."
                );
            }
            component_messages.insert(id.clone(), message);
            channel_messages.insert(
                id,
                json!({"$ref": format!("#/components/messages/{pointer_id}")}),
            );
            operation_messages
                .push(json!({"$ref": format!("#/channels/events/messages/{pointer_id}")}));
        }
        let schemas: Map<String, Value> = self
            .shapes
            .iter()
            .map(|shape| {
                let mut schema = object_schema(&shape.fields);
                if let Some(description) = &shape.description {
                    schema["description"] = json!(description);
                }
                (shape.name.clone(), schema)
            })
            .collect();
        json!({
            "asyncapi": "3.0.0",
            "info": {
                "title": "Ferry events",
                "version": env!("CARGO_PKG_VERSION"),
                "description": "Every event type and payload version of the platform's event catalogue. Ferry publishes its events to one Redis stream; each entry carries the event type, the payload version and the payload.",
            },
            "defaultContentType": "application/json",
            "channels": {
                "events": {
                    "address": STREAM_ADDRESS,
                    "title": "Event stream",
                    "description": "The Redis stream the relay publishes the transactional outbox to.",
                    "messages": channel_messages,
                },
            },
            "operations": {
                "publish": {
                    "action": "send",
                    "title": "Publish an event",
                    "channel": {"$ref": "#/channels/events"},
                    "messages": operation_messages,
                },
            },
            "components": {
                "schemas": schemas,
                "messages": component_messages,
            },
        })
    }
}

/// A JSON integer: no fraction and no exponent in the number as written (`1.0` and `1e3` are
/// not integers), of any size.
fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(number) => {
            number.is_i64()
                || number.is_u64()
                || number
                    .to_string()
                    .trim_start_matches('-')
                    .bytes()
                    .all(|byte| byte.is_ascii_digit())
        }
        _ => false,
    }
}

fn mismatch(expected: &str, found: &Value) -> String {
    let found = match found {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Number(number) => format!("the number {number}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    };
    format!("expected {expected}, found {found}")
}

/// The key of an event's message in the AsyncAPI document.
fn message_id(event: &EventSchema) -> String {
    format!("{}.{}", event.event_type, event.version)
}

/// Escapes a key for use in a JSON pointer (RFC 6901).
fn json_pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The JSON Schema of a closed object with these fields.
fn object_schema(fields: &[FieldSchema]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|field| (field.name.clone(), field_schema(field)))
        .collect();
    let required: Vec<&str> = fields
        .iter()
        .filter(|field| field.required)
        .map(|field| field.name.as_str())
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The JSON Schema of one field: its type, and null as well when the field is optional.
fn field_schema(field: &FieldSchema) -> Value {
    let mut schema = type_schema(&field.field_type);
    if !field.required {
        schema = match schema.get("type").and_then(Value::as_str) {
            Some(name) => {
                let name = name.to_owned();
                schema["type"] = json!([name, "null"]);
                schema
            }
            None => json!({"anyOf": [schema, {"type": "null"}]}),
        };
    }
    if field.inferred {
        schema["x-inferred"] = json!(true);
    }
    schema
}

fn type_schema(field_type: &FieldType) -> Value {
    match field_type {
        FieldType::String => json!({"type": "string"}),
        FieldType::Integer => json!({"type": "integer"}),
        FieldType::Boolean => json!({"type": "boolean"}),
        FieldType::Number => json!({"type": "number"}),
        FieldType::AnyObject => json!({"type": "object"}),
        FieldType::Array(element) => json!({"type": "array", "items": type_schema(element)}),
        FieldType::Object(fields) => object_schema(fields),
        FieldType::Shape(name) => {
            json!({"$ref": format!("#/components/schemas/{}", json_pointer_escape(name))})
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The file format (`catalogue.json`).

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    /// Where the catalogue comes from (informative).
    #[serde(default, rename = "source")]
    _source: Option<String>,
    #[serde(deserialize_with = "deserialize_shapes")]
    shapes: Vec<ShapeSchema>,
    events: Vec<EventSchema>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShapeEntry {
    #[serde(default)]
    description: Option<String>,
    #[serde(deserialize_with = "deserialize_fields")]
    fields: Vec<FieldSchema>,
}

/// A field as written in the file: `{"type": ..., "required": true, "inferred": true}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldEntry {
    #[serde(rename = "type")]
    field_type: FieldType,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    inferred: bool,
}

/// A JSON object read as its entries in file order, refusing duplicate keys.
struct OrderedEntries<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrderedEntries<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<T>(std::marker::PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for EntriesVisitor<T> {
            type Value = OrderedEntries<T>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, T)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, T>()? {
                    if entries.iter().any(|(existing, _)| *existing == key) {
                        return Err(de::Error::custom(format!("duplicate key {key}")));
                    }
                    entries.push((key, value));
                }
                Ok(OrderedEntries(entries))
            }
        }

        deserializer.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

fn deserialize_fields<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<FieldSchema>, D::Error> {
    let OrderedEntries(entries) = OrderedEntries::<FieldEntry>::deserialize(deserializer)?;
    Ok(entries
        .into_iter()
        .map(|(name, entry)| FieldSchema {
            name,
            field_type: entry.field_type,
            required: entry.required,
            inferred: entry.inferred,
        })
        .collect())
}

fn deserialize_shapes<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ShapeSchema>, D::Error> {
    let OrderedEntries(entries) = OrderedEntries::<ShapeEntry>::deserialize(deserializer)?;
    Ok(entries
        .into_iter()
        .map(|(name, entry)| ShapeSchema {
            name,
            description: entry.description,
            fields: entry.fields,
        })
        .collect())
}

const SIMPLE_TYPES: &[&str] = &["string", "integer", "boolean", "number", "object"];
const COMPOUND_TYPES: &[&str] = &["array", "object", "shape"];

/// A type is written as one of `SIMPLE_TYPES` or as a single-key object: `{"array": type}`,
/// `{"object": {field: ...}}` (a nested, closed object) or `{"shape": "Name"}`.
impl<'de> Deserialize<'de> for FieldType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TypeVisitor;

        impl<'de> Visitor<'de> for TypeVisitor {
            type Value = FieldType;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str(
                    "a type name or a single-key object ({\"array\": ...}, {\"object\": ...}, {\"shape\": ...})",
                )
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<FieldType, E> {
                match name {
                    "string" => Ok(FieldType::String),
                    "integer" => Ok(FieldType::Integer),
                    "boolean" => Ok(FieldType::Boolean),
                    "number" => Ok(FieldType::Number),
                    "object" => Ok(FieldType::AnyObject),
                    other => Err(E::unknown_variant(other, SIMPLE_TYPES)),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldType, A::Error> {
                let Some(kind) = map.next_key::<String>()? else {
                    return Err(de::Error::custom("a type object needs one key"));
                };
                let field_type = match kind.as_str() {
                    "array" => FieldType::Array(Box::new(map.next_value()?)),
                    "object" => FieldType::Object(map.next_value::<FieldsValue>()?.0),
                    "shape" => FieldType::Shape(map.next_value()?),
                    other => return Err(de::Error::unknown_variant(other, COMPOUND_TYPES)),
                };
                if map.next_key::<String>()?.is_some() {
                    return Err(de::Error::custom("a type object has exactly one key"));
                }
                Ok(field_type)
            }
        }

        deserializer.deserialize_any(TypeVisitor)
    }
}

/// The fields of a nested object type.
struct FieldsValue(Vec<FieldSchema>);

impl<'de> Deserialize<'de> for FieldsValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_fields(deserializer).map(FieldsValue)
    }
}

#[cfg(test)]
mod tests;
