//! Per-API-key request limits: past its quota a key gets 429 `throttled` with `Retry-After`.

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

/// A token bucket per API key (`governor`); `None` when limits are off.
#[derive(Clone)]
pub struct Throttle {
    limiter: Option<Arc<DefaultKeyedRateLimiter<String>>>,
    clock: DefaultClock,
}

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Throttle")
            .field("enabled", &self.limiter.is_some())
            .finish()
    }
}

impl Throttle {
    /// `per_second` requests a second on average, bursts of `burst`; 0 turns limits off.
    pub fn new(per_second: u32, burst: u32) -> Self {
        let limiter = NonZeroU32::new(per_second).map(|rate| {
            let burst = NonZeroU32::new(burst.max(per_second)).unwrap_or(rate);
            Arc::new(DefaultKeyedRateLimiter::keyed(
                Quota::per_second(rate).allow_burst(burst),
            ))
        });
        Self {
            limiter,
            clock: DefaultClock::default(),
        }
    }

    /// `Err(wait)` when `key` must wait before its next request.
    pub fn check(&self, key: &str) -> Result<(), Duration> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        limiter
            .check_key(&key.to_owned())
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_past_its_burst_waits_and_others_do_not() {
        let throttle = Throttle::new(1, 2);
        assert!(throttle.check("a").is_ok());
        assert!(throttle.check("a").is_ok());
        let wait = throttle.check("a").expect_err("throttled");
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1));
        assert!(throttle.check("b").is_ok());
        let off = Throttle::new(0, 0);
        assert!((0..10_000).all(|_| off.check("a").is_ok()));
    }
}
