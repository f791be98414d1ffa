//! The closed-loop load generator: N connections, each sending an operation's requests one
//! after the other and the next operation as soon as the last answer has been read, for a
//! fixed time (after an unmeasured warm-up) or until a fixed number of operations is done.
//! Every operation's latency (first byte sent to last byte of the last answer read) goes into
//! an HDR histogram in microseconds; any answer other than 2xx counts as an error. A server
//! of several instances gets its connections spread over them (connection i sends to
//! instance i mod N). The CPU time from the first measured operation to the end is read from
//! `/proc`: the server's (summed over its instances), PostgreSQL's when asked, the machine's.

use crate::procfs::{self, CpuSnapshot, CpuSources};
use hdrhistogram::Histogram;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Longest latency the histograms hold (longer ones are recorded as this).
const LONGEST_RECORDED: Duration = Duration::from_secs(600);
/// A request that takes longer fails the operation.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Significant digits of the histograms.
const SIGNIFICANT_DIGITS: u8 = 3;

/// One HTTP request of an operation (the path is relative to the target's base URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Post { path: String, body: String },
    Get { path: String },
}

/// Which operation a connection is about to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpContext {
    /// The connection (0-based).
    pub worker: usize,
    /// Unique within the run for fixed-time measurements; `0..count` for fixed-count ones.
    pub sequence: u64,
}

/// Makes the requests of one operation.
pub type Generator = Arc<dyn Fn(OpContext) -> Vec<Step> + Send + Sync>;

/// A server under load: one instance, or several sharing one database.
#[derive(Debug, Clone)]
pub struct Target {
    /// `http://host:port` of each instance.
    pub bases: Vec<String>,
    /// Sent as `Authorization` when set.
    pub authorization: Option<HeaderValue>,
    /// The instances' processes.
    pub pids: Vec<u32>,
    /// Also count the CPU time of every `postgres` process on the machine.
    pub watch_postgres: bool,
}

impl Target {
    /// The instance connection `connection` sends to.
    pub fn base(&self, connection: usize) -> &str {
        let count = self.bases.len().max(1);
        self.bases
            .get(connection % count)
            .map_or("", String::as_str)
    }

    fn cpu_sources(&self) -> CpuSources {
        CpuSources {
            servers: self.pids.clone(),
            postgres: self.watch_postgres.then(procfs::postgres_pids),
        }
    }
}

/// When a measurement stops.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// Measure for `duration` after an unmeasured `warmup`.
    After {
        warmup: Duration,
        duration: Duration,
    },
    /// Send exactly this many operations, all measured.
    Count(u64),
}

/// What a measurement saw.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Successful operations measured.
    pub operations: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    /// From the start of the first measured operation until the last one ended.
    pub elapsed: Duration,
    /// Latency of the successful measured operations, in microseconds.
    pub latency_us: Histogram<u64>,
    /// CPU time the server's processes used over the measured window (user + system).
    pub server_cpu_seconds: Option<f64>,
    /// CPU time of the `postgres` processes over the window, when watched.
    pub postgres_cpu_seconds: Option<f64>,
    /// Busy CPU time of the whole machine over the window (load generator included).
    pub machine_cpu_seconds: Option<f64>,
}

impl Measurement {
    pub fn per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.operations as f64 / seconds
        } else {
            0.0
        }
    }

    /// The server's CPU time per successful operation, in microseconds.
    pub fn cpu_per_operation_us(&self) -> Option<f64> {
        let seconds = self.server_cpu_seconds?;
        (self.operations > 0).then(|| seconds * 1e6 / self.operations as f64)
    }

    /// PostgreSQL's CPU time per successful operation, in microseconds.
    pub fn postgres_cpu_per_operation_us(&self) -> Option<f64> {
        let seconds = self.postgres_cpu_seconds?;
        (self.operations > 0).then(|| seconds * 1e6 / self.operations as f64)
    }

    /// Cores the server kept busy on average over the measured window.
    pub fn server_cores_busy(&self) -> Option<f64> {
        self.cores_busy(self.server_cpu_seconds?)
    }

    /// Cores the whole machine kept busy on average over the measured window.
    pub fn machine_cores_busy(&self) -> Option<f64> {
        self.cores_busy(self.machine_cpu_seconds?)
    }

    fn cores_busy(&self, cpu_seconds: f64) -> Option<f64> {
        let elapsed = self.elapsed.as_secs_f64();
        (elapsed > 0.0).then(|| cpu_seconds / elapsed)
    }

    /// The latency at `quantile` (0.5, 0.99, 0.999), in microseconds.
    pub fn latency_at(&self, quantile: f64) -> u64 {
        self.latency_us.value_at_quantile(quantile)
    }
}

fn new_histogram() -> anyhow::Result<Histogram<u64>> {
    Ok(Histogram::new_with_bounds(
        1,
        LONGEST_RECORDED.as_micros() as u64,
        SIGNIFICANT_DIGITS,
    )?)
}

/// Sequence numbers of fixed-time measurements: unique over the whole run, so that ids and
/// account numbers never repeat between levels or targets.
static NEXT_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// An HTTP client for `connections` concurrent connections.
pub fn client(connections: usize) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .tcp_nodelay(true)
        .timeout(REQUEST_TIMEOUT)
        .build()?)
}

/// Sends one request of connection `connection`; the body's length, or a description of what
/// went wrong.
async fn send(
    client: &reqwest::Client,
    target: &Target,
    connection: usize,
    step: Step,
) -> Result<usize, String> {
    let base = target.base(connection);
    let request = match step {
        Step::Post { path, body } => client
            .post(format!("{base}{path}"))
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(body),
        Step::Get { path } => client.get(format!("{base}{path}")),
    };
    let request = match &target.authorization {
        Some(value) => request.header(AUTHORIZATION, value.clone()),
        None => request,
    };
    let response = request.send().await.map_err(|error| error.to_string())?;
    let status = response.status();
    let body = response.bytes().await.map_err(|error| error.to_string())?;
    if !status.is_success() {
        let shown = &body[..body.len().min(300)];
        return Err(format!("{status}: {}", String::from_utf8_lossy(shown)));
    }
    Ok(body.len())
}

/// What one connection saw.
struct WorkerReport {
    latency_us: Histogram<u64>,
    operations: u64,
    errors: u64,
    first_error: Option<String>,
    first_start: Option<Instant>,
    last_end: Option<Instant>,
}

struct Plan {
    /// Whose CPU time counts, and what it was when the first measured operation started.
    cpu_sources: CpuSources,
    cpu_at_first_start: std::sync::OnceLock<CpuSnapshot>,
    measure_from: Instant,
    deadline: Option<Instant>,
    /// Fixed-count runs: the next operation's number, and how many there are.
    count: Option<(Arc<AtomicU64>, u64)>,
}

impl Plan {
    /// The next operation's sequence number, or `None` when the run is over. A fixed-time
    /// run goes on past its deadline until the connection has `measured` an operation, so
    /// that operations slower than the warm-up (a long list at 32 connections) still count.
    fn next_sequence(&self, measured: bool) -> Option<u64> {
        match &self.count {
            Some((next, total)) => {
                let sequence = next.fetch_add(1, Ordering::Relaxed);
                (sequence < *total).then_some(sequence)
            }
            None => {
                let over = measured
                    && self
                        .deadline
                        .is_some_and(|deadline| Instant::now() >= deadline);
                (!over).then(|| NEXT_SEQUENCE.fetch_add(1, Ordering::Relaxed))
            }
        }
    }
}

async fn worker(
    client: reqwest::Client,
    target: Arc<Target>,
    generator: Generator,
    plan: Arc<Plan>,
    worker: usize,
) -> anyhow::Result<WorkerReport> {
    let mut report = WorkerReport {
        latency_us: new_histogram()?,
        operations: 0,
        errors: 0,
        first_error: None,
        first_start: None,
        last_end: None,
    };
    while let Some(sequence) = plan.next_sequence(report.operations + report.errors > 0) {
        let steps = generator(OpContext { worker, sequence });
        let began = Instant::now();
        let measured = began >= plan.measure_from;
        if measured {
            plan.cpu_at_first_start
                .get_or_init(|| CpuSnapshot::take(&plan.cpu_sources));
        }
        let mut failure = None;
        for step in steps {
            if let Err(error) = send(&client, &target, worker, step).await {
                failure = Some(error);
                break;
            }
        }
        let ended = Instant::now();
        if !measured {
            continue;
        }
        report.first_start.get_or_insert(began);
        match failure {
            None => {
                report
                    .latency_us
                    .saturating_record(ended.duration_since(began).as_micros() as u64);
                report.operations += 1;
                report.last_end = Some(ended);
            }
            Some(error) => {
                report.errors += 1;
                report.first_error.get_or_insert(error);
            }
        }
    }
    Ok(report)
}

/// Runs `generator` against `target` over `connections` connections until `stop`.
pub async fn measure(
    target: &Target,
    generator: &Generator,
    connections: usize,
    stop: Stop,
) -> anyhow::Result<Measurement> {
    let connections = connections.max(1);
    let client = client(connections)?;
    let started = Instant::now();
    let plan = Arc::new(match stop {
        Stop::After { warmup, duration } => Plan {
            cpu_sources: target.cpu_sources(),
            cpu_at_first_start: std::sync::OnceLock::new(),
            measure_from: started + warmup,
            deadline: Some(started + warmup + duration),
            count: None,
        },
        Stop::Count(total) => Plan {
            cpu_sources: target.cpu_sources(),
            cpu_at_first_start: std::sync::OnceLock::new(),
            measure_from: started,
            deadline: None,
            count: Some((Arc::new(AtomicU64::new(0)), total)),
        },
    });
    let target = Arc::new(target.clone());
    let mut workers = tokio::task::JoinSet::new();
    for index in 0..connections {
        workers.spawn(worker(
            client.clone(),
            target.clone(),
            generator.clone(),
            plan.clone(),
            index,
        ));
    }
    let mut measurement = Measurement {
        operations: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latency_us: new_histogram()?,
        server_cpu_seconds: None,
        postgres_cpu_seconds: None,
        machine_cpu_seconds: None,
    };
    let mut first_start: Option<Instant> = None;
    let mut last_end: Option<Instant> = None;
    while let Some(joined) = workers.join_next().await {
        let report = joined??;
        measurement.latency_us.add(&report.latency_us)?;
        measurement.operations += report.operations;
        measurement.errors += report.errors;
        if measurement.first_error.is_none() {
            measurement.first_error = report.first_error;
        }
        first_start = first_start.into_iter().chain(report.first_start).min();
        last_end = last_end.into_iter().chain(report.last_end).max();
    }
    // From the first measured operation's start to the last one's end.
    measurement.elapsed = match (first_start, last_end) {
        (Some(start), Some(end)) => end.saturating_duration_since(start),
        _ => Duration::ZERO,
    };
    if let Some(cpu_at_start) = plan.cpu_at_first_start.get() {
        let used = CpuSnapshot::take(&target.cpu_sources()).since(cpu_at_start);
        measurement.server_cpu_seconds = used.servers;
        measurement.postgres_cpu_seconds = used.postgres;
        measurement.machine_cpu_seconds = used.machine;
    }
    Ok(measurement)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measurement(latencies_us: &[u64], elapsed: Duration) -> Measurement {
        let mut histogram = new_histogram().expect("histogram");
        for latency in latencies_us {
            histogram.record(*latency).expect("in bounds");
        }
        Measurement {
            operations: latencies_us.len() as u64,
            errors: 0,
            first_error: None,
            elapsed,
            latency_us: histogram,
            server_cpu_seconds: Some(0.5),
            postgres_cpu_seconds: Some(0.25),
            machine_cpu_seconds: Some(1.5),
        }
    }

    #[test]
    fn throughput_is_operations_over_the_measured_window() {
        let measured = measurement(&[100; 500], Duration::from_secs(2));
        assert!((measured.per_second() - 250.0).abs() < 1e-9);
        assert_eq!(measurement(&[], Duration::ZERO).per_second(), 0.0);
        assert_eq!(measured.cpu_per_operation_us(), Some(1000.0));
        assert_eq!(measured.server_cores_busy(), Some(0.25));
        assert_eq!(measured.postgres_cpu_per_operation_us(), Some(500.0));
        assert_eq!(measured.machine_cores_busy(), Some(0.75));
    }

    #[test]
    fn percentiles_come_from_the_histogram() {
        // 1..=1000 µs: p50 ≈ 500, p99 ≈ 990, p99.9 ≈ 999 (3 significant digits).
        let latencies: Vec<u64> = (1..=1000).collect();
        let measured = measurement(&latencies, Duration::from_secs(1));
        assert_eq!(measured.latency_at(0.5), 500);
        assert_eq!(measured.latency_at(0.99), 990);
        assert_eq!(measured.latency_at(0.999), 999);
    }

    #[test]
    fn fixed_count_plans_hand_out_each_number_once() {
        let plan = Plan {
            cpu_sources: CpuSources::default(),
            cpu_at_first_start: std::sync::OnceLock::new(),
            measure_from: Instant::now(),
            deadline: None,
            count: Some((Arc::new(AtomicU64::new(0)), 3)),
        };
        let handed: Vec<u64> = std::iter::from_fn(|| plan.next_sequence(true)).collect();
        assert_eq!(handed, vec![0, 1, 2]);
    }

    #[test]
    fn timed_plans_go_on_until_the_connection_has_measured_one_operation() {
        let past = Instant::now() - Duration::from_secs(1);
        let plan = Plan {
            cpu_sources: CpuSources::default(),
            cpu_at_first_start: std::sync::OnceLock::new(),
            measure_from: past,
            deadline: Some(past),
            count: None,
        };
        assert!(plan.next_sequence(false).is_some());
        assert!(plan.next_sequence(true).is_none());
    }

    #[test]
    fn connections_spread_over_the_instances() {
        let target = Target {
            bases: vec!["http://a".into(), "http://b".into()],
            authorization: None,
            pids: vec![1, 2],
            watch_postgres: false,
        };
        let bases: Vec<&str> = (0..4).map(|connection| target.base(connection)).collect();
        assert_eq!(bases, ["http://a", "http://b", "http://a", "http://b"]);
    }
}
