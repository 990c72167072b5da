//! The project's memory-writer lock across machines ([`MemoryLock`]): a
//! PostgreSQL advisory lock that every machine sharing a project takes
//! around a memory's near-duplicate check and write.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_core::{SharedLock, StoreResult, sync};
use postgres::Client;
use postgres::error::SqlState;

use crate::connection::connect;
use crate::error::{Error, pg};

/// First key of the lock (the second is the hash of the project's name):
/// the two-key form, whose key space is apart from the one-key locks the
/// writer takes per project and around HNSW builds, so holding this lock
/// never blocks the index pass that writes the memory.
const MEMORY_LOCK: i32 = 7_315_003;

/// The lock of one project, taken by [`SharedLock::take`]. It keeps one
/// connection between memories (a connection costs more than the lock).
pub(crate) struct MemoryLock {
    uri: String,
    location: String,
    project: String,
    /// The kept connection; taken out while the lock is held.
    kept: Mutex<Option<Client>>,
}

impl MemoryLock {
    pub(crate) fn new(uri: &str, location: &str, project: &str) -> Arc<MemoryLock> {
        Arc::new(MemoryLock {
            uri: uri.to_string(),
            location: location.to_string(),
            project: project.to_string(),
            kept: Mutex::new(None),
        })
    }
}

impl SharedLock for MemoryLock {
    /// A session lock on its own connection: it lasts across the
    /// transactions of the write and the index pass, and a process that
    /// dies releases it when its connection closes. PostgreSQL queues the
    /// waiters; `lock_timeout` ends the wait.
    fn take(self: Arc<Self>, wait: Duration) -> StoreResult<Box<dyn Send>> {
        let kept = sync::lock(&self.kept).take().filter(|c| !c.is_closed());
        let mut client = match kept {
            Some(c) => c,
            None => connect(&self.uri, &self.location)?,
        };
        let ms = wait.as_millis().clamp(1, i32::MAX as u128);
        client
            .batch_execute(&format!("SET lock_timeout = {ms}"))
            .map_err(pg(&self.location))?;
        match client.execute(
            "SELECT pg_advisory_lock($1, hashtext($2))",
            &[&MEMORY_LOCK, &self.project],
        ) {
            Ok(_) => Ok(Box::new(Held {
                client: Some(client),
                lock: self,
            })),
            Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => Err(Error::LockTimeout {
                location: self.location.clone(),
                project: self.project.clone(),
                seconds: wait.as_secs(),
            }
            .into()),
            Err(e) => Err(pg(&self.location)(e)),
        }
    }
}

/// The held lock; dropping it releases it.
struct Held {
    client: Option<Client>,
    lock: Arc<MemoryLock>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(mut client) = self.client.take() else {
            return;
        };
        // Released, the connection is kept for the next memory; if not
        // (the server went away), dropping it closes the session, which
        // releases the lock on the server.
        let released = client.execute(
            "SELECT pg_advisory_unlock($1, hashtext($2))",
            &[&MEMORY_LOCK, &self.lock.project],
        );
        match released {
            Ok(_) => *sync::lock(&self.lock.kept) = Some(client),
            Err(e) => tracing::warn!("could not release the memory-writer lock: {e}"),
        }
    }
}
