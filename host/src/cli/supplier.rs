//! `ferry supplier ...`: create, list, show and change import suppliers; start a bulk
//! migration of their accounts ([`migrate`]); read a supplier's campaign report
//! ([`report`]).

mod migrate;
mod report;

use super::admin_client::{AdminClient, failed};
use super::output::print_json;
use clap::Subcommand;
use ferry_admin_api::{NewSupplier, SupplierChange, SupplierStatus};
use report::ReportArgs;

#[derive(Debug, Subcommand)]
pub enum SupplierAction {
    /// Create a supplier.
    Create {
        /// Upper-case code, e.g. OLD_ENERGY.
        code: String,
        #[arg(long)]
        name: String,
        /// Root of the supplier's documents inside the bucket.
        #[arg(long, default_value = "")]
        document_root: String,
        #[arg(long)]
        send_migration_emails: bool,
        /// ONGOING (default), PAUSED or COMPLETE.
        #[arg(long, value_parser = parse_status)]
        status: Option<SupplierStatus>,
        #[arg(long)]
        expiry_window_days: Option<i64>,
        /// Refuse request fields Ferry does not know instead of ignoring and naming them.
        #[arg(long)]
        strict_unknown_fields: bool,
    },
    /// List suppliers with their counts per import state.
    List,
    /// Show one supplier.
    Show { code: String },
    /// Change a supplier's settings.
    Update {
        code: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        document_root: Option<String>,
        #[arg(long)]
        send_migration_emails: Option<bool>,
        /// ONGOING, PAUSED or COMPLETE.
        #[arg(long, value_parser = parse_status)]
        status: Option<SupplierStatus>,
        #[arg(long)]
        expiry_window_days: Option<i64>,
        /// true: refuse request fields Ferry does not know; false: ignore and name them.
        #[arg(long)]
        strict_unknown_fields: Option<bool>,
    },
    /// Start a bulk migration of the supplier's accounts awaiting migration: every one, its
    /// error tail (--only errored, --error-code) or the accounts named (--account).
    Migrate(migrate::MigrateArgs),
    /// Set a supplier's status: ONGOING, PAUSED or COMPLETE.
    SetStatus {
        code: String,
        #[arg(value_parser = parse_status)]
        status: SupplierStatus,
    },
    /// The supplier's campaign report (JSON); with --accounts, every account's row (JSON or
    /// CSV).
    Report(ReportArgs),
}

/// A status as typed on the command line (any case).
fn parse_status(text: &str) -> Result<SupplierStatus, String> {
    SupplierStatus::parse_loose(text)
        .ok_or_else(|| format!("{text:?} is not a status: use ONGOING, PAUSED or COMPLETE"))
}

pub async fn run(client: &AdminClient, action: SupplierAction) -> anyhow::Result<()> {
    let answer = match action {
        SupplierAction::Create {
            code,
            name,
            document_root,
            send_migration_emails,
            status,
            expiry_window_days,
            strict_unknown_fields,
        } => {
            let supplier = NewSupplier {
                code,
                name,
                document_root,
                send_migration_emails,
                status,
                expiry_window_days,
                strict_unknown_fields: strict_unknown_fields.then_some(true),
            };
            client.create_supplier(&supplier).await
        }
        SupplierAction::List => {
            let suppliers = client.suppliers().await.map_err(|e| failed(client, e))?;
            return Ok(print_json(&suppliers)?);
        }
        SupplierAction::Show { code } => client.supplier(&code).await,
        SupplierAction::Update {
            code,
            name,
            document_root,
            send_migration_emails,
            status,
            expiry_window_days,
            strict_unknown_fields,
        } => {
            let change = SupplierChange {
                name,
                document_root,
                send_migration_emails,
                status,
                expiry_window_days,
                strict_unknown_fields,
            };
            client.update_supplier(&code, &change).await
        }
        SupplierAction::Migrate(args) => return migrate::run(client, args).await,
        SupplierAction::SetStatus { code, status } => {
            client.set_supplier_status(&code, status).await
        }
        SupplierAction::Report(args) => return report::report(client, args).await,
    };
    let supplier = answer.map_err(|error| failed(client, error))?;
    Ok(print_json(&supplier)?)
}
