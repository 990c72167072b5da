//! The knowledge graph as a file, so that a process that searches once (a
//! CLI `search`) reads the graph another built instead of building it again
//! from every link of the index: on the PowerShell corpus (737,561 links)
//! the build is over a second, the read a few tens of milliseconds.
//!
//! The format is ours (no serialisation crate): little-endian, the CSR
//! arrays written as they are, so reading is a copy rather than a parse.
//!
//! ```text
//! magic "CAIRNKG" + version byte
//! stamp              str     what the graph was built from (the caller's)
//! nodes              u64, then per node: 0 + i64 chunk row id
//!                                     or 1 + key, name, full key (str each;
//!                                        empty unless it is `key@path`)
//! entities by key    u64 count, u32 × count (ids in (key, id) order)
//! offsets            u64 × (nodes + 1)
//! targets            u64 count, u32 × count
//! weights            f32 × count
//! relation names     u32 count, str each
//! edge relations     u32 × count (index into the names)
//! str = u32 byte length + UTF-8
//! ```
//!
//! Reading checks every length against what is left and every id against
//! what it indexes; a file that fails a check is an error, never a panic or
//! a graph that indexes out of bounds.

use std::collections::HashMap;

use crate::cache_file::{CacheFileError, Reader, put_str};
use crate::graph::Graph;
use crate::knowledge::{KnowledgeGraph, NodeRef, RowMap, key_of};

const MAGIC: &[u8; 7] = b"CAIRNKG";
/// The format's version: a file of another is stale, not damaged.
const FORMAT: u8 = 2;

impl KnowledgeGraph {
    /// The graph as bytes, with `stamp` (what it was built from) in the
    /// header: [`KnowledgeGraph::from_bytes`] reads it back only with the
    /// same stamp.
    pub fn to_bytes(&self, stamp: &str) -> Vec<u8> {
        let (offsets, targets, weights) = self.graph.parts();
        let mut out = Vec::with_capacity(64 + offsets.len() * 8 + targets.len() * 12);
        out.extend_from_slice(MAGIC);
        out.push(FORMAT);
        put_str(&mut out, stamp);
        let mut full_keys: Vec<Option<&str>> = vec![None; self.nodes.len()];
        for (key, &id) in &self.definitions {
            if let Some(slot) = full_keys.get_mut(id as usize) {
                *slot = Some(key);
            }
        }
        out.extend_from_slice(&(self.nodes.len() as u64).to_le_bytes());
        for (id, node) in self.nodes.iter().enumerate() {
            match node {
                NodeRef::Chunk(row) => {
                    out.push(0);
                    out.extend_from_slice(&row.to_le_bytes());
                }
                NodeRef::Entity { key, name } => {
                    out.push(1);
                    put_str(&mut out, key);
                    put_str(&mut out, name);
                    let full = full_keys[id].filter(|f| f != key).unwrap_or("");
                    put_str(&mut out, full);
                }
            }
        }
        out.extend_from_slice(&(self.by_key.len() as u64).to_le_bytes());
        for &id in &self.by_key {
            out.extend_from_slice(&id.to_le_bytes());
        }
        for &o in offsets {
            out.extend_from_slice(&(o as u64).to_le_bytes());
        }
        out.extend_from_slice(&(targets.len() as u64).to_le_bytes());
        for &t in targets {
            out.extend_from_slice(&t.to_le_bytes());
        }
        for &w in weights {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&(self.rel_names.len() as u32).to_le_bytes());
        for r in &self.rel_names {
            put_str(&mut out, r);
        }
        for &r in &self.edge_rels {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out
    }

    /// The graph [`KnowledgeGraph::to_bytes`] wrote, if its stamp is `stamp`.
    pub fn from_bytes(bytes: &[u8], stamp: &str) -> Result<KnowledgeGraph, CacheFileError> {
        let mut r = Reader::open(bytes, MAGIC, FORMAT, stamp, "not a graph file")?;
        // Each node takes at least 9 bytes: a count past that is a lie.
        let n = r.count(9)?;
        let mut nodes = Vec::with_capacity(n);
        // Sized once: growing the map as it fills rehashed it ~17 times on
        // pytest's graph (5 % of a one-shot search).
        let mut chunks = RowMap::with_capacity_and_hasher(n, Default::default());
        let mut definitions = HashMap::new();
        for id in 0..n as u32 {
            match r.take(1)?[0] {
                0 => {
                    let row = i64::from_le_bytes(r.array()?);
                    if chunks.insert(row, id).is_some() {
                        return Err(CacheFileError::Corrupt("a chunk is two nodes"));
                    }
                    nodes.push(NodeRef::Chunk(row));
                }
                1 => {
                    let key = r.str()?.to_string();
                    let name = r.str()?.to_string();
                    let full = r.str()?;
                    if !full.is_empty() && definitions.insert(full.to_string(), id).is_some() {
                        return Err(CacheFileError::Corrupt("a definition is two nodes"));
                    }
                    nodes.push(NodeRef::Entity { key, name });
                }
                _ => return Err(CacheFileError::Corrupt("unknown node kind")),
            }
        }
        // The entity nodes by key: each entity once, in (key, id) order.
        let count = r.count(4)?;
        let by_key: Vec<u32> = r.words(count)?.map(u32::from_le_bytes).collect();
        let key_of = |id: u32| key_of(&nodes, id);
        let entities = nodes
            .iter()
            .filter(|n| matches!(n, NodeRef::Entity { .. }))
            .count();
        if by_key.len() != entities || by_key.iter().any(|&id| key_of(id).is_none()) {
            return Err(CacheFileError::Corrupt("the key order is not the entities"));
        }
        if by_key
            .windows(2)
            .any(|w| (key_of(w[0]), w[0]) >= (key_of(w[1]), w[1]))
        {
            return Err(CacheFileError::Corrupt("the key order is not sorted"));
        }
        let mut offsets = Vec::with_capacity(n + 1);
        for _ in 0..=n {
            let o = u64::from_le_bytes(r.array()?);
            offsets.push(usize::try_from(o).map_err(|_| CacheFileError::Corrupt("offset"))?);
        }
        let e = r.count(12)?;
        let targets: Vec<u32> = r.words(e)?.map(u32::from_le_bytes).collect();
        let weights: Vec<f32> = r.words(e)?.map(f32::from_le_bytes).collect();
        let graph =
            Graph::from_parts(offsets, targets, weights).map_err(CacheFileError::Corrupt)?;
        let names = r.count32(4)?;
        let mut rel_names = Vec::with_capacity(names);
        for _ in 0..names {
            rel_names.push(r.str()?.to_string());
        }
        let edge_rels: Vec<u32> = r.words(e)?.map(u32::from_le_bytes).collect();
        if edge_rels.iter().any(|&x| x as usize >= rel_names.len()) {
            return Err(CacheFileError::Corrupt("an edge names no relation"));
        }
        if r.at != bytes.len() {
            return Err(CacheFileError::Corrupt("bytes after the end"));
        }
        Ok(KnowledgeGraph {
            graph,
            nodes,
            chunks,
            definitions,
            by_key,
            rel_names,
            edge_rels,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::EdgeIn;
    use cairn_core::entity_key;

    fn sample() -> KnowledgeGraph {
        let (bd, searcher, login) = (
            entity_key("BinaryDetection"),
            entity_key("Searcher"),
            entity_key("login throttling"),
        );
        fn edge<'a>(chunk: i64, dst: &'a str, rel: &str, path: &'a str) -> EdgeIn<'a> {
            EdgeIn {
                chunk: Some(chunk),
                src: None,
                dst,
                dst_name: dst,
                rel: cairn_core::Relation::named(rel),
                weight: 1.0,
                path,
            }
        }
        KnowledgeGraph::build([
            edge(1, &bd, "defines", "a.rs"),
            edge(2, &bd, "defines", "b.rs"),
            edge(3, &bd, "mentions", "c.md"),
            edge(3, &searcher, "mentions", "c.md"),
            edge(4, &searcher, "defines", "s.rs"),
            EdgeIn {
                chunk: None,
                src: Some((&login, "login throttling")),
                dst: &searcher,
                dst_name: "Searcher",
                rel: cairn_core::Relation::named("implemented_by"),
                weight: 2.0,
                path: ".cairn/memory/m.md",
            },
        ])
    }

    #[test]
    fn a_graph_reads_back_as_it_was_written() {
        let g = sample();
        let back = KnowledgeGraph::from_bytes(&g.to_bytes("gen 7"), "gen 7").unwrap();
        assert_eq!(back.graph, g.graph);
        assert_eq!(back.nodes, g.nodes);
        assert_eq!(back.chunks, g.chunks);
        assert_eq!(back.definitions, g.definitions);
        assert_eq!(back.by_key, g.by_key);
        for a in 0..g.node_count() as u32 {
            assert_eq!(back.neighbors(a), g.neighbors(a));
        }
        // The name two files define is two nodes, found by its key.
        assert_eq!(back.entity_nodes("BinaryDetection").len(), 2);
        let seeds = back.query_entities_weighted("where is login throttling");
        assert_eq!(
            seeds,
            g.query_entities_weighted("where is login throttling")
        );
        assert!(!seeds.is_empty());
    }

    #[test]
    fn another_stamp_or_a_damaged_file_is_an_error_not_a_graph() {
        let g = sample();
        let bytes = g.to_bytes("gen 7");
        assert_eq!(
            KnowledgeGraph::from_bytes(&bytes, "gen 8").unwrap_err(),
            CacheFileError::Stale
        );
        // Every truncation, and every byte flipped, is refused or reads a
        // graph whose ids all stay in bounds: never a panic.
        for cut in 0..bytes.len() {
            assert!(
                KnowledgeGraph::from_bytes(&bytes[..cut], "gen 7").is_err(),
                "cut {cut}"
            );
        }
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                if let Ok(g) = KnowledgeGraph::from_bytes(&b, "gen 7") {
                    for a in 0..g.node_count() as u32 {
                        for (n, _, _) in g.neighbors(a) {
                            assert!((n as usize) < g.node_count());
                        }
                    }
                }
            }
        }
    }
}
