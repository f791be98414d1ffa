//! Test fixture: `validate-account` takes its time (about 20 ms of CPU) and accepts the
//! account unchanged. It makes a migration last long enough for a test to act while it runs.

wit_bindgen::generate!({ path: "../../../wit/since_v0.1.0", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};

struct Plugin;

/// Iterations of the spin: ~20 ms, well inside the default 100 ms deadline.
const SPINS: u64 = 20_000_000;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account: Account) -> Result<Account, Vec<FieldError>> {
        let mut spins: u64 = 0;
        while spins < SPINS {
            spins = std::hint::black_box(spins + 1);
        }
        Ok(account)
    }
}

export!(Plugin);
