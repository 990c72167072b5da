//! Property tests of what reaches FTS5: the query sanitizer's output
//! (`cairn_search::lexical_expr`) is always a valid FTS5 query, and raw FTS5
//! syntax passed through (`search --fts`) answers or fails cleanly, on a
//! real index. No engine: this builds in seconds, so it doubles as the fuzz
//! target run longer by hand:
//!
//! ```sh
//! CAIRN_FUZZ_CASES=100000 cargo test --release -p cairn-store --test fts_properties
//! ```

use cairn_core::{Change, Chunk, DocWrite, IndexWriter, WriteBatch};
use cairn_search::{fts_term_count, lexical_expr};
use cairn_store::Store;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

/// Cases per property: 256 in CI, `CAIRN_FUZZ_CASES` by hand.
fn cases() -> u32 {
    std::env::var("CAIRN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// A small index: a few chunks with words the generated queries use.
fn index() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("i.sqlite")).unwrap();
    let texts = [
        "connection pooling with NEAR limits",
        "AND OR NOT are words here: c++ and c# too",
        "unicode café ünïcödé 東京 and emoji 🦀",
    ];
    let chunks = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Chunk::new(
                "a.md",
                vec!["Top".into()],
                1,
                i as u32 + 1,
                i as u32 + 1,
                (*t).into(),
            )
        })
        .collect();
    store
        .write(&WriteBatch {
            changes: vec![Change::Upsert(DocWrite {
                path: "a.md".into(),
                hash: "h".into(),
                mtime_ns: 1,
                size: 1,
                pipeline: String::new(),
                title: None,
                tags: vec![],
                domain: String::new(),
                meta: String::new(),
                chunks,
                links: vec![],
                source: None,
            })],
            ..Default::default()
        })
        .unwrap();
    (dir, store)
}

/// Query text made of FTS5's syntax, words, Unicode and control characters.
fn soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(
        &[
            "\"",
            "'",
            "(",
            ")",
            "*",
            "^",
            ":",
            "-",
            "+",
            "NEAR",
            "NEAR(",
            "AND",
            "OR",
            "NOT",
            "{",
            "}",
            ",",
            ".",
            "/",
            "\\",
            "\0",
            "\u{1b}",
            "\n",
            " ",
            " ",
            "  ",
            "pool",
            "connection",
            "c++",
            "c#",
            "café",
            "東京",
            "🦀",
            "a",
            "text:",
            "breadcrumb:",
            "\u{feff}",
            "\u{200b}",
            "%",
            "_",
            "$1",
            "?",
        ][..],
    );
    prop::collection::vec(pieces, 0..60).prop_map(|p| p.concat())
}

fn runner() -> TestRunner {
    TestRunner::new(ProptestConfig {
        cases: cases(),
        ..ProptestConfig::default()
    })
}

/// Whatever a user or an agent types, the sanitized query runs.
#[test]
fn sanitized_queries_are_always_valid_fts5() {
    let (_dir, store) = index();
    let reader = std::cell::RefCell::new(store.reader().unwrap());
    runner()
        .run(&soup(), |q| {
            if let Some(expr) = lexical_expr(&q) {
                prop_assert!(fts_term_count(&expr) <= 64, "{}", expr);
                let mut reader = reader.borrow_mut();
                let snap = reader.snapshot().unwrap();
                let r = snap.bm25(&expr, 10, (1.0, 1.0), None);
                prop_assert!(r.is_ok(), "{:?} -> {:?}: {:?}", q, expr, r);
            }
            Ok(())
        })
        .unwrap();
}

/// Raw FTS5 syntax answers, or fails with an error that says why; the
/// snapshot stays usable after a failed query.
#[test]
fn raw_fts5_answers_or_fails_cleanly() {
    let (_dir, store) = index();
    let reader = std::cell::RefCell::new(store.reader().unwrap());
    runner()
        .run(&soup(), |q| {
            let mut reader = reader.borrow_mut();
            let snap = reader.snapshot().unwrap();
            if let Err(e) = snap.bm25(&q, 10, (1.0, 1.0), Some("a")) {
                prop_assert!(!e.to_string().is_empty());
            }
            prop_assert!(snap.bm25("\"pool\"", 10, (1.0, 1.0), None).is_ok());
            Ok(())
        })
        .unwrap();
}
