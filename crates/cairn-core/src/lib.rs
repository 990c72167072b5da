//! The vocabulary every Cairn crate speaks: chunks, hits, content ids, the
//! [`Embedder`] trait and the storage traits ([`IndexWriter`],
//! [`IndexReader`], [`IndexSnapshot`]). No I/O and no heavy dependencies live
//! here.
#![deny(missing_docs)]

mod cjk;
mod ids;
mod lexical;
mod link;
mod memory;
mod store;
pub mod sync;

pub use cjk::{cjk_bigrams, is_cjk};
pub use ids::{ChunkId, DocId, Retriever, Scored};
pub use lexical::{fts_text, identifier_parts};
pub use link::{Link, Relation, entity_key};
pub use memory::{DEFAULT_IMPORTANCE, MEMORY_TYPES, Memory, MemoryRelation};
pub use store::{
    Change, ChunkRow, DefinitionRow, DocRecord, DocWrite, DocumentSink, FileRow, IndexReader,
    IndexSnapshot, IndexWriter, LinkRow, SharedLock, Stats, StoreError, StoreResult, VectorSet,
    VectorSink, WriteBatch, like_contains, redact_uri,
};

use serde::{Deserialize, Serialize};

/// A piece of a source file small enough to embed and to show an agent.
///
/// A chunk is always a contiguous range of lines of its file, so its text can
/// be re-read from the file with `start_line..=end_line`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Content-addressed id: see [`chunk_id`].
    pub id: String,
    /// Source path, relative to the project root, `/`-separated.
    pub path: String,
    /// The headings above this chunk, outermost first (empty before the first heading).
    pub heading_path: Vec<String>,
    /// Level of the innermost heading (1..=6), 0 for text before the first heading.
    pub level: u8,
    /// First line, 1-based, inclusive.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The chunk's text: exactly lines `start_line..=end_line` of the file.
    pub text: String,
    /// [`content_hash`] of `text`.
    pub hash: String,
}

impl Chunk {
    /// Builds a chunk, computing its hash and content-addressed id.
    pub fn new(
        path: &str,
        heading_path: Vec<String>,
        level: u8,
        start_line: u32,
        end_line: u32,
        text: String,
    ) -> Chunk {
        let hash = content_hash(text.as_bytes());
        Chunk {
            id: chunk_id(path, start_line, end_line, &hash),
            path: path.to_string(),
            heading_path,
            level,
            start_line,
            end_line,
            text,
            hash,
        }
    }

    /// The heading path joined with ` > `, e.g. `Architecture > Caching > Redis`.
    pub fn breadcrumb(&self) -> String {
        breadcrumb(&self.heading_path)
    }

    /// The text handed to the embedding model: the chunk text behind the
    /// headings above it, so every chunk carries its context (a turn under a
    /// dated session heading, the later part of a split section). A heading
    /// the text itself starts with is not repeated.
    pub fn embed_text(&self) -> String {
        let first = self.text.lines().next().unwrap_or("").trim_start();
        let context = if first.starts_with('#') && !self.heading_path.is_empty() {
            &self.heading_path[..self.heading_path.len() - 1]
        } else {
            &self.heading_path[..]
        };
        if context.is_empty() {
            self.text.clone()
        } else {
            format!("{}\n\n{}", breadcrumb(context), self.text)
        }
    }
}

/// What sort of source a chunk comes from: search can be limited to some.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Project documentation (markdown).
    Doc,
    /// An agent memory (a file under `.cairn/memory/`).
    Memory,
    /// Source code.
    Code,
    /// A commit of the project's git history (a record under
    /// [`HISTORY_PREFIX`], no file on disk).
    History,
}

/// The path prefix of the commit records the indexer writes for the
/// project's git history: `.cairn/history/<sha>` (a merge or a bot's
/// commit: `.cairn/history/noise/<sha>`, weighed down in search). No
/// file lives there; the scan never sees these paths.
pub const HISTORY_PREFIX: &str = ".cairn/history/";

/// Whether `path` is a commit record of a merge or a bot
/// ([`HISTORY_PREFIX`]`noise/`).
pub fn is_history_noise(path: &str) -> bool {
    path.strip_prefix(HISTORY_PREFIX)
        .is_some_and(|r| r.starts_with("noise/"))
}

/// Extensions of docs: chunked by their sections (markdown,
/// reStructuredText), plain text at its paragraphs.
pub const DOC_EXTENSIONS: [&str; 10] = [
    "md", "markdown", "mdx", "rst", "rest", "txt", "adoc", "asciidoc", "org", "man",
];

/// Extensions of configuration and build files, chunked by their sections
/// (TOML tables, INI sections, YAML keys; `cairn-ingest`'s config reader).
pub const CONFIG_EXTENSIONS: [&str; 6] = ["toml", "ini", "cfg", "yaml", "yml", "mk"];

/// Configuration and build files known by their whole name (no extension
/// of their own, or JSON that is configuration rather than data).
pub const CONFIG_NAMES: [&str; 9] = [
    "Makefile",
    "GNUmakefile",
    "Dockerfile",
    "Containerfile",
    "package.json",
    "composer.json",
    "tsconfig.json",
    "jsconfig.json",
    "deno.json",
];

/// Names of docs that often have no extension (`README`, `NEWS`), indexed
/// as plain text (or reStructuredText, when they read as it) wherever `txt`
/// files are.
pub const DOC_NAMES: [&str; 9] = [
    "README",
    "CHANGES",
    "CHANGELOG",
    "NEWS",
    "HISTORY",
    "CONTRIBUTING",
    "INSTALL",
    "AUTHORS",
    "TODO",
];

/// Whether a lowercase project-relative path is a man page: `name.1` to
/// `name.9` in a `man` folder (`man/`, `man1/`, `doc/man/`…). Indexed where
/// `index.extensions` lists its section's digit.
pub fn is_man_page(lower: &str) -> bool {
    let mut parts = lower.rsplit('/');
    let file = parts.next().unwrap_or("");
    let section = file.rsplit_once('.').map(|(_, e)| e);
    section.is_some_and(|e| e.len() == 1 && e.as_bytes()[0].is_ascii_digit() && e != "0")
        && parts.any(|d| d.starts_with("man"))
}

/// Whether a file name (no folder) is one of [`DOC_NAMES`] with no
/// extension, in any case.
pub fn is_doc_name(name: &str) -> bool {
    !name.contains('.') && DOC_NAMES.iter().any(|d| d.eq_ignore_ascii_case(name))
}

impl Kind {
    /// The kind of a project-relative, `/`-separated path, given the memory
    /// folder's prefix (e.g. `.cairn/memory/`).
    pub fn of(path: &str, memory_prefix: &str) -> Kind {
        let lower = path.to_ascii_lowercase();
        if path.starts_with(HISTORY_PREFIX) {
            Kind::History
        } else if path.starts_with(memory_prefix) {
            Kind::Memory
        } else if lower
            .rsplit_once('.')
            .is_some_and(|(_, e)| DOC_EXTENSIONS.contains(&e))
            || is_doc_name(path.rsplit('/').next().unwrap_or(path))
            || is_man_page(&lower)
        {
            Kind::Doc
        } else {
            Kind::Code
        }
    }

    /// Parses `doc`, `memory`, `code` or `history` (also plural, any case;
    /// `commit` for history).
    pub fn parse(s: &str) -> Option<Kind> {
        match s.trim().to_ascii_lowercase().trim_end_matches('s') {
            "doc" => Some(Kind::Doc),
            "memorie" | "memory" => Some(Kind::Memory),
            "code" => Some(Kind::Code),
            "history" | "historie" | "commit" => Some(Kind::History),
            _ => None,
        }
    }
}

/// Joins a heading path with ` > `.
pub fn breadcrumb(heading_path: &[String]) -> String {
    heading_path.join(" > ")
}

/// Hex BLAKE3 hash of some bytes: the content hash used for files, chunks and
/// the embedding cache.
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The id of a chunk: 16 hex digits of BLAKE3 over its path, line range and
/// content hash. The same text at the same place always gets the same id.
pub fn chunk_id(path: &str, start_line: u32, end_line: u32, hash: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(path.as_bytes());
    h.update(&[0]);
    h.update(&start_line.to_le_bytes());
    h.update(&end_line.to_le_bytes());
    h.update(hash.as_bytes());
    h.finalize().to_hex()[..16].to_string()
}

/// Turns text into unit-length vectors. Implemented by the local MiniLM model
/// and by a deterministic fake for tests (both in `cairn-embed`).
pub trait Embedder: Send + Sync {
    /// A stable id of the model and its settings; vectors from different ids never mix.
    fn model_id(&self) -> &str;
    /// Whether the first embed would load something first (a model read
    /// on first use): a caller may then start [`Embedder::warm_up`] on
    /// another thread while it does other work.
    fn is_cold(&self) -> bool {
        false
    }
    /// Loads what the first embed would; a no-op for one that is ready. A
    /// failure is kept for the embed that follows to report.
    fn warm_up(&self) {}
    /// Length of every vector this embedder returns.
    fn dimension(&self) -> usize;
    /// Embeds each text; the result has one L2-normalised vector per input, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Embeds a search query. Models trained for retrieval embed a query
    /// differently from the passages it should find (Voyage's `input_type`,
    /// Gemini's `taskType`, Jina's `task`); this default embeds it like any
    /// other text.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed(&[query])?
            .pop()
            .ok_or_else(|| EmbedError::new(format!("{} returned no vector", self.model_id())))
    }

    /// Embeds every text `source` hands out (a group per call, `None` when
    /// there are no more) and gives `sink` the vectors, each with its
    /// text's number in the order the source handed them out (from 0), in
    /// whatever order they finish. An embedder that runs on several threads
    /// keeps every thread fed across groups, with no wait for a group's
    /// last text; this default embeds one group at a time.
    fn embed_stream(
        &self,
        source: &mut TextSource<'_>,
        sink: &mut EmbedSink<'_>,
    ) -> Result<(), EmbedError> {
        let mut seq = 0u64;
        while let Some(texts) = source()? {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vecs = self.embed(&refs)?;
            if vecs.len() != texts.len() {
                return Err(EmbedError::new(format!(
                    "{} returned {} vectors for {} texts",
                    self.model_id(),
                    vecs.len(),
                    texts.len()
                )));
            }
            let first = seq;
            seq += texts.len() as u64;
            sink(
                vecs.into_iter()
                    .enumerate()
                    .map(|(i, v)| (first + i as u64, v))
                    .collect(),
            )?;
        }
        Ok(())
    }
}

/// Scores how well each passage answers a query: a cross-encoder, which
/// reads the query and the passage together (the local ms-marco MiniLM in
/// `cairn-embed`). Higher is better; scores compare across the passages of
/// one query.
pub trait Reranker: Send + Sync {
    /// A stable id of the model.
    fn model_id(&self) -> &str;
    /// One score per passage, in order.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, EmbedError>;
}

/// Hands out the next group of texts to embed, `None` when there are no more
/// ([`Embedder::embed_stream`]).
pub type TextSource<'a> = dyn FnMut() -> Result<Option<Vec<String>>, EmbedError> + Send + 'a;

/// Takes finished vectors, each with its text's number
/// ([`Embedder::embed_stream`]).
pub type EmbedSink<'a> = dyn FnMut(Vec<(u64, Vec<f32>)>) -> Result<(), EmbedError> + Send + 'a;

/// An embedder failed on its input or its model.
#[derive(Debug, thiserror::Error)]
#[error("embedding failed: {message}")]
pub struct EmbedError {
    /// What went wrong.
    pub message: String,
}

impl EmbedError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> EmbedError {
        EmbedError {
            message: message.into(),
        }
    }
}

/// Whether a file still has the content that was indexed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Freshness {
    /// The file has the indexed content.
    #[default]
    Fresh,
    /// The file changed since it was indexed: line numbers and text may be off.
    Changed,
    /// The file is gone.
    Deleted,
}

/// One ranked answer to a search.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Hit {
    /// The chunk's content-addressed id.
    pub chunk_id: String,
    /// Source path, relative to the project root.
    pub path: String,
    /// First line of the chunk, 1-based.
    pub start_line: u32,
    /// Last line of the chunk, 1-based, inclusive.
    pub end_line: u32,
    /// Heading path joined with ` > `.
    pub breadcrumb: String,
    /// A few lines of the chunk that best match the query.
    pub snippet: String,
    /// The chunk's full text, as indexed.
    pub text: String,
    /// Whether the file still has the indexed content (checked when the
    /// search ran: a changed file's lines and text may be off).
    pub source: Freshness,
    /// Final score after fusion and boosts (higher is better): a share of
    /// the same query's best, not comparable across queries.
    pub score: f64,
    /// Cosine similarity of the query to this hit's best chunk when the
    /// vectors ranked it: comparable across queries, the measure of whether
    /// anything is close at all (none: the vectors did not reach it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// How each retriever ranked this hit's file (for `--explain`): files
    /// are fused, each shown by its best chunk.
    pub signals: Vec<Signal>,
    /// How each retriever ranked this chunk itself among the chunks (for
    /// `--explain`): what orders the chunks of one file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunk_signals: Vec<Signal>,
    /// Multipliers applied after fusion (for `--explain`).
    pub boosts: Vec<Boost>,
    /// When the graph retriever ranked this hit: the path that brought it
    /// in, from a seed (a top hit or an entity the query names) to this
    /// chunk, as `label -rel-> label` steps.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub via: Vec<String>,
    /// When a cross-encoder reranked the top of the search and scored this
    /// hit: its score and ranks (for `--explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankSignal>,
}

/// What the reranker made of one hit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RerankSignal {
    /// The cross-encoder's score (a logit: higher is better, comparable
    /// within one query).
    pub score: f64,
    /// 1-based rank by that score among the hits it scored.
    pub rank: usize,
    /// 1-based rank in the fused order before reranking.
    pub fused_rank: usize,
}

/// One retriever's opinion of a hit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// The retriever (written `bm25`, `vector` or `graph`).
    pub retriever: Retriever,
    /// 1-based rank in that retriever's list.
    pub rank: usize,
    /// The retriever's raw score (BM25 score, higher is better; cosine similarity).
    pub raw: f64,
    /// What this rank added to the fused score.
    pub contribution: f64,
}

/// A multiplier applied to a hit's fused score.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Boost {
    /// Why: `domain` or `instructions`.
    pub reason: String,
    /// The factor, e.g. 1.3.
    pub factor: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_id_depends_on_place_and_content() {
        let a = Chunk::new("a.md", vec![], 0, 1, 2, "hello".into());
        let b = Chunk::new("b.md", vec![], 0, 1, 2, "hello".into());
        let c = Chunk::new("a.md", vec![], 0, 1, 3, "hello".into());
        let d = Chunk::new("a.md", vec![], 0, 1, 2, "hello!".into());
        let a2 = Chunk::new("a.md", vec!["X".into()], 1, 1, 2, "hello".into());
        assert_eq!(a.id, a2.id);
        assert_ne!(a.id, b.id);
        assert_ne!(a.id, c.id);
        assert_ne!(a.id, d.id);
        assert_eq!(a.id.len(), 16);
    }

    #[test]
    fn embed_text_carries_the_headings_above() {
        let first = Chunk::new(
            "a.md",
            vec!["A".into(), "B".into()],
            2,
            1,
            3,
            "## B\n\nbody".into(),
        );
        assert_eq!(first.embed_text(), "A\n\n## B\n\nbody");
        let top = Chunk::new("a.md", vec!["A".into()], 1, 1, 3, "# A\n\nbody".into());
        assert_eq!(top.embed_text(), "# A\n\nbody");
        let later = Chunk::new(
            "a.md",
            vec!["A".into(), "B".into()],
            2,
            4,
            5,
            "more body".into(),
        );
        assert_eq!(later.embed_text(), "A > B\n\nmore body");
    }
}
