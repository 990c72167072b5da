//! Memories: files as the source of truth, near-duplicates, entities,
//! expiry, stale sources, undo, recall ranking, concurrent stores.

use cairn::{ListOptions, MemoryInput, MemoryPatch, NoProgress, RecallOptions};

use crate::Project;

fn input(text: &str, kind: &str, importance: u8) -> MemoryInput {
    MemoryInput {
        text: text.into(),
        kind: Some(kind.into()),
        importance: Some(importance),
        ..MemoryInput::default()
    }
}

#[test]
fn stored_memories_survive_a_deleted_index() {
    let p = Project::new();
    let e = p.engine();
    let stored = e
        .remember(&MemoryInput {
            tags: vec!["caching".into()],
            ..input(
                "We use Redis with a 5-minute TTL for session caching in SessionStore",
                "decision",
                8,
            )
        })
        .unwrap();
    assert_eq!(stored.action, "created");
    let id = stored.memory.memory.id.clone();
    let file = p.root().join(format!(".cairn/memory/{id}.md"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(&format!("---\nid: {id}\ntype: decision\nimportance: 8\n")),
        "{text}"
    );
    assert!(text.contains("SessionStore") && text.contains("caching"));

    let hits = e
        .recall(
            "how long do sessions stay cached",
            &RecallOptions::default(),
        )
        .unwrap();
    assert_eq!(hits[0].memory.memory.id, id);
    drop(e);

    // The index is derived: delete it, re-index, and the memory is back.
    std::fs::remove_file(p.root().join(".cairn/index.sqlite")).unwrap();
    let e = p.engine();
    e.index(&e.default_roots(), &NoProgress).unwrap();
    let hits = e
        .recall("session caching redis", &RecallOptions::default())
        .unwrap();
    let m = &hits[0].memory.memory;
    assert_eq!(m.id, id);
    assert_eq!((m.kind.as_str(), m.importance), ("decision", 8));
    assert_eq!(m.tags, ["caching"]);
    assert!(
        m.entities.iter().any(|x| x == "SessionStore"),
        "{:?}",
        m.entities
    );
    assert!(hits[0].memory.text.starts_with("We use Redis"));

    // A hand edit is picked up by the next index.
    std::fs::write(&file, text.replace("5-minute", "15-minute")).unwrap();
    e.index(&e.default_roots(), &NoProgress).unwrap();
    let hits = e.recall("session TTL", &RecallOptions::default()).unwrap();
    assert!(hits[0].memory.text.contains("15-minute"));
}

#[test]
fn a_near_duplicate_of_the_same_type_updates_instead_of_adding() {
    let p = Project::new();
    let e = p.engine();
    let a = e
        .remember(&input(
            "Deploys go out every Tuesday after the standup meeting",
            "convention",
            5,
        ))
        .unwrap();
    let b = e
        .remember(&input(
            "deploys go out every tuesday after the standup meeting!",
            "convention",
            7,
        ))
        .unwrap();
    assert_eq!(b.action, "updated");
    assert_eq!(b.memory.memory.id, a.memory.memory.id);
    assert!(b.similarity.unwrap() >= 0.92);
    assert_eq!(b.memory.memory.importance, 7);
    // Same text, other type: a memory of its own.
    let c = e
        .remember(&input(
            "Deploys go out every Tuesday after the standup meeting",
            "fact",
            5,
        ))
        .unwrap();
    assert_eq!(c.action, "created");
    // Something else entirely: new.
    let d = e
        .remember(&input(
            "The billing service retries failed charges three times",
            "convention",
            5,
        ))
        .unwrap();
    assert_eq!(d.action, "created");
    let all = e.list_memories(&ListOptions::default()).unwrap();
    assert_eq!(all.len(), 3);
}

#[test]
fn expired_memories_are_left_out_unless_asked_for() {
    let p = Project::new();
    let e = p.engine();
    e.remember(&MemoryInput {
        expires: Some("2001-01-01".into()),
        ..input(
            "The staging password rotates on the first Monday",
            "fact",
            5,
        )
    })
    .unwrap();
    let kept = e
        .remember(&MemoryInput {
            ttl: Some("30d".into()),
            ..input("The staging cluster is called bluebird", "fact", 5)
        })
        .unwrap();
    assert!(kept.memory.memory.expires.is_some());
    let hits = e.recall("staging", &RecallOptions::default()).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(hits[0].memory.text.contains("bluebird"));
    let all = e
        .recall(
            "staging",
            &RecallOptions {
                include_expired: true,
                ..RecallOptions::default()
            },
        )
        .unwrap();
    assert_eq!(all.len(), 2);
    assert!(all.iter().any(|r| r.expired));
    assert!(
        e.remember(&MemoryInput {
            ttl: Some("soon".into()),
            ..input("x y z", "fact", 5)
        })
        .is_err()
    );
}

#[test]
fn a_changed_source_flags_the_memory_and_ranks_it_lower() {
    let p = Project::new();
    p.write(
        "docs/api.md",
        "# API\n\nThe rate limit is 100 requests per minute.\n",
    );
    let e = p.engine();
    e.index(&e.default_roots(), &NoProgress).unwrap();
    let cited = e
        .remember(&MemoryInput {
            sources: vec!["docs/api.md#API".into()],
            ..input(
                "The API rate limit is 100 requests per minute per key",
                "fact",
                5,
            )
        })
        .unwrap();
    e.remember(&input(
        "The API rate limit resets every minute per key",
        "fact",
        5,
    ))
    .unwrap();
    let opts = RecallOptions {
        no_touch: true,
        ..RecallOptions::default()
    };
    let before = e
        .recall("API rate limit per minute per key", &opts)
        .unwrap();
    let find = |hits: &[cairn::Recalled]| {
        hits.iter()
            .find(|h| h.memory.memory.id == cited.memory.memory.id)
            .cloned()
            .unwrap()
    };
    let fresh = find(&before);
    assert!(!fresh.source_changed);
    p.write(
        "docs/api.md",
        "# API\n\nThe rate limit is 500 requests per minute.\n",
    );
    let after = e
        .recall("API rate limit per minute per key", &opts)
        .unwrap();
    let stale = find(&after);
    assert!(stale.source_changed);
    assert!(stale.score < fresh.score);
    assert!((stale.score / fresh.score - cairn_search::SOURCE_CHANGED_FACTOR).abs() < 0.05);
    assert!(stale.terms.iter().any(|t| t.name == "source_changed"));
    std::fs::remove_file(p.root().join("docs/api.md")).unwrap();
    assert!(
        find(
            &e.recall("API rate limit per minute per key", &opts)
                .unwrap()
        )
        .source_changed
    );
}

#[test]
fn store_update_and_forget_can_each_be_undone() {
    let p = Project::new();
    let e = p.engine();
    let id = e
        .remember(&input(
            "Use tabs for indentation in Makefiles",
            "convention",
            5,
        ))
        .unwrap()
        .memory
        .memory
        .id;
    let dry = e
        .update_memory(
            &id,
            &MemoryPatch {
                importance: Some(9),
                ..MemoryPatch::default()
            },
            true,
        )
        .unwrap();
    assert_eq!(dry.memory.importance, 9);
    assert_eq!(e.vault().read(&id).unwrap().importance, 5, "dry run wrote");
    e.update_memory(
        &id,
        &MemoryPatch {
            text: Some("Use tabs for indentation in Makefiles and Go files".into()),
            ..MemoryPatch::default()
        },
        false,
    )
    .unwrap();
    e.undo(None, "test").unwrap();
    assert_eq!(
        e.vault().read(&id).unwrap().text,
        "Use tabs for indentation in Makefiles"
    );
    e.forget(&id, false, "test").unwrap();
    assert!(
        e.recall("indentation makefiles", &RecallOptions::default())
            .unwrap()
            .is_empty()
    );
    e.undo(None, "test").unwrap();
    assert_eq!(
        e.recall("indentation makefiles", &RecallOptions::default())
            .unwrap()
            .len(),
        1
    );
    // Undo the store itself: the memory is gone again; nothing left after.
    e.undo(Some(&id), "test").unwrap();
    assert!(e.vault().read(&id).is_err());
    assert!(e.undo(None, "test").is_err());
    let actions: Vec<String> = e
        .vault()
        .entries()
        .unwrap()
        .into_iter()
        .map(|l| l.action)
        .collect();
    assert_eq!(
        actions,
        ["store", "update", "undo", "forget", "undo", "undo"]
    );
}

#[test]
fn importance_and_filters_shape_recall() {
    let p = Project::new();
    let e = p.engine();
    let low = e
        .remember(&input(
            "The lunch order goes in the team channel on Fridays",
            "note",
            1,
        ))
        .unwrap();
    let high = e
        .remember(&MemoryInput {
            tags: vec!["team".into()],
            ..input(
                "The release order goes in the team channel on Fridays",
                "decision",
                10,
            )
        })
        .unwrap();
    let hits = e
        .recall(
            "order team channel fridays",
            &RecallOptions {
                no_touch: true,
                ..RecallOptions::default()
            },
        )
        .unwrap();
    assert_eq!(hits[0].memory.memory.id, high.memory.memory.id);
    let only_notes = e
        .recall(
            "order team channel fridays",
            &RecallOptions {
                types: vec!["note".into()],
                ..RecallOptions::default()
            },
        )
        .unwrap();
    assert_eq!(only_notes.len(), 1);
    assert_eq!(only_notes[0].memory.memory.id, low.memory.memory.id);
    let important = e
        .recall(
            "order team channel fridays",
            &RecallOptions {
                min_importance: Some(5),
                tags: vec!["team".into()],
                ..RecallOptions::default()
            },
        )
        .unwrap();
    assert_eq!(important.len(), 1);
    // Recall counts accesses.
    let again = e
        .recall("release order", &RecallOptions::default())
        .unwrap();
    let freq = again[0]
        .terms
        .iter()
        .find(|t| t.name == "frequency")
        .unwrap();
    assert!(freq.value > 0.0, "{:?}", again[0].terms);
}

#[test]
fn concurrent_stores_lose_nothing() {
    let p = Project::new();
    let root = p.root();
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let root = root.clone();
            std::thread::spawn(move || {
                // Each thread its own engine: like two processes on one project.
                let e = cairn::Open::new(&root, &cairn::Config::default())
                    .embedder(Some(cairn_test_support::fake_embedder()))
                    .engine()
                    .unwrap();
                for i in 0..40 {
                    // Words of their own, so no two are near-duplicates.
                    let text = (0..6)
                        .map(|w| {
                            cairn_core::content_hash(format!("{t} {i} {w}").as_bytes())[..10]
                                .to_string()
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    let r = e.remember(&input(&text, "fact", 5)).unwrap();
                    assert_eq!(r.action, "created", "{text}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let e = p.engine();
    e.index(&e.default_roots(), &NoProgress).unwrap();
    let files = std::fs::read_dir(root.join(".cairn/memory"))
        .unwrap()
        .flatten()
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert_eq!(files.iter().filter(|f| f.ends_with(".md")).count(), 80);
    assert!(!files.iter().any(|f| f.ends_with(".tmp")), "{files:?}");
    let listed = e
        .list_memories(&ListOptions {
            limit: 1000,
            ..ListOptions::default()
        })
        .unwrap();
    assert_eq!(listed.len(), 80);
    assert_eq!(e.vault().entries().unwrap().len(), 80);
}

#[test]
fn imported_memories_are_indexed_in_one_pass() {
    let p = Project::new();
    let e = p.engine();
    let inputs: Vec<MemoryInput> = (0..30)
        .map(|i| MemoryInput {
            created: Some("2024-01-0{}".replace("{}", &((i % 9) + 1).to_string())),
            ..input(
                &format!("Imported fact {i} about the zephyr{i} module"),
                "fact",
                5,
            )
        })
        .collect();
    assert_eq!(e.import_memories(&inputs, &NoProgress).unwrap(), 30);
    let all = e
        .list_memories(&ListOptions {
            limit: 100,
            ..ListOptions::default()
        })
        .unwrap();
    assert_eq!(all.len(), 30);
    assert!(
        all.iter()
            .all(|m| m.memory.created.starts_with("2024-01-0"))
    );
    let hits = e.recall("zephyr17", &RecallOptions::default()).unwrap();
    assert!(hits[0].memory.text.contains("zephyr17"));
}

#[test]
fn bulk_forget_and_the_expiry_sweep() {
    let p = Project::new();
    let e = p.engine();
    let tagged = |text: &str, tag: &str| MemoryInput {
        tags: vec![tag.into()],
        ..input(text, "note", 5)
    };
    e.remember(&tagged("Sprint 12 goals are the billing rewrite", "sprint"))
        .unwrap();
    e.remember(&tagged("Sprint 13 goals are the search rewrite", "sprint"))
        .unwrap();
    e.remember(&tagged("Our style guide forbids tabs in Python", "style"))
        .unwrap();
    e.remember(&MemoryInput {
        expires: Some("2000-01-01".into()),
        ..input("The old VPN endpoint is vpn1", "fact", 5)
    })
    .unwrap();
    assert!(
        e.forget_where(&cairn::ForgetFilter::default(), false, "t")
            .is_err()
    );
    let filter = cairn::ForgetFilter {
        tags: vec!["sprint".into()],
        ..cairn::ForgetFilter::default()
    };
    assert_eq!(e.forget_where(&filter, true, "t").unwrap().len(), 2);
    assert_eq!(
        e.vault().entries().unwrap().len(),
        4,
        "dry run logged nothing"
    );
    assert_eq!(e.forget_where(&filter, false, "t").unwrap().len(), 2);
    let swept = e
        .forget_where(
            &cairn::ForgetFilter {
                expired: true,
                ..cairn::ForgetFilter::default()
            },
            false,
            "t",
        )
        .unwrap();
    assert_eq!(swept.len(), 1);
    let left = e
        .list_memories(&ListOptions {
            include_expired: true,
            ..ListOptions::default()
        })
        .unwrap();
    assert_eq!(left.len(), 1);
    assert!(left[0].text.contains("style guide"));
    let actions: Vec<String> = e
        .vault()
        .entries()
        .unwrap()
        .into_iter()
        .map(|l| l.action)
        .collect();
    assert_eq!(actions[4..], ["forget", "forget", "expire"]);
}

#[test]
fn any_count_a_caller_sends_is_bounded() {
    // `recall --offset 1000000000` once asked the heap for 256 GiB and
    // aborted the process (and with it every agent of a shared daemon).
    let p = Project::new();
    let e = p.engine();
    for i in 0..3 {
        e.remember(&input(
            &format!("deploy note {i} about the release train"),
            "note",
            5,
        ))
        .unwrap();
    }
    for (limit, offset) in [
        (usize::MAX, 0),
        (0, usize::MAX),
        (usize::MAX, usize::MAX),
        (5, 1_000_000_000),
    ] {
        let got = e
            .recall(
                "deploy",
                &RecallOptions {
                    limit,
                    offset,
                    ..RecallOptions::default()
                },
            )
            .unwrap();
        assert!(got.len() <= 3, "{limit} {offset}");
        let listed = e
            .list_memories(&ListOptions {
                limit,
                offset,
                ..ListOptions::default()
            })
            .unwrap();
        assert!(listed.len() <= 3, "{limit} {offset}");
    }
    let all = e
        .recall(
            "deploy",
            &RecallOptions {
                limit: usize::MAX,
                ..RecallOptions::default()
            },
        )
        .unwrap();
    assert_eq!(all.len(), 3);
    let hits = e
        .search(
            "deploy",
            &cairn::SearchOptions {
                limit: usize::MAX,
                ..cairn::SearchOptions::default()
            },
        )
        .unwrap();
    assert!(!hits.is_empty() && hits.len() <= cairn::MAX_HITS);
}

#[test]
fn a_ttl_too_long_is_an_error_not_an_expiry_of_now() {
    let p = Project::new();
    let e = p.engine();
    for ttl in ["9223372036854775807s", "1000000y"] {
        let err = e
            .remember(&MemoryInput {
                ttl: Some(ttl.into()),
                ..input("the staging cluster is shared", "fact", 5)
            })
            .unwrap_err()
            .to_string();
        assert!(err.contains("too long"), "{ttl}: {err}");
    }
    let ok = e
        .remember(&MemoryInput {
            ttl: Some("30d".into()),
            ..input("the staging cluster is shared", "fact", 5)
        })
        .unwrap();
    let expires = ok.memory.memory.expires.clone().expect("an expiry");
    assert!(
        expires.as_str() > ok.memory.memory.created.as_str(),
        "{expires}"
    );
}

#[cfg(unix)]
#[test]
fn no_read_leaves_the_project_through_a_link_or_a_source() {
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("passwd"),
        "root:x:0:0:root:/root:/bin/bash\n",
    )
    .unwrap();
    p.write(
        "docs/swap.md",
        "# Swap\n\nSwap space notes for the build hosts.\n",
    );
    p.write("docs/sub/inner.md", "# Inner\n\nNotes inside a folder.\n");
    let e = p.engine();
    e.index(&e.default_roots(), &NoProgress).unwrap();
    let id_of = |path: &str| {
        e.search("notes", &cairn::SearchOptions::default())
            .unwrap()
            .into_iter()
            .find(|h| h.path == path)
            .map(|h| h.chunk_id)
            .unwrap()
    };
    let (swap, inner) = (id_of("docs/swap.md"), id_of("docs/sub/inner.md"));
    // A file swapped for a link out, and a folder swapped for one.
    std::fs::remove_file(p.path("docs/swap.md")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("passwd"), p.path("docs/swap.md")).unwrap();
    std::fs::remove_dir_all(p.path("docs/sub")).unwrap();
    std::fs::create_dir(outside.path().join("sub")).unwrap();
    std::fs::write(
        outside.path().join("sub/inner.md"),
        "root:x:0:0 from a folder\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("sub"), p.path("docs/sub")).unwrap();
    for id in [&swap, &inner] {
        let s = e.expand(id, 0, 0).unwrap();
        assert!(!s.text.contains("root:x"), "{}", s.text);
        assert!(
            matches!(s.freshness, cairn::Freshness::Deleted),
            "{:?}",
            s.freshness
        );
    }
    for path in ["docs/swap.md", "docs/sub/inner.md"] {
        assert!(e.read_file(path, None, None, 0).is_err(), "{path}");
    }
    // A memory citing a file outside the project is refused.
    for source in ["/etc/shadow", "../x.md", "docs/swap.md"] {
        let err = e
            .remember(&MemoryInput {
                sources: vec![source.into()],
                ..input("the build hosts swap a lot", "fact", 5)
            })
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a source must be a file of the project"),
            "{source}: {err}"
        );
    }
}

#[test]
fn four_writers_storing_the_same_texts_at_once_make_each_memory_once() {
    // 4 MCP clients storing the same 10 texts at the same moment made 40
    // memories: each checked for a near-duplicate before any had written.
    let p = Project::new();
    let root = p.root();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (root, barrier) = (root.clone(), barrier.clone());
            std::thread::spawn(move || {
                // Each writer its own engine: like separate processes.
                let e = cairn::Open::new(&root, &cairn::Config::default())
                    .embedder(Some(cairn_test_support::fake_embedder()))
                    .engine()
                    .unwrap();
                barrier.wait();
                for i in 0..10 {
                    let text = format!("Team decision {i}: releases are cut from the main branch");
                    e.remember(&MemoryInput {
                        client: format!("writer-{w}"),
                        ..input(&text, "decision", 5)
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let files = std::fs::read_dir(root.join(".cairn/memory"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
        .count();
    assert_eq!(files, 10);
}

#[test]
fn a_remembered_secret_is_redacted_before_it_is_stored() {
    let p = Project::new();
    let e = p.engine();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let stored = e
        .remember(&input(
            &format!("The CI token is {token} and the db is postgres://ci:hunter2pass@db/main"),
            "fact",
            5,
        ))
        .unwrap();
    let m = &stored.memory.memory;
    let file = std::fs::read_to_string(p.path(&format!(".cairn/memory/{}.md", m.id))).unwrap();
    for secret in [token, "hunter2pass"] {
        assert!(!file.contains(secret), "{file}");
        assert!(
            !m.entities.iter().any(|x| x.contains(secret)),
            "{:?}",
            m.entities
        );
    }
    assert!(file.contains("[redacted]"), "{file}");
}

/// Regression (issue 60): the answer to a store echoed its cited sources
/// as given (the file was redacted, the answer not), and the refusal of a
/// source out of the project, its type and a bad ttl repeated them whole.
#[test]
fn sources_type_and_ttl_are_redacted_in_the_answer_and_the_refusal() {
    let p = Project::new();
    let e = p.engine();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let stored = e
        .remember(&MemoryInput {
            sources: vec![format!("notes/{token}.md")],
            kind: Some(format!("fact {token}")),
            ..input("The deploy notes live in the notes folder", "fact", 5)
        })
        .unwrap();
    let answer = serde_json::to_string(&stored).unwrap();
    assert!(!answer.contains(token), "{answer}");
    assert_eq!(stored.memory.memory.sources, ["notes/[redacted].md"]);
    for bad in [
        MemoryInput {
            sources: vec![format!("/etc/{token}")],
            ..input("sourced", "fact", 5)
        },
        MemoryInput {
            ttl: Some(format!("30d {token}")),
            ..input("ttl", "fact", 5)
        },
        MemoryInput {
            created: Some(token.into()),
            ..input("created", "fact", 5)
        },
    ] {
        let err = e.remember(&bad).unwrap_err().to_string();
        assert!(!err.contains("abcdefghij"), "{err}");
        assert!(err.contains("[redacted]"), "{err}");
    }
}

/// Regression (issue 23): `update` and `relate` stored their text as given,
/// so a secret `remember` would have redacted reached the memory files.
#[test]
fn an_updated_or_related_secret_is_redacted_before_it_is_stored() {
    let p = Project::new();
    let e = p.engine();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let id = e
        .remember(&input("The CI token lives in the vault", "fact", 5))
        .unwrap()
        .memory
        .memory
        .id;
    let updated = e
        .update_memory(
            &id,
            &MemoryPatch {
                text: Some(format!("The CI token is {token}, password: hunter2secret")),
                ..MemoryPatch::default()
            },
            false,
        )
        .unwrap();
    let r = e
        .relate(
            &[cairn::EntityInput {
                name: "CI".into(),
                entity_type: "service".into(),
                observations: vec![format!("deploys with {token}")],
            }],
            &[],
            &[cairn::ObservationInput {
                entity_name: "CI".into(),
                contents: vec!["its key is AKIAIOSFODNN7EXAMPLE".into()],
            }],
            "test",
        )
        .unwrap();
    for file in [id.clone(), r.ids[0].clone()] {
        let text = std::fs::read_to_string(p.path(&format!(".cairn/memory/{file}.md"))).unwrap();
        for secret in [token, "hunter2secret", "AKIAIOSFODNN7EXAMPLE"] {
            assert!(!text.contains(secret), "{file}: {text}");
        }
        assert!(text.contains("[redacted]"), "{file}: {text}");
    }
    assert!(
        !updated.memory.entities.iter().any(|x| x.contains(token)),
        "{:?}",
        updated.memory.entities
    );
}

/// Regression (issue 23): the engine's `transcript` (the CLI's and the MCP
/// tool's) redacted only what the parsers clip (tool commands and results);
/// what the user and the assistant said came back in clear, for every client.
#[test]
fn a_transcript_view_holds_no_secret_of_the_session_file() {
    let p = Project::new();
    let e = p.engine();
    let said = "New key is AKIAIOSFODNN7EXAMPLE with password: hunter2secret, \
                token ghp_0123456789abcdefghijklmnopqrstuvwxyz";
    let claude = [
        serde_json::json!({"type": "user", "uuid": "u1",
            "message": {"role": "user", "content": said}}),
        serde_json::json!({"type": "assistant", "uuid": "a1",
            "message": {"role": "assistant", "content": [{"type": "text", "text": said}]}}),
    ];
    let codex = [
        serde_json::json!({"type": "response_item", "payload": {"type": "message",
            "role": "user", "content": [{"type": "input_text", "text": said}]}}),
        serde_json::json!({"type": "response_item", "payload": {"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": said}]}}),
    ];
    for (client, session, lines) in [
        ("claude-code", "s-claude", claude),
        ("codex", "s-codex", codex),
    ] {
        let path = p.path(&format!("transcripts/{session}.jsonl"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        e.capture(
            client,
            &cairn::HookInput {
                session_id: session.into(),
                transcript_path: path.to_string_lossy().into_owned(),
                ..cairn::HookInput::default()
            },
        )
        .unwrap();
        let view = e.transcript(session, None, 5).unwrap();
        assert_eq!(view.turns.len(), 2, "{client}: {view:?}");
        let shown = serde_json::to_string(&view).unwrap();
        for secret in ["AKIAIOSFODNN7EXAMPLE", "hunter2secret", "ghp_0123456789"] {
            assert!(!shown.contains(secret), "{client}: {secret} in {shown}");
        }
        assert!(
            shown.contains("New key is [redacted] with password: [redacted]"),
            "{client}: {shown}"
        );
    }
}

/// A memory written to disk is never reported as failed: when indexing it
/// fails afterwards (here the model goes away after the duplicate check),
/// `remember` answers the stored memory with a warning, and a later pass
/// indexes it once. Before, the caller got an error and an agent that
/// retried stored it twice.
#[test]
fn a_written_memory_is_not_reported_as_failed_when_indexing_it_fails() {
    let p = Project::new();
    let (root, config) = (p.root(), p.config());
    // One text (the duplicate check's query) embeds; the index pass fails.
    let e = cairn::Open::new(&root, &config)
        .embedder(Some(cairn_test_support::DyingEmbedder::new(1)))
        .engine()
        .unwrap();
    let stored = e
        .remember(&input("The deploy key rotates every Monday.", "fact", 5))
        .expect("a written memory is a success");
    let warning = stored
        .warning
        .expect("a warning says it is not indexed yet");
    assert!(warning.contains("was written"), "{warning}");
    let file = e
        .memory_dir()
        .join(format!("{}.md", stored.memory.memory.id));
    assert!(file.exists(), "{}", file.display());
    drop(e);
    let e = cairn::Open::new(&root, &config)
        .embedder(Some(cairn_test_support::DyingEmbedder::new(usize::MAX)))
        .engine()
        .unwrap();
    e.index(&[], &NoProgress).unwrap();
    let all = e.list_memories(&ListOptions::default()).unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
}

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_holding(&path, needle));
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle)
        {
            out.push(path);
        }
    }
    out
}

/// `forget` keeps the text in the trash and the history (for undo) and
/// the index may keep it in freed pages; a purge removes every copy, even
/// of a memory already forgotten.
#[test]
fn a_purged_memory_leaves_no_copy_anywhere() {
    let p = Project::new();
    let e = p.engine();
    let canary = "zebracanary7431";
    let stored = e
        .remember(&input(
            &format!("The staging password is {canary} for now."),
            "fact",
            5,
        ))
        .unwrap();
    let id = stored.memory.memory.id.clone();
    let patch = MemoryPatch {
        text: Some(format!("The staging password is {canary}, rotate it.")),
        ..Default::default()
    };
    e.update_memory(&id, &patch, false).unwrap();
    e.forget(&id, false, "cli").unwrap();
    assert!(!files_holding(&p.root(), canary.as_bytes()).is_empty());

    let removed = e.purge_memory(&id, "cli").unwrap();
    assert!(removed.len() >= 3, "{removed:?}"); // trash + two history versions
    let left = files_holding(&p.root(), canary.as_bytes());
    assert!(left.is_empty(), "copies left: {left:?}");
    assert!(e.undo(Some(&id), "cli").is_err(), "nothing to undo to");
    assert!(
        e.purge_memory(&id, "cli").is_err(),
        "a second purge finds nothing"
    );
}

/// Issue 18: "how do we deploy to staging?" ranked an unrelated
/// release-signing memory first (relevance 0.59, lifted by importance 10)
/// above the staging memory (relevance 1.00), and unrelated memories filled
/// the rest of the list. Here too the signing memory's relevance is 0.59:
/// with the terms added it scored 0.736 against the staging memory's 0.660.
#[test]
fn an_important_unrelated_memory_does_not_outrank_the_relevant_one() {
    let p = Project::new();
    let e = p.engine();
    let id = |text: &str, kind: &str, importance: u8| {
        e.remember(&input(text, kind, importance))
            .unwrap()
            .memory
            .memory
            .id
    };
    let staging = id(
        "Deploy to staging with make deploy-staging from the main branch; staging deploys take ten minutes",
        "fact",
        2,
    );
    let signing = id(
        "Release builds are signed with the hardware key the release manager keeps; we never sign on a laptop",
        "decision",
        10,
    );
    id(
        "The office coffee machine is descaled every second Thursday",
        "note",
        5,
    );
    id(
        "Team lunch is ordered in the chat channel before eleven",
        "note",
        5,
    );
    let q = "how do we deploy to staging?";
    let recall = |relative_floor: Option<f64>| {
        e.recall(
            q,
            &RecallOptions {
                no_touch: true,
                relative_floor,
                ..RecallOptions::default()
            },
        )
        .unwrap()
    };
    let relevance = |r: &cairn::Recalled| r.terms[0].value;
    // Floors off: every memory comes back, the relevant one first.
    let all = recall(Some(0.0));
    assert_eq!(all.len(), 4);
    assert_eq!(all[0].memory.memory.id, staging);
    assert_eq!(all[1].memory.memory.id, signing);
    // Score fusion: the signing memory shares only "we" and the vectors'
    // vague likeness, an eighth of the staging memory's score.
    assert!(
        relevance(&all[1]) > 0.05 && relevance(&all[1]) < 0.2,
        "{:?}",
        all[1].terms
    );
    assert!(relevance(&all[2]) < 0.2, "{:?}", all[2].terms);
    // The default floor (0.2) drops the memories about nothing asked.
    let hits = recall(None);
    let ids: Vec<&str> = hits.iter().map(|h| h.memory.memory.id.as_str()).collect();
    assert_eq!(ids, [staging.as_str()]);
    // A lower floor, per call, keeps the signing memory too.
    let low = recall(Some(0.05));
    assert_eq!(low.len(), 2);
    // A stricter floor, per call, keeps only the staging memory.
    let strict = recall(Some(0.7));
    assert_eq!(strict.len(), 1);
    assert_eq!(strict[0].memory.memory.id, staging);
}

/// Regression (issue 35.2): a captured session log listed as a memory had
/// no text, no dates and an id (`2026-11-26`) nothing could read back.
#[test]
fn a_session_log_is_a_memory_in_every_view_and_read_only() {
    let p = Project::new();
    p.write(
        ".cairn/memory/sessions/2026-11-26.md",
        "# Sessions 2026-11-26\n\n### 09:12\n\n<!-- session:s1 turn:u2 transcript:t.jsonl -->\n\n\
         **Asked:**\n- why does the flamingo export time out\n\n### 14:40\n\n\
         <!-- session:s2 turn:u9 transcript:t.jsonl -->\n\n**Concluded:**\n- raised the export timeout to 60 s\n",
    );
    let e = p.engine();
    e.index(&[], &NoProgress).unwrap();
    let listed = e.list_memories(&ListOptions::default()).unwrap();
    let s = listed
        .iter()
        .find(|m| m.memory.id == "session-2026-11-26")
        .unwrap_or_else(|| panic!("no session in {listed:?}"));
    assert_eq!(s.memory.kind, "session");
    assert_eq!(s.memory.created, "2026-11-26T00:00:00Z");
    assert_eq!(s.memory.updated, "2026-11-26T14:40:00Z");
    assert!(
        s.text.contains("flamingo export") && s.text.contains("60 s"),
        "{}",
        s.text
    );
    // By type, by id (the page's preview), and in recall.
    let only = e
        .list_memories(&ListOptions {
            types: vec!["session".into()],
            ..ListOptions::default()
        })
        .unwrap();
    assert_eq!(only.len(), 1);
    let read = e.vault().read("session-2026-11-26").unwrap();
    assert!(read.text.contains("flamingo"));
    let recalled = e
        .recall("flamingo export timeout", &RecallOptions::default())
        .unwrap();
    let hit = recalled
        .iter()
        .find(|r| r.memory.memory.id == "session-2026-11-26")
        .expect("recall finds the session");
    assert_eq!(hit.memory.memory.kind, "session");
    assert!(!hit.memory.text.is_empty());
    // Edits are refused with a reason; the file is unchanged.
    let err = e
        .update_memory(
            "session-2026-11-26",
            &MemoryPatch {
                text: Some("rewritten".into()),
                ..MemoryPatch::default()
            },
            true,
        )
        .unwrap_err();
    assert!(err.to_string().contains("read-only"), "{err}");
}

/// Issue 61 (5): a recall that hits a day's session log answers with the
/// session that matched, not every session of that day.
#[test]
fn a_session_log_is_recalled_one_session_at_a_time() {
    let p = Project::new();
    let session = |hm: &str, id: &str, asked: &str, concluded: &str| {
        format!(
            "\n### {hm}\n\n<!-- session:{id} turn:u1 client:claude-code -->\n\n**Asked:**\n- {asked}\n\
             **Concluded:**\n- {concluded}\n"
        )
    };
    let mut log = "# Sessions 2026-11-27\n".to_string();
    log += &session(
        "09:12",
        "s1",
        "why does the flamingo export time out on large workspaces",
        "the export streamed every row at once; it now pages by 500 rows and the timeout is 60 s",
    );
    log += &session(
        "11:30",
        "s2",
        "rename the billing tables to the new naming scheme",
        "the migration renames four tables and keeps views under the old names for a release",
    );
    log += &session(
        "15:05",
        "s3",
        "add dark mode to the settings page",
        "the theme toggle is stored per user and the default follows the system setting",
    );
    p.write(".cairn/memory/sessions/2026-11-27.md", &log);
    let e = p.engine();
    e.index(&[], &NoProgress).unwrap();
    let recalled = e
        .recall("flamingo export timeout", &RecallOptions::default())
        .unwrap();
    let hit = recalled
        .iter()
        .find(|r| r.memory.memory.id == "session-2026-11-27")
        .expect("recall finds the session");
    let text = &hit.memory.text;
    assert!(
        text.starts_with("### 09:12") && text.contains("pages by 500 rows"),
        "{text}"
    );
    assert!(
        !text.contains("billing") && !text.contains("dark mode"),
        "{text}"
    );
}

/// Regression (issue 35.4): with an importance-9 gotcha and two relation
/// stubs, a session started with the two stubs and skipped the gotcha.
#[test]
fn a_session_starts_with_the_gotcha_before_relation_stubs_and_says_why() {
    let p = Project::with_config("[inject]\nsession_memories = 2\n");
    let e = p.engine();
    let gotcha = e
        .remember(&MemoryInput {
            text: "Never run the billing migration on a Friday: the replica lags for hours.".into(),
            kind: Some("gotcha".into()),
            importance: Some(9),
            ..MemoryInput::default()
        })
        .unwrap()
        .memory
        .memory
        .id;
    let entity = |name: &str| cairn::EntityInput {
        name: name.into(),
        entity_type: "service".into(),
        observations: vec![format!("{name} talks to the tmp folder")],
    };
    e.relate(
        &[entity("Tmp Worker"), entity("Tmp Queue")],
        &[],
        &[],
        "test",
    )
    .unwrap();
    let block = e.session_injection(None, &[]).unwrap();
    let first = block.text.lines().find(|l| l.starts_with("- [")).unwrap();
    assert!(first.contains(&gotcha), "{}", block.text);
    assert!(
        block.reasons[0].starts_with(&format!("{gotcha}: gotcha, importance 9")),
        "{:?}",
        block.reasons
    );
    assert_eq!(block.reasons.len(), block.memories);
}

/// Issue 61 (4): a question of time and type alone lists those memories in
/// time order ("most recent decision": the newest decision first, though
/// no word of it matches), and "yesterday" keeps to yesterday.
#[test]
fn time_and_type_questions_list_memories_by_time() {
    let p = Project::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let day = |ago: i64| {
        let (y, m, d) = cairn_search::civil_from_days(now.div_euclid(86_400) - ago);
        format!("{y:04}-{m:02}-{d:02}T10:00:00Z")
    };
    let write = |id: &str, kind: &str, at: &str, text: &str| {
        p.write(
            &format!(".cairn/memory/{id}.md"),
            &format!("---\nid: {id}\ntype: {kind}\ncreated: {at}\nupdated: {at}\n---\n{text}\n"),
        );
    };
    write(
        "m-old",
        "decision",
        &day(8),
        "We use Redis for session caching decisions made long ago.",
    );
    write(
        "m-new",
        "decision",
        &day(1),
        "We pin the Postgres driver to 0.19.",
    );
    write(
        "m-gotcha",
        "gotcha",
        &day(1),
        "The staging deploy needs the VPN.",
    );
    write(
        "m-week",
        "gotcha",
        &day(7),
        "Flaky tests came from clock skew.",
    );
    let e = p.engine();
    e.index(&[], &NoProgress).unwrap();
    let ids = |q: &str| -> Vec<String> {
        e.recall(q, &RecallOptions::default())
            .unwrap()
            .into_iter()
            .map(|r| r.memory.memory.id)
            .collect()
    };
    assert_eq!(ids("most recent decision"), ["m-new", "m-old"]);
    let yesterday = ids("what did we learn yesterday");
    assert_eq!(yesterday.len(), 2, "{yesterday:?}");
    assert!(
        yesterday.iter().all(|id| id == "m-new" || id == "m-gotcha"),
        "{yesterday:?}"
    );
    // A question with words of its own is matched by them as before.
    assert_eq!(ids("redis session caching")[0], "m-old");
}
