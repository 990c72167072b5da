//! Connecting: the client for a URI, and the URI without its password
//! that messages print.

use cairn_core::StoreResult;
use postgres::{Client, NoTls};

use crate::error::pg;

/// `postgres://user:secret@host/db` → `postgres://user@host/db`: what
/// messages and `config show` print (one function for every backend, in
/// `cairn-core`).
pub use cairn_core::redact_uri as redact;

pub(crate) fn connect(uri: &str, location: &str) -> StoreResult<Client> {
    Client::connect(uri, NoTls).map_err(pg(location))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("postgres://cairn:s3cret@db.example:5432/kb"),
            "postgres://cairn@db.example:5432/kb"
        );
        assert_eq!(
            redact("postgres://cairn@127.0.0.1/kb"),
            "postgres://cairn@127.0.0.1/kb"
        );
    }
}
