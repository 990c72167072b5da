use std::path::PathBuf;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong while serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file, socket or folder operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// What was being used.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file watcher could not start.
    #[error("cannot watch {}: {source}", path.display())]
    Watch {
        /// The folder.
        path: PathBuf,
        /// The underlying error.
        source: notify_debouncer_full::notify::Error,
    },
    /// The MCP session failed.
    #[error("MCP: {0}")]
    Protocol(String),
    /// The HTTP server was asked for something unsafe or impossible.
    #[error("HTTP {addr}: {message}")]
    Http {
        /// The address.
        addr: String,
        /// What is wrong.
        message: String,
    },
    /// The shared daemon could not be reached or started.
    #[error("daemon at {}: {message}", socket.display())]
    Daemon {
        /// Its socket.
        socket: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The operating system gave no random bytes (for a page token).
    #[error("cannot read random bytes from the operating system: {0}")]
    Random(String),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] cairn::Error),
}
