//! Whether an answer holds anything close in meaning to the query: the one
//! absolute signal of search, recall and the prompt hook.
//!
//! A hit's score is a share of the best hit of the same query, so the best
//! of unrelated hits scores as high as the best of related ones: `recall
//! "something about databases"` on a project with no such memory crowned an
//! unrelated one at 0.855. The embedding model's cosine similarity between
//! the query and a hit's best chunk compares across queries; an answer whose
//! best hit is under [`CONFIDENT_SIMILARITY`] (`[search]
//! confident_similarity`) says that nothing is close. Without a model there
//! is no such signal and nothing is claimed.

use serde::Serialize;

/// The floor: 0.4, the prompt hook's (on LoCoMo stored as memories, none of
/// 200 off-topic prompts cleared it; BENCHMARKS.md).
pub const CONFIDENT_SIMILARITY: f64 = 0.4;

/// What an answer can say of its own relevance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Confidence {
    /// A hit at least `floor` close to the query.
    pub confident: bool,
    /// The closest hit's similarity (none: no hit was ranked by vectors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_similarity: Option<f64>,
    /// The floor it was judged by.
    pub floor: f64,
}

impl Confidence {
    /// Judges hits by their similarities (`None`: the vectors did not rank
    /// that hit, so it is further than every one they did); `None` when no
    /// vector signal exists at all (no model, or vectors did not run).
    pub fn of(
        similarities: impl IntoIterator<Item = Option<f64>>,
        vectors_ran: bool,
        floor: f64,
    ) -> Option<Confidence> {
        if !vectors_ran {
            return None;
        }
        let best = similarities
            .into_iter()
            .flatten()
            .max_by(|a, b| a.total_cmp(b));
        Some(Confidence {
            confident: best.is_some_and(|b| b >= floor),
            best_similarity: best,
            floor,
        })
    }

    /// What to tell the reader when nothing is close (`what`: "hit",
    /// "memory"); `None` when the answer is confident.
    pub fn note(&self, what: &str) -> Option<String> {
        if self.confident {
            return None;
        }
        let best = self
            .best_similarity
            .map_or("none ranked by meaning".to_string(), |b| {
                format!("best similarity {b:.3}")
            });
        Some(format!(
            "no {what} matches well: nothing is close in meaning to the query ({best}, under {:.2})",
            self.floor
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_similarity_decides_and_no_vectors_claim_nothing() {
        let c = Confidence::of([Some(0.31), None, Some(0.52)], true, 0.4).unwrap();
        assert!(c.confident && c.best_similarity == Some(0.52) && c.note("hit").is_none());
        let c = Confidence::of([Some(0.31), None], true, 0.4).unwrap();
        assert!(!c.confident);
        assert!(
            c.note("memory")
                .unwrap()
                .starts_with("no memory matches well")
        );
        let none = Confidence::of([None, None], true, 0.4).unwrap();
        assert!(!none.confident && none.best_similarity.is_none());
        assert_eq!(Confidence::of([Some(0.9)], false, 0.4), None);
    }
}
