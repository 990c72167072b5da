//! The retrievers: BM25 over FTS5, the nearest vectors (the backend's own
//! vector index, else an exact scan of the in-memory matrix, with recent
//! query vectors cached) and the graph (personalised PageRank from seeds).

use std::sync::Arc;

use cairn_core::{Embedder, IndexSnapshot};
use cairn_search::{KnowledgeGraph, PprParams, VectorIndex, lexical_expr};

use super::{Mode, SearchOptions};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// Query vectors kept in the cache.
const QUERY_CACHE: usize = 256;

/// Share of `[search] graph_weight` the graph's list gets in a query that
/// names no entity: its seeds are then only the other lists' top chunks, so
/// it mostly votes again for what they found.
const UNNAMED_GRAPH_SHARE: f64 = 0.5;

/// The share of `[search] graph_weight` the graph earns in one query: from
/// [`UNNAMED_GRAPH_SHARE`] when the query names no entity up to 1 as the
/// most specific entity it names is specific
/// ([`KnowledgeGraph::specificity`]): a function one file defines counts
/// fully, a person named in every session of a conversation little.
fn graph_trust(g: &KnowledgeGraph, named: &[(u32, f32)]) -> f64 {
    let best = named
        .iter()
        .map(|(n, _)| g.specificity(*n))
        .fold(0.0f32, f32::max);
    UNNAMED_GRAPH_SHARE + (1.0 - UNNAMED_GRAPH_SHARE) * f64::from(best)
}

/// What the graph retriever found, and what explaining its hits needs.
pub(super) struct GraphRetrieved {
    /// Chunks the links reach, best first, with their PPR scores.
    pub ranked: Vec<(i64, f64)>,
    /// The graph, when the retriever ran on a non-empty one.
    pub kg: Option<Arc<KnowledgeGraph>>,
    /// The seed nodes, in seeding order.
    pub seed_nodes: Vec<u32>,
    /// The weight of the graph's list in this query's fusion.
    pub weight: f64,
}

impl Engine {
    /// Whether BM25 runs for these options: in every mode but vector.
    pub(super) fn bm25_runs(&self, opts: &SearchOptions) -> bool {
        opts.mode != Mode::Vector
    }

    /// Whether the vector retriever runs for these options: not in BM25
    /// mode, not for a raw FTS5 query, and only with a model.
    pub(super) fn vector_runs(&self, opts: &SearchOptions) -> bool {
        opts.mode != Mode::Bm25 && !opts.raw_fts && self.embedder.is_some()
    }

    /// BM25: the query's terms (or the raw FTS5 query) over breadcrumbs and
    /// text; empty in vector mode or when the query has no terms.
    pub(super) fn retrieve_bm25(
        &self,
        snap: &dyn IndexSnapshot,
        query: &str,
        opts: &SearchOptions,
        depth: usize,
        prefix: Option<&str>,
    ) -> Result<Vec<(i64, f64)>> {
        let mut bm25 = Vec::new();
        if self.bm25_runs(opts) {
            let expr = if opts.raw_fts {
                let n = cairn_search::fts_term_count(query);
                if n > cairn_search::MAX_QUERY_TERMS {
                    return Err(Error::Query(format!(
                        "the FTS5 query names {n} terms; at most {} are searched",
                        cairn_search::MAX_QUERY_TERMS
                    )));
                }
                Some(query.to_string())
            } else {
                lexical_expr(query)
            };
            if let Some(expr) = expr {
                let w = (
                    self.config.search.bm25_breadcrumb_weight,
                    self.config.search.bm25_text_weight,
                );
                bm25 = snap.bm25(&expr, depth, w, prefix)?;
            }
        }
        Ok(bm25)
    }

    /// The chunks nearest the query's vector; empty in BM25 mode, for a raw
    /// FTS5 query, or without a model.
    pub(super) fn retrieve_vector(
        &self,
        snap: &dyn IndexSnapshot,
        query: &str,
        opts: &SearchOptions,
        depth: usize,
        prefix: Option<&str>,
    ) -> Result<Vec<(i64, f64)>> {
        let mut vector = Vec::new();
        // Raw FTS5 syntax (phrases, NOT) means exact lexical semantics, which
        // vectors cannot honour: such a search is BM25 only.
        if self.vector_runs(opts)
            && let Some(embedder) = &self.embedder
        {
            vector = self.nearest(snap, embedder.as_ref(), query, None, depth, prefix)?;
        }
        Ok(vector)
    }

    /// The graph: seeds are the entities the query names and the top chunks
    /// of each retriever; PPR ranks the chunks the links reach. Hybrid mode
    /// only, with a graph weight, and not for a raw FTS5 query.
    pub(super) fn retrieve_graph(
        &self,
        snap: &dyn IndexSnapshot,
        query: &str,
        opts: &SearchOptions,
        depth: usize,
        bm25: &[(i64, f64)],
        vector: &[(i64, f64)],
    ) -> Result<GraphRetrieved> {
        let mut out = GraphRetrieved {
            ranked: Vec::new(),
            kg: None,
            seed_nodes: Vec::new(),
            weight: 0.0,
        };
        if opts.mode == Mode::Hybrid
            && !opts.no_graph
            && !opts.raw_fts
            && self.config.search.graph_weight > 0.0
        {
            let g = self.knowledge_graph(snap)?;
            if !g.is_empty() {
                let n = self.config.search.graph_seeds;
                let mut seeds: Vec<(u32, f32)> = g.query_entities_weighted(query);
                out.weight = self.config.search.graph_weight * graph_trust(&g, &seeds);
                for list in [bm25, vector] {
                    for (rank, (id, _)) in list.iter().take(n).enumerate() {
                        if let Some(node) = g.chunk_node(*id) {
                            let w = 1.0 / (1.0 + rank as f32);
                            seeds.push((node, w * w));
                        }
                    }
                }
                let params = PprParams {
                    restart: self.config.search.graph_restart.clamp(0.05, 0.95),
                    ..PprParams::default()
                };
                out.ranked = g.rank(&seeds, &params, depth);
                out.seed_nodes = seeds.iter().map(|s| s.0).collect();
                out.kg = Some(g);
            }
        }
        Ok(out)
    }

    /// The query's vector, from the cache when it was asked recently.
    pub(crate) fn query_vector(
        &self,
        embedder: &dyn Embedder,
        query: &str,
    ) -> Result<Arc<Vec<f32>>> {
        if let Some(v) = self
            .query_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .get(query)
        {
            return Ok(v.clone());
        }
        let v = Arc::new(embedder.embed(&[query])?.pop().unwrap_or_default());
        let mut cache = self.query_cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.0.len() >= QUERY_CACHE
            && let Some(old) = cache.1.pop_front()
        {
            cache.0.remove(&old);
        }
        cache.0.insert(query.to_string(), v.clone());
        cache.1.push_back(query.to_string());
        Ok(v)
    }

    /// The in-memory vector matrix, reloaded when the index has changed since.
    fn vector_index(&self, snap: &dyn IndexSnapshot, model: &str) -> Result<Arc<VectorIndex>> {
        let generation = snap.generation()?;
        let mut slot = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, idx)) = slot.as_ref()
            && *g == generation
        {
            return Ok(idx.clone());
        }
        let set = snap.vectors(model)?;
        let idx = Arc::new(VectorIndex::new(set.rowids, set.paths, set.data, set.dim));
        *slot = Some((generation, idx.clone()));
        Ok(idx)
    }

    /// The `k` chunks nearest to `text` (or to `qv`, its vector, when the
    /// caller has it): on the backend's own vector index when it has one
    /// (PostgreSQL's HNSW), else an exact scan of the in-memory matrix.
    pub(crate) fn nearest(
        &self,
        snap: &dyn IndexSnapshot,
        embedder: &dyn Embedder,
        text: &str,
        qv: Option<&[f32]>,
        k: usize,
        prefix: Option<&str>,
    ) -> Result<Vec<(i64, f64)>> {
        let model = embedder.model_id();
        let owned;
        let qv = match qv {
            Some(v) => v,
            None => {
                owned = self.query_vector(embedder, text)?;
                &owned[..]
            }
        };
        if let Some(hits) = snap.vector_top_k(model, qv, k, prefix)? {
            return Ok(hits);
        }
        let idx = self.vector_index(snap, model)?;
        Ok(idx.top_k(qv, k, prefix))
    }
}
