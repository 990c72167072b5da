//! The same behaviour on both backends: every scenario runs on SQLite and on
//! PostgreSQL (the server `.ci/postgres start` gives; its URI in
//! `CAIRN_TEST_PG_URI`).

use cairn::{Engine, ListOptions, MemoryInput, NoProgress, RecallOptions, SearchOptions};
use cairn_test_support::{Project, fake_embedder, pg_uri, roots};

#[derive(Clone, Copy, Debug)]
enum Backend {
    Sqlite,
    Postgres,
}

fn engine(p: &Project, b: Backend) -> Engine {
    match b {
        Backend::Sqlite => p.engine(),
        Backend::Postgres => {
            // One database, one project per test folder.
            machine(p, &p.root().display().to_string())
        }
    }
}

/// An engine on PostgreSQL under a given project name: two folders with the
/// same name are two machines sharing one memory.
fn machine(p: &Project, project: &str) -> Engine {
    cairn::Open::new(&p.root(), &on_postgres(p, project))
        .embedder(Some(fake_embedder()))
        .engine()
        .expect("engine")
}

fn memory_files(p: &Project) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(p.root().join(".cairn/memory"))
        .map(|d| {
            d.filter_map(|f| f.ok())
                .map(|f| f.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".md"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn both(mut f: impl FnMut(Backend)) {
    for b in [Backend::Sqlite, Backend::Postgres] {
        f(b);
    }
}

fn docs(p: &Project) {
    p.write("docs/pool.md", "# Connection pooling\n\nThe database connection pool keeps twenty connections open and recycles idle ones after five minutes.\n");
    p.write("docs/cache.md", "# Caching\n\nRedis caches sessions for thirty minutes; `RateGate` protects the login endpoint.\n");
    p.write("docs/deploy.md", "# Deploys\n\nBlue-green deploys switch traffic after health checks pass; rollback is one command.\n");
    p.write("src/gate.rs", "/// Counts strikes per key.\npub struct RateGate {\n    limit: usize,\n}\n\nimpl RateGate {\n    pub fn admit(&self, n: usize) -> bool {\n        n < self.limit\n    }\n}\n");
}

fn top(e: &Engine, q: &str) -> Vec<String> {
    e.search(q, &SearchOptions::default())
        .expect("search")
        .into_iter()
        .map(|h| h.path)
        .collect()
}

#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn indexing_incremental_updates_and_deletes() {
    both(|b| {
        let p = Project::new();
        docs(&p);
        let e = engine(&p, b);
        let r = e.index(&roots(&p.root()), &NoProgress).expect("index");
        assert_eq!(r.files_added, 4, "{b:?}");
        let s = e.status().expect("status");
        assert_eq!(s.files, 4, "{b:?}");
        assert_eq!(s.embedded_chunks, s.chunks, "{b:?}");
        // Unchanged: nothing rewritten.
        let r = e.index(&roots(&p.root()), &NoProgress).expect("index");
        assert_eq!((r.files_unchanged, r.chunks_written), (4, 0), "{b:?}");
        // A change and a delete.
        p.write(
            "docs/deploy.md",
            "# Deploys\n\nCanary deploys send one percent of traffic first.\n",
        );
        p.remove("docs/pool.md");
        let r = e.index(&roots(&p.root()), &NoProgress).expect("index");
        assert_eq!((r.files_changed, r.files_deleted), (1, 1), "{b:?}");
        assert_eq!(e.status().expect("status").files, 3, "{b:?}");
        assert_eq!(top(&e, "canary traffic")[0], "docs/deploy.md", "{b:?}");
        assert!(
            !top(&e, "connection pool").contains(&"docs/pool.md".to_string()),
            "{b:?}"
        );
    });
}

/// `p`'s configuration on the test server, under the project name `project`.
fn on_postgres(p: &Project, project: &str) -> cairn::Config {
    let mut config = p.config();
    config.store.uri = pg_uri();
    config.store.project = project.to_string();
    config
}

/// The index writer of `p` on backend `b` (as `engine` opens it).
fn store(p: &Project, b: Backend) -> Box<dyn cairn_core::IndexWriter> {
    let config = match b {
        Backend::Sqlite => p.config(),
        Backend::Postgres => on_postgres(p, &p.root().display().to_string()),
    };
    cairn::open_store(&p.root(), &config).expect("store").1
}

#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn an_index_says_which_models_it_holds_vectors_of() {
    // What `[embed] precision = "auto"` keeps to: a project's own vectors
    // only, never another project's on the same server.
    both(|b| {
        let p = Project::new();
        docs(&p);
        let e = engine(&p, b);
        let holds = |p: &Project, model: &str| store(p, b).has_vectors(model).expect("has_vectors");
        assert!(!holds(&p, "fake-hash"), "{b:?}");
        e.index(&roots(&p.root()), &NoProgress).expect("index");
        assert!(holds(&p, "fake-hash"), "{b:?}");
        assert!(!holds(&p, "fake-hash+int8sq"), "{b:?}");
        assert!(!holds(&Project::new(), "fake-hash"), "{b:?}");
    });
}

#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn search_ranks_the_same_top_hit_on_both() {
    let mut tops = Vec::new();
    both(|b| {
        let p = Project::new();
        docs(&p);
        let e = engine(&p, b);
        e.index(&roots(&p.root()), &NoProgress).expect("index");
        let t: Vec<String> = [
            "connection pool idle",
            "redis sessions",
            "blue-green rollback",
            "admit strikes",
        ]
        .iter()
        .map(|q| top(&e, q)[0].clone())
        .collect();
        assert_eq!(
            t,
            [
                "docs/pool.md",
                "docs/cache.md",
                "docs/deploy.md",
                "src/gate.rs"
            ],
            "{b:?}"
        );
        tops.push(t);
    });
}

/// The first 300 abstracts of ../shared/eval/scifact and its first 50
/// questions.
fn scifact_sample() -> (Vec<std::path::PathBuf>, Vec<String>) {
    let set = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/eval/scifact");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(format!("{set}/corpus"))
        .expect("../shared/eval/scifact is present")
        .filter_map(|f| f.ok().map(|f| f.path()))
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.truncate(300);
    let queries: Vec<String> = std::fs::read_to_string(format!("{set}/queries.jsonl"))
        .expect("queries")
        .lines()
        .take(50)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["text"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(queries.len(), 50);
    (files, queries)
}

/// The abstracts written into `p`'s `docs/`.
fn write_sample(p: &Project, files: &[std::path::PathBuf]) {
    for f in files {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        p.write(
            &format!("docs/{name}"),
            &std::fs::read_to_string(f).expect("a corpus file"),
        );
    }
}

/// BM25's candidate cut on PostgreSQL (`[store] bm25_cut`), forced on for
/// every query with a common and a rare word: the common words are scored
/// only for the chunks the rare words bring, so a chunk can only go missing
/// (one with none of the query's rare words), never move up or change its
/// score. Checked on the store's own lists, against every match scored in
/// full; and how often the first and the first ten stay the same.
#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn the_bm25_cut_only_drops_chunks_and_keeps_their_scores() {
    use cairn_core::IndexWriter;
    let (files, queries) = scifact_sample();
    let p = Project::new();
    write_sample(&p, &files);
    let project = p.root().display().to_string();
    engine(&p, Backend::Postgres)
        .index(&roots(&p.root()), &NoProgress)
        .expect("index");
    let store = |cut: usize| {
        cairn_postgres::PgStore::connect(&pg_uri(), &project)
            .expect("connect")
            .with_bm25_cut(cut)
    };
    let (full, cut) = (store(0), store(1));
    let (mut full_reader, mut cut_reader) = (
        full.reader().expect("reader"),
        cut.reader().expect("reader"),
    );
    let (full, cut) = (
        full_reader.snapshot().expect("snapshot"),
        cut_reader.snapshot().expect("snapshot"),
    );
    let (mut same_ten, mut same_first) = (0, 0);
    for q in &queries {
        // What the engine's lexical_expr writes: quoted words joined by OR.
        let expr = q
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
            .map(|w| format!("\"{}\"", w.to_lowercase()))
            .collect::<Vec<_>>()
            .join(" OR ");
        let all = full.bm25(&expr, 100_000, (1.0, 1.0), None).expect("bm25");
        let top = cut.bm25(&expr, 200, (1.0, 1.0), None).expect("bm25");
        let score: std::collections::HashMap<i64, f64> =
            all.iter().map(|h| (h.id.0, h.score)).collect();
        for (i, hit) in top.iter().enumerate() {
            let (id, s) = (&hit.id.0, &hit.score);
            let exact = score.get(id).copied();
            assert!(
                exact.is_some_and(|e| (e - s).abs() <= 1e-9 * e.abs().max(1.0)),
                "{q:?}: chunk {id} scored {s} by the cut, {exact:?} in full"
            );
            assert!(
                i == 0 || top[i - 1].score >= *s,
                "{q:?}: the cut's list is out of order"
            );
        }
        let ids = |l: &[cairn_core::Scored<cairn_core::ChunkId>]| {
            l.iter().take(10).map(|h| h.id).collect::<Vec<_>>()
        };
        same_ten += usize::from(ids(&all) == ids(&top));
        same_first += usize::from(all.first().map(|h| h.id) == top.first().map(|h| h.id));
    }
    eprintln!(
        "the cut kept the first chunk for {same_first} and the first ten for {same_ten} of 50"
    );
    assert!(
        same_ten < 50,
        "the cut never ran: every list is the full one"
    );
    // Measured: the first chunk kept for 48 of 50, the first ten for 29 —
    // with the cut forced on 300 abstracts, where a word in 19 of them is
    // already common; by default it waits for 20,000 common postings.
    const FIRST_KEPT: usize = 45;
    assert!(
        same_first >= FIRST_KEPT,
        "first chunk kept for {same_first} of 50"
    );
}

/// BM25 on PostgreSQL ranks as SQLite's FTS5 does: 300 SciFact abstracts
/// and the first 50 of its questions (../shared/eval/scifact), lexical
/// search alone and hybrid, the same top 10 in the same order with the same
/// scores on both backends (hits of equal score may trade places). Then a
/// document is rewritten and another deleted: the statistics follow, and
/// the two still agree.
#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn bm25_ranks_the_same_top_ten_on_both() {
    let (files, queries) = scifact_sample();
    // Hits as (path:line, score), hits of one score in path order.
    let ranked = |e: &Engine, q: &str, mode: cairn::Mode| -> Vec<(String, f64)> {
        let opts = SearchOptions {
            limit: 10,
            mode,
            no_graph: true,
            ..Default::default()
        };
        let mut hits: Vec<(String, f64)> = e
            .search(q, &opts)
            .expect("search")
            .into_iter()
            .map(|h| (format!("{}:{}", h.path, h.start_line), h.score))
            .collect();
        hits.sort_by(|a, b| {
            let (x, y) = ((a.1 * 1e9).round(), (b.1 * 1e9).round());
            y.total_cmp(&x).then(a.0.cmp(&b.0))
        });
        hits
    };
    let run = |b: Backend| -> Vec<Vec<(String, f64)>> {
        let p = Project::new();
        write_sample(&p, &files);
        let e = engine(&p, b);
        e.index(&roots(&p.root()), &NoProgress).expect("index");
        let mut out = Vec::new();
        for mode in [cairn::Mode::Bm25, cairn::Mode::Hybrid] {
            out.extend(queries.iter().map(|q| ranked(&e, q, mode)));
        }
        // Statistics after a rewrite and a delete.
        let first = files[0].file_name().unwrap_or_default().to_string_lossy();
        let second = files[1].file_name().unwrap_or_default().to_string_lossy();
        p.write(
            &format!("docs/{first}"),
            "# Vitamin D\n\nVitamin D deficiency and bone density in older adults.\n",
        );
        std::fs::remove_file(p.path(&format!("docs/{second}"))).expect("delete");
        e.index(&roots(&p.root()), &NoProgress)
            .expect("index again");
        out.extend(queries.iter().map(|q| ranked(&e, q, cairn::Mode::Bm25)));
        out
    };
    let (lite, pg) = (run(Backend::Sqlite), run(Backend::Postgres));
    let mut nonempty = 0;
    for (i, (a, b)) in lite.iter().zip(&pg).enumerate() {
        let q = &queries[i % 50];
        assert_eq!(a.len(), b.len(), "query {i} {q:?}: {a:?} vs {b:?}");
        // Hybrid scores carry the vectors' cosines, half floats on SQLite
        // and f32 on PostgreSQL: equal to 1e-3; lexical ones to 1e-6.
        let tolerance = if (50..100).contains(&i) { 1e-3 } else { 1e-6 };
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x.1 - y.1).abs() <= tolerance * x.1.abs().max(1.0),
                "query {i} {q:?}: scores {a:?} vs {b:?}"
            );
        }
        // The same hits, in the same order; where the tenth place is a tie,
        // the tied hits may differ (either may be cut).
        let tail = a.last().map_or(f64::NAN, |h| h.1);
        let tied = |x: f64| a.len() == 10 && (x - tail).abs() <= tolerance * tail.abs().max(1.0);
        let body = |h: &[(String, f64)]| -> Vec<String> {
            h.iter()
                .filter(|x| !tied(x.1))
                .map(|x| x.0.clone())
                .collect()
        };
        assert_eq!(body(a), body(b), "query {i} {q:?}");
        nonempty += usize::from(!a.is_empty());
    }
    assert!(nonempty >= 140, "{nonempty} of 150 lists had hits");
}

#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn vector_search_agrees_and_postgres_uses_hnsw() {
    let mut runs = Vec::new();
    // PostgreSQL twice: through the HNSW index (a project of any size,
    // `exact_scan_max` 0) and by the exact scan of a small project's chunks.
    for (b, exact) in [
        (Backend::Sqlite, 0),
        (Backend::Postgres, 0),
        (Backend::Postgres, 5_000),
    ] {
        let p = Project::new();
        docs(&p);
        let e = match b {
            Backend::Sqlite => engine(&p, b),
            Backend::Postgres => {
                let mut config = p.config();
                config.store.uri = pg_uri();
                config.store.project = p.root().display().to_string();
                config.store.exact_scan_max = exact;
                cairn::Open::new(&p.root(), &config)
                    .embedder(Some(fake_embedder()))
                    .engine()
                    .expect("engine")
            }
        };
        e.index(&roots(&p.root()), &NoProgress).expect("index");
        let mut run = Vec::new();
        for (q, prefix) in [
            ("connection pool idle", None),
            ("redis sessions", None),
            ("blue-green rollback", Some("docs/")),
            ("admit strikes", Some("src/")),
        ] {
            let opts = SearchOptions {
                mode: cairn::Mode::Vector,
                path_prefix: prefix.map(String::from),
                ..SearchOptions::default()
            };
            let hits: Vec<(String, f64)> = e
                .search(q, &opts)
                .expect("search")
                .into_iter()
                .map(|h| (h.path, h.score))
                .collect();
            assert!(!hits.is_empty(), "{b:?} {q}");
            if let Some(pre) = prefix {
                assert!(
                    hits.iter().all(|(path, _)| path.starts_with(pre)),
                    "{b:?} {hits:?}"
                );
            }
            run.push(hits);
        }
        runs.push(run);
    }
    // Same order on both; fused scores agree (HNSW finds every vector of a
    // small project, so approximate = exact here) up to SQLite's half-float
    // vectors: a cosine there is within 0.001 of pgvector's f32 one.
    for (s, p) in runs[0]
        .iter()
        .zip(&runs[1])
        .chain(runs[0].iter().zip(&runs[2]))
    {
        let sp: Vec<&String> = s.iter().map(|h| &h.0).collect();
        let pp: Vec<&String> = p.iter().map(|h| &h.0).collect();
        assert_eq!(sp, pp);
        for (a, b) in s.iter().zip(p) {
            assert!((a.1 - b.1).abs() < 1e-3, "{a:?} vs {b:?}");
        }
    }
    // The PostgreSQL run went through pgvector's index, not a loaded matrix.
    let mut c = postgres::Client::connect(&pg_uri(), postgres::NoTls).expect("connect");
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'embeddings_hnsw_64'
             AND indexdef LIKE '%USING hnsw%vector_cosine_ops%'",
            &[],
        )
        .expect("pg_indexes")
        .get(0);
    assert_eq!(n, 1);
}

#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn memories_graph_and_export_import() {
    both(|b| {
        let p = Project::new();
        docs(&p);
        let e = engine(&p, b);
        e.index(&roots(&p.root()), &NoProgress).expect("index");
        for text in [
            "We chose Redis for sessions",
            "Deploys need two approvals",
            "RateGate locks after five failures",
        ] {
            e.remember(&MemoryInput {
                text: text.into(),
                ..Default::default()
            })
            .expect("remember");
        }
        let got = e
            .recall(
                "who approves deploys",
                &RecallOptions {
                    limit: 3,
                    ..Default::default()
                },
            )
            .expect("recall");
        assert!(got[0].memory.text.contains("two approvals"), "{b:?}");
        let n = e.graph_neighbors("RateGate", 0).expect("neighbors");
        assert!(
            n.neighbors
                .iter()
                .any(|x| x.rel == cairn_core::Relation::Defines),
            "{b:?}"
        );
        assert!(n.neighbors.iter().any(|x| x.node.kind == "memory"), "{b:?}");
        // Export from this backend, import into a fresh project on Postgres.
        let mut out = Vec::new();
        e.export(&mut out, true).expect("export");
        let q = Project::new();
        let f = engine(&q, Backend::Postgres);
        f.import(&mut out.as_slice(), "stream").expect("import");
        assert_eq!(
            top(&f, "redis sessions"),
            top(&e, "redis sessions"),
            "{b:?}"
        );
    });
}

#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn two_machines_share_one_memory_on_postgres() {
    let project = format!("machines-{}", std::process::id());
    let (pa, pb) = (Project::new(), Project::new());
    let (a, b) = (machine(&pa, &project), machine(&pb, &project));
    let m1 = a
        .remember(&MemoryInput {
            text: "The staging database is rebuilt every Sunday night".into(),
            ..Default::default()
        })
        .expect("remember on a");
    // B's own pass must not delete A's memory: it fetches it instead.
    b.remember(&MemoryInput {
        text: "Feature flags live in LaunchDarkly, not in env files".into(),
        ..Default::default()
    })
    .expect("remember on b");
    let got = b
        .recall("when is staging rebuilt", &RecallOptions::default())
        .expect("recall on b");
    assert!(got[0].memory.text.contains("every Sunday"), "{got:?}");
    assert_eq!(memory_files(&pb).len(), 2, "b holds both files");
    // A catches up with B's memory on its next pass.
    let r = a.index(&[], &NoProgress).expect("pass on a");
    assert_eq!(r.memories_pulled, 1);
    assert_eq!(memory_files(&pa), memory_files(&pb));
    // B edits A's memory: the newer text travels back to A.
    let id = m1.memory.memory.id.clone();
    let file = pb.root().join(format!(".cairn/memory/{id}.md"));
    let edited = std::fs::read_to_string(&file)
        .expect("pulled file")
        .replace("every Sunday night", "every Saturday night");
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&file, &edited).expect("edit");
    b.index(&[], &NoProgress).expect("pass on b");
    a.index(&[], &NoProgress).expect("pass on a");
    let on_a = std::fs::read_to_string(pa.root().join(format!(".cairn/memory/{id}.md")))
        .expect("file on a");
    assert!(on_a.contains("every Saturday night"), "{on_a}");
    // A forgets it; B drops its copy on its next pass, and it stays gone.
    a.forget(&id, false, "test").expect("forget on a");
    let r = b.index(&[], &NoProgress).expect("pass on b");
    assert_eq!(r.memories_dropped, 1);
    assert_eq!(memory_files(&pb).len(), 1);
    a.index(&[], &NoProgress).expect("pass on a");
    assert_eq!(memory_files(&pa), memory_files(&pb));
    assert_eq!(b.status().expect("status").files, 1);
}

/// Issue 34: two machines (two project folders) sharing one project, two
/// writers each, storing the same 8 texts at the same moment make each
/// memory once. The lock file orders the writers of one folder only: across
/// folders the store's advisory lock orders the near-duplicate check and
/// the write, and a near-duplicate the other machine wrote is fetched to be
/// updated here. (Without the lock: 11 to 13 memories; without the fetch:
/// 9 to 15.)
#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn two_machines_storing_the_same_texts_at_once_make_each_memory_once() {
    let project = format!("same-texts-{}", std::process::id());
    let machines = [Project::new(), Project::new()];
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let started = std::time::Instant::now();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            // Each writer its own engine: like separate processes.
            let e = machine(&machines[w % 2], &project);
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                (0..8)
                    .filter(|i| {
                        let stored = e
                            .remember(&MemoryInput {
                                text: format!(
                                    "Team decision {i}: releases are cut from the main branch"
                                ),
                                kind: Some("decision".into()),
                                client: format!("writer-{w}"),
                                ..Default::default()
                            })
                            .expect("remember");
                        stored.action == "created"
                    })
                    .count()
            })
        })
        .collect();
    let created: usize = writers.into_iter().map(|w| w.join().expect("writer")).sum();
    eprintln!(
        "4 writers on 2 machines x 8 texts: {created} created in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for p in &machines {
        let e = machine(p, &project);
        e.index(&[], &NoProgress).expect("pass");
        let texts: Vec<String> = e
            .list_memories(&ListOptions {
                limit: 100,
                ..Default::default()
            })
            .expect("list")
            .into_iter()
            .map(|m| m.memory.text)
            .collect();
        assert_eq!(texts.len(), 8, "{texts:#?}");
        assert_eq!(memory_files(p).len(), 8);
    }
    assert_eq!(created, 8);
}

/// The memory-writer lock is one per project across connections: a second
/// taker waits, gives up after its wait with an error naming the project,
/// and gets it once the first guard is dropped; another project's lock is
/// free meanwhile.
#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn the_memory_lock_is_one_per_project_and_waits_at_most_its_wait() {
    use cairn_core::IndexWriter;
    let uri = pg_uri();
    let project = format!("memory-lock-{}", std::process::id());
    let a = cairn_postgres::PgStore::connect(&uri, &project).expect("a");
    let b = cairn_postgres::PgStore::connect(&uri, &project).expect("b");
    let other = cairn_postgres::PgStore::connect(&uri, &format!("{project}-other")).expect("c");
    let wait = std::time::Duration::from_millis(300);
    let take = |s: &cairn_postgres::PgStore| s.memory_lock().expect("a lock").take(wait);
    let held = take(&a).expect("lock a");
    let started = std::time::Instant::now();
    let err = match take(&b) {
        Ok(_) => panic!("two machines held one project's memory lock at once"),
        Err(e) => e.to_string(),
    };
    let waited = started.elapsed();
    assert!(
        err.contains(&project) && err.contains("memory-writer lock"),
        "{err}"
    );
    assert!(waited >= wait && waited < wait * 4, "{waited:?}");
    take(&other).expect("another project's lock");
    drop(held);
    take(&b).expect("lock b after a");
    // A's connection went back released: A takes the lock again on it.
    take(&a).expect("lock a again");
}

#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn concurrent_writers_lose_nothing() {
    both(|b| {
        let p = Project::new();
        let root = p.root();
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let e = engine(&p, b);
                std::thread::spawn(move || {
                    let mut created = 0;
                    for i in 0..15 {
                        let s = e
                            .remember(&MemoryInput {
                                text: format!(
                                    "writer {t} note {i}: unique fact number {}",
                                    t * 100 + i
                                ),
                                ..Default::default()
                            })
                            .expect("remember");
                        created += usize::from(s.action == "created");
                    }
                    created
                })
            })
            .collect();
        // A near-duplicate is merged, not lost: every store that created a
        // file has its file and its index entry.
        let created: usize = threads.into_iter().map(|t| t.join().expect("writer")).sum();
        assert!(created >= 25, "{b:?}: {created}");
        let e = engine(&p, b);
        e.index(&roots(&root), &NoProgress).expect("index");
        let files = std::fs::read_dir(root.join(".cairn/memory"))
            .expect("memory dir")
            .filter(|f| {
                f.as_ref()
                    .is_ok_and(|f| f.path().extension().is_some_and(|x| x == "md"))
            })
            .count();
        assert_eq!(files, created, "{b:?}");
        assert_eq!(e.status().expect("status").files as usize, created, "{b:?}");
    });
}

/// A project indexed before BM25 postings were kept (schema 4: no
/// `lexicon` mark, no postings, no statistics) gets them built when it is
/// next opened, and ranks as it did with them.
#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn an_older_project_gets_its_bm25_postings_on_open() {
    let p = Project::new();
    docs(&p);
    let project = p.root().display().to_string();
    let hits = |e: &Engine| -> Vec<(String, f64)> {
        let opts = SearchOptions {
            mode: cairn::Mode::Bm25,
            ..Default::default()
        };
        e.search("connection pool sessions deploys", &opts)
            .expect("search")
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect()
    };
    let before = {
        let e = engine(&p, Backend::Postgres);
        e.index(&roots(&p.root()), &NoProgress).expect("index");
        hits(&e)
    };
    assert!(before.len() >= 3, "{before:?}");
    let mut db = postgres::Client::connect(&pg_uri(), postgres::NoTls).expect("connect");
    for sql in [
        "DELETE FROM lex_postings WHERE project = $1",
        "DELETE FROM lex_terms WHERE project = $1",
        "DELETE FROM lex_stats WHERE project = $1",
        "DELETE FROM cairn_meta WHERE project = $1 AND key = 'lexicon'",
    ] {
        db.execute(sql, &[&project]).expect(sql);
    }
    let after = hits(&engine(&p, Backend::Postgres));
    assert_eq!(before, after);
    let marked: i64 = db
        .query_one(
            "SELECT count(*) FROM cairn_meta WHERE project = $1 AND key = 'lexicon'",
            &[&project],
        )
        .expect("meta")
        .get(0);
    assert_eq!(marked, 1);
}

/// Chinese, Japanese and Korean text is split into the same bigrams on both
/// backends (`cairn_core::fts_text` before FTS5's tokenizer), so BM25 finds
/// a word inside a run without spaces and scores it alike, as it finds a
/// camelCase name by its words; a project whose postings were split before
/// that (meta `lexicon` = 1) is re-split on open, to this build's version.
#[test]
#[ignore = "full tier: needs PostgreSQL"]
fn cjk_text_is_split_and_ranked_alike_on_both() {
    let write = |p: &Project| {
        p.write(
            "docs/cache.md",
            "# 缓存配置\n\n会话数据保存在Redis缓存中，过期时间为三十分钟。\n",
        );
        p.write(
            "docs/pool.md",
            "# 连接池\n\n数据库连接池保持二十个连接，空闲连接五分钟后回收。\n",
        );
        p.write(
            "docs/deploy.md",
            "# デプロイ\n\nヘルスチェックが通ると、トラフィックを新しい環境に切り替えます。\n",
        );
        p.write(
            "docs/search.md",
            "# 검색\n\n검색 색인은 매일 밤 다시 만듭니다.\n",
        );
        p.write(
            "docs/en.md",
            "# Sessions\n\nSessions live in Redis for thirty minutes.\n",
        );
        p.write(
            "docs/ttl.md",
            "# Expiry\n\nCall `setSessionTimeout` to change when entries expire.\n",
        );
    };
    let queries = [
        "Redis缓存多久过期",
        "连接池",
        "トラフィックの切り替え",
        "검색 색인",
        "redis sessions",
        "session timeout",
    ];
    let ranked = |e: &Engine, q: &str| -> Vec<(String, f64)> {
        let opts = SearchOptions {
            mode: cairn::Mode::Bm25,
            no_graph: true,
            ..Default::default()
        };
        e.search(q, &opts)
            .expect("search")
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect()
    };
    let mut per_backend = Vec::new();
    for b in [Backend::Sqlite, Backend::Postgres] {
        let p = Project::new();
        write(&p);
        let e = engine(&p, b);
        e.index(&roots(&p.root()), &NoProgress).expect("index");
        let lists: Vec<Vec<(String, f64)>> = queries.iter().map(|q| ranked(&e, q)).collect();
        for (q, want) in queries.iter().zip([
            "docs/cache.md",
            "docs/pool.md",
            "docs/deploy.md",
            "docs/search.md",
            "docs/en.md",
            "docs/ttl.md",
        ]) {
            let got = ranked(&e, q);
            assert_eq!(
                got.first().map(|h| h.0.as_str()),
                Some(want),
                "{b:?} {q}: {got:?}"
            );
        }
        if matches!(b, Backend::Postgres) {
            let project = p.root().display().to_string();
            let mut db = postgres::Client::connect(&pg_uri(), postgres::NoTls).expect("connect");
            db.execute(
                "UPDATE cairn_meta SET value = '1' WHERE project = $1 AND key = 'lexicon'",
                &[&project],
            )
            .expect("mark");
            db.execute("DELETE FROM lex_postings WHERE project = $1", &[&project])
                .expect("postings");
            let again = engine(&p, b);
            let relisted: Vec<Vec<(String, f64)>> =
                queries.iter().map(|q| ranked(&again, q)).collect();
            assert_eq!(relisted, lists, "rebuilt on open");
            let mark: String = db
                .query_one(
                    "SELECT value FROM cairn_meta WHERE project = $1 AND key = 'lexicon'",
                    &[&project],
                )
                .expect("meta")
                .get(0);
            assert_eq!(mark, "3", "the version of camelCase words");
        }
        per_backend.push(lists);
    }
    let (lite, pg) = (&per_backend[0], &per_backend[1]);
    for ((q, a), b) in queries.iter().zip(lite).zip(pg) {
        assert_eq!(a.len(), b.len(), "{q}: {a:?} vs {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.0, y.0, "{q}: {a:?} vs {b:?}");
            assert!(
                (x.1 - y.1).abs() <= 1e-6 * x.1.abs().max(1.0),
                "{q}: {a:?} vs {b:?}"
            );
        }
    }
}
