//! The WIT package `ferry:supplier-rules`, one module per published version (`wit/since_v*/`),
//! as Zed's extension host lays out its own: each with its `bindgen!` bindings and the records
//! its hooks take, made from its WIT by the build script ([`record`]: a field is stated once,
//! in the WIT), with what it needs beyond them ([`since_v0_1_0`]'s account, a view of the
//! document read and written by hand). [`latest`] is the newest; a new version is a new WIT
//! directory and a new module with its bindings.
//!
//! Every version's `validate-account` takes its own `account` record, read from the account
//! document and written back over it. The data hooks take the same records in every version,
//! so Ferry sends every version the newest's ([`shared`]); wasmtime checks records by their
//! shape, not their package. Field errors and the `host` interface are the newest bindings'.
//!
//! [`exported_hooks`] finds the hooks a component exports and under which version, and
//! [`invoke`] calls one, lowering the request into the version's records and writing the answer
//! back over it ([`fields`]).

mod fields;
mod record;
mod shared;

/// A version's module: its bindings (`bindgen!` of its WIT directory, `$wit`), the records its
/// hooks take (the build script's `$records`, written from the same WIT) and its
/// `validate-account`, which takes its `account`.
macro_rules! version {
    ($wit:tt, $records:tt) => {
        wasmtime::component::bindgen!({
            path: $wit,
            world: "plugin",
        });

        include!(concat!(env!("OUT_DIR"), $records));

        /// `validate-account` of this version.
        pub struct ValidateAccount;

        impl super::Signature for ValidateAccount {
            type Params<'a> = (account::Wire<'a>,);
            type Answer = account::Owned;
        }
    };
}

use version;

pub mod since_v0_1_0;
pub mod since_v0_2_0;
pub mod since_v0_3_0;

/// The newest version.
pub use since_v0_3_0 as latest;

use super::runtime::PluginError;
use super::sandbox::PluginState;
use crate::domain::ports::{AccountTarget, Hook};
use crate::domain::validation::FieldErrors;
use fields::Within;
use latest::ferry::supplier_rules::types::FieldError;
use latest::{account_ref, note, payment_instruction, statement, transaction};
use serde_json::Value;
use shared::{read_all, write_all};
use std::collections::HashMap;
use wasmtime::Store;
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, Instance, Lift, Lower, TypedFunc,
};

/// The WIT package plugins are built against.
pub const PACKAGE: &str = "ferry:supplier-rules";

/// A published version of the WIT package (`wit/since_v*/`). Ferry serves every one: a
/// plugin built against any of them keeps working.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WitVersion {
    V0_1_0,
    V0_2_0,
    V0_3_0,
}

impl WitVersion {
    /// Newest first: a hook is looked for under the newest version first.
    pub const ALL: [WitVersion; 3] = [WitVersion::V0_3_0, WitVersion::V0_2_0, WitVersion::V0_1_0];
    pub const LATEST: WitVersion = WitVersion::V0_3_0;

    pub fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_1_0 => "0.1.0",
            WitVersion::V0_2_0 => "0.2.0",
            WitVersion::V0_3_0 => "0.3.0",
        }
    }

    /// `ferry:supplier-rules@<version>`.
    pub fn world(self) -> String {
        format!("{PACKAGE}@{}", self.as_str())
    }
}

/// The interface that exports `hook`.
fn interface_of(hook: Hook) -> &'static str {
    match hook {
        Hook::ValidateAccount => "account-rules",
        Hook::MapNotes => "note-rules",
        Hook::MapTransactions => "transaction-rules",
        Hook::MapStatements => "statement-rules",
        Hook::MapPaymentInstruction => "payment-instruction-rules",
    }
}

/// Where a component exports a hook, and under which version.
#[derive(Debug, Clone, Copy)]
pub struct ExportedHook {
    index: ComponentExportIndex,
    pub version: WitVersion,
}

/// The hooks `component` exports, each under the newest version it exports it with. A
/// component that exports none of the rules interfaces is not a plugin.
pub fn exported_hooks(component: &Component) -> Result<HashMap<Hook, ExportedHook>, PluginError> {
    let mut hooks = HashMap::new();
    for hook in Hook::ALL {
        for version in WitVersion::ALL {
            let interface = format!("{PACKAGE}/{}@{}", interface_of(hook), version.as_str());
            let Some(exported) = component.get_export_index(None, &interface) else {
                continue;
            };
            let index = component
                .get_export_index(Some(&exported), hook.as_str())
                .ok_or_else(|| {
                    PluginError::Invalid(format!("{interface} does not export {}", hook.as_str()))
                })?;
            hooks.insert(hook, ExportedHook { index, version });
            break;
        }
    }
    if hooks.is_empty() {
        let versions: Vec<&str> = WitVersion::ALL.iter().map(|v| v.as_str()).collect();
        return Err(PluginError::Invalid(format!(
            "it exports none of the {PACKAGE} rules interfaces (versions {})",
            versions.join(", ")
        )));
    }
    Ok(hooks)
}

/// The WIT signature of one hook as Rust types: what Ferry lowers into it (records borrowed
/// from the request) and the record it answers with, or field errors.
pub trait Signature {
    type Params<'a>: ComponentNamedList + Lower;
    type Answer: Lift + 'static;
}

/// The results of a hook of [`Signature`] `S`.
type Results<S> = (Result<<S as Signature>::Answer, Vec<FieldError>>,);

/// A data hook, the same in every version: it takes the account reference and one record or a
/// list of them, and answers the same.
macro_rules! data_hook {
    ($hook:ident takes a list of $record:ident) => {
        struct $hook;
        impl Signature for $hook {
            type Params<'a> = (account_ref::Wire<'a>, Vec<$record::Wire<'a>>);
            type Answer = Vec<$record::Owned>;
        }
    };
    ($hook:ident takes one $record:ident) => {
        struct $hook;
        impl Signature for $hook {
            type Params<'a> = (account_ref::Wire<'a>, $record::Wire<'a>);
            type Answer = $record::Owned;
        }
    };
}

data_hook!(MapNotes takes a list of note);
data_hook!(MapTransactions takes a list of transaction);
data_hook!(MapStatements takes a list of statement);
data_hook!(MapPaymentInstruction takes one payment_instruction);

/// Checks that `hook`'s export has its [`Signature`] (done once, when a component is loaded).
pub fn check_signature(
    store: &mut Store<PluginState>,
    instance: &Instance,
    hook: Hook,
    exported: &ExportedHook,
) -> wasmtime::Result<()> {
    fn check<S: Signature>(
        store: &mut Store<PluginState>,
        instance: &Instance,
        index: &ComponentExportIndex,
    ) -> wasmtime::Result<()> {
        hook_func::<S>(store, instance, index).map(drop)
    }
    let index = &exported.index;
    match hook {
        Hook::ValidateAccount => match exported.version {
            WitVersion::V0_1_0 => check::<since_v0_1_0::ValidateAccount>(store, instance, index),
            WitVersion::V0_2_0 => check::<since_v0_2_0::ValidateAccount>(store, instance, index),
            WitVersion::V0_3_0 => check::<since_v0_3_0::ValidateAccount>(store, instance, index),
        },
        Hook::MapNotes => check::<MapNotes>(store, instance, index),
        Hook::MapTransactions => check::<MapTransactions>(store, instance, index),
        Hook::MapStatements => check::<MapStatements>(store, instance, index),
        Hook::MapPaymentInstruction => check::<MapPaymentInstruction>(store, instance, index),
    }
}

/// `hook`'s function in an instance, typed by its [`Signature`].
fn hook_func<'a, S: Signature>(
    store: &mut Store<PluginState>,
    instance: &Instance,
    index: &ComponentExportIndex,
) -> wasmtime::Result<TypedFunc<S::Params<'a>, Results<S>>> {
    instance.get_typed_func(store, index)
}

/// Calls the hook of [`Signature`] `S` at `index` with `params`: its answer, or its field
/// errors.
async fn call<S: Signature>(
    store: &mut Store<PluginState>,
    instance: &Instance,
    index: &ComponentExportIndex,
    params: S::Params<'_>,
) -> wasmtime::Result<Result<S::Answer, Vec<FieldError>>> {
    let function = hook_func::<S>(store, instance, index)?;
    let (answer,) = function.call_async(&mut *store, params).await?;
    Ok(answer)
}

/// Calls `hook` with `input` (request shape) under the version it is `exported` with, and
/// writes its answer over `input`.
pub async fn invoke(
    store: &mut Store<PluginState>,
    instance: &Instance,
    hook: Hook,
    exported: ExportedHook,
    target: Option<&AccountTarget>,
    mut input: Value,
) -> wasmtime::Result<Result<Value, FieldErrors>> {
    let target = shared::account_ref_of(target);
    let index = &exported.index;
    let answer = match hook {
        Hook::ValidateAccount => match exported.version {
            WitVersion::V0_1_0 => {
                let start = since_v0_1_0::open_period_start(&input);
                let account = since_v0_1_0::read_account(&input, start.as_deref());
                call::<since_v0_1_0::ValidateAccount>(store, instance, index, (account,))
                    .await?
                    .map(|answer| since_v0_1_0::write_account(&mut input, answer))
            }
            WitVersion::V0_2_0 => {
                use since_v0_2_0::account;
                let params = (account::read(&input),);
                call::<since_v0_2_0::ValidateAccount>(store, instance, index, params)
                    .await?
                    .map(|answer| account::write(&mut input, answer, Within::Document))
            }
            WitVersion::V0_3_0 => {
                use since_v0_3_0::account;
                let params = (account::read(&input),);
                call::<since_v0_3_0::ValidateAccount>(store, instance, index, params)
                    .await?
                    .map(|answer| account::write(&mut input, answer, Within::Document))
            }
        },
        Hook::MapNotes => {
            let params = (target, read_all(&input, note::read));
            call::<MapNotes>(store, instance, index, params)
                .await?
                .map(|answer| write_all(&mut input, answer, note::write))
        }
        Hook::MapTransactions => {
            let params = (target, read_all(&input, transaction::read));
            call::<MapTransactions>(store, instance, index, params)
                .await?
                .map(|answer| write_all(&mut input, answer, transaction::write))
        }
        Hook::MapStatements => {
            let params = (target, read_all(&input, statement::read));
            call::<MapStatements>(store, instance, index, params)
                .await?
                .map(|answer| write_all(&mut input, answer, statement::write))
        }
        Hook::MapPaymentInstruction => {
            let params = (target, payment_instruction::read(&input));
            call::<MapPaymentInstruction>(store, instance, index, params)
                .await?
                .map(|answer| payment_instruction::write(&mut input, answer, Within::Request))
        }
    };
    Ok(answer.map(|()| input).map_err(shared::field_errors))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields of a WIT record as the `.wit` file of `version` writes them (`name: type`),
    /// without their comments.
    fn record_definition(version: WitVersion, record: &str) -> Vec<String> {
        let path = format!(
            "{}/../wit/since_v{}/supplier-rules.wit",
            env!("CARGO_MANIFEST_DIR"),
            version.as_str()
        );
        let text = std::fs::read_to_string(&path).expect("the WIT file");
        let start = format!("record {record} {{");
        let body = text
            .split_once(&start)
            .and_then(|(_, rest)| rest.split_once('}'))
            .map(|(body, _)| body)
            .unwrap_or_else(|| panic!("no record {record} in {path}"));
        body.lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with("//"))
            .map(str::to_owned)
            .collect()
    }

    /// Ferry sends the newest version's records to the data hooks of every version: they must
    /// be the same in every version (as the field errors every hook answers with).
    #[test]
    fn the_data_hooks_records_are_the_same_in_every_version() {
        let records = [
            "account-ref",
            "note",
            "transaction",
            "line-item",
            "tax-item",
            "statement",
            "payment-instruction",
            "field-error",
        ];
        for record in records {
            let newest = record_definition(WitVersion::LATEST, record);
            for version in WitVersion::ALL {
                assert_eq!(
                    record_definition(version, record),
                    newest,
                    "{record} of {version:?}"
                );
            }
        }
    }

    /// Every field the account records of 0.2.0 and later read and write is a field of the
    /// real account document, under the same name.
    #[test]
    fn the_account_records_name_fields_of_the_document() {
        macro_rules! account_records {
            ($version:ident) => {
                [
                    ("EnergyAccount", &$version::account::FIELDS[..]),
                    ("Address", &$version::address::FIELDS),
                    ("EnergyCustomer", &$version::customer::FIELDS),
                    (
                        "EnergyLegacySupplyAddress",
                        &$version::supply_address::FIELDS,
                    ),
                    ("ElectricityMeterPoint", &$version::meter_point::FIELDS),
                    ("GasMeterPoint", &$version::meter_point::FIELDS),
                    ("ElectricityAgreement", &$version::agreement::FIELDS),
                    ("GasAgreement", &$version::agreement::FIELDS),
                ]
            };
        }
        let definitions = &crate::domain::request_document::request_schemas()["$defs"];
        let records = account_records!(since_v0_2_0)
            .into_iter()
            .chain(account_records!(since_v0_3_0))
            .chain([("EnergyLedger", &since_v0_3_0::ledger::FIELDS[..])]);
        for (definition, fields) in records {
            for field in fields {
                assert!(
                    definitions[definition]["properties"].get(*field).is_some(),
                    "{definition} has no {field}"
                );
            }
        }
    }
}
