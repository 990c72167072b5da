//! A way out of a damaged index. The SQLite file is derived from the
//! project's files, so a damaged one is set aside (kept for a post-mortem,
//! never deleted) and rebuilt by the next `cairn index`, memory files first.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::error::{Error, Result};

/// The SQLite index file of the project at `root`, when the index is a
/// file (`None` on a server store).
fn index_file(root: &Path, config: &Config) -> Option<PathBuf> {
    config
        .store
        .uri
        .trim()
        .is_empty()
        .then(|| crate::paths::index_file(root))
}

/// What is wrong with the project's index file: its header (truncated, not
/// SQLite) or `PRAGMA quick_check`; empty when it is sound, missing, or on
/// a server store.
pub fn index_problems(root: &Path, config: &Config) -> Result<Vec<String>> {
    match index_file(root, config) {
        Some(f) if f.exists() => Ok(cairn_store::quick_check(&f).map_err(store)?),
        _ => Ok(Vec::new()),
    }
}

/// Moves the project's damaged index file aside (`index.sqlite.damaged-<unix
/// seconds>`, its WAL beside it) so the next open starts a new one; returns
/// where it went.
pub fn set_index_aside(root: &Path, config: &Config) -> Result<PathBuf> {
    let f = index_file(root, config)
        .ok_or_else(|| Error::Query("a server store has no index file to set aside".into()))?;
    cairn_store::set_aside(&f).map_err(store)
}

fn store(e: cairn_store::Error) -> Error {
    Error::Store(e.into())
}

impl Error {
    /// Whether this error says the index file is damaged (and `cairn index`
    /// recovers by setting it aside).
    pub fn is_damaged_index(&self) -> bool {
        let backend = match self {
            Error::Store(cairn_core::StoreError::Backend(b)) => b,
            Error::Backend {
                source: cairn_core::StoreError::Backend(b),
                ..
            } => b,
            _ => return false,
        };
        backend
            .downcast_ref::<cairn_store::Error>()
            .is_some_and(cairn_store::Error::is_damaged)
    }
}
