//! The process-wide Prometheus recorder behind `/metrics`, and its upkeep.
//!
//! The recorder keeps each sample a histogram records (a request's duration, a commit's wait
//! for the disk, a plugin call's time) until something drains the samples into the
//! histogram's summary. Rendering `/metrics` does; so does the upkeep, which a thread of its
//! own runs every [`UPKEEP_EVERY`]. The recorder is built with
//! `PrometheusBuilder::build_recorder`, which starts no upkeep (the exporter's own upkeep task
//! comes only with its HTTP listener or push gateway, which Ferry does not use). Without this
//! thread, a Ferry that nobody scraped kept every sample for as long as it ran: 16 bytes each
//! (the value and the instant it was recorded at), four or five a note.

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;

/// How often the samples recorded since are drained into their summaries: what a Ferry holds
/// of them is what it records in this time.
pub const UPKEEP_EVERY: Duration = Duration::from_secs(1);

/// The process-wide Prometheus recorder, installed on first use, with its upkeep.
pub fn metrics_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            if metrics::set_global_recorder(recorder).is_err() {
                tracing::warn!("a metrics recorder was already installed");
            }
            start_upkeep(handle.clone());
            handle
        })
        .clone()
}

/// One thread for the life of the process (the recorder's), draining the histograms'
/// samples every [`UPKEEP_EVERY`].
fn start_upkeep(handle: PrometheusHandle) {
    let spawned = std::thread::Builder::new()
        .name("metrics-upkeep".into())
        .spawn(move || {
            loop {
                std::thread::sleep(UPKEEP_EVERY);
                handle.run_upkeep();
            }
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "cannot start the metrics upkeep: histogram samples are kept until /metrics is read");
    }
}
