//! `ferry api-key ...`: issue an organisation's API key (printed once) and revoke it.

use super::admin_client::{AdminClient, print};
use clap::Subcommand;
use reqwest::Method;
use serde_json::json;

#[derive(Debug, Subcommand)]
pub enum ApiKeyAction {
    /// Issue a key for an organisation, scoped to suppliers.
    Create {
        #[arg(long)]
        organisation: String,
        /// A supplier code the key may reach (repeat for several).
        #[arg(long = "supplier", required = true)]
        suppliers: Vec<String>,
    },
    /// Revoke a key by id; its tokens stop working at once.
    Revoke { id: String },
}

pub async fn run(client: &AdminClient, action: ApiKeyAction) -> anyhow::Result<()> {
    let answer = match action {
        ApiKeyAction::Create {
            organisation,
            suppliers,
        } => {
            let body = json!({"organisation": organisation, "suppliers": suppliers});
            client
                .call(Method::POST, "/admin/v1/api-keys", Some(body))
                .await?
        }
        ApiKeyAction::Revoke { id } => {
            client
                .call(Method::DELETE, &format!("/admin/v1/api-keys/{id}"), None)
                .await?
        }
    };
    print(&answer);
    Ok(())
}
