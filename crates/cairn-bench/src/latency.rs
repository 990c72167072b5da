//! `cairn bench recall` and `cairn bench embed`: how long an agent waits —
//! `recall` over N synthetic memories (query embedding included), and the
//! embedding model's throughput per kernel path plus short-query latency.

use std::path::Path;
use std::time::Instant;

use cairn::{Config, MemoryInput, Progress, RecallOptions};
use cairn_core::Embedder;
use cairn_embed::{
    FetchProgress, KernelPath, MiniLm, MiniLmOptions, ModelSpec, Precision, fetch_model,
};
use serde::Serialize;

use crate::{Error, Result};

/// Figures of `bench recall`.
#[derive(Clone, Debug, Serialize)]
pub struct RecallBench {
    /// Memories in the project.
    pub memories: usize,
    /// Recalls timed.
    pub recalls: usize,
    /// Median recall, milliseconds.
    pub p50_ms: f64,
    /// 95th percentile, milliseconds.
    pub p95_ms: f64,
    /// The embedding model, if any.
    pub model: Option<String>,
}

/// Times `queries` recalls over `n` synthetic memories kept in `dir` (built
/// on the first run, reused after).
pub fn run_recall_bench<P: Progress + FetchProgress>(
    dir: &Path,
    n: usize,
    queries: usize,
    progress: &P,
) -> Result<RecallBench> {
    std::fs::create_dir_all(dir).map_err(|e| Error::WorkDir {
        path: dir.to_path_buf(),
        message: format!("creating: {e}"),
    })?;
    let config = Config::default();
    let engine = cairn::Open::new(dir, &config).progress(progress).engine()?;
    let have = engine.status()?.files as usize;
    if have != n {
        if have > 0 {
            return Err(Error::WorkDir {
                path: dir.to_path_buf(),
                message: format!("holds {have} memories, not {n}: delete it to rebuild"),
            });
        }
        let t = Instant::now();
        let inputs: Vec<MemoryInput> = cairn_embed::synthetic_prose(n, 160, 11)
            .into_iter()
            .enumerate()
            .map(|(i, text)| MemoryInput {
                text: format!("{text} (note {i})"),
                kind: Some("fact".into()),
                importance: Some((i % 10 + 1) as u8),
                client: "bench".into(),
                ..MemoryInput::default()
            })
            .collect();
        engine.import_memories(&inputs, progress)?;
        tracing::info!("built {n} memories in {:.1} s", t.elapsed().as_secs_f64());
    }
    let qs = cairn_embed::synthetic_prose(queries.max(1), 60, 97);
    let mut times: Vec<f64> = Vec::with_capacity(qs.len());
    for q in &qs {
        let t = Instant::now();
        engine.recall(q, &RecallOptions::default())?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    Ok(RecallBench {
        memories: n,
        recalls: times.len(),
        p50_ms: pct(0.5),
        p95_ms: pct(0.95),
        model: engine.embedder().map(|e| e.model_id().to_string()),
    })
}

/// One kernel path's figures in `bench embed`.
#[derive(Clone, Debug, Serialize)]
pub struct EmbedBench {
    /// The kernel path.
    pub kernel: String,
    /// `fp32` or `int8`.
    pub precision: String,
    /// In int8, the integer path of the linear layers.
    pub int8_kernel: Option<String>,
    /// The model id.
    pub model: String,
    /// Chunks embedded.
    pub chunks: usize,
    /// Characters per chunk (synthetic prose; the mean for an index's texts).
    pub chars_per_chunk: usize,
    /// Mean tokens per chunk.
    pub avg_tokens: f64,
    /// Worker threads.
    pub threads: usize,
    /// Seconds for all chunks.
    pub seconds: f64,
    /// Throughput.
    pub chunks_per_sec: f64,
    /// Median latency of a short query, milliseconds.
    pub query_median_ms: f64,
}

/// The texts an index pass embeds for the index file at `path`: each
/// distinct chunk embed text once (as the embedding cache keys them), the
/// first `limit` (0: all). `bench embed --index` times the model on exactly
/// these, so an index pass's throughput compares with the kernel's own on the
/// same chunks.
fn index_texts(path: &Path, limit: usize) -> Result<Vec<String>> {
    use cairn_core::IndexWriter;
    if !path.is_file() {
        return Err(Error::WorkDir {
            path: path.to_path_buf(),
            message: "no index file here (an index is `.cairn/index.sqlite` in a project)".into(),
        });
    }
    let store = cairn_store::Store::open(path).map_err(|e| Error::WorkDir {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    // No model has this id, so every chunk counts as without a vector.
    let limit = if limit == 0 { usize::MAX >> 1 } else { limit };
    let rows = store
        .unembedded("cairn-bench: no model", "", limit, None)
        .map_err(|e| Error::WorkDir {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    if rows.is_empty() {
        return Err(Error::WorkDir {
            path: path.to_path_buf(),
            message: "the index holds no chunks".into(),
        });
    }
    Ok(rows.into_iter().map(|(_, c)| c.embed_text()).collect())
}

/// What `bench embed` runs.
#[derive(Clone, Debug)]
pub struct EmbedBenchOptions<'a> {
    /// Chunks to embed (with `index`: the most taken from it, 0 = all).
    pub chunks: usize,
    /// Characters per synthetic chunk.
    pub chars: usize,
    /// Embed this index file's chunk texts instead of synthetic prose.
    pub index: Option<&'a Path>,
    /// Or the texts of this JSON file (an array of strings), so another
    /// runtime can be timed on exactly the same inputs.
    pub texts: Option<&'a Path>,
    /// The model (its pooling and query prefix; 256 tokens, as `[embed]
    /// max_tokens` defaults for every model).
    pub model: ModelSpec,
    /// Kernel paths to time.
    pub paths: &'a [KernelPath],
    /// Precisions to time on each path.
    pub precisions: &'a [Precision],
    /// Worker threads (default: one per core).
    pub threads: Option<usize>,
}

/// The first `limit` (0: all) texts of a JSON file holding an array of strings.
fn file_texts(path: &Path, limit: usize) -> Result<Vec<String>> {
    let bad = |message: String| Error::WorkDir {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("reading: {e}")))?;
    let mut texts: Vec<String> = serde_json::from_str(&text)
        .map_err(|e| bad(format!("expected a JSON array of strings: {e}")))?;
    if limit > 0 {
        texts.truncate(limit);
    }
    if texts.is_empty() {
        return Err(bad("holds no texts".into()));
    }
    Ok(texts)
}

/// Embeds `chunks` synthetic prose chunks of `chars` characters (or the
/// chunk texts of an index file) on each kernel path in each precision,
/// then times a short query 50 times.
pub fn run_embed_bench(
    o: &EmbedBenchOptions<'_>,
    progress: &dyn FetchProgress,
) -> Result<Vec<EmbedBench>> {
    let (chars, index) = (o.chars, o.index);
    let loc = fetch_model(&o.model, progress)?;
    let texts = match (index, o.texts) {
        (Some(path), _) => index_texts(path, o.chunks)?,
        (None, Some(path)) => file_texts(path, o.chunks)?,
        (None, None) => cairn_embed::synthetic_prose(o.chunks.max(1), chars, 42),
    };
    let given = index.is_some() || o.texts.is_some();
    let query = "how long do sessions stay cached?";
    let mut rows = Vec::new();
    let runs = o
        .paths
        .iter()
        .flat_map(|&p| o.precisions.iter().map(move |&q| (p, q)));
    for (path, precision) in runs {
        let opts = MiniLmOptions {
            kernel: Some(path),
            precision,
            threads: o.threads.unwrap_or(MiniLmOptions::default().threads).max(1),
            max_tokens: MiniLmOptions::default().max_tokens,
            ..MiniLmOptions::for_model(&o.model)
        };
        let threads = opts.threads;
        let model = MiniLm::load(&loc, opts)?;
        let seqs = texts
            .iter()
            .map(|t| model.tokenize(t))
            .collect::<Result<Vec<_>, _>>()?;
        let avg_tokens = seqs.iter().map(Vec::len).sum::<usize>() as f64 / seqs.len() as f64;
        model.embed_tokens(&seqs[..1]); // warm up
        let t = Instant::now();
        model.embed_tokens(&seqs);
        let secs = t.elapsed().as_secs_f64();
        let _ = model.embed(&[query]);
        let mut times: Vec<f64> = (0..50)
            .map(|_| {
                let t = Instant::now();
                let _ = model.embed(&[query]);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        rows.push(EmbedBench {
            kernel: path.name().to_string(),
            precision: precision.name().to_string(),
            int8_kernel: model.int8_kernel().map(|p| p.name().to_string()),
            model: model.model_id().to_string(),
            chunks: seqs.len(),
            chars_per_chunk: if given {
                texts.iter().map(String::len).sum::<usize>() / texts.len().max(1)
            } else {
                chars
            },
            avg_tokens,
            threads,
            seconds: secs,
            chunks_per_sec: seqs.len() as f64 / secs,
            query_median_ms: times[times.len() / 2],
        });
    }
    Ok(rows)
}
