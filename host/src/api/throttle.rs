//! Per-API-key request limits: past its quota a key gets 429 `throttled` with `Retry-After`.
//!
//! With Redis configured the quota is counted in Redis, so it holds across every instance
//! that shares it: one atomic script per request keeps the key's "theoretical arrival time"
//! (GCRA, the algorithm `governor` uses too) on Redis's own clock, so the instances' clocks
//! do not matter. Without Redis, or while Redis does not answer within [`REDIS_DEADLINE`],
//! each instance counts on its own (`governor`), as a single instance always did: a Redis
//! outage never refuses a request that the local count would take.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use redis::aio::MultiplexedConnection;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest a request waits for Redis's answer before the local count decides.
pub const REDIS_DEADLINE: Duration = Duration::from_millis(250);
/// After Redis failed, how long the local count decides before Redis is tried again.
const REDIS_RETRY_AFTER: Duration = Duration::from_secs(1);
/// The Redis keys of the counts: `ferry:rate-limit:<API key id>`.
pub const REDIS_KEY_PREFIX: &str = "ferry:rate-limit:";

/// GCRA on Redis's clock. KEYS[1]: the key's theoretical arrival time, in microseconds.
/// ARGV[1]: microseconds between requests at the average rate; ARGV[2]: the burst, in the same
/// microseconds (interval × burst). Returns 0 when the request is taken (and records it), else
/// the microseconds to wait. The time is written with `%.0f`: Lua's `tostring` would round a
/// 16-digit number.
const GCRA_SCRIPT: &str = r"
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now_us
if tat < now_us then tat = now_us end
local next_tat = tat + interval
local wait = next_tat - now_us - burst
if wait > 0 then return wait end
redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', math.ceil((next_tat - now_us) / 1000) + 1)
return 0
";

/// The quota every key has.
#[derive(Debug, Clone, Copy)]
struct Rate {
    per_second: NonZeroU32,
    burst: NonZeroU32,
}

impl Rate {
    fn interval_us(self) -> u64 {
        1_000_000 / u64::from(self.per_second.get())
    }
}

/// A token bucket per API key; `None` when limits are off.
#[derive(Clone)]
pub struct Throttle {
    limits: Option<Limits>,
}

#[derive(Clone)]
struct Limits {
    rate: Rate,
    local: Arc<DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
    shared: Option<Arc<SharedCount>>,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("enabled", &self.limits.is_some())
            .field(
                "shared",
                &self.limits.as_ref().is_some_and(|l| l.shared.is_some()),
            )
            .finish()
    }
}

impl Throttle {
    /// `per_second` requests a second on average, bursts of `burst`, counted by this instance;
    /// 0 turns limits off.
    pub fn new(per_second: u32, burst: u32) -> Self {
        let limits = NonZeroU32::new(per_second).map(|per_second| {
            let burst = NonZeroU32::new(burst.max(per_second.get())).unwrap_or(per_second);
            let rate = Rate { per_second, burst };
            Limits {
                rate,
                local: Arc::new(DefaultKeyedRateLimiter::keyed(
                    Quota::per_second(per_second).allow_burst(burst),
                )),
                clock: DefaultClock::default(),
                shared: None,
            }
        });
        Self { limits }
    }

    /// The same limits counted in Redis at `url`, shared by every instance that uses it.
    pub fn shared_through(mut self, url: &str) -> Result<Self, redis::RedisError> {
        if let Some(limits) = &mut self.limits {
            limits.shared = Some(Arc::new(SharedCount::new(url)?));
        }
        Ok(self)
    }

    /// `Err(wait)` when `key` must wait before its next request.
    pub async fn check(&self, key: &str) -> Result<(), Duration> {
        let Some(limits) = &self.limits else {
            return Ok(());
        };
        if let Some(shared) = &limits.shared
            && let Some(verdict) = shared.check(key, limits.rate).await
        {
            return verdict;
        }
        limits
            .local
            .check_key(&key.to_owned())
            .map_err(|not_until| not_until.wait_time_from(limits.clock.now()))
    }
}

/// The counts in Redis: one multiplexed connection, opened on first use and again after a
/// failure (not before [`REDIS_RETRY_AFTER`]).
struct SharedCount {
    client: redis::Client,
    script: redis::Script,
    connection: tokio::sync::Mutex<Connection>,
}

enum Connection {
    Open(MultiplexedConnection),
    Closed { retry_at: Option<Instant> },
}

impl SharedCount {
    fn new(url: &str) -> Result<Self, redis::RedisError> {
        Ok(Self {
            client: redis::Client::open(url)?,
            script: redis::Script::new(GCRA_SCRIPT),
            connection: tokio::sync::Mutex::new(Connection::Closed { retry_at: None }),
        })
    }

    /// Redis's verdict, or `None` when Redis cannot give one now (the local count decides).
    async fn check(&self, key: &str, rate: Rate) -> Option<Result<(), Duration>> {
        let mut connection = self.connection().await?;
        let interval = rate.interval_us();
        let mut invocation = self.script.key(format!("{REDIS_KEY_PREFIX}{key}"));
        invocation
            .arg(interval)
            .arg(interval * u64::from(rate.burst.get()));
        let answer = tokio::time::timeout(
            REDIS_DEADLINE,
            invocation.invoke_async::<u64>(&mut connection),
        )
        .await;
        match answer {
            Ok(Ok(0)) => Some(Ok(())),
            Ok(Ok(wait_us)) => Some(Err(Duration::from_micros(wait_us))),
            Ok(Err(error)) => {
                self.failed(&error.to_string()).await;
                None
            }
            Err(_) => {
                self.failed("no answer in time").await;
                None
            }
        }
    }

    /// The open connection, or a new one unless a recent failure says to wait.
    async fn connection(&self) -> Option<MultiplexedConnection> {
        let mut connection = self.connection.lock().await;
        match &*connection {
            Connection::Open(open) => return Some(open.clone()),
            Connection::Closed {
                retry_at: Some(retry_at),
            } if Instant::now() < *retry_at => return None,
            Connection::Closed { .. } => {}
        }
        let opened = tokio::time::timeout(
            REDIS_DEADLINE,
            self.client.get_multiplexed_async_connection(),
        )
        .await;
        match opened {
            Ok(Ok(open)) => {
                *connection = Connection::Open(open.clone());
                Some(open)
            }
            Ok(Err(error)) => {
                Self::close(&mut connection, &error.to_string());
                None
            }
            Err(_) => {
                Self::close(&mut connection, "no connection in time");
                None
            }
        }
    }

    async fn failed(&self, reason: &str) {
        Self::close(&mut *self.connection.lock().await, reason);
    }

    /// Counts locally until [`REDIS_RETRY_AFTER`] has passed; says so once per failure.
    fn close(connection: &mut Connection, reason: &str) {
        let first = !matches!(connection, Connection::Closed { retry_at: Some(_) });
        if first {
            tracing::warn!(
                reason,
                "rate limits cannot be counted in Redis: each instance counts its own until it answers"
            );
        }
        metrics::counter!("ferry_rate_limit_redis_failures_total").increment(1);
        *connection = Connection::Closed {
            retry_at: Some(Instant::now() + REDIS_RETRY_AFTER),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_key_past_its_burst_waits_and_others_do_not() {
        let throttle = Throttle::new(1, 2);
        assert!(throttle.check("a").await.is_ok());
        assert!(throttle.check("a").await.is_ok());
        let wait = throttle.check("a").await.expect_err("throttled");
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1));
        assert!(throttle.check("b").await.is_ok());
        let off = Throttle::new(0, 0);
        for _ in 0..10_000 {
            assert!(off.check("a").await.is_ok());
        }
    }

    #[tokio::test]
    async fn without_an_answer_from_redis_each_instance_counts_its_own() {
        // Nothing listens there: the local count decides, and the burst still holds.
        let throttle = Throttle::new(1, 2)
            .shared_through("redis://127.0.0.1:1/")
            .expect("a valid URL");
        assert!(throttle.check("a").await.is_ok());
        assert!(throttle.check("a").await.is_ok());
        assert!(throttle.check("a").await.is_err());
        assert!(throttle.check("b").await.is_ok());
    }
}
