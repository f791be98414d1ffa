//! One benchmark run, in order: build, start the baseline, then for each deployment (sled;
//! PostgreSQL with each `--instances` count): start it, provision it, then for each scenario
//! and concurrency level measure the baseline and Ferry one after the other; after the
//! 1000-transaction batches, time the relay draining the outbox; stage the pending accounts
//! and measure the pending list with both servers' memory watched, then the supplier's campaign
//! report over all its accounts (Ferry alone); run `redis-benchmark` for
//! the relay's baseline; with `--only campaign`, run the campaign ([`crate::campaign`], Ferry
//! alone); stop it. Then print the report (and write it with `--write`). With
//! `--compare-with`, two builds are compared instead ([`crate::compare`]), with no baseline.

use crate::RunArgs;
use crate::campaign;
use crate::deployment::{self, Deployment, Kind};
use crate::load::{self, Measurement, Stop, Target};
use crate::machine::Machine;
use crate::processes;
use crate::procfs::{self, RssGrowth, RssWatch};
use crate::provision;
use crate::report::{
    self, CampaignReportResult, DeploymentResults, RelayResult, Report, Row, StagingResult,
};
use crate::scenarios::{self, Scenario};
use crate::vendor::Vendor;
use crate::waits::{FerryMetrics, Waits};
use anyhow::{Context, bail};
use reqwest::header::HeaderValue;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Events `redis-benchmark` sends for the relay's baseline.
const REDIS_BENCHMARK_REQUESTS: u64 = 50_000;
/// The longest the relay may take to empty the outbox after the load.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
const DRAIN_POLL: Duration = Duration::from_millis(100);
/// Ferry's default stream and trimming, which the relay's XADD uses.
const FERRY_STREAM: &str = "ferry:events";
const FERRY_STREAM_MAXLEN: &str = "1000000";

/// `arg` with the password of a URL in it (`--database-url`) hidden, for the report.
fn without_password(arg: String) -> String {
    let (flag, value) = match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (format!("{flag}="), value),
        _ => (String::new(), arg.as_str()),
    };
    let Ok(mut url) = reqwest::Url::parse(value) else {
        return arg;
    };
    if url.password().is_none() || url.set_password(Some("xxx")).is_err() {
        return arg;
    }
    format!("{flag}{url}")
}

/// The command line that made the figures, as a reader would type it.
fn command_line() -> String {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .map(without_password)
        .map(|arg| {
            if arg.contains(' ') {
                format!("'{arg}'")
            } else {
                arg
            }
        })
        .collect();
    if args.is_empty() {
        "cargo run --release -p ferry-bench".into()
    } else {
        format!("cargo run --release -p ferry-bench -- {}", args.join(" "))
    }
}

struct Servers {
    ferry: Target,
    baseline: Target,
    /// For the relay's counter.
    client: reqwest::Client,
}

/// One measurement of Ferry, with what its `/metrics` moved by over it (warm-up included).
#[derive(Debug)]
pub struct FerryMeasurement {
    pub measurement: Measurement,
    pub waits: Waits,
    /// Events the relay published meanwhile, and for how long.
    pub relayed: Published,
}

impl FerryMeasurement {
    /// The journal's mean write and sync a round, in µs (none: no journal).
    pub fn sync_us(&self) -> Option<f64> {
        self.waits
            .journal
            .map(|journal| journal.sync.as_secs_f64() * 1e6)
    }

    /// The mean time from a record's commit until it was durable, in µs (none: no journal).
    pub fn durable_us(&self) -> Option<f64> {
        self.waits
            .journal
            .map(|journal| journal.commit_wait.as_secs_f64() * 1e6)
    }
}

/// Measures `scenario` against `ferry` at `connections`, reading its `/metrics` before and
/// after.
pub async fn measure_ferry(
    client: &reqwest::Client,
    ferry: &Target,
    scenario: &Scenario,
    connections: usize,
    stop: Stop,
) -> anyhow::Result<FerryMeasurement> {
    let before = FerryMetrics::scrape(client, &ferry.bases).await?;
    let started = Instant::now();
    let measurement = load::measure(ferry, &scenario.generator, connections, stop).await?;
    let after = FerryMetrics::scrape(client, &ferry.bases).await?;
    Ok(FerryMeasurement {
        measurement,
        waits: after.waits_since(&before),
        relayed: Published {
            events: (after.published_events - before.published_events).max(0.0) as u64,
            seconds: started.elapsed().as_secs_f64(),
        },
    })
}

/// The peak growth of the resident memory `watches` saw, summed over their processes.
fn growth_of(watches: Vec<RssWatch>) -> anyhow::Result<RssGrowth> {
    watches.into_iter().map(RssWatch::end).sum()
}

/// Starts watching the resident memory of each of `target`'s processes.
fn watch_memory_of(target: &Target) -> anyhow::Result<Vec<RssWatch>> {
    target
        .pids
        .iter()
        .map(|&pid| RssWatch::begin(pid))
        .collect()
}

impl Servers {
    /// One scenario at one level: the baseline first, then Ferry, each with its memory
    /// watched when `watch_memory` (summed over Ferry's instances).
    async fn measure_both(
        &self,
        scenario: &Scenario,
        connections: usize,
        stop: Stop,
        watch_memory: bool,
    ) -> anyhow::Result<(Row, Published)> {
        let watches = watch_memory
            .then(|| watch_memory_of(&self.baseline))
            .transpose()?;
        let baseline =
            load::measure(&self.baseline, &scenario.generator, connections, stop).await?;
        let baseline_growth = watches.map(growth_of).transpose()?;
        let watches = watch_memory
            .then(|| watch_memory_of(&self.ferry))
            .transpose()?;
        let ferry = measure_ferry(&self.client, &self.ferry, scenario, connections, stop).await?;
        let ferry_growth = watches.map(growth_of).transpose()?;
        let row = Row {
            key: scenario.key,
            title: scenario.title,
            connections,
            items_per_operation: scenario.items_per_operation,
            rss: ferry_growth.zip(baseline_growth),
            ferry: ferry.measurement,
            baseline,
            waits: Some(ferry.waits),
        };
        let relayed = ferry.relayed;
        eprintln!(
            "  {:<40} {:>3} conns: Ferry {:>9} op/s p99 {:>7} ms {:>7} µs CPU/op {:.2} cores{}, machine {} cores busy{} | baseline {:>9} op/s p99 {:>7} ms {:>7} µs CPU/op, machine {} cores busy{}",
            row.title,
            connections,
            report::format_rate(row.ferry.per_second()),
            report::format_ms(row.ferry.latency_at(0.99)),
            report::format_cpu(row.ferry.cpu_per_operation_us()),
            row.ferry.server_cores_busy().unwrap_or(0.0),
            match row.ferry.postgres_cpu_per_operation_us() {
                Some(micros) => format!(
                    ", PostgreSQL {} µs CPU/op",
                    report::format_cpu(Some(micros))
                ),
                None => String::new(),
            },
            report::format_cores(row.ferry.machine_cores_busy()),
            match row.waits.and_then(|waits| waits.journal) {
                Some(journal) => format!(", {}", journal.summary()),
                None => String::new(),
            },
            report::format_rate(row.baseline.per_second()),
            report::format_ms(row.baseline.latency_at(0.99)),
            report::format_cpu(row.baseline.cpu_per_operation_us()),
            report::format_cores(row.baseline.machine_cores_busy()),
            if row.ferry.errors + row.baseline.errors > 0 {
                format!(
                    "  ERRORS {} / {}: {}",
                    row.ferry.errors,
                    row.baseline.errors,
                    row.ferry
                        .first_error
                        .as_deref()
                        .or(row.baseline.first_error.as_deref())
                        .unwrap_or("")
                )
            } else {
                String::new()
            }
        );
        Ok((row, relayed))
    }
}

/// Events the relay published while Ferry was under load (warm-up included), and for how long.
#[derive(Debug, Clone, Copy, Default)]
pub struct Published {
    events: u64,
    seconds: f64,
}

/// How the relay emptied the outbox after the load.
struct Drain {
    /// Events waiting when the load stopped.
    backlog: u64,
    /// Events published until the outbox was empty (or until the time ran out).
    published: u64,
    seconds: f64,
    /// Set when the outbox was not empty in time: the relay's state then (each instance's).
    stalled: Option<String>,
}

/// The relay's counters over all instances: events published (summed) and the outbox's
/// length (the largest answer; over one database every instance sees the same outbox).
async fn relay_totals(client: &reqwest::Client, bases: &[String]) -> anyhow::Result<(u64, u64)> {
    let mut totals = (0, 0);
    for base in bases {
        let (published, lag) = provision::relay_counters(client, base).await?;
        totals = (totals.0 + published, totals.1.max(lag));
    }
    Ok(totals)
}

/// Waits until the relay has emptied the outbox, polling `GET /admin/v1/events` (its `lag`
/// counts the outbox) on each instance.
async fn drain(bases: &[String]) -> anyhow::Result<Drain> {
    let client = load::client(1)?;
    let started = Instant::now();
    let (from, backlog) = relay_totals(&client, bases).await?;
    let mut counters = (from, backlog);
    let mut stalled = None;
    while counters.1 > 0 {
        if started.elapsed() > DRAIN_TIMEOUT {
            let mut states = Vec::new();
            for base in bases {
                states.push(provision::relay_state(&client, base).await?.to_string());
            }
            stalled = Some(states.join("; "));
            break;
        }
        tokio::time::sleep(DRAIN_POLL).await;
        counters = relay_totals(&client, bases).await?;
    }
    Ok(Drain {
        backlog,
        published: counters.0.saturating_sub(from),
        seconds: started.elapsed().as_secs_f64(),
        stalled,
    })
}

/// `redis-benchmark` sending the XADD the relay sends (the fields of the newest event Ferry
/// published), from 50 clients: requests per second.
fn redis_benchmark(socket: &Path) -> anyhow::Result<f64> {
    let newest = Command::new("redis-cli")
        .arg("-s")
        .arg(socket)
        .args(["--json", "XREVRANGE", FERRY_STREAM, "+", "-", "COUNT", "1"])
        .output()
        .context("cannot run redis-cli")?;
    let entries: serde_json::Value = serde_json::from_slice(&newest.stdout).with_context(|| {
        format!(
            "redis-cli answered {:?}",
            String::from_utf8_lossy(&newest.stdout)
        )
    })?;
    let fields: Vec<String> = entries[0][1]
        .as_array()
        .context("no event in Ferry's stream")?
        .iter()
        .filter_map(|field| field.as_str().map(str::to_owned))
        .collect();
    let output = Command::new("redis-benchmark")
        .arg("-s")
        .arg(socket)
        .args([
            "-n",
            &REDIS_BENCHMARK_REQUESTS.to_string(),
            "-c",
            "50",
            "-q",
        ])
        .args([
            "XADD",
            "bench:baseline",
            "MAXLEN",
            "~",
            FERRY_STREAM_MAXLEN,
            "*",
        ])
        .args(&fields)
        .output()
        .context("cannot run redis-benchmark")?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split(['\r', '\n'])
        .filter(|line| line.contains("requests per second"))
        .filter_map(|line| {
            line.split(": ")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<f64>()
                .ok()
        })
        .next_back()
        .with_context(|| format!("no rate in redis-benchmark's output: {text}"))
}

/// Counts the elements of the pending list (checks the staging worked).
async fn pending_count(ferry: &Target) -> anyhow::Result<usize> {
    let client = load::client(1)?;
    let mut request = client.get(format!(
        "{}/v1/data-import/pending-account-import-processes/{}/",
        ferry.base(0),
        scenarios::SUPPLIER
    ));
    if let Some(value) = &ferry.authorization {
        request = request.header(reqwest::header::AUTHORIZATION, value.clone());
    }
    let bytes = request.send().await?.error_for_status()?.bytes().await?;
    let items: Vec<serde::de::IgnoredAny> = serde_json::from_slice(&bytes)?;
    Ok(items.len())
}

/// Measures the supplier's campaign report as an operator reads it: the summary over one
/// connection for `stop`, then every account's row as CSV, three times.
async fn measure_campaign_report(
    ferry: &Target,
    stop: Stop,
) -> anyhow::Result<CampaignReportResult> {
    let token = HeaderValue::from_str(&format!("Token {}", processes::OPERATOR_KEY))?;
    let report: serde_json::Value = load::client(1)?
        .get(format!(
            "{}/admin/v1/suppliers/{}/report",
            ferry.base(0),
            scenarios::SUPPLIER
        ))
        .header(reqwest::header::AUTHORIZATION, token.clone())
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let accounts = report["accounts"]["staged"]
        .as_u64()
        .with_context(|| format!("no staged count in the report: {report}"))?;
    let operator = Target {
        authorization: Some(token),
        ..ferry.clone()
    };
    eprintln!("the campaign report ({accounts} accounts)");
    let summary = load::measure(&operator, &scenarios::campaign_report(), 1, stop).await?;
    let csv = load::measure(
        &operator,
        &scenarios::campaign_report_csv(),
        1,
        Stop::Count(3),
    )
    .await?;
    eprintln!(
        "  summary p99 {} ms, CSV p50 {} ms",
        report::format_ms(summary.latency_at(0.99)),
        report::format_ms(csv.latency_at(0.5))
    );
    Ok(CampaignReportResult {
        accounts,
        summary,
        csv,
    })
}

/// What every deployment of a run shares.
/// A deployment started and provisioned: the supplier (with the example plugin unless
/// `--without-plugin`), its token, and its migrated accounts.
pub struct Provisioned {
    pub deployment: Deployment,
    /// Every instance, as the load reaches them.
    pub ferry: Target,
    pub authorization: HeaderValue,
    pub accounts: Arc<Vec<String>>,
}

/// Starts deployment `number` of `kind` with `binary` in `parent`, and provisions it.
pub async fn start_provisioned(
    args: &RunArgs,
    kind: Kind,
    binary: &Path,
    parent: &Path,
    number: usize,
) -> anyhow::Result<Provisioned> {
    let mut deployment =
        Deployment::start(kind, binary, parent, args.database_url.as_deref(), number)?;
    for (index, instance) in deployment.instances.iter().enumerate() {
        eprintln!(
            "ferry instance {} (pid {}) at {}, logs in {}",
            index + 1,
            instance.process.pid(),
            instance.base,
            instance.log.display()
        );
    }
    eprintln!("redis-server (pid {})", deployment.redis.process.pid());
    let bases = deployment.bases();
    let first = bases.first().context("a deployment has an instance")?;
    let plugin = (!args.without_plugin).then(processes::example_plugin);
    let token = provision::supplier(first, plugin.as_deref()).await?;
    let authorization = HeaderValue::from_str(&format!("Token {token}"))?;
    if plugin.is_some() {
        for base in &bases {
            provision::wait_for_plugin(base, &authorization).await?;
        }
    }
    let pids = deployment.pids();
    let first_instance = Target {
        bases: vec![first.clone()],
        authorization: Some(authorization.clone()),
        pids: pids.iter().take(1).copied().collect(),
        watch_postgres: false,
    };
    let accounts =
        Arc::new(provision::migrated_accounts(&first_instance, args.accounts.max(1)).await?);
    eprintln!(
        "provisioned supplier {} {} and {} migrated accounts",
        scenarios::SUPPLIER,
        if plugin.is_some() {
            "with the example plugin (in use on every instance)"
        } else {
            "without a plugin"
        },
        accounts.len()
    );
    deployment.ensure_running()?;
    Ok(Provisioned {
        ferry: Target {
            bases,
            authorization: Some(authorization.clone()),
            pids,
            watch_postgres: kind != Kind::Sled,
        },
        deployment,
        authorization,
        accounts,
    })
}

struct Bench {
    args: RunArgs,
    ferry_binary: PathBuf,
    /// The run's temporary directory (a directory per deployment inside).
    dir: PathBuf,
    connections: Vec<usize>,
    stop: Stop,
    /// The baseline's address and process.
    baseline_base: String,
    baseline_pid: u32,
}

impl Bench {
    fn selected(&self, key: &str) -> bool {
        self.args.only.is_empty() || self.args.only.iter().any(|only| only == key)
    }

    /// Starts deployment `number` of `kind`, provisions it, measures every selected scenario
    /// against it and the baseline, and stops it.
    async fn measure(&self, kind: Kind, number: usize) -> anyhow::Result<DeploymentResults> {
        let args = &self.args;
        let connections = &self.connections;
        let stop = self.stop;
        eprintln!("== {} ==", kind.title());
        let Provisioned {
            mut deployment,
            ferry,
            authorization,
            accounts,
        } = start_provisioned(args, kind, &self.ferry_binary, &self.dir, number).await?;
        eprintln!(
            "baseline (pid {}) at {}",
            self.baseline_pid, self.baseline_base
        );
        let servers = Servers {
            ferry,
            baseline: Target {
                bases: vec![self.baseline_base.clone()],
                authorization: Some(authorization),
                pids: vec![self.baseline_pid],
                watch_postgres: false,
            },
            client: load::client(1)?,
        };

        let mut rows = Vec::new();
        let mut relay = None;
        for scenario in &scenarios::levelled(&accounts) {
            let measure_relay = scenario.key == "transactions-1000" && self.selected("relay");
            if !self.selected(scenario.key) && !measure_relay {
                continue;
            }
            eprintln!("{}", scenario.title);
            let mut during_load = Published::default();
            for &level in connections {
                let (row, relayed) = servers.measure_both(scenario, level, stop, false).await?;
                during_load.events += relayed.events;
                during_load.seconds += relayed.seconds;
                rows.push(row);
                deployment.ensure_running()?;
            }
            if measure_relay {
                eprintln!("event relay: draining the outbox");
                let drained = drain(&servers.ferry.bases).await?;
                if let Some(state) = &drained.stalled {
                    eprintln!("  the relay did not empty the outbox: {state}");
                }
                relay = Some(RelayResult {
                    backlog: drained.backlog,
                    drained: drained.published,
                    drain_seconds: drained.seconds,
                    stalled: drained.stalled,
                    during_load_per_second: during_load.events as f64
                        / during_load.seconds.max(f64::MIN_POSITIVE),
                    redis_benchmark_per_second: 0.0,
                });
            }
        }

        let mut staging = None;
        let mut campaign_report = None;
        if self.selected("pending-list") {
            eprintln!(
                "staging {} pending accounts over {} connections",
                args.list_accounts, args.staging_connections
            );
            let measurement = load::measure(
                &servers.ferry,
                &scenarios::stage_pending(),
                args.staging_connections,
                Stop::Count(args.list_accounts as u64),
            )
            .await?;
            let rss_after_kib = servers
                .ferry
                .pids
                .iter()
                .map(|&pid| procfs::rss_kib(pid))
                .sum::<anyhow::Result<u64>>()?;
            eprintln!(
                "  {} accounts/s, {} errors, Ferry's resident memory {}",
                report::format_rate(measurement.per_second()),
                measurement.errors,
                report::format_mib(rss_after_kib)
            );
            let mut scenarios_before: Vec<&str> = rows.iter().map(|row| row.key).collect();
            scenarios_before.dedup();
            staging = Some(StagingResult {
                accounts: args.list_accounts as u64,
                connections: args.staging_connections,
                measurement,
                rss_after_kib,
                scenarios_before: scenarios_before.len(),
            });
            let listed = pending_count(&servers.ferry).await?;
            if listed < args.list_accounts {
                bail!(
                    "the pending list has {listed} accounts, expected {}",
                    args.list_accounts
                );
            }
            let scenario = scenarios::pending_list();
            eprintln!("{} ({listed} accounts)", scenario.title);
            for &level in connections {
                rows.push(servers.measure_both(&scenario, level, stop, true).await?.0);
                deployment.ensure_running()?;
            }
            campaign_report = Some(measure_campaign_report(&servers.ferry, stop).await?);
            deployment.ensure_running()?;
        }

        if let Some(relay) = &mut relay {
            relay.redis_benchmark_per_second = redis_benchmark(&deployment.redis.socket)?;
        }
        let campaign = if campaign_selected(args) {
            let settings = campaign::Settings {
                accounts: args.campaign_accounts,
                batches: args.campaign_batches,
                connections: args.campaign_connections.max(1),
            };
            Some(
                campaign::run(
                    &servers.ferry,
                    &mut deployment,
                    settings,
                    args.ledger_transactions,
                )
                .await?,
            )
        } else {
            None
        };
        Ok(DeploymentResults {
            kind,
            rows,
            relay,
            staging,
            campaign_report,
            campaign,
        })
    }
}

/// Whether the campaign runs: only when `--only` names it.
fn campaign_selected(args: &RunArgs) -> bool {
    args.only.iter().any(|only| only == campaign::KEY)
}

/// What the campaign needs of every `ferry` the run starts: a bucket (a directory in `dir`)
/// with the statements' PDFs, and the payment vendor, started here (it serves until dropped).
async fn prepare_campaign(dir: &Path) -> anyhow::Result<Vendor> {
    let bucket = dir.join("bucket");
    campaign::fill_bucket(&bucket, provision::DOCUMENT_ROOT)?;
    let vendor = Vendor::start().await?;
    let mut environment = vendor.server_environment();
    environment.push((
        "FERRY_BUCKET".to_owned(),
        format!("file://{}", bucket.display()),
    ));
    processes::set_server_environment(environment);
    eprintln!(
        "campaign: the statements' PDFs in {}, the payment vendor at {}",
        bucket.display(),
        vendor.url
    );
    Ok(vendor)
}

/// How the measurements were made, one paragraph (the PostgreSQL deployments' own sentence
/// only when there are some).
fn conditions(args: &RunArgs, kinds: &[Kind], machine_cores: usize) -> String {
    // A run of the campaign alone has no levels, no baseline and no scenario accounts.
    let campaign_only = args.only.iter().all(|only| only == campaign::KEY) && !args.only.is_empty();
    let mut text = if campaign_only {
        format!(
            "Closed loop: each connection sends its next request as soon as the previous answer has been read, \
             with the load generator on the same {machine_cores}-core machine."
        )
    } else {
        format!(
            "Closed loop: each connection sends its next request as soon as the previous answer has been read. \
             {} s measured per level after {} s of warm-up (a level goes on until every connection has measured \
             an operation: throughput counts from the first measured operation's start to the last one's end); \
             the baseline and Ferry measured one after the other, level by level, with the load generator on \
             the same {machine_cores}-core machine.",
            args.duration_secs, args.warmup_secs,
        )
    };
    let _ = write!(
        text,
        " Ferry: the release binary on a fresh \
         data directory, rate limit off, {}, the relay writing to a \
         private redis-server (unix socket, no persistence); every 2xx is flushed to disk before it is sent. \
         Every account is staged with {} historical and {} current statement transactions (`--ledger-transactions`), \
         which processing posts.",
        if args.without_plugin {
            "no plugin installed for the supplier (`--without-plugin`)"
        } else {
            "the example plugin installed for the supplier"
        },
        args.ledger_transactions,
        args.ledger_transactions,
    );
    if !campaign_only {
        let _ = write!(
            text,
            " Notes and transactions go to {} migrated accounts (one per connection).",
            args.accounts.max(1)
        );
    }
    text.push_str(
        " Latency: from sending the request to reading the whole answer; an operation of two requests \
         counts once. Server CPU: user + system time of the server process from `/proc`, per successful \
         operation.",
    );
    if campaign_selected(args) {
        text.push_str(
            " The campaign: every `ferry` started with a document bucket of the run's own (a directory holding the \
             statements' PDFs) and a payment vendor served by the benchmark itself, on the same machine, which \
             confirms every instruction at once.",
        );
    }
    if let Some(server) = &args.database_url
        && kinds.iter().any(|kind| *kind != Kind::Sled)
    {
        let _ = write!(
            text,
            " PostgreSQL deployments: N instances of that binary, each on its own data directory, with the same \
             operator key and a redis-server of the deployment's own, over a fresh database on the PostgreSQL \
             server at {} (created for the deployment and dropped after it); provisioned through the first \
             instance{}; connection i of a \
             level sends to instance i mod N. Their server CPU is summed over the instances; PostgreSQL's CPU is that of \
             every `postgres` process on the machine (per process, from the start to the end of the measured \
             window; a process started in between counts from 0), and the machine's busy cores come from \
             `/proc/stat`.",
            deployment::server_address(server),
            if args.without_plugin {
                ""
            } else {
                ", the others measured once they use the plugin installed there"
            }
        );
    }
    text
}

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let command = command_line();
    let kinds = deployment::plan(
        &args.backends,
        args.database_url.as_deref(),
        &args.instances,
    )?;
    let ferry_binary = match &args.ferry {
        Some(path) => path.clone(),
        None => {
            if !args.no_build {
                processes::build_ferry()?;
            }
            processes::ferry_next_to_this_binary()?
        }
    };
    if !args.no_build {
        processes::build_plugins()?;
    }
    if !ferry_binary.is_file() {
        bail!(
            "no ferry binary at {} (cargo build --release -p ferry-host)",
            ferry_binary.display()
        );
    }
    // The instances run in their deployment's directory: a relative path would not hold there.
    let ferry_binary = std::fs::canonicalize(&ferry_binary)
        .with_context(|| format!("cannot resolve {}", ferry_binary.display()))?;
    let run_started = Instant::now();
    let temp = tempfile::Builder::new()
        .prefix("ferry-bench-")
        .disable_cleanup(args.keep_data)
        .tempdir()?;
    let connections: Vec<usize> = args.connections.iter().map(|c| (*c).max(1)).collect();
    let stop = Stop::After {
        warmup: Duration::from_secs_f64(args.warmup_secs.max(0.0)),
        duration: Duration::from_secs_f64(args.duration_secs.max(0.01)),
    };
    if let Some(other) = &args.compare_with {
        let other = std::fs::canonicalize(other)
            .with_context(|| format!("cannot resolve {}", other.display()))?;
        let markdown = crate::compare::run(
            &args,
            &ferry_binary,
            &other,
            temp.path(),
            stop,
            &connections,
        )
        .await?;
        println!("{markdown}");
        eprintln!(
            "the comparison took {:.0} s (after building)",
            run_started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let vendor = if campaign_selected(&args) {
        Some(prepare_campaign(temp.path()).await?)
    } else {
        None
    };
    let (baseline, baseline_base) = processes::start_baseline(args.list_accounts)?;
    let bench = Bench {
        connections,
        stop,
        ferry_binary,
        dir: temp.path().to_owned(),
        baseline_base,
        baseline_pid: baseline.pid(),
        args,
    };

    let mut deployments = Vec::new();
    for (number, kind) in kinds.iter().enumerate() {
        deployments.push(bench.measure(*kind, number + 1).await?);
    }

    let machine = Machine::here(run_started.elapsed());
    let report = Report {
        command,
        conditions: conditions(&bench.args, &kinds, machine.cores),
        deployments,
        list_accounts: bench.args.list_accounts,
        machine,
    };
    let markdown = report.markdown();
    println!("{markdown}");
    eprintln!(
        "the run took {:.0} s (after building)",
        run_started.elapsed().as_secs_f64()
    );
    if let Some(path) = &bench.args.write {
        let document = std::fs::read_to_string(path).unwrap_or_default();
        let section = if bench.args.only.iter().all(|only| only == "campaign")
            && !bench.args.only.is_empty()
        {
            report::Section::Campaign
        } else {
            report::Section::Load
        };
        std::fs::write(path, report::with_results(&document, &markdown, section))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote the results into {}", path.display());
    }
    drop(baseline);
    drop(vendor);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run's arguments as the command line `line` gives them.
    fn run_args(line: &[&str]) -> RunArgs {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            args: RunArgs,
        }
        let line = std::iter::once("ferry-bench").chain(line.iter().copied());
        <Line as clap::Parser>::parse_from(line).args
    }

    #[test]
    fn the_conditions_say_whether_the_supplier_had_the_example_plugin() {
        let with = conditions(&run_args(&[]), &[Kind::Sled], 2);
        assert!(with.contains("the example plugin installed for the supplier"));
        let args = run_args(&["--without-plugin", "--database-url", "postgres://db/x"]);
        let without = conditions(&args, &[Kind::Sled, Kind::Postgres { instances: 1 }], 2);
        assert!(without.contains("no plugin installed for the supplier"));
        assert!(!without.contains("plugin installed there"));
    }

    #[test]
    fn passwords_stay_out_of_the_command_line() {
        assert_eq!(
            without_password("postgres://ferry:secret@db:5432/ferry".into()),
            "postgres://ferry:xxx@db:5432/ferry"
        );
        assert_eq!(
            without_password("--database-url=postgres://u:p@db/x".into()),
            "--database-url=postgres://u:xxx@db/x"
        );
        for kept in [
            "postgres://postgres@127.0.0.1:5432/postgres",
            "--duration-secs=2",
            "1,2",
        ] {
            assert_eq!(without_password(kept.into()), kept);
        }
    }
}
