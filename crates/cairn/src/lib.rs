//! Cairn's engine: one project's configuration, its index, and the operations
//! the CLI and the MCP server call — index, search, memory, graph, status.
//! Evaluations and benchmarks live in `cairn-bench`.
//!
//! ```text
//! scan → chunk → embed → store → retrieve (bm25 | vector | graph) → fuse → boost → hits
//! ```
//!
//! # Example
//!
//! A project in a temporary folder, indexed and searched with keywords only
//! (`[embed] model = "none"`: no model to fetch), and a memory stored and
//! recalled:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(
//!     dir.path().join("deploy.md"),
//!     "# Deploying\n\nRun the release script, then tag the commit it built.\n",
//! )?;
//! let mut config = cairn::Config::default();
//! config.embed.model = "none".into();
//! let engine = cairn::open(dir.path(), &config)?;
//! engine.index(&engine.default_roots(), &cairn::NoProgress)?;
//!
//! let opts = cairn::SearchOptions {
//!     mode: cairn::Mode::Bm25,
//!     ..Default::default()
//! };
//! let hits = engine.search("release script", &opts)?;
//! assert_eq!(hits[0].path, "deploy.md");
//!
//! engine.remember(&cairn::MemoryInput {
//!     text: "Releases are tagged from main only.".into(),
//!     client: "example".into(),
//!     ..Default::default()
//! })?;
//! let recalled = engine.recall("which branch are releases tagged from", &Default::default())?;
//! assert!(recalled[0].memory.text.contains("main only"));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod access;
mod capture;
mod clients;
mod confidence;
mod config;
mod embed_queue;
mod engine;
mod error;
mod git;
mod graph;
mod history;
mod indexer;
mod inject;
mod limits;
mod lock;
mod memory;
mod open;
mod orphans;
pub mod paths;
mod personal;
mod pool;
mod progress;
mod projects;
mod recover;
mod search;
mod secrets;
mod supersede;
mod transfer;
mod vault;
mod when;

pub use access::{FileText, Section};
pub use cairn_core::Freshness;
pub use cairn_ingest::redact as redact_secrets;
pub use cairn_ingest::{Token, TokenClass, highlight, is_env_template};
pub use cairn_llm::Provider;
/// What a question wants (how the code behaves, or how to use it), read from its words as ranking reads it.
pub use cairn_search::{Intent, NameRef, QueryRead, RerankBlend, RerankReport, read_names};
pub use capture::{Captured, CompactOptions, Compacted, HookInput, TranscriptView};
pub use clients::{openclaw_state_dir, openclaw_transcript, opencode_data_dir, opencode_store};
pub use confidence::{CONFIDENT_SIMILARITY, Confidence};
pub use config::{
    CaptureConfig, ChunkConfig, Config, EmbedConfig, EmbedPrecision, EmbedProvider, IndexConfig,
    InjectConfig, Layers, LlmConfig, MemoryConfig, SearchConfig, Source, Sources, StoreConfig,
    find_project_root,
};
pub use embed_queue::{EmbedQueue, SLOW_DOWN_AT, slow_down};
pub use engine::{Engine, IndexHealth, Status};
pub use error::{Error, Result};
pub use git::{Checkout, Identity, checkout, identity, memory_root};
pub use graph::{
    Communities, CommunityView, EntityInput, GraphNode, Neighbor, Neighborhood, ObservationInput,
    Related, RelationInput,
};
pub use history::{CommitFile, CommitMeta, Why, WhyCommit, WhyMemory, WhyOptions};
pub use indexer::{IndexOptions, IndexReport, LeftOutLine, Noted, Skipped, left_out_lines};
pub use inject::{
    Injection, last_session, prompt_block, prompt_recall, session_block, session_query,
    session_recall,
};
pub use limits::{
    DEFAULT_READ_TOKENS, MAX_CONTEXT, MAX_DEPTH, MAX_HITS, MAX_OFFSET, MAX_RERANK_BUDGET_MS,
    MAX_RERANK_K, MAX_TOKENS,
};
pub use memory::{
    ForgetFilter, ListOptions, MemoryInput, MemoryPatch, MemoryView, RecallOptions, Recalled,
    Stored, Undone,
};
pub use open::{
    Open, PrecisionChoice, PrecisionWhy, embed_precision, load_embedder, open, open_store,
    rerank_precision, server_store,
};
pub use orphans::Orphans;
pub use personal::open_personal;
pub use progress::{NoProgress, Progress};
pub use projects::{
    MAX_PROJECTS, MAX_SEARCH_PROJECTS, ProjectEntry, ProjectHit, Projects, search_projects,
};
pub use recover::{index_problems, set_index_aside};
pub use search::{Mode, RankedChunk, SearchOptions, Searched, matched_words};
pub use supersede::{Bound, ChainLinks, Chains, MAX_REPLACED, Refusal, chain_links};
pub use transfer::{EXPORT_FORMAT, Transfer};
pub use vault::{LogEntry, UndoState, Vault, now_rfc3339, parse_ttl, undo_states, whole_seconds};
