//! Fusion: every candidate fetched once, each retriever's list collapsed to
//! its documents (a file ranks where its best chunk ranks, so a file that
//! BM25 finds by one chunk and the vectors by another still gets both
//! votes), then RRF over the three lists.

use std::collections::{HashMap, HashSet};

use cairn_core::{ChunkRow, IndexSnapshot, Kind};
use cairn_search::{Fused, RRF_K, Ranked, rrf};

use super::SearchOptions;
use crate::engine::Engine;
use crate::error::Result;

/// Fused documents and the chunks that represent each.
pub(super) struct Fusion {
    /// Documents (ids local to this search), best first.
    pub fused: Vec<Fused>,
    /// Per document: its chunks, best first, with their own fused score
    /// (RRF over the chunk lists). The first represents the file; the next
    /// may be shown as further sections of it.
    pub chunks_of: HashMap<i64, Vec<(i64, f64)>>,
}

/// Every candidate of the three lists, fetched once: fusion needs each
/// chunk's document.
pub(super) fn fetch_rows(
    snap: &dyn IndexSnapshot,
    bm25: &[(i64, f64)],
    vector: &[(i64, f64)],
    graph: &[(i64, f64)],
) -> Result<HashMap<i64, ChunkRow>> {
    let mut ids: Vec<i64> = bm25
        .iter()
        .chain(vector)
        .chain(graph)
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
    engine: &'a Engine,
    rows: &'a HashMap<i64, ChunkRow>,
    kinds: &'a [Kind],
    doc_ids: HashMap<&'a str, i64>,
}

impl Collapse<'_> {
    /// `list` with each document once, where its best chunk ranks; chunks
    /// not fetched or of a kind not asked for are left out.
    fn collapse(&mut self, list: &[(i64, f64)]) -> Vec<(i64, f64)> {
        let rows = self.rows;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for &(id, raw) in list {
            let Some(row) = rows.get(&id) else { continue };
            if !self.kinds.is_empty() && !self.kinds.contains(&self.engine.kind_of(&row.chunk.path))
            {
                continue;
            }
            let next = self.doc_ids.len() as i64;
            let doc = *self.doc_ids.entry(row.chunk.path.as_str()).or_insert(next);
            if seen.insert(doc) {
                out.push((doc, raw));
            }
        }
        out
    }
}

impl Engine {
    /// Fuses per document: BM25, vector and graph lists (the graph's hits
    /// outside the path prefix left out), weighted by `[search]`.
    pub(super) fn fuse(
        &self,
        rows: &HashMap<i64, ChunkRow>,
        opts: &SearchOptions,
        bm25: &[(i64, f64)],
        vector: &[(i64, f64)],
        graph: &[(i64, f64)],
    ) -> Fusion {
        let prefix = opts.path_prefix.as_deref();
        let mut docs = Collapse {
            engine: self,
            rows,
            kinds: &opts.kinds,
            doc_ids: HashMap::new(),
        };
        let bm25_docs = docs.collapse(bm25);
        let vector_docs = docs.collapse(vector);
        let graph: Vec<(i64, f64)> = graph
            .iter()
            .copied()
            .filter(|(id, _)| {
                rows.get(id)
                    .is_some_and(|r| prefix.is_none_or(|p| r.chunk.path.starts_with(p)))
            })
            .collect();
        let graph_docs = docs.collapse(&graph);
        // The chunks, fused the same way but each on its own: the chunk that
        // BM25 and the vectors both rank high represents its file, rather
        // than the one ranked highest by a single list.
        let wanted = |list: &[(i64, f64)]| -> Vec<(i64, f64)> {
            list.iter()
                .copied()
                .filter(|(id, _)| {
                    rows.get(id).is_some_and(|r| {
                        opts.kinds.is_empty() || opts.kinds.contains(&self.kind_of(&r.chunk.path))
                    })
                })
                .collect()
        };
        let (bm25_chunks, vector_chunks, graph_chunks) =
            (wanted(bm25), wanted(vector), wanted(&graph));
        let chunk_scores = rrf(
            &[
                Ranked {
                    name: "bm25",
                    items: &bm25_chunks,
                    weight: self.config.search.bm25_weight,
                },
                Ranked {
                    name: "vector",
                    items: &vector_chunks,
                    weight: self.config.search.vector_weight,
                },
                Ranked {
                    name: "graph",
                    items: &graph_chunks,
                    weight: self.config.search.graph_weight,
                },
            ],
            RRF_K,
        );
        let mut chunks_of: HashMap<i64, Vec<(i64, f64)>> = HashMap::new();
        for c in &chunk_scores {
            if let Some(row) = rows.get(&c.id)
                && let Some(doc) = docs.doc_ids.get(row.chunk.path.as_str())
            {
                chunks_of.entry(*doc).or_default().push((c.id, c.score));
            }
        }
        let fused: Vec<Fused> = rrf(
            &[
                Ranked {
                    name: "bm25",
                    items: &bm25_docs,
                    weight: self.config.search.bm25_weight,
                },
                Ranked {
                    name: "vector",
                    items: &vector_docs,
                    weight: self.config.search.vector_weight,
                },
                Ranked {
                    name: "graph",
                    items: &graph_docs,
                    weight: self.config.search.graph_weight,
                },
            ],
            RRF_K,
        );
        Fusion { fused, chunks_of }
    }
}
