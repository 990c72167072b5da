//! Write-then-read tests of the SQLite index through the storage traits.

use cairn_core::{Change, Chunk, DocWrite, IndexWriter, StoreError, WriteBatch};

use crate::Store;

fn doc(path: &str, texts: &[&str]) -> DocWrite {
    let chunks = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Chunk::new(
                path,
                vec!["Top".into()],
                1,
                i as u32 * 2 + 1,
                i as u32 * 2 + 1,
                (*t).into(),
            )
        })
        .collect();
    DocWrite {
        path: path.into(),
        hash: cairn_core::content_hash(texts.concat().as_bytes()),
        mtime_ns: 1,
        size: 10,
        pipeline: String::new(),
        title: None,
        tags: vec![],
        domain: String::new(),
        meta: String::new(),
        chunks,
        links: Vec::new(),
        source: None,
    }
}

/// An index at `dir/i.sqlite` holding `doc`, written and closed: what an
/// older build left behind, for the migration tests to wind back.
fn closed_index(dir: &tempfile::TempDir, doc: DocWrite) -> std::path::PathBuf {
    let path = dir.path().join("i.sqlite");
    let mut store = Store::open(&path).unwrap();
    store
        .write(&WriteBatch {
            changes: vec![Change::Upsert(doc)],
            ..Default::default()
        })
        .unwrap();
    path
}

#[test]
fn write_search_replace_delete_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idx/index.sqlite");
    let mut store = Store::open(&path).unwrap();
    store
        .write(&WriteBatch {
            changes: vec![
                Change::Upsert(doc(
                    "a.md",
                    &["redis caching with a short ttl", "unrelated words here"],
                )),
                Change::Upsert(doc("b/c.md", &["postgres replication"])),
            ],
            model: Some(("m".into(), 2)),
            embeddings: vec![("h".into(), vec![1.0, 0.0])],
        })
        .unwrap();
    let mut reader = store.reader().unwrap();
    {
        let snap = reader.snapshot().unwrap();
        let hits = snap.bm25("caching", 10, (1.0, 1.0), None).unwrap();
        assert_eq!(hits.len(), 1);
        let rows = snap.chunks(&[hits[0].id.0]).unwrap();
        assert_eq!(rows[0].chunk.path, "a.md");
        assert_eq!(rows[0].chunk.breadcrumb(), "Top");
        assert!(
            snap.bm25("replication", 10, (1.0, 1.0), Some("a"))
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            snap.bm25("replication", 10, (1.0, 1.0), Some("b/"))
                .unwrap()
                .len(),
            1
        );
        assert!(matches!(
            snap.bm25("\"unbalanced", 10, (1.0, 1.0), None),
            Err(StoreError::Query { .. })
        ));
        let stats = snap.stats(Some("m")).unwrap();
        assert_eq!((stats.files, stats.chunks, stats.cached_vectors), (2, 3, 1));
    }
    store
        .write(&WriteBatch {
            changes: vec![
                Change::Upsert(doc("a.md", &["memcached instead"])),
                Change::Delete("b/c.md".into()),
            ],
            ..Default::default()
        })
        .unwrap();
    drop(reader);
    drop(store);
    let store = Store::open(&path).unwrap();
    let mut reader = store.reader().unwrap();
    let snap = reader.snapshot().unwrap();
    assert!(
        snap.bm25("caching", 10, (1.0, 1.0), None)
            .unwrap()
            .is_empty()
    );
    assert!(
        snap.bm25("replication", 10, (1.0, 1.0), None)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        snap.bm25("memcached", 10, (1.0, 1.0), None).unwrap().len(),
        1
    );
    assert_eq!(snap.stats(None).unwrap().chunks, 1);
    assert_eq!(store.manifest().unwrap().len(), 1);
}

#[test]
fn documents_under_a_skipped_prefix_are_not_handed_out_to_embed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("i.sqlite")).unwrap();
    store
        .write(&WriteBatch {
            changes: vec![
                Change::Upsert(doc("a.md", &["alpha text"])),
                Change::Upsert(doc(".cairn/history/0123abcd", &["fix the parser"])),
                // Only what starts with the whole prefix is skipped.
                Change::Upsert(doc(".cairn/historyX/1", &["gamma text"])),
            ],
            ..Default::default()
        })
        .unwrap();
    let paths = |skip| -> Vec<String> {
        let mut p: Vec<String> = store
            .unembedded("m", "", 10, skip)
            .unwrap()
            .into_iter()
            .map(|(_, c)| c.path)
            .collect();
        p.sort();
        p
    };
    assert_eq!(
        paths(None),
        [".cairn/history/0123abcd", ".cairn/historyX/1", "a.md"]
    );
    assert_eq!(
        paths(Some(".cairn/history/")),
        [".cairn/historyX/1", "a.md"]
    );
    assert_eq!(store.unembedded_count("m", None).unwrap(), 3);
    assert_eq!(
        store
            .unembedded_count("m", Some(".cairn/history/"))
            .unwrap(),
        2
    );
}

#[test]
fn vectors_follow_chunks_by_content_hash() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("i.sqlite")).unwrap();
    let d = doc("a.md", &["alpha text", "beta text"]);
    let hashes: Vec<String> = d
        .chunks
        .iter()
        .map(|c| cairn_core::content_hash(c.embed_text().as_bytes()))
        .collect();
    store
        .write(&WriteBatch {
            changes: vec![Change::Upsert(d)],
            ..Default::default()
        })
        .unwrap();
    let all = store.unembedded("m", "", 10, None).unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[0].0 < all[1].0, "in hash order");
    let after_first = store.unembedded("m", &all[0].0, 10, None).unwrap();
    assert_eq!(after_first.len(), 1, "the cursor skips what it passed");
    assert_eq!(after_first[0].0, all[1].0);
    assert!(
        store
            .unembedded("m", &all[1].0, 10, None)
            .unwrap()
            .is_empty()
    );
    store
        .write(&WriteBatch {
            changes: vec![],
            model: Some(("m".into(), 2)),
            // Exact in half floats, as vectors are stored.
            embeddings: vec![(hashes[0].clone(), vec![0.625, 0.75])],
        })
        .unwrap();
    let left = store.unembedded("m", "", 10, None).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].0, hashes[1]);
    let mut reader = store.reader().unwrap();
    let snap = reader.snapshot().unwrap();
    let set = snap.vectors("m").unwrap();
    assert_eq!(
        (
            set.rowids.len(),
            set.dim,
            set.data.iter().map(|x| x.to_f32()).collect::<Vec<_>>()
        ),
        (1, 2, vec![0.625, 0.75])
    );
    assert!(snap.vectors("other-model").unwrap().rowids.is_empty());
    assert_eq!(snap.stats(Some("m")).unwrap().embedded_chunks, 1);
}

/// Processes that open a project's index for the first time at once (two
/// `cairn remember` in a fresh folder) must all get a store: on a file still
/// in rollback mode, switching to WAL is where two openers collide.
#[test]
fn many_openers_of_a_fresh_index_all_get_a_store() {
    for round in 0..40 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(|_| ())
                })
            })
            .collect();
        for o in openers {
            let r = o.join().unwrap();
            assert!(r.is_ok(), "round {round}: {r:?}");
        }
    }
}

/// A search's time budget is enforced inside SQLite: past its deadline a
/// snapshot's query ends with an error instead of running on; the next
/// snapshot on the same (pooled) connection has no deadline.
#[test]
fn a_snapshot_past_its_deadline_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let mut store = Store::open(&path).unwrap();
    store
        .write(&WriteBatch {
            changes: (0..200)
                .map(|i| Change::Upsert(doc(&format!("d{i}.md"), &["alpha beta", "gamma delta"])))
                .collect(),
            model: None,
            embeddings: Vec::new(),
        })
        .unwrap();
    let mut reader = store.reader().unwrap();
    {
        let snap = reader.snapshot().unwrap();
        snap.set_deadline(std::time::Instant::now());
        let err = snap.bm25("\"alpha\"", 10, (1.0, 1.0), None).unwrap_err();
        assert!(err.to_string().contains("interrupt"), "{err}");
    }
    let snap = reader.snapshot().unwrap();
    assert_eq!(
        snap.bm25("\"alpha\"", 10, (1.0, 1.0), None).unwrap().len(),
        10
    );
}

/// An index written before documents recorded their pipeline version takes
/// the version it was stamped with, so upgrading re-chunks nothing.
#[test]
fn the_pipeline_column_migration_keeps_the_stamped_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = closed_index(&dir, doc("a.md", &["alpha"]));
    // Back to the schema before the column, as an older build left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    // The pipeline column is the fourth migration; the fifth only drops a
    // trigger (which an index of schema 3 still has, and this one has not),
    // the sixth rebuilds the FTS table over its CJK-splitting view, the
    // seventh rebuilds its index once camelCase names give their words, the
    // eighth indexes the `defines` links by name.
    assert_eq!(version, 8);
    conn.execute_batch(
        "ALTER TABLE documents DROP COLUMN pipeline;
         INSERT OR REPLACE INTO meta (key, value) VALUES ('pipeline_version', '4');
         PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let manifest = store.manifest().unwrap();
    assert_eq!(manifest["a.md"].pipeline, "4");
}

/// The writer adds a batch's FTS rows at its end instead of through a
/// trigger per row: whatever a batch does to which paths (a path written
/// twice, written then deleted, deleted then written), the FTS index agrees
/// with the chunks (FTS5's integrity check) and BM25 finds each live
/// document by its own word, and nothing else.
#[test]
fn fts_rows_follow_every_sequence_of_writes_and_deletes() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    // (path 0-3, Some(version) = upsert, None = delete), batches of 1-5.
    let op = (0usize..4, prop::option::of(0u8..3));
    let batches = prop::collection::vec(prop::collection::vec(op, 1..6), 1..6);
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    runner
        .run(&batches, |batches| {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Store::open(&dir.path().join("i.sqlite")).unwrap();
            let mut live: std::collections::HashMap<usize, u8> = Default::default();
            for batch in &batches {
                let changes = batch
                    .iter()
                    .map(|&(p, v)| {
                        let path = format!("p{p}.md");
                        match v {
                            Some(v) => {
                                live.insert(p, v);
                                let w = format!("word{p}x{v}");
                                Change::Upsert(doc(&path, &[&w, "common text", &w]))
                            }
                            None => {
                                live.remove(&p);
                                Change::Delete(path)
                            }
                        }
                    })
                    .collect();
                store
                    .write(&WriteBatch {
                        changes,
                        ..Default::default()
                    })
                    .unwrap();
                prop_assert_eq!(store.fts_check().unwrap(), None);
            }
            let mut reader = store.reader().unwrap();
            let snap = reader.snapshot().unwrap();
            let common = snap.bm25("\"common\"", 100, (1.0, 1.0), None).unwrap();
            prop_assert_eq!(common.len(), live.len());
            for p in 0..4 {
                for v in 0..3u8 {
                    let hits = snap
                        .bm25(&format!("\"word{p}x{v}\""), 100, (1.0, 1.0), None)
                        .unwrap();
                    let want = if live.get(&p) == Some(&v) { 2 } else { 0 };
                    prop_assert_eq!(hits.len(), want, "p{}x{}", p, v);
                }
            }
            Ok(())
        })
        .unwrap();
}

/// Chinese, Japanese and Korean chunks are indexed as bigrams of their CJK
/// runs (`cairn_core::fts_text`), breadcrumb included: a query word found
/// inside a run without spaces matches, the stored text stays as written,
/// and replacing and deleting such chunks keeps FTS5's integrity check
/// green (the delete triggers hand FTS5 the same bigrams).
#[test]
fn cjk_runs_are_searchable_by_their_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("i.sqlite")).unwrap();
    let mut zh = doc("zh.md", &["使用Redis缓存会话数据，过期时间为五分钟。"]);
    zh.chunks[0].heading_path = vec!["缓存配置".into()];
    store
        .write(&WriteBatch {
            changes: vec![
                Change::Upsert(zh),
                Change::Upsert(doc(
                    "ja.md",
                    &["設定ファイルを変更すると再起動が必要です。"],
                )),
                Change::Upsert(doc("ko.md", &["검색 색인을 다시 만듭니다"])),
                Change::Upsert(doc("en.md", &["redis session cache"])),
            ],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(store.fts_check().unwrap(), None);
    let search = |store: &Store, q: &str| -> Vec<String> {
        let mut reader = store.reader().unwrap();
        let snap = reader.snapshot().unwrap();
        let hits = snap.bm25(q, 10, (1.0, 1.0), None).unwrap();
        let ids: Vec<i64> = hits.iter().map(|h| h.id.0).collect();
        snap.chunks(&ids)
            .unwrap()
            .into_iter()
            .map(|c| c.chunk.path)
            .collect()
    };
    assert_eq!(search(&store, "\"缓存\""), vec!["zh.md"]);
    assert_eq!(search(&store, "breadcrumb:\"配置\""), vec!["zh.md"]);
    assert_eq!(search(&store, "\"再起動\""), Vec::<String>::new());
    assert_eq!(search(&store, "\"再起\" AND \"起動\""), vec!["ja.md"]);
    assert_eq!(search(&store, "\"색인\""), vec!["ko.md"]);
    let mut redis = search(&store, "\"redis\"");
    redis.sort();
    assert_eq!(redis, vec!["en.md", "zh.md"]);
    {
        let mut reader = store.reader().unwrap();
        let snap = reader.snapshot().unwrap();
        let hits = snap.bm25("\"缓存\"", 10, (1.0, 1.0), None).unwrap();
        let rows = snap.chunks(&[hits[0].id.0]).unwrap();
        assert_eq!(
            rows[0].chunk.text,
            "使用Redis缓存会话数据，过期时间为五分钟。"
        );
    }
    store
        .write(&WriteBatch {
            changes: vec![
                Change::Upsert(doc("zh.md", &["全文检索"])),
                Change::Delete("ja.md".into()),
            ],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(store.fts_check().unwrap(), None);
    assert_eq!(search(&store, "\"缓存\""), Vec::<String>::new());
    assert_eq!(search(&store, "\"检索\""), vec!["zh.md"]);
    assert_eq!(search(&store, "\"設定\""), Vec::<String>::new());
}

/// An index written before CJK runs were split (schema 5: the FTS table
/// over `chunks` itself, one token per run) is rebuilt by the migration,
/// so its CJK chunks become searchable without re-indexing any file.
#[test]
fn the_cjk_migration_rebuilds_an_older_fts_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = closed_index(&dir, doc("zh.md", &["全文检索引擎"]));
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TRIGGER chunks_ad; DROP TRIGGER chunks_au; DROP TABLE chunks_fts;
         DROP VIEW chunks_fts_content;
         CREATE VIRTUAL TABLE chunks_fts USING fts5(breadcrumb, text,
             content = 'chunks', content_rowid = 'id', tokenize = 'porter unicode61');
         INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
         PRAGMA user_version = 5;",
    )
    .unwrap();
    let old: i64 = conn
        .query_row(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH '\"检索\"'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old, 0, "schema 5 held the run as one token");
    drop(conn);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.fts_check().unwrap(), None);
    let mut reader = store.reader().unwrap();
    let snap = reader.snapshot().unwrap();
    assert_eq!(
        snap.bm25("\"检索\"", 10, (1.0, 1.0), None).unwrap().len(),
        1
    );
}

/// An index written before camelCase names gave their words (the schema
/// before the last: FTS5 held `SetFormatter` as one token) is rebuilt by the
/// migration: a question in words finds the name without re-indexing, and
/// the rows the delete trigger later removes are the rows FTS5 holds.
#[test]
fn the_identifier_migration_rebuilds_an_older_fts_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = closed_index(
        &dir,
        doc(
            "log.go",
            &["func (l *Logger) SetFormatter(f Formatter) { l.mu.Lock() }"],
        ),
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all');
         INSERT INTO chunks_fts(rowid, breadcrumb, text) SELECT id, breadcrumb, text FROM chunks;
         PRAGMA user_version = {};",
        // Before the seventh migration, the identifier rebuild.
        6
    ))
    .unwrap();
    let old: i64 = conn
        .query_row(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH '\"set\"'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old, 0, "the older index held the name as one token");
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.fts_check().unwrap(), None);
    {
        let mut reader = store.reader().unwrap();
        let snap = reader.snapshot().unwrap();
        assert_eq!(
            snap.bm25("\"set\" AND \"formatter\"", 10, (1.0, 1.0), None)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            snap.bm25("\"setformatter\"", 10, (1.0, 1.0), None)
                .unwrap()
                .len(),
            1
        );
    }
    store
        .write(&WriteBatch {
            changes: vec![Change::Upsert(doc(
                "log.go",
                &["func (l *Logger) Close() {}"],
            ))],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(store.fts_check().unwrap(), None);
    let mut reader = store.reader().unwrap();
    let snap = reader.snapshot().unwrap();
    assert!(
        snap.bm25("\"formatter\"", 10, (1.0, 1.0), None)
            .unwrap()
            .is_empty()
    );
}

/// Text with no CJK character reaches FTS5 exactly as before the CJK view:
/// every token instance (term, row, column, offset) of the index equals what
/// a plain `porter unicode61` table over the stored breadcrumb and text
/// holds, so English BM25 scores, and every English figure, are unchanged.
#[test]
fn text_without_cjk_is_indexed_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("i.sqlite")).unwrap();
    store
        .write(&WriteBatch {
            changes: vec![
                Change::Upsert(doc(
                    "a.md",
                    &[
                        "Caching sessions: the cache caches; Café! naïve ÀÉÎ ß Ωμέγα Москва",
                        "fn main() { println!(\"{}\", x_y + 3.14); } // ：ＡＢＣ１２３、。",
                    ],
                )),
                Change::Upsert(doc(
                    "b.md",
                    &["Running runs ran; RUNNER-up, e-mail 2024-01-02"],
                )),
            ],
            ..Default::default()
        })
        .unwrap();
    let conn = &store.conn;
    conn.execute_batch(
        "CREATE VIRTUAL TABLE temp.plain USING fts5(breadcrumb, text, tokenize = 'porter unicode61');
         INSERT INTO temp.plain(rowid, breadcrumb, text) SELECT id, breadcrumb, text FROM chunks;
         CREATE VIRTUAL TABLE temp.v_plain USING fts5vocab(temp, plain, 'instance');
         CREATE VIRTUAL TABLE temp.v_index USING fts5vocab(main, chunks_fts, 'instance');",
    )
    .unwrap();
    let tokens = |table: &str| -> Vec<(String, i64, String, i64)> {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT term, doc, col, offset FROM temp.{table} ORDER BY doc, col, offset, term"
            ))
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    let (index, plain) = (tokens("v_index"), tokens("v_plain"));
    assert!(index.len() > 30, "{index:?}");
    assert_eq!(index, plain);
}

/// Issue 60: `drop table chunks` made every command fail with "no such
/// table" and no way out. A migrated schema that lacks a table is damage:
/// on open, in `quick_check`, and in a query on a connection opened before
/// the table went.
#[test]
fn a_dropped_table_is_damage_on_open_in_quick_check_and_mid_query() {
    let dir = tempfile::tempdir().unwrap();
    let path = closed_index(&dir, doc("a.md", &["alpha beta"]));
    let reader = crate::Reader::open(&path).unwrap();
    let held = Store::open(&path).unwrap();
    assert!(crate::quick_check(&path).unwrap().is_empty());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE chunks").unwrap();
    drop(conn);

    let e = Store::open(&path).err().expect("open refuses a cut schema");
    assert!(e.is_damaged(), "{e}");
    assert!(e.to_string().contains("lacks the table chunks"), "{e}");
    assert!(e.to_string().contains("cairn index"), "{e}");

    let found = crate::quick_check(&path).unwrap();
    assert_eq!(found, vec!["its schema lacks the table chunks".to_string()]);

    // Connections opened before the drop meet "no such table" in a query.
    let e = held
        .unembedded("m", "", 10, None)
        .map(|_| ())
        .expect_err("a query on the cut schema fails");
    assert!(e.to_string().contains("lacks the table chunks"), "{e}");
    assert!(e.to_string().contains("cairn index"), "{e}");
    let mut reader = reader;
    let e = cairn_core::IndexReader::snapshot(&mut reader)
        .and_then(|s| s.stats(None).map(|_| ()))
        .expect_err("a read on the cut schema fails");
    assert!(e.to_string().contains("lacks the table chunks"), "{e}");
}

/// Issue 60: a folder where the index should be said only "unable to open
/// database file".
#[test]
fn a_directory_in_place_of_the_index_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    std::fs::create_dir(&path).unwrap();
    for e in [
        Store::open(&path).map(|_| ()).unwrap_err(),
        crate::Reader::open(&path).map(|_| ()).unwrap_err(),
    ] {
        assert!(e.is_damaged(), "{e}");
        let said = e.to_string();
        assert!(
            said.contains("is a directory, not an index file") && said.contains("cairn index"),
            "{said}"
        );
    }
    assert_eq!(
        crate::quick_check(&path).unwrap(),
        vec!["it is a directory, not an index file".to_string()]
    );
    // Set aside like a damaged file: renamed, nothing in it deleted.
    std::fs::write(path.join("keep.txt"), "mine").unwrap();
    let aside = crate::set_aside(&path).unwrap();
    assert_eq!(
        std::fs::read_to_string(aside.join("keep.txt")).unwrap(),
        "mine"
    );
    Store::open(&path).expect("a new index where the folder was");
}

/// A zero-length file is no damage: SQLite reads it as an empty database
/// and the open migrates it.
#[test]
fn a_zero_length_file_is_no_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    std::fs::write(&path, b"").unwrap();
    assert!(crate::quick_check(&path).unwrap().is_empty());
    Store::open(&path).expect("opened and migrated");
    assert!(crate::quick_check(&path).unwrap().is_empty());
}

/// Issue 60: opening an index whose schema is current took the write lock
/// (the migration's `BEGIN IMMEDIATE`), so a `cairn update` beside the
/// daemon's first index pass waited for the whole pass, and failed with
/// "database is locked" past the 30 s busy timeout. It reads, and waits
/// for no writer.
#[test]
fn opening_a_current_index_waits_for_no_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = closed_index(&dir, doc("a.md", &["alpha beta"]));
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = std::time::Instant::now();
    let opened = Store::open(&path);
    let took = started.elapsed();
    writer.execute_batch("COMMIT").unwrap();
    assert!(opened.is_ok(), "{:?}", opened.err());
    assert!(
        took < std::time::Duration::from_secs(5),
        "the open waited {took:?}"
    );
}
