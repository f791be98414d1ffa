//! What the data hooks of every version share: the records they take are the newest
//! version's ([`super::latest`]; the same in every version, and wasmtime checks records by
//! their shape, not their package), read from a request's arrays and written back over them
//! here, with the account reference made from the request's target and the field errors every
//! hook may answer with.

use super::fields::{Within, elements, write_array};
use super::latest::account_ref;
use super::latest::ferry::supplier_rules::types::FieldError;
use crate::domain::ports::AccountTarget;
use crate::domain::validation::{self, FieldErrors};
use serde_json::Value;

/// The account `target` names (every field empty when there is none).
pub fn account_ref_of(target: Option<&AccountTarget>) -> account_ref::Wire<'_> {
    match target {
        Some(target) => account_ref::Wire {
            import_supplier: &target.import_supplier,
            external_account_number: &target.external_account_number,
            platform_account_number: &target.platform_account_number,
        },
        None => account_ref::Wire {
            import_supplier: "",
            external_account_number: "",
            platform_account_number: "",
        },
    }
}

/// The records of the JSON array `value` (none when it is not one).
pub fn read_all<'a, T>(value: &'a Value, read: fn(&'a Value) -> T) -> Vec<T> {
    elements(value).iter().map(read).collect()
}

/// Writes the records a hook answered over the array they were read from, element by element:
/// an element the hook dropped goes, one it added is made.
pub fn write_all<T>(value: &mut Value, answer: Vec<T>, write: fn(&mut Value, T, Within)) {
    write_array(value, answer, |slot, record| {
        write(slot, record, Within::Request);
    });
}

/// The field errors a hook answered, as Ferry's (an empty `attr` is the request as a whole).
pub fn field_errors(errors: Vec<FieldError>) -> FieldErrors {
    FieldErrors(
        errors
            .into_iter()
            .map(|error| {
                validation::FieldError::new(
                    (!error.attr.is_empty()).then_some(error.attr),
                    &error.code,
                    error.detail,
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::wit::latest::{
        line_item, note, payment_instruction, statement, transaction,
    };
    use serde_json::json;

    /// A hook that changes nothing gives the request back as it was (a number stays one).
    #[test]
    fn an_unchanged_answer_leaves_notes_and_an_instruction_as_they_were() {
        let notes = json!([{"body": "hello", "document_paths": [{"document_path": "a.pdf"}],
                            "created_at": "2025-01-01T00:00:00Z", "is_pinned": true,
                            "unpin_at": "2025-02-01T00:00:00Z"}]);
        let answer = read_all(&notes, note::read)
            .iter()
            .map(note::Wire::owned)
            .collect();
        let mut value = notes.clone();
        write_all(&mut value, answer, note::write);
        assert_eq!(value, notes);

        let instruction = json!({"vendor": "SANDBOX", "reference": 1234, "type": "DIRECT_DEBIT"});
        let answer = payment_instruction::read(&instruction).owned();
        let mut value = instruction.clone();
        payment_instruction::write(&mut value, answer, Within::Request);
        assert_eq!(value, instruction);
    }

    #[test]
    fn lists_follow_the_answer_and_keys_outside_the_wit_are_dropped() {
        let mut value = json!([
            {"body": "one", "document_paths": [{"document_path": "a.pdf"}], "is_pinned": false, "extra": 1},
            {"body": "two", "is_pinned": true},
        ]);
        let notes = vec![note::Owned {
            body: Some("one".into()),
            document_paths: vec![],
            created_at: None,
            is_pinned: true,
            unpin_at: Some("2026-01-01T00:00:00Z".into()),
        }];
        write_all(&mut value, notes, note::write);
        assert_eq!(
            value,
            json!([{"body": "one", "is_pinned": true, "unpin_at": "2026-01-01T00:00:00Z"}])
        );
    }

    #[test]
    fn an_answer_over_a_missing_or_mistyped_request_builds_it_whole() {
        let mut value = Value::Null;
        payment_instruction::write(
            &mut value,
            payment_instruction::Owned {
                vendor: "SANDBOX".into(),
                reference: "R-1".into(),
                type_: "DIRECT_DEBIT".into(),
            },
            Within::Request,
        );
        assert_eq!(
            value,
            json!({"vendor": "SANDBOX", "reference": "R-1", "type": "DIRECT_DEBIT"})
        );
        let mut transactions = json!("not a list");
        write_all(
            &mut transactions,
            vec![transaction::Owned {
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
                line_items: Some(vec![line_item::Owned {
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
            transaction::write,
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
        let wire = read_all(&request, transaction::read);
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

        let answer = wire.iter().map(transaction::Wire::owned).collect();
        let mut value = request.clone();
        write_all(&mut value, answer, transaction::write);
        assert_eq!(value, request);
    }

    #[test]
    fn statements_notes_and_instructions_are_read_field_by_field() {
        let statements = json!([{"bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31",
                                 "statement_id": "S-1", "issued_date": "2025-02-01", "number": 7,
                                 "gross_amount": "99.10", "statement_path": "s/1.pdf"}]);
        let read = read_all(&statements, statement::read);
        let sent = &read[0];
        assert_eq!(
            (sent.number, sent.gross_amount, sent.statement_path),
            ("7", "99.10", Some("s/1.pdf"))
        );
        let mut value = statements.clone();
        let answer = statement::Owned {
            statement_path: None,
            ..sent.owned()
        };
        write_all(&mut value, vec![answer], statement::write);
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
        let read = &read_all(&sparse, statement::read)[0];
        assert_eq!(
            (read.issued_date, read.number, read.gross_amount),
            ("", "", "10000")
        );
        let mut value = sparse.clone();
        let answer = statement::Owned {
            gross_amount: "12050".to_owned(),
            ..read.owned()
        };
        write_all(&mut value, vec![answer], statement::write);
        assert_eq!(
            value,
            json!([{"bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31",
                    "statement_id": "S-2", "issued_date": null, "gross_amount": 12050}])
        );

        let notes = json!([{"body": "hello", "document_paths": [{"document_path": "a.pdf"}, {}],
                            "created_at": "2025-01-01T00:00:00Z", "is_pinned": true}]);
        let note = &read_all(&notes, note::read)[0];
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
        let read = payment_instruction::read(&instruction);
        assert_eq!(
            (read.vendor, read.reference, read.type_),
            ("SANDBOX", "R-9", "DIRECT_DEBIT")
        );
    }
}
