//! `ferry-bench`: Ferry's load generator. It starts the real release `ferry` binary on a fresh
//! data directory with a private `redis-server` for its event relay, provisions a supplier
//! with the example plugin, and drives the HTTP API closed-loop at several concurrency
//! levels; in the same run it sends the same requests to a bare axum baseline (this binary's
//! `baseline` subcommand, a separate process) and reports every figure as a ratio to it.
//!
//! With `--database-url postgres://…` the same run then measures PostgreSQL deployments too:
//! for each count in `--instances` (default `1,2`), that many `ferry serve` instances over a
//! fresh database of their own on that server (created, and dropped afterwards), the load
//! spread over them. The report has the same tables for each deployment, then a comparison:
//! Ferry's throughput on each, what each further instance buys, and the CPU split between
//! Ferry, PostgreSQL and the whole machine (where the ceiling is).
//!
//! Run it with `cargo run --release -p ferry-bench` (add `-- --write BENCHMARKS.md` to put the
//! results, with the machine they were made on, into `BENCHMARKS.md` in place of the run
//! before); `--help` lists the knobs for a quick smoke run.
//!
//! `--only campaign` runs the campaign instead ([`campaign`]): a supplier's whole migration
//! through the API, account by account in batches (the document with its ledger, process,
//! notes, transactions, statements, a payment instruction), with its rates batch by batch,
//! Ferry's memory and the store's size. It is long, and never part of a run without `--only`.

mod baseline;
mod campaign;
mod compare;
mod deployment;
mod load;
mod machine;
mod processes;
mod procfs;
mod provision;
mod report;
mod run;
mod scenarios;
mod vendor;
mod waits;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "ferry-bench",
    about = "Load-test the real ferry binary against a bare axum baseline: on sled, and with \
             --database-url on PostgreSQL with one or more instances"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the bare axum baseline (started by the benchmark itself).
    Baseline(baseline::BaselineArgs),
}

/// How the benchmark runs.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Measured seconds per scenario and concurrency level.
    #[arg(long, env = "FERRY_BENCH_DURATION_SECS", default_value_t = 2.0)]
    pub duration_secs: f64,
    /// Unmeasured seconds before each measurement (connections opened, caches warm).
    #[arg(long, env = "FERRY_BENCH_WARMUP_SECS", default_value_t = 0.5)]
    pub warmup_secs: f64,
    /// Concurrency levels: closed-loop connections, each sending its next request when the
    /// previous answer has arrived (spread over the instances of a deployment).
    #[arg(
        long,
        env = "FERRY_BENCH_CONNECTIONS",
        value_delimiter = ',',
        default_value = "1,8,32"
    )]
    pub connections: Vec<usize>,
    /// Pending accounts staged before the pending list is measured.
    #[arg(long, env = "FERRY_BENCH_LIST_ACCOUNTS", default_value_t = 100_000)]
    pub list_accounts: usize,
    /// Connections used to stage those accounts.
    #[arg(long, env = "FERRY_BENCH_STAGING_CONNECTIONS", default_value_t = 64)]
    pub staging_connections: usize,
    /// Transactions in each of the two statement lists of every account the benchmark stages
    /// (historical and current): the money processing migrates. 0: accounts without money.
    #[arg(long, env = "FERRY_BENCH_LEDGER_TRANSACTIONS", default_value_t = scenarios::DEFAULT_LEDGER_TRANSACTIONS)]
    pub ledger_transactions: usize,
    /// Migrated accounts that notes and transactions are spread over (one per connection
    /// up to this many).
    #[arg(long, env = "FERRY_BENCH_ACCOUNTS", default_value_t = 64)]
    pub accounts: usize,
    /// Only these scenarios (comma-separated keys: notes, transactions-1, transactions-1000,
    /// stage-process, transfer-status, pending-list (with the campaign report over the same
    /// accounts), relay, campaign). Default: all but `campaign`, which runs only when named
    /// (it takes minutes to hours: see --campaign-accounts).
    #[arg(long, env = "FERRY_BENCH_ONLY", value_delimiter = ',')]
    pub only: Vec<String>,
    /// The campaign's accounts (`--only campaign`), each staged with its ledger, processed,
    /// then given 5 notes, 50 transactions, 12 statements and a payment instruction. On two cores
    /// about 90 s per 10 000 on sled, five to six times that on PostgreSQL.
    #[arg(long, env = "FERRY_BENCH_CAMPAIGN_ACCOUNTS", default_value_t = 100_000)]
    pub campaign_accounts: u64,
    /// Batches the campaign's accounts are split into, evenly: each batch goes through every
    /// phase before the next batch starts, and Ferry's memory and the store's size are read
    /// after each (the last batch's rates are held to the first's).
    #[arg(long, env = "FERRY_BENCH_CAMPAIGN_BATCHES", default_value_t = 5)]
    pub campaign_batches: u64,
    /// Connections the campaign sends over (spread over a deployment's instances).
    #[arg(long, env = "FERRY_BENCH_CAMPAIGN_CONNECTIONS", default_value_t = 16)]
    pub campaign_connections: usize,
    /// Put the results into this markdown file (BENCHMARKS.md) between its markers, in place
    /// of the run before (at the end, under a heading of their own, when it has none).
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// The `ferry` binary (default: next to this executable, built first with
    /// `cargo build --release -p ferry-host`).
    #[arg(long, env = "FERRY_BENCH_FERRY")]
    pub ferry: Option<PathBuf>,
    /// Don't build `ferry` and the plugins first (use what is there).
    #[arg(long)]
    pub no_build: bool,
    /// Provision the supplier without a plugin (by default it has the example plugin): what a
    /// supplier without rules gets, and, beside a run with it, what the plugin costs.
    #[arg(long, env = "FERRY_BENCH_WITHOUT_PLUGIN")]
    pub without_plugin: bool,
    /// Compare the `--ferry` build (A) with this one (B) instead of with the baseline: both
    /// run at once on sled, and each scenario and level is measured in `--pairs` alternating
    /// pairs. For "before and after" a change; prints a table, writes nothing.
    #[arg(long, env = "FERRY_BENCH_COMPARE_WITH")]
    pub compare_with: Option<PathBuf>,
    /// Pairs of measurements a level with `--compare-with`.
    #[arg(long, env = "FERRY_BENCH_PAIRS", default_value_t = 3)]
    pub pairs: usize,
    /// Keep the temporary directory (Ferry's data and logs, Redis's sockets) after the run.
    /// The PostgreSQL databases are dropped all the same.
    #[arg(long)]
    pub keep_data: bool,
    /// A PostgreSQL server (postgres://user[:password]@host:port/database, a database to
    /// connect to for creating others). After the sled deployment the run measures PostgreSQL
    /// deployments on it, each over a fresh database of its own (`ferry_bench_<pid>_<n>`,
    /// created and dropped with `psql`).
    #[arg(long, env = "FERRY_BENCH_DATABASE_URL")]
    pub database_url: Option<String>,
    /// `ferry serve` instances of each PostgreSQL deployment, one deployment per count
    /// (comma-separated); the load is spread over the instances. Ignored without
    /// --database-url.
    #[arg(
        long,
        env = "FERRY_BENCH_INSTANCES",
        value_delimiter = ',',
        default_value = "1,2"
    )]
    pub instances: Vec<usize>,
    /// The stores to measure (comma-separated): `sled`, `postgres` (which needs
    /// --database-url; without it only sled is measured).
    #[arg(
        long,
        env = "FERRY_BENCH_BACKENDS",
        value_enum,
        value_delimiter = ',',
        default_value = "sled,postgres"
    )]
    pub backends: Vec<deployment::Backend>,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    scenarios::set_ledger_transactions(cli.run.ledger_transactions);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Some(Command::Baseline(args)) => runtime.block_on(baseline::serve(args)),
        None => runtime.block_on(run::run(cli.run)),
    }
}
