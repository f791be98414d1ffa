//! The tests of [`super`].

use super::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn catalogue() -> &'static Catalogue {
    Catalogue::embedded()
}

fn errors_of(event_type: &str, version: &str, data: Value) -> Vec<PayloadError> {
    match catalogue().validate(event_type, version, &data) {
        Err(CatalogueError::InvalidPayload { errors, .. }) => errors,
        other => panic!("expected an invalid payload, got {other:?}"),
    }
}

fn error(path: &str, problem: &str) -> PayloadError {
    PayloadError {
        path: path.to_owned(),
        problem: problem.to_owned(),
    }
}

// --- coverage against the spec document -----------------------------------------------

/// The spec document: next to the repository in the real tree (`CARGO_MANIFEST_DIR` is
/// `host/`), else at its absolute location (scratch builds outside the repository).
fn spec_path() -> PathBuf {
    let beside_repository = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/spec/event-catalogue.md"
    ));
    if beside_repository.exists() {
        beside_repository.to_path_buf()
    } else {
        PathBuf::from("/work/shared/spec/event-catalogue.md")
    }
}

/// A piece of a bullet line, at the top level (not inside parentheses).
#[derive(Debug)]
enum Piece {
    /// A backticked event type name (or a `.suffix` continuing the line's first name).
    Name(String),
    /// A parenthesised payload version marker: `(v1)`, `(v1, v2)`, `(each v1)`,
    /// `(version `1.0.0`)`.
    Versions(Vec<String>),
    /// Any other text, including parentheses that are not version markers.
    Text(String),
}

fn is_version_word(word: &str) -> bool {
    word.strip_prefix('v')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

fn marker_versions(inner: &str) -> Option<Vec<String>> {
    let inner = inner.trim();
    let inner = inner.strip_prefix("each ").unwrap_or(inner);
    if let Some(quoted) = inner.strip_prefix("version `") {
        let version = quoted.strip_suffix('`')?;
        let well_formed =
            !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        return well_formed.then(|| vec![version.to_owned()]);
    }
    let words: Vec<&str> = inner.split(',').map(str::trim).collect();
    words
        .iter()
        .all(|word| is_version_word(word))
        .then(|| words.iter().map(|word| (*word).to_owned()).collect())
}

fn pieces(line: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
                let name: String = chars.by_ref().take_while(|&c| c != '`').collect();
                pieces.push(Piece::Name(name));
            }
            '(' => {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
                let mut depth = 1;
                let mut inner = String::new();
                for c in chars.by_ref() {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    if depth == 0 {
                        break;
                    }
                    inner.push(c);
                }
                pieces.push(match marker_versions(&inner) {
                    Some(versions) => Piece::Versions(versions),
                    None => Piece::Text(format!("({inner})")),
                });
            }
            _ => text.push(c),
        }
    }
    pieces.push(Piece::Text(text));
    pieces
}

/// `.completed` after `a.b.requested` is `a.b.completed`; `.completed.v1` after
/// `a.b.cancelled.v1` is `a.b.completed.v1` (as many segments replaced as the suffix has).
fn continue_name(first: &str, suffix: &str) -> String {
    let mut prefix = first;
    for _ in 0..suffix.matches('.').count() {
        let cut = prefix
            .rfind('.')
            .unwrap_or_else(|| panic!("{suffix} cannot continue {first}: not enough segments"));
        prefix = &prefix[..cut];
    }
    format!("{prefix}{suffix}")
}

/// Every (event type, version) pair the bullet lines of the "## Events" section list.
fn documented_pairs(markdown: &str) -> BTreeSet<(String, String)> {
    let events_section = markdown
        .lines()
        .skip_while(|line| line.trim() != "## Events")
        .skip(1)
        .take_while(|line| !line.starts_with("## "));
    let mut pairs = BTreeSet::new();
    for line in events_section {
        let Some(bullet) = line.strip_prefix("- ") else {
            continue;
        };
        let mut first_name: Option<String> = None;
        let mut pending: Vec<String> = Vec::new();
        let mut last_group: Vec<String> = Vec::new();
        let mut leading_versions: Vec<String> = Vec::new();
        let mut text_versions: Vec<String> = Vec::new();
        let mut saw_marker = false;
        for piece in pieces(bullet) {
            match piece {
                Piece::Name(name) => {
                    assert!(
                        !name.is_empty() && !name.contains(' '),
                        "odd name `{name}` in: {line}"
                    );
                    let full = match (&first_name, name.starts_with('.')) {
                        (Some(first), true) => continue_name(first, &name),
                        (None, true) => panic!("`{name}` continues nothing in: {line}"),
                        (_, false) => name,
                    };
                    first_name.get_or_insert_with(|| full.clone());
                    pending.push(full);
                }
                Piece::Versions(versions) => {
                    saw_marker = true;
                    if pending.is_empty() && last_group.is_empty() {
                        // "Move-in events (each v1) with ...: `a`, `.b`": before the names.
                        leading_versions.extend(versions);
                        continue;
                    }
                    if !pending.is_empty() {
                        last_group = std::mem::take(&mut pending);
                    }
                    // Otherwise "`x` (v1): ...; (v2): ...": more versions of the last names.
                    for name in &last_group {
                        for version in &versions {
                            pairs.insert((name.clone(), version.clone()));
                        }
                    }
                }
                Piece::Text(text) => text_versions.extend(
                    text.split(|c: char| !c.is_ascii_alphanumeric())
                        .filter(|word| is_version_word(word))
                        .map(str::to_owned),
                ),
            }
        }
        if pending.is_empty() {
            continue;
        }
        // Names with no marker after them: the marker before them, or (workflow events,
        // "each with payload version v1") the versions the line's text names.
        let versions = if !leading_versions.is_empty() {
            leading_versions
        } else if !saw_marker {
            text_versions.sort();
            text_versions.dedup();
            text_versions
        } else {
            Vec::new()
        };
        assert!(
            !versions.is_empty(),
            "no version for {pending:?} in: {line}"
        );
        for name in pending {
            for version in &versions {
                pairs.insert((name.clone(), version.clone()));
            }
        }
    }
    pairs
}

#[test]
fn the_catalogue_lists_exactly_the_documented_events() {
    let path = spec_path();
    let markdown = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    let documented = documented_pairs(&markdown);
    let catalogued: BTreeSet<(String, String)> = catalogue()
        .entries()
        .map(|entry| (entry.event_type.clone(), entry.version.clone()))
        .collect();
    let missing: Vec<_> = documented.difference(&catalogued).collect();
    let extra: Vec<_> = catalogued.difference(&documented).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing from the catalogue: {missing:?}\nnot in the document: {extra:?}"
    );
    assert_eq!(
        catalogued.len(),
        catalogue().entries().count(),
        "duplicates"
    );
    assert!(catalogued.len() >= 250, "only {} entries", catalogued.len());
}

#[test]
fn the_scanner_reads_every_notation() {
    let markdown = "## Events\n\
        - `a.one` (v1): x*\n\
        - `b.one` (v1, v2) and `b.two` (v1, v2): x*\n\
        - `c.one`, `c.two` (each v1) †: x\n\
        - `d.x.requested` and `.completed` (v1): x*\n\
        - `e.one` (v2) and `e.two` (v2): same fields\n\
        - `f.one` (version `1.0.0`): x*\n\
        - `g.one` (v1): same fields; (v2): same fields plus y*\n\
        - Some events (each v1) with field x*: `h.a.one`, `.two`; `h.a.three` (v1) adds y*\n\
        - Events, each with payload version v1, fields x*: `i.a.one.v1`, `.two.v1` (the type ends with `.v1` and the version is v1).\n\
        - `j.one` (v1): x:LedgerEntry (posted)\n\
        ## Versioning\n\
        - `z.one` (v1): not an event\n";
    let expected: BTreeSet<(String, String)> = [
        ("a.one", "v1"),
        ("b.one", "v1"),
        ("b.one", "v2"),
        ("b.two", "v1"),
        ("b.two", "v2"),
        ("c.one", "v1"),
        ("c.two", "v1"),
        ("d.x.requested", "v1"),
        ("d.x.completed", "v1"),
        ("e.one", "v2"),
        ("e.two", "v2"),
        ("f.one", "1.0.0"),
        ("g.one", "v1"),
        ("g.one", "v2"),
        ("h.a.one", "v1"),
        ("h.a.two", "v1"),
        ("h.a.three", "v1"),
        ("i.a.one.v1", "v1"),
        ("i.a.two.v1", "v1"),
        ("j.one", "v1"),
    ]
    .into_iter()
    .map(|(t, v)| (t.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(documented_pairs(markdown), expected);
}

// --- the catalogue itself ----------------------------------------------------------------

#[test]
fn lookups_follow_document_order() {
    let catalogue = catalogue();
    assert_eq!(
        catalogue.versions("billing.billing_document_representation.dispatched"),
        ["v1", "v2", "v3"]
    );
    assert_eq!(catalogue.versions("lifecycle.support-site.sale"), ["1.0.0"]);
    assert!(catalogue.versions("no.such.event").is_empty());
    let first = catalogue
        .entries()
        .next()
        .map(|entry| entry.event_type.as_str());
    assert_eq!(first, Some("account.communications_preferences_updated"));
    let dispatched = catalogue
        .get("billing.billing_document_representation.dispatched", "v3")
        .expect("dispatched v3");
    let names: Vec<&str> = dispatched.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "account_number",
            "billing_document_id",
            "billing_document_identifier",
            "billing_document_representation_dispatch_id",
            "billing_document_representations_id",
            "support_user_id"
        ]
    );
    assert!(catalogue.get("account.created", "v2").is_none());
    assert!(catalogue.shape("LedgerRef").is_some());
    assert!(catalogue.shape("PaymentLedgerRef").is_some());
}

#[test]
fn events_without_requirement_information_require_nothing() {
    for entry in catalogue().entries() {
        if !entry.requirements_known {
            let required: Vec<_> = entry.fields.iter().filter(|f| f.required).collect();
            assert!(
                required.is_empty(),
                "{} {}: {required:?}",
                entry.event_type,
                entry.version
            );
        }
    }
    let pending = catalogue().get("payment.pending", "v1").expect("pending");
    assert!(!pending.requirements_known);
    assert!(
        catalogue()
            .validate("payment.pending", "v1", &json!({}))
            .is_ok()
    );
}

#[test]
fn bad_catalogues_are_refused() {
    let unknown_shape = r#"{"shapes": {}, "events": [
        {"type": "a", "version": "v1", "requirements_known": true,
         "fields": {"x": {"type": {"array": {"shape": "Nope"}}}}}]}"#;
    let error = Catalogue::from_json(unknown_shape).expect_err("unknown shape");
    assert!(error.contains("unknown shape Nope"), "{error}");

    let duplicate = r#"{"shapes": {}, "events": [
        {"type": "a", "version": "v1", "requirements_known": true, "fields": {}},
        {"type": "a", "version": "v1", "requirements_known": true, "fields": {}}]}"#;
    let error = Catalogue::from_json(duplicate).expect_err("duplicate");
    assert!(error.contains("listed twice"), "{error}");

    let bad_type = r#"{"shapes": {}, "events": [
        {"type": "a", "version": "v1", "requirements_known": true,
         "fields": {"x": {"type": "strnig"}}}]}"#;
    let error = Catalogue::from_json(bad_type).expect_err("bad type");
    assert!(error.contains("strnig"), "{error}");

    let duplicate_field = r#"{"shapes": {}, "events": [
        {"type": "a", "version": "v1", "requirements_known": true,
         "fields": {"x": {"type": "string"}, "x": {"type": "integer"}}}]}"#;
    let error = Catalogue::from_json(duplicate_field).expect_err("duplicate field");
    assert!(error.contains("duplicate key x"), "{error}");
}

// --- validation: Ferry's own events ------------------------------------------------------

#[test]
fn ferry_events_validate() {
    let valid = [
        (
            "data_import.import_process.complete",
            "v1",
            json!({"resource_type": "ACCOUNT", "external_identifier": "OE-1", "identifier": "A-1F3B9C0D"}),
        ),
        (
            "data_import.import_process.error",
            "v1",
            json!({"resource_type": "ACCOUNT", "external_identifier": "OE-1", "error_code": "INVALID_DATA", "error_detail": "Meter point MPAN-1 has no supply start date."}),
        ),
        (
            "data_import.import_process.dry_run_error",
            "v1",
            json!({"resource_type": "ACCOUNT", "external_identifier": "OE-1", "error_code": "INVALID_DATA", "error_detail": "Unknown tariff code."}),
        ),
        (
            "data_import.import_process.dry_run_complete",
            "v1",
            json!({"resource_type": "ACCOUNT", "external_identifier": "OE-1"}),
        ),
        (
            "data_import.import_process.cancelled",
            "v1",
            json!({"resource_type": "ACCOUNT", "external_identifier": "OE-1", "expiry_window_end": "2025-03-01T00:00:00Z"}),
        ),
        (
            "account.created",
            "v1",
            json!({"account_number": "A-1F3B9C0D", "account_user_emails": ["ada@example.com"], "is_imported": true}),
        ),
        (
            "billing.ledger.entry_posted",
            "v2",
            json!({
                "ledger": {"account": {"number": "A-1F3B9C0D"}, "number": "L-1", "id": "7"},
                "entry": {"id": 7, "is_charge": true, "is_credit": false, "is_payment": false,
                          "is_repayment": false, "is_reversal": false, "is_reversed": false,
                          "source_id": 7, "source_type": "IMPORTED_TRANSACTION"}
            }),
        ),
        (
            "payments.payment_method.new",
            "v1",
            json!({"account_number": "A-1F3B9C0D", "ledger_identifier": "L-1F3B9C0D",
                   "usable_from": "2025-01-31T09:30:00Z", "payment_instruction_id": "stripe:pm_123",
                   "usable_to": "2027-08-31"}),
        ),
    ];
    for (event_type, version, data) in valid {
        let result = catalogue().validate(event_type, version, &data);
        assert!(result.is_ok(), "{event_type} {version}: {result:?}");
    }
}

#[test]
fn optional_fields_may_be_absent_or_null() {
    let catalogue = catalogue();
    let minimal = json!({"account_number": "A-1", "account_user_emails": []});
    assert!(
        catalogue
            .validate("account.created", "v1", &minimal)
            .is_ok()
    );
    let null_optional =
        json!({"account_number": "A-1", "account_user_emails": [], "is_imported": null});
    assert!(
        catalogue
            .validate("account.created", "v1", &null_optional)
            .is_ok()
    );
}

#[test]
fn numbers_and_integers() {
    let catalogue = catalogue();
    let priority = |value: Value| {
        json!({"conversation_id": 1, "conversation_relay_id": "c", "old_priority": value,
               "new_priority": 2.5, "prioritized_at": "t", "message_id": 3,
               "message_relay_id": "m", "account_number": "A-1",
               "latest_contacted_account_user_number": "U-1", "support_user_id": 4,
               "organisation_id": 5})
    };
    for number in [json!(1), json!(-1.5), json!(1e3)] {
        let data = priority(number);
        assert!(
            catalogue
                .validate("ink.conversation.priority.changed", "v1", &data)
                .is_ok()
        );
    }
    let big: Value = serde_json::from_str("123456789012345678901234567890").expect("big");
    assert!(is_integer(&big));
    assert!(!is_integer(&json!(1.0)));
    assert!(!is_integer(
        &serde_json::from_str::<Value>("1e3").expect("1e3")
    ));
    assert!(is_integer(&json!(-7)));
}

// --- validation: failures ------------------------------------------------------------------

#[test]
fn a_missing_required_field() {
    let errors = errors_of(
        "data_import.import_process.complete",
        "v1",
        json!({"resource_type": "ACCOUNT", "external_identifier": "OE-1"}),
    );
    assert_eq!(errors, [error("identifier", "required field is missing")]);
}

#[test]
fn wrong_types() {
    let errors = errors_of(
        "account_user.password_changed",
        "v1",
        json!({"user_id": "42"}),
    );
    assert_eq!(
        errors,
        [error("user_id", "expected an integer, found a string")]
    );
    let errors = errors_of(
        "account_user.password_changed",
        "v1",
        json!({"user_id": 1.5}),
    );
    assert_eq!(
        errors,
        [error(
            "user_id",
            "expected an integer, found the number 1.5"
        )]
    );
    let errors = errors_of(
        "account.created",
        "v1",
        json!({"account_number": 7, "account_user_emails": ["a@example.com", 3], "is_imported": "yes"}),
    );
    assert_eq!(
        errors,
        [
            error("account_number", "expected a string, found the number 7"),
            error(
                "account_user_emails.1",
                "expected a string, found the number 3"
            ),
            error("is_imported", "expected a boolean, found a string"),
        ]
    );
}

#[test]
fn a_null_required_field() {
    let errors = errors_of(
        "data_import.import_process.dry_run_complete",
        "v1",
        json!({"resource_type": "ACCOUNT", "external_identifier": null}),
    );
    assert_eq!(
        errors,
        [error("external_identifier", "required field is null")]
    );
}

#[test]
fn an_unknown_field() {
    let errors = errors_of(
        "data_import.import_process.dry_run_complete",
        "v1",
        json!({"resource_type": "ACCOUNT", "external_identifier": "OE-1", "identifier": "A-1"}),
    );
    assert_eq!(errors, [error("identifier", "unknown field")]);
}

#[test]
fn nested_problems_have_paths() {
    let errors = errors_of(
        "billing.ledger.entry_posted",
        "v2",
        json!({
            "ledger": {"account": {"number": 1, "extra": true}, "number": "L-1"},
            "entry": {"id": "7", "is_charge": true, "is_credit": false, "is_payment": false,
                      "is_repayment": false, "is_reversal": false, "is_reversed": false}
        }),
    );
    assert_eq!(
        errors,
        [
            error(
                "ledger.account.number",
                "expected a string, found the number 1"
            ),
            error("ledger.account.extra", "unknown field"),
            error("entry.id", "expected an integer, found a string"),
        ]
    );
    let errors = errors_of(
        "billing.ledger.entry_posted",
        "v2",
        json!({"ledger": {}, "entry": []}),
    );
    assert_eq!(
        errors,
        [
            error("ledger.account", "required field is missing"),
            error("entry", "expected an object, found an array"),
        ]
    );
    // Arrays of shapes: element by element.
    let errors = errors_of(
        "lifecycle.join-supplier.requested",
        "v1",
        json!({"account_number": "A-1", "join_supplier_process_number": "J-1", "subtype": "S",
        "requested_at": "t",
        "supply_points": [
            {"external_identifier": "E-1", "market_name": "M", "requested_supply_start_date": "d"},
            {"external_identifier": "E-2", "market_name": "M"}
        ]}),
    );
    assert_eq!(
        errors,
        [error(
            "supply_points.1.requested_supply_start_date",
            "required field is missing"
        )]
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let result = catalogue().validate(
        "data_import.import_process.error",
        "v1",
        &json!({"resource_type": 1, "error_code": null, "surprise": 2}),
    );
    let Err(error) = result else {
        panic!("expected an error")
    };
    assert_eq!(
        error.to_string(),
        "invalid data_import.import_process.error v1 payload: \
         resource_type: expected a string, found the number 1; \
         external_identifier: required field is missing; \
         error_code: required field is null; \
         error_detail: required field is missing; \
         surprise: unknown field"
    );
}

#[test]
fn a_payload_that_is_not_an_object() {
    let errors = errors_of("account.occupied", "v1", json!(["A-1"]));
    assert_eq!(errors, [error("", "expected an object, found an array")]);
}

#[test]
fn unknown_events_and_versions() {
    let catalogue = catalogue();
    let unknown = catalogue.validate("account.deleted", "v1", &json!({}));
    assert!(matches!(
        unknown,
        Err(CatalogueError::UnknownEvent { ref event_type, ref version })
            if event_type == "account.deleted" && version == "v1"
    ));
    let unknown_version = catalogue.validate("account.created", "v9", &json!({}));
    let Err(error) = unknown_version else {
        panic!("expected an error")
    };
    assert_eq!(error.to_string(), "unknown event account.created v9");
}

// --- AsyncAPI ------------------------------------------------------------------------------

#[test]
fn the_asyncapi_document_has_one_message_per_entry() {
    let catalogue = catalogue();
    let document = catalogue.asyncapi();
    assert_eq!(document["asyncapi"], "3.0.0");
    let entries = catalogue.entries().count();
    let messages = document["components"]["messages"]
        .as_object()
        .expect("messages");
    assert_eq!(messages.len(), entries);
    let channel = &document["channels"]["events"];
    assert_eq!(channel["address"], STREAM_ADDRESS);
    assert_eq!(
        channel["messages"]
            .as_object()
            .expect("channel messages")
            .len(),
        entries
    );
    let operation = &document["operations"]["publish"];
    assert_eq!(operation["action"], "send");
    assert_eq!(operation["channel"]["$ref"], "#/channels/events");
    let operation_messages = operation["messages"]
        .as_array()
        .expect("operation messages");
    assert_eq!(operation_messages.len(), entries);
    for reference in operation_messages {
        let pointer = reference["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .expect("a local reference");
        let channel_message = document.pointer(pointer).expect("resolves");
        let component = channel_message["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| document.pointer(pointer))
            .expect("the channel message resolves");
        assert!(component["name"].is_string());
    }
    let names: BTreeSet<&str> = messages
        .values()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert!(names.contains("account.created v1"));
    assert!(names.contains("tech.platform.workflow.cancelled.v1 v1"));
    let schemas = document["components"]["schemas"]
        .as_object()
        .expect("schemas");
    assert_eq!(schemas.len(), catalogue.shapes().count());
    assert!(schemas.contains_key("LedgerRef") && schemas.contains_key("PaymentLedgerRef"));
}

#[test]
fn asyncapi_payloads_are_closed_json_schemas() {
    let document = catalogue().asyncapi();
    let message = &document["components"]["messages"]["billing.ledger.entry_posted.v2"];
    assert_eq!(message["name"], "billing.ledger.entry_posted v2");
    assert_eq!(
        message["payload"],
        json!({
            "type": "object",
            "properties": {
                "ledger": {"anyOf": [{"$ref": "#/components/schemas/LedgerRef"}, {"type": "null"}]},
                "entry": {"anyOf": [{"$ref": "#/components/schemas/LedgerEntryPosted"}, {"type": "null"}]},
            },
            "required": [],
            "additionalProperties": false,
        })
    );
    let created = &document["components"]["messages"]["account.created.v1"]["payload"];
    assert_eq!(
        created["required"],
        json!(["account_number", "account_user_emails"])
    );
    assert_eq!(
        created["properties"]["account_user_emails"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        created["properties"]["is_imported"],
        json!({"type": ["boolean", "null"]})
    );
    assert_eq!(created["additionalProperties"], false);
    let ledger_ref = &document["components"]["schemas"]["LedgerRef"];
    assert_eq!(ledger_ref["required"], json!(["account"]));
    assert_eq!(
        ledger_ref["properties"]["account"],
        json!({
            "type": "object",
            "properties": {"number": {"type": "string"}},
            "required": ["number"],
            "additionalProperties": false,
        })
    );
    let failed = &document["components"]["messages"]["payment.failed.v1"]["payload"];
    assert_eq!(
        failed["properties"]["ledger"],
        json!({"$ref": "#/components/schemas/PaymentLedgerRef", "x-inferred": true})
    );
}
