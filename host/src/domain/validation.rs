//! Field-by-field validation of JSON request bodies.
//!
//! serde stops at the first problem; the API must report every field error at once, each with
//! the dot path of the offending input (`customers.0.landline`). An [`ObjectReader`] walks one
//! JSON object, takes the fields a payload knows, records an error for each one that is
//! missing, null, of the wrong type or out of bounds, and finally reports every field it was
//! not asked for as `unknown_field`. Readers for nested objects and arrays of objects add
//! their errors to their parent's, so one pass yields the complete list. It reads Ferry's
//! own bodies (the admin API's, API keys, operations teams); the real platform's request
//! documents are checked against their schema instead ([`super::request_document`]), and
//! report their errors in the same [`FieldError`]s.
//!
//! The real platform ignores fields it does not know. A read run through [`reading`] with
//! [`UnknownFields::Ignore`] does too, but never silently: every field it was not asked for
//! is collected by its dot path, for the answer to name.

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::str::FromStr;

/// One problem with one input field, in the API's error format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// Human-readable text; its wording may change.
    pub detail: String,
    /// Machine-readable, stable identifier.
    pub code: String,
    /// Dot path of the offending input; null for the request as a whole.
    #[schema(required = true)]
    pub attr: Option<String>,
}

impl FieldError {
    pub fn new(attr: impl Into<Option<String>>, code: &str, detail: impl Into<String>) -> Self {
        Self {
            detail: detail.into(),
            code: code.to_owned(),
            attr: attr.into(),
        }
    }
}

/// Every field error found in one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    pub fn single(error: FieldError) -> Self {
        Self(vec![error])
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn push(&mut self, error: FieldError) {
        self.0.push(error);
    }
    pub fn extend(&mut self, other: FieldErrors) {
        self.0.extend(other.0);
    }

    /// These errors of a part of a request at `path` (empty: the request itself), as errors
    /// of the request; an error of the whole part is one at `path`.
    pub fn under(self, path: &str) -> Self {
        if path.is_empty() {
            return self;
        }
        Self(
            self.0
                .into_iter()
                .map(|mut error| {
                    error.attr = Some(match error.attr {
                        Some(attr) => join(path, &attr),
                        None => path.to_owned(),
                    });
                    error
                })
                .collect(),
        )
    }
}

/// Whether a field must be present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Required,
    Optional,
    /// Optional, and `null` reads as absent (the real platform's `nullable` fields).
    Nullable,
}
pub use Presence::{Nullable, Optional, Required};

/// Bounds on a string field. Any character is allowed but NUL, as the real platform's REST
/// framework allows (it refuses only NUL, `ProhibitNullCharactersValidator`).
#[derive(Debug, Clone, Copy)]
pub struct StrRule {
    pub max_len: usize,
    pub allow_blank: bool,
}

impl StrRule {
    /// A non-blank string of at most `max_len` characters.
    pub const fn max(max_len: usize) -> Self {
        Self {
            max_len,
            allow_blank: false,
        }
    }
    /// A string of at most `max_len` characters that may be empty.
    pub const fn blank_ok(max_len: usize) -> Self {
        Self {
            max_len,
            allow_blank: true,
        }
    }
    /// Free text of at most `max_len` characters (over several lines, say).
    pub const fn text(max_len: usize) -> Self {
        Self::max(max_len)
    }
}

/// What a read does with fields it was not asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownFields {
    /// Each is an `unknown_field` error (a supplier set strict, the admin API).
    Refuse,
    /// Each is left out and named (the real platform's behaviour; the default for suppliers).
    Ignore,
}

thread_local! {
    /// The fields ignored by the [`reading`] running on this thread, if it ignores them.
    static IGNORED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// A use case's answer with the request fields it ignored (their dot paths; see [`reading`]).
/// [`Reported::under`] places them in a larger request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported<T> {
    pub value: T,
    pub ignored: Vec<String>,
}

impl<T> Reported<T> {
    pub fn map<U>(self, change: impl FnOnce(T) -> U) -> Reported<U> {
        Reported {
            value: change(self.value),
            ignored: self.ignored,
        }
    }

    /// The answer of a part of a request at `path`: the ignored fields' paths start with it.
    pub fn under(self, path: &str) -> Self {
        if path.is_empty() {
            return self;
        }
        Reported {
            value: self.value,
            ignored: self.ignored.iter().map(|attr| join(path, attr)).collect(),
        }
    }
}

/// Runs the synchronous read `read` with `policy`: with [`UnknownFields::Ignore`], the
/// readers in it leave unknown fields out and this returns their dot paths, in the order
/// met; with [`UnknownFields::Refuse`] they are errors and the list is empty. Reads nest: an
/// inner `reading` has its own list.
pub fn reading<T>(policy: UnknownFields, read: impl FnOnce() -> T) -> (T, Vec<String>) {
    /// Puts the outer reading's list back, also when `read` panics.
    struct Restore(Option<Vec<String>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            IGNORED.with(|ignored| *ignored.borrow_mut() = outer);
        }
    }
    let mine = match policy {
        UnknownFields::Refuse => None,
        UnknownFields::Ignore => Some(Vec::new()),
    };
    let restore = Restore(IGNORED.with(|ignored| ignored.replace(mine)));
    let value = read();
    let ignored = IGNORED.with(|ignored| ignored.borrow_mut().take());
    drop(restore);
    (value, ignored.unwrap_or_default())
}

/// Unknown fields found other than by an [`ObjectReader`] (a document checked against a JSON
/// Schema), by their dot paths: noted, and true, when the [`reading`] running on this thread
/// ignores them; false when they are to be refused.
pub fn ignore_unknown(attrs: &[String]) -> bool {
    IGNORED.with(|ignored| match ignored.borrow_mut().as_mut() {
        Some(ignored) => {
            ignored.extend(attrs.iter().cloned());
            true
        }
        None => false,
    })
}

/// Bounds on the number of items of an array field.
#[derive(Debug, Clone, Copy)]
pub struct Items {
    pub min: usize,
    pub max: usize,
}

pub fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Where a check stands in a JSON value as it walks it, written out as a dot path ([`join`]
/// of each step) only when asked: only for an error, so a valid value costs no string per
/// field.
#[derive(Debug, Clone, Copy)]
pub enum DotPath<'a> {
    Root,
    Key(&'a DotPath<'a>, &'a str),
    Index(&'a DotPath<'a>, usize),
}

impl std::fmt::Display for DotPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (parent, step) = match self {
            DotPath::Root => return Ok(()),
            DotPath::Key(parent, key) => (parent, (*key).to_owned()),
            DotPath::Index(parent, index) => (parent, index.to_string()),
        };
        f.write_str(&join(&parent.to_string(), &step))
    }
}

/// Reads the fields of one JSON object, collecting errors (see the module docs).
#[derive(Debug)]
pub struct ObjectReader<'a> {
    map: &'a Map<String, Value>,
    path: String,
    known: Vec<&'static str>,
    errors: FieldErrors,
}

impl<'a> ObjectReader<'a> {
    /// A reader for the body of a request; fails when the body is not a JSON object.
    pub fn root(value: &'a Value) -> Result<Self, FieldErrors> {
        Self::at(value, String::new()).map_err(FieldErrors::single)
    }

    /// A reader for an object met at `path` of a body but read on its own (one element of a
    /// list, a nested block): its errors and the fields it ignores carry that path.
    pub fn root_at(value: &'a Value, path: &str) -> Result<Self, FieldErrors> {
        Self::at(value, path.to_owned()).map_err(FieldErrors::single)
    }

    fn at(value: &'a Value, path: String) -> Result<Self, FieldError> {
        match value {
            Value::Object(map) => Ok(Self {
                map,
                path,
                known: Vec::new(),
                errors: FieldErrors::default(),
            }),
            other => Err(FieldError::new(
                (!path.is_empty()).then(|| path.clone()),
                "invalid",
                format!("Expected a JSON object, but got {}.", json_kind(other)),
            )),
        }
    }

    /// The dot path of this object itself (`notes.0`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The dot path of a field of this object.
    pub fn attr(&self, name: &str) -> String {
        join(&self.path, name)
    }

    /// Records an error found by a rule the caller applies itself.
    pub fn error(&mut self, attr: String, code: &str, detail: impl Into<String>) {
        self.errors.push(FieldError::new(attr, code, detail));
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Marks `name` as known and returns its value; records `required` or `null` errors.
    pub fn take(&mut self, name: &'static str, presence: Presence) -> Option<&'a Value> {
        self.known.push(name);
        match self.map.get(name) {
            None => {
                if presence == Required {
                    self.error(self.attr(name), "required", "This field is required.");
                }
                None
            }
            Some(Value::Null) if presence == Nullable => None,
            Some(Value::Null) => {
                self.error(self.attr(name), "null", "This field may not be null.");
                None
            }
            Some(value) => Some(value),
        }
    }

    fn wrong_type(&mut self, name: &str, expected: &str, got: &Value) {
        self.error(
            self.attr(name),
            "invalid",
            format!("Expected {expected}, but got {}.", json_kind(got)),
        );
    }

    pub fn string(
        &mut self,
        name: &'static str,
        presence: Presence,
        rule: StrRule,
    ) -> Option<String> {
        let value = self.take(name, presence)?;
        let Value::String(text) = value else {
            self.wrong_type(name, "a string", value);
            return None;
        };
        if !rule.allow_blank && text.trim().is_empty() {
            self.error(self.attr(name), "blank", "This field may not be blank.");
            return None;
        }
        let length = text.chars().count();
        if length > rule.max_len {
            self.error(
                self.attr(name),
                "max_length",
                format!(
                    "Ensure this field has no more than {} characters.",
                    rule.max_len
                ),
            );
            return None;
        }
        if text.contains('\0') {
            self.error(
                self.attr(name),
                "null_characters_not_allowed",
                "Null characters are not allowed.",
            );
            return None;
        }
        Some(text.clone())
    }

    pub fn boolean(&mut self, name: &'static str, presence: Presence) -> Option<bool> {
        let value = self.take(name, presence)?;
        match value {
            Value::Bool(flag) => Some(*flag),
            other => {
                self.wrong_type(name, "a boolean", other);
                None
            }
        }
    }

    pub fn integer(
        &mut self,
        name: &'static str,
        presence: Presence,
        min: i64,
        max: i64,
    ) -> Option<i64> {
        let value = self.take(name, presence)?;
        let Some(number) = value.as_i64() else {
            // An integer too large for 64 bits is out of range, not of the wrong type.
            let digits = value.as_number().map(|number| number.to_string());
            match digits.filter(|text| {
                text.trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            }) {
                Some(text) => self.error(
                    self.attr(name),
                    if text.starts_with('-') {
                        "min_value"
                    } else {
                        "max_value"
                    },
                    format!("Ensure this value is between {min} and {max}."),
                ),
                None => self.wrong_type(name, "an integer", value),
            }
            return None;
        };
        if number < min || number > max {
            self.error(
                self.attr(name),
                if number < min {
                    "min_value"
                } else {
                    "max_value"
                },
                format!("Ensure this value is between {min} and {max}."),
            );
            return None;
        }
        Some(number)
    }

    pub fn date(&mut self, name: &'static str, presence: Presence) -> Option<NaiveDate> {
        let value = self.take(name, presence)?;
        match value.as_str().and_then(parse_date) {
            Some(date) => Some(date),
            None => {
                self.error(
                    self.attr(name),
                    "invalid",
                    "Date has wrong format. Use one of these formats instead: YYYY-MM-DD.",
                );
                None
            }
        }
    }

    pub fn datetime(&mut self, name: &'static str, presence: Presence) -> Option<DateTime<Utc>> {
        let value = self.take(name, presence)?;
        match value.as_str().and_then(parse_datetime) {
            Some(moment) => Some(moment),
            None => {
                self.error(
                    self.attr(name),
                    "invalid",
                    "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDTHH:MM:SSZ.",
                );
                None
            }
        }
    }

    /// A nested object; its errors carry its path.
    pub fn object<T>(
        &mut self,
        name: &'static str,
        presence: Presence,
        read: impl FnOnce(&mut ObjectReader<'a>) -> Option<T>,
    ) -> Option<T> {
        let value = self.take(name, presence)?;
        let path = self.attr(name);
        self.nested(value, path, read)
    }

    fn nested<T>(
        &mut self,
        value: &'a Value,
        path: String,
        read: impl FnOnce(&mut ObjectReader<'a>) -> Option<T>,
    ) -> Option<T> {
        match ObjectReader::at(value, path) {
            Ok(mut child) => {
                let result = read(&mut child);
                let ok = child.finish_unknown();
                self.errors.extend(child.errors);
                if ok { result } else { None }
            }
            Err(error) => {
                self.errors.push(error);
                None
            }
        }
    }

    /// The JSON array at `name`, checked against `items`; `None` when absent or invalid.
    pub fn array(
        &mut self,
        name: &'static str,
        presence: Presence,
        items: Items,
    ) -> Option<&'a Vec<Value>> {
        let value = self.take(name, presence)?;
        let Value::Array(elements) = value else {
            self.wrong_type(name, "a list of items", value);
            return None;
        };
        if elements.len() < items.min {
            let detail = if items.min == 1 {
                "This list may not be empty.".to_owned()
            } else {
                format!("Ensure this field has at least {} elements.", items.min)
            };
            self.error(self.attr(name), "min_length", detail);
            return None;
        }
        if elements.len() > items.max {
            self.error(
                self.attr(name),
                "max_length",
                format!("Ensure this field has no more than {} elements.", items.max),
            );
            return None;
        }
        Some(elements)
    }

    /// An array of objects, each read by `read` at path `name.<index>`.
    pub fn object_array<T>(
        &mut self,
        name: &'static str,
        presence: Presence,
        items: Items,
        mut read: impl FnMut(&mut ObjectReader<'a>) -> Option<T>,
    ) -> Option<Vec<T>> {
        let elements = self.array(name, presence, items)?;
        let base = self.attr(name);
        let mut out = Vec::with_capacity(elements.len());
        let mut all_ok = true;
        for (index, element) in elements.iter().enumerate() {
            match self.nested(element, join(&base, &index.to_string()), &mut read) {
                Some(item) => out.push(item),
                None => all_ok = false,
            }
        }
        all_ok.then_some(out)
    }

    /// Deals with every key that no getter asked for: an `unknown_field` error each, or,
    /// inside a [`reading`] that ignores them, their paths noted. True when no error.
    fn finish_unknown(&mut self) -> bool {
        let mut ok = !self.has_errors();
        let unknown: Vec<String> = self
            .map
            .keys()
            .filter(|key| !self.known.contains(&key.as_str()))
            .map(|key| self.attr(key))
            .collect();
        if unknown.is_empty() {
            return ok;
        }
        if !ignore_unknown(&unknown) {
            for attr in unknown {
                ok = false;
                self.error(attr, "unknown_field", "This field is not allowed.");
            }
        }
        ok
    }

    /// Ends the read: every error found, or the value `build` makes from the fields read.
    pub fn finish<T>(mut self, build: impl FnOnce() -> Option<T>) -> Result<T, FieldErrors> {
        self.finish_unknown();
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        build().ok_or_else(|| {
            FieldErrors::single(FieldError::new(
                None,
                "invalid",
                "The request could not be read.",
            ))
        })
    }
}

/// Why a decimal could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalError {
    NotANumber,
    TooManyPlaces,
}

/// Parses a JSON number (kept as its literal text) or a decimal string exactly.
pub fn parse_decimal_value(value: &Value, max_places: u32) -> Result<Decimal, DecimalError> {
    let text = match value {
        Value::Number(number) => number.to_string(),
        Value::String(text) => text.trim().to_owned(),
        _ => return Err(DecimalError::NotANumber),
    };
    parse_decimal_text(&text, max_places)
}

/// Parses decimal text exactly (`12.3`, `-0.10`, `1e3`), rejecting more than `max_places`
/// significant decimal places.
pub fn parse_decimal_text(text: &str, max_places: u32) -> Result<Decimal, DecimalError> {
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'+');
    let parsed = if plain {
        Decimal::from_str_exact(text)
    } else if text.bytes().any(|b| b == b'e' || b == b'E') {
        Decimal::from_scientific(text)
    } else {
        return Err(DecimalError::NotANumber);
    };
    let amount = parsed.map_err(|_| DecimalError::NotANumber)?.normalize();
    if amount.scale() > max_places {
        return Err(DecimalError::TooManyPlaces);
    }
    Ok(amount)
}

/// `YYYY-MM-DD`, exactly.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    if text.len() != 10 {
        return None;
    }
    NaiveDate::from_str(text).ok()
}

/// An RFC 3339 datetime (the API writes `YYYY-MM-DDTHH:MM:SSZ`), converted to UTC.
pub fn parse_datetime(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|moment| moment.with_timezone(&Utc))
}

pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// `(attr, code)` of each error, `""` for the request's own (for tests).
#[cfg(test)]
pub fn codes(errors: &FieldErrors) -> Vec<(String, String)> {
    errors
        .0
        .iter()
        .map(|e| (e.attr.clone().unwrap_or_default(), e.code.clone()))
        .collect()
}

/// `expected` as [`codes`] gives it (for tests).
#[cfg(test)]
pub fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(attr, code)| ((*attr).to_owned(), (*code).to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collects_every_error_with_its_path() {
        let body = json!({"name": "", "nested": {"n": 5, "extra": 1}, "list": [{"a": "x"}, 3], "bogus": true});
        let mut reader = ObjectReader::root(&body).expect("object");
        let _ = reader.string("name", Required, StrRule::max(5));
        let _ = reader.object("nested", Required, |o| {
            o.string("n", Required, StrRule::max(5))
        });
        let _ = reader.object_array("list", Required, Items { min: 1, max: 5 }, |o| {
            o.string("a", Required, StrRule::max(5))
        });
        let _ = reader.string("missing", Required, StrRule::max(5));
        let errors = reader.finish(|| Some(())).expect_err("errors");
        let found: Vec<(Option<&str>, &str)> = errors
            .0
            .iter()
            .map(|e| (e.attr.as_deref(), e.code.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![
                (Some("name"), "blank"),
                (Some("nested.n"), "invalid"),
                (Some("nested.extra"), "unknown_field"),
                (Some("list.1"), "invalid"),
                (Some("missing"), "required"),
                (Some("bogus"), "unknown_field"),
            ]
        );
    }

    #[test]
    fn an_ignoring_read_names_the_unknown_fields_and_keeps_the_other_errors() {
        let body = json!({"name": "ok", "nested": {"n": "x", "extra": 1}, "list": [{"a": "x", "b": 2}], "bogus": true, "missing_too": null});
        let read = || {
            let mut reader = ObjectReader::root(&body).expect("object");
            let name = reader.string("name", Required, StrRule::max(5));
            let _ = reader.object("nested", Required, |o| {
                o.string("n", Required, StrRule::max(5))
            });
            let _ = reader.object_array("list", Required, Items { min: 1, max: 5 }, |o| {
                o.string("a", Required, StrRule::max(5))
            });
            let _ = reader.string("missing_too", Nullable, StrRule::max(5));
            reader.finish(|| name)
        };
        let (read_ok, ignored) = reading(UnknownFields::Ignore, read);
        assert_eq!(read_ok.expect("no errors"), "ok");
        assert_eq!(ignored, ["nested.extra", "list.0.b", "bogus"]);
        // Refusing: the same fields are errors, and nothing is noted.
        let (refused, ignored) = reading(UnknownFields::Refuse, read);
        let codes: Vec<_> = refused
            .expect_err("unknown fields")
            .0
            .into_iter()
            .map(|error| (error.attr.unwrap_or_default(), error.code))
            .collect();
        assert_eq!(codes.len(), 3, "{codes:?}");
        assert!(codes.iter().all(|(_, code)| code == "unknown_field"));
        assert!(ignored.is_empty());
        // Outside any reading, readers refuse (the admin API's readers).
        assert!(read().is_err());
    }

    #[test]
    fn readers_rooted_at_a_path_prefix_their_errors_and_ignored_fields() {
        let element = json!({"id": "T-1", "extra": 1});
        let ((), ignored) = reading(UnknownFields::Ignore, || {
            let mut reader = ObjectReader::root_at(&element, "transactions.3").expect("object");
            let _ = reader.string("id", Required, StrRule::max(5));
            let _ = reader.finish(|| Some(()));
        });
        assert_eq!(ignored, ["transactions.3.extra"]);
        // Its errors carry the path too, and so does "not an object".
        let mut reader = ObjectReader::root_at(&element, "transactions.3").expect("object");
        let _ = reader.string("missing", Required, StrRule::max(5));
        let _ = reader.string("id", Required, StrRule::max(5));
        let errors = reader.finish(|| Some(())).expect_err("errors");
        let attrs: Vec<_> = errors.0.iter().map(|error| error.attr.clone()).collect();
        assert_eq!(
            attrs,
            [
                Some("transactions.3.missing".to_owned()),
                Some("transactions.3.extra".to_owned())
            ]
        );
        let refused = ObjectReader::root_at(&json!(7), "task_params").expect_err("not an object");
        assert_eq!(refused.0[0].attr.as_deref(), Some("task_params"));
        assert_eq!(refused.0[0].code, "invalid");
    }

    #[test]
    fn decimals_are_exact() {
        let value: Value = serde_json::from_str("1234567.89").expect("json");
        assert_eq!(
            parse_decimal_value(&value, 2).map(|d| d.to_string()),
            Ok("1234567.89".to_owned())
        );
        let value: Value = serde_json::from_str("0.1").expect("json");
        assert_eq!(
            parse_decimal_value(&value, 2).map(|d| d.to_string()),
            Ok("0.1".to_owned())
        );
        assert_eq!(
            parse_decimal_text("1.005", 2),
            Err(DecimalError::TooManyPlaces)
        );
        assert_eq!(
            parse_decimal_text("1.500", 2).map(|d| d.to_string()),
            Ok("1.5".to_owned())
        );
        assert_eq!(parse_decimal_text("NaN", 2), Err(DecimalError::NotANumber));
        assert_eq!(parse_decimal_text("12,3", 2), Err(DecimalError::NotANumber));
        assert_eq!(
            parse_decimal_text("1e2", 2).map(|d| d.to_string()),
            Ok("100".to_owned())
        );
    }

    #[test]
    fn dates_are_strict() {
        assert!(parse_date("2024-02-29").is_some());
        assert!(parse_date("2023-02-29").is_none());
        assert!(parse_date("2024-2-9").is_none());
        assert!(parse_datetime("2024-01-01T10:00:00Z").is_some());
        assert!(parse_datetime("2024-01-01").is_none());
    }
}
