//! The OpenAPI document of the whole HTTP API, generated from the handlers (`utoipa`).

use super::error::ErrorBody;
use super::{admin, imports, notes, payment_instructions, staging, statements, transactions};
use crate::domain::validation::FieldError;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Ferry data-import API",
        version = "1",
        description = "Stage and migrate accounts from a retiring supplier, and read their import state. \
            Obtain a token with the GraphQL mutation `obtainPlatformToken` at `POST /v1/graphql/`, then send \
            `Authorization: Token <token>`. The admin API takes the operator key the same way."
    ),
    paths(
        staging::validate_account,
        staging::create_or_update,
        staging::process,
        imports::account_transfer_status,
        imports::all_processes,
        imports::pending_processes,
        imports::imported_processes,
        notes::create_notes,
        transactions::create_transactions,
        statements::create_statements,
        payment_instructions::create_payment_instruction,
        admin::accounts::get_account,
        admin::imports::list_imports,
        admin::migrations::start_migration,
        admin::migrations::list_migrations,
        admin::migrations::get_migration,
        admin::plugins::install_plugin,
        admin::plugins::get_plugin,
        admin::plugins::remove_plugin,
        admin::plugins::set_plugin_config,
        admin::events::list_events,
        admin::events::publish_event,
        admin::suppliers::create_supplier,
        admin::suppliers::list_suppliers,
        admin::suppliers::get_supplier,
        admin::suppliers::update_supplier,
        admin::api_keys::create_api_key,
        admin::api_keys::revoke_api_key,
    ),
    components(schemas(ErrorBody, FieldError)),
    modifiers(&Security),
    tags(
        (name = "staging", description = "Validate, stage and migrate accounts"),
        (name = "imports", description = "Import state of accounts"),
        (name = "data", description = "Data added to imported accounts"),
        (name = "admin", description = "Operator API (operator key)"),
    )
)]
pub struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, what) in [
            ("token", "Token <platform token>"),
            ("operator", "Token <operator key>"),
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
