//! The request bodies as the OpenAPI document describes them.
//!
//! The bodies the real platform's document defines (the account, notes, historical
//! statements, payment instructions) are described by the very schema the domain checks them
//! against (see [`real_documents!`]). The others are described here by types that are never
//! built: they state no more than the domain's readers enforce, so a body that breaks one of
//! these schemas is always refused (400), while one that follows them can still be refused by
//! a rule a schema cannot state (a supplier that does not exist, a blank string). The
//! `#[serde]` attributes are read by `utoipa` only: optional fields are marked `default`
//! (absent, never null). Unknown fields are allowed, as on the real platform: they are
//! ignored and named in the answer's `Ferry-Ignored-Fields` header (a supplier set strict
//! refuses them). The enumerations of transactions are the real platform's, from the same
//! list the readers check (`domain/reference_enums.json`).

use crate::domain::ledger::TransactionType;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};

/// An exact decimal: a JSON number or a string holding one (`12.30`, `"12.30"`, `1e3`); never
/// read through a float. Amounts have at most ten decimal places (the real platform's pattern).
#[derive(Debug)]
pub struct Decimal;

impl PartialSchema for Decimal {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([Type::Number, Type::String]))
            .description(Some(
                "An exact decimal: a JSON number or a string holding one; amounts have at most ten decimal places.",
            ))
            .examples([serde_json::json!("12.30")])
            .into()
    }
}

impl ToSchema for Decimal {}

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

/// Body of `transactions/create/`.
#[derive(Debug, ToSchema)]
pub struct TransactionsRequest {
    #[schema(min_length = 1, max_length = 64)]
    pub import_supplier: String,
    /// Required unless the deprecated `account_number` is given.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 128)]
    pub external_account_number: String,
    /// Deprecated: the real platform's old name of `external_account_number`.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 128, deprecated)]
    pub account_number: String,
    /// Go through everything and keep nothing: the answer is the real one (default false).
    #[serde(default)]
    pub dry_run: bool,
    #[schema(min_items = 1)]
    pub transactions: Vec<TransactionRequest>,
}

/// A string among `values`, sorted and without repeats.
fn one_of(values: impl IntoIterator<Item = String>, description: &str) -> RefOr<Schema> {
    let values: std::collections::BTreeSet<String> = values.into_iter().collect();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values))
        .description(Some(description))
        .into()
}

/// `reason`: the real platform's reasons of every type (which of them a type takes is in the
/// description of `TransactionRequest`).
fn transaction_reason() -> RefOr<Schema> {
    let enums = crate::domain::reference::enums();
    one_of(
        enums.transaction_reasons.values().flatten().cloned(),
        "CHARGE, CREDIT: required, from the type's own list; PAYMENT, REPAYMENT: optional;          SUPPLY_CHARGE: none (the real platform's lists).",
    )
}

/// `payment_type`: the real platform's payment types of `PAYMENT` and `REPAYMENT`.
fn payment_type() -> RefOr<Schema> {
    let enums = crate::domain::reference::enums();
    one_of(
        enums.payment_types.values().flatten().cloned(),
        "PAYMENT and REPAYMENT only, optional, from the type's own list (the real platform's).",
    )
}

fn tax_unit_type() -> RefOr<Schema> {
    one_of(
        crate::domain::reference::enums().tax_unit_types.clone(),
        "The unit of the tax rate.",
    )
}

/// A transaction, as the real platform's `oneOf` on `type` defines it: every type takes
/// `note`, `display_note` (deprecated on `PAYMENT` and `REPAYMENT`), `billing_document_identifier`
/// and `to_prepay_meter_serial_number`; `CHARGE` and `CREDIT` require `reason`; `PAYMENT` and
/// `REPAYMENT` take `reason`, `reference` and `payment_type`; `SUPPLY_CHARGE` requires
/// `product_code` and `line_items` and takes `supply_point_identifier`; `CHARGE` and
/// `SUPPLY_CHARGE` take `tax_items`. A field another type has is ignored (and named).
#[derive(Debug, ToSchema)]
pub struct TransactionRequest {
    #[schema(min_length = 1, max_length = 128)]
    pub transaction_id: String,
    /// Not in the future.
    #[schema(format = Date)]
    pub transaction_date: String,
    pub amount: Decimal,
    #[serde(rename = "type")]
    pub kind: TransactionType,
    #[serde(default)]
    #[schema(schema_with = transaction_reason)]
    pub reason: String,
    #[serde(default)]
    #[schema(max_length = 512)]
    pub reference: String,
    #[serde(default)]
    #[schema(schema_with = payment_type)]
    pub payment_type: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 2000)]
    pub display_note: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 2000)]
    pub note: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub billing_document_identifier: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub to_prepay_meter_serial_number: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub product_code: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub supply_point_identifier: String,
    #[serde(default)]
    pub line_items: Vec<LineItemRequest>,
    #[serde(default)]
    pub tax_items: Vec<TaxItemRequest>,
}

#[derive(Debug, ToSchema)]
pub struct LineItemRequest {
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub rate_band: String,
    #[schema(format = Date)]
    pub start_date: String,
    /// Not earlier than `start_date`.
    #[schema(format = Date)]
    pub end_date: String,
    /// At most four decimal places.
    pub number_of_units: Decimal,
    pub net_amount: Decimal,
    /// At most seven decimal places.
    #[serde(default)]
    pub price_per_unit: Option<Decimal>,
    /// At most four decimal places each.
    #[serde(default)]
    #[schema(max_items = 10000)]
    pub units: Vec<Decimal>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub external_rate_identifier: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub rate_specification_code: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub time_series_specification_code: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub params: Option<serde_json::Value>,
}

#[derive(Debug, ToSchema)]
pub struct TaxItemRequest {
    pub amount: Decimal,
    #[schema(min_length = 1, max_length = 64)]
    pub tax_type: String,
    /// At most five decimal places.
    pub value_taxed: Decimal,
    /// At most five decimal places.
    pub rate: Decimal,
    #[schema(schema_with = tax_unit_type)]
    pub unit_type: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub params: Option<serde_json::Value>,
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
