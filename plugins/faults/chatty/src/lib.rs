//! Test fixture: `validate-account` prints a line to stdout, then 1 MiB to stderr (far past
//! the 64 KiB Ferry keeps of a call's output), and accepts the account. The request must
//! succeed, with the start of the output kept.

wit_bindgen::generate!({ path: "../../../wit/since_v0.1.0", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};

struct Plugin;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account: Account) -> Result<Account, Vec<FieldError>> {
        println!("chatty: checking {}", account.external_account_number);
        let line = "x".repeat(1023);
        for _ in 0..1024 {
            eprintln!("{line}");
        }
        Ok(account)
    }
}

export!(Plugin);
