//! The knowledge graph: the in-memory graph built from the index's links
//! (cached per index generation; search's graph retriever uses it too), and
//! its views for people and agents — edge count, neighbours of an entity,
//! the path between two, communities — and `relate` (explicit entities,
//! relations and observations, stored as memory files so they survive a
//! rebuild).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cairn_core::{
    IndexSnapshot, Kind, Memory, MemoryRelation, Relation, content_hash, entity_key, sync,
};
use cairn_search::{CacheFileError, EdgeIn, KnowledgeGraph, NodeRef};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::vault::{Vault, now_rfc3339};

/// A node, as shown to a user.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GraphNode {
    /// Entity name, or the chunk's breadcrumb.
    pub label: String,
    /// `entity`, or the chunk's kind: `doc`, `memory`, `code`.
    pub kind: String,
    /// The chunk's file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The chunk's lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<(u32, u32)>,
    /// Neighbours in the graph.
    pub degree: usize,
}

/// One neighbour of a node.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Neighbor {
    /// The neighbour.
    pub node: GraphNode,
    /// Relation on the edge (written `defines`, `calls`, `mentions`, …).
    pub rel: Relation,
    /// Edge weight.
    pub weight: f32,
}

/// An entity and what it is linked to.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Neighborhood {
    /// The entity.
    pub entity: GraphNode,
    /// Its neighbours, heaviest edge first.
    pub neighbors: Vec<Neighbor>,
}

/// A community of related files and concepts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CommunityView {
    /// Id (largest first).
    pub id: u32,
    /// Label: the names that distinguish it ([`distinguishing_names`]).
    pub label: String,
    /// Nodes (chunks and entities) in it.
    pub size: usize,
    /// Files with chunks in it, most chunks first.
    pub files: Vec<String>,
    /// Its most central entities.
    pub entities: Vec<String>,
}

/// All communities.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Communities {
    /// Communities of at least `min_size` nodes, largest first (a page of
    /// them when a limit was asked).
    pub communities: Vec<CommunityView>,
    /// How many communities of at least `min_size` nodes there are, before
    /// any limit: what a page that shows the largest few says in all.
    #[serde(default)]
    pub total: usize,
    /// Modularity of the whole partition.
    pub modularity: f64,
    /// Nodes and edges of the graph.
    pub nodes: usize,
    /// Undirected edges.
    pub edges: usize,
    /// Milliseconds Leiden took.
    pub millis: f64,
}

/// An entity for `relate` (the shape of the official MCP memory server's
/// `create_entities`). Its fields carry no schema descriptions: the tool's
/// description gives the shape, and `tools/list` stays small.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntityInput {
    /// A class, service, concept or person.
    #[schemars(description = "")]
    pub name: String,
    /// What sort of thing it is.
    #[schemars(description = "")]
    #[serde(default)]
    pub entity_type: String,
    /// Facts about it.
    #[schemars(description = "")]
    #[serde(default)]
    pub observations: Vec<String>,
}

/// A relation for `relate` (`create_relations`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelationInput {
    /// Source entity.
    #[schemars(description = "")]
    pub from: String,
    /// Target entity.
    #[schemars(description = "")]
    pub to: String,
    /// Relation in active voice: `implements`, `depends_on`, `implemented_by`.
    #[schemars(description = "")]
    pub relation_type: String,
}

/// Observations for `relate` (`add_observations`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservationInput {
    /// The entity they are about (created if new).
    #[schemars(description = "")]
    pub entity_name: String,
    /// The facts.
    #[schemars(description = "")]
    pub contents: Vec<String>,
}

/// What `relate` wrote.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Related {
    /// Entity memories created.
    pub entities_created: Vec<String>,
    /// Entity memories that got new observations or a type.
    pub entities_updated: Vec<String>,
    /// Relations stored (one memory each; a relation stored before is not
    /// stored twice).
    pub relations_added: usize,
    /// Relations that were already there.
    pub relations_existing: usize,
    /// Memory ids written.
    pub ids: Vec<String>,
}

fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let s = s
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let short: String = s.chars().take(48).collect();
    format!(
        "{short}-{}",
        &content_hash(entity_key(name).as_bytes())[..8]
    )
}

/// A read of the graph's file running on another thread
/// ([`Engine::start_graph_read`]), for [`Engine::knowledge_graph_with`].
pub(crate) struct GraphRead {
    generation: i64,
    handle: std::thread::JoinHandle<FileGraph>,
}

/// What reading the graph's file gave.
enum FileGraph {
    Read(Box<KnowledgeGraph>),
    /// No file, or one of another state of the index: nothing to say.
    Absent,
    /// A file that could not be read: said, and the graph built again.
    Broken(String),
}

/// Reads the graph file at `path` made for `stamp`.
fn read_graph_file(path: &std::path::Path, stamp: &str) -> FileGraph {
    let started = std::time::Instant::now();
    let bytes = match cairn_search::map_file(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileGraph::Absent,
        Err(e) => return FileGraph::Broken(format!("{}: {e}", path.display())),
    };
    match KnowledgeGraph::from_bytes(&bytes, stamp) {
        Ok(kg) => {
            tracing::debug!(
                ms = started.elapsed().as_secs_f64() * 1e3,
                bytes = bytes.len(),
                "graph read from its file"
            );
            FileGraph::Read(Box::new(kg))
        }
        Err(CacheFileError::Stale) => FileGraph::Absent,
        Err(e) => FileGraph::Broken(format!("{}: {e}", path.display())),
    }
}

impl Engine {
    /// The knowledge graph, rebuilt from the index's links when the index has
    /// changed since. A process that has none in memory first reads the one
    /// another process left beside the index ([`Engine::cache_file`]) when it
    /// was built from the same state of the index, and leaves the one it
    /// builds there (`.cairn/index.sqlite.graph`): a one-off CLI search on
    /// a large index then reads the graph instead of building it
    /// (PowerShell corpus: BENCHMARKS.md).
    pub(crate) fn knowledge_graph(&self, snap: &dyn IndexSnapshot) -> Result<Arc<KnowledgeGraph>> {
        self.knowledge_graph_with(snap, None)
    }

    /// [`Engine::knowledge_graph`], the file's read already under way on
    /// another thread when `read` is given ([`Engine::start_graph_read`]).
    pub(crate) fn knowledge_graph_with(
        &self,
        snap: &dyn IndexSnapshot,
        read: Option<GraphRead>,
    ) -> Result<Arc<KnowledgeGraph>> {
        let generation = snap.generation()?;
        let mut slot = sync::lock(&self.graph);
        if let Some((g, kg)) = slot.as_ref()
            && *g == generation
        {
            return Ok(kg.clone());
        }
        let file = self.graph_file(snap, generation)?;
        let found = match (read, &file) {
            (Some(r), _) if r.generation == generation => r.handle.join().unwrap_or_else(|_| {
                FileGraph::Broken("the graph file's reading thread panicked".into())
            }),
            (_, Some((path, stamp))) => read_graph_file(path, stamp),
            (_, None) => FileGraph::Absent,
        };
        match found {
            FileGraph::Read(kg) => {
                let kg = Arc::new(*kg);
                *slot = Some((generation, kg.clone()));
                return Ok(kg);
            }
            FileGraph::Broken(e) => tracing::warn!("{e}; building the graph again"),
            FileGraph::Absent => {}
        }
        let links = snap.links()?;
        let kg = Arc::new(KnowledgeGraph::build(links.iter().map(|l| EdgeIn {
            chunk: l.chunk,
            src: l.src.as_ref().map(|(k, n)| (k.as_str(), n.as_str())),
            dst: &l.dst,
            dst_name: &l.dst_name,
            rel: l.rel.clone(),
            weight: l.weight,
            path: &l.path,
        })));
        drop(links);
        if let Some((path, stamp)) = &file
            && let Err(e) = crate::vault::write_atomic(path, kg.to_bytes(stamp))
        {
            // The graph still serves this process; the next one builds it.
            tracing::warn!("{e}; the graph is not kept for the next process");
        }
        *slot = Some((generation, kg.clone()));
        Ok(kg)
    }

    /// The graph's file for `generation` and its stamp.
    fn graph_file(
        &self,
        snap: &dyn IndexSnapshot,
        generation: i64,
    ) -> Result<Option<(std::path::PathBuf, String)>> {
        self.cache_file(
            snap,
            generation,
            "graph",
            &KnowledgeGraph::BUILD_VERSION.to_string(),
        )
    }

    /// Starts reading the graph file of `snap` on another thread, when
    /// this process holds no graph of its generation and a file is there
    /// to read: a one-shot search reads it while its retrievers run.
    pub(crate) fn start_graph_read(&self, snap: &dyn IndexSnapshot) -> Result<Option<GraphRead>> {
        let generation = snap.generation()?;
        if sync::lock(&self.graph)
            .as_ref()
            .is_some_and(|(g, _)| *g == generation)
        {
            return Ok(None);
        }
        let Some((path, stamp)) = self.graph_file(snap, generation)? else {
            return Ok(None);
        };
        if !path.is_file() {
            return Ok(None);
        }
        let handle = std::thread::Builder::new()
            .name("cairn-graph-read".into())
            .spawn(move || read_graph_file(&path, &stamp));
        // No thread to spare: `knowledge_graph` reads it when asked.
        Ok(handle.ok().map(|handle| GraphRead { generation, handle }))
    }

    /// A file kept beside the index for the next process
    /// (`.cairn/index.sqlite.<suffix>`: the graph, the vector matrix) and
    /// the stamp that says which state of the index it was made from (the
    /// index's id and generation, `what`, this version of cairn); none for
    /// an index that is not a local file or does not know its own id.
    pub(crate) fn cache_file(
        &self,
        snap: &dyn IndexSnapshot,
        generation: i64,
        suffix: &str,
        what: &str,
    ) -> Result<Option<(std::path::PathBuf, String)>> {
        let Some(id) = snap.meta("index_id")? else {
            return Ok(None);
        };
        Ok(self.cache_path(suffix).map(|path| {
            let stamp = format!("{id}:{generation}:{what}:{}", env!("CARGO_PKG_VERSION"));
            (path, stamp)
        }))
    }

    /// Where [`Engine::cache_file`] keeps a file with `suffix`.
    pub(crate) fn cache_path(&self, suffix: &str) -> Option<std::path::PathBuf> {
        let index = self.index_path();
        index
            .is_file()
            .then(|| std::path::PathBuf::from(format!("{}.{suffix}", index.display())))
    }

    /// Edges in the knowledge graph.
    pub fn graph_edges(&self) -> Result<usize> {
        self.with_snapshot(|snap| Ok(self.knowledge_graph(snap)?.edge_count()))
    }

    /// The graph and the chunk rows of the nodes `pick` names (a view needs
    /// the rows of the nodes it shows: on the PowerShell corpus every chunk
    /// row was 122,627 rows of text read for a list of two neighbours).
    fn graph_rows(
        &self,
        pick: impl FnOnce(&KnowledgeGraph) -> Result<Vec<u32>>,
    ) -> Result<(Arc<KnowledgeGraph>, HashMap<i64, cairn_core::ChunkRow>)> {
        self.with_snapshot(|snap| {
            let g = self.knowledge_graph(snap)?;
            let mut ids: Vec<i64> = pick(&g)?
                .into_iter()
                .filter_map(|n| match g.node(n) {
                    Some(NodeRef::Chunk(c)) => Some(*c),
                    _ => None,
                })
                .collect();
            ids.sort_unstable();
            ids.dedup();
            let rows = snap
                .chunks(&ids)?
                .into_iter()
                .map(|r| (r.rowid, r))
                .collect();
            Ok((g, rows))
        })
    }

    /// The graph and every chunk row it holds.
    fn graph_now(&self) -> Result<(Arc<KnowledgeGraph>, HashMap<i64, cairn_core::ChunkRow>)> {
        self.graph_rows(|g| Ok((0..g.node_count() as u32).collect()))
    }

    /// A node as shown to a user.
    fn view(
        &self,
        g: &KnowledgeGraph,
        rows: &HashMap<i64, cairn_core::ChunkRow>,
        n: u32,
    ) -> GraphNode {
        match g.node(n) {
            Some(NodeRef::Chunk(c)) => match rows.get(c) {
                Some(r) => {
                    let crumb = r.chunk.breadcrumb();
                    GraphNode {
                        label: if crumb.is_empty() {
                            r.chunk.path.clone()
                        } else {
                            crumb
                        },
                        kind: kind_name(self.kind_of(&r.chunk.path)).into(),
                        path: Some(r.chunk.path.clone()),
                        lines: Some((r.chunk.start_line, r.chunk.end_line)),
                        degree: g.degree(n),
                    }
                }
                None => GraphNode {
                    label: format!("chunk {c}"),
                    kind: "chunk".into(),
                    path: None,
                    lines: None,
                    degree: g.degree(n),
                },
            },
            Some(NodeRef::Entity { name, .. }) => GraphNode {
                label: name.clone(),
                kind: "entity".into(),
                path: None,
                lines: None,
                degree: g.degree(n),
            },
            None => GraphNode {
                label: String::new(),
                kind: String::new(),
                path: None,
                lines: None,
                degree: 0,
            },
        }
    }

    /// The entity `name` (any naming convention, or a path) and its
    /// neighbours: chunks that define, call, import or mention it, and
    /// entities related to it.
    pub fn graph_neighbors(&self, name: &str, limit: usize) -> Result<Neighborhood> {
        // A name several files define: the neighbours of every definition
        // (`name@path` asks for one).
        let defs = |g: &KnowledgeGraph| -> Result<(u32, Vec<u32>)> {
            let node = g.entity(name).ok_or_else(|| no_entity(g, name))?;
            Ok(if name.contains('@') {
                (node, vec![node])
            } else {
                (node, g.entity_nodes(name).to_vec())
            })
        };
        let (g, rows) = self.graph_rows(|g| {
            let (node, defs) = defs(g)?;
            let mut shown = vec![node];
            shown.extend(defs.iter().flat_map(|d| g.neighbors(*d)).map(|n| n.0));
            Ok(shown)
        })?;
        let (node, defs) = defs(&g)?;
        let mut all: Vec<(u32, f32, &str)> = defs.iter().flat_map(|d| g.neighbors(*d)).collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        // A mention elsewhere links to every definition: list it once, by
        // its heaviest link.
        let mut seen = std::collections::HashSet::new();
        all.retain(|n| seen.insert(n.0));
        let neighbors = all
            .into_iter()
            .take(if limit == 0 { usize::MAX } else { limit })
            .map(|(n, w, rel)| Neighbor {
                node: self.view(&g, &rows, n),
                rel: Relation::named(rel),
                weight: w,
            })
            .collect();
        Ok(Neighborhood {
            entity: self.view(&g, &rows, node),
            neighbors,
        })
    }

    /// The shortest chain of links between two entities: each node with the
    /// relation to the next.
    pub fn graph_path(&self, from: &str, to: &str) -> Result<Vec<(GraphNode, String)>> {
        let find_path = |g: &KnowledgeGraph| -> Result<Vec<u32>> {
            let find = |name: &str| g.entity(name).ok_or_else(|| no_entity(g, name));
            let (a, b) = (find(from)?, find(to)?);
            g.path(a, b, 8).ok_or_else(|| {
                Error::NotFound(format!("no path from {from:?} to {to:?} within 8 links"))
            })
        };
        let mut path = Vec::new();
        let (g, rows) = self.graph_rows(|g| {
            path = find_path(g)?;
            Ok(path.clone())
        })?;
        Ok(path
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let rel = path
                    .get(i + 1)
                    .map_or("", |m| g.relation(*n, *m))
                    .to_string();
                (self.view(&g, &rows, *n), rel)
            })
            .collect())
    }

    /// Leiden communities of the graph with at least `min_size` nodes.
    pub fn graph_communities(&self, min_size: usize) -> Result<Communities> {
        let (g, rows) = self.graph_now()?;
        let started = std::time::Instant::now();
        let (found, modularity) = g.communities(5);
        let millis = started.elapsed().as_secs_f64() * 1e3;
        let mut out = Vec::new();
        for c in found {
            if c.members.len() < min_size.max(1) {
                continue;
            }
            let mut files: BTreeMap<&str, usize> = BTreeMap::new();
            for m in &c.members {
                if let Some(NodeRef::Chunk(id)) = g.node(*m)
                    && let Some(r) = rows.get(id)
                {
                    *files.entry(r.chunk.path.as_str()).or_default() += 1;
                }
            }
            let mut files: Vec<(&str, usize)> = files.into_iter().collect();
            files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let entities: Vec<String> = c
                .central
                .iter()
                .filter_map(|n| match g.node(*n) {
                    Some(NodeRef::Entity { name, .. }) => Some(name.clone()),
                    _ => None,
                })
                .collect();
            let inside: std::collections::HashSet<u32> = c.members.iter().copied().collect();
            let candidates: Vec<(&str, usize, usize)> = c
                .members
                .iter()
                .filter_map(|m| match g.node(*m) {
                    Some(NodeRef::Entity { name, .. }) => {
                        let links = g.neighbors(*m);
                        let within = links.iter().filter(|l| inside.contains(&l.0)).count();
                        Some((name.as_str(), within, links.len()))
                    }
                    _ => None,
                })
                .collect();
            // No name stands out (dates, values, paths only): its main file.
            let mut named = distinguishing_names(&candidates, 3);
            if named.is_empty() {
                named = match files.first() {
                    Some((f, _)) => vec![f.to_string()],
                    None => entities.iter().take(3).cloned().collect(),
                };
            }
            out.push(CommunityView {
                id: c.id,
                label: named.join(", "),
                size: c.members.len(),
                files: files
                    .into_iter()
                    .take(8)
                    .map(|(f, _)| f.to_string())
                    .collect(),
                entities,
            });
        }
        Ok(Communities {
            total: out.len(),
            communities: out,
            modularity,
            nodes: g.node_count(),
            edges: g.edge_count(),
            millis,
        })
    }

    /// Stores entities, relations and observations as memory files (type
    /// `entity`: one file per entity, its observations as the text; type
    /// `relationship`: one file per relation, named by a hash of it, so the
    /// same relation twice is one file), then indexes them.
    pub fn relate(
        &self,
        entities: &[EntityInput],
        relations: &[RelationInput],
        observations: &[ObservationInput],
        client: &str,
    ) -> Result<Related> {
        let vault = self.vault();
        let mut report = Related::default();
        let client = if client.is_empty() { "cli" } else { client };
        let by_entity = entity_updates(entities, observations)?;
        for r in relations {
            if r.from.trim().is_empty()
                || r.to.trim().is_empty()
                || r.relation_type.trim().is_empty()
            {
                return Err(Error::Query(
                    "a relation needs from, to and relationType".into(),
                ));
            }
            crate::secrets::name("a relation's from", &r.from)?;
            crate::secrets::name("a relation's to", &r.to)?;
            crate::secrets::name("a relation's type", &r.relation_type)?;
        }
        let now = now_rfc3339();
        // Each entity's file is read, extended and written: under the
        // memory-writer lock, so two writers' observations both stay.
        let one_writer = self.memory_writer()?;
        for (_, update) in by_entity {
            save_entity(&vault, update, &now, client, &mut report)?;
        }
        for r in relations {
            save_relation(&vault, r, &now, client, &mut report)?;
        }
        drop(one_writer);
        if !report.ids.is_empty() {
            self.index(&[], &crate::progress::NoProgress)?;
        }
        Ok(report)
    }
}

/// What `relate` adds to one entity: its name as first given, its type
/// (empty: unchanged) and new observations.
type EntityUpdate = (String, String, Vec<String>);

/// The entities and observations of a `relate` call, merged per entity
/// (by [`entity_key`]); an error for a nameless one.
fn entity_updates(
    entities: &[EntityInput],
    observations: &[ObservationInput],
) -> Result<BTreeMap<String, EntityUpdate>> {
    // Names become file names and graph nodes: one holding a secret is
    // refused; observations are text, redacted (one only a secret is refused).
    let observed = |list: &[String]| -> Result<Vec<String>> {
        list.iter()
            .map(|o| crate::secrets::text("an observation", o))
            .collect()
    };
    let mut by_entity: BTreeMap<String, EntityUpdate> = BTreeMap::new();
    for e in entities {
        if e.name.trim().is_empty() {
            return Err(Error::Query("an entity needs a name".into()));
        }
        let name = crate::secrets::name("an entity name", &e.name)?;
        let ty = crate::secrets::name("an entity type", &e.entity_type)?;
        let obs = observed(&e.observations)?;
        let slot = by_entity
            .entry(entity_key(&name))
            .or_insert_with(|| (name.clone(), String::new(), Vec::new()));
        if !ty.is_empty() {
            slot.1 = ty;
        }
        slot.2.extend(obs);
    }
    for o in observations {
        if o.entity_name.trim().is_empty() {
            return Err(Error::Query("observations need an entityName".into()));
        }
        let name = crate::secrets::name("an entity name", &o.entity_name)?;
        let obs = observed(&o.contents)?;
        let slot = by_entity
            .entry(entity_key(&name))
            .or_insert_with(|| (name.clone(), String::new(), Vec::new()));
        slot.2.extend(obs);
    }
    Ok(by_entity)
}

/// Creates or updates an entity's memory (its observations as `- ` lines
/// under a `name (type)` header); nothing when nothing changed.
fn save_entity(
    vault: &Vault,
    (name, ty, obs): EntityUpdate,
    now: &str,
    client: &str,
    report: &mut Related,
) -> Result<()> {
    let id = format!("entity-{}", slug(&name));
    let existing = vault.read(&id).ok();
    let mut m = existing.clone().unwrap_or_else(|| Memory {
        id: id.clone(),
        kind: "entity".into(),
        importance: cairn_core::DEFAULT_IMPORTANCE,
        entities: vec![name.clone()],
        created: now.to_string(),
        updated: now.to_string(),
        entity: Some(name.clone()),
        ..Memory::default()
    });
    if !ty.is_empty() {
        m.entity_type = Some(ty.clone());
    }
    let mut lines: Vec<String> = m
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("- ").map(str::to_string))
        .collect();
    for o in obs {
        // Redacted by `entity_updates`, as `remember` redacts its text.
        if !o.is_empty() && !lines.contains(&o) {
            lines.push(o);
        }
    }
    let header = match &m.entity_type {
        Some(t) if !t.is_empty() => format!("{name} ({t})"),
        _ => name.clone(),
    };
    m.text = std::iter::once(header)
        .chain(std::iter::once(String::new()))
        .chain(lines.iter().map(|l| format!("- {l}")))
        .collect::<Vec<_>>()
        .join("\n");
    let changed = existing
        .as_ref()
        .is_none_or(|e| e.text != m.text || e.entity_type != m.entity_type);
    if !changed {
        return Ok(());
    }
    m.updated = now.to_string();
    let action = if existing.is_some() {
        "update"
    } else {
        "store"
    };
    vault.save(&m, action, client)?;
    if existing.is_some() {
        report.entities_updated.push(name);
    } else {
        report.entities_created.push(name);
    }
    report.ids.push(id);
    Ok(())
}

/// Stores a relation's memory, named by a hash of (from, relation, to);
/// counted as existing when that memory is there already.
fn save_relation(
    vault: &Vault,
    r: &RelationInput,
    now: &str,
    client: &str,
    report: &mut Related,
) -> Result<()> {
    let rel = r.relation_type.trim().replace(' ', "_");
    let key = format!("{}\0{}\0{}", entity_key(&r.from), rel, entity_key(&r.to));
    let id = format!("rel-{}", &content_hash(key.as_bytes())[..16]);
    if vault.read(&id).is_ok() {
        report.relations_existing += 1;
        return Ok(());
    }
    let m = Memory {
        id: id.clone(),
        kind: "relationship".into(),
        importance: cairn_core::DEFAULT_IMPORTANCE,
        entities: vec![r.from.trim().to_string(), r.to.trim().to_string()],
        created: now.to_string(),
        updated: now.to_string(),
        relations: vec![MemoryRelation {
            from: r.from.trim().to_string(),
            to: r.to.trim().to_string(),
            rel: rel.clone(),
        }],
        text: format!(
            "{} {} {}",
            r.from.trim(),
            rel.replace('_', " "),
            r.to.trim()
        ),
        ..Memory::default()
    };
    vault.save(&m, "store", client)?;
    report.relations_added += 1;
    report.ids.push(id);
    Ok(())
}

/// The error for a name with no node: with the nearest names the graph
/// has, when there are any (`no entity "Consol" in the graph; did you mean
/// Console, ConsoleOptions?`).
fn no_entity(g: &KnowledgeGraph, name: &str) -> Error {
    let near = g.suggest(name, 5);
    Error::NotFound(if near.is_empty() {
        format!("no entity {name:?} in the graph")
    } else {
        format!(
            "no entity {name:?} in the graph; did you mean {}?",
            near.join(", ")
        )
    })
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Doc => "doc",
        Kind::Memory => "memory",
        Kind::Code => "code",
        Kind::History => "history",
    }
}

/// Names that are values, not things, whatever their links.
const NOT_NAMES: [&str; 7] = ["null", "none", "nil", "true", "false", "undefined", "self"];

/// The `n` names that distinguish a community, best first, from its
/// entities as `(name, links inside it, links in all)`: a name's score is
/// its links inside × (the share of its links inside)², so a name most of
/// whose links stay in the community (a class its files define and call)
/// outranks one linked from everywhere (`typing`, a common method name),
/// however many links that one has here. Paths (the files are listed
/// apart), names under 3 characters or without a letter, and values
/// (`null`, `true`) are left out; ties go to the more linked, then by name.
pub(crate) fn distinguishing_names(entities: &[(&str, usize, usize)], n: usize) -> Vec<String> {
    let mut scored: Vec<(f64, usize, &str)> = entities
        .iter()
        .filter(|(name, within, _)| {
            *within > 0
                && name.chars().count() >= 3
                && name.chars().any(char::is_alphabetic)
                && !name.contains('/')
                && !NOT_NAMES.contains(&name.to_lowercase().as_str())
        })
        .map(|&(name, within, all)| {
            let share = within as f64 / all.max(within).max(1) as f64;
            (within as f64 * share * share, within, name)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    let mut out: Vec<String> = Vec::new();
    for (_, _, name) in scored {
        if !out.iter().any(|o| o.eq_ignore_ascii_case(name)) {
            out.push(name.to_string());
        }
        if out.len() == n {
            break;
        }
    }
    out
}

#[cfg(test)]
mod label_tests {
    use super::distinguishing_names;

    #[test]
    fn a_community_is_named_by_what_stays_in_it() {
        let entities = [
            // Imported by every file: many links here, most elsewhere.
            ("typing", 12, 120),
            ("null", 9, 9),
            ("/details", 6, 6),
            ("Table", 30, 49),
            ("Column", 14, 16),
            ("add_row", 6, 7),
            ("lower", 3, 40),
            ("ok", 5, 5),
        ];
        assert_eq!(
            distinguishing_names(&entities, 3),
            ["Table", "Column", "add_row"]
        );
        assert!(distinguishing_names(&[("typing", 0, 9)], 3).is_empty());
    }
}
