//! Relay throughput: events per second carried from the outbox to a Redis stream, next to
//! `redis-benchmark -t xadd` against the same private `redis-server`, in the same run.
//!
//! Run with `just bench`. Fills a fresh sled outbox with N catalogued events, starts the relay
//! and times how long it takes to empty the outbox; then runs redis-benchmark with the same N.

use ferry_host::domain::events::Event;
use ferry_host::events::relay::{self, RelayConfig, RelayStatus};
use ferry_host::store::{EventLog, SledStore};
use serde_json::json;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Events per run (`FERRY_BENCH_EVENTS` overrides, e.g. for profiling).
fn events() -> usize {
    std::env::var("FERRY_BENCH_EVENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000)
}

fn main() {
    let total = events();
    let dir = tempfile::tempdir().expect("temp dir");
    let socket = dir.path().join("redis.sock");
    let mut redis = Command::new("redis-server")
        .args(["--port", "0", "--unixsocket"])
        .arg(&socket)
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server");
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        std::thread::sleep(Duration::from_millis(10));
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let store = Arc::new(SledStore::open(&dir.path().join("db")).expect("store"));
    for chunk in (0..total).collect::<Vec<_>>().chunks(1000) {
        let events: Vec<Event> = chunk
            .iter()
            .map(|index| {
                let number = format!("A-{index:08X}");
                Event::new(
                    "account.occupied",
                    "v1",
                    Some(&number),
                    json!({"account_number": number}),
                )
                .expect("a catalogued event")
            })
            .collect();
        runtime
            .block_on(store.publish_events(&events))
            .expect("outbox");
    }

    let relay_rate = runtime.block_on(async {
        let stop = tokio_util::sync::CancellationToken::new();
        let config = RelayConfig {
            url: format!("redis+unix://{}", socket.display()),
            stream: "bench:events".into(),
            max_len: 10_000_000,
            batch: 1024,
        };
        let started = Instant::now();
        let status = Arc::new(RelayStatus::new(true));
        let task = tokio::spawn(relay::run(
            store.clone(),
            config,
            status.clone(),
            stop.clone(),
        ));
        while (status.snapshot().published as usize) < total {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let elapsed = started.elapsed();
        stop.cancel();
        let _ = task.await;
        total as f64 / elapsed.as_secs_f64()
    });

    // The same XADD the relay sends (fields of a typical event), as redis-benchmark's load.
    let sample = Event::new(
        "account.occupied",
        "v1",
        Some("A-0000BEEF"),
        json!({"account_number": "A-0000BEEF"}),
    )
    .expect("event");
    let mut xadd = vec![
        "XADD".to_owned(),
        "bench:baseline".to_owned(),
        "MAXLEN".into(),
        "~".into(),
        "10000000".into(),
        "*".into(),
    ];
    for (name, value) in relay::stream_fields(&sample) {
        xadd.push(name.to_owned());
        xadd.push(value.into_owned());
    }
    let output = Command::new("redis-benchmark")
        .arg("-s")
        .arg(&socket)
        .args(["-n", &total.to_string(), "-q"])
        .args(&xadd)
        .output()
        .expect("redis-benchmark");
    let text = String::from_utf8_lossy(&output.stdout);
    let xadd_rate = text
        .split(['\r', '\n'])
        .filter(|line| line.contains("requests per second"))
        .filter_map(|line| {
            line.split(": ")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<f64>()
                .ok()
        })
        .next_back()
        .unwrap_or(f64::NAN);
    let _ = redis.kill();
    let _ = redis.wait();

    println!("relay: {relay_rate:.0} events/s ({total} events, batches of 1024, one connection)");
    println!(
        "redis-benchmark, the same XADD: {xadd_rate:.0} requests/s (50 clients, no pipelining)"
    );
    println!(
        "ratio relay / redis-benchmark: {:.2} (target ≥ 0.5)",
        relay_rate / xadd_rate
    );
}
