//! Cairn's index in one SQLite file: the file manifest, chunks, an FTS5 table
//! kept in sync with them, and vectors stored once per (model, content hash).
//!
//! [`Store`] is the writer: every [`WriteBatch`] is one `BEGIN IMMEDIATE`
//! transaction, so a killed indexer leaves the index as of its last batch.
//! [`Reader`] opens its own connection and
//! [`Reader::snapshot`](cairn_core::IndexReader::snapshot) reads inside one
//! transaction, so a search sees one consistent state while a writer works
//! (WAL mode).
#![deny(missing_docs)]

mod connection;
mod damage;
mod error;
mod marks;
mod schema;
mod snapshot;
#[cfg(test)]
mod tests;
mod user_cache;
mod vector_blob;
mod writer;

pub use cairn_core::{
    Change, ChunkRow, DocRecord, DocWrite, LinkRow, Stats, VectorSet, WriteBatch,
};
pub use damage::{header_damage, quick_check, set_aside};
pub use error::{Error, Result};
pub use marks::matched_words;
pub use snapshot::{Reader, Snapshot};
pub use user_cache::UserCache;
pub use writer::Store;
