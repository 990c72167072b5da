use cairn::{Mode, NoProgress, SearchOptions};

use crate::{Project, roots};

const BODY: &str = "Connection pooling keeps a fixed number of database connections open and hands them out per request.";

#[test]
fn domain_boost_follows_the_current_file() {
    let p = Project::new();
    p.write("docs/billing/pool.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write("docs/search/pool.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = p.engine();
    e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    for (current, want) in [
        ("src/billing/invoice.rs", "docs/billing/pool.md"),
        ("src/search/query.rs", "docs/search/pool.md"),
    ] {
        let opts = SearchOptions {
            current_file: Some(current.into()),
            ..Default::default()
        };
        let hits = e.search("database connection pooling", &opts).unwrap();
        assert_eq!(hits[0].path, want, "current file {current}");
        assert_eq!(hits[0].boosts.len(), 1);
        assert_eq!(hits[0].boosts[0].reason, "domain");
        let fused: f64 = hits[0].signals.iter().map(|s| s.contribution).sum();
        assert!((hits[0].score - 1.3 * fused).abs() < 1e-12);
        assert!(hits[1].boosts.is_empty());
    }
}

/// The ch4p design's example: editing `src/Caching/…` boosts the docs of
/// `caching/`, case aside, with the project root (not `docs/`) indexed, so
/// every doc shares the layout folder `docs` and that alone boosts nothing.
#[test]
fn domain_boost_matches_folder_names_case_aside_from_the_project_root() {
    let p = Project::new();
    p.write("docs/Caching/pool.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write("docs/queue/pool.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write("src/caching/store.rs", "pub fn store() {}\n");
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    for current in ["src/caching/store.rs", "src/Caching/RedisCache.cs"] {
        let opts = SearchOptions {
            current_file: Some(current.into()),
            ..Default::default()
        };
        let hits = e.search("database connection pooling", &opts).unwrap();
        assert_eq!(
            hits[0].path, "docs/Caching/pool.md",
            "current file {current}"
        );
        assert_eq!(hits[0].boosts[0].reason, "domain");
        let other = hits
            .iter()
            .find(|h| h.path == "docs/queue/pool.md")
            .unwrap();
        assert!(other.boosts.is_empty(), "{:?}", other.boosts);
    }
    // A file in no domain (at the root, or under layout folders only) boosts nothing.
    for current in ["main.rs", "src/lib.rs"] {
        let opts = SearchOptions {
            current_file: Some(current.into()),
            ..Default::default()
        };
        let hits = e.search("database connection pooling", &opts).unwrap();
        assert!(hits.iter().all(|h| h.boosts.is_empty()), "{current}");
    }
}

#[test]
fn instructions_files_get_their_boost() {
    let p = Project::new();
    p.write("a/guide.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write("b/db.instructions.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let hits = e
        .search("connection pooling", &SearchOptions::default())
        .unwrap();
    assert_eq!(hits[0].path, "b/db.instructions.md");
    assert_eq!(hits[0].boosts[0].reason, "instructions");
}

#[test]
fn explain_reports_each_retriever_and_its_contribution() {
    let p = Project::new();
    p.write("a.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write("b.md", "# Other\n\nSomething entirely different about gardening, tomatoes and summer rain in July.\n");
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    // With the graph: a.md's chunks link to its heading and its file, so the
    // walk brings it mass and the graph votes too, with at most its weight
    // (0.5, less for a query that names no entity).
    let hits = e
        .search("database connections", &SearchOptions::default())
        .unwrap();
    let top = &hits[0];
    assert_eq!(top.path, "a.md");
    let names: Vec<&str> = top.signals.iter().map(|s| s.retriever.name()).collect();
    assert_eq!(names, vec!["bm25", "vector", "graph"]);
    let g = &top.signals[2];
    assert!(g.contribution > 0.0 && g.contribution <= 0.5, "{g:?}");
    let sum: f64 = top.signals.iter().map(|s| s.contribution).sum();
    assert!((sum - top.score).abs() < 1e-12);

    let no_graph = SearchOptions {
        no_graph: true,
        ..Default::default()
    };
    let hits = e.search("database connections", &no_graph).unwrap();
    let top = &hits[0];
    assert_eq!(top.path, "a.md");
    let names: Vec<&str> = top.signals.iter().map(|s| s.retriever.name()).collect();
    assert_eq!(names, vec!["bm25", "vector"]);
    let sum: f64 = top.signals.iter().map(|s| s.contribution).sum();
    assert!((sum - top.score).abs() < 1e-12);
    // Score fusion: first in both lists, so each list's whole weight — 1
    // from BM25, `vector_weight` (0.8) from the vectors.
    let vector_weight = cairn::Config::default().search.vector_weight;
    assert!(top.signals.iter().all(|s| s.rank == 1));
    assert!((top.signals[0].contribution - 1.0).abs() < 1e-12);
    assert!((top.signals[1].contribution - vector_weight).abs() < 1e-12);
    // And a lower one its share of the list's best score.
    let second = hits.iter().find(|h| h.path == "b.md");
    if let Some(b) = second {
        for s in &b.signals {
            assert!(
                s.contribution
                    < if s.retriever == cairn_core::Retriever::Bm25 {
                        1.0
                    } else {
                        vector_weight
                    }
            );
        }
    }

    // `[search] fusion = "rrf"`: 1/(60+1) from BM25, 0.8/(60+1) from the vectors.
    p.write("cairn.toml", "[search]\nfusion = \"rrf\"\n");
    let e = p.engine();
    let hits = e.search("database connections", &no_graph).unwrap();
    let top = &hits[0];
    assert_eq!(top.path, "a.md");
    assert!((top.signals[0].contribution - 1.0 / 61.0).abs() < 1e-12);
    assert!((top.signals[1].contribution - vector_weight / 61.0).abs() < 1e-12);
    let hits = e
        .search("database connections", &SearchOptions::default())
        .unwrap();
    let g = hits[0]
        .signals
        .iter()
        .find(|s| s.retriever == cairn_core::Retriever::Graph)
        .unwrap();
    assert!(
        g.contribution <= 0.5 / (60.0 + g.rank as f64) + 1e-12,
        "{g:?}"
    );
}

#[test]
fn hostile_queries_are_never_syntax_errors() {
    let p = Project::new();
    p.write("a.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    for q in [
        "\"unbalanced",
        "a:b",
        "-x",
        "(pool",
        "pool*",
        "NOT AND OR",
        "c++ && ||",
        "pooling)",
    ] {
        let r = e.search(
            q,
            &SearchOptions {
                mode: Mode::Bm25,
                ..Default::default()
            },
        );
        assert!(r.is_ok(), "{q}: {r:?}");
    }
    let hits = e
        .search(
            "(connection-pooling)",
            &SearchOptions {
                mode: Mode::Bm25,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(hits.len(), 1);
    // Raw FTS5 syntax is passed through, and its errors say so.
    let raw = SearchOptions {
        raw_fts: true,
        mode: Mode::Bm25,
        ..Default::default()
    };
    assert_eq!(e.search("\"connection pooling\"", &raw).unwrap().len(), 1);
    assert!(e.search("pool NOT connections", &raw).unwrap().is_empty());
    assert_eq!(e.search("datab*", &raw).unwrap().len(), 1);
    let err = e.search("\"unbalanced", &raw).unwrap_err().to_string();
    assert!(err.contains("invalid full-text query"), "{err}");
    assert!(e.search("   ", &SearchOptions::default()).is_err());
}

/// A question in words reaches a camelCase name by BM25 (`set the
/// formatter` → `SetFormatter`), the name itself still matches as one word,
/// and a raw FTS5 expression keeps its meaning: the name's words are not
/// added to it (`nothing OR SetFormatter` must not also demand `set`).
#[test]
fn words_reach_camel_case_names_and_raw_expressions_keep_their_meaning() {
    let p = Project::new();
    p.write(
        "logger.go",
        "package log\n\n// Changes how entries are written.\nfunc (l *Logger) SetFormatter(f Formatter) {\n\tl.formatter = f\n}\n",
    );
    p.write("b.md", "# Other\n\nNothing about output here.\n");
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let bm25 = SearchOptions {
        mode: Mode::Bm25,
        ..Default::default()
    };
    let paths = |q: &str, o: &SearchOptions| -> Vec<String> {
        e.search(q, o)
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect()
    };
    assert_eq!(paths("how do I set the formatter", &bm25), ["logger.go"]);
    assert_eq!(paths("setformatter", &bm25), ["logger.go"]);
    let raw = SearchOptions {
        raw_fts: true,
        ..bm25.clone()
    };
    assert_eq!(paths("nothing OR SetFormatter", &raw).len(), 2);
    assert_eq!(paths("\"set formatter\"", &raw), ["logger.go"]);
}

#[test]
fn path_prefix_filters_both_retrievers() {
    let p = Project::new();
    p.write("x/a.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write("y/b.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    for mode in [Mode::Hybrid, Mode::Bm25, Mode::Vector] {
        let opts = SearchOptions {
            path_prefix: Some("y/".into()),
            mode,
            limit: 10,
            ..Default::default()
        };
        let hits = e.search("pooling", &opts).unwrap();
        assert_eq!(
            hits.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
            vec!["y/b.md"],
            "{mode:?}"
        );
    }
}

#[test]
fn a_query_of_thousands_of_terms_is_cut_or_refused_not_run() {
    // 10,000 distinct terms once took 11.5 s over MCP; a 2,000-term FTS5 AND
    // chain a minute.
    let p = Project::new();
    p.write(
        "docs/a.md",
        "# Deploy\n\nThe release train leaves on Fridays.\n",
    );
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let many: String = (0..10_000).map(|i| format!("term{i} ")).collect::<String>() + "deploy";
    assert_eq!(
        cairn_search::query_terms(&many).len(),
        cairn_search::MAX_QUERY_TERMS
    );
    let started = std::time::Instant::now();
    e.search(&many, &cairn::SearchOptions::default()).unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let chain = (0..2_000)
        .map(|i| format!("t{i}"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let err = e
        .search(
            &chain,
            &cairn::SearchOptions {
                raw_fts: true,
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("2000 terms") && err.contains("at most 64"),
        "{err}"
    );
    // A short FTS5 query still runs.
    e.search(
        "\"release train\" OR deploy",
        &cairn::SearchOptions {
            raw_fts: true,
            ..Default::default()
        },
    )
    .unwrap();
}

/// A big file can answer twice: two different sections of it that both
/// match show as two results (`[search] sections_per_file`, 3), not one.
#[test]
fn different_sections_of_one_file_can_both_be_results() {
    let guide = "# Guide\n\n## Smart case\n\nThe smart case option makes a lowercase pattern match without regard to case.\n\n## Filters\n\nFilters skip hidden files; the smart case rule applies to glob filters too.\n\n## Other\n\nNothing about matching here at all, only padding text for the guide.\n";
    let p = Project::new();
    p.write("guide.md", guide);
    p.write(
        "other.md",
        "# Other\n\nA note that mentions smart case once.\n",
    );
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let opts = SearchOptions {
        mode: Mode::Bm25,
        limit: 5,
        ..Default::default()
    };
    let hits = e.search("smart case", &opts).unwrap();
    let guide_hits: Vec<_> = hits.iter().filter(|h| h.path == "guide.md").collect();
    assert_eq!(guide_hits.len(), 2, "{hits:#?}");
    assert_ne!(guide_hits[0].start_line, guide_hits[1].start_line);

    let one = Project::with_config("[search]\nsections_per_file = 1\n");
    one.write("guide.md", guide);
    let e = one.engine();
    e.index(&roots(&one.root()), &NoProgress).unwrap();
    let hits = e.search("smart case", &opts).unwrap();
    assert_eq!(hits.iter().filter(|h| h.path == "guide.md").count(), 1);
}

#[test]
fn a_search_names_the_retrievers_that_ran() {
    let p = Project::new();
    p.write("a.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let ran = |opts: SearchOptions| {
        e.search_with_retrievers("database connections", &opts)
            .unwrap()
            .retrievers
    };
    assert_eq!(
        ran(SearchOptions::default()),
        ["bm25", "vector", "graph"],
        "hybrid with a graph"
    );
    let no_graph = SearchOptions {
        no_graph: true,
        ..Default::default()
    };
    assert_eq!(ran(no_graph), ["bm25", "vector"]);
    let bm25 = SearchOptions {
        mode: Mode::Bm25,
        ..Default::default()
    };
    assert_eq!(ran(bm25), ["bm25"]);
    let hits = e
        .search_with_retrievers("database connections", &SearchOptions::default())
        .unwrap()
        .hits;
    assert_eq!(hits[0].path, "a.md");
}

/// Issue 18: a search filled its list with whatever the vectors reached
/// last, however far below the best match.
#[test]
fn hits_far_below_the_best_are_left_out() {
    let p = Project::with_config("[search]\nrelative_floor = 0.7\n");
    p.write("pool.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write(
        "garden.md",
        "# Garden\n\nTomatoes want summer rain, a sunny wall and a stake per plant.\n",
    );
    p.write(
        "choir.md",
        "# Choir\n\nRehearsals move to the church hall on Tuesday evenings in winter.\n",
    );
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let q = "database connection pooling";
    let paths = |opts: &SearchOptions| -> Vec<(String, f64)> {
        e.search(q, opts)
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect()
    };
    // Floors off: the vectors bring every file in.
    let all = paths(&SearchOptions {
        relative_floor: Some(0.0),
        ..Default::default()
    });
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(all[0].0, "pool.md");
    assert!(all[1].1 < 0.7 * all[0].1, "{all:?}");
    // The configured relative floor keeps the match alone.
    let floored = paths(&SearchOptions::default());
    assert_eq!(floored.len(), 1, "{floored:?}");
    assert_eq!(floored[0].0, "pool.md");
    // An absolute floor above the best match leaves nothing; one below it
    // leaves what the relative floor keeps.
    let best = all[0].1;
    assert!(
        paths(&SearchOptions {
            min_score: Some(best * 1.01),
            ..Default::default()
        })
        .is_empty()
    );
    assert_eq!(
        paths(&SearchOptions {
            min_score: Some(best * 0.99),
            ..Default::default()
        }),
        floored
    );
    // Out of range: refused with the setting's name.
    let err = e
        .search(
            q,
            &SearchOptions {
                relative_floor: Some(1.5),
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("relative_floor 1.5"), "{err}");
    let err = e
        .search(
            q,
            &SearchOptions {
                min_score: Some(-1.0),
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("min_score -1"), "{err}");
    // The rankings evaluations score keep every candidate.
    let ranked = e
        .ranked_paths(q, &SearchOptions::default(), 10, 40)
        .unwrap();
    assert_eq!(ranked.len(), 3, "{ranked:?}");
}

/// A hit carries its chunk's text and whether its file still holds it, both
/// read with the ranking: an edited file's hit says so, a deleted one's too.
#[test]
fn hits_carry_their_text_and_the_freshness_of_their_file() {
    let p = Project::new();
    p.write("docs/pool.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = p.engine();
    e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    let search = || {
        e.search("connection pooling", &SearchOptions::default())
            .unwrap()
    };
    let hits = search();
    assert_eq!(hits[0].path, "docs/pool.md");
    assert!(hits[0].text.contains(BODY), "{}", hits[0].text);
    assert_eq!(hits[0].source, cairn::Freshness::Fresh);
    p.write("docs/pool.md", &format!("# Pooling\n\nEdited.\n\n{BODY}\n"));
    assert_eq!(search()[0].source, cairn::Freshness::Changed);
    std::fs::remove_file(p.path("docs/pool.md")).unwrap();
    assert_eq!(search()[0].source, cairn::Freshness::Deleted);
}

/// The order of the first hits does not depend on how many were asked for:
/// each retriever's list is at least `[search] min_candidates` long, so a
/// document one list ranks 6th still gets that list's vote in `search -n 1`.
/// With lists of `limit × 4` (`min_candidates = 0`), `-n 1` and `-n 10`
/// disagreed on the first hit of this corpus.
#[test]
fn the_first_hits_do_not_depend_on_the_limit() {
    const WORDS: [&str; 24] = [
        "pool", "cache", "retry", "socket", "thread", "queue", "lock", "token", "index", "shard",
        "lease", "batch", "stream", "frame", "codec", "route", "timer", "signal", "buffer",
        "cursor", "schema", "replica", "quota", "ledger",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut corpus = Vec::new();
    for d in 0..80 {
        let len = 4 + next(40);
        let words: Vec<&str> = (0..len).map(|_| WORDS[next(WORDS.len())]).collect();
        corpus.push((
            format!("docs/d{d:02}.md"),
            format!("# Note {d}\n\n{}.\n", words.join(" ")),
        ));
    }
    let queries: Vec<String> = (0..30)
        .map(|_| {
            format!(
                "{} {} {}",
                WORDS[next(24)],
                WORDS[next(24)],
                WORDS[next(24)]
            )
        })
        .collect();
    let first = |config: &str| {
        let p = Project::with_config(config);
        for (path, text) in &corpus {
            p.write(path, text);
        }
        let e = p.engine();
        e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
        let top = |q: &str, n: usize| -> Vec<String> {
            let opts = SearchOptions {
                limit: n,
                relative_floor: Some(0.0),
                ..Default::default()
            };
            e.search(q, &opts)
                .unwrap()
                .into_iter()
                .map(|h| h.path)
                .take(n)
                .collect()
        };
        queries
            .iter()
            .filter(|q| top(q, 1) != top(q, 10)[..1] || top(q, 3) != top(q, 10)[..3])
            .count()
    };
    assert_eq!(first(""), 0, "the first hits changed with the limit");
    assert!(
        first("[search]\nmin_candidates = 0\n") > 0,
        "short lists should change the first hits of this corpus (else the test proves nothing)"
    );
}

/// The vector matrix a search reads is kept beside the index for the next
/// process and mapped back only for the same state of the index: a second
/// process answers the same without rewriting it, a damaged file is read
/// again from the index and mended, a changed index writes a new one, and
/// a vacuum removes it.
#[test]
fn the_vectors_are_kept_between_processes_for_the_same_index() {
    use std::time::{Duration, SystemTime};
    let p = Project::new();
    p.write("a.md", &format!("# Pooling\n\n{BODY}\n"));
    p.write(
        "b.md",
        "# Gardening\n\nTomatoes want summer rain and a warm wall.\n",
    );
    let file = p.path(".cairn/index.sqlite.vectors");
    let vector_hits = |e: &cairn::Engine| -> Vec<(String, f64)> {
        let opts = SearchOptions {
            mode: Mode::Vector,
            ..Default::default()
        };
        e.search("database connection pooling", &opts)
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect()
    };
    let first = {
        let e = p.engine();
        e.index(&roots(&p.root()), &NoProgress).unwrap();
        assert!(!file.exists(), "no search, no vector file");
        vector_hits(&e)
    };
    assert_eq!(first[0].0, "a.md", "{first:?}");
    assert!(file.exists(), "the search's vectors are kept");

    // A second process maps the file rather than writing it again.
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let touch_old = || {
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(old)
            .unwrap()
    };
    touch_old();
    assert_eq!(vector_hits(&p.engine()), first);
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), old);

    // A damaged file: the vectors are read from the index again, the same,
    // and the file is written anew.
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
    assert_eq!(vector_hits(&p.engine()), first);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), bytes.len() as u64);

    // The index changes: the file of the old state is not used.
    touch_old();
    p.write(
        "c.md",
        "# Pools\n\nA pool of database connections, shared per request.\n",
    );
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let now = vector_hits(&e);
    assert!(
        now.iter().any(|h| h.0 == "c.md"),
        "the new file's vector is in: {now:?}"
    );
    assert_ne!(std::fs::metadata(&file).unwrap().modified().unwrap(), old);
    assert_eq!(vector_hits(&p.engine()), now);

    e.vacuum().unwrap();
    assert!(!file.exists(), "a vacuum removes the derived vectors");
}

/// A chunk merged from small sections (it carries the last one's heading)
/// expands to at least its own lines, not just that last section.
#[test]
fn a_merged_chunk_expands_to_at_least_its_own_lines() {
    let p = Project::new();
    p.write(
        "docs/guide.md",
        "# Guide\n\n## Pooling\n\nThe pool keeps twenty connections.\n\nIdle ones close after five minutes.\n\n## Other\n\nUnrelated.\n",
    );
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let hit = e
        .search("idle connections twenty", &SearchOptions::default())
        .unwrap()
        .into_iter()
        .find(|h| h.path == "docs/guide.md")
        .expect("a hit");
    let s = e.expand(&hit.chunk_id, 0, 2000).unwrap();
    assert!(
        s.start_line <= hit.start_line && s.end_line >= hit.end_line,
        "{s:?} vs {hit:?}"
    );
    assert!(s.text.contains("Idle ones close"), "{}", s.text);
}

/// An engine whose model embeds `limit` texts, then fails.
fn dying_engine(p: &Project, limit: usize) -> cairn::Engine {
    crate::incremental::engine_with(p, cairn_test_support::DyingEmbedder::new(limit))
}

/// A model that cannot embed the query (a remote endpoint down) leaves the
/// search to BM25: an answer, not an error.
#[test]
fn a_query_the_model_cannot_embed_is_answered_by_bm25() {
    let p = Project::new();
    p.write("a.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = dying_engine(&p, 1);
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let hits = e
        .search("connection pooling", &SearchOptions::default())
        .unwrap();
    assert_eq!(hits[0].path, "a.md");
    assert!(
        hits[0]
            .signals
            .iter()
            .all(|s| s.retriever != cairn_core::Retriever::Vector)
    );
}

/// The query-vector cache is least-recently-used: a query asked again
/// stays while 256 others come and go after it; the model is not asked
/// for it twice (it would fail: it embeds the chunk and 257 queries only).
#[test]
fn the_query_cache_keeps_what_was_asked_lately() {
    let p = Project::new();
    p.write("a.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = dying_engine(&p, 1 + 257);
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let vector = SearchOptions {
        mode: Mode::Vector,
        ..Default::default()
    };
    let ask = |q: &str| e.search(q, &vector).unwrap().len();
    assert_eq!(ask("pool q0"), 1);
    for i in 1..256 {
        ask(&format!("pool q{i}"));
        // q0 asked again after each: always the most recent.
        assert_eq!(ask("pool q0"), 1, "q0 cached after q{i}");
    }
    // 256 distinct queries so far; one more evicts the least recent (q1).
    assert_eq!(ask("pool q256"), 1);
    assert_eq!(ask("pool q0"), 1, "q0 survived the eviction");
    // The model is spent: a query not cached gets no vector now.
    assert_eq!(ask("pool q1"), 0);
}

/// Backpressure: with more chunks waiting for a vector than 80 % of
/// `[embed] queue_capacity` (a model that stopped), a memory store waits
/// and says so; `status` shows the queue; below the mark nothing waits.
#[test]
fn a_full_embedding_queue_slows_stores_and_says_so() {
    let p = Project::with_config("[embed]\nqueue_capacity = 10\n");
    for i in 0..12 {
        p.write(
            &format!("d{i}.md"),
            &format!("# Doc {i}\n\n{BODY} Number {i}.\n"),
        );
    }
    let e = dying_engine(&p, 0);
    let _ = e.index(&roots(&p.root()), &NoProgress);
    let q = e.status().unwrap().embed_queue.unwrap();
    assert!(q.pending >= 12, "{q:?}");
    assert_eq!(q.capacity, 10);
    let started = std::time::Instant::now();
    let stored = e
        .remember(&cairn::MemoryInput {
            text: "Deploys go out on Fridays.".into(),
            ..Default::default()
        })
        .unwrap();
    let note = stored.slowed.expect("told it was slowed");
    assert!(
        note.contains("embedding queue at") && note.contains("of 10 chunks"),
        "{note}"
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(e.status().unwrap().embed_queue.unwrap().slowed_writes, 1);

    // A model that keeps up: nothing waits, nothing is said, a rate is known.
    let p = Project::with_config("[embed]\nqueue_capacity = 10\n");
    for i in 0..12 {
        p.write(
            &format!("d{i}.md"),
            &format!("# Doc {i}\n\n{BODY} Number {i}.\n"),
        );
    }
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    let stored = e
        .remember(&cairn::MemoryInput {
            text: "Deploys go out on Fridays.".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(stored.slowed.is_none());
    let q = e.status().unwrap().embed_queue.unwrap();
    assert_eq!((q.pending, q.slowed_writes), (0, 0), "{q:?}");
}

/// A Chinese or Japanese question finds the document that answers it by the
/// words they share inside runs written without spaces, and the hit shows
/// the text as written (the bigrams exist only in the FTS index).
#[test]
fn cjk_questions_find_their_documents_and_show_the_text_as_written() {
    let p = Project::new();
    p.write(
        "docs/table.md",
        "# 表格\n\n## 隐藏分页\n\n只有一页数据时，设置 `hideOnSinglePage` 隐藏分页栏。\n",
    );
    p.write(
        "docs/upload.md",
        "# 上传\n\n## 服务端\n\n服务端接收文件后返回上传结果。\n",
    );
    p.write(
        "docs/textlint.md",
        "# ら抜き言葉\n\n「食べれる」のようなら抜き言葉を検出するルールです。\n",
    );
    let e = p.engine();
    e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    let opts = SearchOptions {
        mode: Mode::Bm25,
        ..Default::default()
    };
    for (q, want, shown) in [
        ("表格怎么隐藏分页栏", "docs/table.md", "只有一页数据时"),
        ("上传的服务端怎么写", "docs/upload.md", "服务端接收文件"),
        ("ら抜き言葉を見つけたい", "docs/textlint.md", "「食べれる」"),
    ] {
        let hits = e.search(q, &opts).unwrap();
        assert_eq!(hits.first().map(|h| h.path.as_str()), Some(want), "{q}");
        assert!(hits[0].snippet.contains(shown), "{q}: {}", hits[0].snippet);
        assert!(!hits[0].text.contains("数据 据时"), "{}", hits[0].text);
    }
}

/// `rerank`: the fake cross-encoder (query words a passage holds) puts the
/// file that names every query word first, though fusion ranked it lower;
/// each reranked hit says its reranker and fused ranks; off, the fused
/// order stands.
#[test]
fn a_reranked_search_follows_the_cross_encoder_and_explains_it() {
    let p = Project::new();
    // Fusion prefers the files that repeat "pooling"; only c.md names
    // every word of the query.
    p.write(
        "docs/a.md",
        "# Pooling\n\npooling pooling pooling pooling keeps connections.\n",
    );
    p.write(
        "docs/b.md",
        "# Pooling\n\npooling pooling pooling keeps connections open.\n",
    );
    p.write(
        "docs/c.md",
        "# Notes\n\nA pooling layer for the database hands out each request a connection.\n",
    );
    let e = p.engine();
    e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    e.set_reranker(Some(std::sync::Arc::new(cairn_embed::FakeReranker)));
    let query = "pooling database request";
    let plain = e.search(query, &SearchOptions::default()).unwrap();
    assert!(plain.iter().all(|h| h.rerank.is_none()));
    let asked = SearchOptions {
        rerank: Some(true),
        ..Default::default()
    };
    let searched = e.search_with_retrievers(query, &asked).unwrap();
    let hits = &searched.hits;
    assert_eq!(hits[0].path, "docs/c.md", "{:?}", paths_of(hits));
    let r = hits[0].rerank.expect("reranked");
    assert_eq!(r.rank, 1);
    let fused_c = plain.iter().position(|h| h.path == "docs/c.md").unwrap() + 1;
    assert_eq!(r.fused_rank, fused_c);
    let report = searched.rerank.expect("a rerank report");
    assert_eq!(
        (report.model.as_str(), report.scored),
        ("fake-rerank", hits.len())
    );
    assert!(!report.over_budget && report.error.is_none());
    // Off per search, whatever the reranker: the fused order.
    let off = SearchOptions {
        rerank: Some(false),
        ..Default::default()
    };
    assert_eq!(paths_of(&e.search(query, &off).unwrap()), paths_of(&plain));
}

/// Asked for with no reranker to be had: the fused order, and a report
/// that says why.
#[test]
fn a_rerank_without_a_model_keeps_the_fused_order_and_says_why() {
    let p = Project::new();
    p.write("docs/a.md", &format!("# Pooling\n\n{BODY}\n"));
    let e = p.engine();
    e.index(&roots(&p.path("docs")), &NoProgress).unwrap();
    e.set_reranker(None);
    let asked = SearchOptions {
        rerank: Some(true),
        ..Default::default()
    };
    let searched = e
        .search_with_retrievers("connection pooling", &asked)
        .unwrap();
    assert_eq!(searched.hits[0].path, "docs/a.md");
    assert!(searched.hits[0].rerank.is_none());
    let err = searched.rerank.and_then(|r| r.error).expect("says why");
    assert!(err.contains("cairn model fetch"), "{err}");
}

fn paths_of(hits: &[cairn_core::Hit]) -> Vec<String> {
    hits.iter().map(|h| h.path.clone()).collect()
}
