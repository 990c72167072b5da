//! Which chunks answer a query, and why. [`rank`] is the whole ranking over
//! one snapshot of the index (retrievers, collapse to documents, fusion,
//! sections and factors, and a cross-encoder's rerank of the top when
//! asked); the engine supplies what it caches beside the
//! snapshot through [`RankSource`]. The parts are pure functions: a query
//! made a safe FTS5 expression, the nearest vectors, the knowledge graph
//! walked (Personalized PageRank), score fusion or Reciprocal Rank Fusion,
//! boosts and relevance floors, snippets, communities (Leiden).
//!
//! # Example
//!
//! Two retrievers' lists of chunk ids, fused the default way (score fusion:
//! each list's scores over its best, weighted, summed): the chunk both
//! found comes first.
//!
//! ```
//! use cairn_core::{ChunkId, Retriever, Scored};
//! use cairn_search::{FusionMethod, Ranked, fuse};
//!
//! let hit = |id, score| Scored::new(ChunkId(id), score);
//! let bm25 = [hit(1, 12.0), hit(2, 9.0)];
//! let vector = [hit(2, 0.81), hit(3, 0.64)];
//! let lists = [
//!     Ranked { retriever: Retriever::Bm25, items: &bm25, weight: 1.0 },
//!     Ranked { retriever: Retriever::Vector, items: &vector, weight: 0.5 },
//! ];
//! let fused = fuse(&lists, FusionMethod::default());
//! let order: Vec<ChunkId> = fused.iter().map(|f| f.id).collect();
//! assert_eq!(order, [ChunkId(2), ChunkId(1), ChunkId(3)]);
//! assert_eq!(fused[0].signals.len(), 2);
//! ```
#![deny(missing_docs)]

mod boost;
mod cache_file;
mod community;
mod floor;
mod fusion;
mod graph;
mod intent;
mod knowledge;
mod knowledge_file;
mod memory;
mod names;
mod query;
mod rank;
mod rng;
mod snippet;
mod tokens;
mod vector;
mod vector_file;
mod when;

pub use boost::{
    Boosts, CHANGELOG_FACTOR, CONTRIBUTING_FACTOR, DOMAIN_BOOST, GENERATED_FACTOR,
    INSTRUCTIONS_BOOST, LOCK_FACTOR, PathClass, QueryAsks, TEST_FACTOR, VENDORED_FACTOR, domain_of,
    domain_words, in_domain, is_inline_test, is_instructions, path_class,
};
pub use cache_file::{CacheFileError, map_file};
pub use community::{Communities, LeidenParams, central_members, leiden, modularity};
pub use floor::{Floor, FloorError};
pub use fusion::{Fused, FusionMethod, RRF_K, Ranked, fuse, rrf, score_fusion, weighted_fusion};
pub use graph::{Graph, PprParams, SeedPaths, explain_path, personalized_pagerank, shortest_path};
pub use intent::Intent;
pub use knowledge::{Community, EdgeIn, KnowledgeGraph, NodeRef};
pub use memory::{MemorySignals, MemoryWeights, RECENCY_DAYS, SOURCE_CHANGED_FACTOR, Term, blend};
pub use names::{
    MAX_NAMES, MAX_PATHS, MAX_PHRASES, NameRef, NamesFound, NamesListed, PathRef, QueryRead,
    RefSource, names_list, read_names,
};
pub use query::{MAX_QUERY_TERMS, fts_term_count, is_stop_word, lexical_expr, query_terms};
pub use rank::{
    Candidate, RERANK_RRF_K, RERANK_STEP, RankError, RankRequest, RankSettings, RankSource,
    Ranking, RerankBlend, RerankPlan, RerankReport, Retrievers, rank,
};
pub use rng::SplitMix64;
pub use snippet::snippet;
pub use tokens::estimate_tokens;
pub use vector::VectorIndex;
pub use vector_file::VectorFileError;
pub use when::{
    TimeOrder, TimeQuery, TimeRange, civil_from_days, date_in, days_from_civil, read_query,
};
