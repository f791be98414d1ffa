//! Settings: command-line flags, `FERRY_*` environment variables and an optional `ferry.toml`,
//! in that order of precedence, over embedded defaults that need nothing installed.

use crate::api::Limits;
use crate::store::{DEFAULT_DATABASE_TIMEOUT, DEFAULT_DATABASE_WAIT, DatabaseLimits};
use crate::vendors::VendorSettings;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub const DEFAULT_DATA_DIR: &str = "ferry-data";
pub const DEFAULT_REDIS_STREAM: &str = "ferry:events";
const DEFAULT_CONFIG_FILE: &str = "ferry.toml";
/// How long a published event stays in the event log unless told: thirty days.
pub const DEFAULT_EVENT_RETENTION_SECONDS: u64 = 30 * 24 * 3600;

/// Flags of `ferry serve`; each also reads its `FERRY_*` variable.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Settings file (TOML). Default: ./ferry.toml when it exists.
    #[arg(long, env = "FERRY_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1:8080; port 0 picks a free port).
    #[arg(long, env = "FERRY_LISTEN")]
    pub listen: Option<String>,
    /// Where sled keeps its files (default ./ferry-data).
    #[arg(long, env = "FERRY_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Memory sled's page cache may use, in MiB (default 32). The kept indexes may each take
    /// 128 MiB, or an eighth of this when that is more.
    #[arg(long, env = "FERRY_STORE_CACHE_MB")]
    pub store_cache_mb: Option<u64>,
    /// PostgreSQL to keep everything in (`postgres://user@host/db`), shared by every instance
    /// given it; unset: sled in the data directory.
    #[arg(long, env = "FERRY_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// How long a request may wait for a PostgreSQL connection, in milliseconds, before it is
    /// answered 503 `storage_unavailable`: how soon a database that cannot be reached is
    /// reported (default 5000).
    #[arg(long, env = "FERRY_DATABASE_WAIT_MS")]
    pub database_wait_ms: Option<u64>,
    /// How long one storage operation may wait for PostgreSQL's answers, in milliseconds,
    /// before it is answered 503 `storage_unavailable`: how soon a database that stops
    /// answering (a network that drops packets silently) is reported. PostgreSQL ends a
    /// session of Ferry's left this long in a transaction (default 10000).
    #[arg(long, env = "FERRY_DATABASE_TIMEOUT_MS")]
    pub database_timeout_ms: Option<u64>,
    /// Free space the data directory keeps, in MiB: below it writes are refused with 507
    /// until space is freed (default 256, or a tenth of the filesystem when less; never below
    /// 16.5, what one write step of the embedded store takes; 0: off).
    #[arg(long, env = "FERRY_MIN_FREE_MB")]
    pub min_free_mb: Option<u64>,
    /// Redis URL for the event relay and the rate limits shared by every instance (unset:
    /// events wait in the outbox, each instance counts its own requests).
    #[arg(long, env = "FERRY_REDIS_URL")]
    pub redis_url: Option<String>,
    /// Redis stream the relay writes to (default ferry:events).
    #[arg(long, env = "FERRY_REDIS_STREAM")]
    pub redis_stream: Option<String>,
    /// Document bucket, `file://...` or `s3://...` (default file://<data-dir>/bucket).
    #[arg(long, env = "FERRY_BUCKET")]
    pub bucket: Option<String>,
    /// Operator key for the admin API (unset: generated on first start into
    /// <data-dir>/operator.key).
    #[arg(long, env = "FERRY_OPERATOR_KEY", hide_env_values = true)]
    pub operator_key: Option<String>,
    /// Approximate length the Redis stream is trimmed to (default 1000000).
    #[arg(long, env = "FERRY_REDIS_MAXLEN")]
    pub redis_maxlen: Option<usize>,
    /// Largest accepted request body, in bytes (default 2 MiB).
    #[arg(long, env = "FERRY_MAX_BODY_BYTES")]
    pub max_body_bytes: Option<usize>,
    /// Most items accepted in one array of a request (default 1000).
    #[arg(long, env = "FERRY_MAX_ITEMS")]
    pub max_items: Option<usize>,
    /// Average requests a second allowed per API key; 0 turns the limit off (default 100).
    #[arg(long, env = "FERRY_RATE_LIMIT_PER_SECOND")]
    pub rate_limit_per_second: Option<u32>,
    /// Requests an API key may send in a burst (default 200).
    #[arg(long, env = "FERRY_RATE_LIMIT_BURST")]
    pub rate_limit_burst: Option<u32>,
    /// Accounts `process/` migrates at once; past it 429 (default 0: no limit).
    #[arg(long, env = "FERRY_MAX_CONCURRENT_PROCESSES")]
    pub max_concurrent_processes: Option<usize>,
    /// Most client connections served at once; past it the server accepts no more until one
    /// closes (default: the open-files limit less 256 for the store and the rest, at most
    /// 10000).
    #[arg(long, env = "FERRY_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// How long a client may send nothing of a request, or take nothing of its answer, in
    /// seconds, before its connection is closed (an idle keep-alive connection, headers that
    /// never end, an answer not read) or the request answered 408 (a body that stopped
    /// arriving) (default 60; 0 waits for ever).
    #[arg(long, env = "FERRY_CLIENT_TIMEOUT_SECONDS")]
    pub client_timeout_seconds: Option<u64>,
    /// Seconds between sweeps that cancel expired staged accounts (default 3600).
    #[arg(long, env = "FERRY_EXPIRY_SWEEP_SECONDS")]
    pub expiry_sweep_seconds: Option<u64>,
    /// How long the event log keeps an event once it was made, in seconds, if the relay
    /// published it (default 2592000, thirty days; 0 keeps every event). An event not yet
    /// published is kept, however old.
    #[arg(long, env = "FERRY_EVENT_RETENTION_SECONDS")]
    pub event_retention_seconds: Option<u64>,
    /// How long a payment vendor may take, retries included, in milliseconds (default 5000).
    #[arg(long, env = "FERRY_VENDOR_DEADLINE_MS")]
    pub vendor_deadline_ms: Option<u64>,
    /// How long checking that a document is in the bucket may take, retries included, in
    /// milliseconds, before the request is answered 500 `document_store_unavailable`
    /// (default 5000).
    #[arg(long, env = "FERRY_BUCKET_DEADLINE_MS")]
    pub bucket_deadline_ms: Option<u64>,
    /// Development: install DIR/<SUPPLIER>.wasm for its supplier whenever it changes.
    #[arg(long, env = "FERRY_PLUGIN_DIR")]
    pub plugin_dir: Option<PathBuf>,
    /// How much CPU time one plugin hook call may use, in milliseconds (default 100): the
    /// time its thread ran it, not the time it waited for a core.
    #[arg(long, env = "FERRY_PLUGIN_DEADLINE_MS")]
    pub plugin_deadline_ms: Option<u64>,
    /// Memory one plugin hook call may use, in MiB (default 64).
    #[arg(long, env = "FERRY_PLUGIN_MEMORY_MB")]
    pub plugin_memory_mb: Option<usize>,
    /// Hook calls of one supplier that may run at once (default: half the cores, at least 1).
    #[arg(long, env = "FERRY_PLUGIN_CONCURRENCY")]
    pub plugin_concurrency: Option<usize>,
    /// How long a hook call may wait for one of its supplier's slots before the request is
    /// refused with 503 `plugin_busy`, in milliseconds (default 1000).
    #[arg(long, env = "FERRY_PLUGIN_QUEUE_MS")]
    pub plugin_queue_ms: Option<u64>,
    /// Threads that serve requests (default: one per core).
    #[arg(long, env = "FERRY_WORKERS")]
    pub workers: Option<usize>,
    /// Create a demo supplier and API key, and print a ready-to-paste request.
    #[arg(long)]
    pub demo: bool,
}

/// The contents of `ferry.toml` (every key optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    listen: Option<String>,
    data_dir: Option<PathBuf>,
    store_cache_mb: Option<u64>,
    min_free_mb: Option<u64>,
    database_url: Option<String>,
    database_wait_ms: Option<u64>,
    database_timeout_ms: Option<u64>,
    redis_url: Option<String>,
    redis_stream: Option<String>,
    redis_maxlen: Option<usize>,
    bucket: Option<String>,
    operator_key: Option<String>,
    max_body_bytes: Option<usize>,
    max_items: Option<usize>,
    rate_limit_per_second: Option<u32>,
    rate_limit_burst: Option<u32>,
    max_concurrent_processes: Option<usize>,
    max_connections: Option<usize>,
    client_timeout_seconds: Option<u64>,
    expiry_sweep_seconds: Option<u64>,
    event_retention_seconds: Option<u64>,
    vendor_deadline_ms: Option<u64>,
    bucket_deadline_ms: Option<u64>,
    plugin_dir: Option<PathBuf>,
    plugin_deadline_ms: Option<u64>,
    plugin_memory_mb: Option<usize>,
    plugin_concurrency: Option<usize>,
    plugin_queue_ms: Option<u64>,
    workers: Option<usize>,
    /// `[vendors.STRIPE] url = "...", key = "..."`
    #[serde(default)]
    vendors: BTreeMap<String, VendorSettings>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read settings file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid settings file {path}: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    #[error("invalid setting {name}: {detail}")]
    Invalid { name: &'static str, detail: String },
}

/// The resolved settings of a server.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: String,
    pub data_dir: PathBuf,
    /// The bound of sled's page cache.
    pub store_cache_bytes: u64,
    /// PostgreSQL instead of sled.
    pub database_url: Option<String>,
    /// How long Ferry waits on PostgreSQL: for a connection, and for an operation's answers.
    pub database_limits: DatabaseLimits,
    /// The free-space watermark of the data directory (none: the default for its
    /// filesystem, [`crate::store::health::default_watermark`]).
    pub min_free_bytes: Option<u64>,
    pub redis_url: Option<String>,
    pub redis_stream: String,
    pub redis_maxlen: usize,
    pub bucket: String,
    pub operator_key: Option<String>,
    pub limits: Limits,
    /// Most client connections served at once (none: from the open-files limit as the server
    /// starts, [`crate::api::connections::default_max_connections`]).
    pub max_connections: Option<usize>,
    pub expiry_sweep: Duration,
    /// How long a published event stays in the event log (none: for ever).
    pub event_retention: Option<Duration>,
    /// Payment vendors by upper-case code: `ferry.toml`, then `FERRY_VENDOR_<CODE>_URL` and
    /// `FERRY_VENDOR_<CODE>_KEY`.
    pub vendors: BTreeMap<String, VendorSettings>,
    pub vendor_deadline: Duration,
    /// How long a document's check in the bucket may take, retries included.
    pub bucket_deadline: Duration,
    pub plugin_dir: Option<PathBuf>,
    pub plugin_limits: crate::plugins::PluginLimits,
    pub plugin_bulkhead: crate::plugins::Bulkhead,
    /// The async runtime's worker threads ([`default_workers`] unless set).
    pub workers: usize,
    pub demo: bool,
}

/// The worker threads a server runs with unless told: one per core, as Tokio's default.
///
/// Fewer leave a core to sled's journal writer, which every durable write waits for and which
/// otherwise queues for a core after each wake-up. On 2 cores one worker made no more notes a
/// second and ~18 % fewer items in 1000-item batches, whose JSON is parsed on the workers, so
/// one per core is the default and fewer a setting for loads that differ.
pub fn default_workers(cores: usize) -> usize {
    cores.max(1)
}

impl Settings {
    pub fn resolve(args: ServeArgs) -> Result<Self, ConfigError> {
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None if Path::new(DEFAULT_CONFIG_FILE).exists() => {
                read_file(Path::new(DEFAULT_CONFIG_FILE))?
            }
            None => FileSettings::default(),
        };
        let defaults = Limits::default();
        let data_dir = args
            .data_dir
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        let limits = Limits {
            max_body_bytes: args
                .max_body_bytes
                .or(file.max_body_bytes)
                .unwrap_or(defaults.max_body_bytes),
            max_items: args
                .max_items
                .or(file.max_items)
                .unwrap_or(defaults.max_items),
            requests_per_second: args
                .rate_limit_per_second
                .or(file.rate_limit_per_second)
                .unwrap_or(defaults.requests_per_second),
            request_burst: args
                .rate_limit_burst
                .or(file.rate_limit_burst)
                .unwrap_or(defaults.request_burst),
            max_concurrent_processes: args
                .max_concurrent_processes
                .or(file.max_concurrent_processes)
                .unwrap_or(defaults.max_concurrent_processes),
            client_timeout: match args.client_timeout_seconds.or(file.client_timeout_seconds) {
                None => defaults.client_timeout,
                Some(0) => None,
                Some(seconds) => Some(Duration::from_secs(seconds)),
            },
        };
        let max_connections = args.max_connections.or(file.max_connections);
        if max_connections == Some(0) {
            return Err(ConfigError::Invalid {
                name: "max_connections",
                detail: "must be positive".into(),
            });
        }
        if limits.max_body_bytes == 0 || limits.max_items == 0 {
            return Err(ConfigError::Invalid {
                name: "max_body_bytes / max_items",
                detail: "must be positive".into(),
            });
        }
        let mut vendors: BTreeMap<String, VendorSettings> = file
            .vendors
            .into_iter()
            .map(|(code, vendor)| (code.to_uppercase(), vendor))
            .collect();
        vendors.extend(vendors_from_env(std::env::vars()));
        let vendor_deadline = Duration::from_millis(
            args.vendor_deadline_ms
                .or(file.vendor_deadline_ms)
                .unwrap_or(5000),
        );
        let plugin_bulkhead = crate::plugins::Bulkhead {
            calls_per_supplier: args
                .plugin_concurrency
                .or(file.plugin_concurrency)
                .unwrap_or_else(crate::plugins::Bulkhead::default_calls_per_supplier),
            queue_wait: Duration::from_millis(
                args.plugin_queue_ms
                    .or(file.plugin_queue_ms)
                    .unwrap_or(1000),
            ),
        };
        if plugin_bulkhead.calls_per_supplier == 0 {
            return Err(ConfigError::Invalid {
                name: "plugin_concurrency",
                detail: "must be positive".into(),
            });
        }
        let store_cache_bytes = match args.store_cache_mb.or(file.store_cache_mb) {
            None => crate::store::DEFAULT_CACHE_BYTES,
            Some(0) => {
                return Err(ConfigError::Invalid {
                    name: "store_cache_mb",
                    detail: "must be positive".into(),
                });
            }
            Some(mib) => mib.saturating_mul(1024 * 1024),
        };
        let workers = match args.workers.or(file.workers) {
            Some(0) => {
                return Err(ConfigError::Invalid {
                    name: "workers",
                    detail: "must be positive".into(),
                });
            }
            Some(workers) => workers,
            None => default_workers(
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            ),
        };
        let sweep = args
            .expiry_sweep_seconds
            .or(file.expiry_sweep_seconds)
            .unwrap_or(3600);
        Ok(Self {
            listen: args
                .listen
                .or(file.listen)
                .unwrap_or_else(|| DEFAULT_LISTEN.to_owned()),
            bucket: args
                .bucket
                .or(file.bucket)
                .unwrap_or_else(|| format!("file://{}", data_dir.join("bucket").display())),
            data_dir,
            store_cache_bytes,
            database_url: args.database_url.or(file.database_url),
            database_limits: DatabaseLimits {
                connection_wait: wait_or(
                    args.database_wait_ms.or(file.database_wait_ms),
                    DEFAULT_DATABASE_WAIT,
                ),
                operation: wait_or(
                    args.database_timeout_ms.or(file.database_timeout_ms),
                    DEFAULT_DATABASE_TIMEOUT,
                ),
            },
            min_free_bytes: args
                .min_free_mb
                .or(file.min_free_mb)
                .map(|mib| mib.saturating_mul(1024 * 1024)),
            redis_url: args.redis_url.or(file.redis_url),
            redis_stream: args
                .redis_stream
                .or(file.redis_stream)
                .unwrap_or_else(|| DEFAULT_REDIS_STREAM.to_owned()),
            redis_maxlen: args.redis_maxlen.or(file.redis_maxlen).unwrap_or(1_000_000),
            operator_key: args
                .operator_key
                .or(file.operator_key)
                .filter(|key| !key.is_empty()),
            limits,
            max_connections,
            expiry_sweep: Duration::from_secs(sweep.max(1)),
            event_retention: Some(
                args.event_retention_seconds
                    .or(file.event_retention_seconds)
                    .unwrap_or(DEFAULT_EVENT_RETENTION_SECONDS),
            )
            .filter(|&seconds| seconds > 0)
            .map(Duration::from_secs),
            vendors,
            vendor_deadline,
            bucket_deadline: wait_or(
                args.bucket_deadline_ms.or(file.bucket_deadline_ms),
                crate::documents::DEFAULT_BUCKET_DEADLINE,
            ),
            plugin_dir: args.plugin_dir.or(file.plugin_dir),
            plugin_limits: crate::plugins::PluginLimits {
                deadline: Duration::from_millis(
                    args.plugin_deadline_ms
                        .or(file.plugin_deadline_ms)
                        .unwrap_or(100)
                        .max(1),
                ),
                memory_bytes: args
                    .plugin_memory_mb
                    .or(file.plugin_memory_mb)
                    .unwrap_or(64)
                    .max(1)
                    << 20,
                ..crate::plugins::PluginLimits::default()
            },
            plugin_bulkhead,
            workers,
            demo: args.demo,
        })
    }
}

/// `FERRY_VENDOR_<CODE>_URL` (and `_KEY`) pairs among `variables`.
/// A wait given in milliseconds, at least one (a zero would refuse every request), or
/// `default` when none is given.
fn wait_or(ms: Option<u64>, default: Duration) -> Duration {
    ms.map_or(default, |ms| Duration::from_millis(ms.max(1)))
}

fn vendors_from_env(
    variables: impl Iterator<Item = (String, String)>,
) -> BTreeMap<String, VendorSettings> {
    let variables: BTreeMap<String, String> = variables.collect();
    variables
        .iter()
        .filter_map(|(name, url)| {
            let code = name.strip_prefix("FERRY_VENDOR_")?.strip_suffix("_URL")?;
            let key = variables.get(&format!("FERRY_VENDOR_{code}_KEY")).cloned();
            Some((
                code.to_uppercase(),
                VendorSettings {
                    url: url.clone(),
                    key,
                },
            ))
        })
        .collect()
}

fn read_file(path: &Path) -> Result<FileSettings, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_one_per_core_unless_told() {
        assert_eq!(default_workers(2), 2);
        assert_eq!(default_workers(0), 1);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ferry.toml");
        std::fs::write(&path, "workers = 3\n").expect("write");
        let from_file = |workers| {
            Settings::resolve(ServeArgs {
                config: Some(path.clone()),
                workers,
                ..ServeArgs::default()
            })
        };
        assert_eq!(from_file(None).expect("settings").workers, 3);
        assert_eq!(from_file(Some(5)).expect("settings").workers, 5);
        assert!(from_file(Some(0)).is_err());
    }

    #[test]
    fn flags_win_over_the_file_and_defaults_fill_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ferry.toml");
        std::fs::write(
            &path,
            "listen = \"127.0.0.1:9000\"\nmax_items = 5\ndata_dir = \"/tmp/x\"\n",
        )
        .expect("write");
        let settings = Settings::resolve(ServeArgs {
            config: Some(path.clone()),
            listen: Some("127.0.0.1:9100".into()),
            ..ServeArgs::default()
        })
        .expect("settings");
        assert_eq!(settings.listen, "127.0.0.1:9100");
        assert_eq!(settings.limits.max_items, 5);
        assert_eq!(settings.bucket, "file:///tmp/x/bucket");
        assert_eq!(settings.redis_stream, DEFAULT_REDIS_STREAM);
        assert_eq!(
            settings.store_cache_bytes,
            crate::store::DEFAULT_CACHE_BYTES
        );
        let bounded = Settings::resolve(ServeArgs {
            config: Some(path.clone()),
            store_cache_mb: Some(48),
            ..ServeArgs::default()
        })
        .expect("settings");
        assert_eq!(bounded.store_cache_bytes, 48 << 20);
        assert!(
            Settings::resolve(ServeArgs {
                config: Some(path.clone()),
                store_cache_mb: Some(0),
                ..ServeArgs::default()
            })
            .is_err()
        );

        let vendors = vendors_from_env(
            [
                (
                    "FERRY_VENDOR_STRIPE_URL".to_owned(),
                    "http://stripe.test".to_owned(),
                ),
                ("FERRY_VENDOR_STRIPE_KEY".to_owned(), "sk".to_owned()),
                ("FERRY_VENDOR_DEADLINE_MS".to_owned(), "10".to_owned()),
            ]
            .into_iter(),
        );
        assert_eq!(vendors.len(), 1);
        assert_eq!(vendors["STRIPE"].key.as_deref(), Some("sk"));

        assert_eq!(
            settings.plugin_bulkhead,
            crate::plugins::Bulkhead::default(),
            "half the cores per supplier, one second of waiting"
        );

        std::fs::write(&path, "plugin_concurrency = 3\nplugin_queue_ms = 250\n").expect("write");
        let settings = Settings::resolve(ServeArgs {
            config: Some(path.clone()),
            ..ServeArgs::default()
        })
        .expect("settings");
        assert_eq!(settings.plugin_bulkhead.calls_per_supplier, 3);
        assert_eq!(
            settings.plugin_bulkhead.queue_wait,
            Duration::from_millis(250)
        );
        let error = Settings::resolve(ServeArgs {
            config: Some(path.clone()),
            plugin_concurrency: Some(0),
            ..ServeArgs::default()
        })
        .expect_err("no slots");
        assert!(error.to_string().contains("plugin_concurrency"), "{error}");

        assert_eq!(settings.database_limits, DatabaseLimits::default());
        std::fs::write(
            &path,
            "database_wait_ms = 700\ndatabase_timeout_ms = 1500\n",
        )
        .expect("write");
        let settings = Settings::resolve(ServeArgs {
            config: Some(path.clone()),
            database_timeout_ms: Some(2500),
            ..ServeArgs::default()
        })
        .expect("settings");
        assert_eq!(
            settings.database_limits,
            DatabaseLimits {
                connection_wait: Duration::from_millis(700),
                operation: Duration::from_millis(2500),
            }
        );

        assert_eq!(
            settings.event_retention,
            Some(Duration::from_secs(30 * 24 * 3600)),
            "thirty days unless told"
        );
        std::fs::write(&path, "event_retention_seconds = 0\n").expect("write");
        let kept = |flag| {
            Settings::resolve(ServeArgs {
                config: Some(path.clone()),
                event_retention_seconds: flag,
                ..ServeArgs::default()
            })
            .expect("settings")
            .event_retention
        };
        assert_eq!(kept(None), None, "0: every event kept");
        assert_eq!(kept(Some(90)), Some(Duration::from_secs(90)));

        assert_eq!(
            (settings.max_connections, settings.limits.client_timeout),
            (None, Some(Duration::from_secs(60))),
            "connections bounded by the open-files limit, a minute for a quiet client"
        );
        std::fs::write(&path, "client_timeout_seconds = 0\nmax_connections = 500\n")
            .expect("write");
        let clients = |timeout| {
            let settings = Settings::resolve(ServeArgs {
                config: Some(path.clone()),
                client_timeout_seconds: timeout,
                ..ServeArgs::default()
            })
            .expect("settings");
            (settings.max_connections, settings.limits.client_timeout)
        };
        assert_eq!(
            clients(None),
            (Some(500), None),
            "0: a quiet client is waited for"
        );
        assert_eq!(clients(Some(5)), (Some(500), Some(Duration::from_secs(5))));
        let error = Settings::resolve(ServeArgs {
            config: Some(path.clone()),
            max_connections: Some(0),
            ..ServeArgs::default()
        })
        .expect_err("no connections");
        assert!(error.to_string().contains("max_connections"), "{error}");

        std::fs::write(&path, "lisen = 1\n").expect("write");
        let error = Settings::resolve(ServeArgs {
            config: Some(path),
            ..ServeArgs::default()
        })
        .expect_err("unknown key");
        assert!(error.to_string().contains("lisen"), "{error}");
    }
}
