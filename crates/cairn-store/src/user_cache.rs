//! The per-user embedding cache: one SQLite file of vectors keyed by
//! (model, embed-text hash), shared by every index of this user, so a new
//! worktree, a second clone or a re-created index takes the vectors of the
//! texts it has in common with an index already built instead of running
//! the model again. Content-addressed: a hash names its text, so a vector
//! found is the vector of that text whichever project wrote it.
//!
//! Bounded: past `max_rows` vectors, the least recently used go (each
//! lookup that finds a vector marks it used). Every write is one
//! transaction; the file is in WAL mode, so concurrent indexers of other
//! projects read while one writes.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use crate::connection::{configure, enable_wal};
use crate::error::{Error, Result, sql};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS vectors (
    model  TEXT NOT NULL,
    hash   TEXT NOT NULL,
    dim    INTEGER NOT NULL,
    vector BLOB NOT NULL,
    used   INTEGER NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
";

/// The per-user embedding cache file.
pub struct UserCache {
    conn: Connection,
    path: PathBuf,
    max_rows: u64,
}

impl UserCache {
    /// Opens (creating it and its folder when missing) the cache at `path`,
    /// keeping at most `max_rows` vectors (at least 1).
    pub fn open(path: &Path, max_rows: u64) -> Result<UserCache> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(sql(path))?;
        configure(&conn, path)?;
        enable_wal(&conn, path)?;
        conn.execute_batch(SCHEMA).map_err(sql(path))?;
        Ok(UserCache {
            conn,
            path: path.to_path_buf(),
            max_rows: max_rows.max(1),
        })
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The vectors of `model` the cache holds for `hashes` (each found one
    /// is marked used now): `(hash, vector)`, in the order asked.
    pub fn get(&mut self, model: &str, hashes: &[&str]) -> Result<Vec<(String, Vec<f32>)>> {
        let p = &self.path;
        let now = now();
        let tx = self.conn.transaction().map_err(sql(p))?;
        let mut found = Vec::new();
        {
            let mut read = tx
                .prepare_cached("SELECT dim, vector FROM vectors WHERE model = ?1 AND hash = ?2")
                .map_err(sql(p))?;
            let mut touch = tx
                .prepare_cached("UPDATE vectors SET used = ?3 WHERE model = ?1 AND hash = ?2")
                .map_err(sql(p))?;
            for h in hashes {
                let row: Option<(i64, Vec<u8>)> = read
                    .query_row(params![model, h], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
                    .map_err(sql(p))?;
                let Some((dim, blob)) = row else { continue };
                let dim = dim.max(0) as usize;
                let mut v = Vec::with_capacity(dim);
                if crate::vector_blob::decode_into(&blob, dim, &mut v) {
                    touch.execute(params![model, h, now]).map_err(sql(p))?;
                    found.push(((*h).to_string(), v));
                }
            }
        }
        tx.commit().map_err(sql(p))?;
        Ok(found)
    }

    /// Keeps `vectors` of `model` (one transaction), then drops the least
    /// recently used past the bound.
    pub fn put(&mut self, model: &str, vectors: &[(String, Vec<f32>)]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        let p = &self.path;
        let now = now();
        let tx = self.conn.transaction().map_err(sql(p))?;
        {
            let mut put = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO vectors (model, hash, dim, vector, used)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sql(p))?;
            for (hash, v) in vectors {
                put.execute(params![
                    model,
                    hash,
                    v.len() as i64,
                    crate::vector_blob::encode(v),
                    now
                ])
                .map_err(sql(p))?;
            }
            let rows: i64 = tx
                .query_row("SELECT COUNT(*) FROM vectors", [], |r| r.get(0))
                .map_err(sql(p))?;
            let over = (rows as u64).saturating_sub(self.max_rows);
            if over > 0 {
                tx.execute(
                    "DELETE FROM vectors WHERE (model, hash) IN
                     (SELECT model, hash FROM vectors ORDER BY used LIMIT ?1)",
                    [over as i64],
                )
                .map_err(sql(p))?;
            }
        }
        tx.commit().map_err(sql(p))?;
        Ok(())
    }

    /// Vectors held.
    pub fn len(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM vectors", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(sql(&self.path))
    }

    /// Whether it holds any vector of `model` (one seek in its key).
    pub fn has_model(&self, model: &str) -> Result<bool> {
        self.conn
            .prepare_cached("SELECT 1 FROM vectors WHERE model = ?1 LIMIT 1")
            .and_then(|mut stmt| stmt.exists([model]))
            .map_err(sql(&self.path))
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_by_model_and_hash_and_the_oldest_go_past_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/embeddings.sqlite");
        let mut c = UserCache::open(&path, 3).unwrap();
        c.put(
            "m",
            &[("a".into(), vec![0.5, -0.25]), ("b".into(), vec![1.0, 0.0])],
        )
        .unwrap();
        let got = c.get("m", &["a", "x", "b"]).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], ("a".to_string(), vec![0.5, -0.25]));
        assert!(c.get("other", &["a"]).unwrap().is_empty(), "keyed by model");
        // Make "a" the most recently used, then overflow the bound by two.
        c.conn
            .execute("UPDATE vectors SET used = used - 100 WHERE hash = 'b'", [])
            .unwrap();
        c.put(
            "m",
            &[("c".into(), vec![0.0, 1.0]), ("d".into(), vec![0.0, 1.0])],
        )
        .unwrap();
        assert_eq!(c.len().unwrap(), 3);
        assert!(
            c.get("m", &["b"]).unwrap().is_empty(),
            "least recently used went"
        );
        drop(c);
        // Another process (here: another connection) sees the same vectors.
        let mut again = UserCache::open(&path, 3).unwrap();
        assert_eq!(again.get("m", &["a", "c", "d"]).unwrap().len(), 3);
    }
}
