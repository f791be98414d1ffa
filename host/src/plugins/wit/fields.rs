//! Reading a record's fields from a request's JSON and writing a hook's answer back over it,
//! both made to cost little on every hook call: what the readers and writers that
//! [`super::record`] makes are made of.
//!
//! - Into a hook, a record borrows its strings from the JSON ([`Fields`]): a number is passed
//!   as written.
//! - Out of it, the answer is written over the JSON it was read from ([`write_object`]): a
//!   field the hook left as it was keeps its value (a number stays a number), a changed one is
//!   replaced, and what becomes of the rest depends on what the record is written [`Within`]:
//!   a request's own record (the notes, transactions, statements and payment instruction of a
//!   data-adding request) drops the keys the WIT does not carry and removes a field the answer
//!   has as `None`; part of the account document keeps every key the record does not carry,
//!   and leaves a field the document left out or sent as `null` so when the answer has it as
//!   `None`. The JSON that comes out is the hook's answer in request shape; Ferry's readers
//!   validate it again.

use serde_json::{Map, Value};

/// The one field of an element of a note's `document_paths`.
const DOCUMENT_PATH: [&str; 1] = ["document_path"];

/// A string, or a number as written.
pub fn as_text(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) => Some(text),
        Value::Number(number) => Some(number.as_str()),
        _ => None,
    }
}

/// The elements of an array (none when `value` is not one).
pub fn elements(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn position(names: &[&str], key: &str) -> Option<usize> {
    names.iter().position(|name| *name == key)
}

/// The fields of a JSON object that a WIT record carries, found in one pass over the object.
/// A record has a few dozen fields at most, so finding one by name compares a few short
/// strings, which costs less than hashing the name for the object's own map (a hook call reads
/// and writes some fifty fields).
pub struct Fields<'v, const N: usize> {
    names: &'static [&'static str; N],
    values: [Option<&'v Value>; N],
}

impl<'v, const N: usize> Fields<'v, N> {
    pub fn of(value: &'v Value, names: &'static [&'static str; N]) -> Self {
        let mut values = [None; N];
        if let Value::Object(object) = value {
            for (key, field) in object {
                if let Some(index) = position(names, key) {
                    values[index] = Some(field);
                }
            }
        }
        Self { names, values }
    }

    pub fn get(&self, name: &str) -> Option<&'v Value> {
        let index = position(self.names, name);
        debug_assert!(index.is_some(), "`{name}` is not among {:?}", self.names);
        self.values[index?]
    }

    /// A string field, or a number as written.
    pub fn optional(&self, name: &str) -> Option<&'v str> {
        self.get(name).and_then(as_text)
    }

    pub fn text(&self, name: &str) -> &'v str {
        self.optional(name).unwrap_or_default()
    }

    pub fn flag(&self, name: &str) -> bool {
        self.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    /// The elements of the array field `name` (none when it is missing or not an array).
    pub fn items(&self, name: &str) -> &'v [Value] {
        self.optional_items(name).unwrap_or_default()
    }

    /// The elements of the array field `name` when it is there (none when it is not an
    /// array, `null` included).
    pub fn optional_items(&self, name: &str) -> Option<&'v [Value]> {
        self.get(name).map(elements)
    }

    /// The object field `name`, when it is one.
    pub fn object(&self, name: &str) -> Option<&'v Value> {
        self.get(name).filter(|value| value.is_object())
    }

    /// The strings (or numbers as written) of the array field `name`.
    pub fn strings(&self, name: &str) -> Vec<&'v str> {
        self.items(name).iter().filter_map(as_text).collect()
    }

    /// The paths of the document list `name` (`[{"document_path": "a.pdf"}, ...]`); an element
    /// without one reads as an empty path.
    pub fn paths(&self, name: &str) -> Vec<&'v str> {
        self.items(name)
            .iter()
            .map(|path| Fields::of(path, &DOCUMENT_PATH).text(DOCUMENT_PATH[0]))
            .collect()
    }
}

/// Whether `value` already reads as `text`: the same string, or a number written so.
fn reads_as(value: &Value, text: &str) -> bool {
    as_text(value) == Some(text)
}

fn write_text(slot: &mut Value, text: String) {
    if !reads_as(slot, &text) {
        *slot = Value::String(text);
    }
}

/// The fields of a JSON object being written over, found in one pass (as [`Fields`]). Fields
/// the object lacks are added, and fields removed, once the writing is done.
pub struct FieldsMut<'v, const N: usize> {
    names: &'static [&'static str; N],
    slots: [Option<&'v mut Value>; N],
    added: Vec<(&'static str, Value)>,
    removed: Vec<&'static str>,
    /// Whether the object is a request's own record or part of the account document.
    within: Within,
}

impl<const N: usize> FieldsMut<'_, N> {
    /// Writes field `name` with `write`, which sees what is there (`null` when it is missing).
    fn put(&mut self, name: &'static str, write: impl FnOnce(&mut Value)) {
        let index = position(self.names, name);
        debug_assert!(index.is_some(), "`{name}` is not among {:?}", self.names);
        match index.and_then(|index| self.slots[index].as_deref_mut()) {
            Some(slot) => write(slot),
            None => {
                let mut slot = Value::Null;
                write(&mut slot);
                self.added.push((name, slot));
            }
        }
    }

    fn remove(&mut self, name: &'static str) {
        if position(self.names, name).is_some_and(|index| self.slots[index].is_some()) {
            self.removed.push(name);
        }
    }

    pub fn text(&mut self, name: &'static str, text: String) {
        self.put(name, |slot| write_text(slot, text));
    }

    /// Whether the object has field `name` with a value other than `null`.
    fn given(&self, name: &'static str) -> bool {
        position(self.names, name)
            .and_then(|index| self.slots[index].as_deref())
            .is_some_and(|slot| !slot.is_null())
    }

    /// A field the record types as text but the request may leave out (a `0.1.0` plugin
    /// cannot say "absent"): an empty text over a missing or `null` field leaves it so.
    pub fn text_if_given(&mut self, name: &'static str, text: String) {
        if !text.is_empty() || self.given(name) {
            self.text(name, text);
        }
    }

    /// As [`Self::text_if_given`], for an integer field: a changed value that reads as an
    /// integer is written as a JSON number.
    pub fn integer_if_given(&mut self, name: &'static str, text: String) {
        if text.is_empty() && !self.given(name) {
            return;
        }
        self.put(name, |slot| {
            if !reads_as(slot, &text) {
                *slot = text
                    .parse::<i64>()
                    .map_or_else(|_| Value::String(text), Value::from);
            }
        });
    }

    /// A text field, removed when `None` (in part of the account document, as
    /// [`Self::nullable`]).
    pub fn optional(&mut self, name: &'static str, text: Option<String>) {
        match text {
            Some(text) => self.text(name, text),
            None if self.within == Within::Document => self.nullable(name, None),
            None => self.remove(name),
        }
    }

    /// A field the document may hold as `null`: `None` removes it unless it is missing or
    /// `null` already (so that an unchanged answer leaves it as it was).
    fn nullable(&mut self, name: &'static str, text: Option<String>) {
        match text {
            Some(text) => self.text(name, text),
            None if self.given(name) => self.remove(name),
            None => {}
        }
    }

    /// A nested record written over what is there by `write`, or (`None`) removed as
    /// [`Self::nullable`] is.
    pub fn nullable_record<T>(
        &mut self,
        name: &'static str,
        record: Option<T>,
        write: impl FnOnce(&mut Value, T),
    ) {
        match record {
            Some(record) => self.put(name, |slot| write(slot, record)),
            None if self.given(name) => self.remove(name),
            None => {}
        }
    }

    /// A list written over the array that is there; an empty one over a missing field leaves
    /// it missing.
    pub fn list_if_given<T>(
        &mut self,
        name: &'static str,
        items: Vec<T>,
        write: impl FnMut(&mut Value, T),
    ) {
        if !items.is_empty() || self.given(name) {
            self.list(name, Some(items), write);
        }
    }

    pub fn flag(&mut self, name: &'static str, flag: bool) {
        self.put(name, |slot| *slot = Value::Bool(flag));
    }

    /// A list written over the array that is there, element by element (`None`: removed, as
    /// [`Self::optional`] removes a text).
    pub fn list<T>(
        &mut self,
        name: &'static str,
        items: Option<Vec<T>>,
        write: impl FnMut(&mut Value, T),
    ) {
        match items {
            Some(items) => self.put(name, |slot| write_array(slot, items, write)),
            None if self.within == Within::Document && !self.given(name) => {}
            None => self.remove(name),
        }
    }

    /// A list of strings, left out when empty (as the API does for `units`; in part of the
    /// account document, as [`Self::list_if_given`]).
    pub fn strings(&mut self, name: &'static str, strings: Vec<String>) {
        self.string_list(name, strings, write_text);
    }

    /// A note's document paths (`[{"document_path": "a.pdf"}, ...]`), left out when empty as
    /// [`Self::strings`] are.
    pub fn paths(&mut self, name: &'static str, paths: Vec<String>) {
        self.string_list(name, paths, |slot, path| {
            write_object(slot, &DOCUMENT_PATH, Within::Request, |fields| {
                fields.text(DOCUMENT_PATH[0], path);
            });
        });
    }

    fn string_list(
        &mut self,
        name: &'static str,
        strings: Vec<String>,
        write: fn(&mut Value, String),
    ) {
        match self.within {
            Within::Document => self.list_if_given(name, strings, write),
            Within::Request => self.list(name, (!strings.is_empty()).then_some(strings), write),
        }
    }
}

/// What a record is written within, which says what writing it does with what its answer does
/// not say. A request's own record drops the object's fields the record does not carry, and
/// removes a field the answer has as `None`. Part of the account document keeps those fields,
/// and leaves a field it left out or sent as `null` so when the answer has it as `None`. A
/// nested record is written within what its parent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Within {
    /// The notes, transactions, statements or payment instruction of a data-adding request.
    Request,
    /// The account document (the account records of 0.2.0 and later).
    Document,
}

/// Writes a record over `value` with `write`: `value` becomes an object (an empty one first if
/// it was not one) holding the fields in `names` and, [`Within::Document`], every other field
/// it held.
pub fn write_object<const N: usize>(
    value: &mut Value,
    names: &'static [&'static str; N],
    within: Within,
    write: impl FnOnce(&mut FieldsMut<'_, N>),
) {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    let Value::Object(object) = value else {
        unreachable!("made an object above")
    };
    let mut foreign_keys = false;
    let mut fields = FieldsMut {
        names,
        slots: std::array::from_fn(|_| None),
        added: Vec::new(),
        removed: Vec::new(),
        within,
    };
    for (key, slot) in object.iter_mut() {
        match position(names, key) {
            Some(index) => fields.slots[index] = Some(slot),
            None => foreign_keys = true,
        }
    }
    write(&mut fields);
    let FieldsMut { added, removed, .. } = fields;
    let drop_foreign = foreign_keys && within == Within::Request;
    if drop_foreign || !removed.is_empty() {
        object.retain(|key, _| {
            (within == Within::Document || position(names, key).is_some())
                && !removed.contains(&key.as_str())
        });
    }
    for (name, value) in added {
        object.insert(name.to_owned(), value);
    }
}

/// Writes `items` over the array in `slot`, element by element (it becomes an array if it was
/// not one).
pub fn write_array<T>(slot: &mut Value, items: Vec<T>, mut write: impl FnMut(&mut Value, T)) {
    if !slot.is_array() {
        *slot = Value::Array(Vec::with_capacity(items.len()));
    }
    let Value::Array(array) = slot else {
        unreachable!("made an array above")
    };
    array.truncate(items.len());
    for (index, item) in items.into_iter().enumerate() {
        match array.get_mut(index) {
            Some(element) => write(element, item),
            None => {
                let mut element = Value::Null;
                write(&mut element, item);
                array.push(element);
            }
        }
    }
}
