//! Which words of a hit BM25 matched: the words whose token (as the index's
//! `porter unicode61` tokenizer makes it) is one of the query's, so a page
//! marks `logging` for "log" but not `log` inside `structlog`, nor a
//! stopword the query's BM25 left out.
//!
//! The tokens come from SQLite itself (an in-memory FTS5 table and its
//! `fts5vocab` instance view), as `cairn-postgres` splits text: a copy of
//! FTS5's Porter stemmer here could drift from the index's.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// The words of each text that BM25 matched for `terms` (the query's terms
/// as `cairn_search::query_terms` makes them): each distinct word as
/// written, in the order first seen. Words are runs of letters and digits,
/// as `unicode61` cuts them (`_` and `.` separate).
pub fn matched_words(terms: &[String], texts: &[&str]) -> Result<Vec<Vec<String>>> {
    if terms.is_empty() || texts.is_empty() {
        return Ok(vec![Vec::new(); texts.len()]);
    }
    let sqlite = |source| Error::Sqlite {
        path: PathBuf::from(":memory: (matched words)"),
        source,
    };
    let conn = rusqlite::Connection::open_in_memory().map_err(sqlite)?;
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
    )
    .map_err(sqlite)?;
    // Row 0: the query's terms; row k + 1: the distinct words of text k, one
    // per line, so a token's offset is its word's index.
    let words: Vec<Vec<&str>> = texts
        .iter()
        .map(|t| {
            let mut seen = HashSet::new();
            t.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty() && seen.insert(*w))
                .collect()
        })
        .collect();
    {
        let mut insert = conn
            .prepare("INSERT INTO t (rowid, text) VALUES (?1, ?2)")
            .map_err(sqlite)?;
        insert
            .execute(rusqlite::params![0i64, terms.join("\n")])
            .map_err(sqlite)?;
        for (k, w) in words.iter().enumerate() {
            insert
                .execute(rusqlite::params![k as i64 + 1, w.join("\n")])
                .map_err(sqlite)?;
        }
    }
    let mut stmt = conn
        .prepare("SELECT doc, term, offset FROM v ORDER BY doc, offset")
        .map_err(sqlite)?;
    let rows: Vec<(i64, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sqlite)?
        .collect::<rusqlite::Result<_>>()
        .map_err(sqlite)?;
    let wanted: HashSet<&str> = rows
        .iter()
        .filter(|(doc, _, _)| *doc == 0)
        .map(|(_, term, _)| term.as_str())
        .collect();
    let mut out = vec![Vec::new(); texts.len()];
    for (doc, term, offset) in &rows {
        if *doc == 0 || !wanted.contains(term.as_str()) {
            continue;
        }
        let k = (*doc - 1) as usize;
        // One word is one token (unicode61 cuts at what the split above
        // cuts at), so the offset is the word's index.
        if let Some(word) = words
            .get(k)
            .and_then(|w| w.get(usize::try_from(*offset).unwrap_or(usize::MAX)))
        {
            out[k].push((*word).to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_by_their_stem_and_nothing_inside_a_word() {
        let terms = vec!["log".to_string(), "configure".to_string()];
        let texts = [
            "structlog logs to the standard logging module; configuration of log_level",
            "nothing here",
        ];
        let got = matched_words(&terms, &texts).unwrap();
        assert_eq!(got[0], ["logs", "logging", "configuration", "log"]);
        assert!(got[1].is_empty());
        assert!(!got[0].iter().any(|w| w == "structlog" || w == "standard"));
    }
}
