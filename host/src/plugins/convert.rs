//! Conversions between the API's JSON shapes and the WIT records, both made to cost little on
//! every hook call:
//!
//! - into a hook, the [`wire`] records borrow their strings from the request's JSON (a number
//!   is passed as written);
//! - out of a hook, the owned result is written back over the request's own JSON: a field the
//!   hook left as it was keeps its value, a changed one is replaced, a `None` one is removed,
//!   and keys the WIT does not carry are dropped. The JSON that comes out is the hook's answer
//!   in request shape; Ferry's readers validate it again.

use super::bindings::ferry::supplier_rules::types;
use super::wire;
use crate::domain::ports::AccountTarget;
use crate::domain::validation::{FieldError, FieldErrors};
use serde_json::{Map, Value};

/// A string field, or a number as written.
fn optional<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    match value.get(key)? {
        Value::String(text) => Some(text),
        Value::Number(number) => Some(number.as_str()),
        _ => None,
    }
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    optional(value, key).unwrap_or_default()
}

fn flag(value: &Value, key: &str) -> bool {
    value.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The elements of the array at `key` (none when it is missing or not an array).
fn items<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The elements of a JSON array, converted.
pub fn list<'a, T>(value: &'a Value, convert: fn(&'a Value) -> T) -> Vec<T> {
    value
        .as_array()
        .map(|values| values.iter().map(convert).collect())
        .unwrap_or_default()
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

pub fn account_to_wit(value: &Value) -> wire::Account<'_> {
    let address = value.get("billing_address").unwrap_or(&Value::Null);
    wire::Account {
        import_supplier: text(value, "import_supplier"),
        external_account_number: text(value, "external_account_number"),
        billing_name: text(value, "billing_name"),
        billing_address: wire::Address {
            address_line_1: text(address, "address_line_1"),
            address_line_2: optional(address, "address_line_2"),
            address_line_3: optional(address, "address_line_3"),
            town: text(address, "town"),
            postcode: text(address, "postcode"),
            country: text(address, "country"),
        },
        customers: items(value, "customers")
            .iter()
            .map(|customer| wire::Customer {
                given_name: text(customer, "given_name"),
                family_name: text(customer, "family_name"),
                email: text(customer, "email"),
                mobile: optional(customer, "mobile"),
                landline: optional(customer, "landline"),
                date_of_birth: optional(customer, "date_of_birth"),
                is_primary: flag(customer, "is_primary"),
            })
            .collect(),
        supply_points: items(value, "supply_points")
            .iter()
            .map(|point| wire::SupplyPoint {
                market: text(point, "market"),
                identifier: text(point, "identifier"),
                product_code: optional(point, "product_code"),
                supply_start_date: optional(point, "supply_start_date"),
            })
            .collect(),
        open_statement_period_start: optional(value, "open_statement_period_start"),
        transfer_balance: optional(value, "transfer_balance").unwrap_or("0"),
    }
}

pub fn note_to_wit(value: &Value) -> wire::Note<'_> {
    wire::Note {
        body: optional(value, "body"),
        document_paths: items(value, "document_paths")
            .iter()
            .map(|path| text(path, "document_path"))
            .collect(),
        created_at: optional(value, "created_at"),
        is_pinned: flag(value, "is_pinned"),
        unpin_at: optional(value, "unpin_at"),
    }
}

/// The strings (or numbers as written) of the array at `key`.
fn strings<'a>(value: &'a Value, key: &str) -> Vec<&'a str> {
    items(value, key)
        .iter()
        .filter_map(|item| match item {
            Value::String(text) => Some(text.as_str()),
            Value::Number(number) => Some(number.as_str()),
            _ => None,
        })
        .collect()
}

pub fn transaction_to_wit(value: &Value) -> wire::Transaction<'_> {
    let line_items = value.get("line_items").map(|_| {
        items(value, "line_items")
            .iter()
            .map(|item| wire::LineItem {
                rate_band: text(item, "rate_band"),
                start_date: text(item, "start_date"),
                end_date: text(item, "end_date"),
                number_of_units: text(item, "number_of_units"),
                net_amount: text(item, "net_amount"),
                price_per_unit: text(item, "price_per_unit"),
                units: strings(item, "units"),
            })
            .collect()
    });
    let tax_items = value.get("tax_items").map(|_| {
        items(value, "tax_items")
            .iter()
            .map(|item| wire::TaxItem {
                amount: text(item, "amount"),
                tax_type: text(item, "tax_type"),
                value_taxed: text(item, "value_taxed"),
                rate: text(item, "rate"),
                unit_type: text(item, "unit_type"),
            })
            .collect()
    });
    wire::Transaction {
        transaction_id: text(value, "transaction_id"),
        transaction_date: text(value, "transaction_date"),
        amount: text(value, "amount"),
        type_: text(value, "type"),
        reason: optional(value, "reason"),
        reference: optional(value, "reference"),
        payment_type: optional(value, "payment_type"),
        display_note: optional(value, "display_note"),
        note: optional(value, "note"),
        product_code: optional(value, "product_code"),
        line_items,
        tax_items,
    }
}

pub fn statement_to_wit(value: &Value) -> wire::Statement<'_> {
    wire::Statement {
        bill_period_from_date: text(value, "bill_period_from_date"),
        bill_period_to_date: text(value, "bill_period_to_date"),
        statement_id: text(value, "statement_id"),
        issued_date: text(value, "issued_date"),
        number: text(value, "number"),
        gross_amount: text(value, "gross_amount"),
        statement_path: optional(value, "statement_path"),
    }
}

pub fn instruction_to_wit(value: &Value) -> wire::PaymentInstruction<'_> {
    wire::PaymentInstruction {
        vendor: text(value, "vendor"),
        reference: text(value, "reference"),
        type_: text(value, "type"),
    }
}

// Writing a hook's answer back over the request.

/// `value` as an object with only the keys in `fields` (an empty one if it was not an object).
fn object_of<'v>(value: &'v mut Value, fields: &[&str]) -> &'v mut Map<String, Value> {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    let Value::Object(object) = value else {
        unreachable!("made an object above")
    };
    object.retain(|key, _| fields.contains(&key.as_str()));
    object
}

/// Whether `value` already reads as `text`: the same string, or a number written so.
fn reads_as(value: &Value, text: &str) -> bool {
    match value {
        Value::String(current) => current == text,
        Value::Number(number) => number.as_str() == text,
        _ => false,
    }
}

fn put_text(object: &mut Map<String, Value>, key: &str, text: String) {
    match object.get_mut(key) {
        Some(current) if reads_as(current, &text) => {}
        Some(current) => *current = Value::String(text),
        None => {
            object.insert(key.to_owned(), Value::String(text));
        }
    }
}

fn put_optional(object: &mut Map<String, Value>, key: &str, text: Option<String>) {
    match text {
        Some(text) => put_text(object, key, text),
        None => {
            object.remove(key);
        }
    }
}

fn put_flag(object: &mut Map<String, Value>, key: &str, flag: bool) {
    match object.get_mut(key) {
        Some(current) => *current = Value::Bool(flag),
        None => {
            object.insert(key.to_owned(), Value::Bool(flag));
        }
    }
}

/// Writes `items` over the array in `slot`, element by element (it becomes an array if it was
/// not one).
fn write_array<T>(slot: &mut Value, items: Vec<T>, write: fn(&mut Value, T)) {
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

/// Writes `value` into `object[key]` with `write`, keeping what is there for it to compare.
fn put_with<T>(object: &mut Map<String, Value>, key: &str, value: T, write: fn(&mut Value, T)) {
    match object.get_mut(key) {
        Some(slot) => write(slot, value),
        None => {
            let mut slot = Value::Null;
            write(&mut slot, value);
            object.insert(key.to_owned(), slot);
        }
    }
}

/// Writes `items` over the array at `key` (`None`: removes `key`).
fn put_list<T>(
    object: &mut Map<String, Value>,
    key: &str,
    items: Option<Vec<T>>,
    write: fn(&mut Value, T),
) {
    match items {
        Some(items) => match object.get_mut(key) {
            Some(slot) => write_array(slot, items, write),
            None => {
                let mut slot = Value::Null;
                write_array(&mut slot, items, write);
                object.insert(key.to_owned(), slot);
            }
        },
        None => {
            object.remove(key);
        }
    }
}

/// A list of strings, left out when empty (as the API does for `units` and document paths).
fn put_strings(
    object: &mut Map<String, Value>,
    key: &str,
    strings: Vec<String>,
    write: fn(&mut Value, String),
) {
    put_list(object, key, (!strings.is_empty()).then_some(strings), write);
}

const ACCOUNT_FIELDS: &[&str] = &[
    "import_supplier",
    "external_account_number",
    "billing_name",
    "billing_address",
    "customers",
    "supply_points",
    "open_statement_period_start",
    "transfer_balance",
];
const ADDRESS_FIELDS: &[&str] = &[
    "address_line_1",
    "address_line_2",
    "address_line_3",
    "town",
    "postcode",
    "country",
];
const CUSTOMER_FIELDS: &[&str] = &[
    "given_name",
    "family_name",
    "email",
    "mobile",
    "landline",
    "date_of_birth",
    "is_primary",
];
const SUPPLY_POINT_FIELDS: &[&str] = &["market", "identifier", "product_code", "supply_start_date"];

/// Writes the account a hook returned over the account that was sent to it.
pub fn write_account(value: &mut Value, account: types::Account) {
    let object = object_of(value, ACCOUNT_FIELDS);
    put_text(object, "import_supplier", account.import_supplier);
    put_text(
        object,
        "external_account_number",
        account.external_account_number,
    );
    put_text(object, "billing_name", account.billing_name);
    put_with(
        object,
        "billing_address",
        account.billing_address,
        |slot, address| {
            let object = object_of(slot, ADDRESS_FIELDS);
            put_text(object, "address_line_1", address.address_line_1);
            put_optional(object, "address_line_2", address.address_line_2);
            put_optional(object, "address_line_3", address.address_line_3);
            put_text(object, "town", address.town);
            put_text(object, "postcode", address.postcode);
            put_text(object, "country", address.country);
        },
    );
    put_list(
        object,
        "customers",
        Some(account.customers),
        |slot, customer| {
            let object = object_of(slot, CUSTOMER_FIELDS);
            put_text(object, "given_name", customer.given_name);
            put_text(object, "family_name", customer.family_name);
            put_text(object, "email", customer.email);
            put_optional(object, "mobile", customer.mobile);
            put_optional(object, "landline", customer.landline);
            put_optional(object, "date_of_birth", customer.date_of_birth);
            put_flag(object, "is_primary", customer.is_primary);
        },
    );
    put_list(
        object,
        "supply_points",
        Some(account.supply_points),
        |slot, point| {
            let object = object_of(slot, SUPPLY_POINT_FIELDS);
            put_text(object, "market", point.market);
            put_text(object, "identifier", point.identifier);
            put_optional(object, "product_code", point.product_code);
            put_optional(object, "supply_start_date", point.supply_start_date);
        },
    );
    put_optional(
        object,
        "open_statement_period_start",
        account.open_statement_period_start,
    );
    put_text(object, "transfer_balance", account.transfer_balance);
}

const NOTE_FIELDS: &[&str] = &[
    "body",
    "document_paths",
    "created_at",
    "is_pinned",
    "unpin_at",
];

/// Writes the notes a hook returned over the notes that were sent to it.
pub fn write_notes(value: &mut Value, notes: Vec<types::Note>) {
    write_array(value, notes, |slot, note| {
        let object = object_of(slot, NOTE_FIELDS);
        put_optional(object, "body", note.body);
        put_strings(
            object,
            "document_paths",
            note.document_paths,
            |slot, path| {
                let object = object_of(slot, &["document_path"]);
                put_text(object, "document_path", path);
            },
        );
        put_optional(object, "created_at", note.created_at);
        put_flag(object, "is_pinned", note.is_pinned);
        put_optional(object, "unpin_at", note.unpin_at);
    });
}

const TRANSACTION_FIELDS: &[&str] = &[
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
const LINE_ITEM_FIELDS: &[&str] = &[
    "rate_band",
    "start_date",
    "end_date",
    "number_of_units",
    "net_amount",
    "price_per_unit",
    "units",
];
const TAX_ITEM_FIELDS: &[&str] = &["amount", "tax_type", "value_taxed", "rate", "unit_type"];

fn write_text(slot: &mut Value, text: String) {
    if !reads_as(slot, &text) {
        *slot = Value::String(text);
    }
}

/// Writes the transactions a hook returned over the transactions that were sent to it.
pub fn write_transactions(value: &mut Value, transactions: Vec<types::Transaction>) {
    write_array(value, transactions, |slot, transaction| {
        let object = object_of(slot, TRANSACTION_FIELDS);
        put_text(object, "transaction_id", transaction.transaction_id);
        put_text(object, "transaction_date", transaction.transaction_date);
        put_text(object, "amount", transaction.amount);
        put_text(object, "type", transaction.type_);
        put_optional(object, "reason", transaction.reason);
        put_optional(object, "reference", transaction.reference);
        put_optional(object, "payment_type", transaction.payment_type);
        put_optional(object, "display_note", transaction.display_note);
        put_optional(object, "note", transaction.note);
        put_optional(object, "product_code", transaction.product_code);
        put_list(
            object,
            "line_items",
            transaction.line_items,
            |slot, item| {
                let object = object_of(slot, LINE_ITEM_FIELDS);
                put_text(object, "rate_band", item.rate_band);
                put_text(object, "start_date", item.start_date);
                put_text(object, "end_date", item.end_date);
                put_text(object, "number_of_units", item.number_of_units);
                put_text(object, "net_amount", item.net_amount);
                put_text(object, "price_per_unit", item.price_per_unit);
                put_strings(object, "units", item.units, write_text);
            },
        );
        put_list(object, "tax_items", transaction.tax_items, |slot, item| {
            let object = object_of(slot, TAX_ITEM_FIELDS);
            put_text(object, "amount", item.amount);
            put_text(object, "tax_type", item.tax_type);
            put_text(object, "value_taxed", item.value_taxed);
            put_text(object, "rate", item.rate);
            put_text(object, "unit_type", item.unit_type);
        });
    });
}

const STATEMENT_FIELDS: &[&str] = &[
    "bill_period_from_date",
    "bill_period_to_date",
    "statement_id",
    "issued_date",
    "number",
    "gross_amount",
    "statement_path",
];

/// Writes the statements a hook returned over the statements that were sent to it.
pub fn write_statements(value: &mut Value, statements: Vec<types::Statement>) {
    write_array(value, statements, |slot, statement| {
        let object = object_of(slot, STATEMENT_FIELDS);
        put_text(
            object,
            "bill_period_from_date",
            statement.bill_period_from_date,
        );
        put_text(object, "bill_period_to_date", statement.bill_period_to_date);
        put_text(object, "statement_id", statement.statement_id);
        put_text(object, "issued_date", statement.issued_date);
        put_text(object, "number", statement.number);
        put_text(object, "gross_amount", statement.gross_amount);
        put_optional(object, "statement_path", statement.statement_path);
    });
}

/// Writes the payment instruction a hook returned over the one that was sent to it.
pub fn write_instruction(value: &mut Value, instruction: types::PaymentInstruction) {
    let object = object_of(value, &["vendor", "reference", "type"]);
    put_text(object, "vendor", instruction.vendor);
    put_text(object, "reference", instruction.reference);
    put_text(object, "type", instruction.type_);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn account(json: &Value) -> types::Account {
        let wire = account_to_wit(json);
        let owned = |text: &str| text.to_owned();
        types::Account {
            import_supplier: owned(wire.import_supplier),
            external_account_number: owned(wire.external_account_number),
            billing_name: owned(wire.billing_name),
            billing_address: types::Address {
                address_line_1: owned(wire.billing_address.address_line_1),
                address_line_2: wire.billing_address.address_line_2.map(owned),
                address_line_3: wire.billing_address.address_line_3.map(owned),
                town: owned(wire.billing_address.town),
                postcode: owned(wire.billing_address.postcode),
                country: owned(wire.billing_address.country),
            },
            customers: wire
                .customers
                .iter()
                .map(|customer| types::Customer {
                    given_name: owned(customer.given_name),
                    family_name: owned(customer.family_name),
                    email: owned(customer.email),
                    mobile: customer.mobile.map(owned),
                    landline: customer.landline.map(owned),
                    date_of_birth: customer.date_of_birth.map(owned),
                    is_primary: customer.is_primary,
                })
                .collect(),
            supply_points: wire
                .supply_points
                .iter()
                .map(|point| types::SupplyPoint {
                    market: owned(point.market),
                    identifier: owned(point.identifier),
                    product_code: point.product_code.map(owned),
                    supply_start_date: point.supply_start_date.map(owned),
                })
                .collect(),
            open_statement_period_start: wire.open_statement_period_start.map(owned),
            transfer_balance: owned(wire.transfer_balance),
        }
    }

    fn request() -> Value {
        json!({
            "import_supplier": "OLD_CO",
            "external_account_number": "OE-1001",
            "billing_name": "Ada Lovelace",
            "billing_address": {"address_line_1": "1 Analytical Street", "address_line_2": "Flat 2",
                                "town": "London", "postcode": "N1 1AA", "country": "GB"},
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com",
                           "mobile": "07700 900123", "is_primary": true}],
            "supply_points": [],
            "transfer_balance": 12.30
        })
    }

    #[test]
    fn an_unchanged_answer_leaves_the_request_as_it_was() {
        let mut value = request();
        let answer = account(&value);
        write_account(&mut value, answer);
        assert_eq!(value, request());
        // A number the hook saw as written stays a number.
        assert!(value["transfer_balance"].is_number());
    }

    #[test]
    fn changes_replace_fields_and_none_removes_them() {
        let mut value = request();
        let mut answer = account(&value);
        answer.customers[0].mobile = Some("+447700900123".into());
        answer.customers[0].landline = Some("+442079460000".into());
        answer.billing_address.address_line_2 = None;
        answer.transfer_balance = "0.00".into();
        answer.supply_points.push(types::SupplyPoint {
            market: "GAS".into(),
            identifier: "1234".into(),
            product_code: None,
            supply_start_date: None,
        });
        write_account(&mut value, answer);
        assert_eq!(value["customers"][0]["mobile"], "+447700900123");
        assert_eq!(value["customers"][0]["landline"], "+442079460000");
        assert!(value["billing_address"].get("address_line_2").is_none());
        assert_eq!(value["transfer_balance"], "0.00");
        assert_eq!(
            value["supply_points"],
            json!([{"market": "GAS", "identifier": "1234"}])
        );
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
}
