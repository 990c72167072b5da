//! `cairn search QUERY`: hybrid search (BM25 + vectors + graph, fused). When
//! the project's daemon runs (`cairn serve` started it), it answers: its
//! model, vectors and graph are warm. Otherwise, or when it is configured
//! otherwise, the search runs here. `CAIRN_NO_DAEMON=1` always searches here.

use cairn::SearchOptions;
use cairn_core::Kind;
use cairn_mcp::daemon::{SearchRequest, config_fingerprint, search_via_daemon};

use crate::args::{Cli, ProjectsArgs, SearchArgs};
use crate::print;
use crate::progress::Bars;
use crate::project::{
    daemon_or_here, load_config, open_engine_with, paths_base, project_relative, project_root,
    resolve_project,
};

pub(crate) fn run(cli: &Cli, a: &SearchArgs, bars: &Bars) -> anyhow::Result<()> {
    let kinds = a
        .kind
        .iter()
        .map(|k| {
            Kind::parse(k).ok_or_else(|| {
                anyhow::anyhow!("unknown kind {k:?}: use doc, code, memory or history")
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if cli.project.len() > 1 {
        return several(cli, a, kinds, bars);
    }
    let root = project_root(cli)?;
    let base = paths_base(cli, &root)?;
    let opts = SearchOptions {
        current_file: a
            .current_file
            .as_deref()
            .map(|f| project_relative(&root, &base, f)),
        rerank: match (a.rerank, a.no_rerank) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        ..options(a, kinds)
    };
    let config = load_config(cli, &root)?;
    // `--explain` with the reranker on runs here: what the reranker did
    // (its time, a budget that ran out) is part of the explanation, and
    // only this process's search returns it.
    let reranking = opts.rerank.unwrap_or(config.search.rerank);
    if a.explain && reranking && !a.json {
        let searched = open_engine_with(&root, &config, bars, true)?
            .search_with_retrievers(&a.query, &opts)?;
        print::hits(&searched.hits, true);
        print::rerank_report(searched.rerank.as_ref());
        let intent = cairn::Intent::of(&a.query);
        say!("intent: {} (read from the query's words)", intent.name());
        return Ok(());
    }
    let hits = daemon_or_here(
        || {
            search_via_daemon(
                &root,
                SearchRequest {
                    query: a.query.clone(),
                    options: opts.clone(),
                    config: config_fingerprint(&config),
                },
            )
        },
        || Ok(open_engine_with(&root, &config, bars, true)?.search(&a.query, &opts)?),
    )?;
    // Whether anything is close in meaning (a score is only a share of
    // this query's best): said on stderr, the hits stay on stdout.
    let vectors_ran =
        hits.iter().any(|h| {
            h.signals
                .iter()
                .any(|s| s.retriever == cairn_core::Retriever::Vector)
        }) || (config.embed.model != "none" && !a.fts && opts.mode != cairn::Mode::Bm25);
    print::confidence_note(
        hits.iter().map(|h| h.similarity),
        vectors_ran && !hits.is_empty(),
        config.search.confident_similarity,
        "hit",
        bars.quiet(),
    );
    if a.json {
        print::json(&hits)
    } else {
        print::hits(&hits, a.explain);
        if a.explain && !a.fts {
            // Read from the query alone, as ranking reads it: what weighs
            // docs or code (the `boost` lines of each hit say by how much).
            let intent = cairn::Intent::of(&a.query);
            say!("intent: {} (read from the query's words)", intent.name());
            if !a.no_names && opts.mode == cairn::Mode::Hybrid {
                print::names_read(&cairn::read_names(&a.query));
            }
        }
        Ok(())
    }
}

/// What `search` asks of every project it searches, from its arguments.
fn options(a: &SearchArgs, kinds: Vec<Kind>) -> SearchOptions {
    SearchOptions {
        limit: a.limit.unwrap_or(0),
        path_prefix: a.path_prefix.clone(),
        raw_fts: a.fts,
        mode: a.mode.into(),
        kinds,
        no_graph: a.no_graph,
        no_names: a.no_names,
        explain: a.explain || a.json,
        min_score: a.min_score,
        relative_floor: a.relative_floor,
        ..SearchOptions::default()
    }
}

/// `cairn search --project A --project B`: each project searched with its
/// own index and configuration (one embedding model loaded for all that
/// use the same), the hits merged ([`cairn::search_projects`]), each
/// naming its project.
fn several(cli: &Cli, a: &SearchArgs, kinds: Vec<Kind>, bars: &Bars) -> anyhow::Result<()> {
    if a.current_file.is_some() {
        anyhow::bail!("--current-file names a file of one project: not with several --project");
    }
    if cli.project.len() > cairn::MAX_SEARCH_PROJECTS {
        anyhow::bail!(
            "{} projects given: at most {} in one search",
            cli.project.len(),
            cairn::MAX_SEARCH_PROJECTS
        );
    }
    // Hits of several projects are merged by cosine: no cross-encoder pass
    // (`--rerank` is for one project's search), no current file.
    let opts = options(a, kinds);
    let mut engines: Vec<(String, cairn::Engine)> = Vec::new();
    // One model in memory for every project that uses the same one.
    type Shared = (
        String,
        cairn::EmbedProvider,
        std::sync::Arc<dyn cairn_core::Embedder>,
    );
    let mut shared: Option<Shared> = None;
    for p in &cli.project {
        let root = resolve_project(p)?;
        if engines.iter().any(|(_, e)| e.root() == root) {
            continue;
        }
        let config = load_config(cli, &root)?;
        let index = cairn::paths::index_file(&root);
        if config.store.uri.trim().is_empty() && !index.exists() {
            anyhow::bail!(
                "no index at {}: run `cairn index` there first",
                index.display()
            );
        }
        let reuse = shared
            .as_ref()
            .filter(|(m, p, _)| *m == config.embed.model && *p == config.embed.provider)
            .map(|(_, _, e)| e.clone());
        let engine = match reuse {
            Some(e) => cairn::Open::new(&root, &config)
                .embedder(Some(e))
                .engine()?,
            None => open_engine_with(&root, &config, bars, true)?,
        };
        if config.store.uri.trim().is_empty() && engine.index_unbuilt()? {
            anyhow::bail!("{}", crate::project::unbuilt(&engine));
        }
        if shared.is_none()
            && let Some(e) = engine.embedder()
        {
            shared = Some((config.embed.model.clone(), config.embed.provider, e.clone()));
        }
        engines.push((p.to_string_lossy().into_owned(), engine));
    }
    let named: Vec<(String, &cairn::Engine)> =
        engines.iter().map(|(n, e)| (n.clone(), e)).collect();
    let hits = cairn::search_projects(&named, &a.query, &opts)?;
    if a.json {
        return print::json(&hits);
    }
    if hits.is_empty() {
        say!("no matches");
    }
    for (i, h) in hits.iter().enumerate() {
        let hit = &h.hit;
        let crumb = if hit.breadcrumb.is_empty() {
            String::new()
        } else {
            format!("  {}", hit.breadcrumb)
        };
        let project = if h.also_in.is_empty() {
            h.project.clone()
        } else {
            format!("{}, also {}", h.project, h.also_in.join(", "))
        };
        say!(
            "{}. [{project}] {}:{}-{}{crumb}",
            i + 1,
            hit.path,
            hit.start_line,
            hit.end_line
        );
        let similarity = hit
            .similarity
            .map_or_else(String::new, |s| format!("  similarity {s:.3}"));
        say!("   score {:.5}{similarity}  id {}", hit.score, hit.chunk_id);
        for line in hit.snippet.lines() {
            say!("   │ {line}");
        }
        say!();
    }
    Ok(())
}

/// `cairn projects`: the checkouts `cairn index` registered, most recently
/// indexed first; checkouts of one repository (worktrees, clones) share an
/// identity.
pub(crate) fn projects(a: &ProjectsArgs) -> anyhow::Result<()> {
    let projects = cairn::Projects::load()?;
    if a.json {
        return print::json(&projects.entries());
    }
    if projects.entries().is_empty() {
        say!("no projects yet: `cairn index` in a project registers it");
    }
    for e in projects.entries() {
        say!(
            "{:<24} {}  {}  (indexed {})",
            e.name,
            e.id,
            e.root.display(),
            e.indexed_at
        );
    }
    Ok(())
}
