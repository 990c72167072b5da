//! Explaining a graph hit: the path of links from the nearest seed to it.

use std::collections::HashMap;

use cairn_core::ChunkRow;
use cairn_search::{KnowledgeGraph, NodeRef};

/// The path that brought a graph hit in: from the nearest seed to one of its
/// document's chunks, each step `label -relation->`.
pub(super) fn graph_path(
    g: &KnowledgeGraph,
    seeds: &[u32],
    row: &ChunkRow,
    rows: &HashMap<i64, ChunkRow>,
) -> Vec<String> {
    let Some(target) = g.chunk_node(row.rowid) else {
        return Vec::new();
    };
    // From the other seeds: a seed's own score is the mass they send it.
    let others: Vec<u32> = seeds.iter().copied().filter(|s| *s != target).collect();
    let paths = g.seed_paths(&others, 6);
    let Some(path) = paths.path_to(target) else {
        return Vec::new();
    };
    let label = |n: u32| match g.node(n) {
        Some(NodeRef::Chunk(c)) => match rows.get(c) {
            Some(r) if r.chunk.breadcrumb().is_empty() => r.chunk.path.clone(),
            Some(r) if r.chunk.breadcrumb().starts_with(&r.chunk.path) => r.chunk.breadcrumb(),
            Some(r) => format!("{} ({})", r.chunk.path, r.chunk.breadcrumb()),
            None => format!("chunk {c}"),
        },
        Some(NodeRef::Entity { name, .. }) => name.clone(),
        None => String::new(),
    };
    let mut out = Vec::new();
    for w in path.windows(2) {
        out.push(format!("{} -{}->", label(w[0]), g.relation(w[0], w[1])));
    }
    if let Some(last) = path.last() {
        out.push(label(*last));
    }
    out
}
