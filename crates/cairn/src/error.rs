//! The engine's [`Error`] and [`Result`].

use std::path::PathBuf;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The index failed.
    #[error(transparent)]
    Store(#[from] cairn_core::StoreError),
    /// The embedder failed.
    #[error(transparent)]
    Embed(#[from] cairn_core::EmbedError),
    /// A file or folder could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A configuration file is invalid.
    #[error("config {path}: {message}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A folder to index does not exist.
    #[error("{path}: no such folder to index")]
    MissingRoot {
        /// The folder.
        path: PathBuf,
    },
    /// An evaluation set is malformed.
    #[error("eval set {path}: {message}")]
    Eval {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// `[store] uri` names a backend Cairn does not know.
    #[error(
        "store {uri}: unknown backend (use postgres://user@host/db, or leave [store] uri empty for SQLite)"
    )]
    UnknownBackend {
        /// The URI, password removed.
        uri: String,
    },
    /// `[store] uri` names PostgreSQL but this build has no PostgreSQL support.
    #[error("store {uri}: this cairn was built without the `postgres` feature")]
    BackendNotBuilt {
        /// The URI, password removed.
        uri: String,
    },
    /// The configured store could not be opened.
    #[error("store {uri}: {source}")]
    Backend {
        /// The URI, password removed.
        uri: String,
        /// What the backend said.
        source: cairn_core::StoreError,
    },
    /// A client's session store could not be read.
    #[error("{path}: {message}")]
    Transcript {
        /// The store (a database or a transcript file).
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The project's git history could not be read.
    #[error("{path}: git history: {message}")]
    History {
        /// The project root.
        path: PathBuf,
        /// What the git library said.
        message: String,
    },
    /// A search was asked for something impossible.
    #[error("{0}")]
    Query(String),
    /// A chunk or file asked for is not there.
    #[error("{0}")]
    NotFound(String),
    /// A change asked for no longer fits what is there: a log entry that
    /// was already undone, or is not its memory's newest change.
    #[error("{0}")]
    Conflict(String),
    /// A path was refused: it would leave the project or is not indexed.
    #[error("path {path:?} refused: {reason}")]
    PathRefused {
        /// The path as given.
        path: String,
        /// Why.
        reason: String,
    },
    /// An import stream has a malformed line.
    #[error("import {source_name} line {line}: {message}")]
    Import {
        /// Where the stream came from (a file path, or `-` for stdin).
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Wraps an I/O error with the path it concerns: `.map_err(io(path))`.
pub(crate) fn io(path: &std::path::Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl From<cairn_store::Error> for Error {
    fn from(e: cairn_store::Error) -> Error {
        Error::Store(e.into())
    }
}

impl From<cairn_search::RankError> for Error {
    fn from(e: cairn_search::RankError) -> Error {
        Error::Query(e.to_string())
    }
}
