//! Each fused document as its best chunk, and up to
//! [`RankSettings::sections_per_file`] chunks of other parts of it, scored
//! with their factors: the domain of the file being edited, path classes
//! (tests, changelogs), and the weight of its kind (doc, memory, code).

use std::collections::HashMap;

use cairn_core::{Boost, ChunkId, ChunkRow, IndexSnapshot, Kind, Retriever, is_history_noise};

use super::explain::graph_path;
use super::fuse::Fusion;
use super::retrieve::GraphRetrieved;
use super::{Candidate, RankRequest, RankSettings};
use crate::boost::Boosts;
use crate::intent::Intent;

/// Factor for documentation when a question asks how the code behaves
/// ("how does diff decide…"): the code answers. Chosen on code-QA's tuning
/// half (0.6–1.0 tried with the code factor below): 0.8 took chunk hit@5
/// 0.8621 → 0.8966 and MRR 0.8956 → 0.8985; 0.7 cost a first place.
pub const BEHAVIOUR_DOC_FACTOR: f64 = 0.8;

/// Factor for code when a question asks how to use it ("how do I…"): the
/// guide (or, in Rust and Go, the doc comment) answers. 0.8 and 0.9 scored
/// alike on the tuning half, 0.7 lost a chunk hit.
pub const USE_CODE_FACTOR: f64 = 0.85;

/// Factor for a commit record (`Kind::History`): a commit answers "why",
/// rarely "where" or "how", so it ranks below the code and docs a query
/// matches as well; a search that keeps to history (`--kind history`)
/// orders commits among themselves and is unaffected.
pub const HISTORY_FACTOR: f64 = 0.5;

/// Factor for a merge's or a bot's commit record (dependency bumps, merge
/// messages that repeat a branch name): they match many queries and
/// explain little.
pub const HISTORY_NOISE_FACTOR: f64 = 0.2;

/// The intent's factor for a chunk of `kind` at `path`, if any. A C or C++
/// header weighs as documentation: it is where a C library writes its API
/// reference (zlib's `zlib.h`, lz4's `lz4.h`), and how it behaves is in the
/// `.c` files.
fn intent_factor(
    intent: Intent,
    kind: Kind,
    path: &str,
    issue_doc_weight: f64,
) -> Option<(&'static str, f64)> {
    let header = kind == Kind::Code && is_c_header(path);
    match (intent, kind) {
        (Intent::Report, Kind::Doc) if issue_doc_weight != 1.0 => {
            Some(("issue, docs", issue_doc_weight))
        }
        (Intent::Behaviour, Kind::Code) if header => {
            Some(("behaviour question, header", BEHAVIOUR_DOC_FACTOR))
        }
        (Intent::Behaviour, Kind::Doc) => Some(("behaviour question, docs", BEHAVIOUR_DOC_FACTOR)),
        (Intent::Use, Kind::Code) if !header => Some(("use question, code", USE_CODE_FACTOR)),
        _ => None,
    }
}

/// Whether `path` is a C or C++ header. Other files that declare an API
/// without implementing it (TypeScript `.d.ts`, Python `.pyi`, PHP
/// `*Interface.php`) were tried as documentation too and left out
/// (BENCHMARKS.md, "Code QA").
fn is_c_header(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".h", ".hpp", ".hh", ".hxx"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// Candidates from the fused documents (unsorted).
pub(super) fn candidates(
    snap: &dyn IndexSnapshot,
    req: &RankRequest<'_>,
    settings: &RankSettings,
    kind_of: &dyn Fn(&str) -> Kind,
    fusion: Fusion,
    rows: &HashMap<ChunkId, ChunkRow>,
    graph: &GraphRetrieved,
) -> Vec<Candidate> {
    let boosts = Boosts {
        current_domain: req.current_domain.clone(),
        asks: fusion.asks,
    };
    let intent = Intent::of(req.query);
    let file_words = crate::boost::FileWords::of(req.query);
    let per_file = settings.sections_per_file.max(1);
    let mut out = Vec::new();
    for f in fusion.fused {
        let Some(chunks) = fusion.chunks_of.get(&f.id) else {
            continue;
        };
        let Some(first) = chunks.first() else {
            continue;
        };
        let best = first.score;
        let Some(row) = rows.get(&first.id) else {
            continue;
        };
        let mut factors = boosts.factors(&row.chunk.path);
        let kind = kind_of(&row.chunk.path);
        if kind == Kind::Code
            && crate::boost::is_other_file(&row.chunk.path, &settings.listed, &file_words)
        {
            factors.push(("other file", crate::boost::OTHER_FILE_FACTOR));
        }
        let (reason, w) = match kind {
            Kind::Doc => ("doc weight", settings.doc_weight),
            Kind::Memory => ("memory weight", settings.memory_weight),
            Kind::Code => ("code weight", settings.code_weight),
            Kind::History if is_history_noise(&row.chunk.path) => {
                ("merge or bot commit", HISTORY_NOISE_FACTOR)
            }
            Kind::History => ("commit", HISTORY_FACTOR),
        };
        if w != 1.0 {
            factors.push((reason, w));
        }
        if let Some(f) = intent_factor(intent, kind, &row.chunk.path, settings.issue_doc_weight) {
            factors.push(f);
        }
        // A session or page dated inside the span the query names. Memories
        // are weighed by recall, which knows their stored time too.
        if let Some(range) = req.when
            && kind != Kind::Memory
            && settings.time_factor != 1.0
            && row
                .chunk
                .heading_path
                .iter()
                .find_map(|h| crate::date_in(h))
                .is_some_and(|t| range.contains(t))
        {
            factors.push((
                "dated inside the time the query names",
                settings.time_factor,
            ));
        }
        let via = match (
            &graph.kg,
            req.explain && f.signals.iter().any(|s| s.retriever == Retriever::Graph),
        ) {
            (Some(g), true) => graph_path(g, &graph.seed_nodes, row, rows, snap),
            _ => Vec::new(),
        };
        let score = factors.iter().fold(f.score, |s, (_, x)| s * x);
        let signals = f.signals;
        // Further sections of the same file, when they answer too: a chunk
        // of another part of the file (no shared lines, another heading),
        // scored as the file times how its own score compares with the best
        // chunk's.
        let mut shown = vec![row];
        // A memory is one answer, however many chunks it has.
        let sections = if kind == Kind::Memory { 1 } else { per_file };
        for c in &chunks[1..] {
            if shown.len() >= sections {
                break;
            }
            let chunk_score = c.score;
            let Some(other) = rows.get(&c.id) else {
                continue;
            };
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
                chunk_signals: if req.explain {
                    c.signals.clone()
                } else {
                    Vec::new()
                },
                boosts: boosts_of(&more),
                score: score * share,
                row: other.clone(),
                via: Vec::new(),
                rerank: None,
            });
            shown.push(other);
        }
        out.push(Candidate {
            signals,
            chunk_signals: if req.explain {
                first.signals.clone()
            } else {
                Vec::new()
            },
            boosts: boosts_of(&factors),
            score,
            row: row.clone(),
            via,
            rerank: None,
        });
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_c_header_weighs_as_documentation() {
        let f = |i, k, p| intent_factor(i, k, p, 0.5).map(|(_, x)| x);
        assert_eq!(
            f(Intent::Behaviour, Kind::Code, "zlib/zlib.h"),
            Some(BEHAVIOUR_DOC_FACTOR)
        );
        assert_eq!(f(Intent::Behaviour, Kind::Code, "zlib/inflate.c"), None);
        assert_eq!(f(Intent::Use, Kind::Code, "include/Api.HPP"), None);
        assert_eq!(
            f(Intent::Use, Kind::Code, "zlib/inflate.c"),
            Some(USE_CODE_FACTOR)
        );
        assert_eq!(
            f(Intent::Behaviour, Kind::Doc, "README.md"),
            Some(BEHAVIOUR_DOC_FACTOR)
        );
        // An issue: its docs weigh `issue_doc_weight`, its code is not demoted.
        assert_eq!(f(Intent::Report, Kind::Doc, "docs/api.rst"), Some(0.5));
        assert_eq!(f(Intent::Report, Kind::Code, "src/flask/cli.py"), None);
        assert_eq!(intent_factor(Intent::Report, Kind::Doc, "a.md", 1.0), None);
    }
}
