//! `cairn bench graph`: Personalized PageRank and Leiden on a synthetic
//! knowledge graph shaped like a real one (chunks linked to entities, entity
//! popularity skewed so a few hubs collect many links).

use std::time::Instant;

use cairn_search::{EdgeIn, KnowledgeGraph, PprParams, SplitMix64};
use serde::Serialize;

/// Figures of one run.
#[derive(Debug, Serialize)]
pub struct GraphBench {
    /// Chunks in the graph.
    pub chunks: usize,
    /// Entities in the graph.
    pub entities: usize,
    /// Links.
    pub edges: usize,
    /// Time to build the graph, milliseconds.
    pub build_ms: f64,
    /// PPR queries timed.
    pub queries: usize,
    /// Median PPR query, milliseconds.
    pub ppr_p50_ms: f64,
    /// 95th percentile PPR query, milliseconds.
    pub ppr_p95_ms: f64,
    /// One Leiden run, milliseconds.
    pub leiden_ms: f64,
    /// Communities Leiden found.
    pub communities: usize,
    /// Their modularity.
    pub modularity: f64,
}

/// Builds a synthetic graph of about `edges` links and times `queries`
/// Personalized PageRank queries and one Leiden run.
pub fn run_graph_bench(edges: usize, queries: usize) -> GraphBench {
    // Five links per chunk, as in this repository's own index (about 4–6).
    let chunks = (edges / 5).max(1);
    let entities = (edges / 5).max(1);
    let mut rng = SplitMix64(42);
    let keys: Vec<String> = (0..entities).map(|i| format!("e{i}")).collect();
    let mut list: Vec<(i64, usize)> = Vec::with_capacity(edges);
    for i in 0..edges {
        let chunk = (i % chunks) as i64;
        // Half the links go to an entity linked before (preferential
        // attachment: popular entities become hubs), half to any entity.
        let e = if i > 0 && rng.below(2) == 0 {
            list[rng.below(list.len())].1
        } else {
            rng.below(entities)
        };
        list.push((chunk, e));
    }
    let started = Instant::now();
    let kg = KnowledgeGraph::build(list.iter().map(|(c, e)| EdgeIn {
        chunk: Some(*c),
        src: None,
        dst: &keys[*e],
        dst_name: &keys[*e],
        rel: cairn_core::Relation::Mentions,
        weight: 0.5,
        path: "",
    }));
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    let params = PprParams::default();
    let mut times = Vec::with_capacity(queries);
    for _ in 0..queries {
        // A query's seeds: a few named entities and the top chunks of BM25
        // and the vectors (weights 1/(1+rank)), as search builds them.
        let mut seeds = Vec::new();
        for _ in 0..2 {
            if let Some(n) = kg.entity(&keys[rng.below(entities)]) {
                seeds.push((n, 1.0));
            }
        }
        for r in 0..10 {
            if let Some(n) = kg.chunk_node(rng.below(chunks) as i64) {
                seeds.push((n, 1.0 / (1.0 + (r % 5) as f32)));
            }
        }
        let t = Instant::now();
        let ranked = kg.rank(&seeds, &params, 80);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(ranked);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let t = Instant::now();
    let (communities, modularity) = kg.communities(3);
    let leiden_ms = t.elapsed().as_secs_f64() * 1e3;
    GraphBench {
        chunks,
        entities,
        edges: kg.edge_count(),
        build_ms,
        queries,
        ppr_p50_ms: pct(0.5),
        ppr_p95_ms: pct(0.95),
        leiden_ms,
        communities: communities.len(),
        modularity,
    }
}
