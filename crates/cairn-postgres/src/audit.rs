//! The audit of one project: counts of what concurrent writers could have
//! doubled or lost ([`PgStore::audit`]).

use cairn_core::StoreResult;

use crate::error::pg;
use crate::writer::PgStore;

/// What [`PgStore::audit`] counts in one project.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Audit {
    /// Documents.
    pub documents: u64,
    /// Documents under the memory prefix.
    pub memories: u64,
    /// Paths stored more than once (the schema forbids it; counted anyway).
    pub duplicate_paths: u64,
    /// `(document, position)` pairs holding more than one chunk.
    pub duplicate_chunks: u64,
    /// Memory chunk texts stored under more than one memory file.
    pub duplicate_memory_texts: u64,
}

impl PgStore {
    /// Counts what concurrent writers could have doubled or lost.
    pub fn audit(&self, memory_prefix: &str) -> StoreResult<Audit> {
        let mut c = self.conn();
        let r = c
            .query_one(
                "SELECT
                   (SELECT count(*) FROM documents WHERE project = $1),
                   (SELECT count(*) FROM documents WHERE project = $1 AND left(path, length($2)) = $2),
                   (SELECT count(*) FROM (SELECT path FROM documents WHERE project = $1
                                          GROUP BY path HAVING count(*) > 1) x),
                   (SELECT count(*) FROM (SELECT doc_id, seq FROM chunks WHERE project = $1
                                          GROUP BY doc_id, seq HAVING count(*) > 1) y),
                   (SELECT count(*) FROM (SELECT c.text FROM chunks c JOIN documents d ON d.id = c.doc_id
                                          WHERE c.project = $1 AND left(d.path, length($2)) = $2
                                          GROUP BY c.text HAVING count(DISTINCT d.path) > 1) z)",
                &[&self.project, &memory_prefix],
            )
            .map_err(pg(&self.location))?;
        let n = |i: usize| r.get::<_, i64>(i) as u64;
        Ok(Audit {
            documents: n(0),
            memories: n(1),
            duplicate_paths: n(2),
            duplicate_chunks: n(3),
            duplicate_memory_texts: n(4),
        })
    }
}
