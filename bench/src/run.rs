//! One benchmark run, in order: build and start everything, provision, then for each scenario
//! and concurrency level measure the baseline and Ferry one after the other; after the
//! 1000-transaction batches, time the relay draining the outbox; stage the pending accounts
//! and measure the pending list with both servers' memory watched; run `redis-benchmark` for
//! the relay's baseline; print the report (and write it with `--write`).

use crate::RunArgs;
use crate::load::{self, Stop, Target};
use crate::processes::{self, Ferry, Redis};
use crate::procfs::RssWatch;
use crate::provision;
use crate::report::{self, RelayResult, Report, Row, StagingResult};
use crate::scenarios::{self, Scenario};
use anyhow::{Context, bail};
use reqwest::header::HeaderValue;
use std::path::Path;
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

/// The command line that made the figures, as a reader would type it.
fn command_line() -> String {
    let args: Vec<String> = std::env::args()
        .skip(1)
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

/// The value of an unlabelled counter in a Prometheus text exposition.
pub fn prometheus_counter(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        rest.strip_prefix(' ')?.trim().parse().ok()
    })
}

struct Servers {
    ferry: Target,
    baseline: Target,
    /// For the relay's counter.
    client: reqwest::Client,
}

impl Servers {
    /// One scenario at one level: the baseline first, then Ferry, each with its memory
    /// watched when `watch_memory`.
    async fn measure_both(
        &self,
        scenario: &Scenario,
        connections: usize,
        stop: Stop,
        watch_memory: bool,
    ) -> anyhow::Result<(Row, Published)> {
        let mut measured = Vec::new();
        let mut growth = Vec::new();
        let mut relayed = Published::default();
        for target in [&self.baseline, &self.ferry] {
            let watch = watch_memory
                .then(|| RssWatch::begin(target.pid))
                .transpose()?;
            let is_ferry = std::ptr::eq(target, &self.ferry);
            let before = if is_ferry {
                published(&self.client, &target.base).await?
            } else {
                0
            };
            let started = Instant::now();
            measured.push(load::measure(target, &scenario.generator, connections, stop).await?);
            if is_ferry {
                let after = published(&self.client, &target.base).await?;
                relayed.events += after.saturating_sub(before);
                relayed.seconds += started.elapsed().as_secs_f64();
            }
            if let Some(watch) = watch {
                growth.push(watch.end()?);
            }
        }
        let ferry = measured.pop().context("Ferry was measured")?;
        let baseline = measured.pop().context("the baseline was measured")?;
        let row = Row {
            key: scenario.key,
            title: scenario.title,
            connections,
            items_per_operation: scenario.items_per_operation,
            rss: match growth.as_slice() {
                [baseline, ferry] => Some((*ferry, *baseline)),
                _ => None,
            },
            ferry,
            baseline,
        };
        eprintln!(
            "  {:<40} {:>3} conns: Ferry {:>9} op/s p99 {:>7} ms {:>7} µs CPU/op {:.2} cores | baseline {:>9} op/s p99 {:>7} ms {:>7} µs CPU/op{}",
            row.title,
            connections,
            report::format_rate(row.ferry.per_second()),
            report::format_ms(row.ferry.latency_at(0.99)),
            report::format_cpu(row.ferry.cpu_per_operation_us()),
            row.ferry.server_cores_busy().unwrap_or(0.0),
            report::format_rate(row.baseline.per_second()),
            report::format_ms(row.baseline.latency_at(0.99)),
            report::format_cpu(row.baseline.cpu_per_operation_us()),
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
struct Published {
    events: u64,
    seconds: f64,
}

/// Events the relay has published since Ferry started (`ferry_events_published_total`).
async fn published(client: &reqwest::Client, base: &str) -> anyhow::Result<u64> {
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    Ok(prometheus_counter(&text, "ferry_events_published_total").unwrap_or(0.0) as u64)
}

/// How the relay emptied the outbox after the load.
struct Drain {
    /// Events waiting when the load stopped.
    backlog: u64,
    /// Events published until the outbox was empty (or until the time ran out).
    published: u64,
    seconds: f64,
    /// Set when the outbox was not empty in time: the relay's state then.
    stalled: Option<String>,
}

/// Waits until the relay has emptied the outbox, polling `GET /admin/v1/events` (its `lag`
/// counts the outbox).
async fn drain(base: &str) -> anyhow::Result<Drain> {
    let client = load::client(1)?;
    let started = Instant::now();
    let (from, backlog) = provision::relay_counters(&client, base).await?;
    let mut counters = (from, backlog);
    let mut stalled = None;
    while counters.1 > 0 {
        if started.elapsed() > DRAIN_TIMEOUT {
            stalled = Some(provision::relay_state(&client, base).await?.to_string());
            break;
        }
        tokio::time::sleep(DRAIN_POLL).await;
        counters = provision::relay_counters(&client, base).await?;
    }
    Ok(Drain {
        backlog,
        published: counters.0 - from,
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
        ferry.base,
        scenarios::SUPPLIER
    ));
    if let Some(value) = &ferry.authorization {
        request = request.header(reqwest::header::AUTHORIZATION, value.clone());
    }
    let bytes = request.send().await?.error_for_status()?.bytes().await?;
    let items: Vec<serde::de::IgnoredAny> = serde_json::from_slice(&bytes)?;
    Ok(items.len())
}

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let command = command_line();
    let selected = |key: &str| args.only.is_empty() || args.only.iter().any(|only| only == key);
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
    let run_started = Instant::now();
    let connections: Vec<usize> = args.connections.iter().map(|c| (*c).max(1)).collect();
    let stop = Stop::After {
        warmup: Duration::from_secs_f64(args.warmup_secs.max(0.0)),
        duration: Duration::from_secs_f64(args.duration_secs.max(0.01)),
    };

    let temp = tempfile::Builder::new()
        .prefix("ferry-bench-")
        .disable_cleanup(args.keep_data)
        .tempdir()?;
    let redis = Redis::start(temp.path())?;
    let mut ferry = Ferry::start(&ferry_binary, &temp.path().join("data"), &redis)?;
    let (baseline, baseline_base) = processes::start_baseline(args.list_accounts)?;
    eprintln!(
        "ferry (pid {}) at {}, logs in {}; baseline (pid {}) at {baseline_base}; redis-server (pid {})",
        ferry.process.pid(),
        ferry.base,
        ferry.log.display(),
        baseline.pid(),
        redis.process.pid()
    );

    let token = provision::supplier_with_plugin(&ferry.base, &processes::example_plugin()).await?;
    let authorization = HeaderValue::from_str(&format!("Token {token}"))?;
    let servers = Servers {
        ferry: Target {
            base: ferry.base.clone(),
            authorization: Some(authorization.clone()),
            pid: ferry.process.pid(),
        },
        baseline: Target {
            base: baseline_base,
            authorization: Some(authorization),
            pid: baseline.pid(),
        },
        client: load::client(1)?,
    };
    let accounts =
        Arc::new(provision::migrated_accounts(&servers.ferry, args.accounts.max(1)).await?);
    eprintln!(
        "provisioned supplier {} with the example plugin and {} migrated accounts",
        scenarios::SUPPLIER,
        accounts.len()
    );

    let mut rows = Vec::new();
    let mut relay = None;
    let scenarios = [
        scenarios::notes(accounts.clone()),
        scenarios::transactions_batch(accounts.clone(), 1),
        scenarios::transactions_batch(accounts.clone(), 1000),
        scenarios::stage_and_process(),
        scenarios::transfer_status(accounts.clone()),
    ];
    for scenario in &scenarios {
        let measure_relay = scenario.key == "transactions-1000" && selected("relay");
        if !selected(scenario.key) && !measure_relay {
            continue;
        }
        eprintln!("{}", scenario.title);
        let mut during_load = Published::default();
        for &level in &connections {
            let (row, relayed) = servers.measure_both(scenario, level, stop, false).await?;
            during_load.events += relayed.events;
            during_load.seconds += relayed.seconds;
            rows.push(row);
            ferry.process.ensure_running().with_context(|| {
                format!("its log: {} (kept with --keep-data)", ferry.log.display())
            })?;
        }
        if measure_relay {
            eprintln!("event relay: draining the outbox");
            let drained = drain(&servers.ferry.base).await?;
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
    if selected("pending-list") {
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
        eprintln!(
            "  {} accounts/s, {} errors",
            report::format_rate(measurement.per_second()),
            measurement.errors
        );
        staging = Some(StagingResult {
            accounts: args.list_accounts as u64,
            connections: args.staging_connections,
            measurement,
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
        for &level in &connections {
            rows.push(servers.measure_both(&scenario, level, stop, true).await?.0);
            ferry.process.ensure_running().with_context(|| {
                format!("its log: {} (kept with --keep-data)", ferry.log.display())
            })?;
        }
    }

    if let Some(relay) = &mut relay {
        relay.redis_benchmark_per_second = redis_benchmark(&redis.socket)?;
    }

    let report = Report {
        command,
        conditions: format!(
            "Closed loop: each connection sends its next request as soon as the previous answer has been read. \
             {} s measured per level after {} s of warm-up (a level goes on until every connection has measured \
             an operation: throughput counts from the first measured operation's start to the last one's end); \
             the baseline and Ferry measured one after the other, level by level, with the load generator on \
             the same {}-core machine. Ferry: the release binary on a fresh \
             data directory, rate limit off, the example plugin installed for the supplier, the relay writing to a \
             private redis-server (unix socket, no persistence); every 2xx is flushed to disk before it is sent. \
             Notes and transactions go to {} migrated accounts (one per connection). Latency: from sending the \
             request to reading the whole answer; an operation of two requests counts once. Server CPU: user + system \
             time of the server process from `/proc`, per successful operation.",
            args.duration_secs,
            args.warmup_secs,
            std::thread::available_parallelism().map_or(0, usize::from),
            accounts.len(),
        ),
        rows,
        relay,
        staging,
        list_accounts: args.list_accounts,
    };
    let markdown = report.markdown();
    println!("{markdown}");
    eprintln!(
        "the run took {:.0} s (after building)",
        run_started.elapsed().as_secs_f64()
    );
    if let Some(path) = &args.write {
        let document = std::fs::read_to_string(path).unwrap_or_default();
        std::fs::write(path, report::with_results(&document, &markdown))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote the results into {}", path.display());
    }
    drop(baseline);
    drop(ferry);
    drop(redis);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_counter_from_prometheus_text() {
        let text = "# TYPE ferry_events_published_total counter\nferry_events_published_total 1234\nferry_events_published_total_other 9\n";
        assert_eq!(
            prometheus_counter(text, "ferry_events_published_total"),
            Some(1234.0)
        );
        assert_eq!(prometheus_counter(text, "missing"), None);
    }
}
