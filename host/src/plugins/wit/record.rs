//! [`record!`]: a WIT record as Ferry lowers it into a hook and writes the hook's answer back,
//! from one table of its fields. The build script (`host/build.rs`) writes the tables from the
//! WIT files, so a field is stated once, in the WIT.

/// One WIT record, as a module named after it holding:
/// - `Wire<'a>`, the record a hook is sent, borrowing its strings from the request's JSON (each
///   copied once, straight into the guest's memory), and `Owned`, the record a hook answers: the
///   type the version's `bindgen!` bindings give it;
/// - `FIELDS`, the fields by their names in the JSON, in WIT order; `read`, which makes a
///   `Wire` of the JSON; and `write`, which writes an `Owned` back over the JSON it was read
///   from, [`Within`](super::fields::Within) a request or the account document
///   ([`super::fields`] says what that keeps);
/// - in tests, `Wire::owned`: the answer of a hook that changes nothing.
///
/// `record! { name: Owned { rows } }`; `record! { view name: Owned { rows } }` makes the
/// types (and `Wire::owned`) only, for a record whose reading and writing are written by hand:
/// 0.1.0's account, a view of the document under names of its own.
///
/// Each row is a field's attributes (its doc), then `name = "wit-name": kind`, `name` being the
/// field's name in the Rust types and in the JSON (`name as "json-name"` where the JSON's is a
/// Rust keyword, as `type`). The kinds:
///
/// | kind | WIT type | read from the JSON | written back |
/// |---|---|---|---|
/// | `text` | `string` | a string, or a number as written; else empty | over what is there |
/// | `text_if_given` | `string` | as `text` | as `text`, but an empty text over a missing or `null` field leaves it so (a field the request may leave out) |
/// | `integer_if_given` | `string` | as `text` | as `text_if_given`; a changed value that reads as an integer is written as a JSON number |
/// | `optional` | `option<string>` | as `text`; `none` when missing or not text | `none` removes it (within the document, a missing or `null` one stays so) |
/// | `flag` | `bool` | `true` only when `true` | over what is there |
/// | `strings` | `list<string>` | the strings (and numbers) of the array | left out when empty |
/// | `paths` | `list<string>` | the `document_path` of each object of the array | as `strings`, each in an object again |
/// | `record R` | `R` | (views only) | (views only) |
/// | `optional_record R` | `option<R>` | the object, when it is one | over it; `none` as `optional` within the document |
/// | `records R` | `list<R>` | the elements of the array | element by element; an empty list over a missing field leaves it missing |
/// | `optional_records R` | `option<list<R>>` | the elements of the array, when the field is there | element by element; `none` as `optional` |
///
/// `R` is another record's module, in scope where the table is. Wasmtime checks `Wire` against
/// a component's own type when the component is loaded, so a table that does not match its WIT
/// refuses the plugins built against it before any call.
macro_rules! record {
    (@json $field:ident) => { stringify!($field) };
    (@json $field:ident $json:literal) => { $json };

    (@wire $a:lifetime, text) => { &$a str };
    (@wire $a:lifetime, text_if_given) => { &$a str };
    (@wire $a:lifetime, integer_if_given) => { &$a str };
    (@wire $a:lifetime, optional) => { Option<&$a str> };
    (@wire $a:lifetime, flag) => { bool };
    (@wire $a:lifetime, strings) => { Vec<&$a str> };
    (@wire $a:lifetime, paths) => { Vec<&$a str> };
    (@wire $a:lifetime, record $of:ident) => { $of::Wire<$a> };
    (@wire $a:lifetime, optional_record $of:ident) => { Option<$of::Wire<$a>> };
    (@wire $a:lifetime, records $of:ident) => { Vec<$of::Wire<$a>> };
    (@wire $a:lifetime, optional_records $of:ident) => { Option<Vec<$of::Wire<$a>>> };

    (@read $fields:ident, $name:expr, text_if_given) => { $fields.text($name) };
    (@read $fields:ident, $name:expr, integer_if_given) => { $fields.text($name) };
    (@read $fields:ident, $name:expr, optional_record $of:ident) => {
        $fields.object($name).map($of::read)
    };
    (@read $fields:ident, $name:expr, records $of:ident) => {
        $fields.items($name).iter().map($of::read).collect()
    };
    (@read $fields:ident, $name:expr, optional_records $of:ident) => {
        $fields
            .optional_items($name)
            .map(|items| items.iter().map($of::read).collect())
    };
    // `text`, `optional`, `flag`, `strings`, `paths`: the reader of that name.
    (@read $fields:ident, $name:expr, $kind:ident) => { $fields.$kind($name) };

    (@write $fields:ident, $name:expr, $value:expr, $within:ident, optional_record $of:ident) => {
        $fields.nullable_record($name, $value, |slot, record| $of::write(slot, record, $within))
    };
    (@write $fields:ident, $name:expr, $value:expr, $within:ident, records $of:ident) => {
        $fields.list_if_given($name, $value, |slot, record| $of::write(slot, record, $within))
    };
    (@write $fields:ident, $name:expr, $value:expr, $within:ident, optional_records $of:ident) => {
        $fields.list($name, $value, |slot, record| $of::write(slot, record, $within))
    };
    // The kinds of no record: the writer of that name.
    (@write $fields:ident, $name:expr, $value:expr, $within:ident, $kind:ident) => {
        $fields.$kind($name, $value)
    };

    (@owned $value:expr, text) => { $value.to_owned() };
    (@owned $value:expr, text_if_given) => { $value.to_owned() };
    (@owned $value:expr, integer_if_given) => { $value.to_owned() };
    (@owned $value:expr, optional) => { $value.map(str::to_owned) };
    (@owned $value:expr, flag) => { $value };
    (@owned $value:expr, strings) => { $value.iter().map(|text| (*text).to_owned()).collect() };
    (@owned $value:expr, paths) => { $crate::plugins::wit::record::record!(@owned $value, strings) };
    (@owned $value:expr, record $of:ident) => { $value.owned() };
    (@owned $value:expr, optional_record $of:ident) => { $value.as_ref().map($of::Wire::owned) };
    (@owned $value:expr, records $of:ident) => { $value.iter().map($of::Wire::owned).collect() };
    (@owned $value:expr, optional_records $of:ident) => {
        $value.as_ref().map(|items| items.iter().map($of::Wire::owned).collect())
    };

    // The types of a record and its test items.
    (
        @types $owned:ty;
        $($(#[$attr:meta])* $field:ident = $wit:literal : $kind:ident $($of:ident)?),+
    ) => {
        /// The record a hook is sent, borrowing its strings from the request.
        #[derive(Debug, Default, wasmtime::component::ComponentType, wasmtime::component::Lower)]
        #[component(record)]
        pub struct Wire<'a> {
            $(
                $(#[$attr])*
                #[component(name = $wit)]
                pub $field: $crate::plugins::wit::record::record!(@wire 'a, $kind $($of)?),
            )+
        }

        /// The record a hook answers, of the version's bindings.
        pub type Owned = $owned;

        #[cfg(test)]
        impl Wire<'_> {
            /// The record, owned: what a hook that changes nothing answers.
            pub fn owned(&self) -> Owned {
                Owned {
                    $(
                        $field: $crate::plugins::wit::record::record!(
                            @owned self.$field, $kind $($of)?
                        ),
                    )+
                }
            }
        }
    };

    (
        $(#[$meta:meta])*
        view $record:ident : $owned:ty {
            $($(#[$attr:meta])* $field:ident = $wit:literal : $kind:ident $($of:ident)?),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        pub mod $record {
            #[allow(unused_imports)]
            use super::*;

            $crate::plugins::wit::record::record!(
                @types $owned; $($(#[$attr])* $field = $wit : $kind $($of)?),+
            );
        }
    };

    (
        $(#[$meta:meta])*
        $record:ident : $owned:ty {
            $(
                $(#[$attr:meta])*
                $field:ident $(as $json:literal)? = $wit:literal : $kind:ident $($of:ident)?
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        pub mod $record {
            #[allow(unused_imports)]
            use super::*;
            use $crate::plugins::wit::fields::{Fields, Within, write_object};
            use serde_json::Value;

            $crate::plugins::wit::record::record!(
                @types $owned; $($(#[$attr])* $field = $wit : $kind $($of)?),+
            );

            /// The fields, in WIT order, by their names in the JSON.
            pub const FIELDS: [&str; [$($wit),+].len()] =
                [$($crate::plugins::wit::record::record!(@json $field $($json)?)),+];

            /// The record a hook sees of `value`.
            pub fn read(value: &Value) -> Wire<'_> {
                let fields = Fields::of(value, &FIELDS);
                Wire {
                    $(
                        $field: $crate::plugins::wit::record::record!(
                            @read fields,
                            $crate::plugins::wit::record::record!(@json $field $($json)?),
                            $kind $($of)?
                        ),
                    )+
                }
            }

            /// Writes a hook's answer over the `slot` it was read from.
            pub fn write(slot: &mut Value, answer: Owned, within: Within) {
                write_object(slot, &FIELDS, within, |fields| {
                    $(
                        $crate::plugins::wit::record::record!(
                            @write fields,
                            $crate::plugins::wit::record::record!(@json $field $($json)?),
                            answer.$field,
                            within,
                            $kind $($of)?
                        );
                    )+
                });
            }
        }
    };
}

pub(crate) use record;
