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
    let config = load_config(cli, &root)?;
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
        // One project per eval corpus in the shared database.
        let mut config = opts.config.clone();
        config.store.project = format!("eval-{name}-{key}");
        let open = |corpus: &Path| {
            cairn::Open::new(corpus, &config)
                .embedder(embedder.clone())
                .engine()
        };
        cairn_bench::run_eval_on(&dataset, &open, &opts, bars)?
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
