//! The read side: [`PgReader`], a read connection, and [`PgSnapshot`], one
//! read-only REPEATABLE READ transaction on it, the whole of
//! [`IndexSnapshot`]: full-text ranking, chunks, vectors and the HNSW top-k,
//! stats, documents, links, metadata and the export walks.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use cairn_core::{
    Chunk, ChunkId, ChunkRow, DefinitionRow, DocRecord, DocWrite, DocumentSink, FileRow,
    IndexReader, IndexSnapshot, Link, LinkRow, Relation, Scored, Stats, StoreError, StoreResult,
    VectorSet, VectorSink, like_contains,
};
use postgres::{Client, IsolationLevel, Transaction};

use crate::error::pg;
use crate::lexicon;
use crate::vectors::{MAX_FETCH, hnsw_index};

/// A read connection of one project.
pub struct PgReader {
    pub(crate) client: Client,
    pub(crate) location: String,
    pub(crate) project: String,
    pub(crate) ef_search: usize,
    pub(crate) exact_scan_max: usize,
    pub(crate) bm25_cut: usize,
    /// Vector lengths whose HNSW index this reader has seen.
    pub(crate) indexed_dims: RefCell<HashSet<usize>>,
}

impl IndexReader for PgReader {
    fn snapshot(&mut self) -> StoreResult<Box<dyn IndexSnapshot + '_>> {
        let tx = self
            .client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(pg(&self.location))?;
        Ok(Box::new(PgSnapshot {
            tx: RefCell::new(tx),
            location: &self.location,
            project: &self.project,
            ef_search: self.ef_search,
            exact_scan_max: self.exact_scan_max,
            bm25_cut: self.bm25_cut,
            indexed_dims: &self.indexed_dims,
            deadline: Cell::new(None),
            timeout: Cell::new(None),
        }))
    }
}

/// One read-only REPEATABLE READ transaction.
pub struct PgSnapshot<'a> {
    tx: RefCell<Transaction<'a>>,
    location: &'a str,
    pub(crate) project: &'a str,
    ef_search: usize,
    exact_scan_max: usize,
    /// Postings of a query's common words past which they are scored only
    /// for its rare words' best chunks (0: never; see [`BM25_CUT_SQL`]).
    bm25_cut: usize,
    indexed_dims: &'a RefCell<HashSet<usize>>,
    /// The search's deadline ([`IndexSnapshot::set_deadline`]), if any.
    deadline: Cell<Option<Instant>>,
    /// The `statement_timeout` in force in this transaction, if one was set.
    timeout: Cell<Option<Duration>>,
}

/// How far past the deadline a statement may run before the server cancels
/// it: the `statement_timeout` in force is set again only when it would
/// outlast the deadline by more than this, so a search of many short
/// statements pays one extra round trip per 50 ms, not one per statement.
const DEADLINE_SLACK: Duration = Duration::from_millis(50);

/// The chunk `c` lies under the path prefix in parameter `$p` ("" for all).
/// Written as an `EXISTS` on the chunk's own document, not a join with a
/// filter: the planner cannot estimate a prefix test and, joining first,
/// walked every document of the database (94 ms instead of 1 for 100
/// candidates).
macro_rules! under_prefix {
    ($p:literal) => {
        concat!(
            "($", $p, " = '' OR EXISTS (SELECT 1 FROM documents d WHERE d.id = c.doc_id AND starts_with(d.path, $", $p, ")))"
        )
    };
}

const CHUNK_COLUMNS: &str = "c.id, d.path, c.heading_path, c.level, c.start_line, c.end_line, c.text, d.domain, c.chunk_id, c.hash";

/// A `(chunk id, score)` result row.
fn scored_row(r: &postgres::Row) -> Scored<ChunkId> {
    Scored::new(ChunkId(r.get(0)), r.get(1))
}

fn chunk_row(r: &postgres::Row) -> ChunkRow {
    let heading: String = r.get(2);
    ChunkRow {
        rowid: r.get(0),
        chunk: Chunk {
            id: r.get(8),
            path: r.get(1),
            heading_path: serde_json::from_str(&heading).unwrap_or_default(),
            level: r.get::<_, i32>(3) as u8,
            start_line: r.get::<_, i32>(4) as u32,
            end_line: r.get::<_, i32>(5) as u32,
            text: r.get(6),
            hash: r.get(9),
        },
        domain: r.get(7),
    }
}

/// A chunk of the document at `path` from five columns from `at` on:
/// heading path (JSON), level, start line, end line, text.
pub(crate) fn chunk_at(r: &postgres::Row, path: &str, at: usize) -> Chunk {
    let heading: String = r.get(at);
    Chunk::new(
        path,
        serde_json::from_str(&heading).unwrap_or_default(),
        r.get::<_, i32>(at + 1) as u8,
        r.get::<_, i32>(at + 2) as u32,
        r.get::<_, i32>(at + 3) as u32,
        r.get(at + 4),
    )
}

/// A document's record from `path, hash, mtime_ns, size, pipeline`.
fn doc_record(r: &postgres::Row) -> DocRecord {
    DocRecord {
        path: r.get(0),
        hash: r.get(1),
        mtime_ns: r.get(2),
        size: r.get::<_, i64>(3) as u64,
        pipeline: r.get(4),
    }
}

/// The quoted terms of an FTS5 `"a" OR "b"` expression (what the engine
/// passes), joined for `websearch_to_tsquery` (`a or b`); any other text is
/// passed as it is.
fn websearch(expr: &str) -> String {
    let terms: Vec<&str> = expr
        .split('"')
        .enumerate()
        .filter(|(i, t)| i % 2 == 1 && !t.trim().is_empty())
        .map(|(_, t)| t)
        .collect();
    if terms.is_empty() {
        expr.to_string()
    } else {
        terms.join(" or ")
    }
}

impl PgSnapshot<'_> {
    /// Every statement of a snapshot goes through here (or [`Self::execute`]),
    /// under the search's deadline.
    pub(crate) fn query(
        &self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> StoreResult<Vec<postgres::Row>> {
        self.arm()?;
        self.tx
            .borrow_mut()
            .query(sql, params)
            .map_err(|e| self.failed(e))
    }

    /// The first row of a statement, read by `f` (`None`: no row).
    fn first<T>(
        &self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        f: impl FnOnce(&postgres::Row) -> T,
    ) -> StoreResult<Option<T>> {
        Ok(self.query(sql, params)?.first().map(f))
    }

    /// Every row of a statement, each read by `f`.
    fn each<T>(
        &self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
        f: impl FnMut(&postgres::Row) -> T,
    ) -> StoreResult<Vec<T>> {
        Ok(self.query(sql, params)?.iter().map(f).collect())
    }

    /// Runs `sql` (settings, no rows) under the search's deadline.
    fn execute(&self, sql: &str) -> StoreResult<()> {
        self.arm()?;
        self.tx
            .borrow_mut()
            .batch_execute(sql)
            .map_err(|e| self.failed(e))
    }

    /// Before a statement: past the deadline, stops without asking the
    /// server; else makes sure the server cancels the statement by the
    /// deadline (plus [`DEADLINE_SLACK`]). `statement_timeout` bounds each
    /// statement on its own, so one timeout set at the start would let
    /// every statement of a search run for the whole budget (issue 34: three
    /// 200 ms statements under a 300 ms budget all ran, 600 ms in all).
    fn arm(&self) -> StoreResult<()> {
        let Some(deadline) = self.deadline.get() else {
            return Ok(());
        };
        let now = Instant::now();
        let left = deadline.saturating_duration_since(now);
        if left.is_zero() {
            return Err(self.past_deadline());
        }
        if self
            .timeout
            .get()
            .is_some_and(|t| now + t <= deadline + DEADLINE_SLACK)
        {
            return Ok(());
        }
        // Rounded up, so the server never cancels before the deadline; at
        // least 1 (0 would mean no timeout).
        let ms = left.as_micros().div_ceil(1000).clamp(1, i32::MAX as u128) as u64;
        self.tx
            .borrow_mut()
            .batch_execute(&format!("SET LOCAL statement_timeout = {ms}"))
            .map_err(|e| self.failed(e))?;
        self.timeout.set(Some(Duration::from_millis(ms)));
        Ok(())
    }

    /// A statement's error: one the server cancelled under the deadline is
    /// [`StoreError::Deadline`], whatever the clock here says.
    fn failed(&self, e: postgres::Error) -> StoreError {
        let cancelled = e
            .as_db_error()
            .is_some_and(|db| *db.code() == postgres::error::SqlState::QUERY_CANCELED);
        if cancelled && self.deadline.get().is_some() {
            self.past_deadline()
        } else {
            pg(self.location)(e)
        }
    }

    fn past_deadline(&self) -> StoreError {
        StoreError::Deadline {
            location: self.location.to_string(),
        }
    }
}

impl PgSnapshot<'_> {
    /// FTS5's `bm25()` over the postings: each query word split as FTS5
    /// splits it, its document frequency and the project's totals read in
    /// this snapshot, then every chunk holding a word (under the path
    /// `prefix`, "" for all) scored in one statement.
    fn fts5_bm25(
        &self,
        terms: &[String],
        limit: usize,
        weights: (f64, f64),
        prefix: &str,
    ) -> StoreResult<Vec<Scored<ChunkId>>> {
        let tokens = lexicon::query_tokens(terms).map_err(|message| {
            StoreError::from(crate::Error::Tokenizer {
                location: self.location.to_string(),
                message,
            })
        })?;
        if tokens.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let Some((rows, total, df)) = self.lex_counts(&tokens)? else {
            return Ok(Vec::new());
        };
        let Terms {
            q_term,
            q_idf,
            c_term,
            c_idf,
            cut,
        } = Terms::split(&tokens, &df, rows, self.bm25_cut);
        if q_term.is_empty() {
            return Ok(Vec::new());
        }
        let avg = if total > 0.0 { total / rows } else { 1.0 };
        // Each posting carries its chunk's length: without a path prefix
        // the chunks table is not read at all.
        let template = if cut { BM25_CUT_SQL } else { BM25_SQL };
        let sql = if prefix.is_empty() {
            template
                .replace("{chunks}", "")
                .replace("{prefix}", "$9 = ''")
        } else {
            template
                .replace("{chunks}", "JOIN chunks c ON c.id = p.chunk")
                .replace("{prefix}", under_prefix!(9))
        };
        let limit = limit as i64;
        let candidates = (limit * CUT_CANDIDATES_PER_HIT).max(CUT_MIN_CANDIDATES);
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![
            &self.project,
            &q_term,
            &q_idf,
            &lexicon::K1,
            &lexicon::B,
            &avg,
            &weights.0,
            &weights.1,
            &prefix,
            &limit,
        ];
        if cut {
            params.extend([
                &c_term as &(dyn postgres::types::ToSql + Sync),
                &c_idf,
                &candidates,
            ]);
        }
        let found = self.query(&sql, &params)?;
        Ok(found.iter().map(scored_row).collect())
    }

    /// The project's chunk count and token total (`None` for a project
    /// with no chunk), and the document frequency of each of `tokens`.
    fn lex_counts(&self, tokens: &[String]) -> StoreResult<Option<LexCounts>> {
        let Some((rows, total)) = self.first(
            "SELECT rows, tokens FROM lex_stats WHERE project = $1",
            &[&self.project],
            |r| (r.get::<_, i64>(0) as f64, r.get::<_, i64>(1) as f64),
        )?
        else {
            return Ok(None);
        };
        if rows <= 0.0 {
            return Ok(None);
        }
        let distinct: Vec<&str> = tokens
            .iter()
            .map(String::as_str)
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let df = self
            .each(
                "SELECT term, df FROM lex_terms WHERE project = $1 AND term = ANY($2)",
                &[&self.project, &distinct],
                |r| (r.get(0), r.get(1)),
            )?
            .into_iter()
            .collect();
        Ok(Some((rows, total, df)))
    }

    /// PostgreSQL's full-text search for an FTS5 expression that is more
    /// than quoted words joined by OR: `ts_rank_cd`, no IDF; only chunks
    /// under the path `prefix` ("" for all).
    fn full_text(
        &self,
        expr: &str,
        limit: usize,
        weights: (f64, f64),
        prefix: &str,
    ) -> StoreResult<Vec<Scored<ChunkId>>> {
        let q = websearch(expr);
        // ts_rank_cd weights are {D, C, B, A}: D is the `simple` copy.
        let w: Vec<f32> = vec![
            0.2,
            0.2,
            weights.1.clamp(0.0, 1.0) as f32,
            weights.0.clamp(0.0, 1.0) as f32,
        ];
        let rows = self.query(
            concat!(
                "SELECT c.id, ts_rank_cd($1::real[], c.tsv, q, 1)::float8 AS score
                 FROM chunks c,
                      (SELECT websearch_to_tsquery('english', $2) || websearch_to_tsquery('simple', $2) AS q) qq
                 WHERE c.project = $3 AND c.tsv @@ q AND ",
                under_prefix!(4),
                " ORDER BY score DESC, c.id LIMIT $5"
            ),
            &[&w, &q, &self.project, &prefix, &(limit as i64)],
        )?;
        Ok(rows.iter().map(scored_row).collect())
    }
}

/// A project's chunk count and token total, and the document frequency of
/// each word asked about.
type LexCounts = (f64, f64, HashMap<String, i64>);

/// A query's words as BM25 scores them: `q_term` scored in full, and
/// (only when `cut`) the common words `c_term` scored for the best chunks
/// of the others ([`BM25_CUT_SQL`]); each with its IDF.
struct Terms<'t> {
    q_term: Vec<&'t str>,
    q_idf: Vec<f64>,
    c_term: Vec<&'t str>,
    c_idf: Vec<f64>,
    cut: bool,
}

impl<'t> Terms<'t> {
    /// Splits `tokens` (words no chunk holds dropped) by their document
    /// frequency `df` among `rows` chunks: the cut is made when the common
    /// words (in more than one chunk of [`COMMON_SHARE`]) have more than
    /// `bm25_cut` postings (0: never) and there are rare words to start from.
    fn split(tokens: &'t [String], df: &HashMap<String, i64>, rows: f64, bm25_cut: usize) -> Self {
        let (mut q_term, mut q_idf) = (Vec::new(), Vec::new());
        let (mut c_term, mut c_idf, mut c_postings) = (Vec::new(), Vec::new(), 0i64);
        let common_df = (rows / COMMON_SHARE).max(1.0);
        for t in tokens {
            if let Some(&n) = df.get(t).filter(|n| **n > 0) {
                if n as f64 > common_df {
                    c_term.push(t.as_str());
                    c_idf.push(lexicon::idf(rows, n as f64));
                    c_postings += n;
                } else {
                    q_term.push(t.as_str());
                    q_idf.push(lexicon::idf(rows, n as f64));
                }
            }
        }
        let cut = bm25_cut > 0
            && c_postings > bm25_cut as i64
            && !q_term.is_empty()
            && !c_term.is_empty();
        if !cut {
            q_term.append(&mut c_term);
            q_idf.append(&mut c_idf);
        }
        Terms {
            q_term,
            q_idf,
            c_term,
            c_idf,
            cut,
        }
    }
}

/// FTS5's `bm25()` summed over a chunk's postings `p` of the query's terms
/// `q` (term, idf) with their weighted frequency `f`: k1 $4, b $5, average
/// length $6.
macro_rules! bm25_sum {
    () => {
        "sum(q.idf * f.f * ($4::float8 + 1)
            / (f.f + $4::float8 * (1 - $5::float8 + $5::float8 * p.len / $6::float8))) AS s"
    };
}

/// The weighted frequency `f` of posting `p`: column weights $7 and $8.
macro_rules! weighted_f {
    () => {
        "CROSS JOIN LATERAL (SELECT p.head * $7::float8 + p.body * $8::float8 AS f) f"
    };
}

/// Every posting of the terms $2 (IDF $3) scored, best first: the chunks
/// under the path prefix $9, at most `$limit`. Each term's postings are
/// read by the primary key (project, term): `OFFSET 0` keeps the planner
/// from joining the terms the other way round, which it did for a path
/// prefix once the table held a large project beside the searched one
/// (every posting of the project read and filtered by term: 404 ms against
/// 15 ms for one LoCoMo conversation beside PowerShell's 4.2 million
/// postings).
macro_rules! bm25_all {
    ($limit:literal) => {
        concat!(
            "SELECT p.chunk, ",
            bm25_sum!(),
            " FROM unnest($2::text[], $3::float8[]) AS q(term, idf)
 CROSS JOIN LATERAL (SELECT x.chunk, x.head, x.body, x.len FROM lex_postings x
                     WHERE x.project = $1 AND x.term = q.term OFFSET 0) p
 {chunks} ",
            weighted_f!(),
            " WHERE {prefix}
 GROUP BY p.chunk ORDER BY s DESC, p.chunk LIMIT $",
            $limit
        )
    };
}

/// FTS5's `bm25()` over the postings of the query's terms ($2, with their
/// IDF in $3): k1 $4, b $5, average length $6, column weights $7 and $8,
/// path prefix $9, limit $10; `{chunks}` and `{prefix}` filled in by the caller.
const BM25_SQL: &str = bm25_all!(10);

/// A word is common when more than one chunk in this many holds it.
const COMMON_SHARE: f64 = 16.0;
/// The rare words' best chunks that the common words are scored for, per
/// hit asked (and at least [`CUT_MIN_CANDIDATES`]).
const CUT_CANDIDATES_PER_HIT: i64 = 4;
/// The fewest chunks the common words are scored for.
const CUT_MIN_CANDIDATES: i64 = 1_000;

/// BM25 with a candidate cut, for a query whose common words have many
/// postings (`[store] bm25_cut`): the rare words' postings ($2, $3) are
/// scored in full, the best $13 chunks by them kept, and only for those
/// the common words' postings ($11, $12) read by key and added (one probe
/// of the primary key per chunk and word: `LIMIT 1` keeps the planner from
/// reading every posting of the common words into a hash join, 185 ms
/// against 11 ms for 1,000 chunks × 3 words on PowerShell's docs). Reading a
/// word in a sixteenth of the chunks costs more than all the rare words
/// together, and it decides the order only among chunks a rare word already
/// brought in. The answer is not exact: a chunk holding none of the query's
/// rare words, or not among the rare words' best $13, gets no score here
/// (BENCHMARKS.md measures what that costs in quality).
const BM25_CUT_SQL: &str = concat!(
    "WITH rare AS (",
    bm25_all!(13),
    "), common AS (
   SELECT r.chunk, ",
    bm25_sum!(),
    " FROM rare r
   CROSS JOIN unnest($11::text[], $12::float8[]) AS q(term, idf)
   CROSS JOIN LATERAL (SELECT x.head, x.body, x.len FROM lex_postings x
                       WHERE x.project = $1 AND x.term = q.term AND x.chunk = r.chunk
                       LIMIT 1) p ",
    weighted_f!(),
    " GROUP BY r.chunk
 )
 SELECT r.chunk, r.s + coalesce(m.s, 0) AS s
 FROM rare r LEFT JOIN common m ON m.chunk = r.chunk
 ORDER BY s DESC, r.chunk LIMIT $10"
);

/// The words of an expression made only of quoted words joined by `OR`
/// (what the engine's `lexical_expr` writes); `None` for anything else.
fn plain_terms(expr: &str) -> Option<Vec<String>> {
    expr.split(" OR ")
        .map(|part| {
            let inner = part.trim().strip_prefix('"')?.strip_suffix('"')?;
            (!inner.is_empty() && !inner.contains('"')).then(|| inner.to_string())
        })
        .collect()
}

impl IndexSnapshot for PgSnapshot<'_> {
    /// The budget reaches the server as `statement_timeout`, set before
    /// each statement to what is left of it (see `arm`): a statement still
    /// running at the deadline is cancelled there (SQLSTATE 57014), not
    /// left to hang the caller, and ends with [`StoreError::Deadline`]; past
    /// the deadline no statement starts.
    fn set_deadline(&self, deadline: Instant) {
        self.deadline.set(Some(deadline));
    }

    fn generation(&self) -> StoreResult<i64> {
        Ok(self
            .meta("generation")?
            .and_then(|g| g.parse().ok())
            .unwrap_or(0))
    }

    fn meta(&self, key: &str) -> StoreResult<Option<String>> {
        self.first(
            "SELECT value FROM cairn_meta WHERE project = $1 AND key = $2",
            &[&self.project, &key],
            |r| r.get(0),
        )
    }

    /// BM25 as FTS5 ranks it (`lexicon.rs`) for the engine's `"a" OR "b"`
    /// expressions; any other FTS5 syntax (`--fts`) through PostgreSQL's
    /// own full-text search.
    fn bm25(
        &self,
        expr: &str,
        limit: usize,
        weights: (f64, f64),
        path_prefix: Option<&str>,
    ) -> StoreResult<Vec<Scored<ChunkId>>> {
        let prefix = path_prefix.unwrap_or("");
        match plain_terms(expr) {
            Some(terms) => self.fts5_bm25(&terms, limit, weights, prefix),
            None => self.full_text(expr, limit, weights, prefix),
        }
    }
    fn chunks(&self, rowids: &[i64]) -> StoreResult<Vec<ChunkRow>> {
        let ids = rowids.to_vec();
        let rows = self.query(
            &format!(
                "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE c.project = $1 AND c.id = ANY($2)"
            ),
            &[&self.project, &ids],
        )?;
        let mut by_id: HashMap<i64, ChunkRow> =
            rows.iter().map(chunk_row).map(|r| (r.rowid, r)).collect();
        Ok(rowids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    fn vectors(&self, model: &str) -> StoreResult<VectorSet> {
        let rows = self.query(
            "SELECT c.id, d.path, e.vector, e.dim FROM chunks c
             JOIN documents d ON d.id = c.doc_id
             JOIN embeddings e ON e.model = $2 AND e.hash = c.embed_hash
             WHERE c.project = $1 ORDER BY c.id",
            &[&self.project, &model],
        )?;
        let mut set = VectorSet::default();
        for r in &rows {
            let v: pgvector::Vector = r.get(2);
            set.dim = r.get::<_, i32>(3) as usize;
            set.rowids.push(r.get(0));
            set.paths.push(r.get(1));
            set.data
                .extend(v.as_slice().iter().map(|x| half::f16::from_f32(*x)));
        }
        Ok(set)
    }

    fn vector_top_k(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
        path_prefix: Option<&str>,
    ) -> StoreResult<Option<Vec<Scored<ChunkId>>>> {
        let dim = query.len();
        // Once seen, an index stays: ask the catalogue only until then, not
        // on every search.
        if !self.indexed_dims.borrow().contains(&dim) {
            let exists = !self
                .query(
                    "SELECT 1 FROM pg_indexes WHERE tablename = 'embeddings' AND indexname = $1",
                    &[&hnsw_index(dim)],
                )?
                .is_empty();
            if !exists {
                return Ok(None);
            }
            self.indexed_dims.borrow_mut().insert(dim);
        }
        if k == 0 {
            return Ok(Some(Vec::new()));
        }
        let prefix = path_prefix.unwrap_or("").to_string();
        let q = pgvector::Vector::from(query.to_vec());
        // The filter first: when the project (and path prefix) hold few
        // chunks — one LoCoMo conversation, one folder — score just those
        // exactly, rather than ask the whole table's index for ever more
        // neighbours until enough of them are this project's.
        if self.few_chunks(&prefix)? {
            return Ok(Some(self.exact_top_k(model, &q, dim, k, &prefix)?));
        }
        // The index covers every project's vectors. The inner query is the
        // form pgvector always answers on the index (one table, ORDER BY
        // distance, LIMIT); this project's chunks are joined after it. When
        // other projects (or the path filter) take too many of the nearest,
        // ask again for more; past `MAX_FETCH` the project is a small part of
        // the table and its own exact scan is cheaper: `None`.
        let mut fetch = (k * 2).max(self.ef_search);
        loop {
            // The iterative scan lets one scan return more rows than
            // ef_search (pgvector caps that at 1000).
            let ef = fetch.min(1000);
            self.execute(&format!(
                "SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = relaxed_order;
                 SET LOCAL enable_seqscan = off"
            ))?;
            // `dim` is a number, so formatting it in is safe; the cast and
            // the `dim` condition must match the index's expression.
            let near = self.query(
                &format!(
                    "SELECT e.hash, e.vector::vector({dim}) <=> $1::vector({dim}) AS dist
                     FROM embeddings e WHERE e.dim = {dim} AND e.model = $2
                     ORDER BY dist LIMIT $3"
                ),
                &[&q, &model, &(fetch as i64)],
            )?;
            // Off only for that statement: with a larger LIMIT or fresh
            // statistics the planner may prefer an exact scan of every
            // vector (seconds at a million), which the index is there to avoid.
            self.execute("SET LOCAL enable_seqscan = on")?;
            let dist: HashMap<String, f64> = near.iter().map(|r| (r.get(0), r.get(1))).collect();
            let mut hits = self.project_hits(&dist, &prefix)?;
            // Enough; or the scan ran dry; or every vector the project has
            // (when no path filter hides some of them from the count).
            let done = hits.len() >= k
                || near.len() < fetch
                || (path_prefix.is_none_or(str::is_empty)
                    && hits.len() as u64 >= self.vector_count(model)?);
            if done {
                hits.truncate(k);
                return Ok(Some(hits));
            }
            if fetch >= MAX_FETCH {
                break;
            }
            fetch = (fetch * 8).min(MAX_FETCH);
        }
        Ok(None)
    }

    fn stats(&self, model: Option<&str>) -> StoreResult<Stats> {
        let r = &self.query(
            "SELECT (SELECT count(*) FROM documents WHERE project = $1),
                    (SELECT count(*) FROM chunks WHERE project = $1),
                    (SELECT count(*) FROM chunks c WHERE c.project = $1 AND EXISTS
                        (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)),
                    (SELECT count(*) FROM embeddings),
                    (SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.doc_id
                      WHERE c.project = $1 AND d.path >= $3 AND d.path < $4 AND NOT EXISTS
                        (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash))",
            &[
                &self.project,
                &model.unwrap_or(""),
                &cairn_core::HISTORY_PREFIX,
                &format!("{}0", cairn_core::HISTORY_PREFIX.trim_end_matches('/')),
            ],
        )?[0];
        Ok(Stats {
            files: r.get::<_, i64>(0) as u64,
            chunks: r.get::<_, i64>(1) as u64,
            embedded_chunks: if model.is_some() {
                r.get::<_, i64>(2) as u64
            } else {
                0
            },
            cached_vectors: r.get::<_, i64>(3) as u64,
            unembedded_history: r.get::<_, i64>(4) as u64,
            last_indexed: self.meta("last_indexed")?.and_then(|v| v.parse().ok()),
        })
    }

    fn domains(&self) -> StoreResult<Vec<String>> {
        self.each(
            "SELECT DISTINCT domain FROM documents WHERE project = $1 AND domain <> '' ORDER BY domain",
            &[&self.project],
            |r| r.get(0),
        )
    }

    fn chunk_by_id(&self, chunk_id: &str) -> StoreResult<Option<ChunkRow>> {
        self.first(
            &format!(
                "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE c.project = $1 AND c.chunk_id = $2 LIMIT 1"
            ),
            &[&self.project, &chunk_id],
            chunk_row,
        )
    }

    fn document(&self, path: &str) -> StoreResult<Option<DocRecord>> {
        self.first(
            "SELECT path, hash, mtime_ns, size, pipeline FROM documents WHERE project = $1 AND path = $2",
            &[&self.project, &path],
            doc_record,
        )
    }

    fn metas_under(&self, prefix: &str) -> StoreResult<Vec<(String, String)>> {
        self.each(
            "SELECT path, meta FROM documents WHERE project = $1 AND left(path, length($2)) = $2 ORDER BY path",
            &[&self.project, &prefix],
            |r| (r.get(0), r.get(1)),
        )
    }

    fn for_each_document(&self, f: DocumentSink<'_>) -> StoreResult<()> {
        let docs = self.query(
            "SELECT id, path, hash, mtime_ns, size, title, tags, domain, meta, source, pipeline FROM documents
             WHERE project = $1 ORDER BY path",
            &[&self.project],
        )?;
        for d in &docs {
            let id: i64 = d.get(0);
            let path: String = d.get(1);
            let chunks = self.each(
                "SELECT heading_path, level, start_line, end_line, text FROM chunks
                 WHERE doc_id = $1 ORDER BY seq",
                &[&id],
                |c| chunk_at(c, &path, 0),
            )?;
            let links = self.each(
                "SELECT seq, src_name, dst_name, rel, weight FROM links WHERE doc_id = $1 ORDER BY ctid",
                &[&id],
                |l| Link {
                    chunk: l.get::<_, Option<i32>>(0).map(|i| i as usize),
                    from: l.get(1),
                    to: l.get(2),
                    rel: Relation::from(l.get::<_, String>(3)),
                    weight: l.get(4),
                },
            )?;
            let tags: String = d.get(6);
            let doc = DocWrite {
                path: path.clone(),
                hash: d.get(2),
                mtime_ns: d.get(3),
                size: d.get::<_, i64>(4) as u64,
                pipeline: d.get(10),
                title: d.get(5),
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                domain: d.get(7),
                meta: d.get(8),
                chunks,
                links,
                source: d.get(9),
            };
            f(doc).map_err(|m| StoreError::Backend(m.into()))?;
        }
        Ok(())
    }

    fn for_each_vector(&self, model: &str, f: VectorSink<'_>) -> StoreResult<()> {
        let rows = self.query(
            "SELECT e.hash, e.vector FROM embeddings e WHERE e.model = $2 AND EXISTS
                 (SELECT 1 FROM chunks c WHERE c.project = $1 AND c.embed_hash = e.hash)
             ORDER BY e.hash",
            &[&self.project, &model],
        )?;
        for r in &rows {
            let v: pgvector::Vector = r.get(1);
            let hash: String = r.get(0);
            f(&hash, v.as_slice()).map_err(|m| StoreError::Backend(m.into()))?;
        }
        Ok(())
    }

    fn links(&self) -> StoreResult<Vec<LinkRow>> {
        self.each(
            "SELECT l.chunk, l.src, l.src_name, l.dst, l.dst_name, l.rel, l.weight, d.path
             FROM links l JOIN documents d ON d.id = l.doc_id
             WHERE l.project = $1 ORDER BY d.path, l.ctid",
            &[&self.project],
            |r| {
                let src: Option<String> = r.get(1);
                let src_name: Option<String> = r.get(2);
                LinkRow {
                    chunk: r.get(0),
                    src: src.map(|k| (k, src_name.unwrap_or_default())),
                    dst: r.get(3),
                    dst_name: r.get(4),
                    rel: Relation::from(r.get::<_, String>(5)),
                    weight: r.get(6),
                    path: r.get(7),
                }
            },
        )
    }

    fn meta_of(&self, path: &str) -> StoreResult<Option<String>> {
        self.first(
            "SELECT meta FROM documents WHERE project = $1 AND path = $2",
            &[&self.project, &path],
            |r| r.get(0),
        )
    }

    fn memory_stats(&self, id: &str) -> StoreResult<(u64, i64)> {
        Ok(self
            .first(
                "SELECT access_count, last_access FROM memory_stats WHERE project = $1 AND id = $2",
                &[&self.project, &id],
                |r| (r.get::<_, i64>(0) as u64, r.get(1)),
            )?
            .unwrap_or_default())
    }

    fn documents(&self) -> StoreResult<Vec<DocRecord>> {
        self.each(
            "SELECT path, hash, mtime_ns, size, pipeline FROM documents WHERE project = $1 ORDER BY path",
            &[&self.project],
            doc_record,
        )
    }

    fn definitions(&self, key: &str, limit: usize) -> StoreResult<Vec<DefinitionRow>> {
        self.each(
            "SELECT l.chunk, l.dst_name, d.path, l.weight > 0.0 AND l.weight < 1.0 FROM links l JOIN documents d ON d.id = l.doc_id
             WHERE l.project = $1 AND l.dst = $2 AND l.rel = 'defines' AND l.chunk IS NOT NULL
             ORDER BY d.path, l.chunk LIMIT $3",
            &[&self.project, &key, &(limit as i64)],
            |r| DefinitionRow {
                chunk: r.get(0),
                name: r.get(1),
                path: r.get(2),
                hidden: r.get(3),
            },
        )
    }

    fn files_named(&self, fragment: &str, limit: usize) -> StoreResult<Vec<FileRow>> {
        self.each(
            "SELECT path, first FROM (
                 SELECT d.path, (SELECT c.id FROM chunks c WHERE c.doc_id = d.id ORDER BY c.seq LIMIT 1) AS first
                 FROM documents d WHERE d.project = $1 AND d.path LIKE $2 ESCAPE '\\'
             ) f WHERE first IS NOT NULL ORDER BY path LIMIT $3",
            &[&self.project, &like_contains(fragment), &(limit as i64)],
            |r| FileRow {
                path: r.get(0),
                first_chunk: r.get(1),
            },
        )
    }
}

impl PgSnapshot<'_> {
    /// Whether the project (under `prefix`) holds at most
    /// `exact_scan_max` chunks.
    fn few_chunks(&self, prefix: &str) -> StoreResult<bool> {
        Ok(self.exact_scan_max > 0
            && self.query(
                concat!(
                    "SELECT count(*) FROM (SELECT 1 FROM chunks c WHERE c.project = $1 AND ",
                    under_prefix!(2),
                    " LIMIT $3) x"
                ),
                &[&self.project, &prefix, &(self.exact_scan_max as i64 + 1)],
            )?[0]
                .get::<_, i64>(0)
                <= self.exact_scan_max as i64)
    }

    /// The `k` chunks of the project (under `prefix`) nearest `q`, every
    /// one scored exactly.
    fn exact_top_k(
        &self,
        model: &str,
        q: &pgvector::Vector,
        dim: usize,
        k: usize,
        prefix: &str,
    ) -> StoreResult<Vec<Scored<ChunkId>>> {
        // `dim` is a number, so formatting it in is safe.
        let rows = self.query(
            &format!(
                concat!(
                    "SELECT c.id, 1 - (e.vector::vector({dim}) <=> $1::vector({dim})) AS sim
                     FROM chunks c JOIN embeddings e
                          ON e.model = $2 AND e.hash = c.embed_hash AND e.dim = {dim}
                     WHERE c.project = $3 AND ",
                    under_prefix!(4),
                    " ORDER BY sim DESC, c.id LIMIT $5"
                ),
                dim = dim
            ),
            &[q, &model, &self.project, &prefix, &(k as i64)],
        )?;
        Ok(rows.iter().map(scored_row).collect())
    }

    /// This project's chunks (under `prefix`) whose vectors are among
    /// `dist` (vector hash → cosine distance), best first: an index probe
    /// per hash on (project, embed_hash).
    fn project_hits(
        &self,
        dist: &HashMap<String, f64>,
        prefix: &str,
    ) -> StoreResult<Vec<Scored<ChunkId>>> {
        let hashes: Vec<&String> = dist.keys().collect();
        let rows = self.query(
            concat!(
                "SELECT c.id, c.embed_hash FROM chunks c
                 WHERE c.project = $1 AND c.embed_hash = ANY($2) AND ",
                under_prefix!(3)
            ),
            &[&self.project, &hashes, &prefix],
        )?;
        let mut hits: Vec<Scored<ChunkId>> = rows
            .iter()
            .filter_map(|r| {
                let h: String = r.get(1);
                Some(Scored::new(ChunkId(r.get(0)), 1.0 - dist.get(&h)?))
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        Ok(hits)
    }

    /// How many of this project's chunks have a `model` vector.
    pub(crate) fn vector_count(&self, model: &str) -> StoreResult<u64> {
        Ok(self.query(
            "SELECT count(*) FROM chunks c WHERE c.project = $1 AND EXISTS
                 (SELECT 1 FROM embeddings e WHERE e.model = $2 AND e.hash = c.embed_hash)",
            &[&self.project, &model],
        )?[0]
            .get::<_, i64>(0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot of a project no test writes to, on `client`.
    fn snapshot<'a>(
        client: &'a mut postgres::Client,
        dims: &'a RefCell<HashSet<usize>>,
    ) -> PgSnapshot<'a> {
        PgSnapshot {
            tx: RefCell::new(client.transaction().unwrap()),
            location: "test",
            project: "deadline",
            ef_search: 40,
            exact_scan_max: 0,
            bm25_cut: 0,
            indexed_dims: dims,
            deadline: Cell::new(None),
            timeout: Cell::new(None),
        }
    }

    /// A statement past the snapshot's deadline is cancelled by the server.
    #[test]
    #[ignore = "full tier: needs PostgreSQL"]
    fn a_statement_past_the_deadline_is_cancelled() {
        let mut client =
            postgres::Client::connect(&cairn_test_support::pg_uri(), postgres::NoTls).unwrap();
        let dims = RefCell::new(HashSet::new());
        let snap = snapshot(&mut client, &dims);
        let started = Instant::now();
        snap.set_deadline(started + Duration::from_millis(200));
        let err = snap.query("SELECT pg_sleep(5)", &[]).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(matches!(err, StoreError::Deadline { .. }), "{err}");
    }

    /// The deadline bounds the snapshot's statements together, not each
    /// one: of three 200 ms statements under a 300 ms budget the second is
    /// cancelled when the budget runs out (each used to get the whole
    /// budget, and all three ran).
    #[test]
    #[ignore = "full tier: needs PostgreSQL"]
    fn the_deadline_bounds_all_statements_together() {
        let mut client =
            postgres::Client::connect(&cairn_test_support::pg_uri(), postgres::NoTls).unwrap();
        let dims = RefCell::new(HashSet::new());
        let snap = snapshot(&mut client, &dims);
        let budget = Duration::from_millis(300);
        let started = Instant::now();
        snap.set_deadline(started + budget);
        let mut done = 0;
        let err = loop {
            match snap.query("SELECT pg_sleep(0.2)", &[]) {
                Ok(_) => done += 1,
                Err(e) => break e,
            }
            assert!(
                done < 3,
                "three 200 ms statements ran under a 300 ms budget"
            );
        };
        let elapsed = started.elapsed();
        eprintln!(
            "stopped after {done} statement(s), {} ms",
            elapsed.as_millis()
        );
        assert_eq!(done, 1);
        assert!(matches!(err, StoreError::Deadline { .. }), "{err}");
        assert!(elapsed >= budget, "{elapsed:?}");
        assert!(elapsed < budget + Duration::from_millis(200), "{elapsed:?}");
    }

    /// Past the deadline no statement starts: the server is not asked (the
    /// transaction is not aborted by a cancelled statement).
    #[test]
    #[ignore = "full tier: needs PostgreSQL"]
    fn no_statement_starts_past_the_deadline() {
        let mut client =
            postgres::Client::connect(&cairn_test_support::pg_uri(), postgres::NoTls).unwrap();
        let dims = RefCell::new(HashSet::new());
        let snap = snapshot(&mut client, &dims);
        snap.set_deadline(Instant::now());
        let err = snap.query("SELECT 1", &[]).unwrap_err();
        assert!(matches!(err, StoreError::Deadline { .. }), "{err}");
        snap.tx.borrow_mut().query("SELECT 1", &[]).unwrap();
    }

    #[test]
    fn fts5_or_expressions_become_websearch_queries() {
        assert_eq!(websearch("\"cache\" OR \"redis\""), "cache or redis");
        assert_eq!(websearch("plain words"), "plain words");
    }
}
