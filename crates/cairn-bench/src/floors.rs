//! `cairn eval --floors`: what the relevance floors of `search` would take
//! out of its first 10 hits. Each query is searched once as a user's
//! `search --limit 10` runs it (hybrid with the graph when a model is
//! loaded; retriever lists 40 deep) with the floors off; each floor setting
//! of a grid is then applied to those 10 scored hits, and the hits it drops
//! are counted: relevant ones (what the floor costs) and the others (what it
//! is for).

use std::collections::HashSet;

use cairn_search::Floor;
use serde::Serialize;

/// Relative floors tried (with no absolute floor).
pub(crate) const RELATIVE_GRID: [f64; 10] = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
/// Absolute floors tried (with no relative floor), in the units of score
/// fusion (a list's first place is worth its weight: 1 for BM25).
pub(crate) const ABSOLUTE_GRID: [f64; 8] = [0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5];

/// Hits the search returns, and so the depth the floors are measured at.
pub(crate) const FLOOR_DEPTH: usize = 10;

/// What one floor setting drops from the first 10 hits of every query.
#[derive(Clone, Debug, Serialize)]
pub struct FloorScores {
    /// The absolute floor (RRF units; 0 = off).
    pub min_score: f64,
    /// The relative floor (share of the best hit's score; 0 = off).
    pub relative_floor: f64,
    /// Whether this is the configured `[search]` setting.
    pub configured: bool,
    /// Relevant documents among the first 10 hits, over all queries.
    pub relevant_in_top: usize,
    /// Share of those the floor drops.
    pub relevant_dropped: f64,
    /// Share of the other (unlabelled) hits among the first 10 it drops.
    pub other_dropped: f64,
    /// Share of queries that lose at least one relevant document.
    pub queries_losing_relevant: f64,
    /// Share of queries left with no hit at all.
    pub queries_emptied: f64,
    /// Mean hits left per query (of 10).
    pub mean_hits: f64,
}

/// Running counts for one floor setting.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tally {
    floor: Floor,
    configured: bool,
    queries: usize,
    relevant: usize,
    relevant_dropped: usize,
    other: usize,
    other_dropped: usize,
    losing: usize,
    emptied: usize,
    kept: usize,
}

impl Tally {
    pub(crate) fn new(floor: Floor, configured: bool) -> Tally {
        Tally {
            floor,
            configured,
            queries: 0,
            relevant: 0,
            relevant_dropped: 0,
            other: 0,
            other_dropped: 0,
            losing: 0,
            emptied: 0,
            kept: 0,
        }
    }

    /// Counts one query's hits (`(doc id, score)`, best first, floors off).
    pub(crate) fn add(&mut self, hits: &[(String, f64)], relevant: &HashSet<String>) {
        let hits = &hits[..hits.len().min(FLOOR_DEPTH)];
        let best = hits.first().map_or(0.0, |h| h.1);
        self.queries += 1;
        let mut lost = false;
        let mut kept = 0;
        for (doc, score) in hits {
            let keep = self.floor.keeps(*score, best);
            kept += usize::from(keep);
            if relevant.contains(doc) {
                self.relevant += 1;
                if !keep {
                    self.relevant_dropped += 1;
                    lost = true;
                }
            } else {
                self.other += 1;
                self.other_dropped += usize::from(!keep);
            }
        }
        self.kept += kept;
        self.losing += usize::from(lost);
        self.emptied += usize::from(kept == 0);
    }

    pub(crate) fn scores(&self) -> FloorScores {
        let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        FloorScores {
            min_score: self.floor.min_score,
            relative_floor: self.floor.relative,
            configured: self.configured,
            relevant_in_top: self.relevant,
            relevant_dropped: share(self.relevant_dropped, self.relevant),
            other_dropped: share(self.other_dropped, self.other),
            queries_losing_relevant: share(self.losing, self.queries),
            queries_emptied: share(self.emptied, self.queries),
            mean_hits: share(self.kept, self.queries),
        }
    }
}

/// The grid's settings (relative floors, then absolute ones) and the
/// configured one, first, when it is not in the grid.
pub(crate) fn grid(configured: Floor) -> Vec<Tally> {
    let mut out = vec![Tally::new(Floor::default(), configured == Floor::default())];
    if configured != Floor::default() {
        out.push(Tally::new(configured, true));
    }
    for r in RELATIVE_GRID {
        let f = Floor {
            min_score: 0.0,
            relative: r,
        };
        if f != configured {
            out.push(Tally::new(f, false));
        }
    }
    for m in ABSOLUTE_GRID {
        let f = Floor {
            min_score: m,
            relative: 0.0,
        };
        if f != configured {
            out.push(Tally::new(f, false));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_counts_what_it_drops() {
        let hits: Vec<(String, f64)> = [("a", 0.04), ("b", 0.03), ("c", 0.015), ("d", 0.01)]
            .iter()
            .map(|(d, s)| (d.to_string(), *s))
            .collect();
        let relevant: HashSet<String> = ["a", "c"].iter().map(|s| s.to_string()).collect();
        let mut t = Tally::new(
            Floor {
                min_score: 0.0,
                relative: 0.5,
            },
            false,
        );
        t.add(&hits, &relevant);
        t.add(&[], &relevant);
        let s = t.scores();
        assert_eq!(s.relevant_in_top, 2);
        assert_eq!(s.relevant_dropped, 0.5); // c
        assert_eq!(s.other_dropped, 0.5); // d
        assert_eq!(s.queries_losing_relevant, 0.5);
        assert_eq!(s.queries_emptied, 0.5); // the query with no hits
        assert_eq!(s.mean_hits, 1.0);
        let g = grid(Floor::default());
        assert_eq!(g.len(), 1 + RELATIVE_GRID.len() + ABSOLUTE_GRID.len());
        assert!(g[0].configured);
    }
}
