//! The request documents the real platform defines, checked as the real platform checks them.
//!
//! Each data-import body (the account, notes, transactions, historical statements, a payment
//! instruction) is a root of one JSON Schema extracted once from the real platform's own
//! OpenAPI document: `tools/extract-request-schemas.py` writes `request_schemas.json`, the one
//! place these shapes are written down (types, nullability, enumerations, lengths, required
//! fields, per-type variants, and Ferry's bounds on what it keeps). The OpenAPI document
//! describes each body with the same definitions (`api::openapi`).
//!
//! [`RequestDocument::check`] reports every problem at once, in the real platform's REST
//! framework codes, each at its dot path: the schema's, then the rules of the use case that
//! no schema states. Fields a document does not define are ignored and named inside a
//! [`super::validation::reading`] that ignores them, and refused otherwise; what is returned
//! is the document without them. The use cases then read the parts they act on with serde.

use super::validation::{DotPath, FieldError, FieldErrors, ignore_unknown, join, json_kind};
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::LazyLock;

/// One of the request bodies the real document defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestDocument {
    /// `EnergyAccount`: `validate-account/`, `create-or-update/` and the v2 accounts.
    Account,
    /// `AccountNote`: `notes/create/`.
    Notes,
    /// `HistoricalStatements`: `historical-statements/create/`.
    Statements,
    /// `LegacyPaymentInstruction`: `payment-instruction/create/`.
    PaymentInstruction,
    /// `Transactions`: `transactions/create/`.
    Transactions,
}

impl RequestDocument {
    pub const ALL: [RequestDocument; 5] = [
        RequestDocument::Account,
        RequestDocument::Notes,
        RequestDocument::Statements,
        RequestDocument::PaymentInstruction,
        RequestDocument::Transactions,
    ];

    /// The name of its root among the definitions (the real document's own name).
    pub fn root(self) -> &'static str {
        match self {
            RequestDocument::Account => "EnergyAccount",
            RequestDocument::Notes => "AccountNote",
            RequestDocument::Statements => "HistoricalStatements",
            RequestDocument::PaymentInstruction => "LegacyPaymentInstruction",
            RequestDocument::Transactions => "Transactions",
        }
    }

    /// Whether every string in it must have a character other than white space, as the real
    /// REST framework's character fields require by default (`blank`). The account document's
    /// fields are checked as the schema says (many of them may be empty there).
    fn refuses_blank(self) -> bool {
        self != RequestDocument::Account
    }

    /// Its place in [`RequestDocument::ALL`].
    fn index(self) -> usize {
        RequestDocument::ALL
            .iter()
            .position(|document| *document == self)
            .unwrap_or_default()
    }

    /// The names of its fields that take one of a list of values. The real REST framework's
    /// choice fields answer an empty string with `invalid_choice` unless the list has it (as
    /// some real lists do), never with `blank`: the list decides.
    fn choice_fields(self) -> &'static [String] {
        static CHOICES: LazyLock<Vec<Vec<String>>> = LazyLock::new(|| {
            RequestDocument::ALL
                .iter()
                .map(|document| {
                    let defs = &request_schemas()["$defs"];
                    let mut names = std::collections::BTreeSet::new();
                    let mut seen = std::collections::BTreeSet::new();
                    collect_choice_fields(defs, document.root(), &mut seen, &mut names);
                    names.into_iter().collect()
                })
                .collect()
        });
        &CHOICES[self.index()]
    }

    fn validator(self) -> &'static Validator {
        static VALIDATORS: LazyLock<Vec<Validator>> = LazyLock::new(|| {
            RequestDocument::ALL
                .iter()
                .map(|document| document.compile())
                .collect()
        });
        &VALIDATORS[self.index()]
    }

    fn compile(self) -> Validator {
        let schemas = request_schemas();
        let root = serde_json::json!({
            "$schema": schemas["$schema"],
            "$ref": format!("#/$defs/{}", self.root()),
            "$defs": schemas["$defs"],
        });
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .with_format("drf-datetime", is_drf_datetime)
            .with_format("drf-time", is_drf_time)
            .with_format("decimal", |text: &str| {
                text.chars().any(|c| c.is_ascii_digit())
            })
            .with_keyword("pattern", |_, pattern, _| {
                let bounds = pattern
                    .as_str()
                    .and_then(DecimalBounds::from_pattern)
                    .ok_or_else(|| {
                        ValidationError::custom(format!(
                            "{pattern} is not a decimal's pattern, the only kind the documents have"
                        ))
                    })?;
                Ok(Box::new(bounds))
            })
            .build(&root)
            .expect("request_schemas.json compiles")
    }

    /// Checks `body`: the schema, lists bounded by `max_items`, no blank strings where the
    /// document refuses them, no NUL characters, then `rules` (which look only at values of
    /// the type they expect, so that their errors come with the schema's). Returns the
    /// document without the unknown fields it ignored (`body`'s own, uncopied, when it has
    /// none), or every problem.
    pub fn check(
        self,
        body: &Value,
        max_items: usize,
        rules: impl FnOnce(&Map<String, Value>, &mut FieldErrors),
    ) -> Result<Cow<'_, Map<String, Value>>, FieldErrors> {
        let Value::Object(map) = body else {
            return Err(FieldErrors::single(FieldError::new(
                None,
                "invalid",
                format!("Expected a JSON object, but got {}.", json_kind(body)),
            )));
        };
        let mut errors = FieldErrors::default();
        let mut unknown: Vec<(String, String)> = Vec::new();
        // Most documents pass: a yes-or-no walk of the schema costs a fraction of collecting
        // its errors, which only a document that fails it needs.
        let schema_errors = if self.validator().is_valid(body) {
            None
        } else {
            Some(self.validator().iter_errors(body))
        };
        for error in schema_errors.into_iter().flatten() {
            match error.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    let at = error.instance_path().as_str().to_owned();
                    unknown.extend(unexpected.iter().map(|key| (at.clone(), key.clone())));
                }
                _ => errors.push(field_error(&error)),
            }
        }
        unknown.sort_by_cached_key(|(at, key)| position(body, at, key));
        let attrs: Vec<String> = unknown
            .iter()
            .map(|(at, key)| join(&dot_path(at), key))
            .collect();
        if !attrs.is_empty() && !ignore_unknown(&attrs) {
            for attr in attrs {
                errors.push(FieldError::new(
                    attr,
                    "unknown_field",
                    "This field is not allowed.",
                ));
            }
        }
        check_sizes(body, &DotPath::Root, max_items, &mut errors);
        if self.refuses_blank() {
            let context = StringCheck {
                unknown: unknown
                    .iter()
                    .map(|(object, name)| (dot_path(object), name.as_str()))
                    .collect(),
                choices: self.choice_fields(),
            };
            check_strings(body, &DotPath::Root, &context, &mut errors);
        }
        rules(map, &mut errors);
        if !errors.is_empty() {
            // In the order of the document, the request's own errors first.
            errors.0.sort_by_cached_key(|error| {
                error
                    .attr
                    .as_ref()
                    .map(|attr| position_of(body, attr.split('.').map(str::to_owned)))
            });
            // One error per field and code, as the real REST framework gives it (a value
            // can break a keyword of several of the schemas that apply to it).
            errors
                .0
                .dedup_by(|one, other| one.attr == other.attr && one.code == other.code);
            return Err(errors);
        }
        if unknown.is_empty() {
            return Ok(Cow::Borrowed(map));
        }
        let mut document = map.clone();
        for (at, key) in &unknown {
            let object = if at.is_empty() {
                Some(&mut document)
            } else {
                document_pointer_mut(&mut document, at)
            };
            if let Some(object) = object {
                object.remove(key);
            }
        }
        Ok(Cow::Owned(document))
    }
}

impl RequestDocument {
    /// [`RequestDocument::check`], then the parts a use case acts on, read with serde from
    /// the checked document (which the schema has made readable).
    pub fn read<T: DeserializeOwned>(
        self,
        body: &Value,
        max_items: usize,
        rules: impl FnOnce(&Map<String, Value>, &mut FieldErrors),
    ) -> Result<T, FieldErrors> {
        let read = match self.check(body, max_items, rules)? {
            Cow::Borrowed(_) => T::deserialize(body),
            Cow::Owned(document) => serde_json::from_value(Value::Object(document)),
        };
        read.map_err(|error| {
            FieldErrors::single(FieldError::new(None, "invalid", error.to_string()))
        })
    }
}

/// The account a data-adding body names: the supplier's code and the account's number there,
/// `external_account_number` or, where the real platform still takes it (notes and
/// transactions), its deprecated name `account_number`; when both are given,
/// `external_account_number` wins.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AccountReference {
    pub import_supplier: String,
    #[serde(default)]
    external_account_number: Option<String>,
    #[serde(default)]
    account_number: Option<String>,
}

impl AccountReference {
    /// The account's number at the import supplier.
    pub fn external_account_number(&self) -> &str {
        self.external_account_number
            .as_deref()
            .or(self.account_number.as_deref())
            .unwrap_or_default()
    }

    /// One of the two names is given (the real platform's request-level rule, a
    /// `non_field_errors` there); a body whose schema requires `external_account_number`
    /// has it checked there.
    pub fn check(document: &Map<String, Value>, errors: &mut FieldErrors) {
        if !document.contains_key("external_account_number")
            && !document.contains_key("account_number")
        {
            errors.push(FieldError::new(
                None,
                "account_number_or_external_account_number_required",
                "Either account_number or external_account_number must be provided.",
            ));
        }
    }
}

/// The elements of the array at `name` in `object` (none when it is missing or not one).
pub fn elements<'a>(object: &'a Map<String, Value>, name: &str) -> &'a [Value] {
    object
        .get(name)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Serde readers for the real document's formats, for the typed parts of checked documents.
pub mod formats {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, de::Error};

    /// An optional `drf-datetime` ([`super::parse_drf_datetime`]).
    pub fn datetime<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<DateTime<Utc>>, D::Error> {
        match Option::<String>::deserialize(deserializer)? {
            None => Ok(None),
            Some(text) => super::parse_drf_datetime(&text)
                .map(Some)
                .ok_or_else(|| D::Error::custom(format!("{text:?} is not a datetime"))),
        }
    }
}

/// The object at the JSON pointer `at` (not empty) inside `document`.
fn document_pointer_mut<'a>(
    document: &'a mut Map<String, Value>,
    at: &str,
) -> Option<&'a mut Map<String, Value>> {
    let mut steps = segments(at);
    let first = steps.next()?;
    let mut here = document.get_mut(&first)?;
    for step in steps {
        here = match here {
            Value::Object(map) => map.get_mut(&step)?,
            Value::Array(list) => list.get_mut(step.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    here.as_object_mut()
}

/// The extracted definitions (JSON Schema 2020-12, `$defs`), parsed once: the validators
/// check against them and the OpenAPI document describes the bodies with them.
pub fn request_schemas() -> &'static Value {
    static SCHEMAS: LazyLock<Value> = LazyLock::new(|| {
        serde_json::from_str(include_str!("request_schemas.json"))
            .expect("request_schemas.json is valid JSON")
    });
    &SCHEMAS
}

/// Compiles every document's validator now (each is otherwise compiled by its first read).
pub fn prepare() {
    for document in RequestDocument::ALL {
        document.validator();
    }
}

/// What [`check_strings`] leaves alone: the unknown fields (as dot paths of their object and
/// their names) and the choice fields.
struct StringCheck<'a> {
    unknown: Vec<(String, &'a str)>,
    choices: &'a [String],
}

impl StringCheck<'_> {
    /// Whether the field at `at` is a choice field.
    fn is_choice(&self, at: &DotPath<'_>) -> bool {
        let DotPath::Key(_, key) = at else {
            return false;
        };
        let field = key.rsplit('.').next().unwrap_or_default();
        self.choices.iter().any(|name| name == field)
    }
}

/// The fields with an `enum` in the definition `name` and those it refers to.
fn collect_choice_fields(
    defs: &Value,
    name: &str,
    seen: &mut std::collections::BTreeSet<String>,
    names: &mut std::collections::BTreeSet<String>,
) {
    fn walk(
        node: &Value,
        defs: &Value,
        seen: &mut std::collections::BTreeSet<String>,
        names: &mut std::collections::BTreeSet<String>,
    ) {
        match node {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    for (field, schema) in properties {
                        if schema.get("enum").is_some() {
                            names.insert(field.clone());
                        }
                    }
                }
                if let Some(Value::String(reference)) = map.get("$ref")
                    && let Some(name) = reference.strip_prefix("#/$defs/")
                {
                    collect_choice_fields(defs, name, seen, names);
                }
                for value in map.values() {
                    walk(value, defs, seen, names);
                }
            }
            Value::Array(list) => {
                for value in list {
                    walk(value, defs, seen, names);
                }
            }
            _ => {}
        }
    }
    if seen.insert(name.to_owned()) {
        walk(&defs[name], defs, seen, names);
    }
}

/// Every string of a document that refuses blank ones has a character other than white
/// space (the REST framework's `blank`; a choice field's list decides instead) and no NUL
/// (`null_characters_not_allowed`); the unknown fields, left out, are not looked at.
fn check_strings(
    value: &Value,
    at: &DotPath<'_>,
    context: &StringCheck<'_>,
    errors: &mut FieldErrors,
) {
    match value {
        Value::String(text) if text.trim().is_empty() && !context.is_choice(at) => errors.push(
            FieldError::new(at.to_string(), "blank", "This field may not be blank."),
        ),
        Value::String(text) if text.contains('\0') => errors.push(FieldError::new(
            at.to_string(),
            "null_characters_not_allowed",
            "Null characters are not allowed.",
        )),
        Value::Array(list) => {
            for (index, item) in list.iter().enumerate() {
                check_strings(item, &DotPath::Index(at, index), context, errors);
            }
        }
        Value::Object(map) => {
            // Written out only where the document has unknown fields.
            let here = (!context.unknown.is_empty()).then(|| at.to_string());
            for (key, item) in map {
                let unknown = here.as_ref().is_some_and(|here| {
                    context
                        .unknown
                        .iter()
                        .any(|(object, name)| name == key && object == here)
                });
                if !unknown {
                    check_strings(item, &DotPath::Key(at, key), context, errors);
                }
            }
        }
        _ => {}
    }
}

/// Where the field `key` of the object at the JSON pointer `at` stands in the document, for
/// naming unknown fields in the order they are met: the index of each step in its object or
/// array.
fn position(document: &Value, at: &str, key: &str) -> Vec<usize> {
    position_of(
        document,
        segments(at).chain(std::iter::once(key.to_owned())),
    )
}

/// Where the field at the path `steps` stands in the document (as far as it exists there).
fn position_of(document: &Value, path: impl Iterator<Item = String>) -> Vec<usize> {
    let mut steps = Vec::new();
    let mut here = document;
    for segment in path {
        let (index, next) = match here {
            Value::Object(map) => match map.iter().position(|(name, _)| *name == segment) {
                Some(index) => (index, &map[&segment]),
                None => break,
            },
            Value::Array(list) => match segment
                .parse::<usize>()
                .ok()
                .and_then(|index| Some((index, list.get(index)?)))
            {
                Some(found) => found,
                None => break,
            },
            _ => break,
        };
        steps.push(index);
        here = next;
    }
    steps
}

/// The steps of a JSON pointer, unescaped (an empty key is a step too).
fn segments(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|part| part.replace("~1", "/").replace("~0", "~"))
}

/// The dot path of a JSON pointer (`/customers/0/email` is `customers.0.email`).
fn dot_path(pointer: &str) -> String {
    segments(pointer).collect::<Vec<_>>().join(".")
}

/// One schema error in the real platform's codes and wording.
fn field_error(error: &ValidationError<'_>) -> FieldError {
    use ValidationErrorKind as Kind;
    let at = dot_path(error.instance_path().as_str());
    let here = (!at.is_empty()).then(|| at.clone());
    let instance = error.instance().as_ref();
    match error.kind() {
        Kind::Required { property } => FieldError::new(
            join(&at, property.as_str().unwrap_or_default()),
            "required",
            "This field is required.",
        ),
        Kind::Type { .. } if instance.is_null() => {
            FieldError::new(here, "null", "This field may not be null.")
        }
        Kind::Type { .. } => FieldError::new(here, "invalid", error.to_string()),
        Kind::Enum { .. } => FieldError::new(
            here,
            "invalid_choice",
            format!("{instance} is not a valid choice."),
        ),
        Kind::MaxLength { limit } => FieldError::new(
            here,
            "max_length",
            format!("Ensure this field has no more than {limit} characters."),
        ),
        Kind::MinLength { limit } => FieldError::new(
            here,
            "min_length",
            format!("Ensure this field has at least {limit} characters."),
        ),
        Kind::MaxItems { limit } => FieldError::new(
            here,
            "max_length",
            format!("Ensure this field has no more than {limit} elements."),
        ),
        Kind::MinItems { limit } => FieldError::new(
            here,
            "min_length",
            format!("Ensure this field has at least {limit} elements."),
        ),
        Kind::Maximum { limit } | Kind::ExclusiveMaximum { limit } => FieldError::new(
            here,
            "max_value",
            format!("Ensure this value is less than or equal to {limit}."),
        ),
        Kind::Minimum { limit } | Kind::ExclusiveMinimum { limit } => FieldError::new(
            here,
            "min_value",
            format!("Ensure this value is greater than or equal to {limit}."),
        ),
        Kind::Format { format } => FieldError::new(here, "invalid", format_detail(format)),
        Kind::Custom { keyword, message } if keyword == "pattern" => {
            match DecimalBounds::from_pattern(message).and_then(|bounds| bounds.fault(instance)) {
                Some((code, detail)) => FieldError::new(here, code, detail),
                None => FieldError::new(here, "invalid", "A valid number is required."),
            }
        }
        _ => FieldError::new(here, "invalid", error.to_string()),
    }
}

fn format_detail(format: &str) -> String {
    match format {
        "date" => "Date has wrong format. Use one of these formats instead: YYYY-MM-DD.".into(),
        "drf-datetime" => "Datetime has wrong format. Use one of these formats instead: \
                           YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
            .into(),
        "drf-time" => "Time has wrong format. Use one of these formats instead: \
                       hh:mm[:ss[.uuuuuu]]."
            .into(),
        "email" => "Enter a valid email address.".into(),
        "decimal" => "A valid number is required.".into(),
        other => format!("Not a valid {other}."),
    }
}

/// Every `pattern` in the documents bounds a decimal, `^-?\d{0,W}(?:\.\d{0,P})?$`: at most
/// `W` digits before the point and `P` after it. Ferry checks it in place of JSON Schema's own
/// `pattern` keyword (which looks at strings only), for strings and JSON numbers alike, and
/// names the bound that was broken as the real REST framework's decimal field does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DecimalBounds {
    whole: usize,
    places: usize,
}

impl DecimalBounds {
    fn from_pattern(pattern: &str) -> Option<Self> {
        let bounds: Vec<usize> = pattern
            .split("{0,")
            .skip(1)
            .filter_map(|rest| rest.split('}').next()?.parse().ok())
            .collect();
        let [whole, places] = bounds[..] else {
            return None;
        };
        let bounds = Self { whole, places };
        (pattern == bounds.pattern()).then_some(bounds)
    }

    /// The pattern these bounds are read from.
    fn pattern(self) -> String {
        format!(r"^-?\d{{0,{}}}(?:\.\d{{0,{}}})?$", self.whole, self.places)
    }

    /// What is wrong with `value` (a string or a number; other types are the schema's to
    /// refuse): its error code and detail.
    fn fault(self, value: &Value) -> Option<(&'static str, String)> {
        let (whole, places) = match value {
            Value::String(text) => {
                let unsigned = text.strip_prefix('-').unwrap_or(text);
                let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
                let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
                if !digits(whole) || !digits(fraction) {
                    return Some(("invalid", "A valid number is required.".to_owned()));
                }
                (whole.len(), fraction.len())
            }
            Value::Number(number) => {
                let Ok(exact) = super::validation::parse_decimal_text(&number.to_string(), 28)
                else {
                    return Some(("invalid", "A valid number is required.".to_owned()));
                };
                let integral = exact.trunc().abs();
                let whole = if integral.is_zero() {
                    0
                } else {
                    integral.to_string().len()
                };
                (whole, exact.scale() as usize)
            }
            _ => return None,
        };
        if places > self.places {
            Some((
                "max_decimal_places",
                format!(
                    "Ensure that there are no more than {} decimal places.",
                    self.places
                ),
            ))
        } else if whole > self.whole {
            Some((
                "max_whole_digits",
                format!(
                    "Ensure that there are no more than {} digits before the decimal point.",
                    self.whole
                ),
            ))
        } else {
            None
        }
    }
}

impl<'i> jsonschema::Keyword<'i> for DecimalBounds {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        match self.fault(instance) {
            None => Ok(()),
            // The bounds travel in the message; `field_error` names the one broken.
            Some(_) => Err(ValidationError::custom(self.pattern())),
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.fault(instance).is_none()
    }
}

/// Every list in the document holds at most `max` elements.
fn check_sizes(value: &Value, at: &DotPath<'_>, max: usize, errors: &mut FieldErrors) {
    match value {
        Value::Array(list) => {
            if list.len() > max {
                errors.push(FieldError::new(
                    at.to_string(),
                    "max_length",
                    format!("Ensure this field has no more than {max} elements."),
                ));
                return;
            }
            for (index, item) in list.iter().enumerate() {
                check_sizes(item, &DotPath::Index(at, index), max, errors);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                check_sizes(item, &DotPath::Key(at, key), max, errors);
            }
        }
        _ => {}
    }
}

/// ISO 8601 as the real REST framework reads a datetime: a date alone (midnight), or a date
/// and a time (`T` or a space between), seconds and fractions optional, an offset or `Z`
/// optional (none is UTC, Ferry's time zone).
pub fn parse_drf_datetime(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Some(date.and_time(NaiveTime::MIN).and_utc());
    }
    let local_text = without_offset(text, 10);
    let offset = offset_of(&text[local_text.len()..])?;
    let local = local_text.replacen('t', "T", 1);
    let naive = [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|format| NaiveDateTime::parse_from_str(&local, format).ok())?;
    let moment = naive.and_local_timezone(offset).single()?;
    Some(moment.with_timezone(&Utc))
}

fn is_drf_datetime(text: &str) -> bool {
    parse_drf_datetime(text).is_some()
}

/// The offset [`without_offset`] took off: none or `Z` is UTC, else `±HH[[:]MM]`.
fn offset_of(suffix: &str) -> Option<FixedOffset> {
    let Some(sign) = suffix.chars().next().filter(|c| matches!(c, '+' | '-')) else {
        return FixedOffset::east_opt(0);
    };
    let digits = suffix[1..].replace(':', "");
    let hours: i32 = digits.get(..2)?.parse().ok()?;
    let minutes: i32 = digits
        .get(2..)
        .filter(|m| !m.is_empty())
        .map_or(Some(0), |m| m.parse().ok())?;
    let seconds = (hours * 60 + minutes) * 60;
    FixedOffset::east_opt(if sign == '-' { -seconds } else { seconds })
}

/// `text` without a trailing `Z` or `±HH[:MM]` offset (a sign past `after` bytes).
fn without_offset(text: &str, after: usize) -> &str {
    if let Some(local) = text.strip_suffix(['Z', 'z']) {
        return local;
    }
    match text.rfind(['+', '-']) {
        Some(sign) if sign > after => {
            let offset = &text[sign + 1..];
            let digits = offset.replace(':', "");
            if matches!(digits.len(), 2 | 4) && digits.chars().all(|c| c.is_ascii_digit()) {
                &text[..sign]
            } else {
                text
            }
        }
        _ => text,
    }
}

/// `hh:mm[:ss[.uuuuuu]]`, an offset or `Z` optional.
fn is_drf_time(text: &str) -> bool {
    let local = without_offset(text, 4);
    ["%H:%M:%S%.f", "%H:%M"]
        .iter()
        .any(|format| NaiveTime::parse_from_str(local, format).is_ok())
}

#[cfg(test)]
mod tests;
