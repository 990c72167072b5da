//! `cairn eval DIR`: score search on a labelled set (corpus/, queries.jsonl,
//! qrels.tsv); with --memories, LoCoMo through remember/recall.

use std::path::Path;

use anyhow::{Context, bail};
use cairn::Mode;
use cairn_bench::{EvalOptions, run_eval};
use cairn_embed::cache_root;

use crate::args::{Cli, EvalArgs};
use crate::print;
use crate::progress::Bars;
use crate::project::{load_config, project_root};

pub(crate) fn run(cli: &Cli, a: &EvalArgs, bars: &Bars) -> anyhow::Result<()> {
    if a.memories {
        memories(cli, a, bars)
    } else {
        retrieval(cli, a, bars)
    }
}

/// LoCoMo as a memory benchmark: every turn remembered, questions recalled.
fn memories(cli: &Cli, a: &EvalArgs, bars: &Bars) -> anyhow::Result<()> {
    let config = load_config(cli, &project_root(cli)?)?;
    let dataset = a
        .dir
        .canonicalize()
        .with_context(|| format!("eval set {}", a.dir.display()))?;
    let key = &cairn_core::content_hash(dataset.to_string_lossy().as_bytes())[..12];
    let work_dir = cache_root()?.join("eval").join(format!("memories-{key}"));
    let embedder = cairn::load_embedder(&config, bars);
    let opts = cairn_bench::MemoryEvalOptions {
        work_dir,
        fresh: a.fresh,
        max_queries: a.queries,
        config,
    };
    let report = cairn_bench::run_memory_eval(&dataset, embedder, &opts, bars)?;
    if a.json {
        return print::json(&report);
    }
    print::memory_eval(&report);
    Ok(())
}

/// Retrieval on a labelled set, on SQLite or the configured server (or both).
fn retrieval(cli: &Cli, a: &EvalArgs, bars: &Bars) -> anyhow::Result<()> {
    let root = project_root(cli)?;
    let mut config = load_config(cli, &root)?;
    if a.rerank {
        // Every query reranked whole: figures that do not depend on how
        // busy the machine is (the latency columns say what it cost).
        config.search.rerank_budget_ms = cairn::MAX_RERANK_BUDGET_MS;
    }
    let dataset = a
        .dir
        .canonicalize()
        .with_context(|| format!("eval set {}", a.dir.display()))?;
    // The eval's index is keyed by its corpus, so query sets sharing a
    // corpus (SciFact test and train) share one index and its vectors.
    let corpus = dataset
        .join("corpus")
        .canonicalize()
        .with_context(|| format!("{}/corpus", dataset.display()))?;
    let name = corpus
        .parent()
        .and_then(Path::file_name)
        .map_or("eval".into(), |n| n.to_string_lossy().into_owned());
    let key = &cairn_core::content_hash(corpus.to_string_lossy().as_bytes())[..12];
    let index_path = cache_root()?
        .join("eval")
        .join(format!("{name}-{key}"))
        .join("index.sqlite");
    let embedder = cairn::load_embedder(&config, bars);
    let opts = EvalOptions {
        index_path,
        fresh: a.fresh,
        modes: vec![Mode::Hybrid, Mode::Bm25, Mode::Vector],
        max_queries: a.queries,
        config,
        per_query: a.misses,
        floors: a.floors,
        off_topic: cairn_bench::off_topic_for(&name),
        split: a.split.clone(),
        rerank: a.rerank,
    };
    let on_server = !opts.config.store.uri.trim().is_empty();
    if a.with_sqlite && !on_server {
        bail!("--with-sqlite compares a --store postgres://… run with SQLite: give --store");
    }
    // SQLite first, so both runs share the machine the same way.
    let sqlite = if a.with_sqlite {
        Some(run_eval(&dataset, embedder.clone(), &opts, bars)?)
    } else {
        None
    };
    let report = if !on_server {
        run_eval(&dataset, embedder, &opts, bars)?
    } else {
        // One project per eval corpus in the shared database. Its root is a
        // mirror of the set in the cache: a project's .cairn/ (the memory
        // sync, .gitignore) would otherwise be written into the labelled set.
        let mut config = opts.config.clone();
        config.store.project = format!("eval-{name}-{key}");
        let mirror = cache_root()?
            .join("eval")
            .join(format!("{name}-{key}"))
            .join("server");
        mirror_dataset(&dataset, &mirror)?;
        let open = |corpus: &Path, group: Option<&str>| {
            let mut config = config.clone();
            if let Some(g) = group {
                config.store.project = format!("{}-{g}", config.store.project);
            }
            cairn::Open::new(corpus, &config)
                .embedder(embedder.clone())
                .engine()
        };
        cairn_bench::run_eval_on(&mirror, &open, &opts, bars)?
    };
    match (sqlite, a.json) {
        (Some(s), true) => print::json(&serde_json::json!({ "sqlite": s, "postgres": report })),
        (Some(s), false) => {
            say!("SQLite:");
            print::eval(&s, a.by_group);
            say!(
                "\nPostgreSQL ({}):",
                cairn_core::redact_uri(&opts.config.store.uri)
            );
            print::eval(&report, a.by_group);
            say!();
            print::eval_side_by_side(&s, &report);
            Ok(())
        }
        (None, true) => print::json(&report),
        (None, false) => {
            print::eval(&report, a.by_group);
            Ok(())
        }
    }
}

/// Lays out `dataset` (its corpus/, queries.jsonl and qrels.tsv) again
/// under `to`, each file a hard link (a copy across file systems), so that a
/// project opened on the copy writes nothing into the set. The copy's
/// corpus is made anew each time but for its own `.cairn/`; of the set's
/// `.cairn/` only the corpus's memory folder comes along (a set may hold
/// memories: eval/graph does), and links are left out.
fn mirror_dataset(dataset: &Path, to: &Path) -> anyhow::Result<()> {
    let corpus = to.join("corpus");
    std::fs::create_dir_all(&corpus).with_context(|| corpus.display().to_string())?;
    let clear = |path: &Path| -> anyhow::Result<()> {
        let gone = if path.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        gone.with_context(|| format!("clearing {}", path.display()))
    };
    for entry in std::fs::read_dir(&corpus).with_context(|| corpus.display().to_string())? {
        let path = entry?.path();
        if path
            .file_name()
            .is_some_and(|n| n != cairn::paths::CAIRN_DIR)
        {
            clear(&path)?;
        }
    }
    link_tree(&dataset.join("corpus"), &corpus)?;
    let (memories, copy) = (
        cairn::paths::memory_dir(&dataset.join("corpus")),
        cairn::paths::memory_dir(&corpus),
    );
    if copy.exists() {
        clear(&copy)?;
    }
    if memories.is_dir() {
        std::fs::create_dir_all(&copy).with_context(|| copy.display().to_string())?;
        link_tree(&memories, &copy)?;
    }
    for file in ["queries.jsonl", "qrels.tsv"] {
        let dst = to.join(file);
        if dst.exists() {
            std::fs::remove_file(&dst).with_context(|| dst.display().to_string())?;
        }
        link_or_copy(&dataset.join(file), &dst)?;
    }
    Ok(())
}

/// Every file under `from` linked at the same place under `to`.
fn link_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(from).with_context(|| from.display().to_string())? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let name = entry.file_name();
        if name == cairn::paths::CAIRN_DIR || kind.is_symlink() {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if kind.is_dir() {
            std::fs::create_dir_all(&dst).with_context(|| dst.display().to_string())?;
            link_tree(&src, &dst)?;
        } else if kind.is_file() {
            link_or_copy(&src, &dst)?;
        }
    }
    Ok(())
}

fn link_or_copy(src: &Path, dst: &Path) -> anyhow::Result<()> {
    if std::fs::hard_link(src, dst).is_err() {
        std::fs::copy(src, dst)
            .with_context(|| format!("copying {} to {}", src.display(), dst.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirrored_set_holds_its_files_and_nothing_of_the_sets_cairn() {
        let set = tempfile::tempdir().unwrap();
        let s = set.path();
        std::fs::create_dir_all(s.join("corpus/conv-1/.cairn")).unwrap();
        std::fs::create_dir_all(s.join("corpus/.cairn")).unwrap();
        std::fs::write(s.join("corpus/a.md"), "# A\n").unwrap();
        std::fs::write(s.join("corpus/conv-1/s1.md"), "# S1\n").unwrap();
        std::fs::write(s.join("corpus/.cairn/index.sqlite"), "x").unwrap();
        std::fs::create_dir_all(s.join("corpus/.cairn/memory")).unwrap();
        std::fs::write(s.join("corpus/.cairn/memory/m1.md"), "a memory").unwrap();
        std::fs::write(s.join("corpus/conv-1/.cairn/x"), "x").unwrap();
        std::fs::write(s.join("queries.jsonl"), "{}\n").unwrap();
        std::fs::write(s.join("qrels.tsv"), "q\td\t1\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/passwd", s.join("corpus/outside.md")).unwrap();

        let out = tempfile::tempdir().unwrap();
        let m = out.path().join("server");
        // What a run before left: the project's own .cairn stays, a file the
        // set no longer has goes.
        std::fs::create_dir_all(m.join("corpus/.cairn")).unwrap();
        std::fs::write(m.join("corpus/.cairn/synced-memories"), "kept").unwrap();
        std::fs::write(m.join("corpus/stale.md"), "old").unwrap();
        mirror_dataset(s, &m).unwrap();
        mirror_dataset(s, &m).unwrap(); // again: nothing in the way

        let read = |p: &str| std::fs::read_to_string(m.join(p)).unwrap();
        assert_eq!(read("corpus/a.md"), "# A\n");
        assert_eq!(read("corpus/conv-1/s1.md"), "# S1\n");
        assert_eq!(read("queries.jsonl"), "{}\n");
        assert_eq!(read("qrels.tsv"), "q\td\t1\n");
        assert_eq!(read("corpus/.cairn/synced-memories"), "kept");
        assert_eq!(read("corpus/.cairn/memory/m1.md"), "a memory");
        assert!(!m.join("corpus/stale.md").exists());
        assert!(!m.join("corpus/.cairn/index.sqlite").exists());
        assert!(!m.join("corpus/conv-1/.cairn").exists());
        assert!(!m.join("corpus/outside.md").exists());
        // The set itself is as it was.
        assert!(!s.join("corpus/.cairn/synced-memories").exists());
    }
}
