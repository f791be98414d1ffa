//! Test fixture: `validate-account` prints a line to stdout, then 1 MiB to stderr (far past
//! the 64 KiB Ferry keeps of a call's output), and accepts the account. The request must
//! succeed, with the start of the output kept. The line counts the calls its instance has
//! seen: with a fresh instance per call, always 1.

wit_bindgen::generate!({ path: "../../../wit/since_v0.1.0", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};
use std::sync::atomic::{AtomicU32, Ordering};

/// Calls made in this instance.
static CALLS: AtomicU32 = AtomicU32::new(0);

struct Plugin;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account: Account) -> Result<Account, Vec<FieldError>> {
        let call = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
        println!(
            "chatty: call {call} of this instance, checking {}",
            account.external_account_number
        );
        let line = "x".repeat(1023);
        for _ in 0..1024 {
            eprintln!("{line}");
        }
        Ok(account)
    }
}

export!(Plugin);
