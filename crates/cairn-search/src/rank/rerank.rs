//! The last step before the cut: a cross-encoder reads the query with each
//! of the top `k` candidates and reorders them ([`RerankBlend`]), within a
//! latency budget. Candidates past `k`, and any the budget left unscored,
//! keep their fused order after the scored ones.

use std::time::{Duration, Instant};

use cairn_core::{RerankSignal, Reranker};
use serde::{Deserialize, Serialize};

use super::Candidate;

/// How the cross-encoder's order and the fused order become one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RerankBlend {
    /// The cross-encoder's order alone (ties: the fused order).
    Rerank,
    /// Reciprocal rank fusion of the two orders: `1/(k + fused rank) +
    /// 1/(k + reranker rank)`, k = [`RERANK_RRF_K`]; the fused order breaks ties.
    #[default]
    Rrf,
}

impl RerankBlend {
    /// The name settings and `--explain` use: `rerank`, `rrf`.
    pub fn name(self) -> &'static str {
        match self {
            RerankBlend::Rerank => "rerank",
            RerankBlend::Rrf => "rrf",
        }
    }
}

/// The RRF constant of [`RerankBlend::Rrf`]: with at most a few dozen
/// places to blend, 60 (the usual RRF k) makes both orders count about
/// equally at every place; a small k lets first places dominate.
pub const RERANK_RRF_K: f64 = 60.0;

/// Pairs scored per call to the model: between calls the budget is checked
/// against the time the calls so far took per pair.
pub const RERANK_STEP: usize = 5;

/// What to rerank with, and how far.
#[derive(Clone, Copy)]
pub struct RerankPlan<'a> {
    /// The cross-encoder.
    pub model: &'a dyn Reranker,
    /// The top candidates it reads.
    pub k: usize,
    /// The time it may take: scoring stops before a step that would run
    /// past it (the first step always runs), and the rest keep their fused
    /// order.
    pub budget: Duration,
    /// How its order meets the fused one.
    pub blend: RerankBlend,
}

impl std::fmt::Debug for RerankPlan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RerankPlan")
            .field("model", &self.model.model_id())
            .field("k", &self.k)
            .field("budget", &self.budget)
            .field("blend", &self.blend)
            .finish()
    }
}

/// What reranking did in one search (for `--explain` and logs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RerankReport {
    /// The cross-encoder's id.
    pub model: String,
    /// The blend used.
    pub blend: String,
    /// Candidates it was asked to read (`k`, or fewer when the ranking had fewer).
    pub asked: usize,
    /// Candidates it scored (fewer than `asked` when the budget ran out or
    /// the model failed).
    pub scored: usize,
    /// Time spent scoring, ms.
    pub ms: f64,
    /// The budget, ms.
    pub budget_ms: f64,
    /// Whether the budget stopped it before `asked`.
    pub over_budget: bool,
    /// The model's error, when it failed (the fused order is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The text a candidate is read as: its heading path (a code chunk's
/// `path > Type > fn(…)`), then its text.
fn passage(c: &Candidate) -> String {
    let crumb = c.row.chunk.breadcrumb();
    if crumb.is_empty() {
        c.row.chunk.text.clone()
    } else {
        format!("{crumb}\n{}", c.row.chunk.text)
    }
}

/// Reranks the first `plan.k` of `candidates` (best first) for `query`.
pub(crate) fn rerank(
    candidates: &mut [Candidate],
    query: &str,
    plan: &RerankPlan<'_>,
) -> RerankReport {
    let asked = plan.k.min(candidates.len());
    let mut report = RerankReport {
        model: plan.model.model_id().to_string(),
        blend: plan.blend.name().to_string(),
        asked,
        budget_ms: plan.budget.as_secs_f64() * 1e3,
        ..RerankReport::default()
    };
    let texts: Vec<String> = candidates[..asked].iter().map(passage).collect();
    let started = Instant::now();
    let mut scores: Vec<f32> = Vec::with_capacity(asked);
    while scores.len() < asked {
        let done = scores.len();
        let step = RERANK_STEP.min(asked - done);
        if done > 0 {
            let spent = started.elapsed();
            let per_pair = spent.as_secs_f64() / done as f64;
            if spent.as_secs_f64() + per_pair * step as f64 > plan.budget.as_secs_f64() {
                report.over_budget = true;
                break;
            }
        }
        let refs: Vec<&str> = texts[done..done + step]
            .iter()
            .map(String::as_str)
            .collect();
        match plan.model.score(query, &refs) {
            Ok(s) if s.len() == step => scores.extend(s),
            Ok(s) => {
                report.error = Some(format!(
                    "{} returned {} scores for {step} passages",
                    report.model,
                    s.len()
                ));
                break;
            }
            Err(e) => {
                report.error = Some(e.to_string());
                break;
            }
        }
    }
    report.ms = started.elapsed().as_secs_f64() * 1e3;
    report.scored = scores.len();
    order(&mut candidates[..scores.len()], &scores, plan.blend);
    report
}

/// Reorders `scored` (in fused order) by their `scores` as `blend` says,
/// noting each one's [`RerankSignal`].
fn order(scored: &mut [Candidate], scores: &[f32], blend: RerankBlend) {
    let n = scored.len();
    let mut by_score: Vec<usize> = (0..n).collect();
    by_score.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut rank = vec![0usize; n];
    for (r, &i) in by_score.iter().enumerate() {
        rank[i] = r + 1;
    }
    for (i, c) in scored.iter_mut().enumerate() {
        c.rerank = Some(RerankSignal {
            score: f64::from(scores[i]),
            rank: rank[i],
            fused_rank: i + 1,
        });
    }
    let key = |i: usize| -> f64 {
        match blend {
            RerankBlend::Rerank => -(rank[i] as f64),
            RerankBlend::Rrf => {
                1.0 / (RERANK_RRF_K + (i + 1) as f64) + 1.0 / (RERANK_RRF_K + rank[i] as f64)
            }
        }
    };
    let mut new: Vec<usize> = (0..n).collect();
    new.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    let old: Vec<Candidate> = scored.to_vec();
    for (slot, i) in scored.iter_mut().zip(new) {
        *slot = old[i].clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::{ChunkRow, EmbedError};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn candidate(text: &str, line: u32) -> Candidate {
        Candidate {
            row: ChunkRow {
                rowid: i64::from(line),
                chunk: cairn_core::Chunk::new("a.md", vec![], 0, line, line, text.into()),
                domain: String::new(),
            },
            score: 1.0 / f64::from(line),
            signals: Vec::new(),
            chunk_signals: Vec::new(),
            boosts: Vec::new(),
            via: Vec::new(),
            rerank: None,
        }
    }

    /// Scores a passage by the number in its text; sleeps `pause` per call.
    struct ByNumber {
        pause: Duration,
        calls: AtomicUsize,
        fail: bool,
    }

    impl Reranker for ByNumber {
        fn model_id(&self) -> &str {
            "by-number"
        }
        fn score(&self, _: &str, passages: &[&str]) -> Result<Vec<f32>, EmbedError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(self.pause);
            if self.fail {
                return Err(EmbedError::new("no model"));
            }
            Ok(passages.iter().map(|p| p.parse().unwrap_or(0.0)).collect())
        }
    }

    fn model(pause_ms: u64) -> ByNumber {
        ByNumber {
            pause: Duration::from_millis(pause_ms),
            calls: AtomicUsize::new(0),
            fail: false,
        }
    }

    fn lines(c: &[Candidate]) -> Vec<u32> {
        c.iter().map(|c| c.row.chunk.start_line).collect()
    }

    fn plan(m: &ByNumber, k: usize, budget_ms: u64, blend: RerankBlend) -> RerankPlan<'_> {
        RerankPlan {
            model: m,
            k,
            budget: Duration::from_millis(budget_ms),
            blend,
        }
    }

    #[test]
    fn the_top_k_follow_the_model_and_the_rest_keep_their_place() {
        // Fused order 1..=8; the model prefers the later ones of the top 6.
        let texts = ["1", "2", "3", "4", "5", "6", "9", "9"];
        let mut c: Vec<Candidate> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| candidate(t, i as u32 + 1))
            .collect();
        let m = model(0);
        let r = rerank(&mut c, "q", &plan(&m, 6, 10_000, RerankBlend::Rerank));
        assert_eq!(lines(&c), [6, 5, 4, 3, 2, 1, 7, 8]);
        assert_eq!((r.asked, r.scored, r.over_budget), (6, 6, false));
        let first = c[0].rerank.unwrap();
        assert_eq!((first.rank, first.fused_rank, first.score), (1, 6, 6.0));
        assert!(c[6].rerank.is_none(), "past k: not scored");
        // Two calls of at most RERANK_STEP pairs.
        assert_eq!(m.calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn rrf_blends_both_orders_and_the_fused_order_breaks_ties() {
        // The model reverses three: the two ends tie (1/61 + 1/63 each)
        // and the fused order decides; both score above the middle
        // (2/62), as 1/x is convex.
        let mut c: Vec<Candidate> = ["1", "2", "3"]
            .iter()
            .enumerate()
            .map(|(i, t)| candidate(t, i as u32 + 1))
            .collect();
        let m = model(0);
        rerank(&mut c, "q", &plan(&m, 3, 10_000, RerankBlend::Rrf));
        assert_eq!(lines(&c), [1, 3, 2]);
        // A strong reranker first place lifts a fused third over the fused
        // second the model puts last.
        let mut c: Vec<Candidate> = ["2", "0", "9"]
            .iter()
            .enumerate()
            .map(|(i, t)| candidate(t, i as u32 + 1))
            .collect();
        rerank(&mut c, "q", &plan(&m, 3, 10_000, RerankBlend::Rrf));
        assert_eq!(lines(&c), [1, 3, 2]);
    }

    #[test]
    fn a_spent_budget_keeps_the_fused_order_for_the_rest_and_says_so() {
        let texts = [
            "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12",
        ];
        let mut c: Vec<Candidate> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| candidate(t, i as u32 + 1))
            .collect();
        // 40 ms a call of five, a budget of 60 ms: the second call would
        // end past it, so only the first five are scored.
        let m = model(40);
        let r = rerank(&mut c, "q", &plan(&m, 12, 60, RerankBlend::Rerank));
        assert!(r.over_budget, "{r:?}");
        assert_eq!((r.asked, r.scored), (12, 5));
        assert_eq!(lines(&c), [5, 4, 3, 2, 1, 6, 7, 8, 9, 10, 11, 12]);
    }

    #[test]
    fn a_failing_model_leaves_the_fused_order_and_reports_why() {
        let mut c: Vec<Candidate> = ["3", "2", "1"]
            .iter()
            .enumerate()
            .map(|(i, t)| candidate(t, i as u32 + 1))
            .collect();
        let m = ByNumber {
            fail: true,
            ..model(0)
        };
        let r = rerank(&mut c, "q", &plan(&m, 3, 10_000, RerankBlend::Rerank));
        assert_eq!(lines(&c), [1, 2, 3]);
        assert_eq!(r.scored, 0);
        assert!(r.error.unwrap().contains("no model"));
    }
}
