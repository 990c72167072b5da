//! Natural-language query → FTS5 MATCH expression.
//!
//! FTS5 joins bare terms with an implicit AND, so a question of ten words
//! matches only chunks holding all ten: almost nothing. We instead match an OR
//! of the query's content words and let BM25 rank by how many (and how rare)
//! match. Every term is double-quoted, so no user text (quotes, `-`, `:`, `*`,
//! parentheses, `AND`/`NOT`) can be read as FTS5 syntax.

/// English function words dropped from lexical queries (they match everything
/// and only add noise to BM25).
pub(crate) const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Most terms a query keeps: the first this many distinct content words.
/// A question has a few dozen at most; 10,000 distinct terms once made one
/// MCP `search` run for 11.5 s.
pub const MAX_QUERY_TERMS: usize = 64;

/// The query's words as FTS5's `unicode61` tokenizer would split them
/// (runs of letters and digits), lower-cased, stop words removed, each once,
/// at most [`MAX_QUERY_TERMS`] of them. When every word is a stop word, they
/// are all kept. Chinese, Japanese and Korean runs are first cut into
/// bigrams exactly as the index cuts them ([`cairn_core::fts_text`]), so
/// `东京的天气` asks for `东京`, `京的`, `的天`, `天气`; a query with no
/// CJK character is split as it always was.
pub fn query_terms(query: &str) -> Vec<String> {
    let query = cairn_core::fts_text(query);
    let mut all: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut content_words = 0;
    for word in query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = word.to_lowercase();
        if seen.insert(w.clone()) {
            if !STOP_WORDS.contains(&w.as_str()) {
                content_words += 1;
            }
            all.push(w);
            if content_words == MAX_QUERY_TERMS || all.len() == 4 * MAX_QUERY_TERMS {
                break;
            }
        }
    }
    let content: Vec<String> = all
        .iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .cloned()
        .collect();
    let mut terms = if content.is_empty() { all } else { content };
    terms.truncate(MAX_QUERY_TERMS);
    terms
}

/// Whether `word` (lowercase) is one of the stopwords BM25 leaves out of a
/// query.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// How many terms a raw FTS5 query names (its operators and brackets left
/// out): what [`MAX_QUERY_TERMS`] bounds for `--fts` passthrough.
pub fn fts_term_count(expr: &str) -> usize {
    expr.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|t| !t.is_empty() && !matches!(*t, "AND" | "OR" | "NOT" | "NEAR" | "+" | "*"))
        .count()
}

/// An FTS5 expression matching any of the query's terms, or `None` when the
/// query has no words at all.
pub fn lexical_expr(query: &str) -> Option<String> {
    let terms = query_terms(query);
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_stop_words_and_joins_with_or() {
        assert_eq!(
            lexical_expr("How does the caching work?").unwrap(),
            "\"caching\" OR \"work\""
        );
    }

    #[test]
    fn syntax_characters_become_plain_terms() {
        let e = lexical_expr("\"foo\" -bar: (baz*) AND NOT x-y").unwrap();
        assert_eq!(e, "\"foo\" OR \"bar\" OR \"baz\" OR \"x\" OR \"y\"");
        assert!(lexical_expr("  -- ** () ").is_none());
    }

    #[test]
    fn cjk_queries_ask_for_the_bigrams_the_index_holds() {
        assert_eq!(
            query_terms("Redis的缓存怎么配置?"),
            vec!["redis", "的缓", "缓存", "存怎", "怎么", "么配", "配置"]
        );
        assert_eq!(lexical_expr("東京 都庁").unwrap(), "\"東京\" OR \"都庁\"");
        assert_eq!(query_terms("猫"), vec!["猫"]);
    }

    #[test]
    fn all_stop_words_are_kept_rather_than_nothing() {
        assert_eq!(query_terms("Who are you"), vec!["who", "are", "you"]);
    }

    proptest::proptest! {
        #[test]
        fn expression_never_contains_raw_syntax(q in ".{0,80}") {
            if let Some(e) = lexical_expr(&q) {
                for part in e.split(" OR ") {
                    proptest::prop_assert!(part.len() >= 3 && part.starts_with('"') && part.ends_with('"'));
                    proptest::prop_assert!(!part[1..part.len() - 1].contains('"'));
                }
            }
        }
    }
}
