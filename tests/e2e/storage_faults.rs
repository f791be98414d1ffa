//! A full disk, as an operator meets it: the server's data directory on a small filesystem of
//! the test's own (a tmpfs it mounts), filled by concurrent writers and a ballast file the test
//! can free again. Below the free-space watermark every write answers 507
//! `insufficient_storage`, `/readyz` is not ready, reads go on, and writes are taken again
//! without a restart once space is back. A write that finds the disk full anyway (no
//! watermark) is answered the same way; the server then stops by itself, and started again on
//! the freed disk it has every acknowledged write.
//!
//! Mounting needs root (as the machines this project runs its tests on give); without it these
//! tests fail with that reason rather than pass without trying.

use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: u64 = 1024 * 1024;
/// Notes a request carries, and the length of each body: about 0.5 MiB a request.
const NOTES_PER_REQUEST: usize = 60;
const NOTE_BYTES: usize = 8_000;
const WRITERS: usize = 4;

/// The watermark watches the data directory of the embedded store; a database watches its
/// own disk (its refusals are the contract suite's).
fn sled_only() -> bool {
    backend() == Backend::Postgres
}

/// A tmpfs of `size` MiB mounted for the test; unmounted when dropped.
struct SmallFilesystem {
    mount: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallFilesystem {
    fn mount(size_mib: u64) -> SmallFilesystem {
        let dir = tempfile::tempdir().expect("temp dir");
        let mount = dir.path().join("small");
        std::fs::create_dir(&mount).expect("mount point");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mib}m"), "tmpfs"])
            .arg(&mount)
            .status()
            .expect("run mount");
        assert!(
            status.success(),
            "cannot mount a {size_mib} MiB tmpfs at {} (these tests need root): {status}",
            mount.display()
        );
        SmallFilesystem { mount, _dir: dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.mount.join(name)
    }

    fn free_bytes(&self) -> u64 {
        free_bytes(&self.mount)
    }
}

/// The least free space a filesystem had while it was watched, read every tenth of a
/// millisecond (a file filling the disk for a moment is caught where `df` afterwards would not).
struct LeastFree {
    stop: Arc<std::sync::atomic::AtomicBool>,
    watcher: std::thread::JoinHandle<u64>,
}

impl LeastFree {
    fn watch(disk: &SmallFilesystem) -> LeastFree {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mount = disk.mount.clone();
        let stopping = stop.clone();
        let watcher = std::thread::spawn(move || {
            let mut least = u64::MAX;
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(stats) = rustix::fs::statvfs(&mount) {
                    least = least.min(stats.f_bavail.saturating_mul(stats.f_frsize));
                }
                std::thread::sleep(Duration::from_micros(100));
            }
            least
        });
        LeastFree { stop, watcher }
    }

    /// The least free space seen, in bytes.
    fn stop(self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.watcher.join().expect("the watcher")
    }
}

impl Drop for SmallFilesystem {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

fn free_bytes(path: &Path) -> u64 {
    let output = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(path)
        .output()
        .expect("run df");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .nth(1)
        .and_then(|line| line.trim().parse().ok())
        .expect("df's answer")
}

/// Writes `bytes` of ballast into `path` (less if the disk fills first).
fn write_ballast(path: &Path, bytes: u64) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).expect("ballast");
    let chunk = vec![0xA5u8; MIB as usize];
    let mut written = 0;
    while written < bytes {
        let size = (bytes - written).min(MIB) as usize;
        if file.write_all(&chunk[..size]).is_err() {
            break;
        }
        written += size as u64;
    }
    let _ = file.sync_all();
}

fn notes_request(external: &str, label: &str) -> Value {
    let notes: Vec<Value> = (0..NOTES_PER_REQUEST)
        .map(|index| {
            let head = format!("{label}.{index} ");
            let body = format!("{head}{}", "x".repeat(NOTE_BYTES - head.len()));
            json!({"body": body})
        })
        .collect();
    json!({"import_supplier": "FULL_CO", "external_account_number": external, "notes": notes})
}

/// What concurrent writers heard: the labels of the acknowledged requests, and every refusal.
#[derive(Default)]
struct Heard {
    acknowledged: BTreeSet<String>,
    refusals: Vec<(StatusCode, Value)>,
}

/// `WRITERS` clients posting notes until each has been refused `refusals_each` times in a row,
/// or the server is gone, or `patience` is over.
async fn write_until_refused(
    server: Arc<Server>,
    token: &str,
    external: &str,
    refusals_each: usize,
    patience: Duration,
) -> Heard {
    let deadline = Instant::now() + patience;
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let server = server.clone();
        let token = token.to_owned();
        let external = external.to_owned();
        writers.push(tokio::spawn(async move {
            let mut heard = Heard::default();
            let mut refused_in_a_row = 0;
            let mut sequence = 0;
            while refused_in_a_row < refusals_each && Instant::now() < deadline {
                sequence += 1;
                let label = format!("w{writer}.{sequence}");
                let response = reqwest::Client::new()
                    .post(server.url(NOTES))
                    .header("Authorization", format!("Token {token}"))
                    .json(&notes_request(&external, &label))
                    .timeout(REQUEST_TIMEOUT)
                    .send()
                    .await;
                let Ok(response) = response else {
                    break; // the server stopped
                };
                let status = response.status();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                if status.is_success() {
                    heard.acknowledged.insert(label);
                    refused_in_a_row = 0;
                } else {
                    heard.refusals.push((status, body));
                    refused_in_a_row += 1;
                }
            }
            heard
        }));
    }
    let mut heard = Heard::default();
    for writer in writers {
        let one = writer.await.expect("writer");
        heard.acknowledged.extend(one.acknowledged);
        heard.refusals.extend(one.refusals);
    }
    heard
}

/// The labels of the notes requests whose every note the account holds.
async fn labels_kept(server: &Server, number: &str) -> BTreeSet<String> {
    let view = server.account_view(number).await;
    let mut notes_by_label = std::collections::BTreeMap::<String, usize>::new();
    for note in view["notes"].as_array().expect("notes") {
        let body = note["body"].as_str().unwrap_or_default();
        if let Some((label, _)) = body.split_once(' ')
            && let Some((request, _)) = label.rsplit_once('.')
        {
            *notes_by_label.entry(request.to_owned()).or_default() += 1;
        }
    }
    let mut kept = BTreeSet::new();
    for (label, count) in notes_by_label {
        assert_eq!(
            count, NOTES_PER_REQUEST,
            "request {label} was kept in part: {count} of its {NOTES_PER_REQUEST} notes"
        );
        kept.insert(label);
    }
    kept
}

fn assert_storage_refusal(status: StatusCode, body: &Value) {
    assert_eq!(
        status,
        StatusCode::INSUFFICIENT_STORAGE,
        "a write refused for want of space: {body}"
    );
    assert_eq!(body["code"], "insufficient_storage", "{body}");
    assert_eq!(body["errors"], json!([]), "{body}");
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("frees space"), "{detail}");
    assert!(!detail.contains("retry the request as it is"), "{detail}");
}

/// Frees the space `ballast` took and waits for the server to be ready and writable again by
/// itself; then a write is taken, and account `number` holds it and every write `acknowledged`
/// before.
async fn writes_resume_once_space_is_back(
    server: &Server,
    token: &str,
    number: &str,
    ballast: &Path,
    acknowledged: &BTreeSet<String>,
) {
    std::fs::remove_file(ballast).expect("free the space");
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, body) = server.call(Method::GET, "/readyz", None, None).await;
        if status == StatusCode::OK {
            assert_eq!(body["storage"]["state"], "writable", "{body}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still not ready with the space back: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, body) = server
        .post(NOTES, token, &notes_request("ACC-1", "after.1"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut expected = acknowledged.clone();
    expected.insert("after.1".into());
    assert_eq!(labels_kept(server, number).await, expected);
}

#[tokio::test]
async fn below_the_watermark_writes_are_refused_reads_go_on_and_writes_resume_without_a_restart() {
    if sled_only() {
        return;
    }
    let disk = SmallFilesystem::mount(96);
    let watermark = 32 * MIB;
    let mut redis = Redis::start();
    let server = Server::start_in(
        &disk.path("data"),
        Options {
            args: vec!["--min-free-mb".into(), (watermark / MIB).to_string()],
            env: vec![("FERRY_REDIS_URL".into(), redis.url())],
            ..Options::default()
        },
    );
    // Redis is away until the disk is full: the account's events wait in the outbox.
    redis.stop();
    let (token, number) = server
        .imported_account("FULL_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["outbox_pending"].as_u64() > Some(0), "{body}");
    assert_eq!(body["storage"]["state"], "writable", "{body}");
    assert_eq!(body["storage"]["watermark_bytes"], watermark, "{body}");

    // Something else takes most of the disk: about 16 MiB are left above the watermark, which
    // the writers fill.
    let ballast = disk.path("ballast");
    write_ballast(&ballast, disk.free_bytes() - watermark - 16 * MIB);
    let server = Arc::new(server);
    let heard = write_until_refused(server.clone(), &token, "ACC-1", 3, PATIENCE).await;
    assert!(
        !heard.acknowledged.is_empty(),
        "writes were taken above the watermark"
    );
    assert!(
        heard.refusals.len() >= WRITERS * 3,
        "every writer was refused in the end: {} refusals",
        heard.refusals.len()
    );
    for (status, body) in &heard.refusals {
        assert_storage_refusal(*status, body);
    }
    assert!(
        disk.free_bytes() > 0,
        "the watermark kept the disk from filling"
    );

    // Not ready, and why; reads still served; the console's view says the same.
    let (status, body) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["status"], "unavailable", "{body}");
    assert_eq!(body["store"], "read_only", "{body}");
    assert_eq!(body["storage"]["state"], "read_only", "{body}");
    assert!(
        body["storage"]["free_bytes"].as_u64().expect("free bytes") < watermark,
        "{body}"
    );
    let (status, storage) = server.admin(Method::GET, "/admin/v1/storage", None).await;
    assert_eq!(status, StatusCode::OK, "{storage}");
    assert_eq!(storage["state"], "read_only", "{storage}");
    assert!(
        storage["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("frees space")),
        "{storage}"
    );
    let kept = labels_kept(&server, &number).await;
    assert_eq!(
        kept, heard.acknowledged,
        "every acknowledged write, and no other"
    );
    // The relay drains the outbox meanwhile.
    redis.resume();
    let published = server.wait_for_published().await;
    assert!(
        published
            .iter()
            .all(|event| event["published_at"].is_string()),
        "every event was published: {published:?}"
    );
    let (_, body) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(body["storage"]["state"], "read_only", "{body}");
    let (status, metrics) = server.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let metrics = metrics.as_str().unwrap_or_default();
    assert!(
        metrics.contains("ferry_storage_refused_writes_total{reason=\"insufficient_storage\"}"),
        "{metrics}"
    );
    assert!(metrics.contains("ferry_storage_writable 0"), "{metrics}");

    // Space is back: writes are taken again, by themselves.
    writes_resume_once_space_is_back(&server, &token, &number, &ballast, &heard.acknowledged).await;
}

/// On a small volume the default watermark is not a tenth of it but at least what one write
/// step of the store can take (the journal's next file, 16 MiB, and a segment of sled's log),
/// and the journal prepares its next file only where that leaves the watermark's room: a disk
/// filling up answers 507 and takes writes again once space is back, without a restart, as on
/// a large one. With a tenth of 48 MiB (4.8 MiB), the journal's next file could take the last
/// of the disk while a write needed it, which failed for real and stopped the server.
#[tokio::test]
async fn a_small_volume_at_its_default_watermark_refuses_writes_and_takes_them_again() {
    if sled_only() {
        return;
    }
    let disk = SmallFilesystem::mount(48);
    let server = Server::start_in(&disk.path("data"), Options::default());
    let (token, number) = server
        .imported_account("FULL_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let watermark = body["storage"]["watermark_bytes"].as_u64().unwrap_or(0);
    assert!(
        watermark >= 16 * MIB,
        "at least one journal file, not a tenth of the volume: {body}"
    );

    // Something else takes the volume down to 18 MiB free, which the writers fill.
    let ballast = disk.path("ballast");
    write_ballast(&ballast, disk.free_bytes().saturating_sub(18 * MIB));
    let server = Arc::new(server);
    let least_free = LeastFree::watch(&disk);
    let heard = write_until_refused(server.clone(), &token, "ACC-1", 3, PATIENCE).await;
    assert!(
        heard.refusals.len() >= WRITERS * 3,
        "every writer was refused in the end: {} refusals",
        heard.refusals.len()
    );
    for (status, body) in &heard.refusals {
        assert_storage_refusal(*status, body);
    }
    // What the writes took reaches the disk a moment after they were taken (sled flushes its
    // own log in the background); the journal's next file taking the disk's last bytes, if
    // only for a moment, is what made a write fail for real.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let least = least_free.stop();
    assert!(
        least > 0,
        "the disk never filled, not even for a moment: {least} bytes free at the least"
    );
    assert_eq!(
        server
            .counter_total("ferry_storage_failures_total", &[])
            .await,
        0,
        "no write failed for want of space"
    );
    let (status, body) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["storage"]["state"], "read_only", "{body}");
    assert_eq!(labels_kept(&server, &number).await, heard.acknowledged);

    // Space is back: writes are taken again, by the same server.
    writes_resume_once_space_is_back(&server, &token, &number, &ballast, &heard.acknowledged).await;
}

/// Accounts of the bulk migration below: each takes the slow plugin's ~20 ms, so that the job
/// is still running when the disk goes below the watermark.
const BULK_ACCOUNTS: usize = 300;

/// A bulk migration that meets a disk below the watermark waits for space rather than failing
/// the accounts it meets meanwhile: once space is back it goes on, and ends with every account
/// migrated, none failed and none left `IN_PROGRESS`.
#[tokio::test]
async fn a_bulk_migration_below_the_watermark_waits_for_space_and_misses_no_account() {
    if sled_only() {
        return;
    }
    let disk = SmallFilesystem::mount(96);
    let watermark = 32 * MIB;
    let server = Server::start_in(
        &disk.path("data"),
        Options {
            args: vec!["--min-free-mb".into(), (watermark / MIB).to_string()],
            env: vec![("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into())],
            ..Options::default()
        },
    );
    let token = server.supplier_with_token("FULL_CO").await;
    for index in 0..BULK_ACCOUNTS {
        server
            .stage(&token, &account("FULL_CO", &format!("B-{index:03}")))
            .await;
    }
    // Installed after staging, so that each migration calls it.
    server
        .install_plugin("FULL_CO", "fault_slow", json!({}))
        .await;
    let (_, path) = server.start_bulk_migration("FULL_CO").await;

    // Something else takes the disk below the watermark while the job runs.
    let ballast = disk.path("ballast");
    write_ballast(&ballast, disk.free_bytes() - watermark + 4 * MIB);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (_, body) = server.call(Method::GET, "/readyz", None, None).await;
        if body["storage"]["state"] == "read_only" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the disk never went below: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (status, waiting) = server.admin(Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::OK, "{waiting}");
    assert_eq!(waiting["state"], "RUNNING", "{waiting}");
    assert_eq!(waiting["failed"], 0, "{waiting}");
    assert!(
        waiting["processed"].as_u64() < Some(BULK_ACCOUNTS as u64),
        "the job ended before the disk went below the watermark: {waiting}"
    );

    std::fs::remove_file(&ballast).expect("free the space");
    let ended = server
        .bulk_migration_ended(&path, Duration::from_secs(60))
        .await;
    server
        .assert_bulk_completed("FULL_CO", &ended, BULK_ACCOUNTS)
        .await;
}

#[tokio::test]
async fn a_write_that_finds_the_disk_full_is_refused_and_the_server_restarts_with_every_acknowledged_write()
 {
    if sled_only() {
        return;
    }
    let disk = SmallFilesystem::mount(48);
    let data_dir = disk.path("data");
    let options = Options {
        args: vec!["--min-free-mb".into(), "0".into()],
        ..Options::default()
    };
    let server = Server::start_in(&data_dir, options.clone());
    let (token, number) = server
        .imported_account("FULL_CO", "ACC-1", "2025-01-01")
        .await;
    let (status, body) = server
        .post(NOTES, &token, &notes_request("ACC-1", "before.1"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // No watermark: the disk fills for real.
    let ballast = disk.path("ballast");
    write_ballast(&ballast, u64::MAX);
    let server = Arc::new(server);
    let heard = write_until_refused(server.clone(), &token, "ACC-1", 3, PATIENCE).await;
    assert!(!heard.refusals.is_empty(), "the full disk refused a write");
    for (status, body) in &heard.refusals {
        assert_storage_refusal(*status, body);
    }

    // Not ready, and why, for a while before it stops. (Reads are served too, but sled may
    // need to write to answer one, so a read can fail now.)
    let (status, body) = server.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["store"], "error", "{body}");
    assert_eq!(body["storage"]["state"], "failed", "{body}");
    assert!(
        body["storage"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("disk is full")),
        "{body}"
    );
    let (_, metrics) = server.call(Method::GET, "/metrics", None, None).await;
    let metrics = metrics.as_str().unwrap_or_default();
    assert!(
        metrics.contains("ferry_storage_failures_total 1"),
        "{metrics}"
    );
    assert!(metrics.contains("ferry_storage_writable 0"), "{metrics}");
    let mut server = Arc::into_inner(server).expect("the writers are done");
    let exit = server
        .wait_for_exit(PATIENCE)
        .expect("the server stops by itself once its storage failed");
    assert!(!exit.success(), "it stops with a failure status: {exit}");

    // Space freed, started again (as a supervisor would): every acknowledged write is there,
    // and writes are taken.
    std::fs::remove_file(&ballast).expect("free the space");
    drop(server);
    let server = Server::start_in(&data_dir, options);
    let mut acknowledged = heard.acknowledged.clone();
    acknowledged.insert("before.1".into());
    let kept = labels_kept(&server, &number).await;
    assert!(
        kept.is_superset(&acknowledged),
        "acknowledged but lost: {:?}",
        acknowledged.difference(&kept).collect::<Vec<_>>()
    );
    let (status, body) = server
        .post(NOTES, &token, &notes_request("ACC-1", "after.1"))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// The longest any one wait of these tests may take before they fail with a message.
const PATIENCE: Duration = Duration::from_secs(60);
