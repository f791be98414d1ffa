//! `ferry supplier ...`: create, list, show and change import suppliers.

use super::admin_client::{AdminClient, print};
use clap::Subcommand;
use reqwest::Method;
use serde_json::{Map, Value, json};

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
            let mut body = json!({
                "code": code,
                "name": name,
                "document_root": document_root,
                "send_migration_emails": send_migration_emails,
            });
            if let Some(status) = status {
                body["status"] = json!(status.to_uppercase());
            }
            if let Some(days) = expiry_window_days {
                body["expiry_window_days"] = json!(days);
            }
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
            let mut body = Map::new();
            let fields = [
                ("name", name.map(Value::from)),
                ("document_root", document_root.map(Value::from)),
                (
                    "send_migration_emails",
                    send_migration_emails.map(Value::from),
                ),
                ("status", status.map(|s| Value::from(s.to_uppercase()))),
                ("expiry_window_days", expiry_window_days.map(Value::from)),
            ];
            for (name, value) in fields {
                if let Some(value) = value {
                    body.insert(name.to_owned(), value);
                }
            }
            let path = format!("/admin/v1/suppliers/{code}");
            client
                .call(Method::PATCH, &path, Some(Value::Object(body)))
                .await?
        }
        SupplierAction::SetStatus { code, status } => {
            let path = format!("/admin/v1/suppliers/{code}");
            let body = json!({"status": status.to_uppercase()});
            client.call(Method::PATCH, &path, Some(body)).await?
        }
    };
    print(&answer);
    Ok(())
}
