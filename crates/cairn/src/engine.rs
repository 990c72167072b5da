//! The engine: one project's index, embedder and search.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, TryLockError};

use cairn_core::{Boost, Embedder, Hit, Kind, Signal};
use cairn_core::{ChunkRow, IndexReader, IndexSnapshot, IndexWriter};
use cairn_search::{
    Boosts, EdgeIn, Fused, KnowledgeGraph, NodeRef, PprParams, RRF_K, Ranked, VectorIndex,
    lexical_expr, query_terms, rrf, snippet,
};
use cairn_store::Store;
use serde::Serialize;

use crate::config::Config;
use crate::error::{Error, Result};

/// Which retrievers a search uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// BM25 and vectors fused with RRF.
    #[default]
    Hybrid,
    /// BM25 only.
    Bm25,
    /// Vectors only.
    Vector,
}

/// How to search.
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// Hits to return (0 = the configured default).
    pub limit: usize,
    /// The file being edited, relative to the project root: drives the domain boost.
    pub current_file: Option<String>,
    /// Only documents whose path starts with this.
    pub path_prefix: Option<String>,
    /// Pass the query to FTS5 as is (phrases, OR, NOT, prefix*); BM25 only.
    pub raw_fts: bool,
    /// Retrievers to use.
    pub mode: Mode,
    /// Only these kinds of source (empty: all).
    pub kinds: Vec<Kind>,
    /// Leave the graph retriever out of a hybrid search.
    pub no_graph: bool,
    /// Work out the path that brought each graph hit in ([`Hit::via`]): a
    /// breadth-first search per such hit, so only when asked.
    pub explain: bool,
}

/// What `cairn status` shows.
#[derive(Clone, Debug, Serialize)]
pub struct Status {
    /// Project root.
    pub root: PathBuf,
    /// Index file.
    pub index_path: PathBuf,
    /// Indexed files.
    pub files: u64,
    /// Chunks.
    pub chunks: u64,
    /// Chunks with a vector of the current model.
    pub embedded_chunks: u64,
    /// Current model id, if a model is loaded.
    pub model: Option<String>,
    /// Bytes on disk (index + write-ahead log).
    pub index_bytes: u64,
    /// Unix seconds of the last finished index run.
    pub last_indexed: Option<i64>,
    /// Whether vectors are being computed right now.
    pub embedding_in_progress: bool,
    /// Capture hooks' last success and last error, per client
    /// (`.cairn/hooks/health.json`), when any hook has run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks: Option<serde_json::Value>,
}

/// What `doctor` learns about the index file.
#[derive(Clone, Debug, Serialize)]
pub struct IndexHealth {
    /// (schema version of the file, version this build writes).
    pub schema: (i64, i64),
    /// Problems `PRAGMA integrity_check` reports (empty: none).
    pub integrity: Vec<String>,
    /// An FTS inconsistency, if any.
    pub fts: Option<String>,
}

/// A ranked candidate before it becomes a [`Hit`].
pub(crate) struct Candidate {
    pub row: ChunkRow,
    pub score: f64,
    pub signals: Vec<Signal>,
    pub boosts: Vec<Boost>,
    pub via: Vec<String>,
}

const QUERY_CACHE: usize = 256;

/// Recent query vectors and their insertion order (oldest first).
type QueryCache = (HashMap<String, Arc<Vec<f32>>>, VecDeque<String>);

/// One project's index, embedder and search.
pub struct Engine {
    pub(crate) root: PathBuf,
    pub(crate) config: Config,
    pub(crate) store: Mutex<Box<dyn IndexWriter>>,
    index_path: PathBuf,
    /// `[memory] dir` as a project-relative prefix ending in `/`.
    memory_prefix: String,
    /// Held by the one embedding backfill that may run at a time.
    pub(crate) embed_lock: Mutex<()>,
    /// Set while a backfill is computing vectors.
    pub(crate) embedding_active: AtomicBool,
    /// Idle read connections: a read takes one (opening another when none is
    /// idle and the writer is free) and gives it back, so concurrent
    /// searches (MCP over HTTP) run side by side, each on its own connection.
    readers: Mutex<Vec<Box<dyn IndexReader>>>,
    reader_back: Condvar,
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
    vectors: Mutex<Option<(i64, Arc<VectorIndex>)>>,
    domains: Mutex<Option<(i64, Arc<Vec<String>>)>>,
    graph: Mutex<Option<(i64, Arc<KnowledgeGraph>)>>,
    query_cache: Mutex<QueryCache>,
}

/// Idle read connections kept for reuse; more are closed when returned.
const MAX_IDLE_READERS: usize = 8;

/// A read connection borrowed from the engine's pool.
pub(crate) struct PooledReader<'a> {
    engine: &'a Engine,
    reader: Option<Box<dyn IndexReader>>,
}

impl std::ops::Deref for PooledReader<'_> {
    type Target = Box<dyn IndexReader>;
    fn deref(&self) -> &Self::Target {
        self.reader.as_ref().expect("reader present until drop")
    }
}

impl std::ops::DerefMut for PooledReader<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.reader.as_mut().expect("reader present until drop")
    }
}

impl Drop for PooledReader<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.reader.take() {
            let mut idle = self
                .engine
                .readers
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if idle.len() < MAX_IDLE_READERS {
                idle.push(r);
            }
            self.engine.reader_back.notify_one();
        }
    }
}

impl Engine {
    /// Opens the project's index at `<root>/.cairn/index.sqlite`.
    pub fn open(
        root: &Path,
        config: Config,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Engine> {
        Engine::open_at(
            root,
            &root.join(".cairn").join("index.sqlite"),
            config,
            embedder,
        )
    }

    /// Opens an index at an explicit path; file paths are stored relative to `root`.
    pub fn open_at(
        root: &Path,
        index: &Path,
        config: Config,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Engine> {
        let store = Store::open(index)?;
        let index_path = store.path().to_path_buf();
        Engine::open_with(root, index_path, Box::new(store), config, embedder)
    }

    /// Opens a project on any storage backend (`index_path` is what
    /// `status` shows: a file, or a URI without password).
    pub fn open_with(
        root: &Path,
        index_path: PathBuf,
        store: Box<dyn IndexWriter>,
        config: Config,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Engine> {
        let reader = store.reader()?;
        let memory_rel = crate::paths::relative_path(root, &root.join(&config.memory.dir));
        Ok(Engine {
            memory_prefix: format!("{}/", memory_rel.trim_end_matches('/')),
            root: root.to_path_buf(),
            config,
            index_path,
            store: Mutex::new(store),
            embed_lock: Mutex::new(()),
            embedding_active: AtomicBool::new(false),
            readers: Mutex::new(vec![reader]),
            reader_back: Condvar::new(),
            embedder,
            vectors: Mutex::new(None),
            domains: Mutex::new(None),
            graph: Mutex::new(None),
            query_cache: Mutex::new((HashMap::new(), VecDeque::new())),
        })
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Marks a backfill as on its way (before its thread starts), so a
    /// status read in between does not say "not embedding" with vectors
    /// missing; [`Engine::embed_pending`] clears the mark when it ends.
    pub fn expect_backfill(&self) {
        if self.embedder.is_some() {
            self.embedding_active.store(true, Ordering::SeqCst);
        }
    }

    /// Whether an embedding backfill is computing vectors right now (search
    /// then has vectors for only part of the index).
    pub fn embedding_in_progress(&self) -> bool {
        self.embedding_active.load(Ordering::SeqCst)
    }

    /// The index file.
    pub fn index_path(&self) -> &Path {
        &self.index_path
    }

    /// Schema version (file, this build), `PRAGMA integrity_check` problems
    /// and the FTS consistency problem, if any.
    pub fn check_index(&self) -> Result<IndexHealth> {
        let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        Ok(IndexHealth {
            schema: store.schema_version()?,
            integrity: store.integrity_check()?,
            fts: store.fts_check()?,
        })
    }

    /// Bytes of the index file plus its write-ahead log.
    pub fn index_bytes(&self) -> u64 {
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let wal = PathBuf::from(format!("{}-wal", self.index_path.display()));
        size(&self.index_path) + size(&wal)
    }

    /// FTS optimize + VACUUM + WAL truncate; bytes before and after.
    pub fn vacuum(&self) -> Result<(u64, u64)> {
        let before = self.index_bytes();
        self.store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .vacuum()?;
        Ok((before, self.index_bytes()))
    }

    /// The memory folder.
    pub fn memory_dir(&self) -> PathBuf {
        self.root.join(&self.config.memory.dir)
    }

    /// The memory folder as a project-relative path prefix, ending in `/`.
    pub fn memory_prefix(&self) -> String {
        self.memory_prefix.clone()
    }

    /// The kind of an indexed path (memories by the configured folder).
    pub fn kind_of(&self, path: &str) -> Kind {
        Kind::of(path, &self.memory_prefix)
    }

    /// The folders to index by default: `[index] roots`, under the project root.
    pub fn default_roots(&self) -> Vec<PathBuf> {
        self.config
            .index
            .roots
            .iter()
            .map(|r| self.root.join(r))
            .collect()
    }

    /// The embedder, if a model is loaded.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Counts and facts about the index.
    pub fn status(&self) -> Result<Status> {
        let mut reader = self.reader()?;
        let snap = reader.snapshot()?;
        let model = self.embedder.as_ref().map(|e| e.model_id().to_string());
        let stats = snap.stats(model.as_deref())?;
        let index_path = self.index_path.clone();
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let wal = PathBuf::from(format!("{}-wal", index_path.display()));
        Ok(Status {
            root: self.root.clone(),
            index_bytes: size(&index_path) + size(&wal),
            index_path,
            files: stats.files,
            chunks: stats.chunks,
            embedded_chunks: stats.embedded_chunks,
            model,
            last_indexed: stats.last_indexed,
            embedding_in_progress: self.embedding_in_progress(),
            hooks: std::fs::read_to_string(
                self.root.join(".cairn").join("hooks").join("health.json"),
            )
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok()),
        })
    }

    /// Forgets cached query vectors (so timings include embedding the query).
    pub fn clear_query_cache(&self) {
        let mut cache = self.query_cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.0.clear();
        cache.1.clear();
    }

    pub(crate) fn query_vector(
        &self,
        embedder: &dyn Embedder,
        query: &str,
    ) -> Result<Arc<Vec<f32>>> {
        if let Some(v) = self
            .query_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .get(query)
        {
            return Ok(v.clone());
        }
        let v = Arc::new(embedder.embed(&[query])?.pop().unwrap_or_default());
        let mut cache = self.query_cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.0.len() >= QUERY_CACHE
            && let Some(old) = cache.1.pop_front()
        {
            cache.0.remove(&old);
        }
        cache.0.insert(query.to_string(), v.clone());
        cache.1.push_back(query.to_string());
        Ok(v)
    }

    /// The in-memory vector matrix, reloaded when the index has changed since.
    pub(crate) fn vector_index(
        &self,
        snap: &dyn IndexSnapshot,
        model: &str,
    ) -> Result<Arc<VectorIndex>> {
        let generation = snap.generation()?;
        let mut slot = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, idx)) = slot.as_ref()
            && *g == generation
        {
            return Ok(idx.clone());
        }
        let set = snap.vectors(model)?;
        let idx = Arc::new(VectorIndex::new(set.rowids, set.paths, set.data, set.dim));
        *slot = Some((generation, idx.clone()));
        Ok(idx)
    }

    /// The `k` chunks nearest to `text` (or to `qv`, its vector, when the
    /// caller has it): on the backend's own vector index when it has one
    /// (PostgreSQL's HNSW), else an exact scan of the in-memory matrix.
    pub(crate) fn nearest(
        &self,
        snap: &dyn IndexSnapshot,
        embedder: &dyn Embedder,
        text: &str,
        qv: Option<&[f32]>,
        k: usize,
        prefix: Option<&str>,
    ) -> Result<Vec<(i64, f64)>> {
        let model = embedder.model_id();
        let owned;
        let qv = match qv {
            Some(v) => v,
            None => {
                owned = self.query_vector(embedder, text)?;
                &owned[..]
            }
        };
        if let Some(hits) = snap.vector_top_k(model, qv, k, prefix)? {
            return Ok(hits);
        }
        let idx = self.vector_index(snap, model)?;
        Ok(idx.top_k(qv, k, prefix))
    }

    /// The knowledge graph, rebuilt from the index's links when the index has
    /// changed since.
    pub(crate) fn knowledge_graph(&self, snap: &dyn IndexSnapshot) -> Result<Arc<KnowledgeGraph>> {
        let generation = snap.generation()?;
        let mut slot = self.graph.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, kg)) = slot.as_ref()
            && *g == generation
        {
            return Ok(kg.clone());
        }
        let links = snap.links()?;
        let kg = Arc::new(KnowledgeGraph::build(links.iter().map(|l| EdgeIn {
            chunk: l.chunk,
            src: l.src.as_ref().map(|(k, n)| (k.as_str(), n.as_str())),
            dst: &l.dst,
            dst_name: &l.dst_name,
            rel: &l.rel,
            weight: l.weight,
        })));
        *slot = Some((generation, kg.clone()));
        Ok(kg)
    }

    /// Edges in the knowledge graph.
    pub fn graph_edges(&self) -> Result<usize> {
        self.with_snapshot(|snap| Ok(self.knowledge_graph(snap)?.edge_count()))
    }

    /// The knowledge base's domains (top-level folders), cached per generation.
    fn known_domains(&self, snap: &dyn IndexSnapshot) -> Result<Arc<Vec<String>>> {
        let generation = snap.generation()?;
        let mut slot = self.domains.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, d)) = slot.as_ref()
            && *g == generation
        {
            return Ok(d.clone());
        }
        let d = Arc::new(snap.domains()?);
        *slot = Some((generation, d.clone()));
        Ok(d)
    }

    /// A read connection from the pool, back in it when dropped.
    pub(crate) fn reader(&self) -> Result<PooledReader<'_>> {
        let mut idle = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(r) = idle.pop() {
                return Ok(PooledReader {
                    engine: self,
                    reader: Some(r),
                });
            }
            // A new connection comes from the writer; while an index pass
            // holds it, wait for a reader to come back instead.
            let store = match self.store.try_lock() {
                Ok(s) => Some(s),
                Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(TryLockError::WouldBlock) => None,
            };
            if let Some(store) = store {
                drop(idle);
                let r = store.reader()?;
                return Ok(PooledReader {
                    engine: self,
                    reader: Some(r),
                });
            }
            idle = self
                .reader_back
                .wait_timeout(idle, std::time::Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// A read snapshot of the index, for the engine's other read paths.
    pub(crate) fn with_snapshot<T>(
        &self,
        f: impl FnOnce(&dyn IndexSnapshot) -> Result<T>,
    ) -> Result<T> {
        let mut reader = self.reader()?;
        let snap = reader.snapshot()?;
        f(&*snap)
    }

    /// Searches the index; hits best first.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        let limit = if opts.limit == 0 {
            self.config.search.limit
        } else {
            opts.limit
        };
        let terms = query_terms(query);
        let ranked = self.rank(
            query,
            opts,
            limit,
            limit * self.config.search.candidates.max(1),
        )?;
        Ok(ranked
            .into_iter()
            .map(|c| Hit {
                chunk_id: c.row.chunk.id.clone(),
                path: c.row.chunk.path.clone(),
                start_line: c.row.chunk.start_line,
                end_line: c.row.chunk.end_line,
                breadcrumb: c.row.chunk.breadcrumb(),
                snippet: snippet(&c.row.chunk.text, &terms, 3),
                score: c.score,
                signals: c.signals,
                boosts: c.boosts,
                via: c.via,
            })
            .collect())
    }

    /// The chunk paths of the fused, boosted ranking, best first: the top
    /// `limit` of retriever lists `depth` long, past `search`'s caps (for
    /// evaluations, which score deep rankings).
    pub fn ranked_paths(
        &self,
        query: &str,
        opts: &SearchOptions,
        limit: usize,
        depth: usize,
    ) -> Result<Vec<String>> {
        Ok(self
            .rank(query, opts, limit, depth)?
            .into_iter()
            .map(|c| c.row.chunk.path)
            .collect())
    }

    /// Fused, boosted candidates: the top `limit` of retriever lists `depth` long.
    pub(crate) fn rank(
        &self,
        query: &str,
        opts: &SearchOptions,
        limit: usize,
        depth: usize,
    ) -> Result<Vec<Candidate>> {
        if query.trim().is_empty() {
            return Err(Error::Query("empty query".into()));
        }
        let prefix = opts.path_prefix.as_deref();
        let mut reader = self.reader()?;
        let snap = reader.snapshot()?;

        let mut bm25 = Vec::new();
        if opts.mode != Mode::Vector {
            let expr = if opts.raw_fts {
                Some(query.to_string())
            } else {
                lexical_expr(query)
            };
            if let Some(expr) = expr {
                let w = (
                    self.config.search.bm25_breadcrumb_weight,
                    self.config.search.bm25_text_weight,
                );
                bm25 = snap.bm25(&expr, depth, w, prefix)?;
            }
        }
        let mut vector = Vec::new();
        // Raw FTS5 syntax (phrases, NOT) means exact lexical semantics, which
        // vectors cannot honour: such a search is BM25 only.
        if opts.mode != Mode::Bm25
            && !opts.raw_fts
            && let Some(embedder) = &self.embedder
        {
            vector = self.nearest(&*snap, embedder.as_ref(), query, None, depth, prefix)?;
        }
        // The graph: seeds are the entities the query names and the top
        // chunks of each retriever; PPR ranks the chunks the links reach.
        let mut graph = Vec::new();
        let mut kg = None;
        let mut seed_nodes = Vec::new();
        if opts.mode == Mode::Hybrid
            && !opts.no_graph
            && !opts.raw_fts
            && self.config.search.graph_weight > 0.0
        {
            let g = self.knowledge_graph(&*snap)?;
            if !g.is_empty() {
                let n = self.config.search.graph_seeds;
                let mut seeds: Vec<(u32, f32)> = g
                    .query_entities(query)
                    .into_iter()
                    .map(|e| (e, 1.0))
                    .collect();
                for list in [&bm25, &vector] {
                    for (rank, (id, _)) in list.iter().take(n).enumerate() {
                        if let Some(node) = g.chunk_node(*id) {
                            let w = 1.0 / (1.0 + rank as f32);
                            seeds.push((node, w * w));
                        }
                    }
                }
                let params = PprParams {
                    restart: self.config.search.graph_restart.clamp(0.05, 0.95),
                    ..PprParams::default()
                };
                graph = g.rank(&seeds, &params, depth);
                seed_nodes = seeds.iter().map(|s| s.0).collect();
                kg = Some(g);
            }
        }
        // Fetch every candidate once: fusion needs each chunk's document.
        let mut ids: Vec<i64> = bm25
            .iter()
            .chain(&vector)
            .chain(&graph)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let rows: HashMap<i64, ChunkRow> = snap
            .chunks(&ids)?
            .into_iter()
            .map(|r| (r.rowid, r))
            .collect();

        // Fuse per document: each retriever's list is collapsed to its files
        // (a file ranks where its best chunk ranks), so a file that BM25 finds
        // by one chunk and the vectors by another still gets both votes. The
        // file is represented by the chunk the retrievers ranked highest.
        let mut doc_ids: HashMap<&str, i64> = HashMap::new();
        let mut best_chunk: HashMap<i64, (usize, i64)> = HashMap::new();
        let mut collapse = |list: &[(i64, f64)]| -> Vec<(i64, f64)> {
            let mut out = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for &(id, raw) in list {
                let Some(row) = rows.get(&id) else { continue };
                if !opts.kinds.is_empty() && !opts.kinds.contains(&self.kind_of(&row.chunk.path)) {
                    continue;
                }
                let next = doc_ids.len() as i64;
                let doc = *doc_ids.entry(row.chunk.path.as_str()).or_insert(next);
                if seen.insert(doc) {
                    let rank = out.len();
                    let slot = best_chunk.entry(doc).or_insert((rank, id));
                    if rank < slot.0 {
                        *slot = (rank, id);
                    }
                    out.push((doc, raw));
                }
            }
            out
        };
        let bm25_docs = collapse(&bm25);
        let vector_docs = collapse(&vector);
        let graph: Vec<(i64, f64)> = graph
            .into_iter()
            .filter(|(id, _)| {
                rows.get(id)
                    .is_some_and(|r| prefix.is_none_or(|p| r.chunk.path.starts_with(p)))
            })
            .collect();
        let graph_docs = collapse(&graph);
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

        let boosts = Boosts {
            current_domain: self.current_domain(&*snap, opts.current_file.as_deref())?,
        };
        let mut out: Vec<Candidate> = fused
            .into_iter()
            .filter_map(|f| {
                let row = rows.get(&best_chunk.get(&f.id)?.1)?.clone();
                let mut factors = boosts.factors(&row.chunk.path, &row.domain);
                let (reason, w) = match self.kind_of(&row.chunk.path) {
                    Kind::Doc => ("doc weight", self.config.search.doc_weight),
                    Kind::Memory => ("memory weight", self.config.search.memory_weight),
                    Kind::Code => ("code weight", self.config.search.code_weight),
                };
                if w != 1.0 {
                    factors.push((reason, w));
                }
                let via = match (
                    &kg,
                    opts.explain && f.signals.iter().any(|s| s.0 == "graph"),
                ) {
                    (Some(g), true) => graph_path(g, &seed_nodes, &row, &rows),
                    _ => Vec::new(),
                };
                let score = factors.iter().fold(f.score, |s, (_, x)| s * x);
                Some(Candidate {
                    signals: f
                        .signals
                        .into_iter()
                        .map(|(retriever, rank, raw, contribution)| Signal {
                            retriever,
                            rank,
                            raw,
                            contribution,
                        })
                        .collect(),
                    boosts: factors
                        .into_iter()
                        .map(|(r, factor)| Boost {
                            reason: r.to_string(),
                            factor,
                        })
                        .collect(),
                    score,
                    row,
                    via,
                })
            })
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
        out.truncate(limit);
        Ok(out)
    }

    /// The domain of the file being edited: the first folder on its path that
    /// is a domain of the knowledge base (`src/cache/redis.rs` → `cache` when
    /// the docs have a `cache/` folder).
    fn current_domain(
        &self,
        snap: &dyn IndexSnapshot,
        current: Option<&str>,
    ) -> Result<Option<String>> {
        let Some(current) = current else {
            return Ok(None);
        };
        let domains = self.known_domains(snap)?;
        let rel = crate::paths::relative_path(&self.root, &self.root.join(current));
        let mut parts: Vec<&str> = rel.split('/').collect();
        parts.pop(); // the file name itself
        Ok(parts
            .into_iter()
            .find(|p| domains.iter().any(|d| d == p))
            .map(str::to_string))
    }
}

/// The path that brought a graph hit in: from the nearest seed to one of its
/// document's chunks, each step `label -relation->`.
fn graph_path(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_reads_take_their_own_connection_and_give_it_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let e = Engine::open(dir.path(), Config::default(), None).expect("engine");
        let idle = |e: &Engine| e.readers.lock().map(|r| r.len()).unwrap_or(0);
        assert_eq!(idle(&e), 1);
        {
            let mut a = e.reader().expect("first reader");
            let mut b = e.reader().expect("second reader, opened beside the first");
            assert_eq!(idle(&e), 0);
            // Both read at once.
            let sa = a.snapshot().expect("snapshot a");
            let sb = b.snapshot().expect("snapshot b");
            assert_eq!(sa.generation().ok(), sb.generation().ok());
        }
        assert_eq!(idle(&e), 2, "both back in the pool");
        // While a pass holds the writer, a read reuses an idle connection
        // instead of waiting for the writer.
        let _writer = e.store.lock().expect("writer");
        let r = e.reader().expect("idle reader while the writer is busy");
        drop(r);
        assert_eq!(idle(&e), 2);
    }
}
