//! One plugin hook call on a fresh instance, against the same rules written natively.
//!
//! The example plugin's `validate-account` (E.164 phone numbers, an account-number pattern,
//! product-code mapping) runs on a small account through the real runtime (new store, WASI
//! context, instantiation, call, conversions). The native side applies the same rules in Rust
//! to the same JSON. Run with `just bench`; the ratio of the medians is printed at the end.

use criterion::BatchSize;
use criterion::Criterion;
use ferry_host::domain::ports::Hook;
use ferry_host::plugins::runtime::block_on;
use ferry_host::plugins::{PluginLimits, Runtime, dev};
use serde_json::Value;
use std::hint::black_box;

/// The example plugin's rules, natively.
fn native_rules(mut account: Value, config: &[(String, String)]) -> Result<Value, Vec<String>> {
    let setting = |key: &str| {
        config
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let mut errors = Vec::new();
    if let Some(prefix) = setting("account_number_prefix") {
        let number = account["external_account_number"]
            .as_str()
            .unwrap_or_default();
        let rest = number.strip_prefix(prefix);
        if !rest.is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit())) {
            errors.push("invalid_account_number".to_owned());
        }
    }
    let country = setting("default_country_code").unwrap_or("44").to_owned();
    if let Some(customers) = account["customers"].as_array_mut() {
        for customer in customers {
            for field in ["mobile", "landline"] {
                let Some(number) = customer[field].as_str() else {
                    continue;
                };
                let digits: String = number.chars().filter(char::is_ascii_digit).collect();
                let e164 = if number.trim_start().starts_with('+') {
                    Some(format!("+{digits}"))
                } else {
                    digits
                        .strip_prefix('0')
                        .map(|national| format!("+{country}{national}"))
                };
                match e164.filter(|e| (9..=16).contains(&e.len())) {
                    Some(e164) => customer[field] = Value::String(e164),
                    None => errors.push("invalid_phone_number".to_owned()),
                }
            }
        }
    }
    if let Some(addresses) = account["supply_addresses"].as_array_mut() {
        for point in addresses
            .iter_mut()
            .filter_map(|address| address["meter_points"].as_array_mut())
            .flatten()
        {
            if let Some(agreement) = point["agreements"]
                .as_array_mut()
                .and_then(|agreements| agreements.last_mut())
                && let Some(mapped) = agreement["tariff_code"]
                    .as_str()
                    .and_then(|code| setting(&format!("product_code.{code}")))
            {
                agreement["tariff_code"] = Value::String(mapped.to_owned());
            }
        }
    }
    if errors.is_empty() {
        Ok(account)
    } else {
        Err(errors)
    }
}

fn median_ns(id: &str) -> Option<f64> {
    let path = dev::workspace_root()
        .join("target/criterion")
        .join(id)
        .join("new/estimates.json");
    let estimates: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

fn main() {
    let dir = dev::build_plugins().unwrap_or_else(|error| panic!("{error}"));
    let bytes = std::fs::read(dir.join("example_plugin.wasm")).expect("example plugin");
    let runtime = Runtime::new(PluginLimits::default(), None).expect("runtime");
    let loaded = runtime.load(&bytes).expect("component");
    let input = dev::sample_account();
    let config = dev::sample_config();

    let wasm = block_on(runtime.call(&loaded, Hook::ValidateAccount, &config, None, input.clone()))
        .expect("call");
    let native = native_rules(input.clone(), &config);
    assert_eq!(
        wasm.outcome.ok(),
        native.ok(),
        "the plugin and the native rules must agree"
    );

    let mut criterion = Criterion::default().configure_from_args();
    criterion.bench_function("plugin_validate_account_fresh_instance", |b| {
        // The request's JSON is the caller's to give (the server hands over the one it
        // decoded); making a copy of it for each call is not part of the call.
        b.iter_batched(
            || input.clone(),
            |input| {
                block_on(runtime.call(
                    &loaded,
                    Hook::ValidateAccount,
                    &config,
                    None,
                    black_box(input),
                ))
            },
            BatchSize::SmallInput,
        )
    });
    criterion.bench_function("native_validate_account", |b| {
        b.iter_batched(
            || input.clone(),
            |input| native_rules(black_box(input), &config),
            BatchSize::SmallInput,
        )
    });
    criterion.final_summary();

    if let (Some(plugin), Some(native)) = (
        median_ns("plugin_validate_account_fresh_instance"),
        median_ns("native_validate_account"),
    ) {
        println!(
            "\nmedian: plugin {:.2} µs (target ≤ 10 µs), native {:.2} µs, ratio plugin/native {:.1}",
            plugin / 1000.0,
            native / 1000.0,
            plugin / native
        );
    }
}
