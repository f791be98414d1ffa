//! The errors of the domain: every way a request can be refused, with its stable code.
//!
//! The HTTP edge maps each variant to a status; nothing here knows about HTTP.

use super::validation::FieldErrors;
use crate::domain::storage::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    /// The payload failed validation; `code` is the top-level code of the error body.
    #[error("{detail}")]
    Invalid {
        code: &'static str,
        detail: &'static str,
        errors: FieldErrors,
    },
    /// The import supplier does not exist or is not visible to the caller.
    #[error("import supplier not found")]
    SupplierNotFound,
    #[error("import supplier {0} already exists")]
    SupplierExists(String),
    #[error("the import supplier's migration is not ongoing")]
    MigrationNotOngoing,
    #[error("no import process exists for this account")]
    ImportProcessNotFound,
    #[error("the account was not found")]
    AccountNotFound,
    /// The imported account has no meter points (the real platform's 404).
    #[error("No meter points found for {0}.")]
    NoMeterPoints(String),
    #[error("the account has no such meter point")]
    MeterPointNotFound,
    /// The account was migrated already; the answer names its platform account.
    #[error(
        "The account import process with the account number {external_account_number} has already been imported."
    )]
    AlreadyImported {
        external_account_number: String,
        platform_account_number: String,
    },
    /// A dry run found nothing wrong; nothing was kept. The real platform answers this as a
    /// refusal, with this detail.
    #[error("Account would successfully import. Rolled back due to Dry Run.")]
    DryRunWouldSucceed,
    /// More accounts are being migrated at once than the configured limit allows: retry
    /// once others have finished.
    #[error(
        "Too many accounts are being processed at once ({0} at most); retry once others have finished."
    )]
    ProcessConcurrencyLimit(usize),
    #[error("a migration of this account is in progress")]
    ImportInProgress,
    #[error("the staged account expired and was cancelled; stage it again")]
    ImportCancelled,
    /// A scheduled migration's window ended before it could run.
    #[error("The migration's schedule window ended before it could run; schedule it again.")]
    ScheduleWindowPassed,
    #[error("a bulk migration of this supplier is already running")]
    MigrationAlreadyRunning,
    #[error("no such bulk migration")]
    MigrationNotFound,
    #[error("the API key was not found")]
    ApiKeyNotFound,
    #[error("an operations team named {0:?} already exists")]
    TeamExists(String),
    #[error("no operations team has this name")]
    TeamNotFound,
    /// A transaction of a batch failed; nothing of the batch was added.
    #[error("{}", .0.detail)]
    TransactionImport(Box<TransactionFailure>),
    /// The payment vendor answered that the instruction cannot be used: do not retry as is.
    #[error("{detail}")]
    VendorRejected { code: &'static str, detail: String },
    /// The payment vendor could not be reached in time: retry as is.
    #[error("The payment vendor could not be reached: {0}")]
    VendorUnavailable(String),
    /// A supplier's plugin broke on this request (trap, deadline, memory cap).
    #[error("{0}")]
    PluginFailed(String),
    /// A supplier's plugin was too busy with other requests to run this one: retry later.
    #[error("{0}")]
    PluginBusy(String),
    #[error("the supplier has no plugin")]
    PluginNotFound,
    /// The component was refused at installation.
    #[error("{0}")]
    PluginRejected(String),
    #[error("The document store could not be reached: {0}")]
    DocumentStore(String),
    /// An event that does not match the catalogue (operators: 400; Ferry's own: a bug).
    #[error("{0}")]
    InvalidEvent(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The first failing transaction of a batch, for the transactions endpoint's own 400 body.
#[derive(Debug, Clone)]
pub struct TransactionFailure {
    pub code: String,
    pub detail: String,
    pub errors: FieldErrors,
    /// The transaction as it was posted.
    pub transaction_data: serde_json::Value,
}

impl DomainError {
    /// A validation failure of a general payload (`validation_error`).
    pub fn invalid(errors: FieldErrors) -> Self {
        Self::Invalid {
            code: "validation_error",
            detail: "Invalid input.",
            errors,
        }
    }

    /// A validation failure of an account payload (`account_failed_validation`).
    pub fn account_invalid(errors: FieldErrors) -> Self {
        Self::Invalid {
            code: "account_failed_validation",
            detail: "The account failed validation.",
            errors,
        }
    }

    /// This error of a part of a request, as an error of the request: the field errors' paths
    /// start with `path` (the part's place in the request; empty: the request itself).
    pub fn under(self, path: &str) -> Self {
        match self {
            Self::Invalid {
                code,
                detail,
                errors,
            } => Self::Invalid {
                code,
                detail,
                errors: errors.under(path),
            },
            other => other,
        }
    }

    /// Whether the storage is away for now ([`StoreError::is_unavailable`]): the same work
    /// may succeed once it is back.
    pub fn is_store_unavailable(&self) -> bool {
        matches!(self, Self::Store(error) if error.is_unavailable())
    }

    /// Whether the storage cannot take work for now ([`StoreError::is_for_now`]): away, or
    /// refusing writes. Work that runs by itself waits and tries the same again.
    pub fn is_store_for_now(&self) -> bool {
        matches!(self, Self::Store(error) if error.is_for_now())
    }

    /// The stable machine-readable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invalid { code, .. } => code,
            Self::SupplierNotFound => "import_supplier_not_found",
            Self::SupplierExists(_) => "import_supplier_already_exists",
            Self::MigrationNotOngoing => "import_supplier_migration_not_ongoing",
            Self::ImportProcessNotFound => "import_process_does_not_exist",
            Self::AccountNotFound => "account_not_found",
            Self::NoMeterPoints(_) => "meter_points_not_found",
            Self::MeterPointNotFound => "not_found",
            Self::AlreadyImported { .. } => "account_import_process_already_imported",
            // The real platform's code for this answer, as its document shows it.
            Self::DryRunWouldSucceed => "400",
            Self::ProcessConcurrencyLimit(_) => "process_concurrency_limit_reached",
            Self::ImportInProgress => "account_import_process_in_progress",
            Self::ImportCancelled => "account_import_process_cancelled",
            Self::ScheduleWindowPassed => "schedule_window_passed",
            Self::ApiKeyNotFound | Self::MigrationNotFound | Self::TeamNotFound => "not_found",
            Self::TeamExists(_) => "operations_team_already_exists",
            Self::MigrationAlreadyRunning => "migration_already_running",
            Self::TransactionImport(_) => "transaction_import_error",
            Self::VendorRejected { code, .. } => code,
            Self::VendorUnavailable(_) => "payment_vendor_unavailable",
            Self::DocumentStore(_) => "document_store_unavailable",
            Self::PluginFailed(_) => "plugin_failed",
            Self::PluginBusy(_) => "plugin_busy",
            Self::PluginNotFound => "plugin_not_found",
            Self::PluginRejected(_) => "plugin_rejected",
            Self::InvalidEvent(_) => "invalid_event",
            Self::Store(StoreError::Unwritable(reason)) if reason.is_want_of_space() => {
                "insufficient_storage"
            }
            Self::Store(error) if error.is_unavailable() => "storage_unavailable",
            Self::Store(_) => "server_error",
        }
    }
}
