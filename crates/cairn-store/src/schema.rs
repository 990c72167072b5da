//! Schema and migrations, tracked with `PRAGMA user_version`.

use rusqlite::TransactionBehavior;

use crate::error::{Error, Result, sql};

/// Migrations in order; index `i` takes the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE documents (
    id         INTEGER PRIMARY KEY,
    path       TEXT NOT NULL UNIQUE,
    hash       TEXT NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    size       INTEGER NOT NULL,
    title      TEXT,
    tags       TEXT NOT NULL DEFAULT '[]',
    domain     TEXT NOT NULL DEFAULT '',
    indexed_at INTEGER NOT NULL
);
CREATE TABLE chunks (
    id            INTEGER PRIMARY KEY,
    chunk_id      TEXT NOT NULL UNIQUE,
    doc_id        INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    heading_path  TEXT NOT NULL,
    breadcrumb    TEXT NOT NULL,
    level         INTEGER NOT NULL,
    start_line    INTEGER NOT NULL,
    end_line      INTEGER NOT NULL,
    hash          TEXT NOT NULL,
    embed_hash    TEXT NOT NULL,
    text          TEXT NOT NULL
);
CREATE INDEX chunks_doc ON chunks(doc_id);
CREATE INDEX chunks_embed_hash ON chunks(embed_hash);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    breadcrumb, text,
    content = 'chunks', content_rowid = 'id',
    tokenize = 'porter unicode61'
);
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, breadcrumb, text) VALUES (new.id, new.breadcrumb, new.text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, breadcrumb, text) VALUES ('delete', old.id, old.breadcrumb, old.text);
END;
CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, breadcrumb, text) VALUES ('delete', old.id, old.breadcrumb, old.text);
    INSERT INTO chunks_fts(rowid, breadcrumb, text) VALUES (new.id, new.breadcrumb, new.text);
END;
-- The embedding cache: one vector per (model, text hash), shared by every
-- chunk with that text and kept when files move or are re-indexed.
CREATE TABLE embeddings (
    model  TEXT NOT NULL,
    hash   TEXT NOT NULL,
    dim    INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID;
"#,
    r#"
-- The frontmatter of each document as JSON (memories keep their metadata here).
ALTER TABLE documents ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';
-- How often and when each memory was recalled, by memory id. Derived usage
-- data: it survives re-indexing of the file but not a deleted index.
CREATE TABLE memory_stats (
    id           TEXT PRIMARY KEY,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_access  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"#,
    r#"
-- The knowledge graph's edges, derived from each document like its chunks:
-- from a chunk (or, for explicit relations, from an entity) to an entity.
-- Entities are keys (see cairn_core::entity_key) with a display name.
CREATE TABLE links (
    doc_id   INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    chunk    INTEGER REFERENCES chunks(id) ON DELETE CASCADE,
    src      TEXT,
    src_name TEXT,
    dst      TEXT NOT NULL,
    dst_name TEXT NOT NULL,
    rel      TEXT NOT NULL,
    weight   REAL NOT NULL
);
CREATE INDEX links_doc ON links(doc_id);
CREATE INDEX links_chunk ON links(chunk);
"#,
    r#"
-- The pipeline version that chunked each document, so a pass killed midway
-- resumes where it stopped instead of re-chunking everything (documents
-- written before this column take the version the index was stamped with).
ALTER TABLE documents ADD COLUMN pipeline TEXT NOT NULL DEFAULT '';
UPDATE documents SET pipeline = COALESCE((SELECT value FROM meta WHERE key = 'pipeline_version'), '');
"#,
    r#"
-- The writer puts a batch's chunks into the FTS index with one statement at
-- the end of the batch (writer.rs, PendingFts): a trigger per inserted row
-- made FTS5 write a segment per chunk.
DROP TRIGGER IF EXISTS chunks_ai;
"#,
    r#"
-- Chinese, Japanese and Korean text reaches FTS5 cut into bigrams
-- (cairn_core::fts_text, registered on every connection as cairn_fts_text;
-- text with no CJK character passes unchanged): the FTS table reads its
-- content through a view that applies it, the delete triggers hand FTS5 the
-- same text, and the index is rebuilt once so existing CJK rows are split.
DROP TRIGGER IF EXISTS chunks_ad;
DROP TRIGGER IF EXISTS chunks_au;
DROP TABLE IF EXISTS chunks_fts;
DROP VIEW IF EXISTS chunks_fts_content;
CREATE VIEW chunks_fts_content AS
    SELECT id, cairn_fts_text(breadcrumb) AS breadcrumb, cairn_fts_text(text) AS text FROM chunks;
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    breadcrumb, text,
    content = 'chunks_fts_content', content_rowid = 'id',
    tokenize = 'porter unicode61'
);
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, breadcrumb, text)
    VALUES ('delete', old.id, cairn_fts_text(old.breadcrumb), cairn_fts_text(old.text));
END;
CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, breadcrumb, text)
    VALUES ('delete', old.id, cairn_fts_text(old.breadcrumb), cairn_fts_text(old.text));
    INSERT INTO chunks_fts(rowid, breadcrumb, text)
    VALUES (new.id, cairn_fts_text(new.breadcrumb), cairn_fts_text(new.text));
END;
INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
"#,
    r#"
-- cairn_fts_text also writes the words of a camelCase name after it
-- (`SetFormatter` → `SetFormatter Set Formatter`, cairn_core::fts_text):
-- the FTS index is rebuilt once so every row holds the tokens the delete
-- triggers will hand FTS5 back.
INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
"#,
    r#"
-- The names retriever looks definitions up by their entity key
-- (cairn_search::names): without an index each name scanned every link.
CREATE INDEX IF NOT EXISTS links_defines ON links(dst) WHERE rel = 'defines';
"#,
];

/// The tables (and the FTS content view) every migrated index holds: one
/// the user dropped (`sqlite3 index.sqlite 'drop table chunks'`) made every
/// command fail with "no such table" and no way out; it is damage, found on
/// open and by `quick_check`, and `cairn index` rebuilds the file.
pub(crate) const REQUIRED: &[&str] = &[
    "meta",
    "documents",
    "chunks",
    "chunks_fts",
    "chunks_fts_content",
    "embeddings",
    "memory_stats",
    "links",
];

/// The [`REQUIRED`] tables the connection's schema lacks, in that order.
pub(crate) fn missing_tables(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<&'static str>> {
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")?;
    let present: std::collections::HashSet<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(REQUIRED
        .iter()
        .copied()
        .filter(|t| !present.contains(*t))
        .collect())
}

/// What [`missing_tables`] says, in words ("its schema lacks the table
/// chunks"); `None` when nothing is missing.
pub(crate) fn lacking(missing: &[&str]) -> Option<String> {
    match missing {
        [] => None,
        [one] => Some(format!("its schema lacks the table {one}")),
        many => Some(format!("its schema lacks the tables {}", many.join(", "))),
    }
}

/// Whether the index is at this build's schema, whole, with its identity
/// set: read without a write lock, so an open (`cairn update` while the
/// daemon's first index pass writes batch after batch) does not wait for
/// the writer only to find nothing to do. Anything else takes the locked
/// path of [`migrate`], which also tells a newer schema or a cut one.
fn current(conn: &rusqlite::Connection, path: &std::path::Path) -> Result<bool> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql(path))?;
    if version != MIGRATIONS.len() as i64 || !missing_tables(conn).map_err(sql(path))?.is_empty() {
        return Ok(false);
    }
    use rusqlite::OptionalExtension;
    let id: Option<i64> = conn
        .query_row("SELECT 1 FROM meta WHERE key = 'index_id'", [], |r| {
            r.get(0)
        })
        .optional()
        .map_err(sql(path))?;
    Ok(id.is_some())
}

/// Brings the index at `path` to the newest schema, one migration per
/// version, in one transaction; refuses a schema newer than this build's.
pub(crate) fn migrate(conn: &mut rusqlite::Connection, path: &std::path::Path) -> Result<()> {
    if current(conn, path)? {
        return Ok(());
    }
    {
        let path = path.to_path_buf();
        let tx = conn
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
        // A schema at the newest version that lacks a table was cut by hand:
        // damage, with `cairn index` as the way out.
        let missing = missing_tables(&tx).map_err(sql(&path))?;
        if let Some(detail) = lacking(&missing) {
            return Err(Error::Damaged { path, detail });
        }
        // Which index this is, beside its generation: files derived from the
        // index (the knowledge graph kept between processes) name both, so a
        // deleted and rebuilt index that reaches the same generation is not
        // taken for the old one. Set once, by whichever build opens it first.
        tx.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('index_id', lower(hex(randomblob(16))))",
            [],
        )
        .map_err(sql(&path))?;
        tx.commit().map_err(sql(&path))
    }
}
