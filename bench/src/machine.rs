//! What a run was made on, for the report's first lines: the processor, its cores, the
//! memory and the kernel (from `/proc`), the commit of the source tree the benchmark ran
//! from (`git`), the day, and how long the run took. Figures of two runs compare only as
//! ratios unless these match.

use std::fmt::Write;
use std::process::Command;
use std::time::{Duration, SystemTime};

/// The machine and the source of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Machine {
    /// The processor's model name, from `/proc/cpuinfo`.
    pub cpu: Option<String>,
    /// The cores the benchmark could use (the ceiling of the busy-cores figures).
    pub cores: usize,
    /// The machine's memory in KiB, `MemTotal` of `/proc/meminfo`.
    pub memory_kib: Option<u64>,
    /// The kernel's release, from `/proc/sys/kernel/osrelease`.
    pub kernel: Option<String>,
    /// The source tree's commit (abbreviated) and whether the tree had uncommitted changes.
    pub commit: Option<(String, bool)>,
    /// The day the run ended, `YYYY-MM-DD` in UTC.
    pub date: String,
    /// How long the run took after building.
    pub run_time: Duration,
}

impl Machine {
    /// This machine and source tree, for a run that took `run_time`.
    pub fn here(run_time: Duration) -> Self {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let seconds = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        Self {
            cpu: read("/proc/cpuinfo").and_then(|text| cpu_model(&text)),
            cores: std::thread::available_parallelism().map_or(0, usize::from),
            memory_kib: read("/proc/meminfo").and_then(|text| memory_kib(&text)),
            kernel: read("/proc/sys/kernel/osrelease")
                .map(|text| text.trim().to_owned())
                .filter(|text| !text.is_empty()),
            commit: commit(),
            date: utc_date(seconds),
            run_time,
        }
    }

    /// One paragraph: `Machine: AMD EPYC, 2 cores, 23.5 GiB of memory, Linux 6.1.0. Source:
    /// commit 5690050. Run on 2026-12-02 (UTC), 386 s after building.`
    pub fn describe(&self) -> String {
        let mut text = String::from("Machine: ");
        if let Some(cpu) = &self.cpu {
            let _ = write!(text, "{cpu}, ");
        }
        let _ = write!(
            text,
            "{} core{}",
            self.cores,
            if self.cores == 1 { "" } else { "s" }
        );
        if let Some(kib) = self.memory_kib {
            let _ = write!(
                text,
                ", {:.1} GiB of memory",
                kib as f64 / (1024.0 * 1024.0)
            );
        }
        if let Some(kernel) = &self.kernel {
            let _ = write!(text, ", Linux {kernel}");
        }
        match &self.commit {
            Some((commit, false)) => {
                let _ = write!(text, ". Source: commit {commit}");
            }
            Some((commit, true)) => {
                let _ = write!(text, ". Source: commit {commit} with uncommitted changes");
            }
            None => text.push_str(". Source: not a git checkout"),
        }
        let _ = write!(
            text,
            ". Run on {} (UTC), {:.0} s after building.",
            self.date,
            self.run_time.as_secs_f64()
        );
        text
    }
}

/// The first `model name` of a `/proc/cpuinfo` text.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim() == "model name")
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// `MemTotal` of a `/proc/meminfo` text, in KiB.
fn memory_kib(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The current directory's commit and whether tracked files differ from it.
fn commit() -> Option<(String, bool)> {
    let git = |args: &[&str]| {
        let output = Command::new("git").args(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=7", "HEAD"]).filter(|commit| !commit.is_empty())?;
    let changed = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|status| !status.is_empty());
    Some((commit, changed))
}

/// `YYYY-MM-DD` of the day `seconds` after the Unix epoch, in UTC (the proleptic Gregorian
/// calendar, counted from days as in Howard Hinnant's `civil_from_days`).
fn utc_date(seconds: u64) -> String {
    let days = (seconds / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proc_files_are_read_for_the_processor_and_the_memory() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\
                       processor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor\t: 0\n"), None);
        let meminfo = "MemTotal:       24683652 kB\nMemFree:         1000 kB\n";
        assert_eq!(memory_kib(meminfo), Some(24_683_652));
        assert_eq!(memory_kib("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn days_are_dated_in_the_gregorian_calendar() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_709_251_199), "2024-02-29");
        assert_eq!(utc_date(1_796_197_189), "2026-12-02");
    }

    #[test]
    fn the_description_names_the_machine_the_source_and_the_day() {
        let machine = Machine {
            cpu: Some("AMD EPYC".into()),
            cores: 2,
            memory_kib: Some(24_683_652),
            kernel: Some("6.1.0".into()),
            commit: Some(("5690050".into(), false)),
            date: "2026-12-02".into(),
            run_time: Duration::from_secs(386),
        };
        assert_eq!(
            machine.describe(),
            "Machine: AMD EPYC, 2 cores, 23.5 GiB of memory, Linux 6.1.0. Source: commit \
             5690050. Run on 2026-12-02 (UTC), 386 s after building."
        );
        let bare = Machine {
            cores: 1,
            commit: Some(("abcdef0".into(), true)),
            date: "2026-12-02".into(),
            ..Machine::default()
        };
        assert_eq!(
            bare.describe(),
            "Machine: 1 core. Source: commit abcdef0 with uncommitted changes. Run on 2026-12-02 \
             (UTC), 0 s after building."
        );
    }
}
