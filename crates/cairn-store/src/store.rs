use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_core::{
    Change, Chunk, ChunkRow, DocRecord, DocWrite, Link, LinkRow, Stats, VectorSet, WriteBatch,
    entity_key,
};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::error::{Error, Result};
use crate::schema::MIGRATIONS;

/// Maps a `path, hash, mtime_ns, size` row.
fn doc_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<DocRecord> {
    Ok(DocRecord {
        path: r.get(0)?,
        hash: r.get(1)?,
        mtime_ns: r.get(2)?,
        size: r.get::<_, i64>(3)? as u64,
    })
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |source| Error::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

fn configure(conn: &Connection, path: &Path) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(10))
        .map_err(sql(path))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(sql(path))?;
    // Read pages through a memory map and keep a larger page cache: search
    // touches FTS doclists and chunk rows all over the file, and pread of
    // 4 KiB pages was the largest cost of a recall over 10,000 memories.
    conn.pragma_update(None, "mmap_size", 1i64 << 30)
        .map_err(sql(path))?;
    conn.pragma_update(None, "cache_size", -32_768i64)
        .map_err(sql(path))?;
    Ok(())
}

/// The index writer.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the index at `path` and migrates it.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(sql(path))?;
        configure(&conn, path)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql(path))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql(path))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<()> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql(&path))?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(&path))?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            return Err(Error::NewerSchema {
                path,
                found: version,
                known,
            });
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(m).map_err(sql(&path))?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(sql(&path))?;
        }
        tx.commit().map_err(sql(&path))
    }

    /// Path of the index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A reader on its own connection.
    pub fn reader(&self) -> Result<Reader> {
        Reader::open(&self.path)
    }

    /// The manifest: every indexed document by path.
    pub fn manifest(&self) -> Result<HashMap<String, DocRecord>> {
        let p = &self.path;
        let mut stmt = self
            .conn
            .prepare("SELECT path, hash, mtime_ns, size FROM documents")
            .map_err(sql(p))?;
        let rows = stmt.query_map([], doc_record).map_err(sql(p))?;
        rows.map(|r| r.map(|d| (d.path.clone(), d)).map_err(sql(p)))
            .collect()
    }

    /// Which of `hashes` already have a vector of `model`.
    pub fn cached_hashes(
        &self,
        model: &str,
        hashes: &[&str],
    ) -> Result<std::collections::HashSet<String>> {
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
    pub fn unembedded(&self, model: &str, limit: usize) -> Result<Vec<(String, Chunk)>> {
        let p = &self.path;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.embed_hash, d.path, c.heading_path, c.level, c.start_line, c.end_line, c.text
                 FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ?1 AND e.hash = c.embed_hash)
                 GROUP BY c.embed_hash LIMIT ?2",
            )
            .map_err(sql(p))?;
        let rows = stmt
            .query_map(params![model, limit as i64], |r| {
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
        rows.map(|r| r.map_err(sql(p))).collect()
    }

    /// How many distinct chunk texts still lack a vector of `model`.
    pub fn unembedded_count(&self, model: &str) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT COUNT(DISTINCT c.embed_hash) FROM chunks c
                 WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = ?1 AND e.hash = c.embed_hash)",
                [model],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .map_err(sql(&self.path))
    }

    /// Problems `PRAGMA integrity_check` finds (empty: none).
    pub fn integrity_check(&self) -> Result<Vec<String>> {
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
    pub fn fts_check(&self) -> Result<Option<String>> {
        match self.conn.execute(
            "INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')",
            [],
        ) {
            Ok(_) => Ok(None),
            Err(rusqlite::Error::SqliteFailure(_, msg)) => Ok(Some(
                msg.unwrap_or_else(|| "FTS index is inconsistent".into()),
            )),
            Err(e) => Err(sql(&self.path)(e)),
        }
    }

    /// Schema version of the file and the one this build writes.
    pub fn schema_version(&self) -> Result<(i64, i64)> {
        let v: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(&self.path))?;
        Ok((v, MIGRATIONS.len() as i64))
    }

    /// Merges FTS segments, rewrites the file without free pages (VACUUM) and
    /// truncates the write-ahead log.
    pub fn vacuum(&self) -> Result<()> {
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
    pub fn record_access(&mut self, ids: &[&str], now: i64) -> Result<()> {
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
        tx.commit().map_err(sql(&p))
    }

    /// Writes a batch in one transaction.
    pub fn write(&mut self, batch: &WriteBatch) -> Result<()> {
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
            let mut del_doc = tx
                .prepare_cached("DELETE FROM documents WHERE path = ?1")
                .map_err(&s)?;
            let mut touch = tx
                .prepare_cached("UPDATE documents SET mtime_ns = ?2, size = ?3 WHERE path = ?1")
                .map_err(&s)?;
            let mut ins_doc = tx
                .prepare_cached(
                    "INSERT INTO documents (path, hash, mtime_ns, size, title, tags, domain, indexed_at, meta)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
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
                        // Chunks go with ON DELETE CASCADE; the FTS rows with the trigger.
                        tx.execute("DELETE FROM links WHERE doc_id = (SELECT id FROM documents WHERE path = ?1)", [path])
                            .map_err(&s)?;
                        tx.execute("DELETE FROM chunks WHERE doc_id = (SELECT id FROM documents WHERE path = ?1)", [path])
                            .map_err(&s)?;
                        del_doc.execute([path]).map_err(&s)?;
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
                        tx.execute("DELETE FROM links WHERE doc_id = (SELECT id FROM documents WHERE path = ?1)", [&doc.path])
                            .map_err(&s)?;
                        tx.execute("DELETE FROM chunks WHERE doc_id = (SELECT id FROM documents WHERE path = ?1)", [&doc.path])
                            .map_err(&s)?;
                        del_doc.execute([&doc.path]).map_err(&s)?;
                        ins_doc
                            .execute(params![
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
                                }
                            ])
                            .map_err(&s)?;
                        let doc_id = tx.last_insert_rowid();
                        let mut rowids = Vec::with_capacity(doc.chunks.len());
                        for (seq, c) in doc.chunks.iter().enumerate() {
                            let embed_hash = cairn_core::content_hash(c.embed_text().as_bytes());
                            ins_chunk
                                .execute(params![
                                    c.id,
                                    doc_id,
                                    seq as i64,
                                    serde_json::to_string(&c.heading_path)
                                        .unwrap_or_else(|_| "[]".into()),
                                    c.breadcrumb(),
                                    c.level,
                                    c.start_line,
                                    c.end_line,
                                    c.hash,
                                    embed_hash,
                                    c.text
                                ])
                                .map_err(&s)?;
                            rowids.push(tx.last_insert_rowid());
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
                            ins_link
                                .execute(params![
                                    doc_id,
                                    chunk,
                                    src.as_ref().map(|(k, _)| k.as_str()),
                                    src.as_ref().map(|(_, n)| *n),
                                    dst,
                                    l.to,
                                    l.rel,
                                    f64::from(l.weight)
                                ])
                                .map_err(&s)?;
                        }
                    }
                }
            }
            if let Some((model, dim)) = &batch.model {
                let mut ins_vec = tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO embeddings (model, hash, dim, vector) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .map_err(&s)?;
                for (hash, v) in &batch.embeddings {
                    let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
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
        tx.commit().map_err(&s)
    }

    /// Sets a metadata value.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
                params![key, value],
            )
            .map_err(sql(&self.path))?;
        Ok(())
    }

    /// A metadata value.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(sql(&self.path))
    }

    /// Merges FTS5 segments (cheap after a big run, keeps queries fast).
    pub fn optimize(&self) -> Result<()> {
        self.conn
            .execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')", [])
            .map_err(sql(&self.path))?;
        Ok(())
    }
}

/// A read-only view of the index on its own connection.
pub struct Reader {
    conn: Connection,
    path: PathBuf,
}

impl Reader {
    /// Opens a reader on an existing index.
    pub fn open(path: &Path) -> Result<Reader> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(sql(path))?;
        configure(&conn, path)?;
        Ok(Reader {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Starts a consistent snapshot: every read through it sees the same state.
    pub fn snapshot(&mut self) -> Result<Snapshot<'_>> {
        let tx = self.conn.transaction().map_err(sql(&self.path))?;
        Ok(Snapshot {
            tx,
            path: &self.path,
        })
    }
}

/// Reads inside one transaction.
pub struct Snapshot<'a> {
    tx: rusqlite::Transaction<'a>,
    path: &'a Path,
}

impl Snapshot<'_> {
    /// Bumped by every write batch: a cached vector matrix older than this is stale.
    pub fn generation(&self) -> Result<i64> {
        self.tx
            .query_row(
                "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map(|g| g.unwrap_or(0))
            .map_err(sql(self.path))
    }

    /// A metadata value.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.tx
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(sql(self.path))
    }

    /// BM25 top `limit` for an FTS5 MATCH expression: `(chunk rowid, score)`,
    /// best first, score higher-is-better. `weights` are the column weights of
    /// (breadcrumb, text); `path_prefix` keeps only documents under it.
    pub fn bm25(
        &self,
        expr: &str,
        limit: usize,
        weights: (f64, f64),
        path_prefix: Option<&str>,
    ) -> Result<Vec<(i64, f64)>> {
        let (sql_text, prefix) = match path_prefix {
            Some(p) => (
                "SELECT f.rowid, bm25(chunks_fts, ?3, ?4) AS s FROM chunks_fts f
                 JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.doc_id
                 WHERE chunks_fts MATCH ?1 AND substr(d.path, 1, length(?5)) = ?5
                 ORDER BY s LIMIT ?2",
                p,
            ),
            None => (
                "SELECT rowid, bm25(chunks_fts, ?3, ?4) AS s FROM chunks_fts
                 WHERE chunks_fts MATCH ?1 AND ?5 = ?5 ORDER BY s LIMIT ?2",
                "",
            ),
        };
        let mut stmt = self.tx.prepare_cached(sql_text).map_err(sql(self.path))?;
        let rows = stmt.query_map(
            params![expr, limit as i64, weights.0, weights.1, prefix],
            |r| Ok((r.get::<_, i64>(0)?, -r.get::<_, f64>(1)?)),
        );
        let fts_err = |e: rusqlite::Error| match e {
            // A plain SQLITE_ERROR from a MATCH is FTS5 rejecting the expression
            // ("fts5: syntax error near …", "unterminated string", "no such column: x").
            rusqlite::Error::SqliteFailure(f, Some(msg))
                if f.code == rusqlite::ErrorCode::Unknown =>
            {
                Error::Query {
                    query: expr.to_string(),
                    message: msg,
                }
            }
            other => Error::Sqlite {
                path: self.path.to_path_buf(),
                source: other,
            },
        };
        let rows = rows.map_err(fts_err)?;
        rows.map(|r| r.map_err(fts_err)).collect()
    }

    /// The chunks with these row ids (missing ids are skipped), in the order asked.
    pub fn chunks(&self, rowids: &[i64]) -> Result<Vec<ChunkRow>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT c.id, d.path, c.heading_path, c.level, c.start_line, c.end_line, c.text, d.domain,
                        c.chunk_id, c.hash
                 FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id = ?1",
            )
            .map_err(sql(self.path))?;
        let mut out = Vec::with_capacity(rowids.len());
        for id in rowids {
            let row = stmt
                .query_row([id], |r| {
                    let heading: String = r.get(2)?;
                    Ok(ChunkRow {
                        rowid: r.get(0)?,
                        // Stored id and hash: no re-hashing on the read path.
                        chunk: Chunk {
                            id: r.get(8)?,
                            path: r.get(1)?,
                            heading_path: serde_json::from_str(&heading).unwrap_or_default(),
                            level: r.get(3)?,
                            start_line: r.get(4)?,
                            end_line: r.get(5)?,
                            text: r.get(6)?,
                            hash: r.get(9)?,
                        },
                        domain: r.get(7)?,
                    })
                })
                .optional()
                .map_err(sql(self.path))?;
            out.extend(row);
        }
        Ok(out)
    }

    /// Every vector of `model` for the current chunks.
    pub fn vectors(&self, model: &str) -> Result<VectorSet> {
        let mut stmt = self
            .tx
            .prepare(
                "SELECT c.id, d.path, e.dim, e.vector FROM chunks c
                 JOIN documents d ON d.id = c.doc_id
                 JOIN embeddings e ON e.model = ?1 AND e.hash = c.embed_hash
                 ORDER BY c.id",
            )
            .map_err(sql(self.path))?;
        let mut set = VectorSet::default();
        let mut rows = stmt.query([model]).map_err(sql(self.path))?;
        while let Some(r) = rows.next().map_err(sql(self.path))? {
            let dim = r.get::<_, i64>(2).map_err(sql(self.path))? as usize;
            let blob = r
                .get_ref(3)
                .map_err(sql(self.path))?
                .as_blob()
                .map_err(|e| sql(self.path)(e.into()))?;
            if set.dim == 0 {
                set.dim = dim;
            }
            if dim != set.dim || blob.len() != dim * 4 {
                tracing::warn!("skipping a malformed vector in {}", self.path.display());
                continue;
            }
            set.rowids.push(r.get(0).map_err(sql(self.path))?);
            set.paths.push(r.get(1).map_err(sql(self.path))?);
            set.data.extend(
                blob.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
        Ok(set)
    }

    /// Counts, with embedded chunks counted for `model`.
    pub fn stats(&self, model: Option<&str>) -> Result<Stats> {
        let count = |q: &str| -> Result<u64> {
            self.tx
                .query_row(q, [], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(sql(self.path))
        };
        let embedded = match model {
            Some(m) => self
                .tx
                .query_row(
                    "SELECT count(*) FROM chunks c WHERE EXISTS
                     (SELECT 1 FROM embeddings e WHERE e.model = ?1 AND e.hash = c.embed_hash)",
                    [m],
                    |r| r.get::<_, i64>(0),
                )
                .map_err(sql(self.path))? as u64,
            None => 0,
        };
        Ok(Stats {
            files: count("SELECT count(*) FROM documents")?,
            chunks: count("SELECT count(*) FROM chunks")?,
            embedded_chunks: embedded,
            cached_vectors: count("SELECT count(*) FROM embeddings")?,
            last_indexed: self.meta("last_indexed")?.and_then(|v| v.parse().ok()),
        })
    }

    /// The distinct non-empty domains (top-level folders) of indexed documents.
    pub fn domains(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT DISTINCT domain FROM documents WHERE domain != '' ORDER BY domain",
            )
            .map_err(sql(self.path))?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(sql(self.path))?;
        rows.map(|r| r.map_err(sql(self.path))).collect()
    }

    /// The chunk with this content id, if it is in the index.
    pub fn chunk_by_id(&self, chunk_id: &str) -> Result<Option<ChunkRow>> {
        let rowid: Option<i64> = self
            .tx
            .query_row(
                "SELECT id FROM chunks WHERE chunk_id = ?1",
                [chunk_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql(self.path))?;
        Ok(match rowid {
            Some(id) => self.chunks(&[id])?.pop(),
            None => None,
        })
    }

    /// One document of the manifest.
    pub fn document(&self, path: &str) -> Result<Option<DocRecord>> {
        self.tx
            .query_row(
                "SELECT path, hash, mtime_ns, size FROM documents WHERE path = ?1",
                [path],
                doc_record,
            )
            .optional()
            .map_err(sql(self.path))
    }

    /// `(path, frontmatter JSON)` of every document under `prefix`.
    pub fn metas_under(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT path, meta FROM documents WHERE substr(path, 1, length(?1)) = ?1 ORDER BY path",
            )
            .map_err(sql(self.path))?;
        let rows = stmt
            .query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql(self.path))?;
        rows.map(|r| r.map_err(sql(self.path))).collect()
    }

    /// Every document with its chunks and links, in path order, one at a
    /// time (for export: memory stays flat however large the index).
    /// `mtime_ns` and `size` come back as stored.
    pub fn for_each_document(
        &self,
        mut f: impl FnMut(DocWrite) -> std::result::Result<(), String>,
    ) -> Result<()> {
        let s = sql(self.path);
        let mut docs = self
            .tx
            .prepare(
                "SELECT id, path, hash, mtime_ns, size, title, tags, domain, meta FROM documents ORDER BY path",
            )
            .map_err(&s)?;
        let mut chunks = self
            .tx
            .prepare_cached(
                "SELECT heading_path, level, start_line, end_line, text FROM chunks WHERE doc_id = ?1 ORDER BY seq",
            )
            .map_err(&s)?;
        let mut links = self
            .tx
            .prepare_cached(
                "SELECT (SELECT c.seq FROM chunks c WHERE c.id = l.chunk), l.src_name, l.dst_name, l.rel, l.weight
                 FROM links l WHERE l.doc_id = ?1 ORDER BY l.rowid",
            )
            .map_err(&s)?;
        let mut rows = docs.query([]).map_err(&s)?;
        while let Some(r) = rows.next().map_err(&s)? {
            let id: i64 = r.get(0).map_err(&s)?;
            let path: String = r.get(1).map_err(&s)?;
            let tags: String = r.get(6).map_err(&s)?;
            let chunk_list = chunks
                .query_map([id], |c| {
                    let heading: String = c.get(0)?;
                    Ok(Chunk::new(
                        &path,
                        serde_json::from_str(&heading).unwrap_or_default(),
                        c.get(1)?,
                        c.get(2)?,
                        c.get(3)?,
                        c.get(4)?,
                    ))
                })
                .map_err(&s)?
                .collect::<rusqlite::Result<Vec<Chunk>>>()
                .map_err(&s)?;
            let link_list = links
                .query_map([id], |l| {
                    let seq: Option<i64> = l.get(0)?;
                    Ok(Link {
                        chunk: seq.map(|q| q as usize),
                        from: l.get(1)?,
                        to: l.get(2)?,
                        rel: l.get(3)?,
                        weight: l.get::<_, f64>(4)? as f32,
                    })
                })
                .map_err(&s)?
                .collect::<rusqlite::Result<Vec<Link>>>()
                .map_err(&s)?;
            let doc = DocWrite {
                path: path.clone(),
                hash: r.get(2).map_err(&s)?,
                mtime_ns: r.get(3).map_err(&s)?,
                size: r.get::<_, i64>(4).map_err(&s)? as u64,
                title: r.get(5).map_err(&s)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                domain: r.get(7).map_err(&s)?,
                meta: r.get(8).map_err(&s)?,
                chunks: chunk_list,
                links: link_list,
                source: None,
            };
            f(doc).map_err(|message| Error::Export {
                path: self.path.to_path_buf(),
                message,
            })?;
        }
        Ok(())
    }

    /// Every cached vector of `model` that a chunk of the index uses:
    /// `(embed-text hash, vector)`, one at a time.
    pub fn for_each_vector(
        &self,
        model: &str,
        mut f: impl FnMut(&str, &[f32]) -> std::result::Result<(), String>,
    ) -> Result<()> {
        let s = sql(self.path);
        let mut stmt = self
            .tx
            .prepare(
                "SELECT e.hash, e.vector FROM embeddings e
                 WHERE e.model = ?1 AND EXISTS (SELECT 1 FROM chunks c WHERE c.embed_hash = e.hash)
                 ORDER BY e.hash",
            )
            .map_err(&s)?;
        let mut rows = stmt.query([model]).map_err(&s)?;
        let mut v = Vec::new();
        while let Some(r) = rows.next().map_err(&s)? {
            let hash: String = r.get(0).map_err(&s)?;
            let blob: Vec<u8> = r.get(1).map_err(&s)?;
            v.clear();
            v.extend(
                blob.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            f(&hash, &v).map_err(|message| Error::Export {
                path: self.path.to_path_buf(),
                message,
            })?;
        }
        Ok(())
    }

    /// Every knowledge-graph edge, in a stable order.
    pub fn links(&self) -> Result<Vec<LinkRow>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT l.chunk, l.src, l.src_name, l.dst, l.dst_name, l.rel, l.weight, d.path
                 FROM links l JOIN documents d ON d.id = l.doc_id ORDER BY l.rowid",
            )
            .map_err(sql(self.path))?;
        let rows = stmt
            .query_map([], |r| {
                let src: Option<String> = r.get(1)?;
                let src_name: Option<String> = r.get(2)?;
                Ok(LinkRow {
                    chunk: r.get(0)?,
                    src: src.map(|k| (k, src_name.unwrap_or_default())),
                    dst: r.get(3)?,
                    dst_name: r.get(4)?,
                    rel: r.get(5)?,
                    weight: r.get::<_, f64>(6)? as f32,
                    path: r.get(7)?,
                })
            })
            .map_err(sql(self.path))?;
        rows.map(|r| r.map_err(sql(self.path))).collect()
    }

    /// Frontmatter JSON of one document.
    pub fn meta_of(&self, path: &str) -> Result<Option<String>> {
        self.tx
            .query_row("SELECT meta FROM documents WHERE path = ?1", [path], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql(self.path))
    }

    /// `(access_count, last_access)` of a memory id (zeros when never recalled).
    pub fn memory_stats(&self, id: &str) -> Result<(u64, i64)> {
        self.tx
            .query_row(
                "SELECT access_count, last_access FROM memory_stats WHERE id = ?1",
                [id],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(sql(self.path))
    }

    /// Every document in the manifest.
    pub fn documents(&self) -> Result<Vec<DocRecord>> {
        let mut stmt = self
            .tx
            .prepare_cached("SELECT path, hash, mtime_ns, size FROM documents ORDER BY path")
            .map_err(sql(self.path))?;
        let rows = stmt.query_map([], doc_record).map_err(sql(self.path))?;
        rows.map(|r| r.map_err(sql(self.path))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(path: &str, texts: &[&str]) -> DocWrite {
        let chunks = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                Chunk::new(
                    path,
                    vec!["Top".into()],
                    1,
                    i as u32 * 2 + 1,
                    i as u32 * 2 + 1,
                    (*t).into(),
                )
            })
            .collect();
        DocWrite {
            path: path.into(),
            hash: cairn_core::content_hash(texts.concat().as_bytes()),
            mtime_ns: 1,
            size: 10,
            title: None,
            tags: vec![],
            domain: String::new(),
            meta: String::new(),
            chunks,
            links: Vec::new(),
            source: None,
        }
    }

    #[test]
    fn write_search_replace_delete_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("idx/index.sqlite");
        let mut store = Store::open(&path).unwrap();
        store
            .write(&WriteBatch {
                changes: vec![
                    Change::Upsert(doc(
                        "a.md",
                        &["redis caching with a short ttl", "unrelated words here"],
                    )),
                    Change::Upsert(doc("b/c.md", &["postgres replication"])),
                ],
                model: Some(("m".into(), 2)),
                embeddings: vec![("h".into(), vec![1.0, 0.0])],
            })
            .unwrap();
        let mut reader = store.reader().unwrap();
        {
            let snap = reader.snapshot().unwrap();
            let hits = snap.bm25("caching", 10, (1.0, 1.0), None).unwrap();
            assert_eq!(hits.len(), 1);
            let rows = snap.chunks(&[hits[0].0]).unwrap();
            assert_eq!(rows[0].chunk.path, "a.md");
            assert_eq!(rows[0].chunk.breadcrumb(), "Top");
            assert!(
                snap.bm25("replication", 10, (1.0, 1.0), Some("a"))
                    .unwrap()
                    .is_empty()
            );
            assert_eq!(
                snap.bm25("replication", 10, (1.0, 1.0), Some("b/"))
                    .unwrap()
                    .len(),
                1
            );
            assert!(matches!(
                snap.bm25("\"unbalanced", 10, (1.0, 1.0), None),
                Err(Error::Query { .. })
            ));
            let stats = snap.stats(Some("m")).unwrap();
            assert_eq!((stats.files, stats.chunks, stats.cached_vectors), (2, 3, 1));
        }
        store
            .write(&WriteBatch {
                changes: vec![
                    Change::Upsert(doc("a.md", &["memcached instead"])),
                    Change::Delete("b/c.md".into()),
                ],
                ..Default::default()
            })
            .unwrap();
        drop(reader);
        drop(store);
        let store = Store::open(&path).unwrap();
        let mut reader = store.reader().unwrap();
        let snap = reader.snapshot().unwrap();
        assert!(
            snap.bm25("caching", 10, (1.0, 1.0), None)
                .unwrap()
                .is_empty()
        );
        assert!(
            snap.bm25("replication", 10, (1.0, 1.0), None)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            snap.bm25("memcached", 10, (1.0, 1.0), None).unwrap().len(),
            1
        );
        assert_eq!(snap.stats(None).unwrap().chunks, 1);
        assert_eq!(store.manifest().unwrap().len(), 1);
    }

    #[test]
    fn vectors_follow_chunks_by_content_hash() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("i.sqlite")).unwrap();
        let d = doc("a.md", &["alpha text", "beta text"]);
        let hashes: Vec<String> = d
            .chunks
            .iter()
            .map(|c| cairn_core::content_hash(c.embed_text().as_bytes()))
            .collect();
        store
            .write(&WriteBatch {
                changes: vec![Change::Upsert(d)],
                ..Default::default()
            })
            .unwrap();
        assert_eq!(store.unembedded("m", 10).unwrap().len(), 2);
        store
            .write(&WriteBatch {
                changes: vec![],
                model: Some(("m".into(), 2)),
                embeddings: vec![(hashes[0].clone(), vec![0.6, 0.8])],
            })
            .unwrap();
        let left = store.unembedded("m", 10).unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].0, hashes[1]);
        let mut reader = store.reader().unwrap();
        let snap = reader.snapshot().unwrap();
        let set = snap.vectors("m").unwrap();
        assert_eq!(
            (set.rowids.len(), set.dim, set.data.clone()),
            (1, 2, vec![0.6, 0.8])
        );
        assert!(snap.vectors("other-model").unwrap().rowids.is_empty());
        assert_eq!(snap.stats(Some("m")).unwrap().embedded_chunks, 1);
    }
}
