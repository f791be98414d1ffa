//! Writes the plugin records of each published version of the WIT package (`wit/since_v*/`) as
//! Rust, from the WIT itself, so that a record's fields are stated once, in the WIT: one table
//! of [`record!`](src/plugins/wit/record.rs) per record, in
//! `$OUT_DIR/wit_records_v<version>.rs`, which `src/plugins/wit/since_v<version>.rs` includes
//! beside its `bindgen!` bindings.
//!
//! A version's module holds the records `validate-account` takes (its `account` and what that
//! is made of); the newest version's, the records every hook takes, so those of the data hooks,
//! which every version shares, too. The records hooks answer with are the types of the
//! version's bindings. A field's kind (how Ferry reads it from the request's JSON and writes a
//! hook's answer back) follows from its WIT type, but for the few fields of [`KINDS`].

use heck::{ToSnakeCase, ToUpperCamelCase};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use wit_parser::{Resolve, Type, TypeDefKind, TypeId};

/// The published versions, oldest first.
const VERSIONS: [&str; 3] = ["0.1.0", "0.2.0", "0.3.0"];

/// The versions whose account is a view of the document under names of its own, read and
/// written by hand: their records get types only.
const VIEWS: [&str; 1] = ["0.1.0"];

/// The kinds the WIT types do not say, by record and field: text the request may leave out
/// (a `string` in the WIT), pence written back as a JSON integer, a note's document paths (each
/// an object in the request).
const KINDS: [(&str, &str, &str); 6] = [
    ("line-item", "rate-band", "text_if_given"),
    ("line-item", "price-per-unit", "text_if_given"),
    ("statement", "issued-date", "text_if_given"),
    ("statement", "number", "text_if_given"),
    ("statement", "gross-amount", "integer_if_given"),
    ("note", "document-paths", "paths"),
];

fn main() {
    let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    println!("cargo::rerun-if-changed={}", wit.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let newest = VERSIONS[VERSIONS.len() - 1];
    for version in VERSIONS {
        let directory = wit.join(format!("since_v{version}"));
        let rust = records(&directory, version == newest, VIEWS.contains(&version))
            .unwrap_or_else(|error| panic!("{}: {error:#}", directory.display()));
        let file = out.join(format!("wit_records_v{}.rs", version.replace('.', "_")));
        std::fs::write(&file, rust)
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", file.display()));
    }
}

/// The `record!` tables of the package in `directory`: of the records its hooks take (`all`),
/// or those `validate-account` takes.
fn records(directory: &Path, all: bool, views: bool) -> Result<String, String> {
    let mut resolve = Resolve::new();
    let (package, _) = resolve
        .push_dir(directory)
        .map_err(|error| format!("{error:#}"))?;
    let hooks = resolve.packages[package]
        .interfaces
        .iter()
        .filter(|(name, _)| name.as_str() == "account-rules" || (all && name.ends_with("-rules")))
        .flat_map(|(_, interface)| resolve.interfaces[*interface].functions.values());
    let mut wanted: Vec<TypeId> = Vec::new();
    for param in hooks.flat_map(|hook| &hook.params) {
        if let Some(record) = record_in(&resolve, param.ty)
            && !wanted.contains(&record)
        {
            wanted.push(record);
        }
    }
    if wanted.is_empty() {
        return Err("no hook takes a record".to_owned());
    }
    // The records the wanted ones are made of, in the order they are found.
    let mut index = 0;
    while let Some(&id) = wanted.get(index) {
        if let TypeDefKind::Record(record) = &resolve.types[id].kind {
            for field in &record.fields {
                if let Some(nested) = record_in(&resolve, field.ty)
                    && !wanted.contains(&nested)
                {
                    wanted.push(nested);
                }
            }
        }
        index += 1;
    }
    let mut rust = String::from("// Made by host/build.rs from the WIT: edit the WIT, not this.\n");
    for id in wanted {
        let definition = &resolve.types[id];
        let TypeDefKind::Record(record) = &definition.kind else {
            continue;
        };
        let name = definition
            .name
            .as_deref()
            .ok_or("a record without a name")?;
        rust.push_str("\nsuper::record::record! {\n");
        doc(&mut rust, "    ", &definition.docs.contents);
        rust.push_str(
            "    #[allow(dead_code, reason = \"made for every record and field of the WIT: some \
             are only sent, some answered fields never read back\")]\n",
        );
        let view = if views { "view " } else { "" };
        let _ = writeln!(
            rust,
            "    {view}{}: super::ferry::supplier_rules::types::{} {{",
            rust_name(name),
            type_name(name)
        );
        for field in &record.fields {
            doc(&mut rust, "        ", &field.docs.contents);
            let kind = kind(&resolve, name, &field.name, field.ty)?;
            let ident = rust_name(&field.name);
            let row = if is_keyword(&ident) {
                format!("{ident}_ as \"{ident}\"")
            } else {
                ident
            };
            let _ = writeln!(rust, "        {row} = {:?}: {kind},", field.name);
        }
        rust.push_str("    }\n}\n");
    }
    Ok(rust)
}

/// The record a field of type `ty` holds, directly, in an option or in a list.
fn record_in(resolve: &Resolve, ty: Type) -> Option<TypeId> {
    let Type::Id(id) = ty else { return None };
    match &resolve.types[id].kind {
        TypeDefKind::Record(_) => Some(id),
        TypeDefKind::Option(inner) | TypeDefKind::List(inner) | TypeDefKind::Type(inner) => {
            record_in(resolve, *inner)
        }
        _ => None,
    }
}

/// The `record!` kind of field `field` of `record`, of WIT type `ty`.
fn kind(resolve: &Resolve, record: &str, field: &str, ty: Type) -> Result<String, String> {
    if let Some((_, _, kind)) = KINDS.iter().find(|(r, f, _)| *r == record && *f == field) {
        return Ok((*kind).to_owned());
    }
    let unsupported = || {
        Err(format!(
            "{record}.{field}: its WIT type is none of those `record!` takes \
             (host/src/plugins/wit/record.rs)"
        ))
    };
    let record_name = |id: TypeId| resolve.types[id].name.as_deref().map(rust_name);
    let shape = |ty: Type| match ty {
        Type::Id(id) => match &resolve.types[id].kind {
            TypeDefKind::Record(_) => record_name(id).map(Shape::Record),
            TypeDefKind::List(Type::String) => Some(Shape::Strings),
            TypeDefKind::List(Type::Id(inner)) => match resolve.types[*inner].kind {
                TypeDefKind::Record(_) => record_name(*inner).map(Shape::Records),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    Ok(match ty {
        Type::String => "text".to_owned(),
        Type::Bool => "flag".to_owned(),
        Type::Id(id) => match &resolve.types[id].kind {
            TypeDefKind::Option(Type::String) => "optional".to_owned(),
            TypeDefKind::Option(inner) => match shape(*inner) {
                Some(Shape::Record(name)) => format!("optional_record {name}"),
                Some(Shape::Records(name)) => format!("optional_records {name}"),
                _ => return unsupported(),
            },
            _ => match shape(ty) {
                Some(Shape::Record(name)) => format!("record {name}"),
                Some(Shape::Records(name)) => format!("records {name}"),
                Some(Shape::Strings) => "strings".to_owned(),
                None => return unsupported(),
            },
        },
        _ => return unsupported(),
    })
}

/// What a field holds beyond a string or a flag.
enum Shape {
    Record(String),
    Records(String),
    Strings,
}

/// A WIT name as Rust's (`tariff-code` is `tariff_code`), which is also the JSON's.
fn rust_name(wit: &str) -> String {
    wit.to_snake_case()
}

/// A WIT name as `bindgen!` names its type (`meter-point` is `MeterPoint`).
fn type_name(wit: &str) -> String {
    wit.to_upper_camel_case()
}

/// Whether `name` is a Rust keyword, which a field takes with `_` after it, as `bindgen!`
/// names it.
fn is_keyword(name: &str) -> bool {
    const KEYWORDS: [&str; 51] = [
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
        "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
        "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
        "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type",
        "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
    ];
    KEYWORDS.contains(&name)
}

/// `docs` as doc attributes, each line indented by `indent`.
fn doc(rust: &mut String, indent: &str, docs: &Option<String>) {
    for line in docs.iter().flat_map(|docs| docs.lines()) {
        let _ = writeln!(
            rust,
            "{indent}#[doc = {:?}]",
            format!(" {}", line.trim_end())
        );
    }
}
