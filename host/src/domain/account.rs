//! The account document suppliers stage: the real platform's `EnergyAccount`, every field of
//! it.
//!
//! A document is checked against the real document's schema ([`RequestDocument::Account`]:
//! types, nullability, enumerations, lengths, required fields, the per-type meter points and
//! transactions), then against the few rules no schema states that Ferry keeps (phone
//! numbers, meter points listed twice, one style of billing address). Every problem is
//! reported at once, in the real platform's codes, each at its dot path. Fields the document
//! does not define are ignored and named, or refused for a strict supplier, as everywhere.
//!
//! The accepted document is kept whole ([`AccountPayload`]); the parts Ferry acts on itself
//! (which account it is, its customers' e-mails, its meter points, where its open statement
//! period starts) are read from it where they are used.

use super::request_document::RequestDocument;
use super::validation::{FieldError, FieldErrors, json_kind};
use chrono::{NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

pub const MAX_EXTERNAL_ACCOUNT_NUMBER: usize = 128;

/// An accepted account document. It serializes as the document itself.
///
/// The document is shared, not copied, between the payload's clones: a staging or a
/// migration hands the same account to the import process, the platform account and their
/// events, and it is never changed once accepted (a mapped account is a new payload).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct AccountPayload {
    import_supplier: String,
    external_account_number: String,
    document: Arc<Map<String, Value>>,
}

/// As the document itself, written straight from the shared one (serde's `into` would copy
/// it first, for every record encoded).
impl Serialize for AccountPayload {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.document.serialize(serializer)
    }
}

impl TryFrom<Map<String, Value>> for AccountPayload {
    type Error = String;

    fn try_from(document: Map<String, Value>) -> Result<Self, String> {
        let text = |name: &str| match document.get(name) {
            Some(Value::String(text)) => Ok(text.clone()),
            _ => Err(format!("an account document without `{name}`")),
        };
        Ok(Self {
            import_supplier: text("import_supplier")?,
            external_account_number: text("external_account_number")?,
            document: Arc::new(document),
        })
    }
}

impl From<AccountPayload> for Map<String, Value> {
    fn from(account: AccountPayload) -> Self {
        Arc::unwrap_or_clone(account.document)
    }
}

/// An electricity or gas meter point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Market {
    Electricity,
    Gas,
}

impl Market {
    fn of(supply_type: &str) -> Option<Market> {
        match supply_type {
            "ELECTRICITY" => Some(Market::Electricity),
            "GAS" => Some(Market::Gas),
            _ => None,
        }
    }
}

impl AccountPayload {
    pub fn import_supplier(&self) -> &str {
        &self.import_supplier
    }

    pub fn external_account_number(&self) -> &str {
        &self.external_account_number
    }

    /// The whole document.
    pub fn document(&self) -> &Map<String, Value> {
        &self.document
    }

    /// The whole document as a JSON value, of its own: one copy of the shared document.
    pub fn to_value(&self) -> Value {
        Value::Object(Map::clone(&self.document))
    }

    fn items(&self, name: &str) -> &[Value] {
        items(self.document.get(name))
    }

    /// The e-mail addresses of the account's customers, in their order (those that have one).
    pub fn customer_emails(&self) -> Vec<&str> {
        self.items("customers")
            .iter()
            .filter_map(|customer| customer.get("email")?.as_str())
            .filter(|email| !email.is_empty())
            .collect()
    }

    /// Every meter point of every supply address (MPAN / MPRN and market), in order.
    ///
    /// An account stored before Ferry took the real document has Ferry's own
    /// `supply_points[]` (`market`, `identifier`) instead: those are read the same way.
    pub fn meter_points(&self) -> Vec<(String, Market)> {
        let point = |point: &Value, market: &str| {
            let identifier = point.get("identifier")?.as_str()?;
            let market = Market::of(point.get(market)?.as_str()?)?;
            Some((identifier.to_owned(), market))
        };
        let stored_before = self
            .items("supply_points")
            .iter()
            .filter_map(|p| point(p, "market"));
        self.items("supply_addresses")
            .iter()
            .flat_map(|address| items(address.get("meter_points")))
            .filter_map(|p| point(p, "supply_type"))
            .chain(stored_before)
            .collect()
    }

    /// See [`open_statement_period_start`].
    pub fn open_statement_period_start(&self) -> Option<NaiveDate> {
        open_statement_period_start(&self.document)
    }
}

/// The first day of an account document's open statement period: the day after
/// `last_billed_to_date`, when the account was billed before (else the day it is migrated). An
/// account stored before Ferry took the real document says it in its own
/// `open_statement_period_start`.
pub fn open_statement_period_start(document: &Map<String, Value>) -> Option<NaiveDate> {
    let date = |name: &str| {
        let text = document.get(name)?.as_str()?;
        NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
    };
    date("last_billed_to_date")
        .and_then(|billed_to| billed_to.succ_opt())
        .or_else(|| date("open_statement_period_start"))
}

/// The elements of an array value (none when it is missing or not one).
fn items(value: Option<&Value>) -> &[Value] {
    value
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Limits that depend on configuration.
#[derive(Debug, Clone, Copy)]
pub struct AccountLimits {
    /// The most elements any list in the document may hold.
    pub max_items: usize,
}

/// Reads and validates an account document, reporting every problem at once. Unknown fields
/// are left out of the document (and named) inside a [`super::validation::reading`] that
/// ignores them, and refused otherwise. The document becomes the account as it is, uncopied,
/// unless unknown fields are left out of it.
pub fn read_account(body: Value, limits: AccountLimits) -> Result<AccountPayload, FieldErrors> {
    let checked = RequestDocument::Account
        .check(&body, limits.max_items, check_rules)
        .map_err(super::ledger::with_missing_transaction_ids)?;
    let without_unknown = match checked {
        Cow::Owned(document) => Some(document),
        Cow::Borrowed(_) => None,
    };
    match (without_unknown, body) {
        (Some(document), _) | (None, Value::Object(document)) => AccountPayload::try_from(document)
            .map_err(|detail| FieldErrors::single(FieldError::new(None, "invalid", detail))),
        // `check` passes objects only.
        (None, other) => Err(FieldErrors::single(FieldError::new(
            None,
            "invalid",
            format!("Expected a JSON object, but got {}.", json_kind(&other)),
        ))),
    }
}

/// The flat ("legacy") billing address fields, the alternative to `billing_address`.
pub const LEGACY_BILLING_ADDRESS: [&str; 6] = [
    "billing_address1",
    "billing_address2",
    "billing_address3",
    "billing_address4",
    "billing_address5",
    "billing_postcode",
];

/// The rules no schema states (each looks only at values of the type it expects, so that
/// they are reported together with the schema's errors).
fn check_rules(document: &Map<String, Value>, errors: &mut FieldErrors) {
    if let Some(Value::String(number)) = document.get("external_account_number") {
        if number.is_empty() {
            errors.push(FieldError::new(
                "external_account_number".to_owned(),
                "blank",
                "This field may not be blank.",
            ));
        } else if number.trim() != number || number.contains('/') {
            errors.push(FieldError::new(
                "external_account_number".to_owned(),
                "invalid_external_account_number",
                "No leading or trailing spaces and no `/`: it names the account in paths.",
            ));
        }
    }
    if document
        .get("billing_address")
        .is_some_and(|a| !a.is_null())
        && LEGACY_BILLING_ADDRESS
            .iter()
            .any(|name| document.get(*name).is_some())
    {
        errors.push(FieldError::new(
            "billing_address".to_owned(),
            "billing_address_new_style_and_legacy",
            "Give the billing address either as `billing_address` or as `billing_address1` \
             etc., not both.",
        ));
    }
    for (index, customer) in items(document.get("customers")).iter().enumerate() {
        for field in ["mobile", "landline"] {
            if let Some(Value::String(text)) = customer.get(field)
                && !text.is_empty()
                && normalise_phone(text).is_none()
            {
                errors.push(FieldError::new(
                    format!("customers.{index}.{field}"),
                    "invalid_phone_number",
                    format!("{text} is not a valid phone number"),
                ));
            }
        }
    }
    check_meter_points(document, errors);
    for (index, note) in items(document.get("notes")).iter().enumerate() {
        if let Value::Object(note) = note {
            super::notes::check_note(note, &format!("notes.{index}"), errors);
        }
    }
    check_statements(document, errors);
    let found = std::mem::take(errors);
    let ledgers = super::account_ledger::read_ledgers(document, Utc::now().date_naive(), &found);
    *errors = found;
    if let Err(ledger_errors) = ledgers {
        errors.extend(ledger_errors);
    }
}

/// The document's statements, each as `historical-statements/create/` checks one, and each
/// `statement_id` once.
fn check_statements(document: &Map<String, Value>, errors: &mut FieldErrors) {
    let mut seen = std::collections::HashSet::new();
    for (index, statement) in items(document.get("statements")).iter().enumerate() {
        let Value::Object(statement) = statement else {
            continue;
        };
        let at = format!("statements.{index}");
        super::statements::check_statement(statement, &at, errors);
        if let Some(Value::String(id)) = statement.get("statement_id")
            && !seen.insert(id.as_str())
        {
            errors.push(FieldError::new(
                format!("{at}.statement_id"),
                super::statements::STATEMENT_EXISTS,
                format!("The account has a historical statement {id:?} twice."),
            ));
        }
    }
}

/// A meter point is listed once: not twice at one supply address
/// (`duplicate_meter_points_provided`), nor at two (`..._on_different_supply_addresses_...`).
fn check_meter_points(document: &Map<String, Value>, errors: &mut FieldErrors) {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (address_index, address) in items(document.get("supply_addresses")).iter().enumerate() {
        for (index, point) in items(address.get("meter_points")).iter().enumerate() {
            let Some(identifier) = point.get("identifier").and_then(Value::as_str) else {
                continue;
            };
            match seen.iter().find(|(known, _)| *known == identifier) {
                Some((_, earlier)) if *earlier == address_index => errors.push(FieldError::new(
                    format!("supply_addresses.{address_index}.meter_points.{index}.identifier"),
                    "duplicate_meter_points_provided",
                    format!("Meter point {identifier} is listed twice at this supply address."),
                )),
                Some(_) => errors.push(FieldError::new(
                    format!("supply_addresses.{address_index}.meter_points.{index}.identifier"),
                    "duplicate_meter_points_on_different_supply_addresses_provided",
                    format!("Meter point {identifier} is listed at two supply addresses."),
                )),
                None => seen.push((identifier, address_index)),
            }
        }
    }
}

/// A phone number with spaces, dashes, dots and brackets removed: an optional `+` and 7 to 15
/// digits (E.164's bound). `None` when it is not one.
pub fn normalise_phone(text: &str) -> Option<String> {
    let compact: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    let digits = compact.strip_prefix('+').unwrap_or(&compact);
    let valid = (7..=15).contains(&digits.len())
        && digits.chars().all(|c| c.is_ascii_digit())
        && !(compact.starts_with('+') && digits.starts_with('0'));
    valid.then_some(compact)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::validation::codes;
    use crate::domain::validation::{UnknownFields, reading};
    use serde_json::json;

    const LIMITS: AccountLimits = AccountLimits { max_items: 100 };

    pub fn valid_account() -> Value {
        json!({
            "import_supplier": "OLD_CO",
            "external_account_number": "ACC-1",
            "billing_name": "Ada Lovelace",
            "billing_address1": "1 Analytical Street",
            "billing_address4": "London",
            "billing_postcode": "N1 1AA",
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com", "landline": "020 7946 0000", "date_of_birth": null}],
            "supply_addresses": [{
                "supply_address1": "1 Analytical Street", "supply_postcode": "N1 1AA",
                "customer_at_supply_address_from_date": "2024-01-01",
                "meter_points": [
                    {"supply_type": "ELECTRICITY", "identifier": "1200023305967", "mpid": "TENT", "supply_start_date": "2024-01-01"},
                    {"supply_type": "GAS", "identifier": "3456789012", "mpid": "TENT", "shipper_mpid": "TEN", "supply_start_date": "2024-01-01"}
                ]
            }],
            "last_billed_to_date": "2025-02-28",
            "transfer_balance": 12.3,
            "last_statement_balance": "12.30",
            "historical_statement_transactions": [{"transaction_id": "H-1",
                "transaction_date": "2025-02-01", "amount": 12.3, "type": "PAYMENT"}]
        })
    }

    #[test]
    fn an_account_is_stored_as_its_document_and_read_back_the_same() {
        let account = read_account(valid_account(), LIMITS).expect("valid");
        let stored = serde_json::to_string(&account).expect("encoded");
        assert_eq!(
            stored,
            serde_json::to_string(account.document()).expect("encoded")
        );
        let read: AccountPayload = serde_json::from_str(&stored).expect("decoded");
        assert_eq!(read, account);
        assert_eq!(Map::from(read), *account.document());
    }

    #[test]
    fn reads_a_valid_account_whole() {
        let account = read_account(valid_account(), LIMITS).expect("valid");
        assert_eq!(account.import_supplier(), "OLD_CO");
        assert_eq!(account.external_account_number(), "ACC-1");
        assert_eq!(account.customer_emails(), ["ada@example.com"]);
        assert_eq!(
            account.meter_points(),
            [
                ("1200023305967".to_owned(), Market::Electricity),
                ("3456789012".to_owned(), Market::Gas)
            ]
        );
        assert_eq!(
            account.open_statement_period_start(),
            NaiveDate::from_ymd_opt(2025, 3, 1)
        );
        assert_eq!(account.to_value(), valid_account(), "kept as sent");
        let stored = serde_json::to_value(&account).expect("serializes");
        assert_eq!(stored, valid_account());
        let back: AccountPayload = serde_json::from_value(stored).expect("deserializes");
        assert_eq!(back, account);
    }

    /// An account stored by an earlier Ferry (its own shape) still loads, with its meter
    /// points and its open statement period.
    #[test]
    fn an_account_stored_in_the_earlier_shape_keeps_its_meter_points_and_period() {
        let stored = json!({
            "import_supplier": "OLD_CO", "external_account_number": "ACC-1",
            "billing_name": "Ada Lovelace",
            "billing_address": {"address_line_1": "1 Analytical St", "town": "London", "postcode": "N1 1AA", "country": "GB"},
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com", "is_primary": true}],
            "supply_points": [{"market": "GAS", "identifier": "3406086401"}],
            "open_statement_period_start": "2024-03-01",
            "transfer_balance": "12.30"
        });
        let account: AccountPayload = serde_json::from_value(stored).expect("loads");
        assert_eq!(
            account.meter_points(),
            [("3406086401".to_owned(), Market::Gas)]
        );
        assert_eq!(
            account.open_statement_period_start(),
            NaiveDate::from_ymd_opt(2024, 3, 1)
        );
        assert_eq!(account.customer_emails(), ["ada@example.com"]);
    }

    #[test]
    fn only_the_supplier_and_the_account_number_are_required() {
        let account = read_account(
            json!({"import_supplier": "OLD_CO", "external_account_number": "A"}),
            LIMITS,
        )
        .expect("valid");
        assert!(account.meter_points().is_empty());
        let errors = read_account(json!({}), LIMITS).expect_err("invalid");
        assert_eq!(
            codes(&errors),
            [
                ("external_account_number".to_owned(), "required".to_owned()),
                ("import_supplier".to_owned(), "required".to_owned())
            ]
        );
    }

    #[test]
    fn reports_every_problem_in_the_real_codes() {
        let mut body = valid_account();
        body["customers"][0]["landline"] = json!("not a phone");
        body["customers"][0]["email"] = json!(null);
        body["customers"][0]["given_name"] = json!(null);
        body["customers"][0]["title"] = json!("x".repeat(21));
        body["account_type"] = json!("HOUSEHOLD");
        body["billing_postcode"] = json!(7);
        body["supply_addresses"][0]["meter_points"][1]["mprn"] = json!("ignored");
        body["supply_addresses"][0]["meter_points"][0]["supply_start_date"] = json!("01/01/2024");
        body["supply_addresses"][0]["meter_points"][1]["supply_type"] = json!("WATER");
        body["transfer_balance"] = json!("1.23456789012");
        body["last_billed_to_date"] = json!(null);
        let (result, ignored) = reading(UnknownFields::Ignore, || read_account(body, LIMITS));
        let found = codes(&result.expect_err("invalid"));
        for expected in [
            ("customers.0.given_name", "null"),
            ("customers.0.title", "max_length"),
            ("account_type", "invalid_choice"),
            ("billing_postcode", "invalid"),
            (
                "supply_addresses.0.meter_points.0.supply_start_date",
                "invalid",
            ),
            (
                "supply_addresses.0.meter_points.1.supply_type",
                "invalid_choice",
            ),
            ("transfer_balance", "max_decimal_places"),
            ("last_billed_to_date", "null"),
        ] {
            assert!(
                found.contains(&(expected.0.to_owned(), expected.1.to_owned())),
                "{expected:?} missing from {found:?}"
            );
        }
        assert!(
            !found.iter().any(|(attr, _)| attr == "customers.0.email"),
            "email is nullable: {found:?}"
        );
        assert!(ignored.is_empty() || ignored.iter().all(|f| f.ends_with("mprn")));
    }

    #[test]
    fn the_rules_no_schema_states() {
        let mut body = valid_account();
        body["customers"][0]["landline"] = json!("not a phone");
        body["billing_address"] = json!({"country": "GB", "postal_code": "N1 1AA"});
        let duplicate = body["supply_addresses"][0]["meter_points"][0].clone();
        body["supply_addresses"][0]["meter_points"]
            .as_array_mut()
            .expect("list")
            .push(duplicate);
        let mut second = body["supply_addresses"][0].clone();
        second["meter_points"] = json!([body["supply_addresses"][0]["meter_points"][1].clone()]);
        body["supply_addresses"]
            .as_array_mut()
            .expect("list")
            .push(second);
        let found = codes(&read_account(body, LIMITS).expect_err("invalid"));
        assert_eq!(
            found,
            // In the order of the document (`billing_address` was added last).
            [
                (
                    "customers.0.landline".to_owned(),
                    "invalid_phone_number".to_owned()
                ),
                (
                    "supply_addresses.0.meter_points.2.identifier".to_owned(),
                    "duplicate_meter_points_provided".to_owned()
                ),
                (
                    "supply_addresses.1.meter_points.0.identifier".to_owned(),
                    "duplicate_meter_points_on_different_supply_addresses_provided".to_owned()
                ),
                (
                    "billing_address".to_owned(),
                    "billing_address_new_style_and_legacy".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn unknown_fields_are_left_out_and_named_or_refused() {
        let mut body = valid_account();
        body["surprise"] = json!(1);
        body["customers"][0]["nickname"] = json!("Ada");
        body["historical_statement_transactions"][0]["colour"] = json!("red");
        let (account, ignored) =
            reading(UnknownFields::Ignore, || read_account(body.clone(), LIMITS));
        let account = account.expect("valid");
        assert_eq!(
            ignored,
            [
                "customers.0.nickname",
                "historical_statement_transactions.0.colour",
                "surprise"
            ],
            "in document order"
        );
        assert_eq!(account.to_value(), valid_account());
        let (refused, _) = reading(UnknownFields::Refuse, || read_account(body, LIMITS));
        let found = codes(&refused.expect_err("strict"));
        assert!(found.contains(&(
            "customers.0.nickname".to_owned(),
            "unknown_field".to_owned()
        )));
    }

    /// Every field of the account's top level: `null` where the real document allows it, every
    /// value of its enumeration and none other, as the reader answers them.
    #[test]
    fn nullable_fields_and_every_enumeration_of_the_top_level() {
        let properties = crate::domain::request_document::request_schemas()["$defs"]["EnergyAccount"]["properties"]
            .as_object()
            .expect("properties");
        let (mut nullable, mut choices) = (0, 0);
        for (name, property) in properties {
            let takes_null = property["type"]
                .as_array()
                .is_some_and(|types| types.contains(&json!("null")))
                || property.get("if") == Some(&json!({"type": "null"}));
            if takes_null {
                nullable += 1;
                let mut body = valid_account();
                body[name] = Value::Null;
                read_account(body, LIMITS).unwrap_or_else(|e| panic!("{name}: null: {e:?}"));
            }
            for value in property["enum"].as_array().into_iter().flatten() {
                choices += 1;
                let mut body = valid_account();
                body[name] = value.clone();
                read_account(body, LIMITS).unwrap_or_else(|e| panic!("{name}: {value}: {e:?}"));
            }
            if property["enum"].is_array() {
                let mut body = valid_account();
                body[name] = json!("NOT_ONE_OF_THEM");
                let errors = read_account(body, LIMITS).expect_err("outside the enumeration");
                assert_eq!(
                    codes(&errors),
                    [(name.clone(), "invalid_choice".to_owned())]
                );
            }
        }
        assert!(
            nullable >= 8 && choices >= 60,
            "{nullable} nullable, {choices} choices"
        );
    }

    /// The fields the real document marks deprecated are still taken.
    #[test]
    fn deprecated_fields_are_taken() {
        let mut body = valid_account();
        for (name, value) in [
            ("business_type", json!("LTD")),
            ("company_number", json!("01234567")),
            ("dd_reference", json!("DD-1")),
            ("is_managed", json!(false)),
            ("is_portfolio_lead", json!(null)),
            ("last_statement_balance", json!("12.30")),
            ("last_statement_closing_date", json!("2025-02-15")),
            ("last_statement_issue_date", json!("2025-02-16")),
        ] {
            body[name] = value;
        }
        body["customers"][0]["role"] = json!(null);
        let account = read_account(body, LIMITS).expect("valid");
        assert_eq!(account.document()["dd_reference"], "DD-1");
    }

    #[test]
    fn lists_are_bounded() {
        let mut body = valid_account();
        body["notes"] = json!(
            (0..3)
                .map(|i| json!({"body": format!("n{i}")}))
                .collect::<Vec<_>>()
        );
        let errors = read_account(body, AccountLimits { max_items: 2 }).expect_err("too many");
        assert_eq!(
            codes(&errors),
            [("notes".to_owned(), "max_length".to_owned())]
        );
    }

    #[test]
    fn phone_numbers() {
        assert_eq!(
            normalise_phone("+44 (0)20 7946-0000").as_deref(),
            Some("+4402079460000")
        );
        assert_eq!(
            normalise_phone("+44 20 7946 0000").as_deref(),
            Some("+442079460000")
        );
        assert!(normalise_phone("12345").is_none());
        assert!(normalise_phone("+0123456789").is_none());
        assert!(normalise_phone("0800-ABC").is_none());
    }
}
