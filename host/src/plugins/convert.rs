//! Conversions between the API's JSON shapes and the WIT records, both made to cost little on
//! every hook call:
//!
//! - into a hook, the [`wire`] records borrow their strings from the request's JSON (a number
//!   is passed as written);
//! - out of a hook, the owned result is written back over the request's own JSON: a field the
//!   hook left as it was keeps its value, a changed one is replaced, a `None` one is removed,
//!   and keys the WIT does not carry are dropped. The JSON that comes out is the hook's answer
//!   in request shape; Ferry's readers validate it again.
//!
//! A record that carries part of the account document (the account records of 0.2.0 and
//! later, [`super::account_document`], and the transactions of 0.3.0's account) is written
//! over the document the same way, except that every key the record does not carry stays and
//! a `None` over a field the document left out or sent as `null` leaves it so.

use super::bindings::latest::ferry::supplier_rules::types;
use super::wire;
use crate::domain::ports::AccountTarget;
use crate::domain::validation::{FieldError, FieldErrors};
use serde_json::{Map, Value};

/// A string, or a number as written.
pub(super) fn as_text(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) => Some(text),
        Value::Number(number) => Some(number.as_str()),
        _ => None,
    }
}

/// The elements of an array (none when `value` is not one).
pub(super) fn elements(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn position(names: &[&str], key: &str) -> Option<usize> {
    names.iter().position(|name| *name == key)
}

/// The fields of a JSON object that a WIT record carries, found in one pass over the object.
/// A record has a few dozen fields at most, so finding one by name compares a few short
/// strings, which costs less than hashing the name for the object's own map (a hook call reads
/// and writes some fifty fields).
pub(super) struct Fields<'v, const N: usize> {
    names: &'static [&'static str; N],
    values: [Option<&'v Value>; N],
}

impl<'v, const N: usize> Fields<'v, N> {
    pub(super) fn of(value: &'v Value, names: &'static [&'static str; N]) -> Self {
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

    pub(super) fn get(&self, name: &str) -> Option<&'v Value> {
        let index = position(self.names, name);
        debug_assert!(index.is_some(), "`{name}` is not among {:?}", self.names);
        self.values[index?]
    }

    /// A string field, or a number as written.
    pub(super) fn optional(&self, name: &str) -> Option<&'v str> {
        self.get(name).and_then(as_text)
    }

    pub(super) fn text(&self, name: &str) -> &'v str {
        self.optional(name).unwrap_or_default()
    }

    pub(super) fn flag(&self, name: &str) -> bool {
        self.get(name).and_then(Value::as_bool).unwrap_or(false)
    }

    /// The elements of the array field `name` (none when it is missing or not an array).
    pub(super) fn items(&self, name: &str) -> &'v [Value] {
        self.get(name).map(elements).unwrap_or_default()
    }

    /// The strings (or numbers as written) of the array field `name`.
    pub(super) fn strings(&self, name: &str) -> Vec<&'v str> {
        self.items(name).iter().filter_map(as_text).collect()
    }
}

/// The elements of a JSON array, converted.
pub fn list<'a, T>(value: &'a Value, convert: fn(&'a Value) -> T) -> Vec<T> {
    elements(value).iter().map(convert).collect()
}

pub fn field_errors(errors: Vec<types::FieldError>) -> FieldErrors {
    FieldErrors(
        errors
            .into_iter()
            .map(|error| {
                FieldError::new(
                    (!error.attr.is_empty()).then_some(error.attr),
                    &error.code,
                    error.detail,
                )
            })
            .collect(),
    )
}

pub fn account_ref(target: Option<&AccountTarget>) -> wire::AccountRef<'_> {
    match target {
        Some(target) => wire::AccountRef {
            import_supplier: &target.import_supplier,
            external_account_number: &target.external_account_number,
            platform_account_number: &target.platform_account_number,
        },
        None => wire::AccountRef {
            import_supplier: "",
            external_account_number: "",
            platform_account_number: "",
        },
    }
}

const NOTE_FIELDS: [&str; 5] = [
    "body",
    "document_paths",
    "created_at",
    "is_pinned",
    "unpin_at",
];
const DOCUMENT_FIELDS: [&str; 1] = ["document_path"];

pub fn note_to_wit(value: &Value) -> wire::Note<'_> {
    let note = Fields::of(value, &NOTE_FIELDS);
    wire::Note {
        body: note.optional("body"),
        document_paths: note
            .items("document_paths")
            .iter()
            .map(|path| Fields::of(path, &DOCUMENT_FIELDS).text("document_path"))
            .collect(),
        created_at: note.optional("created_at"),
        is_pinned: note.flag("is_pinned"),
        unpin_at: note.optional("unpin_at"),
    }
}

const TRANSACTION_FIELDS: [&str; 12] = [
    "transaction_id",
    "transaction_date",
    "amount",
    "type",
    "reason",
    "reference",
    "payment_type",
    "display_note",
    "note",
    "product_code",
    "line_items",
    "tax_items",
];
const LINE_ITEM_FIELDS: [&str; 7] = [
    "rate_band",
    "start_date",
    "end_date",
    "number_of_units",
    "net_amount",
    "price_per_unit",
    "units",
];
const TAX_ITEM_FIELDS: [&str; 5] = ["amount", "tax_type", "value_taxed", "rate", "unit_type"];

pub fn transaction_to_wit(value: &Value) -> wire::Transaction<'_> {
    let transaction = Fields::of(value, &TRANSACTION_FIELDS);
    let line_items = transaction.get("line_items").map(|line_items| {
        elements(line_items)
            .iter()
            .map(|item| {
                let item = Fields::of(item, &LINE_ITEM_FIELDS);
                wire::LineItem {
                    rate_band: item.text("rate_band"),
                    start_date: item.text("start_date"),
                    end_date: item.text("end_date"),
                    number_of_units: item.text("number_of_units"),
                    net_amount: item.text("net_amount"),
                    price_per_unit: item.text("price_per_unit"),
                    units: item.strings("units"),
                }
            })
            .collect()
    });
    let tax_items = transaction.get("tax_items").map(|tax_items| {
        elements(tax_items)
            .iter()
            .map(|item| {
                let item = Fields::of(item, &TAX_ITEM_FIELDS);
                wire::TaxItem {
                    amount: item.text("amount"),
                    tax_type: item.text("tax_type"),
                    value_taxed: item.text("value_taxed"),
                    rate: item.text("rate"),
                    unit_type: item.text("unit_type"),
                }
            })
            .collect()
    });
    wire::Transaction {
        transaction_id: transaction.text("transaction_id"),
        transaction_date: transaction.text("transaction_date"),
        amount: transaction.text("amount"),
        type_: transaction.text("type"),
        reason: transaction.optional("reason"),
        reference: transaction.optional("reference"),
        payment_type: transaction.optional("payment_type"),
        display_note: transaction.optional("display_note"),
        note: transaction.optional("note"),
        product_code: transaction.optional("product_code"),
        line_items,
        tax_items,
    }
}

const STATEMENT_FIELDS: [&str; 7] = [
    "bill_period_from_date",
    "bill_period_to_date",
    "statement_id",
    "issued_date",
    "number",
    "gross_amount",
    "statement_path",
];

pub fn statement_to_wit(value: &Value) -> wire::Statement<'_> {
    let statement = Fields::of(value, &STATEMENT_FIELDS);
    wire::Statement {
        bill_period_from_date: statement.text("bill_period_from_date"),
        bill_period_to_date: statement.text("bill_period_to_date"),
        statement_id: statement.text("statement_id"),
        issued_date: statement.text("issued_date"),
        number: statement.text("number"),
        gross_amount: statement.text("gross_amount"),
        statement_path: statement.optional("statement_path"),
    }
}

const INSTRUCTION_FIELDS: [&str; 3] = ["vendor", "reference", "type"];

pub fn instruction_to_wit(value: &Value) -> wire::PaymentInstruction<'_> {
    let instruction = Fields::of(value, &INSTRUCTION_FIELDS);
    wire::PaymentInstruction {
        vendor: instruction.text("vendor"),
        reference: instruction.text("reference"),
        type_: instruction.text("type"),
    }
}

// Writing a hook's answer back over the request.

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
pub(super) struct FieldsMut<'v, const N: usize> {
    names: &'static [&'static str; N],
    slots: [Option<&'v mut Value>; N],
    added: Vec<(&'static str, Value)>,
    removed: Vec<&'static str>,
    /// Whether the object is a request's own record or part of the account document.
    others: Others,
}

impl<const N: usize> FieldsMut<'_, N> {
    /// Writes field `name` with `write`, which sees what is there (`null` when it is missing).
    pub(super) fn put(&mut self, name: &'static str, write: impl FnOnce(&mut Value)) {
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

    pub(super) fn remove(&mut self, name: &'static str) {
        if position(self.names, name).is_some_and(|index| self.slots[index].is_some()) {
            self.removed.push(name);
        }
    }

    pub(super) fn text(&mut self, name: &'static str, text: String) {
        self.put(name, |slot| write_text(slot, text));
    }

    /// Whether the object has field `name` with a value other than `null`.
    pub(super) fn given(&self, name: &'static str) -> bool {
        position(self.names, name)
            .and_then(|index| self.slots[index].as_deref())
            .is_some_and(|slot| !slot.is_null())
    }

    /// A field the record types as text but the request may leave out (a `0.1.0` plugin
    /// cannot say "absent"): an empty text over a missing or `null` field leaves it so.
    fn text_if_given(&mut self, name: &'static str, text: String) {
        if !text.is_empty() || self.given(name) {
            self.text(name, text);
        }
    }

    /// As [`Self::text_if_given`], for an integer field: a changed value that reads as an
    /// integer is written as a JSON number.
    fn integer_if_given(&mut self, name: &'static str, text: String) {
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
    pub(super) fn optional(&mut self, name: &'static str, text: Option<String>) {
        match text {
            Some(text) => self.text(name, text),
            None if self.others == Others::Keep => self.nullable(name, None),
            None => self.remove(name),
        }
    }

    /// A field the document may hold as `null`: `None` removes it unless it is missing or
    /// `null` already (so that an unchanged answer leaves it as it was).
    pub(super) fn nullable(&mut self, name: &'static str, text: Option<String>) {
        match text {
            Some(text) => self.text(name, text),
            None if self.given(name) => self.remove(name),
            None => {}
        }
    }

    /// A nested record written over what is there by `write`, or (`None`) removed as
    /// [`Self::nullable`] is.
    pub(super) fn nullable_record<T>(
        &mut self,
        name: &'static str,
        record: Option<T>,
        write: fn(&mut Value, T),
    ) {
        match record {
            Some(record) => self.put(name, |slot| write(slot, record)),
            None if self.given(name) => self.remove(name),
            None => {}
        }
    }

    /// A list written over the array that is there; an empty one over a missing field leaves
    /// it missing.
    pub(super) fn list_if_given<T>(
        &mut self,
        name: &'static str,
        items: Vec<T>,
        write: impl FnMut(&mut Value, T),
    ) {
        if !items.is_empty() || self.given(name) {
            self.list(name, Some(items), write);
        }
    }

    fn flag(&mut self, name: &'static str, flag: bool) {
        self.put(name, |slot| *slot = Value::Bool(flag));
    }

    /// A list written over the array that is there, element by element (`None`: removed, as
    /// [`Self::optional`] removes a text).
    fn list<T>(
        &mut self,
        name: &'static str,
        items: Option<Vec<T>>,
        write: impl FnMut(&mut Value, T),
    ) {
        match items {
            Some(items) => self.put(name, |slot| write_array(slot, items, write)),
            None if self.others == Others::Keep && !self.given(name) => {}
            None => self.remove(name),
        }
    }

    /// A list of strings, left out when empty (as the API does for `units` and document paths;
    /// in part of the account document, as [`Self::list_if_given`]).
    fn strings(&mut self, name: &'static str, strings: Vec<String>, write: fn(&mut Value, String)) {
        match self.others {
            Others::Keep => self.list_if_given(name, strings, write),
            Others::Drop => self.list(name, (!strings.is_empty()).then_some(strings), write),
        }
    }
}

/// Writes a record over `value` with `write`: `value` becomes an object holding only the
/// fields in `names` (an empty one first if it was not an object).
fn write_object<const N: usize>(
    value: &mut Value,
    names: &'static [&'static str; N],
    write: impl FnOnce(&mut FieldsMut<'_, N>),
) {
    write_object_with(value, names, Others::Drop, write);
}

/// As [`write_object`], for a record that carries part of the account document (the account
/// records of `0.2.0` and later): the fields outside `names` stay, and a `None` over a field
/// that is missing or `null` leaves it so.
pub(super) fn write_part_of_object<const N: usize>(
    value: &mut Value,
    names: &'static [&'static str; N],
    write: impl FnOnce(&mut FieldsMut<'_, N>),
) {
    write_object_with(value, names, Others::Keep, write);
}

/// What writing a record does with what its answer does not say. A request's own record
/// drops the object's fields the record does not carry, and removes a field the answer has as
/// `None`. Part of the account document keeps those fields, and leaves a field it left out or
/// sent as `null` so when the answer has it as `None`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Others {
    Drop,
    Keep,
}

fn write_object_with<const N: usize>(
    value: &mut Value,
    names: &'static [&'static str; N],
    others: Others,
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
        others,
    };
    for (key, slot) in object.iter_mut() {
        match position(names, key) {
            Some(index) => fields.slots[index] = Some(slot),
            None => foreign_keys = true,
        }
    }
    write(&mut fields);
    let FieldsMut { added, removed, .. } = fields;
    let drop_foreign = foreign_keys && others == Others::Drop;
    if drop_foreign || !removed.is_empty() {
        object.retain(|key, _| {
            (others == Others::Keep || position(names, key).is_some())
                && !removed.contains(&key.as_str())
        });
    }
    for (name, value) in added {
        object.insert(name.to_owned(), value);
    }
}

/// Writes `items` over the array in `slot`, element by element (it becomes an array if it was
/// not one).
fn write_array<T>(slot: &mut Value, items: Vec<T>, mut write: impl FnMut(&mut Value, T)) {
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

/// Writes the notes a hook returned over the notes that were sent to it.
pub fn write_notes(value: &mut Value, notes: Vec<types::Note>) {
    write_array(value, notes, |slot, note| {
        write_object(slot, &NOTE_FIELDS, |fields| {
            fields.optional("body", note.body);
            fields.strings("document_paths", note.document_paths, |slot, path| {
                write_object(slot, &DOCUMENT_FIELDS, |fields| {
                    fields.text("document_path", path);
                });
            });
            fields.optional("created_at", note.created_at);
            fields.flag("is_pinned", note.is_pinned);
            fields.optional("unpin_at", note.unpin_at);
        });
    });
}

/// Writes the transactions a hook returned over the transactions that were sent to it.
pub fn write_transactions(value: &mut Value, transactions: Vec<types::Transaction>) {
    write_array(value, transactions, |slot, transaction| {
        write_transaction(slot, transaction, Others::Drop);
    });
}

/// Writes a transaction of the account document (the statement transactions of 0.3.0's
/// account and ledgers) over the one that was sent, as part of the document.
pub(super) fn write_document_transaction(slot: &mut Value, transaction: types::Transaction) {
    write_transaction(slot, transaction, Others::Keep);
}

fn write_transaction(slot: &mut Value, transaction: types::Transaction, others: Others) {
    write_object_with(slot, &TRANSACTION_FIELDS, others, |fields| {
        fields.text("transaction_id", transaction.transaction_id);
        fields.text("transaction_date", transaction.transaction_date);
        fields.text("amount", transaction.amount);
        fields.text("type", transaction.type_);
        fields.optional("reason", transaction.reason);
        fields.optional("reference", transaction.reference);
        fields.optional("payment_type", transaction.payment_type);
        fields.optional("display_note", transaction.display_note);
        fields.optional("note", transaction.note);
        fields.optional("product_code", transaction.product_code);
        fields.list("line_items", transaction.line_items, |slot, item| {
            write_object_with(slot, &LINE_ITEM_FIELDS, others, |fields| {
                fields.text_if_given("rate_band", item.rate_band);
                fields.text("start_date", item.start_date);
                fields.text("end_date", item.end_date);
                fields.text("number_of_units", item.number_of_units);
                fields.text("net_amount", item.net_amount);
                fields.text_if_given("price_per_unit", item.price_per_unit);
                fields.strings("units", item.units, write_text);
            });
        });
        fields.list("tax_items", transaction.tax_items, |slot, item| {
            write_object_with(slot, &TAX_ITEM_FIELDS, others, |fields| {
                fields.text("amount", item.amount);
                fields.text("tax_type", item.tax_type);
                fields.text("value_taxed", item.value_taxed);
                fields.text("rate", item.rate);
                fields.text("unit_type", item.unit_type);
            });
        });
    });
}

/// The transaction a hook was sent, owned: what a hook that changes nothing answers.
#[cfg(test)]
pub(super) fn owned_transaction(transaction: &wire::Transaction<'_>) -> types::Transaction {
    let owned = |text: &str| text.to_owned();
    types::Transaction {
        transaction_id: owned(transaction.transaction_id),
        transaction_date: owned(transaction.transaction_date),
        amount: owned(transaction.amount),
        type_: owned(transaction.type_),
        reason: transaction.reason.map(owned),
        reference: transaction.reference.map(owned),
        payment_type: transaction.payment_type.map(owned),
        display_note: transaction.display_note.map(owned),
        note: transaction.note.map(owned),
        product_code: transaction.product_code.map(owned),
        line_items: transaction.line_items.as_ref().map(|items| {
            items
                .iter()
                .map(|item| types::LineItem {
                    rate_band: owned(item.rate_band),
                    start_date: owned(item.start_date),
                    end_date: owned(item.end_date),
                    number_of_units: owned(item.number_of_units),
                    net_amount: owned(item.net_amount),
                    price_per_unit: owned(item.price_per_unit),
                    units: item.units.iter().copied().map(owned).collect(),
                })
                .collect()
        }),
        tax_items: transaction.tax_items.as_ref().map(|items| {
            items
                .iter()
                .map(|item| types::TaxItem {
                    amount: owned(item.amount),
                    tax_type: owned(item.tax_type),
                    value_taxed: owned(item.value_taxed),
                    rate: owned(item.rate),
                    unit_type: owned(item.unit_type),
                })
                .collect()
        }),
    }
}

/// Writes the statements a hook returned over the statements that were sent to it.
pub fn write_statements(value: &mut Value, statements: Vec<types::Statement>) {
    write_array(value, statements, |slot, statement| {
        write_object(slot, &STATEMENT_FIELDS, |fields| {
            fields.text("bill_period_from_date", statement.bill_period_from_date);
            fields.text("bill_period_to_date", statement.bill_period_to_date);
            fields.text("statement_id", statement.statement_id);
            fields.text_if_given("issued_date", statement.issued_date);
            fields.text_if_given("number", statement.number);
            fields.integer_if_given("gross_amount", statement.gross_amount);
            fields.optional("statement_path", statement.statement_path);
        });
    });
}

/// Writes the payment instruction a hook returned over the one that was sent to it.
pub fn write_instruction(value: &mut Value, instruction: types::PaymentInstruction) {
    write_object(value, &INSTRUCTION_FIELDS, |fields| {
        fields.text("vendor", instruction.vendor);
        fields.text("reference", instruction.reference);
        fields.text("type", instruction.type_);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_field_lists_are_the_wit_records() {
        use crate::plugins::bindings::record_fields;
        for (record, fields) in [
            ("note", &NOTE_FIELDS[..]),
            ("transaction", &TRANSACTION_FIELDS[..]),
            ("line-item", &LINE_ITEM_FIELDS[..]),
            ("tax-item", &TAX_ITEM_FIELDS[..]),
            ("statement", &STATEMENT_FIELDS[..]),
            ("payment-instruction", &INSTRUCTION_FIELDS[..]),
        ] {
            for version in ["0.1.0", "0.2.0", "0.3.0"] {
                assert_eq!(
                    record_fields(version, record),
                    fields,
                    "{record} of {version}"
                );
            }
        }
    }

    fn owned(text: &str) -> String {
        text.to_owned()
    }

    #[test]
    fn lists_follow_the_answer_and_keys_outside_the_wit_are_dropped() {
        let mut value = json!([
            {"body": "one", "document_paths": [{"document_path": "a.pdf"}], "is_pinned": false, "extra": 1},
            {"body": "two", "is_pinned": true},
        ]);
        let notes = vec![types::Note {
            body: Some("one".into()),
            document_paths: vec![],
            created_at: None,
            is_pinned: true,
            unpin_at: Some("2026-01-01T00:00:00Z".into()),
        }];
        write_notes(&mut value, notes);
        assert_eq!(
            value,
            json!([{"body": "one", "is_pinned": true, "unpin_at": "2026-01-01T00:00:00Z"}])
        );
    }

    #[test]
    fn an_answer_over_a_missing_or_mistyped_request_builds_it_whole() {
        let mut value = Value::Null;
        write_instruction(
            &mut value,
            types::PaymentInstruction {
                vendor: "SANDBOX".into(),
                reference: "R-1".into(),
                type_: "DIRECT_DEBIT".into(),
            },
        );
        assert_eq!(
            value,
            json!({"vendor": "SANDBOX", "reference": "R-1", "type": "DIRECT_DEBIT"})
        );
        let mut transactions = json!("not a list");
        write_transactions(
            &mut transactions,
            vec![types::Transaction {
                transaction_id: "T-1".into(),
                transaction_date: "2025-01-05".into(),
                amount: "42.10".into(),
                type_: "CHARGE".into(),
                reason: None,
                reference: None,
                payment_type: None,
                display_note: None,
                note: None,
                product_code: None,
                line_items: Some(vec![types::LineItem {
                    rate_band: "DAY".into(),
                    start_date: "2025-01-01".into(),
                    end_date: "2025-01-31".into(),
                    number_of_units: "10".into(),
                    net_amount: "2.00".into(),
                    price_per_unit: "0.20".into(),
                    units: vec![],
                }]),
                tax_items: None,
            }],
        );
        assert_eq!(
            transactions,
            json!([{"transaction_id": "T-1", "transaction_date": "2025-01-05", "amount": "42.10",
                    "type": "CHARGE", "line_items": [{"rate_band": "DAY", "start_date": "2025-01-01",
                    "end_date": "2025-01-31", "number_of_units": "10", "net_amount": "2.00",
                    "price_per_unit": "0.20"}]}])
        );
    }

    #[test]
    fn every_field_of_a_transaction_is_read_and_an_unchanged_one_written_back_as_it_was() {
        let request = json!([{
            "transaction_id": "T-1", "transaction_date": "2025-01-05", "amount": 42.10,
            "type": "CHARGE", "reason": "Usage", "reference": "R-1", "payment_type": "CARD",
            "display_note": "shown", "note": "kept", "product_code": "OLDVAR",
            "line_items": [{"rate_band": "DAY", "start_date": "2025-01-01", "end_date": "2025-01-31",
                            "number_of_units": "10", "net_amount": "2.00", "price_per_unit": "0.20",
                            "units": ["kWh", 3]}],
            "tax_items": [{"amount": "0.10", "tax_type": "VAT", "value_taxed": "2.00", "rate": "5",
                           "unit_type": "PERCENT"}]
        }]);
        let wire = list(&request, transaction_to_wit);
        let read = &wire[0];
        assert_eq!(
            (read.amount, read.type_, read.note, read.product_code),
            ("42.1", "CHARGE", Some("kept"), Some("OLDVAR"))
        );
        let line = &read.line_items.as_ref().expect("line items")[0];
        assert_eq!(
            (line.price_per_unit, line.units.clone()),
            ("0.20", vec!["kWh", "3"])
        );
        let tax = &read.tax_items.as_ref().expect("tax items")[0];
        assert_eq!((tax.tax_type, tax.unit_type), ("VAT", "PERCENT"));

        let answer = wire.iter().map(owned_transaction).collect();
        let mut value = request.clone();
        write_transactions(&mut value, answer);
        assert_eq!(value, request);
    }

    #[test]
    fn statements_notes_and_instructions_are_read_field_by_field() {
        let statements = json!([{"bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31",
                                 "statement_id": "S-1", "issued_date": "2025-02-01", "number": 7,
                                 "gross_amount": "99.10", "statement_path": "s/1.pdf"}]);
        let statement = &list(&statements, statement_to_wit)[0];
        assert_eq!(
            (
                statement.number,
                statement.gross_amount,
                statement.statement_path
            ),
            ("7", "99.10", Some("s/1.pdf"))
        );
        let mut value = statements.clone();
        write_statements(
            &mut value,
            vec![types::Statement {
                bill_period_from_date: owned(statement.bill_period_from_date),
                bill_period_to_date: owned(statement.bill_period_to_date),
                statement_id: owned(statement.statement_id),
                issued_date: owned(statement.issued_date),
                number: owned(statement.number),
                gross_amount: owned(statement.gross_amount),
                statement_path: None,
            }],
        );
        let mut expected = statements.clone();
        expected[0]
            .as_object_mut()
            .expect("object")
            .remove("statement_path");
        assert_eq!(value, expected);

        // A statement without issued_date, number and gross_amount (optional on the real
        // platform) keeps them absent through a 0.1.0 hook, whose record has plain strings;
        // pence a hook changes are written back as a JSON integer.
        let sparse = json!([{"bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31",
                             "statement_id": "S-2", "issued_date": null, "gross_amount": 10000}]);
        let read = &list(&sparse, statement_to_wit)[0];
        assert_eq!(
            (read.issued_date, read.number, read.gross_amount),
            ("", "", "10000")
        );
        let mut value = sparse.clone();
        write_statements(
            &mut value,
            vec![types::Statement {
                bill_period_from_date: owned(read.bill_period_from_date),
                bill_period_to_date: owned(read.bill_period_to_date),
                statement_id: owned(read.statement_id),
                issued_date: String::new(),
                number: String::new(),
                gross_amount: "12050".to_owned(),
                statement_path: None,
            }],
        );
        assert_eq!(
            value,
            json!([{"bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31",
                    "statement_id": "S-2", "issued_date": null, "gross_amount": 12050}])
        );

        let notes = json!([{"body": "hello", "document_paths": [{"document_path": "a.pdf"}, {}],
                            "created_at": "2025-01-01T00:00:00Z", "is_pinned": true}]);
        let note = &list(&notes, note_to_wit)[0];
        assert_eq!(
            (
                note.body,
                note.document_paths.clone(),
                note.is_pinned,
                note.unpin_at
            ),
            (Some("hello"), vec!["a.pdf", ""], true, None)
        );

        let instruction = json!({"vendor": "SANDBOX", "reference": "R-9", "type": "DIRECT_DEBIT"});
        let read = instruction_to_wit(&instruction);
        assert_eq!(
            (read.vendor, read.reference, read.type_),
            ("SANDBOX", "R-9", "DIRECT_DEBIT")
        );
    }
}
