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

use cairn_core::{ChunkId, Relation, Scored, entity_key};

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
    /// The relation.
    pub rel: Relation,
    /// Weight.
    pub weight: f32,
    /// Path of the document the edge was found in.
    pub path: &'a str,
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

/// Whether one query word (the `i`-th) names an entity on its own: written
/// as an identifier, or a capitalised word of four letters or more past the
/// first (`Switchboard` in "where is Switchboard used").
fn names_one(word: &str, i: usize) -> bool {
    looks_like_identifier(word)
        || (i > 0 && word.chars().count() >= 4 && word.starts_with(|c: char| c.is_uppercase()))
}

/// Whether a word is written as a code identifier: an inner `_`, `::`, `.`
/// or `/`, a digit, or an upper-case letter after the first.
fn looks_like_identifier(word: &str) -> bool {
    let inner = word.trim_matches(|c: char| !c.is_alphanumeric());
    inner.contains(['_', ':', '.', '/'])
        || inner.chars().any(|c| c.is_ascii_digit())
        || inner.chars().skip(1).any(char::is_uppercase)
}

/// Chunk row id → node. Row ids are the store's own integers, not an
/// outsider's keys, so they need no DoS-resistant hash: SipHash was a
/// tenth of a one-off CLI search that reads the PowerShell corpus's graph
/// (122,627 chunk nodes) from its file.
pub(crate) type RowMap = HashMap<i64, u32, std::hash::BuildHasherDefault<RowHasher>>;

/// Fibonacci hashing of one integer key ([`RowMap`], node ids).
#[derive(Default)]
pub(crate) struct RowHasher(u64);

impl std::hash::Hasher for RowHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64 ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_i64(i64::from(n));
    }
}

/// The key of node `id` when it is an entity.
pub(crate) fn key_of(nodes: &[NodeRef], id: u32) -> Option<&str> {
    match nodes.get(id as usize) {
        Some(NodeRef::Entity { key, .. }) => Some(key),
        _ => None,
    }
}

/// Levenshtein distance between two words.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

/// The entity nodes of `nodes`, sorted by key, then id ([`KnowledgeGraph::by_key`]).
pub(crate) fn sort_by_key(nodes: &[NodeRef]) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..nodes.len() as u32)
        .filter(|&id| key_of(nodes, id).is_some())
        .collect();
    ids.sort_by(|&a, &b| key_of(nodes, a).cmp(&key_of(nodes, b)).then(a.cmp(&b)));
    ids
}

/// A graph of chunks and entities built from the index's links.
#[derive(Debug)]
pub struct KnowledgeGraph {
    pub(crate) graph: Graph,
    pub(crate) nodes: Vec<NodeRef>,
    pub(crate) chunks: RowMap,
    /// The definitions of ambiguous names by `key@path` (a name several
    /// files define is one node per file).
    pub(crate) definitions: HashMap<String, u32>,
    /// Entity nodes sorted by their [`entity_key`] (then id): the nodes a
    /// key stands for are one run of it, found by binary search. A sorted
    /// list rather than a map, so a graph read from its file needs no
    /// hashing of every name.
    pub(crate) by_key: Vec<u32>,
    /// Relation names, each once.
    pub(crate) rel_names: Vec<String>,
    /// The relation of each directed edge, an index into `rel_names`,
    /// aligned with the graph's neighbour ids (the first relation seen
    /// between two nodes). A map keyed by node pair cost ~50 bytes an edge
    /// (737,561 links on the PowerShell corpus).
    pub(crate) edge_rels: Vec<u32>,
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
    /// Version of what [`KnowledgeGraph::build`] makes of the links: a graph
    /// kept in a file by another build is read back only with the same
    /// version. Bump it with any change to how links become nodes and edges.
    pub const BUILD_VERSION: u32 = 2;

    /// Builds the graph. Parallel edges add up; self-loops are dropped.
    ///
    /// A name that files define more than once (`BinaryDetection`: a struct
    /// in one file, an enum in another) is one node per defining file,
    /// labelled `name in path`: a `defines` edge goes to its own file's node,
    /// an edge from a chunk of a defining file to that file's node, and any
    /// other edge that names it (a call or mention elsewhere, a relation
    /// between entities) to every definition, its weight split between
    /// them. So links do not run from one definition to an unrelated
    /// namesake.
    pub fn build<'a>(edges: impl IntoIterator<Item = EdgeIn<'a>>) -> KnowledgeGraph {
        let edges: Vec<EdgeIn<'a>> = edges
            .into_iter()
            .filter(|e| !e.dst.is_empty() && e.weight.is_finite() && e.weight > 0.0)
            .collect();
        let defined_in = ambiguous_definitions(&edges);

        let mut nodes = Vec::new();
        let mut chunks = RowMap::default();
        let mut entities: HashMap<String, u32> = HashMap::new();
        let mut rels = HashMap::new();
        let mut list = Vec::new();
        let mut entity =
            |key: &str, name: &str, file: Option<&str>, nodes: &mut Vec<NodeRef>| -> u32 {
                // Only a definition of an ambiguous name needs a new key.
                let full = file.map(|f| format!("{key}@{f}"));
                if let Some(&id) = entities.get(full.as_deref().unwrap_or(key)) {
                    return id;
                }
                let id = nodes.len() as u32;
                nodes.push(NodeRef::Entity {
                    key: key.to_string(),
                    name: match file {
                        Some(f) => format!("{name} in {f}"),
                        None => name.to_string(),
                    },
                });
                entities.insert(full.unwrap_or_else(|| key.to_string()), id);
                id
            };
        // The nodes an edge's end `key` stands for, each with its share of
        // the weight: one node, or the definitions of an ambiguous name
        // (the one in the edge's own file when it has one).
        let mut ends =
            |key: &str, name: &str, e: &EdgeIn<'_>, nodes: &mut Vec<NodeRef>| -> Vec<(u32, f32)> {
                match defined_in.get(key) {
                    None => vec![(entity(key, name, None, nodes), 1.0)],
                    Some(files) if e.chunk.is_some() && files.contains(&e.path) => {
                        vec![(entity(key, name, Some(e.path), nodes), 1.0)]
                    }
                    Some(files) => {
                        let share = 1.0 / files.len() as f32;
                        files
                            .iter()
                            .map(|f| (entity(key, name, Some(f), nodes), share))
                            .collect()
                    }
                }
            };
        for e in &edges {
            let from: Vec<(u32, f32)> = match (e.chunk, e.src) {
                (Some(c), _) => vec![(
                    *chunks.entry(c).or_insert_with(|| {
                        nodes.push(NodeRef::Chunk(c));
                        nodes.len() as u32 - 1
                    }),
                    1.0,
                )],
                (None, Some((key, name))) if !key.is_empty() => ends(key, name, e, &mut nodes),
                _ => continue,
            };
            let to = ends(e.dst, e.dst_name, e, &mut nodes);
            for &(a, wa) in &from {
                for &(b, wb) in &to {
                    if a == b {
                        continue;
                    }
                    // The first relation seen between two nodes names the
                    // edge, but a definition outranks the rest: a chunk
                    // merged from a stub struct and the code before it that
                    // uses it first is still where the struct is defined.
                    let rel = rels
                        .entry((a.min(b), a.max(b)))
                        .or_insert_with(|| e.rel.clone());
                    if e.rel == Relation::Defines && *rel != Relation::Defines {
                        *rel = e.rel.clone();
                    }
                    list.push((a, b, e.weight * wa * wb));
                }
            }
        }
        let graph = Graph::from_edges(nodes.len(), &list);
        let (rel_names, edge_rels) = edge_relations(&graph, &rels);
        let definitions: HashMap<String, u32> = entities
            .into_iter()
            .filter(|(full, id)| {
                matches!(&nodes[*id as usize], NodeRef::Entity { key, .. } if key != full)
            })
            .collect();
        let by_key = sort_by_key(&nodes);
        KnowledgeGraph {
            graph,
            nodes,
            chunks,
            definitions,
            by_key,
            rel_names,
            edge_rels,
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

    /// The node of an entity name (any naming convention), if there is one:
    /// for a name defined in several files, the first definition (see
    /// [`KnowledgeGraph::entity_nodes`]).
    /// `name@path` names one file's definition.
    pub fn entity(&self, name: &str) -> Option<u32> {
        if let Some((n, path)) = name.rsplit_once('@')
            && let Some(&id) = self.definitions.get(&format!("{}@{path}", entity_key(n)))
        {
            return Some(id);
        }
        self.entity_nodes(name).first().copied()
    }

    /// Names of the entities nearest to `name`, for a name with no node (at
    /// most `max`, each one [`Self::entity`] finds): another spelling of the
    /// same name needs none (keys are case- and separator-folded), so these
    /// are keys within a small edit distance of its key (`Consol`,
    /// `Conosle`), that start with it (`ConsoleOptions`) or that it starts
    /// with; nearest first, then the most linked. For `name@path` with no
    /// such definition, the `name@path` of each definition.
    pub fn suggest(&self, name: &str, max: usize) -> Vec<String> {
        let (base, at) = match name.rsplit_once('@') {
            Some((n, _)) => (n, true),
            None => (name, false),
        };
        let key = entity_key(base);
        if key.is_empty() || max == 0 {
            return Vec::new();
        }
        // The file of each definition of an ambiguous name (its node's
        // name is `name in file`).
        let files: HashMap<u32, &str> = self
            .definitions
            .iter()
            .filter_map(|(full, &id)| Some((id, full.split_once('@')?.1)))
            .collect();
        let plain = |id: u32| -> Option<String> {
            let NodeRef::Entity { name, .. } = self.node(id)? else {
                return None;
            };
            Some(match files.get(&id) {
                Some(f) => name
                    .strip_suffix(&format!(" in {f}"))
                    .unwrap_or(name)
                    .to_string(),
                None => name.clone(),
            })
        };
        if at {
            let mut defs: Vec<String> = self
                .nodes_of_key(&key)
                .iter()
                .filter_map(|id| Some(format!("{}@{}", plain(*id)?, files.get(id)?)))
                .collect();
            defs.sort();
            if defs.is_empty() {
                // A name one file defines: the name alone.
                defs.extend(self.nodes_of_key(&key).first().and_then(|id| plain(*id)));
            }
            if !defs.is_empty() {
                defs.truncate(max);
                return defs;
            }
        }
        let q: Vec<char> = key.chars().collect();
        let within = (q.len() / 4).clamp(1, 3);
        // (distance, links, node) per distinct key
        let mut near: Vec<(usize, usize, u32)> = Vec::new();
        let mut i = 0;
        while i < self.by_key.len() {
            let first = self.by_key[i];
            let k = key_of(&self.nodes, first).unwrap_or("");
            let run = self.nodes_of_key(k);
            i += run.len().max(1);
            if k == key {
                continue;
            }
            let kc: Vec<char> = k.chars().collect();
            let prefix = (q.len() >= 3 && k.starts_with(key.as_str()))
                || (kc.len() >= 3 && kc.len() * 2 >= q.len() && key.starts_with(k));
            if !prefix && kc.len().abs_diff(q.len()) > within {
                continue;
            }
            let d = edit_distance(&q, &kc);
            if prefix || d <= within {
                let links = run.iter().map(|&n| self.degree(n)).sum();
                near.push((d, links, first));
            }
        }
        near.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        near.into_iter()
            .filter_map(|(_, _, id)| plain(id))
            .take(max)
            .collect()
    }

    /// Every node an entity name stands for: one, or each file's definition
    /// of a name defined in several.
    pub fn entity_nodes(&self, name: &str) -> &[u32] {
        self.nodes_of_key(&entity_key(name))
    }

    /// The entity nodes whose key is `key` (a run of [`Self::by_key`]).
    pub(crate) fn nodes_of_key(&self, key: &str) -> &[u32] {
        let key_of = |id: &u32| key_of(&self.nodes, *id).unwrap_or("");
        let lo = self.by_key.partition_point(|id| key_of(id) < key);
        let hi = lo + self.by_key[lo..].partition_point(|id| key_of(id) == key);
        &self.by_key[lo..hi]
    }

    /// The node of a chunk row id.
    pub fn chunk_node(&self, rowid: i64) -> Option<u32> {
        self.chunks.get(&rowid).copied()
    }

    /// How specific a node is, 0–1: `ln(1 + C / degree) / ln(1 + C)` with
    /// `C` the graph's chunk nodes, an inverse document frequency over
    /// links. A name one chunk defines is near 1; a person named in every
    /// session of a conversation, or a heading every guide has, near 0.
    pub fn specificity(&self, id: u32) -> f32 {
        let c = self.chunks.len().max(1) as f32;
        let d = self.graph.degree(id).max(1) as f32;
        ((1.0 + c / d).ln() / (1.0 + c).ln()).clamp(0.0, 1.0)
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
        self.graph
            .edge_index(a, b)
            .and_then(|i| self.edge_rels.get(i))
            .and_then(|&r| self.rel_names.get(r as usize))
            .map_or("", String::as_str)
    }

    /// Entities the query names: [`KnowledgeGraph::query_entities_weighted`]
    /// without the weights.
    pub fn query_entities(&self, query: &str) -> Vec<u32> {
        self.query_entities_weighted(query)
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    /// [`KnowledgeGraph::query_entities`], each with its seed weight: 1, split
    /// evenly between the definitions of a name several files define.
    ///
    /// A name is a run of two or three query words whose key is a node, or
    /// one word written as an identifier (`snake_case`, `CamelCase`, `a::b`,
    /// a digit) or capitalised past the first: one plain word names no
    /// entity, since "links" in "are email addresses in automatic links
    /// obscured" named the heading *Links* of a style guide and sent the walk
    /// there (code-QA chunk hit@5 under RRF 0.767 → 0.795 without).
    pub fn query_entities_weighted(&self, query: &str) -> Vec<(u32, f32)> {
        let words: Vec<&str> = query
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '-' | ':')))
            .map(|w| w.trim_matches(|c: char| matches!(c, '.' | ':' | '-')))
            .filter(|w| !w.is_empty())
            .collect();
        let mut out = Vec::new();
        for n in (1..=3).rev() {
            for (i, win) in words.windows(n).enumerate() {
                if n == 1 && !names_one(win[0], i) {
                    continue;
                }
                let name = win.join(" ");
                let key = entity_key(&name);
                if key.is_empty() || key.chars().all(|c| c.is_ascii_digit()) {
                    continue;
                }
                let ids = self.nodes_of_key(&key);
                if ids.is_empty() {
                    continue;
                }
                // A name several files define: each definition a share.
                let share = 1.0 / ids.len() as f32;
                for &id in ids {
                    if !out.iter().any(|(n, _)| *n == id) {
                        out.push((id, share));
                    }
                }
            }
        }
        out
    }

    /// Personalized PageRank from `seeds`; chunks ranked by the mass the
    /// links bring them — a node's PPR score less its own restart share
    /// (`restart × its normalised seed weight`) — so a seed ranks here only
    /// as far as other seeds lead to it, and a chunk no retriever found can
    /// rank first. At most `limit`, chunks scored.
    pub fn rank(
        &self,
        seeds: &[(u32, f32)],
        params: &PprParams,
        limit: usize,
    ) -> Vec<Scored<ChunkId>> {
        self.rank_views(seeds, params, limit, &[1.0])
            .pop()
            .unwrap_or_default()
    }

    /// [`KnowledgeGraph::rank`] from one PPR run, once per share in
    /// `seed_shares`: each view takes that share of its own restart mass off
    /// every seed (1: [`KnowledgeGraph::rank`]; 0.5: a seed keeps half of it,
    /// so what the query points at ranks in the graph's list too, ahead of
    /// what merely links to it).
    pub fn rank_views(
        &self,
        seeds: &[(u32, f32)],
        params: &PprParams,
        limit: usize,
        seed_shares: &[f32],
    ) -> Vec<Vec<Scored<ChunkId>>> {
        if seeds.is_empty() || self.is_empty() {
            return vec![Vec::new(); seed_shares.len()];
        }
        let scores = personalized_pagerank(&self.graph, seeds, params);
        let valid =
            |(n, w): &&(u32, f32)| (*n as usize) < scores.len() && w.is_finite() && *w > 0.0;
        let total: f32 = seeds.iter().filter(valid).map(|(_, w)| *w).sum();
        // Each seed's restart mass (a node seeded twice: both), taken off
        // per view as the scores are read, so the scores are not copied.
        let mut restart: HashMap<u32, f32, std::hash::BuildHasherDefault<RowHasher>> =
            HashMap::default();
        if total > 0.0 {
            for (n, w) in seeds.iter().filter(valid) {
                *restart.entry(*n).or_default() += params.restart * w / total;
            }
        }
        seed_shares
            .iter()
            .map(|&share| {
                let mut out: Vec<Scored<ChunkId>> = scores
                    .iter()
                    .enumerate()
                    .filter_map(|(i, &s)| {
                        let NodeRef::Chunk(c) = &self.nodes[i] else {
                            return None;
                        };
                        let s = match restart.get(&(i as u32)) {
                            Some(m) => (s - share * m).max(0.0),
                            None => s,
                        };
                        (s > 1e-9).then(|| Scored::new(ChunkId(*c), f64::from(s)))
                    })
                    .collect();
                // Best first (ties by row id: a total order), only the
                // first `limit` sorted: every chunk node has a score.
                let order = |a: &Scored<ChunkId>, b: &Scored<ChunkId>| {
                    b.score.total_cmp(&a.score).then(a.id.cmp(&b.id))
                };
                if limit < out.len() {
                    out.select_nth_unstable_by(limit, order);
                    out.truncate(limit);
                }
                out.sort_unstable_by(order);
                out
            })
            .collect()
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

/// Names defined in two files or more, with those files.
fn ambiguous_definitions<'a>(edges: &[EdgeIn<'a>]) -> HashMap<&'a str, Vec<&'a str>> {
    let mut defined_in: HashMap<&str, Vec<&str>> = HashMap::new();
    for e in edges {
        if e.chunk.is_some() && e.rel == Relation::Defines {
            let files = defined_in.entry(e.dst).or_default();
            if !files.contains(&e.path) {
                files.push(e.path);
            }
        }
    }
    defined_in.retain(|_, files| files.len() > 1);
    defined_in
}

/// The relation of each edge of `graph`, in its edge order: the names, each
/// once, and per edge the index of its name (`rels` keyed by the edge's
/// nodes, lower first).
fn edge_relations(graph: &Graph, rels: &HashMap<(u32, u32), Relation>) -> (Vec<String>, Vec<u32>) {
    let (offsets, targets, _) = graph.parts();
    let mut rel_names: Vec<String> = Vec::new();
    let mut rel_ids: HashMap<&str, u32> = HashMap::new();
    let mut edge_rels = Vec::with_capacity(targets.len());
    for a in 0..offsets.len().saturating_sub(1) {
        for &b in &targets[offsets[a]..offsets[a + 1]] {
            let a = a as u32;
            let name = rels.get(&(a.min(b), a.max(b))).map_or("", Relation::name);
            let id = *rel_ids.entry(name).or_insert_with(|| {
                rel_names.push(name.to_string());
                rel_names.len() as u32 - 1
            });
            edge_rels.push(id);
        }
    }
    (rel_names, edge_rels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge<'a>(chunk: i64, dst: &'a str, rel: &str) -> EdgeIn<'a> {
        let rel = Relation::named(rel);
        EdgeIn {
            chunk: Some(chunk),
            src: None,
            dst,
            dst_name: dst,
            weight: rel.weight(),
            rel,
            path: "",
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
            rel: Relation::named("implemented_by"),
            weight: 1.0,
            path: "",
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
        let ids: Vec<i64> = ranked.iter().map(|r| r.id.0).collect();
        assert!(ids.contains(&3), "the code is reached: {ranked:?}");
        assert!(!ids.contains(&4), "the unrelated chunk is not: {ids:?}");
        assert!(
            ids.contains(&1),
            "a seed keeps the mass links bring back to it: {ranked:?}"
        );
        let only_restart = ranked.iter().find(|r| r.id.0 == 1).unwrap().score;
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
    fn a_name_two_files_define_is_two_nodes() {
        let e = |chunk: i64, dst: &'static str, rel: &'static str, path: &'static str| EdgeIn {
            path,
            ..edge(chunk, dst, rel)
        };
        let g = KnowledgeGraph::build(vec![
            e(1, "binarydetection", "defines", "searcher/mod.rs"),
            e(2, "binarydetection", "defines", "line_buffer.rs"),
            e(3, "binarydetection", "calls", "searcher/mod.rs"),
            e(4, "binarydetection", "mentions", "guide.md"),
            e(5, "rategate", "defines", "gate.rs"),
            e(6, "rategate", "calls", "main.rs"),
        ]);
        let defs = g.entity_nodes("BinaryDetection");
        assert_eq!(defs.len(), 2, "one node per defining file");
        let (c1, c2, c3, c4) = (
            g.chunk_node(1).unwrap(),
            g.chunk_node(2).unwrap(),
            g.chunk_node(3).unwrap(),
            g.chunk_node(4).unwrap(),
        );
        assert_eq!(
            g.path(c1, c2, 3),
            None,
            "namesakes are not linked through their name"
        );
        assert_eq!(
            g.path(c3, c1, 6).map(|p| p.len()),
            Some(3),
            "a call in the defining file"
        );
        assert_eq!(g.path(c3, c2, 3), None);
        assert!(
            g.path(c4, c1, 6).is_some() && g.path(c4, c2, 6).is_some(),
            "a mention elsewhere reaches both"
        );
        let half: Vec<f32> = g.neighbors(c4).iter().map(|n| n.1).collect();
        assert_eq!(half.len(), 2);
        assert!(
            half.iter()
                .all(|w| (*w - Relation::Mentions.weight() / 2.0).abs() < 1e-6),
            "{half:?}"
        );
        let one = g.entity("BinaryDetection@line_buffer.rs").unwrap();
        assert!(defs.contains(&one));
        assert!(
            matches!(g.node(one), Some(NodeRef::Entity { name, .. }) if name == "binarydetection in line_buffer.rs")
        );
        assert_eq!(
            g.entity_nodes("RateGate").len(),
            1,
            "a name one file defines stays one node"
        );
        let seeds = g.query_entities_weighted("where is BinaryDetection decided");
        assert_eq!(seeds.len(), 2);
        assert!(seeds.iter().all(|s| (s.1 - 0.5).abs() < 1e-6), "{seeds:?}");
    }

    #[test]
    fn a_definition_names_the_edge_whatever_came_first() {
        let g = KnowledgeGraph::build(vec![
            edge(1, "variantrefdeserializer", "uses"),
            edge(1, "variantrefdeserializer", "defines"),
            edge(1, "value", "calls"),
        ]);
        let (c, e) = (
            g.chunk_node(1).unwrap(),
            g.entity("VariantRefDeserializer").unwrap(),
        );
        assert_eq!(g.relation(c, e), "defines");
        assert_eq!(g.relation(e, c), "defines");
        assert_eq!(g.relation(c, g.entity("value").unwrap()), "calls");
    }

    #[test]
    fn an_unknown_name_gets_the_nearest_names() {
        let e = |chunk: i64, dst: &'static str, name: &'static str, path: &'static str| EdgeIn {
            path,
            dst_name: name,
            ..edge(chunk, dst, "defines")
        };
        let g = KnowledgeGraph::build(vec![
            e(1, "console", "Console", "rich/console.py"),
            e(1, "consoleoptions", "ConsoleOptions", "rich/console.py"),
            e(2, "consoleoptions", "ConsoleOptions", "rich/console.py"),
            e(3, "control", "Control", "rich/control.py"),
            e(4, "wrapper", "Wrapper", "tests/a.rs"),
            e(5, "wrapper", "Wrapper", "tests/b.rs"),
        ]);
        assert_eq!(g.suggest("Consol", 5), ["Console", "ConsoleOptions"]);
        assert_eq!(g.suggest("consle", 5), ["Console"]);
        assert_eq!(g.suggest("ConsoleOption", 1), ["ConsoleOptions"]);
        assert_eq!(g.suggest("Wraper", 5), ["Wrapper"]);
        assert_eq!(
            g.suggest("Wrapper@tests/c.rs", 5),
            ["Wrapper@tests/a.rs", "Wrapper@tests/b.rs"]
        );
        assert_eq!(g.suggest("Console@rich/other.py", 5), ["Console"]);
        for s in g.suggest("Wrapper@x", 5) {
            assert!(g.entity(&s).is_some(), "{s}");
        }
        assert!(g.suggest("Renderable", 5).is_empty());
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
