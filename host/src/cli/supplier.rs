//! `ferry supplier ...`: create, list, show and change import suppliers.

use super::admin_client::{AdminClient, print};
use clap::Subcommand;
use reqwest::Method;
use serde_json::{Value, json};

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
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        expiry_window_days: Option<i64>,
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
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        expiry_window_days: Option<i64>,
    },
    /// Set a supplier's status: ONGOING, PAUSED or COMPLETE.
    SetStatus { code: String, status: String },
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
        } => {
            let body = settings_body(
                json!({"code": code}),
                Settings {
                    name: Some(name),
                    document_root: Some(document_root),
                    send_migration_emails: Some(send_migration_emails),
                    status,
                    expiry_window_days,
                },
            );
            client
                .call(Method::POST, "/admin/v1/suppliers", Some(body))
                .await?
        }
        SupplierAction::List => {
            client
                .call(Method::GET, "/admin/v1/suppliers", None)
                .await?
        }
        SupplierAction::Show { code } => {
            client
                .call(Method::GET, &format!("/admin/v1/suppliers/{code}"), None)
                .await?
        }
        SupplierAction::Update {
            code,
            name,
            document_root,
            send_migration_emails,
            status,
            expiry_window_days,
        } => {
            let body = settings_body(
                json!({}),
                Settings {
                    name,
                    document_root,
                    send_migration_emails,
                    status,
                    expiry_window_days,
                },
            );
            client
                .call(
                    Method::PATCH,
                    &format!("/admin/v1/suppliers/{code}"),
                    Some(body),
                )
                .await?
        }
        SupplierAction::SetStatus { code, status } => {
            let body = json!({"status": status.to_uppercase()});
            client
                .call(
                    Method::PATCH,
                    &format!("/admin/v1/suppliers/{code}"),
                    Some(body),
                )
                .await?
        }
    };
    print(&answer);
    Ok(())
}

/// Supplier settings given on the command line.
struct Settings {
    name: Option<String>,
    document_root: Option<String>,
    send_migration_emails: Option<bool>,
    status: Option<String>,
    expiry_window_days: Option<i64>,
}

/// `base` with every given setting added.
fn settings_body(mut base: Value, settings: Settings) -> Value {
    let fields = [
        ("name", settings.name.map(Value::from)),
        ("document_root", settings.document_root.map(Value::from)),
        (
            "send_migration_emails",
            settings.send_migration_emails.map(Value::from),
        ),
        (
            "status",
            settings.status.map(|s| Value::from(s.to_uppercase())),
        ),
        (
            "expiry_window_days",
            settings.expiry_window_days.map(Value::from),
        ),
    ];
    if let Some(object) = base.as_object_mut() {
        for (name, value) in fields {
            if let Some(value) = value {
                object.insert(name.to_owned(), value);
            }
        }
    }
    base
}
