//! The campaign scenario (`--only campaign`): a supplier's whole migration through the API,
//! as its integration sends it. Every account is staged with the real document and its ledger
//! (`create-or-update/`), migrated (`process/`), then given 5 notes, 50 transactions, 12
//! historical statements (each naming a PDF in the supplier's bucket) and a payment
//! instruction (which Ferry confirms with the benchmark's own vendor, [`crate::vendor`]), one
//! request each. The accounts go in batches; within a batch each phase runs over all of the
//! batch's accounts before the next phase starts, a fixed count at `--campaign-connections`.
//!
//! Measured per phase and batch: accounts a second, latency, CPU per account (Ferry's, and
//! PostgreSQL's on those deployments); after each batch: Ferry's resident memory, the store's
//! size on disk (sled's data directory; the deployment's PostgreSQL database) and the JSON
//! sent so far. The report's tables and the campaign's targets are made here too.

use crate::deployment::{Deployment, Kind};
use crate::load::{self, Generator, Measurement, OpContext, Step, Stop, Target};
use crate::procfs;
use crate::report::{self, Judged};
use crate::scenarios::{self, SUPPLIER};
use crate::vendor;
use anyhow::{Context, bail};
use serde_json::json;
use std::fmt::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub const STATEMENTS: &str = "/v1/data-import/historical-statements/create/";
pub const PAYMENT_INSTRUCTION: &str = "/v1/data-import/payment-instruction/create/";

/// The `--only` key that selects the campaign (never part of a run without `--only`).
pub const KEY: &str = "campaign";
/// The first external account number of the campaign (`OE-70000000`), far from the others.
pub const ACCOUNTS_FROM: u64 = 70_000_000;
pub const NOTES_PER_ACCOUNT: usize = 5;
pub const TRANSACTIONS_PER_ACCOUNT: usize = 50;
/// One statement a month of 2024, the year before the staged account's open period.
pub const STATEMENTS_PER_ACCOUNT: usize = 12;
/// Where the statements' PDFs are, under the supplier's document root (`bench/`).
const STATEMENT_FOLDER: &str = "statements";

/// The targets (accounts an hour; rates; memory; disk; PostgreSQL against sled).
pub const TARGET_ACCOUNTS_AN_HOUR: f64 = 1_500_000.0;
pub const TARGET_LAST_OVER_FIRST: f64 = 0.8;
pub const TARGET_RSS_KIB: u64 = 512 << 10;
pub const TARGET_RSS_GROWTH_KIB: u64 = 64 << 10;
/// The accounts the memory targets name: the figure after `RSS_AT`, its growth since
/// `RSS_FROM`.
pub const RSS_FROM: u64 = 100_000;
pub const RSS_AT: u64 = 500_000;
pub const TARGET_DISK_OVER_JSON: f64 = 2.0;
pub const TARGET_POSTGRES_OVER_SLED: f64 = 0.5;

/// One request per account, the same for every account of a batch.
#[derive(Debug)]
pub struct Phase {
    pub key: &'static str,
    /// As shown in the report.
    pub title: &'static str,
    pub path: &'static str,
    /// Items the account's request carries (notes, transactions, statements).
    pub items: u64,
    body: fn(&str) -> String,
}

/// The phases, in the order each batch goes through them.
pub static PHASES: [Phase; 6] = [
    Phase {
        key: "stage",
        title: "create-or-update (the account, with its ledger)",
        path: scenarios::STAGE,
        items: 1,
        body: scenarios::account,
    },
    Phase {
        key: "process",
        title: "process",
        path: scenarios::PROCESS,
        items: 1,
        body: scenarios::process,
    },
    Phase {
        key: "notes",
        title: "notes/create (5 notes)",
        path: scenarios::NOTES,
        items: NOTES_PER_ACCOUNT as u64,
        body: notes,
    },
    Phase {
        key: "transactions",
        title: "transactions/create (50)",
        path: scenarios::TRANSACTIONS,
        items: TRANSACTIONS_PER_ACCOUNT as u64,
        body: transactions,
    },
    Phase {
        key: "statements",
        title: "historical-statements/create (12)",
        path: STATEMENTS,
        items: STATEMENTS_PER_ACCOUNT as u64,
        body: statements,
    },
    Phase {
        key: "payment-instruction",
        title: "payment-instruction/create",
        path: PAYMENT_INSTRUCTION,
        items: 1,
        body: payment_instruction,
    },
];

/// The account's 5 notes, each body its own (none is a duplicate of another).
pub fn notes(external_account_number: &str) -> String {
    const BODIES: [&str; NOTES_PER_ACCOUNT] = [
        "Customer prefers e-mail.",
        "Meter read by the customer on moving in.",
        "Payment plan agreed: monthly Direct Debit.",
        "Vulnerable customer: call before any visit.",
        "Asked for paper statements to stop.",
    ];
    let notes: Vec<serde_json::Value> = BODIES
        .iter()
        .enumerate()
        .map(|(index, body)| {
            json!({
                "body": body,
                "created_at": format!("2024-{:02}-15T09:30:00Z", index + 1),
                "is_pinned": index == 0
            })
        })
        .collect();
    json!({
        "import_supplier": SUPPLIER,
        "external_account_number": external_account_number,
        "notes": notes
    })
    .to_string()
}

/// The account's 50 transactions, charges and payments by turns, dated in its open statement
/// period (from 2025-01-01), their ids unique on the account and beyond (`<account>-T<n>`).
pub fn transactions(external_account_number: &str) -> String {
    let transactions: Vec<serde_json::Value> = (0..TRANSACTIONS_PER_ACCOUNT)
        .map(|index| {
            let id = format!("{external_account_number}-T{index}");
            let date = format!("2025-{:02}-{:02}", 1 + index / 28, 1 + index % 28);
            if index.is_multiple_of(2) {
                json!({"transaction_id": id, "transaction_date": date, "amount": 42.5,
                       "type": "CHARGE", "reason": "IMPORTED_CHARGE",
                       "display_note": "Energy used"})
            } else {
                json!({"transaction_id": id, "transaction_date": date, "amount": 40,
                       "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT",
                       "reference": format!("DD-{index}"),
                       "payment_type": "DD_REGULAR_COLLECTION"})
            }
        })
        .collect();
    json!({
        "import_supplier": SUPPLIER,
        "external_account_number": external_account_number,
        "transactions": transactions
    })
    .to_string()
}

/// The PDF of the statement of `month` (1–12 of 2024), relative to the supplier's root.
pub fn statement_path(month: usize) -> String {
    format!("{STATEMENT_FOLDER}/2024-{month:02}.pdf")
}

/// The account's 12 statements, a month each of 2024 (the last closing on 2024-12-31, as the
/// staged account's last statement does), each with its PDF.
pub fn statements(external_account_number: &str) -> String {
    const LAST_DAY: [u8; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let statements: Vec<serde_json::Value> = (1..=STATEMENTS_PER_ACCOUNT)
        .map(|month| {
            let issued = if month == 12 {
                "2025-01-03".to_owned()
            } else {
                format!("2024-{:02}-03", month + 1)
            };
            json!({
                "bill_period_from_date": format!("2024-{month:02}-01"),
                "bill_period_to_date": format!("2024-{month:02}-{}", LAST_DAY[month - 1]),
                "statement_id": format!("ST-2024-{month:02}"),
                "issued_date": issued,
                "number": format!("{external_account_number}/{month}"),
                "gross_amount": 8_000 + 250 * month as i64,
                "statement_path": statement_path(month)
            })
        })
        .collect();
    json!({
        "import_supplier": SUPPLIER,
        "external_account_number": external_account_number,
        "statements": statements
    })
    .to_string()
}

/// The account's card, at the benchmark's vendor.
pub fn payment_instruction(external_account_number: &str) -> String {
    json!({
        "import_supplier": SUPPLIER,
        "external_account_number": external_account_number,
        "vendor": vendor::CODE,
        "reference": format!("PM-{external_account_number}"),
        "type": "CARD"
    })
    .to_string()
}

/// Writes the statements' PDFs into the bucket directory `bucket`, under the supplier's
/// document root; the same 12 serve every account.
pub fn fill_bucket(bucket: &Path, document_root: &str) -> anyhow::Result<()> {
    let folder = bucket.join(document_root).join(STATEMENT_FOLDER);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    for month in 1..=STATEMENTS_PER_ACCOUNT {
        let path = bucket.join(document_root).join(statement_path(month));
        std::fs::write(
            &path,
            format!("%PDF-1.4 statement 2024-{month:02}\n%%EOF\n"),
        )
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// How big the campaign is.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub accounts: u64,
    pub batches: u64,
    pub connections: usize,
}

impl Settings {
    /// Each batch's first account (counted from 0) and its number of accounts: the accounts
    /// split as evenly as they go, the first batches one larger.
    pub fn batches(&self) -> Vec<(u64, u64)> {
        let batches = self.batches.clamp(1, self.accounts.max(1));
        let (size, larger) = (self.accounts / batches, self.accounts % batches);
        let mut first = 0;
        (0..batches)
            .map(|batch| {
                let count = size + u64::from(batch < larger);
                let range = (first, count);
                first += count;
                range
            })
            .filter(|(_, count)| *count > 0)
            .collect()
    }
}

/// One phase over one batch.
#[derive(Debug, Clone)]
pub struct PhaseRun {
    /// Index into [`PHASES`].
    pub phase: usize,
    /// 1-based.
    pub batch: usize,
    pub measurement: Measurement,
    /// The request bodies sent, in bytes.
    pub json_bytes: u64,
}

impl PhaseRun {
    pub fn phase(&self) -> &'static Phase {
        &PHASES[self.phase]
    }
}

/// What the deployment looked like after a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchEnd {
    /// 1-based.
    pub batch: usize,
    /// The batch's accounts, and all accounts of the campaign so far.
    pub accounts: u64,
    pub accounts_so_far: u64,
    /// The batch's phases' measured time, summed.
    pub seconds: f64,
    /// Ferry's resident memory right after the batch, summed over its instances.
    pub rss_kib: u64,
    /// The store's size: sled's data directory, or the PostgreSQL database.
    pub disk_bytes: u64,
    /// Every request body the campaign sent so far.
    pub json_bytes_so_far: u64,
}

impl BatchEnd {
    pub fn accounts_an_hour(&self) -> f64 {
        per_hour(self.accounts, self.seconds)
    }

    pub fn disk_over_json(&self) -> f64 {
        self.disk_bytes as f64 / (self.json_bytes_so_far as f64).max(1.0)
    }
}

fn per_hour(accounts: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        accounts as f64 * 3600.0 / seconds
    } else {
        0.0
    }
}

/// A whole campaign on one deployment.
#[derive(Debug, Clone)]
pub struct CampaignResult {
    pub settings: Settings,
    /// Ledger transactions in each list of a staged account.
    pub ledger_transactions: usize,
    /// Phase by phase within batch by batch, in the order they ran.
    pub runs: Vec<PhaseRun>,
    pub batches: Vec<BatchEnd>,
    /// Whether the disk figure is PostgreSQL's database (else sled's data directory).
    pub on_postgres: bool,
    pub instances: usize,
}

/// The size of the store: the PostgreSQL database of the deployment, else the files under
/// its instances' data directories (the blocks they take, as `du` counts them).
fn disk_bytes(deployment: &Deployment) -> anyhow::Result<u64> {
    if let Some(url) = deployment.database_url() {
        return database_size(url);
    }
    deployment
        .instances
        .iter()
        .map(|instance| directory_bytes(&instance.data_dir))
        .sum()
}

/// The blocks the files under `dir` take, in bytes (files that go while it is walked are
/// left out).
pub fn directory_bytes(dir: &Path) -> anyhow::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", folder.display()));
            }
        };
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if metadata.is_dir() {
                folders.push(entry.path());
            } else {
                total += metadata.blocks() * 512;
            }
        }
    }
    Ok(total)
}

/// `pg_database_size` of the database at `url`, with `psql`.
fn database_size(url: &str) -> anyhow::Result<u64> {
    let output = Command::new("psql")
        .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
        .arg(url)
        .args(["-c", "SELECT pg_database_size(current_database())"])
        .stdin(Stdio::null())
        .output()
        .context("cannot run psql (is it installed?)")?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "psql could not read the database's size ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    text.trim()
        .parse()
        .with_context(|| format!("psql answered {text:?} for the database's size"))
}

/// The requests of `phase` for the batch starting at account `first`; counts their bodies'
/// bytes into `bytes`.
fn generator(phase: &'static Phase, first: u64, bytes: Arc<AtomicU64>) -> Generator {
    Arc::new(move |op: OpContext| {
        let number = scenarios::external(ACCOUNTS_FROM + first + op.sequence);
        let body = (phase.body)(&number);
        bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        vec![Step::Post {
            path: phase.path.into(),
            body,
        }]
    })
}

/// Runs the campaign against `ferry` (every instance of `deployment`).
pub async fn run(
    ferry: &Target,
    deployment: &mut Deployment,
    settings: Settings,
    ledger_transactions: usize,
) -> anyhow::Result<CampaignResult> {
    let batches = settings.batches();
    eprintln!(
        "campaign: {} accounts in {} batches, {} connections",
        report::format_count(settings.accounts),
        batches.len(),
        settings.connections
    );
    let mut result = CampaignResult {
        settings,
        ledger_transactions,
        runs: Vec::new(),
        batches: Vec::new(),
        on_postgres: deployment.database_url().is_some(),
        instances: deployment.instances.len(),
    };
    let mut json_so_far = 0;
    let mut accounts_so_far = 0;
    for (index, &(first, count)) in batches.iter().enumerate() {
        let batch = index + 1;
        let mut seconds = 0.0;
        for (phase_index, phase) in PHASES.iter().enumerate() {
            let bytes = Arc::new(AtomicU64::new(0));
            let measurement = load::measure(
                ferry,
                &generator(phase, first, bytes.clone()),
                settings.connections,
                Stop::Count(count),
            )
            .await?;
            seconds += measurement.elapsed.as_secs_f64();
            let json_bytes = bytes.load(Ordering::Relaxed);
            json_so_far += json_bytes;
            eprintln!(
                "  batch {batch} {:<48} {:>8} accounts/s p50 / p99 / p99.9 {} ms, {} µs CPU/account{}{}",
                phase.title,
                report::format_rate(measurement.per_second()),
                report::percentiles(&measurement),
                report::format_cpu(measurement.cpu_per_operation_us()),
                match measurement.postgres_cpu_per_operation_us() {
                    Some(micros) => format!(", PostgreSQL {} µs", report::format_cpu(Some(micros))),
                    None => String::new(),
                },
                match &measurement.first_error {
                    Some(error) => format!("  ERRORS {}: {error}", measurement.errors),
                    None => String::new(),
                }
            );
            result.runs.push(PhaseRun {
                phase: phase_index,
                batch,
                measurement,
                json_bytes,
            });
            deployment.ensure_running()?;
        }
        accounts_so_far += count;
        let rss_kib = ferry
            .pids
            .iter()
            .map(|&pid| procfs::rss_kib(pid))
            .sum::<anyhow::Result<u64>>()?;
        let end = BatchEnd {
            batch,
            accounts: count,
            accounts_so_far,
            seconds,
            rss_kib,
            disk_bytes: disk_bytes(deployment)?,
            json_bytes_so_far: json_so_far,
        };
        eprintln!(
            "  after batch {batch}: {} accounts, {} accounts an hour, Ferry's RSS {}, disk {} for {} of JSON ({:.2}×)",
            report::format_count(accounts_so_far),
            report::format_rate(end.accounts_an_hour()),
            report::format_mib(end.rss_kib),
            format_bytes(end.disk_bytes),
            format_bytes(end.json_bytes_so_far),
            end.disk_over_json()
        );
        result.batches.push(end);
    }
    Ok(result)
}

/// Bytes in MiB with one decimal, from 1 GiB in GiB with two.
pub fn format_bytes(bytes: u64) -> String {
    let mib = bytes as f64 / (1024.0 * 1024.0);
    if mib >= 1024.0 {
        format!("{:.2} GiB", mib / 1024.0)
    } else {
        format!("{mib:.1} MiB")
    }
}

/// Figures over a phase's runs (one per batch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseSummary {
    pub phase: usize,
    /// Accounts a second over all batches (all accounts over the summed time).
    pub per_second: f64,
    pub first: f64,
    pub last: f64,
    /// The phase's share of the campaign's measured time.
    pub share: f64,
    /// The bytes of the phase's request body, on average.
    pub json_bytes_per_account: f64,
}

impl PhaseSummary {
    /// The last batch's rate over the first's (none with a single batch).
    pub fn last_over_first(&self, batches: usize) -> Option<f64> {
        (batches > 1 && self.first > 0.0).then(|| self.last / self.first)
    }
}

impl CampaignResult {
    /// All accounts of the campaign.
    pub fn accounts(&self) -> u64 {
        self.batches.last().map_or(0, |end| end.accounts_so_far)
    }

    /// The measured time of every phase of every batch.
    pub fn seconds(&self) -> f64 {
        self.runs
            .iter()
            .map(|run| run.measurement.elapsed.as_secs_f64())
            .sum()
    }

    /// The whole campaign's accounts over the time of all its phases.
    pub fn accounts_an_hour(&self) -> f64 {
        per_hour(self.accounts(), self.seconds())
    }

    pub fn errors(&self) -> u64 {
        self.runs.iter().map(|run| run.measurement.errors).sum()
    }

    fn runs_of(&self, phase: usize) -> impl Iterator<Item = &PhaseRun> {
        self.runs.iter().filter(move |run| run.phase == phase)
    }

    pub fn summaries(&self) -> Vec<PhaseSummary> {
        let total = self.seconds().max(f64::MIN_POSITIVE);
        (0..PHASES.len())
            .filter_map(|phase| {
                let runs: Vec<&PhaseRun> = self.runs_of(phase).collect();
                let (first, last) = (runs.first()?, runs.last()?);
                let seconds: f64 = runs
                    .iter()
                    .map(|run| run.measurement.elapsed.as_secs_f64())
                    .sum();
                let operations: u64 = runs.iter().map(|run| run.measurement.operations).sum();
                let sent: u64 = runs
                    .iter()
                    .map(|run| run.measurement.operations + run.measurement.errors)
                    .sum();
                let json_bytes: u64 = runs.iter().map(|run| run.json_bytes).sum();
                Some(PhaseSummary {
                    phase,
                    per_second: if seconds > 0.0 {
                        operations as f64 / seconds
                    } else {
                        0.0
                    },
                    first: first.measurement.per_second(),
                    last: last.measurement.per_second(),
                    share: seconds / total,
                    json_bytes_per_account: json_bytes as f64 / (sent as f64).max(1.0),
                })
            })
            .collect()
    }

    /// The first batch to end with `accounts` or more, else `otherwise` (the first batch or
    /// the last): where the memory targets are read in a run of fewer accounts than they name.
    fn batch_reaching<'a>(
        &'a self,
        accounts: u64,
        otherwise: Option<&'a BatchEnd>,
    ) -> Option<&'a BatchEnd> {
        self.batches
            .iter()
            .find(|end| end.accounts_so_far >= accounts)
            .or(otherwise)
    }

    /// The campaign's paragraph and tables.
    pub fn tables(&self, out: &mut String) {
        let Settings {
            connections,
            accounts,
            ..
        } = self.settings;
        let batches = self.batches.len();
        let _ = writeln!(
            out,
            "The campaign (`--only campaign`): {} accounts in {batches} batch{} over {connections} connections{}. Each account is staged with the real document ({} historical and {} current ledger transactions), processed, then given {NOTES_PER_ACCOUNT} notes, {TRANSACTIONS_PER_ACCOUNT} transactions, {STATEMENTS_PER_ACCOUNT} historical statements (each naming a PDF in the bucket) and a payment instruction (confirmed with a local vendor), one request each; each phase runs over the whole batch before the next starts. Rates are accounts a second (items a second for the requests that carry several); CPU is per account.\n",
            report::format_count(accounts),
            if batches == 1 { "" } else { "es" },
            if self.instances > 1 {
                format!(", spread over {} instances", self.instances)
            } else {
                String::new()
            },
            self.ledger_transactions,
            self.ledger_transactions,
        );
        let _ = writeln!(
            out,
            "| phase | batch | accounts/s | items/s | p50 / p99 / p99.9 (ms) | CPU µs/account Ferry / PostgreSQL | machine busy cores |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---|---:|---:|");
        for phase in 0..PHASES.len() {
            for run in self.runs_of(phase) {
                let measurement = &run.measurement;
                let items = if run.phase().items > 1 {
                    report::format_rate(measurement.per_second() * run.phase().items as f64)
                } else {
                    "–".into()
                };
                let rate = report::format_rate(measurement.per_second());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {items} | {} | {} / {} | {} |",
                    run.phase().title,
                    run.batch,
                    if measurement.errors > 0 {
                        format!("{rate} ({} errors)", measurement.errors)
                    } else {
                        rate
                    },
                    report::percentiles(measurement),
                    report::format_cpu(measurement.cpu_per_operation_us()),
                    report::format_cpu(measurement.postgres_cpu_per_operation_us()),
                    report::format_cores(measurement.machine_cores_busy()),
                );
            }
        }
        out.push('\n');

        let _ = writeln!(
            out,
            "Each phase over all batches, its first batch against its last, its share of the campaign's time, and the size of its request body:\n"
        );
        let _ = writeln!(
            out,
            "| phase | accounts/s | first batch | last batch | last / first | share of the time | JSON bytes / account |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        for summary in self.summaries() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.1} % | {} |",
                PHASES[summary.phase].title,
                report::format_rate(summary.per_second),
                report::format_rate(summary.first),
                report::format_rate(summary.last),
                summary
                    .last_over_first(batches)
                    .map_or_else(|| "–".to_owned(), |ratio| format!("{ratio:.2}")),
                summary.share * 100.0,
                report::format_count(summary.json_bytes_per_account.round() as u64),
            );
        }
        out.push('\n');

        let disk = if self.on_postgres {
            "PostgreSQL database (`pg_database_size`)"
        } else {
            "sled data directory"
        };
        let _ = writeln!(
            out,
            "After each batch: the batch's accounts an hour (its accounts over its phases' time), Ferry's resident memory{}, the {disk}, and the JSON of every request body sent so far:\n",
            if self.instances > 1 {
                format!(" (summed over its {} instances)", self.instances)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "| batch | accounts so far | accounts an hour | Ferry RSS | disk | JSON sent | disk / JSON |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|");
        for end in &self.batches {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {:.2} |",
                end.batch,
                report::format_count(end.accounts_so_far),
                report::format_rate(end.accounts_an_hour()),
                report::format_mib(end.rss_kib),
                format_bytes(end.disk_bytes),
                format_bytes(end.json_bytes_so_far),
                end.disk_over_json()
            );
        }
        out.push('\n');
        let _ = writeln!(
            out,
            "The whole campaign: {} accounts in {:.1} s of phases, **{} accounts an hour**{}.\n",
            report::format_count(self.accounts()),
            self.seconds(),
            report::format_rate(self.accounts_an_hour()),
            match self.errors() {
                0 => String::new(),
                errors => format!(", {errors} requests refused or failed"),
            }
        );
    }

    /// The campaign's targets, judged; `sled` is the same run's sled campaign, for the
    /// PostgreSQL deployment of one instance.
    pub fn judged(&self, kind: Kind, sled: Option<&CampaignResult>) -> Vec<Judged> {
        let mut judged = Vec::new();
        let errors = self.errors();
        let refused = if errors > 0 {
            format!(", {errors} requests refused or failed")
        } else {
            String::new()
        };
        let per_hour = self.accounts_an_hour();
        judged.push(Judged {
            target: "campaign ≥ 1 500 000 accounts an hour (staged with the ledger, processed, notes, transactions, statements, payment instruction)".into(),
            measured: format!(
                "{} over {} accounts{refused}",
                report::format_rate(per_hour),
                report::format_count(self.accounts())
            ),
            met: per_hour >= TARGET_ACCOUNTS_AN_HOUR && errors == 0,
        });
        let batches = self.batches.len();
        if let Some((lowest, ratio)) = self
            .summaries()
            .iter()
            .filter_map(|summary| Some((summary.phase, summary.last_over_first(batches)?)))
            .min_by(|(_, a), (_, b)| a.total_cmp(b))
        {
            judged.push(Judged {
                target: "campaign: the last batch's rate ≥ 0.8 × the first's, every phase".into(),
                measured: format!(
                    "lowest {ratio:.2} ({}), batch {batches} against batch 1",
                    PHASES[lowest].key
                ),
                met: ratio >= TARGET_LAST_OVER_FIRST,
            });
        }
        let summed = if self.instances > 1 {
            format!(", summed over {} instances", self.instances)
        } else {
            String::new()
        };
        if let Some(at) = self.batch_reaching(RSS_AT, self.batches.last()) {
            judged.push(Judged {
                target: "campaign: resident memory after 500 000 accounts ≤ 512 MiB".into(),
                measured: format!(
                    "{} after {} accounts{}{summed}",
                    report::format_mib(at.rss_kib),
                    report::format_count(at.accounts_so_far),
                    if at.accounts_so_far < RSS_AT {
                        " (all the run had)"
                    } else {
                        ""
                    }
                ),
                met: at.rss_kib <= TARGET_RSS_KIB,
            });
            if let Some(from) = self.batch_reaching(RSS_FROM, self.batches.first())
                && from.batch < at.batch
            {
                let growth = at.rss_kib.saturating_sub(from.rss_kib);
                judged.push(Judged {
                    target: "campaign: resident memory after 500 000 accounts within 64 MiB of after 100 000".into(),
                    measured: format!(
                        "{}{} from {} to {} accounts{summed}",
                        if at.rss_kib >= from.rss_kib { "+" } else { "−" },
                        report::format_mib(at.rss_kib.abs_diff(from.rss_kib)),
                        report::format_count(from.accounts_so_far),
                        report::format_count(at.accounts_so_far),
                    ),
                    met: growth <= TARGET_RSS_GROWTH_KIB,
                });
            }
        }
        if let Some(end) = self.batches.last() {
            let disk = if self.on_postgres {
                "the PostgreSQL database"
            } else {
                "the sled directory"
            };
            judged.push(Judged {
                target: "campaign: disk ≤ 2 × the JSON accepted".into(),
                measured: format!(
                    "{:.2} × ({} of {disk}, {} of JSON{refused})",
                    end.disk_over_json(),
                    format_bytes(end.disk_bytes),
                    format_bytes(end.json_bytes_so_far),
                ),
                met: end.disk_over_json() <= TARGET_DISK_OVER_JSON && errors == 0,
            });
        }
        if kind == (Kind::Postgres { instances: 1 })
            && let Some(sled) = sled
        {
            let ratio = per_hour / sled.accounts_an_hour().max(f64::MIN_POSITIVE);
            judged.push(Judged {
                target: "campaign on PostgreSQL, 1 instance: ≥ 0.5 × sled's accounts an hour"
                    .into(),
                measured: format!(
                    "{ratio:.2} ({} against {})",
                    report::format_rate(per_hour),
                    report::format_rate(sled.accounts_an_hour())
                ),
                met: ratio >= TARGET_POSTGRES_OVER_SLED && errors == 0,
            });
        }
        judged
    }

    /// The first error of each phase and batch that had some, as list items.
    pub fn errors_list(&self, out: &mut String) {
        for run in &self.runs {
            if let Some(error) = &run.measurement.first_error {
                let _ = writeln!(
                    out,
                    "- campaign, {} in batch {}: {} errors, the first: `{}`",
                    run.phase().title,
                    run.batch,
                    run.measurement.errors,
                    error.replace('`', "'").replace('\n', " ")
                );
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use std::collections::HashSet;
    use std::time::Duration;

    fn parsed(body: &str) -> serde_json::Value {
        serde_json::from_str(body).expect("valid JSON")
    }

    #[test]
    fn the_bodies_are_valid_json_for_the_account_with_their_counts() {
        for phase in &PHASES {
            let body = parsed(&(phase.body)("OE-70000001"));
            assert_eq!(body["external_account_number"], "OE-70000001", "{phase:?}");
        }
        let notes = parsed(&notes("OE-1"));
        let bodies: HashSet<&str> = notes["notes"]
            .as_array()
            .expect("notes")
            .iter()
            .map(|note| note["body"].as_str().expect("a body"))
            .collect();
        assert_eq!(bodies.len(), 5, "five notes, none a duplicate");
        assert_eq!(notes["import_supplier"], SUPPLIER);

        let statements = parsed(&statements("OE-1"));
        let statements = statements["statements"].as_array().expect("statements");
        assert_eq!(statements.len(), 12);
        let ids: HashSet<&str> = statements
            .iter()
            .map(|statement| statement["statement_id"].as_str().expect("an id"))
            .collect();
        assert_eq!(ids.len(), 12);
        for statement in statements {
            let from = statement["bill_period_from_date"].as_str().expect("from");
            let to = statement["bill_period_to_date"].as_str().expect("to");
            assert!(from < to && to <= "2024-12-31", "{statement}");
            assert!(statement["gross_amount"].is_i64(), "pence: {statement}");
        }
        assert_eq!(statements[11]["bill_period_to_date"], "2024-12-31");
        assert_eq!(statements[1]["bill_period_to_date"], "2024-02-29");
        assert_eq!(statements[0]["statement_path"], statement_path(1));

        let instruction = parsed(&payment_instruction("OE-1"));
        assert_eq!(instruction["vendor"], vendor::CODE);
        assert_eq!(instruction["reference"], "PM-OE-1");
        assert_eq!(instruction["type"], "CARD");
    }

    #[test]
    fn the_transactions_are_fifty_with_ids_unique_to_the_account_in_its_open_period() {
        let ids = |account: &str| -> Vec<String> {
            let body = parsed(&transactions(account));
            let transactions = body["transactions"].as_array().expect("transactions");
            for transaction in transactions {
                let date = transaction["transaction_date"].as_str().expect("a date");
                assert!(
                    ("2025-01-01".."2025-12-01").contains(&date),
                    "in the open period: {date}"
                );
                if transaction["type"] == "PAYMENT" {
                    assert!(transaction["reference"].is_string(), "{transaction}");
                    assert!(transaction["payment_type"].is_string(), "{transaction}");
                }
            }
            transactions
                .iter()
                .map(|transaction| transaction["transaction_id"].as_str().expect("id").into())
                .collect()
        };
        let (one, two) = (ids("OE-1"), ids("OE-2"));
        assert_eq!(one.len(), 50);
        let unique: HashSet<&String> = one.iter().chain(&two).collect();
        assert_eq!(
            unique.len(),
            100,
            "unique on the account and between accounts"
        );
    }

    #[test]
    fn the_bucket_holds_every_statement_s_pdf() {
        let bucket = tempfile::tempdir().expect("a directory");
        fill_bucket(bucket.path(), "bench/").expect("filled");
        for month in 1..=12 {
            let path = bucket.path().join("bench").join(statement_path(month));
            assert!(path.is_file(), "{}", path.display());
        }
        assert!(directory_bytes(bucket.path()).expect("walked") > 0);
    }

    #[test]
    fn the_accounts_split_into_batches() {
        let split = |accounts, batches| {
            Settings {
                accounts,
                batches,
                connections: 16,
            }
            .batches()
        };
        assert_eq!(
            split(10, 3),
            [(0, 4), (4, 3), (7, 3)],
            "the first batches one larger"
        );
        assert_eq!(split(100_000, 5)[4], (80_000, 20_000));
        assert_eq!(split(2, 5), [(0, 1), (1, 1)], "no empty batch");
        assert_eq!(split(7, 0), [(0, 7)]);
    }

    /// `accounts` in `seconds`, with `cpu_us` of Ferry's CPU each.
    fn measurement(accounts: u64, seconds: f64, cpu_us: f64) -> Measurement {
        let mut latency_us = Histogram::new_with_bounds(1, 600_000_000, 3).expect("histogram");
        for _ in 0..accounts {
            latency_us.record(2_000).expect("in bounds");
        }
        Measurement {
            operations: accounts,
            errors: 0,
            first_error: None,
            elapsed: Duration::from_secs_f64(seconds),
            latency_us,
            server_cpu_seconds: Some(accounts as f64 * cpu_us / 1e6),
            postgres_cpu_seconds: None,
            machine_cpu_seconds: Some(seconds * 1.9),
        }
    }

    /// A campaign of `batches` batches of `size` accounts; every phase takes 1 s a batch,
    /// except notes, which `slower` (a factor a batch) slows from batch to batch; the RSS
    /// grows by `rss_step_mib` a batch from 200 MiB.
    pub(crate) fn campaign(
        batches: usize,
        size: u64,
        slower: f64,
        rss_step_mib: u64,
    ) -> CampaignResult {
        let mut runs = Vec::new();
        let mut ends = Vec::new();
        for batch in 1..=batches {
            let mut seconds = 0.0;
            for (phase, Phase { key, .. }) in PHASES.iter().enumerate() {
                let time = if *key == "notes" {
                    slower.powi(batch as i32 - 1)
                } else {
                    1.0
                };
                seconds += time;
                runs.push(PhaseRun {
                    phase,
                    batch,
                    measurement: measurement(size, time, 500.0),
                    json_bytes: size * 1_000,
                });
            }
            ends.push(BatchEnd {
                batch,
                accounts: size,
                accounts_so_far: size * batch as u64,
                seconds,
                rss_kib: (200 + rss_step_mib * batch as u64) << 10,
                disk_bytes: size * batch as u64 * 9_000,
                json_bytes_so_far: size * batch as u64 * 6_000,
            });
        }
        CampaignResult {
            settings: Settings {
                accounts: size * batches as u64,
                batches: batches as u64,
                connections: 16,
            },
            ledger_transactions: 50,
            runs,
            batches: ends,
            on_postgres: false,
            instances: 1,
        }
    }

    fn line_of<'a>(judged: &'a [Judged], starting: &str) -> &'a Judged {
        judged
            .iter()
            .find(|judged| judged.target.starts_with(starting))
            .unwrap_or_else(|| panic!("no target {starting}"))
    }

    #[test]
    fn accounts_an_hour_count_every_phase_and_the_last_batch_is_held_to_the_first() {
        // 6 phases of 1 s for 2 500 accounts: 2 500 in 6 s, 1 500 000 an hour.
        let steady = campaign(4, 2_500, 1.0, 2);
        assert!((steady.accounts_an_hour() - 1_500_000.0).abs() < 1e-3);
        assert_eq!(steady.accounts(), 10_000);
        let judged = steady.judged(Kind::Sled, None);
        let rate = line_of(&judged, "campaign ≥ 1 500 000");
        assert!(rate.met, "{}", rate.measured);
        assert_eq!(rate.measured, "1 500 000 over 10 000 accounts");
        let kept = line_of(&judged, "campaign: the last batch's rate");
        assert!(kept.met);
        assert_eq!(
            kept.measured,
            "lowest 1.00 (stage), batch 4 against batch 1"
        );

        // Notes 10 % slower each batch: 1/1.331 = 0.75 of the first by the fourth.
        let slowing = campaign(4, 2_500, 1.1, 2);
        let judged = slowing.judged(Kind::Sled, None);
        let kept = line_of(&judged, "campaign: the last batch's rate");
        assert!(!kept.met);
        assert_eq!(
            kept.measured,
            "lowest 0.75 (notes), batch 4 against batch 1"
        );
        assert!(!line_of(&judged, "campaign ≥ 1 500 000").met);
        let notes = slowing
            .summaries()
            .into_iter()
            .find(|summary| PHASES[summary.phase].key == "notes")
            .expect("notes");
        assert!((notes.last_over_first(4).expect("4 batches") - 1.0 / 1.331).abs() < 1e-9);
        assert_eq!(
            notes.last_over_first(1),
            None,
            "one batch: nothing to compare"
        );

        // One batch: no rate to hold to the first, no growth to measure.
        let single = campaign(1, 2_500, 1.0, 2).judged(Kind::Sled, None);
        assert!(
            single
                .iter()
                .all(|judged| !judged.target.contains("last batch")
                    && !judged.target.contains("within 64 MiB"))
        );
    }

    #[test]
    fn memory_is_judged_at_the_accounts_the_run_reached_and_disk_against_the_json() {
        let small = campaign(4, 5_000, 1.0, 20);
        let judged = small.judged(Kind::Sled, None);
        let rss = line_of(
            &judged,
            "campaign: resident memory after 500 000 accounts ≤",
        );
        assert_eq!(
            rss.measured,
            "280.0 MiB after 20 000 accounts (all the run had)"
        );
        assert!(rss.met);
        let growth = line_of(
            &judged,
            "campaign: resident memory after 500 000 accounts within",
        );
        assert_eq!(growth.measured, "+60.0 MiB from 5000 to 20 000 accounts");
        assert!(growth.met);
        let disk = line_of(&judged, "campaign: disk");
        assert_eq!(
            disk.measured,
            "1.50 × (171.7 MiB of the sled directory, 114.4 MiB of JSON)"
        );
        assert!(disk.met);

        // 600 000 accounts in 6 batches: read after 500 000, grown since 100 000.
        let large = campaign(6, 100_000, 1.0, 20);
        let judged = large.judged(Kind::Sled, None);
        let rss = line_of(
            &judged,
            "campaign: resident memory after 500 000 accounts ≤",
        );
        assert_eq!(rss.measured, "300.0 MiB after 500 000 accounts");
        let growth = line_of(
            &judged,
            "campaign: resident memory after 500 000 accounts within",
        );
        assert_eq!(
            growth.measured,
            "+80.0 MiB from 100 000 to 500 000 accounts"
        );
        assert!(!growth.met);
    }

    #[test]
    fn postgres_with_one_instance_is_held_to_half_of_sled() {
        let sled = campaign(2, 2_500, 1.0, 2);
        let mut postgres = campaign(2, 1_000, 1.0, 2);
        postgres.on_postgres = true;
        let judged = postgres.judged(Kind::Postgres { instances: 1 }, Some(&sled));
        let half = line_of(&judged, "campaign on PostgreSQL, 1 instance");
        assert_eq!(half.measured, "0.40 (600 000 against 1 500 000)");
        assert!(!half.met);
        assert!(
            line_of(&judged, "campaign: disk")
                .measured
                .contains("of the PostgreSQL database")
        );
        let three = postgres.judged(Kind::Postgres { instances: 3 }, Some(&sled));
        assert!(
            three
                .iter()
                .all(|judged| !judged.target.contains("0.5 × sled"))
        );
        assert!(
            postgres
                .judged(Kind::Postgres { instances: 1 }, None)
                .iter()
                .all(|judged| !judged.target.contains("0.5 × sled"))
        );
    }

    #[test]
    fn the_tables_show_each_phase_and_batch_and_the_batches_ends() {
        let mut text = String::new();
        campaign(2, 2_500, 1.1, 2).tables(&mut text);
        assert!(
            text.contains("| notes/create (5 notes) | 2 | 2273 | 11 364 | 2.00 / 2.00 / 2.00 | 500 / – | 1.90 |"),
            "{text}"
        );
        assert!(
            text.contains("| notes/create (5 notes) | 2381 | 2500 | 2273 | 0.91 | 17.4 % | 1000 |"),
            "{text}"
        );
        assert!(
            text.contains("| 2 | 5000 | 1 475 410 | 204.0 MiB | 42.9 MiB | 28.6 MiB | 1.50 |"),
            "{text}"
        );
        assert!(text.contains("5000 accounts in 12.1 s of phases"), "{text}");
        assert_eq!(format_bytes(3_541_889_024), "3.30 GiB");
        assert_eq!(format_bytes(1_023 << 20), "1023.0 MiB");
    }
}
