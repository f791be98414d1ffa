//! Test fixture: `validate-account` never returns. Ferry must stop it at its deadline.

wit_bindgen::generate!({ path: "../../../wit/since_v0.1.0", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};

struct Plugin;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account: Account) -> Result<Account, Vec<FieldError>> {
        let mut spins: u64 = 0;
        loop {
            spins = std::hint::black_box(spins.wrapping_add(1));
            if spins == u64::MAX {
                return Ok(account);
            }
        }
    }
}

export!(Plugin);
