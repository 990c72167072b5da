//! The knowledge graph as search sees it: chunks and entities as nodes, the
//! index's links as weighted undirected edges, and the graph retriever.
//!
//! Graph retrieval: the query's seeds are the entities it names (every run of
//! one to three query words whose [`entity_key`] is a node, so "validate
//! token" finds `validate_token`) plus the top BM25 and vector chunks
//! (weight `1 / (1 + rank)²`). Personalized PageRank spreads from them
//! ([`crate::graph`]: restart 0.3, hub dampening); chunks ranked by the mass
//! that reaches them through links (restart share removed) are the graph's
//! list, which joins BM25 and vectors in RRF. A chunk that only the graph
//! finds is one the words and the embedding missed but that the links tie to
//! what they found.

use std::collections::HashMap;

use cairn_core::entity_key;

use crate::community::{LeidenParams, central_members, leiden};
use crate::graph::{Graph, PprParams, SeedPaths, personalized_pagerank, shortest_path};

/// One stored edge, as the engine hands it over.
#[derive(Clone, Debug)]
pub struct EdgeIn<'a> {
    /// Source chunk row id, or `None` for an entity → entity relation.
    pub chunk: Option<i64>,
    /// Source entity `(key, name)` when `chunk` is `None`.
    pub src: Option<(&'a str, &'a str)>,
    /// Target entity key.
    pub dst: &'a str,
    /// Target entity display name.
    pub dst_name: &'a str,
    /// Relation name.
    pub rel: &'a str,
    /// Weight.
    pub weight: f32,
}

/// What a node stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeRef {
    /// A chunk, by row id.
    Chunk(i64),
    /// A named entity (symbol, concept, path).
    Entity {
        /// [`entity_key`] of the name.
        key: String,
        /// The name as first written.
        name: String,
    },
}

/// Query words that never name an entity on their own.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "where", "what", "which", "when", "who", "why", "how", "does",
    "did", "are", "was", "were", "this", "that", "these", "those", "from", "into", "about", "our",
    "your", "their", "there", "here", "have", "has", "had", "not", "but", "can", "could", "should",
    "would", "will", "use", "used", "using", "get", "set", "new", "all", "any", "one", "two",
];

/// A graph of chunks and entities built from the index's links.
#[derive(Debug)]
pub struct KnowledgeGraph {
    graph: Graph,
    nodes: Vec<NodeRef>,
    chunks: HashMap<i64, u32>,
    entities: HashMap<String, u32>,
    /// Relation of each (lower id, higher id) edge, first one seen.
    rels: HashMap<(u32, u32), String>,
}

/// A community of the graph.
#[derive(Clone, Debug)]
pub struct Community {
    /// Id, dense, largest community first.
    pub id: u32,
    /// Nodes in it.
    pub members: Vec<u32>,
    /// Its most central entities (weighted degree inside the community), best first.
    pub central: Vec<u32>,
}

impl KnowledgeGraph {
    /// Builds the graph. Parallel edges add up; self-loops are dropped.
    pub fn build<'a>(edges: impl IntoIterator<Item = EdgeIn<'a>>) -> KnowledgeGraph {
        let mut nodes = Vec::new();
        let mut chunks = HashMap::new();
        let mut entities: HashMap<String, u32> = HashMap::new();
        let mut rels = HashMap::new();
        let mut list = Vec::new();
        let mut entity = |key: &str, name: &str, nodes: &mut Vec<NodeRef>| -> u32 {
            if let Some(&id) = entities.get(key) {
                return id;
            }
            let id = nodes.len() as u32;
            nodes.push(NodeRef::Entity {
                key: key.to_string(),
                name: name.to_string(),
            });
            entities.insert(key.to_string(), id);
            id
        };
        for e in edges {
            if e.dst.is_empty() || !e.weight.is_finite() || e.weight <= 0.0 {
                continue;
            }
            let a = match (e.chunk, e.src) {
                (Some(c), _) => *chunks.entry(c).or_insert_with(|| {
                    nodes.push(NodeRef::Chunk(c));
                    nodes.len() as u32 - 1
                }),
                (None, Some((key, name))) if !key.is_empty() => entity(key, name, &mut nodes),
                _ => continue,
            };
            let b = entity(e.dst, e.dst_name, &mut nodes);
            if a == b {
                continue;
            }
            rels.entry((a.min(b), a.max(b)))
                .or_insert_with(|| e.rel.to_string());
            list.push((a, b, e.weight));
        }
        // `entity` borrowed `entities` mutably; take it back.
        let entities = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match n {
                NodeRef::Entity { key, .. } => Some((key.clone(), i as u32)),
                NodeRef::Chunk(_) => None,
            })
            .collect();
        KnowledgeGraph {
            graph: Graph::from_edges(nodes.len(), &list),
            nodes,
            chunks,
            entities,
            rels,
        }
    }

    /// Nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Undirected edges.
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// True when there is no edge.
    pub fn is_empty(&self) -> bool {
        self.graph.edge_count() == 0
    }

    /// What node `id` stands for.
    pub fn node(&self, id: u32) -> Option<&NodeRef> {
        self.nodes.get(id as usize)
    }

    /// The node of an entity name (any naming convention), if there is one.
    pub fn entity(&self, name: &str) -> Option<u32> {
        self.entities.get(&entity_key(name)).copied()
    }

    /// The node of a chunk row id.
    pub fn chunk_node(&self, rowid: i64) -> Option<u32> {
        self.chunks.get(&rowid).copied()
    }

    /// Degree (number of distinct neighbours) of a node.
    pub fn degree(&self, id: u32) -> usize {
        self.graph.degree(id)
    }

    /// Neighbours of a node with the edge weight and relation, heaviest first.
    pub fn neighbors(&self, id: u32) -> Vec<(u32, f32, &str)> {
        if id as usize >= self.nodes.len() {
            return Vec::new();
        }
        let mut out: Vec<(u32, f32, &str)> = self
            .graph
            .neighbors(id)
            .map(|(n, w)| (n, w, self.relation(id, n)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    /// The relation on the edge between two nodes (`""` when there is none).
    pub fn relation(&self, a: u32, b: u32) -> &str {
        self.rels
            .get(&(a.min(b), a.max(b)))
            .map_or("", String::as_str)
    }

    /// Entities the query names: each run of one to three words whose key is
    /// a node (single words: four letters or more, no stop words).
    pub fn query_entities(&self, query: &str) -> Vec<u32> {
        let words: Vec<&str> = query
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-' | ':')))
            .map(|w| w.trim_matches(|c: char| matches!(c, '.' | ':' | '-')))
            .filter(|w| !w.is_empty())
            .collect();
        let mut out = Vec::new();
        for n in (1..=3).rev() {
            for win in words.windows(n) {
                if n == 1
                    && (win[0].chars().count() < 4
                        || STOP_WORDS.contains(&win[0].to_lowercase().as_str()))
                {
                    continue;
                }
                let name = win.join(" ");
                let key = entity_key(&name);
                if key.is_empty() || key.chars().all(|c| c.is_ascii_digit()) {
                    continue;
                }
                if let Some(&id) = self.entities.get(&key)
                    && !out.contains(&id)
                {
                    out.push(id);
                }
            }
        }
        out
    }

    /// Personalized PageRank from `seeds`; chunks ranked by the mass the
    /// links bring them — a node's PPR score less its own restart share
    /// (`restart × its normalised seed weight`) — so a seed ranks here only
    /// as far as other seeds lead to it, and a chunk no retriever found can
    /// rank first. At most `limit`: `(chunk row id, score)`.
    pub fn rank(&self, seeds: &[(u32, f32)], params: &PprParams, limit: usize) -> Vec<(i64, f64)> {
        if seeds.is_empty() || self.is_empty() {
            return Vec::new();
        }
        let mut scores = personalized_pagerank(&self.graph, seeds, params);
        let total: f32 = seeds
            .iter()
            .filter(|(n, w)| (*n as usize) < scores.len() && w.is_finite() && *w > 0.0)
            .map(|(_, w)| *w)
            .sum();
        if total > 0.0 {
            for (n, w) in seeds {
                if let Some(s) = scores.get_mut(*n as usize)
                    && w.is_finite()
                    && *w > 0.0
                {
                    *s = (*s - params.restart * w / total).max(0.0);
                }
            }
        }
        let mut out: Vec<(i64, f64)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 1e-9)
            .filter_map(|(i, s)| match &self.nodes[i] {
                NodeRef::Chunk(c) => Some((*c, f64::from(*s))),
                NodeRef::Entity { .. } => None,
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }

    /// Paths from the nearest seed to each node, for `explain`.
    pub fn seed_paths(&self, seeds: &[u32], max_hops: usize) -> SeedPaths {
        SeedPaths::new(&self.graph, seeds, max_hops)
    }

    /// Shortest path (by hops) between two nodes.
    pub fn path(&self, a: u32, b: u32, max_hops: usize) -> Option<Vec<u32>> {
        shortest_path(&self.graph, a, b, max_hops)
    }

    /// Leiden communities (modularity, resolution 1), each with its `central`
    /// most central entity nodes.
    pub fn communities(&self, central: usize) -> (Vec<Community>, f64) {
        let found = leiden(&self.graph, &LeidenParams::default());
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); found.count];
        for (node, &c) in found.membership.iter().enumerate() {
            members[c as usize].push(node as u32);
        }
        let out = members
            .into_iter()
            .enumerate()
            .map(|(id, m)| {
                let ranked = central_members(&self.graph, &found.membership, id as u32, m.len());
                let central = ranked
                    .into_iter()
                    .filter(|n| matches!(self.nodes[*n as usize], NodeRef::Entity { .. }))
                    .take(central)
                    .collect();
                Community {
                    id: id as u32,
                    members: m,
                    central,
                }
            })
            .collect();
        (out, found.modularity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge<'a>(chunk: i64, dst: &'a str, rel: &'a str) -> EdgeIn<'a> {
        EdgeIn {
            chunk: Some(chunk),
            src: None,
            dst,
            dst_name: dst,
            rel,
            weight: cairn_core::weights::of(rel),
        }
    }

    /// doc chunk 1 names "login throttling"; memory chunk 2 ties it to
    /// `RateGate`; code chunk 3 defines `RateGate`; chunk 4 is unrelated.
    fn fixture() -> KnowledgeGraph {
        let rel = EdgeIn {
            chunk: None,
            src: Some(("loginthrottling", "Login throttling")),
            dst: "rategate",
            dst_name: "RateGate",
            rel: "implemented_by",
            weight: 1.0,
        };
        KnowledgeGraph::build(vec![
            edge(1, "loginthrottling", "heading"),
            edge(2, "rategate", "mentions"),
            rel,
            edge(3, "rategate", "defines"),
            edge(3, "admit", "defines"),
            edge(4, "unrelated", "defines"),
        ])
    }

    #[test]
    fn ppr_reaches_code_through_a_relation() {
        let g = fixture();
        let seeds = [(g.chunk_node(1).unwrap(), 1.0)];
        let ranked = g.rank(&seeds, &PprParams::default(), 10);
        let ids: Vec<i64> = ranked.iter().map(|r| r.0).collect();
        assert!(ids.contains(&3), "the code is reached: {ranked:?}");
        assert!(!ids.contains(&4), "the unrelated chunk is not: {ids:?}");
        assert!(
            ids.contains(&1),
            "a seed keeps the mass links bring back to it: {ranked:?}"
        );
        let only_restart = ranked.iter().find(|r| r.0 == 1).unwrap().1;
        assert!(
            only_restart < 0.3,
            "the restart share is removed: {only_restart}"
        );
        let paths = g.seed_paths(&[seeds[0].0], 4);
        let p = paths.path_to(g.chunk_node(3).unwrap()).unwrap();
        assert_eq!(
            p.len(),
            4,
            "chunk 1 → login throttling → RateGate → chunk 3"
        );
        assert_eq!(g.relation(p[1], p[2]), "implemented_by");
    }

    #[test]
    fn query_names_entities_across_conventions() {
        let g = fixture();
        let found = g.query_entities("where is login throttling done? RateGate");
        assert!(found.contains(&g.entity("Login throttling").unwrap()));
        assert!(found.contains(&g.entity("rate_gate").unwrap()));
        assert!(g.query_entities("the and where").is_empty());
        assert!(g.rank(&[], &PprParams::default(), 5).is_empty());
    }

    #[test]
    fn neighbors_and_paths() {
        let g = fixture();
        let rg = g.entity("RateGate").unwrap();
        let n = g.neighbors(rg);
        assert_eq!(n.len(), 3, "{n:?}");
        assert!(n.iter().any(|(_, _, r)| *r == "implemented_by"));
        let a = g.chunk_node(1).unwrap();
        let b = g.chunk_node(3).unwrap();
        assert_eq!(g.path(a, b, 6).map(|p| p.len()), Some(4));
        assert_eq!(g.path(a, g.chunk_node(4).unwrap(), 6), None);
        let (communities, _) = g.communities(3);
        let total: usize = communities.iter().map(|c| c.members.len()).sum();
        assert_eq!(total, g.node_count());
    }
}
