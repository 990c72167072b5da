//! Cairn's engine: one project's configuration, its index, and the operations
//! the CLI and the MCP server call — index, search, status, eval.
//!
//! ```text
//! scan → chunk → embed → store → retrieve (bm25 | vector | graph) → fuse → boost → hits
//! ```
#![deny(missing_docs)]

mod access;
mod capture;
mod config;
mod engine;
mod error;
mod eval;
mod graph;
mod indexer;
mod memory;
mod memory_eval;
mod paths;
mod pool;
mod progress;
mod search;
mod transfer;
mod vault;
mod vector_bench;

pub use access::{FileText, Freshness, Section};
pub use cairn_llm::Provider;
pub use capture::{Captured, CompactOptions, Compacted, HookInput, TranscriptView};
pub use config::{
    CaptureConfig, ChunkConfig, Config, EmbedConfig, IndexConfig, Layers, LlmConfig, MemoryConfig,
    SearchConfig, Source, Sources, StoreConfig, find_project_root,
};
pub use engine::{Engine, IndexHealth, Status};
pub use error::{Error, Result};
pub use eval::{EvalOptions, EvalReport, ModeScores, run_eval, run_eval_on};
pub use graph::{
    Communities, CommunityView, EntityInput, GraphNode, Neighbor, Neighborhood, ObservationInput,
    Related, RelationInput,
};
pub use indexer::{IndexOptions, IndexReport, Skipped};
pub use memory::{
    ForgetFilter, ListOptions, MemoryInput, MemoryPatch, MemoryView, RecallOptions, Recalled,
    Stored,
};
pub use memory_eval::{MemoryEvalOptions, MemoryEvalReport, run_memory_eval};
pub use progress::{NoProgress, Progress};
pub use search::{Mode, SearchOptions};
pub use transfer::{EXPORT_FORMAT, Transfer};
pub use vault::{LogEntry, Vault, parse_ttl};
pub use vector_bench::{
    BENCH_MODEL, VectorBench, VectorBenchOptions, run_vector_bench, sqlite_writer,
};
