//! Fusion: every candidate fetched once, each retriever's list collapsed to
//! its documents (a file ranks where its best chunk ranks, so a file that
//! BM25 finds by one chunk and the vectors by another still gets both
//! votes), then [`RankSettings::fusion`] (score fusion, or RRF) over the
//! three lists, the graph's weighed for this query.

use std::collections::{HashMap, HashSet};

use cairn_core::{ChunkRow, IndexSnapshot, Kind, StoreError};

use super::{RankRequest, RankSettings};
use crate::boost::{QueryAsks, TEST_FACTOR, is_inline_test, is_main_block};
use crate::fusion::{Fused, Ranked, fuse as fuse_lists};

/// Fused documents and the chunks that represent each.
pub(super) struct Fusion {
    /// Documents (ids local to this search), best first.
    pub fused: Vec<Fused>,
    /// Per document: its chunks, best first, with their own fused score
    /// (the same fusion over the chunk lists). The first represents the
    /// file; the next may be shown as further sections of it.
    pub chunks_of: HashMap<i64, Vec<(i64, f64)>>,
    /// What the query asks about (tests, changes…): read once here, where
    /// it weighs tests inside code files, and again for the path factors.
    pub asks: QueryAsks,
}

/// Every candidate of the three lists, fetched once: fusion needs each
/// chunk's document.
pub(super) fn fetch_rows(
    snap: &dyn IndexSnapshot,
    lists: &[&[(i64, f64)]],
) -> Result<HashMap<i64, ChunkRow>, StoreError> {
    let mut ids: Vec<i64> = lists
        .iter()
        .flat_map(|l| l.iter())
        .map(|(id, _)| *id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    Ok(snap
        .chunks(&ids)?
        .into_iter()
        .map(|r| (r.rowid, r))
        .collect())
}

/// Collapses lists of chunks to lists of documents, numbering documents in
/// order of first appearance across the lists it is given.
struct Collapse<'a> {
    rows: &'a HashMap<i64, ChunkRow>,
    doc_ids: HashMap<&'a str, i64>,
}

impl Collapse<'_> {
    /// `list` (of fetched chunks) with each document once, where its best
    /// chunk ranks.
    fn collapse(&mut self, list: &[(i64, f64)]) -> Vec<(i64, f64)> {
        let rows = self.rows;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for &(id, raw) in list {
            let Some(row) = rows.get(&id) else { continue };
            let next = self.doc_ids.len() as i64;
            let doc = *self.doc_ids.entry(row.chunk.path.as_str()).or_insert(next);
            if seen.insert(doc) {
                out.push((doc, raw));
            }
        }
        out
    }
}

/// Fuses per document: the BM25, vector and graph lists (chunks of a kind
/// not asked for, and the graph's hits outside the path prefix, left out),
/// weighted by the settings and, for the graph, by this query. The graph
/// has two lists: `graph` votes for documents, `graph_chunks` for which
/// chunks of a document show.
pub(super) fn fuse(
    rows: &HashMap<i64, ChunkRow>,
    req: &RankRequest<'_>,
    settings: &RankSettings,
    kind_of: &dyn Fn(&str) -> Kind,
    [bm25, vector, graph, graph_chunks]: [&[(i64, f64)]; 4],
    graph_weight: f64,
) -> Fusion {
    let prefix = req.path_prefix;
    let asks = QueryAsks::of(req.query);
    let demote_tests = !asks.tests;
    let demote_scripts = !asks.tests && !asks.command_line;
    let wanted = |list: &[(i64, f64)], in_prefix: bool| -> Vec<(i64, f64)> {
        let mut out: Vec<(i64, f64)> = list
            .iter()
            .filter_map(|&(id, raw)| {
                let r = rows.get(&id)?;
                let kind = kind_of(&r.chunk.path);
                let keep = (req.kinds.is_empty() || req.kinds.contains(&kind))
                    && (!in_prefix || prefix.is_none_or(|p| r.chunk.path.starts_with(p)));
                // A test inside a code file ranks as a test file would; a
                // score at or below 0 (a cosine) is already last.
                let test = raw > 0.0
                    && kind == Kind::Code
                    && ((demote_tests && is_inline_test(&r.chunk.heading_path))
                        || (demote_scripts && is_main_block(&r.chunk.heading_path)));
                keep.then_some((id, if test { raw * TEST_FACTOR } else { raw }))
            })
            .collect();
        if demote_tests || demote_scripts {
            out.sort_by(|a, b| b.1.total_cmp(&a.1));
        }
        out
    };
    // BM25 and the vectors searched within the prefix already.
    let chunks = [
        wanted(bm25, false),
        wanted(vector, false),
        wanted(graph, true),
    ];
    let mut docs = Collapse {
        rows,
        doc_ids: HashMap::new(),
    };
    let doc_lists = chunks.each_ref().map(|list| docs.collapse(list));
    let method = settings.fusion;
    let fused: Vec<Fused> = fuse_lists(&weighted(settings, &doc_lists, graph_weight), method);
    // The chunks, fused the same way but each on its own: the chunk that
    // BM25 and the vectors both rank high represents its file, rather than
    // the one ranked highest by a single list.
    let [bm25, vector, _] = chunks;
    let chunks = [bm25, vector, wanted(graph_chunks, true)];
    let mut chunks_of: HashMap<i64, Vec<(i64, f64)>> = HashMap::new();
    for c in &fuse_lists(&weighted(settings, &chunks, graph_weight), method) {
        if let Some(row) = rows.get(&c.id)
            && let Some(doc) = docs.doc_ids.get(row.chunk.path.as_str())
        {
            chunks_of.entry(*doc).or_default().push((c.id, c.score));
        }
    }
    Fusion {
        fused,
        chunks_of,
        asks,
    }
}

/// The three lists (BM25, vectors, graph) with their weights (the graph's
/// as this query weighs it).
fn weighted<'a>(
    s: &RankSettings,
    lists: &'a [Vec<(i64, f64)>; 3],
    graph_weight: f64,
) -> [Ranked<'a>; 3] {
    [
        Ranked {
            name: "bm25",
            items: &lists[0],
            weight: s.bm25_weight,
        },
        Ranked {
            name: "vector",
            items: &lists[1],
            weight: s.vector_weight,
        },
        Ranked {
            name: "graph",
            items: &lists[2],
            weight: graph_weight,
        },
    ]
}
