//! The `ferry` binary: the server (`ferry serve`) and the operator commands.

use clap::Parser;
use ferry_host::cli::{Cli, Command, output, run_operator_command};
use ferry_host::config::Settings;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// mimalloc rather than the system's allocator: under batches of transactions glibc's malloc
/// (chunk consolidation, unlinking) took a quarter of the server's CPU (docs/DECISIONS.md,
/// "The runtime and the allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How often (in tasks polled) a request thread looks at the runtime's shared queue before
/// its own. A request waiting for the journal is woken from the journal's thread, outside the
/// runtime, so it lands in the shared queue: Tokio's own tuning (aiming at every ~200 µs) let
/// it wait there behind the busy threads' own tasks. Every second task: create-or-update +
/// process at 8 connections makes ~8 % more operations a second at ~10 % less CPU each, and
/// notes no fewer; every task is no better.
const GLOBAL_QUEUE_INTERVAL: u32 = 2;

/// How long a thread of the runtime's blocking pool waits idle before it ends. A large commit
/// runs in `block_in_place`, which hands the request thread's place to a thread of that pool
/// and leaves the old one idle afterwards, holding what its allocator heap kept of the batch
/// until it ends: Tokio's 10 s kept that memory through the next ten seconds of any load.
const BLOCKING_THREAD_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(1);

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging();
    match cli.command {
        Command::Serve(args) => {
            let settings = Settings::resolve(args)?;
            // As many request threads as the settings say (`--workers`).
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(settings.workers)
                .global_queue_interval(GLOBAL_QUEUE_INTERVAL)
                .thread_keep_alive(BLOCKING_THREAD_KEEP_ALIVE)
                .enable_all()
                .build()?
                .block_on(ferry_host::server::run(settings, shutdown_signal()))?;
            Ok(())
        }
        operator => {
            let runtime = tokio::runtime::Runtime::new()?;
            match runtime.block_on(run_operator_command(operator)) {
                // `ferry ... | head -1`: the reader has what it wanted; stop without a word.
                Err(error) if output::is_reader_gone(&error) => Ok(()),
                other => other,
            }
        }
    }
}

/// Structured logs on stderr; `FERRY_LOG` filters (default `info`), `FERRY_LOG_FORMAT=json`
/// switches to JSON lines. Colours only when stderr is a terminal and `NO_COLOR` is unset, so
/// logs written to a file or a pipe carry no escape codes.
fn init_logging() {
    let filter = EnvFilter::try_from_env("FERRY_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(use_colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR"),
        ))
        .with_writer(std::io::stderr);
    if std::env::var("FERRY_LOG_FORMAT").is_ok_and(|format| format == "json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Whether logs are coloured: on a terminal, unless `NO_COLOR` is set to anything but empty
/// (<https://no-color.org>).
fn use_colour(stderr_is_terminal: bool, no_colour: Option<std::ffi::OsString>) -> bool {
    stderr_is_terminal && no_colour.is_none_or(|value| value.is_empty())
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

#[cfg(test)]
mod tests {
    use super::use_colour;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(use_colour(true, None));
        assert!(!use_colour(false, None));
        assert!(!use_colour(true, Some("1".into())));
        assert!(use_colour(true, Some("".into())));
    }
}
