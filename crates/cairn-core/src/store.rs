//! The storage vocabulary: what the engine writes to and reads from an
//! index, whatever the backend. [`IndexWriter`] writes batches (one
//! transaction each); [`IndexReader`] opens [`IndexSnapshot`]s, each one
//! consistent view. SQLite implements them in `cairn-store`; search, memory
//! and MCP code only see these traits.

use std::collections::{HashMap, HashSet};

use crate::{Chunk, ChunkId, Link, Relation, Scored};

/// A document as the manifest knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocRecord {
    /// Path relative to the project root.
    pub path: String,
    /// Content hash of the file when it was indexed.
    pub hash: String,
    /// Modification time (unix nanoseconds) when it was indexed.
    pub mtime_ns: i64,
    /// Size in bytes when it was indexed.
    pub size: u64,
    /// Version of the pipeline that chunked it (`""` when unknown): a file
    /// chunked by another version is re-chunked even when unchanged.
    pub pipeline: String,
}

/// A document to (re)write with all of its chunks.
#[derive(Clone, Debug)]
pub struct DocWrite {
    /// Path relative to the project root.
    pub path: String,
    /// Content hash of the file.
    pub hash: String,
    /// Modification time, unix nanoseconds.
    pub mtime_ns: i64,
    /// Size in bytes.
    pub size: u64,
    /// Version of the pipeline that chunked it (see [`DocRecord::pipeline`]).
    pub pipeline: String,
    /// Title from frontmatter, if any.
    pub title: Option<String>,
    /// Tags from frontmatter.
    pub tags: Vec<String>,
    /// Top-level folder of the knowledge base the file lives in.
    pub domain: String,
    /// The frontmatter as a JSON object (`{}` when none).
    pub meta: String,
    /// The file's chunks, in order.
    pub chunks: Vec<Chunk>,
    /// Knowledge-graph edges from those chunks (by index) or between entities.
    pub links: Vec<Link>,
    /// The file's text, for a backend that other machines share
    /// ([`IndexWriter::shared`]): memory files carry it so every machine can
    /// write them back to its own memory folder. `None` elsewhere.
    pub source: Option<String>,
}

/// One change to the index. (Upserts dominate every batch, so boxing the
/// big variant would only add an allocation per document.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Change {
    /// Replace a document and its chunks (insert if new).
    Upsert(DocWrite),
    /// The file's content is unchanged but its stat data moved on.
    Touch {
        /// Path relative to the project root.
        path: String,
        /// New modification time.
        mtime_ns: i64,
        /// New size.
        size: u64,
    },
    /// Remove a document and its chunks.
    Delete(String),
}

/// Changes and vectors written together in one transaction.
#[derive(Clone, Debug, Default)]
pub struct WriteBatch {
    /// Document changes.
    pub changes: Vec<Change>,
    /// Model id and dimension of `embeddings`.
    pub model: Option<(String, usize)>,
    /// New vectors by embed-text hash.
    pub embeddings: Vec<(String, Vec<f32>)>,
}

/// A stored chunk, as search reads it back.
#[derive(Clone, Debug)]
pub struct ChunkRow {
    /// Row id (stable while the chunk exists).
    pub rowid: i64,
    /// The chunk.
    pub chunk: Chunk,
    /// Domain of its document.
    pub domain: String,
}

/// Every vector of one model, as one contiguous row-major matrix.
#[derive(Clone, Debug, Default)]
pub struct VectorSet {
    /// Chunk row id of each matrix row.
    pub rowids: Vec<i64>,
    /// Document path of each matrix row (for path filters).
    pub paths: Vec<String>,
    /// `rowids.len() × dim` values, as the half floats the store keeps and
    /// the in-memory matrix scans (no round trip through f32 on load).
    pub data: Vec<half::f16>,
    /// Vector length.
    pub dim: usize,
}

/// A stored knowledge-graph edge.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkRow {
    /// Row id of the source chunk; `None` for an entity → entity relation.
    pub chunk: Option<i64>,
    /// Source entity `(key, name)` when the edge starts at an entity.
    pub src: Option<(String, String)>,
    /// Target entity key.
    pub dst: String,
    /// Target entity display name.
    pub dst_name: String,
    /// Relation.
    pub rel: Relation,
    /// Weight.
    pub weight: f32,
    /// Path of the document the edge was found in.
    pub path: String,
}

/// A definition found by its name ([`IndexSnapshot::definitions`]): the
/// chunk whose code defines it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionRow {
    /// Row id of the defining chunk.
    pub chunk: i64,
    /// The name as the code spells it (`_make_filtering_bound_logger`).
    pub name: String,
    /// Path of its file.
    pub path: String,
    /// Hidden inside its type though its name does not say so (Ruby's
    /// methods after `private`): its `defines` link weighs less than 1
    /// and more than 0 (a link of weight 0 is a definition whose name is
    /// too common for the graph, public or not).
    pub hidden: bool,
}

/// A file found by its name ([`IndexSnapshot::files_named`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRow {
    /// Its indexed path.
    pub path: String,
    /// Row id of its first chunk (the one that stands for the file).
    pub first_chunk: i64,
}

/// Counts for `cairn status`.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Indexed files.
    pub files: u64,
    /// Chunks.
    pub chunks: u64,
    /// Chunks with a vector of the asked model.
    pub embedded_chunks: u64,
    /// Chunks of commit records (under [`crate::HISTORY_PREFIX`]) without
    /// a vector of the asked model: with `[history] vectors = false` they
    /// wait for none.
    pub unembedded_history: u64,
    /// Vectors in the cache, all models.
    pub cached_vectors: u64,
    /// When the last index run finished (unix seconds), if ever.
    pub last_indexed: Option<i64>,
}

/// What a storage backend can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A full-text query the backend rejected.
    #[error(
        "invalid full-text query {query:?}: {message} (FTS5 syntax: \"a phrase\", a OR b, a NOT b, a AND b, prefix*, (groups), text: or breadcrumb: before a term)"
    )]
    Query {
        /// The query as passed.
        query: String,
        /// The backend's message.
        message: String,
    },
    /// A query ran past the deadline of its snapshot
    /// ([`IndexSnapshot::set_deadline`]) and was stopped: a search's time
    /// budget ran out.
    #[error("{location}: a query ran past the search's deadline and was stopped")]
    Deadline {
        /// The index (a path or a URI without password).
        location: String,
    },
    /// Any other backend failure; its message names the index (path or URI).
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

/// Result alias for storage calls.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// A callback that receives exported documents; its `Err` stops the walk.
pub type DocumentSink<'a> = &'a mut dyn FnMut(DocWrite) -> Result<(), String>;
/// A callback that receives `(embed-text hash, vector)` pairs.
pub type VectorSink<'a> = &'a mut dyn FnMut(&str, &[f32]) -> Result<(), String>;

/// The index writer: one per process and index, behind the engine's lock.
pub trait IndexWriter: Send {
    /// Where the index lives (a path or a URI without password), for messages.
    fn location(&self) -> String;
    /// A new reader on its own connection.
    fn reader(&self) -> StoreResult<Box<dyn IndexReader>>;
    /// Every document's path → stat data and hash.
    fn manifest(&self) -> StoreResult<HashMap<String, DocRecord>>;
    /// Which of `hashes` the embedding cache holds for `model`.
    fn cached_hashes(&self, model: &str, hashes: &[&str]) -> StoreResult<HashSet<String>>;
    /// Up to `limit` chunks without a vector of `model`, one per embed hash,
    /// in hash order from the first hash greater than `after` (`""`: from
    /// the start): `(embed hash, chunk)`. The cursor lets a reader hand out
    /// more work while earlier work is still being embedded. Chunks of
    /// documents whose path starts with `skip` (commit records, when they
    /// get no vectors) are left out.
    fn unembedded(
        &self,
        model: &str,
        after: &str,
        limit: usize,
        skip: Option<&str>,
    ) -> StoreResult<Vec<(String, Chunk)>>;
    /// How many chunks lack a vector of `model` (those under `skip` left out).
    fn unembedded_count(&self, model: &str, skip: Option<&str>) -> StoreResult<u64>;
    /// Whether the index holds any vector of `model` (for this project, on
    /// a shared server): which of a model's ids an index was built with.
    fn has_vectors(&self, model: &str) -> StoreResult<bool>;
    /// Problems a consistency check finds (empty: none).
    fn integrity_check(&self) -> StoreResult<Vec<String>>;
    /// A full-text index problem, if any.
    fn fts_check(&self) -> StoreResult<Option<String>>;
    /// `(schema version of the index, newest this build knows)`.
    fn schema_version(&self) -> StoreResult<(i64, i64)>;
    /// Reclaims space.
    fn vacuum(&self) -> StoreResult<()>;
    /// Counts one recall of each memory id at `now` (unix seconds).
    fn record_access(&mut self, ids: &[&str], now: i64) -> StoreResult<()>;
    /// Writes a batch in one transaction.
    fn write(&mut self, batch: &WriteBatch) -> StoreResult<()>;
    /// Sets a metadata value.
    fn set_meta(&self, key: &str, value: &str) -> StoreResult<()>;
    /// A metadata value.
    fn meta(&self, key: &str) -> StoreResult<Option<String>>;
    /// Tidies the full-text index after a large change.
    fn optimize(&self) -> StoreResult<()>;
    /// Moves what a large write left in a write-ahead log into the index
    /// and shrinks the log (SQLite: `wal_checkpoint(TRUNCATE)`); a reader
    /// that holds the log's end makes it a partial checkpoint, not an error.
    fn checkpoint(&self) -> StoreResult<()> {
        Ok(())
    }
    /// Builds the backend's own index over the `dim`-long vectors if it has
    /// one and it is missing (called once vectors are written, so a first
    /// bulk load is indexed in one build, not one insert at a time).
    fn index_vectors(&mut self, _dim: usize) -> StoreResult<()> {
        Ok(())
    }
    /// Whether other machines write to this index too (a server): memory
    /// files then travel through it ([`DocWrite::source`]), and a memory file
    /// missing here is another machine's to fetch, not one to delete.
    fn shared(&self) -> bool {
        false
    }
    /// The stored text of a document written with a `source`.
    fn source(&self, _path: &str) -> StoreResult<Option<String>> {
        Ok(None)
    }
    /// The project's memory-writer lock on a backend other machines write
    /// to ([`Self::shared`]): while it is held, no other machine checks a
    /// new memory against the stored ones or writes one, so two machines
    /// storing the same text make one memory. `None` where one machine
    /// writes (the engine's lock file covers it). A handle: taking the lock,
    /// which may wait, needs no hold on the writer.
    fn memory_lock(&self) -> Option<std::sync::Arc<dyn SharedLock>> {
        None
    }
}

/// A lock that the machines sharing an index take in turn
/// ([`IndexWriter::memory_lock`]).
pub trait SharedLock: Send + Sync {
    /// Waits at most `wait` for the lock, held until the returned guard is
    /// dropped; past the wait, an error naming the lock.
    fn take(self: std::sync::Arc<Self>, wait: std::time::Duration) -> StoreResult<Box<dyn Send>>;
}

/// A read connection.
pub trait IndexReader: Send {
    /// Starts a consistent snapshot: every read through it sees one state.
    fn snapshot(&mut self) -> StoreResult<Box<dyn IndexSnapshot + '_>>;
}

/// One consistent view of the index.
pub trait IndexSnapshot {
    /// Ends any later query of this snapshot that runs past `deadline` with
    /// an error: a search's time budget, enforced inside the backend. A
    /// backend that cannot interrupt a query ignores it.
    fn set_deadline(&self, _deadline: std::time::Instant) {}
    /// Bumped by every write batch: caches older than this are stale.
    fn generation(&self) -> StoreResult<i64>;
    /// A metadata value.
    fn meta(&self, key: &str) -> StoreResult<Option<String>>;
    /// Lexical top `limit`: chunks scored, best first. `expr` is an
    /// OR of double-quoted terms (`cairn_search::lexical_expr`), or, when the
    /// user asked for it, raw FTS5 syntax; `weights` weigh (breadcrumb, text).
    fn bm25(
        &self,
        expr: &str,
        limit: usize,
        weights: (f64, f64),
        path_prefix: Option<&str>,
    ) -> StoreResult<Vec<Scored<ChunkId>>>;
    /// Chunks by row id (missing ids are skipped).
    fn chunks(&self, rowids: &[i64]) -> StoreResult<Vec<ChunkRow>>;
    /// Every vector of `model`, as one matrix.
    fn vectors(&self, model: &str) -> StoreResult<VectorSet>;
    /// The `k` chunks whose `model` vectors are nearest to `query` (cosine),
    /// chunks scored by similarity, best first, if the backend has its own
    /// vector index for them; `None` means "load [`Self::vectors`] and scan".
    fn vector_top_k(
        &self,
        _model: &str,
        _query: &[f32],
        _k: usize,
        _path_prefix: Option<&str>,
    ) -> StoreResult<Option<Vec<Scored<ChunkId>>>> {
        Ok(None)
    }
    /// Counts for `status` (`model`: count its embedded chunks).
    fn stats(&self, model: Option<&str>) -> StoreResult<Stats>;
    /// The knowledge base's domains (top-level folders).
    fn domains(&self) -> StoreResult<Vec<String>>;
    /// A chunk by its content-addressed id.
    fn chunk_by_id(&self, chunk_id: &str) -> StoreResult<Option<ChunkRow>>;
    /// One document's manifest record.
    fn document(&self, path: &str) -> StoreResult<Option<DocRecord>>;
    /// `(path, frontmatter JSON)` of every document under `prefix`.
    fn metas_under(&self, prefix: &str) -> StoreResult<Vec<(String, String)>>;
    /// Every document with its chunks and links, one at a time.
    fn for_each_document(&self, f: DocumentSink<'_>) -> StoreResult<()>;
    /// Every vector of `model` a chunk uses, one at a time.
    fn for_each_vector(&self, model: &str, f: VectorSink<'_>) -> StoreResult<()>;
    /// Every knowledge-graph edge.
    fn links(&self) -> StoreResult<Vec<LinkRow>>;
    /// Frontmatter JSON of one document.
    fn meta_of(&self, path: &str) -> StoreResult<Option<String>>;
    /// `(access_count, last_access)` of a memory id.
    fn memory_stats(&self, id: &str) -> StoreResult<(u64, i64)>;
    /// Every document in the manifest.
    fn documents(&self) -> StoreResult<Vec<DocRecord>>;
    /// The chunks that define a symbol whose [`crate::entity_key`] is
    /// `key` (the `defines` links), at most `limit`, by path: an exact
    /// lookup, no stemming. The caller compares each [`DefinitionRow::name`]
    /// with the name it asked for (the key folds case and underscores).
    fn definitions(&self, key: &str, limit: usize) -> StoreResult<Vec<DefinitionRow>>;
    /// Files (with at least one chunk) whose path contains `fragment`, at
    /// most `limit`, by path; the caller keeps those whose file name or
    /// folders match what it asked for.
    fn files_named(&self, fragment: &str, limit: usize) -> StoreResult<Vec<FileRow>>;
}

/// `text` as a LIKE pattern that matches it anywhere, `\` escaping the
/// pattern characters (`%`, `_`, `\`): `ESCAPE '\'` in both backends.
pub fn like_contains(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// `postgres://user:secret@host/db` → `postgres://user@host/db`: a store URI
/// as messages and `config show` print it.
pub fn redact_uri(uri: &str) -> String {
    match (uri.find("://"), uri.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &uri[s + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            format!("{}{}{}", &uri[..s + 3], user, &uri[at..])
        }
        _ => uri.to_string(),
    }
}
