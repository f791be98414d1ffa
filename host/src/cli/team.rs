//! `ferry team ...`: the operations teams accounts are allocated to when they are migrated.

use super::admin_client::{AdminClient, failed};
use super::output::print_json;
use clap::Subcommand;
use ferry_admin_api::NewOperationsTeam;

#[derive(Debug, Subcommand)]
pub enum TeamAction {
    /// Create a team that `process/`'s `operations_team_name` can name.
    Create { name: String },
    /// List the teams.
    List,
    /// Remove a team (accounts allocated to it keep its name).
    Delete { name: String },
}

pub async fn run(client: &AdminClient, action: TeamAction) -> anyhow::Result<()> {
    match action {
        TeamAction::Create { name } => {
            let team = client
                .create_operations_team(&NewOperationsTeam { name })
                .await
                .map_err(|error| failed(client, error))?;
            Ok(print_json(&team)?)
        }
        TeamAction::List => {
            let teams = client
                .operations_teams()
                .await
                .map_err(|error| failed(client, error))?;
            Ok(print_json(&teams)?)
        }
        TeamAction::Delete { name } => {
            let team = client
                .delete_operations_team(&name)
                .await
                .map_err(|error| failed(client, error))?;
            Ok(print_json(&team)?)
        }
    }
}
