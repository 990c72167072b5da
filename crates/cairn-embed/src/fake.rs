//! A deterministic embedder and reranker for tests: no model, no files,
//! instant.

use cairn_core::{EmbedError, Embedder, Reranker};

use crate::bert::normalize;

/// Hashes each lower-cased word (and its 3-letter prefix) into one of
/// `dimension` buckets: texts sharing words get similar vectors, the same text
/// always gets the same vector. Good enough to test plumbing, useless for quality.
#[derive(Clone, Debug)]
pub struct FakeEmbedder {
    dimension: usize,
}

impl FakeEmbedder {
    /// A fake embedder of the given dimension.
    pub fn new(dimension: usize) -> FakeEmbedder {
        FakeEmbedder {
            dimension: dimension.max(1),
        }
    }

    fn bucket(&self, word: &str) -> usize {
        // FNV-1a: tiny and stable across platforms and releases.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // Fold the high bits in: FNV's low bits depend only on the low bits
        // of each byte, which made "x" and "8" collide.
        ((h ^ (h >> 32)) % self.dimension as u64) as usize
    }
}

impl Embedder for FakeEmbedder {
    fn model_id(&self) -> &str {
        "fake-hash"
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; self.dimension];
                for word in t
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let w = word.to_lowercase();
                    v[self.bucket(&w)] += 1.0;
                    let prefix: String = w.chars().take(3).collect();
                    v[self.bucket(&prefix)] += 0.5;
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_is_deterministic_and_normalised() {
        let e = FakeEmbedder::new(64);
        let a = e
            .embed(&["Redis caching layer", "Redis caching layer"])
            .unwrap();
        assert_eq!(a[0], a[1]);
        let norm: f32 = a[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        let b = e.embed(&["redis cache", "banana bread recipe"]).unwrap();
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f32>();
        assert!(dot(&a[0], &b[0]) > dot(&a[0], &b[1]));
    }
}

/// Scores a passage by how many of the query's words (lower-cased, three
/// letters or more) it holds, each once, plus a tenth of a point per such
/// word the passage repeats: passages naming the query's words come first.
/// Good enough to test plumbing, useless for quality.
#[derive(Clone, Debug, Default)]
pub struct FakeReranker;

impl Reranker for FakeReranker {
    fn model_id(&self) -> &str {
        "fake-rerank"
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, EmbedError> {
        let words = |t: &str| -> Vec<String> {
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() >= 3)
                .map(str::to_lowercase)
                .collect()
        };
        let mut q = words(query);
        q.sort();
        q.dedup();
        Ok(passages
            .iter()
            .map(|p| {
                let p = words(p);
                q.iter()
                    .map(|w| match p.iter().filter(|x| *x == w).count() {
                        0 => 0.0,
                        n => 1.0 + 0.1 * (n - 1) as f32,
                    })
                    .sum()
            })
            .collect())
    }
}
