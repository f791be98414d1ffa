//! The results as markdown: the command, the machine and source it ran on, the conditions;
//! then for each deployment (sled; PostgreSQL with N instances) one row per endpoint and
//! concurrency level with Ferry's figures, the baseline's and their ratio; the pending list's
//! memory, the relay, the bulk staging; and the targets, each marked met or missed. With more
//! than the sled deployment, a heading per deployment and a comparison: Ferry's throughput on
//! each side by side, what each further instance buys, and where the CPU goes (Ferry,
//! PostgreSQL, the whole machine). `--write` puts the results into a markdown file
//! (`BENCHMARKS.md`) between two markers, replacing the run before and nothing else, so the
//! hand-written part around them stays. A campaign (`--only campaign`) adds its tables and
//! targets to its deployment's ([`crate::campaign`] makes them), and with more than one
//! deployment its accounts an hour side by side.

use crate::campaign::CampaignResult;
use crate::deployment::Kind;
use crate::load::Measurement;
use crate::machine::Machine;
use crate::procfs::RssGrowth;
use crate::waits::Waits;
use std::fmt::Write;

/// The heading the results go under when the file has no markers yet.
pub const SECTION_HEADING: &str = "## The latest run";
const BEGIN_MARKER: &str = "<!-- ferry-bench results: begin (written by `ferry-bench --write`) -->";
const END_MARKER: &str = "<!-- ferry-bench results: end -->";

/// One endpoint at one concurrency level, on both servers.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: &'static str,
    pub title: &'static str,
    pub connections: usize,
    pub items_per_operation: u64,
    pub ferry: Measurement,
    pub baseline: Measurement,
    /// The lists only: what they did to each server's resident memory.
    pub rss: Option<(RssGrowth, RssGrowth)>,
    /// Where Ferry's requests waited, from its `/metrics` (none when they were not read).
    pub waits: Option<Waits>,
}

/// The relay carrying a backlog to Redis, next to `redis-benchmark` sending the same XADD.
#[derive(Debug, Clone)]
pub struct RelayResult {
    /// Events waiting when the load stopped.
    pub backlog: u64,
    pub drained: u64,
    pub drain_seconds: f64,
    /// The outbox was not empty in time: the relay's state then.
    pub stalled: Option<String>,
    /// Events published per second while the 1000-transaction load ran.
    pub during_load_per_second: f64,
    pub redis_benchmark_per_second: f64,
}

impl RelayResult {
    pub fn drain_per_second(&self) -> f64 {
        if self.drain_seconds > 0.0 {
            self.drained as f64 / self.drain_seconds
        } else {
            0.0
        }
    }
}

/// Staging the pending accounts the list is measured over.
#[derive(Debug, Clone)]
pub struct StagingResult {
    pub accounts: u64,
    pub connections: usize,
    pub measurement: Measurement,
    /// Ferry's resident memory right after (summed over its instances), in KiB.
    pub rss_after_kib: u64,
    /// The scenarios measured on the same server before it staged (none: a fresh server).
    pub scenarios_before: usize,
}

/// The supplier's campaign report, read once the pending accounts are staged: its summary
/// over one connection, and every account's row as CSV.
#[derive(Debug, Clone)]
pub struct CampaignReportResult {
    /// The supplier's accounts (pending and migrated).
    pub accounts: u64,
    pub summary: Measurement,
    pub csv: Measurement,
}

/// One deployment's figures.
#[derive(Debug, Clone)]
pub struct DeploymentResults {
    pub kind: Kind,
    pub rows: Vec<Row>,
    pub relay: Option<RelayResult>,
    pub staging: Option<StagingResult>,
    pub campaign_report: Option<CampaignReportResult>,
    /// The campaign scenario, when it ran.
    pub campaign: Option<CampaignResult>,
}

#[derive(Debug, Clone)]
pub struct Report {
    /// The command that made the figures.
    pub command: String,
    /// How long each level ran etc., one paragraph.
    pub conditions: String,
    pub deployments: Vec<DeploymentResults>,
    pub list_accounts: usize,
    /// What the run was made on (its cores are the ceiling of the busy-cores figures).
    pub machine: Machine,
}

/// `12 345` above ten thousand, `1 234`, `123`, `12.3` below a hundred.
pub fn format_rate(per_second: f64) -> String {
    if !per_second.is_finite() {
        return "–".into();
    }
    if per_second < 100.0 {
        return format!("{per_second:.1}");
    }
    let digits = format!("{:.0}", per_second);
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 && digits.len() > 4 {
            grouped.push(' ');
        }
        grouped.push(digit);
    }
    grouped
}

/// Microseconds as milliseconds with about three significant digits.
pub fn format_ms(micros: u64) -> String {
    let millis = micros as f64 / 1000.0;
    if millis < 1.0 {
        format!("{millis:.3}")
    } else if millis < 10.0 {
        format!("{millis:.2}")
    } else if millis < 100.0 {
        format!("{millis:.1}")
    } else {
        format!("{millis:.0}")
    }
}

/// `ours / theirs` with two decimals (`–` when there is nothing to divide by).
pub fn format_ratio(ours: f64, theirs: f64) -> String {
    if theirs > 0.0 && ours.is_finite() {
        format!("{:.2}", ours / theirs)
    } else {
        "–".into()
    }
}

/// A count of things: whole, grouped in threes as rates are.
pub fn format_count(count: u64) -> String {
    if count < 100 {
        count.to_string()
    } else {
        format_rate(count as f64)
    }
}

/// CPU microseconds per operation, about three significant digits.
pub fn format_cpu(micros: Option<f64>) -> String {
    match micros {
        Some(micros) if micros < 10.0 => format!("{micros:.1}"),
        Some(micros) => format_rate(micros),
        None => "–".into(),
    }
}

/// Cores kept busy, two decimals (`–`: not measured).
pub fn format_cores(cores: Option<f64>) -> String {
    cores.map_or_else(|| "–".to_owned(), |cores| format!("{cores:.2}"))
}

pub fn format_mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// `p50 / p99 / p99.9` in milliseconds.
pub fn percentiles(measurement: &Measurement) -> String {
    format!(
        "{} / {} / {}",
        format_ms(measurement.latency_at(0.5)),
        format_ms(measurement.latency_at(0.99)),
        format_ms(measurement.latency_at(0.999))
    )
}

fn with_errors(rate: String, measurement: &Measurement) -> String {
    if measurement.errors > 0 {
        format!("{rate} ({} errors)", measurement.errors)
    } else {
        rate
    }
}

fn met(yes: bool) -> &'static str {
    if yes { "**met**" } else { "**missed**" }
}

/// One of the targets, judged on one deployment's figures.
#[derive(Debug, Clone)]
pub struct Judged {
    pub target: String,
    pub measured: String,
    pub met: bool,
}

/// Ferry's throughput over the baseline's, in a row.
fn ratio_of(row: &Row) -> f64 {
    row.ferry.per_second() / row.baseline.per_second().max(f64::MIN_POSITIVE)
}

/// Ferry's p99 latency over the baseline's, in a row.
fn p99_ratio(row: &Row) -> f64 {
    row.ferry.latency_at(0.99) as f64 / (row.baseline.latency_at(0.99) as f64).max(1.0)
}

/// `" (the highest of 3 levels)"`, or nothing for a single level.
fn of_levels(levels: usize, which: &str) -> String {
    if levels > 1 {
        format!(" ({which} of {levels} levels)")
    } else {
        String::new()
    }
}

/// Ferry's operations per second of a row, with items per second for batches.
fn ferry_rate(row: &Row) -> String {
    let rate = format_rate(row.ferry.per_second());
    let rate = if row.items_per_operation > 1 {
        let items = row.ferry.per_second() * row.items_per_operation as f64;
        format!("{rate} ({} items/s)", format_rate(items))
    } else {
        rate
    };
    with_errors(rate, &row.ferry)
}

/// Ferry's and PostgreSQL's CPU per operation and the machine's busy cores, of Ferry's
/// measurement in a row: `381 / 410, 1.93`.
fn cpu_split(row: &Row) -> String {
    format!(
        "{} / {}, {}",
        format_cpu(row.ferry.cpu_per_operation_us()),
        format_cpu(row.ferry.postgres_cpu_per_operation_us()),
        format_cores(row.ferry.machine_cores_busy())
    )
}

impl Report {
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Command: `{}`\n", self.command);
        let _ = writeln!(out, "{}\n", self.machine.describe());
        let _ = writeln!(out, "{}\n", self.conditions);
        let sled_campaign = self
            .deployments
            .iter()
            .find(|deployment| deployment.kind == Kind::Sled)
            .and_then(|deployment| deployment.campaign.as_ref());
        match self.deployments.as_slice() {
            [only] if only.kind == Kind::Sled => {
                only.tables(self.list_accounts, sled_campaign, &mut out);
            }
            deployments => {
                for deployment in deployments {
                    let _ = writeln!(out, "### {}\n", deployment.kind.title());
                    deployment.tables(self.list_accounts, sled_campaign, &mut out);
                    if !out.ends_with("\n\n") {
                        out.push('\n');
                    }
                }
                self.comparison_table(&mut out);
                self.campaigns_compared(&mut out);
            }
        }
        out
    }

    /// Each deployment's campaign: accounts an hour, against sled's, and its slowest phase.
    fn campaigns_compared(&self, out: &mut String) {
        let campaigns: Vec<(Kind, &CampaignResult)> = self
            .deployments
            .iter()
            .filter_map(|deployment| Some((deployment.kind, deployment.campaign.as_ref()?)))
            .collect();
        if campaigns.len() < 2 {
            return;
        }
        let sled = campaigns
            .iter()
            .find(|(kind, _)| *kind == Kind::Sled)
            .map(|(_, campaign)| campaign.accounts_an_hour());
        let _ = writeln!(out, "### Campaigns compared\n");
        let _ = writeln!(
            out,
            "| deployment | accounts | accounts an hour | against sled | slowest phase (its share of the time) | Ferry RSS at the end |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---|---:|");
        for (kind, campaign) in campaigns {
            let slowest = campaign
                .summaries()
                .into_iter()
                .max_by(|a, b| a.share.total_cmp(&b.share))
                .map_or_else(
                    || "–".to_owned(),
                    |summary| {
                        format!(
                            "{} ({:.0} %)",
                            crate::campaign::PHASES[summary.phase].key,
                            summary.share * 100.0
                        )
                    },
                );
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {slowest} | {} |",
                kind.title(),
                format_count(campaign.accounts()),
                format_rate(campaign.accounts_an_hour()),
                sled.map_or_else(
                    || "–".to_owned(),
                    |sled| format_ratio(campaign.accounts_an_hour(), sled)
                ),
                campaign
                    .batches
                    .last()
                    .map_or_else(|| "–".to_owned(), |end| format_mib(end.rss_kib)),
            );
        }
        out.push('\n');
    }

    /// Ferry on every deployment side by side, level by level; each PostgreSQL deployment's
    /// throughput over the one before (what the further instances buy); the CPU split.
    fn comparison_table(&self, out: &mut String) {
        let Some(first) = self.deployments.first() else {
            return;
        };
        // Nothing but the campaign measured: it has a comparison of its own.
        if first.rows.is_empty() {
            return;
        }
        let postgres: Vec<&DeploymentResults> = self
            .deployments
            .iter()
            .filter(|deployment| deployment.kind != Kind::Sled)
            .collect();
        let steps: Vec<(&DeploymentResults, &DeploymentResults)> = postgres
            .iter()
            .copied()
            .zip(postgres.iter().copied().skip(1))
            .collect();
        let step_label = |(fewer, more): (&DeploymentResults, &DeploymentResults)| {
            format!("×{} / ×{}", more.kind.instances(), fewer.kind.instances())
        };
        let _ = writeln!(out, "### Deployments compared\n");
        let mut intro =
            String::from("Ferry's throughput on each deployment (op/s, as in the tables above)");
        for &step in &steps {
            let (fewer, more) = (step.0.kind.instances(), step.1.kind.instances());
            let _ = write!(
                intro,
                "; `{}`: Ferry's op/s on PostgreSQL with {more} instances over its op/s with {fewer} \
                 (what going from {fewer} to {more} instances buys)",
                step_label(step)
            );
        }
        let _ = writeln!(
            out,
            "{intro}. CPU: Ferry's µs per operation (summed over its instances) / PostgreSQL's \
             (every `postgres` process on the machine), and the cores the whole machine kept busy \
             over the measured window (of {}, load generator included).\n",
            self.machine.cores
        );
        let mut header = String::from("| endpoint | conns |");
        let mut alignment = String::from("|---|---:|");
        for deployment in &self.deployments {
            let _ = write!(header, " {} op/s |", deployment.kind.label());
            alignment.push_str("---:|");
        }
        for &step in &steps {
            let _ = write!(header, " {} |", step_label(step));
            alignment.push_str("---:|");
        }
        for deployment in &self.deployments {
            let _ = write!(
                header,
                " {}: CPU µs/op Ferry / PostgreSQL, busy cores |",
                deployment.kind.label()
            );
            alignment.push_str("---:|");
        }
        let _ = writeln!(out, "{header}\n{alignment}");
        for row in &first.rows {
            let matching: Vec<Option<&Row>> = self
                .deployments
                .iter()
                .map(|deployment| deployment.row(row.key, row.connections))
                .collect();
            let mut line = format!("| {} | {} |", row.title, row.connections);
            for found in &matching {
                let _ = write!(
                    line,
                    " {} |",
                    found.map_or_else(|| "–".to_owned(), ferry_rate)
                );
            }
            for &(fewer, more) in &steps {
                let ratio = match (
                    fewer.row(row.key, row.connections),
                    more.row(row.key, row.connections),
                ) {
                    (Some(fewer), Some(more)) => {
                        format_ratio(more.ferry.per_second(), fewer.ferry.per_second())
                    }
                    _ => "–".into(),
                };
                let _ = write!(line, " {ratio} |");
            }
            for found in &matching {
                let _ = write!(
                    line,
                    " {} |",
                    found.map_or_else(|| "–".to_owned(), cpu_split)
                );
            }
            let _ = writeln!(out, "{line}");
        }
        out.push('\n');
    }
}

impl DeploymentResults {
    /// The row of `key` at exactly `connections`.
    fn row(&self, key: &str, connections: usize) -> Option<&Row> {
        self.rows
            .iter()
            .find(|row| row.key == key && row.connections == connections)
    }

    /// The row of `key` at the level closest to `connections`.
    fn row_near(&self, key: &str, connections: usize) -> Option<&Row> {
        self.rows
            .iter()
            .filter(|row| row.key == key)
            .min_by_key(|row| row.connections.abs_diff(connections))
    }

    /// The tables of one deployment; `sled_campaign` is the run's campaign on sled, which a
    /// campaign on PostgreSQL is judged against.
    fn tables(
        &self,
        list_accounts: usize,
        sled_campaign: Option<&CampaignResult>,
        out: &mut String,
    ) {
        self.throughput_table(out);
        self.waits_table(out);
        self.list_memory_table(list_accounts, out);
        self.relay_table(out);
        self.staging_line(out);
        self.campaign_report_line(out);
        if let Some(campaign) = &self.campaign {
            campaign.tables(out);
        }
        self.targets_table(list_accounts, sled_campaign, out);
        self.errors(out);
    }

    fn throughput_table(&self, out: &mut String) {
        if self.rows.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "| endpoint | conns | Ferry op/s | baseline op/s | ratio | Ferry p50 / p99 / p99.9 (ms) | baseline p50 / p99 / p99.9 (ms) | p99 ratio | server CPU µs/op Ferry / baseline |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---|---|---:|---:|");
        for row in &self.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} / {} |",
                row.title,
                row.connections,
                ferry_rate(row),
                with_errors(format_rate(row.baseline.per_second()), &row.baseline),
                format_ratio(row.ferry.per_second(), row.baseline.per_second()),
                percentiles(&row.ferry),
                percentiles(&row.baseline),
                format_ratio(
                    row.ferry.latency_at(0.99) as f64,
                    row.baseline.latency_at(0.99) as f64
                ),
                format_cpu(row.ferry.cpu_per_operation_us()),
                format_cpu(row.baseline.cpu_per_operation_us()),
            );
        }
        out.push('\n');
    }

    /// Where Ferry's requests waited, level by level: the journal's rounds (sled) and the
    /// plugin calls that queued for a slot. Levels that wrote nothing and called no plugin
    /// (the reads) are left out.
    fn waits_table(&self, out: &mut String) {
        let rows: Vec<(&Row, &Waits)> = self
            .rows
            .iter()
            .filter_map(|row| Some((row, row.waits.as_ref()?)))
            .filter(|(_, waits)| waits.journal.is_some() || waits.plugin_calls > 0)
            .collect();
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "Where Ferry's requests waited, from its `/metrics` over each level's warm-up and measurement: \
             the journal writer's rounds (sled only: records a round, the mean write and its sync \
             and making the round in sled, and the mean time from a record's commit until it \
             was durable), and the plugin calls that found every slot of their supplier taken \
             (their share of the calls, and their mean wait for a slot):\n"
        );
        let _ = writeln!(
            out,
            "| endpoint | conns | journal rounds | records a round | write + sync µs | made in sled µs | commit → durable µs | plugin calls queued | their wait µs |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        let micros = |duration: std::time::Duration| format!("{:.0}", duration.as_secs_f64() * 1e6);
        for (row, waits) in rows {
            let journal = match waits.journal {
                Some(journal) => format!(
                    "{} | {:.2} | {} | {} | {}",
                    format_count(journal.rounds),
                    journal.records_per_round,
                    micros(journal.sync),
                    micros(journal.apply),
                    micros(journal.commit_wait)
                ),
                None => "– | – | – | – | –".into(),
            };
            let queued = if waits.plugin_calls > 0 {
                format!(
                    "{:.1} %",
                    100.0 * waits.plugin_calls_queued as f64 / waits.plugin_calls as f64
                )
            } else {
                "–".into()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {journal} | {queued} | {} |",
                row.title,
                row.connections,
                waits.plugin_queue_wait.map_or_else(|| "–".into(), micros),
            );
        }
        out.push('\n');
    }

    fn list_memory_table(&self, list_accounts: usize, out: &mut String) {
        let lists: Vec<&Row> = self.rows.iter().filter(|row| row.rss.is_some()).collect();
        if lists.is_empty() {
            return;
        }
        let instances = self.kind.instances();
        let _ = writeln!(
            out,
            "Peak resident memory growth while listing {} pending accounts (VmHWM after a reset, and VmRSS sampled every 2 ms, over the level's warm-up and measurement{}):\n",
            format_count(list_accounts as u64),
            if instances > 1 {
                format!(
                    "; Ferry's figures are the sums over its {instances} instances, each with its own peak"
                )
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "| conns | Ferry RSS before | Ferry peak growth | baseline RSS before | baseline peak growth |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|");
        for row in lists {
            if let Some((ferry, baseline)) = row.rss {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    row.connections,
                    format_mib(ferry.before_kib),
                    format_mib(ferry.growth_kib()),
                    format_mib(baseline.before_kib),
                    format_mib(baseline.growth_kib()),
                );
            }
        }
        out.push('\n');
    }

    fn relay_table(&self, out: &mut String) {
        let Some(relay) = &self.relay else { return };
        let _ = writeln!(
            out,
            "Event relay to Redis (the `billing.ledger.entry_posted` events of the transactions above; {} were waiting in the outbox when the load stopped):\n",
            format_count(relay.backlog)
        );
        let _ = writeln!(out, "| | events/s |");
        let _ = writeln!(out, "|---|---:|");
        match &relay.stalled {
            // Nothing to time: the relay had kept up with the load.
            None if relay.backlog == 0 => {
                let _ = writeln!(
                    out,
                    "| relay, draining the outbox after the load: nothing was waiting, it kept up | – |"
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "| relay, draining the outbox after the load ({} events) | {} |",
                    format_count(relay.drained),
                    format_rate(relay.drain_per_second())
                );
            }
            Some(state) => {
                let _ = writeln!(
                    out,
                    "| relay, draining the outbox after the load: **stalled**, {} of {} events published in {:.0} s; relay state `{}` | – |",
                    format_count(relay.drained),
                    format_count(relay.backlog),
                    relay.drain_seconds,
                    state.replace('|', "/")
                );
            }
        }
        let _ = writeln!(
            out,
            "| relay, while the 1000-transaction load ran | {} |",
            format_rate(relay.during_load_per_second)
        );
        let _ = writeln!(
            out,
            "| redis-benchmark, the same XADD (50 clients, no pipelining) | {} |",
            format_rate(relay.redis_benchmark_per_second)
        );
        // Only a drain that ran and finished is compared.
        let ratio = if relay.stalled.is_none() && relay.backlog > 0 {
            format_ratio(relay.drain_per_second(), relay.redis_benchmark_per_second)
        } else {
            "–".to_owned()
        };
        let _ = writeln!(
            out,
            "| ratio relay (draining) / redis-benchmark | {ratio} |\n"
        );
    }

    fn staging_line(&self, out: &mut String) {
        let Some(staging) = &self.staging else { return };
        let _ = writeln!(
            out,
            "Staging the {} pending accounts first (create-or-update, {} connections): {} accounts/s, p50 / p99 / p99.9 {} ms{}. Ferry's resident memory right after: {}, {}.\n",
            format_count(staging.accounts),
            staging.connections,
            format_rate(staging.measurement.per_second()),
            percentiles(&staging.measurement),
            if staging.measurement.errors > 0 {
                format!(", {} errors", staging.measurement.errors)
            } else {
                String::new()
            },
            format_mib(staging.rss_after_kib),
            self.staging_server(staging),
        );
    }

    fn campaign_report_line(&self, out: &mut String) {
        let Some(report) = &self.campaign_report else {
            return;
        };
        let errors = |measurement: &Measurement| {
            if measurement.errors > 0 {
                format!(", {} errors", measurement.errors)
            } else {
                String::new()
            }
        };
        let _ = writeln!(
            out,
            "The campaign report of the supplier, {} accounts: the summary (`GET /admin/v1/suppliers/BENCH/report`, 1 connection) {} reports/s, p50 / p99 / p99.9 {} ms{}; every account's row as CSV, {} ms{}.\n",
            format_count(report.accounts),
            format_rate(report.summary.per_second()),
            percentiles(&report.summary),
            errors(&report.summary),
            format_ms(report.csv.latency_at(0.5)),
            errors(&report.csv),
        );
    }

    /// What the server that staged had done before: the condition of its memory figure.
    fn staging_server(&self, staging: &StagingResult) -> String {
        let instances = self.kind.instances();
        let server = if instances > 1 {
            format!("summed over {instances} instances")
        } else {
            "of a server".to_owned()
        };
        match staging.scenarios_before {
            0 => format!("{server} that staged them and did nothing else"),
            1 => format!("{server} that had served the scenario above first"),
            before => format!("{server} that had served the {before} scenarios above first"),
        }
    }

    fn targets_table(
        &self,
        list_accounts: usize,
        sled_campaign: Option<&CampaignResult>,
        out: &mut String,
    ) {
        let mut judged = self.judged_targets(list_accounts);
        if let Some(campaign) = &self.campaign {
            judged.extend(campaign.judged(self.kind, sled_campaign));
        }
        if judged.is_empty() {
            return;
        }
        let _ = writeln!(out, "| target | measured | |");
        let _ = writeln!(out, "|---|---|---|");
        for Judged {
            target,
            measured,
            met: yes,
        } in judged
        {
            let _ = writeln!(out, "| {target} | {measured} | {} |", met(yes));
        }
        out.push('\n');
    }

    /// The targets this deployment's figures speak to, each judged.
    fn judged_targets(&self, list_accounts: usize) -> Vec<Judged> {
        let mut judged = Vec::new();
        if let Some(notes) = self.row_near("notes", 32) {
            let ratio = ratio_of(notes);
            judged.push(Judged {
                target: "notes/create throughput ≥ 0.4 × baseline at 32 connections".into(),
                measured: format!(
                    "{} at {}",
                    format_ratio(notes.ferry.per_second(), notes.baseline.per_second()),
                    notes.connections
                ),
                met: ratio >= 0.4 && notes.connections >= 32,
            });
            let p99 = notes.ferry.latency_at(0.99);
            judged.push(Judged {
                target: "notes/create p99 ≤ 5 ms at 32 connections".into(),
                measured: format!("{} ms at {}", format_ms(p99), notes.connections),
                met: p99 <= 5_000 && notes.connections >= 32,
            });
        }
        if let Some(best) = self
            .rows
            .iter()
            .filter(|row| row.key == "transactions-1000")
            .max_by(|a, b| a.ferry.per_second().total_cmp(&b.ferry.per_second()))
        {
            let items = best.ferry.per_second() * best.items_per_operation as f64;
            judged.push(Judged {
                target: "≥ 50 000 transactions/s ingested durably in 1000-item batches".into(),
                measured: format!("{} /s at {}", format_rate(items), best.connections),
                met: items >= 50_000.0,
            });
        }
        if let Some(migrations) = self.row_near("stage-process", 8) {
            judged.push(Judged {
                target: "create-or-update + process throughput ≥ 0.3 × baseline at 8 connections"
                    .into(),
                measured: format!(
                    "{} at {}",
                    format_ratio(
                        migrations.ferry.per_second(),
                        migrations.baseline.per_second()
                    ),
                    migrations.connections
                ),
                met: ratio_of(migrations) >= 0.3 && migrations.connections == 8,
            });
        }
        if let Some(relay) = &self.relay {
            judged.push(Judged {
                target: "relay ≥ 20 000 events/s while the 1000-item batches run".into(),
                measured: if relay.backlog == 0 {
                    format!(
                        "{} (it kept up: nothing was left to drain)",
                        format_rate(relay.during_load_per_second)
                    )
                } else {
                    format_rate(relay.during_load_per_second)
                },
                met: relay.during_load_per_second >= 20_000.0,
            });
        }
        let lists: Vec<&Row> = self
            .rows
            .iter()
            .filter(|row| row.key == "pending-list")
            .collect();
        let accounts = format_count(list_accounts as u64);
        let enough_accounts = list_accounts >= 100_000;
        if let Some((worst, ratio)) = lists
            .iter()
            .map(|row| (row, p99_ratio(row)))
            .max_by(|(_, a), (_, b)| a.total_cmp(b))
        {
            judged.push(Judged {
                target: format!("pending list of {accounts}: p99 ≤ 3 × the baseline's"),
                measured: format!(
                    "{ratio:.2} at {}{}",
                    worst.connections,
                    of_levels(lists.len(), "the highest")
                ),
                met: ratio <= 3.0 && enough_accounts,
            });
        }
        if let Some((worst, growth)) = lists
            .iter()
            .filter_map(|row| Some((row, row.rss?.0.growth_kib())))
            .max_by_key(|(_, growth)| *growth)
        {
            judged.push(Judged {
                target: format!("listing {accounts} accounts: peak RSS growth < 50 MB"),
                measured: format!(
                    "{} at {}{}",
                    format_mib(growth),
                    worst.connections,
                    of_levels(lists.len(), "the largest")
                ),
                met: growth < 50 * 1000 * 1000 / 1024 && enough_accounts,
            });
        }
        if let Some(staging) = &self.staging {
            judged.push(Judged {
                target: format!(
                    "resident memory after staging {} accounts ≤ 256 MiB (default settings)",
                    format_count(staging.accounts)
                ),
                measured: format!(
                    "{}, {}",
                    format_mib(staging.rss_after_kib),
                    self.staging_server(staging)
                ),
                met: staging.rss_after_kib <= 256 << 10 && staging.accounts >= 100_000,
            });
        }
        if let Some(report) = &self.campaign_report {
            let p99 = report.summary.latency_at(0.99);
            judged.push(Judged {
                target: format!(
                    "the campaign report of {} accounts answers in under a second (p99)",
                    format_count(report.accounts)
                ),
                measured: format!("{} ms", format_ms(p99)),
                met: p99 < 1_000_000
                    && report.summary.operations > 0
                    && report.summary.errors == 0
                    && report.accounts >= 100_000,
            });
        }
        judged
    }

    fn errors(&self, out: &mut String) {
        if let Some(campaign) = &self.campaign {
            campaign.errors_list(out);
        }
        for row in &self.rows {
            for (server, measurement) in [("Ferry", &row.ferry), ("baseline", &row.baseline)] {
                if let Some(error) = &measurement.first_error {
                    let _ = writeln!(
                        out,
                        "- {} at {} connections, {server}: {} errors, the first: `{}`",
                        row.title,
                        row.connections,
                        measurement.errors,
                        error.replace('`', "'").replace('\n', " ")
                    );
                }
            }
        }
    }
}

/// Where a run's results go in BENCHMARKS.md: the campaign, hours long and run on its own,
/// has a section of its own, so that neither kind of run writes over the other's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The scenarios measured level by level (every run but a campaign alone).
    Load,
    /// A run of `--only campaign`.
    Campaign,
}

impl Section {
    /// The heading the section goes under when the file has no markers yet, and its markers.
    fn heading_and_markers(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::Load => (SECTION_HEADING, BEGIN_MARKER, END_MARKER),
            Self::Campaign => (CAMPAIGN_HEADING, CAMPAIGN_BEGIN_MARKER, CAMPAIGN_END_MARKER),
        }
    }
}

/// The heading of the campaign's results when the file has no markers for them yet.
pub const CAMPAIGN_HEADING: &str = "## The latest campaign";
const CAMPAIGN_BEGIN_MARKER: &str = "<!-- ferry-bench campaign results: begin (written by `ferry-bench --only campaign --write`) -->";
const CAMPAIGN_END_MARKER: &str = "<!-- ferry-bench campaign results: end -->";

/// `document` with the results between the markers of `section` (added at the end, with its
/// heading, when missing).
pub fn with_results(document: &str, results: &str, section: Section) -> String {
    let (heading, begin_marker, end_marker) = section.heading_and_markers();
    let block = format!("{begin_marker}\n\n{}\n{end_marker}", results.trim_end());
    if let Some(begin) = document.find(begin_marker)
        && let Some(end) = document[begin..].find(end_marker)
    {
        let end = begin + end + end_marker.len();
        return format!("{}{block}{}", &document[..begin], &document[end..]);
    }
    if let Some(found) = document.find(heading) {
        let after_heading = found + heading.len();
        return format!(
            "{}\n\n{block}\n{}",
            &document[..after_heading],
            &document[after_heading..]
        );
    }
    format!("{}\n\n{heading}\n\n{block}\n", document.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use std::time::Duration;

    fn measurement(operations: u64, latency_us: u64) -> Measurement {
        let mut histogram = Histogram::new_with_bounds(1, 600_000_000, 3).expect("histogram");
        for _ in 0..operations {
            histogram.record(latency_us).expect("in bounds");
        }
        Measurement {
            operations,
            errors: 0,
            first_error: None,
            elapsed: Duration::from_secs(1),
            latency_us: histogram,
            server_cpu_seconds: Some(operations as f64 * 1e-4),
            postgres_cpu_seconds: None,
            machine_cpu_seconds: Some(1.5),
        }
    }

    fn deployment(kind: Kind, rows: Vec<Row>) -> DeploymentResults {
        DeploymentResults {
            kind,
            rows,
            relay: None,
            staging: None,
            campaign_report: None,
            campaign: None,
        }
    }

    fn report(rows: Vec<Row>) -> Report {
        Report {
            command: "cargo run --release -p ferry-bench".into(),
            conditions: "Closed loop.".into(),
            deployments: vec![deployment(Kind::Sled, rows)],
            list_accounts: 100_000,
            machine: Machine {
                cores: 2,
                ..Machine::default()
            },
        }
    }

    #[test]
    fn numbers_are_formatted_for_reading() {
        assert_eq!(format_rate(12.345), "12.3");
        assert_eq!(format_rate(1234.4), "1234");
        assert_eq!(format_rate(51_234.0), "51 234");
        assert_eq!(format_rate(1_234_567.0), "1 234 567");
        assert_eq!(format_ms(420), "0.420");
        assert_eq!(format_ms(4_321), "4.32");
        assert_eq!(format_ms(43_210), "43.2");
        assert_eq!(format_ms(432_100), "432");
        assert_eq!(format_ratio(1.0, 4.0), "0.25");
        assert_eq!(format_ratio(1.0, 0.0), "–");
        assert_eq!(format_mib(51_200), "50.0 MiB");
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(5_664), "5664");
        assert_eq!(format_count(50_688), "50 688");
    }

    /// A relay that kept up leaves nothing to drain: no drain rate, and no ratio, made of it.
    #[test]
    fn a_relay_that_kept_up_is_said_to_have_had_nothing_to_drain() {
        let relay = |backlog: u64| RelayResult {
            backlog,
            drained: backlog,
            drain_seconds: if backlog > 0 { 0.1 } else { 0.0 },
            stalled: None,
            during_load_per_second: 33_490.0,
            redis_benchmark_per_second: 116_550.0,
        };
        let text_with = |backlog: u64| {
            let mut report = report(Vec::new());
            report.deployments[0].relay = Some(relay(backlog));
            report.markdown()
        };
        let kept_up = text_with(0);
        assert!(
            kept_up.contains("; 0 were waiting in the outbox"),
            "{kept_up}"
        );
        assert!(
            kept_up.contains(
                "| relay, draining the outbox after the load: nothing was waiting, it kept up | – |"
            ),
            "{kept_up}"
        );
        assert!(
            kept_up.contains("| ratio relay (draining) / redis-benchmark | – |"),
            "{kept_up}"
        );
        let behind = text_with(5_664);
        assert!(
            behind.contains("| relay, draining the outbox after the load (5664 events) | 56 640 |"),
            "{behind}"
        );
        assert!(
            behind.contains("| ratio relay (draining) / redis-benchmark | 0.49 |"),
            "{behind}"
        );
    }

    #[test]
    fn rows_show_both_servers_and_their_ratio_and_targets_are_judged() {
        let row = Row {
            key: "notes",
            title: "notes/create (1 note)",
            connections: 32,
            items_per_operation: 1,
            ferry: measurement(1_000, 4_000),
            baseline: measurement(2_000, 500),
            rss: None,
            waits: None,
        };
        let text = report(vec![row]).markdown();
        assert!(
            text.contains("| notes/create (1 note) | 32 | 1000 | 2000 | 0.50 | 4.00 / 4.00 / 4.00 | 0.500 / 0.500 / 0.500 | 8.00 | 100 / 100 |"),
            "{text}"
        );
        assert!(
            text.contains("≥ 0.4 × baseline at 32 connections | 0.50 at 32 | **met**"),
            "{text}"
        );
        assert!(
            text.contains("p99 ≤ 5 ms at 32 connections | 4.00 ms at 32 | **met**"),
            "{text}"
        );
    }

    #[test]
    fn where_ferrys_requests_waited_is_tabled_level_by_level() {
        let waits = |journal| Waits {
            journal,
            plugin_calls: 1_000,
            plugin_calls_queued: 250,
            plugin_queue_wait: Some(std::time::Duration::from_micros(120)),
        };
        let on_sled = Row {
            waits: Some(waits(Some(crate::waits::JournalWaits {
                rounds: 2_000,
                records_per_round: 5.25,
                sync: std::time::Duration::from_micros(240),
                apply: std::time::Duration::from_micros(41),
                commit_wait: std::time::Duration::from_micros(820),
            }))),
            ..notes_at_8(measurement(1_000, 4_000))
        };
        let text = report(vec![on_sled]).markdown();
        assert!(
            text.contains(
                "| notes/create (1 note) | 8 | 2000 | 5.25 | 240 | 41 | 820 | 25.0 % | 120 |"
            ),
            "{text}"
        );
        let without_journal = Row {
            waits: Some(waits(None)),
            ..notes_at_8(measurement(1_000, 4_000))
        };
        let text = report(vec![without_journal]).markdown();
        assert!(
            text.contains("| notes/create (1 note) | 8 | – | – | – | – | – | 25.0 % | 120 |"),
            "{text}"
        );
        let read = Row {
            waits: Some(Waits {
                journal: None,
                plugin_calls: 0,
                plugin_calls_queued: 0,
                plugin_queue_wait: None,
            }),
            ..notes_at_8(measurement(1_000, 4_000))
        };
        for nothing_to_say in [read, notes_at_8(measurement(1_000, 4_000))] {
            let text = report(vec![nothing_to_say]).markdown();
            assert!(!text.contains("Where Ferry's requests waited"), "{text}");
        }
    }

    #[test]
    fn batches_report_items_per_second_against_the_target() {
        let row = Row {
            key: "transactions-1000",
            title: "transactions/create (1000 per request)",
            connections: 8,
            items_per_operation: 1000,
            ferry: measurement(20, 100_000),
            baseline: measurement(400, 5_000),
            rss: None,
            waits: None,
        };
        let text = report(vec![row]).markdown();
        assert!(text.contains("20.0 (20 000 items/s)"), "{text}");
        assert!(text.contains("| 20 000 /s at 8 | **missed** |"), "{text}");
    }

    /// Every target the figures speak to is judged, each on the level it names
    /// or, for the list, on its worst level; the memory after staging says what the server
    /// had done before.
    #[test]
    fn the_targets_are_judged_on_the_levels_they_name() {
        let row = |key, connections, ferry, baseline| Row {
            key,
            title: key,
            connections,
            items_per_operation: 1,
            ferry,
            baseline,
            rss: None,
            waits: None,
        };
        let list = |connections, ferry_p99, growth_kib: u64| Row {
            rss: Some((
                RssGrowth {
                    before_kib: 200 << 10,
                    peak_kib: (200 << 10) + growth_kib,
                },
                RssGrowth::default(),
            )),
            ..row(
                "pending-list",
                connections,
                measurement(10, ferry_p99),
                measurement(20, 10_000),
            )
        };
        let mut judged = report(vec![
            row(
                "stage-process",
                1,
                measurement(100, 900),
                measurement(200, 100),
            ),
            row(
                "stage-process",
                8,
                measurement(310, 900),
                measurement(1_000, 100),
            ),
            list(1, 20_000, 10 << 10),
            list(8, 31_000, 60 << 10),
        ]);
        judged.deployments[0].relay = Some(RelayResult {
            backlog: 0,
            drained: 0,
            drain_seconds: 0.0,
            stalled: None,
            during_load_per_second: 19_500.0,
            redis_benchmark_per_second: 100_000.0,
        });
        judged.deployments[0].staging = Some(StagingResult {
            accounts: 100_000,
            connections: 64,
            measurement: measurement(100_000, 5_000),
            rss_after_kib: 633 << 10,
            scenarios_before: 5,
        });
        let text = judged.markdown();
        for line in [
            "| create-or-update + process throughput ≥ 0.3 × baseline at 8 connections | 0.31 at 8 | **met** |",
            "| relay ≥ 20 000 events/s while the 1000-item batches run | 19 500 (it kept up: nothing was left to drain) | **missed** |",
            "| pending list of 100 000: p99 ≤ 3 × the baseline's | 3.10 at 8 (the highest of 2 levels) | **missed** |",
            "| listing 100 000 accounts: peak RSS growth < 50 MB | 60.0 MiB at 8 (the largest of 2 levels) | **missed** |",
            "| resident memory after staging 100 000 accounts ≤ 256 MiB (default settings) | 633.0 MiB, of a server that had served the 5 scenarios above first | **missed** |",
            "Ferry's resident memory right after: 633.0 MiB, of a server that had served the 5 scenarios above first.",
        ] {
            assert!(text.contains(line), "{line}\nin\n{text}");
        }

        let mut alone = report(vec![list(1, 20_000, 10 << 10)]);
        alone.deployments[0].staging = Some(StagingResult {
            rss_after_kib: 240 << 10,
            scenarios_before: 0,
            ..judged.deployments[0].staging.clone().expect("staged")
        });
        let text = alone.markdown();
        for line in [
            "| pending list of 100 000: p99 ≤ 3 × the baseline's | 2.00 at 1 | **met** |",
            "| listing 100 000 accounts: peak RSS growth < 50 MB | 10.0 MiB at 1 | **met** |",
            "| resident memory after staging 100 000 accounts ≤ 256 MiB (default settings) | 240.0 MiB, of a server that staged them and did nothing else | **met** |",
        ] {
            assert!(text.contains(line), "{line}\nin\n{text}");
        }
        assert!(
            !text.contains("create-or-update + process throughput"),
            "{text}"
        );
    }

    fn notes_at_8(ferry: Measurement) -> Row {
        Row {
            key: "notes",
            title: "notes/create (1 note)",
            connections: 8,
            items_per_operation: 1,
            ferry,
            baseline: measurement(2_000, 500),
            rss: None,
            waits: None,
        }
    }

    #[test]
    fn deployments_are_compared_side_by_side_with_the_cpu_split() {
        let on_postgres = |operations: u64| Measurement {
            postgres_cpu_seconds: Some(operations as f64 * 5e-4),
            ..measurement(operations, 4_000)
        };
        let mut compared = report(vec![notes_at_8(measurement(1_000, 4_000))]);
        compared.deployments.extend([
            deployment(
                Kind::Postgres { instances: 1 },
                vec![notes_at_8(on_postgres(400))],
            ),
            deployment(
                Kind::Postgres { instances: 2 },
                vec![notes_at_8(on_postgres(600))],
            ),
        ]);
        let text = compared.markdown();
        for heading in [
            "### sled\n",
            "### PostgreSQL, 1 instance\n",
            "### PostgreSQL, 2 instances\n",
            "### Deployments compared\n",
        ] {
            assert_eq!(text.matches(heading).count(), 1, "{heading} in {text}");
        }
        assert_eq!(
            text.matches("| notes/create (1 note) | 8 | ").count(),
            4,
            "{text}"
        );
        assert!(
            text.contains("| endpoint | conns | sled op/s | PostgreSQL ×1 op/s | PostgreSQL ×2 op/s | ×2 / ×1 | sled: CPU µs/op Ferry / PostgreSQL, busy cores |"),
            "{text}"
        );
        assert!(
            text.contains("| notes/create (1 note) | 8 | 1000 | 400 | 600 | 1.50 | 100 / –, 1.50 | 100 / 500, 1.50 | 100 / 500, 1.50 |"),
            "{text}"
        );
        assert!(text.contains("(of 2, load generator included)"), "{text}");
    }

    /// A run of the campaign alone: its tables and targets per deployment, PostgreSQL with one
    /// instance judged against sled, the campaigns side by side, and no empty tables of the
    /// levelled scenarios.
    #[test]
    fn campaigns_are_tabled_judged_and_compared() {
        use crate::campaign::tests::campaign;
        let mut run = report(Vec::new());
        run.deployments[0].campaign = Some(campaign(2, 2_500, 1.0, 2));
        let mut postgres = campaign(2, 1_000, 1.0, 2);
        postgres.on_postgres = true;
        let mut on_postgres = deployment(Kind::Postgres { instances: 1 }, Vec::new());
        on_postgres.campaign = Some(postgres);
        run.deployments.push(on_postgres);
        let text = run.markdown();
        for line in [
            "### sled\n\nThe campaign (`--only campaign`): 5000 accounts in 2 batches over 16 connections.",
            "| campaign ≥ 1 500 000 accounts an hour (staged with the ledger, processed, notes, transactions, statements, payment instruction) | 1 500 000 over 5000 accounts | **met** |",
            "| campaign on PostgreSQL, 1 instance: ≥ 0.5 × sled's accounts an hour | 0.40 (600 000 against 1 500 000) | **missed** |",
            "### Campaigns compared\n",
            "| sled | 5000 | 1 500 000 | 1.00 | payment-instruction (17 %) | 204.0 MiB |",
            "| PostgreSQL, 1 instance | 2000 | 600 000 | 0.40 | payment-instruction (17 %) | 204.0 MiB |",
        ] {
            assert!(text.contains(line), "{line}\nin\n{text}");
        }
        assert_eq!(text.matches("≥ 0.5 × sled").count(), 1, "{text}");
        assert!(!text.contains("| endpoint |"), "{text}");
        assert!(!text.contains("### Deployments compared"), "{text}");
    }

    #[test]
    fn a_sled_only_run_has_no_headings_and_no_comparison() {
        let text = report(vec![notes_at_8(measurement(1_000, 4_000))]).markdown();
        assert!(!text.contains("###"), "{text}");
        assert!(!text.contains("PostgreSQL"), "{text}");
        assert!(
            text.starts_with("Command: `cargo run --release -p ferry-bench`\n\nMachine: 2 cores."),
            "the machine under the command: {text}"
        );
    }

    #[test]
    fn results_replace_only_what_is_between_the_markers() {
        let fresh = with_results(
            "# Benchmarks\n\n## Other\n\ntext\n",
            "table one\n",
            Section::Load,
        );
        assert!(fresh.starts_with("# Benchmarks\n\n## Other\n\ntext\n\n"));
        assert!(fresh.contains(&format!(
            "{SECTION_HEADING}\n\n{BEGIN_MARKER}\n\ntable one\n{END_MARKER}"
        )));

        let annotated = fresh.replace(
            END_MARKER,
            &format!("{END_MARKER}\n\nWhat limits it: fsync."),
        );
        let again = with_results(&annotated, "table two", Section::Load);
        assert!(again.contains("table two"), "{again}");
        assert!(!again.contains("table one"), "{again}");
        assert!(again.contains("What limits it: fsync."), "{again}");
        assert_eq!(again.matches(SECTION_HEADING).count(), 1);

        let heading_only = format!("# B\n\n{SECTION_HEADING}\n\nAnalysis.\n");
        let placed = with_results(&heading_only, "table", Section::Load);
        assert!(
            placed.contains(&format!("{SECTION_HEADING}\n\n{BEGIN_MARKER}")),
            "{placed}"
        );
        assert!(placed.ends_with("Analysis.\n"), "{placed}");
    }

    #[test]
    fn a_campaign_and_a_load_run_keep_each_others_figures() {
        let load = with_results("# Benchmarks\n", "load table", Section::Load);
        let both = with_results(&load, "campaign one", Section::Campaign);
        let again = with_results(&both, "campaign two", Section::Campaign);
        let last = with_results(&again, "load table two", Section::Load);
        assert!(last.contains("load table two"), "{last}");
        assert!(last.contains("campaign two"), "{last}");
        assert!(
            !last.contains("campaign one") && !last.contains("load table\n"),
            "{last}"
        );
        assert_eq!(last.matches(CAMPAIGN_HEADING).count(), 1, "{last}");
        assert!(
            last.find(SECTION_HEADING) < last.find(CAMPAIGN_HEADING),
            "{last}"
        );
    }
}
