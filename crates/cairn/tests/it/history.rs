//! The git history as a source: commit records, incremental passes,
//! redaction, `why`, `search --kind history`, the graph's `changed` edges.

use std::path::Path;

use cairn::{NoProgress, SearchOptions, WhyOptions};
use cairn_core::Kind;

use crate::{Project, roots};

/// Runs git with a fixed identity; each call a minute after the last, so
/// two commits of one test never share a second (`why` orders by time).
fn git(dir: &Path, args: &[&str]) {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let date = format!("2024-01-01T{:02}:{:02}:00Z", (n / 60) % 24, n % 60);
    assert!(
        cairn_test_support::git_at(dir, args, Some(&date)),
        "git {args:?}"
    );
}

const GATE_V1: &str = "/// Counts strikes per key.\npub fn admit_login(strikes: u32) -> bool {\n    strikes < 5\n}\n\n/// Formats a key.\npub fn format_key(k: &str) -> String {\n    k.to_lowercase()\n}\n";
const GATE_V2: &str = "/// Counts strikes per key.\npub fn admit_login(strikes: u32) -> bool {\n    strikes < 3\n}\n\n/// Formats a key.\npub fn format_key(k: &str) -> String {\n    k.to_lowercase()\n}\n";
const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

#[test]
fn commits_are_indexed_incrementally_redacted_and_answer_why() {
    let p = Project::with_config("[chunk]\nmin_chars = 0\n");
    let root = p.root();
    git(&root, &["init", "-q", "-b", "main"]);
    p.write("src/gate.rs", GATE_V1);
    git(&root, &["add", "src/gate.rs"]);
    git(
        &root,
        &[
            "commit",
            "-q",
            "-m",
            "Add the login gate\n\nFive strikes lock the account.",
        ],
    );
    let e = p.engine();
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.commits_indexed, 1, "{r:?}");

    // A second pass with no new commit reads none.
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.commits_indexed, 0);

    p.write("src/gate.rs", GATE_V2);
    git(&root, &["add", "src/gate.rs"]);
    let msg = format!(
        "Lower the strike limit to three\n\nCredential stuffing got through at five. Deploy token {TOKEN} rotated."
    );
    git(&root, &["commit", "-q", "-m", &msg]);
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.commits_indexed, 1, "only the new commit: {r:?}");
    // cairn.toml is no commit's: nothing else changed.
    assert_eq!(r.files_changed + r.files_added, 1, "{r:?}");

    // why, by symbol: both commits, newest first, the secret gone.
    let w = e.why("admit_login", &WhyOptions::default()).unwrap();
    let subjects: Vec<&str> = w.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(
        subjects,
        ["Lower the strike limit to three", "Add the login gate"]
    );
    assert_eq!(w.path.as_deref(), Some("src/gate.rs"));
    assert!(!w.commits[0].body.contains(TOKEN), "{}", w.commits[0].body);
    assert!(w.commits[0].body.contains(cairn_ingest::REDACTED));
    assert_eq!(w.commits[0].files[0].hunks, [(3, 3)]);
    assert_eq!(w.commits[0].files[0].symbols, ["admit_login"]);
    // format_key changed only in the first commit.
    let w = e.why("format_key", &WhyOptions::default()).unwrap();
    assert_eq!(w.commits.len(), 1);
    assert_eq!(w.commits[0].subject, "Add the login gate");

    // why, by line: the definition holding line 3, then the file's others.
    let w = e.why("src/gate.rs:3", &WhyOptions::default()).unwrap();
    assert_eq!(w.symbol.as_deref(), Some("admit_login"));
    assert_eq!(w.lines, Some((1, 4)));
    assert_eq!(w.commits[0].matched, "symbol");
    // A line past any definition's doc: the file's commits.
    let w = e.why("src/gate.rs", &WhyOptions::default()).unwrap();
    assert_eq!(w.commits.len(), 2);
    assert!(w.commits.iter().all(|c| c.matched == "file"));

    // The budget holds, bodies cut first.
    let w = e
        .why(
            "admit_login",
            &WhyOptions {
                max_tokens: 60,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(w.tokens <= 60, "{} tokens", w.tokens);

    // search --kind history finds the commit, never the token.
    let hits = e
        .search(
            "why was the strike limit lowered",
            &SearchOptions {
                kinds: vec![Kind::History],
                ..Default::default()
            },
        )
        .unwrap();
    assert!(
        hits.first()
            .is_some_and(|h| h.breadcrumb == "Lower the strike limit to three"),
        "{:?}",
        hits.iter().map(|h| &h.path).collect::<Vec<_>>()
    );
    assert!(hits.iter().all(|h| !h.text.contains(TOKEN)));
    assert_eq!(hits[0].source, cairn_core::Freshness::Fresh);

    // The graph: the commits are neighbours of the symbol.
    let n = e.graph_neighbors("admit_login", 50).unwrap();
    let commits = n
        .neighbors
        .iter()
        .filter(|x| x.node.kind == "history")
        .count();
    assert_eq!(commits, 2, "{:?}", n.neighbors);

    // Off: the records go on the next pass.
    drop(e);
    p.write("cairn.toml", "[history]\nenabled = false\n");
    let e = p.engine();
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.commits_removed, 2, "{r:?}");
    let w = e.why("admit_login", &WhyOptions::default()).unwrap();
    assert_eq!(w.commits_indexed, 0);
}

/// Issue 61 (7): `why` listed the memories anchored to the code with empty
/// text (the index keeps their frontmatter only). Fails before the fix.
#[test]
fn why_shows_the_text_of_the_memories_anchored_to_the_code() {
    let p = Project::with_config("[chunk]\nmin_chars = 0\n");
    let root = p.root();
    git(&root, &["init", "-q", "-b", "main"]);
    p.write("src/gate.rs", GATE_V1);
    git(&root, &["add", "src/gate.rs"]);
    git(&root, &["commit", "-q", "-m", "Add the login gate"]);
    let e = p.engine();
    e.index(&roots(&root), &NoProgress).unwrap();
    e.remember(&cairn::MemoryInput {
        text: "The strike limit is a security decision: ask before raising it".into(),
        kind: Some("gotcha".into()),
        sources: vec!["src/gate.rs".into()],
        ..Default::default()
    })
    .unwrap();
    let w = e.why("src/gate.rs", &WhyOptions::default()).unwrap();
    assert_eq!(w.memories.len(), 1, "{:?}", w.memories);
    assert!(
        w.memories[0].text.contains("ask before raising it"),
        "{:?}",
        w.memories[0]
    );
}
