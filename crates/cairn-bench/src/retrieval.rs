//! `cairn eval`: score search on a labelled retrieval set.
//!
//! Format (see `shared/eval/README.md`): `corpus/**/<doc-id>.md`,
//! `queries.jsonl` (`{"id","text"}` per line) and `qrels.tsv`
//! (`query-id<TAB>doc-id<TAB>relevance` after a header). Chunks are collapsed to
//! their document (best-ranked chunk wins) before scoring. When a query id has
//! the form `<group>_q…` and `corpus/<group>/` exists (LoCoMo's conversations,
//! the projects of `eval/code-qa`), the query searches only that folder, as the
//! dataset's published numbers do, and its scores are also reported per group.
//!
//! Code files are documents too: a hit's doc-id is its path relative to
//! `corpus/`, less `.md` for markdown. `qrels.tsv` may have a fourth column,
//! `lines` (`120-168`, `42`, `30-36,63-89`; empty = the whole file): the part
//! of the document that answers. A chunk-level hit is a returned chunk of a
//! labelled document whose lines overlap a labelled range (any chunk of it
//! when the label has no lines).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cairn_core::Embedder;
use serde::Serialize;

use cairn::{
    Config, Engine, Error, IndexReport, Mode, Progress, RankedChunk, Result, SearchOptions,
};
use cairn_search::Floor;

use crate::confidence::{ConfidenceRow, Samples};
use crate::floors::{FLOOR_DEPTH, FloorScores, grid};

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
    /// Also measure what `search`'s relevance floors drop from the first 10
    /// hits ([`crate::FloorScores`]).
    pub floors: bool,
    /// Keep each query's outcome in [`ModeScores::queries`].
    pub per_query: bool,
    /// With `floors`: prompts nothing in the corpus answers, for the
    /// confidence table ([`crate::off_topic_for`] picks them by the set).
    pub off_topic: Vec<String>,
    /// Score only the queries of this half of the set (`tune`, `test`), as
    /// `split.tsv` beside `queries.jsonl` assigns the query groups to halves.
    pub split: Option<String>,
    /// Score only the hybrid ranking, without the cross-encoder and with
    /// it at each of [`RERANK_VARIANTS`] (rows labelled in
    /// [`ModeScores::rerank`]).
    pub rerank: bool,
}

/// The reranked rows of an eval with [`EvalOptions::rerank`]: (k, blend).
/// The first row of each k times the reranker over k from a cleared query
/// cache; the row after it (the other blend) reuses its scores, so its
/// latency columns are not the reranker's.
pub const RERANK_VARIANTS: [(usize, cairn::RerankBlend); 4] = [
    (20, cairn::RerankBlend::Rerank),
    (20, cairn::RerankBlend::Rrf),
    (10, cairn::RerankBlend::Rerank),
    (10, cairn::RerankBlend::Rrf),
];

/// One query's outcome, for finding what a mode misses.
#[derive(Clone, Debug, Serialize)]
pub struct QueryOutcome {
    /// The query id.
    pub id: String,
    /// The query.
    pub text: String,
    /// Rank (1-based) of the first relevant document, if within 100.
    pub first_relevant: Option<usize>,
    /// Whether one of the first 5 chunks answers (see `chunk_hit_at_5`).
    pub chunk_hit: bool,
    /// The first 3 documents returned, each with its best chunk's lines.
    pub top: Vec<String>,
}

/// Scores of one retrieval mode.
#[derive(Clone, Debug, Serialize)]
pub struct ModeScores {
    /// The mode.
    pub mode: Mode,
    /// Whether the graph retriever took part (hybrid only). A hybrid run on
    /// an index with links is scored twice, with and without it.
    pub graph: bool,
    /// When the cross-encoder reranked the top: `k<k> <blend>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<String>,
    /// Mean nDCG@10 (binary gains).
    pub ndcg_at_10: f64,
    /// Mean distinct files among the first 5 chunks a search shows.
    pub files_at_5: f64,
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
    /// Share of queries whose first document is relevant.
    pub file_hit_at_1: f64,
    /// Share of queries with a relevant document among the first 5.
    pub file_hit_at_5: f64,
    /// Share of queries with, among the first 5 chunks (not collapsed), one
    /// from a relevant document whose lines overlap a labelled range (any
    /// chunk of the document when its label has no lines).
    pub chunk_hit_at_5: f64,
    /// The same for the first chunk alone: on a set of names labelled with
    /// their definitions' lines (`eval/names`), definition@1.
    pub chunk_hit_at_1: f64,
    /// The same scores per query group (`<group>_q…` ids whose group is a
    /// folder of `corpus/`), by group name; empty when the set has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupScores>,
    /// The same scores per half of the set (`tune`, `test`), as `split.tsv`
    /// assigns the groups; empty when the set has no split.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub halves: Vec<GroupScores>,
    /// Per language (`split.tsv`'s third column).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<GroupScores>,
    /// Per intent, where `queries.jsonl` labels it (`"intent"`): each
    /// label (`behaviour`, `use`), then each label by what the ranking
    /// reads from the words ([`cairn_search::Intent::of`]: `use, read
    /// unknown` …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intents: Vec<GroupScores>,
    /// Median time to rank a query as `search --limit 10` does (lists of
    /// [`cairn::Engine::search_depth`]), query embedding included, in
    /// milliseconds.
    pub p50_ms: f64,
    /// 95th percentile query time in milliseconds.
    pub p95_ms: f64,
    /// Each query's outcome, when asked for ([`EvalOptions::per_query`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<QueryOutcome>,
}

/// Scores of one query group (a project of a code set, a LoCoMo conversation).
#[derive(Clone, Debug, Serialize)]
pub struct GroupScores {
    /// The group: the query-id prefix before `_q`, a half, a language or
    /// an intent.
    pub group: String,
    /// Queries in the group.
    pub queries: usize,
    /// Mean nDCG@10.
    pub ndcg_at_10: f64,
    /// Mean Recall@10.
    pub recall_at_10: f64,
    /// Mean reciprocal rank within 10.
    pub mrr_at_10: f64,
    /// Share of queries whose first document is relevant.
    pub file_hit_at_1: f64,
    /// Share of queries with a relevant document among the first 5.
    pub file_hit_at_5: f64,
    /// Chunk-level hit@5, as [`ModeScores::chunk_hit_at_5`].
    pub chunk_hit_at_5: f64,
    /// Chunk-level hit@1, as [`ModeScores::chunk_hit_at_1`].
    pub chunk_hit_at_1: f64,
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
    /// Chunks written or embedded (the larger: a run that only re-embeds,
    /// after a model change, writes none) per second of index wall time.
    pub chunks_per_sec: f64,
    /// Scores per mode.
    pub modes: Vec<ModeScores>,
    /// Latency of a default search (hybrid when a model is loaded, limit 5,
    /// query embedding included): median, milliseconds.
    pub search_p50_ms: f64,
    /// The same, 95th percentile.
    pub search_p95_ms: f64,
    /// With `floors`: what each floor setting drops from the first 10 hits
    /// of a search (floors off, then the configured setting, then the grid).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub floors: Vec<FloorScores>,
    /// With `floors`: on-topic and off-topic answers judged confident at
    /// each similarity floor (empty without a model).
    pub confidence: Vec<ConfidenceRow>,
}

struct Query {
    id: String,
    text: String,
    /// What the question's writer says it asks (`"intent"`: `behaviour`,
    /// `use`), where the set labels it.
    intent: Option<String>,
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
            (Some(id), Some(text)) => out.push(Query {
                id,
                text,
                intent: field("intent"),
            }),
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

/// Inclusive, 1-based line ranges of a document that answer a query;
/// `None` when the whole document does.
type Lines = Option<Vec<(u32, u32)>>;

/// One query's relevant documents and, for each, the lines that answer.
#[derive(Clone, Debug, Default, PartialEq)]
struct Labels {
    docs: HashMap<String, Lines>,
}

impl Labels {
    fn doc_ids(&self) -> HashSet<String> {
        self.docs.keys().cloned().collect()
    }

    /// Adds a label; a whole-file label absorbs line ranges of the same file.
    fn add(&mut self, doc: &str, lines: Lines) {
        match (self.docs.get_mut(doc), lines) {
            (None, lines) => {
                self.docs.insert(doc.to_string(), lines);
            }
            (Some(have @ Some(_)), None) => *have = None,
            (Some(Some(have)), Some(more)) => have.extend(more),
            (Some(None), _) => {}
        }
    }

    /// Whether a returned chunk answers: its document is labelled and its
    /// lines overlap a labelled range (or the label is the whole file).
    fn covers(&self, doc: &str, start: u32, end: u32) -> bool {
        match self.docs.get(doc) {
            None => false,
            Some(None) => true,
            Some(Some(ranges)) => ranges.iter().any(|&(a, b)| start <= b && a <= end),
        }
    }
}

/// Parses a `lines` cell: `120-168`, `42`, `30-36,63-89`; empty = whole file.
fn parse_lines(cell: &str) -> std::result::Result<Lines, String> {
    let cell = cell.trim();
    if cell.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for part in cell.split(',') {
        let part = part.trim();
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let num = |x: &str| {
            x.trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("bad line range {part:?} (want e.g. 120-168 or 42)"))
        };
        let (a, b) = (num(a)?, num(b)?);
        if a > b {
            return Err(format!("bad line range {part:?}: start after end"));
        }
        out.push((a, b));
    }
    Ok(Some(out))
}

/// `query-id<TAB>doc-id<TAB>relevance[<TAB>lines]` after a header line.
fn load_qrels(path: &Path) -> Result<HashMap<String, Labels>> {
    parse_qrels(&read(path)?).map_err(|message| Error::Eval {
        path: path.to_path_buf(),
        message,
    })
}

fn parse_qrels(text: &str) -> std::result::Result<HashMap<String, Labels>, String> {
    let mut out: HashMap<String, Labels> = HashMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 3 {
            if line.trim().is_empty() {
                continue;
            }
            return Err(format!("line {}: expected 3 or 4 columns", n + 1));
        }
        if cols[2].trim().parse::<i64>().unwrap_or(0) > 0 {
            let lines = match cols.get(3) {
                Some(cell) => parse_lines(cell).map_err(|e| format!("line {}: {e}", n + 1))?,
                None => None,
            };
            out.entry(cols[0].to_string())
                .or_default()
                .add(cols[1], lines);
        }
    }
    Ok(out)
}

/// The doc-id of a hit's path: the path, less `.md` for markdown.
fn doc_id(path: &str) -> &str {
    path.strip_suffix(".md").unwrap_or(path)
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

fn hit_at(ranked: &[String], relevant: &HashSet<String>, k: usize) -> f64 {
    if ranked.iter().take(k).any(|d| relevant.contains(d)) {
        1.0
    } else {
        0.0
    }
}

/// 1 when one of the first `k` chunks answers (see [`Labels::covers`]).
fn chunk_hit_at(chunks: &[RankedChunk], labels: &Labels, k: usize) -> f64 {
    if chunks
        .iter()
        .take(k)
        .any(|c| labels.covers(doc_id(&c.path), c.start_line, c.end_line))
    {
        1.0
    } else {
        0.0
    }
}

/// Per-query scores summed over a set of queries.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    n: usize,
    ndcg: f64,
    r1: f64,
    r5: f64,
    r10: f64,
    r100: f64,
    mrr: f64,
    hit1: f64,
    hit5: f64,
    chunk5: f64,
    chunk1: f64,
    files5: f64,
}

impl Sums {
    /// One query: `docs` and `chunks` as a search ranks them, `deep_docs`
    /// from longer lists (for Recall@100).
    fn add(
        &mut self,
        docs: &[String],
        deep_docs: &[String],
        chunks: &[RankedChunk],
        labels: &Labels,
    ) {
        let relevant = labels.doc_ids();
        self.n += 1;
        self.ndcg += ndcg_at_10(docs, &relevant);
        self.r1 += recall_at(docs, &relevant, 1);
        self.r5 += recall_at(docs, &relevant, 5);
        self.r10 += recall_at(docs, &relevant, 10);
        self.r100 += recall_at(deep_docs, &relevant, 100);
        self.mrr += mrr_at_10(docs, &relevant);
        self.hit1 += hit_at(docs, &relevant, 1);
        self.hit5 += hit_at(docs, &relevant, 5);
        self.chunk5 += chunk_hit_at(chunks, labels, 5);
        self.chunk1 += chunk_hit_at(chunks, labels, 1);
        let mut files: Vec<&str> = chunks.iter().take(5).map(|c| c.path.as_str()).collect();
        files.sort_unstable();
        files.dedup();
        self.files5 += files.len() as f64;
    }

    fn mean(&self, x: f64) -> f64 {
        x / self.n.max(1) as f64
    }

    fn group(&self, group: String) -> GroupScores {
        GroupScores {
            group,
            queries: self.n,
            ndcg_at_10: self.mean(self.ndcg),
            recall_at_10: self.mean(self.r10),
            mrr_at_10: self.mean(self.mrr),
            file_hit_at_1: self.mean(self.hit1),
            file_hit_at_5: self.mean(self.hit5),
            chunk_hit_at_5: self.mean(self.chunk5),
            chunk_hit_at_1: self.mean(self.chunk1),
        }
    }
}

/// The first `n` documents of a ranking of chunks (each once, where its
/// best chunk ranks).
fn first_docs(ranked: &[RankedChunk], n: usize) -> Vec<String> {
    let mut docs = Vec::with_capacity(n);
    let mut seen = HashSet::new();
    for chunk in ranked {
        let id = doc_id(&chunk.path);
        if seen.insert(id) {
            docs.push(id.to_string());
            if docs.len() == n {
                break;
            }
        }
    }
    docs
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

/// Indexes `dir/corpus` into its own SQLite index (`opts.index_path`; a set
/// split into halves, one per query group beside it, [`run_eval_on`]) and
/// scores every query.
pub fn run_eval(
    dir: &Path,
    embedder: Option<Arc<dyn Embedder>>,
    opts: &EvalOptions,
    progress: &dyn Progress,
) -> Result<EvalReport> {
    let index_of = |group: Option<&str>| match group {
        Some(g) => opts.index_path.with_file_name(format!("index-{g}.sqlite")),
        None => opts.index_path.clone(),
    };
    if opts.fresh {
        let groups = std::fs::read_dir(dir.join("corpus"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let paths = std::iter::once(index_of(None)).chain(groups.iter().map(|g| index_of(Some(g))));
        for path in paths {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
        }
    }
    let open = |corpus: &Path, group: Option<&str>| {
        Engine::open_at(
            corpus,
            &index_of(group),
            opts.config.clone(),
            embedder.clone(),
        )
    };
    run_eval_on(dir, &open, opts, progress)
}

/// The engines an eval searches: one over the whole corpus, or, for a set
/// split into a tuning and a held-back half (`split.tsv`), one per query
/// group over that group's folder only. A project is indexed alone, as a
/// developer working in it indexes it: no other project's BM25 statistics
/// or knowledge graph reach its ranking, and adding a project to the
/// held-back half cannot move the tuning half's figures.
struct Engines {
    /// By group; the key `None` for the one engine over the whole corpus.
    by_group: BTreeMap<Option<String>, Engine>,
}

impl Engines {
    /// The engine that answers a query of `group`: its own, or the one over
    /// the whole corpus.
    fn of(&self, group: Option<&String>) -> &Engine {
        self.by_group
            .get(&group.cloned())
            .or_else(|| self.by_group.get(&None))
            .expect("every query's group has its engine")
    }

    fn all(&self) -> impl Iterator<Item = &Engine> {
        self.by_group.values()
    }

    fn first(&self) -> &Engine {
        self.all()
            .next()
            .expect("an eval opens at least one engine")
    }
}

/// [`run_eval`] on the engines `open` makes for the corpus folder (any
/// storage backend): `open(corpus, None)` for one index of the whole corpus,
/// `open(corpus, Some(group))` for a group's own index when the set has a
/// `split.tsv` and every query names a group ([`Engines`]).
pub fn run_eval_on(
    dir: &Path,
    open: &dyn Fn(&Path, Option<&str>) -> Result<Engine>,
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
    let split_path = dir.join("split.tsv");
    let split = if split_path.is_file() {
        load_split(&split_path)?
    } else if opts.split.is_some() {
        return Err(Error::Eval {
            path: split_path,
            message:
                "--split needs a split.tsv (group, half, language per line) beside queries.jsonl"
                    .into(),
        });
    } else {
        HashMap::new()
    };
    if let Some(half) = &opts.split {
        if !split.values().any(|(h, _)| h == half) {
            return Err(Error::Eval {
                path: split_path,
                message: format!("no group is in half {half:?}"),
            });
        }
        queries.retain(|q| in_half(&split, &q.id, half));
    }
    if opts.max_queries > 0 {
        queries.truncate(opts.max_queries);
    }
    // Code files are documents too (an eval set may hold a whole project).
    let corpus = corpus.canonicalize().map_err(|source| Error::Io {
        path: corpus.clone(),
        source,
    })?;
    let separate = !split.is_empty()
        && !queries.is_empty()
        && queries.iter().all(|q| group_of(&q.id, &corpus).is_some());
    let mut by_group = BTreeMap::new();
    let mut index = IndexReport::default();
    if separate {
        let groups: std::collections::BTreeSet<String> = queries
            .iter()
            .filter_map(|q| group_of(&q.id, &corpus))
            .collect();
        for g in groups {
            let engine = open(&corpus, Some(&g))?;
            index.add(engine.index(&[corpus.join(&g)], progress)?);
            by_group.insert(Some(g), engine);
        }
    } else {
        let engine = open(&corpus, None)?;
        index = engine.index(std::slice::from_ref(&corpus), progress)?;
        by_group.insert(None, engine);
    }
    let engines = Engines { by_group };
    let mut chunks = 0;
    let mut edges = 0;
    for e in engines.all() {
        chunks += e.status()?.chunks;
        edges += e.graph_edges()?;
    }

    let has_graph = opts.config.search.graph_weight > 0.0 && edges > 0;
    // (mode, graph, rerank k and blend)
    type Run = (Mode, bool, Option<(usize, cairn::RerankBlend)>);
    let mut runs: Vec<Run> = Vec::new();
    if opts.rerank {
        runs.push((Mode::Hybrid, has_graph, None));
        for v in RERANK_VARIANTS {
            runs.push((Mode::Hybrid, has_graph, Some(v)));
        }
    } else {
        for &mode in &opts.modes {
            if mode == Mode::Hybrid && has_graph {
                runs.push((mode, true, None));
            }
            runs.push((mode, false, None));
        }
    }
    let mut modes = Vec::new();
    // The k whose reranker scores the engine's query cache holds.
    let mut timed_k: Option<usize> = None;
    for (mode, graph, rerank) in runs {
        if mode != Mode::Bm25 && engines.first().embedder().is_none() {
            tracing::warn!("no model: skipping {mode:?}");
            continue;
        }
        // A plain row, or the first of a k, starts from a cleared cache; the
        // other blend of the same k reuses the reranker's scores.
        let k = rerank.map(|(k, _)| k);
        if k.is_none() || k != timed_k {
            for e in engines.all() {
                e.clear_query_cache();
            }
        }
        timed_k = k;
        let label = match (mode, graph) {
            (Mode::Hybrid, true) => "eval hybrid".to_string(),
            (Mode::Hybrid, false) if has_graph => "eval hybrid, no graph".to_string(),
            _ => format!("eval {mode:?}").to_lowercase(),
        };
        let rerank_label = rerank.map(|(k, blend)| format!("k{k} {}", blend.name()));
        let label = match &rerank_label {
            Some(r) => format!("{label}, rerank {r}"),
            None => label,
        };
        progress.stage(&label, queries.len() as u64);
        let mut all = Sums::default();
        let mut groups: BTreeMap<String, Sums> = BTreeMap::new();
        let mut halves: BTreeMap<String, Sums> = BTreeMap::new();
        let mut languages: BTreeMap<String, Sums> = BTreeMap::new();
        let mut intents: BTreeMap<(u8, String), Sums> = BTreeMap::new();
        let mut times = Vec::with_capacity(queries.len());
        let mut outcomes = Vec::new();
        for q in &queries {
            let labels = &qrels[&q.id];
            let group = group_of(&q.id, &corpus);
            let engine = engines.of(group.as_ref());
            let search = SearchOptions {
                path_prefix: group.as_ref().map(|g| format!("{g}/")),
                mode,
                no_graph: !graph,
                rerank: Some(rerank.is_some()),
                rerank_k: rerank.map(|(k, _)| k),
                rerank_blend: rerank.map(|(_, b)| b),
                ..Default::default()
            };
            // The figures at 10 score what `search --limit 10` returns: its
            // lists are as long as a search's (the order of the top hits
            // depends on it), ranked on past 10 so the collapse to documents
            // still finds 10. Recall@100 needs longer lists.
            let depth = engine.search_depth(10);
            let t = Instant::now();
            let ranked = engine.ranked_chunks(&q.text, &search, 400, depth)?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            let docs = first_docs(&ranked, 100);
            // Lists of 400, not reranked: a reranked top 20 holds the same
            // documents.
            let deep_docs = if depth >= 400 {
                docs.clone()
            } else {
                let deep = SearchOptions {
                    rerank: Some(false),
                    ..search.clone()
                };
                first_docs(&engine.ranked_chunks(&q.text, &deep, 400, 400)?, 100)
            };
            all.add(&docs, &deep_docs, &ranked, labels);
            if opts.per_query {
                let relevant = labels.doc_ids();
                let mut top = Vec::new();
                let mut shown = HashSet::new();
                for c in &ranked {
                    if top.len() == 3 {
                        break;
                    }
                    if shown.insert(doc_id(&c.path)) {
                        top.push(format!("{}:{}-{}", c.path, c.start_line, c.end_line));
                    }
                }
                outcomes.push(QueryOutcome {
                    id: q.id.clone(),
                    text: q.text.clone(),
                    first_relevant: docs
                        .iter()
                        .position(|d| relevant.contains(d))
                        .map(|i| i + 1),
                    chunk_hit: chunk_hit_at(&ranked, labels, 5) > 0.0,
                    top,
                });
            }
            if let Some((half, language)) = split_of(&split, &q.id) {
                for (sums, key) in [(&mut halves, half), (&mut languages, language)] {
                    sums.entry(key.clone())
                        .or_default()
                        .add(&docs, &deep_docs, &ranked, labels);
                }
            }
            if let Some(g) = group {
                groups
                    .entry(g)
                    .or_default()
                    .add(&docs, &deep_docs, &ranked, labels);
            }
            if let Some(asked) = &q.intent {
                let read = cairn_search::Intent::of(&q.text).name();
                for key in [(0, asked.clone()), (1, format!("{asked}, read {read}"))] {
                    intents
                        .entry(key)
                        .or_default()
                        .add(&docs, &deep_docs, &ranked, labels);
                }
            }
            progress.inc(1);
        }
        progress.finish();
        times.sort_by(f64::total_cmp);
        modes.push(ModeScores {
            mode,
            graph,
            rerank: rerank_label,
            ndcg_at_10: all.mean(all.ndcg),
            recall_at_1: all.mean(all.r1),
            recall_at_5: all.mean(all.r5),
            recall_at_10: all.mean(all.r10),
            recall_at_100: all.mean(all.r100),
            mrr_at_10: all.mean(all.mrr),
            file_hit_at_1: all.mean(all.hit1),
            file_hit_at_5: all.mean(all.hit5),
            chunk_hit_at_5: all.mean(all.chunk5),
            chunk_hit_at_1: all.mean(all.chunk1),
            files_at_5: all.mean(all.files5),
            groups: groups.into_iter().map(|(g, s)| s.group(g)).collect(),
            halves: halves.into_iter().map(|(g, s)| s.group(g)).collect(),
            languages: languages.into_iter().map(|(g, s)| s.group(g)).collect(),
            intents: intents.into_iter().map(|((_, g), s)| s.group(g)).collect(),
            p50_ms: percentile(&times, 0.5),
            p95_ms: percentile(&times, 0.95),
            queries: outcomes,
        });
    }
    let (floors, confidence) = if opts.floors {
        measure_floors(
            &engines,
            &queries,
            &qrels,
            &corpus,
            &opts.config,
            &opts.off_topic,
            progress,
        )?
    } else {
        (Vec::new(), Vec::new())
    };
    // What a user waits for: a default search, not the deep lists scored above.
    for e in engines.all() {
        e.clear_query_cache();
    }
    let mut times = Vec::with_capacity(queries.len());
    for q in &queries {
        let engine = engines.of(group_of(&q.id, &corpus).as_ref());
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
        model: engines.first().embedder().map(|e| e.model_id().to_string()),
        chunks_per_sec: if index.seconds > 0.0 {
            index.chunks_written.max(index.chunks_embedded) as f64 / index.seconds
        } else {
            0.0
        },
        chunks,
        index,
        modes,
        floors,
        confidence,
    })
}

/// `split.tsv`: `group<TAB>half<TAB>language` a line (a header line whose
/// first field is `group` or `project`, blank lines and `#` comments are
/// skipped), by group.
fn load_split(path: &Path) -> Result<HashMap<String, (String, String)>> {
    parse_split(&read(path)?).map_err(|message| Error::Eval {
        path: path.to_path_buf(),
        message,
    })
}

fn parse_split(text: &str) -> std::result::Result<HashMap<String, (String, String)>, String> {
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if n == 0 && matches!(fields[0], "group" | "project") {
            continue;
        }
        match fields[..] {
            [group, half, language] if !group.is_empty() && !half.is_empty() => {
                out.insert(group.to_string(), (half.to_string(), language.to_string()));
            }
            _ => return Err(format!("line {}: needs group<TAB>half<TAB>language", n + 1)),
        }
    }
    Ok(out)
}

/// The (half, language) `split` gives a query id's group (`<group>_q…`).
fn split_of<'a>(
    split: &'a HashMap<String, (String, String)>,
    id: &str,
) -> Option<&'a (String, String)> {
    id.split_once("_q").and_then(|(group, _)| split.get(group))
}

/// Whether a query id's group is in `half` (a query of no listed group is in
/// neither half).
fn in_half(split: &HashMap<String, (String, String)>, id: &str, half: &str) -> bool {
    split_of(split, id).is_some_and(|(h, _)| h == half)
}

/// The group a query id names (`<group>_q…`) when `corpus/<group>/` exists:
/// the query then searches only that folder.
fn group_of(id: &str, corpus: &Path) -> Option<String> {
    id.split_once("_q")
        .map(|(group, _)| group.to_string())
        .filter(|g| !g.is_empty() && corpus.join(g).is_dir())
}

/// Searches every query as `search --limit 10` does, floors off, and
/// counts what each floor setting of the grid would drop (see
/// [`crate::floors`]).
fn measure_floors(
    engines: &Engines,
    queries: &[Query],
    qrels: &HashMap<String, Labels>,
    corpus: &Path,
    config: &Config,
    off_topic: &[String],
    progress: &dyn Progress,
) -> Result<(Vec<FloorScores>, Vec<ConfidenceRow>)> {
    let mut samples = Samples::default();
    let configured = Floor::new(config.search.min_score, config.search.relative_floor)
        .map_err(|e| Error::Query(e.to_string()))?;
    let mut tallies = grid(configured);
    progress.stage("eval floors", queries.len() as u64);
    let has_model = engines.first().embedder().is_some();
    for q in queries {
        let engine = engines.of(group_of(&q.id, corpus).as_ref());
        let search = SearchOptions {
            limit: FLOOR_DEPTH,
            path_prefix: group_of(&q.id, corpus).map(|g| format!("{g}/")),
            mode: if has_model { Mode::Hybrid } else { Mode::Bm25 },
            min_score: Some(0.0),
            relative_floor: Some(0.0),
            ..Default::default()
        };
        let searched = engine.search(&q.text, &search)?;
        let best = closest(&searched);
        let hits: Vec<(String, f64)> = searched
            .into_iter()
            .map(|h| (doc_id(&h.path).to_string(), h.score))
            .collect();
        let relevant = qrels[&q.id].doc_ids();
        let first_relevant = hits.first().is_some_and(|(d, _)| relevant.contains(d));
        samples.on.push((best, first_relevant));
        for t in &mut tallies {
            t.add(&hits, &relevant);
        }
        progress.inc(1);
    }
    progress.finish();
    let plain = SearchOptions {
        limit: FLOOR_DEPTH,
        ..Default::default()
    };
    // Each off-topic prompt asked of every index (of each project's, when
    // the set has one per project).
    if has_model {
        for prompt in off_topic {
            for engine in engines.all() {
                samples.off.push(closest(&engine.search(prompt, &plain)?));
            }
        }
    }
    let confidence = if has_model {
        samples.rows(config.search.confident_similarity)
    } else {
        Vec::new()
    };
    Ok((tallies.iter().map(|t| t.scores()).collect(), confidence))
}

/// The closest hit's similarity (none: no hit was ranked by vectors).
fn closest(hits: &[cairn_core::Hit]) -> Option<f64> {
    hits.iter()
        .filter_map(|h| h.similarity)
        .max_by(f64::total_cmp)
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

    /// A two-project set: `alpha` and `beta`, each a folder of two docs.
    fn two_project_set(dir: &Path, split: bool) {
        let write = |rel: &str, text: &str| {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(
            "corpus/alpha/stripes.md",
            "# Stripes\n\nThe zebra's stripes confuse flies.\n",
        );
        write(
            "corpus/alpha/manes.md",
            "# Manes\n\nA horse grows a long mane.\n",
        );
        write(
            "corpus/beta/herds.md",
            "# Herds\n\nA zebra herd crosses the river.\n",
        );
        write(
            "corpus/beta/rivers.md",
            "# Rivers\n\nThe river floods every spring.\n",
        );
        write(
            "queries.jsonl",
            "{\"id\": \"alpha_q1\", \"text\": \"why does a zebra have stripes\", \"intent\": \"behaviour\"}\n{\"id\": \"beta_q1\", \"text\": \"zebra herd river\", \"intent\": \"use\"}\n",
        );
        write(
            "qrels.tsv",
            "query-id\tcorpus-id\tscore\nalpha_q1\talpha/stripes\t1\nbeta_q1\tbeta/herds\t1\n",
        );
        if split {
            write(
                "split.tsv",
                "project\thalf\tlanguage\nalpha\ttune\tEnglish\nbeta\ttest\tEnglish\n",
            );
        }
    }

    fn bm25_options(index_path: PathBuf) -> EvalOptions {
        EvalOptions {
            index_path,
            fresh: false,
            modes: vec![Mode::Bm25],
            max_queries: 0,
            config: Config::default(),
            floors: false,
            per_query: true,
            off_topic: Vec::new(),
            split: None,
            rerank: false,
        }
    }

    #[test]
    fn a_split_set_indexes_each_project_alone() {
        let tmp = tempfile::tempdir().expect("tmp");
        let set = tmp.path().join("set");
        two_project_set(&set, true);
        let cache = tmp.path().join("cache");
        std::fs::create_dir_all(&cache).expect("cache");
        let report = run_eval(
            &set,
            None,
            &bm25_options(cache.join("index.sqlite")),
            &cairn::NoProgress,
        )
        .expect("eval");
        // One index per project, none over the whole corpus.
        assert!(cache.join("index-alpha.sqlite").is_file());
        assert!(cache.join("index-beta.sqlite").is_file());
        assert!(!cache.join("index.sqlite").exists());
        assert_eq!(report.index.files_seen, 4, "{:?}", report.index);
        assert_eq!(report.chunks, 4);
        let bm25 = &report.modes[0];
        assert_eq!(bm25.mrr_at_10, 1.0, "{:?}", bm25.queries);
        // Each labelled intent, then each label by what the ranking reads.
        let read = |q: &str| cairn_search::Intent::of(q).name();
        let intents: Vec<(String, usize)> = bm25
            .intents
            .iter()
            .map(|g| (g.group.clone(), g.queries))
            .collect();
        assert_eq!(
            intents,
            vec![
                ("behaviour".to_string(), 1),
                ("use".to_string(), 1),
                (
                    format!("behaviour, read {}", read("why does a zebra have stripes")),
                    1
                ),
                (format!("use, read {}", read("zebra herd river")), 1),
            ]
        );
        // Each query was answered from its own project's index.
        for q in &bm25.queries {
            let group = q.id.split("_q").next().expect("a group");
            assert!(
                q.top.iter().all(|t| t.starts_with(&format!("{group}/"))),
                "{q:?}"
            );
        }

        // Without a split.tsv: one index of the whole corpus, as before.
        let plain = tmp.path().join("plain");
        two_project_set(&plain, false);
        let cache = tmp.path().join("cache-plain");
        std::fs::create_dir_all(&cache).expect("cache");
        let report = run_eval(
            &plain,
            None,
            &bm25_options(cache.join("index.sqlite")),
            &cairn::NoProgress,
        )
        .expect("eval");
        assert!(cache.join("index.sqlite").is_file());
        assert!(!cache.join("index-alpha.sqlite").exists());
        assert_eq!(report.modes[0].mrr_at_10, 1.0);
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
        assert_eq!(hit_at(&ranked, &rel, 1), 0.0);
        assert_eq!(hit_at(&ranked, &rel, 2), 1.0);
    }

    #[test]
    fn split_assigns_groups_to_halves_and_languages() {
        let split = parse_split(
            "project\thalf\tlanguage\n\
             # existing projects were tuned on\n\
             axum\ttune\tRust\n\
             \n\
             serde_json\ttest\tRust\n\
             logrus\ttest\tGo\n",
        )
        .unwrap();
        assert_eq!(split.len(), 3);
        assert_eq!(
            split_of(&split, "serde_json_q07"),
            Some(&("test".to_string(), "Rust".to_string()))
        );
        assert!(in_half(&split, "axum_q01", "tune"));
        assert!(!in_half(&split, "axum_q01", "test"));
        assert!(in_half(&split, "logrus_q26", "test"));
        // A group split.tsv does not list is in neither half.
        assert!(!in_half(&split, "rayon_q01", "tune"));
        assert_eq!(split_of(&split, "no-group"), None);
        let err = parse_split("axum\ttune\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn qrels_load_with_three_or_four_columns() {
        // The shared sets' three columns: every label is a whole document.
        let three =
            parse_qrels("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n\n").unwrap();
        assert_eq!(three.len(), 2);
        assert_eq!(three["q1"].docs, HashMap::from([("d1".to_string(), None)]));
        assert_eq!(three["q2"].doc_ids(), set(&["d3"]));

        // code-qa's fourth column: ranges, a single line, several, or empty.
        let four = parse_qrels(
            "query-id\tdoc-id\trelevance\tlines\n\
             a_q1\tp/src/x.rs\t1\t120-168\n\
             a_q1\tp/docs/guide\t1\t\n\
             a_q2\tp/y.py\t1\t42,30-36\n\
             a_q2\tp/y.py\t1\t50-60\n\
             a_q3\tp/z.rs\t1\t1-5\n\
             a_q3\tp/z.rs\t1\t\n",
        )
        .unwrap();
        assert_eq!(four["a_q1"].docs["p/src/x.rs"], Some(vec![(120, 168)]));
        assert_eq!(four["a_q1"].docs["p/docs/guide"], None);
        assert_eq!(
            four["a_q2"].docs["p/y.py"],
            Some(vec![(42, 42), (30, 36), (50, 60)])
        );
        // A whole-file label of the same document wins over a range.
        assert_eq!(four["a_q3"].docs["p/z.rs"], None);

        for bad in ["9-3", "x", "0-4", "4-"] {
            let err = parse_qrels(&format!("h\tq\tr\tl\nq\td\t1\t{bad}\n")).unwrap_err();
            assert!(err.starts_with("line 2: bad line range"), "{bad}: {err}");
        }
        assert!(
            parse_qrels("h\nq\td\n")
                .unwrap_err()
                .contains("3 or 4 columns")
        );
    }

    #[test]
    fn chunk_hits_need_an_overlapping_range_or_a_whole_file_label() {
        let labels = parse_qrels("h\th\th\th\nq\tp/a.rs\t1\t100-120\nq\tp/readme\t1\t\n")
            .unwrap()
            .remove("q")
            .unwrap();
        let chunk = |path: &str, start, end| RankedChunk {
            path: path.to_string(),
            start_line: start,
            end_line: end,
        };
        // Touching either end of the range counts; one line short does not.
        assert!(labels.covers("p/a.rs", 120, 140));
        assert!(labels.covers("p/a.rs", 80, 100));
        assert!(labels.covers("p/a.rs", 105, 110));
        assert!(labels.covers("p/a.rs", 1, 500));
        assert!(!labels.covers("p/a.rs", 121, 140));
        assert!(!labels.covers("p/a.rs", 1, 99));
        // Any chunk of a whole-file label; markdown hits lose `.md`.
        assert!(labels.covers(doc_id("p/readme.md"), 1, 3));
        assert!(!labels.covers("p/other.rs", 100, 120));

        let miss = [
            chunk("p/a.rs", 1, 40),
            chunk("p/a.rs", 200, 260),
            chunk("p/b.rs", 100, 120),
        ];
        assert_eq!(chunk_hit_at(&miss, &labels, 5), 0.0);
        let late = [
            chunk("p/b.rs", 1, 9),
            chunk("p/b.rs", 10, 19),
            chunk("p/b.rs", 20, 29),
            chunk("p/b.rs", 30, 39),
            chunk("p/b.rs", 40, 49),
            chunk("p/a.rs", 110, 130),
        ];
        assert_eq!(chunk_hit_at(&late, &labels, 5), 0.0);
        assert_eq!(chunk_hit_at(&late, &labels, 6), 1.0);
        assert_eq!(
            chunk_hit_at(&[chunk("p/readme.md", 40, 60)], &labels, 5),
            1.0
        );

        // File level the same query scores the document, whatever the lines.
        let mut sums = Sums::default();
        let docs = list(&["p/b.rs", "p/a.rs"]);
        sums.add(&docs, &docs, &miss, &labels);
        assert_eq!((sums.hit1, sums.hit5, sums.chunk5), (0.0, 1.0, 0.0));
        assert_eq!(sums.mrr, 0.5);
    }
}
