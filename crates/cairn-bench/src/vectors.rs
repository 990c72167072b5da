//! `cairn bench vectors`: nearest-neighbour search at scale on any backend,
//! through the same storage calls search makes. The corpus is synthetic and
//! its answers are known: random unit vectors, plus, for each query vector,
//! `planted` near-duplicates of it (cosine 0.974–0.999) that must come back as
//! its top 10; random 384-d unit vectors sit near cosine 0 (σ ≈ 0.05) of one
//! another, so nothing else comes close. SQLite answers by loading the matrix
//! and scanning it exactly; PostgreSQL answers on its HNSW index.

use std::time::Instant;

use cairn_core::{Change, Chunk, DocWrite, IndexWriter, WriteBatch, content_hash};
use cairn_search::{SplitMix64, VectorIndex};
use serde::Serialize;

use cairn::{Progress, Result};

/// What to generate.
#[derive(Clone, Debug)]
pub struct VectorBenchOptions {
    /// Vectors in the corpus, planted ones included.
    pub vectors: usize,
    /// Query vectors (each with its planted neighbours).
    pub queries: usize,
    /// Near-duplicates planted per query.
    pub planted: usize,
    /// Vector length.
    pub dim: usize,
    /// Neighbours asked per query.
    pub k: usize,
}

impl VectorBenchOptions {
    /// A name for the corpus these options generate (the queries decide
    /// where the planted rows sit, so they are part of it).
    pub fn corpus_name(&self) -> String {
        format!(
            "{BENCH_MODEL}-{}-{}-q{}x{}",
            self.vectors, self.dim, self.queries, self.planted
        )
    }
}

impl Default for VectorBenchOptions {
    fn default() -> Self {
        VectorBenchOptions {
            vectors: 1_000_000,
            queries: 1_000,
            planted: 10,
            dim: 384,
            k: 10,
        }
    }
}

/// Figures of one run.
#[derive(Clone, Debug, Serialize)]
pub struct VectorBench {
    /// Where the index lives.
    pub store: String,
    /// Vectors in the corpus.
    pub vectors: usize,
    /// Vector length.
    pub dim: usize,
    /// Queries asked.
    pub queries: usize,
    /// Neighbours asked per query.
    pub k: usize,
    /// Seconds to write the corpus (0 when it was already there).
    pub load_s: f64,
    /// Seconds to build the backend's vector index (0 when it has none or it existed).
    pub build_s: f64,
    /// Seconds for the first query (SQLite: loading the matrix into memory).
    pub first_query_s: f64,
    /// Mean share of the planted neighbours in each query's top k.
    pub recall_at_k: f64,
    /// Median query time, milliseconds (first query excluded).
    pub p50_ms: f64,
    /// 95th-percentile query time, milliseconds (first query excluded).
    pub p95_ms: f64,
    /// Resident memory of this process after the queries, MiB.
    pub rss_mib: f64,
    /// Peak resident memory of this process, MiB.
    pub peak_rss_mib: f64,
    /// Whether the backend answered on its own index (else: exact scan).
    pub backend_index: bool,
}

/// The model name the synthetic vectors are stored under (bumped with the
/// generator, so a kept corpus of another generator is never reused).
pub const BENCH_MODEL: &str = "bench-planted2";

const DOC_ROWS: usize = 1_000;
const BATCH_DOCS: usize = 10;

struct Corpus<'a> {
    o: &'a VectorBenchOptions,
    stride: usize,
}

impl Corpus<'_> {
    fn gaussian_unit(rng: &mut SplitMix64, dim: usize) -> Vec<f32> {
        let mut v = Vec::with_capacity(dim);
        while v.len() < dim {
            // Box–Muller: two uniform draws give two independent normals.
            let u1 = rng.unit().max(f64::MIN_POSITIVE);
            let u2 = rng.unit();
            let r = (-2.0 * u1.ln()).sqrt();
            let t = std::f64::consts::TAU * u2;
            v.push((r * t.cos()) as f32);
            if v.len() < dim {
                v.push((r * t.sin()) as f32);
            }
        }
        normalize(&mut v);
        v
    }

    fn query(&self, j: usize) -> Vec<f32> {
        let mut rng = SplitMix64(0x51ED_0000_0000 ^ (j as u64).wrapping_mul(0x9E37_79B9));
        Self::gaussian_unit(&mut rng, self.o.dim)
    }

    /// Which query row `i` was planted for, and as which neighbour.
    fn planted_for(&self, i: usize) -> Option<(usize, usize)> {
        let (j, t) = (i / self.stride, i % self.stride);
        (j < self.o.queries && t < self.o.planted).then_some((j, t))
    }

    fn row(&self, i: usize) -> Vec<f32> {
        let mut rng = SplitMix64(0xC0_FFEE ^ (i as u64).wrapping_mul(0xD134_2543_DE82_EF95));
        let noise = Self::gaussian_unit(&mut rng, self.o.dim);
        match self.planted_for(i) {
            Some((j, t)) => {
                // Noise of norm 0.05…0.23 around the query: cosine
                // 0.999…0.974, near-duplicates of it.
                let eps = 0.05 + 0.02 * t as f32;
                let mut v: Vec<f32> = self
                    .query(j)
                    .iter()
                    .zip(&noise)
                    .map(|(q, n)| q + eps * n)
                    .collect();
                normalize(&mut v);
                v
            }
            None => noise,
        }
    }
}

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

fn chunk_text(i: usize) -> String {
    format!("synthetic vector {i}")
}

/// `(current, peak)` resident memory of this process in MiB (0 where
/// `/proc` is missing).
fn rss_mib() -> (f64, f64) {
    let mib = |field| crate::proc_status_kib("self", field).map_or(0.0, |kb| kb as f64 / 1024.0);
    (mib("VmRSS"), mib("VmHWM"))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The SQLite index at `path` as a bare storage backend (created if missing).
pub fn sqlite_writer(path: &std::path::Path) -> Result<Box<dyn IndexWriter>> {
    Ok(Box::new(cairn_store::Store::open(path)?))
}

/// Loads the corpus into `store` unless it is already there, builds the
/// backend's vector index, and times `queries` top-k searches.
pub fn run_vector_bench(
    mut store: Box<dyn IndexWriter>,
    o: &VectorBenchOptions,
    progress: &dyn Progress,
) -> Result<VectorBench> {
    let stride = (o.vectors / o.queries.max(1)).max(1);
    if stride < o.planted || o.k == 0 {
        return Err(cairn::Error::Query(format!(
            "bench vectors: {} vectors cannot hold {} queries × {} planted neighbours",
            o.vectors, o.queries, o.planted
        )));
    }
    let corpus = Corpus { o, stride };
    let model = format!("{BENCH_MODEL}-{}", o.dim);
    let docs = o.vectors.div_ceil(DOC_ROWS);

    // 1. Load, unless an earlier run left the same corpus.
    let present = {
        let mut reader = store.reader()?;
        let snap = reader.snapshot()?;
        let s = snap.stats(Some(&model))?;
        s.files == docs as u64 && s.embedded_chunks == o.vectors as u64
    };
    let mut load_s = 0.0;
    if !present {
        let started = Instant::now();
        progress.stage("writing vectors", o.vectors as u64);
        let mut doc = 0;
        while doc < docs {
            let mut batch = WriteBatch {
                model: Some((model.clone(), o.dim)),
                ..WriteBatch::default()
            };
            for d in doc..(doc + BATCH_DOCS).min(docs) {
                let path = format!("bench/{d:05}.md");
                let rows = d * DOC_ROWS..((d + 1) * DOC_ROWS).min(o.vectors);
                let mut chunks = Vec::with_capacity(rows.len());
                for i in rows {
                    let c = Chunk::new(&path, vec![], 0, 1, 1, chunk_text(i));
                    let v = corpus.row(i);
                    batch
                        .embeddings
                        .push((content_hash(c.embed_text().as_bytes()), v));
                    chunks.push(c);
                }
                batch.changes.push(Change::Upsert(DocWrite {
                    hash: content_hash(path.as_bytes()),
                    path,
                    mtime_ns: 0,
                    size: 0,
                    pipeline: String::new(),
                    title: None,
                    tags: vec![],
                    domain: "bench".into(),
                    meta: "{}".into(),
                    chunks,
                    links: vec![],
                    source: None,
                }));
            }
            let n = batch.embeddings.len();
            store.write(&batch)?;
            progress.inc(n as u64);
            doc += BATCH_DOCS;
        }
        progress.finish();
        load_s = started.elapsed().as_secs_f64();
    }

    // 2. The backend's own index, if it keeps one.
    let started = Instant::now();
    store.index_vectors(o.dim)?;
    store.optimize()?;
    let build_s = started.elapsed().as_secs_f64();

    // 3. Queries: one snapshot each, as a search opens one.
    let mut reader = store.reader()?;
    let mut matrix: Option<VectorIndex> = None;
    let mut times = Vec::with_capacity(o.queries);
    let mut first_query_s = 0.0;
    let mut found = 0usize;
    let mut backend_index = false;
    progress.stage("querying", o.queries as u64);
    for j in 0..o.queries {
        let q = corpus.query(j);
        let started = Instant::now();
        let snap = reader.snapshot()?;
        let hits = match snap.vector_top_k(&model, &q, o.k, None)? {
            Some(h) => {
                backend_index = true;
                h
            }
            None => {
                if matrix.is_none() {
                    let set = snap.vectors(&model)?;
                    matrix = Some(VectorIndex::new(set.rowids, set.paths, set.data, set.dim));
                }
                matrix
                    .as_ref()
                    .map_or_else(Vec::new, |m| m.top_k(&q, o.k, None))
            }
        };
        let secs = started.elapsed().as_secs_f64();
        if j == 0 {
            first_query_s = secs;
        } else {
            times.push(secs * 1e3);
        }
        // Score outside the clock: which rows came back?
        let ids: Vec<i64> = hits.iter().map(|h| h.id.0).collect();
        for row in snap.chunks(&ids)? {
            let i = row
                .chunk
                .text
                .strip_prefix("synthetic vector ")
                .and_then(|n| n.parse::<usize>().ok());
            if let Some(i) = i
                && corpus.planted_for(i).is_some_and(|(pj, _)| pj == j)
            {
                found += 1;
            }
        }
        progress.inc(1);
    }
    progress.finish();
    times.sort_by(f64::total_cmp);
    let (rss, peak) = rss_mib();
    Ok(VectorBench {
        store: store.location(),
        vectors: o.vectors,
        dim: o.dim,
        queries: o.queries,
        k: o.k,
        load_s,
        build_s,
        first_query_s,
        recall_at_k: found as f64 / (o.queries * o.planted.min(o.k)).max(1) as f64,
        p50_ms: percentile(&times, 0.5),
        p95_ms: percentile(&times, 0.95),
        rss_mib: rss,
        peak_rss_mib: peak,
        backend_index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_rows_are_near_their_query_and_nothing_else_is() {
        let o = VectorBenchOptions {
            vectors: 2_000,
            queries: 20,
            planted: 10,
            dim: 384,
            k: 10,
        };
        let c = Corpus { o: &o, stride: 100 };
        let q = c.query(3);
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        for t in 0..10 {
            let s = dot(&q, &c.row(300 + t));
            assert!((0.97..1.0).contains(&s), "planted {t}: {s}");
        }
        for i in (0..2_000).filter(|i| c.planted_for(*i).is_none_or(|(j, _)| j != 3)) {
            assert!(dot(&q, &c.row(i)).abs() < 0.4, "row {i}");
        }
        assert_eq!(c.planted_for(305), Some((3, 5)));
        assert_eq!(c.planted_for(315), None);
    }

    #[test]
    fn exact_scan_on_sqlite_finds_every_planted_neighbour() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = cairn_store::Store::open(&dir.path().join("v.sqlite")).expect("store");
        let o = VectorBenchOptions {
            vectors: 3_000,
            queries: 30,
            planted: 10,
            dim: 128,
            k: 10,
        };
        let b = run_vector_bench(Box::new(store), &o, &cairn::NoProgress).expect("bench");
        assert!((b.recall_at_k - 1.0).abs() < 1e-9, "{b:?}");
        assert!(!b.backend_index);
        assert!(b.load_s > 0.0);
    }
}
