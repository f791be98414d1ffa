//! What a server process uses, read from `/proc/<pid>`: its CPU time (`stat`), its resident
//! memory (`status`: the current `VmRSS`, the peak `VmHWM`, reset through `clear_refs`, which
//! the owner of a process may write), and a sampler that records the largest `VmRSS` seen
//! while a measurement runs.

use anyhow::Context;
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
