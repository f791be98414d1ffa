//! `ferry:supplier-rules@0.3.0`, the newest version: its bindings, and the records every hook
//! takes. Its `account` is 0.2.0's with the account's money: its last statement's balance and
//! dates, its statement transactions and its `ledgers`, under the document's own names; the
//! statement transactions are `map-transactions`' record, written back as part of the document
//! (the keys the record does not carry, such as `supply_point_identifier`, stay). The records
//! of the data hooks (the account reference, notes, transactions, statements, the payment
//! instruction) are the same in every version: Ferry sends these to a hook of any version.

super::version!("../wit/since_v0.3.0", "/wit_records_v0_3_0.rs");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::wit::fields::Within;
    use serde_json::{Value, json};

    /// An account with its money: the top level's statement fields and transactions, and two
    /// ledgers, with fields the records do not carry and numbers where the document allows
    /// them.
    fn document() -> Value {
        json!({
            "import_supplier": "OLD_CO",
            "external_account_number": "OE-1001",
            "customers": [{"given_name": "Ada", "mobile": "07700 900123"}],
            "transfer_balance": "12.30",
            "last_statement_balance": 40.5,
            "last_statement_closing_date": "2025-01-31",
            "last_statement_issue_date": "2025-02-03",
            "last_billed_to_date": "2025-01-31",
            "current_statement_transactions": [
                {"transaction_id": "C-1", "transaction_date": "2025-02-10", "amount": 10,
                 "type": "SUPPLY_CHARGE", "product_code": "OLDVAR", "supply_point_identifier": "1200023305967",
                 "line_items": [{"start_date": "2025-02-01", "end_date": "2025-02-10", "number_of_units": 40,
                                 "net_amount": "10.00", "rate_specification_code": "STANDARD", "units": []}],
                 "tax_items": [{"amount": "0.50", "tax_type": "VAT", "value_taxed": "10.00", "rate": "5",
                                "unit_type": "PROPORTION", "params": {}}]}
            ],
            "historical_statement_transactions": [
                {"transaction_id": "H-1", "transaction_date": "2025-01-05", "amount": "-40.50",
                 "type": "PAYMENT", "payment_type": "DIRECT_DEBIT", "billing_document_identifier": "B-1"}
            ],
            "ledgers": [
                {"ledger_code": "ELECTRICITY", "ledger_identifier": "L-1", "ledger_balance": "-12.30",
                 "last_statement_balance": "40.50", "last_statement_closing_date": "2025-01-31",
                 "current_statement_transactions": [
                     {"transaction_id": "LC-1", "transaction_date": "2025-02-11", "amount": "3.20",
                      "type": "CHARGE", "reason": "Meter visit", "to_prepay_meter_serial_number": "S-9"}
                 ]},
                {"ledger_code": "GAS"}
            ],
            "consents": [{"type": "MARKETING", "value": "ACCEPTED"}]
        })
    }

    #[test]
    fn the_hook_sees_the_money_of_the_account() {
        let value = document();
        let record = account::read(&value);
        assert_eq!(
            (
                record.last_statement_balance,
                record.last_statement_closing_date,
                record.last_statement_issue_date
            ),
            (Some("40.5"), Some("2025-01-31"), Some("2025-02-03"))
        );
        let current = &record.current_statement_transactions[0];
        assert_eq!(
            (current.transaction_id, current.amount, current.product_code),
            ("C-1", "10", Some("OLDVAR"))
        );
        assert_eq!(
            record.historical_statement_transactions[0].payment_type,
            Some("DIRECT_DEBIT")
        );
        let [electricity, gas] = &record.ledgers[..] else {
            panic!("two ledgers");
        };
        assert_eq!(
            (
                electricity.ledger_code,
                electricity.ledger_identifier,
                electricity.ledger_balance,
                electricity.last_statement_balance,
                electricity.last_statement_issue_date
            ),
            (
                Some("ELECTRICITY"),
                Some("L-1"),
                Some("-12.30"),
                Some("40.50"),
                None
            )
        );
        assert_eq!(
            electricity.current_statement_transactions[0].reason,
            Some("Meter visit")
        );
        assert!(electricity.historical_statement_transactions.is_empty());
        assert_eq!(gas.ledger_code, Some("GAS"));
        assert!(gas.current_statement_transactions.is_empty());
    }

    #[test]
    fn an_unchanged_answer_leaves_the_document_as_it_was() {
        let mut value = document();
        let answer = account::read(&value).owned();
        account::write(&mut value, answer, Within::Document);
        assert_eq!(value, document());
    }

    #[test]
    fn changes_are_written_at_their_names_and_the_rest_of_the_document_stays() {
        let mut value = document();
        let mut answer = account::read(&value).owned();
        answer.current_statement_transactions[0].product_code = Some("VAR-22".into());
        answer.historical_statement_transactions[0].payment_type = None;
        answer.last_statement_balance = Some("40.50".into());
        let electricity = &mut answer.ledgers[0];
        electricity.ledger_balance = None;
        electricity.current_statement_transactions[0].amount = "3.25".into();
        electricity.historical_statement_transactions =
            electricity.current_statement_transactions.clone();
        answer.ledgers[1].last_statement_issue_date = Some("2025-02-03".into());
        account::write(&mut value, answer, Within::Document);

        let mut expected = document();
        expected["current_statement_transactions"][0]["product_code"] = json!("VAR-22");
        expected["historical_statement_transactions"][0]
            .as_object_mut()
            .expect("object")
            .shift_remove("payment_type");
        expected["last_statement_balance"] = json!("40.50");
        let ledger = &mut expected["ledgers"][0];
        ledger
            .as_object_mut()
            .expect("object")
            .shift_remove("ledger_balance");
        ledger["current_statement_transactions"][0]["amount"] = json!("3.25");
        // A list the document left out is added with what the answer holds, in the WIT's
        // shape: the keys the hook never saw are not in it.
        ledger["historical_statement_transactions"] = json!([
            {"transaction_id": "LC-1", "transaction_date": "2025-02-11", "amount": "3.25",
             "type": "CHARGE", "reason": "Meter visit"}
        ]);
        expected["ledgers"][1]["last_statement_issue_date"] = json!("2025-02-03");
        assert_eq!(value, expected);
    }

    /// A hook that drops a statement transaction or a ledger drops it from the document; the
    /// ones it keeps stay as they were.
    #[test]
    fn lists_follow_the_answer_element_by_element() {
        let mut value = document();
        let mut answer = account::read(&value).owned();
        answer.ledgers.truncate(1);
        answer.current_statement_transactions.clear();
        account::write(&mut value, answer, Within::Document);
        let mut expected = document();
        expected["ledgers"]
            .as_array_mut()
            .expect("array")
            .truncate(1);
        expected["current_statement_transactions"] = json!([]);
        assert_eq!(value, expected);
    }
}
