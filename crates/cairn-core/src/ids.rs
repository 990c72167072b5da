//! What the ranking passes around: which retriever said what, and about
//! which chunk or document. A chunk's row id and a document number local to
//! one search are both integers; as [`ChunkId`] and [`DocId`] they cannot be
//! mixed up.

use serde::{Deserialize, Serialize};

/// One of the lists a search fuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Retriever {
    /// BM25 over the full-text index.
    Bm25,
    /// The nearest vectors (cosine).
    Vector,
    /// Personalised PageRank over the knowledge graph.
    Graph,
    /// Definitions and files by the names and paths the query holds (an
    /// exact lookup, not stemmed: `cairn_search::names`).
    Names,
}

impl Retriever {
    /// Every retriever, in fusion order.
    pub const ALL: [Retriever; 4] = [
        Retriever::Bm25,
        Retriever::Vector,
        Retriever::Graph,
        Retriever::Names,
    ];

    /// The name JSON, logs and `--explain` show: `bm25`, `vector`, `graph`,
    /// `names`.
    pub fn name(self) -> &'static str {
        match self {
            Retriever::Bm25 => "bm25",
            Retriever::Vector => "vector",
            Retriever::Graph => "graph",
            Retriever::Names => "names",
        }
    }
}

impl std::fmt::Display for Retriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that `{:<6}` aligns the name as it did a string.
        f.pad(self.name())
    }
}

/// A chunk's row id in the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChunkId(pub i64);

/// A document (a file) as one search numbers them: in order of first
/// appearance across its lists. Meaningless outside that search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocId(pub i64);

/// An id with a retriever's or a fusion's score (higher is better).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored<Id> {
    /// What is scored.
    pub id: Id,
    /// Its score.
    pub score: f64,
}

impl<Id> Scored<Id> {
    /// `id` scored `score`.
    pub fn new(id: Id, score: f64) -> Scored<Id> {
        Scored { id, score }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retriever_is_written_as_its_name() {
        for r in Retriever::ALL {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.name()));
            assert_eq!(serde_json::from_str::<Retriever>(&json).unwrap(), r);
        }
        assert_eq!(format!("[{:<6}]", Retriever::Bm25), "[bm25  ]");
        assert_eq!(serde_json::to_string(&ChunkId(7)).unwrap(), "7");
    }
}
