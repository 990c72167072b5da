//! The engine: the [`Engine`] struct (one project's index, embedder and
//! caches), opening it, its accessors, and `status` / `doctor` facts about
//! the index. Projects are opened through `cairn::open` / `cairn::Open`
//! (`open.rs`), which picks the store and embedder and calls `open_with`.
//! The other methods live where their file names say:
//!
//! | `Engine` method | file |
//! |---|---|
//! | `open`, `open_at`, `open_with`, `root`, `config`, `index_path`, `memory_dir`, `memory_prefix`, `kind_of`, `default_roots`, `embedder`, `embedding_in_progress`, `status`, `check_index`, `index_bytes`, `vacuum` | `engine.rs` |
//! | `index`, `index_with` | `indexer/mod.rs` (stages: `plan.rs`, `chunk.rs`, `write.rs`, `history.rs`, `sync.rs`) |
//! | `why` | `history.rs` |
//! | `embed_pending`, `expect_backfill` | `indexer/embed.rs` |
//! | `search`, `ranked_paths`, `ranked_chunks`, `clear_query_cache` | `search/mod.rs` (the ranking is `cairn_search::rank`; `retrieve.rs` supplies its caches) |
//! | `set_reranker`, `reranker` | `search/rerank.rs` |
//! | `vault`, `remember`, `import_memories`, `update_memory`, `forget`, `forget_where`, `undo`, `undo_change`, `list_memories`, `recall` | `memory.rs` |
//! | `graph_edges`, `graph_neighbors`, `graph_path`, `graph_communities`, `relate` | `graph.rs` |
//! | `llm`, `compact`, `capture`, `capture_claude`, `transcript` | `capture.rs` |
//! | `stale_files`, `expand`, `read_file` | `access.rs` |
//! | `export`, `import` | `transfer.rs` |
//!
//! Crate-internal: the read-connection pool (`reader`, `with_snapshot`) is
//! in `pool.rs`; `rank` in `search/mod.rs`; `query_vector` and `nearest` in
//! `search/retrieve.rs`; `knowledge_graph` in `graph.rs`.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use cairn_core::{Embedder, IndexReader, IndexWriter, Kind, Reranker, sync};
use cairn_search::{KnowledgeGraph, VectorIndex};
use cairn_store::Store;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::Result;

/// Recent query vectors and their insertion order (oldest first).
pub(crate) type QueryCache = (HashMap<String, Arc<Vec<f32>>>, VecDeque<String>);

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What `cairn status` shows.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// Chunks of commit records left without a vector on purpose
    /// (`[history] vectors = false`): none wait for one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub commits_without_vectors: u64,
    /// Current model id, if a model is loaded.
    pub model: Option<String>,
    /// Bytes on disk (index + write-ahead log).
    pub index_bytes: u64,
    /// Unix seconds of the last finished index run.
    pub last_indexed: Option<i64>,
    /// The same instant as RFC 3339 / ISO 8601 (`2026-11-25T00:23:35Z`).
    #[serde(default)]
    pub last_indexed_at: Option<String>,
    /// Whether vectors are being computed right now.
    pub embedding_in_progress: bool,
    /// The embedding queue: chunks waiting for a vector, its capacity and
    /// rate (absent without a model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_queue: Option<crate::embed_queue::EmbedQueue>,
    /// Indexed files by kind: `docs`, `memories`, `commits`, `config`, a
    /// language (`rust`), `other text` (line windows).
    #[serde(default)]
    pub files_by_kind: std::collections::BTreeMap<String, u64>,
    /// What the last full pass left out, a line per reason with a count and
    /// an example (absent before the first full pass of this version).
    #[serde(default)]
    pub left_out: Vec<crate::indexer::LeftOutLine>,
    /// Capture hooks' last success and last error, per client
    /// (`.cairn/hooks/health.json`), when any hook has run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    pub(crate) readers: Mutex<Vec<Box<dyn IndexReader>>>,
    pub(crate) reader_back: Condvar,
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
    /// The in-memory vector matrix and the index generation it was read at.
    pub(crate) vectors: Mutex<Option<(i64, Arc<VectorIndex>)>>,
    /// The knowledge graph, per generation.
    pub(crate) graph: Mutex<Option<(i64, Arc<KnowledgeGraph>)>>,
    /// Which memory replaced which (`supersede.rs`), per generation: read
    /// from every memory's metadata once, not on each recall.
    pub(crate) supersessions: Mutex<Option<(i64, Arc<crate::supersede::Chains>)>>,
    /// Recent query vectors.
    pub(crate) query_cache: Mutex<QueryCache>,
    /// The cross-encoder for `[search] rerank`: `None` until a search
    /// first asks for it, then the model or `None` (it cannot be had).
    pub(crate) reranker: Mutex<Option<Option<Arc<dyn Reranker>>>>,
    /// Recent reranker scores, by a hash of (query, passage).
    pub(crate) rerank_cache: Mutex<HashMap<u64, f32>>,
    /// The embedding backfill's recent rate.
    pub(crate) embed_rate: Mutex<crate::embed_queue::Rate>,
    /// Writes slowed by the embedding queue's backpressure.
    pub(crate) slowed_writes: std::sync::atomic::AtomicU64,
    /// What the clean-up of orphan temp files did on open.
    pub(crate) orphans: crate::orphans::Orphans,
    /// The root whose `[memory] dir` holds the memories: the main
    /// worktree's for a linked git worktree (`git.rs`), else `root`.
    pub(crate) memory_root: PathBuf,
    /// Whether other checkouts write to the memory folder too (a linked
    /// worktree, or a main worktree that has some): recall first brings
    /// the index up to date with the folder.
    pub(crate) memory_shared: bool,
    /// The per-user embedding cache file (`[embed] user_cache_rows`), when
    /// this engine uses one; opened on the first backfill.
    pub(crate) user_cache: Option<(PathBuf, u64)>,
    pub(crate) user_cache_open: Mutex<Option<cairn_store::UserCache>>,
    /// The personal memory folder's home (`[memory] personal`), `None` when
    /// off or for the personal engine itself; its engine, once opened.
    pub(crate) personal_dir: Option<PathBuf>,
    pub(crate) personal: Mutex<Option<Arc<Engine>>>,
}

impl Engine {
    /// Opens the project's index at `<root>/.cairn/index.sqlite`.
    pub fn open(
        root: &Path,
        config: Config,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<Engine> {
        Engine::open_at(root, &crate::paths::index_file(root), config, embedder)
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
        let memory_root = crate::git::memory_root(root);
        let memory_shared =
            memory_root != root || crate::git::checkout(root).is_some_and(|c| c.has_worktrees());
        let memory_rel = crate::paths::relative_path(root, &memory_root.join(&config.memory.dir));
        // Temp files of writers killed before their rename: restored or removed.
        let vault = crate::vault::Vault::new(memory_root.join(&config.memory.dir));
        let hooks = crate::paths::hooks_dir(root);
        let [history, trash] = vault.side_dirs();
        let orphans = crate::orphans::clean(vault.dir(), &[history, trash, &hooks]);
        Ok(Engine {
            orphans,
            memory_prefix: format!("{}/", memory_rel.trim_end_matches('/')),
            root: root.to_path_buf(),
            index_path,
            store: Mutex::new(store),
            embed_lock: Mutex::new(()),
            embedding_active: AtomicBool::new(false),
            readers: Mutex::new(vec![reader]),
            reader_back: Condvar::new(),
            embedder,
            vectors: Mutex::new(None),
            graph: Mutex::new(None),
            supersessions: Mutex::new(None),
            query_cache: Mutex::new((HashMap::new(), VecDeque::new())),
            reranker: Mutex::new(None),
            rerank_cache: Mutex::new(HashMap::new()),
            embed_rate: Mutex::new(crate::embed_queue::Rate::default()),
            slowed_writes: std::sync::atomic::AtomicU64::new(0),
            memory_root,
            memory_shared,
            user_cache: None,
            user_cache_open: Mutex::new(None),
            personal_dir: crate::personal::personal_dir(&config),
            personal: Mutex::new(None),
            config,
        })
    }

    /// Keeps vectors in the per-user embedding cache at `path` too (at most
    /// `max_rows`), and takes from it the vectors of texts it holds: a new
    /// worktree or clone embeds only what no index of this user has.
    pub fn with_user_cache(mut self, path: Option<PathBuf>, max_rows: u64) -> Engine {
        self.user_cache = path.filter(|_| max_rows > 0).map(|p| (p, max_rows));
        self
    }

    /// What opening cleared of the temp files killed writers left:
    /// memories restored, temp files removed.
    pub fn orphans(&self) -> crate::orphans::Orphans {
        self.orphans
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
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
        let store = sync::lock(&self.store);
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
        sync::lock(&self.store).vacuum()?;
        // The graph and the vectors kept between processes come from the
        // index's text: they go too (the next search builds them again).
        for file in ["graph", "vectors"]
            .iter()
            .filter_map(|s| self.cache_path(s))
        {
            match std::fs::remove_file(&file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(crate::error::io(&file)(e));
                }
                _ => {}
            }
        }
        Ok((before, self.index_bytes()))
    }

    /// The memory folder (the main worktree's, in a linked git worktree).
    pub fn memory_dir(&self) -> PathBuf {
        self.memory_root.join(&self.config.memory.dir)
    }

    /// The root whose memory folder this project uses: the main worktree's
    /// for a linked git worktree, else the project root.
    pub fn memory_root(&self) -> &Path {
        &self.memory_root
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

    /// Whether the index was never built: no pass ever finished on it and
    /// it holds no file (a zero-length file SQLite read as an empty
    /// database, a schema made by a read). Every write (`remember`,
    /// `update`, `cairn index`) ends with a pass, so an index any of them
    /// touched is built. Memories are files: such an index knows none of
    /// them until a pass over the memory folder.
    pub fn index_unbuilt(&self) -> Result<bool> {
        let mut reader = self.reader()?;
        let snap = reader.snapshot()?;
        if snap.meta("last_indexed")?.is_some() {
            return Ok(false);
        }
        Ok(snap.stats(None)?.files == 0)
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
        let mut files_by_kind = std::collections::BTreeMap::<String, u64>::new();
        for d in snap.documents()? {
            let kind = match self.kind_of(&d.path) {
                Kind::Doc => "docs",
                Kind::Memory => "memories",
                Kind::History => "commits",
                Kind::Code => cairn_ingest::file_kind(&d.path),
            };
            *files_by_kind.entry(kind.to_string()).or_default() += 1;
        }
        let left_out = snap
            .meta(crate::indexer::LEFT_OUT_META)?
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default();
        Ok(Status {
            files_by_kind,
            left_out,
            root: self.root.clone(),
            index_bytes: size(&index_path) + size(&wal),
            index_path,
            files: stats.files,
            chunks: stats.chunks,
            embedded_chunks: stats.embedded_chunks,
            commits_without_vectors: self.commits_without_vectors(&stats),
            model,
            last_indexed: stats.last_indexed,
            last_indexed_at: stats
                .last_indexed
                .and_then(|t| jiff::Timestamp::from_second(t).ok())
                .map(|t| t.to_string()),
            embedding_in_progress: self.embedding_in_progress(),
            embed_queue: self.embedder.as_ref().map(|_| self.queue_of(&stats)),
            hooks: std::fs::read_to_string(crate::paths::hooks_health(&self.root))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .map(|mut h| {
                    crate::vault::whole_seconds(&mut h);
                    h
                }),
        })
    }
}
