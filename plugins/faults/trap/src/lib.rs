//! Test fixture: `validate-account` panics (a trap). Ferry must fail only that request.

wit_bindgen::generate!({ path: "../../../wit/since_v0.1.0", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};

struct Plugin;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account: Account) -> Result<Account, Vec<FieldError>> {
        if std::hint::black_box(!account.customers.is_empty()) {
            panic!("this plugin gives up");
        }
        Ok(account)
    }
}

export!(Plugin);
