//! The HNSW index over the vectors: its name per vector length, the limits
//! of a vector query, and how many of a project's chunks have a vector.

use cairn_core::StoreResult;

use crate::snapshot::PgSnapshot;

/// The smallest HNSW candidate list of a query unless set
/// ([`PgStore::with_ef_search`]); pgvector's own default is 40.
pub(crate) const HNSW_EF_SEARCH: usize = 100;

/// Most nearest vectors one HNSW query fetches before a project's own exact
/// scan is the cheaper way.
pub(crate) const MAX_FETCH: usize = 40_000;

/// Largest vector pgvector's HNSW indexes.
pub(crate) const HNSW_MAX_DIM: usize = 2000;

/// Name of the partial HNSW index over the `dim`-long vectors.
pub(crate) fn hnsw_index(dim: usize) -> String {
    format!("embeddings_hnsw_{dim}")
}

impl PgSnapshot<'_> {
    /// How many of this project's chunks have a `model` vector.
    pub(crate) fn vector_count(&self, model: &str) -> StoreResult<u64> {
        Ok(self.query(
            "SELECT count(*) FROM chunks c WHERE c.project = $1 AND EXISTS
                 (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)",
            &[&self.project, &model],
        )?[0]
            .get::<_, i64>(0) as u64)
    }
}
