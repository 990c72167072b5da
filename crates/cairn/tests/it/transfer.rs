//! `export` / `import`: one stream moves the index and the memory files.

use cairn::{NoProgress, RelationInput, SearchOptions};

use crate::{Project, roots};

fn source() -> Project {
    // Small chunks are not merged: these files are all small definitions,
    // and the tests look at each one.
    let p = Project::with_config("[chunk]\nmin_chars = 0\n");
    p.write(
        "docs/login.md",
        "# Login throttling\n\nFive failed sign-ins lock the account for fifteen minutes.\n",
    );
    p.write(
        "src/gate.rs",
        "/// Counts strikes.\npub struct RateGate {\n    limit: usize,\n}\n\nimpl RateGate {\n    pub fn admit(&self, n: usize) -> bool {\n        n < self.limit\n    }\n}\n",
    );
    p
}

#[test]
fn export_then_import_gives_the_same_answers() {
    let a = source();
    let ea = a.engine();
    ea.index(&roots(&a.root()), &NoProgress).unwrap();
    ea.relate(
        &[],
        &[RelationInput {
            from: "Login throttling".into(),
            to: "RateGate".into(),
            relation_type: "implemented_by".into(),
        }],
        &[],
        "test",
    )
    .unwrap();
    let mut out = Vec::new();
    let t = ea.export(&mut out, true).unwrap();
    assert_eq!((t.documents, t.memories), (2, 1), "{t:?}");
    assert!(
        t.chunks >= 3 && t.links > 5 && t.vectors >= t.chunks,
        "{t:?}"
    );
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("\"record\":\"header\"")
    );
    assert!(
        text.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );

    // An empty project: the stream alone rebuilds the index and the memory.
    let b = crate::Project::new();
    let eb = b.engine();
    let r = eb.import(&mut out.as_slice(), "test").unwrap();
    assert_eq!(
        (r.documents, r.memories, r.vectors),
        (t.documents, 1, t.vectors)
    );
    let sa = ea.status().unwrap();
    let sb = eb.status().unwrap();
    assert_eq!((sb.files, sb.chunks), (sa.files, sa.chunks));
    assert_eq!(
        sb.embedded_chunks, sb.chunks,
        "vectors came with the stream"
    );
    for q in ["login throttling", "admit strikes", "RateGate"] {
        let ha = ea.search(q, &SearchOptions::default()).unwrap();
        let hb = eb.search(q, &SearchOptions::default()).unwrap();
        let key = |h: &[cairn_core::Hit]| -> Vec<(String, u32, String)> {
            h.iter()
                .map(|x| (x.path.clone(), x.start_line, format!("{:.9}", x.score)))
                .collect()
        };
        assert_eq!(key(&ha), key(&hb), "{q}");
    }
    let na = ea.graph_neighbors("RateGate", 0).unwrap();
    let nb = eb.graph_neighbors("RateGate", 0).unwrap();
    assert_eq!(na.neighbors.len(), nb.neighbors.len());
    let files = |p: &Project| {
        let mut v: Vec<(String, String)> = std::fs::read_dir(p.path(".cairn/memory"))
            .unwrap()
            .map(|f| f.unwrap().path())
            .filter(|f| f.extension().is_some_and(|e| e == "md"))
            .map(|f| {
                (
                    f.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&f).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(files(&a), files(&b));
    // Importing again changes nothing.
    let again = eb.import(&mut out.as_slice(), "test").unwrap();
    assert_eq!((again.memories, again.memories_unchanged), (0, 1));
}

#[test]
fn bad_streams_are_refused_with_their_line() {
    let p = Project::new();
    let e = p.engine();
    let stream = "{\"record\":\"header\",\"format\":1}\nnot json\n";
    let err = e
        .import(&mut stream.as_bytes(), "backup.jsonl")
        .unwrap_err()
        .to_string();
    assert!(err.contains("backup.jsonl line 2"), "{err}");
    let escape =
        "{\"record\":\"memory\",\"path\":\".cairn/memory/../../evil.md\",\"text\":\"x\"}\n";
    let err = e
        .import(&mut escape.as_bytes(), "x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a markdown file under"), "{err}");
    assert!(!p.path("evil.md").exists());
    let future = "{\"record\":\"header\",\"format\":99}\n";
    assert!(e.import(&mut future.as_bytes(), "x").is_err());
}

/// A document record of an export stream with one chunk.
fn document(path: &str, text: &str) -> String {
    serde_json::json!({
        "record": "document", "path": path, "hash": "h", "mtime_ns": 0, "size": 1,
        "title": null, "tags": [], "domain": "", "meta": {},
        "chunks": [{"heading_path": [], "level": 0, "start_line": 1, "end_line": 1, "text": text}],
        "links": [],
    })
    .to_string()
}

/// What the import must leave as it was: the indexed files not on disk
/// (an imported row would be one), the hits of a search for the rows'
/// text, the count of indexed files, and the memory folder's files with
/// their text.
fn state(e: &cairn::Engine, p: &Project) -> (Vec<String>, Vec<(String, String)>) {
    let mut docs: Vec<String> = e
        .stale_files()
        .unwrap()
        .into_iter()
        .map(|(d, _)| d)
        .collect();
    docs.extend(
        e.search("secret passwd outside", &SearchOptions::default())
            .unwrap()
            .into_iter()
            .map(|h| h.path),
    );
    docs.push(format!("{} files", e.status().unwrap().files));
    let mut files: Vec<(String, String)> = std::fs::read_dir(p.path(".cairn/memory"))
        .map(|d| {
            d.flatten()
                .map(|f| {
                    let text = std::fs::read_to_string(f.path()).unwrap_or_default();
                    (f.file_name().to_string_lossy().into_owned(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    (docs, files)
}

/// Issue 34: an import stream whose document rows name paths out of the
/// project (`/etc/passwd`, `../outside/secret.md`, a drive, a UNC share, a
/// NUL, a link out) or whose memory paths are not plain ids is refused
/// whole, before anything is written, with the line and the path; the
/// index and the memory folder stay as they were. (Documents used to be
/// stored with any path; the good records before the bad one were written.)
#[test]
fn an_import_naming_paths_out_of_the_project_is_refused_whole() {
    let p = source();
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    e.remember(&cairn::MemoryInput {
        text: "Deploys happen on Tuesdays".into(),
        ..Default::default()
    })
    .unwrap();
    let before = state(&e, &p);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "outside").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), p.path("docs/out")).unwrap();
    let good = [
        "{\"record\":\"header\",\"format\":1}".to_string(),
        "{\"record\":\"memory\",\"path\":\".cairn/memory/m20990101-0000abcd.md\",\"text\":\"new memory\"}".to_string(),
        document("docs/new.md", "a good document"),
    ];
    let mut bad: Vec<(String, &str)> = [
        "/etc/passwd",
        "../outside/secret.md",
        "docs/../../outside/secret.md",
        "C:/Windows/secret.md",
        "C:\\Windows\\secret.md",
        "\\\\host\\share\\secret.md",
        "//host/share/secret.md",
        "docs/a\u{0}.md",
        "",
    ]
    .iter()
    .map(|path| (document(path, "passwd secret"), *path))
    .collect();
    #[cfg(unix)]
    bad.push((
        document("docs/out/secret.md", "outside secret"),
        "docs/out/secret.md",
    ));
    for id in ["../../evil", "bad id", "a.b", "sub/../x", ""] {
        let path = format!(".cairn/memory/{id}.md");
        bad.push((
            serde_json::json!({"record": "memory", "path": path, "text": "x"}).to_string(),
            "",
        ));
    }
    for (record, path) in &bad {
        let stream = format!("{}\n{record}\n", good.join("\n"));
        let err = e
            .import(&mut stream.as_bytes(), "backup.jsonl")
            .unwrap_err()
            .to_string();
        assert!(err.contains("backup.jsonl line 4"), "{record}: {err}");
        assert!(err.contains("nothing was imported"), "{record}: {err}");
        if record.contains("\"document\"") {
            let shown = format!("{path:?}");
            assert!(err.contains(&shown), "{record}: {err}");
        } else {
            assert!(err.contains("plain id"), "{record}: {err}");
        }
        assert_eq!(state(&e, &p), before, "{record}");
    }
    assert!(!p.path("evil.md").exists());
    // The good lines alone import, and a round trip still works.
    let r = e
        .import(&mut good.join("\n").as_bytes(), "backup.jsonl")
        .unwrap();
    assert_eq!((r.documents, r.memories), (1, 1));
    assert!(p.path(".cairn/memory/m20990101-0000abcd.md").exists());
    // The spool is gone.
    let left: Vec<_> = std::fs::read_dir(p.path(".cairn"))
        .unwrap()
        .flatten()
        .filter(|f| f.file_name().to_string_lossy().starts_with("import-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
