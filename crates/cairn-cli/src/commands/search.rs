//! `cairn search QUERY`: hybrid search (BM25 + vectors + graph, fused with RRF).

use cairn::{Engine, SearchOptions};
use cairn_core::Kind;

use crate::args::SearchArgs;
use crate::print;
use crate::project::project_relative;

pub(crate) fn run(engine: &Engine, a: &SearchArgs) -> anyhow::Result<()> {
    let kinds = a
        .kind
        .iter()
        .map(|k| {
            Kind::parse(k)
                .ok_or_else(|| anyhow::anyhow!("unknown kind {k:?}: use doc, code or memory"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let opts = SearchOptions {
        limit: a.limit.unwrap_or(0),
        current_file: a
            .current_file
            .as_deref()
            .map(|f| project_relative(engine.root(), f)),
        path_prefix: a.path_prefix.clone(),
        raw_fts: a.fts,
        mode: a.mode.into(),
        kinds,
        no_graph: a.no_graph,
        explain: a.explain || a.json,
        min_score: a.min_score,
        relative_floor: a.relative_floor,
    };
    let hits = engine.search(&a.query, &opts)?;
    if a.json {
        print::json(&hits)
    } else {
        print::hits(&hits, a.explain);
        Ok(())
    }
}
