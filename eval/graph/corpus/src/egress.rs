//! Bundles everything held for one owner into a single file.

/// Writes every table's rows for `owner` into a zip and returns its key.
pub fn spool_archive(owner: &str, store: &Store) -> Result<String, Error> {
    let mut zip = ZipWriter::new(Vec::new());
    for table in store.tables() {
        write_rows(&mut zip, table, owner)?;
    }
    let key = upload_blob(zip.finish()?)?;
    notify_owner(owner, &key)?;
    Ok(key)
}

fn write_rows(zip: &mut ZipWriter, table: &Table, owner: &str) -> Result<(), Error> {
    for row in table.rows_of(owner) {
        zip.write_row(row)?;
    }
    Ok(())
}
