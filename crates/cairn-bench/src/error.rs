//! What can go wrong in a benchmark run that is not the engine's own error.

use std::path::PathBuf;

/// Result alias for the benchmarks that are not evaluations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A benchmark failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] cairn::Error),
    /// The model could not be fetched, loaded or run.
    #[error(transparent)]
    Model(#[from] cairn_embed::Error),
    /// The benchmark's working folder is unusable.
    #[error("{path}: {message}")]
    WorkDir {
        /// The folder.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}
