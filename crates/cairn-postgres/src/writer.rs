//! The writer [`PgStore`]: connecting, and the whole of [`IndexWriter`] on
//! it: write batches (with [`upsert`] of a document), the manifest and
//! embedding cache, metadata, maintenance, the HNSW index build, the
//! memory-writer lock (`lock.rs`) and the schema version.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use cairn_core::{
    Change, Chunk, DocRecord, DocWrite, IndexReader, IndexWriter, StoreResult, WriteBatch,
    entity_key, sync,
};
use postgres::{Client, Transaction};

use crate::connection::{connect, redact};
use crate::error::{lex, pg};
use crate::lexicon;
use crate::lexicon::BM25_CUT;
use crate::lock::MemoryLock;
use crate::schema::{MIGRATIONS, migrate};
use crate::snapshot::{PgReader, chunk_at};
use crate::vectors::{EXACT_SCAN_MAX, HNSW_EF_SEARCH, HNSW_MAX_DIM, hnsw_index};

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The writer: one connection, one project.
pub struct PgStore {
    /// Behind a mutex: `postgres` needs `&mut` even for reads, and the
    /// trait's read helpers take `&self`.
    client: std::sync::Mutex<Client>,
    uri: String,
    pub(crate) location: String,
    pub(crate) project: String,
    /// Vector lengths whose HNSW index this writer knows exists.
    indexed_dims: HashSet<usize>,
    /// Smallest HNSW candidate list of a vector query.
    ef_search: usize,
    /// Most chunks a vector query scores exactly instead of using HNSW.
    exact_scan_max: usize,
    /// Postings of a lexical query's common words past which they are
    /// scored only for its rare words' best chunks (0: never).
    bm25_cut: usize,
    /// The project's memory-writer lock across machines.
    memory_lock: std::sync::Arc<MemoryLock>,
}

impl PgStore {
    /// Connects, migrates the schema if needed, and scopes every statement to
    /// `project` (any stable name: the engine passes the project root).
    pub fn connect(uri: &str, project: &str) -> StoreResult<PgStore> {
        let location = redact(uri);
        let mut client = connect(uri, &location)?;
        migrate(&mut client, &location)?;
        {
            // An index written before BM25 postings were kept gets them now,
            // under the project's writer lock.
            let mut tx = client.transaction().map_err(pg(&location))?;
            tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&project])
                .map_err(pg(&location))?;
            if lexicon::build_if_missing(&mut tx, project).map_err(lex(&location))? {
                tracing::info!("built the BM25 postings of project {project} on {location}");
            }
            tx.commit().map_err(pg(&location))?;
        }
        Ok(PgStore {
            memory_lock: MemoryLock::new(uri, &location, project),
            client: std::sync::Mutex::new(client),
            uri: uri.to_string(),
            location,
            project: project.to_string(),
            indexed_dims: HashSet::new(),
            ef_search: HNSW_EF_SEARCH,
            exact_scan_max: EXACT_SCAN_MAX,
            bm25_cut: BM25_CUT,
        })
    }

    /// Sets the smallest HNSW candidate list of a vector query (pgvector's
    /// `hnsw.ef_search`, 1–1000): higher finds more of the true nearest
    /// neighbours, slower. Readers opened afterwards use it.
    pub fn with_ef_search(mut self, ef: usize) -> PgStore {
        self.ef_search = ef.clamp(1, 1000);
        self
    }

    /// Sets the most chunks (of the project, under the path prefix) that a
    /// vector query scores exactly instead of asking the shared HNSW index
    /// (0: always the index). Readers opened afterwards use it.
    pub fn with_exact_scan_max(mut self, n: usize) -> PgStore {
        self.exact_scan_max = n;
        self
    }

    /// Sets how many postings a lexical query's common words (each in more
    /// than one chunk of 16) may have before they are scored only for the
    /// best chunks of its rare words instead of in full (0: always in full).
    /// Readers opened afterwards use it.
    pub fn with_bm25_cut(mut self, postings: usize) -> PgStore {
        self.bm25_cut = postings;
        self
    }

    pub(crate) fn conn(&self) -> std::sync::MutexGuard<'_, Client> {
        sync::lock(&self.client)
    }
}

impl IndexWriter for PgStore {
    fn location(&self) -> String {
        format!("{} (project {})", self.location, self.project)
    }

    fn reader(&self) -> StoreResult<Box<dyn IndexReader>> {
        Ok(Box::new(PgReader {
            client: connect(&self.uri, &self.location)?,
            location: self.location.clone(),
            project: self.project.clone(),
            ef_search: self.ef_search,
            exact_scan_max: self.exact_scan_max,
            bm25_cut: self.bm25_cut,
            indexed_dims: RefCell::new(HashSet::new()),
        }))
    }

    fn manifest(&self) -> StoreResult<HashMap<String, DocRecord>> {
        let mut c = self.conn();
        let rows = c
            .query(
                "SELECT path, hash, mtime_ns, size, pipeline FROM documents WHERE project = $1",
                &[&self.project],
            )
            .map_err(pg(&self.location))?;
        Ok(rows
            .iter()
            .map(|r| {
                let d = DocRecord {
                    path: r.get(0),
                    hash: r.get(1),
                    mtime_ns: r.get(2),
                    size: r.get::<_, i64>(3) as u64,
                    pipeline: r.get(4),
                };
                (d.path.clone(), d)
            })
            .collect())
    }

    fn cached_hashes(&self, model: &str, hashes: &[&str]) -> StoreResult<HashSet<String>> {
        let mut c = self.conn();
        let list: Vec<String> = hashes.iter().map(|h| h.to_string()).collect();
        let rows = c
            .query(
                "SELECT hash FROM embeddings WHERE model = $1 AND hash = ANY($2)",
                &[&model, &list],
            )
            .map_err(pg(&self.location))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn unembedded(
        &self,
        model: &str,
        after: &str,
        limit: usize,
        skip: Option<&str>,
    ) -> StoreResult<Vec<(String, Chunk)>> {
        let mut c = self.conn();
        let skip = skip.unwrap_or("");
        let rows = c
            .query(
                "SELECT DISTINCT ON (c.embed_hash) c.embed_hash, d.path, c.heading_path, c.level,
                        c.start_line, c.end_line, c.text
                 FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE c.project = $1 AND c.embed_hash > $4 AND NOT EXISTS
                       (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)
                   AND ($5 = '' OR left(d.path, length($5)) <> $5)
                 ORDER BY c.embed_hash LIMIT $3",
                &[&self.project, &model, &(limit as i64), &after, &skip],
            )
            .map_err(pg(&self.location))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), chunk_at(r, r.get::<_, &str>(1), 2)))
            .collect())
    }

    fn unembedded_count(&self, model: &str, skip: Option<&str>) -> StoreResult<u64> {
        let mut c = self.conn();
        let skip = skip.unwrap_or("");
        let row = c
            .query_one(
                "SELECT count(DISTINCT c.embed_hash) FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE c.project = $1 AND NOT EXISTS
                       (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)
                   AND ($3 = '' OR left(d.path, length($3)) <> $3)",
                &[&self.project, &model, &skip],
            )
            .map_err(pg(&self.location))?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    fn has_vectors(&self, model: &str) -> StoreResult<bool> {
        // The embeddings table is shared by the server's projects: a
        // vector counts when one of this project's chunks has its text.
        let mut c = self.conn();
        let row = c
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM chunks c JOIN embeddings e
                                  ON e.model = $2 AND e.hash = c.embed_hash
                                WHERE c.project = $1)",
                &[&self.project, &model],
            )
            .map_err(pg(&self.location))?;
        Ok(row.get::<_, bool>(0))
    }

    fn integrity_check(&self) -> StoreResult<Vec<String>> {
        Ok(Vec::new())
    }

    fn fts_check(&self) -> StoreResult<Option<String>> {
        Ok(None)
    }

    fn schema_version(&self) -> StoreResult<(i64, i64)> {
        let mut c = self.conn();
        let found: i64 = c
            .query_one("SELECT coalesce(max(version), 0) FROM cairn_schema", &[])
            .map_err(pg(&self.location))?
            .get(0);
        Ok((found, MIGRATIONS.len() as i64))
    }

    fn vacuum(&self) -> StoreResult<()> {
        let mut c = self.conn();
        c.batch_execute("VACUUM (ANALYZE) chunks, documents, links, embeddings")
            .map_err(pg(&self.location))
    }

    fn record_access(&mut self, ids: &[&str], now: i64) -> StoreResult<()> {
        let e = pg(&self.location);
        let mut client = self.conn();
        let mut tx = client.transaction().map_err(&e)?;
        for id in ids {
            tx.execute(
                "INSERT INTO memory_stats (project, id, access_count, last_access) VALUES ($1, $2, 1, $3)
                 ON CONFLICT (project, id) DO UPDATE
                 SET access_count = memory_stats.access_count + 1, last_access = $3",
                &[&self.project, id, &now],
            )
            .map_err(&e)?;
        }
        tx.commit().map_err(&e)
    }

    fn write(&mut self, batch: &WriteBatch) -> StoreResult<()> {
        let e = pg(&self.location);
        let project = self.project.clone();
        let mut client = sync::lock(&self.client);
        let mut tx = client.transaction().map_err(&e)?;
        // Writers of one project queue here, so two machines indexing at
        // once never interleave a document's delete and insert.
        tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&project])
            .map_err(&e)?;
        let now = now_secs();
        for change in &batch.changes {
            match change {
                Change::Delete(path) => {
                    lexicon::remove_document(&mut tx, &project, path).map_err(&e)?;
                    tx.execute(
                        "DELETE FROM documents WHERE project = $1 AND path = $2",
                        &[&project, path],
                    )
                    .map_err(&e)?;
                }
                Change::Touch {
                    path,
                    mtime_ns,
                    size,
                } => {
                    tx.execute(
                        "UPDATE documents SET mtime_ns = $3, size = $4 WHERE project = $1 AND path = $2",
                        &[&project, path, mtime_ns, &(*size as i64)],
                    )
                    .map_err(&e)?;
                }
                Change::Upsert(doc) => {
                    upsert(&mut tx, &project, doc, now).map_err(lex(&self.location))?
                }
            }
        }
        if let Some((model, dim)) = &batch.model {
            // A thousand vectors a statement; a hash twice in one statement
            // would trip ON CONFLICT, so the last of each wins first.
            let mut seen = HashSet::new();
            let mut unique: Vec<&(String, Vec<f32>)> = batch
                .embeddings
                .iter()
                .rev()
                .filter(|(h, _)| seen.insert(h.as_str()))
                .collect();
            unique.reverse();
            for part in unique.chunks(1000) {
                let hashes: Vec<&str> = part.iter().map(|(h, _)| h.as_str()).collect();
                let vectors: Vec<pgvector::Vector> = part
                    .iter()
                    .map(|(_, v)| pgvector::Vector::from(v.clone()))
                    .collect();
                tx.execute(
                    "INSERT INTO embeddings (model, hash, dim, vector)
                     SELECT $1, h, $2, v FROM unnest($3::text[], $4::vector[]) AS u(h, v)
                     ON CONFLICT (model, hash) DO UPDATE SET vector = EXCLUDED.vector, dim = EXCLUDED.dim",
                    &[model, &(*dim as i32), &hashes, &vectors],
                )
                .map_err(&e)?;
            }
        }
        tx.execute(
            "INSERT INTO cairn_meta (project, key, value) VALUES ($1, 'generation', '1')
             ON CONFLICT (project, key) DO UPDATE SET value = (cairn_meta.value::bigint + 1)::text",
            &[&project],
        )
        .map_err(&e)?;
        tx.commit().map_err(&e)
    }

    fn set_meta(&self, key: &str, value: &str) -> StoreResult<()> {
        let mut c = self.conn();
        c.execute(
            "INSERT INTO cairn_meta (project, key, value) VALUES ($1, $2, $3)
             ON CONFLICT (project, key) DO UPDATE SET value = $3",
            &[&self.project, &key, &value],
        )
        .map_err(pg(&self.location))?;
        Ok(())
    }

    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        let mut c = self.conn();
        Ok(c.query_opt(
            "SELECT value FROM cairn_meta WHERE project = $1 AND key = $2",
            &[&self.project, &key],
        )
        .map_err(pg(&self.location))?
        .map(|r| r.get(0)))
    }

    fn optimize(&self) -> StoreResult<()> {
        let mut c = self.conn();
        c.batch_execute("ANALYZE chunks, embeddings")
            .map_err(pg(&self.location))
    }

    fn shared(&self) -> bool {
        true
    }

    fn source(&self, path: &str) -> StoreResult<Option<String>> {
        let mut c = self.conn();
        Ok(c.query_opt(
            "SELECT source FROM documents WHERE project = $1 AND path = $2",
            &[&self.project, &path],
        )
        .map_err(pg(&self.location))?
        .and_then(|r| r.get(0)))
    }

    fn memory_lock(&self) -> Option<std::sync::Arc<dyn cairn_core::SharedLock>> {
        Some(self.memory_lock.clone())
    }

    fn index_vectors(&mut self, dim: usize) -> StoreResult<()> {
        if self.indexed_dims.contains(&dim) || dim == 0 || dim > HNSW_MAX_DIM {
            return Ok(());
        }
        let e = pg(&self.location);
        let mut client = sync::lock(&self.client);
        let mut tx = client.transaction().map_err(&e)?;
        // Serialise builders across projects and machines.
        tx.execute("SELECT pg_advisory_xact_lock(7315002)", &[])
            .map_err(&e)?;
        let exists = tx
            .query_opt(
                "SELECT 1 FROM pg_indexes WHERE tablename = 'embeddings' AND indexname = $1",
                &[&hnsw_index(dim)],
            )
            .map_err(&e)?
            .is_some();
        if !exists {
            let any = tx
                .query_opt(
                    "SELECT 1 FROM embeddings WHERE dim = $1 LIMIT 1",
                    &[&(dim as i32)],
                )
                .map_err(&e)?
                .is_some();
            if !any {
                return Ok(());
            }
            // The build is fastest when the whole graph fits in memory
            // (about 2 GB at a million 384-d vectors); pgvector takes only
            // what the graph needs, so a small corpus uses little of this.
            tx.batch_execute("SET LOCAL maintenance_work_mem = '2GB'")
                .map_err(&e)?;
            tracing::info!(dim, "building the HNSW index on {}", self.location);
            // `dim` is a number, so formatting it into DDL is safe. One
            // `vector` column holds every model's vectors, so each length
            // gets its own partial expression index, the form pgvector
            // documents for mixed dimensions; PostgreSQL keeps it up to date
            // on every later insert.
            tx.batch_execute(&format!(
                "CREATE INDEX {} ON embeddings
                 USING hnsw ((vector::vector({dim})) vector_cosine_ops) WHERE dim = {dim}",
                hnsw_index(dim)
            ))
            .map_err(&e)?;
        }
        tx.commit().map_err(&e)?;
        self.indexed_dims.insert(dim);
        Ok(())
    }
}

fn upsert(
    tx: &mut Transaction<'_>,
    project: &str,
    doc: &DocWrite,
    now: i64,
) -> Result<(), lexicon::AddError> {
    lexicon::remove_document(tx, project, &doc.path)?;
    tx.execute(
        "DELETE FROM documents WHERE project = $1 AND path = $2",
        &[&project, &doc.path],
    )?;
    let doc_id = insert_document_row(tx, project, doc, now)?;
    // One statement per column set, not per row: arrays through `unnest`
    // cost one round trip for the whole document.
    let n = doc.chunks.len();
    let mut chunk_ids = Vec::with_capacity(n);
    let mut seqs = Vec::with_capacity(n);
    let mut headings = Vec::with_capacity(n);
    let mut breadcrumbs = Vec::with_capacity(n);
    let mut levels = Vec::with_capacity(n);
    let mut starts = Vec::with_capacity(n);
    let mut ends = Vec::with_capacity(n);
    let mut hashes = Vec::with_capacity(n);
    let mut embed_hashes = Vec::with_capacity(n);
    let mut texts = Vec::with_capacity(n);
    for (seq, c) in doc.chunks.iter().enumerate() {
        chunk_ids.push(c.id.as_str());
        seqs.push(seq as i32);
        headings.push(serde_json::to_string(&c.heading_path).unwrap_or_else(|_| "[]".into()));
        breadcrumbs.push(c.breadcrumb());
        levels.push(i32::from(c.level));
        starts.push(c.start_line as i32);
        ends.push(c.end_line as i32);
        hashes.push(c.hash.as_str());
        embed_hashes.push(cairn_core::content_hash(c.embed_text().as_bytes()));
        texts.push(c.text.as_str());
    }
    // The tokens BM25 counts (lexicon.rs), split before the rows go in so
    // that each row carries its length.
    let lex_rows: Vec<(&str, &str)> = breadcrumbs
        .iter()
        .zip(&texts)
        .map(|(b, t)| (b.as_str(), *t))
        .collect();
    let split = lexicon::split(&lex_rows).map_err(lexicon::AddError::Tokenizer)?;
    let lens: Vec<i32> = split.iter().map(|s| s.len).collect();
    let mut rowids = vec![0i64; n];
    for r in tx.query(
        "INSERT INTO chunks (project, doc_id, chunk_id, seq, heading_path, breadcrumb, level,
                             start_line, end_line, hash, embed_hash, text, lex_len)
         SELECT $1, $2, * FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::int[],
                                      $8::int[], $9::int[], $10::text[], $11::text[], $12::text[],
                                      $13::int[])
         RETURNING id, seq",
        &[
            &project,
            &doc_id,
            &chunk_ids,
            &seqs,
            &headings,
            &breadcrumbs,
            &levels,
            &starts,
            &ends,
            &hashes,
            &embed_hashes,
            &texts,
            &lens,
        ],
    )? {
        if let Some(slot) = rowids.get_mut(r.get::<_, i32>(1) as usize) {
            *slot = r.get(0);
        }
    }
    lexicon::add_postings(tx, project, &rowids, &split)?;
    insert_links(tx, project, doc_id, &rowids, doc)?;
    Ok(())
}

/// Inserts a document's row (written at `now`); its id.
fn insert_document_row(
    tx: &mut Transaction<'_>,
    project: &str,
    doc: &DocWrite,
    now: i64,
) -> Result<i64, postgres::Error> {
    let tags = serde_json::to_string(&doc.tags).unwrap_or_else(|_| "[]".into());
    let meta = if doc.meta.is_empty() {
        "{}"
    } else {
        doc.meta.as_str()
    };
    Ok(tx
        .query_one(
            "INSERT INTO documents (project, path, hash, mtime_ns, size, title, tags, domain, meta, indexed_at, source, pipeline)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
            &[
                &project,
                &doc.path,
                &doc.hash,
                &doc.mtime_ns,
                &(doc.size as i64),
                &doc.title,
                &tags,
                &doc.domain,
                &meta,
                &now,
                &doc.source,
                &doc.pipeline,
            ],
        )?
        .get(0))
}

/// Inserts the links of a document written as `doc_id` whose chunks have
/// row ids `rowids`, in one statement (a link to a chunk the document does
/// not have, or naming no entity, is left out).
fn insert_links(
    tx: &mut Transaction<'_>,
    project: &str,
    doc_id: i64,
    rowids: &[i64],
    doc: &DocWrite,
) -> Result<(), postgres::Error> {
    let mut l_chunk = Vec::new();
    let mut l_seq = Vec::new();
    let mut l_src = Vec::new();
    let mut l_src_name = Vec::new();
    let mut l_dst = Vec::new();
    let mut l_dst_name = Vec::new();
    let mut l_rel = Vec::new();
    let mut l_weight = Vec::new();
    for l in &doc.links {
        let chunk = match l.chunk {
            Some(i) => match rowids.get(i) {
                Some(r) => Some(*r),
                None => continue,
            },
            None => None,
        };
        let src = l.from.as_deref().map(|f| (entity_key(f), f.to_string()));
        if chunk.is_none() && src.is_none() {
            continue;
        }
        let dst = entity_key(&l.to);
        if dst.is_empty() || src.as_ref().is_some_and(|(k, _)| k.is_empty()) {
            continue;
        }
        l_chunk.push(chunk);
        l_seq.push(l.chunk.map(|i| i as i32));
        l_src.push(src.as_ref().map(|(k, _)| k.clone()));
        l_src_name.push(src.map(|(_, n)| n));
        l_dst.push(dst);
        l_dst_name.push(l.to.as_str());
        l_rel.push(l.rel.name());
        l_weight.push(l.weight);
    }
    if !l_dst.is_empty() {
        tx.execute(
            "INSERT INTO links (project, doc_id, chunk, seq, src, src_name, dst, dst_name, rel, weight)
             SELECT $1, $2, * FROM unnest($3::bigint[], $4::int[], $5::text[], $6::text[],
                                          $7::text[], $8::text[], $9::text[], $10::real[])",
            &[
                &project,
                &doc_id,
                &l_chunk,
                &l_seq,
                &l_src,
                &l_src_name,
                &l_dst,
                &l_dst_name,
                &l_rel,
                &l_weight,
            ],
        )?;
    }
    Ok(())
}
