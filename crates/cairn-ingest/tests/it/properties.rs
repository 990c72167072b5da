//! Property tests of the parsers that see every file and every memory:
//! frontmatter, the code chunker, entity extraction and redaction. They run
//! 256 cases each in CI; `CAIRN_FUZZ_CASES` runs more by hand (no engine, so
//! this is the long fuzz target):
//!
//! ```sh
//! CAIRN_FUZZ_CASES=100000 cargo test --release -p cairn-ingest --test it properties
//! ```

use cairn_ingest::{ChunkOptions, chunk_code, extract_entities, redact, split_frontmatter};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

fn runner() -> TestRunner {
    let cases = std::env::var("CAIRN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    TestRunner::new(ProptestConfig {
        cases,
        ..ProptestConfig::default()
    })
}

/// Text from YAML's, code's and secrets' pieces, in any order.
fn soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(
        &[
            "---",
            "...",
            "\n",
            "\n",
            "\r\n",
            "\r",
            ": ",
            "- ",
            "[",
            "]",
            "{",
            "}",
            "&a",
            "*a",
            "!!binary",
            "|",
            ">",
            "'",
            "\"",
            "#",
            "title",
            "tags",
            "type",
            "ttl",
            "9999999999999999999",
            "-1",
            "~",
            "null",
            "fn main() {",
            "}",
            "def f():",
            "    ",
            "\t",
            "class C {",
            "import x",
            "#ifdef X\n",
            "#else\n",
            "#endif\n",
            "#if A \\\n",
            "class API Foo {",
            "namespace n {",
            "template <typename T>",
            "void A::f() {",
            "public:",
            "<?php ",
            "function f() {",
            "module M\n",
            "def self.x\n",
            "end\n",
            "/*",
            "*/",
            "//",
            "\"\"\"",
            "é",
            "東京",
            "🦀",
            "\0",
            "\u{1b}[31m",
            "\u{feff}",
            "ghp_",
            "AKIA",
            "sk-",
            "password",
            "=",
            "https://u:p@h/",
            "Bearer ",
            "0123456789abcdef",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            "RateGate",
            "src/a.rs",
        ][..],
    );
    prop::collection::vec(pieces, 0..120).prop_map(|p| p.concat())
}

#[test]
fn frontmatter_never_panics_and_stays_in_the_text() {
    runner()
        .run(&soup(), |text| {
            let (fm, lines) = split_frontmatter(&text);
            let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
            prop_assert_eq!(fm.is_some(), lines > 0);
            if fm.is_some() {
                prop_assert!(body.starts_with("---"));
                prop_assert!(lines <= body.split_inclusive('\n').count());
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn code_chunks_are_valid_line_ranges_in_every_language() {
    let paths = prop::sample::select(
        &[
            "a.rs", "a.py", "a.ts", "a.tsx", "a.js", "a.go", "a.java", "a.cs", "a.c", "a.h",
            "a.cc", "a.rb", "a.php", "a.txt",
        ][..],
    );
    runner()
        .run(&(paths, soup()), |(path, text)| {
            let doc = chunk_code(path, &text, &ChunkOptions::default());
            let lines = text.lines().count();
            for c in &doc.chunks {
                let (start, end) = (c.start_line as usize, c.end_line as usize);
                prop_assert!(1 <= start && start <= end && end <= lines.max(1), "{:?}", c);
            }
            for (_, _, i) in &doc.symbols {
                prop_assert!(*i < doc.chunks.len());
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn redaction_is_idempotent_and_entities_hold_no_secret() {
    runner()
        .run(&soup(), |text| {
            let once = redact(&text);
            prop_assert_eq!(&redact(&once), &once);
            // What redaction left holds no entity redaction would change.
            for e in extract_entities(&once) {
                prop_assert_eq!(&redact(&e), &e);
            }
            Ok(())
        })
        .unwrap();
}
