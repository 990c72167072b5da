//! Which chunks answer a query, and why. Pure functions over ranked lists: the
//! engine fetches BM25 and vector candidates and the graph's links from the
//! store; this crate turns a query into a safe FTS5 expression, finds the
//! nearest vectors, walks the knowledge graph (Personalized PageRank), fuses
//! the lists with Reciprocal Rank Fusion, applies boosts and relevance floors,
//! picks snippets, and finds communities (Leiden).
#![deny(missing_docs)]

mod boost;
mod community;
mod floor;
mod fusion;
mod graph;
mod knowledge;
mod memory;
mod query;
mod rng;
mod snippet;
mod tokens;
mod vector;

pub use boost::{
    Boosts, CHANGELOG_FACTOR, DOMAIN_BOOST, INSTRUCTIONS_BOOST, PathClass, QueryAsks, TEST_FACTOR,
    domain_of, is_instructions, path_class,
};
pub use community::{Communities, LeidenParams, central_members, leiden, modularity};
pub use floor::{Floor, FloorError};
pub use fusion::{Fused, FusionMethod, RRF_K, Ranked, fuse, rrf, score_fusion};
pub use graph::{Graph, PprParams, SeedPaths, explain_path, personalized_pagerank, shortest_path};
pub use knowledge::{Community, EdgeIn, KnowledgeGraph, NodeRef};
pub use memory::{MemorySignals, MemoryWeights, RECENCY_DAYS, SOURCE_CHANGED_FACTOR, Term, blend};
pub use query::{MAX_QUERY_TERMS, fts_term_count, lexical_expr, query_terms};
pub use rng::SplitMix64;
pub use snippet::snippet;
pub use tokens::estimate_tokens;
pub use vector::VectorIndex;
