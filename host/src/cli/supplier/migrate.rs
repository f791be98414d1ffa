//! `ferry supplier migrate CODE`: starts a bulk migration of the supplier's accounts awaiting
//! migration, every one or a part of them (the error tail, one group of it, or the accounts
//! named), and prints the job as the server started it.

use crate::cli::admin_client::{AdminClient, failed};
use crate::cli::output::print_json;
use clap::{Args, ValueEnum};
use ferry_admin_api::migrations::{MigrationSelection, MigrationTail};

/// Which accounts to migrate (none of these: every account awaiting migration).
#[derive(Debug, Args)]
pub struct MigrateArgs {
    code: String,
    /// Only a part of the accounts: `errored`, those whose last migration attempt failed
    /// (re-staged since or not).
    #[arg(long, value_enum, conflicts_with = "accounts")]
    only: Option<Only>,
    /// With --only errored: only those whose attempt failed with this error code.
    #[arg(long, requires = "only")]
    error_code: Option<String>,
    /// Exactly these accounts (external account numbers; repeat the flag or separate them
    /// with commas), those of them awaiting migration.
    #[arg(long = "account", value_name = "EXTERNAL", value_delimiter = ',')]
    accounts: Vec<String>,
}

/// The parts of the accounts a migration can be started over.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Only {
    Errored,
}

impl MigrateArgs {
    fn selection(&self) -> MigrationSelection {
        MigrationSelection {
            only: self.only.map(|Only::Errored| MigrationTail::Errored),
            error_code: self.error_code.clone(),
            accounts: (!self.accounts.is_empty()).then(|| self.accounts.clone()),
        }
    }
}

pub async fn run(client: &AdminClient, args: MigrateArgs) -> anyhow::Result<()> {
    let job = client
        .start_migration_over(&args.code, &args.selection())
        .await
        .map_err(|error| failed(client, error))?;
    Ok(print_json(&job)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Command {
        #[command(flatten)]
        args: MigrateArgs,
    }

    fn selection(line: &[&str]) -> Result<MigrationSelection, clap::Error> {
        Command::try_parse_from(std::iter::once("migrate").chain(line.iter().copied()))
            .map(|command| command.args.selection())
    }

    #[test]
    fn the_flags_name_the_selection_the_server_reads() {
        assert_eq!(
            selection(&["OLD_CO"]).expect("parsed"),
            MigrationSelection::default()
        );
        let group = selection(&[
            "OLD_CO",
            "--only",
            "errored",
            "--error-code",
            "plugin_failed",
        ]);
        assert_eq!(
            group.expect("parsed"),
            MigrationSelection {
                only: Some(MigrationTail::Errored),
                error_code: Some("plugin_failed".into()),
                accounts: None,
            }
        );
        let named = selection(&["OLD_CO", "--account", "A-1,A-2", "--account", "A-3"]);
        assert_eq!(
            named.expect("parsed").accounts,
            Some(vec!["A-1".into(), "A-2".into(), "A-3".into()])
        );
        for refused in [
            &["OLD_CO", "--only", "mismatched"][..],
            &["OLD_CO", "--error-code", "plugin_failed"],
            &["OLD_CO", "--only", "errored", "--account", "A-1"],
        ] {
            assert!(selection(refused).is_err(), "{refused:?}");
        }
    }
}
