//! The storage traits of `cairn-core`, implemented by delegating to the
//! inherent methods of [`Store`], [`Reader`] and [`Snapshot`] (inherent
//! methods win name resolution, so `Store::manifest(self)` below is the
//! SQLite one).

use std::collections::HashMap;

use cairn_core::{Chunk, ChunkRow, DocRecord, LinkRow, Stats, StoreResult, VectorSet, WriteBatch};

use crate::store::{Reader, Snapshot, Store};

impl cairn_core::IndexWriter for Store {
    fn location(&self) -> String {
        self.path().display().to_string()
    }
    fn reader(&self) -> StoreResult<Box<dyn cairn_core::IndexReader>> {
        Ok(Box::new(Store::reader(self)?))
    }
    fn manifest(&self) -> StoreResult<HashMap<String, DocRecord>> {
        Ok(Store::manifest(self)?)
    }
    fn cached_hashes(
        &self,
        model: &str,
        hashes: &[&str],
    ) -> StoreResult<std::collections::HashSet<String>> {
        Ok(Store::cached_hashes(self, model, hashes)?)
    }
    fn unembedded(&self, model: &str, limit: usize) -> StoreResult<Vec<(String, Chunk)>> {
        Ok(Store::unembedded(self, model, limit)?)
    }
    fn unembedded_count(&self, model: &str) -> StoreResult<u64> {
        Ok(Store::unembedded_count(self, model)?)
    }
    fn integrity_check(&self) -> StoreResult<Vec<String>> {
        Ok(Store::integrity_check(self)?)
    }
    fn fts_check(&self) -> StoreResult<Option<String>> {
        Ok(Store::fts_check(self)?)
    }
    fn schema_version(&self) -> StoreResult<(i64, i64)> {
        Ok(Store::schema_version(self)?)
    }
    fn vacuum(&self) -> StoreResult<()> {
        Ok(Store::vacuum(self)?)
    }
    fn record_access(&mut self, ids: &[&str], now: i64) -> StoreResult<()> {
        Ok(Store::record_access(self, ids, now)?)
    }
    fn write(&mut self, batch: &WriteBatch) -> StoreResult<()> {
        Ok(Store::write(self, batch)?)
    }
    fn set_meta(&self, key: &str, value: &str) -> StoreResult<()> {
        Ok(Store::set_meta(self, key, value)?)
    }
    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        Ok(Store::meta(self, key)?)
    }
    fn optimize(&self) -> StoreResult<()> {
        Ok(Store::optimize(self)?)
    }
}

impl cairn_core::IndexReader for Reader {
    fn snapshot(&mut self) -> StoreResult<Box<dyn cairn_core::IndexSnapshot + '_>> {
        Ok(Box::new(Reader::snapshot(self)?))
    }
}

impl cairn_core::IndexSnapshot for Snapshot<'_> {
    fn generation(&self) -> StoreResult<i64> {
        Ok(Snapshot::generation(self)?)
    }
    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        Ok(Snapshot::meta(self, key)?)
    }
    fn bm25(
        &self,
        expr: &str,
        limit: usize,
        weights: (f64, f64),
        path_prefix: Option<&str>,
    ) -> StoreResult<Vec<(i64, f64)>> {
        Ok(Snapshot::bm25(self, expr, limit, weights, path_prefix)?)
    }
    fn chunks(&self, rowids: &[i64]) -> StoreResult<Vec<ChunkRow>> {
        Ok(Snapshot::chunks(self, rowids)?)
    }
    fn vectors(&self, model: &str) -> StoreResult<VectorSet> {
        Ok(Snapshot::vectors(self, model)?)
    }
    fn stats(&self, model: Option<&str>) -> StoreResult<Stats> {
        Ok(Snapshot::stats(self, model)?)
    }
    fn domains(&self) -> StoreResult<Vec<String>> {
        Ok(Snapshot::domains(self)?)
    }
    fn chunk_by_id(&self, chunk_id: &str) -> StoreResult<Option<ChunkRow>> {
        Ok(Snapshot::chunk_by_id(self, chunk_id)?)
    }
    fn document(&self, path: &str) -> StoreResult<Option<DocRecord>> {
        Ok(Snapshot::document(self, path)?)
    }
    fn metas_under(&self, prefix: &str) -> StoreResult<Vec<(String, String)>> {
        Ok(Snapshot::metas_under(self, prefix)?)
    }
    fn for_each_document(&self, f: cairn_core::DocumentSink<'_>) -> StoreResult<()> {
        Ok(Snapshot::for_each_document(self, f)?)
    }
    fn for_each_vector(&self, model: &str, f: cairn_core::VectorSink<'_>) -> StoreResult<()> {
        Ok(Snapshot::for_each_vector(self, model, f)?)
    }
    fn links(&self) -> StoreResult<Vec<LinkRow>> {
        Ok(Snapshot::links(self)?)
    }
    fn meta_of(&self, path: &str) -> StoreResult<Option<String>> {
        Ok(Snapshot::meta_of(self, path)?)
    }
    fn memory_stats(&self, id: &str) -> StoreResult<(u64, i64)> {
        Ok(Snapshot::memory_stats(self, id)?)
    }
    fn documents(&self) -> StoreResult<Vec<DocRecord>> {
        Ok(Snapshot::documents(self)?)
    }
}
