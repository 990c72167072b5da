//! Embedding: the backfill of chunks still without a vector of the current
//! model (`embed_pending`, run after every index pass or by the daemon in the
//! background; `expect_backfill`). A short answer from the model is an
//! error: it would leave chunks unembedded and the backfill retrying them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_core::{EmbedError, Embedder, WriteBatch, sync};

use crate::engine::Engine;
use crate::error::Result;
use crate::progress::Progress;

/// Texts the backfill reads from the index at a time and hands the
/// embedder as one group; the embedder packs the groups into batches and
/// keeps every worker thread fed across them ([`Embedder::embed_stream`]).
const EMBED_GROUP: usize = 256;

/// Vectors written to the index per transaction.
const WRITE_GROUP: usize = 512;

impl Engine {
    /// Marks a backfill as on its way (before its thread starts), so a
    /// status read in between does not say "not embedding" with vectors
    /// missing; [`Engine::embed_pending`] clears the mark when it ends.
    pub fn expect_backfill(&self) {
        if self.embedder.is_some() {
            self.embedding_active.store(true, Ordering::SeqCst);
        }
    }

    /// Embeds every chunk that has no vector of the current model yet and
    /// writes the vectors in groups of 512, each in its own transaction;
    /// returns how many were embedded. The chunks are read from the index
    /// by a cursor (in hash order) while earlier ones are still being
    /// embedded, so the embedder's threads never wait for a read, a write
    /// or the end of a group; a pass that ends is followed by one from the
    /// start, for chunks an index pass added behind the cursor. The index
    /// stays writable meanwhile (the store is locked only to read a group
    /// and to write vectors), and one backfill runs at a time: a second
    /// caller waits, then finds nothing left.
    pub fn embed_pending(&self, progress: &dyn Progress) -> Result<usize> {
        Ok(self.embed_pending_counted(progress)?.0)
    }

    /// [`Engine::embed_pending`], first taking from the per-user embedding
    /// cache every vector it holds (`[embed] user_cache_rows`): `(texts run
    /// through the model, vectors taken from the user cache)`.
    pub fn embed_pending_counted(&self, progress: &dyn Progress) -> Result<(usize, usize)> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok((0, 0));
        };
        let _one = sync::lock(&self.embed_lock);
        let model = embedder.model_id().to_string();
        let from_user_cache = self.fill_from_user_cache(&model)?;
        // The dimension is asked for only once vectors exist: a remote model
        // learns it from its first answer (or its cache), so a pass with
        // nothing to embed makes no request.
        let mut done = 0;
        let mut staged = false;
        let _active = ActiveFlag(&self.embedding_active);
        loop {
            let store = sync::lock(&self.store);
            let total = store.unembedded_count(&model, self.unembedded_skip())?;
            drop(store);
            if total == 0 {
                break;
            }
            if !staged {
                sync::lock(&self.embed_rate).start();
                progress.stage("embedding", total);
                self.embedding_active.store(true, Ordering::SeqCst);
                staged = true;
            }
            let written = self.embed_round(embedder.as_ref(), &model, progress)?;
            done += written;
            if written == 0 {
                break;
            }
        }
        if staged {
            progress.finish();
        }
        // Known by now when anything was embedded; else from the model's
        // cache (a remote model with neither asks once, outside the lock).
        let dim = embedder.dimension();
        let mut store = sync::lock(&self.store);
        store.index_vectors(dim)?;
        if done + from_user_cache > 0 {
            store.checkpoint()?;
        }
        Ok((done, from_user_cache))
    }

    /// The documents left without vectors: the commit records, when
    /// `[history] vectors = false`.
    fn unembedded_skip(&self) -> Option<&'static str> {
        (!self.config.history.vectors).then_some(cairn_core::HISTORY_PREFIX)
    }

    /// Writes into the index every vector of `model` the per-user cache
    /// holds for a chunk still without one, a group at a time, each group
    /// one transaction; returns how many. The cache is a help, not a
    /// need: one that cannot be opened or read is warned about and left.
    fn fill_from_user_cache(&self, model: &str) -> Result<usize> {
        let mut slot = sync::lock(&self.user_cache_open);
        if !self.open_user_cache(&mut slot) {
            return Ok(0);
        }
        let Some(cache) = slot.as_mut() else {
            return Ok(0);
        };
        let mut cursor = String::new();
        let mut filled = 0;
        loop {
            let todo = sync::lock(&self.store).unembedded(
                model,
                &cursor,
                WRITE_GROUP,
                self.unembedded_skip(),
            )?;
            let Some((last, _)) = todo.last() else {
                break;
            };
            cursor = last.clone();
            let hashes: Vec<&str> = todo.iter().map(|(h, _)| h.as_str()).collect();
            let mut found = match cache.get(model, &hashes) {
                Ok(f) => f,
                Err(e) => {
                    tracing::warn!("embedding cache left unread: {e}");
                    break;
                }
            };
            let Some(dim) = found.first().map(|(_, v)| v.len()) else {
                continue;
            };
            found.retain(|(_, v)| v.len() == dim);
            filled += found.len();
            sync::lock(&self.store).write(&WriteBatch {
                changes: vec![],
                model: Some((model.to_string(), dim)),
                embeddings: found,
            })?;
        }
        Ok(filled)
    }

    /// Opens the user cache into `slot` when this engine has one and it is
    /// not open yet; whether it is open now.
    fn open_user_cache(&self, slot: &mut Option<cairn_store::UserCache>) -> bool {
        if slot.is_some() {
            return true;
        }
        let Some((path, rows)) = &self.user_cache else {
            return false;
        };
        match cairn_store::UserCache::open(path, *rows) {
            Ok(c) => {
                *slot = Some(c);
                true
            }
            Err(e) => {
                tracing::warn!("no embedding cache this run: {e}");
                false
            }
        }
    }

    /// Keeps vectors just computed in the per-user cache (best effort).
    fn keep_in_user_cache(&self, model: &str, vectors: &[(String, Vec<f32>)]) {
        let mut slot = sync::lock(&self.user_cache_open);
        if let Some(cache) = slot.as_mut()
            && let Err(e) = cache.put(model, vectors)
        {
            tracing::warn!("vectors not kept in the embedding cache: {e}");
        }
    }

    /// One pass of the backfill from the start of the hash order: streams
    /// every chunk without a vector through the embedder and writes the
    /// vectors in groups; returns how many were written.
    fn embed_round(
        &self,
        embedder: &dyn Embedder,
        model: &str,
        progress: &dyn Progress,
    ) -> Result<usize> {
        // Which hash each handed-out text has, by its number.
        let handed: Mutex<HashMap<u64, String>> = Mutex::new(HashMap::new());
        let mut cursor = String::new();
        let mut seq = 0u64;
        let mut store_error = None;
        let mut source = || -> std::result::Result<Option<Vec<String>>, EmbedError> {
            let todo = sync::lock(&self.store)
                .unembedded(model, &cursor, EMBED_GROUP, self.unembedded_skip())
                .map_err(|e| EmbedError::new(format!("reading chunks to embed: {e}")))?;
            let Some((last, _)) = todo.last() else {
                return Ok(None);
            };
            cursor = last.clone();
            let mut h = sync::lock(&handed);
            Ok(Some(
                todo.into_iter()
                    .map(|(hash, chunk)| {
                        h.insert(seq, hash);
                        seq += 1;
                        chunk.embed_text()
                    })
                    .collect(),
            ))
        };
        let mut pending: Vec<(String, Vec<f32>)> = Vec::with_capacity(WRITE_GROUP);
        let mut written = 0usize;
        let mut write = |pending: &mut Vec<(String, Vec<f32>)>| -> Result<()> {
            let embeddings = std::mem::take(pending);
            let n = embeddings.len();
            written += n;
            self.keep_in_user_cache(model, &embeddings);
            sync::lock(&self.store).write(&WriteBatch {
                changes: vec![],
                model: Some((model.to_string(), embedder.dimension())),
                embeddings,
            })?;
            sync::lock(&self.embed_rate).wrote(n);
            Ok(())
        };
        let mut sink = |vecs: Vec<(u64, Vec<f32>)>| -> std::result::Result<(), EmbedError> {
            let mut h = sync::lock(&handed);
            for (n, v) in vecs {
                let hash = h
                    .remove(&n)
                    .ok_or_else(|| EmbedError::new(format!("vector {n} was never asked for")))?;
                pending.push((hash, v));
                progress.inc(1);
            }
            drop(h);
            if pending.len() >= WRITE_GROUP
                && let Err(e) = write(&mut pending)
            {
                let message = e.to_string();
                store_error = Some(e);
                return Err(EmbedError::new(message));
            }
            Ok(())
        };
        let streamed = embedder.embed_stream(&mut source, &mut sink);
        if let Some(e) = store_error {
            return Err(e);
        }
        streamed?;
        if let Some(n) = sync::lock(&handed).keys().next() {
            return Err(EmbedError::new(format!("{model} returned no vector for text {n}")).into());
        }
        write(&mut pending)?;
        Ok(written)
    }
}

/// Clears the "embedding in progress" flag however the backfill ends.
struct ActiveFlag<'a>(&'a AtomicBool);

impl Drop for ActiveFlag<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}
