use cairn::{NoProgress, SearchOptions};

use cairn_test_support::DyingEmbedder;

use crate::{Project, roots};

fn paths(engine: &cairn::Engine, q: &str) -> Vec<String> {
    let opts = SearchOptions {
        limit: 10,
        mode: cairn::Mode::Bm25,
        ..Default::default()
    };
    engine
        .search(q, &opts)
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect()
}

const LONG: &str = "The cache layer keeps session tokens in Redis with a five minute time to live.";

#[test]
fn add_modify_delete_rename() {
    let p = Project::new();
    p.write(
        "docs/a.md",
        &format!("# Alpha\n\n{LONG} Alpha specific words zebra.\n"),
    );
    p.write(
        "docs/b.md",
        &format!("# Beta\n\n{LONG} Beta specific words giraffe.\n"),
    );
    p.write(
        "docs/sub/c.md",
        &format!("# Gamma\n\n{LONG} Gamma specific words okapi.\n"),
    );
    let e = p.engine();

    let r = e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    assert_eq!(
        (
            r.files_seen,
            r.files_added,
            r.files_changed,
            r.files_deleted
        ),
        (3, 3, 0, 0)
    );
    assert_eq!((r.chunks_written, r.chunks_embedded), (3, 3));
    assert_eq!(paths(&e, "giraffe"), vec!["docs/b.md"]);

    // Unchanged re-run: nothing is read again, nothing embedded.
    let r = e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    assert_eq!(
        (r.files_unchanged, r.chunks_written, r.chunks_embedded),
        (3, 0, 0)
    );

    // Modify one file: exactly its chunk is re-embedded.
    std::thread::sleep(std::time::Duration::from_millis(20));
    p.write(
        "docs/b.md",
        &format!("# Beta\n\n{LONG} Beta now mentions a platypus instead.\n"),
    );
    let r = e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    assert_eq!(
        (
            r.files_changed,
            r.files_unchanged,
            r.chunks_written,
            r.chunks_embedded
        ),
        (1, 2, 1, 1)
    );
    assert!(paths(&e, "giraffe").is_empty());
    assert_eq!(paths(&e, "platypus"), vec!["docs/b.md"]);

    // Delete one file: its chunks leave the index.
    std::fs::remove_file(p.path("docs/a.md")).unwrap();
    let r = e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    assert_eq!(r.files_deleted, 1);
    assert!(paths(&e, "zebra").is_empty());

    // Rename: old path gone, new path found, vector reused from the cache.
    std::fs::rename(p.path("docs/sub/c.md"), p.path("docs/moved.md")).unwrap();
    let r = e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    assert_eq!(
        (
            r.files_added,
            r.files_deleted,
            r.chunks_embedded,
            r.embed_cache_hits
        ),
        (1, 1, 0, 1)
    );
    assert_eq!(paths(&e, "okapi"), vec!["docs/moved.md"]);

    let s = e.status().unwrap();
    assert_eq!((s.files, s.chunks, s.embedded_chunks), (2, 2, 2));
}

/// Issue 35: hooks wrote `10:45:02.654661908Z` into their health file, and
/// status (CLI, MCP, the page) showed it so: times are whole seconds.
#[test]
fn status_shows_hook_times_in_whole_seconds() {
    let p = Project::new();
    p.write("a.md", "# A\n\nSome text.\n");
    p.write(
        ".cairn/hooks/health.json",
        r#"{"claude-code": {"last_success": "2026-11-26T10:45:02.654661908Z",
            "last_error": {"time": "2026-11-26T10:45:01.5Z", "message": "at 10.5 s"},
            "injected": {"SessionStart": {"runs": 1, "last": {"time": "2026-11-26T10:45:03Z"}}}}}"#,
    );
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let hooks = e.status().unwrap().hooks.expect("the health file");
    let h = &hooks["claude-code"];
    assert_eq!(h["last_success"], "2026-11-26T10:45:02Z", "{hooks}");
    assert_eq!(h["last_error"]["time"], "2026-11-26T10:45:01Z", "{hooks}");
    assert_eq!(h["last_error"]["message"], "at 10.5 s", "{hooks}");
    assert_eq!(
        h["injected"]["SessionStart"]["last"]["time"],
        "2026-11-26T10:45:03Z"
    );
}

#[test]
fn touch_without_change_rechunks_nothing() {
    let p = Project::new();
    p.write("a.md", &format!("# A\n\n{LONG}\n"));
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    p.write("a.md", &format!("# A\n\n{LONG}\n")); // same bytes, new mtime
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(
        (r.files_unchanged, r.files_changed, r.chunks_written),
        (1, 0, 0)
    );
}

#[test]
fn plain_text_test_data_is_skipped_with_its_reason() {
    // Issue 63 / code-QA: `.txt` under a test folder is a test's input, and
    // `.egg-info` is generated; a `.txt` elsewhere is a doc.
    let p = Project::new();
    p.write("docs/notes.txt", &format!("Release notes.\n\n{LONG}\n"));
    p.write("tests/cases/emphasis.txt", "*one* _two_\n");
    p.write("demo.egg-info/SOURCES.txt", "demo/__init__.py\n");
    let e = p.engine();
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(r.files_added, 1, "{r:?}");
    let reasons: Vec<String> = r
        .skipped
        .iter()
        .map(|s| format!("{} {}", s.path.display(), s.reason))
        .collect();
    assert!(
        reasons
            .iter()
            .any(|s| s.contains("emphasis.txt") && s.contains("test data")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|s| s.contains("SOURCES.txt") && s.contains("egg-info")),
        "{reasons:?}"
    );
}

#[test]
fn bad_files_are_reported_and_skipped() {
    let p = Project::new();
    p.write("good.md", &format!("# Good\n\n{LONG}\n"));
    std::fs::write(p.path("binary.md"), b"# x\0\x01\x02 binary").unwrap();
    std::fs::write(
        p.path("latin1.md"),
        b"# caf\xe9 au lait, not utf-8 at all\n",
    )
    .unwrap();
    let e = p.engine();
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    // The binary file is skipped; the one bad byte costs one character of
    // latin1.md, which is indexed with a note.
    assert_eq!(r.files_added, 2);
    let skipped: Vec<String> = r
        .skipped
        .iter()
        .map(|s| format!("{} {}", s.path.display(), s.reason))
        .collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(
        skipped[0].contains("binary.md") && skipped[0].contains("binary"),
        "{skipped:?}"
    );
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(
        r.notes[0].path.ends_with("latin1.md") && r.notes[0].note.contains("UTF-8"),
        "{:?}",
        r.notes
    );
}

#[test]
fn index_survives_reopen_and_ignores_hidden_and_gitignored() {
    let p = Project::new();
    p.write("keep.md", &format!("# Keep\n\n{LONG} keepword\n"));
    p.write(
        ".hidden/secret.md",
        &format!("# Hidden\n\n{LONG} hiddenword\n"),
    );
    p.write("build/out.md", &format!("# Out\n\n{LONG} ignoredword\n"));
    p.write(".gitignore", "build/\n");
    p.write(".cairnignore", "drafts/\n");
    p.write("drafts/d.md", &format!("# Draft\n\n{LONG} draftword\n"));
    {
        let e = p.engine();
        let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
        assert_eq!(r.files_added, 1);
    }
    let e = p.engine();
    assert_eq!(paths(&e, "keepword"), vec!["keep.md"]);
    for w in ["hiddenword", "ignoredword", "draftword"] {
        assert!(paths(&e, w).is_empty(), "{w}");
    }
}

#[test]
fn deleting_the_index_loses_nothing() {
    let p = Project::new();
    p.write("a.md", &format!("# A\n\n{LONG} aardvark\n"));
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    drop(e);
    std::fs::remove_dir_all(p.path(".cairn")).unwrap();
    let e = p.engine();
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(r.files_added, 1);
    assert_eq!(paths(&e, "aardvark"), vec!["a.md"]);
}

/// An embedder that drops the last vector of every call.
struct ShortEmbedder;

impl cairn_core::Embedder for ShortEmbedder {
    fn model_id(&self) -> &str {
        "short"
    }
    fn dimension(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, cairn_core::EmbedError> {
        Ok(texts.iter().skip(1).map(|_| vec![0.5; 4]).collect())
    }
}

#[test]
fn an_embedder_that_answers_short_is_an_error_not_a_hang() {
    let p = Project::new();
    p.write("a.md", &format!("# A\n\n{LONG}\n"));
    let (root, config) = (p.root(), p.config());
    let e = cairn::Open::new(&root, &config)
        .embedder(Some(std::sync::Arc::new(ShortEmbedder)))
        .engine()
        .unwrap();
    let err = e
        .index(&roots(&p.root()), &NoProgress)
        .unwrap_err()
        .to_string();
    assert!(err.contains("returned 0 vectors for 1 texts"), "{err}");
}

pub(crate) fn engine_with(p: &Project, embedder: std::sync::Arc<DyingEmbedder>) -> cairn::Engine {
    let (root, config) = (p.root(), p.config());
    cairn::Open::new(&root, &config)
        .embedder(Some(embedder))
        .engine()
        .unwrap()
}

/// Chunks are written before any vector is computed: a pass whose model
/// dies has still written every file (BM25 finds each), and the next pass
/// re-chunks nothing and only embeds what is missing. (A pass killed while
/// it writes resumes from the last batch it wrote: the CLI's crash test.)
#[test]
fn a_pass_whose_model_dies_keeps_every_chunk_searchable() {
    let p = Project::with_config("[index]\nbatch_files = 2\n");
    for i in 0..6 {
        p.write(
            &format!("f{i}.md"),
            &format!("# F{i}\n\nfile number {i} word{i}x {LONG}\n"),
        );
    }
    let dying = engine_with(&p, DyingEmbedder::new(2));
    assert!(dying.index(&roots(&p.root()), &NoProgress).is_err());
    for i in 0..6 {
        assert_eq!(
            paths(&dying, &format!("word{i}x")),
            vec![format!("f{i}.md")]
        );
    }
    drop(dying);
    let e = engine_with(&p, DyingEmbedder::new(usize::MAX));
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(
        (
            r.files_unchanged,
            r.files_changed,
            r.files_added,
            r.chunks_written,
            r.chunks_embedded
        ),
        (6, 0, 0, 0, 6),
        "{r:?}"
    );
    assert_eq!(e.status().unwrap().embedded_chunks, 6);
}

/// One file of 1,000 chunks whose embedding dies after 700 vectors: the
/// vectors made so far, up to the last flush (512), are in the embedding
/// cache, so the next pass embeds only the rest.
#[test]
fn a_kill_inside_one_huge_file_keeps_its_flushed_vectors() {
    let p = Project::new();
    let text: String = (0..1000)
        .map(|i| format!("# Section {i}\n\nParagraph {i} says {LONG}\n\n"))
        .collect();
    p.write("huge.md", &text);
    let dying = engine_with(&p, DyingEmbedder::new(700));
    assert!(dying.index(&roots(&p.root()), &NoProgress).is_err());
    drop(dying);
    let e = engine_with(&p, DyingEmbedder::new(usize::MAX));
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(
        (r.files_unchanged, r.chunks_written, r.chunks_embedded),
        (1, 0, 488),
        "{r:?}"
    );
    assert_eq!(e.status().unwrap().embedded_chunks, 1000);
}

/// A file over `[index] max_file_mb` is reported, not read; one line too
/// long to split becomes a chunk of its first 64 KiB, not of all of it.
#[test]
fn huge_files_are_skipped_and_huge_lines_cut() {
    let p = Project::with_config("[index]\nmax_file_mb = 1\n");
    p.write("big.md", &"word ".repeat(300_000));
    p.write(
        "line.md",
        &format!("# Line\n\nneedle {}\n", "x".repeat(500_000)),
    );
    let e = p.engine();
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert!(
        r.skipped
            .iter()
            .any(|s| s.path.ends_with("big.md") && s.reason.contains("max_file_mb")),
        "{r:?}"
    );
    assert_eq!(paths(&e, "needle"), vec!["line.md"]);
    let hits = e
        .search(
            "needle",
            &SearchOptions {
                mode: cairn::Mode::Bm25,
                ..Default::default()
            },
        )
        .unwrap();
    let text = &hits[0].text;
    assert!(text.len() <= 64 * 1024, "{}", text.len());
}

/// Changing a `[chunk]` setting re-chunks the files on the next pass (the
/// setting is part of what a document records as its pipeline); before, the
/// old chunks stayed until each file changed.
#[test]
fn a_changed_chunk_setting_rechunks_every_file() {
    let p = Project::new();
    p.write("a.md", &format!("# A\n\n{LONG}\n\n## B\n\n{LONG}\n"));
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let again = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(again.files_unchanged, 1, "{again:?}");
    drop(e);
    p.write("cairn.toml", "[chunk]\nmax_chars = 60\n");
    let e = p.engine();
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!((r.files_changed, r.files_unchanged), (1, 0), "{r:?}");
}
