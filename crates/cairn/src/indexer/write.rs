//! The index pass's writes: what the chunk workers give, in one
//! transaction per batch of `[index] batch_files` chunked files (so a killed
//! indexer loses at most that batch; deletes and touches ride with the
//! batches), then the pass's stamp (`last_indexed`, FTS optimize). Vectors
//! come after, from the backfill (`embed.rs`): BM25 answers for every
//! written chunk while they are computed.

use std::collections::HashSet;

use cairn_core::{Change, Chunk, IndexWriter, WriteBatch, content_hash};

use super::IndexReport;
use super::chunk::Prepared;
use super::plan::Work;
use super::sync::{SyncPlan, forgotten_elsewhere};
use crate::engine::Engine;
use crate::error::Result;
use crate::progress::Progress;

/// Counts the chunks of a pass whose vector the embedding cache already holds,
/// or whose text an earlier chunk of the pass has: one cache lookup per
/// batch (a round trip each on a shared server), not per file.
#[derive(Default)]
struct CacheHits {
    /// The model whose cache counts; `None`: no model, nothing to count.
    model: Option<String>,
    /// Embed-text hashes of this pass counted so far.
    seen: HashSet<String>,
    /// Hashes of the batch being gathered, in order.
    pending: Vec<String>,
}

impl CacheHits {
    fn add(&mut self, chunks: &[Chunk]) {
        if self.model.is_some() {
            self.pending.extend(
                chunks
                    .iter()
                    .map(|c| content_hash(c.embed_text().as_bytes())),
            );
        }
    }

    /// The hits among the hashes gathered since the last count.
    fn count(&mut self, store: &dyn IndexWriter) -> Result<usize> {
        let Some(model) = &self.model else {
            return Ok(0);
        };
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return Ok(0);
        }
        let refs: Vec<&str> = pending.iter().map(String::as_str).collect();
        let cached = store.cached_hashes(model, &refs)?;
        Ok(pending
            .into_iter()
            .filter(|h| cached.contains(h) || !self.seen.insert(h.clone()))
            .count())
    }
}

impl Engine {
    /// Chunks `work` (on worker threads) and writes it as it comes, with
    /// `first` (deletes) in the first write; counts the chunks whose vector
    /// the embedding cache already has (or that repeat a text of this pass).
    pub(super) fn write_stream(
        &self,
        store: &mut dyn IndexWriter,
        first: Vec<Change>,
        work: &[Work],
        sync: &mut SyncPlan,
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<()> {
        progress.stage("indexing", work.len() as u64);
        let batch_files = self.config.index.batch_files.max(1);
        let mut hits = CacheHits {
            model: self.embedder.as_ref().map(|e| e.model_id().to_string()),
            ..CacheHits::default()
        };
        let mut changes = first;
        let mut files = 0;
        let workers = self.chunk_stream(work, Self::chunk_workers(), batch_files, |p| {
            progress.inc(1);
            match p {
                Prepared::Unreadable(s) => report.skipped.push(s),
                Prepared::LeftOut => {}
                Prepared::Touch(c) => {
                    report.files_unchanged += 1;
                    changes.push(c);
                }
                Prepared::Chunked {
                    pending,
                    check_forgotten,
                } => {
                    let doc = pending.doc;
                    // Not in the store, and forgotten there in this very
                    // version: another machine forgot it, so this copy goes too.
                    if let Some(hash) = check_forgotten
                        && forgotten_elsewhere(store, &doc.path, &hash)?
                    {
                        sync.dropped.push(doc.path);
                        return Ok(());
                    }
                    hits.add(&doc.chunks);
                    report.chunks_written += doc.chunks.len();
                    if pending.is_new {
                        report.files_added += 1;
                    } else {
                        report.files_changed += 1;
                    }
                    changes.push(Change::Upsert(doc));
                    files += 1;
                    if files >= batch_files {
                        report.embed_cache_hits += hits.count(store)?;
                        store.write(&WriteBatch {
                            changes: std::mem::take(&mut changes),
                            ..Default::default()
                        })?;
                        files = 0;
                    }
                }
            }
            Ok(())
        })?;
        report.skipped.extend(workers.skipped);
        report.notes.extend(workers.notes);
        for (lang, n) in workers.languages {
            *report.languages.entry(lang).or_default() += n;
        }
        report.embed_cache_hits += hits.count(store)?;
        if !changes.is_empty() {
            store.write(&WriteBatch {
                changes,
                ..Default::default()
            })?;
        }
        progress.finish();
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
        if report.files_added + report.files_changed + report.files_deleted + report.commits_indexed
            > 100
        {
            store.optimize()?;
        }
        Ok(())
    }
}
