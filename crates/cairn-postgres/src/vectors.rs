//! The HNSW index over the vectors: its name per vector length and the
//! limits of a vector query.

/// The smallest HNSW candidate list of a query unless set
/// ([`PgStore::with_ef_search`]); pgvector's own default is 40.
pub(crate) const HNSW_EF_SEARCH: usize = 100;

/// Most nearest vectors one HNSW query fetches before a project's own exact
/// scan is the cheaper way.
pub(crate) const MAX_FETCH: usize = 40_000;

/// Most chunks (of the project, under the path prefix) that a vector query
/// scores exactly instead of asking the HNSW index unless set
/// ([`PgStore::with_exact_scan_max`], `[store] exact_scan_max`): a few milliseconds of
/// distances, against an index that serves every project and would have
/// to be asked for ever more neighbours before enough are this project's.
pub(crate) const EXACT_SCAN_MAX: usize = 5_000;

/// Largest vector pgvector's HNSW indexes.
pub(crate) const HNSW_MAX_DIM: usize = 2000;

/// Name of the partial HNSW index over the `dim`-long vectors.
pub(crate) fn hnsw_index(dim: usize) -> String {
    format!("embeddings_hnsw_{dim}")
}
