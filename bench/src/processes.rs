//! The processes a run starts and stops: the real `ferry` server (on sled, or on PostgreSQL),
//! the baseline (this binary's `baseline` subcommand) and a private `redis-server` on a unix
//! socket. Each is killed when
//! its handle is dropped, so an aborted run leaves nothing behind. Also builds `ferry` and the
//! plugins before a run, with the cargo that runs the benchmark. A run may give every `ferry`
//! it starts more settings ([`set_server_environment`]: the campaign's document bucket and
//! payment vendor).

use anyhow::{Context, bail};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

/// The operator key the benchmark's server is started with.
pub const OPERATOR_KEY: &str = "ferry-bench-operator-key";

/// How long a process may take to announce that it listens.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The repository root (this crate lives in `<root>/bench`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default()
}

/// The cargo that built this binary (set by `cargo run`), else `cargo` on the PATH.
fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace_root());
    command
}

fn run_cargo(mut command: Command, what: &str) -> anyhow::Result<()> {
    eprintln!("building {what} ...");
    let status = command
        .status()
        .with_context(|| format!("cannot run cargo to build {what}"))?;
    if !status.success() {
        bail!("building {what} failed ({status})");
    }
    Ok(())
}

/// Builds the release `ferry` (cargo skips it when up to date).
pub fn build_ferry() -> anyhow::Result<()> {
    let mut command = cargo();
    command.args(["build", "--release", "-p", "ferry-host", "--bin", "ferry"]);
    run_cargo(command, "ferry (release)")
}

/// Builds the plugins in `plugins/` for wasm32-wasip2 (what `just plugins` does).
pub fn build_plugins() -> anyhow::Result<()> {
    let root = workspace_root();
    let mut command = cargo();
    command
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .arg("--manifest-path")
        .arg(root.join("plugins/Cargo.toml"))
        .arg("--target-dir")
        .arg(root.join("target/plugins"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    run_cargo(command, "the plugins (wasm32-wasip2)")
}

/// The example plugin's component, as `just plugins` builds it.
pub fn example_plugin() -> PathBuf {
    workspace_root().join("target/plugins/wasm32-wasip2/release/example_plugin.wasm")
}

/// `ferry` next to this executable (both land in `target/release`).
pub fn ferry_next_to_this_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("where is this executable?")?;
    Ok(exe.with_file_name("ferry"))
}

/// A child process that is killed when dropped.
#[derive(Debug)]
pub struct Guarded {
    child: Child,
    name: &'static str,
}

impl Guarded {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails when the process has already exited.
    pub fn ensure_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("{} exited unexpectedly ({status})", self.name);
        }
        Ok(())
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `command` with stdout piped and waits for the line starting with `announcement`;
/// returns the process and the rest of that line. Later stdout lines are read and dropped.
fn spawn_announcing(
    mut command: Command,
    name: &'static str,
    announcement: &'static str,
) -> anyhow::Result<(Guarded, String)> {
    command.stdout(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {name}"))?;
    let stdout = child.stdout.take().context("the child's stdout is piped")?;
    let guarded = Guarded { child, name };
    let (lines_tx, lines_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // Keep draining after the receiver is gone so the pipe never fills.
            let _ = lines_tx.send(line);
        }
    });
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines_rx
            .recv_timeout(left)
            .with_context(|| format!("{name} did not announce its address"))?;
        if let Some(rest) = line.strip_prefix(announcement) {
            return Ok((guarded, rest.trim().to_owned()));
        }
    }
}

/// A private `redis-server` on a unix socket, without persistence (the relay's throughput is
/// measured, not Redis's disk).
#[derive(Debug)]
pub struct Redis {
    pub process: Guarded,
    pub socket: PathBuf,
}

impl Redis {
    pub fn start(dir: &Path) -> anyhow::Result<Self> {
        let socket = dir.join("redis.sock");
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args([
                "--unixsocketperm",
                "700",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start redis-server (is it installed?)")?;
        let process = Guarded {
            child,
            name: "redis-server",
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            if Instant::now() > deadline {
                bail!("redis-server did not open {}", socket.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Self { process, socket })
    }

    /// The URL Ferry's relay uses.
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket.display())
    }
}

/// Settings every `ferry` started from now on gets as environment variables, besides the
/// benchmark's own (none unless a run sets them).
static SERVER_ENVIRONMENT: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Gives every `ferry` started from now on these environment variables (in place of any
/// given before).
pub fn set_server_environment(variables: Vec<(String, String)>) {
    let mut environment = SERVER_ENVIRONMENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *environment = variables;
}

fn server_environment() -> Vec<(String, String)> {
    SERVER_ENVIRONMENT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// A running `ferry serve`.
#[derive(Debug)]
pub struct Ferry {
    pub process: Guarded,
    pub base: String,
    /// Its data directory.
    pub data_dir: PathBuf,
    /// Where its stderr (logs) goes.
    pub log: PathBuf,
}

impl Ferry {
    /// Starts `binary` on a fresh `data_dir` with rate limits off and the relay on `redis`;
    /// its store is sled in `data_dir`, or the PostgreSQL database at `database_url`.
    pub fn start(
        binary: &Path,
        data_dir: &Path,
        redis: &Redis,
        database_url: Option<&str>,
    ) -> anyhow::Result<Self> {
        let log = data_dir.with_extension("log");
        let mut command = Command::new(binary);
        command
            .arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(data_dir)
            .env("FERRY_OPERATOR_KEY", OPERATOR_KEY)
            .env("FERRY_RATE_LIMIT_PER_SECOND", "0")
            .env("FERRY_REDIS_URL", redis.url())
            .env("FERRY_LOG", "warn")
            .envs(server_environment())
            .current_dir(data_dir.parent().unwrap_or(data_dir))
            .stderr(std::fs::File::create(&log)?);
        match database_url {
            Some(url) => command.env("FERRY_DATABASE_URL", url),
            None => command.env_remove("FERRY_DATABASE_URL"),
        };
        let (process, base) = spawn_announcing(command, "ferry", "ferry listening on ")?;
        Ok(Self {
            process,
            base,
            data_dir: data_dir.to_owned(),
            log,
        })
    }
}

/// Starts this binary's `baseline` subcommand.
pub fn start_baseline(list_items: usize) -> anyhow::Result<(Guarded, String)> {
    let exe = std::env::current_exe().context("where is this executable?")?;
    let mut command = Command::new(exe);
    command
        .args(["baseline", "--listen", "127.0.0.1:0", "--list-items"])
        .arg(list_items.to_string())
        .stderr(Stdio::inherit());
    spawn_announcing(command, "the baseline", crate::baseline::ANNOUNCEMENT)
}
