//! `cairn search QUERY`: hybrid search (BM25 + vectors + graph, fused). When
//! the project's daemon runs (`cairn serve` started it), it answers: its
//! model, vectors and graph are warm. Otherwise, or when it is configured
//! otherwise, the search runs here. `CAIRN_NO_DAEMON=1` always searches here.

use cairn::SearchOptions;
use cairn_core::Kind;
use cairn_mcp::daemon::{SearchRequest, config_fingerprint, search_via_daemon};

use crate::args::{Cli, SearchArgs};
use crate::print;
use crate::progress::Bars;
use crate::project::{
    daemon_or_here, load_config, open_engine_with, project_relative, project_root,
};

pub(crate) fn run(cli: &Cli, a: &SearchArgs, bars: &Bars) -> anyhow::Result<()> {
    let kinds = a
        .kind
        .iter()
        .map(|k| {
            Kind::parse(k)
                .ok_or_else(|| anyhow::anyhow!("unknown kind {k:?}: use doc, code or memory"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let root = project_root(cli)?;
    let opts = SearchOptions {
        limit: a.limit.unwrap_or(0),
        current_file: a
            .current_file
            .as_deref()
            .map(|f| project_relative(&root, f)),
        path_prefix: a.path_prefix.clone(),
        raw_fts: a.fts,
        mode: a.mode.into(),
        kinds,
        no_graph: a.no_graph,
        explain: a.explain || a.json,
        min_score: a.min_score,
        relative_floor: a.relative_floor,
        rerank: match (a.rerank, a.no_rerank) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        ..SearchOptions::default()
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
        }
        Ok(())
    }
}
