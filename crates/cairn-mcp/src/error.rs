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

/// Why one call failed — an MCP tool call or a call of the page's API — as
/// its caller reads it. A tool answers it as a tool error (its message); the
/// page's API as `{"error": "<message>"}` with a status
/// (see [`crate::ui`]), which is how it serializes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The call cannot be answered as asked: an argument is missing, empty
    /// or not one the call takes.
    #[error("{0}")]
    Invalid(String),
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] cairn::Error),
    /// The work did not finish: its thread panicked or was cancelled, or
    /// its answer could not be written as JSON.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<&str> for CallError {
    fn from(message: &str) -> CallError {
        CallError::Invalid(message.to_string())
    }
}

impl From<String> for CallError {
    fn from(message: String) -> CallError {
        CallError::Invalid(message)
    }
}

impl serde::Serialize for CallError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry("error", &self.to_string())?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_error_serializes_as_its_message() {
        let e = CallError::from("give id");
        assert_eq!(
            serde_json::to_value(&e).ok(),
            Some(serde_json::json!({"error": "give id"}))
        );
        let e = CallError::from(cairn::Error::Conflict("undone already".into()));
        assert_eq!(
            serde_json::to_value(&e).ok(),
            Some(serde_json::json!({"error": e.to_string()}))
        );
    }
}
