//! The platform account's number as the supplier API answers it: under the spec's name,
//! `platform_account_number`, and beside it, with the same value, the real platform's
//! `kraken_account_number`, so that an integration written against either reads it. Each
//! answer carries the names its real counterpart carries: the transfer status, `process/` and
//! `payment-instruction/create/` also the real platform's older `account_number`.

use serde::Serialize;

/// The account's number in the transfer status, `process/` and `payment-instruction/create/`:
/// always a string, empty in the status while no account has been created.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AccountNumbers {
    /// The platform account number (empty while no account has been created).
    pub platform_account_number: String,
    /// The same number under the real platform's name.
    pub kraken_account_number: String,
    /// The same number under the real platform's older name.
    pub account_number: String,
}

impl AccountNumbers {
    /// `number` under every name; an empty string when there is none yet.
    pub fn new(number: Option<String>) -> Self {
        let number = number.unwrap_or_default();
        Self {
            kraken_account_number: number.clone(),
            account_number: number.clone(),
            platform_account_number: number,
        }
    }
}

/// The account's number in the lists: null while the account import is pending.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ListedAccountNumbers {
    /// The platform account number; null while pending.
    #[schema(required = true)]
    pub platform_account_number: Option<String>,
    /// The same number under the real platform's name; null while pending.
    #[schema(required = true)]
    pub kraken_account_number: Option<String>,
}

impl ListedAccountNumbers {
    pub fn new(number: Option<String>) -> Self {
        Self {
            kraken_account_number: number.clone(),
            platform_account_number: number,
        }
    }
}
