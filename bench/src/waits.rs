//! Where Ferry's requests waited during one level, read from its own `/metrics` before and
//! after the level (warm-up included), summed over its instances: the relay's published
//! events; on sled, the journal writer's rounds (records a round, the synced write, making the
//! round in sled, and how long each commit waited until it was durable); and the
//! plugin calls that found all their supplier's slots taken, with how long they queued.
//! PostgreSQL has no journal: its levels report the plugin's queue only.

use std::time::Duration;

/// The sum and count of a histogram, as the Prometheus text renders them (`_sum`, `_count`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Timed {
    seconds: f64,
    count: f64,
}

impl Timed {
    fn read(text: &str, name: &str) -> Self {
        Self {
            seconds: metric_sum(text, &format!("{name}_sum")),
            count: metric_sum(text, &format!("{name}_count")),
        }
    }

    fn since(self, before: Self) -> Self {
        Self {
            seconds: self.seconds - before.seconds,
            count: self.count - before.count,
        }
    }

    fn mean(self) -> Option<Duration> {
        (self.count > 0.0).then(|| Duration::from_secs_f64((self.seconds / self.count).max(0.0)))
    }

    fn add(self, other: Self) -> Self {
        Self {
            seconds: self.seconds + other.seconds,
            count: self.count + other.count,
        }
    }
}

/// The counters one scrape of `/metrics` gives (summed over instances with [`Self::add`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FerryMetrics {
    pub published_events: f64,
    journal_records: f64,
    journal_sync: Timed,
    journal_apply: Timed,
    commit_wait: Timed,
    plugin_calls: f64,
    plugin_queue_wait: Timed,
}

impl FerryMetrics {
    /// Reads the counters out of the Prometheus text of one instance.
    pub fn parse(text: &str) -> Self {
        Self {
            published_events: metric_sum(text, "ferry_events_published_total"),
            journal_records: metric_sum(text, "ferry_journal_records_total"),
            journal_sync: Timed::read(text, "ferry_journal_sync_seconds"),
            journal_apply: Timed::read(text, "ferry_journal_apply_seconds"),
            commit_wait: Timed::read(text, "ferry_journal_commit_wait_seconds"),
            plugin_calls: metric_sum(text, "ferry_plugin_calls_total"),
            plugin_queue_wait: Timed::read(text, "ferry_plugin_queue_wait_seconds"),
        }
    }

    /// Scrapes every instance's `/metrics` and sums them.
    pub async fn scrape(client: &reqwest::Client, bases: &[String]) -> anyhow::Result<Self> {
        let mut total = Self::default();
        for base in bases {
            let text = client
                .get(format!("{base}/metrics"))
                .send()
                .await?
                .error_for_status()?
                .text()
                .await?;
            total = total.add(Self::parse(&text));
        }
        Ok(total)
    }

    fn add(self, other: Self) -> Self {
        Self {
            published_events: self.published_events + other.published_events,
            journal_records: self.journal_records + other.journal_records,
            journal_sync: self.journal_sync.add(other.journal_sync),
            journal_apply: self.journal_apply.add(other.journal_apply),
            commit_wait: self.commit_wait.add(other.commit_wait),
            plugin_calls: self.plugin_calls + other.plugin_calls,
            plugin_queue_wait: self.plugin_queue_wait.add(other.plugin_queue_wait),
        }
    }

    /// What happened between `before` and this scrape.
    pub fn waits_since(&self, before: &Self) -> Waits {
        let sync = self.journal_sync.since(before.journal_sync);
        let rounds = sync.count.max(0.0) as u64;
        let records = (self.journal_records - before.journal_records).max(0.0);
        let queued = self.plugin_queue_wait.since(before.plugin_queue_wait);
        Waits {
            journal: (rounds > 0).then(|| JournalWaits {
                rounds,
                records_per_round: records / rounds as f64,
                sync: sync.mean().unwrap_or_default(),
                apply: self
                    .journal_apply
                    .since(before.journal_apply)
                    .mean()
                    .unwrap_or_default(),
                commit_wait: self
                    .commit_wait
                    .since(before.commit_wait)
                    .mean()
                    .unwrap_or_default(),
            }),
            plugin_calls: (self.plugin_calls - before.plugin_calls).max(0.0) as u64,
            plugin_calls_queued: queued.count.max(0.0) as u64,
            plugin_queue_wait: queued.mean(),
        }
    }
}

/// The journal writer's rounds over one level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JournalWaits {
    pub rounds: u64,
    pub records_per_round: f64,
    /// A round's synced write, on average.
    pub sync: Duration,
    /// Making a round in sled, on average.
    pub apply: Duration,
    /// From a record's commit until it was durable, on average.
    pub commit_wait: Duration,
}

impl JournalWaits {
    /// As a measurement's line prints it.
    pub fn summary(&self) -> String {
        format!(
            "{:.1} records a round, sync {:.0} µs, commit → durable {:.0} µs",
            self.records_per_round,
            self.sync.as_secs_f64() * 1e6,
            self.commit_wait.as_secs_f64() * 1e6
        )
    }
}

/// Where Ferry's requests waited over one level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waits {
    /// None without a journal (PostgreSQL) or without a durable write.
    pub journal: Option<JournalWaits>,
    pub plugin_calls: u64,
    /// Calls that found every slot of their supplier taken.
    pub plugin_calls_queued: u64,
    /// Their mean wait (refused ones included).
    pub plugin_queue_wait: Option<Duration>,
}

/// The sum of the values of every series of `name` (with labels or without) in `text`.
fn metric_sum(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('{'))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "\
# TYPE ferry_journal_records_total counter
ferry_journal_records_total 100
ferry_journal_sync_seconds{quantile=\"0.5\"} 0.0002
ferry_journal_sync_seconds_sum 0.01
ferry_journal_sync_seconds_count 40
ferry_journal_apply_seconds_sum 0.002
ferry_journal_apply_seconds_count 40
ferry_journal_commit_wait_seconds_sum 0.05
ferry_journal_commit_wait_seconds_count 100
ferry_plugin_calls_total{supplier=\"BENCH\",hook=\"map-notes\",outcome=\"ok\"} 90
ferry_plugin_calls_total_other 5
ferry_events_published_total 7
";

    const AFTER: &str = "\
ferry_journal_records_total 1100
ferry_journal_sync_seconds_sum 0.11
ferry_journal_sync_seconds_count 240
ferry_journal_apply_seconds_sum 0.012
ferry_journal_apply_seconds_count 240
ferry_journal_commit_wait_seconds_sum 0.55
ferry_journal_commit_wait_seconds_count 1100
ferry_plugin_calls_total{supplier=\"BENCH\",hook=\"map-notes\",outcome=\"ok\"} 1000
ferry_plugin_calls_total{supplier=\"BENCH\",hook=\"map-notes\",outcome=\"busy\"} 90
ferry_plugin_queue_wait_seconds_sum{supplier=\"BENCH\",hook=\"map-notes\"} 0.03
ferry_plugin_queue_wait_seconds_count{supplier=\"BENCH\",hook=\"map-notes\"} 300
ferry_events_published_total 1007
";

    fn micros(duration: Duration) -> f64 {
        (duration.as_secs_f64() * 1e6).round()
    }

    #[test]
    fn a_levels_waits_are_the_differences_of_two_scrapes() {
        let before = FerryMetrics::parse(BEFORE);
        let after = FerryMetrics::parse(AFTER);
        assert_eq!(after.published_events - before.published_events, 1000.0);
        let waits = after.waits_since(&before);
        let journal = waits.journal.expect("rounds were written");
        assert_eq!(journal.rounds, 200);
        assert!(
            (journal.records_per_round - 5.0).abs() < 1e-9,
            "{journal:?}"
        );
        assert_eq!(micros(journal.sync), 500.0);
        assert_eq!(micros(journal.apply), 50.0);
        assert_eq!(micros(journal.commit_wait), 500.0);
        assert_eq!(
            waits.plugin_calls, 1000,
            "series of other names are not counted"
        );
        assert_eq!(waits.plugin_calls_queued, 300);
        assert_eq!(waits.plugin_queue_wait.map(micros), Some(100.0));
    }

    #[test]
    fn without_a_journal_or_a_queue_there_is_nothing_to_report() {
        let text = "ferry_plugin_calls_total{hook=\"map-notes\"} 10\n";
        let waits = FerryMetrics::parse(text).waits_since(&FerryMetrics::default());
        assert_eq!(waits.journal, None);
        assert_eq!(waits.plugin_calls, 10);
        assert_eq!(waits.plugin_calls_queued, 0);
        assert_eq!(waits.plugin_queue_wait, None);
    }

    #[test]
    fn instances_are_summed() {
        let one = FerryMetrics::parse(AFTER);
        let both = one.add(one);
        assert_eq!(both.published_events, 2014.0);
        let waits = both.waits_since(&FerryMetrics::default());
        assert_eq!(waits.journal.map(|journal| journal.rounds), Some(480));
    }
}
