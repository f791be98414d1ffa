//! `ferry:supplier-rules@0.2.0`: its bindings, and its `account` record, part of the real
//! account document field for field under the document's own names, with the records it is
//! made of (its address, customers, supply addresses, meter points and agreements). Into a
//! hook, the record borrows its strings from the document; out of it, the answer is written
//! back over the document [`Within::Document`](super::fields::Within::Document), keeping
//! everything the record does not carry.

super::version!("../wit/since_v0.2.0", "/wit_records_v0_2_0.rs");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::wit::fields::Within;
    use serde_json::{Value, json};

    /// What an unchanged answer returns: the record a hook sees, owned.
    fn record(document: &Value) -> account::Owned {
        account::read(document).owned()
    }

    fn document() -> Value {
        json!({
            "import_supplier": "OLD_CO",
            "external_account_number": "OE-1001",
            "account_type": "DOMESTIC",
            "billing_address": {"street_address": "1 Analytical Street", "locality": "London",
                                "postal_code": "N1 1AA", "country": "GB", "sorting_code": ""},
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": null,
                           "mobile": "07700 900123", "psr": [{"elec_industry_code": "01"}]}],
            "supply_addresses": [{
                "supply_address1": "1 Analytical Street", "supply_postcode": "N1 1AA",
                "customer_at_supply_address_from_date": "2024-01-01", "is_landlord": false,
                "meter_points": [{"supply_type": "ELECTRICITY", "identifier": "1200023305967", "mpid": "TENT",
                                  "supply_start_date": "2024-01-01", "profile_class": 1,
                                  "agreements": [{"tariff_code": "OLDVAR", "effective_from": "2024-01-01"}]}]
            }],
            "consents": [{"type": "MARKETING", "value": "ACCEPTED"}],
            "transfer_balance": 12.3
        })
    }

    #[test]
    fn an_unchanged_answer_leaves_the_document_as_it_was() {
        let mut value = document();
        let answer = record(&value);
        assert_eq!(answer.customers[0].email, None, "null reads as none");
        account::write(&mut value, answer, Within::Document);
        assert_eq!(value, document());
    }

    #[test]
    fn changes_are_written_at_their_names_and_the_rest_of_the_document_stays() {
        let mut value = document();
        let mut answer = record(&value);
        answer.customers[0].mobile = Some("+447700900123".into());
        answer.customers[0].title = Some("Countess".into());
        answer.supply_addresses[0].meter_points[0].agreements[0].tariff_code = "VAR-22".into();
        if let Some(address) = answer.billing_address.as_mut() {
            address.locality = None;
        }
        answer.last_billed_to_date = Some("2025-02-28".into());
        account::write(&mut value, answer, Within::Document);
        let mut expected = document();
        expected["customers"][0]["mobile"] = json!("+447700900123");
        expected["customers"][0]["title"] = json!("Countess");
        expected["supply_addresses"][0]["meter_points"][0]["agreements"][0]["tariff_code"] =
            json!("VAR-22");
        expected["billing_address"]
            .as_object_mut()
            .expect("object")
            .shift_remove("locality");
        expected["last_billed_to_date"] = json!("2025-02-28");
        assert_eq!(value, expected);
    }
}
