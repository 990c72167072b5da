//! Embedding: the vectors a batch of the index pass needs (`embed_missing`,
//! skipping texts the cache has), the backfill of chunks still without a
//! vector of the current model (`embed_pending`, `expect_backfill`), and
//! `embed_exactly`, which both use to refuse a short answer from the model.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_core::{Chunk, Embedder, IndexWriter, WriteBatch, content_hash};

use crate::engine::Engine;
use crate::error::Result;
use crate::progress::Progress;

impl Engine {
    /// Marks a backfill as on its way (before its thread starts), so a
    /// status read in between does not say "not embedding" with vectors
    /// missing; [`Engine::embed_pending`] clears the mark when it ends.
    pub fn expect_backfill(&self) {
        if self.embedder.is_some() {
            self.embedding_active.store(true, Ordering::SeqCst);
        }
    }

    /// Embeds every chunk that has no vector of the current model yet, in
    /// batches of 512, each written in its own transaction; returns how many
    /// were embedded. The index stays writable meanwhile (the store is locked
    /// only to read a batch and to write its vectors), and one backfill runs
    /// at a time: a second caller waits, then finds nothing left.
    pub fn embed_pending(&self, progress: &dyn Progress) -> Result<usize> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(0);
        };
        let _one = self.embed_lock.lock().unwrap_or_else(|p| p.into_inner());
        let model = embedder.model_id().to_string();
        let mut done = 0;
        let mut staged = false;
        let _active = ActiveFlag(&self.embedding_active);
        loop {
            let todo = self
                .store
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .unembedded(&model, 512)?;
            if todo.is_empty() {
                break;
            }
            if !staged {
                let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
                let total = store.unembedded_count(&model)?;
                drop(store);
                progress.stage("embedding", total);
                self.embedding_active.store(true, Ordering::SeqCst);
                staged = true;
            }
            let texts: Vec<String> = todo.iter().map(|(_, c)| c.embed_text()).collect();
            let mut embeddings = Vec::with_capacity(todo.len());
            // Groups of 64 keep the progress moving; each group is still
            // packed and spread over the worker threads by the embedder.
            for (group, chunks) in texts.chunks(64).zip(todo.chunks(64)) {
                let refs: Vec<&str> = group.iter().map(String::as_str).collect();
                let vecs = embed_exactly(embedder.as_ref(), &refs)?;
                progress.inc(group.len() as u64);
                embeddings.extend(chunks.iter().map(|(h, _)| h.clone()).zip(vecs));
            }
            done += todo.len();
            self.store
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .write(&WriteBatch {
                    changes: vec![],
                    model: Some((model.clone(), embedder.dimension())),
                    embeddings,
                })?;
        }
        if staged {
            progress.finish();
        }
        self.store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .index_vectors(embedder.dimension())?;
        Ok(done)
    }
}

/// Clears the "embedding in progress" flag however the backfill ends.
struct ActiveFlag<'a>(&'a AtomicBool);

impl Drop for ActiveFlag<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// One vector per text, or an error: a short answer would leave chunks
/// unembedded (and the backfill loop retrying them forever).
fn embed_exactly(embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
    let vecs = embedder.embed(texts)?;
    if vecs.len() != texts.len() {
        return Err(cairn_core::EmbedError::new(format!(
            "{} returned {} vectors for {} texts",
            embedder.model_id(),
            vecs.len(),
            texts.len()
        ))
        .into());
    }
    Ok(vecs)
}

/// How many new vectors [`embed_missing`] holds before it writes them to the
/// embedding cache on their own: a batch holding one 50 MB file has tens of
/// thousands of chunks, and a kill during its embedding must not lose them all.
pub(super) const FLUSH_VECTORS: usize = 512;

/// New vectors by embed-text hash (those not yet flushed to the cache), texts
/// embedded, cache hits.
pub(super) type Embedded = (Vec<(String, Vec<f32>)>, usize, usize);

/// Vectors for the chunks whose embed text has none in the cache. Each
/// distinct text is embedded once; every [`FLUSH_VECTORS`] new vectors are
/// written to the cache in their own transaction. Returns (vectors not yet
/// written, texts embedded, cache hits).
pub(super) fn embed_missing(
    store: &mut dyn IndexWriter,
    embedder: &dyn Embedder,
    chunks: &[&Chunk],
    progress: &dyn Progress,
) -> Result<Embedded> {
    let texts: Vec<String> = chunks.iter().map(|c| c.embed_text()).collect();
    let hashes: Vec<String> = texts.iter().map(|t| content_hash(t.as_bytes())).collect();
    let refs: Vec<&str> = hashes.iter().map(String::as_str).collect();
    let cached = store.cached_hashes(embedder.model_id(), &refs)?;
    let mut todo: Vec<(String, &str)> = Vec::new();
    let mut queued: HashSet<&str> = HashSet::new();
    let mut hits = 0;
    for (h, t) in hashes.iter().zip(&texts) {
        if cached.contains(h) || !queued.insert(h.as_str()) {
            hits += 1;
            progress.inc(1);
        } else {
            todo.push((h.clone(), t.as_str()));
        }
    }
    let mut out = Vec::with_capacity(todo.len().min(FLUSH_VECTORS));
    // Small groups keep the progress bar moving; each group is still packed
    // and spread over the worker threads by the embedder.
    for group in todo.chunks(64) {
        let texts: Vec<&str> = group.iter().map(|(_, t)| *t).collect();
        let vecs = embed_exactly(embedder, &texts)?;
        progress.inc(group.len() as u64);
        out.extend(group.iter().map(|(h, _)| h.clone()).zip(vecs));
        if out.len() >= FLUSH_VECTORS {
            store.write(&WriteBatch {
                changes: vec![],
                model: Some((embedder.model_id().to_string(), embedder.dimension())),
                embeddings: std::mem::take(&mut out),
            })?;
        }
    }
    Ok((out, todo.len(), hits))
}
