//! Work only one instance may do at a time (the event relay, the expiry sweep), run under a
//! lease in the store ([`crate::domain::storage::LeaseStore::hold_lease`]).
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
use tokio_util::sync::CancellationToken;

/// How long a lease lasts unless renewed.
pub const TTL: Duration = Duration::from_secs(10);
/// How often the holder renews it.
pub const RENEW_EVERY: Duration = Duration::from_secs(2);
/// How often an instance without it asks.
pub const RETRY: Duration = Duration::from_secs(1);

/// Runs `work` (given a stop signal of its own) while this instance holds the lease `name`,
/// until `shutdown`; then gives the lease up. `on_standby` is called whenever another instance
/// holds it. The work runs inside this task: it ends before this does.
pub async fn run_while_held<W, F>(
    store: Arc<dyn Store>,
    name: &'static str,
    holder: String,
    shutdown: CancellationToken,
    on_standby: impl Fn(),
    work: W,
) where
    W: Fn(CancellationToken) -> F,
    F: Future<Output = ()>,
{
    loop {
        if shutdown.is_cancelled() {
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
                () = shutdown.cancelled() => return,
            }
        }
        tracing::info!(lease = name, holder = %holder, "took the lease: running here");
        let mut renewed = Instant::now();
        // Stopped at shutdown, or here when the lease is lost.
        let stop_work = shutdown.child_token();
        let running = work(stop_work.clone());
        tokio::pin!(running);
        let ended_by_shutdown = loop {
            tokio::select! {
                _ = tokio::time::sleep(RENEW_EVERY) => {}
                () = shutdown.cancelled() => break true,
                () = &mut running => {
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
        stop_work.cancel();
        running.await;
        if ended_by_shutdown {
            let _ = store.release_lease(name, &holder).await;
            return;
        }
    }
}
