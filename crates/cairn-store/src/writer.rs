//! The index writer [`Store`]: opening the file, and the whole of
//! [`IndexWriter`] on it: write batches, the manifest and embedding cache,
//! metadata, maintenance (optimize, vacuum) and the consistency checks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cairn_core::{
    Change, Chunk, DocRecord, DocWrite, IndexReader, IndexWriter, StoreResult, WriteBatch,
    entity_key,
};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::connection::configure;
use crate::error::{Error, Result, sql};
use crate::schema::MIGRATIONS;
use crate::snapshot::{Reader, doc_record};

/// Chunks written in this transaction whose rows are not in the FTS index
/// yet: they go in with one statement when the batch ends
/// ([`PendingFts::flush`]). An `AFTER INSERT` trigger did it row by row,
/// and every such insert ran in a statement savepoint, at which FTS5 writes
/// the terms it holds in memory to disk as a new segment: 122,627 chunks
/// made as many tiny segments for FTS5 to merge again, about a third of a
/// BM25-only index pass (BENCHMARKS.md, "Indexing speed").
#[derive(Default)]
struct PendingFts {
    /// The first and last row id written since the last flush. Rows are
    /// numbered past the largest id in the table, so every row in the range
    /// was written since then (a delete of one of them flushes first).
    rows: Option<(i64, i64)>,
    /// The documents those rows belong to.
    paths: std::collections::HashSet<String>,
}

impl PendingFts {
    fn inserted(&mut self, path: &str, rowids: &[i64]) {
        let (Some(&lo), Some(&hi)) = (rowids.iter().min(), rowids.iter().max()) else {
            return;
        };
        self.rows = Some(match self.rows {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
        self.paths.insert(path.to_string());
    }

    /// Before the chunks of `path` are deleted: when they were written in
    /// this transaction, their FTS rows go in first, so the delete trigger
    /// removes rows that are there.
    fn before_delete(
        &mut self,
        tx: &rusqlite::Transaction<'_>,
        path: &str,
    ) -> rusqlite::Result<()> {
        if self.paths.contains(path) {
            self.flush(tx)?;
        }
        Ok(())
    }

    fn flush(&mut self, tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
        self.paths.clear();
        if let Some((lo, hi)) = self.rows.take() {
            tx.execute(
                "INSERT INTO chunks_fts(rowid, breadcrumb, text)
                 SELECT id, cairn_fts_text(breadcrumb), cairn_fts_text(text)
                 FROM chunks WHERE id BETWEEN ?1 AND ?2",
                params![lo, hi],
            )?;
        }
        Ok(())
    }
}

/// Removes the document at `path` with its links and chunks (their FTS rows
/// go with the delete trigger); nothing when it is not indexed, so a new
/// file runs no delete (each would flush FTS5's pending terms).
fn remove_doc(
    tx: &rusqlite::Transaction<'_>,
    doc_id_of: &mut rusqlite::CachedStatement<'_>,
    del_doc: &mut rusqlite::CachedStatement<'_>,
    path: &str,
) -> rusqlite::Result<()> {
    let Some(id) = doc_id_of
        .query_row([path], |r| r.get::<_, i64>(0))
        .optional()?
    else {
        return Ok(());
    };
    tx.execute("DELETE FROM links WHERE doc_id = ?1", [id])?;
    tx.execute("DELETE FROM chunks WHERE doc_id = ?1", [id])?;
    del_doc.execute([id])?;
    Ok(())
}

/// [`Error::Directory`] when a folder stands where the index file should
/// be (SQLite's own word is "unable to open database file").
pub(crate) fn refuse_directory(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(Error::Directory {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// The index writer.
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the index at `path` and migrates it.
    pub fn open(path: &Path) -> Result<Store> {
        refuse_directory(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        // No header check here: another opener may be creating the file
        // this instant (its first page half written). A damaged file shows
        // in SQLite's own errors, which `sql` turns into `Error::Damaged`;
        // `cairn index` and `doctor` read the header and run `quick_check`.
        let conn = Connection::open(path).map_err(sql(path))?;
        configure(&conn, path)?;
        crate::connection::enable_wal(&conn, path)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql(path))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        crate::schema::migrate(&mut store.conn, &store.path)?;
        Ok(store)
    }

    /// Path of the index file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl IndexWriter for Store {
    fn location(&self) -> String {
        self.path().display().to_string()
    }

    /// A reader on its own connection.
    fn reader(&self) -> StoreResult<Box<dyn IndexReader>> {
        Ok(Box::new(Reader::open(&self.path)?))
    }

    /// The manifest: every indexed document by path.
    fn manifest(&self) -> StoreResult<HashMap<String, DocRecord>> {
        let p = &self.path;
        let mut stmt = self
            .conn
            .prepare("SELECT path, hash, mtime_ns, size, pipeline FROM documents")
            .map_err(sql(p))?;
        let rows = stmt.query_map([], doc_record).map_err(sql(p))?;
        Ok(rows
            .map(|r| r.map(|d| (d.path.clone(), d)).map_err(sql(p)))
            .collect::<Result<_>>()?)
    }

    /// Which of `hashes` already have a vector of `model`.
    fn cached_hashes(
        &self,
        model: &str,
        hashes: &[&str],
    ) -> StoreResult<std::collections::HashSet<String>> {
        let p = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT 1 FROM embeddings WHERE model = ?1 AND hash = ?2")
            .map_err(sql(p))?;
        let mut found = std::collections::HashSet::new();
        for h in hashes {
            if stmt.exists(params![model, h]).map_err(sql(p))? {
                found.insert((*h).to_string());
            }
        }
        Ok(found)
    }

    /// Chunks that have no vector of `model` yet: `(embed_hash, chunk)`, one per distinct text.
    fn unembedded(
        &self,
        model: &str,
        after: &str,
        limit: usize,
        skip: Option<&str>,
    ) -> StoreResult<Vec<(String, Chunk)>> {
        let p = &self.path;
        // A prefix test by `substr`, exact where LIKE would read a `_` or
        // `%` in the prefix as a pattern.
        let skip = skip.unwrap_or("");
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.embed_hash, d.path, c.heading_path, c.level, c.start_line, c.end_line, c.text
                 FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE c.embed_hash > ?3
                   AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ?1 AND e.hash = c.embed_hash)
                   AND (?4 = '' OR substr(d.path, 1, length(?4)) <> ?4)
                 GROUP BY c.embed_hash ORDER BY c.embed_hash LIMIT ?2",
            )
            .map_err(sql(p))?;
        let rows = stmt
            .query_map(params![model, limit as i64, after, skip], |r| {
                let heading: String = r.get(2)?;
                Ok((
                    r.get::<_, String>(0)?,
                    Chunk::new(
                        &r.get::<_, String>(1)?,
                        serde_json::from_str(&heading).unwrap_or_default(),
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ),
                ))
            })
            .map_err(sql(p))?;
        Ok(rows.map(|r| r.map_err(sql(p))).collect::<Result<_>>()?)
    }

    /// How many distinct chunk texts still lack a vector of `model`.
    fn unembedded_count(&self, model: &str, skip: Option<&str>) -> StoreResult<u64> {
        Ok(self
            .conn
            .query_row(
                "SELECT COUNT(DISTINCT c.embed_hash) FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ?1 AND e.hash = c.embed_hash)
                   AND (?2 = '' OR substr(d.path, 1, length(?2)) <> ?2)",
                params![model, skip.unwrap_or("")],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(sql(&self.path))?)
    }

    fn has_vectors(&self, model: &str) -> StoreResult<bool> {
        // One seek in the (model, hash) primary key.
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM embeddings WHERE model = ?1 LIMIT 1")
            .and_then(|mut stmt| stmt.exists([model]))
            .map_err(sql(&self.path))?)
    }

    /// Problems `PRAGMA integrity_check` finds (empty: none).
    fn integrity_check(&self) -> StoreResult<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(sql(&self.path))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(sql(&self.path))?;
        let found: Vec<String> = rows
            .collect::<rusqlite::Result<_>>()
            .map_err(sql(&self.path))?;
        Ok(found.into_iter().filter(|r| r != "ok").collect())
    }

    /// Whether the FTS index agrees with the chunks it indexes (FTS5's own
    /// `integrity-check`): `Some(problem)` when it does not.
    fn fts_check(&self) -> StoreResult<Option<String>> {
        match self.conn.execute(
            "INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')",
            [],
        ) {
            Ok(_) => Ok(None),
            Err(rusqlite::Error::SqliteFailure(_, msg)) => Ok(Some(
                msg.unwrap_or_else(|| "FTS index is inconsistent".into()),
            )),
            Err(e) => Err(sql(&self.path)(e).into()),
        }
    }

    /// Schema version of the file and the one this build writes.
    fn schema_version(&self) -> StoreResult<(i64, i64)> {
        let v: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(&self.path))?;
        Ok((v, MIGRATIONS.len() as i64))
    }

    /// Merges FTS segments, rewrites the file without free pages (VACUUM) and
    /// truncates the write-ahead log.
    fn vacuum(&self) -> StoreResult<()> {
        self.conn
            .execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')", [])
            .map_err(sql(&self.path))?;
        self.conn.execute_batch("VACUUM").map_err(sql(&self.path))?;
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// Counts one recall of each memory id at `now` (unix seconds), in one transaction.
    fn record_access(&mut self, ids: &[&str], now: i64) -> StoreResult<()> {
        let p = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql(&p))?;
        {
            let mut up = tx
                .prepare_cached(
                    "INSERT INTO memory_stats (id, access_count, last_access) VALUES (?1, 1, ?2)
                     ON CONFLICT(id) DO UPDATE SET access_count = access_count + 1, last_access = ?2",
                )
                .map_err(sql(&p))?;
            for id in ids {
                up.execute(params![id, now]).map_err(sql(&p))?;
            }
        }
        Ok(tx.commit().map_err(sql(&p))?)
    }

    /// Writes a batch in one transaction.
    fn write(&mut self, batch: &WriteBatch) -> StoreResult<()> {
        let p = self.path.clone();
        let s = sql(&p);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&s)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        {
            let mut doc_id_of = tx
                .prepare_cached("SELECT id FROM documents WHERE path = ?1")
                .map_err(&s)?;
            let mut del_doc = tx
                .prepare_cached("DELETE FROM documents WHERE id = ?1")
                .map_err(&s)?;
            let mut fts = PendingFts::default();
            let mut touch = tx
                .prepare_cached("UPDATE documents SET mtime_ns = ?2, size = ?3 WHERE path = ?1")
                .map_err(&s)?;
            let mut ins_doc = tx
                .prepare_cached(
                    "INSERT INTO documents (path, hash, mtime_ns, size, title, tags, domain, indexed_at, meta, pipeline)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(&s)?;
            let mut ins_chunk = tx
                .prepare_cached(
                    "INSERT INTO chunks (chunk_id, doc_id, seq, heading_path, breadcrumb, level,
                                         start_line, end_line, hash, embed_hash, text)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .map_err(&s)?;
            let mut ins_link = tx
                .prepare_cached(
                    "INSERT INTO links (doc_id, chunk, src, src_name, dst, dst_name, rel, weight)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(&s)?;
            for change in &batch.changes {
                match change {
                    Change::Delete(path) => {
                        fts.before_delete(&tx, path).map_err(&s)?;
                        remove_doc(&tx, &mut doc_id_of, &mut del_doc, path).map_err(&s)?;
                    }
                    Change::Touch {
                        path,
                        mtime_ns,
                        size,
                    } => {
                        touch
                            .execute(params![path, mtime_ns, *size as i64])
                            .map_err(&s)?;
                    }
                    Change::Upsert(doc) => {
                        fts.before_delete(&tx, &doc.path).map_err(&s)?;
                        remove_doc(&tx, &mut doc_id_of, &mut del_doc, &doc.path).map_err(&s)?;
                        let rowids = insert_document(
                            &tx,
                            [&mut ins_doc, &mut ins_chunk, &mut ins_link],
                            doc,
                            now,
                        )
                        .map_err(&s)?;
                        fts.inserted(&doc.path, &rowids);
                    }
                }
            }
            fts.flush(&tx).map_err(&s)?;
            if let Some((model, dim)) = &batch.model {
                let mut ins_vec = tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO embeddings (model, hash, dim, vector) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .map_err(&s)?;
                for (hash, v) in &batch.embeddings {
                    let blob = crate::vector_blob::encode(v);
                    ins_vec
                        .execute(params![model, hash, *dim as i64, blob])
                        .map_err(&s)?;
                }
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('generation', '1')
                 ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                [],
            )
            .map_err(&s)?;
        }
        Ok(tx.commit().map_err(&s)?)
    }

    /// Sets a metadata value.
    fn set_meta(&self, key: &str, value: &str) -> StoreResult<()> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
                params![key, value],
            )
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// A metadata value.
    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(sql(&self.path))?)
    }

    /// Merges FTS5 segments (cheap after a big run, keeps queries fast).
    fn optimize(&self) -> StoreResult<()> {
        self.conn
            .execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')", [])
            .map_err(sql(&self.path))?;
        Ok(())
    }

    fn checkpoint(&self) -> StoreResult<()> {
        // (busy, log frames, frames checkpointed); busy = a reader held on.
        let (busy, _, _): (i64, i64, i64) = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(sql(&self.path))?;
        if busy != 0 {
            tracing::debug!(
                "{}: a reader kept the log from shrinking",
                self.path.display()
            );
        }
        Ok(())
    }
}

/// Inserts a document (written at `now`) with the statements that insert
/// a document, a chunk and a link: its row, its chunks, then its links (a
/// link to a chunk the document does not have, or naming no entity, is
/// left out); the chunks' row ids, in order.
fn insert_document(
    conn: &Connection,
    [ins_doc, ins_chunk, ins_link]: [&mut rusqlite::CachedStatement<'_>; 3],
    doc: &DocWrite,
    now: i64,
) -> rusqlite::Result<Vec<i64>> {
    ins_doc.execute(params![
        doc.path,
        doc.hash,
        doc.mtime_ns,
        doc.size as i64,
        doc.title,
        serde_json::to_string(&doc.tags).unwrap_or_else(|_| "[]".into()),
        doc.domain,
        now,
        if doc.meta.is_empty() {
            "{}"
        } else {
            doc.meta.as_str()
        },
        doc.pipeline,
    ])?;
    let doc_id = conn.last_insert_rowid();
    let mut rowids = Vec::with_capacity(doc.chunks.len());
    for (seq, c) in doc.chunks.iter().enumerate() {
        let embed_hash = cairn_core::content_hash(c.embed_text().as_bytes());
        ins_chunk.execute(params![
            c.id,
            doc_id,
            seq as i64,
            serde_json::to_string(&c.heading_path).unwrap_or_else(|_| "[]".into()),
            c.breadcrumb(),
            c.level,
            c.start_line,
            c.end_line,
            c.hash,
            embed_hash,
            c.text
        ])?;
        rowids.push(conn.last_insert_rowid());
    }
    for l in &doc.links {
        let chunk = match l.chunk {
            Some(i) => match rowids.get(i) {
                Some(r) => Some(*r),
                None => continue, // a link to a chunk that is not there
            },
            None => None,
        };
        let src = l.from.as_deref().map(|f| (entity_key(f), f));
        if chunk.is_none() && src.is_none() {
            continue;
        }
        let dst = entity_key(&l.to);
        if dst.is_empty() || src.as_ref().is_some_and(|(k, _)| k.is_empty()) {
            continue;
        }
        ins_link.execute(params![
            doc_id,
            chunk,
            src.as_ref().map(|(k, _)| k.as_str()),
            src.as_ref().map(|(_, n)| *n),
            dst,
            l.to,
            l.rel.name(),
            f64::from(l.weight)
        ])?;
    }
    Ok(rowids)
}
