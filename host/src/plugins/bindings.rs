//! Host bindings, one set per published version of the WIT package (`wit/since_v*/`, world
//! `plugin`), as Zed's extension host keeps them: the records of each version as Rust types.
//!
//! Only the account records differ between versions, and wasmtime checks records by their
//! shape, not their package: the records every version shares (notes, transactions,
//! statements, payment instructions, field errors, the `host` interface) are used from
//! [`latest`] for every version. 0.1.0's account is lifted as its own bindings' record; the
//! account records of 0.2.0 and later, which carry part of the account document, are stated
//! once each in [`super::account_document`] and shared by the versions that have them.

pub mod since_v0_1_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.1.0",
        world: "plugin",
    });
}

pub mod since_v0_2_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.2.0",
        world: "plugin",
    });
}

pub mod since_v0_3_0 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.3.0",
        world: "plugin",
    });
}

/// The newest version.
pub use since_v0_3_0 as latest;

/// The fields of a WIT record as the JSON names them (`tariff-code` is `tariff_code`), read from
/// the `.wit` file of `version`: the lists the conversions read and write by are checked
/// against it, so that a record's fields are stated once, in the WIT.
#[cfg(test)]
pub fn record_fields(version: &str, record: &str) -> Vec<String> {
    let path = format!(
        "{}/../wit/since_v{version}/supplier-rules.wit",
        env!("CARGO_MANIFEST_DIR")
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
        .filter_map(|line| line.split_once(':'))
        .map(|(name, _)| name.trim_start_matches('%').replace('-', "_"))
        .collect()
}
