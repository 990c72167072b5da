//! Code chunks, the knowledge graph, the graph retriever and `relate`.

use cairn::{EntityInput, Mode, NoProgress, ObservationInput, RelationInput, SearchOptions};
use cairn_core::Kind;

use crate::{Project, roots};

fn project() -> Project {
    // Small chunks are not merged: these files are all small definitions,
    // and the tests look at each one.
    let p = Project::with_config("[chunk]\nmin_chars = 0\n");
    p.write(
        "docs/login-throttling.md",
        "# Login throttling\n\nFive failed sign-ins lock the account for fifteen minutes.\n",
    );
    p.write(
        "docs/policy.md",
        "# Policies\n\nAccess rules are enforced by `PolicyController` before any handler runs.\n",
    );
    p.write(
        "src/gate.rs",
        "/// Counts strikes per key.\npub struct RateGate {\n    limit: usize,\n}\n\nimpl RateGate {\n    pub fn admit(&self, n: usize) -> bool {\n        n < self.limit\n    }\n}\n",
    );
    p.write(
        "src/policy.py",
        "class PolicyController:\n    def check(self, user):\n        return verify_grant(user)\n\n\ndef verify_grant(user):\n    return user.grant is not None\n",
    );
    p.write(
        "web/app.ts",
        "import { PolicyController } from './policy';\n\nexport function serve(req: Request) {\n  return new PolicyController().check(req.user);\n}\n",
    );
    p.write("dist/app.js", &format!("var a={};\n", "x".repeat(6000)));
    p
}

#[test]
fn code_is_chunked_by_syntax_tree_and_generated_files_are_skipped() {
    let p = project();
    let e = p.engine();
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(r.languages.get("rust"), Some(&2), "{:?}", r.languages);
    assert_eq!(r.languages.get("python"), Some(&2), "{:?}", r.languages);
    assert!(r.languages.contains_key("typescript"), "{:?}", r.languages);
    assert!(
        r.skipped
            .iter()
            .any(|s| s.path.ends_with("dist/app.js") && s.reason.contains("minified")),
        "{:?}",
        r.skipped
    );
    let hits = e
        .search(
            "admit strikes",
            &SearchOptions {
                kinds: vec![Kind::Code],
                ..Default::default()
            },
        )
        .unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .all(|h| h.path.starts_with("src/") || h.path.starts_with("web/"))
    );
    assert!(
        hits.iter()
            .any(|h| h.breadcrumb == "src/gate.rs > RateGate > admit"
                || h.breadcrumb == "src/gate.rs > RateGate"),
        "{hits:?}"
    );
}

#[test]
fn neighbors_show_definitions_callers_and_docs() {
    let p = project();
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let n = e.graph_neighbors("policy_controller", 0).unwrap();
    assert_eq!(n.entity.label, "PolicyController");
    let has = |rel: &str, path: &str| {
        n.neighbors
            .iter()
            .any(|x| x.rel.name() == rel && x.node.path.as_deref() == Some(path))
    };
    assert!(has("defines", "src/policy.py"), "{:#?}", n.neighbors);
    assert!(has("mentions", "docs/policy.md"), "{:#?}", n.neighbors);
    assert!(
        has("calls", "web/app.ts") || has("imports", "web/app.ts"),
        "{:#?}",
        n.neighbors
    );
    assert!(e.graph_neighbors("NoSuchThing", 0).is_err());
    // A misspelt name gets the nearest names the graph has.
    let err = e.graph_neighbors("PolicyControler", 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no entity \"PolicyControler\" in the graph; did you mean PolicyController?"
    );
    let err = e
        .graph_path("serve", "verify_grnt")
        .unwrap_err()
        .to_string();
    assert!(err.ends_with("did you mean verify_grant?"), "{err}");
    let path = e.graph_path("serve", "verify_grant").unwrap();
    assert!(path.len() >= 3, "{path:?}");
    // Every chunk on the path is shown by its file, none by its row id.
    assert!(
        path.iter()
            .all(|(n, _)| n.kind == "entity" || n.path.is_some()),
        "{path:?}"
    );
}

#[test]
fn relate_links_a_concept_to_code_and_survives_a_rebuild() {
    let p = project();
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let query = "login throttling";
    let graph_hit = |e: &cairn::Engine| {
        e.search(
            query,
            &SearchOptions {
                limit: 10,
                mode: Mode::Hybrid,
                explain: true,
                ..Default::default()
            },
        )
        .unwrap()
        .into_iter()
        .find(|h| h.path == "src/gate.rs")
    };
    // Before the relation, no link leads from the query to the code (the
    // graph may still vote for a chunk BM25 or the vectors found: a seed
    // keeps half its restart mass in the graph's list).
    let before = graph_hit(&e);
    assert!(
        before.as_ref().is_none_or(|h| h.via.is_empty()),
        "no link yet: {before:?}"
    );
    let r = e
        .relate(
            &[EntityInput {
                name: "RateGate".into(),
                entity_type: "struct".into(),
                observations: vec!["locks an account after five failures".into()],
            }],
            &[RelationInput {
                from: "Login throttling".into(),
                to: "RateGate".into(),
                relation_type: "implemented_by".into(),
            }],
            &[ObservationInput {
                entity_name: "RateGate".into(),
                contents: vec!["lives in src/gate.rs".into()],
            }],
            "test",
        )
        .unwrap();
    assert_eq!(r.entities_created, vec!["RateGate".to_string()]);
    assert_eq!(r.relations_added, 1);
    // The same relation again is not stored twice.
    let again = e
        .relate(
            &[],
            &[RelationInput {
                from: "login throttling".into(),
                to: "rate_gate".into(),
                relation_type: "implemented_by".into(),
            }],
            &[],
            "test",
        )
        .unwrap();
    assert_eq!((again.relations_added, again.relations_existing), (0, 1));
    let files: Vec<String> = std::fs::read_dir(p.path(".cairn/memory"))
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".md"))
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let entity = std::fs::read_to_string(
        p.path(".cairn/memory")
            .join(files.iter().find(|f| f.starts_with("entity-")).unwrap()),
    )
    .unwrap();
    assert!(
        entity.contains("type: entity") && entity.contains("- lives in src/gate.rs"),
        "{entity}"
    );

    let check = |e: &cairn::Engine| {
        let hit = graph_hit(e).expect("the code is found through the relation");
        assert!(
            hit.signals
                .iter()
                .any(|s| s.retriever == cairn_core::Retriever::Graph),
            "{hit:?}"
        );
        let via = hit.via.join(" ");
        assert!(
            via.contains("RateGate")
                && via.ends_with(" > RateGate")
                && hit
                    .via
                    .last()
                    .is_some_and(|l| l.starts_with("src/gate.rs:")),
            "{via}"
        );
        // Steps read as files, headings and names, never row ids.
        assert!(
            !hit.via.iter().any(|step| step.starts_with("chunk ")),
            "{via}"
        );
        let n = e.graph_neighbors("RateGate", 0).unwrap();
        assert!(
            n.neighbors
                .iter()
                .any(|x| x.rel == cairn_core::Relation::named("implemented_by")),
            "{:#?}",
            n.neighbors
        );
    };
    check(&e);
    // Delete the index: the relation lives in markdown and comes back.
    drop(e);
    for f in ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"] {
        let _ = std::fs::remove_file(p.path(".cairn").join(f));
    }
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    check(&e);
    assert!(
        e.relate(&[], &[RelationInput::default()], &[], "test")
            .is_err()
    );
}

#[test]
fn communities_group_linked_files() {
    let p = project();
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let c = e.graph_communities(2).unwrap();
    assert!(c.edges > 10, "{c:?}");
    assert!(!c.communities.is_empty());
    let policy = c
        .communities
        .iter()
        .find(|x| x.files.iter().any(|f| f == "src/policy.py"))
        .expect("policy code is in a community");
    assert!(!policy.label.is_empty());
    let without_graph = e
        .search(
            "fifteen minutes",
            &SearchOptions {
                no_graph: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(without_graph.iter().all(|h| {
        h.signals
            .iter()
            .all(|s| s.retriever != cairn_core::Retriever::Graph)
    }));
}

/// The graph a search builds is kept beside the index for the next process,
/// read back only for the same state of the index: a damaged file is built
/// again, an index that changed is built again, a vacuum removes the file.
#[test]
fn the_graph_is_kept_between_processes_for_the_same_index() {
    use std::time::{Duration, SystemTime};
    let p = project();
    let file = p.path(".cairn/index.sqlite.graph");
    let q = "who enforces access rules before handlers run";
    let graph_hits = |e: &cairn::Engine| -> Vec<(String, f64)> {
        e.search(q, &SearchOptions::default())
            .unwrap()
            .into_iter()
            .map(|h| (format!("{}:{}", h.path, h.start_line), h.score))
            .collect()
    };
    let first = {
        let e = p.engine();
        e.index(&roots(&p.root()), &NoProgress).unwrap();
        assert!(!file.exists(), "no search, no graph file");
        graph_hits(&e)
    };
    assert!(file.exists(), "the search's graph is kept");
    let edges = p.engine().graph_edges().unwrap();
    assert!(edges > 0);

    // A second process reads the file rather than writing it again.
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    assert_eq!(graph_hits(&p.engine()), first);
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), old);

    // A damaged file: the graph is built again, the same, and the file mended.
    let mut bytes = std::fs::read(&file).unwrap();
    let cut = bytes.len() / 2;
    bytes.truncate(cut);
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(graph_hits(&p.engine()), first);
    assert!(std::fs::metadata(&file).unwrap().len() > cut as u64);

    // The index changes: the file of the old state is not used.
    p.write(
        "docs/audit.md",
        "# Audit\n\nEvery decision of `PolicyController` is written to the audit log.\n",
    );
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(e.graph_edges().unwrap(), p.engine().graph_edges().unwrap());
    assert!(
        e.graph_edges().unwrap() > edges,
        "the new doc's links are in"
    );

    e.vacuum().unwrap();
    assert!(!file.exists(), "a vacuum removes the derived graph");
}
