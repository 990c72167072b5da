//! Boosts: each fused document's score times its factors — the domain of
//! the file being edited, path factors, and the `[search]` weight of its
//! kind (doc, memory, code) — with the signals and factors that explain it.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_core::{Boost, ChunkRow, IndexSnapshot, Kind, Signal};
use cairn_search::{Boosts, QueryAsks};

use super::explain::graph_path;
use super::fuse::Fusion;
use super::retrieve::GraphRetrieved;
use super::{Candidate, SearchOptions};
use crate::engine::Engine;
use crate::error::Result;

impl Engine {
    /// Candidates from the fused documents, each represented by its best
    /// chunk (and up to `[search] sections_per_file` chunks of other parts of
    /// it), scored with their boosts (unsorted).
    pub(super) fn boost(
        &self,
        snap: &dyn IndexSnapshot,
        query: &str,
        opts: &SearchOptions,
        fusion: Fusion,
        rows: &HashMap<i64, ChunkRow>,
        graph: &GraphRetrieved,
    ) -> Result<Vec<Candidate>> {
        let boosts = Boosts {
            current_domain: self.current_domain(snap, opts.current_file.as_deref())?,
            asks: QueryAsks::of(query),
        };
        let per_file = self.config.search.sections_per_file.max(1);
        let mut out = Vec::new();
        for f in fusion.fused {
            let Some(chunks) = fusion.chunks_of.get(&f.id) else {
                continue;
            };
            let Some(&(first, best)) = chunks.first() else {
                continue;
            };
            let Some(row) = rows.get(&first) else {
                continue;
            };
            let mut factors = boosts.factors(&row.chunk.path, &row.domain);
            let kind = self.kind_of(&row.chunk.path);
            let (reason, w) = match kind {
                Kind::Doc => ("doc weight", self.config.search.doc_weight),
                Kind::Memory => ("memory weight", self.config.search.memory_weight),
                Kind::Code => ("code weight", self.config.search.code_weight),
            };
            if w != 1.0 {
                factors.push((reason, w));
            }
            let via = match (
                &graph.kg,
                opts.explain && f.signals.iter().any(|s| s.0 == "graph"),
            ) {
                (Some(g), true) => graph_path(g, &graph.seed_nodes, row, rows, snap),
                _ => Vec::new(),
            };
            let score = factors.iter().fold(f.score, |s, (_, x)| s * x);
            let signals: Vec<Signal> = f
                .signals
                .into_iter()
                .map(|(retriever, rank, raw, contribution)| Signal {
                    retriever,
                    rank,
                    raw,
                    contribution,
                })
                .collect();
            // Further sections of the same file, when they answer too: a
            // chunk of another part of the file (no shared lines, another
            // heading), scored as the file times how its own score compares
            // with the best chunk's.
            let mut shown = vec![row];
            // A memory is one answer, however many chunks it has.
            let sections = if kind == Kind::Memory { 1 } else { per_file };
            for &(id, chunk_score) in &chunks[1..] {
                if shown.len() >= sections {
                    break;
                }
                let Some(other) = rows.get(&id) else { continue };
                let apart = shown.iter().all(|s| {
                    (other.chunk.end_line < s.chunk.start_line
                        || other.chunk.start_line > s.chunk.end_line)
                        && other.chunk.heading_path != s.chunk.heading_path
                });
                if !apart {
                    continue;
                }
                let share = if best > 0.0 { chunk_score / best } else { 0.0 };
                let mut more = factors.clone();
                more.push(("another section of the file", share));
                out.push(Candidate {
                    signals: signals.clone(),
                    boosts: boosts_of(&more),
                    score: score * share,
                    row: other.clone(),
                    via: Vec::new(),
                });
                shown.push(other);
            }
            out.push(Candidate {
                signals,
                boosts: boosts_of(&factors),
                score,
                row: row.clone(),
                via,
            });
        }
        Ok(out)
    }

    /// The domain of the file being edited: the first folder on its path that
    /// is a domain of the knowledge base (`src/cache/redis.rs` → `cache` when
    /// the docs have a `cache/` folder).
    fn current_domain(
        &self,
        snap: &dyn IndexSnapshot,
        current: Option<&str>,
    ) -> Result<Option<String>> {
        let Some(current) = current else {
            return Ok(None);
        };
        let domains = self.known_domains(snap)?;
        let rel = crate::paths::relative_path(&self.root, &self.root.join(current));
        let mut parts: Vec<&str> = rel.split('/').collect();
        parts.pop(); // the file name itself
        Ok(parts
            .into_iter()
            .find(|p| domains.iter().any(|d| d == p))
            .map(str::to_string))
    }

    /// The knowledge base's domains (top-level folders), cached per generation.
    fn known_domains(&self, snap: &dyn IndexSnapshot) -> Result<Arc<Vec<String>>> {
        let generation = snap.generation()?;
        let mut slot = self.domains.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, d)) = slot.as_ref()
            && *g == generation
        {
            return Ok(d.clone());
        }
        let d = Arc::new(snap.domains()?);
        *slot = Some((generation, d.clone()));
        Ok(d)
    }
}

/// The factors of a candidate as its explanation lists them.
fn boosts_of(factors: &[(&str, f64)]) -> Vec<Boost> {
    factors
        .iter()
        .map(|(r, factor)| Boost {
            reason: r.to_string(),
            factor: *factor,
        })
        .collect()
}
