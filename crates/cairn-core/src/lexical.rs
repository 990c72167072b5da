//! The text the lexical index sees ([`fts_text`]): what FTS5's `porter
//! unicode61` tokenizer is handed in place of a chunk's text, a breadcrumb
//! or a query. Two things are added to what the tokenizer would make of the
//! text alone:
//!
//! - runs of Chinese, Japanese and Korean characters cut into overlapping
//!   bigrams ([`crate::cjk`]);
//! - the words of the text's camelCase and PascalCase names
//!   ([`identifier_parts`]), each distinct word once, on a line after the
//!   text: `l.SetFormatter(f)` is indexed as `l.SetFormatter(f)` and
//!   ` Set Formatter`.
//!
//! **Why identifier parts.** `unicode61` splits at `_`, so `steal_work`
//! already meets a question about "work stealing"; it keeps `SetFormatter`,
//! `parseOptions` or `HTTPServer` whole, so in Go, JavaScript, Java, C# and
//! every language's type names a question in words ("how do I set the
//! formatter") did not reach the name by BM25. The name stays a token too,
//! so a search for the exact identifier matches it as before and ranks it
//! by its own (rare) frequency. Each word is added once per text, not after
//! every occurrence of its name, which let a name repeated through a file
//! outweigh the words the text itself writes. code-QA's tuning half, MRR@10:
//! on its first four projects, words after every occurrence 0.9090 → 0.8851,
//! once per text 0.9033; with its two camelCase-heavy projects (js-yaml,
//! zlib) added, once per text 0.8397 → 0.8464. Both the index
//! (`cairn-store`'s FTS table, `cairn-postgres`' postings) and the query
//! (`cairn-search`'s `query_terms`) go through [`fts_text`], so they split
//! alike (a raw FTS5 expression only through [`cjk_bigrams`]); the chunk
//! text itself is stored and shown unchanged.
//!
//! Text with neither CJK nor a camelCase name comes back borrowed, byte for
//! byte.

use std::borrow::Cow;

use crate::cjk::cjk_bigrams;

/// Longest run of ASCII letters and digits read as a name: longer ones are
/// hashes, base64 or minified code, whose "parts" mean nothing.
const MAX_NAME: usize = 64;

/// `text` as the lexical index and the query tokenizer take it: CJK runs as
/// bigrams ([`cjk_bigrams`]), then the words of its camelCase or PascalCase
/// names ([`identifier_parts`]) on a line of their own after it. Text with
/// neither comes back borrowed and byte-identical.
pub fn fts_text(text: &str) -> Cow<'_, str> {
    match cjk_bigrams(text) {
        Cow::Borrowed(t) => with_identifier_parts(t),
        Cow::Owned(t) => match with_identifier_parts(&t) {
            Cow::Borrowed(_) => Cow::Owned(t),
            Cow::Owned(o) => Cow::Owned(o),
        },
    }
}

/// `text` with the words of its camelCase names written once each after it
/// (each distinct word once, however often its names occur: a name repeated
/// through a file does not repeat its words, which would outweigh the
/// words the text itself writes); borrowed when no name has parts.
fn with_identifier_parts(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut words: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        // Only a capital after the first letter can start a word: most
        // words of most texts have none, and are passed over without
        // splitting (this runs on every chunk indexed and every query).
        if !bytes[start + 1..i].iter().any(u8::is_ascii_uppercase) {
            continue;
        }
        // A name glued to a non-ASCII letter (`naïveCase`) is one token to
        // unicode61 with that letter; leave it whole.
        let glued = |b: Option<&u8>| b.is_some_and(|b| !b.is_ascii());
        if glued(bytes.get(i)) || (start > 0 && glued(bytes.get(start - 1))) {
            continue;
        }
        let parts = identifier_parts(&text[start..i]);
        if parts.len() < 2 {
            continue;
        }
        for p in parts {
            if seen.insert(p.to_ascii_lowercase()) {
                words.push(p);
            }
        }
    }
    if words.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8 * words.len() + 2);
    out.push_str(text);
    out.push('\n');
    for w in words {
        out.push(' ');
        out.push_str(w);
    }
    Cow::Owned(out)
}

/// The words of a camelCase or PascalCase name (ASCII letters and digits):
/// a cut before a capital that follows a small letter or a digit
/// (`parseOptions` → `parse Options`, `utf8Decode` → `utf8 Decode`), and
/// before the last capital of a run of capitals followed by a small letter
/// (`HTTPServer` → `HTTP Server`). One element for a name with no cut
/// (`parse`, `HTTP`, `Server`), and for names longer than 64 characters.
pub fn identifier_parts(name: &str) -> Vec<&str> {
    let b = name.as_bytes();
    if b.len() > MAX_NAME || !b.iter().all(u8::is_ascii_alphanumeric) {
        return vec![name];
    }
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..b.len() {
        let (prev, cur) = (b[i - 1], b[i]);
        let hump = cur.is_ascii_uppercase() && (prev.is_ascii_lowercase() || prev.is_ascii_digit());
        let acronym_end = cur.is_ascii_uppercase()
            && prev.is_ascii_uppercase()
            && b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        // `acronym_end` cuts before the capital that starts the next word:
        // `HTTPServer`, at `S`.
        if hump || acronym_end {
            parts.push(&name[start..i]);
            start = i;
        }
    }
    parts.push(&name[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_at_their_humps() {
        assert_eq!(identifier_parts("parseOptions"), ["parse", "Options"]);
        assert_eq!(identifier_parts("SetFormatter"), ["Set", "Formatter"]);
        assert_eq!(identifier_parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(
            identifier_parts("getHTTPResponseCode"),
            ["get", "HTTP", "Response", "Code"]
        );
        assert_eq!(identifier_parts("utf8Decode"), ["utf8", "Decode"]);
        assert_eq!(identifier_parts("parse"), ["parse"]);
        assert_eq!(identifier_parts("HTTP"), ["HTTP"]);
        assert_eq!(identifier_parts("Server"), ["Server"]);
        assert_eq!(identifier_parts("IOError"), ["IO", "Error"]);
    }

    #[test]
    fn the_name_is_kept_and_its_words_follow_it() {
        assert_eq!(
            fts_text("func (l *Logger) SetFormatter(f Formatter) { l.setFormatter(f) }"),
            "func (l *Logger) SetFormatter(f Formatter) { l.setFormatter(f) }\n Set Formatter"
        );
        assert_eq!(fts_text("a HTTPServer."), "a HTTPServer.\n HTTP Server");
    }

    #[test]
    fn text_without_names_to_cut_is_borrowed_unchanged() {
        for t in [
            "",
            "fn steal_work(x: u32) -> Option<u32> { None }",
            "Caching > Redis: the cache caches; Café! naïve — ÀÉÎ, ß",
            "MAX_SIZE and HTTP and Server",
        ] {
            assert!(matches!(fts_text(t), Cow::Borrowed(b) if b == t), "{t}");
        }
    }

    #[test]
    fn long_runs_and_names_glued_to_other_letters_stay_whole() {
        let hash = "aB".repeat(40);
        assert!(matches!(fts_text(&hash), Cow::Borrowed(_)));
        assert!(matches!(fts_text("éparseOptions"), Cow::Borrowed(_)));
    }

    #[test]
    fn cjk_and_names_together() {
        assert_eq!(
            fts_text("用parseOptions写"),
            " 用 parseOptions 写 \n parse Options"
        );
    }
}
