//! The records of `ferry:supplier-rules@0.2.0` and later that carry part of the account
//! document (the real platform's `EnergyAccount`), field for field under the document's own
//! names, each stated once: [`document_record!`] makes a record's Rust types, its reader and
//! its writer from one table of its fields.
//!
//! Into a hook, a record borrows its strings from the document (each copied once, into the
//! guest, as the other [`super::wire`] records). Out of it, the answer is written back over
//! the document with [`super::convert`]'s writers, keeping everything the record does not
//! carry: a field the hook left as it was keeps its value (a number stays a number), a changed
//! one is replaced, a `none` one is removed, lists follow the answer element by element.
//!
//! The records below are the same in every version that has them; each version's `account`
//! (and what only it has) is in its own module ([`super::account_v0_2_0`],
//! [`super::account_v0_3_0`]). A version that changes one of these records states its own.

/// One record of the account document, as a module named after it holding:
/// - `FIELDS`, the fields by their names in the document, in WIT order;
/// - `Wire<'a>`, the record a hook is sent, borrowing from the document, and `read`, which
///   makes it;
/// - `Owned`, the record a hook answers, and `write`, which writes it over the document;
/// - in tests, `Wire::owned`: the answer of a hook that changes nothing.
///
/// Each field is `name = "wit-name": kind`, where kind is `text` (`string`), `optional`
/// (`option<string>`), `record R` (`option<R>`), `records R` (`list<R>`) or `transactions`
/// (`list<transaction>`), `R` being another record's module. The lists are checked against
/// the WIT files by each version's tests (`bindings::record_fields`), and the types against
/// every component's own when it is loaded.
macro_rules! document_record {
    (@wire $a:lifetime, text) => { &$a str };
    (@wire $a:lifetime, optional) => { Option<&$a str> };
    (@wire $a:lifetime, record $of:ident) => { Option<$of::Wire<$a>> };
    (@wire $a:lifetime, records $of:ident) => { Vec<$of::Wire<$a>> };
    (@wire $a:lifetime, transactions) => { Vec<$crate::plugins::wire::Transaction<$a>> };

    (@owned_type text) => { String };
    (@owned_type optional) => { Option<String> };
    (@owned_type record $of:ident) => { Option<$of::Owned> };
    (@owned_type records $of:ident) => { Vec<$of::Owned> };
    (@owned_type transactions) => {
        Vec<$crate::plugins::bindings::latest::ferry::supplier_rules::types::Transaction>
    };

    (@read $fields:ident . $name:ident, text) => { $fields.text(stringify!($name)) };
    (@read $fields:ident . $name:ident, optional) => { $fields.optional(stringify!($name)) };
    (@read $fields:ident . $name:ident, record $of:ident) => {
        $fields.get(stringify!($name)).filter(|value| value.is_object()).map($of::read)
    };
    (@read $fields:ident . $name:ident, records $of:ident) => {
        $fields.items(stringify!($name)).iter().map($of::read).collect()
    };
    (@read $fields:ident . $name:ident, transactions) => {
        $fields
            .items(stringify!($name))
            .iter()
            .map($crate::plugins::convert::transaction_to_wit)
            .collect()
    };

    (@write $fields:ident . $name:ident = $value:expr, text) => {
        $fields.text(stringify!($name), $value)
    };
    (@write $fields:ident . $name:ident = $value:expr, optional) => {
        $fields.nullable(stringify!($name), $value)
    };
    (@write $fields:ident . $name:ident = $value:expr, record $of:ident) => {
        $fields.nullable_record(stringify!($name), $value, $of::write)
    };
    (@write $fields:ident . $name:ident = $value:expr, records $of:ident) => {
        $fields.list_if_given(stringify!($name), $value, $of::write)
    };
    (@write $fields:ident . $name:ident = $value:expr, transactions) => {
        $fields.list_if_given(
            stringify!($name),
            $value,
            $crate::plugins::convert::write_document_transaction,
        )
    };

    (@owned $value:expr, text) => { $value.to_owned() };
    (@owned $value:expr, optional) => { $value.map(str::to_owned) };
    (@owned $value:expr, record $of:ident) => { $value.as_ref().map($of::Wire::owned) };
    (@owned $value:expr, records $of:ident) => { $value.iter().map($of::Wire::owned).collect() };
    (@owned $value:expr, transactions) => {
        $value.iter().map($crate::plugins::convert::owned_transaction).collect()
    };

    (
        $(#[$meta:meta])*
        $record:ident {
            $($field:ident = $wit:tt : $kind:ident $($of:ident)?),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        pub mod $record {
            #[allow(unused_imports)]
            use super::*;
            use serde_json::Value;
            use wasmtime::component::{ComponentType, Lift, Lower};

            /// The fields, in WIT order, by their names in the document.
            pub const FIELDS: [&str; [$(stringify!($field)),+].len()] =
                [$(stringify!($field)),+];

            /// The record a hook is sent, borrowing its strings from the document.
            #[derive(ComponentType, Lower)]
            #[component(record)]
            pub struct Wire<'a> {
                $(
                    #[component(name = $wit)]
                    pub $field: $crate::plugins::account_document::document_record!(
                        @wire 'a, $kind $($of)?
                    ),
                )+
            }

            /// The record a hook answers.
            #[derive(ComponentType, Lift)]
            #[component(record)]
            pub struct Owned {
                $(
                    #[component(name = $wit)]
                    pub $field: $crate::plugins::account_document::document_record!(
                        @owned_type $kind $($of)?
                    ),
                )+
            }

            /// The record a hook sees of `value`.
            pub fn read(value: &Value) -> Wire<'_> {
                let fields = $crate::plugins::convert::Fields::of(value, &FIELDS);
                Wire {
                    $(
                        $field: $crate::plugins::account_document::document_record!(
                            @read fields.$field, $kind $($of)?
                        ),
                    )+
                }
            }

            /// Writes a hook's answer over the `slot` it was read from.
            pub fn write(slot: &mut Value, answer: Owned) {
                $crate::plugins::convert::write_part_of_object(slot, &FIELDS, |fields| {
                    $(
                        $crate::plugins::account_document::document_record!(
                            @write fields.$field = answer.$field, $kind $($of)?
                        );
                    )+
                });
            }

            #[cfg(test)]
            impl Wire<'_> {
                /// The record, owned: what a hook that changes nothing answers.
                pub fn owned(&self) -> Owned {
                    Owned {
                        $(
                            $field: $crate::plugins::account_document::document_record!(
                                @owned self.$field, $kind $($of)?
                            ),
                        )+
                    }
                }
            }
        }
    };
}

pub(crate) use document_record;

document_record! {
    /// The structured address of the document (`billing_address`).
    address {
        country = "country": text,
        street_address = "street-address": optional,
        dependent_locality = "dependent-locality": optional,
        locality = "locality": optional,
        administrative_area = "administrative-area": optional,
        postal_code = "postal-code": optional,
    }
}

document_record! {
    /// One of the account's `customers`.
    customer {
        given_name = "given-name": optional,
        family_name = "family-name": optional,
        title = "title": optional,
        salutation = "salutation": optional,
        email = "email": optional,
        mobile = "mobile": optional,
        landline = "landline": optional,
        date_of_birth = "date-of-birth": optional,
    }
}

document_record! {
    /// The tariff a meter point is supplied on, and when.
    agreement {
        tariff_code = "tariff-code": text,
        effective_from = "effective-from": text,
        effective_to = "effective-to": optional,
    }
}

document_record! {
    /// A meter point of a supply address (electricity or gas).
    meter_point {
        supply_type = "supply-type": text,
        identifier = "identifier": text,
        mpid = "mpid": text,
        supply_start_date = "supply-start-date": text,
        supply_end_date = "supply-end-date": optional,
        agreements = "agreements": records agreement,
    }
}

document_record! {
    /// One of the account's `supply_addresses`, with its meter points.
    supply_address {
        supply_address1 = "supply-address1": optional,
        supply_address2 = "supply-address2": optional,
        supply_address3 = "supply-address3": optional,
        supply_address4 = "supply-address4": optional,
        supply_address5 = "supply-address5": optional,
        supply_postcode = "supply-postcode": text,
        customer_at_supply_address_from_date = "customer-at-supply-address-from-date": text,
        meter_points = "meter-points": records meter_point,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::bindings::record_fields;

    /// The records of this module, by their names in the WIT.
    fn records() -> [(&'static str, &'static [&'static str]); 5] {
        [
            ("address", &address::FIELDS),
            ("customer", &customer::FIELDS),
            ("supply-address", &supply_address::FIELDS),
            ("meter-point", &meter_point::FIELDS),
            ("agreement", &agreement::FIELDS),
        ]
    }

    #[test]
    fn the_field_lists_are_the_wit_records_of_every_version_that_shares_them() {
        for version in ["0.2.0", "0.3.0"] {
            for (record, fields) in records() {
                assert_eq!(
                    record_fields(version, record),
                    fields,
                    "{record} of {version}"
                );
            }
        }
    }

    /// Every field these records carry is a field of the real account document.
    #[test]
    fn the_records_name_fields_of_the_document() {
        let definitions = &crate::domain::request_document::request_schemas()["$defs"];
        for (definition, fields) in [
            ("Address", &address::FIELDS[..]),
            ("EnergyCustomer", &customer::FIELDS[..]),
            ("EnergyLegacySupplyAddress", &supply_address::FIELDS[..]),
            ("ElectricityMeterPoint", &meter_point::FIELDS[..]),
            ("GasMeterPoint", &meter_point::FIELDS[..]),
            ("ElectricityAgreement", &agreement::FIELDS[..]),
            ("GasAgreement", &agreement::FIELDS[..]),
        ] {
            for field in fields {
                assert!(
                    definitions[definition]["properties"].get(*field).is_some(),
                    "{definition} has no {field}"
                );
            }
        }
    }
}
