//! Plugin faults under load: suppliers whose plugins loop forever, grow memory without end or
//! trap are hammered by concurrent clients while a healthy supplier (the example plugin) is
//! served. The healthy supplier's median latency stays within 2× of what it is without the
//! fault load, measured in the same run just before and after, and the server's resident
//! memory stays bounded.
//!
//! It compares latencies, so it runs in test binaries of its own (`e2e-measured` on sled,
//! `e2e-measured-postgres`). Cargo runs test binaries one at a time, so no other test shares
//! the machine's cores with it. Among the whole suite on two cores, its ratio once came
//! to 2.01 where alone it passes with room. What makes it so (a supplier's slots, the priority
//! of a plugin that overran) is tested in `plugin_load.rs`.

use crate::support::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The fault fixtures, each on its own supplier, with the failure kind `/metrics` must count.
const FAULTY: [(&str, &str, &str); 3] = [
    ("LOOP_CO", "fault_loop_forever", "deadline"),
    ("MEMORY_CO", "fault_grow_memory", "memory"),
    ("TRAP_CO", "fault_trap", "trap"),
];
/// Loaded phases, each between two quiet ones, so that changes in the machine's own load
/// (other builds, other tests) fall on both sides of the comparison.
const ROUNDS: usize = 12;
/// Requests the healthy supplier sends in each phase, one after another, after a warm-up.
const SAMPLES: usize = 30;
const WARM_UP: usize = 5;
/// Clients per faulty supplier. Each sends its next request when its previous one is answered,
/// but not sooner than its share of [`REQUESTS_PER_SECOND`] allows.
const HAMMERS_PER_SUPPLIER: u32 = 4;
/// Requests a second sent to each faulty supplier: Ferry's default per-key rate limit, the
/// most one supplier's API key is let in. (Unpaced, the cheap failures would be a flood that
/// saturates the cores whatever a plugin does, which the rate limit, not this test, is for.)
const REQUESTS_PER_SECOND: u32 = 100;
/// Time for the fault load to build up before the healthy supplier is measured under it.
const BUILD_UP: Duration = Duration::from_millis(100);
/// The server's resident memory may never exceed this (it idles at well under 100 MiB; one
/// grow-memory call may ask for 64 MiB).
const MEMORY_CAP_KIB: u64 = 256 << 10;
/// How much the resident memory may grow from the first round to the last.
const MEMORY_GROWTH_KIB: u64 = 16 << 10;

/// Resident and peak resident memory of process `pid`, in KiB, from /proc.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The healthy supplier's latencies over `SAMPLES` validation requests sent one after another,
/// from a thread and runtime of their own (so that the hammering clients cannot delay them
/// inside this process). Every answer must be the example plugin's mapping.
async fn probe(base: String, token: String, label: String) -> Vec<Duration> {
    tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("probe runtime");
        runtime.block_on(async move {
            let client = reqwest::Client::builder()
                .timeout(REQUEST_TIMEOUT)
                .build()
                .expect("http client");
            let mut latencies = Vec::with_capacity(SAMPLES);
            for index in 0..WARM_UP + SAMPLES {
                let body = healthy_account(&format!("H-{label}-{index}"));
                let started = Instant::now();
                let response = client
                    .post(format!("{base}{VALIDATE}"))
                    .header("Authorization", format!("Token {token}"))
                    .json(&body)
                    .send()
                    .await
                    .expect("healthy request");
                let status = response.status();
                let answer: Value = response.json().await.expect("healthy answer");
                let elapsed = started.elapsed();
                assert_eq!(
                    status,
                    StatusCode::OK,
                    "healthy supplier ({label}): {answer}"
                );
                assert_eq!(
                    answer["customers"][0]["mobile"], "+447700900123",
                    "the example plugin mapped the account ({label})"
                );
                if index >= WARM_UP {
                    latencies.push(elapsed);
                }
            }
            latencies
        })
    })
    .await
    .expect("probe")
}

fn percentile(samples: &[Duration], fraction: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let index = ((sorted.len() - 1) as f64 * fraction).round() as usize;
    sorted[index]
}

fn median(samples: &[Duration]) -> Duration {
    percentile(samples, 0.5)
}

/// Hammering client `client` of a faulty supplier: sends until `stop`; every answer must be a
/// clean failure in the standard error format. Returns the error codes.
async fn hammer(
    server: Arc<Server>,
    supplier: &'static str,
    token: String,
    client: u32,
    stop: Arc<AtomicBool>,
) -> Vec<String> {
    let period = Duration::from_secs(1) * HAMMERS_PER_SUPPLIER / REQUESTS_PER_SECOND;
    let mut next = Instant::now() + period * client / HAMMERS_PER_SUPPLIER;
    let mut codes = Vec::new();
    let mut index = 0;
    loop {
        tokio::time::sleep_until(next.into()).await;
        if stop.load(Ordering::SeqCst) {
            return codes;
        }
        next = (next + period).max(Instant::now());
        index += 1;
        let external = format!("F-{client}-{index}");
        let (status, body) = server
            .post(VALIDATE, &token, &account(supplier, &external))
            .await;
        let code = body["code"].as_str().unwrap_or_default().to_owned();
        assert_error(&body, &code);
        let expected = match code.as_str() {
            "plugin_failed" => StatusCode::INTERNAL_SERVER_ERROR,
            "plugin_busy" => StatusCode::SERVICE_UNAVAILABLE,
            _ => panic!("{supplier}: unexpected answer {status} {body}"),
        };
        assert_eq!(status, expected, "{supplier}: {body}");
        codes.push(code);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faulty_plugins_under_load_leave_other_suppliers_fast_and_memory_bounded() {
    let server = Arc::new(
        Server::start_with(Options {
            // The hammering clients pace themselves at the default limit; the healthy
            // supplier's measurements must not be throttled.
            env: vec![("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into())],
            ..Options::default()
        })
        .await,
    );
    let mut faulty_tokens = Vec::new();
    for (supplier, component, _) in FAULTY {
        let token = server.supplier_with_token(supplier).await;
        server.install_plugin(supplier, component, json!({})).await;
        faulty_tokens.push(token);
    }
    let healthy = healthy_supplier(&server).await;

    // Quiet phases before, between and after the loaded ones: quiet 0, loaded 0, quiet 1, …
    let mut quiet = vec![probe(server.base.clone(), healthy.clone(), "0-quiet".into()).await];
    let mut loaded = Vec::new();
    let mut resident = Vec::new();
    let mut answers = BTreeMap::<(&str, String), usize>::new();
    for round in 0..ROUNDS {
        let stop = Arc::new(AtomicBool::new(false));
        let mut hammers = Vec::new();
        for ((supplier, _, _), token) in FAULTY.iter().zip(&faulty_tokens) {
            for client in 0..HAMMERS_PER_SUPPLIER {
                let hammering = hammer(
                    server.clone(),
                    supplier,
                    token.clone(),
                    client,
                    stop.clone(),
                );
                hammers.push((*supplier, tokio::spawn(hammering)));
            }
        }
        tokio::time::sleep(BUILD_UP).await;
        let label = format!("{round}-loaded");
        loaded.push(probe(server.base.clone(), healthy.clone(), label).await);
        stop.store(true, Ordering::SeqCst);
        for (supplier, hammering) in hammers {
            for code in hammering.await.expect("hammering client") {
                *answers.entry((supplier, code)).or_default() += 1;
            }
        }
        resident.push(memory_kib(server.pid()).0);
        let label = format!("{}-quiet", round + 1);
        quiet.push(probe(server.base.clone(), healthy.clone(), label).await);
    }

    // Each loaded phase against the quiet phases on both sides of it, which saw the same
    // machine: a change in the machine's load cancels out instead of landing on one side.
    let ratios: Vec<f64> = (0..ROUNDS)
        .map(|round| {
            let normal = median(&[&quiet[round][..], &quiet[round + 1][..]].concat());
            median(&loaded[round]).as_secs_f64() / normal.as_secs_f64()
        })
        .collect();
    let mut sorted_ratios = ratios.clone();
    sorted_ratios.sort_by(f64::total_cmp);
    let typical_ratio = sorted_ratios[ROUNDS / 2];
    let (all_quiet, all_loaded) = (quiet.concat(), loaded.concat());
    let (resident_now, peak) = memory_kib(server.pid());
    let report = format!(
        "loaded/quiet median latency of the healthy supplier: {typical_ratio:.2} (rounds: {ratios:.2?}); \
         overall quiet p50 {:?} p90 {:?}, loaded p50 {:?} p90 {:?}; faulty answers {answers:?}; \
         RSS after each round {resident:?} KiB, now {resident_now} KiB, peak {peak} KiB",
        median(&all_quiet),
        percentile(&all_quiet, 0.9),
        median(&all_loaded),
        percentile(&all_loaded, 0.9),
    );
    println!("{report}");

    // The fault load was real: every fixture failed the way it fails, many times.
    for (supplier, _, kind) in FAULTY {
        let counted = failures_counted(&server, supplier, kind).await;
        assert!(
            counted >= ROUNDS as u64,
            "{supplier}: {counted} {kind} failures; {report}"
        );
    }
    assert!(
        typical_ratio <= 2.0,
        "the healthy supplier's median latency more than doubled under the fault load; {report}"
    );
    assert!(
        peak < MEMORY_CAP_KIB,
        "the server's memory peaked over the cap; {report}"
    );
    let first = resident[0];
    let last = resident[ROUNDS - 1];
    assert!(
        last <= first + MEMORY_GROWTH_KIB,
        "the server's memory grew round after round; {report}"
    );
}
