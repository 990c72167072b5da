//! The ranking pipeline, one function over one snapshot of the index:
//!
//! ```text
//! retrieve.rs  bm25 | vector | names (the definitions and files the query
//!              names, crate::names) | graph (seeded by the query's
//!              entities and the other lists' top chunks, weighed per query)
//! fuse.rs      fetch each candidate once; collapse each list to documents;
//!              score fusion (or RRF) over the four lists
//! sections.rs  each document as its best chunk (and further sections of
//!              it), times its domain, path and kind factors; the graph path
//!              behind a graph hit (explain.rs)
//! ```
//!
//! rerank.rs   when asked, a cross-encoder reorders the top `k`
//!
//! then the cut: best first, `limit` kept. The engine supplies what it
//! caches beside the snapshot (query vectors, the vector matrix, the
//! knowledge graph) through [`RankSource`], and applies the relevance floors
//! ([`crate::Floor`]) to what [`rank`] returns.

mod explain;
mod fuse;
mod rerank;
mod retrieve;
mod sections;

pub use rerank::{RERANK_RRF_K, RERANK_STEP, RerankBlend, RerankPlan, RerankReport};

use std::collections::HashMap;
use std::sync::Arc;

use cairn_core::{
    Boost, ChunkId, ChunkRow, IndexSnapshot, Kind, RerankSignal, Retriever, Scored, Signal,
    StoreError,
};

use crate::fusion::FusionMethod;
use crate::knowledge::KnowledgeGraph;

/// What a ranking cannot do with its request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RankError {
    /// The query has nothing to search for.
    #[error("empty query")]
    EmptyQuery,
    /// A raw FTS5 query names more terms than are searched.
    #[error("the FTS5 query names {terms} terms; at most {max} are searched")]
    TooManyTerms {
        /// Terms the query names.
        terms: usize,
        /// Terms searched at most.
        max: usize,
    },
}

/// Where a ranking reads from: one snapshot of the index, and what the
/// engine keeps beside it (cached per index generation).
pub trait RankSource {
    /// The engine's error, which store errors and [`RankError`]s become.
    type Error: From<StoreError> + From<RankError>;
    /// The snapshot every step reads.
    fn snapshot(&self) -> &dyn IndexSnapshot;
    /// The `k` chunks whose vectors are nearest the query's, scored by
    /// cosine, best first, within `prefix`; called only when
    /// [`Retrievers::vector`] is set.
    fn nearest(
        &self,
        query: &str,
        k: usize,
        prefix: Option<&str>,
    ) -> Result<Vec<Scored<ChunkId>>, Self::Error>;
    /// The knowledge graph of this snapshot; called only when
    /// [`Retrievers::graph`] is set.
    fn graph(&self) -> Result<Arc<KnowledgeGraph>, Self::Error>;
    /// Starts reading the knowledge graph where that can run beside the
    /// retrievers (its file, on another thread); [`RankSource::graph`]
    /// then waits for it. Called before BM25 when the graph will be asked.
    fn prefetch_graph(&self) {}
    /// The kind of an indexed path (doc, memory, code).
    fn kind_of(&self, path: &str) -> Kind;
}

/// Which retrievers run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retrievers {
    /// BM25 over FTS5.
    pub bm25: bool,
    /// The nearest vectors ([`RankSource::nearest`]).
    pub vector: bool,
    /// Personalised PageRank over the knowledge graph (when it is not empty).
    pub graph: bool,
    /// Definitions and files by the names and paths the query holds
    /// ([`crate::names_list`]).
    pub names: bool,
}

/// What one ranking is asked.
#[derive(Clone, Debug, Default)]
pub struct RankRequest<'a> {
    /// The query as the user wrote it.
    pub query: &'a str,
    /// Pass the query to FTS5 as is (phrases, OR, NOT, prefix*).
    pub raw_fts: bool,
    /// The retrievers to run.
    pub retrievers: Retrievers,
    /// Only documents whose path starts with this.
    pub path_prefix: Option<&'a str>,
    /// Only these kinds of source (empty: all).
    pub kinds: &'a [Kind],
    /// The [`crate::domain_words`] of the file being edited: documents
    /// in its domain get [`crate::DOMAIN_BOOST`].
    pub current_domain: Vec<String>,
    /// Work out the path that brought each graph hit in
    /// ([`Candidate::via`]): a breadth-first search per such hit.
    pub explain: bool,
    /// Candidates to keep.
    pub limit: usize,
    /// Length of each retriever's list.
    pub depth: usize,
    /// The span of time the query names, if any ([`crate::read_query`]).
    pub when: Option<crate::TimeRange>,
    /// Rerank the top of the ranking with a cross-encoder before the cut.
    pub rerank: Option<RerankPlan<'a>>,
}

/// The `[search]` settings a ranking uses.
#[derive(Clone, Debug, PartialEq)]
pub struct RankSettings {
    /// How the lists become one.
    pub fusion: FusionMethod,
    /// Weight of BM25's list.
    pub bm25_weight: f64,
    /// Weight of the vector list.
    pub vector_weight: f64,
    /// Weight of the graph's list for a query that names its most specific
    /// entity; less for vaguer queries (see `retrieve.rs`). 0: no graph.
    pub graph_weight: f64,
    /// Weight of the names retriever's list ([`crate::names_list`]);
    /// twice this when the whole query is one name or path. 0: off.
    pub names_weight: f64,
    /// The names list's weight for a question in words (neither one name
    /// nor an issue pasted whole: `intent::is_issue`).
    pub question_names_weight: f64,
    /// BM25 column weights: (breadcrumb, text).
    pub bm25_columns: (f64, f64),
    /// Top chunks of each list that seed the graph.
    pub graph_seeds: usize,
    /// PPR's restart probability (clamped to 0.05–0.95).
    pub graph_restart: f32,
    /// Chunks one file may show when they are different sections of it.
    pub sections_per_file: usize,
    /// Factor for docs.
    pub doc_weight: f64,
    /// Factor for memories.
    pub memory_weight: f64,
    /// Factor for code.
    pub code_weight: f64,
    /// Factor for docs when the query is an issue pasted whole
    /// ([`crate::Intent::Report`]).
    pub issue_doc_weight: f64,
    /// Factor for a document whose title or heading states a date inside
    /// the span the query names ("in May 2023"); 1 = off.
    pub time_factor: f64,
    /// The extensions and file names indexed by their kind (`[index]
    /// extensions`, lower case): a file with another extension is an other
    /// file, read in line windows, and ranks lower
    /// ([`crate::boost::OTHER_FILE_FACTOR`]). Empty: no such factor.
    pub listed: Vec<String>,
}

/// The names list's full weight for a query: twice `names_weight` when the
/// whole query is one name, `names_weight` for an issue pasted whole, and
/// `question_names_weight` for a question in words.
fn names_list_weight(settings: &RankSettings, query: &str, whole: bool) -> f64 {
    if whole {
        2.0 * settings.names_weight
    } else if crate::intent::is_issue(query) {
        settings.names_weight
    } else {
        settings.question_names_weight
    }
}

/// One ranked chunk, with what explains its score.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The chunk, as the snapshot holds it (text included).
    pub row: ChunkRow,
    /// Fused score times its factors (higher is better).
    pub score: f64,
    /// How each retriever ranked its document.
    pub signals: Vec<Signal>,
    /// How each retriever ranked the chunk itself (filled when explaining).
    pub chunk_signals: Vec<Signal>,
    /// The factors applied after fusion.
    pub boosts: Vec<Boost>,
    /// For a graph hit when asked: the path that brought it in.
    pub via: Vec<String>,
    /// What the cross-encoder made of it, when it was reranked.
    pub rerank: Option<RerankSignal>,
}

/// A ranking: candidates best first, and the retrievers that ran.
#[derive(Clone, Debug, Default)]
pub struct Ranking {
    /// The top [`RankRequest::limit`] candidates, best first.
    pub candidates: Vec<Candidate>,
    /// The retrievers that ran, in fusion order: BM25, vectors, graph.
    pub retrievers: Vec<Retriever>,
    /// Every candidate's score, best first, before the cut to `limit`:
    /// how many matched (within the retrievers' depth), and how well.
    pub scores: Vec<f64>,
    /// What reranking did, when it was asked.
    pub rerank: Option<RerankReport>,
    /// What the names retriever read from the query and found, when it ran.
    pub names: Option<crate::NamesFound>,
}

/// Ranks the chunks of `src`'s snapshot for `req`: retrievers, collapse to
/// documents, fusion, sections and factors, then the top `limit`.
pub fn rank<S: RankSource>(
    src: &S,
    req: &RankRequest<'_>,
    settings: &RankSettings,
) -> Result<Ranking, S::Error> {
    if req.query.trim().is_empty() {
        return Err(RankError::EmptyQuery.into());
    }
    let snap = src.snapshot();
    // Where a search's time goes (`CAIRN_LOG=debug`): each retriever's
    // milliseconds, then fusion and sections.
    let mut clock = Clock::start();
    // The graph's file is read on another thread while BM25, the vectors
    // and the names run (a one-shot CLI search: 8 ms of pytest's 30).
    let wants_graph = req.retrievers.graph && !req.raw_fts && settings.graph_weight > 0.0;
    if wants_graph {
        src.prefetch_graph();
    }
    let bm25 = retrieve::bm25::<S::Error>(snap, req, settings)?;
    let t_bm25 = clock.lap();
    let vector = if req.retrievers.vector {
        src.nearest(req.query, req.depth, req.path_prefix)?
    } else {
        Vec::new()
    };
    let t_vector = clock.lap();
    let (names, found, names_rows) = retrieve::names::<S::Error>(snap, req, settings)?;
    let t_names = clock.lap();
    // What is left of the graph's read, waited for here.
    if wants_graph {
        src.graph()?;
    }
    let t_graph_load = clock.lap();
    // Score fusion weighs a list by its best hit; the names list's scores
    // are evidence on one scale (a backticked name that one definition
    // bears scores 1, two plain words that spell a name 0.35), so its weight
    // is that much of the full one: a weak first place is not worth a
    // whole vote.
    let names_best = names.first().map_or(0.0, |h| h.score.clamp(0.0, 1.0));
    let whole = found.as_ref().is_some_and(|f| f.read.whole);
    let names_weight = names_list_weight(settings, req.query, whole) * names_best;
    let graph = retrieve::graph(src, req, settings, &bm25, &vector, &names)?;
    let t_graph = clock.lap();
    let mut retrievers = Vec::new();
    for (retriever, ran) in [
        (Retriever::Bm25, req.retrievers.bm25),
        (Retriever::Vector, req.retrievers.vector),
        (Retriever::Graph, graph.kg.is_some()),
        // The names retriever ran when the query named something it found.
        (Retriever::Names, !names.is_empty()),
    ] {
        if ran {
            retrievers.push(retriever);
        }
    }
    let rows = fuse::fetch_rows(
        snap,
        &[&bm25, &vector, &graph.ranked, &graph.ranked_chunks, &names],
        names_rows,
    )?;
    let kind_of = |p: &str| src.kind_of(p);
    let fusion = fuse::fuse(
        &rows,
        req,
        settings,
        &kind_of,
        [&bm25, &vector, &graph.ranked, &graph.ranked_chunks, &names],
        [graph.weight, names_weight],
        found.as_ref().is_some_and(|f| f.read.whole),
    );
    let t_fuse = clock.lap();
    let mut candidates = sections::candidates(snap, req, settings, &kind_of, fusion, &rows, &graph);
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    let t_sections = clock.lap();
    tracing::debug!(
        bm25 = t_bm25,
        graph_load = t_graph_load,
        vector = t_vector,
        names = t_names,
        graph = t_graph,
        fuse = t_fuse,
        sections = t_sections,
        "rank: milliseconds"
    );
    spread_top(&mut candidates, TOP_SPREAD, TOP_PER_FILE);
    let scores = candidates.iter().map(|c| c.score).collect();
    let rerank = req
        .rerank
        .as_ref()
        .map(|plan| rerank::rerank(&mut candidates, req.query, plan));
    candidates.truncate(req.limit);
    Ok(Ranking {
        candidates,
        retrievers,
        scores,
        rerank,
        names: found,
    })
}

/// Milliseconds since the last lap, for the rank's debug line.
struct Clock(std::time::Instant);

impl Clock {
    fn start() -> Clock {
        Clock(std::time::Instant::now())
    }

    /// Milliseconds since the start or the last lap, rounded to 0.1.
    fn lap(&mut self) -> f64 {
        let now = std::time::Instant::now();
        let ms = (now - self.0).as_secs_f64() * 1e3;
        self.0 = now;
        (ms * 10.0).round() / 10.0
    }
}

/// The first places a reader sees at once, and how many of them one file
/// may hold (the best hit's file one more): with three sections per file
/// the top 5 of a search on rich often showed two files (`progress.py` ×3,
/// `_wrap.py` ×3). On code-QA, files in the first 5 chunks 3.18 → 3.27 and
/// chunk hit@5 0.8630 → 0.8767, file ranks unchanged; 2 for every file,
/// the best's included, made 3.55 files but cost a chunk hit (0.8493), and
/// a spread over the top 3 changed nothing (BENCHMARKS.md).
const TOP_SPREAD: usize = 5;
/// See [`TOP_SPREAD`].
const TOP_PER_FILE: usize = 2;

/// Moves a file's sections past its `per_file`-th (the best hit's file:
/// past its `per_file + 1`-th) out of the first `top` places, to just after
/// them, their order kept: the top shows more files, nothing is dropped,
/// and no file's first section moves.
fn spread_top(candidates: &mut Vec<Candidate>, top: usize, per_file: usize) {
    let mut kept: Vec<Candidate> = Vec::with_capacity(candidates.len());
    let mut moved = Vec::new();
    let mut count: HashMap<String, usize> = HashMap::new();
    for c in candidates.drain(..) {
        if kept.len() >= top {
            kept.append(&mut moved);
            kept.push(c);
            continue;
        }
        // The best hit's file keeps one more: its sections are the likeliest answer.
        let allowed = if kept
            .first()
            .is_none_or(|f| f.row.chunk.path == c.row.chunk.path)
        {
            per_file + 1
        } else {
            per_file
        };
        let n = count.entry(c.row.chunk.path.clone()).or_default();
        if *n >= allowed {
            moved.push(c);
        } else {
            *n += 1;
            kept.push(c);
        }
    }
    kept.append(&mut moved);
    *candidates = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(path: &str, line: u32) -> Candidate {
        Candidate {
            row: ChunkRow {
                rowid: i64::from(line),
                chunk: cairn_core::Chunk::new(path, vec![], 1, line, line, "x".into()),
                domain: String::new(),
            },
            score: 0.0,
            signals: Vec::new(),
            chunk_signals: Vec::new(),
            boosts: Vec::new(),
            via: Vec::new(),
            rerank: None,
        }
    }

    #[test]
    fn the_names_list_weighs_by_what_the_query_is() {
        let settings = RankSettings {
            fusion: FusionMethod::Score,
            bm25_weight: 1.0,
            vector_weight: 0.8,
            graph_weight: 0.4,
            names_weight: 2.0,
            question_names_weight: 0.75,
            bm25_columns: (1.0, 1.0),
            graph_seeds: 10,
            graph_restart: 0.3,
            sections_per_file: 3,
            doc_weight: 1.0,
            memory_weight: 1.0,
            code_weight: 1.0,
            issue_doc_weight: 0.5,
            time_factor: 1.0,
            listed: Vec::new(),
        };
        // A lone name: twice the issue's weight.
        assert_eq!(names_list_weight(&settings, "configure", true), 4.0);
        // A question in words that names something.
        let question = "how does `par_iter` split the work between threads";
        assert_eq!(names_list_weight(&settings, question, false), 0.75);
        // An issue pasted whole: 300 characters or more on three lines or more.
        let issue = format!(
            "Crash in par_iter\n\n{}\nTraceback (most recent call last):\n  File \"a.py\", line 3, in f\n",
            "When I call par_iter on a large vector the program stops. ".repeat(6)
        );
        assert!(crate::intent::is_issue(&issue));
        assert_eq!(names_list_weight(&settings, &issue, false), 2.0);
    }

    #[test]
    fn the_top_holds_three_of_the_best_file_and_two_of_any_other() {
        let mut c: Vec<Candidate> = [
            ("a", 1),
            ("a", 2),
            ("b", 3),
            ("b", 4),
            ("b", 5),
            ("a", 6),
            ("a", 7),
            ("c", 8),
        ]
        .iter()
        .map(|(p, l)| candidate(p, *l))
        .collect();
        spread_top(&mut c, 5, 2);
        let order: Vec<u32> = c.iter().map(|c| c.row.chunk.start_line).collect();
        assert_eq!(order, [1, 2, 3, 4, 6, 5, 7, 8]);
    }
}
