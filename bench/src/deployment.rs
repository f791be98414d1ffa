//! What one measured deployment is, and its life: sled (one `ferry serve` on its own data
//! directory), or N `ferry serve` instances over one PostgreSQL database that the run creates
//! for the deployment on the `--database-url` server (with `psql`) and drops afterwards. Each
//! deployment has its own `redis-server`, so no relay sees another deployment's events.
//! Dropping a [`Deployment`] stops its processes first, then drops its database.

use crate::processes::{Ferry, Redis};
use anyhow::{Context, bail};
use std::path::Path;
use std::process::{Command, Stdio};

/// The stores `--backends` may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    Sled,
    Postgres,
}

/// What a deployment stores on, and how many instances it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sled,
    Postgres { instances: usize },
}

impl Kind {
    /// As a section heading: `sled`, `PostgreSQL, 2 instances`.
    pub fn title(self) -> String {
        match self {
            Self::Sled => "sled".into(),
            Self::Postgres { instances: 1 } => "PostgreSQL, 1 instance".into(),
            Self::Postgres { instances } => format!("PostgreSQL, {instances} instances"),
        }
    }

    /// As a column heading: `sled`, `PostgreSQL ×2`.
    pub fn label(self) -> String {
        match self {
            Self::Sled => "sled".into(),
            Self::Postgres { instances } => format!("PostgreSQL ×{instances}"),
        }
    }

    pub fn instances(self) -> usize {
        match self {
            Self::Sled => 1,
            Self::Postgres { instances } => instances,
        }
    }

    /// Its directory under the run's temporary directory.
    fn directory_name(self) -> String {
        match self {
            Self::Sled => "sled".into(),
            Self::Postgres { instances } => format!("postgres-{instances}"),
        }
    }
}

/// The deployments a run measures, in order: sled (when chosen), then PostgreSQL with each of
/// `instances` (when chosen and a server is given).
pub fn plan(
    backends: &[Backend],
    database_url: Option<&str>,
    instances: &[usize],
) -> anyhow::Result<Vec<Kind>> {
    let mut kinds = Vec::new();
    if backends.contains(&Backend::Sled) {
        kinds.push(Kind::Sled);
    }
    if backends.contains(&Backend::Postgres) && database_url.is_some() {
        for &count in instances {
            if count == 0 {
                bail!("--instances: a deployment runs at least 1 instance");
            }
            kinds.push(Kind::Postgres { instances: count });
        }
    }
    if kinds.is_empty() {
        bail!("nothing to measure: --backends postgres needs --database-url");
    }
    Ok(kinds)
}

/// `server` (a `postgres://` URL) naming the database `name` instead of its own; user,
/// password, host, port and parameters stay.
pub fn database_url_named(server: &str, name: &str) -> anyhow::Result<String> {
    let mut url = reqwest::Url::parse(server).context("--database-url is not a URL")?;
    if !matches!(url.scheme(), "postgres" | "postgresql") || url.cannot_be_a_base() {
        bail!("--database-url must look like postgres://user@host:port/database");
    }
    url.set_path(&format!("/{name}"));
    Ok(url.into())
}

/// `host:port` of a `postgres://` URL, for the report (no user or password).
pub fn server_address(server: &str) -> String {
    let Ok(url) = reqwest::Url::parse(server) else {
        return "?".into();
    };
    let host = url.host_str().unwrap_or("localhost");
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Runs one SQL statement with `psql` on `server`.
fn psql(server: &str, statement: &str) -> anyhow::Result<()> {
    let output = Command::new("psql")
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d"])
        .arg(server)
        .arg("-c")
        .arg(statement)
        .stdin(Stdio::null())
        .output()
        .context("cannot run psql (is it installed?)")?;
    if !output.status.success() {
        bail!(
            "psql -c '{statement}' failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// A database of the run's own on the PostgreSQL server, dropped (connections and all) with
/// this guard.
#[derive(Debug)]
pub struct TemporaryDatabase {
    server: String,
    name: String,
    /// Where the instances connect.
    pub url: String,
}

impl TemporaryDatabase {
    pub fn create(server: &str, name: &str) -> anyhow::Result<Self> {
        let url = database_url_named(server, name)?;
        psql(server, &format!("CREATE DATABASE \"{name}\""))?;
        Ok(Self {
            server: server.to_owned(),
            name: name.to_owned(),
            url,
        })
    }
}

impl Drop for TemporaryDatabase {
    fn drop(&mut self) {
        let statement = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        if let Err(error) = psql(&self.server, &statement) {
            eprintln!("could not drop the database {}: {error:#}", self.name);
        }
    }
}

/// A running deployment. Its fields drop in this order: the instances stop, then Redis, then
/// the database goes.
#[derive(Debug)]
pub struct Deployment {
    pub instances: Vec<Ferry>,
    pub redis: Redis,
    /// Declared last to be dropped last.
    database: Option<TemporaryDatabase>,
}

impl Deployment {
    /// Starts `kind` with `binary` in `parent`/<its name>; a PostgreSQL deployment gets the
    /// database `ferry_bench_<pid>_<number>` on `database_server`. The instances start one
    /// after the other (the first applies the migrations).
    pub fn start(
        kind: Kind,
        binary: &Path,
        parent: &Path,
        database_server: Option<&str>,
        number: usize,
    ) -> anyhow::Result<Self> {
        let dir = parent.join(kind.directory_name());
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let database = match kind {
            Kind::Sled => None,
            Kind::Postgres { .. } => {
                let server = database_server.context("PostgreSQL needs --database-url")?;
                let name = format!("ferry_bench_{}_{number}", std::process::id());
                Some(TemporaryDatabase::create(server, &name)?)
            }
        };
        let redis = Redis::start(&dir)?;
        let url = database.as_ref().map(|database| database.url.as_str());
        let instances = (1..=kind.instances())
            .map(|instance| {
                Ferry::start(
                    binary,
                    &dir.join(format!("instance-{instance}")),
                    &redis,
                    url,
                )
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self {
            instances,
            redis,
            database,
        })
    }

    pub fn bases(&self) -> Vec<String> {
        self.instances
            .iter()
            .map(|instance| instance.base.clone())
            .collect()
    }

    /// The database of a PostgreSQL deployment, as its instances connect to it.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_ref().map(|database| database.url.as_str())
    }

    pub fn pids(&self) -> Vec<u32> {
        self.instances
            .iter()
            .map(|instance| instance.process.pid())
            .collect()
    }

    /// Fails when an instance has exited, naming its log.
    pub fn ensure_running(&mut self) -> anyhow::Result<()> {
        for instance in &mut self.instances {
            let log = instance.log.display().to_string();
            instance
                .process
                .ensure_running()
                .with_context(|| format!("its log: {log} (kept with --keep-data)"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_deployment_gets_its_own_database_on_the_server() {
        assert_eq!(
            database_url_named(
                "postgres://postgres@127.0.0.1:5432/postgres",
                "ferry_bench_7_1"
            )
            .expect("a postgres URL"),
            "postgres://postgres@127.0.0.1:5432/ferry_bench_7_1"
        );
        assert_eq!(
            database_url_named("postgresql://u:secret@db/ferry?sslmode=disable", "b")
                .expect("a postgres URL"),
            "postgresql://u:secret@db/b?sslmode=disable"
        );
        assert_eq!(
            database_url_named("postgres://db", "b").expect("a URL without a database"),
            "postgres://db/b"
        );
        assert!(database_url_named("http://db/x", "b").is_err());
        assert!(database_url_named("not a url", "b").is_err());
        assert_eq!(server_address("postgres://u:secret@db:5433/x"), "db:5433");
    }

    #[test]
    fn sled_first_then_postgres_with_each_instance_count() {
        let both = [Backend::Sled, Backend::Postgres];
        assert_eq!(plan(&both, None, &[1, 2]).expect("sled"), [Kind::Sled]);
        assert_eq!(
            plan(&both, Some("postgres://db/x"), &[1, 2]).expect("three"),
            [
                Kind::Sled,
                Kind::Postgres { instances: 1 },
                Kind::Postgres { instances: 2 }
            ]
        );
        assert_eq!(
            plan(&[Backend::Postgres], Some("postgres://db/x"), &[2]).expect("one"),
            [Kind::Postgres { instances: 2 }]
        );
        assert!(plan(&[Backend::Postgres], None, &[1]).is_err());
        assert!(plan(&both, Some("postgres://db/x"), &[0]).is_err());
        assert_eq!(
            Kind::Postgres { instances: 1 }.title(),
            "PostgreSQL, 1 instance"
        );
        assert_eq!(
            Kind::Postgres { instances: 2 }.title(),
            "PostgreSQL, 2 instances"
        );
        assert_eq!(Kind::Postgres { instances: 2 }.label(), "PostgreSQL ×2");
    }
}
