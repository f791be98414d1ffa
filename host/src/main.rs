//! The `ferry` binary: the server (`ferry serve`) and the operator commands.

use clap::Parser;
use ferry_host::cli::{Cli, Command, run_operator_command};
use ferry_host::config::Settings;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging();
    match cli.command {
        Command::Serve(args) => {
            let settings = Settings::resolve(args)?;
            ferry_host::server::run(settings, shutdown_signal()).await?;
            Ok(())
        }
        operator => run_operator_command(operator).await,
    }
}

/// Structured logs on stderr; `FERRY_LOG` filters (default `info`), `FERRY_LOG_FORMAT=json`
/// switches to JSON lines.
fn init_logging() {
    let filter = EnvFilter::try_from_env("FERRY_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if std::env::var("FERRY_LOG_FORMAT").is_ok_and(|format| format == "json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Resolves on ctrl-c or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for ctrl-c");
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
