//! Work only one instance may do at a time (the event relay, the expiry sweep), run under a
//! lease in the store ([`crate::domain::storage::Store::hold_lease`]).
//!
//! Each instance asks for the lease every [`RETRY`]; the one that gets it starts the work and
//! renews the lease every [`RENEW_EVERY`]. When it cannot renew it for half the lease's life it
//! stops the work, before the lease can pass to another instance; when it dies the lease
//! expires after [`TTL`] and another instance takes it. On the embedded store one process
//! holds every lease, so the work simply runs.

use crate::domain::storage::Store;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long a lease lasts unless renewed.
pub const TTL: Duration = Duration::from_secs(10);
/// How often the holder renews it.
pub const RENEW_EVERY: Duration = Duration::from_secs(2);
/// How often an instance without it asks.
pub const RETRY: Duration = Duration::from_secs(1);

/// Runs `work` (given a stop signal of its own) while this instance holds the lease `name`,
/// until `stop`; then gives the lease up. `on_standby` is called whenever another instance
/// holds it.
pub async fn run_while_held<W, F>(
    store: Arc<dyn Store>,
    name: &'static str,
    holder: String,
    mut stop: watch::Receiver<bool>,
    on_standby: impl Fn(),
    work: W,
) where
    W: Fn(watch::Receiver<bool>) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    loop {
        if *stop.borrow() {
            return;
        }
        let held = match store.hold_lease(name, &holder, TTL).await {
            Ok(held) => held,
            Err(error) => {
                tracing::warn!(lease = name, %error, "cannot ask for the lease");
                false
            }
        };
        if !held {
            on_standby();
            tokio::select! {
                _ = tokio::time::sleep(RETRY) => continue,
                _ = stop.changed() => return,
            }
        }
        tracing::info!(lease = name, holder = %holder, "took the lease: running here");
        let mut renewed = Instant::now();
        let (stop_work, work_stopped) = watch::channel(false);
        let mut running = tokio::spawn(work(work_stopped));
        let ended_by_stop = loop {
            tokio::select! {
                _ = tokio::time::sleep(RENEW_EVERY) => {}
                _ = stop.changed() => break true,
                _ = &mut running => {
                    // The work ended by itself (an invalid Redis URL): nothing more to hold.
                    let _ = store.release_lease(name, &holder).await;
                    return;
                }
            }
            match store.hold_lease(name, &holder, TTL).await {
                Ok(true) => renewed = Instant::now(),
                Ok(false) => {
                    tracing::warn!(lease = name, "the lease passed to another instance");
                    break false;
                }
                Err(error) if renewed.elapsed() >= TTL / 2 => {
                    tracing::warn!(lease = name, %error, "cannot renew the lease: stopping here");
                    break false;
                }
                Err(error) => tracing::warn!(lease = name, %error, "cannot renew the lease yet"),
            }
        };
        let _ = stop_work.send(true);
        let _ = running.await;
        if ended_by_stop {
            let _ = store.release_lease(name, &holder).await;
            return;
        }
    }
}
