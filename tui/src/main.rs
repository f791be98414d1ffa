//! `ferry-console`: the operator console. Reads the host URL and operator key, takes over the
//! terminal and runs the event loop until `q`.

use anyhow::Context;
use clap::Parser;
use ferry_console::app::App;
use ferry_console::http::AdminClient;
use ferry_console::{runner, terminal};
use std::sync::Arc;
use std::time::Duration;

/// Ferry's operator console: suppliers, imports, events, plugins and campaign reports in the
/// terminal.
#[derive(Debug, Parser)]
#[command(name = "ferry-console", version)]
struct Args {
    /// Base URL of the Ferry host.
    #[arg(long, env = "FERRY_URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    /// The operator key of the admin API.
    #[arg(long, env = "FERRY_OPERATOR_KEY", hide_env_values = true)]
    operator_key: String,
    /// Seconds between refreshes of the current screen.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=3600))]
    refresh_seconds: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let api = AdminClient::new(&args.url, &args.operator_key)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the background runtime")?;
    let mut app = App::new(args.url.trim_end_matches('/'), args.refresh_seconds);

    let mut terminal = terminal::enter().context("cannot take over the terminal")?;
    let result = runner::run(
        &mut terminal,
        &mut app,
        Arc::new(api),
        runtime.handle().clone(),
        Duration::from_secs(args.refresh_seconds),
    );
    terminal::restore().context("cannot restore the terminal")?;
    runtime.shutdown_background();
    result.context("the console stopped")
}
