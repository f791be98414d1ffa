//! Running the service: open the store, resolve the operator key, start the background tasks,
//! serve HTTP until the shutdown future resolves, then drain in-flight requests, stop the
//! background tasks and flush.
//!
//! Every background task (the storage watch, the event relay, the plugins' sync and watch,
//! the look-out for interrupted bulk migrations, the expiry sweep, the event retention, the
//! scheduled migrations, and the bulk migrations themselves) is spawned through one
//! [`Background`], which hands each the shutdown signal; once the last connection is closed
//! it fires the signal and waits for them ([`BACKGROUND_STOP_GRACE`] at most).

use crate::api::connections::ConnectionLimits;
use crate::api::{self, AppState, sandbox};
use crate::auth::{self, Authenticator};
use crate::config::Settings;
use crate::documents::Bucket;
use crate::domain::background::Background;
use crate::domain::migrations;
use crate::domain::storage::Outbox;
use crate::domain::storage::Unwritable;
use crate::events::relay::{self, RelayConfig, RelayStatus};
use crate::lease;
use crate::plugins::{Plugins, Runtime};
use crate::store::health::{self, StorageHealth};
use crate::store::{PgStore, SledStore, Store, StoreError};
use crate::vendors::{HttpVendors, VendorSettings};
use serde_json::json;
use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot use data directory {path}: {source}")]
    DataDir {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the store: {0}")]
    Store(#[from] StoreError),
    /// The database could not be reached on start (within `--database-wait-ms`).
    #[error("cannot reach the database ({0}); start again once it answers")]
    DatabaseAway(String),
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: String,
        #[source]
        source: std::io::Error,
    },
    #[error("server failed: {0}")]
    Serve(#[source] std::io::Error),
    #[error("invalid settings: {0}")]
    Config(String),
    #[error("demo set-up failed: {0}")]
    Demo(String),
    /// A write failed for storage reasons: the server stopped for its supervisor to start it
    /// again once the storage is repaired.
    #[error("stopped because the storage failed: {0}")]
    StorageFailed(Unwritable),
}

impl ServerError {
    /// The error of connecting to the database: one it cannot reach is said so.
    pub fn connecting(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(cause) => Self::DatabaseAway(cause),
            other => Self::Store(other),
        }
    }
}

/// How often an instance over a shared database reads every scheduled migration again, so
/// that one staged through an instance that is gone still runs (at most this late).
const SCHEDULE_RESCAN_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// How often the plugins in use are compared with those the store holds.
const PLUGIN_SYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The thread the event relay runs on, on sled.
pub const RELAY_THREAD: &str = "event-relay";

/// How long a server whose storage failed goes on serving reads (answering `/readyz` with 503)
/// before it stops.
const FAILED_STORAGE_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// How long a shutdown waits for the background tasks to stop once told to. Long enough for a
/// bulk migration to finish the account it is on (its documents and payment instructions are
/// checked with deadlines of 5 s each by default); a task still running after it is left as a
/// process that died would leave it, to be taken over.
const BACKGROUND_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(15);

/// Runs `task` on a thread named `name`, with a runtime of its own: the relay on sled. As one
/// task among every connection's on the shared workers, it waited behind each of them (a
/// 1000-item request holds a worker for milliseconds) and fell ever further behind the
/// events being written. Over PostgreSQL it stays on the shared workers: connections it
/// opened would be driven by its runtime. The thread is started at once; the future returned
/// resolves when the task has ended, for the task's owner to wait on.
fn on_a_thread_of_its_own(
    name: &str,
    task: impl Future<Output = ()> + Send + 'static,
) -> Result<impl Future<Output = ()> + Send + 'static, ServerError> {
    let (ended, end) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime.block_on(task),
                Err(error) => tracing::error!(%error, "no runtime for a task of its own"),
            }
            let _ = ended.send(());
        })
        .map_err(ServerError::Serve)?;
    Ok(async move {
        let _ = end.await;
    })
}

/// Serves until `shutdown` resolves, or until a write fails for storage reasons
/// ([`ServerError::StorageFailed`]: a supervisor is to start it again).
pub async fn run(
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    // Before anything opens a file: the descriptors the connections' bound is taken from.
    let open_files = crate::api::connections::raise_open_files_limit();
    let connection_limits = ConnectionLimits {
        max_connections: settings
            .max_connections
            .unwrap_or_else(|| crate::api::connections::default_max_connections(open_files)),
        client_timeout: settings.limits.client_timeout,
    };
    tracing::info!(
        open_files = ?open_files,
        max_connections = connection_limits.max_connections,
        client_timeout_seconds = ?connection_limits.client_timeout.map(|timeout| timeout.as_secs()),
        "client connections"
    );
    let data_dir = &settings.data_dir;
    std::fs::create_dir_all(data_dir).map_err(|source| ServerError::DataDir {
        path: data_dir.display().to_string(),
        source,
    })?;
    // The recorder first: the store's journal and the plugins make their metric handles as
    // they open, and a handle made before it is installed counts nothing.
    crate::api::metrics_handle();
    let (store, outbox, storage) = open_store(&settings).await?;
    // Compile the account document's schema before the first request, not during it.
    crate::domain::request_document::prepare();
    let operator_key = resolve_operator_key(&settings)?;
    let auth = Authenticator::new(store.clone(), &operator_key).await?;
    let bucket = Bucket::open(&settings.bucket, settings.bucket_deadline)
        .map_err(|error| ServerError::Config(error.to_string()))?;

    let listener = crate::api::connections::listen(&settings.listen)
        .await
        .map_err(|source| ServerError::Listen {
            address: settings.listen.clone(),
            source,
        })?;
    let address = listener.local_addr().map_err(ServerError::Serve)?;
    let mut vendor_settings = settings.vendors.clone();
    if settings.demo {
        vendor_settings.insert(
            sandbox::VENDOR_CODE.to_owned(),
            VendorSettings {
                url: format!("http://{address}{}", sandbox::BASE_PATH),
                key: Some(sandbox::VENDOR_KEY.to_owned()),
            },
        );
    }
    let vendors = HttpVendors::new(&vendor_settings, settings.vendor_deadline)
        .map_err(|error| ServerError::Config(error.to_string()))?;
    let runtime = Runtime::new(settings.plugin_limits, Some(data_dir.join("plugin-cache")))
        .map_err(|error| ServerError::Config(error.to_string()))?;
    let plugins = Arc::new(
        Plugins::open(Arc::new(runtime), store.clone())
            .await
            .map_err(|error| ServerError::Config(error.to_string()))?
            .with_bulkhead(settings.plugin_bulkhead),
    );
    let mut state = AppState::new(
        store.clone(),
        auth,
        settings.limits,
        Arc::new(bucket),
        Arc::new(vendors),
        plugins.clone(),
    );
    // Every task that outlives a request, bulk migrations included, runs through it.
    let background = Background::new();
    state.migrations = state.migrations.clone().with_background(background.clone());
    // With Redis, a key's rate limit is counted there: it holds across every instance.
    if let Some(url) = &settings.redis_url {
        state.throttle = state
            .throttle
            .clone()
            .shared_through(url)
            .map_err(|error| ServerError::Config(format!("invalid Redis URL: {error}")))?;
    }
    // A bulk migration that a restart (or another instance's end) interrupted goes on here.
    match state.migrations.resume_orphans().await {
        Ok(0) => {}
        Ok(count) => tracing::warn!(count, "interrupted bulk migrations taken over"),
        Err(error) => tracing::error!(%error, "cannot take interrupted bulk migrations over"),
    }
    match state.imports.release_interrupted().await {
        Ok(0) => {}
        Ok(count) => tracing::warn!(
            count,
            "accounts of an interrupted bulk migration are pending again"
        ),
        Err(error) => {
            tracing::error!(%error, "cannot release accounts of an interrupted bulk migration")
        }
    }
    tracing::info!(%address, data_dir = %data_dir.display(), bucket = %settings.bucket, "ferry listening");
    announce(&format!("ferry listening on http://{address}"));
    if settings.demo {
        provision_demo(&state, &address.to_string()).await?;
    }

    // This instance, among those over one database (leases name their holder by it).
    let instance = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
    state.storage = storage.clone();
    background.spawn(
        "storage watch",
        every(health::POLL_INTERVAL, background.shutdown(), {
            let storage = storage.clone();
            move || {
                storage.refresh();
                std::future::ready(())
            }
        }),
    );
    if let Some(url) = &settings.redis_url {
        let status = Arc::new(RelayStatus::new(true));
        state.relay = status.clone();
        let config = RelayConfig {
            url: url.clone(),
            stream: settings.redis_stream.clone(),
            max_len: settings.redis_maxlen,
            batch: 1024,
        };
        let standby = status.clone();
        let outbox = outbox.clone();
        let relay = lease::run_while_held(
            store.clone(),
            "event-relay",
            instance.clone(),
            background.shutdown(),
            move || standby.standing_by(),
            move |stop| relay::run(outbox.clone(), config.clone(), status.clone(), stop),
        );
        if settings.database_url.is_none() {
            background.spawn("event relay", on_a_thread_of_its_own(RELAY_THREAD, relay)?);
        } else {
            background.spawn("event relay", relay);
        }
    }
    // A plugin installed, replaced or removed through another instance is used here within
    // a second or two.
    background.spawn(
        "plugin sync",
        every(PLUGIN_SYNC_EVERY, background.shutdown(), {
            let plugins = plugins.clone();
            move || {
                let plugins = plugins.clone();
                async move {
                    if let Err(error) = plugins.sync_with_store().await {
                        tracing::warn!(%error, "cannot read the stored plugins");
                    }
                }
            }
        }),
    );
    // Bulk migrations whose instance died, or that a stopping instance handed over, are taken
    // over by the first instance to notice.
    background.spawn(
        "interrupted bulk migrations",
        every(migrations::ORPHANS_EVERY, background.shutdown(), {
            let migrations = state.migrations.clone();
            move || {
                let migrations = migrations.clone();
                async move {
                    if let Err(error) = migrations.resume_orphans().await {
                        tracing::warn!(%error, "cannot look for interrupted bulk migrations");
                    }
                }
            }
        }),
    );
    background.spawn(
        "expiry sweep",
        lease::run_while_held(
            store.clone(),
            "expiry-sweep",
            instance.clone(),
            background.shutdown(),
            || {},
            {
                let state = state.clone();
                let every = settings.expiry_sweep;
                move |stop| sweep_expired(state.clone(), every, stop)
            },
        ),
    );
    if let Some(retention) = settings.event_retention {
        background.spawn(
            "event retention",
            lease::run_while_held(
                store.clone(),
                crate::events::retention::LEASE,
                instance.clone(),
                background.shutdown(),
                || {},
                {
                    let store = store.clone();
                    move |stop| crate::events::retention::run(store.clone(), retention, stop)
                },
            ),
        );
    }
    let arrivals = state
        .schedule_arrivals
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(arrivals) = arrivals {
        background.spawn(
            "scheduled migrations",
            crate::domain::schedules::run(
                state.imports.clone(),
                instance.clone(),
                // One process holds a sled directory: it knows every schedule already.
                settings
                    .database_url
                    .is_some()
                    .then_some(SCHEDULE_RESCAN_EVERY),
                arrivals,
                background.shutdown(),
            ),
        );
    }
    if let Some(dir) = &settings.plugin_dir {
        let watching = crate::plugins::watch::watching(dir.clone(), plugins, background.shutdown())
            .map_err(|error| {
                ServerError::Config(format!("cannot watch {}: {error}", dir.display()))
            })?;
        background.spawn("plugin directory watch", watching);
    }

    let mut app = api::router(state);
    if settings.demo {
        app = app.merge(sandbox::router());
    }
    // A failed write stops the server as a signal would: after FAILED_STORAGE_DRAIN, in which
    // `/readyz` answers 503 so a load balancer stops sending requests, and once the requests
    // in flight are done.
    let storage_failed = storage.clone();
    let shutdown = async move {
        tokio::select! {
            () = shutdown => {}
            reason = storage_failed.failed() => {
                tracing::error!(%reason, drain_seconds = FAILED_STORAGE_DRAIN.as_secs(), "the storage failed: reads are served, writes refused, until the server stops for its supervisor to start it again");
                tokio::time::sleep(FAILED_STORAGE_DRAIN).await;
            }
        }
    };
    crate::api::connections::serve(listener, app, connection_limits, shutdown).await;
    tracing::info!("shutting down");
    // No request is left to start a task: every task is told to stop, and waited for.
    if background.stop(BACKGROUND_STOP_GRACE).await {
        tracing::info!("background tasks stopped");
    }
    if let Some(reason) = storage.failure() {
        // Nothing more can be made durable in this process; what was acknowledged is.
        return Err(ServerError::StorageFailed(reason));
    }
    store.flush().await?;
    Ok(())
}

/// Runs `work` every `period` (the first time one period after the start) until `stop`.
async fn every<F, Fut>(period: std::time::Duration, stop: CancellationToken, mut work: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            () = stop.cancelled() => return,
        }
        work().await;
    }
}

/// The store the settings name: PostgreSQL (its migrations applied) when a database URL is
/// given, else sled in the data directory, watched against its free-space watermark.
async fn open_store(
    settings: &Settings,
) -> Result<(Arc<dyn Store>, Arc<dyn Outbox>, Arc<StorageHealth>), ServerError> {
    if let Some(url) = &settings.database_url {
        // The database's disk is the database's to watch: failed writes are still answered.
        let storage = Arc::new(StorageHealth::unwatched());
        let store = PgStore::connect_with(url, settings.database_limits, storage.clone())
            .await
            .map_err(ServerError::connecting)?;
        let store = Arc::new(store);
        tracing::info!("store: PostgreSQL");
        return Ok((store.clone(), store, storage));
    }
    let data_dir = &settings.data_dir;
    let watermark = settings
        .min_free_bytes
        .unwrap_or_else(|| health::default_watermark(data_dir));
    let storage = Arc::new(StorageHealth::watching(data_dir, watermark));
    let store = Arc::new(SledStore::open_with(
        &data_dir.join("db"),
        settings.store_cache_bytes,
        storage.clone(),
    )?);
    Ok((store.clone(), store, storage))
}

/// Prints a line on stdout for people and scripts (logs go to stderr).
fn announce(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

/// The operator key: from settings, else `<data-dir>/operator.key`, else a new one written
/// there (mode 0600) and printed once.
fn resolve_operator_key(settings: &Settings) -> Result<String, ServerError> {
    if let Some(key) = &settings.operator_key {
        return Ok(key.clone());
    }
    let path = settings.data_dir.join("operator.key");
    let io_error = |source| ServerError::DataDir {
        path: path.display().to_string(),
        source,
    };
    match std::fs::read_to_string(&path) {
        Ok(key) if !key.trim().is_empty() => return Ok(key.trim().to_owned()),
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(io_error(error)),
    }
    let key = auth::generate_operator_key();
    write_private(&path, &key).map_err(io_error)?;
    announce(&format!(
        "operator key (shown once; also in {}): {key}",
        path.display()
    ));
    Ok(key)
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()
}

/// Cancels expired staged accounts every `every`, until told to stop.
async fn sweep_expired(state: AppState, every: std::time::Duration, stop: CancellationToken) {
    loop {
        match state.imports.cancel_expired(chrono::Utc::now()).await {
            Ok(cancelled) if !cancelled.is_empty() => {
                tracing::info!(
                    count = cancelled.len(),
                    "cancelled expired import processes"
                );
            }
            Ok(_) => {}
            Err(error) => tracing::error!(%error, "expiry sweep failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            () = stop.cancelled() => return,
        }
    }
}

const DEMO_SUPPLIER: &str = "DEMO";

/// `--demo`: a demo supplier and a fresh API key, and a request to paste.
async fn provision_demo(state: &AppState, address: &str) -> Result<(), ServerError> {
    let demo_error =
        |error: crate::domain::error::DomainError| ServerError::Demo(error.to_string());
    let created = state
        .admin
        .create_supplier(&json!({
            "code": DEMO_SUPPLIER,
            "name": "Demo Energy (retiring)",
            "document_root": "demo/",
        }))
        .await;
    match created {
        Ok(_) | Err(crate::domain::error::DomainError::SupplierExists(_)) => {}
        Err(error) => return Err(demo_error(error)),
    }
    let issued = state
        .admin
        .create_api_key(&json!({"organisation": "Demo Energy", "suppliers": [DEMO_SUPPLIER]}))
        .await
        .map_err(demo_error)?;
    let key = issued.key;
    announce("Building the example plugin for the demo (the first time takes a minute)…");
    let example = tokio::task::spawn_blocking(crate::plugins::dev::example_plugin)
        .await
        .unwrap_or_else(|error| Err(format!("the build did not finish: {error}")));
    match example.and_then(|path| {
        std::fs::read(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))
    }) {
        Ok(component) => {
            let config = [("default_country_code".to_owned(), "44".to_owned())]
                .into_iter()
                .collect();
            let record = state
                .plugins
                .install(
                    DEMO_SUPPLIER,
                    component,
                    Some("example-plugin".into()),
                    Some("0.1.0".into()),
                    Some(config),
                )
                .await
                .map_err(demo_error)?;
            announce(&format!(
                "The example plugin ({}) normalises DEMO's phone numbers.",
                record.label()
            ));
        }
        Err(reason) => announce(&format!(
            "The demo runs without its example plugin: {reason}. Then start `serve --demo` again."
        )),
    }
    announce(&format!(
        r#"
Demo supplier {DEMO_SUPPLIER} is ready. Its API key (shown once): {key}

Get a token:
  TOKEN=$(curl -s http://{address}/v1/graphql/ -H 'Content-Type: application/json' \
    -d '{{"query":"mutation($input: ObtainJSONWebTokenInput!) {{ obtainPlatformToken(input: $input) {{ token }} }}","variables":{{"input":{{"APIKey":"{key}"}}}}}}' \
    | sed -E 's/.*"token":"([^"]+)".*/\1/')

Stage an account:
  curl -s http://{address}/v1/data-import/account-import-process/create-or-update/ \
    -H "Authorization: Token $TOKEN" -H 'Content-Type: application/json' \
    -d '{{"import_supplier":"{DEMO_SUPPLIER}","external_account_number":"DEMO-1","account_type":"DOMESTIC","billing_name":"Ada Lovelace","billing_address1":"1 Analytical Street","billing_address4":"London","billing_postcode":"N1 1AA","customers":[{{"given_name":"Ada","family_name":"Lovelace","email":"ada@example.com","mobile":"07700 900123"}}],"supply_addresses":[{{"supply_address1":"1 Analytical Street","supply_postcode":"N1 1AA","customer_at_supply_address_from_date":"2024-01-01","meter_points":[{{"supply_type":"ELECTRICITY","identifier":"1200023305967","mpid":"TENT","supply_start_date":"2024-01-01"}}]}}]}}'
"#
    ));
    Ok(())
}
