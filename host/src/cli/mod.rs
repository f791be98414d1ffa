//! The `ferry` command line: `serve`, and the operator commands that call the admin API of a
//! running server (nothing here opens the sled files of a running server).

mod admin_client;
mod api_key;
mod db;
mod events;
mod meter_point;
pub mod output;
mod plugin;
mod supplier;
mod team;

use crate::config::ServeArgs;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "ferry",
    version,
    about = "Ferry: carry customer accounts from a retiring supplier onto the platform"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[expect(
    clippy::large_enum_variant,
    reason = "parsed once per process; the serve settings are the largest by nature"
)]
pub enum Command {
    /// Run the service.
    Serve(ServeArgs),
    /// Manage import suppliers (through the admin API).
    Supplier {
        #[command(flatten)]
        connection: Connection,
        #[command(subcommand)]
        action: supplier::SupplierAction,
    },
    /// Follow the event stream; list the event catalogue; write its AsyncAPI document.
    Events {
        #[command(subcommand)]
        action: events::EventsAction,
    },
    /// Check, run and install supplier plugins (WebAssembly components).
    Plugin {
        #[command(flatten)]
        connection: Connection,
        #[command(subcommand)]
        action: plugin::PluginAction,
    },
    /// Move a meter point's registration on (through the admin API).
    MeterPoint {
        #[command(flatten)]
        connection: Connection,
        #[command(subcommand)]
        action: meter_point::MeterPointAction,
    },
    /// Create, list and remove operations teams (through the admin API).
    Team {
        #[command(flatten)]
        connection: Connection,
        #[command(subcommand)]
        action: team::TeamAction,
    },
    /// Issue and revoke organisation API keys (through the admin API).
    ApiKey {
        #[command(flatten)]
        connection: Connection,
        #[command(subcommand)]
        action: api_key::ApiKeyAction,
    },
    /// PostgreSQL: apply the migrations (before starting the instances).
    Db {
        #[command(subcommand)]
        action: db::DbAction,
    },
}

/// How operator commands reach the server.
#[derive(Debug, Clone, Args)]
pub struct Connection {
    /// Base URL of the running server.
    #[arg(
        long,
        env = "FERRY_URL",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    pub url: String,
    /// Operator key (default: read from <data-dir>/operator.key).
    #[arg(
        long,
        env = "FERRY_OPERATOR_KEY",
        hide_env_values = true,
        global = true
    )]
    pub operator_key: Option<String>,
    /// Data directory of a local server, to find its operator.key.
    #[arg(long, env = "FERRY_DATA_DIR", default_value = crate::config::DEFAULT_DATA_DIR, global = true)]
    pub data_dir: PathBuf,
}

/// Runs an operator command; prints the server's JSON answer.
pub async fn run_operator_command(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve(_) => anyhow::bail!("serve is not an operator command"),
        Command::Supplier { connection, action } => {
            let client = admin_client::connect(&connection)?;
            supplier::run(&client, action).await
        }
        Command::Events { action } => events::run(action).await,
        Command::Plugin { connection, action } => plugin::run(&connection, action).await,
        Command::MeterPoint { connection, action } => {
            let client = admin_client::connect(&connection)?;
            meter_point::run(&client, action).await
        }
        Command::Team { connection, action } => {
            let client = admin_client::connect(&connection)?;
            team::run(&client, action).await
        }
        Command::ApiKey { connection, action } => {
            let client = admin_client::connect(&connection)?;
            api_key::run(&client, action).await
        }
        Command::Db { action } => db::run(action).await,
    }
}
