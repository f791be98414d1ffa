//! The `account` record of `ferry:supplier-rules@0.2.0`: part of the real account document,
//! field for field under the document's own names.
//!
//! Into a hook, the record borrows its strings from the document (each copied once, into
//! the guest, as the other [`super::wire`] records). Out of it, the answer is written back over
//! the document with [`convert`]'s writers, keeping everything the record does not carry: a
//! field the hook left as it was keeps its value (a number stays a number), a changed one is
//! replaced, a `none` one is removed, lists follow the answer element by element.

use super::bindings::since_v0_2_0::ferry::supplier_rules::types;
use super::convert::{self, Fields, FieldsMut};
use serde_json::Value;
use wasmtime::component::{ComponentType, Lower};

/// The fields of each record, in WIT order, by their names in the document.
const ACCOUNT: [&str; 16] = [
    "import_supplier",
    "external_account_number",
    "account_type",
    "billing_name",
    "billing_email",
    "billing_address",
    "billing_address1",
    "billing_address2",
    "billing_address3",
    "billing_address4",
    "billing_address5",
    "billing_postcode",
    "customers",
    "supply_addresses",
    "last_billed_to_date",
    "transfer_balance",
];
const ADDRESS: [&str; 6] = [
    "country",
    "street_address",
    "dependent_locality",
    "locality",
    "administrative_area",
    "postal_code",
];
const CUSTOMER: [&str; 8] = [
    "given_name",
    "family_name",
    "title",
    "salutation",
    "email",
    "mobile",
    "landline",
    "date_of_birth",
];
const SUPPLY_ADDRESS: [&str; 8] = [
    "supply_address1",
    "supply_address2",
    "supply_address3",
    "supply_address4",
    "supply_address5",
    "supply_postcode",
    "customer_at_supply_address_from_date",
    "meter_points",
];
const METER_POINT: [&str; 6] = [
    "supply_type",
    "identifier",
    "mpid",
    "supply_start_date",
    "supply_end_date",
    "agreements",
];
const AGREEMENT: [&str; 3] = ["tariff_code", "effective_from", "effective_to"];

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Address<'a> {
    pub country: &'a str,
    #[component(name = "street-address")]
    pub street_address: Option<&'a str>,
    #[component(name = "dependent-locality")]
    pub dependent_locality: Option<&'a str>,
    pub locality: Option<&'a str>,
    #[component(name = "administrative-area")]
    pub administrative_area: Option<&'a str>,
    #[component(name = "postal-code")]
    pub postal_code: Option<&'a str>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Customer<'a> {
    #[component(name = "given-name")]
    pub given_name: Option<&'a str>,
    #[component(name = "family-name")]
    pub family_name: Option<&'a str>,
    pub title: Option<&'a str>,
    pub salutation: Option<&'a str>,
    pub email: Option<&'a str>,
    pub mobile: Option<&'a str>,
    pub landline: Option<&'a str>,
    #[component(name = "date-of-birth")]
    pub date_of_birth: Option<&'a str>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Agreement<'a> {
    #[component(name = "tariff-code")]
    pub tariff_code: &'a str,
    #[component(name = "effective-from")]
    pub effective_from: &'a str,
    #[component(name = "effective-to")]
    pub effective_to: Option<&'a str>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct MeterPoint<'a> {
    #[component(name = "supply-type")]
    pub supply_type: &'a str,
    pub identifier: &'a str,
    pub mpid: &'a str,
    #[component(name = "supply-start-date")]
    pub supply_start_date: &'a str,
    #[component(name = "supply-end-date")]
    pub supply_end_date: Option<&'a str>,
    pub agreements: Vec<Agreement<'a>>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct SupplyAddress<'a> {
    #[component(name = "supply-address1")]
    pub supply_address1: Option<&'a str>,
    #[component(name = "supply-address2")]
    pub supply_address2: Option<&'a str>,
    #[component(name = "supply-address3")]
    pub supply_address3: Option<&'a str>,
    #[component(name = "supply-address4")]
    pub supply_address4: Option<&'a str>,
    #[component(name = "supply-address5")]
    pub supply_address5: Option<&'a str>,
    #[component(name = "supply-postcode")]
    pub supply_postcode: &'a str,
    #[component(name = "customer-at-supply-address-from-date")]
    pub customer_at_supply_address_from_date: &'a str,
    #[component(name = "meter-points")]
    pub meter_points: Vec<MeterPoint<'a>>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Account<'a> {
    #[component(name = "import-supplier")]
    pub import_supplier: &'a str,
    #[component(name = "external-account-number")]
    pub external_account_number: &'a str,
    #[component(name = "account-type")]
    pub account_type: Option<&'a str>,
    #[component(name = "billing-name")]
    pub billing_name: Option<&'a str>,
    #[component(name = "billing-email")]
    pub billing_email: Option<&'a str>,
    #[component(name = "billing-address")]
    pub billing_address: Option<Address<'a>>,
    #[component(name = "billing-address1")]
    pub billing_address1: Option<&'a str>,
    #[component(name = "billing-address2")]
    pub billing_address2: Option<&'a str>,
    #[component(name = "billing-address3")]
    pub billing_address3: Option<&'a str>,
    #[component(name = "billing-address4")]
    pub billing_address4: Option<&'a str>,
    #[component(name = "billing-address5")]
    pub billing_address5: Option<&'a str>,
    #[component(name = "billing-postcode")]
    pub billing_postcode: Option<&'a str>,
    pub customers: Vec<Customer<'a>>,
    #[component(name = "supply-addresses")]
    pub supply_addresses: Vec<SupplyAddress<'a>>,
    #[component(name = "last-billed-to-date")]
    pub last_billed_to_date: Option<&'a str>,
    #[component(name = "transfer-balance")]
    pub transfer_balance: Option<&'a str>,
}

/// The record a 0.2.0 hook sees of `document`.
pub fn account_to_wit(document: &Value) -> Account<'_> {
    let account = Fields::of(document, &ACCOUNT);
    Account {
        import_supplier: account.text("import_supplier"),
        external_account_number: account.text("external_account_number"),
        account_type: account.optional("account_type"),
        billing_name: account.optional("billing_name"),
        billing_email: account.optional("billing_email"),
        billing_address: account
            .get("billing_address")
            .filter(|address| address.is_object())
            .map(address_to_wit),
        billing_address1: account.optional("billing_address1"),
        billing_address2: account.optional("billing_address2"),
        billing_address3: account.optional("billing_address3"),
        billing_address4: account.optional("billing_address4"),
        billing_address5: account.optional("billing_address5"),
        billing_postcode: account.optional("billing_postcode"),
        customers: account
            .items("customers")
            .iter()
            .map(customer_to_wit)
            .collect(),
        supply_addresses: account
            .items("supply_addresses")
            .iter()
            .map(supply_address_to_wit)
            .collect(),
        last_billed_to_date: account.optional("last_billed_to_date"),
        transfer_balance: account.optional("transfer_balance"),
    }
}

fn address_to_wit(value: &Value) -> Address<'_> {
    let address = Fields::of(value, &ADDRESS);
    Address {
        country: address.text("country"),
        street_address: address.optional("street_address"),
        dependent_locality: address.optional("dependent_locality"),
        locality: address.optional("locality"),
        administrative_area: address.optional("administrative_area"),
        postal_code: address.optional("postal_code"),
    }
}

fn customer_to_wit(value: &Value) -> Customer<'_> {
    let customer = Fields::of(value, &CUSTOMER);
    Customer {
        given_name: customer.optional("given_name"),
        family_name: customer.optional("family_name"),
        title: customer.optional("title"),
        salutation: customer.optional("salutation"),
        email: customer.optional("email"),
        mobile: customer.optional("mobile"),
        landline: customer.optional("landline"),
        date_of_birth: customer.optional("date_of_birth"),
    }
}

fn supply_address_to_wit(value: &Value) -> SupplyAddress<'_> {
    let address = Fields::of(value, &SUPPLY_ADDRESS);
    SupplyAddress {
        supply_address1: address.optional("supply_address1"),
        supply_address2: address.optional("supply_address2"),
        supply_address3: address.optional("supply_address3"),
        supply_address4: address.optional("supply_address4"),
        supply_address5: address.optional("supply_address5"),
        supply_postcode: address.text("supply_postcode"),
        customer_at_supply_address_from_date: address.text("customer_at_supply_address_from_date"),
        meter_points: address
            .items("meter_points")
            .iter()
            .map(meter_point_to_wit)
            .collect(),
    }
}

fn meter_point_to_wit(value: &Value) -> MeterPoint<'_> {
    let point = Fields::of(value, &METER_POINT);
    MeterPoint {
        supply_type: point.text("supply_type"),
        identifier: point.text("identifier"),
        mpid: point.text("mpid"),
        supply_start_date: point.text("supply_start_date"),
        supply_end_date: point.optional("supply_end_date"),
        agreements: point
            .items("agreements")
            .iter()
            .map(|value| {
                let agreement = Fields::of(value, &AGREEMENT);
                Agreement {
                    tariff_code: agreement.text("tariff_code"),
                    effective_from: agreement.text("effective_from"),
                    effective_to: agreement.optional("effective_to"),
                }
            })
            .collect(),
    }
}

/// Writes the account a 0.2.0 hook returned over the document it was made from.
pub fn write_account(document: &mut Value, account: types::Account) {
    convert::write_part_of_object(document, &ACCOUNT, |fields| {
        fields.text("import_supplier", account.import_supplier);
        fields.text("external_account_number", account.external_account_number);
        fields.nullable("account_type", account.account_type);
        fields.nullable("billing_name", account.billing_name);
        fields.nullable("billing_email", account.billing_email);
        fields.nullable_record("billing_address", account.billing_address, write_address);
        fields.nullable("billing_address1", account.billing_address1);
        fields.nullable("billing_address2", account.billing_address2);
        fields.nullable("billing_address3", account.billing_address3);
        fields.nullable("billing_address4", account.billing_address4);
        fields.nullable("billing_address5", account.billing_address5);
        fields.nullable("billing_postcode", account.billing_postcode);
        fields.list_if_given("customers", account.customers, write_customer);
        fields.list_if_given(
            "supply_addresses",
            account.supply_addresses,
            write_supply_address,
        );
        fields.nullable("last_billed_to_date", account.last_billed_to_date);
        fields.nullable("transfer_balance", account.transfer_balance);
    });
}

fn write_address(slot: &mut Value, address: types::Address) {
    convert::write_part_of_object(slot, &ADDRESS, |fields: &mut FieldsMut<'_, 6>| {
        fields.text("country", address.country);
        fields.nullable("street_address", address.street_address);
        fields.nullable("dependent_locality", address.dependent_locality);
        fields.nullable("locality", address.locality);
        fields.nullable("administrative_area", address.administrative_area);
        fields.nullable("postal_code", address.postal_code);
    });
}

fn write_customer(slot: &mut Value, customer: types::Customer) {
    convert::write_part_of_object(slot, &CUSTOMER, |fields| {
        fields.nullable("given_name", customer.given_name);
        fields.nullable("family_name", customer.family_name);
        fields.nullable("title", customer.title);
        fields.nullable("salutation", customer.salutation);
        fields.nullable("email", customer.email);
        fields.nullable("mobile", customer.mobile);
        fields.nullable("landline", customer.landline);
        fields.nullable("date_of_birth", customer.date_of_birth);
    });
}

fn write_supply_address(slot: &mut Value, address: types::SupplyAddress) {
    convert::write_part_of_object(slot, &SUPPLY_ADDRESS, |fields| {
        fields.nullable("supply_address1", address.supply_address1);
        fields.nullable("supply_address2", address.supply_address2);
        fields.nullable("supply_address3", address.supply_address3);
        fields.nullable("supply_address4", address.supply_address4);
        fields.nullable("supply_address5", address.supply_address5);
        fields.text("supply_postcode", address.supply_postcode);
        fields.text(
            "customer_at_supply_address_from_date",
            address.customer_at_supply_address_from_date,
        );
        fields.list_if_given("meter_points", address.meter_points, write_meter_point);
    });
}

fn write_meter_point(slot: &mut Value, point: types::MeterPoint) {
    convert::write_part_of_object(slot, &METER_POINT, |fields| {
        fields.text("supply_type", point.supply_type);
        fields.text("identifier", point.identifier);
        fields.text("mpid", point.mpid);
        fields.text("supply_start_date", point.supply_start_date);
        fields.nullable("supply_end_date", point.supply_end_date);
        fields.list_if_given("agreements", point.agreements, |slot, agreement| {
            convert::write_part_of_object(slot, &AGREEMENT, |fields| {
                fields.text("tariff_code", agreement.tariff_code);
                fields.text("effective_from", agreement.effective_from);
                fields.nullable("effective_to", agreement.effective_to);
            });
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn owned(text: &str) -> String {
        text.to_owned()
    }

    /// What an unchanged answer returns: the record a hook sees, owned.
    fn record(document: &Value) -> types::Account {
        let wire = account_to_wit(document);
        types::Account {
            import_supplier: owned(wire.import_supplier),
            external_account_number: owned(wire.external_account_number),
            account_type: wire.account_type.map(owned),
            billing_name: wire.billing_name.map(owned),
            billing_email: wire.billing_email.map(owned),
            billing_address: wire.billing_address.map(|address| types::Address {
                country: owned(address.country),
                street_address: address.street_address.map(owned),
                dependent_locality: address.dependent_locality.map(owned),
                locality: address.locality.map(owned),
                administrative_area: address.administrative_area.map(owned),
                postal_code: address.postal_code.map(owned),
            }),
            billing_address1: wire.billing_address1.map(owned),
            billing_address2: wire.billing_address2.map(owned),
            billing_address3: wire.billing_address3.map(owned),
            billing_address4: wire.billing_address4.map(owned),
            billing_address5: wire.billing_address5.map(owned),
            billing_postcode: wire.billing_postcode.map(owned),
            customers: wire
                .customers
                .iter()
                .map(|customer| types::Customer {
                    given_name: customer.given_name.map(owned),
                    family_name: customer.family_name.map(owned),
                    title: customer.title.map(owned),
                    salutation: customer.salutation.map(owned),
                    email: customer.email.map(owned),
                    mobile: customer.mobile.map(owned),
                    landline: customer.landline.map(owned),
                    date_of_birth: customer.date_of_birth.map(owned),
                })
                .collect(),
            supply_addresses: wire
                .supply_addresses
                .iter()
                .map(|address| types::SupplyAddress {
                    supply_address1: address.supply_address1.map(owned),
                    supply_address2: address.supply_address2.map(owned),
                    supply_address3: address.supply_address3.map(owned),
                    supply_address4: address.supply_address4.map(owned),
                    supply_address5: address.supply_address5.map(owned),
                    supply_postcode: owned(address.supply_postcode),
                    customer_at_supply_address_from_date: owned(
                        address.customer_at_supply_address_from_date,
                    ),
                    meter_points: address
                        .meter_points
                        .iter()
                        .map(|point| types::MeterPoint {
                            supply_type: owned(point.supply_type),
                            identifier: owned(point.identifier),
                            mpid: owned(point.mpid),
                            supply_start_date: owned(point.supply_start_date),
                            supply_end_date: point.supply_end_date.map(owned),
                            agreements: point
                                .agreements
                                .iter()
                                .map(|agreement| types::Agreement {
                                    tariff_code: owned(agreement.tariff_code),
                                    effective_from: owned(agreement.effective_from),
                                    effective_to: agreement.effective_to.map(owned),
                                })
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
            last_billed_to_date: wire.last_billed_to_date.map(owned),
            transfer_balance: wire.transfer_balance.map(owned),
        }
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
    fn the_field_lists_are_the_wit_records() {
        use crate::plugins::bindings::record_fields;
        for (record, fields) in [
            ("account", &ACCOUNT[..]),
            ("address", &ADDRESS[..]),
            ("customer", &CUSTOMER[..]),
            ("supply-address", &SUPPLY_ADDRESS[..]),
            ("meter-point", &METER_POINT[..]),
            ("agreement", &AGREEMENT[..]),
        ] {
            assert_eq!(record_fields("0.2.0", record), fields, "{record}");
        }
    }

    /// Every field 0.2.0's account record carries is a field of the real account document.
    #[test]
    fn the_account_record_names_fields_of_the_document() {
        let definitions = &crate::domain::request_document::request_schemas()["$defs"];
        for (definition, fields) in [
            ("EnergyAccount", &ACCOUNT[..]),
            ("Address", &ADDRESS[..]),
            ("EnergyCustomer", &CUSTOMER[..]),
            ("EnergyLegacySupplyAddress", &SUPPLY_ADDRESS[..]),
            ("ElectricityMeterPoint", &METER_POINT[..]),
            ("GasMeterPoint", &METER_POINT[..]),
            ("ElectricityAgreement", &AGREEMENT[..]),
        ] {
            for field in fields {
                assert!(
                    definitions[definition]["properties"].get(*field).is_some(),
                    "{definition} has no {field}"
                );
            }
        }
    }

    #[test]
    fn an_unchanged_answer_leaves_the_document_as_it_was() {
        let mut value = document();
        let answer = record(&value);
        assert_eq!(answer.customers[0].email, None, "null reads as none");
        write_account(&mut value, answer);
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
        write_account(&mut value, answer);
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
