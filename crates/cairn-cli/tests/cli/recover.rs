//! A way out of a damaged index: for each kind of damage (the file cut to
//! half, its header zeroed, random bytes over pages in the middle, a
//! garbage WAL), what `doctor` says, what `index` does, that no memory file
//! is lost and that search works afterwards.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};

use super::{Cli, Project};

/// A project with docs and memories, indexed (BM25 only: no model).
fn indexed() -> Project {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    for i in 0..60 {
        p.write(
            &format!("docs/topic{i:02}.md"),
            &format!(
                "# Topic {i}\n\n{}\n\n## Details\n\nThe zebra{i} setting controls retries. {}\n",
                "Lorem ipsum dolor sit amet. ".repeat(40),
                "More words about caching and queues. ".repeat(30)
            ),
        );
    }
    p.ok(&["index", "-q"]);
    for text in [
        "We use Redis with a 5-minute TTL for session caching",
        "Deploys go out on Tuesdays after the staging soak",
        "The flamingo service owns billing webhooks",
    ] {
        p.ok(&["remember", text]);
    }
    p
}

/// Every memory file's name and text.
fn memories(p: &Project) -> BTreeMap<String, String> {
    std::fs::read_dir(p.path(".cairn/memory"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Runs `cairn args…`; (exit ok, stdout + stderr).
fn run(p: &Project, args: &[&str]) -> (bool, String) {
    let out = p
        .command(args)
        .env("CAIRN_NO_DAEMON", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn damage(p: &Project, kind: &str) {
    let index = p.path(".cairn/index.sqlite");
    match kind {
        "truncate" => {
            let len = std::fs::metadata(&index).unwrap().len();
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&index)
                .unwrap();
            f.set_len(len / 2).unwrap();
        }
        "zero header" => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&index)
                .unwrap();
            f.write_all(&[0u8; 100]).unwrap();
        }
        "random pages" => {
            // Pseudo-random bytes over every other page of the middle third.
            let len = std::fs::metadata(&index).unwrap().len();
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&index)
                .unwrap();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut page = len / 3 / 4096;
            while page * 4096 < 2 * len / 3 {
                let bytes: Vec<u8> = (0..4096)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect();
                f.seek(SeekFrom::Start(page * 4096)).unwrap();
                f.write_all(&bytes).unwrap();
                page += 2;
            }
        }
        "garbage wal" => {
            std::fs::write(p.path(".cairn/index.sqlite-wal"), vec![0xA5u8; 64 * 1024]).unwrap();
        }
        other => panic!("{other}"),
    }
}

#[test]
fn each_kind_of_damage_is_named_by_doctor_and_rebuilt_by_index_with_no_memory_lost() {
    for kind in ["truncate", "zero header", "random pages", "garbage wal"] {
        let p = indexed();
        let before = memories(&p);
        assert_eq!(before.len(), 3);
        damage(&p, kind);

        let (doctor_ok, said) = run(&p, &["doctor"]);
        let (search_ok, searched) = run(&p, &["search", "zebra7 retries", "--json"]);
        eprintln!("{kind}: doctor ok={doctor_ok}: {said}");
        if kind == "garbage wal" {
            // SQLite ignores a WAL whose header is not its own: no damage.
            assert!(doctor_ok && search_ok, "{kind}: {said}\n{searched}");
        } else {
            assert!(!doctor_ok, "{kind}: doctor passed a damaged index: {said}");
            assert!(
                said.contains("damaged") && said.contains("Fix: `cairn index`"),
                "{kind}: {said}"
            );
            // Other commands fail with the same way out, not a bare SQLite error.
            if !search_ok {
                assert!(searched.contains("cairn index"), "{kind}: {searched}");
            }
        }

        let (index_ok, indexed_out) = run(&p, &["index"]);
        assert!(index_ok, "{kind}: {indexed_out}");
        let aside: Vec<_> = std::fs::read_dir(p.path(".cairn"))
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("index.sqlite.damaged-")
            })
            .collect();
        if kind == "garbage wal" {
            assert!(aside.is_empty(), "{kind}: a sound index was set aside");
        } else {
            assert!(
                indexed_out.contains("the index was damaged") && !aside.is_empty(),
                "{kind}: {indexed_out}"
            );
        }
        assert_eq!(memories(&p), before, "{kind}: memory files changed");
        let (ok, said) = run(&p, &["doctor"]);
        assert!(ok, "{kind}: doctor after the rebuild: {said}");
        let hits = p.json(&["search", "zebra7 retries", "--json"]);
        assert!(
            hits.to_string().contains("docs/topic07.md"),
            "{kind}: search after the rebuild: {hits}"
        );
        let recalled = p.json(&["recall", "flamingo billing webhooks", "--json"]);
        assert!(
            recalled.to_string().contains("flamingo"),
            "{kind}: recall after the rebuild: {recalled}"
        );
    }
}

/// The index files set aside in `.cairn/`.
fn set_aside(p: &Project) -> usize {
    std::fs::read_dir(p.path(".cairn"))
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("index.sqlite.damaged-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .count()
}

/// Issue 60: `drop table chunks` made `index`, `doctor`, `search` and
/// `recall` fail with "no such table" and no way out (`index` even passed,
/// leaving the cut schema in place); a folder where the index file should
/// be said only "unable to open database file". Both are now a damaged
/// index: `doctor` names what is wrong, the reads say to run `cairn index`,
/// and `cairn index` sets it aside and rebuilds it with no memory lost.
#[test]
fn a_dropped_table_or_a_folder_in_place_of_the_index_is_named_and_rebuilt() {
    for kind in ["drop table chunks", "drop table meta", "a directory"] {
        let p = indexed();
        let before = memories(&p);
        let index = p.path(".cairn/index.sqlite");
        if kind == "a directory" {
            for ext in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{ext}", index.display()));
            }
            std::fs::create_dir(&index).unwrap();
            std::fs::write(index.join("notes.txt"), "kept").unwrap();
        } else {
            let conn = rusqlite::Connection::open(&index).unwrap();
            conn.execute_batch(kind).unwrap();
        }
        let what = if kind == "a directory" {
            "is a directory, not an index file"
        } else {
            "lacks the table"
        };

        let (ok, said) = run(&p, &["doctor"]);
        assert!(!ok, "{kind}: doctor passed: {said}");
        assert!(
            said.contains(what) && said.contains("Fix: `cairn index`"),
            "{kind}: {said}"
        );
        for read in [
            &["search", "zebra7 retries"][..],
            &["recall", "flamingo billing"][..],
            &["status"][..],
        ] {
            let (ok, said) = run(&p, read);
            assert!(!ok, "{kind}: {read:?} passed: {said}");
            assert!(
                said.contains(what) && said.contains("run `cairn index`"),
                "{kind}: {read:?}: {said}"
            );
            assert!(
                !said.contains("no such table") && !said.contains("unable to open"),
                "{kind}: {read:?}: {said}"
            );
        }

        let (ok, said) = run(&p, &["index"]);
        assert!(ok, "{kind}: {said}");
        assert!(said.contains("the index was damaged"), "{kind}: {said}");
        assert_eq!(set_aside(&p), 1, "{kind}: {said}");
        assert_eq!(memories(&p), before, "{kind}: memory files changed");
        let (ok, said) = run(&p, &["doctor"]);
        assert!(ok, "{kind}: doctor after the rebuild: {said}");
        let hits = p.json(&["search", "zebra7 retries", "--json"]);
        assert!(
            hits.to_string().contains("docs/topic07.md"),
            "{kind}: {hits}"
        );
        let recalled = p.json(&["recall", "flamingo billing webhooks", "--json"]);
        assert!(
            recalled.to_string().contains("flamingo"),
            "{kind}: {recalled}"
        );
        if kind == "a directory" {
            // Set aside, never deleted: what the folder held is still there.
            let aside = std::fs::read_dir(p.path(".cairn"))
                .unwrap()
                .flatten()
                .find(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("index.sqlite.damaged-")
                })
                .unwrap();
            assert_eq!(
                std::fs::read_to_string(aside.path().join("notes.txt")).unwrap(),
                "kept"
            );
        }
    }
}

/// Issue 60: a zero-length index file (SQLite reads it as an empty
/// database) answered `recall` with "no memories match" and `search` with
/// "no matches", both exit 0, until someone ran `cairn index`. Recall now
/// indexes the memory folder first (memories are files) and finds them;
/// the other reads say the index is empty and exit 1, as with no index;
/// `doctor` says it was never built.
#[test]
fn a_zero_length_index_is_not_taken_for_an_empty_project() {
    let p = indexed();
    let index = p.path(".cairn/index.sqlite");
    for ext in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", index.display()));
    }
    std::fs::write(&index, b"").unwrap();

    let (ok, said) = run(&p, &["doctor"]);
    assert!(
        said.contains("never built") && said.contains("`cairn index`"),
        "doctor ok={ok}: {said}"
    );
    for read in [&["search", "zebra7 retries"][..], &["status"][..]] {
        let (ok, said) = run(&p, read);
        assert!(!ok, "{read:?} passed on an empty index: {said}");
        assert!(
            said.contains("is empty (never built)") && said.contains("run `cairn index`"),
            "{read:?}: {said}"
        );
    }
    let (ok, said) = run(&p, &["recall", "flamingo billing webhooks"]);
    assert!(ok, "{said}");
    assert!(
        said.contains("flamingo") && !said.contains("no memories match"),
        "{said}"
    );
    assert!(said.contains("indexed the memory folder first"), "{said}");
    // The docs come back with `cairn index`.
    p.ok(&["index", "-q"]);
    let hits = p.json(&["search", "zebra7 retries", "--json"]);
    assert!(hits.to_string().contains("docs/topic07.md"), "{hits}");
}
