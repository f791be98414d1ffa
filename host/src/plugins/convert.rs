//! Conversions between the API's JSON shapes and the WIT records. Input is JSON Ferry has
//! already validated; output goes back through Ferry's readers, which validate it again.

use super::bindings::ferry::supplier_rules::types;
use crate::domain::ports::AccountTarget;
use crate::domain::validation::{FieldError, FieldErrors};
use serde_json::{Map, Value, json};

fn text(value: &Value, key: &str) -> String {
    optional(value, key).unwrap_or_default()
}

/// A string field, or a number printed as written.
fn optional(value: &Value, key: &str) -> Option<String> {
    match value.get(key)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn flag(value: &Value, key: &str) -> bool {
    value.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn items(value: &Value, key: &str) -> Vec<Value> {
    value
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The elements of a JSON array, converted.
pub fn list<T>(value: &Value, convert: fn(&Value) -> T) -> Vec<T> {
    value
        .as_array()
        .map(|values| values.iter().map(convert).collect())
        .unwrap_or_default()
}

/// An object of the present fields (`None` fields are left out, as the API does).
fn object(fields: Vec<(&str, Option<Value>)>) -> Value {
    let mut map = Map::new();
    for (key, value) in fields {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

fn some(text: &str) -> Option<Value> {
    Some(Value::String(text.to_owned()))
}

fn maybe(text: &Option<String>) -> Option<Value> {
    text.as_ref().map(|text| Value::String(text.clone()))
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

pub fn account_ref(target: Option<&AccountTarget>) -> types::AccountRef {
    match target {
        Some(target) => types::AccountRef {
            import_supplier: target.import_supplier.clone(),
            external_account_number: target.external_account_number.clone(),
            platform_account_number: target.platform_account_number.clone(),
        },
        None => types::AccountRef {
            import_supplier: String::new(),
            external_account_number: String::new(),
            platform_account_number: String::new(),
        },
    }
}

pub fn account_to_wit(value: &Value) -> types::Account {
    let address = value.get("billing_address").unwrap_or(&Value::Null);
    types::Account {
        import_supplier: text(value, "import_supplier"),
        external_account_number: text(value, "external_account_number"),
        billing_name: text(value, "billing_name"),
        billing_address: types::Address {
            address_line_1: text(address, "address_line_1"),
            address_line_2: optional(address, "address_line_2"),
            address_line_3: optional(address, "address_line_3"),
            town: text(address, "town"),
            postcode: text(address, "postcode"),
            country: text(address, "country"),
        },
        customers: items(value, "customers")
            .iter()
            .map(|customer| types::Customer {
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
            .map(|point| types::SupplyPoint {
                market: text(point, "market"),
                identifier: text(point, "identifier"),
                product_code: optional(point, "product_code"),
                supply_start_date: optional(point, "supply_start_date"),
            })
            .collect(),
        open_statement_period_start: optional(value, "open_statement_period_start"),
        transfer_balance: optional(value, "transfer_balance").unwrap_or_else(|| "0".to_owned()),
    }
}

pub fn account_to_json(account: &types::Account) -> Value {
    let address = &account.billing_address;
    object(vec![
        ("import_supplier", some(&account.import_supplier)),
        (
            "external_account_number",
            some(&account.external_account_number),
        ),
        ("billing_name", some(&account.billing_name)),
        (
            "billing_address",
            Some(object(vec![
                ("address_line_1", some(&address.address_line_1)),
                ("address_line_2", maybe(&address.address_line_2)),
                ("address_line_3", maybe(&address.address_line_3)),
                ("town", some(&address.town)),
                ("postcode", some(&address.postcode)),
                ("country", some(&address.country)),
            ])),
        ),
        (
            "customers",
            Some(Value::Array(
                account
                    .customers
                    .iter()
                    .map(|customer| {
                        object(vec![
                            ("given_name", some(&customer.given_name)),
                            ("family_name", some(&customer.family_name)),
                            ("email", some(&customer.email)),
                            ("mobile", maybe(&customer.mobile)),
                            ("landline", maybe(&customer.landline)),
                            ("date_of_birth", maybe(&customer.date_of_birth)),
                            ("is_primary", Some(Value::Bool(customer.is_primary))),
                        ])
                    })
                    .collect(),
            )),
        ),
        (
            "supply_points",
            Some(Value::Array(
                account
                    .supply_points
                    .iter()
                    .map(|point| {
                        object(vec![
                            ("market", some(&point.market)),
                            ("identifier", some(&point.identifier)),
                            ("product_code", maybe(&point.product_code)),
                            ("supply_start_date", maybe(&point.supply_start_date)),
                        ])
                    })
                    .collect(),
            )),
        ),
        (
            "open_statement_period_start",
            maybe(&account.open_statement_period_start),
        ),
        ("transfer_balance", some(&account.transfer_balance)),
    ])
}

pub fn note_to_wit(value: &Value) -> types::Note {
    types::Note {
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

pub fn note_to_json(note: &types::Note) -> Value {
    let paths: Vec<Value> = note
        .document_paths
        .iter()
        .map(|path| json!({"document_path": path}))
        .collect();
    object(vec![
        ("body", maybe(&note.body)),
        (
            "document_paths",
            (!paths.is_empty()).then_some(Value::Array(paths)),
        ),
        ("created_at", maybe(&note.created_at)),
        ("is_pinned", Some(Value::Bool(note.is_pinned))),
        ("unpin_at", maybe(&note.unpin_at)),
    ])
}

fn strings(value: &Value, key: &str) -> Vec<String> {
    items(value, key)
        .iter()
        .filter_map(|item| match item {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        })
        .collect()
}

pub fn transaction_to_wit(value: &Value) -> types::Transaction {
    let line_items = value.get("line_items").map(|_| {
        items(value, "line_items")
            .iter()
            .map(|item| types::LineItem {
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
            .map(|item| types::TaxItem {
                amount: text(item, "amount"),
                tax_type: text(item, "tax_type"),
                value_taxed: text(item, "value_taxed"),
                rate: text(item, "rate"),
                unit_type: text(item, "unit_type"),
            })
            .collect()
    });
    types::Transaction {
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

pub fn transaction_to_json(transaction: &types::Transaction) -> Value {
    let line_items = transaction.line_items.as_ref().map(|items| {
        Value::Array(
            items
                .iter()
                .map(|item| {
                    let units: Vec<Value> = item
                        .units
                        .iter()
                        .map(|unit| Value::String(unit.clone()))
                        .collect();
                    object(vec![
                        ("rate_band", some(&item.rate_band)),
                        ("start_date", some(&item.start_date)),
                        ("end_date", some(&item.end_date)),
                        ("number_of_units", some(&item.number_of_units)),
                        ("net_amount", some(&item.net_amount)),
                        ("price_per_unit", some(&item.price_per_unit)),
                        ("units", (!units.is_empty()).then_some(Value::Array(units))),
                    ])
                })
                .collect(),
        )
    });
    let tax_items = transaction.tax_items.as_ref().map(|items| {
        Value::Array(
            items
                .iter()
                .map(|item| {
                    object(vec![
                        ("amount", some(&item.amount)),
                        ("tax_type", some(&item.tax_type)),
                        ("value_taxed", some(&item.value_taxed)),
                        ("rate", some(&item.rate)),
                        ("unit_type", some(&item.unit_type)),
                    ])
                })
                .collect(),
        )
    });
    object(vec![
        ("transaction_id", some(&transaction.transaction_id)),
        ("transaction_date", some(&transaction.transaction_date)),
        ("amount", some(&transaction.amount)),
        ("type", some(&transaction.type_)),
        ("reason", maybe(&transaction.reason)),
        ("reference", maybe(&transaction.reference)),
        ("payment_type", maybe(&transaction.payment_type)),
        ("display_note", maybe(&transaction.display_note)),
        ("note", maybe(&transaction.note)),
        ("product_code", maybe(&transaction.product_code)),
        ("line_items", line_items),
        ("tax_items", tax_items),
    ])
}

pub fn statement_to_wit(value: &Value) -> types::Statement {
    types::Statement {
        bill_period_from_date: text(value, "bill_period_from_date"),
        bill_period_to_date: text(value, "bill_period_to_date"),
        statement_id: text(value, "statement_id"),
        issued_date: text(value, "issued_date"),
        number: text(value, "number"),
        gross_amount: text(value, "gross_amount"),
        statement_path: optional(value, "statement_path"),
    }
}

pub fn statement_to_json(statement: &types::Statement) -> Value {
    object(vec![
        (
            "bill_period_from_date",
            some(&statement.bill_period_from_date),
        ),
        ("bill_period_to_date", some(&statement.bill_period_to_date)),
        ("statement_id", some(&statement.statement_id)),
        ("issued_date", some(&statement.issued_date)),
        ("number", some(&statement.number)),
        ("gross_amount", some(&statement.gross_amount)),
        ("statement_path", maybe(&statement.statement_path)),
    ])
}

pub fn instruction_to_wit(value: &Value) -> types::PaymentInstruction {
    types::PaymentInstruction {
        vendor: text(value, "vendor"),
        reference: text(value, "reference"),
        type_: text(value, "type"),
    }
}

pub fn instruction_to_json(instruction: &types::PaymentInstruction) -> Value {
    json!({"vendor": instruction.vendor, "reference": instruction.reference, "type": instruction.type_})
}
