//! `ferry-bench --compare-with OTHER`: two builds of Ferry side by side on sled, for "before
//! and after" a change. Both run at once, each on its own data directory and Redis, with the
//! supplier provisioned on each. Then each scenario and level is measured in `--pairs`
//! alternating pairs, the order flipped every pair (A B, B A, A B, …), so that a machine whose
//! speed drifts within minutes weighs on both builds alike. No baseline is run: the two builds
//! are compared with each other. The report prints every pair and the means: operations a
//! second, CPU per operation, p99, and on sled the journal's sync and each record's wait until
//! durable, read from each build's `/metrics`.

use crate::RunArgs;
use crate::deployment::Kind;
use crate::load::{self, Stop};
use crate::report::{format_cores, format_cpu, format_ms, format_rate};
use crate::run::{FerryMeasurement, measure_ferry, start_provisioned};
use crate::scenarios;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

/// One scenario at one level: each build's measurements, pair by pair.
#[derive(Debug)]
pub struct Level {
    pub title: &'static str,
    pub connections: usize,
    pub a: Vec<FerryMeasurement>,
    pub b: Vec<FerryMeasurement>,
}

/// Refuses `--only` keys that a comparison does not run: it runs the scenarios measured
/// level by level ([`scenarios::levelled`]); the pending list and the relay need their own
/// set-up.
fn check_scenarios(only: &[String]) -> anyhow::Result<()> {
    let keys = scenarios::levelled(&Arc::default()).map(|scenario| scenario.key);
    match only.iter().find(|key| !keys.contains(&key.as_str())) {
        Some(key) => anyhow::bail!("--compare-with runs {} only, not {key}", keys.join(", ")),
        None => Ok(()),
    }
}

/// Runs the comparison of `a` (the `--ferry` build) with `b` (`--compare-with`): its report,
/// in markdown. Both deployments stop when it returns.
pub async fn run(
    args: &RunArgs,
    a: &Path,
    b: &Path,
    dir: &Path,
    stop: Stop,
    connections: &[usize],
) -> anyhow::Result<String> {
    let pairs = args.pairs.max(1);
    check_scenarios(&args.only)?;
    eprintln!("== A: {} ==", a.display());
    let mut side_a = start_provisioned(args, Kind::Sled, a, &dir.join("a"), 1).await?;
    eprintln!("== B: {} ==", b.display());
    let mut side_b = start_provisioned(args, Kind::Sled, b, &dir.join("b"), 2).await?;
    let client = load::client(1)?;
    let mut levels = Vec::new();
    let scenarios = scenarios::levelled(&side_a.accounts)
        .into_iter()
        .zip(scenarios::levelled(&side_b.accounts));
    for (scenario_a, scenario_b) in scenarios {
        if !args.only.is_empty() && !args.only.iter().any(|only| only == scenario_a.key) {
            continue;
        }
        eprintln!("{}", scenario_a.title);
        for &level in connections {
            let mut measured = Level {
                title: scenario_a.title,
                connections: level,
                a: Vec::new(),
                b: Vec::new(),
            };
            for pair in 0..pairs {
                // A first in even pairs, B first in odd ones.
                for is_a in [pair % 2 == 0, pair % 2 != 0] {
                    let (name, side, scenario, results) = if is_a {
                        ("A", &side_a, &scenario_a, &mut measured.a)
                    } else {
                        ("B", &side_b, &scenario_b, &mut measured.b)
                    };
                    let one = measure_ferry(&client, &side.ferry, scenario, level, stop).await?;
                    eprintln!(
                        "  {:<40} {level:>3} conns, pair {}, {name}: {}",
                        scenario.title,
                        pair + 1,
                        line(&one)
                    );
                    results.push(one);
                }
            }
            levels.push(measured);
            side_a.deployment.ensure_running()?;
            side_b.deployment.ensure_running()?;
        }
    }
    Ok(markdown(a, b, pairs, &levels))
}

/// One measurement on one line, as printed while the comparison runs.
fn line(side: &FerryMeasurement) -> String {
    let measurement = &side.measurement;
    let mut line = format!(
        "{} op/s, {} µs CPU/op, p99 {} ms, machine {} cores busy",
        format_rate(measurement.per_second()),
        format_cpu(measurement.cpu_per_operation_us()),
        format_ms(measurement.latency_at(0.99)),
        format_cores(measurement.machine_cores_busy()),
    );
    if let Some(journal) = side.waits.journal {
        let _ = write!(line, ", {}", journal.summary());
    }
    if measurement.errors > 0 {
        let _ = write!(
            line,
            ", {} ERRORS: {}",
            measurement.errors,
            measurement.first_error.as_deref().unwrap_or("")
        );
    }
    line
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values.fold((0.0, 0usize), |(sum, count), value| {
        (sum + value, count + 1)
    });
    (count > 0).then(|| sum / count as f64)
}

fn micros(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |value| format!("{value:.0}"))
}

/// The comparison as markdown: a table with a row per scenario and level.
pub fn markdown(a: &Path, b: &Path, pairs: usize, levels: &[Level]) -> String {
    let mut out = format!(
        "A: `{}`; B: `{}`. {pairs} alternating pairs a level (A B, then B A, …); each cell gives \
         A → B, means of the pairs, and the B/A column each pair's ratio of operations a second; \
         busy cores: the whole machine's, load generator included, of its cores.\n\n",
        a.display(),
        b.display()
    );
    out.push_str(
        "| endpoint | conns | op/s | B/A op/s, each pair | CPU µs/op | busy cores | p99 ms | sync µs | commit → durable µs |\n\
         |---|---:|---|---|---|---|---|---|---|\n",
    );
    for level in levels {
        let rate = |sides: &[FerryMeasurement]| {
            mean(sides.iter().map(|side| side.measurement.per_second()))
        };
        let cpu = |sides: &[FerryMeasurement]| {
            mean(
                sides
                    .iter()
                    .filter_map(|side| side.measurement.cpu_per_operation_us()),
            )
        };
        let p99 = |sides: &[FerryMeasurement]| {
            mean(
                sides
                    .iter()
                    .filter(|side| side.measurement.operations > 0)
                    .map(|side| side.measurement.latency_at(0.99) as f64),
            )
            .map_or_else(|| "–".into(), |micros| format_ms(micros as u64))
        };
        let busy = |sides: &[FerryMeasurement]| {
            mean(
                sides
                    .iter()
                    .filter_map(|side| side.measurement.machine_cores_busy()),
            )
        };
        let sync =
            |sides: &[FerryMeasurement]| mean(sides.iter().filter_map(FerryMeasurement::sync_us));
        let durable = |sides: &[FerryMeasurement]| {
            mean(sides.iter().filter_map(FerryMeasurement::durable_us))
        };
        let ratios: Vec<String> = level
            .a
            .iter()
            .zip(&level.b)
            .map(|(a, b)| {
                let a = a.measurement.per_second();
                if a > 0.0 {
                    format!("{:.2}", b.measurement.per_second() / a)
                } else {
                    "–".into()
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} → {} | {} | {} → {} | {} → {} | {} → {} | {} → {} | {} → {} |",
            level.title,
            level.connections,
            format_rate(rate(&level.a).unwrap_or(0.0)),
            format_rate(rate(&level.b).unwrap_or(0.0)),
            ratios.join(" / "),
            format_cpu(cpu(&level.a)),
            format_cpu(cpu(&level.b)),
            format_cores(busy(&level.a)),
            format_cores(busy(&level.b)),
            p99(&level.a),
            p99(&level.b),
            micros(sync(&level.a)),
            micros(sync(&level.b)),
            micros(durable(&level.a)),
            micros(durable(&level.b)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Measurement;
    use crate::run::Published;
    use crate::waits::{JournalWaits, Waits};
    use hdrhistogram::Histogram;
    use std::time::Duration;

    /// A measurement of `operations` in one second, each `latency_us` long, with `sync_us` a
    /// round (none: no journal).
    fn side(operations: u64, latency_us: u64, sync_us: Option<u64>) -> FerryMeasurement {
        let mut histogram = Histogram::new_with_bounds(1, 600_000_000, 3).expect("histogram");
        for _ in 0..operations {
            histogram.record(latency_us).expect("in bounds");
        }
        FerryMeasurement {
            measurement: Measurement {
                operations,
                errors: 0,
                first_error: None,
                elapsed: Duration::from_secs(1),
                latency_us: histogram,
                server_cpu_seconds: Some(operations as f64 * 50e-6),
                postgres_cpu_seconds: None,
                machine_cpu_seconds: Some(operations as f64 * 400e-6),
            },
            waits: Waits {
                journal: sync_us.map(|sync| JournalWaits {
                    rounds: 10,
                    records_per_round: 2.0,
                    sync: Duration::from_micros(sync),
                    apply: Duration::from_micros(10),
                    commit_wait: Duration::from_micros(sync * 2),
                }),
                plugin_calls: operations,
                plugin_calls_queued: 0,
                plugin_queue_wait: None,
            },
            relayed: Published::default(),
        }
    }

    #[test]
    fn a_comparison_refuses_the_scenarios_it_does_not_run() {
        assert!(check_scenarios(&[]).is_ok());
        assert!(check_scenarios(&["notes".into(), "stage-process".into()]).is_ok());
        let error = check_scenarios(&["notes".into(), "pending-list".into()])
            .expect_err("refused")
            .to_string();
        assert!(error.ends_with("not pending-list"), "{error}");
    }

    #[test]
    fn a_level_gives_each_pairs_ratio_and_the_means_of_both_builds() {
        let levels = [
            Level {
                title: "notes/create (1 note)",
                connections: 8,
                a: vec![side(1000, 500, Some(150)), side(3000, 700, Some(130))],
                b: vec![side(1500, 300, Some(90)), side(3000, 500, Some(70))],
            },
            Level {
                title: "account-transfer-status",
                connections: 1,
                a: vec![side(100, 100, None)],
                b: vec![side(0, 100, None)],
            },
        ];
        let table = markdown(Path::new("before"), Path::new("after"), 2, &levels);
        assert!(
            table.starts_with("A: `before`; B: `after`. 2 alternating pairs"),
            "{table}"
        );
        assert!(
            table.contains(
                "| notes/create (1 note) | 8 | 2000 → 2250 | 1.50 / 1.00 | 50.0 → 50.0 | 0.80 → 0.90 | 0.600 → 0.400 | 140 → 80 | 280 → 160 |"
            ),
            "{table}"
        );
        // No journal (a read), and a build that made nothing.
        assert!(
            table.contains("| account-transfer-status | 1 | 100 → 0.0 | 0.00 | 50.0 → – | 0.04 → 0.00 | 0.100 → – | – → – | – → – |"),
            "{table}"
        );
    }
}
