//! `ferry plugin ...`: check a component against the world, run one hook locally, and
//! install a component for a supplier on a running server.

use super::admin_client::{connect, failed};
use super::output::print_json;
use crate::domain::ports::{AccountTarget, Hook};
use crate::plugins::{PluginLimits, Runtime};
use anyhow::Context;
use clap::Subcommand;
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum PluginAction {
    /// Check that a component implements a ferry:supplier-rules world; print its hooks.
    Check { file: PathBuf },
    /// Run one hook of a component locally; print its output, errors, logs and time.
    Run {
        file: PathBuf,
        /// validate-account, map-notes, map-transactions, map-statements or
        /// map-payment-instruction.
        #[arg(long)]
        hook: String,
        /// The input as JSON: the account, the notes/transactions/statements (array or a
        /// request body holding it), or the payment instruction.
        #[arg(long)]
        input: PathBuf,
        /// A plugin setting, KEY=VALUE (repeat for several).
        #[arg(long = "config", value_parser = parse_setting)]
        config: Vec<(String, String)>,
    },
    /// Install a component for a supplier (through the admin API).
    Install {
        supplier: String,
        file: PathBuf,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        version: Option<String>,
    },
}

fn parse_setting(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .ok_or_else(|| format!("expected KEY=VALUE, got {text}"))
}

fn local_runtime() -> anyhow::Result<Runtime> {
    Runtime::new(PluginLimits::default(), None).context("cannot start the plugin runtime")
}

/// The part of `input` a hook takes: a request body is reduced to its array or fields.
fn hook_input(hook: Hook, input: Value) -> Value {
    let field = match hook {
        Hook::MapNotes => Some("notes"),
        Hook::MapTransactions => Some("transactions"),
        Hook::MapStatements => Some("statements"),
        Hook::ValidateAccount | Hook::MapPaymentInstruction => None,
    };
    match field {
        Some(field) if input.is_object() => input.get(field).cloned().unwrap_or(Value::Null),
        _ => input,
    }
}

pub async fn run(connection: &super::Connection, action: PluginAction) -> anyhow::Result<()> {
    match action {
        PluginAction::Check { file } => {
            let bytes =
                std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let runtime = local_runtime()?;
            let loaded = runtime
                .load(&bytes)
                .map_err(|error| anyhow::anyhow!("{}: {error}", file.display()))?;
            let hooks: Vec<&str> = loaded.hooks().into_iter().map(Hook::as_str).collect();
            Ok(print_json(
                &json!({"file": file.display().to_string(), "sha256": loaded.sha256, "world": loaded.version().world(), "hooks": hooks}),
            )?)
        }
        PluginAction::Run {
            file,
            hook,
            input,
            config,
        } => {
            let hook = Hook::parse(&hook).with_context(|| format!("unknown hook {hook}"))?;
            let bytes =
                std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let text = std::fs::read_to_string(&input)
                .with_context(|| format!("cannot read {}", input.display()))?;
            let value: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", input.display()))?;
            let target = AccountTarget {
                import_supplier: value
                    .get("import_supplier")
                    .and_then(Value::as_str)
                    .unwrap_or("LOCAL")
                    .to_owned(),
                external_account_number: value
                    .get("external_account_number")
                    .and_then(Value::as_str)
                    .unwrap_or("LOCAL-1")
                    .to_owned(),
                platform_account_number: "A-00000000".to_owned(),
            };
            let runtime = local_runtime()?;
            let loaded = runtime
                .load(&bytes)
                .map_err(|error| anyhow::anyhow!("{}: {error}", file.display()))?;
            let input = hook_input(hook, value);
            let run = runtime
                .call(&loaded, hook, &config.into(), Some(&target), input)
                .await
                .map_err(|error| {
                    anyhow::anyhow!("{} failed in {}: {error}", file.display(), hook.as_str())
                })?;
            let (outcome, output, errors) = match run.outcome {
                Ok(output) => ("ok", output, Vec::new()),
                Err(errors) => ("rejected", Value::Null, errors.0),
            };
            Ok(print_json(&json!({
                "hook": hook.as_str(),
                "outcome": outcome,
                "output": output,
                "errors": errors,
                "logs": run.logs,
                "stdout": run.output,
                "elapsed_us": run.elapsed.as_micros() as u64,
            }))?)
        }
        PluginAction::Install {
            supplier,
            file,
            name,
            version,
        } => {
            let bytes =
                std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let client = connect(connection)?;
            let record = client
                .install_plugin(&supplier, bytes, name.as_deref(), version.as_deref())
                .await
                .map_err(|error| failed(&client, error))?;
            Ok(print_json(&record)?)
        }
    }
}
