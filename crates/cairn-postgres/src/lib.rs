//! Cairn's index on PostgreSQL with pgvector: the storage traits of
//! `cairn-core` ([`IndexWriter`](cairn_core::IndexWriter),
//! [`IndexReader`](cairn_core::IndexReader),
//! [`IndexSnapshot`](cairn_core::IndexSnapshot)) for a
//! server that many machines share.
//!
//! One database serves many projects: every row carries its project's name,
//! and every query is scoped by it. Lexical search is PostgreSQL full-text
//! search: a stored `tsvector` of breadcrumb (weight A) and text (weight B)
//! under the `english` configuration plus both under `simple` (weight D, so
//! code identifiers match as written), a GIN index, and `ts_rank_cd` for the
//! score — cover density, not BM25: it has no IDF and no length
//! normalisation beyond what the flags ask, which is why the same queries
//! rank differently than on SQLite's FTS5. Fusion stays in the engine, so
//! both backends fuse the same way. Vectors live once per (model, text hash)
//! in a `vector` column. Each write batch is one transaction; a snapshot is
//! one read-only REPEATABLE READ transaction.
#![deny(missing_docs)]

mod audit;
mod connection;
mod error;
mod schema;
mod snapshot;
mod vectors;
mod writer;

pub use audit::Audit;
pub use connection::redact;
pub use error::Error;
pub use snapshot::{PgReader, PgSnapshot};
pub use writer::PgStore;
