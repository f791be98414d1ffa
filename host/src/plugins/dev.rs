//! For tests, benchmarks and `--demo`: building the plugins of this repository (`plugins/`)
//! for wasm32-wasip2 with the cargo that builds Ferry, and the small account and supplier
//! settings the plugin benchmarks call the example plugin with.

use super::PluginConfig;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (the workspace of `ferry-host`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default()
}

/// Where the built components are: `<root>/target/plugins/wasm32-wasip2/release`.
pub fn components_dir() -> PathBuf {
    workspace_root().join("target/plugins/wasm32-wasip2/release")
}

/// Builds every plugin in `plugins/` (cargo skips what is up to date); returns
/// [`components_dir`].
pub fn build_plugins() -> Result<PathBuf, String> {
    let root = workspace_root();
    let output = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(root.join("plugins/Cargo.toml"))
        .arg("--target-dir")
        .arg(root.join("target/plugins"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .map_err(|error| format!("cannot run cargo: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "building plugins/ failed (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`):\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(components_dir())
}

/// A small account (one customer, one supply point), as a supplier sends it.
pub fn sample_account() -> Value {
    json!({
        "import_supplier": "OLD_CO",
        "external_account_number": "OE-1001",
        "billing_name": "Ada Lovelace",
        "billing_address": {"address_line_1": "1 Analytical Street", "town": "London", "postcode": "N1 1AA", "country": "GB"},
        "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com",
                       "mobile": "07700 900123", "landline": "+44 20 7946 0000", "is_primary": true}],
        "supply_points": [{"market": "ELECTRICITY", "identifier": "1200023305967", "product_code": "OLDVAR"}],
        "transfer_balance": "12.30"
    })
}

/// Settings for the example plugin that make every one of its account rules do something.
pub fn sample_config() -> PluginConfig {
    PluginConfig::from([
        ("default_country_code".into(), "44".into()),
        ("account_number_prefix".into(), "OE-".into()),
        ("product_code.OLDVAR".into(), "VAR-22".into()),
    ])
}
