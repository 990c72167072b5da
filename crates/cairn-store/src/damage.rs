//! A damaged index file: found cheaply by its 100-byte header, fully by
//! `PRAGMA quick_check` (both run by `cairn index` and `doctor`, not on every
//! open, where another opener may be writing a new file's first page), and set aside so that it can be rebuilt from the
//! files (the index is derived: memory files and documents are the truth).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result, sql};

/// SQLite's file header starts with these 16 bytes.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What is wrong with the file at `path` as its header tells, reading 100
/// bytes and the file's length: not SQLite's header, or fewer bytes than
/// the header's page count says (a truncated file). `None` for a missing or
/// empty file (SQLite creates it) and for a header that looks right.
pub fn header_damage(path: &Path) -> Option<String> {
    use std::io::Read;
    if path.is_dir() {
        return Some("it is a directory, not an index file".into());
    }
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    if len == 0 {
        return None;
    }
    let mut head = [0u8; 100];
    if f.read_exact(&mut head).is_err() {
        return Some(format!(
            "{len} bytes: shorter than SQLite's 100-byte header"
        ));
    }
    if &head[..16] != MAGIC {
        return Some("its header is not SQLite's".into());
    }
    let page_size = match u16::from_be_bytes([head[16], head[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    if !page_size.is_power_of_two() || !(512..=65_536).contains(&page_size) {
        return Some(format!("its header names a page size of {page_size}"));
    }
    // The page count at offset 28 is valid when the change counter (24)
    // equals the version-valid-for number (92); SQLite keeps them equal.
    let counter = &head[24..28];
    let valid_for = &head[92..96];
    let pages = u64::from(u32::from_be_bytes([head[28], head[29], head[30], head[31]]));
    if counter == valid_for && pages * page_size > len {
        return Some(format!(
            "truncated: its header counts {pages} pages of {page_size} bytes, the file holds {len} bytes"
        ));
    }
    None
}

/// Problems `PRAGMA quick_check` finds in the file (empty: none), read on a
/// connection of its own, and the tables a migrated schema lacks. A file
/// SQLite cannot open at all is one problem.
pub fn quick_check(path: &Path) -> Result<Vec<String>> {
    if let Some(d) = header_damage(path) {
        return Ok(vec![d]);
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql(path))?;
    let run = || -> rusqlite::Result<Vec<String>> {
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        let mut stmt = conn.prepare("PRAGMA quick_check")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        let mut found: Vec<String> = rows.collect::<rusqlite::Result<_>>()?;
        // A schema cairn migrated (user_version set in the same transaction
        // as its tables) that lacks one: SQLite finds no fault in that. A
        // new or empty file (version 0) has no tables yet and is no damage.
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > 0 {
            let missing = crate::schema::missing_tables(&conn)?;
            found.extend(crate::schema::lacking(&missing));
        }
        Ok(found)
    };
    match run() {
        Ok(found) => Ok(found.into_iter().filter(|r| r != "ok").collect()),
        Err(e) => match sql(path)(e) {
            Error::Damaged { detail, .. } => Ok(vec![detail]),
            other => Err(other),
        },
    }
}

/// Moves the index file at `path` aside as `<name>.damaged-<unix seconds>`,
/// with its `-wal` and `-shm` files beside it under the same suffix; the
/// derived caches beside it (`.vectors`, `.graph`) are removed. Returns the
/// new path of the index file.
pub fn set_aside(path: &Path) -> Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = path.file_name().map_or_else(
        || "index.sqlite".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let aside = path.with_file_name(format!("{name}.damaged-{secs}"));
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| Error::Io { path: p, source }
    };
    std::fs::rename(path, &aside).map_err(io(path))?;
    for ext in ["-wal", "-shm"] {
        let from = path.with_file_name(format!("{name}{ext}"));
        if from.exists() {
            let to = path.with_file_name(format!("{name}.damaged-{secs}{ext}"));
            std::fs::rename(&from, &to).map_err(io(&from))?;
        }
    }
    for ext in [".vectors", ".graph"] {
        let cache = path.with_file_name(format!("{name}{ext}"));
        if cache.exists() {
            std::fs::remove_file(&cache).map_err(io(&cache))?;
        }
    }
    Ok(aside)
}
