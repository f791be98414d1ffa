//! The OpenAPI document of the whole HTTP API, generated from the handlers (`utoipa`).
//!
//! Each handler documents its own answers; [`ErrorResponses`] adds the failures every
//! operation of a kind can answer, all in the error format: a body that cannot be read (400
//! `parse_error`, 408 when it stops arriving, 413, 415), query parameters that are refused (400), a path that names nothing
//! (404), a missing or wrong credential (401; 403 for a supplier token on the admin API), a
//! supplier key over its request rate (429 with `Retry-After`), the store failing (500) and a
//! supplier's plugin with too many calls waiting (503 with `Retry-After`).

use super::error::{ErrorBody, TransactionImportErrorBody};
use super::{
    accounts_v2, admin, graphql, health, imports, meter_points, notes, payment_instructions,
    staging, statements, transactions,
};
use crate::domain::request_document::{RequestDocument, request_schemas};
use crate::domain::validation::FieldError;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder, schema};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Ferry data-import API",
        version = "1",
        description = "Stage and migrate accounts from a retiring supplier, and read their import state. \
            Obtain a token with the GraphQL mutation `obtainPlatformToken` at `POST /v1/graphql/`, then send \
            it in `Authorization`, bare or after `Token ` (`Authorization: <token>` or \
            `Authorization: Token <token>`, as on the real platform), or the API key itself in its place, \
            either way. The admin API takes the operator key as `Token <operator key>`. \
            Answers name the platform account's number `platform_account_number` and, with the same \
            value, `kraken_account_number`, the real platform's name (the v2 status: `platform_identifier` \
            and `kraken_identifier`). \
            Fields Ferry does not know are ignored, as on the real platform, and named in the \
            answer's `Ferry-Ignored-Fields` header (`Ferry-Ignored-Field-Count` gives their number); \
            a supplier the operators set strict has them refused (`unknown_field`). \
            Every failure answers `{detail, code, errors: [{detail, code, attr}]}` (the transactions \
            endpoint's per-transaction 400 aside): also an unknown path (404 `not_found`) and a method a \
            path does not have (405 `method_not_allowed`, with `Allow`)."
    ),
    paths(
        graphql::execute,
        staging::validate_account,
        staging::create_or_update,
        staging::process,
        accounts_v2::validate_account,
        accounts_v2::schedule_account,
        accounts_v2::import_status,
        meter_points::meter_point_statuses,
        meter_points::send_registration_flows,
        imports::account_transfer_status,
        imports::all_processes,
        imports::pending_processes,
        imports::imported_processes,
        notes::create_notes,
        transactions::create_transactions,
        statements::create_statements,
        payment_instructions::create_payment_instruction,
        admin::accounts::get_account,
        admin::accounts::set_meter_point_status,
        admin::imports::list_imports,
        admin::migrations::start_migration,
        admin::migrations::list_migrations,
        admin::migrations::get_migration,
        admin::plugins::install_plugin,
        admin::plugins::get_plugin,
        admin::plugins::remove_plugin,
        admin::plugins::set_plugin_config,
        admin::reports::campaign_report,
        admin::reports::report_accounts,
        admin::events::list_events,
        admin::events::publish_event,
        admin::storage::storage_status,
        admin::suppliers::create_supplier,
        admin::suppliers::list_suppliers,
        admin::suppliers::get_supplier,
        admin::suppliers::update_supplier,
        admin::api_keys::create_api_key,
        admin::api_keys::revoke_api_key,
        admin::operations_teams::create_team,
        admin::operations_teams::list_teams,
        admin::operations_teams::delete_team,
        health::healthz,
        health::readyz,
        health::metrics,
        super::openapi_json,
    ),
    components(schemas(ErrorBody, FieldError, TransactionImportErrorBody)),
    modifiers(&Security, &ErrorResponses),
    tags(
        (name = "auth", description = "Platform tokens (GraphQL)"),
        (name = "staging", description = "Validate, stage and migrate accounts"),
        (name = "imports", description = "Import state of accounts"),
        (name = "data", description = "Data added to imported accounts"),
        (name = "admin", description = "Operator API (operator key)"),
        (name = "operations", description = "Health, readiness, metrics and this document"),
    )
)]
pub struct ApiDoc;

/// The security scheme of supplier integrations (platform token or API key).
pub const SUPPLIER_SCHEME: &str = "token";
/// The security scheme of operators (operator key).
pub const OPERATOR_SCHEME: &str = "operator";

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, what) in [
            (
                SUPPLIER_SCHEME,
                "The platform token or the API key, bare or after `Token `: `<token>`, \
                 `Token <token>`, `<API key>` or `Token <API key>` (the real platform's \
                 `DRFKrakenTokenAuthentication` and `DataImportViewerAPIKeyAuthentication`).",
            ),
            (OPERATOR_SCHEME, "Token <operator key>"),
        ] {
            components.add_security_scheme(
                name,
                SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                    "Authorization",
                    what,
                ))),
            );
        }
    }
}

/// The shared failure answers (see the module docs).
struct ErrorResponses;

/// (status, component name, description) of every shared failure answer.
const SHARED: [(&str, &str, &str); 12] = [
    (
        "400",
        "BadRequest",
        "The request could not be read or was refused: `parse_error`, `validation_error` and the operation's own codes.",
    ),
    (
        "401",
        "Unauthorized",
        "No credential (`not_authenticated`) or a wrong, expired or revoked one (`authentication_failed`).",
    ),
    (
        "403",
        "Forbidden",
        "A supplier token on the admin API (`permission_denied`).",
    ),
    (
        "404",
        "NotFound",
        "Nothing of that name (or nothing the caller may see): `not_found` and the operation's own codes.",
    ),
    (
        "405",
        "MethodNotAllowed",
        "The path does not have this method (`method_not_allowed`); `Allow` lists those it has.",
    ),
    (
        "408",
        "RequestTimeout",
        "The body stopped arriving: nothing of it came for the server's client timeout (`request_timeout`); the connection is closed. Send the request again.",
    ),
    (
        "413",
        "PayloadTooLarge",
        "The body is larger than the configured limit (`payload_too_large`).",
    ),
    (
        "415",
        "UnsupportedMediaType",
        "The body is not sent as `Content-Type: application/json`, or is sent compressed (a `Content-Encoding` other than `identity`) (`unsupported_media_type`).",
    ),
    (
        "429",
        "Throttled",
        "The API key sent more requests than its rate allows (`throttled`); retry after `Retry-After` seconds.",
    ),
    (
        "500",
        "ServerError",
        "The service failed (`server_error`); retry the request as it is.",
    ),
    (
        "503",
        "PluginBusy",
        "The supplier's plugin has more calls waiting than it can take (`plugin_busy`); retry after `Retry-After` seconds. Or the storage is away (`storage_unavailable`): on sled a write failed and writes are refused until an operator repairs the storage; on PostgreSQL the database could not be reached, and the request may be sent again after `Retry-After` seconds.",
    ),
    (
        "507",
        "InsufficientStorage",
        "Writes are refused because the server's storage is short of space (`insufficient_storage`): retrying as it is does not help until an operator frees space; reads still work.",
    ),
];

fn shared_response(status: &str, description: &str) -> Response {
    let body = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("ErrorBody")))
        .build();
    let mut response = ResponseBuilder::new()
        .description(description)
        .content("application/json", body);
    let integer = || schema::ObjectBuilder::new().schema_type(schema::Type::Integer);
    let string = || schema::ObjectBuilder::new().schema_type(schema::Type::String);
    match status {
        "401" => {
            response = response.header(
                "WWW-Authenticate",
                HeaderBuilder::new()
                    .schema(string())
                    .description(Some("`Token`"))
                    .build(),
            );
        }
        "405" => {
            response = response.header(
                "Allow",
                HeaderBuilder::new()
                    .schema(string())
                    .description(Some("The methods the path has."))
                    .build(),
            );
        }
        "429" | "503" => {
            response = response.header(
                "Retry-After",
                HeaderBuilder::new()
                    .schema(integer())
                    .description(Some("Seconds to wait."))
                    .build(),
            );
        }
        _ => {}
    }
    response.build()
}

/// The security schemes an operation accepts.
fn schemes(operation: &Operation) -> Vec<String> {
    let requirements = serde_json::to_value(&operation.security).unwrap_or_default();
    requirements
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_object)
        .flat_map(|requirement| requirement.keys().cloned())
        .collect()
}

/// The shared failures `operation` can answer.
fn failures(operation: &Operation) -> Vec<&'static str> {
    use utoipa::openapi::path::ParameterIn;
    let schemes = schemes(operation);
    let parameters = operation.parameters.as_deref().unwrap_or_default();
    let json_body = operation
        .request_body
        .as_ref()
        .is_some_and(|body| body.content.contains_key("application/json"));
    let any_body = operation.request_body.is_some();
    let mut statuses = Vec::new();
    if json_body
        || parameters
            .iter()
            .any(|p| matches!(p.parameter_in, ParameterIn::Query))
    {
        statuses.push("400");
    }
    if !schemes.is_empty() {
        statuses.push("401");
    }
    if schemes.iter().any(|scheme| scheme == OPERATOR_SCHEME) {
        statuses.push("403");
    }
    if parameters
        .iter()
        .any(|p| matches!(p.parameter_in, ParameterIn::Path))
    {
        statuses.push("404");
    }
    if any_body {
        statuses.push("408");
        statuses.push("413");
    }
    if json_body {
        statuses.push("415");
    }
    if schemes.iter().any(|scheme| scheme == SUPPLIER_SCHEME) {
        statuses.push("429");
    }
    if !schemes.is_empty() {
        statuses.push("500");
    }
    if json_body && schemes.iter().any(|scheme| scheme == SUPPLIER_SCHEME) {
        statuses.push("503");
    }
    statuses
}

impl Modify for ErrorResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (status, name, description) in SHARED {
            components.responses.insert(
                name.to_owned(),
                RefOr::T(shared_response(status, description)),
            );
        }
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                (&mut item.get, false),
                (&mut item.put, true),
                (&mut item.post, true),
                (&mut item.delete, true),
                (&mut item.patch, true),
            ];
            for (operation, writes) in operations {
                let Some(operation) = operation else {
                    continue;
                };
                let mut statuses = failures(operation);
                // Every authenticated write may meet a store that refuses writes.
                if writes && !schemes(operation).is_empty() {
                    statuses.push("507");
                }
                for status in statuses {
                    let Some((_, name, _)) = SHARED.iter().find(|(s, _, _)| *s == status) else {
                        continue;
                    };
                    operation
                        .responses
                        .responses
                        .entry(status.to_owned())
                        .or_insert_with(|| {
                            RefOr::Ref(Ref::new(format!("#/components/responses/{name}")))
                        });
                }
            }
        }
    }
}

/// The prefix of the request documents' definitions among the components (`real.Address`,
/// beside Ferry's own schemas); the roots keep their names (`EnergyAccount`, `AccountNote`,
/// ...).
const DEFINITION_PREFIX: &str = "real.";

/// The whole document: [`ApiDoc`] with the request documents' JSON Schema
/// ([`crate::domain::request_document::request_schemas`], what the use cases check) among its
/// components. OpenAPI 3.1 schemas are JSON Schema 2020-12, so the definitions go in as they
/// are, their `$ref`s pointed at the components.
pub fn document() -> serde_json::Value {
    let mut document = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
    let roots: Vec<&str> = RequestDocument::ALL.iter().map(|d| d.root()).collect();
    let component = |name: &str| {
        if roots.contains(&name) {
            name.to_owned()
        } else {
            format!("{DEFINITION_PREFIX}{name}")
        }
    };
    if let (Some(definitions), Some(schemas)) = (
        request_schemas()["$defs"].as_object(),
        document["components"]["schemas"].as_object_mut(),
    ) {
        for (name, definition) in definitions {
            let mut definition = definition.clone();
            point_refs_at_components(&mut definition, &component);
            // (A root replaces the reference its marker in `schemas` registered.)
            schemas.insert(component(name), definition);
        }
    }
    document
}

fn point_refs_at_components(value: &mut serde_json::Value, component: &dyn Fn(&str) -> String) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match (key.as_str(), item) {
                    ("$ref", serde_json::Value::String(reference)) => {
                        if let Some(name) = reference.strip_prefix("#/$defs/") {
                            *reference = format!("#/components/schemas/{}", component(name));
                        }
                    }
                    (_, item) => point_refs_at_components(item, component),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                point_refs_at_components(item, component);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_documents_bodies_are_the_schema_the_use_cases_check() {
        let document = document();
        for (path, root) in [
            (
                "/v1/data-import/account-import-process/create-or-update/",
                "EnergyAccount",
            ),
            ("/v1/data-import/notes/create/", "AccountNote"),
            (
                "/v1/data-import/historical-statements/create/",
                "HistoricalStatements",
            ),
            (
                "/v1/data-import/payment-instruction/create/",
                "LegacyPaymentInstruction",
            ),
        ] {
            let body = &document["paths"][path]["post"]["requestBody"];
            assert_eq!(
                body["content"]["application/json"]["schema"]["$ref"],
                format!("#/components/schemas/{root}"),
                "{path}"
            );
            let properties = |schema: &serde_json::Value| -> Vec<String> {
                schema["properties"]
                    .as_object()
                    .map(|map| map.keys().cloned().collect())
                    .unwrap_or_default()
            };
            assert_eq!(
                properties(&document["components"]["schemas"][root]),
                properties(&request_schemas()["$defs"][root]),
                "{root}"
            );
        }
        let body = &document["paths"]["/v1/data-import/validate-account/"]["post"]["requestBody"];
        assert_eq!(
            body["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/EnergyAccount"
        );
        let schemas = &document["components"]["schemas"];
        let account = &schemas["EnergyAccount"];
        assert_eq!(
            account["required"],
            serde_json::json!(["external_account_number", "import_supplier"])
        );
        assert_eq!(
            account["properties"]["billing_address"]["allOf"][0]["$ref"],
            "#/components/schemas/real.Address"
        );
        assert!(schemas["real.ElectricityMeterPoint"]["properties"]["mpid"].is_object());
        let text = document.to_string();
        assert!(!text.contains("#/$defs/"), "every reference resolved");
    }

    /// The properties of `schema` with whether each is required, through `$ref`s, `allOf`s
    /// (a flattened struct) and arrays.
    fn properties(
        document: &serde_json::Value,
        schema: &serde_json::Value,
    ) -> std::collections::BTreeMap<String, (serde_json::Value, bool)> {
        let mut found = std::collections::BTreeMap::new();
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference.trim_start_matches("#/components/schemas/");
            return properties(document, &document["components"]["schemas"][name]);
        }
        if schema.get("items").is_some() {
            return properties(document, &schema["items"]);
        }
        for part in schema["allOf"].as_array().into_iter().flatten() {
            found.extend(properties(document, part));
        }
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            let is_required = required.iter().any(|r| r == name);
            found.insert(name.clone(), (property.clone(), is_required));
        }
        found
    }

    #[test]
    fn answers_naming_the_account_give_the_real_name_beside_the_specs() {
        let document = document();
        let answer = |path: &str, method: &str, status: &str| {
            let response = &document["paths"][path][method]["responses"][status];
            properties(
                &document,
                &response["content"]["application/json"]["schema"],
            )
        };
        let nullable = |property: &serde_json::Value| property.to_string().contains("null");
        for (path, method, status, names, null_while_pending) in [
            (
                "/v1/data-import/account-transfer-status/{supplier}/{external}/",
                "get",
                "200",
                &[
                    "platform_account_number",
                    "kraken_account_number",
                    "account_number",
                ][..],
                false,
            ),
            (
                "/v1/data-import/account-import-process/process/",
                "post",
                "201",
                &[
                    "platform_account_number",
                    "kraken_account_number",
                    "account_number",
                ],
                false,
            ),
            (
                "/v1/data-import/payment-instruction/create/",
                "post",
                "201",
                &[
                    "platform_account_number",
                    "kraken_account_number",
                    "account_number",
                ],
                false,
            ),
            (
                "/v1/data-import/all-account-import-processes/{supplier}/",
                "get",
                "200",
                &["platform_account_number", "kraken_account_number"],
                true,
            ),
            (
                "/v1/data-import/pending-account-import-processes/{supplier}/",
                "get",
                "200",
                &["platform_account_number", "kraken_account_number"],
                true,
            ),
            (
                "/v1/data-import/imported-account-import-processes/{supplier}/",
                "get",
                "200",
                &["platform_account_number", "kraken_account_number"],
                true,
            ),
            (
                "/v2/data-import/accounts/{supplier}/{external}/",
                "get",
                "200",
                &["platform_identifier", "kraken_identifier"],
                true,
            ),
        ] {
            let properties = answer(path, method, status);
            for name in names {
                let Some((property, required)) = properties.get(*name) else {
                    panic!("{path}: no {name} in {properties:?}");
                };
                assert!(required, "{path}: {name} is not required");
                assert_eq!(nullable(property), null_while_pending, "{path}: {name}");
            }
        }
        let errors = properties(
            &document,
            &serde_json::json!({"$ref": "#/components/schemas/ErrorBody"}),
        );
        for name in [
            "platform_account_number",
            "kraken_account_number",
            "account_number",
        ] {
            assert!(
                matches!(errors.get(name), Some((_, false))),
                "ErrorBody: {name}"
            );
        }
    }

    #[test]
    fn the_campaign_report_and_its_rows_are_documented_as_json_and_csv() {
        let document = document();
        let report = &document["paths"]["/admin/v1/suppliers/{code}/report"]["get"];
        assert_eq!(
            report["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/CampaignReport"
        );
        let rows = &document["paths"]["/admin/v1/suppliers/{code}/report/accounts"]["get"];
        let content = &rows["responses"]["200"]["content"];
        assert_eq!(
            content["application/json"]["schema"]["$ref"],
            "#/components/schemas/AccountReportPage"
        );
        assert_eq!(content["text/csv"]["schema"]["type"], "string");
        let parameters = rows["parameters"].as_array().expect("parameters");
        let named = |name: &str| {
            parameters
                .iter()
                .find(|p| p["name"] == name)
                .unwrap_or_else(|| panic!("no parameter {name}"))
        };
        assert_eq!(
            named("format")["schema"]["enum"],
            serde_json::json!(["json", "csv"])
        );
        assert_eq!(
            named("reconciliation")["schema"]["enum"],
            serde_json::json!(["RECONCILED", "MISMATCH", "NOT_DECLARED"])
        );
        for name in ["state", "error_code", "limit", "after"] {
            assert_eq!(named(name)["in"], "query", "{name}");
            assert_eq!(named(name)["required"], false, "{name}");
        }
        for status in ["400", "401", "404"] {
            assert!(rows["responses"].get(status).is_some(), "rows: no {status}");
        }
    }

    #[test]
    fn every_operation_documents_its_failures_in_the_error_format() {
        let document = serde_json::to_value(ApiDoc::openapi()).expect("json");
        let paths = document["paths"].as_object().expect("paths");
        let notes = &paths["/v1/data-import/notes/create/"]["post"]["responses"];
        for status in ["400", "401", "404", "408", "413", "415", "429", "500"] {
            assert!(notes.get(status).is_some(), "notes: no {status}");
        }
        let admin = &paths["/admin/v1/suppliers"]["get"]["responses"];
        for status in ["401", "403", "500"] {
            assert!(admin.get(status).is_some(), "suppliers: no {status}");
        }
        assert!(admin.get("429").is_none() && admin.get("415").is_none());
        let events = &paths["/admin/v1/events"]["get"]["parameters"];
        assert!(
            events
                .as_array()
                .expect("parameters")
                .iter()
                .all(|p| p["in"] == "query" && p["required"] == false),
            "{events}"
        );
        let throttled = &document["components"]["responses"]["Throttled"];
        assert!(throttled["headers"].get("Retry-After").is_some());
        assert_eq!(
            throttled["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorBody"
        );
    }
}
