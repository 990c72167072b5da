//! Errors of the PostgreSQL backend, each naming the server and database.

use cairn_core::StoreError;

/// Errors of this backend.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server failed or refused a statement.
    #[error("postgres {location}: {}", detail(source))]
    Postgres {
        /// The server and database (no password).
        location: String,
        /// The driver's error.
        source: postgres::Error,
    },
    /// SQLite's FTS5 tokenizer, which splits text for BM25, failed.
    #[error("postgres {location}: {message}")]
    Tokenizer {
        /// The server and database.
        location: String,
        /// What failed.
        message: String,
    },
    /// Another machine held the project's memory-writer lock past the wait.
    #[error(
        "postgres {location}: another machine held the memory-writer lock of project {project} past {seconds} s"
    )]
    LockTimeout {
        /// The server and database.
        location: String,
        /// The project.
        project: String,
        /// How long this one waited.
        seconds: u64,
    },
    /// The database holds a newer schema than this build knows.
    #[error("postgres {location}: schema version {found}; this cairn knows up to {known}")]
    NewerSchema {
        /// The server and database.
        location: String,
        /// Version in the database.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
}

/// The driver's error with the server's own message: the driver's `Display`
/// says only "db error" and keeps the reason in its source.
fn detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

impl From<Error> for StoreError {
    fn from(e: Error) -> StoreError {
        StoreError::Backend(Box::new(e))
    }
}

pub(crate) fn pg(location: &str) -> impl Fn(postgres::Error) -> StoreError + '_ {
    move |source| {
        Error::Postgres {
            location: location.to_string(),
            source,
        }
        .into()
    }
}

/// [`pg`] for a write that also makes BM25 postings.
pub(crate) fn lex(location: &str) -> impl Fn(crate::lexicon::AddError) -> StoreError + '_ {
    move |e| match e {
        crate::lexicon::AddError::Postgres(source) => pg(location)(source),
        crate::lexicon::AddError::Tokenizer(message) => Error::Tokenizer {
            location: location.to_string(),
            message,
        }
        .into(),
    }
}
