//! Exact nearest neighbours over one contiguous matrix.
//!
//! Brute force is the right tool at this scale: 100k chunks × 384 values is
//! 77 MB as half floats and one pass of dot products takes a few
//! milliseconds, with perfect recall and no index to build or keep in sync.
//!
//! The matrix is kept as IEEE half floats (f16): unit vectors' components
//! lie in [-1, 1], where f16 keeps 11 significant bits, so a cosine moves by
//! well under 0.001 — rankings on SciFact and LoCoMo stay within the issue's
//! 0.003 of nDCG (BENCHMARKS.md) — and memory and bytes scanned halve. Rows
//! are widened to f32 a block at a time (F16C where the CPU has it, through
//! `half`) and multiplied with the f32 query.

use cairn_core::{ChunkId, Scored};
use half::f16;
use half::slice::HalfFloatSliceExt;

/// Rows widened to f32 per step of the scan: 16 × 384 floats (24 KB) stay in
/// L1 with the query (64 rows did not: the scan was 9% slower than f32's).
const BLOCK_ROWS: usize = 16;

/// Unit vectors of every embedded chunk, row-major, with their ids and paths.
#[derive(Debug, Default)]
pub struct VectorIndex {
    pub(crate) ids: Vec<i64>,
    /// Each row's path, as an index into `path_table` (a file's chunks
    /// share one string: 122,627 rows held 7,350 paths on the PowerShell corpus).
    pub(crate) path_of: Vec<u32>,
    pub(crate) path_table: Vec<String>,
    pub(crate) data: Matrix,
    pub(crate) dim: usize,
}

/// Where the half floats are: in this process's memory, or mapped from the
/// file another process left ([`VectorIndex::open_file`]), shared with it
/// through the page cache and never copied.
#[derive(Debug)]
pub(crate) enum Matrix {
    Owned(Vec<f16>),
    Mapped {
        map: memmap2::Mmap,
        offset: usize,
        len: usize,
    },
}

impl Default for Matrix {
    fn default() -> Self {
        Matrix::Owned(Vec::new())
    }
}

impl Matrix {
    pub(crate) fn as_slice(&self) -> &[f16] {
        match self {
            Matrix::Owned(v) => v,
            Matrix::Mapped { map, offset, len } => {
                let bytes = &map[*offset..*offset + len * 2];
                // SAFETY: `open_file` checked that the range is in the map and
                // starts at an even address (page-aligned map, even offset);
                // f16 is two bytes with no invalid bit patterns, and the file
                // holds little-endian halves, read only on little-endian
                // targets. Files are only ever replaced by rename, never
                // written in place, so the mapped bytes do not change.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f16>(), *len) }
            }
        }
    }
}

impl VectorIndex {
    /// Builds the index; `data` holds `ids.len() × dim` half floats.
    pub fn new(ids: Vec<i64>, paths: Vec<String>, data: Vec<f16>, dim: usize) -> VectorIndex {
        debug_assert_eq!(ids.len() * dim, data.len());
        let mut path_table: Vec<String> = Vec::new();
        let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        let path_of = paths
            .into_iter()
            .map(|p| match seen.get(&p) {
                Some(&i) => i,
                None => {
                    let i = path_table.len() as u32;
                    path_table.push(p.clone());
                    seen.insert(p, i);
                    i
                }
            })
            .collect();
        VectorIndex {
            ids,
            path_of,
            path_table,
            data: Matrix::Owned(data),
            dim,
        }
    }

    /// Bytes the matrix holds.
    pub fn matrix_bytes(&self) -> usize {
        std::mem::size_of_val(self.data.as_slice())
    }

    /// True when the matrix is mapped from a file rather than held in memory.
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Matrix::Mapped { .. })
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Vector length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The `k` rows most similar to `query` (cosine = dot product on unit
    /// vectors), best first, optionally only rows whose path starts with `path_prefix`.
    pub fn top_k(
        &self,
        query: &[f32],
        k: usize,
        path_prefix: Option<&str>,
    ) -> Vec<Scored<ChunkId>> {
        if self.dim == 0 || query.len() != self.dim || k == 0 {
            return Vec::new();
        }
        // Never more than there are rows: k sizes the heap.
        let k = k.min(self.ids.len());
        // Keep the best k in a min-heap keyed by score.
        let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(Score, usize)>> =
            std::collections::BinaryHeap::with_capacity(k + 1);
        // Which paths pass the prefix, decided once per path, not per row.
        let allowed: Option<Vec<bool>> = path_prefix.map(|p| {
            self.path_table
                .iter()
                .map(|path| path.starts_with(p))
                .collect()
        });
        let mut wide = vec![0.0f32; BLOCK_ROWS * self.dim];
        for (b, block) in self
            .data
            .as_slice()
            .chunks(BLOCK_ROWS * self.dim)
            .enumerate()
        {
            let wide = &mut wide[..block.len()];
            block.convert_to_f32_slice(wide);
            for (i, v) in wide.chunks_exact(self.dim).enumerate() {
                let row = b * BLOCK_ROWS + i;
                if let Some(allowed) = &allowed
                    && !allowed[self.path_of[row] as usize]
                {
                    continue;
                }
                let s = dot(v, query);
                if heap.len() < k {
                    heap.push(std::cmp::Reverse((Score(s), row)));
                } else if let Some(min) = heap.peek()
                    && s > min.0.0.0
                {
                    heap.pop();
                    heap.push(std::cmp::Reverse((Score(s), row)));
                }
            }
        }
        let mut out: Vec<Scored<ChunkId>> = heap
            .into_iter()
            .map(|std::cmp::Reverse((s, row))| Scored::new(ChunkId(self.ids[row]), f64::from(s.0)))
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        out
    }
}

/// A similarity with a total order (NaN sorts consistently), for the heap.
#[derive(Clone, Copy)]
struct Score(f32);
impl PartialEq for Score {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Dot product written as 8 independent lanes so the compiler vectorises it.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, ra) = a.split_at(a.len() / 8 * 8);
    let (cb, rb) = b.split_at(ca.len());
    for (x, y) in ca.chunks_exact(8).zip(cb.chunks_exact(8)) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn halves(v: Vec<f32>) -> Vec<f16> {
        v.into_iter().map(f16::from_f32).collect()
    }

    #[test]
    fn finds_nearest_and_filters_by_prefix() {
        let idx = VectorIndex::new(
            vec![10, 11, 12],
            vec!["a/x.md".into(), "b/y.md".into(), "a/z.md".into()],
            halves(vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8]),
            2,
        );
        let top = idx.top_k(&[0.0, 1.0], 2, None);
        assert_eq!(top.iter().map(|t| t.id.0).collect::<Vec<_>>(), vec![11, 12]);
        let top = idx.top_k(&[0.0, 1.0], 5, Some("a/"));
        assert_eq!(top.iter().map(|t| t.id.0).collect::<Vec<_>>(), vec![12, 10]);
        assert!(idx.top_k(&[1.0, 0.0, 0.0], 2, None).is_empty());
    }

    #[test]
    fn any_k_is_at_most_the_rows() {
        // k sizes the heap: usize::MAX once asked for the whole address space.
        let idx = VectorIndex::new(
            vec![1, 2],
            vec!["a".into(), "b".into()],
            halves(vec![1.0, 0.0, 0.0, 1.0]),
            2,
        );
        assert_eq!(idx.top_k(&[1.0, 0.0], usize::MAX, None).len(), 2);
        assert_eq!(idx.top_k(&[1.0, 0.0], 1_000_000_000, None).len(), 2);
    }

    /// Half floats keep a unit vector's cosine within 0.001 of f32's, and
    /// blocks of rows past the first are scanned too.
    #[test]
    fn half_float_rows_keep_the_order_of_f32_cosines() {
        let dim = 384;
        let mut rng = crate::SplitMix64(7);
        let rows = 3 * BLOCK_ROWS + 5;
        let mut data = Vec::with_capacity(rows * dim);
        for _ in 0..rows {
            let v: Vec<f32> = (0..dim).map(|_| rng.unit() as f32 - 0.5).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            data.extend(v.iter().map(|x| x / n));
        }
        let q: Vec<f32> = data[(rows - 1) * dim..].to_vec();
        let ids: Vec<i64> = (0..rows as i64).collect();
        let idx = VectorIndex::new(ids, vec![String::new(); rows], halves(data.clone()), dim);
        assert_eq!(idx.matrix_bytes(), rows * dim * 2);
        let top = idx.top_k(&q, rows, None);
        assert_eq!(
            top[0].id.0,
            rows as i64 - 1,
            "the last row, in the last block, is itself"
        );
        for t in &top {
            let (id, s) = (t.id.0 as usize, t.score);
            let row = &data[id * dim..(id + 1) * dim];
            assert!((dot(row, &q) as f64 - s).abs() < 1e-3, "{id}: {s}");
        }
    }

    #[test]
    fn dot_handles_tails() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        assert_eq!(dot(&a, &a), (0..19).map(|i| (i * i) as f32).sum::<f32>());
    }
}
