//! Cairn's index on PostgreSQL with pgvector: the storage traits of
//! `cairn-core` ([`IndexWriter`](cairn_core::IndexWriter),
//! [`IndexReader`](cairn_core::IndexReader),
//! [`IndexSnapshot`](cairn_core::IndexSnapshot)) for a
//! server that many machines share.
//!
//! One database serves many projects: every row carries its project's name,
//! and every query is scoped by it. Lexical search is BM25 ranked as SQLite's
//! FTS5 ranks it (`lexicon.rs`): the same tokens (split by SQLite's own
//! `porter unicode61` tokenizer), postings and statistics kept by the writer
//! in the transaction that writes the chunks, and FTS5's formula; a raw
//! FTS5 expression (`--fts`) falls back to PostgreSQL full-text search over
//! a stored `tsvector` and `ts_rank_cd`. Fusion stays in the engine, so
//! both backends fuse the same way. Vectors live once per (model, text hash)
//! in a `vector` column. Each write batch is one transaction; a snapshot is
//! one read-only REPEATABLE READ transaction, whose statements run under
//! the search's deadline. A memory's near-duplicate check and write hold
//! the project's advisory lock (`lock.rs`), so machines take turns.
#![deny(missing_docs)]

mod audit;
mod connection;
mod error;
mod lexicon;
mod lock;
mod schema;
mod snapshot;
mod vectors;
mod writer;

pub use audit::Audit;
pub use connection::redact;
pub use error::Error;
pub use snapshot::{PgReader, PgSnapshot};
pub use writer::PgStore;
