//! Cairn's index on PostgreSQL with pgvector: the storage traits of
//! `cairn-core` ([`IndexWriter`], [`IndexReader`], [`IndexSnapshot`]) for a
//! server that many machines share.
//!
//! One database serves many projects: every row carries its project's name,
//! and every query is scoped by it. Lexical search is PostgreSQL full-text
//! search: a stored `tsvector` of breadcrumb (weight A) and text (weight B)
//! under the `english` configuration plus both under `simple` (weight D, so
//! code identifiers match as written), a GIN index, and `ts_rank_cd` for the
//! score — cover density, not BM25: it has no IDF and no length
//! normalisation beyond what the flags ask, which is why the same queries
//! rank differently than on SQLite's FTS5. Fusion stays in the engine, so
//! both backends fuse the same way. Vectors live once per (model, text hash)
//! in a `vector` column. Each write batch is one transaction; a snapshot is
//! one read-only REPEATABLE READ transaction.
#![deny(missing_docs)]

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use cairn_core::{
    Change, Chunk, ChunkRow, DocRecord, DocWrite, DocumentSink, IndexReader, IndexSnapshot,
    IndexWriter, Link, LinkRow, Stats, StoreError, StoreResult, VectorSet, VectorSink, WriteBatch,
    entity_key,
};
use postgres::{Client, IsolationLevel, NoTls, Transaction};

/// Schema migrations, in order; applied under an advisory lock.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE cairn_meta (
    project TEXT NOT NULL,
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (project, key)
);
CREATE TABLE documents (
    id         BIGSERIAL PRIMARY KEY,
    project    TEXT NOT NULL,
    path       TEXT NOT NULL,
    hash       TEXT NOT NULL,
    mtime_ns   BIGINT NOT NULL,
    size       BIGINT NOT NULL,
    title      TEXT,
    tags       TEXT NOT NULL DEFAULT '[]',
    domain     TEXT NOT NULL DEFAULT '',
    meta       TEXT NOT NULL DEFAULT '{}',
    indexed_at BIGINT NOT NULL,
    UNIQUE (project, path)
);
CREATE TABLE chunks (
    id           BIGSERIAL PRIMARY KEY,
    project      TEXT NOT NULL,
    doc_id       BIGINT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    chunk_id     TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    heading_path TEXT NOT NULL,
    breadcrumb   TEXT NOT NULL,
    level        INTEGER NOT NULL,
    start_line   INTEGER NOT NULL,
    end_line     INTEGER NOT NULL,
    hash         TEXT NOT NULL,
    embed_hash   TEXT NOT NULL,
    text         TEXT NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', breadcrumb), 'A') ||
        setweight(to_tsvector('english', text), 'B') ||
        setweight(to_tsvector('simple', breadcrumb || ' ' || text), 'D')
    ) STORED
);
CREATE INDEX chunks_doc ON chunks (doc_id);
CREATE INDEX chunks_project_embed ON chunks (project, embed_hash);
CREATE INDEX chunks_project_chunk_id ON chunks (project, chunk_id);
CREATE INDEX chunks_tsv ON chunks USING GIN (tsv);
CREATE TABLE embeddings (
    model  TEXT NOT NULL,
    hash   TEXT NOT NULL,
    dim    INTEGER NOT NULL,
    vector vector NOT NULL,
    PRIMARY KEY (model, hash)
);
CREATE TABLE links (
    project  TEXT NOT NULL,
    doc_id   BIGINT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    chunk    BIGINT REFERENCES chunks(id) ON DELETE CASCADE,
    seq      INTEGER,
    src      TEXT,
    src_name TEXT,
    dst      TEXT NOT NULL,
    dst_name TEXT NOT NULL,
    rel      TEXT NOT NULL,
    weight   REAL NOT NULL
);
CREATE INDEX links_doc ON links (doc_id);
CREATE INDEX links_project ON links (project);
CREATE TABLE memory_stats (
    project      TEXT NOT NULL,
    id           TEXT NOT NULL,
    access_count BIGINT NOT NULL DEFAULT 0,
    last_access  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (project, id)
);
"#,
    // 2: memory files travel through the server (DocWrite::source).
    "ALTER TABLE documents ADD COLUMN source TEXT;",
    // 3: deleting a chunk looks up the links that point at it; without this
    // index, dropping a document of n chunks scanned the links table n times.
    "CREATE INDEX IF NOT EXISTS links_chunk ON links (chunk);",
];

/// Errors of this backend.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server failed or refused a statement.
    #[error("postgres {location}: {source}")]
    Postgres {
        /// The server and database (no password).
        location: String,
        /// The driver's error.
        source: postgres::Error,
    },
    /// The database holds a newer schema than this build knows.
    #[error("postgres {location}: schema version {found}; this cairn knows up to {known}")]
    NewerSchema {
        /// The server and database.
        location: String,
        /// Version in the database.
        found: i64,
        /// Newest version this build knows.
        known: i64,
    },
}

impl From<Error> for StoreError {
    fn from(e: Error) -> StoreError {
        StoreError::Backend(Box::new(e))
    }
}

/// `postgres://user:secret@host/db` → `postgres://user@host/db`: what
/// messages and `config show` print.
pub fn redact(uri: &str) -> String {
    match (uri.find("://"), uri.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &uri[s + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            format!("{}{}{}", &uri[..s + 3], user, &uri[at..])
        }
        _ => uri.to_string(),
    }
}

fn pg(location: &str) -> impl Fn(postgres::Error) -> StoreError + '_ {
    move |source| {
        Error::Postgres {
            location: location.to_string(),
            source,
        }
        .into()
    }
}

fn connect(uri: &str, location: &str) -> StoreResult<Client> {
    Client::connect(uri, NoTls).map_err(pg(location))
}

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
    location: String,
    project: String,
    /// Vector lengths whose HNSW index this writer knows exists.
    indexed_dims: HashSet<usize>,
    /// Smallest HNSW candidate list of a vector query.
    ef_search: usize,
}

impl PgStore {
    /// Connects, migrates the schema if needed, and scopes every statement to
    /// `project` (any stable name: the engine passes the project root).
    pub fn connect(uri: &str, project: &str) -> StoreResult<PgStore> {
        let location = redact(uri);
        let mut client = connect(uri, &location)?;
        migrate(&mut client, &location)?;
        Ok(PgStore {
            client: std::sync::Mutex::new(client),
            uri: uri.to_string(),
            location,
            project: project.to_string(),
            indexed_dims: HashSet::new(),
            ef_search: HNSW_EF_SEARCH,
        })
    }

    /// Sets the smallest HNSW candidate list of a vector query (pgvector's
    /// `hnsw.ef_search`, 1–1000): higher finds more of the true nearest
    /// neighbours, slower. Readers opened afterwards use it.
    pub fn with_ef_search(mut self, ef: usize) -> PgStore {
        self.ef_search = ef.clamp(1, 1000);
        self
    }
}

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

    fn conn(&self) -> std::sync::MutexGuard<'_, Client> {
        self.client.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn migrate(client: &mut Client, location: &str) -> StoreResult<()> {
    let e = pg(location);
    let mut tx = client.transaction().map_err(&e)?;
    // One migrator at a time across machines.
    tx.execute("SELECT pg_advisory_xact_lock(7315001)", &[])
        .map_err(&e)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS cairn_schema (version BIGINT NOT NULL)")
        .map_err(&e)?;
    let found: i64 = tx
        .query_opt("SELECT max(version) FROM cairn_schema", &[])
        .map_err(&e)?
        .and_then(|r| r.get::<_, Option<i64>>(0))
        .unwrap_or(0);
    let known = MIGRATIONS.len() as i64;
    if found > known {
        return Err(Error::NewerSchema {
            location: location.to_string(),
            found,
            known,
        }
        .into());
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(m).map_err(&e)?;
        tx.execute(
            "INSERT INTO cairn_schema (version) VALUES ($1)",
            &[&(i as i64 + 1)],
        )
        .map_err(&e)?;
    }
    tx.commit().map_err(&e)
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
            indexed_dims: RefCell::new(HashSet::new()),
        }))
    }

    fn manifest(&self) -> StoreResult<HashMap<String, DocRecord>> {
        let mut c = self.conn();
        let rows = c
            .query(
                "SELECT path, hash, mtime_ns, size FROM documents WHERE project = $1",
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

    fn unembedded(&self, model: &str, limit: usize) -> StoreResult<Vec<(String, Chunk)>> {
        let mut c = self.conn();
        let rows = c
            .query(
                "SELECT DISTINCT ON (c.embed_hash) c.embed_hash, d.path, c.heading_path, c.level,
                        c.start_line, c.end_line, c.text
                 FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE c.project = $1 AND NOT EXISTS
                       (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)
                 ORDER BY c.embed_hash LIMIT $3",
                &[&self.project, &model, &(limit as i64)],
            )
            .map_err(pg(&self.location))?;
        Ok(rows
            .iter()
            .map(|r| {
                let path: String = r.get(1);
                let heading: String = r.get(2);
                (
                    r.get(0),
                    Chunk::new(
                        &path,
                        serde_json::from_str(&heading).unwrap_or_default(),
                        r.get::<_, i32>(3) as u8,
                        r.get::<_, i32>(4) as u32,
                        r.get::<_, i32>(5) as u32,
                        r.get(6),
                    ),
                )
            })
            .collect())
    }

    fn unembedded_count(&self, model: &str) -> StoreResult<u64> {
        let mut c = self.conn();
        let row = c
            .query_one(
                "SELECT count(DISTINCT c.embed_hash) FROM chunks c
                 WHERE c.project = $1 AND NOT EXISTS
                       (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)",
                &[&self.project, &model],
            )
            .map_err(pg(&self.location))?;
        Ok(row.get::<_, i64>(0) as u64)
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
        let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let mut tx = client.transaction().map_err(&e)?;
        // Writers of one project queue here, so two machines indexing at
        // once never interleave a document's delete and insert.
        tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&project])
            .map_err(&e)?;
        let now = now_secs();
        for change in &batch.changes {
            match change {
                Change::Delete(path) => {
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
                Change::Upsert(doc) => upsert(&mut tx, &project, doc, now).map_err(&e)?,
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

    fn index_vectors(&mut self, dim: usize) -> StoreResult<()> {
        if self.indexed_dims.contains(&dim) || dim == 0 || dim > HNSW_MAX_DIM {
            return Ok(());
        }
        let e = pg(&self.location);
        let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
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

/// The smallest HNSW candidate list of a query unless set
/// ([`PgStore::with_ef_search`]); pgvector's own default is 40.
const HNSW_EF_SEARCH: usize = 100;

/// Most nearest vectors one HNSW query fetches before a project's own exact
/// scan is the cheaper way.
const MAX_FETCH: usize = 40_000;

/// Largest vector pgvector's HNSW indexes.
const HNSW_MAX_DIM: usize = 2000;

/// Name of the partial HNSW index over the `dim`-long vectors.
fn hnsw_index(dim: usize) -> String {
    format!("embeddings_hnsw_{dim}")
}

fn upsert(
    tx: &mut Transaction<'_>,
    project: &str,
    doc: &DocWrite,
    now: i64,
) -> Result<(), postgres::Error> {
    tx.execute(
        "DELETE FROM documents WHERE project = $1 AND path = $2",
        &[&project, &doc.path],
    )?;
    let tags = serde_json::to_string(&doc.tags).unwrap_or_else(|_| "[]".into());
    let meta = if doc.meta.is_empty() {
        "{}"
    } else {
        doc.meta.as_str()
    };
    let doc_id: i64 = tx
        .query_one(
            "INSERT INTO documents (project, path, hash, mtime_ns, size, title, tags, domain, meta, indexed_at, source)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
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
            ],
        )?
        .get(0);
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
    let mut rowids = vec![0i64; n];
    for r in tx.query(
        "INSERT INTO chunks (project, doc_id, chunk_id, seq, heading_path, breadcrumb, level,
                             start_line, end_line, hash, embed_hash, text)
         SELECT $1, $2, * FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::int[],
                                      $8::int[], $9::int[], $10::text[], $11::text[], $12::text[])
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
        ],
    )? {
        if let Some(slot) = rowids.get_mut(r.get::<_, i32>(1) as usize) {
            *slot = r.get(0);
        }
    }
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
        l_rel.push(l.rel.as_str());
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

/// A read connection of one project.
pub struct PgReader {
    client: Client,
    location: String,
    project: String,
    ef_search: usize,
    /// Vector lengths whose HNSW index this reader has seen.
    indexed_dims: RefCell<HashSet<usize>>,
}

impl IndexReader for PgReader {
    fn snapshot(&mut self) -> StoreResult<Box<dyn IndexSnapshot + '_>> {
        let tx = self
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(pg(&self.location))?;
        Ok(Box::new(PgSnapshot {
            tx: RefCell::new(tx),
            location: &self.location,
            project: &self.project,
            ef_search: self.ef_search,
            indexed_dims: &self.indexed_dims,
        }))
    }
}

/// One read-only REPEATABLE READ transaction.
pub struct PgSnapshot<'a> {
    tx: RefCell<Transaction<'a>>,
    location: &'a str,
    project: &'a str,
    ef_search: usize,
    indexed_dims: &'a RefCell<HashSet<usize>>,
}

/// The chunk `c` lies under the path prefix in parameter `$p` ("" for all).
/// Written as an `EXISTS` on the chunk's own document, not a join with a
/// filter: the planner cannot estimate a prefix test and, joining first,
/// walked every document of the database (94 ms instead of 1 for 100
/// candidates).
macro_rules! under_prefix {
    ($p:literal) => {
        concat!(
            "($", $p, " = '' OR EXISTS (SELECT 1 FROM documents d WHERE d.id = c.doc_id AND starts_with(d.path, $", $p, ")))"
        )
    };
}

const CHUNK_COLUMNS: &str = "c.id, d.path, c.heading_path, c.level, c.start_line, c.end_line, c.text, d.domain, c.chunk_id, c.hash";

fn chunk_row(r: &postgres::Row) -> ChunkRow {
    let heading: String = r.get(2);
    ChunkRow {
        rowid: r.get(0),
        chunk: Chunk {
            id: r.get(8),
            path: r.get(1),
            heading_path: serde_json::from_str(&heading).unwrap_or_default(),
            level: r.get::<_, i32>(3) as u8,
            start_line: r.get::<_, i32>(4) as u32,
            end_line: r.get::<_, i32>(5) as u32,
            text: r.get(6),
            hash: r.get(9),
        },
        domain: r.get(7),
    }
}

/// The quoted terms of an FTS5 `"a" OR "b"` expression (what the engine
/// passes), joined for `websearch_to_tsquery` (`a or b`); any other text is
/// passed as it is.
fn websearch(expr: &str) -> String {
    let terms: Vec<&str> = expr
        .split('"')
        .enumerate()
        .filter(|(i, t)| i % 2 == 1 && !t.trim().is_empty())
        .map(|(_, t)| t)
        .collect();
    if terms.is_empty() {
        expr.to_string()
    } else {
        terms.join(" or ")
    }
}

impl PgSnapshot<'_> {
    fn query(
        &self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> StoreResult<Vec<postgres::Row>> {
        self.tx
            .borrow_mut()
            .query(sql, params)
            .map_err(pg(self.location))
    }
}

impl PgSnapshot<'_> {
    /// How many of this project's chunks have a `model` vector.
    fn vector_count(&self, model: &str) -> StoreResult<u64> {
        Ok(self.query(
            "SELECT count(*) FROM chunks c WHERE c.project = $1 AND EXISTS
                 (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)",
            &[&self.project, &model],
        )?[0]
            .get::<_, i64>(0) as u64)
    }
}

impl IndexSnapshot for PgSnapshot<'_> {
    fn generation(&self) -> StoreResult<i64> {
        Ok(self
            .meta("generation")?
            .and_then(|g| g.parse().ok())
            .unwrap_or(0))
    }

    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        Ok(self
            .query(
                "SELECT value FROM cairn_meta WHERE project = $1 AND key = $2",
                &[&self.project, &key],
            )?
            .first()
            .map(|r| r.get(0)))
    }

    fn bm25(
        &self,
        expr: &str,
        limit: usize,
        weights: (f64, f64),
        path_prefix: Option<&str>,
    ) -> StoreResult<Vec<(i64, f64)>> {
        let q = websearch(expr);
        // ts_rank_cd weights are {D, C, B, A}: D is the `simple` copy.
        let w: Vec<f32> = vec![
            0.2,
            0.2,
            weights.1.clamp(0.0, 1.0) as f32,
            weights.0.clamp(0.0, 1.0) as f32,
        ];
        let prefix = path_prefix.unwrap_or("").to_string();
        let rows = self.query(
            concat!(
                "SELECT c.id, ts_rank_cd($1::real[], c.tsv, q, 1)::float8 AS score
                 FROM chunks c,
                      (SELECT websearch_to_tsquery('english', $2) || websearch_to_tsquery('simple', $2) AS q) qq
                 WHERE c.project = $3 AND c.tsv @@ q AND ",
                under_prefix!(4),
                " ORDER BY score DESC, c.id LIMIT $5"
            ),
            &[&w, &q, &self.project, &prefix, &(limit as i64)],
        )?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    fn chunks(&self, rowids: &[i64]) -> StoreResult<Vec<ChunkRow>> {
        let ids = rowids.to_vec();
        let rows = self.query(
            &format!(
                "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE c.project = $1 AND c.id = ANY($2)"
            ),
            &[&self.project, &ids],
        )?;
        let mut by_id: HashMap<i64, ChunkRow> =
            rows.iter().map(chunk_row).map(|r| (r.rowid, r)).collect();
        Ok(rowids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    fn vectors(&self, model: &str) -> StoreResult<VectorSet> {
        let rows = self.query(
            "SELECT c.id, d.path, e.vector, e.dim FROM chunks c
             JOIN documents d ON d.id = c.doc_id
             JOIN embeddings e ON e.model = $2 AND e.hash = c.embed_hash
             WHERE c.project = $1 ORDER BY c.id",
            &[&self.project, &model],
        )?;
        let mut set = VectorSet::default();
        for r in &rows {
            let v: pgvector::Vector = r.get(2);
            set.dim = r.get::<_, i32>(3) as usize;
            set.rowids.push(r.get(0));
            set.paths.push(r.get(1));
            set.data.extend_from_slice(v.as_slice());
        }
        Ok(set)
    }

    fn vector_top_k(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
        path_prefix: Option<&str>,
    ) -> StoreResult<Option<Vec<(i64, f64)>>> {
        let dim = query.len();
        // Once seen, an index stays: ask the catalogue only until then, not
        // on every search.
        if !self.indexed_dims.borrow().contains(&dim) {
            let exists = !self
                .query(
                    "SELECT 1 FROM pg_indexes WHERE tablename = 'embeddings' AND indexname = $1",
                    &[&hnsw_index(dim)],
                )?
                .is_empty();
            if !exists {
                return Ok(None);
            }
            self.indexed_dims.borrow_mut().insert(dim);
        }
        if k == 0 {
            return Ok(Some(Vec::new()));
        }
        let prefix = path_prefix.unwrap_or("").to_string();
        let q = pgvector::Vector::from(query.to_vec());
        // The index covers every project's vectors. The inner query is the
        // form pgvector always answers on the index (one table, ORDER BY
        // distance, LIMIT); this project's chunks are joined after it. When
        // other projects (or the path filter) take too many of the nearest,
        // ask again for more; past `MAX_FETCH` the project is a small part of
        // the table and its own exact scan is cheaper: `None`.
        let mut fetch = (k * 2).max(self.ef_search);
        loop {
            // The iterative scan lets one scan return more rows than
            // ef_search (pgvector caps that at 1000).
            let ef = fetch.min(1000);
            self.tx
                .borrow_mut()
                .batch_execute(&format!(
                    "SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = relaxed_order;
                     SET LOCAL enable_seqscan = off"
                ))
                .map_err(pg(self.location))?;
            // `dim` is a number, so formatting it in is safe; the cast and
            // the `dim` condition must match the index's expression.
            let near = self.query(
                &format!(
                    "SELECT e.hash, e.vector::vector({dim}) <=> $1::vector({dim}) AS dist
                     FROM embeddings e WHERE e.dim = {dim} AND e.model = $2
                     ORDER BY dist LIMIT $3"
                ),
                &[&q, &model, &(fetch as i64)],
            )?;
            // Off only for that statement: with a larger LIMIT or fresh
            // statistics the planner may prefer an exact scan of every
            // vector (seconds at a million), which the index is there to avoid.
            self.tx
                .borrow_mut()
                .batch_execute("SET LOCAL enable_seqscan = on")
                .map_err(pg(self.location))?;
            let dist: HashMap<String, f64> = near.iter().map(|r| (r.get(0), r.get(1))).collect();
            let hashes: Vec<&String> = dist.keys().collect();
            // Then this project's chunks with those vectors: an index probe
            // per hash on (project, embed_hash).
            let rows = self.query(
                concat!(
                    "SELECT c.id, c.embed_hash FROM chunks c
                     WHERE c.project = $1 AND c.embed_hash = ANY($2) AND ",
                    under_prefix!(3)
                ),
                &[&self.project, &hashes, &prefix],
            )?;
            let mut hits: Vec<(i64, f64)> = rows
                .iter()
                .filter_map(|r| {
                    let h: String = r.get(1);
                    Some((r.get(0), 1.0 - dist.get(&h)?))
                })
                .collect();
            hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            // Enough; or the scan ran dry; or every vector the project has
            // (when no path filter hides some of them from the count).
            let done = hits.len() >= k
                || near.len() < fetch
                || (path_prefix.is_none_or(str::is_empty)
                    && hits.len() as u64 >= self.vector_count(model)?);
            if done {
                hits.truncate(k);
                return Ok(Some(hits));
            }
            if fetch >= MAX_FETCH {
                break;
            }
            fetch = (fetch * 8).min(MAX_FETCH);
        }
        Ok(None)
    }

    fn stats(&self, model: Option<&str>) -> StoreResult<Stats> {
        let r = &self.query(
            "SELECT (SELECT count(*) FROM documents WHERE project = $1),
                    (SELECT count(*) FROM chunks WHERE project = $1),
                    (SELECT count(*) FROM chunks c WHERE c.project = $1 AND EXISTS
                        (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)),
                    (SELECT count(*) FROM embeddings)",
            &[&self.project, &model.unwrap_or("")],
        )?[0];
        Ok(Stats {
            files: r.get::<_, i64>(0) as u64,
            chunks: r.get::<_, i64>(1) as u64,
            embedded_chunks: if model.is_some() {
                r.get::<_, i64>(2) as u64
            } else {
                0
            },
            cached_vectors: r.get::<_, i64>(3) as u64,
            last_indexed: self.meta("last_indexed")?.and_then(|v| v.parse().ok()),
        })
    }

    fn domains(&self) -> StoreResult<Vec<String>> {
        Ok(self
            .query(
                "SELECT DISTINCT domain FROM documents WHERE project = $1 AND domain <> '' ORDER BY domain",
                &[&self.project],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn chunk_by_id(&self, chunk_id: &str) -> StoreResult<Option<ChunkRow>> {
        Ok(self
            .query(
                &format!(
                    "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc_id
                     WHERE c.project = $1 AND c.chunk_id = $2 LIMIT 1"
                ),
                &[&self.project, &chunk_id],
            )?
            .first()
            .map(chunk_row))
    }

    fn document(&self, path: &str) -> StoreResult<Option<DocRecord>> {
        Ok(self
            .query(
                "SELECT path, hash, mtime_ns, size FROM documents WHERE project = $1 AND path = $2",
                &[&self.project, &path],
            )?
            .first()
            .map(|r| DocRecord {
                path: r.get(0),
                hash: r.get(1),
                mtime_ns: r.get(2),
                size: r.get::<_, i64>(3) as u64,
            }))
    }

    fn metas_under(&self, prefix: &str) -> StoreResult<Vec<(String, String)>> {
        Ok(self
            .query(
                "SELECT path, meta FROM documents WHERE project = $1 AND left(path, length($2)) = $2 ORDER BY path",
                &[&self.project, &prefix],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    fn for_each_document(&self, f: DocumentSink<'_>) -> StoreResult<()> {
        let docs = self.query(
            "SELECT id, path, hash, mtime_ns, size, title, tags, domain, meta, source FROM documents
             WHERE project = $1 ORDER BY path",
            &[&self.project],
        )?;
        for d in &docs {
            let id: i64 = d.get(0);
            let path: String = d.get(1);
            let chunks = self
                .query(
                    "SELECT heading_path, level, start_line, end_line, text FROM chunks
                     WHERE doc_id = $1 ORDER BY seq",
                    &[&id],
                )?
                .iter()
                .map(|c| {
                    let heading: String = c.get(0);
                    Chunk::new(
                        &path,
                        serde_json::from_str(&heading).unwrap_or_default(),
                        c.get::<_, i32>(1) as u8,
                        c.get::<_, i32>(2) as u32,
                        c.get::<_, i32>(3) as u32,
                        c.get(4),
                    )
                })
                .collect();
            let links = self
                .query(
                    "SELECT seq, src_name, dst_name, rel, weight FROM links WHERE doc_id = $1 ORDER BY ctid",
                    &[&id],
                )?
                .iter()
                .map(|l| Link {
                    chunk: l.get::<_, Option<i32>>(0).map(|i| i as usize),
                    from: l.get(1),
                    to: l.get(2),
                    rel: l.get(3),
                    weight: l.get(4),
                })
                .collect();
            let tags: String = d.get(6);
            let doc = DocWrite {
                path: path.clone(),
                hash: d.get(2),
                mtime_ns: d.get(3),
                size: d.get::<_, i64>(4) as u64,
                title: d.get(5),
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                domain: d.get(7),
                meta: d.get(8),
                chunks,
                links,
                source: d.get(9),
            };
            f(doc).map_err(|m| StoreError::Backend(m.into()))?;
        }
        Ok(())
    }

    fn for_each_vector(&self, model: &str, f: VectorSink<'_>) -> StoreResult<()> {
        let rows = self.query(
            "SELECT e.hash, e.vector FROM embeddings e WHERE e.model = $2 AND EXISTS
                 (SELECT 1 FROM chunks c WHERE c.project = $1 AND c.embed_hash = e.hash)
             ORDER BY e.hash",
            &[&self.project, &model],
        )?;
        for r in &rows {
            let v: pgvector::Vector = r.get(1);
            let hash: String = r.get(0);
            f(&hash, v.as_slice()).map_err(|m| StoreError::Backend(m.into()))?;
        }
        Ok(())
    }

    fn links(&self) -> StoreResult<Vec<LinkRow>> {
        Ok(self
            .query(
                "SELECT l.chunk, l.src, l.src_name, l.dst, l.dst_name, l.rel, l.weight, d.path
                 FROM links l JOIN documents d ON d.id = l.doc_id
                 WHERE l.project = $1 ORDER BY d.path, l.ctid",
                &[&self.project],
            )?
            .iter()
            .map(|r| {
                let src: Option<String> = r.get(1);
                let src_name: Option<String> = r.get(2);
                LinkRow {
                    chunk: r.get(0),
                    src: src.map(|k| (k, src_name.unwrap_or_default())),
                    dst: r.get(3),
                    dst_name: r.get(4),
                    rel: r.get(5),
                    weight: r.get(6),
                    path: r.get(7),
                }
            })
            .collect())
    }

    fn meta_of(&self, path: &str) -> StoreResult<Option<String>> {
        Ok(self
            .query(
                "SELECT meta FROM documents WHERE project = $1 AND path = $2",
                &[&self.project, &path],
            )?
            .first()
            .map(|r| r.get(0)))
    }

    fn memory_stats(&self, id: &str) -> StoreResult<(u64, i64)> {
        Ok(self
            .query(
                "SELECT access_count, last_access FROM memory_stats WHERE project = $1 AND id = $2",
                &[&self.project, &id],
            )?
            .first()
            .map(|r| (r.get::<_, i64>(0) as u64, r.get(1)))
            .unwrap_or_default())
    }

    fn documents(&self) -> StoreResult<Vec<DocRecord>> {
        Ok(self
            .query(
                "SELECT path, hash, mtime_ns, size FROM documents WHERE project = $1 ORDER BY path",
                &[&self.project],
            )?
            .iter()
            .map(|r| DocRecord {
                path: r.get(0),
                hash: r.get(1),
                mtime_ns: r.get(2),
                size: r.get::<_, i64>(3) as u64,
            })
            .collect())
    }
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

    #[test]
    fn fts5_or_expressions_become_websearch_queries() {
        assert_eq!(websearch("\"cache\" OR \"redis\""), "cache or redis");
        assert_eq!(websearch("plain words"), "plain words");
    }
}
