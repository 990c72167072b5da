//! Relevance floors: which hits of a ranking are too weak to show.
//!
//! ```text
//! keep(hit) = score(hit) ≥ min_score  and  score(hit) ≥ relative · score(best)
//! ```
//!
//! `score` is the hit's fused score (by default score fusion, see
//! [`crate::score_fusion`]: a list's first place is worth its weight, BM25
//! 1, vectors 0.8, graph 0.4 by default, so a hit every retriever ranks
//! first scores up to 2.2; with `fusion = "rrf"`, `Σ w / (60 + rank)`),
//! times its boosts; `best` the first hit of the same ranking. The relative
//! floor drops what is far below the best match of this query; the absolute
//! one (`minScore` in the ch4p design) drops everything when even the best
//! match is weak.

/// A floor setting is out of its range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FloorError {
    /// `min_score` is negative or not a number.
    #[error("min_score {0}: give a number ≥ 0 (0 turns the absolute floor off)")]
    MinScore(f64),
    /// `relative_floor` is outside 0..=1 or not a number.
    #[error(
        "relative_floor {0}: give a number from 0 to 1, a share of the best hit's score (0 turns it off)"
    )]
    Relative(f64),
}

/// The two floors of one search or recall (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Floor {
    /// Hits scoring below this are dropped (0: off).
    pub min_score: f64,
    /// Hits scoring below this share of the best hit's score are dropped
    /// (0: off; 1: only hits tied with the best).
    pub relative: f64,
}

impl Floor {
    /// A floor, checked: `min_score ≥ 0`, `relative` in `0..=1`.
    pub fn new(min_score: f64, relative: f64) -> Result<Floor, FloorError> {
        if !(min_score.is_finite() && min_score >= 0.0) {
            return Err(FloorError::MinScore(min_score));
        }
        if !(relative.is_finite() && (0.0..=1.0).contains(&relative)) {
            return Err(FloorError::Relative(relative));
        }
        Ok(Floor {
            min_score,
            relative,
        })
    }

    /// Whether a hit of `score` stays in a ranking whose best score is `best`.
    pub fn keeps(&self, score: f64, best: f64) -> bool {
        score >= self.min_score && score >= self.relative * best
    }

    /// `items` without those below the floor, their order kept; `score`
    /// reads an item's score. The best is the highest score (the first
    /// item's, unless a reranker reordered them).
    pub fn cut<T>(&self, items: Vec<T>, score: impl Fn(&T) -> f64) -> Vec<T> {
        let Some(best) = items.iter().map(&score).max_by(f64::total_cmp) else {
            return items;
        };
        items
            .into_iter()
            .filter(|i| self.keeps(score(i), best))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_floors_cut_and_zero_turns_them_off() {
        let scores = vec![0.040, 0.030, 0.019, 0.012, 0.004];
        let off = Floor::default();
        assert_eq!(off.cut(scores.clone(), |s| *s), scores);
        let relative = Floor::new(0.0, 0.5).unwrap();
        assert_eq!(relative.cut(scores.clone(), |s| *s), [0.040, 0.030]);
        let absolute = Floor::new(0.01, 0.0).unwrap();
        assert_eq!(
            absolute.cut(scores.clone(), |s| *s),
            [0.040, 0.030, 0.019, 0.012]
        );
        // A weak best match: the absolute floor leaves nothing.
        assert!(
            Floor::new(0.05, 0.0)
                .unwrap()
                .cut(scores, |s| *s)
                .is_empty()
        );
        assert!(off.cut(Vec::<f64>::new(), |s| *s).is_empty());
    }

    #[test]
    fn out_of_range_settings_are_refused() {
        assert_eq!(Floor::new(-0.1, 0.0), Err(FloorError::MinScore(-0.1)));
        assert!(Floor::new(f64::NAN, 0.0).is_err());
        assert_eq!(Floor::new(0.0, 1.5), Err(FloorError::Relative(1.5)));
        assert!(Floor::new(0.0, -0.2).is_err());
        assert!(Floor::new(0.0, 1.0).is_ok());
    }
}
