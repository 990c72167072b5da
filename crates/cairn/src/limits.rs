//! The most a caller may ask of one request. Counts come from outside — CLI
//! flags, MCP arguments, HTTP bodies — and are clamped here, in the engine,
//! so that every door gets the same bounds and no number can make a request
//! allocate or loop without end (`recall --offset 4294967295` once asked
//! for a 256 GiB heap and aborted the shared daemon).

/// Most hits one search or recall returns.
pub const MAX_HITS: usize = 1_000;
/// Furthest a page of recalled or listed memories may start.
pub const MAX_OFFSET: usize = 10_000;
/// Most candidates each retriever hands to fusion (the evals ask 400).
pub const MAX_DEPTH: usize = 50_000;
/// Most transcript turns shown on each side of the centre one.
pub const MAX_CONTEXT: usize = 1_000;

/// Tokens of text `expand` and `get` return when the caller sets no budget:
/// a function or a section, not a whole file.
pub const DEFAULT_READ_TOKENS: usize = 2_000;
/// The largest token budget any answer takes (`search`, `memory_recall`,
/// `expand`, `get`).
pub const MAX_TOKENS: usize = 1_000_000;

/// Most candidates a cross-encoder reranks in one search (`[search] rerank_k`).
pub const MAX_RERANK_K: usize = 100;
/// The longest `[search] rerank_budget_ms` (a minute).
pub const MAX_RERANK_BUDGET_MS: u64 = 60_000;

/// How long one search may spend in the index before it ends with an error.
pub const SEARCH_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// `asked` (0: `default`) within `1..=max`.
pub(crate) fn count(asked: usize, default: usize, max: usize) -> usize {
    if asked == 0 { default } else { asked }.min(max)
}
