//! The lexical and graph retrievers (the vector one is the source's:
//! [`super::RankSource::nearest`], over what the engine caches).

use std::sync::Arc;

use cairn_core::{ChunkId, IndexSnapshot, Scored};

use super::{RankError, RankRequest, RankSettings, RankSource};
use crate::graph::PprParams;
use crate::knowledge::KnowledgeGraph;
use crate::query::{MAX_QUERY_TERMS, fts_term_count, lexical_expr};

/// Share of the graph's weight its list gets in a query that names no
/// entity: its seeds are then only the other lists' top chunks, so it mostly
/// votes again for what they found.
const UNNAMED_GRAPH_SHARE: f64 = 0.5;

/// The share of its own restart mass a seed loses in the graph's list that
/// votes for documents. PPR gives a seed most of its mass back by restarting
/// there; with all of it taken off (as the graph's list once was), a seed
/// ranked only as far as other seeds lead to it, so the graph's vote went to
/// the neighbours of what BM25 and the vectors both put first — a doc that
/// mentions `Json` above `json.rs`, which defines it. Half keeps what the
/// query points at in the graph's list, ahead of what merely links to it.
/// Measured over 0, 0.3, 0.5, 0.6, 0.7, 1 on all four sets (BENCHMARKS.md):
/// 0.5 is best on code-QA (MRR 0.873 → 0.893) and costs the graph fixture
/// 0.004.
const DOC_SEED_SHARE: f32 = 0.5;

/// The same share for the graph's list that votes for which chunks of a
/// document show: all of it, so the graph brings the other sections a link
/// leads to, not the seed again (chunk hit@5 on code-QA 0.808 with 0.5,
/// 0.822 with 1).
const CHUNK_SEED_SHARE: f32 = 1.0;

/// The share of [`RankSettings::graph_weight`] the graph earns in one query:
/// from [`UNNAMED_GRAPH_SHARE`] when the query names no entity up to 1 as the
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

/// BM25: the query's terms (or the raw FTS5 query) over breadcrumbs and
/// text; empty when BM25 does not run or the query has no terms.
pub(super) fn bm25<E: From<cairn_core::StoreError> + From<RankError>>(
    snap: &dyn IndexSnapshot,
    req: &RankRequest<'_>,
    settings: &RankSettings,
) -> Result<Vec<Scored<ChunkId>>, E> {
    if !req.retrievers.bm25 {
        return Ok(Vec::new());
    }
    let expr = if req.raw_fts {
        // CJK runs cut as the index cut them: a quoted `"東京都"` becomes the
        // phrase `東京 京都`, which matches where the text holds `東京都`.
        // Not the words of camelCase names: written after the expression
        // they would change its meaning (`a OR fooBar foo Bar` asks for
        // `foo` and `Bar` too), and the index holds each name whole anyway.
        let raw = cairn_core::cjk_bigrams(req.query);
        let terms = fts_term_count(&raw);
        if terms > MAX_QUERY_TERMS {
            return Err(RankError::TooManyTerms {
                terms,
                max: MAX_QUERY_TERMS,
            }
            .into());
        }
        Some(raw.into_owned())
    } else {
        lexical_expr(req.query)
    };
    match expr {
        Some(expr) => Ok(snap.bm25(&expr, req.depth, settings.bm25_columns, req.path_prefix)?),
        None => Ok(Vec::new()),
    }
}

/// The names retriever: the definitions and files the query names
/// ([`crate::read_names`], [`crate::names_list`]); `None` when it does not
/// run (not asked, a raw FTS5 query, a weight of 0); with the chunks it
/// read.
pub(super) fn names<E: From<cairn_core::StoreError>>(
    snap: &dyn IndexSnapshot,
    req: &RankRequest<'_>,
    settings: &RankSettings,
) -> Result<NamesRetrieved, E> {
    if !req.retrievers.names || req.raw_fts || settings.names_weight <= 0.0 {
        return Ok((Vec::new(), None, Vec::new()));
    }
    let read = crate::read_names(req.query);
    let (list, found, rows) = crate::names_list(snap, &read, req.depth, req.path_prefix)?;
    Ok((list, Some(found), rows))
}

/// The names retriever's list, what it found, and the chunks it read.
pub(super) type NamesRetrieved = (
    Vec<Scored<ChunkId>>,
    Option<crate::NamesFound>,
    Vec<cairn_core::ChunkRow>,
);

/// What the graph retriever found, and what explaining its hits needs.
pub(super) struct GraphRetrieved {
    /// Chunks the links reach, best first, with their PPR scores: the list
    /// that votes for documents (a seed keeps half its restart mass).
    pub ranked: Vec<Scored<ChunkId>>,
    /// The same, a seed keeping none of its restart mass: the list that
    /// votes for which chunks of a document show.
    pub ranked_chunks: Vec<Scored<ChunkId>>,
    /// The graph, when the retriever ran on a non-empty one.
    pub kg: Option<Arc<KnowledgeGraph>>,
    /// The seed nodes, in seeding order.
    pub seed_nodes: Vec<u32>,
    /// The weight of the graph's list in this query's fusion.
    pub weight: f64,
}

/// The graph: seeds are the entities the query names and the top chunks of
/// each other list; PPR ranks the chunks the links reach. Only when asked,
/// with a graph weight, on a non-empty graph.
pub(super) fn graph<S: RankSource>(
    src: &S,
    req: &RankRequest<'_>,
    settings: &RankSettings,
    bm25: &[Scored<ChunkId>],
    vector: &[Scored<ChunkId>],
    names: &[Scored<ChunkId>],
) -> Result<GraphRetrieved, S::Error> {
    let mut out = GraphRetrieved {
        ranked: Vec::new(),
        ranked_chunks: Vec::new(),
        kg: None,
        seed_nodes: Vec::new(),
        weight: 0.0,
    };
    if !req.retrievers.graph || req.raw_fts || settings.graph_weight <= 0.0 {
        return Ok(out);
    }
    let g = src.graph()?;
    if g.is_empty() {
        return Ok(out);
    }
    let mut seeds: Vec<(u32, f32)> = g.query_entities_weighted(req.query);
    out.weight = settings.graph_weight * graph_trust(&g, &seeds);
    // The definitions and files the query names seed it as the other
    // lists' top chunks do: a traceback's frames, their callers and callees.
    for list in [bm25, vector, names] {
        for (rank, hit) in list.iter().take(settings.graph_seeds).enumerate() {
            if let Some(node) = g.chunk_node(hit.id.0) {
                let w = 1.0 / (1.0 + rank as f32);
                seeds.push((node, w * w));
            }
        }
    }
    let params = PprParams {
        restart: settings.graph_restart.clamp(0.05, 0.95),
        ..PprParams::default()
    };
    let mut views = g.rank_views(
        &seeds,
        &params,
        req.depth,
        &[DOC_SEED_SHARE, CHUNK_SEED_SHARE],
    );
    out.ranked_chunks = views.pop().unwrap_or_default();
    out.ranked = views.pop().unwrap_or_default();
    out.seed_nodes = seeds.iter().map(|s| s.0).collect();
    out.kg = Some(g);
    Ok(out)
}
