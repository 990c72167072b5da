//! Settings, from defaults and the project's `cairn.toml`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Everything configurable, with defaults for what a file leaves out.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// What to index.
    pub index: IndexConfig,
    /// How to chunk markdown.
    pub chunk: ChunkConfig,
    /// How to embed.
    pub embed: EmbedConfig,
    /// How to search.
    pub search: SearchConfig,
    /// Agent memories.
    pub memory: MemoryConfig,
}

/// `[memory]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// The memory folder, relative to the project root. Always indexed, even
    /// though the default is hidden.
    pub dir: String,
    /// A new memory at least this similar (cosine) to one of the same type
    /// updates that one instead of adding a copy.
    pub duplicate_threshold: f32,
    /// Weights of relevance, importance, recency and frequency in recall.
    pub weights: cairn_search::MemoryWeights,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            dir: ".cairn/memory".into(),
            duplicate_threshold: 0.92,
            weights: cairn_search::MemoryWeights::default(),
        }
    }
}

/// `[index]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// Folders indexed by a bare `cairn index`, relative to the project root.
    pub roots: Vec<String>,
    /// File extensions treated as markdown.
    pub extensions: Vec<String>,
    /// Files per write transaction.
    pub batch_files: usize,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            roots: vec![".".into()],
            extensions: vec!["md".into(), "markdown".into(), "mdx".into()],
            batch_files: 256,
        }
    }
}

/// `[chunk]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// A section longer than this (characters) is split at paragraphs.
    pub max_chars: usize,
    /// Lines carried from one part of a split section into the next.
    pub overlap_lines: usize,
    /// Fragments shorter than this are merged into a neighbour.
    pub min_chars: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            max_chars: 1500,
            overlap_lines: 2,
            min_chars: 100,
        }
    }
}

/// `[embed]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// `all-MiniLM-L6-v2` (default) or `none` for BM25-only.
    pub model: String,
    /// Tokens per chunk (special tokens included).
    pub max_tokens: usize,
    /// Worker threads; 0 = one per available core.
    pub threads: usize,
    /// Fetch the model on first use when it is not cached.
    pub auto_fetch: bool,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            model: "all-MiniLM-L6-v2".into(),
            max_tokens: 256,
            threads: 0,
            auto_fetch: true,
        }
    }
}

/// `[search]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Hits returned when no limit is given.
    pub limit: usize,
    /// Each retriever returns `limit × candidates` before fusion.
    pub candidates: usize,
    /// BM25 weight of the breadcrumb column.
    pub bm25_breadcrumb_weight: f64,
    /// BM25 weight of the text column.
    pub bm25_text_weight: f64,
    /// Weight of BM25's votes in RRF.
    pub bm25_weight: f64,
    /// Weight of the vector retriever's votes in RRF. 0.5 because MiniLM is
    /// the weaker retriever on both labelled sets: on SciFact's train split any
    /// weight in 0.5–1.0 scores the same (nDCG@10 0.7229–0.7233), and on
    /// LoCoMo, where short conversational turns blur the vectors, 0.5 lifts
    /// hybrid session Recall@5 from 0.862 (at 1.0) to 0.884 (BENCHMARKS.md).
    pub vector_weight: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            limit: 5,
            candidates: 4,
            bm25_breadcrumb_weight: 1.0,
            bm25_text_weight: 1.0,
            bm25_weight: 1.0,
            vector_weight: 0.5,
        }
    }
}

impl Config {
    /// Defaults overlaid with `<root>/cairn.toml` when it exists.
    pub fn load(root: &Path) -> Result<Config> {
        let path = root.join("cairn.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| Error::Config {
                path,
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(source) => Err(Error::Io { path, source }),
        }
    }
}

/// The project a folder belongs to: the nearest ancestor holding `cairn.toml`,
/// else the nearest holding `.git`, else the folder itself.
pub fn find_project_root(start: &Path) -> PathBuf {
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    for marker in ["cairn.toml", ".git"] {
        if let Some(dir) = start.ancestors().find(|d| d.join(marker).exists()) {
            return dir.to_path_buf();
        }
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_root_prefers_cairn_toml_then_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.join("repo/sub/deeper")).unwrap();
        assert_eq!(
            find_project_root(&root.join("repo/sub/deeper")),
            root.join("repo")
        );
        std::fs::write(root.join("repo/sub/cairn.toml"), "[search]\nlimit = 7\n").unwrap();
        assert_eq!(
            find_project_root(&root.join("repo/sub/deeper")),
            root.join("repo/sub")
        );
        assert_eq!(
            Config::load(&root.join("repo/sub")).unwrap().search.limit,
            7
        );
        std::fs::write(root.join("repo/sub/cairn.toml"), "[search]\nlimt = 7\n").unwrap();
        let err = Config::load(&root.join("repo/sub"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cairn.toml") && err.contains("limt"), "{err}");
    }
}
