//! The embedding queue and its backpressure (the Rust Memory MCP Server
//! design's adaptive queue). Chunks written without a vector wait in the
//! index itself — on disk, so a crash loses none — and one backfill at a
//! time takes them in groups and writes their vectors in batches (see
//! `indexer/embed.rs`). The queue's depth is the index's chunks without a
//! vector of the current model; its rate is what the backfill has been
//! writing lately.
//!
//! `[embed] queue_capacity` (10,000 chunks) bounds it by slowing writers:
//! once the depth passes 80 % of it, each memory store and each re-index
//! pass of the watcher first waits — 50 ms at 80 %, rising to 500 ms at
//! 100 % and 1 s beyond — and its answer says so, so a burst of writes
//! cannot outrun the model without limit while reads stay fast. An explicit
//! `cairn index` is never slowed: it is how a queue gets filled on purpose.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use cairn_core::sync;
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;

/// The share of `queue_capacity` above which writers are slowed.
pub const SLOW_DOWN_AT: f64 = 0.8;

/// The queue as `status` shows it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EmbedQueue {
    /// Chunks waiting for a vector.
    pub pending: u64,
    /// `[embed] queue_capacity`.
    pub capacity: u64,
    /// Vectors written per second lately (0 before the first batch).
    pub per_second: f64,
    /// Writes this process slowed so far.
    pub slowed_writes: u64,
}

/// The backfill's recent rate: an exponentially weighted mean over its
/// write batches.
#[derive(Debug, Default)]
pub(crate) struct Rate {
    since: Option<Instant>,
    per_second: f64,
}

impl Rate {
    /// A backfill starts now: the next batch's time counts from here.
    pub(crate) fn start(&mut self) {
        self.since = Some(Instant::now());
    }

    /// `n` vectors were just written.
    pub(crate) fn wrote(&mut self, n: usize) {
        let now = Instant::now();
        if let Some(t) = self.since {
            let secs = now.duration_since(t).as_secs_f64().max(1e-3);
            let rate = n as f64 / secs;
            self.per_second = if self.per_second == 0.0 {
                rate
            } else {
                0.7 * self.per_second + 0.3 * rate
            };
        }
        self.since = Some(now);
    }
}

/// How long a writer waits at `fill` (depth over capacity): none below
/// [`SLOW_DOWN_AT`], 50 ms there, 500 ms at 1, at most 1 s.
pub fn slow_down(fill: f64) -> Option<Duration> {
    if !fill.is_finite() || fill < SLOW_DOWN_AT {
        return None;
    }
    let ms = 50.0 + (fill - SLOW_DOWN_AT) / (1.0 - SLOW_DOWN_AT) * 450.0;
    Some(Duration::from_millis(ms.min(1000.0) as u64))
}

impl Engine {
    /// The queue now, `None` without an embedding model.
    pub fn embed_queue(&self) -> Result<Option<EmbedQueue>> {
        let Some(embedder) = &self.embedder else {
            return Ok(None);
        };
        let mut reader = self.reader()?;
        let stats = reader.snapshot()?.stats(Some(embedder.model_id()))?;
        Ok(Some(self.queue_of(&stats)))
    }

    /// The queue of an index with these counts: the chunks without a
    /// vector, but commit records that get none (`[history] vectors =
    /// false`).
    pub(crate) fn queue_of(&self, stats: &cairn_core::Stats) -> EmbedQueue {
        EmbedQueue {
            pending: self.waiting_for_vectors(stats),
            capacity: self.config().embed.queue_capacity as u64,
            per_second: sync::lock(&self.embed_rate).per_second,
            slowed_writes: self.slowed_writes.load(Ordering::Relaxed),
        }
    }

    /// Chunks that wait for a vector: those without one, but commit
    /// records with `[history] vectors = false`.
    pub(crate) fn waiting_for_vectors(&self, stats: &cairn_core::Stats) -> u64 {
        stats
            .chunks
            .saturating_sub(stats.embedded_chunks)
            .saturating_sub(self.commits_without_vectors(stats))
    }

    /// Chunks of commit records left without a vector on purpose
    /// (`[history] vectors = false`; none otherwise).
    pub(crate) fn commits_without_vectors(&self, stats: &cairn_core::Stats) -> u64 {
        if self.config().history.vectors {
            0
        } else {
            stats.unembedded_history
        }
    }

    /// Backpressure before a write (a memory store, a watcher's pass):
    /// waits as [`slow_down`] says when the queue is past 80 % full and
    /// returns what to tell the writer; `None` when it went straight on.
    pub fn admit_write(&self) -> Result<Option<String>> {
        let Some(q) = self.embed_queue()? else {
            return Ok(None);
        };
        let fill = q.pending as f64 / q.capacity.max(1) as f64;
        let Some(wait) = slow_down(fill) else {
            return Ok(None);
        };
        self.slowed_writes.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(wait);
        Ok(Some(format!(
            "embedding queue at {:.0}% ({} of {} chunks wait for a vector, {:.0}/s): this write was slowed by {} ms",
            fill * 100.0,
            q.pending,
            q.capacity,
            q.per_second,
            wait.as_millis()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_slow_down_from_80_percent_up_to_a_second() {
        assert_eq!(slow_down(0.0), None);
        assert_eq!(slow_down(0.79), None);
        assert_eq!(slow_down(0.8), Some(Duration::from_millis(50)));
        assert_eq!(slow_down(1.0), Some(Duration::from_millis(500)));
        assert_eq!(slow_down(5.0), Some(Duration::from_millis(1000)));
        assert_eq!(slow_down(f64::NAN), None);
    }

    #[test]
    fn the_rate_follows_the_batches() {
        let mut r = Rate::default();
        r.wrote(100);
        assert_eq!(r.per_second, 0.0, "no start, no rate");
        r.start();
        std::thread::sleep(Duration::from_millis(20));
        r.wrote(100);
        assert!(
            r.per_second > 100.0 && r.per_second < 5000.0,
            "{}",
            r.per_second
        );
    }
}
