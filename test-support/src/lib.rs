//! What Ferry's test binaries share: the PostgreSQL server their PostgreSQL tests run on.
//!
//! [`postgres_admin_url`] names a superuser's connection to it (trust auth):
//! - `FERRY_TEST_DATABASE_URL`, when it is set;
//! - else the machine's server at `127.0.0.1:5432`, when something answers there (as CI runs
//!   it);
//! - else a server of the test binary's own, a [`PrivatePostgres`]: made by the machine's
//!   `initdb` in a temporary directory and started by its `pg_ctl` on a free port of
//!   `127.0.0.1`, once per test binary, and stopped and removed when the process ends.
//!
//! `FERRY_TEST_POSTGRES=private` picks the private server whatever else is there (to test the
//! tests' own server on a machine whose server answers). Where no server answers and
//! PostgreSQL's programs are not installed, the tests fail saying so and how to install them.
//!
//! The standard library only: every test binary of the host builds this crate.

use std::fs;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The machine's server, where CI runs it.
const MACHINE_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
const MACHINE_PORT: u16 = 5432;

/// How to get PostgreSQL's programs, for the message that says they are missing.
const INSTALL_HINT: &str = "install PostgreSQL's server programs (Debian, Ubuntu: \
     `apt-get install postgresql`; Fedora: `dnf install postgresql-server`; macOS: \
     `brew install postgresql`), or set FERRY_TEST_DATABASE_URL to a server's administrator \
     URL with trust auth";

/// The administrator URL of the PostgreSQL server the tests of this process run on (see the
/// crate's documentation for which one), chosen on the first call and the same for every
/// later one. Panics, saying why and what to do, when there is none.
pub fn postgres_admin_url() -> String {
    /// The URL, and the private server when it is that one: kept for as long as the process
    /// runs (a static is never dropped), so that it stops when the process ends.
    static SERVER: OnceLock<Result<(String, Option<PrivatePostgres>), String>> = OnceLock::new();
    let server = SERVER.get_or_init(|| {
        let chosen = choose(
            setting("FERRY_TEST_DATABASE_URL"),
            setting("FERRY_TEST_POSTGRES"),
            machine_server_answers,
        )?;
        Ok(match chosen {
            Server::Given(url) => (url, None),
            Server::Machine => (MACHINE_URL.to_owned(), None),
            Server::Private => {
                let private = PrivatePostgres::start()?;
                (private.admin_url().to_owned(), Some(private))
            }
        })
    });
    match server {
        Ok((url, _)) => url.clone(),
        Err(problem) => panic!("PostgreSQL for the tests: {problem}"),
    }
}

/// An environment variable that is set and not empty.
fn setting(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// Which server the tests run on.
#[derive(Debug, PartialEq, Eq)]
enum Server {
    /// `FERRY_TEST_DATABASE_URL`'s.
    Given(String),
    /// The machine's, at `127.0.0.1:5432`.
    Machine,
    /// One of the tests' own.
    Private,
}

/// The server for `FERRY_TEST_DATABASE_URL` and `FERRY_TEST_POSTGRES`, asking whether the
/// machine's answers only when it matters.
fn choose(
    database_url: Option<String>,
    forced: Option<String>,
    machine_answers: impl FnOnce() -> bool,
) -> Result<Server, String> {
    match forced.as_deref() {
        None => {}
        Some("private") => return Ok(Server::Private),
        Some(other) => {
            return Err(format!(
                "FERRY_TEST_POSTGRES is `{other}`; the one value it takes is `private` (a \
                 server of the tests' own, whatever else is there)"
            ));
        }
    }
    Ok(match database_url {
        Some(url) => Server::Given(url),
        None if machine_answers() => Server::Machine,
        None => Server::Private,
    })
}

/// Whether something listens at `127.0.0.1:5432`.
fn machine_server_answers() -> bool {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, MACHINE_PORT));
    TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_ok()
}

/// A PostgreSQL server of the tests' own: a cluster made by `initdb` in a temporary directory
/// (superuser `postgres`, trust auth), listening on a free port of `127.0.0.1` and on no unix
/// socket. Stopped, and its directory removed, when this is dropped or the process ends,
/// however it ends.
pub struct PrivatePostgres {
    admin_url: String,
    port: u16,
    directory: PathBuf,
    /// A shell that waits for its input to close, then stops the server and removes the
    /// directory. This end of its input closes when `stopper` is dropped, or when the process
    /// ends however it ends (the kernel closes it then), so nothing is left behind. It runs
    /// in a process group of its own, so that an interrupt at the terminal leaves it to
    /// clean up after the tests.
    stopper: Child,
}

/// The stopper's script: `$1` is the directory, `$2` the `pg_ctl` program.
const STOPPER: &str = r#"cat >/dev/null
"$2" -D "$1/data" -m immediate -w stop >/dev/null 2>&1
rm -rf "$1""#;

/// How many free ports a start tries: another process may take the one chosen before the
/// server binds it.
const START_ATTEMPTS: usize = 3;

impl PrivatePostgres {
    /// Makes and starts a server (a second or two).
    pub fn start() -> Result<Self, String> {
        let programs = Programs::find()?;
        let directory = std::env::temp_dir().join(format!(
            "ferry-test-postgres-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        ));
        let failed = |what: &str, error: std::io::Error| format!("{what}: {error}");
        fs::create_dir(&directory)
            .map_err(|error| failed(&format!("cannot make {}", directory.display()), error))?;
        let owner = PostgresUser::for_directory(&directory)?;
        let command = |program: &Path| {
            let mut command = Command::new(program);
            command.current_dir(&directory);
            if let Some(user) = owner {
                command.uid(user.uid).gid(user.gid);
            }
            command
        };
        // The stopper first: whatever fails below, the directory goes when `server` does.
        let stopper = command(Path::new("/bin/sh"))
            .args(["-c", STOPPER, "ferry-test-postgres-stopper"])
            .arg(&directory)
            .arg(&programs.pg_ctl)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|error| failed("cannot start /bin/sh", error))?;
        let mut server = PrivatePostgres {
            admin_url: String::new(),
            port: 0,
            directory: directory.clone(),
            stopper,
        };
        let data = directory.join("data");
        let made = command(&programs.initdb)
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
            ])
            // The cluster lives as long as the tests: nothing to keep across a crash.
            .arg("--no-sync")
            .output()
            .map_err(|error| failed(&format!("cannot run {}", programs.initdb.display()), error))?;
        if !made.status.success() {
            return Err(format!(
                "{} failed: {}",
                programs.initdb.display(),
                String::from_utf8_lossy(&made.stderr)
            ));
        }
        let settings = data.join("postgresql.conf");
        let log = directory.join("server.log");
        let mut problem = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = free_port()?;
            // Appended, so that a later attempt's port wins over an earlier one's.
            fs::OpenOptions::new()
                .append(true)
                .open(&settings)
                .and_then(|mut file| {
                    writeln!(
                        file,
                        "\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''"
                    )
                })
                .map_err(|error| failed(&format!("cannot write {}", settings.display()), error))?;
            let started = command(&programs.pg_ctl)
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-w", "-t", "60", "start"])
                .output()
                .map_err(|error| {
                    failed(&format!("cannot run {}", programs.pg_ctl.display()), error)
                })?;
            if started.status.success() {
                server.port = port;
                server.admin_url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
                return Ok(server);
            }
            problem = format!(
                "{}{}",
                String::from_utf8_lossy(&started.stderr),
                fs::read_to_string(&log).unwrap_or_default()
            );
        }
        Err(format!(
            "{} could not start a server in {}: {problem}",
            programs.pg_ctl.display(),
            directory.display()
        ))
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`.
    pub fn admin_url(&self) -> &str {
        &self.admin_url
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where the cluster (`data/`) and the server's log (`server.log`) are.
    pub fn directory(&self) -> &Path {
        &self.directory
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        drop(self.stopper.stdin.take());
        let _ = self.stopper.wait();
    }
}

/// A port of `127.0.0.1` nothing listens on (at the moment it is asked).
fn free_port() -> Result<u16, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|error| format!("cannot find a free port: {error}"))
}

/// The user PostgreSQL's programs run as when the tests run as root, which they refuse to run
/// as: `postgres` (which installing PostgreSQL makes), else `nobody`.
#[derive(Debug, Clone, Copy)]
struct PostgresUser {
    uid: u32,
    gid: u32,
}

impl PostgresUser {
    /// The user to run the programs as in `directory`, just made by this process (none when
    /// this process is not root), and `directory` given to it.
    fn for_directory(directory: &Path) -> Result<Option<Self>, String> {
        let made_by = fs::metadata(directory)
            .map_err(|error| format!("cannot read {}: {error}", directory.display()))?
            .uid();
        let user = match made_by {
            0 => Some(Self::find()?),
            _ => None,
        };
        if let Some(user) = user {
            std::os::unix::fs::chown(directory, Some(user.uid), Some(user.gid))
                .map_err(|error| format!("cannot hand {} over: {error}", directory.display()))?;
        }
        fs::set_permissions(directory, fs::Permissions::from_mode(0o700))
            .map_err(|error| format!("cannot restrict {}: {error}", directory.display()))?;
        Ok(user)
    }

    fn find() -> Result<Self, String> {
        let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
        let user = |wanted: &str| {
            passwd.lines().find_map(|line| {
                let mut fields = line.split(':');
                let name = fields.next()?;
                let uid = fields.nth(1)?.parse().ok()?;
                let gid = fields.next()?.parse().ok()?;
                (name == wanted).then_some(Self { uid, gid })
            })
        };
        user("postgres").or_else(|| user("nobody")).ok_or_else(|| {
            "the tests run as root, which PostgreSQL refuses to run as, and neither a \
             `postgres` nor a `nobody` user is in /etc/passwd to run it as"
                .to_owned()
        })
    }
}

/// The machine's `initdb` and `pg_ctl`, from one directory.
struct Programs {
    initdb: PathBuf,
    pg_ctl: PathBuf,
}

impl Programs {
    /// Looked for in `PATH`, then where distributions install them outside it (Debian's
    /// `/usr/lib/postgresql/<version>/bin`, the PostgreSQL packages' `/usr/pgsql-<version>/bin`,
    /// a source build's `/usr/local/pgsql/bin`), the newest version first.
    fn find() -> Result<Self, String> {
        let mut directories: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).collect())
            .unwrap_or_default();
        directories.extend(versions_in(Path::new("/usr/lib/postgresql"), ""));
        directories.extend(versions_in(Path::new("/usr"), "pgsql-"));
        directories.push(PathBuf::from("/usr/local/pgsql/bin"));
        Self::find_in(&directories)
    }

    /// The first of `directories` that holds both programs.
    fn find_in(directories: &[PathBuf]) -> Result<Self, String> {
        directories
            .iter()
            .map(|directory| Programs {
                initdb: directory.join("initdb"),
                pg_ctl: directory.join("pg_ctl"),
            })
            .find(|programs| programs.initdb.is_file() && programs.pg_ctl.is_file())
            .ok_or_else(|| {
                format!(
                    "FERRY_TEST_DATABASE_URL is not set and nothing answers at \
                     127.0.0.1:{MACHINE_PORT}, so the tests would start a server of their own, \
                     but PostgreSQL's initdb and pg_ctl are not installed (looked in PATH, \
                     /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin and /usr/local/pgsql/bin): \
                     {INSTALL_HINT}"
                )
            })
    }
}

/// The `bin` directories of `parent/<prefix><version>`, the newest version first.
fn versions_in(parent: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut versions: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(parent)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version: Vec<u32> = name
                .strip_prefix(prefix)?
                .split('.')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, bin)| bin).collect()
}

/// Whether the server at `port` lets `postgres` in to database `postgres` without a password:
/// a startup message, answered by `AuthenticationOk`.
#[cfg(test)]
fn lets_the_administrator_in(port: u16) -> Result<(), String> {
    use std::io::Read;
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
        .map_err(|error| format!("connect: {error}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|error| error.to_string())?;
    let parameters = b"user\0postgres\0database\0postgres\0\0";
    let length = u32::try_from(8 + parameters.len()).map_err(|error| error.to_string())?;
    let mut startup = Vec::new();
    startup.extend(length.to_be_bytes());
    startup.extend(196_608_u32.to_be_bytes()); // protocol 3.0
    startup.extend(parameters);
    stream
        .write_all(&startup)
        .map_err(|error| format!("send: {error}"))?;
    let mut answer = [0u8; 9];
    stream
        .read_exact(&mut answer)
        .map_err(|error| format!("read: {error}"))?;
    // `R`, length 8, authentication type 0 (ok).
    if answer == [b'R', 0, 0, 0, 8, 0, 0, 0, 0] {
        Ok(())
    } else {
        Err(format!("answered {answer:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_given_url_wins_then_the_machines_server_then_a_private_one() {
        let url = "postgres://me@db.example:5433/postgres".to_owned();
        let not_asked = || panic!("the machine's server was asked about");
        assert_eq!(
            choose(Some(url.clone()), None, not_asked),
            Ok(Server::Given(url))
        );
        assert_eq!(choose(None, None, || true), Ok(Server::Machine));
        assert_eq!(choose(None, None, || false), Ok(Server::Private));
    }

    #[test]
    fn private_is_forced_over_everything_and_nothing_else_is_taken() {
        let not_asked = || panic!("the machine's server was asked about");
        assert_eq!(
            choose(
                Some("postgres://x".into()),
                Some("private".into()),
                not_asked
            ),
            Ok(Server::Private)
        );
        let refused = choose(None, Some("machine".into()), not_asked);
        assert!(
            refused
                .as_ref()
                .is_err_and(|problem| problem.contains("`private`")),
            "{refused:?}"
        );
    }

    #[test]
    fn missing_programs_are_said_so_with_how_to_install_them() {
        let problem = Programs::find_in(&[std::env::temp_dir().join("ferry-no-postgres-here")])
            .err()
            .expect("no initdb in the temporary directory");
        assert!(
            problem.contains("initdb and pg_ctl are not installed")
                && problem.contains("apt-get install postgresql"),
            "{problem}"
        );
    }

    #[test]
    fn versions_are_found_newest_first() {
        let parent =
            std::env::temp_dir().join(format!("ferry-test-versions-{}", std::process::id()));
        for name in ["9.6", "15", "16", "notes", "pgsql-17"] {
            fs::create_dir_all(parent.join(name)).expect("a version directory");
        }
        let found = versions_in(&parent, "");
        let _ = fs::remove_dir_all(&parent);
        assert_eq!(
            found,
            ["16", "15", "9.6"].map(|version| parent.join(version).join("bin"))
        );
    }

    /// A private server takes the administrator without a password, on its port of
    /// `127.0.0.1`; dropped, it is stopped and its directory is gone. (Skipped where the
    /// tests run on a server they are given and PostgreSQL's programs are not installed.)
    #[test]
    fn a_private_server_lets_the_administrator_in_and_goes_with_its_handle() {
        let chosen = choose(
            setting("FERRY_TEST_DATABASE_URL"),
            setting("FERRY_TEST_POSTGRES"),
            machine_server_answers,
        );
        if chosen != Ok(Server::Private) && Programs::find().is_err() {
            // The tests run on a server they are given, and nothing here could start one.
            eprintln!("skipped: PostgreSQL's programs are not installed");
            return;
        }
        let server = PrivatePostgres::start().unwrap_or_else(|problem| panic!("{problem}"));
        let port = server.port();
        assert_eq!(
            server.admin_url(),
            format!("postgres://postgres@127.0.0.1:{port}/postgres")
        );
        lets_the_administrator_in(port).unwrap_or_else(|problem| panic!("{problem}"));
        let directory = server.directory().to_owned();
        assert!(directory.join("data").is_dir());
        drop(server);
        assert!(!directory.exists(), "{} is left", directory.display());
        assert!(
            TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err(),
            "the server still listens on {port}"
        );
    }
}
