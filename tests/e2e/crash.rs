//! Crash safety: the server is SIGKILLed at random moments while several clients write notes
//! and transaction batches, then started again on the same data directory, cycle after cycle.
//! After every restart the store opens, every acknowledged write is there, every other write
//! is there wholly or not at all (a batch is never half-kept), what was seen once stays as it
//! was, and each account's ledger adds up to its balance.
//!
//! The schedule (who writes what where, when the kill comes) follows one seed, printed at the
//! start; `FERRY_CRASH_SEED=<seed>` replays it.

use crate::support::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const SUPPLIER: &str = "CRASH_CO";
const ACCOUNTS: usize = 3;
const CYCLES: usize = 20;
const NOTE_WRITERS: usize = 3;
const TRANSACTION_WRITERS: usize = 3;
/// The longest any one wait of the test may take before it fails with a message.
const PATIENCE: Duration = Duration::from_secs(30);

/// One transaction of a batch: id, type, amount in pence (positive).
#[derive(Debug, Clone)]
struct Posted {
    id: String,
    kind: &'static str,
    pence: i64,
}

/// What one request asked to add to an account.
#[derive(Debug, Clone)]
enum Write {
    Notes(Vec<String>),
    Transactions(Vec<Posted>),
}

/// What the client heard back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A 2xx status: the server promised the write is durable.
    Acknowledged,
    /// A 5xx status (none is expected; it promises nothing either way).
    Failed(u16),
    /// The connection broke or was refused: the kill came first.
    Unanswered,
}

#[derive(Debug, Clone)]
struct Attempt {
    /// `cycle.writer.sequence`, unique over the run.
    label: String,
    account: usize,
    write: Write,
    outcome: Outcome,
}

/// How much of one attempt a restarted server holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    All,
    Nothing,
    Partly { kept: usize, of: usize },
}

fn pounds(pence: i64) -> String {
    let sign = if pence < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", pence.abs() / 100, pence.abs() % 100)
}

/// `"-12.5"`, `"3"`, `"0.07"` → pence.
fn pence(amount: &Value) -> i64 {
    let text = amount
        .as_str()
        .unwrap_or_else(|| panic!("amount {amount} is not a string"));
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    assert!(
        fraction.len() <= 2,
        "amount {text} has more than two places"
    );
    let whole: i64 = whole
        .parse()
        .unwrap_or_else(|_| panic!("amount {text} is not a decimal"));
    let fraction: i64 = format!("{fraction:0<2}")
        .parse()
        .unwrap_or_else(|_| panic!("amount {text} is not a decimal"));
    let value = whole * 100 + fraction;
    if negative { -value } else { value }
}

/// What a transaction of `kind` adds to the balance (credit positive, debit negative).
fn signed(kind: &str, pence: i64) -> i64 {
    match kind {
        "CHARGE" | "SUPPLY_CHARGE" | "REPAYMENT" => -pence,
        "CREDIT" | "PAYMENT" => pence,
        other => panic!("unexpected transaction type {other}"),
    }
}

/// A random request (notes, or a transaction batch) whose ids start with `label`.
fn random_write(rng: &mut StdRng, label: &str, notes: bool) -> Write {
    if notes {
        let count = rng.gen_range(1..=3);
        Write::Notes(
            (0..count)
                .map(|index| format!("crash note {label}.{index}"))
                .collect(),
        )
    } else {
        let count = rng.gen_range(2..=8);
        Write::Transactions(
            (0..count)
                .map(|index| Posted {
                    id: format!("T-{label}.{index}"),
                    kind: if rng.gen_bool(0.25) {
                        "CREDIT"
                    } else {
                        "CHARGE"
                    },
                    pence: rng.gen_range(1..=250_000),
                })
                .collect(),
        )
    }
}

fn request_body(external: &str, write: &Write) -> (&'static str, Value) {
    match write {
        Write::Notes(bodies) => (
            NOTES,
            json!({
                "import_supplier": SUPPLIER,
                "external_account_number": external,
                "notes": bodies.iter().map(|body| json!({"body": body})).collect::<Vec<_>>(),
            }),
        ),
        Write::Transactions(batch) => (
            TRANSACTIONS,
            json!({
                "import_supplier": SUPPLIER,
                "external_account_number": external,
                "transactions": batch.iter().enumerate().map(|(index, posted)| {
                    let reason = if posted.kind == "CREDIT" { "IMPORTED_CREDIT" } else { "IMPORTED_CHARGE" };
                    json!({
                        "transaction_id": posted.id,
                        "transaction_date": format!("2025-01-{:02}", 2 + index),
                        "amount": pounds(posted.pence),
                        "type": posted.kind,
                        "reason": reason,
                    })
                }).collect::<Vec<_>>(),
            }),
        ),
    }
}

fn external(account: usize) -> String {
    format!("CRASH-{account}")
}

/// One client: writes to random accounts, one request at a time, until `stop`.
struct Writer {
    client: reqwest::Client,
    base: String,
    token: String,
    label: String,
    notes: bool,
    rng: StdRng,
    stop: Arc<AtomicBool>,
    acknowledged: Arc<AtomicUsize>,
}

impl Writer {
    async fn run(mut self) -> Vec<Attempt> {
        let mut attempts = Vec::new();
        let mut sequence = 0;
        while !self.stop.load(Ordering::SeqCst) {
            sequence += 1;
            let label = format!("{}.{sequence}", self.label);
            let account = self.rng.gen_range(0..ACCOUNTS);
            let write = random_write(&mut self.rng, &label, self.notes);
            let (path, body) = request_body(&external(account), &write);
            let sent = self
                .client
                .post(format!("{}{path}", self.base))
                .header("Authorization", format!("Token {}", self.token))
                .json(&body)
                .send()
                .await;
            let outcome = match sent {
                Ok(response) if response.status().is_success() => {
                    self.acknowledged.fetch_add(1, Ordering::SeqCst);
                    Outcome::Acknowledged
                }
                Ok(response) if response.status().is_server_error() => {
                    Outcome::Failed(response.status().as_u16())
                }
                Ok(response) => {
                    let status = response.status();
                    let text = response.text().await.unwrap_or_default();
                    panic!("{label}: a valid write was refused: {status} {text}");
                }
                Err(_) => Outcome::Unanswered,
            };
            attempts.push(Attempt {
                label,
                account,
                write,
                outcome,
            });
        }
        attempts
    }
}

/// What one account holds, read through the operator view.
struct Held {
    notes: HashMap<String, usize>,
    /// Transaction id → (type, pence).
    transactions: HashMap<String, (String, i64)>,
}

/// Reads `number` and checks what must hold whatever was written: no duplicates, one ledger
/// entry per transaction, running balances that add up, the balance equal to their sum.
async fn read_account(server: &Server, number: &str, context: &str) -> Held {
    let view = server.account_view(number).await;
    let mut notes: HashMap<String, usize> = HashMap::new();
    for note in view["notes"].as_array().expect("notes") {
        let body = note["body"].as_str().expect("note body").to_owned();
        *notes.entry(body).or_default() += 1;
    }
    for (body, count) in &notes {
        assert_eq!(*count, 1, "{context}: note {body:?} is kept {count} times");
    }
    let mut transactions = HashMap::new();
    for transaction in view["transactions"].as_array().expect("transactions") {
        let id = transaction["transaction_id"]
            .as_str()
            .expect("transaction id")
            .to_owned();
        let kind = transaction["type"].as_str().expect("type").to_owned();
        let amount = pence(&transaction["amount"]);
        let previous = transactions.insert(id.clone(), (kind, amount));
        assert!(
            previous.is_none(),
            "{context}: transaction {id} is kept twice"
        );
    }
    let mut entries: Vec<&Value> = view["ledger_entries"]
        .as_array()
        .expect("ledger entries")
        .iter()
        .collect();
    entries.sort_by_key(|entry| entry["id"].as_u64().expect("entry id"));
    assert_eq!(
        entries.len(),
        transactions.len(),
        "{context}: {number} has {} ledger entries for {} transactions",
        entries.len(),
        transactions.len()
    );
    let mut running = 0;
    for entry in &entries {
        let id = entry["transaction_id"].as_str().expect("entry transaction");
        let (kind, amount) = transactions
            .get(id)
            .unwrap_or_else(|| panic!("{context}: ledger entry for unknown transaction {id}"));
        assert_eq!(entry["type"], kind.as_str(), "{context}: entry of {id}");
        assert_eq!(pence(&entry["amount"]), *amount, "{context}: entry of {id}");
        running += signed(kind, *amount);
        assert_eq!(
            pence(&entry["balance_after"]),
            running,
            "{context}: the running balance after {id} does not add up"
        );
    }
    assert_eq!(
        pence(&view["balance"]),
        running,
        "{context}: {number}'s balance is not the sum of its ledger entries"
    );
    Held {
        notes,
        transactions,
    }
}

fn presence(attempt: &Attempt, held: &Held, context: &str) -> Presence {
    let (kept, of) = match &attempt.write {
        Write::Notes(bodies) => (
            bodies
                .iter()
                .filter(|body| held.notes.contains_key(*body))
                .count(),
            bodies.len(),
        ),
        Write::Transactions(batch) => {
            let mut kept = 0;
            for posted in batch {
                if let Some((kind, amount)) = held.transactions.get(&posted.id) {
                    assert_eq!(
                        (kind.as_str(), *amount),
                        (posted.kind, posted.pence),
                        "{context}: {} was kept with other values",
                        posted.id
                    );
                    kept += 1;
                }
            }
            (kept, batch.len())
        }
    };
    match kept {
        0 => Presence::Nothing,
        kept if kept == of => Presence::All,
        kept => Presence::Partly { kept, of },
    }
}

/// Migrates the accounts the writers write to; returns the token and their numbers.
async fn provision(server: &Server) -> (String, Vec<String>) {
    let (token, first) = server
        .imported_account(SUPPLIER, &external(0), "2025-01-01")
        .await;
    let mut numbers = vec![first];
    for index in 1..ACCOUNTS {
        let mut body = account(SUPPLIER, &external(index));
        open_period_from(&mut body, "2025-01-01");
        server.stage(&token, &body).await;
        numbers.push(server.migrate(&token, SUPPLIER, &external(index)).await);
    }
    (token, numbers)
}

async fn sigkill(server: &Server) {
    let status = tokio::process::Command::new("kill")
        .arg("-KILL")
        .arg(server.pid().to_string())
        .status()
        .await
        .expect("run kill");
    assert!(status.success(), "kill -KILL {} failed", server.pid());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkill_at_random_moments() {
    let seed: u64 = match std::env::var("FERRY_CRASH_SEED") {
        Ok(seed) => seed.parse().expect("FERRY_CRASH_SEED is a number"),
        Err(_) => rand::random(),
    };
    println!("crash test seed {seed} (replay with FERRY_CRASH_SEED={seed})");
    let mut rng = StdRng::seed_from_u64(seed);
    let started = Instant::now();
    let temp = tempfile::tempdir().expect("temp dir");
    let data_dir = temp.path().join("data");
    // The relay publishes, and the retention takes published events out of the log a second
    // after they were made, so kills land in both as well.
    let redis = Redis::start();
    let options = Options {
        env: vec![
            ("FERRY_RATE_LIMIT_PER_SECOND".into(), "0".into()),
            ("FERRY_REDIS_URL".into(), redis.url()),
            ("FERRY_EVENT_RETENTION_SECONDS".into(), "1".into()),
        ],
        ..Options::default()
    };
    let mut server = Server::start_in(&data_dir, options.clone());
    let (token, numbers) = provision(&server).await;
    let client = reqwest::Client::builder()
        .timeout(PATIENCE)
        .build()
        .expect("http client");

    let mut attempts: Vec<Attempt> = Vec::new();
    // What the first restart after an unanswered write found; it may not change afterwards.
    let mut settled: HashMap<String, Presence> = HashMap::new();
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    for cycle in 0..CYCLES {
        let context = format!("cycle {cycle} (seed {seed})");
        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Arc::new(AtomicUsize::new(0));
        let writers: Vec<_> = (0..NOTE_WRITERS + TRANSACTION_WRITERS)
            .map(|index| {
                let writer = Writer {
                    client: client.clone(),
                    base: server.base.clone(),
                    token: token.clone(),
                    label: format!("{cycle}.{index}"),
                    notes: index < NOTE_WRITERS,
                    rng: StdRng::seed_from_u64(rng.r#gen()),
                    stop: stop.clone(),
                    acknowledged: acknowledged.clone(),
                };
                tokio::spawn(writer.run())
            })
            .collect();

        // The kill comes after a random number of acknowledgements and a random moment more,
        // so it lands anywhere in a request: parsing, the transaction, the flush, the answer.
        let wanted = rng.gen_range(1..=40);
        let extra = Duration::from_micros(rng.gen_range(0..15_000));
        let waiting = Instant::now();
        while acknowledged.load(Ordering::SeqCst) < wanted {
            assert!(
                waiting.elapsed() < PATIENCE,
                "{context}: only {} of {wanted} writes were acknowledged within {PATIENCE:?}",
                acknowledged.load(Ordering::SeqCst)
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(extra).await;
        sigkill(&server).await;
        stop.store(true, Ordering::SeqCst);
        for writer in writers {
            let written = tokio::time::timeout(PATIENCE, writer)
                .await
                .unwrap_or_else(|_| panic!("{context}: a writer did not stop after the kill"))
                .expect("writer");
            attempts.extend(written);
        }
        drop(server);

        server = Server::start_in(&data_dir, options.clone());
        let (status, ready) = server.call(Method::GET, "/readyz", None, None).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{context}: the store did not open after the kill: {ready}"
        );

        let mut held = Vec::new();
        for number in &numbers {
            held.push(read_account(&server, number, &context).await);
        }
        for attempt in &attempts {
            let found = presence(attempt, &held[attempt.account], &context);
            let label = &attempt.label;
            assert!(
                !matches!(found, Presence::Partly { .. }),
                "{context}: write {label} ({:?}) is half-kept: {found:?} of {:?}",
                attempt.outcome,
                attempt.write
            );
            if attempt.outcome == Outcome::Acknowledged {
                assert_eq!(
                    found,
                    Presence::All,
                    "{context}: acknowledged write {label} was lost: {:?}",
                    attempt.write
                );
            } else {
                let first = *settled.entry(label.clone()).or_insert(found);
                assert_eq!(
                    found, first,
                    "{context}: unanswered write {label} changed between restarts"
                );
            }
        }
        // Everything kept was written by someone.
        for (account, kept) in held.iter().enumerate() {
            let (mut notes, mut transactions) = (0, 0);
            for attempt in attempts.iter().filter(|attempt| attempt.account == account) {
                if presence(attempt, kept, &context) != Presence::All {
                    continue;
                }
                match &attempt.write {
                    Write::Notes(bodies) => notes += bodies.len(),
                    Write::Transactions(batch) => transactions += batch.len(),
                }
            }
            assert_eq!(
                (kept.notes.len(), kept.transactions.len()),
                (notes, transactions),
                "{context}: account {account} holds notes or transactions nobody wrote"
            );
        }
    }

    // Every event reaches the stream once, and the log lets go of all of them once published
    // and past the retention.
    server.wait_for_published().await;
    let mut streamed = std::collections::HashSet::new();
    for (_, fields) in redis.entries("ferry:events").await {
        let id = fields.get("id").cloned().unwrap_or_default();
        assert!(
            streamed.insert(id.clone()),
            "event {id} is in the stream twice"
        );
    }
    assert!(!streamed.is_empty(), "events were published");
    let waiting = Instant::now();
    loop {
        let (status, page) = server
            .admin(Method::GET, "/admin/v1/events?limit=1000", None)
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let left = page["events"].as_array().map_or(0, Vec::len);
        if left == 0 {
            break;
        }
        assert!(
            waiting.elapsed() < PATIENCE,
            "{left} events still in the log past the retention"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    for attempt in &attempts {
        let kind = match (&attempt.outcome, settled.get(&attempt.label)) {
            (Outcome::Acknowledged, _) => "acknowledged",
            (_, Some(Presence::All)) => "unanswered, kept",
            _ => "unanswered, not kept",
        };
        *tally.entry(kind).or_default() += 1;
    }
    println!(
        "{CYCLES} kills in {:?}, {} writes: {tally:?}",
        started.elapsed(),
        attempts.len()
    );
    assert!(
        tally.get("acknowledged").copied().unwrap_or(0) >= CYCLES,
        "every cycle acknowledged at least one write"
    );
}
