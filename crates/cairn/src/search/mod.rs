//! Search: what a search is asked ([`Mode`], [`SearchOptions`]) and what it
//! answers ([`Hit`]s). The ranking itself is [`cairn_search::rank`], over one
//! snapshot of the index; this module translates the options, supplies what
//! the engine caches beside the snapshot (`retrieve.rs`: query vectors and
//! the vector matrix; the knowledge graph; the domains), enforces the
//! search's time budget, and turns candidates into hits: relevance floors
//! ([`cairn_search::Floor`]), snippets, the chunk's text and whether its file
//! still holds it, read from the same snapshot. The rankings for evaluations
//! ([`Engine::ranked_paths`], [`Engine::ranked_chunks`]) keep every candidate.

mod rerank;
mod retrieve;

use std::collections::HashMap;

use cairn_core::{Freshness, Hit, IndexSnapshot, Kind, Retriever, sync};
use cairn_search::{
    Candidate, Floor, RankRequest, RankSettings, Ranking, RerankBlend, RerankPlan, RerankReport,
    Retrievers, query_terms, rank, snippet,
};
use serde::{Deserialize, Serialize};

use crate::access::check;
use crate::confidence::Confidence;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::limits;
use retrieve::Source;

/// The words of each text that BM25 matched for `query` (its terms as the
/// lexical retriever reads them, stemmed as the index stems): what a page
/// marks in a hit. A stopword the query's BM25 left out, or a term inside
/// a longer word (`log` in `structlog`), is not marked.
pub fn matched_words(query: &str, texts: &[&str]) -> Result<Vec<Vec<String>>> {
    Ok(cairn_store::matched_words(&query_terms(query), texts)?)
}

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
    /// How many results the search found above its floors, `hits` and
    /// those past the limit (counted within the retrievers' depth).
    pub total: usize,
    /// Whether a hit is close in meaning to the query (none: no vectors ran).
    pub confidence: Option<Confidence>,
    /// What the reranker did, when the search asked for one.
    pub rerank: Option<RerankReport>,
}

/// Which retrievers a search uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// How to search (serialisable: the CLI hands a search to the project's
/// daemon).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
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
    /// Leave the names retriever out of a hybrid search.
    pub no_names: bool,
    /// Work out the path that brought each graph hit in ([`Hit::via`]): a
    /// breadth-first search per such hit, so only when asked.
    pub explain: bool,
    /// Leave out hits scoring below this (fused-score units, see
    /// [`cairn_search::Floor`]); `None`: `[search] min_score`.
    pub min_score: Option<f64>,
    /// Leave out hits scoring below this share of the best hit's score;
    /// `None`: `[search] relative_floor`.
    pub relative_floor: Option<f64>,
    /// Rerank the top of the ranking with the cross-encoder; `None`:
    /// `[search] rerank`.
    pub rerank: Option<bool>,
    /// How many of the top it reads; `None`: `[search] rerank_k`.
    pub rerank_k: Option<usize>,
    /// How its order meets the fused one; `None`: `[search] rerank_blend`.
    pub rerank_blend: Option<RerankBlend>,
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
    /// a model). Each hit carries its chunk's text and its file's freshness,
    /// read from the snapshot the ranking read.
    pub fn search_with_retrievers(&self, query: &str, opts: &SearchOptions) -> Result<Searched> {
        let limit = limits::count(opts.limit, self.config.search.limit, limits::MAX_HITS);
        let floor = Floor::new(
            opts.min_score.unwrap_or(self.config.search.min_score),
            opts.relative_floor
                .unwrap_or(self.config.search.relative_floor),
        )
        .map_err(|e| Error::Query(e.to_string()))?;
        let terms = query_terms(query);
        let depth = self.search_depth(limit);
        let started = std::time::Instant::now();
        let (ranking, records, total) =
            self.rank_in_snapshot(query, opts, limit, depth, |snap, r| {
                let total = match r.scores.first() {
                    Some(&best) => r.scores.iter().filter(|&&s| floor.keeps(s, best)).count(),
                    None => 0,
                };
                let kept = floor.cut(r.candidates, |c| c.score);
                let mut records = HashMap::new();
                for c in &kept {
                    let path = &c.row.chunk.path;
                    if !records.contains_key(path) {
                        records.insert(path.clone(), snap.document(path)?);
                    }
                }
                Ok((
                    Ranking {
                        candidates: kept,
                        retrievers: r.retrievers,
                        scores: Vec::new(),
                        rerank: r.rerank,
                        names: r.names,
                    },
                    records,
                    total,
                ))
            })?;
        // Freshness: the records are the snapshot's; the files are read now.
        let roots = self.real_roots();
        let fresh: HashMap<&str, Freshness> = records
            .iter()
            .map(|(path, rec)| {
                // A commit record has no file: it never goes stale.
                let f = if self.kind_of(path) == Kind::History {
                    Freshness::Fresh
                } else {
                    rec.as_ref()
                        .map_or(Freshness::Changed, |r| check(&self.root, &roots, r))
                };
                (path.as_str(), f)
            })
            .collect();
        let hits = ranking
            .candidates
            .into_iter()
            .map(|c| {
                let source = fresh
                    .get(c.row.chunk.path.as_str())
                    .copied()
                    .unwrap_or(Freshness::Changed);
                Hit {
                    snippet: snippet(&c.row.chunk.text, &terms, 3),
                    breadcrumb: c.row.chunk.breadcrumb(),
                    chunk_id: c.row.chunk.id,
                    path: c.row.chunk.path,
                    start_line: c.row.chunk.start_line,
                    end_line: c.row.chunk.end_line,
                    text: c.row.chunk.text,
                    source,
                    score: c.score,
                    similarity: c
                        .signals
                        .iter()
                        .find(|s| s.retriever == Retriever::Vector)
                        .map(|s| s.raw),
                    signals: c.signals,
                    chunk_signals: c.chunk_signals,
                    boosts: c.boosts,
                    via: c.via,
                    rerank: c.rerank,
                }
            })
            .collect::<Vec<Hit>>();
        let names: Vec<&'static str> = ranking.retrievers.iter().map(|r| r.name()).collect();
        // What `-vv` / CAIRN_LOG=debug shows of a search: enough to see why
        // it answered as it did without `--explain`.
        tracing::debug!(
            terms = ?terms,
            mode = ?opts.mode,
            retrievers = %names.join("+"),
            depth,
            hits = hits.len(),
            top = ?hits.iter().take(3).map(|h| format!("{}:{} {:.3}", h.path, h.start_line, h.score)).collect::<Vec<_>>(),
            rerank = ?ranking.rerank.as_ref().map(|r| format!("{}/{} in {:.0} ms", r.scored, r.asked, r.ms)),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "search"
        );
        let confidence = Confidence::of(
            hits.iter().map(|h| h.similarity),
            ranking.retrievers.contains(&Retriever::Vector),
            self.config.search.confident_similarity,
        );
        Ok(Searched {
            total: total.max(hits.len()),
            hits,
            retrievers: names,
            confidence,
            rerank: ranking.rerank,
        })
    }

    /// How long each retriever's list is in a search for `limit` hits:
    /// `limit × [search] candidates`, at least `[search] min_candidates`.
    /// Evaluations rank at this depth to score what a search returns.
    pub fn search_depth(&self, limit: usize) -> usize {
        let s = &self.config.search;
        (limit.saturating_mul(s.candidates.max(1)))
            .max(s.min_candidates)
            .min(limits::MAX_DEPTH)
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
        self.rank_in_snapshot(query, opts, limit, depth, |_, r| Ok(r.candidates))
    }

    /// Ranks in one snapshot of the index, within the search's time budget,
    /// then hands the ranking to `then` with that same snapshot.
    fn rank_in_snapshot<T>(
        &self,
        query: &str,
        opts: &SearchOptions,
        limit: usize,
        depth: usize,
        then: impl FnOnce(&dyn IndexSnapshot, Ranking) -> Result<T>,
    ) -> Result<T> {
        if query.trim().is_empty() {
            return Err(Error::Query("empty query".into()));
        }
        // A model read on first use loads on another thread meanwhile
        // (the snapshot, BM25, the names and the graph file come first):
        // a one-shot CLI search overlaps the two (issue 65).
        let vectors = opts.mode != Mode::Bm25 && !opts.raw_fts;
        if vectors && let Some(e) = self.embedder.as_ref().filter(|e| e.is_cold()) {
            let e = e.clone();
            let _ = std::thread::Builder::new()
                .name("cairn-model-load".into())
                .spawn(move || e.warm_up());
        }
        // The reranker, loaded (or fetched) before the search's clock starts.
        let reranker = self.rerank_model(opts);
        let mut reader = self.reader()?;
        let snap = reader.snapshot()?;
        let deadline = std::cell::Cell::new(std::time::Instant::now() + limits::SEARCH_BUDGET);
        snap.set_deadline(deadline.get());
        // The store's own deadline error (PostgreSQL's cancelled
        // statement), or any error once the budget is spent (SQLite's
        // interrupted statement): the budget message either way.
        let over_budget = |e: Error| {
            let stopped = matches!(e, Error::Store(cairn_core::StoreError::Deadline { .. }));
            if stopped || std::time::Instant::now() >= deadline.get() {
                Error::Query(format!(
                    "the search ran past its time budget of {} s; ask with fewer or more specific terms",
                    limits::SEARCH_BUDGET.as_secs()
                ))
            } else {
                e
            }
        };
        let req = RankRequest {
            query,
            raw_fts: opts.raw_fts,
            retrievers: Retrievers {
                bm25: opts.mode != Mode::Vector,
                // Raw FTS5 syntax (phrases, NOT) means exact lexical
                // semantics, which vectors cannot honour.
                vector: vectors && self.embedder.is_some(),
                graph: opts.mode == Mode::Hybrid && !opts.no_graph,
                names: opts.mode == Mode::Hybrid && !opts.no_names,
            },
            path_prefix: opts.path_prefix.as_deref(),
            kinds: &opts.kinds,
            current_domain: self.current_domain(opts.current_file.as_deref()),
            explain: opts.explain,
            limit: limit.min(limits::MAX_DEPTH),
            depth: depth.min(limits::MAX_DEPTH),
            when: if opts.raw_fts {
                None
            } else {
                cairn_search::read_query(query, crate::memory::now_secs()).range
            },
            rerank: reranker.as_ref().map(|(model, k, blend)| RerankPlan {
                model,
                k: *k,
                budget: self.rerank_budget(),
                blend: *blend,
            }),
        };
        let src = Source {
            engine: self,
            snap: &*snap,
            graph_read: Default::default(),
        };
        let mut ranking = rank(&src, &req, &self.rank_settings()).map_err(over_budget)?;
        if ranking.rerank.is_some() {
            // The reranker's time is its own budget's
            // (`[search] rerank_budget_ms`), not the store's: the reads
            // that follow get the search budget again.
            deadline.set(std::time::Instant::now() + limits::SEARCH_BUDGET);
            snap.set_deadline(deadline.get());
        } else if opts.rerank.unwrap_or(self.config.search.rerank) {
            ranking.rerank = Some(RerankReport {
                error: Some(
                    "no reranker model: `cairn model fetch --model ms-marco-minilm-l12-v2-int8dq`"
                        .into(),
                ),
                ..RerankReport::default()
            });
        }
        then(&*snap, ranking).map_err(over_budget)
    }

    /// The `[search]` settings as the ranking takes them.
    fn rank_settings(&self) -> RankSettings {
        let s = &self.config.search;
        // Weighted fusion has weights of its own (0.4 / 0.6 by default):
        // its scores live on another scale than score fusion's.
        let (bm25_weight, vector_weight) = match s.fusion {
            cairn_search::FusionMethod::Weighted => (s.weighted_bm25, s.weighted_vector),
            _ => (s.bm25_weight, s.vector_weight),
        };
        RankSettings {
            fusion: s.fusion,
            bm25_weight,
            vector_weight,
            graph_weight: s.graph_weight,
            names_weight: s.names_weight,
            question_names_weight: s.question_names_weight,
            bm25_columns: (s.bm25_breadcrumb_weight, s.bm25_text_weight),
            graph_seeds: s.graph_seeds,
            graph_restart: s.graph_restart,
            sections_per_file: s.sections_per_file,
            doc_weight: s.doc_weight,
            issue_doc_weight: s.issue_doc_weight,
            memory_weight: s.memory_weight,
            code_weight: s.code_weight,
            time_factor: s.time_factor,
            listed: self
                .config
                .index
                .extensions
                .iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Forgets cached query vectors and reranker scores (so timings
    /// include embedding the query and reranking).
    pub fn clear_query_cache(&self) {
        let mut cache = sync::lock(&self.query_cache);
        cache.0.clear();
        cache.1.clear();
        sync::lock(&self.rerank_cache).clear();
    }
}
