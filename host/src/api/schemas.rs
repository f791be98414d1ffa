//! The request bodies as the OpenAPI document describes them.
//!
//! The bodies the real platform's document defines (the account, notes, transactions,
//! historical statements, payment instructions) are described by the very schema the domain
//! checks them against (see [`real_documents!`]). The others are described here by types that
//! are never built: they state no more than the domain's readers enforce, so a body that
//! breaks one of these schemas is always refused (400), while one that follows them can still
//! be refused by a rule a schema cannot state (a supplier that does not exist, a blank
//! string). The `#[serde]` attributes are read by `utoipa` only: optional fields are marked
//! `default` (absent, never null). Unknown fields are allowed, as on the real platform: they
//! are ignored and named in the answer's `Ferry-Ignored-Fields` header (a supplier set strict
//! refuses them).

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

/// A WebAssembly component's bytes.
#[derive(Debug)]
pub struct ComponentBytes;

impl PartialSchema for ComponentBytes {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl ToSchema for ComponentBytes {}

/// A request body the real platform's document defines, described by the JSON Schema the
/// domain validates against (`domain/request_schemas.json`, extracted from the real
/// platform's document): [`super::openapi::document`] puts its definitions into the
/// document's components under their own names, so the document states exactly what the
/// use cases check. Each marker only names its root.
macro_rules! real_documents {
    ($($(#[$doc:meta])* $marker:ident),* $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $marker;

        impl PartialSchema for $marker {
            fn schema() -> RefOr<Schema> {
                RefOr::Ref(utoipa::openapi::Ref::from_schema_name(Self::name()))
            }
        }

        impl ToSchema for $marker {
            fn name() -> std::borrow::Cow<'static, str> {
                stringify!($marker).into()
            }
        }
    )*};
}

real_documents!(
    /// The account (`validate-account/`, `create-or-update/`, the v2 accounts' `payload`).
    EnergyAccount,
    /// Body of `notes/create/`.
    AccountNote,
    /// Body of `historical-statements/create/`.
    HistoricalStatements,
    /// Body of `payment-instruction/create/`.
    LegacyPaymentInstruction,
    /// Body of `transactions/create/`.
    Transactions,
);

/// Body of `process/`.
#[derive(Debug, ToSchema)]
pub struct ProcessRequest {
    #[schema(min_length = 1, max_length = 64)]
    pub import_supplier_code: String,
    #[schema(min_length = 1, max_length = 128)]
    pub external_account_number: String,
    /// Try the migration and keep nothing (default false).
    #[serde(default)]
    pub dry_run: bool,
    /// An existing operations team to allocate the account to (`operations_team_name_does_not_exist`
    /// otherwise).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub operations_team_name: String,
}

/// Body of `POST /v2/data-import/accounts/validate/`: the account in `payload` (a bare account
/// is taken too, as the real document's own examples send it).
#[derive(Debug, ToSchema)]
pub struct ValidateAccountV2Request {
    pub payload: EnergyAccount,
}

/// When a scheduled creation may run.
#[derive(Debug, ToSchema)]
pub struct TaskParametersRequest {
    /// A dry run: the outcome is recorded (`DRY_RUN_SUCCEEDED` / `DRY_RUN_ERRORED`), nothing
    /// created (default false).
    #[serde(default)]
    pub is_dry_run: bool,
    /// Not in the past (default now).
    #[serde(default)]
    #[schema(format = DateTime, nullable = true)]
    pub schedule_window_start: Option<String>,
    /// At most four days ahead (the default), after the start.
    #[serde(default)]
    #[schema(format = DateTime, nullable = true)]
    pub schedule_window_end: Option<String>,
}

/// Body of `POST /v2/data-import/accounts/`.
#[derive(Debug, ToSchema)]
pub struct ScheduleAccountRequest {
    pub payload: EnergyAccount,
    #[serde(default)]
    pub task_params: Option<TaskParametersRequest>,
}

/// A GraphQL request.
#[derive(Debug, ToSchema)]
pub struct GraphQlRequest {
    #[serde(default)]
    #[schema(
        example = "mutation($input: ObtainJSONWebTokenInput!) { obtainPlatformToken(input: $input) { token refreshToken refreshExpiresIn } }"
    )]
    pub query: String,
    #[serde(default, rename = "operationName")]
    pub operation_name: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub variables: Option<serde_json::Value>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub extensions: Option<serde_json::Value>,
}

/// A GraphQL answer: `data`, and `errors` (each with `extensions.errorCode`) when something
/// was refused.
#[derive(Debug, ToSchema)]
pub struct GraphQlAnswer {
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub data: Option<serde_json::Value>,
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub errors: Vec<serde_json::Value>,
}

/// The 400 of `transactions/create/`: the first failing transaction (its own body), or a
/// request that could not be read (the error format).
#[derive(Debug, ToSchema)]
#[serde(untagged)]
pub enum TransactionsBadRequest {
    Transaction(super::error::TransactionImportErrorBody),
    Request(super::error::ErrorBody),
}
