//! The index pass's writes: the planned changes in one transaction per batch
//! of `[index] batch_files` files, each batch embedded just before it is
//! written (so a killed indexer loses at most that batch), then the pass's
//! stamp (`last_indexed`, FTS optimize).

use cairn_core::{Change, Chunk, Embedder, IndexWriter, WriteBatch};

use super::embed::embed_missing;
use super::{IndexReport, Pending};
use crate::engine::Engine;
use crate::error::Result;
use crate::progress::Progress;

impl Engine {
    /// Writes `first` (deletes and touches) with the first batch of
    /// `pending`, or alone when nothing is pending; embeds each batch with
    /// `embedder` (none: leave the vectors to a backfill).
    pub(super) fn write_batches(
        &self,
        store: &mut dyn IndexWriter,
        first: Vec<Change>,
        pending: &[Pending],
        embedder: Option<&dyn Embedder>,
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<()> {
        let total_chunks: usize = pending.iter().map(|p| p.doc.chunks.len()).sum();
        if embedder.is_some() && total_chunks > 0 {
            progress.stage("embedding", total_chunks as u64);
        }
        let mut first = Some(first);
        let batch_files = self.config.index.batch_files.max(1);
        let mut batches = pending.chunks(batch_files).peekable();
        if batches.peek().is_none() {
            let changes = first.take().unwrap_or_default();
            if !changes.is_empty() {
                store.write(&WriteBatch {
                    changes,
                    ..Default::default()
                })?;
            }
        }
        for batch in batches {
            let chunks: Vec<&Chunk> = batch.iter().flat_map(|p| &p.doc.chunks).collect();
            let mut write = WriteBatch {
                changes: first.take().unwrap_or_default(),
                ..Default::default()
            };
            if let Some(embedder) = embedder {
                let (vectors, embedded, hits) = embed_missing(store, embedder, &chunks, progress)?;
                report.chunks_embedded += embedded;
                report.embed_cache_hits += hits;
                write.model = Some((embedder.model_id().to_string(), embedder.dimension()));
                write.embeddings = vectors;
            }
            for p in batch {
                report.chunks_written += p.doc.chunks.len();
                if p.is_new {
                    report.files_added += 1;
                } else {
                    report.files_changed += 1;
                }
                write.changes.push(Change::Upsert(p.doc.clone()));
            }
            store.write(&write)?;
        }
        if embedder.is_some() && total_chunks > 0 {
            progress.finish();
        }
        Ok(())
    }

    /// Records the finished pass: `last_indexed` and, after a big change,
    /// an FTS optimize. (The pipeline version is recorded with each document
    /// as it is written, so a killed pass resumes where it stopped.)
    pub(super) fn stamp_pass(&self, store: &dyn IndexWriter, report: &IndexReport) -> Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        store.set_meta("last_indexed", &now.to_string())?;
        if report.files_added + report.files_changed + report.files_deleted > 100 {
            store.optimize()?;
        }
        Ok(())
    }
}
