//! Shared memories: on a shared store (a server other machines write to)
//! the memory folder is synced through the store. The plan notes what to
//! fetch and what to drop (and leaves a tombstone for a memory forgotten
//! here); after the writes, `sync_memories` fetches and drops files and
//! saves the machine-local list of memory files this folder holds.

use std::collections::HashSet;
use std::path::PathBuf;

use cairn_core::IndexWriter;

use super::{IndexReport, Pass};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// Metadata key prefix of a memory forgotten on a shared store; the value is
/// the hash of the version forgotten.
const FORGOTTEN: &str = "forgotten:";

/// What the plan found to sync, and what the sync needs to know of it.
#[derive(Default)]
pub(super) struct SyncPlan {
    /// Memories to fetch from the store: (path, the writer's mtime).
    pub pulls: Vec<(String, i64)>,
    /// Local memory files another machine forgot.
    pub dropped: Vec<String>,
    /// Every path the scan found.
    pub seen: HashSet<String>,
    /// Paths deleted from the index by this pass.
    pub deleted: Vec<String>,
}

/// Whether another machine forgot `rel` in the version hashed `hash`.
pub(super) fn forgotten_elsewhere(store: &dyn IndexWriter, rel: &str, hash: &str) -> Result<bool> {
    Ok(store.meta(&format!("{FORGOTTEN}{rel}"))?.as_deref() == Some(hash))
}

/// Tells the other machines to drop their copies of `path` (version `hash`).
pub(super) fn leave_tombstone(store: &dyn IndexWriter, path: &str, hash: &str) -> Result<()> {
    store.set_meta(&format!("{FORGOTTEN}{path}"), hash)?;
    Ok(())
}

impl Engine {
    /// Creates the memory folder, so it exists to receive.
    pub(super) fn create_memory_dir(&self) -> Result<()> {
        let memory_dir = self.memory_dir();
        std::fs::create_dir_all(&memory_dir).map_err(|source| Error::Io {
            path: memory_dir.clone(),
            source,
        })
    }

    /// Fetches the memories to pull, removes the ones to drop, and saves the
    /// list of memory files now here.
    pub(super) fn sync_memories(
        &self,
        store: &dyn IndexWriter,
        pass: &Pass,
        sync: &SyncPlan,
        report: &mut IndexReport,
    ) -> Result<()> {
        let mut here: HashSet<String> = sync
            .seen
            .iter()
            .filter(|p| p.starts_with(&pass.mem_prefix))
            .cloned()
            .collect();
        for (path, mtime_ns) in &sync.pulls {
            // A row written without its text (an older cairn, an import)
            // has nothing to fetch.
            if let Some(text) = store.source(path)? {
                self.write_pulled(path, &text, *mtime_ns)?;
                here.insert(path.clone());
                report.memories_pulled += 1;
            }
        }
        for path in &sync.dropped {
            let abs = self.root.join(path);
            if let Err(source) = std::fs::remove_file(&abs)
                && source.kind() != std::io::ErrorKind::NotFound
            {
                return Err(Error::Io { path: abs, source });
            }
            here.remove(path);
            report.memories_dropped += 1;
        }
        for p in &sync.deleted {
            here.remove(p);
        }
        self.save_synced_memories(&here)
    }

    /// The machine-local list of memory files this folder held after the
    /// last pass against a shared store (`.cairn/synced-memories`): a file on
    /// the list and gone now was forgotten here; a stored memory never on
    /// it is another machine's, to fetch. Missing or unreadable: empty, which
    /// fetches rather than deletes.
    pub(super) fn synced_memories(&self) -> HashSet<String> {
        std::fs::read_to_string(self.synced_path())
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    fn save_synced_memories(&self, paths: &HashSet<String>) -> Result<()> {
        let mut list: Vec<&String> = paths.iter().collect();
        list.sort();
        let mut text = String::with_capacity(list.len() * 40);
        for p in list {
            text.push_str(p);
            text.push('\n');
        }
        crate::vault::write_atomic(&self.synced_path(), &text)
    }

    fn synced_path(&self) -> PathBuf {
        crate::paths::synced_memories(&self.root)
    }

    /// Writes a memory fetched from the shared store, stamped with the
    /// writer's modification time so the next pass sees it unchanged.
    fn write_pulled(&self, rel: &str, text: &str, mtime_ns: i64) -> Result<()> {
        let abs = self.root.join(rel);
        crate::vault::write_atomic(&abs, text)?;
        let when = if mtime_ns >= 0 {
            std::time::UNIX_EPOCH + std::time::Duration::from_nanos(mtime_ns as u64)
        } else {
            std::time::UNIX_EPOCH
        };
        std::fs::File::options()
            .write(true)
            .open(&abs)
            .and_then(|f| f.set_modified(when))
            .map_err(|source| Error::Io { path: abs, source })
    }
}
