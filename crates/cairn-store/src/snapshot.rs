//! The read side: [`Reader`], a read-only connection, and [`Snapshot`], one
//! transaction on it, the whole of [`IndexSnapshot`]: BM25, chunks, vectors,
//! stats, documents, links, metadata and the export walks.

use std::path::{Path, PathBuf};

use cairn_core::{
    Chunk, ChunkId, ChunkRow, DefinitionRow, DocRecord, DocWrite, DocumentSink, FileRow,
    HISTORY_PREFIX, IndexReader, IndexSnapshot, Link, LinkRow, Relation, Scored, Stats,
    StoreResult, VectorSet, VectorSink, like_contains,
};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::connection::configure;
use crate::error::{Error, Result, sql};

/// Maps a `path, hash, mtime_ns, size` row.
pub(crate) fn doc_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<DocRecord> {
    Ok(DocRecord {
        path: r.get(0)?,
        hash: r.get(1)?,
        mtime_ns: r.get(2)?,
        size: r.get::<_, i64>(3)? as u64,
        pipeline: r.get(4)?,
    })
}

/// A read-only view of the index on its own connection.
pub struct Reader {
    conn: Connection,
    path: PathBuf,
}

impl Reader {
    /// Opens a reader on an existing index.
    pub fn open(path: &Path) -> Result<Reader> {
        crate::writer::refuse_directory(path)?;
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
}

impl IndexReader for Reader {
    /// Starts a consistent snapshot: every read through it sees the same state.
    fn snapshot(&mut self) -> StoreResult<Box<dyn IndexSnapshot + '_>> {
        // A pooled connection: no deadline of an earlier snapshot carries over.
        self.conn.progress_handler(0, None::<fn() -> bool>);
        let tx = self.conn.transaction().map_err(sql(&self.path))?;
        Ok(Box::new(Snapshot {
            tx,
            path: &self.path,
        }))
    }
}

/// Reads inside one transaction.
pub struct Snapshot<'a> {
    tx: rusqlite::Transaction<'a>,
    path: &'a Path,
}

impl IndexSnapshot for Snapshot<'_> {
    /// SQLite calls the handler every 1,000 virtual-machine steps (each call
    /// reads the clock, so not every step); past the deadline it answers
    /// "interrupt" and the running statement ends with SQLITE_INTERRUPT.
    fn set_deadline(&self, deadline: std::time::Instant) {
        self.tx
            .progress_handler(1_000, Some(move || std::time::Instant::now() >= deadline));
    }

    /// Bumped by every write batch: a cached vector matrix older than this is stale.
    fn generation(&self) -> StoreResult<i64> {
        Ok(self
            .tx
            .query_row(
                "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map(|g| g.unwrap_or(0))
            .map_err(sql(self.path))?)
    }

    /// A metadata value.
    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        Ok(self
            .tx
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(sql(self.path))?)
    }

    /// BM25 top `limit` for an FTS5 MATCH expression: chunks scored,
    /// best first, score higher-is-better. `weights` are the column weights of
    /// (breadcrumb, text); `path_prefix` keeps only documents under it.
    fn bm25(
        &self,
        expr: &str,
        limit: usize,
        weights: (f64, f64),
        path_prefix: Option<&str>,
    ) -> StoreResult<Vec<Scored<ChunkId>>> {
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
            |r| {
                Ok(Scored::new(
                    ChunkId(r.get::<_, i64>(0)?),
                    -r.get::<_, f64>(1)?,
                ))
            },
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
        Ok(rows.map(|r| r.map_err(fts_err)).collect::<Result<_>>()?)
    }

    /// The chunks with these row ids (missing ids are skipped), in the order asked.
    fn chunks(&self, rowids: &[i64]) -> StoreResult<Vec<ChunkRow>> {
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
    fn vectors(&self, model: &str) -> StoreResult<VectorSet> {
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
            if dim != set.dim || !crate::vector_blob::decode_half_into(blob, dim, &mut set.data) {
                tracing::warn!("skipping a malformed vector in {}", self.path.display());
                continue;
            }
            set.rowids.push(r.get(0).map_err(sql(self.path))?);
            set.paths.push(r.get(1).map_err(sql(self.path))?);
        }
        Ok(set)
    }

    /// Counts, with embedded chunks counted for `model`.
    fn stats(&self, model: Option<&str>) -> StoreResult<Stats> {
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
        // The records' paths as a range (`/` + 1 is `0`): the path index
        // finds them.
        let history_end = format!("{}0", HISTORY_PREFIX.trim_end_matches('/'));
        let unembedded_history = self
            .tx
            .query_row(
                "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE d.path >= ?1 AND d.path < ?2 AND NOT EXISTS
                 (SELECT 1 FROM embeddings e WHERE e.model = ?3 AND e.hash = c.embed_hash)",
                params![HISTORY_PREFIX, history_end, model.unwrap_or("")],
                |r| r.get::<_, i64>(0),
            )
            .map_err(sql(self.path))? as u64;
        Ok(Stats {
            files: count("SELECT count(*) FROM documents")?,
            chunks: count("SELECT count(*) FROM chunks")?,
            embedded_chunks: embedded,
            unembedded_history,
            cached_vectors: count("SELECT count(*) FROM embeddings")?,
            last_indexed: self.meta("last_indexed")?.and_then(|v| v.parse().ok()),
        })
    }

    /// The distinct non-empty domains (top-level folders) of indexed documents.
    fn domains(&self) -> StoreResult<Vec<String>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT DISTINCT domain FROM documents WHERE domain != '' ORDER BY domain",
            )
            .map_err(sql(self.path))?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(sql(self.path))?;
        Ok(rows
            .map(|r| r.map_err(sql(self.path)))
            .collect::<Result<_>>()?)
    }

    /// The chunk with this content id, if it is in the index.
    fn chunk_by_id(&self, chunk_id: &str) -> StoreResult<Option<ChunkRow>> {
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
    fn document(&self, path: &str) -> StoreResult<Option<DocRecord>> {
        Ok(self
            .tx
            .query_row(
                "SELECT path, hash, mtime_ns, size, pipeline FROM documents WHERE path = ?1",
                [path],
                doc_record,
            )
            .optional()
            .map_err(sql(self.path))?)
    }

    /// `(path, frontmatter JSON)` of every document under `prefix`.
    fn metas_under(&self, prefix: &str) -> StoreResult<Vec<(String, String)>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT path, meta FROM documents WHERE substr(path, 1, length(?1)) = ?1 ORDER BY path",
            )
            .map_err(sql(self.path))?;
        let rows = stmt
            .query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql(self.path))?;
        Ok(rows
            .map(|r| r.map_err(sql(self.path)))
            .collect::<Result<_>>()?)
    }

    /// Every document with its chunks and links, in path order, one at a
    /// time (for export: memory stays flat however large the index).
    /// `mtime_ns` and `size` come back as stored.
    fn for_each_document(&self, f: DocumentSink<'_>) -> StoreResult<()> {
        let s = sql(self.path);
        let mut docs = self
            .tx
            .prepare(
                "SELECT id, path, hash, mtime_ns, size, title, tags, domain, meta, pipeline FROM documents ORDER BY path",
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
                        rel: Relation::from(l.get::<_, String>(3)?),
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
                pipeline: r.get(9).map_err(&s)?,
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
    fn for_each_vector(&self, model: &str, f: VectorSink<'_>) -> StoreResult<()> {
        let s = sql(self.path);
        let mut stmt = self
            .tx
            .prepare(
                "SELECT e.hash, e.vector, e.dim FROM embeddings e
                 WHERE e.model = ?1 AND EXISTS (SELECT 1 FROM chunks c WHERE c.embed_hash = e.hash)
                 ORDER BY e.hash",
            )
            .map_err(&s)?;
        let mut rows = stmt.query([model]).map_err(&s)?;
        let mut v = Vec::new();
        while let Some(r) = rows.next().map_err(&s)? {
            let hash: String = r.get(0).map_err(&s)?;
            let blob: Vec<u8> = r.get(1).map_err(&s)?;
            let dim = r.get::<_, i64>(2).map_err(&s)? as usize;
            v.clear();
            if !crate::vector_blob::decode_into(&blob, dim, &mut v) {
                tracing::warn!("skipping a malformed vector in {}", self.path.display());
                continue;
            }
            f(&hash, &v).map_err(|message| Error::Export {
                path: self.path.to_path_buf(),
                message,
            })?;
        }
        Ok(())
    }

    /// Every knowledge-graph edge, in a stable order.
    fn links(&self) -> StoreResult<Vec<LinkRow>> {
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
                    rel: Relation::from(r.get::<_, String>(5)?),
                    weight: r.get::<_, f64>(6)? as f32,
                    path: r.get(7)?,
                })
            })
            .map_err(sql(self.path))?;
        Ok(rows
            .map(|r| r.map_err(sql(self.path)))
            .collect::<Result<_>>()?)
    }

    /// Frontmatter JSON of one document.
    fn meta_of(&self, path: &str) -> StoreResult<Option<String>> {
        Ok(self
            .tx
            .query_row("SELECT meta FROM documents WHERE path = ?1", [path], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql(self.path))?)
    }

    /// `(access_count, last_access)` of a memory id (zeros when never recalled).
    fn memory_stats(&self, id: &str) -> StoreResult<(u64, i64)> {
        Ok(self
            .tx
            .query_row(
                "SELECT access_count, last_access FROM memory_stats WHERE id = ?1",
                [id],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)),
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(sql(self.path))?)
    }

    /// Every document in the manifest.
    fn documents(&self) -> StoreResult<Vec<DocRecord>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT path, hash, mtime_ns, size, pipeline FROM documents ORDER BY path",
            )
            .map_err(sql(self.path))?;
        let rows = stmt.query_map([], doc_record).map_err(sql(self.path))?;
        Ok(rows
            .map(|r| r.map_err(sql(self.path)))
            .collect::<Result<_>>()?)
    }

    /// The chunks that define `key` (index `links_defines`).
    fn definitions(&self, key: &str, limit: usize) -> StoreResult<Vec<DefinitionRow>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT l.chunk, l.dst_name, d.path, l.weight > 0.0 AND l.weight < 1.0 FROM links l JOIN documents d ON d.id = l.doc_id
                 WHERE l.dst = ?1 AND l.rel = 'defines' AND l.chunk IS NOT NULL
                 ORDER BY d.path, l.chunk LIMIT ?2",
            )
            .map_err(sql(self.path))?;
        let rows = stmt
            .query_map(params![key, limit as i64], |r| {
                Ok(DefinitionRow {
                    chunk: r.get(0)?,
                    name: r.get(1)?,
                    path: r.get(2)?,
                    hidden: r.get(3)?,
                })
            })
            .map_err(sql(self.path))?;
        Ok(rows
            .map(|r| r.map_err(sql(self.path)))
            .collect::<Result<_>>()?)
    }

    /// Files whose path contains `fragment`: a scan of the documents'
    /// paths (thousands of short strings), each with its first chunk.
    fn files_named(&self, fragment: &str, limit: usize) -> StoreResult<Vec<FileRow>> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT d.path, (SELECT c.id FROM chunks c WHERE c.doc_id = d.id ORDER BY c.seq LIMIT 1) AS first
                 FROM documents d WHERE d.path LIKE ?1 ESCAPE '\\' AND first IS NOT NULL
                 ORDER BY d.path LIMIT ?2",
            )
            .map_err(sql(self.path))?;
        let rows = stmt
            .query_map(params![like_contains(fragment), limit as i64], |r| {
                Ok(FileRow {
                    path: r.get(0)?,
                    first_chunk: r.get(1)?,
                })
            })
            .map_err(sql(self.path))?;
        Ok(rows
            .map(|r| r.map_err(sql(self.path)))
            .collect::<Result<_>>()?)
    }
}
