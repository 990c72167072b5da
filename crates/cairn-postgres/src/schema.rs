//! The schema: its migrations, in order, and the migrator that applies them
//! (versions in `cairn_schema`).

use cairn_core::StoreResult;
use postgres::Client;

use crate::error::{Error, pg};

/// Schema migrations, in order; applied under an advisory lock.
pub(crate) const MIGRATIONS: &[&str] = &[
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
    // 4: the pipeline version that chunked each document (see the SQLite
    // schema); older rows take the version the project was stamped with.
    "ALTER TABLE documents ADD COLUMN pipeline TEXT NOT NULL DEFAULT '';
     UPDATE documents d SET pipeline = COALESCE((SELECT m.value FROM cairn_meta m
         WHERE m.project = d.project AND m.key = 'pipeline_version'), '');",
    // 5: BM25 as FTS5 ranks it (lexicon.rs): postings, document frequencies
    // and totals per project, kept by the writer. A project's rows are
    // built from its chunks when it is first opened (meta `lexicon`).
    "ALTER TABLE chunks ADD COLUMN lex_len INTEGER NOT NULL DEFAULT 0;
     CREATE TABLE lex_postings (
         project TEXT NOT NULL,
         term    TEXT NOT NULL,
         chunk   BIGINT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
         head    INTEGER NOT NULL,
         body    INTEGER NOT NULL,
         len     INTEGER NOT NULL,
         PRIMARY KEY (project, term, chunk)
     );
     CREATE INDEX lex_postings_chunk ON lex_postings (chunk);
     CREATE TABLE lex_terms (
         project TEXT NOT NULL,
         term    TEXT NOT NULL,
         df      BIGINT NOT NULL,
         PRIMARY KEY (project, term)
     );
     CREATE TABLE lex_stats (
         project TEXT PRIMARY KEY,
         rows    BIGINT NOT NULL,
         tokens  BIGINT NOT NULL
     );",
    // 6: the names retriever looks definitions up by entity key.
    "CREATE INDEX IF NOT EXISTS links_defines ON links (project, dst) WHERE rel = 'defines';",
];

pub(crate) fn migrate(client: &mut Client, location: &str) -> StoreResult<()> {
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
