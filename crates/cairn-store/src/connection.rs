//! The settings every connection to the index file gets (busy timeout,
//! foreign keys, memory map, page cache).

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, ErrorCode};

use crate::error::{Result, sql};

/// How long a statement waits for another connection's lock: longer than
/// the longest write another process holds (a batch of 256 files, an FTS
/// optimize after a big pass), so `remember` during `cairn index` waits
/// instead of failing with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The SQL function through which every text reaches the FTS index (schema
/// migration 6: the FTS table's content view, the batch insert and the
/// delete triggers): [`cairn_core::fts_text`], CJK runs cut into bigrams,
/// any other text returned as it is.
pub(crate) const FTS_TEXT_FN: &str = "cairn_fts_text";

pub(crate) fn configure(conn: &Connection, path: &Path) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql(path))?;
    conn.create_scalar_function(
        FTS_TEXT_FN,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) => Value::Text(cairn_core::fts_text(text).into_owned()),
                    // Not UTF-8 (never written by cairn): as it is.
                    Err(_) => Value::Blob(bytes.to_vec()),
                },
                other => Value::from(other),
            })
        },
    )
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

/// Puts the file in WAL mode. While a new file is still in rollback mode,
/// two openers switching it at once both hold a shared lock and both want
/// the exclusive one; SQLite answers one of them SQLITE_BUSY at once rather
/// than call the busy handler (waiting could deadlock). That opener waits
/// and tries again, for as long as the busy timeout, instead of failing a
/// `cairn remember` that merely started beside another.
pub(crate) fn enable_wal(conn: &Connection, path: &Path) -> Result<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => return Ok(()),
            Err(e) if busy(&e) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(sql(path)(e)),
        }
    }
}

fn busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}
