//! How a recalled memory is ranked: search relevance blended with what we
//! know about the memory itself.
//!
//! ```text
//! score = (w_rel · relevance
//!        + w_imp · importance / 10
//!        + w_rec · exp(−days since last access / 30)
//!        + w_freq · min(1, log10(access_count + 1) / 2))
//!        × (SOURCE_CHANGED_FACTOR if a cited file changed since, else 1)
//! ```
//!
//! `relevance` is the memory's fused (RRF) search score divided by the best
//! score of the same recall, so it is 1 for the best match. Default weights
//! 0.4 / 0.3 / 0.2 / 0.1 (configurable). "Last access" is the last recall, or
//! the last update for a memory never recalled. A memory whose cited source
//! changed or vanished is multiplied by 0.7: an agent should still see it,
//! below memories it can trust.

use serde::{Deserialize, Serialize};

/// Factor applied to a memory whose cited source file changed or is gone.
pub const SOURCE_CHANGED_FACTOR: f64 = 0.7;

/// Days for recency to fall to 1/e.
pub const RECENCY_DAYS: f64 = 30.0;

/// Weights of the four terms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryWeights {
    /// Search relevance.
    pub relevance: f64,
    /// Importance / 10.
    pub importance: f64,
    /// Recency of the last access.
    pub recency: f64,
    /// How often it was recalled.
    pub frequency: f64,
}

impl Default for MemoryWeights {
    fn default() -> Self {
        MemoryWeights {
            relevance: 0.4,
            importance: 0.3,
            recency: 0.2,
            frequency: 0.1,
        }
    }
}

/// What the blend knows about one memory.
#[derive(Clone, Copy, Debug)]
pub struct MemorySignals {
    /// Search score over the best search score of the recall, 0..=1.
    pub relevance: f64,
    /// 1..=10.
    pub importance: u8,
    /// Days since the last recall (or update).
    pub days_since_access: f64,
    /// Times recalled.
    pub access_count: u64,
    /// A cited source changed or vanished since the memory was written.
    pub source_changed: bool,
}

/// One term of the blend, for `--explain`.
#[derive(Clone, Debug, Serialize)]
pub struct Term {
    /// `relevance`, `importance`, `recency`, `frequency` or `source_changed`.
    pub name: &'static str,
    /// The term's value before weighting (the factor, for `source_changed`).
    pub value: f64,
    /// What it adds to the score (for `source_changed`: the score it removes).
    pub contribution: f64,
}

/// The blended score and its terms (see the module documentation).
pub fn blend(s: &MemorySignals, w: &MemoryWeights) -> (f64, Vec<Term>) {
    let values = [
        ("relevance", s.relevance.clamp(0.0, 1.0), w.relevance),
        (
            "importance",
            f64::from(s.importance.clamp(1, 10)) / 10.0,
            w.importance,
        ),
        (
            "recency",
            (-s.days_since_access.max(0.0) / RECENCY_DAYS).exp(),
            w.recency,
        ),
        (
            "frequency",
            (((s.access_count as f64) + 1.0).log10() / 2.0).min(1.0),
            w.frequency,
        ),
    ];
    let mut terms: Vec<Term> = values
        .iter()
        .map(|&(name, value, weight)| Term {
            name,
            value,
            contribution: value * weight,
        })
        .collect();
    let mut score: f64 = terms.iter().map(|t| t.contribution).sum();
    if s.source_changed {
        let lost = score * (1.0 - SOURCE_CHANGED_FACTOR);
        score -= lost;
        terms.push(Term {
            name: "source_changed",
            value: SOURCE_CHANGED_FACTOR,
            contribution: -lost,
        });
    }
    (score, terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signals() -> MemorySignals {
        MemorySignals {
            relevance: 1.0,
            importance: 5,
            days_since_access: 0.0,
            access_count: 0,
            source_changed: false,
        }
    }

    #[test]
    fn the_formula_as_documented() {
        let w = MemoryWeights::default();
        let (score, terms) = blend(&signals(), &w);
        assert!((score - (0.4 + 0.15 + 0.2 + 0.0)).abs() < 1e-9);
        assert_eq!(terms.len(), 4);
        let s = MemorySignals {
            days_since_access: 30.0,
            access_count: 99,
            ..signals()
        };
        let (score, _) = blend(&s, &w);
        let want = 0.4 + 0.15 + 0.2 * (-1.0f64).exp() + 0.1 * 1.0;
        assert!((score - want).abs() < 1e-9, "{score} vs {want}");
    }

    #[test]
    fn importance_recency_and_stale_sources_move_the_rank() {
        let w = MemoryWeights::default();
        let base = blend(&signals(), &w).0;
        let important = blend(
            &MemorySignals {
                importance: 9,
                ..signals()
            },
            &w,
        )
        .0;
        let old = blend(
            &MemorySignals {
                days_since_access: 90.0,
                ..signals()
            },
            &w,
        )
        .0;
        let (stale, terms) = blend(
            &MemorySignals {
                source_changed: true,
                ..signals()
            },
            &w,
        );
        assert!(important > base && old < base);
        assert!((stale - base * SOURCE_CHANGED_FACTOR).abs() < 1e-9);
        assert_eq!(terms.last().unwrap().name, "source_changed");
    }
}
