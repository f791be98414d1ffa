//! The request bodies as the OpenAPI document describes them.
//!
//! The readers of the domain parse and validate every request (reporting every error at once,
//! each with its path); these types only describe the bodies for the document and are never
//! built. They state no more than the readers enforce, so a body that breaks one of these
//! schemas is always refused (400), while one that follows them can still be refused by a rule
//! a schema cannot state (a supplier that does not exist, a phone number that is not one, a
//! blank string). The `#[serde]` attributes are read by `utoipa` only: optional fields are
//! marked `default` (absent, never null), and unknown fields are refused.

use crate::domain::account::Market;
use crate::domain::ledger::TransactionType;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};

/// An exact decimal: a JSON number or a string holding one (`12.30`, `"12.30"`, `1e3`); never
/// read through a float. Amounts of money have at most two decimal places.
#[derive(Debug)]
pub struct Decimal;

impl PartialSchema for Decimal {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([Type::Number, Type::String]))
            .description(Some(
                "An exact decimal: a JSON number or a string holding one; money has at most two decimal places.",
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

/// An account to validate or stage.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountRequest {
    /// Import supplier code.
    #[schema(min_length = 1, max_length = 64)]
    pub import_supplier: String,
    /// Account number in the supplier's own system: no leading or trailing spaces, no `/`.
    #[schema(min_length = 1, max_length = 128)]
    pub external_account_number: String,
    #[schema(min_length = 1, max_length = 255)]
    pub billing_name: String,
    pub billing_address: AddressRequest,
    /// At least one; at most one primary (the first, unless one is flagged).
    #[schema(min_items = 1)]
    pub customers: Vec<CustomerRequest>,
    #[serde(default)]
    pub supply_points: Vec<SupplyPointRequest>,
    /// First day of the open statement period; default: the day the account is created.
    #[serde(default)]
    #[schema(format = Date)]
    pub open_statement_period_start: String,
    /// Balance carried over from the old supplier; default 0.
    #[serde(default)]
    pub transfer_balance: Decimal,
}

#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddressRequest {
    #[schema(min_length = 1, max_length = 255)]
    pub address_line_1: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub address_line_2: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub address_line_3: String,
    #[schema(min_length = 1, max_length = 255)]
    pub town: String,
    #[schema(min_length = 1, max_length = 16)]
    pub postcode: String,
    /// ISO 3166-1 alpha-2 code.
    #[schema(pattern = "^[A-Z]{2}$", example = "GB")]
    pub country: String,
}

#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomerRequest {
    #[schema(min_length = 1, max_length = 255)]
    pub given_name: String,
    #[schema(min_length = 1, max_length = 255)]
    pub family_name: String,
    #[schema(format = Email, min_length = 1, max_length = 254)]
    pub email: String,
    /// A phone number: 7 to 15 digits, an optional `+`; spaces, `-`, `.` and brackets are ignored.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 32)]
    pub mobile: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 32)]
    pub landline: String,
    #[serde(default)]
    #[schema(format = Date)]
    pub date_of_birth: String,
    #[serde(default)]
    pub is_primary: bool,
}

#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SupplyPointRequest {
    pub market: Market,
    /// MPAN / MPRN or the market's own identifier; each listed once.
    #[schema(min_length = 1, max_length = 64)]
    pub identifier: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 64)]
    pub product_code: String,
    #[serde(default)]
    #[schema(format = Date)]
    pub supply_start_date: String,
}

/// Body of `process/`.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
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

/// Body of `notes/create/`.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NotesRequest {
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
    #[schema(min_items = 1)]
    pub notes: Vec<NoteRequest>,
}

/// A note: a body, document paths, or both.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteRequest {
    #[serde(default)]
    #[schema(min_length = 1, max_length = 10000)]
    pub body: String,
    #[serde(default)]
    pub document_paths: Vec<DocumentPathRequest>,
    /// Default: now. A note with the same body (and this `created_at`) is not added twice.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub created_at: String,
    #[serde(default)]
    pub is_pinned: bool,
    /// Not earlier than `created_at`, when both are given.
    #[serde(default)]
    #[schema(format = DateTime)]
    pub unpin_at: String,
    /// Identifies the note: one with an `external_id` the account already has is not added
    /// again (`NOTE_ALREADY_EXISTS`).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub external_id: String,
    /// Archives the note on the account's support page.
    #[serde(default)]
    pub is_archived: bool,
}

#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentPathRequest {
    /// Relative to the supplier's document root (a leading `/` is accepted); no `..`, `.`,
    /// empty segments or scheme. The document must exist.
    #[schema(min_length = 1, max_length = 1024)]
    pub document_path: String,
}

/// Body of `transactions/create/`.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
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
    #[schema(min_items = 1)]
    pub transactions: Vec<TransactionRequest>,
}

/// `reason` of a transaction.
#[derive(Debug, ToSchema)]
#[allow(clippy::enum_variant_names)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransactionReason {
    ImportedCharge,
    ImportedCredit,
    AccountChargePayment,
    FullCreditRefund,
    GeneralCredit,
}

/// `payment_type` of a payment or repayment.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PaymentType {
    DdRegularCollection,
    DirectCredit,
    DebitCard,
}

/// A transaction. Which of the optional fields are required, and which are allowed, depends
/// on `type`: `reason` for `CHARGE` and `CREDIT`; `reason`, `reference` and `payment_type` for
/// `PAYMENT` and `REPAYMENT`; `product_code` and `line_items` for `SUPPLY_CHARGE`.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
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
    #[schema(nullable = false)]
    pub reason: Option<TransactionReason>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 128)]
    pub reference: String,
    #[serde(default)]
    #[schema(nullable = false)]
    pub payment_type: Option<PaymentType>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 1000)]
    pub display_note: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 2000)]
    pub note: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 64)]
    pub product_code: String,
    #[serde(default)]
    #[schema(min_items = 1)]
    pub line_items: Vec<LineItemRequest>,
    #[serde(default)]
    pub tax_items: Vec<TaxItemRequest>,
}

#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LineItemRequest {
    #[schema(min_length = 1, max_length = 64)]
    pub rate_band: String,
    #[schema(format = Date)]
    pub start_date: String,
    /// Not earlier than `start_date`.
    #[schema(format = Date)]
    pub end_date: String,
    pub number_of_units: Decimal,
    pub net_amount: Decimal,
    pub price_per_unit: Decimal,
    #[serde(default)]
    #[schema(max_items = 10000)]
    pub units: Vec<Decimal>,
}

#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxItemRequest {
    pub amount: Decimal,
    #[schema(min_length = 1, max_length = 32)]
    pub tax_type: String,
    pub value_taxed: Decimal,
    pub rate: Decimal,
    #[schema(min_length = 1, max_length = 32)]
    pub unit_type: String,
}

/// Body of `historical-statements/create/`.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatementsRequest {
    #[schema(min_length = 1, max_length = 64)]
    pub import_supplier: String,
    #[schema(min_length = 1, max_length = 128)]
    pub external_account_number: String,
    #[schema(min_items = 1)]
    pub statements: Vec<StatementRequest>,
}

#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatementRequest {
    #[schema(format = Date)]
    pub bill_period_from_date: String,
    /// Not earlier than `bill_period_from_date`.
    #[schema(format = Date)]
    pub bill_period_to_date: String,
    /// An id the account already has refuses the request (`historical_statement_already_exists`).
    #[schema(min_length = 1, max_length = 128)]
    pub statement_id: String,
    #[serde(default)]
    #[schema(format = Date, nullable = true)]
    pub issued_date: Option<String>,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255)]
    pub number: String,
    /// In the currency's lowest denomination (pence): `12050` is £120.50.
    #[serde(default)]
    #[schema(nullable = true, minimum = -100000000000000_i64, maximum = 100000000000000_i64)]
    pub gross_amount: Option<i64>,
    /// Document path of the PDF (see `document_path`); it must exist.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 1024)]
    pub statement_path: String,
}

/// `type` of a payment instruction.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InstructionType {
    Card,
    DirectDebit,
}

/// Body of `payment-instruction/create/`.
#[derive(Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PaymentInstructionRequest {
    #[schema(min_length = 1, max_length = 64)]
    pub import_supplier: String,
    #[schema(min_length = 1, max_length = 128)]
    pub external_account_number: String,
    /// A configured payment vendor (any case).
    #[schema(min_length = 1, max_length = 64)]
    pub vendor: String,
    #[schema(min_length = 1, max_length = 255)]
    pub reference: String,
    #[serde(rename = "type")]
    pub kind: InstructionType,
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
