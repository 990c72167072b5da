//! What the ranking reads beside its snapshot, cached by the engine: the
//! nearest vectors (the backend's own vector index, else an exact scan of
//! the in-memory matrix, with recent query vectors cached), the knowledge
//! graph, and the knowledge base's domains.

use std::sync::Arc;

use cairn_core::{ChunkId, Embedder, IndexSnapshot, Kind, Scored, sync};
use cairn_search::{CacheFileError, KnowledgeGraph, RankSource, VectorFileError, VectorIndex};

use crate::engine::Engine;
use crate::error::{Error, Result};

/// Query vectors kept in the cache.
const QUERY_CACHE: usize = 256;

/// What [`cairn_search::rank`] reads: one snapshot, and the engine's caches
/// beside it.
pub(super) struct Source<'a> {
    pub engine: &'a Engine,
    pub snap: &'a dyn IndexSnapshot,
    /// The graph file's read, started by [`RankSource::prefetch_graph`].
    pub graph_read: std::cell::RefCell<Option<crate::graph::GraphRead>>,
}

impl RankSource for Source<'_> {
    type Error = Error;

    fn snapshot(&self) -> &dyn IndexSnapshot {
        self.snap
    }

    fn nearest(&self, query: &str, k: usize, prefix: Option<&str>) -> Result<Vec<Scored<ChunkId>>> {
        match &self.engine.embedder {
            Some(embedder) => {
                match self
                    .engine
                    .nearest(self.snap, embedder.as_ref(), query, None, k, prefix)
                {
                    // A model that cannot embed the query now (a remote
                    // endpoint down, a rate limit) leaves BM25 and the
                    // graph to answer: a search never fails for it.
                    Err(crate::Error::Embed(e)) => {
                        tracing::warn!("no query vector ({e}): this search ran without vectors");
                        Ok(Vec::new())
                    }
                    other => other,
                }
            }
            None => Ok(Vec::new()),
        }
    }

    fn graph(&self) -> Result<Arc<KnowledgeGraph>> {
        let read = self.graph_read.borrow_mut().take();
        self.engine.knowledge_graph_with(self.snap, read)
    }

    fn prefetch_graph(&self) {
        match self.engine.start_graph_read(self.snap) {
            Ok(read) => *self.graph_read.borrow_mut() = read,
            // `graph` meets the same error and says it.
            Err(e) => tracing::debug!("the graph is not read ahead: {e}"),
        }
    }

    fn kind_of(&self, path: &str) -> Kind {
        self.engine.kind_of(path)
    }
}

/// Characters of a query one window of the embedding model reads (MiniLM:
/// 256 word pieces, about 4 characters each).
const WINDOW_CHARS: usize = 1_000;

/// `query` cut at line ends (or, for a longer line, at spaces) into at most
/// `max` windows of about [`WINDOW_CHARS`]; one window when it fits in one
/// or `max` is 1.
fn query_windows(query: &str, max: usize) -> Vec<&str> {
    if max <= 1 || query.len() <= WINDOW_CHARS {
        return vec![query];
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < query.len() && out.len() < max {
        let mut end = (start + WINDOW_CHARS).min(query.len());
        while !query.is_char_boundary(end) {
            end -= 1;
        }
        if end < query.len() {
            let cut = query[start..end]
                .rfind('\n')
                .or_else(|| query[start..end].rfind(' '))
                .filter(|&i| i > WINDOW_CHARS / 2);
            if let Some(i) = cut {
                end = start + i + 1;
            }
        }
        let w = query[start..end].trim();
        if !w.is_empty() {
            out.push(w);
        }
        start = end;
    }
    if out.is_empty() {
        out.push(query);
    }
    out
}

impl Engine {
    /// The domain words of the file being edited (see
    /// [`cairn_search::domain_words`]: its folder names less `src`, `docs`
    /// and the like, case aside), relative to the project root.
    pub(super) fn current_domain(&self, current: Option<&str>) -> Vec<String> {
        let Some(current) = current else {
            return Vec::new();
        };
        let rel = crate::paths::relative_path(&self.root, &self.root.join(current));
        cairn_search::domain_words(&rel)
    }

    /// The query's vector (embedded as a query: [`Embedder::embed_query`]),
    /// from the cache when it was asked recently.
    pub(crate) fn query_vector(
        &self,
        embedder: &dyn Embedder,
        query: &str,
    ) -> Result<Arc<Vec<f32>>> {
        {
            // Least recently used first in the queue: a hit moves to the back.
            let mut cache = sync::lock(&self.query_cache);
            if let Some(v) = cache.0.get(query).cloned() {
                if let Some(at) = cache.1.iter().position(|q| q == query) {
                    cache.1.remove(at);
                }
                cache.1.push_back(query.to_string());
                return Ok(v);
            }
        }
        let windows = query_windows(query, self.config.search.query_windows.clamp(1, 8));
        let v = if windows.len() == 1 {
            embedder.embed_query(query)?
        } else {
            // The windows' vectors averaged and normalised: a query that
            // runs past the model's 256 tokens is read whole.
            let mut sum: Vec<f32> = Vec::new();
            for w in &windows {
                let v = embedder.embed_query(w)?;
                if sum.is_empty() {
                    sum = v;
                } else {
                    for (s, x) in sum.iter_mut().zip(&v) {
                        *s += x;
                    }
                }
            }
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                sum.iter_mut().for_each(|x| *x /= norm);
            }
            sum
        };
        let v = Arc::new(v);
        let mut cache = sync::lock(&self.query_cache);
        if cache.0.len() >= QUERY_CACHE
            && let Some(old) = cache.1.pop_front()
        {
            cache.0.remove(&old);
        }
        cache.0.insert(query.to_string(), v.clone());
        cache.1.push_back(query.to_string());
        Ok(v)
    }

    /// The vector matrix, reloaded when the index has changed since. A
    /// process that has none in memory first maps the one another process
    /// left beside the index (`.cairn/index.sqlite.vectors`) when it was
    /// made from the same state of the index and model; one that reads the
    /// vectors out of the index leaves that file for the next and maps it
    /// in place of its own copy. A one-off CLI search on the PowerShell
    /// corpus then skips a ~0.6 s read (BENCHMARKS.md), and processes that
    /// map the file share one copy of it in the page cache.
    fn vector_index(&self, snap: &dyn IndexSnapshot, model: &str) -> Result<Arc<VectorIndex>> {
        let generation = snap.generation()?;
        let mut slot = sync::lock(&self.vectors);
        if let Some((g, idx)) = slot.as_ref()
            && *g == generation
        {
            return Ok(idx.clone());
        }
        let file = self.cache_file(snap, generation, "vectors", model)?;
        if let Some((path, stamp)) = &file {
            match VectorIndex::open_file(path, stamp) {
                Ok(idx) => {
                    let idx = Arc::new(idx);
                    *slot = Some((generation, idx.clone()));
                    return Ok(idx);
                }
                Err(VectorFileError::File(CacheFileError::Stale)) => {}
                Err(VectorFileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!("{}: {e}; reading the vectors again", path.display()),
            }
        }
        let set = snap.vectors(model)?;
        let mut idx = VectorIndex::new(set.rowids, set.paths, set.data, set.dim);
        if let Some((path, stamp)) = &file {
            let kept = crate::vault::write_atomic_with(path, |w| idx.write_to(w, stamp))
                .map_err(|e| e.to_string())
                .and_then(|()| VectorIndex::open_file(path, stamp).map_err(|e| e.to_string()));
            match kept {
                Ok(mapped) => idx = mapped,
                // The vectors still serve this process; the next reads them again.
                Err(e) => tracing::warn!("{e}; the vectors are not kept for the next process"),
            }
        }
        let idx = Arc::new(idx);
        *slot = Some((generation, idx.clone()));
        Ok(idx)
    }

    /// The `k` chunks nearest to `text` (or to `qv`, its vector, when the
    /// caller has it): on the backend's own vector index when it has one
    /// (PostgreSQL's HNSW), else an exact scan of the in-memory matrix.
    pub(crate) fn nearest(
        &self,
        snap: &dyn IndexSnapshot,
        embedder: &dyn Embedder,
        text: &str,
        qv: Option<&[f32]>,
        k: usize,
        prefix: Option<&str>,
    ) -> Result<Vec<Scored<ChunkId>>> {
        let model = embedder.model_id();
        let owned;
        let qv = match qv {
            Some(v) => v,
            None => {
                owned = self.query_vector(embedder, text)?;
                &owned[..]
            }
        };
        if let Some(hits) = snap.vector_top_k(model, qv, k, prefix)? {
            return Ok(hits);
        }
        let idx = self.vector_index(snap, model)?;
        Ok(idx.top_k(qv, k, prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_query_is_cut_into_windows_at_line_ends() {
        assert_eq!(query_windows("short", 4), ["short"]);
        let long: String = (0..60)
            .map(|i| format!("line {i} of the issue text\n"))
            .collect();
        assert_eq!(query_windows(&long, 1), [long.as_str()]);
        let w = query_windows(&long, 4);
        assert!(w.len() >= 2 && w.len() <= 4, "{}", w.len());
        assert!(
            w.iter()
                .all(|w| w.len() <= WINDOW_CHARS && w.ends_with("text"))
        );
        assert!(long.starts_with(w[0]));
        let one_line = "word ".repeat(2_000);
        assert_eq!(query_windows(&one_line, 8).len(), 8);
        let cjk = "東京".repeat(1_000);
        assert!(query_windows(&cjk, 3).len() == 3);
    }
}
