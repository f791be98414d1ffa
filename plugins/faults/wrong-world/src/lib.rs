//! Test fixture: a component built against a different world (same interface name, other
//! signature). Ferry must refuse to install it.

wit_bindgen::generate!({ path: "wit", world: "wrong" });

struct Plugin;

impl exports::ferry::supplier_rules::account_rules::Guest for Plugin {
    fn validate_account(account_number: String) -> bool {
        !account_number.is_empty()
    }
}

export!(Plugin);
