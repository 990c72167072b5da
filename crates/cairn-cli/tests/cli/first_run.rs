//! The first minutes of a new user (issue 22): what `git add .` stages,
//! what a zero count means, what a large index leaves beside it.

use crate::Cli;
use cairn_test_support::Project;

/// A project indexed with BM25 only (no model needed) in a git repository.
fn project() -> Project {
    let p = Project::new();
    p.write("cairn.toml", "[embed]\nmodel = \"none\"\n");
    for i in 0..30 {
        p.write(
            &format!("docs/page{i}.md"),
            &format!("# Page {i}\n\nConnection pooling keeps {i} database connections open.\n"),
        );
    }
    p
}

fn git(p: &Project, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(p.path(""))
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `git add .` after indexing stages the memories and `.cairn/.gitignore`,
/// never the index, its log, the daemon's files or the history; a user's
/// own `.cairn/.gitignore` is left as it is.
#[test]
fn git_add_stages_the_memories_and_not_the_index() {
    let p = project();
    git(&p, &["init", "-q"]);
    p.ok(&["index", "-q"]);
    p.ok(&[
        "remember",
        "Deploys to staging go through the blue-green switch.",
        "--type",
        "decision",
    ]);
    assert!(p.path(".cairn/index.sqlite").exists());
    git(&p, &["add", "."]);
    let staged = git(&p, &["diff", "--cached", "--name-only"]);
    let cairn: Vec<&str> = staged
        .lines()
        .filter(|l| l.starts_with(".cairn/"))
        .collect();
    assert!(cairn.contains(&".cairn/.gitignore"), "{staged}");
    assert!(
        cairn.iter().any(|l| l.starts_with(".cairn/memory/")),
        "the memory is staged: {staged}"
    );
    assert!(
        cairn
            .iter()
            .all(|l| *l == ".cairn/.gitignore" || l.starts_with(".cairn/memory/")),
        "only the memories and the ignore file: {staged}"
    );

    let own = "# mine\nindex.sqlite*\n";
    std::fs::write(p.path(".cairn/.gitignore"), own).unwrap();
    p.ok(&["index", "-q"]);
    assert_eq!(
        std::fs::read_to_string(p.path(".cairn/.gitignore")).unwrap(),
        own
    );
}

/// `-n 0` is refused, not answered with the default count (a huge count
/// is still bounded, not refused: memory.rs).
#[test]
fn a_zero_count_is_refused() {
    let p = project();
    p.ok(&["index", "-q"]);
    for args in [
        &["search", "pooling", "-n", "0"][..],
        &["recall", "pooling", "-n", "0"][..],
    ] {
        let out = p.run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("give 1 or more"), "{args:?}: {err}");
    }
    assert!(
        p.ok(&["search", "pooling", "-n", "1"])
            .contains("docs/page")
    );
}

/// An index pass folds its write-ahead log into the index and shrinks it,
/// so the folder holds one index, not an index and a log as large.
#[test]
fn an_index_pass_leaves_no_log_behind() {
    let p = project();
    p.ok(&["index", "-q"]);
    let wal = p.path(".cairn/index.sqlite-wal");
    let size = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert_eq!(size, 0, "{} bytes of log left", size);
    assert!(
        p.ok(&["search", "pooling", "-n", "3"])
            .contains("docs/page")
    );
}

/// Outside git, a search from a subfolder finds the index of the folder
/// above (it used to look for none there and say to index again), and a
/// read command before any index says there is none instead of creating
/// an empty one and answering "no matches".
#[test]
fn a_subfolder_finds_the_index_and_reads_never_create_one() {
    let p = project();
    std::fs::remove_file(p.path("cairn.toml")).unwrap();
    let none = ["--set", "embed.model=none"];
    for read in [&["recall", "pooling"][..], &["search", "pooling"][..]] {
        let out = p.run(&[read, &none[..]].concat());
        assert!(!out.status.success(), "{read:?} answered with no index");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no index") && err.contains("cairn index"),
            "{err}"
        );
        assert!(
            !p.path(".cairn/index.sqlite").exists(),
            "{read:?} created one"
        );
    }
    p.ok(&[&["index", "-q"][..], &none[..]].concat());
    let out = p
        .command(&[&["search", "pooling", "-n", "3"][..], &none[..]].concat())
        .current_dir(p.path("docs"))
        .output()
        .expect("cairn runs");
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("docs/page"));
    assert!(
        !p.path("docs/.cairn").exists(),
        "no second index in the subfolder"
    );
}

/// `status` says when the last index ran as a person reads it, and in JSON
/// as ISO 8601 beside the Unix seconds; `--help` names what `index` reads.
#[test]
fn status_tells_the_time_and_help_names_code_and_docs() {
    let p = project();
    p.ok(&["index", "-q"]);
    let human = p.ok(&["status"]);
    assert!(human.contains("UTC (just now)"), "{human}");
    let json = p.json(&["status", "--json"]);
    let at = json["last_indexed_at"]
        .as_str()
        .expect("an ISO 8601 string");
    assert!(
        at.len() == 20 && at.as_bytes()[10] == b'T' && at.ends_with('Z'),
        "{at}"
    );
    assert!(json["last_indexed"].as_i64().is_some());
    let help = p.ok(&["--help"]);
    assert!(help.contains("docs, code and memories"), "{help}");
}

/// Issue 35: a project's class named like JavaScript's `console` is a graph
/// node, and a misspelt name gets the nearest names instead of a bare "no
/// entity".
#[test]
fn the_central_class_is_a_node_and_a_misspelt_name_gets_suggestions() {
    let p = Project::new();
    p.write("cairn.toml", "[embed]\nmodel = \"none\"\n");
    p.write(
        "rich/console.py",
        "class ConsoleOptions:\n    \"\"\"Options for rendering.\"\"\"\n\n    def update(self, width):\n        self.width = width\n\n\nclass Console:\n    \"\"\"A high level console interface.\"\"\"\n\n    def print(self, *objects):\n        options = ConsoleOptions()\n        return options\n",
    );
    p.ok(&["index", "-q"]);
    let out = p.ok(&["graph", "neighbors", "Console"]);
    assert!(out.contains("rich/console.py > Console"), "{out}");
    let out = p.run(&["graph", "neighbors", "Consol"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no entity \"Consol\" in the graph; did you mean Console, ConsoleOptions?"),
        "{err}"
    );
    let out = p.run(&["graph", "path", "ConsoleOption", "Console"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean ConsoleOptions"), "{err}");
}

/// With stderr not a terminal (an agent, CI), an index pass says what it
/// is doing in plain lines; `-q` says nothing at all.
#[test]
fn progress_is_plain_lines_off_a_terminal_and_quiet_is_silent() {
    let p = project();
    let out = p
        .command(&["index"])
        .env("CAIRN_PROGRESS_SECS", "0")
        .output()
        .expect("cairn runs");
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("cairn: ")).collect();
    assert!(
        lines.iter().any(|l| l.contains("started")) && lines.iter().any(|l| l.contains("done")),
        "{err}"
    );
    assert!(
        lines.iter().any(|l| l.contains("/30 (")),
        "counts of 30 files: {err}"
    );
    p.write("docs/new.md", "# New\n\nA new page about pooling.\n");
    let out = p.run(&["index", "-q"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// With `cairn` not on PATH, `mcp install` writes this binary's absolute
/// path, and says so.
#[test]
fn mcp_install_off_path_writes_the_absolute_path_and_says_so() {
    let p = project();
    let out = p
        .command(&["mcp", "install", "claude-code", "--print"])
        .env("PATH", "/nonexistent")
        .output()
        .expect("cairn runs");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let exe = env!("CARGO_BIN_EXE_cairn");
    assert!(stdout.contains(exe), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not on PATH") && err.contains(exe), "{err}");
}

/// What agents do over MCP, a person does from the CLI: `expand` a hit,
/// `update` a memory, `watch` the project.
#[test]
fn expand_update_and_watch_from_the_cli() {
    let p = project();
    p.write(
        "docs/guide.md",
        &format!(
            "# Guide\n\n## Pooling\n\nThe pool keeps twenty connections.\n\n{}\n\nIdle ones close after five minutes.\n\n## Other\n\n{}\n",
            "Each request borrows one and hands it back when its transaction ends. ".repeat(4),
            "Tomatoes want full sun, deep watering and a stake to climb. ".repeat(4)
        ),
    );
    p.ok(&["index", "-q"]);
    let hits = p.json(&["search", "twenty connections idle", "--json", "-n", "10"]);
    let hit = hits
        .as_array()
        .and_then(|h| {
            h.iter()
                .find(|h| h["path"] == "docs/guide.md" && h["breadcrumb"] == "Guide > Pooling")
        })
        .unwrap_or_else(|| panic!("the Pooling section is a hit: {hits}"));
    let id = hit["chunk_id"].as_str().expect("a chunk id").to_string();
    let shown = p.ok(&["expand", &id]);
    assert!(shown.starts_with("docs/guide.md:"), "{shown}");
    assert!(
        shown.contains("Idle ones close after five minutes."),
        "{shown}"
    );
    let json = p.json(&["expand", &id, "--json"]);
    assert_eq!(json["path"], "docs/guide.md");
    assert!(!p.run(&["expand", "no-such-chunk"]).status.success());

    let stored = p.json(&["remember", "Staging deploys need a green build.", "--json"]);
    let mid = stored["memory"]["id"].as_str().expect("an id").to_string();
    let dry = p.ok(&["update", &mid, "--importance", "9", "--dry-run"]);
    assert!(
        dry.starts_with("would update") && dry.contains("importance 9"),
        "{dry}"
    );
    let file = std::fs::read_to_string(p.path(&format!(".cairn/memory/{mid}.md"))).unwrap();
    assert!(!file.contains("importance: 9"), "a dry run wrote: {file}");
    let done = p.ok(&["update", &mid, "--importance", "9", "--tag", "deploy"]);
    assert!(
        done.starts_with("updated") && done.contains("importance 9"),
        "{done}"
    );
    let file = std::fs::read_to_string(p.path(&format!(".cairn/memory/{mid}.md"))).unwrap();
    assert!(
        file.contains("importance: 9") && file.contains("deploy"),
        "{file}"
    );
    assert!(
        !p.run(&["update", &mid]).status.success(),
        "nothing to change"
    );

    let mut watch = p
        .command(&["watch", "--debounce-ms", "100"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cairn watch starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    p.write(
        "docs/late.md",
        "# Late\n\nQuokkas arrived after the watcher started.\n",
    );
    let mut found = false;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        if p.ok(&["search", "quokkas", "-n", "1"])
            .contains("docs/late.md")
        {
            found = true;
            break;
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(found, "the watcher indexed the new file");
}

/// `-vv` shows what a search did (its words, retrievers, depth, top hits,
/// time); a closed stderr does not end an index pass that reports progress.
#[test]
fn verbose_search_says_what_it_did_and_a_closed_stderr_is_no_failure() {
    let p = project();
    let mut index = p
        .command(&["index"])
        .env("CAIRN_PROGRESS_SECS", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cairn starts");
    drop(index.stderr.take()); // the reader goes away at once
    let status = index.wait().expect("cairn ends");
    assert!(status.success(), "{status:?}");
    assert!(
        p.ok(&["search", "pooling", "-n", "1"])
            .contains("docs/page")
    );
    let out = p.run(&["-vv", "search", "pooling", "-n", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("DEBUG") && err.contains("retrievers=") && err.contains("hits=2"),
        "{err}"
    );
}
