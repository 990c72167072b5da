//! Issue 40 through the real binary: a memory stored in one git worktree
//! recalled in another, personal memories recalled in two projects and
//! marked, `cairn projects` and a search over two projects. BM25 only
//! (`CAIRN_EMBED_MODEL=none`): no model needed; the user data dir is a
//! temp folder.

use std::path::Path;
use std::process::Command;

use cairn_test_support::{git, git_worktree_add, write_file as write};

/// Runs `cairn` in `dir` with its user data in `data`.
fn cairn(dir: &Path, data: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(dir)
        .env("CAIRN_DATA_DIR", data)
        .env("CAIRN_CONFIG", "none")
        .env("CAIRN_EMBED_MODEL", "none")
        .env("CAIRN_NO_DAEMON", "1")
        .env_remove("CAIRN_LOG")
        .output()
        .expect("cairn runs");
    assert!(
        out.status.success(),
        "cairn {args:?} in {} failed: {}\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Whether any file under `dir` holds `needle`.
fn holds(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let p = e.path();
            if p.is_dir() {
                holds(&p, needle)
            } else {
                std::fs::read(&p)
                    .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
            }
        })
    })
}

/// A repository in `base/main` holding `rel` with `text`, committed, and its
/// worktree `base/feature`; `(main, feature, user data dir)`, or `None`
/// where git cannot run.
fn two_worktrees(
    base: &Path,
    rel: &str,
    text: &str,
) -> Option<(std::path::PathBuf, std::path::PathBuf, std::path::PathBuf)> {
    let (main, wt, data) = (base.join("main"), base.join("feature"), base.join("data"));
    std::fs::create_dir_all(&main).unwrap();
    if !git(&main, &["init", "-q"]) {
        eprintln!("no git here: skipped");
        return None;
    }
    write(&main, rel, text);
    assert!(git(&main, &["add", "."]) && git(&main, &["commit", "-q", "-m", "first"]));
    assert!(git_worktree_add(&main, &wt, "feature"));
    Some((main, wt, data))
}

#[test]
fn a_memory_stored_in_one_worktree_is_recalled_in_another_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let Some((main, wt, data)) = two_worktrees(
        &base,
        "README.md",
        "# Service\n\nThe service answers HTTP requests.\n",
    ) else {
        return;
    };
    cairn(&main, &data, &["index", "-q"]);
    cairn(&wt, &data, &["index", "-q"]);
    cairn(
        &main,
        &data,
        &[
            "remember",
            "The staging database is reset every Monday night.",
        ],
    );
    let got = cairn(&wt, &data, &["recall", "staging database reset"]);
    assert!(got.contains("every Monday"), "{got}");
    // Both checkouts are listed, with one identity.
    let listed: serde_json::Value =
        serde_json::from_str(&cairn(&main, &data, &["projects", "--json"])).unwrap();
    let list = listed.as_array().unwrap();
    assert_eq!(list.len(), 2, "{listed}");
    assert_eq!(list[0]["id"], list[1]["id"]);
}

#[test]
fn personal_memories_are_recalled_in_two_projects_marked_and_kept_out_of_both() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (a, b, data) = (base.join("a"), base.join("b"), base.join("data"));
    write(&a, "README.md", "# Billing\n\nInvoices and payments.\n");
    write(&b, "README.md", "# Garden\n\nTomatoes and basil.\n");
    cairn(&a, &data, &["index", "-q"]);
    cairn(&b, &data, &["index", "-q"]);
    let out = cairn(
        &a,
        &data,
        &[
            "remember",
            "--personal",
            "--type",
            "preference",
            "I prefer small commits with imperative subject lines.",
        ],
    );
    assert!(out.contains("personal"), "{out}");
    for dir in [&a, &b] {
        let got = cairn(dir, &data, &["recall", "small commits subject lines"]);
        assert!(
            got.contains("small commits") && got.contains("personal"),
            "{got}"
        );
        let json: serde_json::Value = serde_json::from_str(&cairn(
            dir,
            &data,
            &["recall", "small commits subject lines", "--json"],
        ))
        .unwrap();
        assert_eq!(json[0]["personal"], true, "{json}");
        assert!(!holds(dir, "small commits"), "{}", dir.display());
    }
    assert!(holds(&data, "small commits"));
    let log = cairn(&b, &data, &["log", "--personal"]);
    assert!(log.contains("store"), "{log}");
    cairn(&b, &data, &["undo", "--personal"]);
    let got = cairn(&a, &data, &["recall", "small commits subject lines"]);
    assert!(!got.contains("small commits"), "{got}");
}

#[test]
fn a_search_over_two_projects_answers_from_the_second() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (api, client, data) = (base.join("api"), base.join("client"), base.join("data"));
    write(
        &api,
        "docs/auth.md",
        "# Auth\n\nTokens are signed with the service key.\n",
    );
    write(
        &client,
        "docs/retry.md",
        "# Retries\n\nThe client retries a failed request three times with backoff.\n",
    );
    cairn(&api, &data, &["index", "-q"]);
    cairn(&client, &data, &["index", "-q"]);
    let listed = cairn(&api, &data, &["projects"]);
    assert!(
        listed.contains("api") && listed.contains("client"),
        "{listed}"
    );
    let json: serde_json::Value = serde_json::from_str(&cairn(
        &base,
        &data,
        &[
            "search",
            "how often does a failed request retry",
            "--project",
            "api",
            "--project",
            "client",
            "--json",
        ],
    ))
    .unwrap();
    assert_eq!(json[0]["project"], "client", "{json}");
    assert_eq!(json[0]["path"], "docs/retry.md");
    let human = cairn(
        &base,
        &data,
        &["search", "retries backoff", "-C", "api", "-C", "client"],
    );
    assert!(human.contains("[client] docs/retry.md"), "{human}");
    // A name works wherever a folder does; an unknown one is a clear error.
    assert!(cairn(&base, &data, &["-C", "client", "status"]).contains("files"));
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["search", "x", "--project", "api", "--project", "nowhere"])
        .current_dir(&base)
        .env("CAIRN_DATA_DIR", &data)
        .env("CAIRN_CONFIG", "none")
        .env("CAIRN_EMBED_MODEL", "none")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nowhere"));
}

/// Issue 61 (12): a search over two worktrees of one repository shows each
/// chunk once, the other worktree named beside it; a file that differs
/// between them is shown for each.
#[test]
fn a_search_over_two_worktrees_shows_each_chunk_once() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let Some((main, wt, data)) = two_worktrees(
        &base,
        "docs/retry.md",
        "# Retries\n\nFailed uploads are retried three times with backoff.\n",
    ) else {
        return;
    };
    write(
        &wt,
        "docs/retry-feature.md",
        "# Retries on the branch\n\nFailed uploads are retried five times on this branch.\n",
    );
    cairn(&main, &data, &["index", "-q"]);
    cairn(&wt, &data, &["index", "-q"]);
    let main_s = main.to_str().unwrap();
    let wt_s = wt.to_str().unwrap();
    let args = [
        "search",
        "failed uploads retried",
        "--project",
        main_s,
        "--project",
        wt_s,
        "--json",
    ];
    let hits: serde_json::Value = serde_json::from_str(&cairn(&main, &data, &args)).unwrap();
    let hits = hits.as_array().unwrap();
    let shared: Vec<_> = hits
        .iter()
        .filter(|h| h["path"] == "docs/retry.md")
        .collect();
    assert_eq!(shared.len(), 1, "the shared file once: {hits:?}");
    assert_eq!(
        shared[0]["also_in"].as_array().map(Vec::len),
        Some(1),
        "{hits:?}"
    );
    assert!(
        hits.iter().any(|h| h["path"] == "docs/retry-feature.md"),
        "{hits:?}"
    );
    let text = cairn(&main, &data, &args[..6]);
    assert!(text.contains(", also "), "{text}");
}
