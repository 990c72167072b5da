//! Errors of the SQLite index, each naming the index file.

use std::path::{Path, PathBuf};

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong with the index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// SQLite failed on the index file.
    #[error("index {path}: {source}")]
    Sqlite {
        /// The index file.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The folder for the index could not be created.
    #[error("{path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A full-text query was rejected by FTS5.
    #[error(
        "invalid full-text query {query:?}: {message} (FTS5 syntax: \"a phrase\", a OR b, a NOT b, a AND b, prefix*, (groups), text: or breadcrumb: before a term)"
    )]
    Query {
        /// The MATCH expression.
        query: String,
        /// FTS5's message.
        message: String,
    },
    /// The index file is damaged: not a SQLite file, shorter than its header
    /// says, or holding a page SQLite cannot read. The index is derived from
    /// the files, so rebuilding it loses nothing.
    #[error(
        "index {path} is damaged ({detail}); run `cairn index` to set it aside and rebuild it from the files (memory files live outside it: nothing is lost)"
    )]
    Damaged {
        /// The index file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A folder stands where the index file should be: SQLite says only
    /// "unable to open database file". `cairn index` sets it aside like a
    /// damaged file (renamed, never deleted) and builds the index anew.
    #[error(
        "index {path} is a directory, not an index file: move it away, or run `cairn index`, which sets it aside (renamed to index.sqlite.damaged-<time>, nothing deleted) and builds the index anew from the files"
    )]
    Directory {
        /// The folder where the index file should be.
        path: PathBuf,
    },
    /// The index was written by a newer Cairn.
    #[error(
        "index {path} has schema version {found}; this cairn knows up to {known}: upgrade cairn or delete the index (it is rebuilt by `cairn index`)"
    )]
    NewerSchema {
        /// The index file.
        path: PathBuf,
        /// Version in the file.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
    /// Writing an exported record failed (the sink's message).
    #[error("export from index {path}: {message}")]
    Export {
        /// The index file.
        path: PathBuf,
        /// What the sink said.
        message: String,
    },
}

impl From<Error> for cairn_core::StoreError {
    fn from(e: Error) -> cairn_core::StoreError {
        match e {
            Error::Query { query, message } => cairn_core::StoreError::Query { query, message },
            other => cairn_core::StoreError::Backend(Box::new(other)),
        }
    }
}

/// Wraps a SQLite error with the index file it happened on; a corrupt or
/// foreign file becomes [`Error::Damaged`], which says how to recover.
pub(crate) fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |source| {
        if is_damage(&source) {
            return Error::Damaged {
                path: path.to_path_buf(),
                detail: source.to_string(),
            };
        }
        // A table of the schema dropped while the file was open (or by a
        // statement the open's check did not reach): the same way out.
        if let Some(table) = missing_table(&source) {
            return Error::Damaged {
                path: path.to_path_buf(),
                detail: format!("its schema lacks the table {table}"),
            };
        }
        Error::Sqlite {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Whether SQLite says the file is corrupt or not a database.
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// The table SQLite says is missing ("no such table: chunks"), when it
/// names one of the index's own: every one of them is made by the
/// migrations, so its absence is damage, not a query's mistake.
fn missing_table(e: &rusqlite::Error) -> Option<&'static str> {
    let text = e.to_string();
    let name = text.split("no such table: ").nth(1)?;
    let name = name
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .next()?;
    let name = name.rsplit('.').next()?;
    crate::schema::REQUIRED.iter().copied().find(|t| *t == name)
}

impl Error {
    /// Whether this is [`Error::Damaged`] or [`Error::Directory`]: an index
    /// file `cairn index` sets aside and rebuilds.
    pub fn is_damaged(&self) -> bool {
        matches!(self, Error::Damaged { .. } | Error::Directory { .. })
    }
}
