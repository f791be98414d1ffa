//! `ferry:supplier-rules@0.1.0`: its bindings, and its `account` record, a view of the real
//! account document.
//!
//! The record a 0.1.0 hook sees is a small view of the document a supplier stages (the real
//! platform's `EnergyAccount`): its billing name and address, its customers, its meter
//! points and its balance, under names of its own. Into a hook, the view borrows from the
//! document; out of it, only the fields the hook changed are written back, at the place in the
//! document they came from, so everything the record does not carry stays as it was.
//!
//! Where the view comes from:
//! - `billing-address`: the structured `billing_address` (lines of `street_address`,
//!   `locality`, `postal_code`, `country`), else the flat `billing_address1..4` and
//!   `billing_postcode` (country `GB`);
//! - `customers`: the document's customers; the first is primary (`is-primary` is not
//!   written back);
//! - `supply-points`: the meter points of every supply address, in order (`market` is
//!   `supply_type`; `product-code` is the tariff of the meter point's open agreement). A hook
//!   may change them but not add or remove them: a supply address holds more than 0.1.0 says;
//! - `open-statement-period-start`: the day after `last_billed_to_date`.

use super::fields::{as_text, elements};
use crate::domain::account::open_statement_period_start;
use chrono::NaiveDate;
use serde_json::{Map, Value};

super::version!("../wit/since_v0.1.0", "/wit_records_v0_1_0.rs");

/// A string (or a number as written) that is there.
fn text(value: Option<&Value>) -> Option<&str> {
    value.and_then(as_text)
}

/// The elements of an array that is there.
fn items(value: Option<&Value>) -> &[Value] {
    value.map(elements).unwrap_or_default()
}

/// A non-empty string.
fn given(value: Option<&Value>) -> Option<&str> {
    text(value).filter(|text| !text.is_empty())
}

/// `open-statement-period-start` of `document`, as the domain reads it.
pub fn open_period_start(document: &Value) -> Option<String> {
    let Value::Object(document) = document else {
        return None;
    };
    open_statement_period_start(document).map(|day| day.to_string())
}

/// Which agreement of a meter point carries its product code: the last open-ended one, else
/// the last.
fn current_agreement(point: &Value) -> Option<usize> {
    let agreements = items(point.get("agreements"));
    agreements
        .iter()
        .rposition(|agreement| agreement.get("effective_to").is_none_or(Value::is_null))
        .or_else(|| agreements.len().checked_sub(1))
}

/// The meter points of every supply address: (address index, point index, point).
fn meter_points(document: &Value) -> impl Iterator<Item = (usize, usize, &Value)> {
    items(document.get("supply_addresses"))
        .iter()
        .enumerate()
        .flat_map(|(address_index, address)| {
            items(address.get("meter_points"))
                .iter()
                .enumerate()
                .map(move |(index, point)| (address_index, index, point))
        })
}

/// The record a 0.1.0 hook sees; `period_start` is [`open_period_start`] of `document`.
pub fn read_account<'a>(document: &'a Value, period_start: Option<&'a str>) -> account::Wire<'a> {
    let field = |name: &str| document.get(name);
    let billing_address = match field("billing_address").filter(|a| a.is_object()) {
        Some(address) => {
            let mut lines = text(address.get("street_address"))
                .unwrap_or_default()
                .split('\n');
            address::Wire {
                address_line_1: lines.next().unwrap_or_default(),
                address_line_2: lines.next().filter(|line| !line.is_empty()),
                address_line_3: lines.next().filter(|line| !line.is_empty()),
                town: text(address.get("locality")).unwrap_or_default(),
                postcode: text(address.get("postal_code")).unwrap_or_default(),
                country: text(address.get("country")).unwrap_or_default(),
            }
        }
        None => address::Wire {
            address_line_1: text(field("billing_address1")).unwrap_or_default(),
            address_line_2: given(field("billing_address2")),
            address_line_3: given(field("billing_address3")),
            town: text(field("billing_address4")).unwrap_or_default(),
            postcode: text(field("billing_postcode")).unwrap_or_default(),
            country: if given(field("billing_address1")).is_some() {
                "GB"
            } else {
                ""
            },
        },
    };
    account::Wire {
        import_supplier: text(field("import_supplier")).unwrap_or_default(),
        external_account_number: text(field("external_account_number")).unwrap_or_default(),
        billing_name: text(field("billing_name")).unwrap_or_default(),
        billing_address,
        customers: items(field("customers"))
            .iter()
            .enumerate()
            .map(|(index, customer)| customer::Wire {
                given_name: text(customer.get("given_name")).unwrap_or_default(),
                family_name: text(customer.get("family_name")).unwrap_or_default(),
                email: text(customer.get("email")).unwrap_or_default(),
                mobile: given(customer.get("mobile")),
                landline: given(customer.get("landline")),
                date_of_birth: given(customer.get("date_of_birth")),
                is_primary: index == 0,
            })
            .collect(),
        supply_points: meter_points(document)
            .map(|(_, _, point)| supply_point::Wire {
                market: text(point.get("supply_type")).unwrap_or_default(),
                identifier: text(point.get("identifier")).unwrap_or_default(),
                product_code: current_agreement(point).and_then(|index| {
                    given(items(point.get("agreements"))[index].get("tariff_code"))
                }),
                supply_start_date: given(point.get("supply_start_date")),
            })
            .collect(),
        open_statement_period_start: period_start,
        transfer_balance: text(field("transfer_balance")).unwrap_or("0"),
    }
}

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(&'static str),
    Index(usize),
}
use Step::{Index, Key};

/// A change to write: the value at a path, or (`None`) the key removed.
type Change = (Vec<Step>, Option<Value>);

/// Collects the changes between what a hook saw and what it returned.
struct Changes(Vec<Change>);

impl Changes {
    fn text(&mut self, path: Vec<Step>, before: &str, after: String) {
        if before != after {
            self.0.push((path, Some(Value::String(after))));
        }
    }

    /// An optional field: `None` after `Some` removes it.
    fn optional(&mut self, path: Vec<Step>, before: Option<&str>, after: Option<String>) {
        if before != after.as_deref() {
            self.0.push((path, after.map(Value::String)));
        }
    }
}

/// Writes the account a 0.1.0 hook returned over the document it was made from: only what
/// the hook changed.
pub fn write_account(document: &mut Value, answer: account::Owned) {
    let start = open_period_start(document);
    let changes = {
        let before = read_account(document, start.as_deref());
        changes(document, &before, answer)
    };
    for (path, value) in changes {
        apply(document, &path, value);
    }
}

/// The field `key` of the document itself.
fn top(key: &'static str) -> Vec<Step> {
    vec![Key(key)]
}

fn changes(document: &Value, before: &account::Wire<'_>, after: account::Owned) -> Vec<Change> {
    let mut changes = Changes(Vec::new());
    for (key, was, now) in [
        (
            "import_supplier",
            before.import_supplier,
            after.import_supplier,
        ),
        (
            "external_account_number",
            before.external_account_number,
            after.external_account_number,
        ),
        ("billing_name", before.billing_name, after.billing_name),
    ] {
        changes.text(top(key), was, now);
    }
    address_changes(
        document,
        &mut changes,
        &before.billing_address,
        after.billing_address,
    );
    customer_changes(&mut changes, &before.customers, after.customers);
    let points: Vec<(usize, usize, &Value)> = meter_points(document).collect();
    for ((address, index, point), (was, now)) in points
        .iter()
        .zip(before.supply_points.iter().zip(after.supply_points))
    {
        let at = |name: &'static str| {
            vec![
                Key("supply_addresses"),
                Index(*address),
                Key("meter_points"),
                Index(*index),
                Key(name),
            ]
        };
        changes.text(at("supply_type"), was.market, now.market);
        changes.text(at("identifier"), was.identifier, now.identifier);
        changes.optional(
            at("supply_start_date"),
            was.supply_start_date,
            now.supply_start_date,
        );
        if was.product_code != now.product_code.as_deref() {
            product_code_change(&mut changes, at("agreements"), point, now.product_code);
        }
    }
    if before.open_statement_period_start != after.open_statement_period_start.as_deref() {
        let billed_to = after
            .open_statement_period_start
            .and_then(|start| NaiveDate::parse_from_str(&start, "%Y-%m-%d").ok())
            .and_then(|start| start.pred_opt())
            .map(|day| Value::String(day.to_string()));
        changes.0.push((top("last_billed_to_date"), billed_to));
    }
    changes.text(
        top("transfer_balance"),
        before.transfer_balance,
        after.transfer_balance,
    );
    changes.0
}

fn address_changes(
    document: &Value,
    changes: &mut Changes,
    was: &address::Wire<'_>,
    now: address::Owned,
) {
    match document.get("billing_address").filter(|a| a.is_object()) {
        Some(address) => {
            let at = |name: &'static str| vec![Key("billing_address"), Key(name)];
            if was.address_line_1 != now.address_line_1
                || was.address_line_2 != now.address_line_2.as_deref()
                || was.address_line_3 != now.address_line_3.as_deref()
            {
                let beyond: Vec<&str> = text(address.get("street_address"))
                    .unwrap_or_default()
                    .split('\n')
                    .skip(3)
                    .collect();
                let lines: Vec<&str> = [
                    Some(now.address_line_1.as_str()),
                    now.address_line_2.as_deref(),
                    now.address_line_3.as_deref(),
                ]
                .into_iter()
                .flatten()
                .chain(beyond)
                .collect();
                changes
                    .0
                    .push((at("street_address"), Some(Value::String(lines.join("\n")))));
            }
            changes.text(at("locality"), was.town, now.town);
            changes.text(at("postal_code"), was.postcode, now.postcode);
            changes.text(at("country"), was.country, now.country);
        }
        None => {
            changes.text(
                top("billing_address1"),
                was.address_line_1,
                now.address_line_1,
            );
            // A line the hook left out is written empty: the flat lines are kept as strings.
            for (name, was, now) in [
                ("billing_address2", was.address_line_2, now.address_line_2),
                ("billing_address3", was.address_line_3, now.address_line_3),
            ] {
                if was != now.as_deref() {
                    let line = Value::String(now.unwrap_or_default());
                    changes.0.push((top(name), Some(line)));
                }
            }
            changes.text(top("billing_address4"), was.town, now.town);
            changes.text(top("billing_postcode"), was.postcode, now.postcode);
        }
    }
}

fn customer_changes(
    changes: &mut Changes,
    seen: &[customer::Wire<'_>],
    answered: Vec<customer::Owned>,
) {
    let count = answered.len();
    // What a customer the hook added is compared with: nothing.
    let empty = customer::Wire::default();
    for (index, now) in answered.into_iter().enumerate() {
        let at = |name: &'static str| vec![Key("customers"), Index(index), Key(name)];
        let was = seen.get(index).unwrap_or(&empty);
        // The texts as optional fields that are always there: a changed one is written.
        for (name, before, after) in [
            ("given_name", Some(was.given_name), Some(now.given_name)),
            ("family_name", Some(was.family_name), Some(now.family_name)),
            ("email", Some(was.email), Some(now.email)),
            ("mobile", was.mobile, now.mobile),
            ("landline", was.landline, now.landline),
            ("date_of_birth", was.date_of_birth, now.date_of_birth),
        ] {
            changes.optional(at(name), before, after);
        }
    }
    if count < seen.len() {
        changes.0.push((vec![Key("customers"), Index(count)], None));
    }
}

/// A new product code goes on the meter point's current agreement; a meter point without one
/// gets an agreement from its supply start date.
fn product_code_change(
    changes: &mut Changes,
    agreements: Vec<Step>,
    point: &Value,
    code: Option<String>,
) {
    match (current_agreement(point), code) {
        (Some(index), code) => {
            let mut at = agreements;
            at.extend([Index(index), Key("tariff_code")]);
            changes
                .0
                .push((at, Some(Value::String(code.unwrap_or_default()))));
        }
        (None, Some(code)) => {
            if let Some(start) = given(point.get("supply_start_date")) {
                let mut at = agreements;
                at.push(Index(0));
                let mut agreement = Map::new();
                agreement.insert("tariff_code".into(), Value::String(code));
                agreement.insert("effective_from".into(), Value::String(start.to_owned()));
                changes.0.push((at, Some(Value::Object(agreement))));
            }
        }
        (None, None) => {}
    }
}

/// Writes `value` at `path` (objects and arrays made as needed); `None` removes the key, or,
/// at an array index, cuts the array there.
fn apply(document: &mut Value, path: &[Step], value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut slot = document;
    for (step, next) in parents.iter().zip(path.iter().skip(1)) {
        let fresh = || match next {
            Key(_) => Value::Object(Map::new()),
            Index(_) => Value::Array(Vec::new()),
        };
        slot = match step {
            Key(name) => {
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                let Value::Object(object) = slot else { return };
                object.entry(*name).or_insert_with(fresh)
            }
            Index(index) => {
                if !slot.is_array() {
                    *slot = Value::Array(Vec::new());
                }
                let Value::Array(array) = slot else { return };
                while array.len() <= *index {
                    array.push(fresh());
                }
                &mut array[*index]
            }
        };
    }
    match (last, value, slot) {
        (Key(name), Some(value), Value::Object(object)) => {
            object.insert((*name).to_owned(), value);
        }
        (Key(name), None, Value::Object(object)) => {
            object.shift_remove(*name);
        }
        (Key(name), Some(value), other) => {
            let mut object = Map::new();
            object.insert((*name).to_owned(), value);
            *other = Value::Object(object);
        }
        (Index(index), Some(value), Value::Array(array)) => {
            if *index < array.len() {
                array[*index] = value;
            } else {
                array.push(value);
            }
        }
        (Index(index), None, Value::Array(array)) => array.truncate(*index),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The record a hook would see, owned (what an unchanged answer returns).
    fn record(document: &Value) -> account::Owned {
        let start = open_period_start(document);
        read_account(document, start.as_deref()).owned()
    }

    fn document() -> Value {
        json!({
            "import_supplier": "OLD_CO",
            "external_account_number": "OE-1001",
            "billing_name": "Ada Lovelace",
            "billing_address1": "1 Analytical Street", "billing_address2": "", "billing_address3": "",
            "billing_address4": "London", "billing_address5": "", "billing_postcode": "N1 1AA",
            "account_type": "DOMESTIC",
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com",
                           "mobile": "07700 900123", "title": "Countess", "psr": []}],
            "supply_addresses": [{
                "supply_address1": "1 Analytical Street", "supply_postcode": "N1 1AA",
                "customer_at_supply_address_from_date": "2024-01-01",
                "meter_points": [{"supply_type": "ELECTRICITY", "identifier": "1200023305967", "mpid": "TENT",
                                  "supply_start_date": "2024-01-01",
                                  "agreements": [{"tariff_code": "OLD-1", "effective_from": "2023-01-01", "effective_to": "2024-01-01"},
                                                 {"tariff_code": "OLDVAR", "effective_from": "2024-01-01"}]}]
            }],
            "last_billed_to_date": "2025-02-28",
            "transfer_balance": 12.3
        })
    }

    #[test]
    fn the_record_is_a_view_of_the_document() {
        let account = record(&document());
        assert_eq!(
            account.billing_address.address_line_1,
            "1 Analytical Street"
        );
        assert_eq!(account.billing_address.address_line_2, None);
        assert_eq!(account.billing_address.town, "London");
        assert_eq!(account.billing_address.country, "GB");
        assert!(account.customers[0].is_primary);
        assert_eq!(account.supply_points[0].market, "ELECTRICITY");
        assert_eq!(
            account.supply_points[0].product_code.as_deref(),
            Some("OLDVAR")
        );
        assert_eq!(
            account.open_statement_period_start.as_deref(),
            Some("2025-03-01")
        );
        assert_eq!(account.transfer_balance, "12.3", "a number as written");
    }

    #[test]
    fn an_unchanged_answer_leaves_the_document_as_it_was() {
        let mut value = document();
        let answer = record(&value);
        write_account(&mut value, answer);
        assert_eq!(value, document());
        assert!(value["transfer_balance"].is_number());
    }

    #[test]
    fn changes_go_back_where_they_came_from_and_the_rest_stays() {
        let mut value = document();
        let mut answer = record(&value);
        answer.customers[0].mobile = Some("+447700900123".into());
        answer.customers[0].landline = Some("+442079460000".into());
        answer.billing_address.address_line_2 = Some("Flat 2".into());
        answer.supply_points[0].product_code = Some("VAR-22".into());
        answer.open_statement_period_start = Some("2025-04-01".into());
        answer.transfer_balance = "0.00".into();
        write_account(&mut value, answer);
        let mut expected = document();
        expected["customers"][0]["mobile"] = json!("+447700900123");
        expected["customers"][0]["landline"] = json!("+442079460000");
        expected["billing_address2"] = json!("Flat 2");
        expected["supply_addresses"][0]["meter_points"][0]["agreements"][1]["tariff_code"] =
            json!("VAR-22");
        expected["last_billed_to_date"] = json!("2025-03-31");
        expected["transfer_balance"] = json!("0.00");
        assert_eq!(value, expected);
    }

    #[test]
    fn a_structured_address_keeps_its_shape_and_customers_follow_the_answer() {
        let mut value = document();
        for line in crate::domain::account::LEGACY_BILLING_ADDRESS {
            value.as_object_mut().expect("object").shift_remove(line);
        }
        value["billing_address"] = json!({"street_address": "1 Analytical Street\nFlat 2\nWing B\nFloor 3",
                                          "locality": "London", "postal_code": "N1 1AA", "country": "GB"});
        let mut answer = record(&value);
        assert_eq!(
            answer.billing_address.address_line_3.as_deref(),
            Some("Wing B")
        );
        answer.billing_address.address_line_2 = None;
        answer.billing_address.town = "Islington".into();
        answer.customers.clear();
        write_account(&mut value, answer);
        assert_eq!(
            value["billing_address"],
            json!({"street_address": "1 Analytical Street\nWing B\nFloor 3", "locality": "Islington",
                   "postal_code": "N1 1AA", "country": "GB"})
        );
        assert_eq!(value["customers"], json!([]));
    }

    #[test]
    fn supply_points_cannot_be_added_or_removed() {
        let mut value = document();
        let mut answer = record(&value);
        answer.supply_points.push(supply_point::Owned {
            market: "GAS".into(),
            identifier: "1234".into(),
            product_code: None,
            supply_start_date: None,
        });
        write_account(&mut value, answer);
        assert_eq!(value, document());
    }
}
