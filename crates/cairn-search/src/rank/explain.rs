//! Explaining a graph hit: the path of links from the nearest seed to it.

use std::collections::HashMap;

use crate::knowledge::{KnowledgeGraph, NodeRef};
use cairn_core::{ChunkId, ChunkRow, IndexSnapshot};

/// The path that brought a graph hit in: from the nearest seed to one of its
/// document's chunks, each step `label -relation->`. A chunk reads as its
/// file and heading (fetched when the search did not fetch it: a path runs
/// through chunks no retriever returned), never as a row id.
pub(super) fn graph_path(
    g: &KnowledgeGraph,
    seeds: &[u32],
    row: &ChunkRow,
    rows: &HashMap<ChunkId, ChunkRow>,
    snap: &dyn IndexSnapshot,
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
    let missing: Vec<i64> = path
        .iter()
        .filter_map(|n| match g.node(*n) {
            Some(NodeRef::Chunk(c)) if !rows.contains_key(&ChunkId(*c)) => Some(*c),
            _ => None,
        })
        .collect();
    let fetched: HashMap<i64, ChunkRow> = if missing.is_empty() {
        HashMap::new()
    } else {
        snap.chunks(&missing)
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.rowid, r))
            .collect()
    };
    // A chunk reads as its file and lines, then its heading or definition:
    // `src/iter/mod.rs:389-418 > ParallelIterator > map`. Without the lines,
    // a path through a file's own node read `mod.rs -in-> mod.rs -in->
    // mod.rs`, three names for three different things.
    let label = |n: u32| match g.node(n) {
        Some(NodeRef::Chunk(c)) => match rows.get(&ChunkId(*c)).or_else(|| fetched.get(c)) {
            Some(r) => {
                let ch = &r.chunk;
                let at = format!("{}:{}-{}", ch.path, ch.start_line, ch.end_line);
                let crumb = ch.breadcrumb();
                match crumb.strip_prefix(ch.path.as_str()) {
                    Some(rest) => format!("{at}{rest}"),
                    None if crumb.is_empty() => at,
                    None => format!("{at} ({crumb})"),
                }
            }
            // Gone since the graph was built: say what it was, not its id.
            None => "a chunk since removed".to_string(),
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
