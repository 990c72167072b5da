//! The settings every connection to the index file gets (busy timeout,
//! foreign keys, memory map, page cache).

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::{Result, sql};

pub(crate) fn configure(conn: &Connection, path: &Path) -> Result<()> {
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
