//! `cairn eval`: score search on a labelled retrieval set.
//!
//! Format (see `shared/eval/README.md`): `corpus/**/<doc-id>.md`,
//! `queries.jsonl` (`{"id","text"}` per line) and `qrels.tsv`
//! (`query-id<TAB>doc-id<TAB>relevance` after a header). Chunks are collapsed to
//! their document (best-ranked chunk wins) before scoring. When a query id has
//! the form `<group>_q…` and `corpus/<group>/` exists (LoCoMo's conversations),
//! the query searches only that folder, as the dataset's published numbers do.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cairn_core::Embedder;
use serde::Serialize;

use cairn::{Config, Engine, Error, IndexReport, Mode, Progress, Result, SearchOptions};

/// How to run an evaluation.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// Where the eval's own index lives.
    pub index_path: PathBuf,
    /// Delete that index first (measures a cold index, embeddings included).
    pub fresh: bool,
    /// Retrievers to score.
    pub modes: Vec<Mode>,
    /// Use only the first `n` queries (0 = all).
    pub max_queries: usize,
    /// Engine settings.
    pub config: Config,
}

/// Scores of one retrieval mode.
#[derive(Clone, Debug, Serialize)]
pub struct ModeScores {
    /// The mode.
    pub mode: Mode,
    /// Whether the graph retriever took part (hybrid only). A hybrid run on
    /// an index with links is scored twice, with and without it.
    pub graph: bool,
    /// Mean nDCG@10 (binary gains).
    pub ndcg_at_10: f64,
    /// Mean Recall@1.
    pub recall_at_1: f64,
    /// Mean Recall@5.
    pub recall_at_5: f64,
    /// Mean Recall@10.
    pub recall_at_10: f64,
    /// Mean Recall@100.
    pub recall_at_100: f64,
    /// Mean reciprocal rank of the first relevant document within 10.
    pub mrr_at_10: f64,
    /// Median time to rank 400 candidates per query for the scores above
    /// (query embedding included), in milliseconds.
    pub p50_ms: f64,
    /// 95th percentile query time in milliseconds.
    pub p95_ms: f64,
}

/// An evaluation's results.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// The dataset folder.
    pub dataset: PathBuf,
    /// Queries scored.
    pub queries: usize,
    /// Model id used for vectors, if any.
    pub model: Option<String>,
    /// The indexing run of this evaluation.
    pub index: IndexReport,
    /// Chunks in the index.
    pub chunks: u64,
    /// Chunks written per second of index wall time.
    pub chunks_per_sec: f64,
    /// Scores per mode.
    pub modes: Vec<ModeScores>,
    /// Latency of a default search (hybrid when a model is loaded, limit 5,
    /// query embedding included): median, milliseconds.
    pub search_p50_ms: f64,
    /// The same, 95th percentile.
    pub search_p95_ms: f64,
}

struct Query {
    id: String,
    text: String,
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn load_queries(path: &Path) -> Result<Vec<Query>> {
    let mut out = Vec::new();
    for (n, line) in read(path)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| Error::Eval {
            path: path.to_path_buf(),
            message: format!("line {}: {e}", n + 1),
        })?;
        let field = |k: &str| {
            v.get(k).and_then(|x| {
                x.as_str()
                    .map(str::to_string)
                    .or_else(|| x.as_i64().map(|i| i.to_string()))
            })
        };
        match (field("id"), field("text")) {
            (Some(id), Some(text)) => out.push(Query { id, text }),
            _ => {
                return Err(Error::Eval {
                    path: path.to_path_buf(),
                    message: format!("line {}: needs string fields id and text", n + 1),
                });
            }
        }
    }
    Ok(out)
}

fn load_qrels(path: &Path) -> Result<HashMap<String, HashSet<String>>> {
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    for (n, line) in read(path)?.lines().enumerate().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 3 {
            if line.trim().is_empty() {
                continue;
            }
            return Err(Error::Eval {
                path: path.to_path_buf(),
                message: format!("line {}: expected 3 columns", n + 1),
            });
        }
        if cols[2].trim().parse::<i64>().unwrap_or(0) > 0 {
            out.entry(cols[0].to_string())
                .or_default()
                .insert(cols[1].to_string());
        }
    }
    Ok(out)
}

/// nDCG@10 with binary gains.
fn ndcg_at_10(ranked: &[String], relevant: &HashSet<String>) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, d)| relevant.contains(*d))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(10))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    if ideal == 0.0 { 0.0 } else { dcg / ideal }
}

fn recall_at(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    ranked
        .iter()
        .take(k)
        .filter(|d| relevant.contains(*d))
        .count() as f64
        / relevant.len() as f64
}

fn mrr_at_10(ranked: &[String], relevant: &HashSet<String>) -> f64 {
    ranked
        .iter()
        .take(10)
        .position(|d| relevant.contains(d))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Indexes `dir/corpus` into its own SQLite index (`opts.index_path`) and
/// scores every query.
pub fn run_eval(
    dir: &Path,
    embedder: Option<Arc<dyn Embedder>>,
    opts: &EvalOptions,
    progress: &dyn Progress,
) -> Result<EvalReport> {
    if opts.fresh {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", opts.index_path.display()));
        }
    }
    let open = |corpus: &Path| {
        Engine::open_at(
            corpus,
            &opts.index_path,
            opts.config.clone(),
            embedder.clone(),
        )
    };
    run_eval_on(dir, &open, opts, progress)
}

/// [`run_eval`] on an engine `open` makes for the corpus folder (any
/// storage backend).
pub fn run_eval_on(
    dir: &Path,
    open: &dyn Fn(&Path) -> Result<Engine>,
    opts: &EvalOptions,
    progress: &dyn Progress,
) -> Result<EvalReport> {
    let corpus = dir.join("corpus");
    if !corpus.is_dir() {
        return Err(Error::Eval {
            path: corpus,
            message: "no corpus/ folder".into(),
        });
    }
    let mut queries = load_queries(&dir.join("queries.jsonl"))?;
    let qrels = load_qrels(&dir.join("qrels.tsv"))?;
    queries.retain(|q| qrels.contains_key(&q.id));
    if opts.max_queries > 0 {
        queries.truncate(opts.max_queries);
    }
    // Code files are documents too (an eval set may hold a whole project).
    let corpus = corpus.canonicalize().map_err(|source| Error::Io {
        path: corpus.clone(),
        source,
    })?;
    let engine = open(&corpus)?;
    let index = engine.index(std::slice::from_ref(&corpus), progress)?;
    let status = engine.status()?;

    let has_graph = opts.config.search.graph_weight > 0.0 && engine.graph_edges()? > 0;
    let mut runs = Vec::new();
    for &mode in &opts.modes {
        if mode == Mode::Hybrid && has_graph {
            runs.push((mode, true));
        }
        runs.push((mode, false));
    }
    let mut modes = Vec::new();
    for (mode, graph) in runs {
        if mode != Mode::Bm25 && engine.embedder().is_none() {
            tracing::warn!("no model: skipping {mode:?}");
            continue;
        }
        engine.clear_query_cache();
        let label = match (mode, graph) {
            (Mode::Hybrid, true) => "eval hybrid".to_string(),
            (Mode::Hybrid, false) if has_graph => "eval hybrid, no graph".to_string(),
            _ => format!("eval {mode:?}").to_lowercase(),
        };
        progress.stage(&label, queries.len() as u64);
        let (mut ndcg, mut r1, mut r5, mut r10, mut r100, mut mrr) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let mut times = Vec::with_capacity(queries.len());
        for q in &queries {
            let relevant = &qrels[&q.id];
            let prefix =
                q.id.split_once("_q")
                    .map(|(group, _)| format!("{group}/"))
                    .filter(|g| corpus.join(g).is_dir());
            let search = SearchOptions {
                path_prefix: prefix,
                mode,
                no_graph: !graph,
                ..Default::default()
            };
            let t = Instant::now();
            // Over-fetch chunks so that 100 distinct documents survive the collapse.
            let ranked = engine.ranked_paths(&q.text, &search, 400, 400)?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            let mut docs: Vec<String> = Vec::with_capacity(100);
            let mut seen = HashSet::new();
            for path in ranked {
                let id = path.strip_suffix(".md").unwrap_or(&path).to_string();
                if seen.insert(id.clone()) {
                    docs.push(id);
                    if docs.len() == 100 {
                        break;
                    }
                }
            }
            ndcg += ndcg_at_10(&docs, relevant);
            r1 += recall_at(&docs, relevant, 1);
            r5 += recall_at(&docs, relevant, 5);
            r10 += recall_at(&docs, relevant, 10);
            r100 += recall_at(&docs, relevant, 100);
            mrr += mrr_at_10(&docs, relevant);
            progress.inc(1);
        }
        progress.finish();
        times.sort_by(f64::total_cmp);
        let n = queries.len().max(1) as f64;
        modes.push(ModeScores {
            mode,
            graph,
            ndcg_at_10: ndcg / n,
            recall_at_1: r1 / n,
            recall_at_5: r5 / n,
            recall_at_10: r10 / n,
            recall_at_100: r100 / n,
            mrr_at_10: mrr / n,
            p50_ms: percentile(&times, 0.5),
            p95_ms: percentile(&times, 0.95),
        });
    }
    // What a user waits for: a default search, not the deep lists scored above.
    engine.clear_query_cache();
    let mut times = Vec::with_capacity(queries.len());
    for q in &queries {
        let t = Instant::now();
        engine.search(&q.text, &SearchOptions::default())?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);

    Ok(EvalReport {
        search_p50_ms: percentile(&times, 0.5),
        search_p95_ms: percentile(&times, 0.95),
        dataset: dir.to_path_buf(),
        queries: queries.len(),
        model: engine.embedder().map(|e| e.model_id().to_string()),
        chunks_per_sec: if index.seconds > 0.0 {
            index.chunks_written as f64 / index.seconds
        } else {
            0.0
        },
        chunks: status.chunks,
        index,
        modes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }
    fn list(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn metrics_match_hand_computed_values() {
        let rel = set(&["a", "b"]);
        let ranked = list(&["x", "a", "y", "b"]);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!((ndcg_at_10(&ranked, &rel) - dcg / idcg).abs() < 1e-12);
        assert_eq!(recall_at(&ranked, &rel, 2), 0.5);
        assert_eq!(recall_at(&ranked, &rel, 10), 1.0);
        assert_eq!(mrr_at_10(&ranked, &rel), 0.5);
        assert_eq!(ndcg_at_10(&list(&["a", "b"]), &rel), 1.0);
        assert_eq!(ndcg_at_10(&list(&["z"]), &rel), 0.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.5), 3.0);
    }
}
