//! BM25 on the server, ranked as SQLite's FTS5 ranks: the same tokens, the
//! same statistics, the same formula.
//!
//! Why not `ts_rank_cd` (what this backend used first): it has no inverse
//! document frequency, so a word in every chunk counts as much as a rare
//! name — SciFact full-text nDCG@10 was 0.41 against FTS5's 0.69.
//!
//! **Tokens.** Text is split by SQLite itself: an in-memory FTS5 table with
//! the index's own tokenizer (`porter unicode61`) and its `fts5vocab`
//! instance view give every token of every row and column. Writing our own
//! copy of unicode61 and of FTS5's Porter stemmer would be one more thing
//! to keep identical; asking the code that SQLite's index runs cannot drift.
//!
//! Chinese, Japanese and Korean runs are first cut into bigrams by
//! `cairn_core::fts_text`, the function SQLite's index reads its text
//! through, so both backends hold the same tokens ([`LEXICON_VERSION`]).
//!
//! **Statistics,** kept in the transaction that writes the chunks (writers
//! of one project already queue on the project's advisory lock, so these
//! rows see one writer at a time):
//! - `lex_postings (project, term, chunk, head, body, len)`: how often the
//!   term is in the chunk's breadcrumb and text, and the chunk's length in
//!   tokens (both columns, as FTS5 counts it);
//! - `lex_terms (project, term, df)`: in how many chunks the term is;
//! - `lex_stats (project, rows, tokens)`: chunks and tokens in all;
//! - `chunks.lex_len`: each chunk's length, to take it back out.
//!
//! **Score** (FTS5's `bm25()`, k1 = 1.2, b = 0.75, per phrase and summed):
//! `idf · f · (k1 + 1) / (f + k1 · (1 − b + b · len / avglen))` with
//! `f = w_head · head + w_body · body`, `idf = ln((N − n + 0.5) / (n + 0.5))`
//! (10⁻⁶ when not positive), N the project's chunks and n the term's
//! chunks. A query term that appears twice (`"runs" OR "running"` → `run`
//! twice) counts twice, as FTS5 counts each phrase.

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::Transaction;

/// Default of [`crate::PgStore::with_bm25_cut`] (`[store] bm25_cut`): a
/// query whose common words hold more postings than this reads them only
/// for its rare words' best chunks.
pub(crate) const BM25_CUT: usize = 20_000;

/// What meta `lexicon` holds once a project's postings are built the way
/// this build splits text: `1` before CJK runs were cut into bigrams, `2`
/// with them, `3` since camelCase names also give their words. A project with an older (or no) value has its postings rebuilt
/// from its chunks on open ([`build_if_missing`]).
pub(crate) const LEXICON_VERSION: &str = "3";

/// FTS5's `bm25()` constants.
pub(crate) const K1: f64 = 1.2;
pub(crate) const B: f64 = 0.75;

/// The tokens of one chunk: each term with its count in the breadcrumb
/// (`head`) and in the text (`body`), and the chunk's length in tokens.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ChunkTerms {
    pub terms: Vec<(String, i32, i32)>,
    pub len: i32,
}

/// An in-memory FTS5 table with the index's tokenizer, used only to split
/// text into the tokens SQLite's index would hold.
struct Splitter {
    conn: rusqlite::Connection,
}

impl Splitter {
    fn new() -> rusqlite::Result<Splitter> {
        let conn = rusqlite::Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(breadcrumb, text, tokenize = 'porter unicode61');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
        )?;
        Ok(Splitter { conn })
    }

    fn split(&mut self, rows: &[(&str, &str)]) -> rusqlite::Result<Vec<ChunkTerms>> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM t", [])?;
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO t (rowid, breadcrumb, text) VALUES (?1, ?2, ?3)")?;
            for (i, (head, body)) in rows.iter().enumerate() {
                // CJK runs cut into bigrams as SQLite's index cuts them.
                let (head, body) = (cairn_core::fts_text(head), cairn_core::fts_text(body));
                insert.execute(rusqlite::params![i as i64, head.as_ref(), body.as_ref()])?;
            }
        }
        let mut per_row: Vec<HashMap<String, (i32, i32)>> = vec![HashMap::new(); rows.len()];
        let mut out: Vec<ChunkTerms> = (0..rows.len()).map(|_| ChunkTerms::default()).collect();
        {
            let mut stmt = tx.prepare_cached("SELECT doc, term, col FROM v")?;
            let mut it = stmt.query([])?;
            while let Some(r) = it.next()? {
                let doc: i64 = r.get(0)?;
                let Some(counts) = usize::try_from(doc).ok().and_then(|d| per_row.get_mut(d))
                else {
                    continue;
                };
                let term: String = r.get(1)?;
                let col: String = r.get(2)?;
                let slot = counts.entry(term).or_default();
                if col == "breadcrumb" {
                    slot.0 += 1;
                } else {
                    slot.1 += 1;
                }
                out[doc as usize].len += 1;
            }
        }
        tx.rollback()?;
        for (o, counts) in out.iter_mut().zip(per_row) {
            o.terms = counts.into_iter().map(|(t, (h, b))| (t, h, b)).collect();
            o.terms.sort_unstable();
        }
        Ok(out)
    }
}

thread_local! {
    static SPLITTER: RefCell<Option<Splitter>> = const { RefCell::new(None) };
}

/// The FTS5 tokens of each `(breadcrumb, text)` row.
pub(crate) fn split(rows: &[(&str, &str)]) -> Result<Vec<ChunkTerms>, String> {
    SPLITTER.with(|s| {
        let mut s = s.borrow_mut();
        if s.is_none() {
            *s = Some(Splitter::new().map_err(|e| format!("the FTS5 tokenizer: {e}"))?);
        }
        let Some(splitter) = s.as_mut() else {
            return Err("the FTS5 tokenizer is missing".into());
        };
        splitter
            .split(rows)
            .map_err(|e| format!("the FTS5 tokenizer: {e}"))
    })
}

/// The tokens of each query term (a word of the query as FTS5 would see a
/// quoted phrase of it), in order, a term that makes two tokens giving both.
pub(crate) fn query_tokens(terms: &[String]) -> Result<Vec<String>, String> {
    let rows: Vec<(&str, &str)> = terms.iter().map(|t| ("", t.as_str())).collect();
    let split = split(&rows)?;
    let mut out = Vec::new();
    for s in split {
        // One token per count: a phrase of two tokens counts both.
        for (term, _, body) in s.terms {
            for _ in 0..body.max(1) {
                out.push(term.clone());
            }
        }
    }
    Ok(out)
}

/// Adds the postings and statistics of the chunks just written: `rowids`
/// with their tokens (`split` of their breadcrumb and text, whose lengths
/// the chunk rows already hold in `lex_len`).
pub(crate) fn add_postings(
    tx: &mut Transaction<'_>,
    project: &str,
    rowids: &[i64],
    split: &[ChunkTerms],
) -> Result<(), postgres::Error> {
    let mut p_chunk = Vec::new();
    let mut p_term = Vec::new();
    let mut p_head = Vec::new();
    let mut p_body = Vec::new();
    let mut p_len = Vec::new();
    let mut df: HashMap<&str, i64> = HashMap::new();
    let mut tokens = 0i64;
    for (&id, s) in rowids.iter().zip(split) {
        tokens += i64::from(s.len);
        for (term, head, body) in &s.terms {
            p_chunk.push(id);
            p_term.push(term.as_str());
            p_head.push(*head);
            p_body.push(*body);
            p_len.push(s.len);
            *df.entry(term.as_str()).or_default() += 1;
        }
    }
    if !p_chunk.is_empty() {
        tx.execute(
            "INSERT INTO lex_postings (project, term, chunk, head, body, len)
             SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::int[], $5::int[], $6::int[])",
            &[&project, &p_term, &p_chunk, &p_head, &p_body, &p_len],
        )?;
    }
    let mut terms: Vec<(&str, i64)> = df.into_iter().collect();
    terms.sort_unstable();
    let (t, n): (Vec<&str>, Vec<i64>) = terms.into_iter().unzip();
    if !t.is_empty() {
        tx.execute(
            "INSERT INTO lex_terms (project, term, df)
             SELECT $1, t, n FROM unnest($2::text[], $3::bigint[]) AS u(t, n) ORDER BY t
             ON CONFLICT (project, term) DO UPDATE SET df = lex_terms.df + EXCLUDED.df",
            &[&project, &t, &n],
        )?;
    }
    tx.execute(
        "INSERT INTO lex_stats (project, rows, tokens) VALUES ($1, $2, $3)
         ON CONFLICT (project) DO UPDATE
         SET rows = lex_stats.rows + EXCLUDED.rows, tokens = lex_stats.tokens + EXCLUDED.tokens",
        &[&project, &(rowids.len() as i64), &tokens],
    )?;
    Ok(())
}

/// Takes the statistics of a document's chunks back out, before the
/// document is deleted (its postings go with its chunks). Each step is a
/// lookup by key — the document by (project, path), its chunks by
/// document, their postings by chunk — so that no plan can walk the
/// project's postings for every document written (one did: a postings
/// table that was empty when last analysed made the planner drive the
/// join from the project's postings, 121 million index probes in one test).
pub(crate) fn remove_document(
    tx: &mut Transaction<'_>,
    project: &str,
    path: &str,
) -> Result<(), postgres::Error> {
    let Some(doc) = tx.query_opt(
        "SELECT id FROM documents WHERE project = $1 AND path = $2",
        &[&project, &path],
    )?
    else {
        return Ok(());
    };
    let doc: i64 = doc.get(0);
    let chunks = tx.query("SELECT id, lex_len FROM chunks WHERE doc_id = $1", &[&doc])?;
    if chunks.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = chunks.iter().map(|r| r.get(0)).collect();
    let tokens: i64 = chunks.iter().map(|r| i64::from(r.get::<_, i32>(1))).sum();
    let gone = tx.query(
        "SELECT term, count(*) FROM lex_postings WHERE chunk = ANY($1) GROUP BY term ORDER BY term",
        &[&ids],
    )?;
    let terms: Vec<String> = gone.iter().map(|r| r.get(0)).collect();
    let counts: Vec<i64> = gone.iter().map(|r| r.get(1)).collect();
    if !terms.is_empty() {
        tx.execute(
            "UPDATE lex_terms t SET df = t.df - u.n
             FROM unnest($2::text[], $3::bigint[]) AS u(term, n)
             WHERE t.project = $1 AND t.term = u.term",
            &[&project, &terms, &counts],
        )?;
    }
    tx.execute(
        "UPDATE lex_stats SET rows = rows - $2, tokens = tokens - $3 WHERE project = $1",
        &[&project, &(ids.len() as i64), &tokens],
    )?;
    Ok(())
}

/// Builds the project's postings and statistics from its chunks, when its
/// index was written before they were kept (meta `lexicon` absent) or split
/// otherwise (meta `lexicon` not [`LEXICON_VERSION`]: before CJK bigrams).
/// Runs under the project's writer lock.
pub(crate) fn build_if_missing(tx: &mut Transaction<'_>, project: &str) -> Result<bool, AddError> {
    let done = tx
        .query_opt(
            "SELECT 1 FROM cairn_meta WHERE project = $1 AND key = 'lexicon' AND value = $2",
            &[&project, &LEXICON_VERSION],
        )?
        .is_some();
    if done {
        return Ok(false);
    }
    tx.execute("DELETE FROM lex_postings WHERE project = $1", &[&project])?;
    tx.execute("DELETE FROM lex_terms WHERE project = $1", &[&project])?;
    tx.execute("DELETE FROM lex_stats WHERE project = $1", &[&project])?;
    tx.execute(
        "INSERT INTO lex_stats (project, rows, tokens) VALUES ($1, 0, 0)",
        &[&project],
    )?;
    let mut after = 0i64;
    loop {
        let rows = tx.query(
            "SELECT id, breadcrumb, text FROM chunks WHERE project = $1 AND id > $2
             ORDER BY id LIMIT 1000",
            &[&project, &after],
        )?;
        let Some(last) = rows.last() else { break };
        after = last.get(0);
        let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        let texts: Vec<(String, String)> = rows.iter().map(|r| (r.get(1), r.get(2))).collect();
        let refs: Vec<(&str, &str)> = texts
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let split = split(&refs).map_err(AddError::Tokenizer)?;
        let lens: Vec<i32> = split.iter().map(|s| s.len).collect();
        tx.execute(
            "UPDATE chunks SET lex_len = u.len FROM unnest($1::bigint[], $2::int[]) AS u(id, len)
             WHERE chunks.id = u.id",
            &[&ids, &lens],
        )?;
        add_postings(tx, project, &ids, &split)?;
    }
    tx.execute(
        "INSERT INTO cairn_meta (project, key, value) VALUES ($1, 'lexicon', $2)
         ON CONFLICT (project, key) DO UPDATE SET value = EXCLUDED.value",
        &[&project, &LEXICON_VERSION],
    )?;
    Ok(true)
}

/// Why the postings of a write could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AddError {
    #[error(transparent)]
    Postgres(#[from] postgres::Error),
    #[error("{0}")]
    Tokenizer(String),
}

/// FTS5's inverse document frequency of a term in `n` of `rows` chunks.
pub(crate) fn idf(rows: f64, n: f64) -> f64 {
    let idf = ((rows - n + 0.5) / (n + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fts5_porter_unicode61_per_column() {
        let s = split(&[
            (
                "Caching > Redis",
                "Caching sessions: the cache caches; Café!",
            ),
            ("", ""),
        ])
        .unwrap();
        assert_eq!(s.len(), 2);
        let get = |t: &str| s[0].terms.iter().find(|x| x.0 == t).cloned();
        // porter: caching, cache, caches → cach; unicode61 folds é.
        assert_eq!(get("cach"), Some(("cach".into(), 1, 3)));
        assert_eq!(get("redi"), Some(("redi".into(), 1, 0)));
        assert_eq!(get("cafe"), Some(("cafe".into(), 0, 1)));
        assert_eq!(s[0].len, 2 + 6);
        assert_eq!(s[1], ChunkTerms::default());
        assert_eq!(
            query_tokens(&["caching".into(), "running".into(), "runs".into()]).unwrap(),
            vec!["cach", "run", "run"]
        );
    }

    #[test]
    fn cjk_runs_are_split_into_the_bigrams_sqlite_indexes() {
        let s = split(&[("缓存配置", "使用Redis缓存。")]).unwrap();
        let get = |t: &str| s[0].terms.iter().find(|x| x.0 == t).cloned();
        assert_eq!(get("缓存"), Some(("缓存".into(), 1, 1)));
        assert_eq!(get("配置"), Some(("配置".into(), 1, 0)));
        assert_eq!(get("redi"), Some(("redi".into(), 0, 1)));
        assert_eq!(get("使用"), Some(("使用".into(), 0, 1)));
        // 缓存 存配 配置 | 使用 redi 缓存
        assert_eq!(s[0].len, 3 + 3);
        assert_eq!(
            query_tokens(&["東京".into(), "都庁".into()]).unwrap(),
            vec!["東京", "都庁"]
        );
    }

    #[test]
    fn idf_is_fts5s() {
        assert!((idf(100.0, 1.0) - (99.5f64 / 1.5).ln()).abs() < 1e-12);
        assert_eq!(idf(10.0, 9.0), 1e-6);
    }
}
