//! What a server process uses, read from `/proc/<pid>`: its CPU time (`stat`), its resident
//! memory (`status`: the current `VmRSS`, the peak `VmHWM`, reset through `clear_refs`, which
//! the owner of a process may write), and a sampler that records the largest `VmRSS` seen
//! while a measurement runs. Also the CPU time a measured window cost: the server's
//! processes (summed), every `postgres` process, and the whole machine (`/proc/stat`).

use anyhow::Context;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

const SAMPLE_EVERY: Duration = Duration::from_millis(2);
/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, fixed at 100 in Linux's ABI).
const USER_HZ: f64 = 100.0;

/// User plus system CPU seconds of a `/proc/<pid>/stat` text (fields 14 and 15, counted
/// after the parenthesised command name, which may hold spaces).
pub fn stat_cpu_seconds(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // `after_name` starts at field 3 (the state): utime is field 14, stime 15.
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    Some((user + system) as f64 / USER_HZ)
}

/// CPU seconds the process (all its threads) has used so far.
pub fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("cannot read /proc/{pid}/stat"))?;
    stat_cpu_seconds(&stat).with_context(|| format!("no CPU times in /proc/{pid}/stat"))
}

/// Busy CPU seconds of the whole machine since boot, from the `cpu` line of a `/proc/stat`
/// text: user, nice, system, irq, softirq and steal (idle and iowait left out; guest time is
/// already inside user).
pub fn stat_machine_busy_seconds(stat: &str) -> Option<f64> {
    let line = stat.lines().find(|line| line.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let busy: u64 = [0, 1, 2, 5, 6, 7]
        .iter()
        .map(|&index| ticks.get(index).copied().unwrap_or(0))
        .sum();
    (ticks.len() >= 4).then(|| busy as f64 / USER_HZ)
}

fn machine_busy_seconds() -> Option<f64> {
    stat_machine_busy_seconds(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The processes whose command (`/proc/<pid>/comm`) is `postgres`: the server and its
/// backends, one per connection.
pub fn postgres_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim_end() == "postgres")
        })
        .collect()
}

/// CPU seconds the processes used between two readings, summed: a process missing from
/// `before` (started in between), or with less time than its pid had then (a new process
/// under a reused pid), counts from 0; one missing from `after` (ended in between) is left
/// out, its time unreadable.
pub fn cpu_used_by_processes(before: &HashMap<u32, f64>, after: &HashMap<u32, f64>) -> f64 {
    after
        .iter()
        .map(|(pid, &seconds)| match before.get(pid) {
            Some(&earlier) if earlier <= seconds => seconds - earlier,
            _ => seconds,
        })
        .sum()
}

/// Whose CPU time a measurement counts.
#[derive(Debug, Clone, Default)]
pub struct CpuSources {
    /// The server's processes (one per instance), summed.
    pub servers: Vec<u32>,
    /// The `postgres` processes, when watched ([`postgres_pids`], listed before each reading
    /// so that the reading itself stays quick).
    pub postgres: Option<Vec<u32>>,
}

/// CPU seconds used so far, read at one moment.
#[derive(Debug, Clone, Default)]
pub struct CpuSnapshot {
    /// The servers' processes, summed (`None` when one could not be read).
    servers: Option<f64>,
    /// Each `postgres` process's, when watched.
    postgres: Option<HashMap<u32, f64>>,
    machine: Option<f64>,
}

impl CpuSnapshot {
    pub fn take(sources: &CpuSources) -> Self {
        let servers = sources
            .servers
            .iter()
            .map(|&pid| cpu_seconds(pid).ok())
            .sum::<Option<f64>>();
        let postgres = sources.postgres.as_ref().map(|pids| {
            pids.iter()
                .filter_map(|&pid| Some((pid, cpu_seconds(pid).ok()?)))
                .collect()
        });
        Self {
            servers,
            postgres,
            machine: machine_busy_seconds(),
        }
    }

    /// What was used from `earlier` until this reading.
    pub fn since(&self, earlier: &Self) -> CpuUsed {
        let difference = |now: Option<f64>, then: Option<f64>| Some(now? - then?);
        CpuUsed {
            servers: difference(self.servers, earlier.servers),
            postgres: match (&earlier.postgres, &self.postgres) {
                (Some(before), Some(after)) => Some(cpu_used_by_processes(before, after)),
                _ => None,
            },
            machine: difference(self.machine, earlier.machine),
        }
    }
}

/// CPU seconds used over a window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuUsed {
    pub servers: Option<f64>,
    pub postgres: Option<f64>,
    pub machine: Option<f64>,
}

/// A `kB` field (`VmRSS`, `VmHWM`, ...) of a `/proc/<pid>/status` text, in KiB.
pub fn status_field_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

fn read_field_kib(pid: u32, field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read /proc/{pid}/status"))?;
    status_field_kib(&status, field).with_context(|| format!("no {field} for process {pid}"))
}

/// Resident memory now, in KiB.
pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    read_field_kib(pid, "VmRSS")
}

/// Peak resident memory since the last [`reset_peak`] (or the start), in KiB.
pub fn peak_kib(pid: u32) -> anyhow::Result<u64> {
    read_field_kib(pid, "VmHWM")
}

/// Resets the peak to the current resident size (`echo 5 > /proc/<pid>/clear_refs`).
pub fn reset_peak(pid: u32) -> anyhow::Result<()> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5")
        .with_context(|| format!("cannot reset the peak RSS of process {pid}"))
}

/// Samples `VmRSS` of a process on its own thread until stopped.
#[derive(Debug)]
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<u64>,
}

impl RssSampler {
    pub fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut largest = 0;
            while !stopping.load(Ordering::Relaxed) {
                if let Ok(rss) = rss_kib(pid) {
                    largest = largest.max(rss);
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
            largest
        });
        Self { stop, thread }
    }

    /// The largest `VmRSS` seen, in KiB.
    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or(0)
    }
}

/// What a measurement did to a process's resident memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RssGrowth {
    pub before_kib: u64,
    pub peak_kib: u64,
}

impl RssGrowth {
    pub fn growth_kib(&self) -> u64 {
        self.peak_kib.saturating_sub(self.before_kib)
    }
}

/// Several processes' growth added up (each one's own peak, wherever in the window it was).
impl std::iter::Sum for RssGrowth {
    fn sum<I: Iterator<Item = Self>>(growths: I) -> Self {
        growths.fold(Self::default(), |total, growth| Self {
            before_kib: total.before_kib + growth.before_kib,
            peak_kib: total.peak_kib + growth.peak_kib,
        })
    }
}

/// Watches a process's memory over one measurement: [`RssWatch::begin`] before,
/// [`RssWatch::end`] after.
#[derive(Debug)]
pub struct RssWatch {
    pid: u32,
    before_kib: u64,
    sampler: RssSampler,
}

impl RssWatch {
    pub fn begin(pid: u32) -> anyhow::Result<Self> {
        let before_kib = rss_kib(pid)?;
        reset_peak(pid)?;
        Ok(Self {
            pid,
            before_kib,
            sampler: RssSampler::start(pid),
        })
    }

    pub fn end(self) -> anyhow::Result<RssGrowth> {
        let sampled = self.sampler.stop();
        let peak = peak_kib(self.pid)?;
        Ok(RssGrowth {
            before_kib: self.before_kib,
            peak_kib: sampled.max(peak),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kib_fields_of_a_status_text() {
        let status = "Name:\tferry\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n";
        assert_eq!(status_field_kib(status, "VmRSS"), Some(102_400));
        assert_eq!(status_field_kib(status, "VmHWM"), Some(204_800));
        assert_eq!(status_field_kib(status, "VmSwap"), None);
    }

    #[test]
    fn reads_cpu_times_after_a_command_name_with_spaces() {
        let stat = "4242 (tokio rt) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 4 0";
        assert_eq!(stat_cpu_seconds(stat), Some(3.0));
        assert_eq!(stat_cpu_seconds("4242 (x) S 1"), None);
    }

    #[test]
    fn reads_the_busy_time_of_the_machine() {
        let stat = "cpu  400 100 200 9000 50 10 20 30 5 0\ncpu0 200 50 100 4500 25 5 10 15 0 0\n";
        // user + nice + system + irq + softirq + steal = 760 ticks.
        assert_eq!(stat_machine_busy_seconds(stat), Some(7.6));
        assert_eq!(stat_machine_busy_seconds("intr 1 2 3\n"), None);
    }

    #[test]
    fn cpu_of_processes_is_diffed_per_pid() {
        let before = HashMap::from([(10, 1.0), (11, 5.0), (12, 2.0)]);
        // 10 used 0.5; 11 ended (left out); 13 is new and 12's pid now names a younger
        // process: both count from 0.
        let after = HashMap::from([(10, 1.5), (12, 0.25), (13, 0.75)]);
        assert_eq!(cpu_used_by_processes(&before, &after), 1.5);
        assert_eq!(cpu_used_by_processes(&before, &HashMap::new()), 0.0);
    }

    #[test]
    fn snapshots_sum_the_servers_and_diff_the_rest() {
        let earlier = CpuSnapshot {
            servers: Some(1.0),
            postgres: Some(HashMap::from([(7, 2.0)])),
            machine: Some(100.0),
        };
        let later = CpuSnapshot {
            servers: Some(3.5),
            postgres: Some(HashMap::from([(7, 2.5), (8, 1.0)])),
            machine: Some(104.0),
        };
        assert_eq!(
            later.since(&earlier),
            CpuUsed {
                servers: Some(2.5),
                postgres: Some(1.5),
                machine: Some(4.0)
            }
        );
        let own = CpuSnapshot::take(&CpuSources {
            servers: vec![std::process::id(), std::process::id()],
            postgres: None,
        });
        assert!(own.servers.is_some() && own.postgres.is_none() && own.machine.is_some());
        let growth: RssGrowth = [
            RssGrowth {
                before_kib: 10,
                peak_kib: 15,
            },
            RssGrowth {
                before_kib: 20,
                peak_kib: 22,
            },
        ]
        .into_iter()
        .sum();
        assert_eq!(growth.growth_kib(), 7);
    }

    #[test]
    fn reads_this_process() {
        assert!(cpu_seconds(std::process::id()).is_ok());
        let pid = std::process::id();
        assert!(rss_kib(pid).expect("own VmRSS") > 0);
        reset_peak(pid).expect("own clear_refs");
        let watch = RssWatch::begin(pid).expect("watch");
        let growth = watch.end().expect("growth");
        assert!(growth.peak_kib > 0);
    }
}
