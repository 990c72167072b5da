//! The reranker a search may ask for (`[search] rerank`, `--rerank`, the
//! MCP `rerank` argument): the cross-encoder, loaded (fetched when `[embed]
//! auto_fetch` allows) on the first search that asks, and its recent scores
//! kept by (query, passage), so a repeated search or an evaluation of
//! another blend pays for no pair twice.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use cairn_core::{EmbedError, Reranker, sync};
use cairn_search::RerankBlend;

use super::SearchOptions;
use crate::engine::Engine;
use crate::limits;

/// Reranker scores kept; the cache is emptied when it fills.
const RERANK_CACHE: usize = 8_192;

impl Engine {
    /// Uses this reranker (or none) for searches that ask for one, instead
    /// of loading the configured cross-encoder on first use (tests, callers
    /// that hold a model).
    pub fn set_reranker(&self, reranker: Option<Arc<dyn Reranker>>) {
        *sync::lock(&self.reranker) = Some(reranker);
        sync::lock(&self.rerank_cache).clear();
    }

    /// The reranker, loaded on the first call (fetched when `[embed]
    /// auto_fetch` allows); `None`, with one warning, when it cannot be had.
    pub fn reranker(&self) -> Option<Arc<dyn Reranker>> {
        let mut slot = sync::lock(&self.reranker);
        if let Some(r) = &*slot {
            return r.clone();
        }
        let r = crate::open::load_reranker(&self.config);
        *slot = Some(r.clone());
        r
    }

    /// The reranker behind the score cache, with `k` and the blend, when
    /// `opts` (else `[search] rerank`) asks for one and it can be had.
    pub(super) fn rerank_model(
        &self,
        opts: &SearchOptions,
    ) -> Option<(Cached<'_>, usize, RerankBlend)> {
        let s = &self.config.search;
        if !opts.rerank.unwrap_or(s.rerank) {
            return None;
        }
        let model = self.reranker()?;
        let k = opts
            .rerank_k
            .unwrap_or(s.rerank_k)
            .clamp(1, limits::MAX_RERANK_K);
        let blend = opts.rerank_blend.unwrap_or(s.rerank_blend);
        Some((
            Cached {
                engine: self,
                model,
            },
            k,
            blend,
        ))
    }

    /// `[search] rerank_budget_ms`, within its bounds.
    pub(super) fn rerank_budget(&self) -> Duration {
        Duration::from_millis(
            self.config
                .search
                .rerank_budget_ms
                .clamp(1, limits::MAX_RERANK_BUDGET_MS),
        )
    }
}

/// The engine's reranker, its scores cached by (query, passage).
pub(crate) struct Cached<'a> {
    engine: &'a Engine,
    model: Arc<dyn Reranker>,
}

fn key(model: &str, query: &str, passage: &str) -> u64 {
    let mut h = DefaultHasher::new();
    (model, query, passage).hash(&mut h);
    h.finish()
}

impl Reranker for Cached<'_> {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, EmbedError> {
        let id = self.model.model_id();
        let keys: Vec<u64> = passages.iter().map(|p| key(id, query, p)).collect();
        let mut out: Vec<Option<f32>> = {
            let cache = sync::lock(&self.engine.rerank_cache);
            keys.iter().map(|k| cache.get(k).copied()).collect()
        };
        let missing: Vec<usize> = (0..passages.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let texts: Vec<&str> = missing.iter().map(|&i| passages[i]).collect();
            let scores = self.model.score(query, &texts)?;
            if scores.len() != texts.len() {
                return Err(EmbedError::new(format!(
                    "{id} returned {} scores for {} passages",
                    scores.len(),
                    texts.len()
                )));
            }
            let mut cache = sync::lock(&self.engine.rerank_cache);
            if cache.len() + scores.len() > RERANK_CACHE {
                cache.clear();
            }
            for (&i, s) in missing.iter().zip(scores) {
                cache.insert(keys[i], s);
                out[i] = Some(s);
            }
        }
        Ok(out.into_iter().map(|s| s.unwrap_or(f32::MIN)).collect())
    }
}

/// The scores cached: the keys of the same pair agree, of another do not.
#[cfg(test)]
mod tests {
    use super::key;

    #[test]
    fn a_pair_has_one_key_and_its_parts_are_not_run_together() {
        assert_eq!(key("m", "q", "p"), key("m", "q", "p"));
        assert_ne!(key("m", "q", "p"), key("m", "qp", ""));
        assert_ne!(key("m", "q", "p"), key("n", "q", "p"));
    }
}
