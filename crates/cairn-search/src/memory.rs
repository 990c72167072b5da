//! How a recalled memory is ranked: search relevance, gating what we know
//! about the memory itself.
//!
//! ```text
//! score = relevance
//!       × (w_rel
//!          + w_imp · importance / 10
//!          + w_rec · exp(−days since last access / 30)
//!          + w_freq · min(1, log10(access_count + 1) / 2))
//!       × (SOURCE_CHANGED_FACTOR if a cited file changed since, else 1)
//! ```
//!
//! `relevance` is the memory's fused search score divided by the best
//! score of the same recall, so it is 1 for the best match. Default weights
//! 0.4 / 0.3 / 0.2 / 0.1 (configurable). "Last access" is the last recall, or
//! the last update for a memory never recalled. A memory whose cited source
//! changed or vanished is multiplied by 0.7: an agent should still see it,
//! below memories it can trust.
//!
//! Why relevance multiplies the other terms instead of being added to them:
//! added, importance alone was worth 0.3 — three quarters of what relevance
//! could give — so an important memory about something else (a release-signing
//! note, relevance 0.59, importance 10) ranked above the one the question was
//! about (staging, relevance 1.00). Multiplied, importance, recency and usage
//! scale a memory's relevance by a factor between `w_rel + w_imp/10` (0.43:
//! importance 1, long untouched, never used) and the sum of the weights (1.0):
//! a memory of no relevance scores 0 however important it is, and a less
//! relevant memory can pass a more relevant one only when it is at least
//! 0.43 times as relevant and then only in that extreme. Between two fresh,
//! unused memories of importance 8 and 5, the important one passes the
//! relevant one only when it is at least 0.89 times as relevant
//! ((0.4 + 0.15 + 0.2) / (0.4 + 0.24 + 0.2)). The terms reorder near ties,
//! which is what they are for; the recall's relevance floor (`[memory]
//! relative_floor`) drops the weak matches before the blend sees them.

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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Term {
    /// `relevance`, `importance`, `recency`, `frequency` or `source_changed`.
    pub name: std::borrow::Cow<'static, str>,
    /// The term's value before weighting (the factor, for `source_changed`).
    pub value: f64,
    /// What it adds to the score (for `source_changed`: the score it removes).
    pub contribution: f64,
}

/// The blended score and its terms (see the module documentation). Each
/// term's contribution is its share of the score (relevance × weight ×
/// value), so the contributions add up to the score.
pub fn blend(s: &MemorySignals, w: &MemoryWeights) -> (f64, Vec<Term>) {
    let relevance = if s.relevance.is_nan() {
        0.0
    } else {
        s.relevance.clamp(0.0, 1.0)
    };
    let values = [
        ("relevance", relevance, w.relevance),
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
        .enumerate()
        .map(|(i, &(name, value, weight))| Term {
            name: name.into(),
            value,
            // The relevance term is relevance × w_rel; every other term is
            // gated by relevance.
            contribution: if i == 0 {
                value * weight
            } else {
                relevance * value * weight
            },
        })
        .collect();
    let mut score: f64 = terms.iter().map(|t| t.contribution).sum();
    if s.source_changed {
        let lost = score * (1.0 - SOURCE_CHANGED_FACTOR);
        score -= lost;
        terms.push(Term {
            name: "source_changed".into(),
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
    fn relevance_gates_the_other_terms() {
        let w = MemoryWeights::default();
        let half = MemorySignals {
            relevance: 0.5,
            ..signals()
        };
        let (score, terms) = blend(&half, &w);
        assert!((score - 0.5 * (0.4 + 0.15 + 0.2)).abs() < 1e-9, "{score}");
        let sum: f64 = terms.iter().map(|t| t.contribution).sum();
        assert!((sum - score).abs() < 1e-12);
        // Of no relevance, nothing lifts a memory.
        let (zero, _) = blend(
            &MemorySignals {
                relevance: 0.0,
                importance: 10,
                access_count: 1000,
                ..signals()
            },
            &w,
        );
        assert_eq!(zero, 0.0);
    }

    /// Issue 18: "how do we deploy to staging?" ranked a release-signing
    /// memory (relevance 0.59, importance 10) above the staging memory
    /// (relevance 1.00, importance 3): 0.736 against 0.690 when the terms
    /// were added.
    #[test]
    fn an_important_memory_of_low_relevance_stays_below_the_relevant_one() {
        let w = MemoryWeights::default();
        let staging = blend(
            &MemorySignals {
                relevance: 1.0,
                importance: 3,
                ..signals()
            },
            &w,
        )
        .0;
        let signing = blend(
            &MemorySignals {
                relevance: 0.59,
                importance: 10,
                ..signals()
            },
            &w,
        )
        .0;
        assert!(staging > signing, "staging {staging}, signing {signing}");
    }

    proptest::proptest! {
        /// However its other terms compare, a memory less than 0.43 times as
        /// relevant as another ranks below it (default weights).
        #[test]
        fn far_less_relevant_never_passes(
            rel in 0.01f64..=1.0, share in 0.0f64..0.43,
            imp_a in 1u8..=10, imp_b in 1u8..=10,
            days_a in 0.0f64..400.0, days_b in 0.0f64..400.0,
            uses_a in 0u64..1000, uses_b in 0u64..1000,
        ) {
            let w = MemoryWeights::default();
            let strong = blend(&MemorySignals { relevance: rel, importance: imp_a, days_since_access: days_a, access_count: uses_a, source_changed: false }, &w).0;
            let weak = blend(&MemorySignals { relevance: rel * share, importance: imp_b, days_since_access: days_b, access_count: uses_b, source_changed: false }, &w).0;
            proptest::prop_assert!(strong > weak, "{strong} vs {weak}");
        }
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
