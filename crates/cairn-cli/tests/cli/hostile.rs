//! Hostile files, with the real binary: what a project folder can hold that
//! `cairn index` and the human output must survive — binary and invalid
//! text, a 20 MB line, 1,000 nested folders, 100,000 headings, a FIFO, link
//! loops, links out of the project, control characters in a name and a
//! text, bad and 1 MB frontmatter; and an import stream naming paths out of
//! the project. The corpus is made at test time: nothing big is committed.

use std::path::Path;

use super::{Cli, Project};

/// BM25 only: these tests are about files, not vectors.
const NO_MODEL: &str = "[embed]\nmodel = \"none\"\n";

/// The paths of a `search --json` answer.
fn paths(hits: &serde_json::Value) -> Vec<String> {
    hits.as_array()
        .expect("array of hits")
        .iter()
        .map(|h| h["path"].as_str().expect("path").to_string())
        .collect()
}

/// The `(path, reason)` pairs of an index report's `skipped` list.
fn skipped(report: &serde_json::Value) -> Vec<(String, String)> {
    report["skipped"]
        .as_array()
        .expect("skipped list")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("path").to_string(),
                s["reason"].as_str().expect("reason").to_string(),
            )
        })
        .collect()
}

#[test]
fn one_bad_frontmatter_field_keeps_the_rest_of_the_memory() {
    let p = Project::with_config(NO_MODEL);
    let memory = "---\nid: m-bad\ntype: {a: 1}\nimportance: 9\ntags: [keep, me]\n\
                  created: 2026-01-02T00:00:00Z\n---\n\nThe flux capacitor needs 1.21 gigawatts.\n";
    p.write(".cairn/memory/m-bad.md", memory);
    p.write(
        "docs/bad-title.md",
        "---\ntitle: {a: 1}\ntags: [kept]\n---\n# Flux notes\n\nCapacitor wiring.\n",
    );
    let out = p.run(&["index"]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("m-bad.md") && err.contains("`type`") && err.contains("WARN"),
        "the warning names the memory file and the field: {err}"
    );
    assert!(
        err.contains("bad-title.md") && err.contains("title: expected text"),
        "the warning names the doc and the field: {err}"
    );

    // The memory keeps every field but the bad one (before: all defaults).
    let hits = p.json(&["recall", "flux capacitor gigawatts", "--json"]);
    let m = &hits[0]["memory"];
    assert_eq!(m["id"], "m-bad", "{hits}");
    assert_eq!(m["type"], "note", "{hits}");
    assert_eq!(m["importance"], 9, "{hits}");
    assert_eq!(m["tags"], serde_json::json!(["keep", "me"]), "{hits}");
    assert_eq!(m["created"], "2026-01-02T00:00:00Z", "{hits}");
    // The doc is indexed; both files are left as they were.
    let hits = p.json(&["search", "capacitor wiring", "--json", "--kind", "doc"]);
    assert_eq!(paths(&hits), ["docs/bad-title.md"]);
    assert_eq!(
        std::fs::read_to_string(p.path(".cairn/memory/m-bad.md")).unwrap(),
        memory
    );
}

/// Issue 34: `cairn import` of a stream with a document row at
/// `/etc/passwd` (after a good memory and a good document) exits non-zero
/// naming the line and the path, and writes nothing: no memory file, no
/// row. (It used to store the row, and the records before it.)
#[test]
fn an_import_naming_a_path_out_of_the_project_writes_nothing() {
    let p = Project::with_config(NO_MODEL);
    p.write("docs/a.md", "# Alpha\n\nThe alpha notes.\n");
    p.ok(&["index"]);
    let doc = |path: &str, text: &str| {
        serde_json::json!({
            "record": "document", "path": path, "hash": "h", "mtime_ns": 0, "size": 1,
            "title": null, "tags": [], "domain": "", "meta": {},
            "chunks": [{"heading_path": [], "level": 0, "start_line": 1, "end_line": 1, "text": text}],
            "links": [],
        })
        .to_string()
    };
    let stream = [
        r#"{"record":"memory","path":".cairn/memory/m20990101-0000abcd.md","text":"zebra memory"}"#
            .to_string(),
        doc("docs/zebra.md", "zebra document"),
        doc("/etc/passwd", "root:x:0:0 zebra"),
    ]
    .join("\n");
    p.write("backup.jsonl", &stream);
    let out = p.run(&["import", "backup.jsonl"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("backup.jsonl line 3")
            && err.contains("\"/etc/passwd\"")
            && err.contains("absolute")
            && err.contains("nothing was imported"),
        "{err}"
    );
    assert!(!p.path(".cairn/memory/m20990101-0000abcd.md").exists());
    let hits = p.json(&["search", "zebra", "--json"]);
    assert_eq!(paths(&hits), Vec::<String>::new(), "{hits}");
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let p = Project::with_config(NO_MODEL);
    let name = "docs/esc\u{1b}[31mred\u{7}.md";
    let text =
        "# Alarm \u{1b}[2J bell\n\nThe zanzibar \u{1b}]0;pwned\u{7} payload \u{9b}31m here.\n";
    p.write(name, text);
    // Its name reaches a log line (tracing escapes ESC there, not CR).
    std::fs::write(p.path("docs/bin\u{1b}[2J\r.md"), b"\0\0\x1b[2J").unwrap();

    let out = p.run(&["index"]);
    assert!(out.status.success(), "{out:?}");
    for stream in [&out.stdout, &out.stderr] {
        let s = String::from_utf8_lossy(stream);
        assert!(!stream.contains(&0x1b) && !s.contains('\u{9b}'), "{s:?}");
        assert!(!stream.contains(&b'\r'), "{s:?}");
    }
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("bin\\x1b[2J\\x0d.md"), "{report}");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("bin\\x1b[2J\\x0d.md"), "{log}");

    let human = p.run(&["search", "zanzibar"]);
    assert!(human.status.success(), "{human:?}");
    let shown = String::from_utf8(human.stdout.clone()).unwrap();
    assert!(
        !human.stdout.contains(&0x1b) && !human.stdout.contains(&0x07),
        "{shown:?}"
    );
    assert!(!shown.contains('\u{9b}'), "{shown:?}");
    assert!(shown.contains("docs/esc\\x1b[31mred\\x07.md"), "{shown}");
    assert!(
        shown.contains("zanzibar \\x1b]0;pwned\\x07 payload \\u{9b}31m"),
        "{shown}"
    );

    // JSON keeps the exact text (its own escapes are undone by any reader).
    let hits = p.json(&["search", "zanzibar", "--json"]);
    assert_eq!(hits[0]["path"], name);
    let snippet = hits[0]["snippet"].as_str().unwrap();
    assert!(
        snippet.contains("\u{1b}]0;pwned\u{7} payload \u{9b}31m"),
        "{snippet:?}"
    );
}

/// How a run of the binary went, measured.
#[cfg(unix)]
struct Measured {
    success: bool,
    stdout: Vec<u8>,
    stderr: String,
    seconds: f64,
    peak_rss_bytes: u64,
}

/// Runs `cairn args` in `p` and reads its own peak resident set size from
/// `wait4` (this child only, not the other tests' children); kills it
/// after `limit` seconds so a hang fails instead of blocking.
#[cfg(unix)]
fn run_measured(p: &Project, args: &[&str], limit: u64) -> Measured {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    let io = tempfile::tempdir().expect("temp dir");
    let (out_path, err_path) = (io.path().join("out"), io.path().join("err"));
    let started = Instant::now();
    let child = p
        .command(args)
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("cairn starts");
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    let (done, wait) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if wait.recv_timeout(Duration::from_secs(limit)).is_err() {
            // SAFETY: `pid` is our child and has not been reaped (the main
            // thread is still in `wait4`), so the id names no other process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own unreaped child; both out-pointers are valid.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(err.kind(), std::io::ErrorKind::Interrupted, "wait4: {err}");
    }
    let seconds = started.elapsed().as_secs_f64();
    let _ = done.send(());
    watchdog.join().expect("watchdog");
    drop(child);
    let killed = libc::WIFSIGNALED(status);
    assert!(!killed, "cairn {args:?} ran past {limit} s and was killed");
    // ru_maxrss is in KiB on Linux and the BSDs, in bytes on macOS.
    let unit = if cfg!(target_os = "macos") { 1 } else { 1024 };
    Measured {
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout: std::fs::read(&out_path).expect("stdout"),
        stderr: std::fs::read_to_string(&err_path).expect("stderr"),
        seconds,
        peak_rss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * unit,
    }
}

/// What a file of the corpus must become.
#[cfg(unix)]
enum Expect {
    /// Indexed: a BM25 search for this word finds it.
    Indexed(&'static str),
    /// Left out, and named in the report with a reason containing this.
    Skipped(&'static str),
}

/// Writes the hostile corpus into `p` (links out point into `outside`);
/// returns each file's project-relative path and what it must become.
#[cfg(unix)]
fn hostile_corpus(p: &Project, outside: &Path) -> Vec<(String, Expect)> {
    use std::fmt::Write as _;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;

    let mut expect = Vec::new();
    p.write(
        "docs/good.md",
        "# Good\n\nThe quokka lives next to hostile files.\n",
    );
    expect.push(("docs/good.md".to_string(), Expect::Indexed("quokka")));

    std::fs::write(
        p.path("docs/binary.md"),
        b"# Binary\n\0\0\x01\x02 binarytoken",
    )
    .unwrap();
    expect.push(("docs/binary.md".into(), Expect::Skipped("binary")));
    // One byte that is not UTF-8 costs one character (and a note), not the file.
    std::fs::write(p.path("docs/latin1.md"), b"# Latin\ncaf\xe9 latintoken\n").unwrap();
    expect.push(("docs/latin1.md".into(), Expect::Indexed("latintoken")));

    // 20 MiB on one line.
    let line = "hugetoken lorem ipsum dolor ".repeat(20 * 1024 * 1024 / 28);
    p.write("docs/huge.md", &line);
    expect.push(("docs/huge.md".into(), Expect::Indexed("hugetoken")));

    // 1,000 nested folders with a file at the bottom.
    let deep = format!("docs/deep/{}bottom.md", "d/".repeat(999));
    p.write(&deep, "# Bottom\n\nThe deeptoken lies at the bottom.\n");
    expect.push((deep, Expect::Indexed("deeptoken")));

    // 100,000 headings.
    let mut headings = String::from("# headingtoken 0\n");
    for i in 1..100_000 {
        let _ = writeln!(headings, "# Heading {i}");
    }
    p.write("docs/headings.md", &headings);
    expect.push(("docs/headings.md".into(), Expect::Indexed("headingtoken")));

    // A FIFO: opening it for reading would wait for a writer forever.
    let fifo = std::ffi::CString::new(p.path("docs/pipe.md").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    expect.push((
        "docs/pipe.md".into(),
        Expect::Skipped("not a regular file (FIFO)"),
    ));

    // Link loops: two links to each other, and a link to its own folder.
    symlink("loop2.md", p.path("docs/loop1.md")).unwrap();
    symlink("loop1.md", p.path("docs/loop2.md")).unwrap();
    symlink(".", p.path("docs/self")).unwrap();
    expect.push((
        "docs/loop1.md".into(),
        Expect::Skipped("symbolic link loop"),
    ));
    expect.push((
        "docs/loop2.md".into(),
        Expect::Skipped("symbolic link loop"),
    ));
    expect.push(("docs/self".into(), Expect::Skipped("symbolic link loop")));

    // Links to a file and to a folder outside the project.
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.md"), "# Secret\n\noutsidetoken\n").unwrap();
    std::fs::write(outside.join("dir/far.md"), "# Far\n\noutsidetoken\n").unwrap();
    symlink(outside.join("secret.md"), p.path("docs/outside.md")).unwrap();
    symlink(outside.join("dir"), p.path("docs/outside-dir")).unwrap();
    expect.push((
        "docs/outside.md".into(),
        Expect::Skipped("symbolic link, not followed"),
    ));
    expect.push((
        "docs/outside-dir".into(),
        Expect::Skipped("symbolic link to a folder, not followed"),
    ));

    // Control characters in a name and in the text.
    let name = "docs/ctl\u{1b}[31m\u{7}\u{1}name.md".to_string();
    p.write(
        &name,
        "# Ctl \u{1b}[2J\n\nThe controltoken \u{1b}]0;title\u{7} text.\n",
    );
    expect.push((name, Expect::Indexed("controltoken")));

    // Bad frontmatter: one bad field, invalid YAML, and 1 MiB of it.
    p.write(
        "docs/badfield.md",
        "---\ntitle: {a: 1}\ntags: [x]\n---\n# Bad field\n\nbadfieldtoken\n",
    );
    expect.push(("docs/badfield.md".into(), Expect::Indexed("badfieldtoken")));
    p.write(
        "docs/badyaml.md",
        "---\ntitle: [unclosed\n---\n# Bad YAML\n\nbadyamltoken\n",
    );
    expect.push(("docs/badyaml.md".into(), Expect::Indexed("badyamltoken")));
    let mut big = String::from("---\ntitle: Big frontmatter\n");
    let mut i = 0;
    while big.len() < 1024 * 1024 {
        let _ = writeln!(big, "key{i}: some value number {i}");
        i += 1;
    }
    big.push_str("---\n# Big\n\nbigfmtoken\n");
    p.write("docs/bigfm.md", &big);
    expect.push(("docs/bigfm.md".into(), Expect::Indexed("bigfmtoken")));
    p.write(
        ".cairn/memory/m-bad.md",
        "---\ntype: {a: 1}\nimportance: 9\n---\n\nThe memorytoken keeps its importance.\n",
    );
    expect.push((
        ".cairn/memory/m-bad.md".into(),
        Expect::Indexed("memorytoken"),
    ));
    expect
}

#[cfg(unix)]
#[test]
fn a_hostile_corpus_is_indexed_or_reported_file_by_file() {
    let p = Project::with_config(NO_MODEL);
    let outside = tempfile::tempdir().expect("temp dir");
    let built = std::time::Instant::now();
    let corpus = hostile_corpus(&p, outside.path());
    let build_s = built.elapsed().as_secs_f64();

    let run = run_measured(&p, &["index", "--json"], 300);
    assert!(run.success, "cairn index failed: {}", run.stderr);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON report");
    let rss_mb = run.peak_rss_bytes as f64 / (1024.0 * 1024.0);
    eprintln!(
        "hostile corpus: built in {build_s:.1} s; `cairn index` {:.1} s, peak RSS {rss_mb:.0} MiB",
        run.seconds
    );
    let skips = skipped(&report);
    for (path, reason) in &skips {
        eprintln!("  skipped {}: {reason}", path.escape_debug());
    }
    assert!(rss_mb < 500.0, "peak RSS {rss_mb:.0} MiB");

    let mut indexed = 0;
    for (rel, want) in &corpus {
        match want {
            Expect::Indexed(word) => {
                let hits = p.json(&["search", word, "--json", "-n", "3"]);
                assert!(
                    paths(&hits).contains(rel),
                    "{rel:?} should be indexed: {hits}"
                );
                indexed += 1;
            }
            Expect::Skipped(why) => {
                let named = skips
                    .iter()
                    .any(|(path, reason)| path.ends_with(rel.as_str()) && reason.contains(why));
                assert!(named, "{rel:?} should be reported ({why}): {skips:?}");
            }
        }
    }
    let notes = report["notes"].as_array().expect("notes list");
    assert!(
        notes.len() == 1
            && notes[0]["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("docs/latin1.md"))
            && notes[0]["note"]
                .as_str()
                .is_some_and(|n| n.contains("not valid UTF-8")),
        "{notes:?}"
    );
    // The report names nothing else, and nothing outside was indexed.
    let nasty = corpus.len() - indexed;
    assert_eq!(skips.len(), nasty, "{skips:?}");
    assert_eq!(report["files_added"], indexed, "{report}");
    let status = p.json(&["status", "--json"]);
    assert_eq!(status["files"], indexed, "{status}");
    let out = p.json(&["search", "outsidetoken", "--json"]);
    assert!(paths(&out).is_empty(), "{out}");
    // The good file is found by what it says.
    let hits = p.json(&["search", "quokka hostile files", "--json"]);
    assert_eq!(paths(&hits)[0], "docs/good.md");

    // The human report of a second run names the same files, escaped.
    let again = p.run(&["index"]);
    assert!(again.status.success(), "{again:?}");
    assert!(!again.stdout.contains(&0x1b) && !again.stderr.contains(&0x1b));
    let human = String::from_utf8_lossy(&again.stdout);
    // Problems by name; the binary file, left out on purpose, counted.
    assert!(
        human.contains(&format!("skipped {} file(s):", nasty - 1)) && human.contains("(FIFO)"),
        "{human}"
    );
    assert!(
        human.contains("left out 1 file: binary (e.g. docs/binary.md: binary (NUL byte"),
        "{human}"
    );
}
