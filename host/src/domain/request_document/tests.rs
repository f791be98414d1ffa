//! The tests of [`super`].

use super::*;
use serde_json::json;

#[test]
fn formats_as_the_real_rest_framework_reads_them() {
    for ok in [
        "2012-01-01",
        "2012-01-01T10:00",
        "2012-01-01T10:00:00.5Z",
        "2012-01-01 10:00:00+01:00",
        "2012-01-01t10:00:00z",
    ] {
        assert!(is_drf_datetime(ok), "{ok}");
    }
    for bad in ["2012-13-01", "yesterday", "2012-01-01T25:00"] {
        assert!(!is_drf_datetime(bad), "{bad}");
    }
    let at = |text: &str| parse_drf_datetime(text).map(|moment| moment.to_rfc3339());
    assert_eq!(
        at("2012-01-01").as_deref(),
        Some("2012-01-01T00:00:00+00:00")
    );
    assert_eq!(
        at("2012-01-01 10:00").as_deref(),
        Some("2012-01-01T10:00:00+00:00")
    );
    assert_eq!(
        at("2012-01-01T10:00:00+01:30").as_deref(),
        Some("2012-01-01T08:30:00+00:00")
    );
    assert_eq!(
        at("2012-01-01T10:00-0100").as_deref(),
        Some("2012-01-01T11:00:00+00:00")
    );
    assert!(is_drf_time("10:30") && is_drf_time("10:30:15.25") && is_drf_time("10:30:00Z"));
    assert!(!is_drf_time("10h30"));
    let bounds = DecimalBounds::from_pattern(r"^-?\d{0,2}(?:\.\d{0,2})?$").expect("bounds");
    let code = |value: Value| bounds.fault(&value).map(|(code, _)| code);
    assert_eq!(code(json!("123.4")), Some("max_whole_digits"));
    assert_eq!(code(json!("1.2.3")), Some("invalid"));
    assert_eq!(code(json!("1.234")), Some("max_decimal_places"));
    assert_eq!(code(json!(1.234)), Some("max_decimal_places"));
    assert_eq!(code(json!(123)), Some("max_whole_digits"));
    assert_eq!(code(json!(1e40)), Some("invalid"));
    for fine in [
        json!("-12.34"),
        json!("."),
        json!(12.3),
        json!(0.5),
        json!(1.50),
        json!(true),
    ] {
        assert_eq!(code(fine.clone()), None, "{fine}");
    }
    assert_eq!(DecimalBounds::from_pattern("^[a-z]+$"), None);
}

/// `check` asks the schema yes or no first and collects errors only on a no: the two
/// must agree, custom keyword and formats included.
#[test]
fn the_schema_passes_a_document_exactly_when_it_finds_no_error_in_it() {
    let account = json!({
        "import_supplier": "OLD_CO", "external_account_number": "ACC-1",
        "billing_name": "Ada Lovelace", "billing_address1": "1 Analytical Street",
        "billing_postcode": "N1 1AA",
        "customers": [{"given_name": "Ada", "family_name": "Lovelace",
                       "email": "ada@example.com", "date_of_birth": null}],
    });
    let with = |document: &Value, pointer: &str, value: Value| {
        let mut changed = document.clone();
        if let Some((parent, name)) = pointer.rsplit_once('/')
            && let Some(Value::Object(object)) = changed.pointer_mut(parent)
        {
            object.insert(name.to_owned(), value);
        }
        changed
    };
    let note = json!({"import_supplier": "OLD_CO", "account_number": "A-1", "notes": [{
        "body": "Called.", "created_at": "2024-01-01", "unpin_at": "2024-01-02 10:00+01:00",
        "is_pinned": true, "document_paths": [{"document_path": "letters/a.pdf"}],
    }]});
    let transaction = json!({"import_supplier": "OLD_CO", "account_number": "A-1",
        "transactions": [{"transaction_id": "T1", "transaction_date": "2025-05-01",
                          "amount": "1.25", "type": "CHARGE", "reason": "DEFAULT"}]});
    let cases = [
        (RequestDocument::Account, account.clone(), true),
        (
            RequestDocument::Account,
            with(&account, "/billing_flavour", json!("x")),
            false,
        ),
        (
            RequestDocument::Account,
            with(&account, "/customers/0/email", json!(5)),
            false,
        ),
        (
            RequestDocument::Account,
            with(&account, "/billing_name", json!(null)),
            false,
        ),
        (RequestDocument::Notes, note.clone(), true),
        (
            RequestDocument::Notes,
            with(&note, "/notes/0/created_at", json!("soon")),
            false,
        ),
        (
            RequestDocument::Notes,
            with(&note, "/notes/0/colour", json!("red")),
            false,
        ),
        (RequestDocument::Transactions, transaction.clone(), true),
        (
            RequestDocument::Transactions,
            with(
                &transaction,
                "/transactions/0/amount",
                json!("1.0000000000001"),
            ),
            false,
        ),
    ];
    for (document, body, passes) in cases {
        let validator = document.validator();
        let found = validator.iter_errors(&body).count();
        assert_eq!(
            validator.is_valid(&body),
            found == 0,
            "{document:?}: {body}"
        );
        assert_eq!(
            found == 0,
            passes,
            "{document:?}: {body}: {:?}",
            validator
                .iter_errors(&body)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
    }
}
