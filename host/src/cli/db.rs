//! `ferry db migrate`: applies the PostgreSQL migrations on their own (every `ferry serve`
//! with a database URL applies them on start too; this is for a deployment step that runs
//! before the instances).

use crate::server::ServerError;
use crate::store::PgStore;
use crate::store::health::StorageHealth;
use std::sync::Arc;

#[derive(Debug, clap::Subcommand)]
pub enum DbAction {
    /// Apply the migrations the database does not have yet.
    Migrate {
        /// The database (`postgres://user@host/db`).
        #[arg(long, env = "FERRY_DATABASE_URL", hide_env_values = true)]
        database_url: String,
    },
}

pub async fn run(action: DbAction) -> anyhow::Result<()> {
    match action {
        DbAction::Migrate { database_url } => {
            PgStore::connect(&database_url, Arc::new(StorageHealth::unwatched()))
                .await
                .map_err(ServerError::connecting)?;
            println!("migrations applied");
            Ok(())
        }
    }
}
