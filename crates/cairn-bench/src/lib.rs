//! Cairn's evaluations and benchmarks, apart from the engine: retrieval
//! quality on labelled sets (SciFact, LoCoMo) and what the relevance floors
//! would drop from them, LoCoMo as a memory benchmark,
//! nearest-neighbour search at scale on any backend, the graph retriever,
//! recall latency and embedding throughput. The CLI's `eval` and `bench`
//! commands call these and print what they return.
#![deny(missing_docs)]

mod confidence;
mod error;
mod floors;
mod graph;
mod latency;
mod memory;
mod retrieval;
mod vectors;

pub use confidence::{CHAT_PROMPTS, ConfidenceRow, SCIENCE_PROMPTS, off_topic_for};
pub use error::{Error, Result};
pub use floors::FloorScores;
pub use graph::{GraphBench, run_graph_bench};
pub use latency::{EmbedBench, EmbedBenchOptions, RecallBench, run_embed_bench, run_recall_bench};
pub use memory::{MemoryEvalOptions, MemoryEvalReport, run_memory_eval};
pub use retrieval::{
    EvalOptions, EvalReport, GroupScores, ModeScores, RERANK_VARIANTS, run_eval, run_eval_on,
};
pub use vectors::{BENCH_MODEL, VectorBench, VectorBenchOptions, run_vector_bench, sqlite_writer};

/// A memory figure of a process, in KiB, from Linux's `/proc/<pid>/status`
/// (`field` such as `VmRSS`, resident now, or `VmHWM`, its peak; `pid`
/// `self` for this process); `None` where `/proc` or the field is missing.
pub fn proc_status_kib(pid: &str, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Resident set size of a process in KiB (Linux; `None` elsewhere).
pub fn rss_kib(pid: u32) -> Option<u64> {
    proc_status_kib(&pid.to_string(), "VmRSS")
}
