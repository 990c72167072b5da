//! Embedding: the backfill of chunks still without a vector of the current
//! model (`embed_pending`, run after every index pass or by the daemon in the
//! background; `expect_backfill`), and `embed_exactly`, which refuses a short
//! answer from the model.

use std::sync::atomic::{AtomicBool, Ordering};

use cairn_core::{Embedder, WriteBatch};

use crate::engine::Engine;
use crate::error::Result;
use crate::progress::Progress;

/// Texts per call to the embedder in a backfill. Each call ends when its last
/// packed batch (2,048 tokens) does, so a worker thread idles through the
/// tail of every call: with 64 texts (6–7 batches of SciFact's 200-token
/// texts) an index pass reached 93.8% of the kernel's own throughput on the
/// same texts (BENCHMARKS.md, "Indexing on 2 vCPUs"), with 256 96.9% (median
/// CPU 188% → 194%): the tail comes a quarter as often. The progress bar
/// still moves every few seconds.
const EMBED_GROUP: usize = 256;

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
            // Groups keep the progress moving; each group is packed and
            // spread over the worker threads by the embedder, which wait for
            // the group's last packed batch (see EMBED_GROUP).
            for (group, chunks) in texts.chunks(EMBED_GROUP).zip(todo.chunks(EMBED_GROUP)) {
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
