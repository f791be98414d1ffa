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
    cargo_build_plugins(&[])
}

/// The example plugin (`plugins/example`) for `serve --demo`: built (or found up to date) when
/// the repository's sources are here; otherwise the component already built, if any. The error
/// says what to run when it cannot be had.
pub fn example_plugin() -> Result<PathBuf, String> {
    let component = components_dir().join("example_plugin.wasm");
    if workspace_root()
        .join("plugins/example/Cargo.toml")
        .is_file()
    {
        cargo_build_plugins(&["example-plugin"])?;
    }
    if component.is_file() {
        Ok(component)
    } else {
        Err(format!(
            "{} is not there; build it with `just plugins`",
            component.display()
        ))
    }
}

/// `cargo build --release --target wasm32-wasip2` of `packages` of `plugins/` (all when empty).
fn cargo_build_plugins(packages: &[&str]) -> Result<PathBuf, String> {
    let root = workspace_root();
    let mut command = Command::new(env!("CARGO"));
    command
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
        .env_remove("CARGO_TARGET_DIR");
    for package in packages {
        command.args(["--package", package]);
    }
    let output = command
        .output()
        .map_err(|error| format!("cannot run cargo: {error}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(if target_missing(&stderr) {
            "the wasm32-wasip2 target is not installed: run `rustup target add wasm32-wasip2` (or `just plugins`)".to_owned()
        } else {
            format!(
                "building plugins/ failed (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`):\n{stderr}"
            )
        });
    }
    Ok(components_dir())
}

/// Whether cargo failed for want of the wasm32-wasip2 standard library.
fn target_missing(stderr: &str) -> bool {
    stderr.contains("target may not be installed")
        || stderr.contains("can't find crate for `core`")
        || stderr.contains("can't find crate for `std`")
}

/// A small account (one customer, one meter point), as a supplier sends it to the real
/// platform.
pub fn sample_account() -> Value {
    json!({
        "import_supplier": "OLD_CO",
        "external_account_number": "OE-1001",
        "account_type": "DOMESTIC",
        "billing_name": "Ada Lovelace",
        "billing_address1": "1 Analytical Street",
        "billing_address4": "London",
        "billing_postcode": "N1 1AA",
        "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com",
                       "mobile": "07700 900123", "landline": "+44 20 7946 0000"}],
        "supply_addresses": [{
            "supply_address1": "1 Analytical Street", "supply_postcode": "N1 1AA",
            "customer_at_supply_address_from_date": "2024-01-01",
            "meter_points": [{"supply_type": "ELECTRICITY", "identifier": "1200023305967", "mpid": "TENT",
                              "supply_start_date": "2024-01-01",
                              "agreements": [{"tariff_code": "OLDVAR", "effective_from": "2024-01-01"}]}]
        }],
        "transfer_balance": "0.00"
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

#[cfg(test)]
mod tests {
    use super::target_missing;

    #[test]
    fn a_missing_target_is_told_apart_from_a_broken_plugin() {
        let missing = "error[E0463]: can't find crate for `core`\n  = note: the `wasm32-wasip2` target may not be installed";
        assert!(target_missing(missing));
        assert!(!target_missing("error[E0308]: mismatched types"));
    }
}
