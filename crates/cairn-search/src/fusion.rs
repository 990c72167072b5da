//! Reciprocal Rank Fusion.
//!
//! `score(d) = Σ_r w_r / (k + rank_r(d))` over the retrievers `r` whose list
//! holds `d`, with `rank` 1-based and `w_r` the retriever's weight (the engine
//! uses 1.0 for BM25 and 0.5 for vectors; see `SearchConfig::vector_weight`).
//! RRF uses ranks, not raw scores, so BM25's unbounded scores and cosine similarities need no calibration against each
//! other. We take k = 60, the value of Cormack, Clarke & Büttcher (SIGIR 2009)
//! that most hybrid systems use: a large k flattens the curve, so a chunk that
//! both retrievers place fairly high beats one that only one retriever places
//! first — what we want when BM25 and a small embedding model each miss
//! different things.

/// The constant `k` of RRF.
pub const RRF_K: f64 = 60.0;

/// One retriever's ranked list: `(id, raw score)`, best first.
#[derive(Clone, Debug)]
pub struct Ranked<'a> {
    /// Retriever name, reported by `explain`.
    pub name: &'a str,
    /// Candidates, best first.
    pub items: &'a [(i64, f64)],
    /// Weight of this list's votes.
    pub weight: f64,
}

/// A fused candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Fused {
    /// Candidate id (chunk row id).
    pub id: i64,
    /// The RRF score.
    pub score: f64,
    /// Per retriever: `(name, 1-based rank, raw score, contribution)`.
    pub signals: Vec<(String, usize, f64, f64)>,
}

/// Fuses ranked lists with RRF (constant `k`), best first; ties keep the
/// order of first appearance, so results are deterministic.
pub fn rrf(lists: &[Ranked<'_>], k: f64) -> Vec<Fused> {
    let mut out: Vec<Fused> = Vec::new();
    let mut index: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    for list in lists {
        for (i, &(id, raw)) in list.items.iter().enumerate() {
            let rank = i + 1;
            let contribution = list.weight / (k + rank as f64);
            let slot = *index.entry(id).or_insert_with(|| {
                out.push(Fused {
                    id,
                    score: 0.0,
                    signals: Vec::new(),
                });
                out.len() - 1
            });
            let f = &mut out[slot];
            if f.signals.iter().any(|s| s.0 == list.name) {
                continue; // a retriever listing an id twice counts once
            }
            f.score += contribution;
            f.signals
                .push((list.name.to_string(), rank, raw, contribution));
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_beats_a_single_first_place() {
        let bm25 = [(1, 9.0), (2, 8.0), (3, 7.0)];
        let vec = [(4, 0.9), (2, 0.8), (3, 0.7)];
        let fused = rrf(
            &[
                Ranked {
                    name: "bm25",
                    items: &bm25,
                    weight: 1.0,
                },
                Ranked {
                    name: "vector",
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
            vec![("bm25".to_string(), 1, 9.0, 1.0 / 61.0)]
        );
    }

    proptest::proptest! {
        #[test]
        fn rrf_is_a_sorted_union(a in proptest::collection::vec(0i64..40, 0..30), b in proptest::collection::vec(0i64..40, 0..30)) {
            let la: Vec<(i64, f64)> = a.iter().map(|&x| (x, 0.0)).collect();
            let lb: Vec<(i64, f64)> = b.iter().map(|&x| (x, 0.0)).collect();
            let fused = rrf(&[Ranked { name: "a", items: &la, weight: 1.0 }, Ranked { name: "b", items: &lb, weight: 1.0 }], RRF_K);
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
