//! Test fixture: `validate-account` allocates until memory runs out. Ferry must stop it at
//! its memory cap.

wit_bindgen::generate!({ path: "../../../wit", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};

struct Plugin;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account: Account) -> Result<Account, Vec<FieldError>> {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(std::hint::black_box(vec![7u8; 1 << 20]));
            if hoard.len() == usize::MAX {
                return Ok(account);
            }
        }
    }
}

export!(Plugin);
