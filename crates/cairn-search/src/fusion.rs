//! Fusion of the retrievers' lists: score fusion (the default) and
//! Reciprocal Rank Fusion.
//!
//! RRF:
//! `score(d) = Σ_r w_r / (k + rank_r(d))` over the retrievers `r` whose list
//! holds `d`, with `rank` 1-based and `w_r` the retriever's weight (the engine
//! uses 1.0 for BM25 and 0.8 for vectors; see `SearchConfig::vector_weight`).
//! RRF uses ranks, not raw scores, so BM25's unbounded scores and cosine similarities need no calibration against each
//! other. We take k = 60, the value of Cormack, Clarke & Büttcher (SIGIR 2009)
//! that most hybrid systems use: a large k flattens the curve, so a chunk that
//! both retrievers place fairly high beats one that only one retriever places
//! first — what we want when BM25 and a small embedding model each miss
//! different things.

use std::collections::HashMap;
use std::hash::Hash;

use cairn_core::{Retriever, Scored, Signal};

/// The constant `k` of RRF.
pub const RRF_K: f64 = 60.0;

/// One retriever's ranked list of ids (chunks, or documents) with their raw
/// scores, best first.
#[derive(Clone, Debug)]
pub struct Ranked<'a, Id> {
    /// The retriever, reported by `explain`.
    pub retriever: Retriever,
    /// Candidates, best first.
    pub items: &'a [Scored<Id>],
    /// Weight of this list's votes.
    pub weight: f64,
}

/// A fused candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Fused<Id> {
    /// Candidate id: what the fused lists rank (chunks, or documents).
    pub id: Id,
    /// The fused score.
    pub score: f64,
    /// How each list that holds the candidate ranked it.
    pub signals: Vec<Signal>,
}

/// Fuses ranked lists with RRF (constant `k`), best first; ties keep the
/// order of first appearance, so results are deterministic.
pub fn rrf<Id: Copy + Eq + Hash>(lists: &[Ranked<'_, Id>], k: f64) -> Vec<Fused<Id>> {
    combine(lists, |list, rank, _| list.weight / (k + rank as f64))
}

/// Sums each candidate's contributions over the lists, best first (a stable
/// sort: ties keep the order of first appearance). `contribution(list,
/// 1-based rank, raw score)` is what one list's entry adds; a list naming an
/// id twice counts once.
fn combine<Id: Copy + Eq + Hash>(
    lists: &[Ranked<'_, Id>],
    contribution: impl Fn(&Ranked<'_, Id>, usize, f64) -> f64,
) -> Vec<Fused<Id>> {
    let mut out: Vec<Fused<Id>> = Vec::new();
    let mut index: HashMap<Id, usize> = HashMap::new();
    for list in lists {
        for (i, &Scored { id, score: raw }) in list.items.iter().enumerate() {
            let rank = i + 1;
            let slot = *index.entry(id).or_insert_with(|| {
                out.push(Fused {
                    id,
                    score: 0.0,
                    signals: Vec::new(),
                });
                out.len() - 1
            });
            let f = &mut out[slot];
            if f.signals.iter().any(|s| s.retriever == list.retriever) {
                continue;
            }
            let c = contribution(list, rank, raw);
            f.score += c;
            f.signals.push(Signal {
                retriever: list.retriever,
                rank,
                raw,
                contribution: c,
            });
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

/// How the retrievers' lists become one ranking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FusionMethod {
    /// [`score_fusion`]: each list's scores over its best, weighted, summed.
    #[default]
    Score,
    /// [`rrf`] with `k` = [`RRF_K`].
    Rrf,
    /// [`weighted_fusion`]: each list min–max normalised, weighted, summed
    /// (the ch4p design's hybrid score, 0.4 BM25 / 0.6 cosine there).
    Weighted,
}

/// Fuses ranked lists by `method`, best first.
pub fn fuse<Id: Copy + Eq + Hash>(
    lists: &[Ranked<'_, Id>],
    method: FusionMethod,
) -> Vec<Fused<Id>> {
    match method {
        FusionMethod::Score => score_fusion(lists),
        FusionMethod::Rrf => rrf(lists, RRF_K),
        FusionMethod::Weighted => weighted_fusion(lists),
    }
}

/// Weighted fusion: each list's raw scores min–max normalised to 0..=1
/// over that list (its best 1, its last 0; a list whose scores are all
/// equal gives each 1), times the list's weight, summed over the lists that
/// hold a candidate. With weights that add to 1 a fused score is in 0..=1,
/// so an absolute `min_score` reads as a share of a perfect match. Unlike
/// [`score_fusion`] the worst candidate a list reached counts 0, as one it
/// did not reach: how far the last places are from nothing is thrown away.
pub fn weighted_fusion<Id: Copy + Eq + Hash>(lists: &[Ranked<'_, Id>]) -> Vec<Fused<Id>> {
    let range = |list: &Ranked<'_, Id>| {
        list.items
            .iter()
            .map(|s| s.score)
            .filter(|r| r.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r), hi.max(r))
            })
    };
    let ranges: HashMap<Retriever, (f64, f64)> =
        lists.iter().map(|l| (l.retriever, range(l))).collect();
    combine(lists, |list, _, raw| {
        let Some(&(lo, hi)) = ranges.get(&list.retriever) else {
            return 0.0;
        };
        let share = if !raw.is_finite() {
            0.0
        } else if hi > lo {
            ((raw - lo) / (hi - lo)).clamp(0.0, 1.0)
        } else {
            1.0
        };
        list.weight * share
    })
}

/// Score fusion: each list's raw scores divided by the list's best (so its
/// first place is worth 1, and a candidate at half the best score ½),
/// times the list's weight, summed over the lists that hold a candidate.
/// Unlike RRF it keeps how far ahead of the rest a list's first places are
/// — a BM25 list led by one document that names the query's rare words,
/// or a vector list where everything scores alike — which RRF's ranks
/// throw away. Measured on all four labelled sets against RRF (BENCHMARKS.md,
/// "Fusion"): SciFact nDCG@10 0.7083 → 0.73, LoCoMo 0.8092 → 0.83, code-QA
/// chunk hit@5 0.767 → 0.85. Scores are
/// BM25's (higher better), cosines and PPR mass, all larger-is-better; a
/// score at or below 0 counts 0.
pub fn score_fusion<Id: Copy + Eq + Hash>(lists: &[Ranked<'_, Id>]) -> Vec<Fused<Id>> {
    let best = |list: &Ranked<'_, Id>| {
        list.items
            .iter()
            .map(|s| s.score)
            .filter(|r| r.is_finite())
            .fold(0.0f64, f64::max)
    };
    let bests: HashMap<Retriever, f64> = lists.iter().map(|l| (l.retriever, best(l))).collect();
    combine(lists, |list, _, raw| {
        let best = bests.get(&list.retriever).copied().unwrap_or(0.0);
        let share = if best > 0.0 && raw.is_finite() {
            (raw / best).clamp(0.0, 1.0)
        } else {
            0.0
        };
        list.weight * share
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(id, score)` pairs as a scored list.
    fn list(items: &[(i64, f64)]) -> Vec<Scored<i64>> {
        items.iter().map(|&(id, s)| Scored::new(id, s)).collect()
    }

    #[test]
    fn agreement_beats_a_single_first_place() {
        let bm25 = list(&[(1, 9.0), (2, 8.0), (3, 7.0)]);
        let vec = list(&[(4, 0.9), (2, 0.8), (3, 0.7)]);
        let fused = rrf(
            &[
                Ranked {
                    retriever: Retriever::Bm25,
                    items: &bm25,
                    weight: 1.0,
                },
                Ranked {
                    retriever: Retriever::Vector,
                    items: &vec,
                    weight: 1.0,
                },
            ],
            RRF_K,
        );
        let ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
        assert_eq!(ids, vec![2, 3, 1, 4]);
        assert!((fused[0].score - (1.0 / 62.0 + 1.0 / 62.0)).abs() < 1e-12);
        assert_eq!(fused[0].signals.len(), 2);
        assert_eq!(
            fused[2].signals,
            vec![Signal {
                retriever: Retriever::Bm25,
                rank: 1,
                raw: 9.0,
                contribution: 1.0 / 61.0
            }]
        );
    }

    #[test]
    fn score_fusion_keeps_how_far_ahead_a_first_place_is() {
        // BM25 is sure of 1 (far ahead); the vectors barely prefer 4 over 2.
        let bm25 = list(&[(1, 20.0), (2, 5.0), (3, 4.0)]);
        let vec = list(&[(4, 0.50), (2, 0.49), (3, 0.2), (5, -0.1)]);
        let lists = [
            Ranked {
                retriever: Retriever::Bm25,
                items: &bm25,
                weight: 1.0,
            },
            Ranked {
                retriever: Retriever::Vector,
                items: &vec,
                weight: 0.5,
            },
        ];
        let fused = fuse(&lists, FusionMethod::Score);
        let ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
        assert_eq!(ids, vec![1, 2, 4, 3, 5]);
        assert!((fused[0].score - 1.0).abs() < 1e-12);
        assert!((fused[1].score - (0.25 + 0.5 * 0.98)).abs() < 1e-12);
        assert_eq!(fused[4].score, 0.0, "a negative cosine counts 0");
        // RRF sees only ranks: 2 is second in both, so it wins.
        let by_rank: Vec<i64> = fuse(&lists, FusionMethod::Rrf)
            .iter()
            .map(|f| f.id)
            .collect();
        assert_eq!(by_rank[0], 2);
        assert!(fuse::<i64>(&[], FusionMethod::Score).is_empty());
    }

    #[test]
    fn weighted_fusion_normalises_each_list_by_its_range() {
        let bm25 = list(&[(1, 12.0), (2, 8.0), (3, 4.0)]);
        let vec = list(&[(2, 0.9), (3, 0.7), (4, 0.5)]);
        let lists = [
            Ranked {
                retriever: Retriever::Bm25,
                items: &bm25,
                weight: 0.4,
            },
            Ranked {
                retriever: Retriever::Vector,
                items: &vec,
                weight: 0.6,
            },
        ];
        let fused = fuse(&lists, FusionMethod::Weighted);
        let score = |id: i64| fused.iter().find(|f| f.id == id).unwrap().score;
        // 2: BM25 (8-4)/(12-4) = 0.5, vectors first = 1 → 0.2 + 0.6.
        assert!((score(2) - 0.8).abs() < 1e-12);
        assert!((score(1) - 0.4).abs() < 1e-12);
        // 3: last of BM25 (0), middle of the vectors (0.5).
        assert!((score(3) - 0.3).abs() < 1e-12);
        assert_eq!(score(4), 0.0, "a list's last place counts 0");
        assert_eq!(fused[0].id, 2);
        // One score, or all equal: each is the list's best.
        let one = list(&[(7, 3.0)]);
        let f = fuse(
            &[Ranked {
                retriever: Retriever::Bm25,
                items: &one,
                weight: 0.4,
            }],
            FusionMethod::Weighted,
        );
        assert!((f[0].score - 0.4).abs() < 1e-12);
    }

    proptest::proptest! {
        #[test]
        fn score_fusion_is_a_bounded_sorted_union(a in proptest::collection::vec((0i64..40, -5.0f64..50.0), 0..30), b in proptest::collection::vec((0i64..40, -1.0f64..1.0), 0..30)) {
            let (a, b) = (list(&a), list(&b));
            let fused = score_fusion(&[Ranked { retriever: Retriever::Bm25, items: &a, weight: 1.0 }, Ranked { retriever: Retriever::Vector, items: &b, weight: 0.5 }]);
            proptest::prop_assert!(fused.windows(2).all(|w| w[0].score >= w[1].score));
            for f in &fused {
                proptest::prop_assert!(f.score >= 0.0 && f.score <= 1.5 + 1e-12, "{}", f.score);
            }
            let mut ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
            ids.sort();
            let mut want: Vec<i64> = a.iter().chain(&b).map(|x| x.id).collect();
            want.sort();
            want.dedup();
            proptest::prop_assert_eq!(ids, want);
        }

        #[test]
        fn rrf_is_a_sorted_union(a in proptest::collection::vec(0i64..40, 0..30), b in proptest::collection::vec(0i64..40, 0..30)) {
            let la: Vec<Scored<i64>> = a.iter().map(|&x| Scored::new(x, 0.0)).collect();
            let lb: Vec<Scored<i64>> = b.iter().map(|&x| Scored::new(x, 0.0)).collect();
            let fused = rrf(&[Ranked { retriever: Retriever::Bm25, items: &la, weight: 1.0 }, Ranked { retriever: Retriever::Vector, items: &lb, weight: 1.0 }], RRF_K);
            let mut ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
            proptest::prop_assert!(fused.windows(2).all(|w| w[0].score >= w[1].score));
            for f in &fused {
                proptest::prop_assert!(f.score > 0.0 && f.score <= 2.0 / (RRF_K + 1.0) + 1e-12);
            }
            ids.sort();
            let mut want: Vec<i64> = a.iter().chain(&b).copied().collect();
            want.sort();
            want.dedup();
            proptest::prop_assert_eq!(ids, want);
        }
    }
}
