//! Test fixture: `validate-account` tries to read a host file, the environment, the clock
//! and the network, and reports what it saw as field errors (code `observed`, one per attr
//! `file`, `env`, `clock`, `network`). Ferry grants none of them.

wit_bindgen::generate!({ path: "../../../wit/since_v0.1.0", world: "account-plugin" });

use ferry::supplier_rules::types::{Account, FieldError};
use std::time::{SystemTime, UNIX_EPOCH};

struct Plugin;

fn observed(attr: &str, detail: String) -> FieldError {
    FieldError {
        code: "observed".into(),
        detail,
        attr: attr.into(),
    }
}

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(_account: Account) -> Result<Account, Vec<FieldError>> {
        let file = match std::fs::read_to_string("/etc/passwd") {
            Ok(text) => format!("read {} bytes", text.len()),
            Err(error) => format!("error: {error}"),
        };
        let env = format!("{} variables", std::env::vars().count());
        let clock = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(since) => format!("{} seconds since the epoch", since.as_secs()),
            Err(_) => "before the epoch".to_owned(),
        };
        let network = match std::net::TcpStream::connect("127.0.0.1:80") {
            Ok(_) => "connected".to_owned(),
            Err(error) => format!("error: {error}"),
        };
        Err(vec![
            observed("file", file),
            observed("env", env),
            observed("clock", clock),
            observed("network", network),
        ])
    }
}

export!(Plugin);
