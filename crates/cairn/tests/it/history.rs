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

/// A repository whose first commit, "Add the login gate", writes
/// `src/gate.rs` ([`GATE_V1`]); the project and its root.
fn gate_repository() -> (Project, std::path::PathBuf) {
    gate_repository_with("")
}

/// [`gate_repository`] with more of `cairn.toml`.
fn gate_repository_with(config: &str) -> (Project, std::path::PathBuf) {
    let p = Project::with_config(&format!("[chunk]\nmin_chars = 0\n{config}"));
    let root = p.root();
    git(&root, &["init", "-q", "-b", "main"]);
    p.write("src/gate.rs", GATE_V1);
    git(&root, &["add", "src/gate.rs"]);
    git(&root, &["commit", "-q", "-m", "Add the login gate"]);
    (p, root)
}

/// `search --kind history`.
fn history_search(e: &cairn::Engine, query: &str) -> Vec<cairn_core::Hit> {
    e.search(
        query,
        &SearchOptions {
            kinds: vec![Kind::History],
            ..Default::default()
        },
    )
    .unwrap()
}

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
    let hits = history_search(&e, "why was the strike limit lowered");
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
    let (p, root) = gate_repository();
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

/// A date `i` minutes into 2024 (for tests of many commits, whose order
/// `why` reads from their times).
fn minute(i: usize) -> String {
    format!(
        "2024-02-{:02}T{:02}:{:02}:00Z",
        1 + i / 1440,
        (i / 60) % 24,
        i % 60
    )
}

/// Commits everything staged in `dir` at `minute(i)` with message `msg`
/// (from a file: it may be of any size).
fn commit_at(dir: &Path, i: usize, msg: &str) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), msg).unwrap();
    let from = file.path().to_str().unwrap();
    assert!(
        cairn_test_support::git_at(dir, &["commit", "-q", "-F", from], Some(&minute(i))),
        "commit {i}"
    );
}

#[test]
fn one_huge_commit_message_hides_no_other_commit() {
    // The huge message first (the newest: it took the whole budget and
    // nothing was shown), then in the middle (the commits after it went).
    for huge_at in [3, 1] {
        let p = Project::with_config("[chunk]\nmin_chars = 0\n");
        let root = p.root();
        assert!(cairn_test_support::git(
            &root,
            &["init", "-q", "-b", "main"]
        ));
        for i in 0..4 {
            p.write("a.py", &format!("def f():\n    return {i}\n"));
            assert!(cairn_test_support::git(&root, &["add", "a.py"]));
            let msg = if i == huge_at {
                // One line of 200 KB: all subject.
                "huge ".repeat(40_000)
            } else {
                format!("Change {i}\n\nWhy change {i} was made.")
            };
            commit_at(&root, i, &msg);
        }
        let e = p.engine();
        let r = e.index(&roots(&root), &NoProgress).unwrap();
        assert_eq!(r.commits_indexed, 4, "{r:?}");
        for target in ["a.py", "f"] {
            let w = e.why(target, &WhyOptions::default()).unwrap();
            assert_eq!(w.matched, 4, "{target}");
            assert_eq!(
                w.commits.len(),
                4,
                "{target}, huge message at {huge_at}: {:?}",
                w.commits
                    .iter()
                    .map(|c| &c.subject[..c.subject.len().min(20)])
                    .collect::<Vec<_>>()
            );
            assert!(w.tokens <= w.max_tokens, "{} > {}", w.tokens, w.max_tokens);
            for (k, c) in w.commits.iter().enumerate() {
                let i = 3 - k;
                if i != huge_at {
                    assert_eq!(c.subject, format!("Change {i}"));
                    assert_eq!(c.body, format!("Why change {i} was made."));
                }
            }
        }
        // A tight budget cuts the messages, still every commit.
        let w = e
            .why(
                "a.py",
                &WhyOptions {
                    max_tokens: 200,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(w.commits.len(), 4, "{w:?}");
        assert!(w.tokens <= 200, "{}", w.tokens);
    }
}

/// Overwrites the loose object `id` of the repository at `root` with bytes
/// that are no zlib stream.
fn corrupt_object(root: &Path, id: &str) {
    let path = root.join(".git/objects").join(&id[..2]).join(&id[2..]);
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).unwrap();
    std::fs::write(&path, b"garbage, no git object").unwrap();
}

fn rev_parse(root: &Path, spec: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", spec])
        .current_dir(root)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_corrupt_git_object_costs_only_what_it_damaged() {
    for what in ["blob", "tree", "commit"] {
        let p = Project::with_config("[chunk]\nmin_chars = 0\n");
        let root = p.root();
        assert!(cairn_test_support::git(
            &root,
            &["init", "-q", "-b", "main"]
        ));
        for i in 0..3 {
            p.write("a.py", &format!("def f():\n    return {i}\n"));
            p.write(
                &format!("docs/d{i}.md"),
                &format!("# Doc {i}\n\nThe corrtoken document number {i}.\n"),
            );
            assert!(cairn_test_support::git(&root, &["add", "."]));
            commit_at(&root, i, &format!("Change {i}"));
        }
        let id = match what {
            "blob" => rev_parse(&root, "HEAD~1:a.py"),
            "tree" => rev_parse(&root, "HEAD~1^{tree}"),
            _ => rev_parse(&root, "HEAD~1"),
        };
        corrupt_object(&root, &id);
        let e = p.engine();
        let r = e
            .index(&roots(&root), &NoProgress)
            .unwrap_or_else(|err| panic!("a corrupt {what} fails the pass: {err}"));
        assert!(r.files_added >= 4, "{what}: the files are indexed: {r:?}");
        assert!(
            r.history_warnings.iter().any(|w| w.contains(&id)),
            "{what}: the warning names the object {id}: {:?}",
            r.history_warnings
        );
        // What could be read is there. A blob costs its lines: every commit
        // still lists a.py. A tree costs the file lists of the two commits
        // that need it. A commit costs itself, what lies only behind it,
        // and its child's file list (no parent to compare with).
        let w = e.why("a.py", &WhyOptions::default()).unwrap();
        let subjects: Vec<&str> = w.commits.iter().map(|c| c.subject.as_str()).collect();
        match what {
            "blob" => {
                assert_eq!(r.commits_indexed, 3, "{r:?}");
                assert_eq!(subjects, ["Change 2", "Change 1", "Change 0"]);
            }
            "tree" => {
                assert_eq!(r.commits_indexed, 3, "{r:?}");
                assert_eq!(subjects, ["Change 0"]);
            }
            _ => {
                assert_eq!(r.commits_indexed, 1, "{r:?}");
                assert_eq!(w.commits_indexed, 1);
            }
        }
        let hits = e
            .search(
                "corrtoken",
                &SearchOptions {
                    mode: cairn::Mode::Bm25,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(hits.len(), 3, "{what}");
        // A second pass is quiet and fine.
        let again = e.index(&roots(&root), &NoProgress).unwrap();
        assert_eq!(again.commits_indexed, 0, "{what}: {again:?}");
    }
}

#[test]
fn why_follows_a_file_through_300_renames_to_its_name_now() {
    let p = Project::with_config("[chunk]\nmin_chars = 0\n");
    let root = p.root();
    assert!(cairn_test_support::git(
        &root,
        &["init", "-q", "-b", "main"]
    ));
    p.write("f0.py", "def renamed_fn(x):\n    return x + 1\n");
    assert!(cairn_test_support::git(&root, &["add", "."]));
    commit_at(&root, 0, "Add renamed_fn");
    let renames = 300;
    for i in 1..=renames {
        let (from, to) = (format!("f{}.py", i - 1), format!("f{i}.py"));
        assert!(cairn_test_support::git(&root, &["mv", &from, &to]));
        commit_at(&root, i, &format!("Move to {to}"));
    }
    let e = p.engine();
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.commits_indexed, renames + 1, "{r:?}");
    let now = format!("f{renames}.py");

    let w = e.why("renamed_fn", &WhyOptions::default()).unwrap();
    assert_eq!(
        w.path.as_deref(),
        Some(now.as_str()),
        "the file as it is named now"
    );
    assert_eq!(w.commits[0].subject, "Add renamed_fn");
    // The file asked by its name now: every commit under any of its names.
    let w = e.why(&now, &WhyOptions::default()).unwrap();
    assert_eq!(w.matched, renames + 1);
    assert_eq!(w.commits[0].subject, format!("Move to {now}"));
}

#[test]
fn the_current_definition_ranks_before_one_in_a_deleted_file() {
    let p = Project::with_config("[chunk]\nmin_chars = 0\n");
    let root = p.root();
    assert!(cairn_test_support::git(
        &root,
        &["init", "-q", "-b", "main"]
    ));
    p.write("new.py", "def shared_fn(x):\n    return x\n");
    assert!(cairn_test_support::git(&root, &["add", "."]));
    commit_at(&root, 0, "Write shared_fn in new.py");
    // A later commit touches a copy in a file deleted since.
    p.write("old.py", "def shared_fn(x):\n    return x * 2\n");
    assert!(cairn_test_support::git(&root, &["add", "."]));
    commit_at(&root, 1, "A copy in old.py");
    assert!(cairn_test_support::git(&root, &["rm", "-q", "old.py"]));
    commit_at(&root, 2, "Drop old.py");
    let e = p.engine();
    e.index(&roots(&root), &NoProgress).unwrap();
    let w = e.why("shared_fn", &WhyOptions::default()).unwrap();
    assert_eq!(w.path.as_deref(), Some("new.py"), "{w:?}");
    assert_eq!(w.commits[0].subject, "Write shared_fn in new.py");
    // The copy's commits come after: its file is gone.
    assert_eq!(w.matched, 3);
}

/// Issue 61 (6): a merge that brings a branch's change to a file is counted
/// apart from the commits themselves (`git log --follow` leaves merges
/// out), and the commit that created the file is one of them.
#[test]
fn why_counts_merges_apart_and_the_commit_that_created_the_file() {
    let (p, root) = gate_repository();
    git(&root, &["checkout", "-q", "-b", "tighten"]);
    p.write("src/gate.rs", GATE_V2);
    git(&root, &["commit", "-q", "-am", "Lower the strike limit"]);
    git(&root, &["checkout", "-q", "main"]);
    p.write("README.md", "# Gate\n");
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "Readme"]);
    git(
        &root,
        &["merge", "-q", "--no-ff", "-m", "Merge tighten", "tighten"],
    );
    let e = p.engine();
    e.index(&roots(&root), &NoProgress).unwrap();
    let w = e.why("src/gate.rs", &WhyOptions::default()).unwrap();
    assert_eq!((w.matched, w.merges), (3, 1), "{w:?}");
    let subjects: Vec<&str> = w.commits.iter().map(|c| c.subject.as_str()).collect();
    assert!(subjects.contains(&"Add the login gate"), "{subjects:?}");
    assert!(
        w.commits
            .iter()
            .any(|c| c.merge && c.subject == "Merge tighten"),
        "{subjects:?}"
    );
}

/// Issue 65 (1): history never delays the code. The files' vectors are
/// made before the history is walked, and the walk is shown from its first
/// commit (its bar had said `0 s` after a silent 92 s).
#[test]
fn the_files_vectors_come_before_the_history_walk_which_is_shown() {
    struct Stages(std::sync::Mutex<Vec<(String, u64, u64)>>);
    impl cairn::Progress for Stages {
        fn stage(&self, name: &str, total: u64) {
            self.0.lock().unwrap().push((name.to_string(), total, 0));
        }
        fn inc(&self, n: u64) {
            if let Some(last) = self.0.lock().unwrap().last_mut() {
                last.2 += n;
            }
        }
        fn finish(&self) {}
    }
    // Commit vectors asked for: they come last, after the walk.
    let (p, root) = gate_repository_with("[history]\nvectors = true\n");
    p.write("src/gate.rs", GATE_V2);
    git(&root, &["commit", "-q", "-am", "Lower the strike limit"]);
    let e = p.engine();
    let stages = Stages(std::sync::Mutex::new(Vec::new()));
    let r = e.index(&roots(&root), &stages).unwrap();
    assert_eq!(r.commits_indexed, 2, "{r:?}");
    let seen = stages.0.lock().unwrap().clone();
    let names: Vec<&str> = seen.iter().map(|(n, _, _)| n.as_str()).collect();
    let first_embedding = names.iter().position(|n| *n == "embedding");
    let history = names.iter().position(|n| *n == "history");
    assert!(
        first_embedding.is_some() && history.is_some() && first_embedding < history,
        "{names:?}"
    );
    // The walk: both commits counted on its bar; then the commits' vectors.
    let (_, total, done) = &seen[history.unwrap()];
    assert_eq!((*total, *done), (2, 2), "{seen:?}");
    assert_eq!(names.last(), Some(&"embedding"), "{names:?}");
    let status = e.status().unwrap();
    assert_eq!(
        status.chunks, status.embedded_chunks,
        "every chunk has its vector"
    );
}

#[test]
fn commit_records_can_go_without_vectors_and_are_still_found() {
    // The default: commit records without vectors.
    let (p, root) = gate_repository();
    p.write("src/gate.rs", GATE_V2);
    git(
        &root,
        &["commit", "-q", "-am", "Lower the strike limit to three"],
    );
    let e = p.engine();
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.commits_indexed, 2, "{r:?}");
    let s = e.status().unwrap();
    // The files' chunks have vectors; the two records have none and wait
    // for none.
    assert_eq!(s.commits_without_vectors, 2, "{s:?}");
    assert_eq!(s.embedded_chunks + 2, s.chunks, "{s:?}");
    assert!(s.embedded_chunks > 0, "{s:?}");
    assert_eq!(s.embed_queue.as_ref().map(|q| q.pending), Some(0), "{s:?}");
    // A second pass embeds nothing more.
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.chunks_embedded, 0, "{r:?}");
    // The words still find the commit, in a search of history and in `why`.
    let hits = history_search(&e, "why was the strike limit lowered");
    assert_eq!(
        hits.first().map(|h| h.breadcrumb.as_str()),
        Some("Lower the strike limit to three")
    );
    let why = e.why("admit_login", &WhyOptions::default()).unwrap();
    assert!(
        why.commits
            .iter()
            .any(|c| c.subject == "Lower the strike limit to three"),
        "{why:?}"
    );
}
