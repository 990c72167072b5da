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
