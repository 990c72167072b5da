use std::path::PathBuf;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong loading, fetching or running a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A model file is missing or malformed.
    #[error("model file {path}: {message}")]
    Model {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The asked kernel path cannot run here.
    #[error("kernel: {0}")]
    Kernel(String),
    /// The tokenizer failed.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// No route could fetch the model files.
    #[error(
        "could not fetch model {model} into {dir}:\n{attempts}\nPut {files} into that folder by hand, or set CAIRN_MODEL_DIR to a folder holding them."
    )]
    Fetch {
        /// Model name.
        model: String,
        /// Destination folder.
        dir: PathBuf,
        /// One line per route tried, with its error.
        attempts: String,
        /// The files expected.
        files: String,
    },
    /// No user cache folder could be determined.
    #[error("no cache folder: set CAIRN_CACHE_DIR or HOME")]
    NoCacheDir,
}
