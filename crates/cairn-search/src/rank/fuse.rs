//! Fusion: every candidate fetched once, each retriever's list collapsed to
//! its documents (a file ranks where its best chunk ranks, so a file that
//! BM25 finds by one chunk and the vectors by another still gets both
//! votes), then [`RankSettings::fusion`] (score fusion, or RRF) over the
//! four lists, the graph's weighed for this query.

use std::collections::{HashMap, HashSet};

use cairn_core::{ChunkId, ChunkRow, DocId, IndexSnapshot, Kind, Retriever, Scored, StoreError};

use super::{RankRequest, RankSettings};
use crate::boost::{QueryAsks, TEST_FACTOR, is_inline_test, is_main_block};
use crate::fusion::{Fused, Ranked, fuse as fuse_lists};

/// Fused documents and the chunks that represent each.
pub(super) struct Fusion {
    /// Documents (ids local to this search), best first.
    pub fused: Vec<Fused<DocId>>,
    /// Per document: its chunks, best first, with their own fused score
    /// (the same fusion over the chunk lists). The first represents the
    /// file; the next may be shown as further sections of it.
    pub chunks_of: HashMap<DocId, Vec<Fused<ChunkId>>>,
    /// What the query asks about (tests, changes…): read once here, where
    /// it weighs tests inside code files, and again for the path factors.
    pub asks: QueryAsks,
}

/// Every candidate of the lists, fetched once: fusion needs each
/// chunk's document. `have`: rows a retriever already read (the names
/// retriever reads its definitions), not fetched again.
pub(super) fn fetch_rows(
    snap: &dyn IndexSnapshot,
    lists: &[&[Scored<ChunkId>]],
    have: Vec<ChunkRow>,
) -> Result<HashMap<ChunkId, ChunkRow>, StoreError> {
    let mut rows: HashMap<ChunkId, ChunkRow> =
        have.into_iter().map(|r| (ChunkId(r.rowid), r)).collect();
    let mut ids: Vec<i64> = lists
        .iter()
        .flat_map(|l| l.iter())
        .map(|hit| hit.id.0)
        .filter(|id| !rows.contains_key(&ChunkId(*id)))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    rows.extend(
        snap.chunks(&ids)?
            .into_iter()
            .map(|r| (ChunkId(r.rowid), r)),
    );
    Ok(rows)
}

/// Collapses lists of chunks to lists of documents, numbering documents in
/// order of first appearance across the lists it is given.
struct Collapse<'a> {
    rows: &'a HashMap<ChunkId, ChunkRow>,
    doc_ids: HashMap<&'a str, DocId>,
}

impl Collapse<'_> {
    /// `list` (of fetched chunks) with each document once, where its best
    /// chunk ranks.
    fn collapse(&mut self, list: &[Scored<ChunkId>]) -> Vec<Scored<DocId>> {
        let rows = self.rows;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for hit in list {
            let Some(row) = rows.get(&hit.id) else {
                continue;
            };
            let next = DocId(self.doc_ids.len() as i64);
            let doc = *self.doc_ids.entry(row.chunk.path.as_str()).or_insert(next);
            if seen.insert(doc) {
                out.push(Scored::new(doc, hit.score));
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
    rows: &HashMap<ChunkId, ChunkRow>,
    req: &RankRequest<'_>,
    settings: &RankSettings,
    kind_of: &dyn Fn(&str) -> Kind,
    [bm25, vector, graph, graph_chunks, names]: [&[Scored<ChunkId>]; 5],
    [graph_weight, names_weight]: [f64; 2],
    whole_name: bool,
) -> Fusion {
    let asks = QueryAsks::of(req.query);
    let wanted = Wanted {
        rows,
        req,
        kind_of,
        demote_tests: !asks.tests,
        demote_scripts: !asks.tests && !asks.command_line,
    };
    // BM25 and the vectors searched within the prefix already.
    let chunks = [
        wanted.list(bm25, false),
        wanted.list(vector, false),
        wanted.list(graph, true),
        wanted.list(names, false),
    ];
    let mut docs = Collapse {
        rows,
        doc_ids: HashMap::new(),
    };
    let doc_lists = chunks.each_ref().map(|list| docs.collapse(list));
    let method = settings.fusion;
    let weights = [graph_weight, names_weight];
    let fused = fuse_lists(&weighted(settings, &doc_lists, weights), method);
    // The chunks, fused the same way but each on its own: the chunk that
    // BM25 and the vectors both rank high represents its file, rather than
    // the one ranked highest by a single list.
    let [bm25, vector, _, names] = chunks;
    let chunks = [bm25, vector, wanted.list(graph_chunks, true), names];
    let mut chunks_of: HashMap<DocId, Vec<Fused<ChunkId>>> = HashMap::new();
    for c in fuse_lists(&weighted(settings, &chunks, weights), method) {
        if let Some(row) = rows.get(&c.id)
            && let Some(doc) = docs.doc_ids.get(row.chunk.path.as_str())
        {
            chunks_of.entry(*doc).or_default().push(c);
        }
    }
    if whole_name {
        definition_first(&mut chunks_of, &chunks[3]);
    }
    Fusion {
        fused,
        chunks_of,
        asks,
    }
}

/// A query that is only a name shows, for each file, the chunk that defines
/// it best (the names list's best of the file's chunks) first, and its uses
/// after: fused on their own, the chunks that use a name many times can
/// outrank the small one that declares it (fmt's `basic_format_context`,
/// whose class head is a five-line chunk before its members). The scores
/// stay where they were, in order; only which chunk holds each moves, so the
/// file ranks as before.
fn definition_first(
    chunks_of: &mut HashMap<DocId, Vec<Fused<ChunkId>>>,
    names: &[Scored<ChunkId>],
) {
    if names.is_empty() {
        return;
    }
    let by_names: HashMap<ChunkId, f64> = names.iter().map(|h| (h.id, h.score)).collect();
    let names_of = |c: &Fused<ChunkId>| by_names.get(&c.id).copied().unwrap_or(0.0);
    for chunks in chunks_of.values_mut() {
        let Some(first) = chunks.first() else {
            continue;
        };
        let first_names = names_of(first);
        let best = chunks
            .iter()
            .enumerate()
            .skip(1)
            .max_by(|a, b| names_of(a.1).total_cmp(&names_of(b.1)).then(b.0.cmp(&a.0)));
        let Some((j, c)) = best else {
            continue;
        };
        if names_of(c) <= first_names {
            continue;
        }
        let scores: Vec<f64> = chunks.iter().map(|c| c.score).collect();
        let moved = chunks.remove(j);
        chunks.insert(0, moved);
        for (c, s) in chunks.iter_mut().zip(scores) {
            c.score = s;
        }
    }
}

/// Which chunks of a retriever's list a search keeps, and a test inside a
/// code file weighed as a test file would be.
struct Wanted<'a> {
    rows: &'a HashMap<ChunkId, ChunkRow>,
    req: &'a RankRequest<'a>,
    kind_of: &'a dyn Fn(&str) -> Kind,
    demote_tests: bool,
    /// Python `__main__` blocks rank as tests do, unless the query asks
    /// about tests or the command line.
    demote_scripts: bool,
}

impl Wanted<'_> {
    /// `list` without the chunks of a kind not asked for (and, with
    /// `in_prefix`, outside the path prefix); re-sorted when tests are
    /// demoted.
    fn list(&self, list: &[Scored<ChunkId>], in_prefix: bool) -> Vec<Scored<ChunkId>> {
        let prefix = self.req.path_prefix;
        let mut out: Vec<Scored<ChunkId>> = list
            .iter()
            .filter_map(|&Scored { id, score: raw }| {
                let r = self.rows.get(&id)?;
                let kind = (self.kind_of)(&r.chunk.path);
                let keep = (self.req.kinds.is_empty() || self.req.kinds.contains(&kind))
                    && (!in_prefix || prefix.is_none_or(|p| r.chunk.path.starts_with(p)));
                // A test inside a code file ranks as a test file would; a
                // score at or below 0 (a cosine) is already last.
                let test = raw > 0.0
                    && kind == Kind::Code
                    && ((self.demote_tests && is_inline_test(&r.chunk.heading_path))
                        || (self.demote_scripts && is_main_block(&r.chunk.heading_path)));
                keep.then_some(Scored::new(id, if test { raw * TEST_FACTOR } else { raw }))
            })
            .collect();
        if self.demote_tests || self.demote_scripts {
            out.sort_by(|a, b| b.score.total_cmp(&a.score));
        }
        out
    }
}

/// The four lists (BM25, vectors, graph, names) with their weights (the
/// graph's and the names' as this query weighs them).
fn weighted<'a, Id>(
    s: &RankSettings,
    lists: &'a [Vec<Scored<Id>>; 4],
    [graph_weight, names_weight]: [f64; 2],
) -> [Ranked<'a, Id>; 4] {
    [
        Ranked {
            retriever: Retriever::Bm25,
            items: &lists[0],
            weight: s.bm25_weight,
        },
        Ranked {
            retriever: Retriever::Vector,
            items: &lists[1],
            weight: s.vector_weight,
        },
        Ranked {
            retriever: Retriever::Graph,
            items: &lists[2],
            weight: graph_weight,
        },
        Ranked {
            retriever: Retriever::Names,
            items: &lists[3],
            weight: names_weight,
        },
    ]
}
