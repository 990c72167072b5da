//! Search: what a search is asked ([`Mode`], [`SearchOptions`]), what it
//! answers ([`Hit`]s), and [`Engine::rank`], the driver that runs its steps
//! in this order:
//!
//! ```text
//! retrieve.rs  bm25 | vector | graph (seeded by the query's entities and
//!              the other two lists' top chunks)
//! fuse.rs      fetch each candidate once; collapse each list to documents;
//!              score fusion (or RRF) over the three lists
//! boost.rs     domain, path and kind factors; the graph path behind a hit
//!              (explain.rs); then the cut: best first, `limit` kept
//! ```
//!
//! [`Engine::search`] then drops the hits below the relevance floors
//! ([`cairn_search::Floor`]); the rankings for evaluations
//! ([`Engine::ranked_paths`], [`Engine::ranked_chunks`]) keep every candidate.

mod boost;
mod explain;
mod fuse;
mod retrieve;

use cairn_core::{Boost, ChunkRow, Hit, Kind, Signal};
use cairn_search::{Floor, query_terms, snippet};
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::limits;

/// One chunk of a ranking, as [`Engine::ranked_chunks`] returns it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankedChunk {
    /// Source path, relative to the project root, `/`-separated.
    pub path: String,
    /// First line, 1-based, inclusive.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
}

/// A search's hits and the retrievers whose lists were fused into them.
#[derive(Clone, Debug)]
pub struct Searched {
    /// Hits, best first.
    pub hits: Vec<Hit>,
    /// The retrievers that ran, in fusion order: `bm25`, `vector`, `graph`.
    pub retrievers: Vec<&'static str>,
}

/// Which retrievers a search uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25, vectors and the graph, fused.
    #[default]
    Hybrid,
    /// BM25 only.
    Bm25,
    /// Vectors only.
    Vector,
}

/// How to search.
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// Hits to return (0 = the configured default).
    pub limit: usize,
    /// The file being edited, relative to the project root: drives the domain boost.
    pub current_file: Option<String>,
    /// Only documents whose path starts with this.
    pub path_prefix: Option<String>,
    /// Pass the query to FTS5 as is (phrases, OR, NOT, prefix*); BM25 only.
    pub raw_fts: bool,
    /// Retrievers to use.
    pub mode: Mode,
    /// Only these kinds of source (empty: all).
    pub kinds: Vec<Kind>,
    /// Leave the graph retriever out of a hybrid search.
    pub no_graph: bool,
    /// Work out the path that brought each graph hit in ([`Hit::via`]): a
    /// breadth-first search per such hit, so only when asked.
    pub explain: bool,
    /// Leave out hits scoring below this (fused-score units, see
    /// [`cairn_search::Floor`]); `None`: `[search] min_score`.
    pub min_score: Option<f64>,
    /// Leave out hits scoring below this share of the best hit's score;
    /// `None`: `[search] relative_floor`.
    pub relative_floor: Option<f64>,
}

/// A ranked candidate before it becomes a [`Hit`].
pub(crate) struct Candidate {
    pub row: ChunkRow,
    pub score: f64,
    pub signals: Vec<Signal>,
    pub boosts: Vec<Boost>,
    pub via: Vec<String>,
}

impl Engine {
    /// Searches the index; hits best first, those below the relevance
    /// floors ([`SearchOptions::min_score`], [`SearchOptions::relative_floor`])
    /// left out.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        Ok(self.search_with_retrievers(query, opts)?.hits)
    }

    /// [`Engine::search`], also naming the retrievers that ran (the graph
    /// runs in hybrid mode only, and only on a non-empty graph; vectors need
    /// a model).
    pub fn search_with_retrievers(&self, query: &str, opts: &SearchOptions) -> Result<Searched> {
        let limit = limits::count(opts.limit, self.config.search.limit, limits::MAX_HITS);
        let floor = Floor::new(
            opts.min_score.unwrap_or(self.config.search.min_score),
            opts.relative_floor
                .unwrap_or(self.config.search.relative_floor),
        )
        .map_err(|e| Error::Query(e.to_string()))?;
        let terms = query_terms(query);
        let (ranked, retrievers) = self.rank_with(
            query,
            opts,
            limit,
            limit * self.config.search.candidates.max(1),
        )?;
        let hits = floor
            .cut(ranked, |c| c.score)
            .into_iter()
            .map(|c| Hit {
                chunk_id: c.row.chunk.id.clone(),
                path: c.row.chunk.path.clone(),
                start_line: c.row.chunk.start_line,
                end_line: c.row.chunk.end_line,
                breadcrumb: c.row.chunk.breadcrumb(),
                snippet: snippet(&c.row.chunk.text, &terms, 3),
                score: c.score,
                signals: c.signals,
                boosts: c.boosts,
                via: c.via,
            })
            .collect();
        Ok(Searched { hits, retrievers })
    }

    /// The chunk paths of the fused, boosted ranking, best first: the top
    /// `limit` of retriever lists `depth` long, past `search`'s caps (for
    /// evaluations, which score deep rankings).
    pub fn ranked_paths(
        &self,
        query: &str,
        opts: &SearchOptions,
        limit: usize,
        depth: usize,
    ) -> Result<Vec<String>> {
        Ok(self
            .rank(query, opts, limit, depth)?
            .into_iter()
            .map(|c| c.row.chunk.path)
            .collect())
    }

    /// The chunks of the fused, boosted ranking (file and line range), best
    /// first: [`Engine::ranked_paths`] with the lines, for evaluations that
    /// score whether a hit covers a labelled part of a file.
    pub fn ranked_chunks(
        &self,
        query: &str,
        opts: &SearchOptions,
        limit: usize,
        depth: usize,
    ) -> Result<Vec<RankedChunk>> {
        Ok(self
            .rank(query, opts, limit, depth)?
            .into_iter()
            .map(|c| RankedChunk {
                path: c.row.chunk.path,
                start_line: c.row.chunk.start_line,
                end_line: c.row.chunk.end_line,
            })
            .collect())
    }

    /// Fused, boosted candidates: the top `limit` of retriever lists `depth` long.
    pub(crate) fn rank(
        &self,
        query: &str,
        opts: &SearchOptions,
        limit: usize,
        depth: usize,
    ) -> Result<Vec<Candidate>> {
        Ok(self.rank_with(query, opts, limit, depth)?.0)
    }

    /// [`Engine::rank`], with the retrievers that ran.
    fn rank_with(
        &self,
        query: &str,
        opts: &SearchOptions,
        limit: usize,
        depth: usize,
    ) -> Result<(Vec<Candidate>, Vec<&'static str>)> {
        if query.trim().is_empty() {
            return Err(Error::Query("empty query".into()));
        }
        let (limit, depth) = (limit.min(limits::MAX_DEPTH), depth.min(limits::MAX_DEPTH));
        let prefix = opts.path_prefix.as_deref();
        let mut reader = self.reader()?;
        let snap = reader.snapshot()?;
        let deadline = std::time::Instant::now() + limits::SEARCH_BUDGET;
        snap.set_deadline(deadline);
        let over_budget = |e: Error| {
            if std::time::Instant::now() >= deadline {
                Error::Query(format!(
                    "the search ran past its time budget of {} s; ask with fewer or more specific terms",
                    limits::SEARCH_BUDGET.as_secs()
                ))
            } else {
                e
            }
        };

        let mut ran = Vec::new();
        let mut steps = || -> Result<Vec<Candidate>> {
            let bm25 = self.retrieve_bm25(&*snap, query, opts, depth, prefix)?;
            let vector = self.retrieve_vector(&*snap, query, opts, depth, prefix)?;
            let graph = self.retrieve_graph(&*snap, query, opts, depth, &bm25, &vector)?;
            for (name, runs) in [
                ("bm25", self.bm25_runs(opts)),
                ("vector", self.vector_runs(opts)),
                ("graph", graph.kg.is_some()),
            ] {
                if runs {
                    ran.push(name);
                }
            }
            let rows = fuse::fetch_rows(&*snap, &bm25, &vector, &graph.ranked)?;
            let fusion = self.fuse(&rows, opts, &bm25, &vector, &graph.ranked, graph.weight);
            self.boost(&*snap, query, opts, fusion, &rows, &graph)
        };
        let mut out = steps().map_err(over_budget)?;
        // The cut.
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
        out.truncate(limit);
        Ok((out, ran))
    }

    /// Forgets cached query vectors (so timings include embedding the query).
    pub fn clear_query_cache(&self) {
        let mut cache = self.query_cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.0.clear();
        cache.1.clear();
    }
}
