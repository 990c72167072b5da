//! Issue 40: one project across git worktrees and clones (real `git
//! worktree add`, a real second clone), personal memory beside the
//! project's, and a search over two projects.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn::{Config, Engine, MemoryInput, NoProgress, RecallOptions, SearchOptions};
use cairn_test_support::{fake_embedder, git, git_worktree_add, write_file as write};

/// A configuration with personal memory in `personal` (or off).
fn config(personal: Option<&Path>) -> Config {
    let mut c = Config::default();
    c.memory.personal = personal.map_or("none".into(), |p| p.display().to_string());
    c
}

/// An engine on `root` with the fake embedder and the user cache at `cache`.
fn engine(root: &Path, config: &Config, cache: Option<&Path>) -> Engine {
    cairn::Open::new(root, config)
        .embedder(Some(fake_embedder()))
        .engine()
        .unwrap()
        .with_user_cache(cache.map(Path::to_path_buf), 10_000)
}

/// A repository at `<base>/main` with `files` docs committed; `None` without git.
fn repo(base: &Path, files: usize) -> Option<PathBuf> {
    let main = base.join("main");
    std::fs::create_dir_all(&main).unwrap();
    if !git(&main, &["init", "-q"]) {
        eprintln!("no git here: skipped");
        return None;
    }
    for i in 0..files {
        write(
            &main,
            &format!("docs/d{i:02}.md"),
            &format!("# Topic {i}\n\nThe subsystem number {i} handles request kind {i}.\n"),
        );
    }
    assert!(git(&main, &["add", "."]));
    assert!(git(&main, &["commit", "-q", "-m", "first"]));
    Some(main)
}

fn recall_texts(e: &Engine, q: &str) -> Vec<(String, bool)> {
    e.recall(
        q,
        &RecallOptions {
            limit: 10,
            ..Default::default()
        },
    )
    .unwrap()
    .into_iter()
    .map(|r| (r.memory.text, r.personal))
    .collect()
}

#[test]
fn a_new_worktree_takes_its_vectors_from_the_user_cache_and_embeds_only_what_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let Some(main) = repo(&base, 20) else { return };
    let cache = base.join("cache/embeddings.sqlite");
    let c = config(None);
    let e = engine(&main, &c, Some(&cache));
    let first = e.index(&e.default_roots(), &NoProgress).unwrap();
    assert_eq!(first.user_cache_hits, 0);
    assert!(first.chunks_embedded >= 20, "{first:?}");

    let wt = base.join("feature");
    assert!(git_worktree_add(&main, &wt, "feature"));
    // One file differs in the new worktree.
    write(
        &wt,
        "docs/d03.md",
        "# Topic 3\n\nRewritten on the feature branch.\n",
    );
    let w = engine(&wt, &c, Some(&cache));
    let r = w.index(&w.default_roots(), &NoProgress).unwrap();
    assert_eq!(r.chunks_embedded, 1, "only the changed text: {r:?}");
    assert_eq!(r.user_cache_hits, first.chunks_embedded - 1, "{r:?}");
    // Each worktree answers about its own files.
    let hits = |e: &Engine, q: &str| -> Vec<String> {
        e.search(q, &SearchOptions::default())
            .unwrap()
            .into_iter()
            .map(|h| h.text)
            .collect()
    };
    assert!(hits(&w, "rewritten feature branch")[0].contains("Rewritten"));
    assert!(
        !hits(&e, "rewritten feature branch")
            .iter()
            .any(|t| t.contains("Rewritten"))
    );

    // Without the cache, the same worktree embeds everything again.
    let bare = base.join("bare");
    assert!(git_worktree_add(&main, &bare, "bare"));
    let b = engine(&bare, &c, None);
    let r = b.index(&b.default_roots(), &NoProgress).unwrap();
    assert_eq!(
        (r.chunks_embedded, r.user_cache_hits),
        (first.chunks_embedded, 0)
    );
}

#[test]
fn memories_are_one_set_for_every_worktree_and_seen_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let Some(main) = repo(&base, 3) else { return };
    let wt = base.join("feature");
    assert!(git_worktree_add(&main, &wt, "feature"));
    let c = config(None);
    let m = engine(&main, &c, None);
    let w = engine(&wt, &c, None);
    m.index(&m.default_roots(), &NoProgress).unwrap();
    w.index(&w.default_roots(), &NoProgress).unwrap();
    assert_eq!(w.memory_dir(), m.memory_dir(), "the main worktree's folder");
    assert_eq!(w.memory_root(), main.as_path());

    // Stored in the main worktree, recalled in the other at once (no
    // commit, no index run there), and the other way round.
    m.remember(&MemoryInput {
        text: "The staging database is reset every Monday night.".into(),
        ..Default::default()
    })
    .unwrap();
    let got = recall_texts(&w, "when is the staging database reset");
    assert!(
        got.iter().any(|(t, _)| t.contains("every Monday")),
        "{got:?}"
    );
    w.remember(&MemoryInput {
        text: "Feature flags live in config/flags.toml.".into(),
        ..Default::default()
    })
    .unwrap();
    let got = recall_texts(&m, "where do feature flags live");
    assert!(got.iter().any(|(t, _)| t.contains("flags.toml")), "{got:?}");
    // Nothing was written under the worktree's own memory folder.
    assert!(!wt.join(".cairn/memory").exists());
    // One audit log: both stores, undone from the worktree in turn.
    assert_eq!(m.vault().entries().unwrap().len(), 2);
    w.undo(None, "test").unwrap();
    assert!(
        !recall_texts(&m, "where do feature flags live")
            .iter()
            .any(|(t, _)| t.contains("flags.toml"))
    );

    // A second clone is the same project (one identity) with its own files.
    let clone = base.join("clone");
    assert!(git(
        &base,
        &[
            "clone",
            "-q",
            main.to_str().unwrap(),
            clone.to_str().unwrap()
        ]
    ));
    assert_eq!(cairn::identity(&clone), cairn::identity(&wt));
    assert_eq!(cairn::memory_root(&clone), clone);
}

#[test]
fn personal_memories_are_recalled_in_every_project_marked_and_never_written_into_one() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let personal = base.join("me");
    let c = config(Some(&personal));
    let (a, b) = (base.join("a"), base.join("b"));
    write(&a, "README.md", "# A\n\nA billing service.\n");
    write(&b, "README.md", "# B\n\nA garden planner.\n");
    let ea = engine(&a, &c, None);
    let eb = engine(&b, &c, None);
    ea.index(&ea.default_roots(), &NoProgress).unwrap();
    eb.index(&eb.default_roots(), &NoProgress).unwrap();
    assert!(
        ea.personal_engine(false).unwrap().is_none(),
        "none until stored"
    );

    let mine = ea.personal_engine(true).unwrap().unwrap();
    // Same redaction as a project's memory.
    let stored = mine
        .remember(&MemoryInput {
            text: "I prefer small commits with imperative subjects. token ghp_0123456789abcdefghijABCDEFGHIJ012345".into(),
            kind: Some("preference".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(
        !stored.memory.text.contains("ghp_0123"),
        "{}",
        stored.memory.text
    );
    ea.remember(&MemoryInput {
        text: "Invoices are numbered per tenant.".into(),
        ..Default::default()
    })
    .unwrap();

    for e in [&ea, &eb] {
        let got = recall_texts(e, "small commits imperative subjects");
        assert!(
            got.iter().any(|(t, p)| t.contains("small commits") && *p),
            "{}: {got:?}",
            e.root().display()
        );
    }
    // The project's own memory is not marked personal.
    let got = recall_texts(&ea, "how are invoices numbered");
    assert!(
        got.iter().any(|(t, p)| t.contains("per tenant") && !*p),
        "{got:?}"
    );
    // Neither project's folder holds it; the personal folder does.
    for root in [&a, &b] {
        assert!(!grep(root, "small commits"), "{}", root.display());
    }
    assert!(grep(&personal, "small commits"));
    // Undo and the audit log work there as in a project.
    assert_eq!(mine.vault().entries().unwrap().len(), 1);
    mine.undo(None, "test").unwrap();
    assert!(
        !recall_texts(&eb, "small commits imperative subjects")
            .iter()
            .any(|(_, p)| *p)
    );
}

/// Whether any file under `dir` holds `needle` (indexes included).
fn grep(dir: &Path, needle: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            grep(&p, needle)
        } else {
            std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        }
    })
}

#[test]
fn a_search_over_two_projects_names_the_project_of_each_hit() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (api, client) = (base.join("api"), base.join("client"));
    write(
        &api,
        "docs/auth.md",
        "# Auth\n\nTokens are signed with the service key.\n",
    );
    write(
        &client,
        "docs/retry.md",
        "# Retries\n\nThe client retries a failed request three times with exponential backoff.\n",
    );
    let c = config(None);
    let ea = Arc::new(engine(&api, &c, None));
    let ec = Arc::new(engine(&client, &c, None));
    ea.index(&ea.default_roots(), &NoProgress).unwrap();
    ec.index(&ec.default_roots(), &NoProgress).unwrap();
    let named = vec![("api".to_string(), &*ea), ("client".to_string(), &*ec)];
    let hits = cairn::search_projects(
        &named,
        "how many times does a request retry",
        &SearchOptions::default(),
    )
    .unwrap();
    assert_eq!(hits[0].project, "client", "{hits:?}");
    assert_eq!(hits[0].hit.path, "docs/retry.md");
    assert_eq!(hits[0].root, client);
    let json = serde_json::to_value(&hits[0]).unwrap();
    assert_eq!(json["project"], "client");
    assert_eq!(json["path"], "docs/retry.md");
    let too_many: Vec<(String, &Engine)> = (0..=cairn::MAX_SEARCH_PROJECTS)
        .map(|i| (i.to_string(), &*ea))
        .collect();
    assert!(cairn::search_projects(&too_many, "x", &SearchOptions::default()).is_err());
}

/// Issue 60: four writers — two in the main worktree, two in a second one —
/// each changing its own field of one memory, all at once. Every change a
/// writer was told succeeded is in the file at the end (each field holds
/// its writer's last value), and the audit log is a chain: each update's
/// `before` is the previous change's `after`. Before the fix `update`
/// read, changed and wrote with no lock: a write from a stale read put
/// another writer's field back.
#[test]
fn four_writers_updating_fields_of_one_memory_lose_no_change() {
    const UPDATES: usize = 25;
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let Some(main) = repo(&base, 1) else { return };
    let wt = base.join("feature");
    assert!(git_worktree_add(&main, &wt, "feature"));
    let c = config(None);
    let first = engine(&main, &c, None);
    let id = first
        .remember(&MemoryInput {
            text: "Release builds are signed on the build host.".into(),
            kind: Some("decision".into()),
            ..Default::default()
        })
        .unwrap()
        .memory
        .memory
        .id;
    drop(first);
    let engines: Vec<Arc<Engine>> = [&main, &main, &wt, &wt]
        .into_iter()
        .map(|root| Arc::new(engine(root, &c, None)))
        .collect();
    let writers: Vec<_> = engines
        .iter()
        .enumerate()
        .map(|(w, e)| {
            let (e, id) = (e.clone(), id.clone());
            std::thread::spawn(move || {
                for i in 1..=UPDATES {
                    let mut patch = cairn::MemoryPatch {
                        client: format!("writer{w}"),
                        ..Default::default()
                    };
                    match w {
                        0 => patch.tags = Some(vec![format!("t{i}")]),
                        1 => patch.importance = Some(1 + (i % 10) as u8),
                        2 => patch.text = Some(format!("Release builds are signed, round {i}.")),
                        _ => patch.expires = Some(format!("2030-01-{:02}", 1 + i % 28)),
                    }
                    e.update_memory(&id, &patch, false).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let m = engines[0].vault().read(&id).unwrap();
    assert_eq!(
        m.tags,
        vec![format!("t{UPDATES}")],
        "writer 0's last change"
    );
    assert_eq!(
        m.importance,
        1 + (UPDATES % 10) as u8,
        "writer 1's last change"
    );
    assert_eq!(
        m.text,
        format!("Release builds are signed, round {UPDATES}."),
        "writer 2's last change"
    );
    assert!(
        m.expires
            .as_deref()
            .is_some_and(|e| e.starts_with(&format!("2030-01-{:02}", 1 + UPDATES % 28))),
        "writer 3's last change: {:?}",
        m.expires
    );
    let log: Vec<_> = engines[0]
        .vault()
        .entries()
        .unwrap()
        .into_iter()
        .filter(|e| e.id == id)
        .collect();
    assert_eq!(log.len(), 1 + 4 * UPDATES, "one entry per change");
    let broken = log.windows(2).filter(|p| p[1].before != p[0].after).count();
    assert_eq!(broken, 0, "every update's before is the previous after");
}

/// Issue 61 (1): a daemon opened on the main worktree before `git worktree
/// add` did not see the memories the new worktree stored: whether the
/// folder is shared was decided once, at open. Fails before the fix.
#[test]
fn a_worktree_added_after_the_engine_opened_shares_its_memories_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let Some(main) = repo(&base, 2) else { return };
    let c = config(None);
    let m = engine(&main, &c, None);
    m.index(&m.default_roots(), &NoProgress).unwrap();
    let wt = base.join("late");
    assert!(git_worktree_add(&main, &wt, "late"));
    let w = engine(&wt, &c, None);
    w.index(&w.default_roots(), &NoProgress).unwrap();
    w.remember(&MemoryInput {
        text: "The staging database is reset every Monday night.".into(),
        ..Default::default()
    })
    .unwrap();
    let got = recall_texts(&m, "when is the staging database reset");
    assert!(
        got.iter().any(|(t, _)| t.contains("every Monday")),
        "{got:?}"
    );
}
