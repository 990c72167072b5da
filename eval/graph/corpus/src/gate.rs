//! Admission control for credential checks.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Counts strikes per key and closes the gate for a cool-down.
pub struct RateGate {
    strikes: HashMap<String, Vec<Instant>>,
    window: Duration,
    cooldown: Duration,
    limit: usize,
}

impl RateGate {
    /// Whether `key` may try again now.
    pub fn admit(&mut self, key: &str, now: Instant) -> bool {
        let recent = self.recent(key, now);
        recent < self.limit || self.cooled_down(key, now)
    }

    /// Records a failed attempt.
    pub fn strike(&mut self, key: &str, now: Instant) {
        self.strikes.entry(key.to_string()).or_default().push(now);
    }

    fn recent(&self, key: &str, now: Instant) -> usize {
        self.strikes
            .get(key)
            .map_or(0, |v| v.iter().filter(|t| now.duration_since(**t) < self.window).count())
    }

    fn cooled_down(&self, key: &str, now: Instant) -> bool {
        self.strikes
            .get(key)
            .and_then(|v| v.last())
            .is_some_and(|t| now.duration_since(*t) > self.cooldown)
    }
}
