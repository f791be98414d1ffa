//! `ferry api-key ...`: issue an organisation's API key (printed once) and revoke it.

use super::admin_client::{AdminClient, failed};
use super::output::print_json;
use clap::Subcommand;
use ferry_admin_api::NewApiKey;

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
    match action {
        ApiKeyAction::Create {
            organisation,
            suppliers,
        } => {
            let key = NewApiKey {
                organisation,
                suppliers,
            };
            let issued = client
                .create_api_key(&key)
                .await
                .map_err(|error| failed(client, error))?;
            Ok(print_json(&issued)?)
        }
        ApiKeyAction::Revoke { id } => {
            let revoked = client
                .revoke_api_key(&id)
                .await
                .map_err(|error| failed(client, error))?;
            Ok(print_json(&revoked)?)
        }
    }
}
