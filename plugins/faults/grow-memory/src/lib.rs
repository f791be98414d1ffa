//! Test fixture: `validate-account` allocates until memory runs out. Ferry must stop it at
//! its memory cap. It reserves large blocks without writing to them, so it reaches the cap in
//! well under a millisecond whatever the machine's load (the deadline must not fire first).

wit_bindgen::generate!({ path: "../../../wit/since_v0.1.0", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};

struct Plugin;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account: Account) -> Result<Account, Vec<FieldError>> {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(std::hint::black_box(Vec::with_capacity(8 << 20)));
            if hoard.len() == usize::MAX {
                return Ok(account);
            }
        }
    }
}

export!(Plugin);
