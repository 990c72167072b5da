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
    /// Capture hooks.
    pub capture: CaptureConfig,
    /// What clients' hooks inject unasked (`cairn hook claude-code
    /// SessionStart|UserPromptSubmit`).
    pub inject: InjectConfig,
    /// The language model for summaries and `compact` (optional).
    pub llm: LlmConfig,
    /// Where the index lives.
    pub store: StoreConfig,
    /// The project's git history as a source (`cairn why`).
    pub history: HistoryConfig,
}

/// `[history]`: each commit of the project's git repository indexed as a
/// record (message, author, date, files, the definitions it changed).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistoryConfig {
    /// Read the history at all (`false`: no commit is indexed, and those
    /// indexed before are removed on the next pass).
    pub enabled: bool,
    /// The most commits one pass reads, newest first (the first pass of a
    /// long history keeps the newest this many; later passes read only
    /// the commits since the last head seen).
    pub max_commits: usize,
    /// Give commit records vectors too. Off by default: on the 44 "why"
    /// questions of eval/history they changed no answer (`why` and
    /// `search --kind history` find the same commits by BM25 and the
    /// graph) and doubled a first pass's embedding work (BENCHMARKS.md).
    pub vectors: bool,
}

impl Default for HistoryConfig {
    fn default() -> Self {
        HistoryConfig {
            enabled: true,
            max_commits: 5000,
            vectors: false,
        }
    }
}

/// `[store]`: the index backend. The URI may only come from the user file,
/// the environment or `--store` (it can hold a password).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// Empty: the project's own SQLite file (`.cairn/index.sqlite`).
    /// `postgres://user@host/db`: a PostgreSQL + pgvector server.
    pub uri: String,
    /// The project's name in a shared database (default: the project
    /// folder's name), so one database serves many projects and every
    /// machine of a team names the project the same way.
    pub project: String,
    /// HNSW candidate list per vector query on PostgreSQL (`hnsw.ef_search`,
    /// at least twice the results asked; up to 1000): higher finds more of
    /// the true nearest neighbours and takes longer (BENCHMARKS.md).
    pub ef_search: usize,
    /// On PostgreSQL, a vector query over at most this many chunks (of the
    /// project, under the path prefix) scores them exactly instead of asking
    /// the HNSW index, which every project of the database shares (0:
    /// always the index).
    pub exact_scan_max: usize,
    /// On PostgreSQL, a lexical query whose common words (each in more than
    /// one chunk of 16) hold more postings than this scores them only for
    /// the best chunks of its rare words instead of reading them all (0:
    /// always all; BENCHMARKS.md measures speed and quality both ways).
    pub bm25_cut: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            uri: String::new(),
            project: String::new(),
            ef_search: 100,
            exact_scan_max: 5_000,
            bm25_cut: 20_000,
        }
    }
}

/// `[llm]`: a language model over HTTP. The endpoint and the key's variable
/// may only come from the user file or the environment, never from a
/// project file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// `none`, `openai` (any OpenAI-compatible server) or `anthropic`.
    pub provider: String,
    /// Base URL (default: the provider's public API).
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Name of the environment variable holding the key (the key itself is
    /// never stored in a file).
    pub api_key_env: String,
    /// Most milliseconds one request may take.
    pub timeout_ms: u64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: "none".into(),
            base_url: String::new(),
            model: String::new(),
            api_key_env: String::new(),
            timeout_ms: 20_000,
        }
    }
}

/// `[capture]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureConfig {
    /// Most milliseconds a hook may take before it gives up (and exits 0).
    pub budget_ms: u64,
}

/// `[inject]`: memory an agent gets without asking (see `inject.rs`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InjectConfig {
    /// Most tokens of the digest a session starts with.
    pub session_tokens: usize,
    /// Memories a session digest recalls (it shows those that fit).
    pub session_memories: usize,
    /// Most tokens a prompt brings.
    pub prompt_tokens: usize,
    /// Memories a prompt recalls before the similarity floor.
    pub prompt_memories: usize,
    /// A prompt brings only memories at least this close to it (cosine
    /// similarity of the embedding model): the same measure and default as
    /// `[search] confident_similarity`, the floor under which search and
    /// recall say nothing is close. 0.4: on LoCoMo stored as
    /// memories, each question as a prompt got a block holding a turn that
    /// answers it 45.2 % of the time (33.6 % at 0.5, 49.2 % at 0.3), and
    /// none of 200 off-topic coding prompts got a block (1 did at 0.35);
    /// BENCHMARKS.md, "Memory without asking".
    pub prompt_min_similarity: f64,
}

impl Default for InjectConfig {
    fn default() -> Self {
        InjectConfig {
            session_tokens: 1500,
            session_memories: 10,
            prompt_tokens: 500,
            prompt_memories: 3,
            prompt_min_similarity: crate::confidence::CONFIDENT_SIMILARITY,
        }
    }
}

impl Default for CaptureConfig {
    fn default() -> Self {
        CaptureConfig { budget_ms: 5000 }
    }
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
    pub duplicate_threshold: f64,
    /// A new memory that says a change ("moved to", "no longer", "instead
    /// of") replaces the earlier memory of its type most like it when their
    /// cosine reaches this and they share a subject word (0 = only
    /// `--supersedes` links memories). all-MiniLM-L6-v2 gives "We use Redis
    /// for session caching" → "We moved session caching to Memcached" 0.453.
    pub supersede_threshold: f64,
    /// Recall multiplies the score of a memory whose time (the date its
    /// text states, else `created`) falls inside the span a question names
    /// ("last week", "in May 2023") by this, and, when a question asks for
    /// the latest or the first, orders the close matches by time; 1 = off.
    pub time_factor: f64,
    /// Weights of relevance, importance, recency and frequency in recall.
    pub weights: cairn_search::MemoryWeights,
    /// Recall leaves out memories whose fused search score is below this
    /// (fused-score units, as `[search] min_score`; 0 = off, the default,
    /// for the reasons given there).
    pub min_score: f64,
    /// Recall leaves out memories whose relevance (fused score over the
    /// best memory's) is below this, before the blend (0 = off). 0.2: on
    /// LoCoMo stored as memories (1,322 questions, recall limit 10) every
    /// floor up to 0.2 keeps turn Recall@5 and Recall@10 as they are
    /// (0.5817 / 0.6720), 0.3 lowers them to 0.5798 / 0.6667 and 0.4 to
    /// 0.5718 / 0.6449 (BENCHMARKS.md, "Relevance floors").
    pub relative_floor: f64,
    /// The personal memory folder's home (`remember --personal`), recalled
    /// beside every project's memories and never written into one: empty
    /// for `<user data dir>/personal` (`$CAIRN_DATA_DIR`, else
    /// `~/.local/share/cairn` on Linux), `none` for no personal memory.
    /// User file, environment or `--set` only.
    pub personal: String,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            dir: crate::paths::MEMORY_DIR.into(),
            duplicate_threshold: 0.92,
            supersede_threshold: 0.4,
            time_factor: crate::when::IN_TIME_FACTOR,
            weights: cairn_search::MemoryWeights::default(),
            min_score: 0.0,
            relative_floor: 0.2,
            personal: String::new(),
        }
    }
}

/// Other files `[index] skip` leaves out by default: data (`json`, `csv`,
/// …: a fixture's numbers; the JSON files that are configuration, such as
/// `package.json`, are in `extensions`), lock files, logs, keys and
/// certificates (never indexed by our doing), vector images and source
/// maps, translation catalogues, snapshots, backups
/// and patch leftovers (`Cargo.toml.orig` repeats `Cargo.toml`).
pub const DEFAULT_SKIP: [&str; 30] = [
    "json", "jsonl", "ndjson", "geojson", "csv", "tsv", "lock", "sum", "log", "pem", "key", "crt",
    "cer", "der", "p12", "pfx", "jks", "keystore", "asc", "gpg", "svg", "map", "po", "pot", "snap",
    "orig", "rej", "bak", "swp", "tmp",
];

/// `[index]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// Folders indexed by a bare `cairn index`, relative to the project root.
    pub roots: Vec<String>,
    /// File extensions indexed: `md`/`markdown`/`mdx` are chunked by
    /// headings, `rst`/`rest` by section titles, `txt` (and, where `txt` is
    /// listed, extensionless `README`, `NEWS`, `CHANGES`…) at paragraphs or
    /// as reStructuredText when they read as it, the languages with a grammar
    /// by syntax tree, configuration and build files (`toml`, `ini`, `cfg`,
    /// `yaml`, `yml`, `mk`, and entries that are whole file names:
    /// `Makefile`, `Dockerfile`, `package.json`…) by their sections, any
    /// other by line windows.
    pub extensions: Vec<String>,
    /// Every other text file is indexed too, in line windows (no
    /// definitions): unless binary (by its extension, or a NUL byte in its
    /// first 8 KiB), in `skip`, under a vendored folder (`node_modules/`,
    /// `vendor/`, `third_party/`), in a test or fixture folder (test data),
    /// generated or minified. `false`: only `extensions`.
    pub other_files: bool,
    /// Extensions (or whole file names) of other files left out: data,
    /// lock files, keys and certificates, assets that are text but answer
    /// nothing read in line windows. An entry of `extensions` is indexed
    /// all the same.
    pub skip: Vec<String>,
    /// Files per write transaction.
    pub batch_files: usize,
    /// Files larger than this (MiB) are not read: they are reported as
    /// skipped, so one huge file cannot exhaust memory.
    pub max_file_mb: u64,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            roots: vec![".".into()],
            extensions: cairn_core::DOC_EXTENSIONS
                .iter()
                .chain(cairn_ingest::CODE_EXTENSIONS)
                .chain(&cairn_ingest::NOTEBOOK_EXTENSIONS)
                .chain(&cairn_core::CONFIG_EXTENSIONS)
                .chain(&cairn_core::CONFIG_NAMES)
                .map(|e| e.to_string())
                .collect(),
            other_files: true,
            skip: DEFAULT_SKIP.iter().map(|e| e.to_string()).collect(),
            batch_files: 256,
            max_file_mb: 64,
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
    /// `local` (the model runs in this process), `none` (BM25 only), or a
    /// remote API: `openai` (any OpenAI-compatible `/embeddings` endpoint),
    /// `ollama` (its native `/api/embed`), `gemini`, `voyage`, `jina`,
    /// `mistral`. User file or environment only.
    pub provider: EmbedProvider,
    /// `all-MiniLM-L6-v2` (default) or `none` for BM25-only; with a remote
    /// provider, the remote model's name (left at the default: the
    /// provider's usual embedding model).
    pub model: String,
    /// Remote provider's base URL (default: the provider's public API, or
    /// `http://localhost:11434` for Ollama). User file or environment only.
    pub base_url: String,
    /// Name of the environment variable holding the remote provider's key
    /// (default: `OPENAI_API_KEY`, `GEMINI_API_KEY`, `VOYAGE_API_KEY`,
    /// `JINA_API_KEY` or `MISTRAL_API_KEY`; none for Ollama or an
    /// `openai` server at a `base_url` of one's own). User file or
    /// environment only.
    pub api_key_env: String,
    /// Tokens per chunk (special tokens included).
    pub max_tokens: usize,
    /// Worker threads; 0 = one per available core.
    pub threads: usize,
    /// The local model's linear layers: `auto` (default: the precision of
    /// the vectors the index holds, and for an index with none, int8 where
    /// the CPU has integer dot products, else fp32), `fp32` or `int8`. The
    /// vectors differ, so the model id records it and a change re-embeds.
    pub precision: EmbedPrecision,
    /// Fetch the model on first use when it is not cached.
    pub auto_fetch: bool,
    /// Chunks that may wait for a vector before memory stores and the
    /// watcher's re-index passes are slowed (from 80 % of it; see
    /// `embed_queue.rs`).
    pub queue_capacity: usize,
    /// Vectors kept in the per-user embedding cache
    /// (`~/.cache/cairn/embeddings.sqlite`, by model and text hash, the
    /// least recently used dropped past this; 0 = no cache): an index of
    /// another worktree, clone or project takes the vectors of the texts
    /// it shares with one built before instead of running the model.
    /// About 900 bytes a vector of 384 dimensions.
    pub user_cache_rows: u64,
}

/// `[embed] precision` and `[search] rerank_precision`: the arithmetic of a
/// local model's linear layers (attention, LayerNorm, GELU and softmax stay
/// f32 either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedPrecision {
    /// The faster one on this CPU ([`cairn_embed::Precision::fastest`]);
    /// for an embedder, the one an index's vectors are already in, when
    /// they are in one (`cairn::open` decides).
    #[default]
    Auto,
    /// 32-bit floats.
    Fp32,
    /// int8 weights (per output channel) and activations (per row), i32 sums.
    Int8,
}

impl EmbedPrecision {
    /// The precision this setting names; `None` for `auto`.
    pub fn fixed(self) -> Option<cairn_embed::Precision> {
        match self {
            EmbedPrecision::Auto => None,
            EmbedPrecision::Fp32 => Some(cairn_embed::Precision::Fp32),
            EmbedPrecision::Int8 => Some(cairn_embed::Precision::Int8),
        }
    }
}

/// `[embed] provider`: where the vectors come from. Written in the
/// configuration as `local`, `none` or a remote API's name (`openai`,
/// `ollama`, `gemini`, `voyage`, `jina`, `mistral`); read when the
/// configuration loads, so an unknown name is an error naming its file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum EmbedProvider {
    /// The model runs in this process (`local`, or left empty).
    #[default]
    Local,
    /// No vectors: BM25 only (`none`).
    None,
    /// A remote model behind this API.
    Remote(cairn_llm::EmbedApi),
}

/// An `[embed] provider` Cairn does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown [embed] provider {name:?} (use local, none, {})", known_remote().join(", "))]
pub struct UnknownEmbedProvider {
    /// The name as written.
    pub name: String,
}

fn known_remote() -> Vec<&'static str> {
    cairn_llm::EmbedApi::ALL.iter().map(|a| a.name()).collect()
}

impl EmbedProvider {
    /// The name the configuration writes.
    pub fn name(self) -> &'static str {
        match self {
            EmbedProvider::Local => "local",
            EmbedProvider::None => "none",
            EmbedProvider::Remote(api) => api.name(),
        }
    }
}

impl std::str::FromStr for EmbedProvider {
    type Err = UnknownEmbedProvider;

    fn from_str(name: &str) -> std::result::Result<Self, Self::Err> {
        match name {
            "local" | "" => Ok(EmbedProvider::Local),
            "none" => Ok(EmbedProvider::None),
            other => cairn_llm::EmbedApi::from_name(other)
                .map(EmbedProvider::Remote)
                .ok_or_else(|| UnknownEmbedProvider {
                    name: other.to_string(),
                }),
        }
    }
}

impl TryFrom<String> for EmbedProvider {
    type Error = UnknownEmbedProvider;

    fn try_from(name: String) -> std::result::Result<Self, Self::Error> {
        name.parse()
    }
}

impl From<EmbedProvider> for String {
    fn from(p: EmbedProvider) -> String {
        p.name().to_string()
    }
}

impl std::fmt::Display for EmbedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            provider: EmbedProvider::Local,
            model: "all-MiniLM-L6-v2".into(),
            base_url: String::new(),
            api_key_env: String::new(),
            max_tokens: 256,
            threads: 0,
            precision: EmbedPrecision::Auto,
            auto_fetch: true,
            queue_capacity: 10_000,
            user_cache_rows: 500_000,
        }
    }
}

/// `[search]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Hits returned when no limit is given.
    pub limit: usize,
    /// Each retriever returns `limit × candidates` before fusion, and at
    /// least `min_candidates`.
    pub candidates: usize,
    /// The shortest list a retriever returns before fusion, whatever the
    /// limit. Score fusion counts a document a list did not reach as 0 from
    /// that list, so short lists changed the order of the top hits: on
    /// code-QA a `search -n 5` (lists of 20) scored MRR 0.868 / chunk hit@5
    /// 0.781 where lists of 200 score 0.895 / 0.836 (BENCHMARKS.md, "The
    /// depth a search ranks at").
    pub min_candidates: usize,
    /// BM25 weight of the breadcrumb column.
    pub bm25_breadcrumb_weight: f64,
    /// BM25 weight of the text column.
    pub bm25_text_weight: f64,
    /// How the lists are fused: `score` (each list's scores over its best,
    /// weighted, summed; the default), `rrf` (reciprocal rank fusion,
    /// k = 60) or `weighted` (each list min–max normalised, weighted by
    /// `weighted_bm25` and `weighted_vector`, summed: the ch4p design's
    /// hybrid score). Score fusion keeps how far ahead a list's first places
    /// are: SciFact nDCG@10 0.7083 → 0.73, LoCoMo 0.8092 → 0.83; weighted
    /// against both in BENCHMARKS.md, "Weighted fusion".
    pub fusion: cairn_search::FusionMethod,
    /// BM25's weight when `fusion = "weighted"` (the ch4p default 0.4).
    pub weighted_bm25: f64,
    /// The vectors' weight when `fusion = "weighted"` (the ch4p default 0.6).
    pub weighted_vector: f64,
    /// Weight of BM25's list in the fusion.
    pub bm25_weight: f64,
    /// Weight of the vector list in the fusion. 0.8, chosen on code-QA's
    /// tuning half with each project indexed alone (MRR 0.4: 0.8573, 0.5:
    /// 0.8662, 0.7: 0.8796, 0.8: 0.8832, 1.0: 0.8856, 1.3: 0.8814) as the
    /// largest weight that keeps SciFact and LoCoMo from falling (at 1.0:
    /// nDCG@10 0.7340 → 0.7300, session R@5 0.8973 → 0.8950; at 0.8: 0.7401
    /// and 0.8988). MiniLM is the weaker retriever alone on those sets, but
    /// what it finds that BM25 misses is worth more than half a vote.
    pub vector_weight: f64,
    /// Weight of the graph list in the fusion (0 turns it off), for a query
    /// whose named entity is specific; a query naming none gets half of it
    /// (see `search/retrieve.rs`). 0.4, chosen on code-QA's tuning half of
    /// 262 questions (0.5: MRR 0.8491, 0.4: 0.8547, 0.3: 0.8517), where the
    /// graph fixture keeps its 0.4448 (0.3: 0.4375), SciFact's train split
    /// 0.7439 → 0.7429 and LoCoMo R@5 0.8981 → 0.8987; at 1.0 the graph cost
    /// LoCoMo nDCG@10 0.026 and code-QA hit@1 0.04 (BENCHMARKS.md, "Code
    /// QA").
    pub graph_weight: f64,
    /// Weight of the names retriever's list (0 turns it off): the
    /// definitions and files a query names by name, path, module or
    /// traceback frame, looked up exactly (`cairn_search::names_list`);
    /// twice this when the whole query is one name. 2, chosen on SWE-bench
    /// Lite's tuning half (58 issues; Acc@5 / MRR@10 at 0.5: 0.793 / 0.628,
    /// 1: 0.793 / 0.638, 2: 0.810 / 0.641): BENCHMARKS.md, "SWE-bench Lite".
    pub names_weight: f64,
    /// The names retriever's weight for a query that is neither one name
    /// nor an issue pasted whole: a question in words that names a thing or
    /// two ("how does `par_iter` split the work"). 0.75, chosen on
    /// code-QA's tuning half (MRR@10 with 2, the weight before: 0.8520; 1.5:
    /// 0.8539; 1: 0.8577; 0.75: 0.8596), where SciFact and LoCoMo are the
    /// same at every weight (their questions name nothing the names
    /// retriever finds). An issue keeps `names_weight`, chosen on SWE-bench
    /// Lite, and a lone name twice that.
    pub question_names_weight: f64,
    /// A query longer than one window of the embedding model (about 1,000
    /// characters: MiniLM reads 256 tokens) is embedded as up to this many
    /// windows of its lines, their vectors averaged, so an issue's vector
    /// is not its first paragraph's alone; 1 = the first window only (at
    /// most 8).
    pub query_windows: usize,
    /// Chunks one file may show among the results when they are different
    /// parts of it (no shared lines, another heading); 1 = one per file.
    /// 3: on code-QA chunk hit@5 0.849 with 2, 0.863 with 3, file ranks the
    /// same; the first 10 hits then hold 6.2 files on average instead of 7.2
    /// (BENCHMARKS.md, issue 18).
    pub sections_per_file: usize,
    /// Restart probability of Personalized PageRank (0.15–0.5): higher keeps
    /// the walk closer to the seeds.
    pub graph_restart: f32,
    /// Top chunks of BM25 and of the vectors that seed the graph walk.
    pub graph_seeds: usize,
    /// Multiplies the fused score of documentation hits.
    pub doc_weight: f64,
    /// Multiplies the fused score of documentation hits when the query is
    /// an issue pasted whole (300 characters or more over three lines or
    /// more: a bug report wants the code to change).
    pub issue_doc_weight: f64,
    /// Multiplies the fused score of memory hits.
    pub memory_weight: f64,
    /// Multiplies the fused score of code hits.
    pub code_weight: f64,
    /// Multiplies the score of a document whose title or heading states a
    /// date inside the span a query names ("what did we decide in May
    /// 2023", "before June"): 1 = off, the default until LoCoMo's temporal
    /// questions measure a factor. Memories are weighed by recall.
    pub time_factor: f64,
    /// A search leaves out hits whose score is below this (0 = off): an
    /// absolute floor in fused-score units (a list's first place is worth
    /// its weight: 1 for BM25, 0.8 for vectors, 0.4 for the graph). Off by
    /// default: the best score depends on which retrievers ran (0.8 for
    /// vectors alone, 1 for BM25 alone, up to 2.2 for all three), and up to
    /// 0.05 it drops nothing on any labelled set (BENCHMARKS.md).
    pub min_score: f64,
    /// A search leaves out hits scoring below this share of the best hit's
    /// score (0 = off). 0.05: score fusion spreads scores far more than RRF
    /// did, and a hit only the graph reaches (code behind the doc that names
    /// it) scores under a tenth of the best; 0.05 drops none of the relevant
    /// hits in the first 10 of SciFact, LoCoMo and code-QA and one of the
    /// graph fixture's 20, 0.1 drops two (BENCHMARKS.md, "Relevance floors").
    pub relative_floor: f64,
    /// An answer is *confident* when one of its hits is at least this
    /// close to the query (cosine similarity of the embedding model to the
    /// hit's best chunk); under it, search and recall say that nothing is
    /// close in meaning (MCP: `confident: false` and a note). Unlike scores,
    /// which are shares of the best hit of the same query, a similarity
    /// compares across queries. 0.4, the prompt hook's measured floor:
    /// BENCHMARKS.md, "Relevance you can trust".
    pub confident_similarity: f64,
    /// Rerank the top of every search with the cross-encoder
    /// ms-marco-MiniLM-L-12-v2 (`ms-marco-minilm-l12-v2-int8dq`, fetched on
    /// first use like the embedding model); `cairn search --rerank` and the
    /// MCP `rerank` argument ask for it per search. Off by default: on
    /// code-QA's tuning half it lowered MRR@10 with every k and blend
    /// measured, at seconds a search; it lifts LoCoMo (docs/ranking.md).
    pub rerank: bool,
    /// How many of the fused top the reranker reads (1–100).
    pub rerank_k: usize,
    /// The reranker's time budget per search, ms (1–60000): it scores five
    /// candidates at a time and stops before a step that would run past
    /// the budget; the rest keep their fused order (`--explain` says so).
    pub rerank_budget_ms: u64,
    /// How the reranker's order meets the fused one: `rerank` (its order
    /// alone) or `rrf` (reciprocal rank fusion of both orders, k = 60).
    /// `rrf`: on code-QA's tuning half the reranker's order alone cost MRR
    /// 0.909 → 0.822 at k = 20, the blend 0.909 → 0.898 (docs/ranking.md).
    pub rerank_blend: cairn_search::RerankBlend,
    /// The reranker's linear layers in `fp32` (default), `int8` (per-column
    /// int8 weights, per-row activations, as `[embed] precision`) or
    /// `auto` (the faster on this CPU); its pooler and classifier stay
    /// f32. Scores only, nothing stored: a change needs no re-index.
    pub rerank_precision: EmbedPrecision,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            limit: 5,
            candidates: 4,
            min_candidates: 200,
            bm25_breadcrumb_weight: 1.0,
            bm25_text_weight: 1.0,
            fusion: cairn_search::FusionMethod::Score,
            weighted_bm25: 0.4,
            weighted_vector: 0.6,
            bm25_weight: 1.0,
            vector_weight: 0.8,
            graph_weight: 0.4,
            names_weight: 2.0,
            question_names_weight: 0.75,
            query_windows: 1,
            sections_per_file: 3,
            graph_restart: 0.3,
            graph_seeds: 5,
            doc_weight: 1.0,
            issue_doc_weight: 0.5,
            memory_weight: 1.0,
            code_weight: 1.0,
            time_factor: 1.0,
            min_score: 0.0,
            relative_floor: 0.05,
            confident_similarity: crate::confidence::CONFIDENT_SIMILARITY,
            rerank: false,
            rerank_k: 20,
            rerank_budget_ms: 5_000,
            rerank_blend: cairn_search::RerankBlend::Rrf,
            rerank_precision: EmbedPrecision::Fp32,
        }
    }
}

/// Where a setting's value came from, lowest layer first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Source {
    /// Built in.
    Default,
    /// The user's config file.
    User(PathBuf),
    /// The project's `cairn.toml`.
    Project(PathBuf),
    /// An environment variable.
    Env(String),
    /// A command-line `--set`.
    Flag,
    /// Built in for the model `[embed] model` names
    /// ([`cairn_embed::ModelSpec::vector_weight`]).
    Model(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::User(p) => write!(f, "user file {}", p.display()),
            Source::Project(p) => write!(f, "project file {}", p.display()),
            Source::Env(v) => write!(f, "environment {v}"),
            Source::Flag => write!(f, "--set"),
            Source::Model(m) => write!(f, "default for {m}"),
        }
    }
}

/// The layers to read, beside built-in defaults.
#[derive(Clone, Debug, Default)]
pub struct Layers {
    /// The user file (`None`: no user layer).
    pub user_file: Option<PathBuf>,
    /// `CAIRN_<SECTION>_<KEY>` variables (others are ignored).
    pub env: Vec<(String, String)>,
    /// `section.key=value` settings from the command line.
    pub sets: Vec<String>,
}

impl Layers {
    /// The real layers: `$CAIRN_CONFIG` (a file, or `none`), else
    /// `$XDG_CONFIG_HOME/cairn/config.toml`, else `~/.config/cairn/config.toml`;
    /// this process's environment; and the given `--set` values.
    pub fn from_env(sets: Vec<String>) -> Layers {
        let user_file = match std::env::var_os("CAIRN_CONFIG") {
            Some(v) if v == "none" || v.is_empty() => None,
            Some(v) => Some(PathBuf::from(v)),
            None => std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
                .map(|d| d.join("cairn").join("config.toml")),
        };
        Layers {
            user_file,
            env: std::env::vars().collect(),
            sets,
        }
    }
}

/// The effective value of every setting and the layer it came from.
pub type Sources = Vec<(String, toml::Value, Source)>;

/// Levenshtein distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The known key nearest to `key` (within 3 edits), for error messages.
fn nearest<'a>(key: &str, known: impl Iterator<Item = &'a String>) -> Option<&'a String> {
    known
        .map(|k| (distance(key, k), k))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, k)| k)
}

/// Dotted paths of every leaf of a table (`search.limit`, `memory.weights.recency`).
fn leaves(table: &toml::Table, prefix: &str, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in table {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => leaves(t, &path, out),
            other => out.push((path, other.clone())),
        }
    }
}

/// Sets `path` in `table`, refusing paths the defaults do not have.
fn set_path(
    table: &mut toml::Table,
    known: &[String],
    path: &str,
    value: toml::Value,
    what: &str,
) -> Result<()> {
    if !known.iter().any(|k| k == path) {
        let hint = nearest(path, known.iter())
            .map(|k| format!("; did you mean {k}?"))
            .unwrap_or_default();
        return Err(Error::Config {
            path: PathBuf::from(what),
            message: format!("unknown setting {path}{hint}"),
        });
    }
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().unwrap_or_default();
    let mut t = table;
    for p in parts {
        t = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| Error::Config {
                path: PathBuf::from(what),
                message: format!("{p} is not a section"),
            })?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

/// A value given as text (env or `--set`): TOML when it parses as a TOML
/// value (`7`, `0.5`, `true`, `["docs"]`), else a string.
fn text_value(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// Settings a project file may not change: a committed file must not send
/// this user's data, or the user's key, somewhere else.
const USER_ONLY: &[&str] = &[
    "llm.base_url",
    "llm.api_key_env",
    "llm.provider",
    "embed.provider",
    "embed.base_url",
    "embed.api_key_env",
    "store.uri",
    "memory.personal",
];

impl Config {
    /// The effective configuration of a project: defaults < user file <
    /// `<root>/cairn.toml` < `CAIRN_*` environment < `--set`.
    pub fn load(root: &Path) -> Result<Config> {
        Ok(Config::load_layers(root, &Layers::from_env(Vec::new()))?.0)
    }

    /// [`Config::load`] from explicit layers, with where each value came from.
    pub fn load_layers(root: &Path, layers: &Layers) -> Result<(Config, Sources)> {
        let mut m = Merge::new()?;
        if let Some(user) = &layers.user_file {
            m.file(user, Source::User(user.clone()))?;
        }
        let project = crate::paths::config_file(root);
        m.file(&project, Source::Project(project.clone()))?;
        m.env(&layers.env)?;
        m.sets(&layers.sets)?;
        m.check_provider()?;
        m.model_defaults();
        let config = m.config()?;
        m.check_floors(&config)?;
        m.check_rerank(&config)?;
        Ok((config, m.sources()))
    }
}

/// The layers of a configuration merged into one table, with where each
/// value came from.
struct Merge {
    defaults: toml::Table,
    known_keys: Vec<String>,
    merged: toml::Table,
    sources: std::collections::BTreeMap<String, Source>,
}

impl Merge {
    /// The defaults alone.
    fn new() -> Result<Merge> {
        let defaults = toml::Table::try_from(Config::default()).map_err(|e| Error::Config {
            path: PathBuf::from("defaults"),
            message: e.to_string(),
        })?;
        let mut known = Vec::new();
        leaves(&defaults, "", &mut known);
        let known_keys: Vec<String> = known.iter().map(|(k, _)| k.clone()).collect();
        let sources = known_keys
            .iter()
            .map(|k| (k.clone(), Source::Default))
            .collect();
        Ok(Merge {
            merged: defaults.clone(),
            defaults,
            known_keys,
            sources,
        })
    }

    /// The settings of a file (none when it does not exist); a project
    /// file may not set [`USER_ONLY`] settings.
    fn file(&mut self, path: &Path, source: Source) -> Result<()> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(Error::Io {
                    path: path.to_path_buf(),
                    source: e,
                });
            }
        };
        let table: toml::Table = toml::from_str(&text).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut set = Vec::new();
        leaves(&table, "", &mut set);
        for (key, value) in set {
            if matches!(source, Source::Project(_)) && USER_ONLY.contains(&key.as_str()) {
                return Err(Error::Config {
                    path: path.to_path_buf(),
                    message: format!(
                        "{key} may only be set in the user config file or the environment, \
                         not in a project file (which is often committed and shared)"
                    ),
                });
            }
            set_path(
                &mut self.merged,
                &self.known_keys,
                &key,
                value,
                &path.to_string_lossy(),
            )?;
            self.sources.insert(key, source.clone());
        }
        Ok(())
    }

    /// `CAIRN_<SECTION>_<KEY>`: the section must be one of ours; the rest
    /// of the name, lower-cased, names the key (`_` may also separate a
    /// nested table: CAIRN_MEMORY_WEIGHTS_RECENCY).
    fn env(&mut self, env: &[(String, String)]) -> Result<()> {
        let sections: Vec<String> = self.defaults.keys().cloned().collect();
        let mut env: Vec<&(String, String)> = env.iter().collect();
        env.sort();
        for (name, value) in env {
            let Some(rest) = name.strip_prefix("CAIRN_") else {
                continue;
            };
            let lower = rest.to_ascii_lowercase();
            let Some(section) = sections
                .iter()
                .find(|s| lower.starts_with(&format!("{s}_")))
            else {
                continue;
            };
            let tail = &lower[section.len() + 1..];
            let key = self
                .known_keys
                .iter()
                .find(|k| {
                    k.strip_prefix(&format!("{section}."))
                        .is_some_and(|k| k.replace('.', "_") == tail)
                })
                .cloned()
                .unwrap_or_else(|| format!("{section}.{tail}"));
            set_path(
                &mut self.merged,
                &self.known_keys,
                &key,
                text_value(value),
                name,
            )?;
            self.sources.insert(key, Source::Env(name.clone()));
        }
        Ok(())
    }

    /// `--set section.key=value`, each.
    fn sets(&mut self, sets: &[String]) -> Result<()> {
        for set in sets {
            let (key, value) = set.split_once('=').ok_or_else(|| Error::Config {
                path: PathBuf::from("--set"),
                message: format!("{set:?}: use section.key=value"),
            })?;
            let key = key.trim().to_string();
            set_path(
                &mut self.merged,
                &self.known_keys,
                &key,
                text_value(value.trim()),
                "--set",
            )?;
            self.sources.insert(key, Source::Flag);
        }
        Ok(())
    }

    /// Where `key`'s value came from.
    fn source_of(&self, key: &str) -> Source {
        self.sources.get(key).cloned().unwrap_or(Source::Default)
    }

    /// `[embed] provider` read here, with the file (or variable) that set
    /// it: the toml error of [`Merge::config`] would name only the last
    /// layer read.
    fn check_provider(&self) -> Result<()> {
        if let Some(name) = self
            .merged
            .get("embed")
            .and_then(|e| e.get("provider"))
            .and_then(toml::Value::as_str)
            && let Err(e) = name.parse::<EmbedProvider>()
        {
            return Err(Error::Config {
                path: PathBuf::from(self.source_of("embed.provider").to_string()),
                message: e.to_string(),
            });
        }
        Ok(())
    }

    /// Settings the model `[embed] model` names is tuned to
    /// ([`cairn_embed::ModelSpec::vector_weight`]), where every layer left
    /// them at the built-in default. The weight was tuned for score fusion
    /// and applies only to it: under RRF bge's 4.0 cost the tuning half
    /// 0.028 MRR against 0.8.
    fn model_defaults(&mut self) {
        let fusion = self
            .merged
            .get("search")
            .and_then(|s| s.get("fusion"))
            .and_then(|f| f.as_str());
        if self.source_of("search.vector_weight") != Source::Default || fusion != Some("score") {
            return;
        }
        let model = self
            .merged
            .get("embed")
            .and_then(|e| e.get("model"))
            .and_then(|m| m.as_str())
            .and_then(cairn_embed::ModelSpec::named);
        let Some((name, weight)) = model.and_then(|m| Some((m.name, m.vector_weight?))) else {
            return;
        };
        if let Some(toml::Value::Table(search)) = self.merged.get_mut("search") {
            search.insert("vector_weight".into(), toml::Value::Float(weight));
            self.sources
                .insert("search.vector_weight".into(), Source::Model(name.into()));
        }
    }

    /// The merged table as a [`Config`].
    fn config(&self) -> Result<Config> {
        self.merged
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| {
                let who = self
                    .sources
                    .iter()
                    .filter(|(_, s)| **s != Source::Default)
                    .map(|(_, s)| s.to_string())
                    .collect::<Vec<_>>();
                Error::Config {
                    path: PathBuf::from(who.last().cloned().unwrap_or_else(|| "defaults".into())),
                    message: e.to_string(),
                }
            })
    }

    /// `[search] rerank_k` and `rerank_budget_ms` within their bounds.
    fn check_rerank(&self, config: &Config) -> Result<()> {
        let s = &config.search;
        let bad = if !(1..=crate::limits::MAX_RERANK_K).contains(&s.rerank_k) {
            Some((
                "search.rerank_k",
                format!(
                    "[search] rerank_k = {}: give 1 to {}",
                    s.rerank_k,
                    crate::limits::MAX_RERANK_K
                ),
            ))
        } else if !(1..=crate::limits::MAX_RERANK_BUDGET_MS).contains(&s.rerank_budget_ms) {
            Some((
                "search.rerank_budget_ms",
                format!(
                    "[search] rerank_budget_ms = {}: give 1 to {}",
                    s.rerank_budget_ms,
                    crate::limits::MAX_RERANK_BUDGET_MS
                ),
            ))
        } else {
            None
        };
        match bad {
            Some((setting, message)) => Err(Error::Config {
                path: PathBuf::from(self.source_of(setting).to_string()),
                message,
            }),
            None => Ok(()),
        }
    }

    /// The relevance floors of `[search]` and `[memory]`, checked.
    fn check_floors(&self, config: &Config) -> Result<()> {
        for (key, min_score, relative) in [
            (
                "search",
                config.search.min_score,
                config.search.relative_floor,
            ),
            (
                "memory",
                config.memory.min_score,
                config.memory.relative_floor,
            ),
        ] {
            if let Err(e) = cairn_search::Floor::new(min_score, relative) {
                let setting = match e {
                    cairn_search::FloorError::MinScore(_) => format!("{key}.min_score"),
                    _ => format!("{key}.relative_floor"),
                };
                let from = self.source_of(&setting);
                return Err(Error::Config {
                    path: PathBuf::from(from.to_string()),
                    message: format!("[{key}] {e}"),
                });
            }
        }
        Ok(())
    }

    /// Every setting with its value and where it came from.
    fn sources(&self) -> Sources {
        let mut values = Vec::new();
        leaves(&self.merged, "", &mut values);
        values
            .into_iter()
            .map(|(k, v)| {
                let s = self.source_of(&k);
                (k, v, s)
            })
            .collect()
    }
}

/// The project a folder belongs to: the nearest ancestor holding `cairn.toml`
/// or an index or memories in `.cairn/`, else the nearest holding `.git`,
/// else the folder itself.
pub fn find_project_root(start: &Path) -> PathBuf {
    let start = start.canonicalize().unwrap_or_else(|_| start.to_path_buf());
    // The nearest folder that is a cairn project already: its `cairn.toml`,
    // or the index or memories in its `.cairn/` (a project outside git,
    // searched from a subfolder, is found rather than indexed again there).
    let is_project = |d: &Path| {
        crate::paths::config_file(d).exists()
            || crate::paths::index_file(d).is_file()
            || crate::paths::memory_dir(d).is_dir()
    };
    if let Some(dir) = start.ancestors().find(|d| is_project(d)) {
        return dir.to_path_buf();
    }
    if let Some(dir) = start.ancestors().find(|d| d.join(".git").exists()) {
        return dir.to_path_buf();
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layers(user: Option<&Path>, env: &[(&str, &str)], sets: &[&str]) -> Layers {
        Layers {
            user_file: user.map(Path::to_path_buf),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            sets: sets.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn source_of<'a>(sources: &'a Sources, key: &str) -> &'a Source {
        &sources.iter().find(|(k, _, _)| k == key).unwrap().2
    }

    /// bge-small brings its own vector weight; MiniLM keeps the built-in
    /// one; any layer that sets the weight wins over the model's.
    #[test]
    fn a_model_brings_its_vector_weight_and_a_layer_still_wins() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let spec = cairn_embed::ModelSpec::BGE_SMALL_EN_V15_INT8DQ;
        let (bge, weight) = (
            spec.name,
            spec.vector_weight.expect("bge has its own weight"),
        );
        let (c, s) = Config::load_layers(root, &layers(None, &[], &[])).unwrap();
        assert_eq!(c.search.vector_weight, 0.8);
        assert_eq!(source_of(&s, "search.vector_weight"), &Source::Default);
        let set_model = format!("embed.model={bge}");
        let (c, s) = Config::load_layers(root, &layers(None, &[], &[set_model.as_str()])).unwrap();
        assert_eq!(c.search.vector_weight, weight);
        assert_eq!(
            source_of(&s, "search.vector_weight"),
            &Source::Model(bge.into())
        );
        // Tuned for score fusion: RRF keeps the built-in weight.
        let (c, s) = Config::load_layers(
            root,
            &layers(None, &[], &[set_model.as_str(), "search.fusion=rrf"]),
        )
        .unwrap();
        assert_eq!(c.search.vector_weight, 0.8);
        assert_eq!(source_of(&s, "search.vector_weight"), &Source::Default);
        std::fs::write(
            root.join("cairn.toml"),
            format!("[embed]\nmodel = \"{bge}\"\n[search]\nvector_weight = 1.1\n"),
        )
        .unwrap();
        let (c, s) = Config::load_layers(root, &layers(None, &[], &[])).unwrap();
        assert_eq!(c.search.vector_weight, 1.1);
        assert_eq!(
            source_of(&s, "search.vector_weight"),
            &Source::Project(root.join("cairn.toml"))
        );
    }

    #[test]
    fn each_layer_overrides_the_one_below() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let user = root.join("user.toml");
        std::fs::write(
            &user,
            "[search]\nlimit = 6\ncandidates = 6\nbm25_weight = 6.0\nvector_weight = 0.6\n",
        )
        .unwrap();
        std::fs::write(
            root.join("cairn.toml"),
            "[search]\ncandidates = 7\nbm25_weight = 7.0\nvector_weight = 0.7\n",
        )
        .unwrap();
        let env = [
            ("CAIRN_SEARCH_BM25_WEIGHT", "8"),
            ("CAIRN_SEARCH_VECTOR_WEIGHT", "0.8"),
            ("CAIRN_MEMORY_WEIGHTS_RECENCY", "0.25"),
            ("CAIRN_CACHE_DIR", "/elsewhere"),
            ("PATH", "/bin"),
        ];
        let (c, s) = Config::load_layers(
            root,
            &layers(Some(&user), &env, &["search.vector_weight=0.9"]),
        )
        .unwrap();
        assert_eq!(c.search.limit, 6);
        assert_eq!(c.search.candidates, 7);
        assert_eq!(c.search.bm25_weight, 8.0);
        assert_eq!(c.search.vector_weight, 0.9);
        assert_eq!(c.memory.weights.recency, 0.25);
        assert_eq!(c.chunk.max_chars, 1500);
        assert_eq!(source_of(&s, "chunk.max_chars"), &Source::Default);
        assert_eq!(source_of(&s, "search.limit"), &Source::User(user.clone()));
        assert_eq!(
            source_of(&s, "search.candidates"),
            &Source::Project(root.join("cairn.toml"))
        );
        assert_eq!(
            source_of(&s, "search.bm25_weight"),
            &Source::Env("CAIRN_SEARCH_BM25_WEIGHT".into())
        );
        assert_eq!(source_of(&s, "search.vector_weight"), &Source::Flag);
        // Strings and lists from the environment and flags.
        let (c, _) = Config::load_layers(
            root,
            &layers(
                None,
                &[("CAIRN_EMBED_MODEL", "none")],
                &["index.roots=[\"docs\", \"notes\"]"],
            ),
        )
        .unwrap();
        assert_eq!(c.embed.model, "none");
        assert_eq!(c.index.roots, ["docs", "notes"]);
    }

    #[test]
    fn a_project_file_may_not_redirect_the_model_endpoint_or_key() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("cairn.toml"),
            "[llm]\nbase_url = \"https://evil.example/v1\"\n",
        )
        .unwrap();
        let err = Config::load_layers(root, &layers(None, &[], &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("llm.base_url may only be set in the user config file"),
            "{err}"
        );
        // The user file and the environment may.
        std::fs::write(root.join("cairn.toml"), "[llm]\nmodel = \"small\"\n").unwrap();
        let user = root.join("user.toml");
        std::fs::write(
            &user,
            "[llm]\nprovider = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\n",
        )
        .unwrap();
        let (c, _) = Config::load_layers(
            root,
            &layers(Some(&user), &[("CAIRN_LLM_API_KEY_ENV", "MY_KEY")], &[]),
        )
        .unwrap();
        assert_eq!(
            (
                c.llm.provider.as_str(),
                c.llm.base_url.as_str(),
                c.llm.model.as_str(),
                c.llm.api_key_env.as_str()
            ),
            ("openai", "http://localhost:11434/v1", "small", "MY_KEY")
        );
    }

    #[test]
    fn the_embed_provider_is_read_when_the_configuration_loads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let user = root.join("user.toml");
        std::fs::write(&user, "[embed]\nprovider = \"cohere\"\n").unwrap();
        let err = Config::load_layers(root, &layers(Some(&user), &[], &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("user.toml")
                && err.contains("unknown [embed] provider \"cohere\"")
                && err.contains("ollama"),
            "{err}"
        );
        std::fs::write(&user, "[embed]\nprovider = \"ollama\"\n").unwrap();
        let (c, sources) = Config::load_layers(root, &layers(Some(&user), &[], &[])).unwrap();
        assert_eq!(
            c.embed.provider,
            EmbedProvider::Remote(cairn_llm::EmbedApi::Ollama)
        );
        // Shown and written back as the name it was given.
        let shown = sources.iter().find(|(k, _, _)| k == "embed.provider");
        assert_eq!(
            shown.map(|(_, v, _)| v.as_str()),
            Some(Some("ollama")),
            "{sources:?}"
        );
        let (c, _) = Config::load_layers(
            root,
            &layers(None, &[("CAIRN_EMBED_PROVIDER", "none")], &[]),
        )
        .unwrap();
        assert_eq!(c.embed.provider, EmbedProvider::None);
        assert_eq!(Config::default().embed.provider, EmbedProvider::Local);
        assert_eq!("".parse::<EmbedProvider>(), Ok(EmbedProvider::Local));
    }

    #[test]
    fn unknown_settings_name_the_nearest_valid_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let err = Config::load_layers(root, &layers(None, &[("CAIRN_SEARCH_LIMT", "3")], &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("CAIRN_SEARCH_LIMT") && err.contains("did you mean search.limit"),
            "{err}"
        );
        let err = Config::load_layers(root, &layers(None, &[], &["serch.limit=3"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean search.limit"), "{err}");
        let err = Config::load_layers(root, &layers(None, &[], &["search.limit=lots"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("limit"), "{err}");
        std::fs::write(
            root.join("cairn.toml"),
            "[memory]\nduplicate_treshold = 0.9\n",
        )
        .unwrap();
        let err = Config::load_layers(root, &layers(None, &[], &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cairn.toml") && err.contains("did you mean memory.duplicate_threshold"),
            "{err}"
        );
    }

    #[test]
    fn relevance_floors_parse_from_every_layer_and_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("cairn.toml"),
            "[search]\nmin_score = 0.01\nrelative_floor = 0.4\n[memory]\nrelative_floor = 0.3\n",
        )
        .unwrap();
        let (c, s) = Config::load_layers(
            root,
            &layers(
                None,
                &[("CAIRN_MEMORY_MIN_SCORE", "0.005")],
                &["search.relative_floor=0.6"],
            ),
        )
        .unwrap();
        assert_eq!((c.search.min_score, c.search.relative_floor), (0.01, 0.6));
        assert_eq!((c.memory.min_score, c.memory.relative_floor), (0.005, 0.3));
        assert_eq!(source_of(&s, "search.relative_floor"), &Source::Flag);
        assert_eq!(
            source_of(&s, "memory.min_score"),
            &Source::Env("CAIRN_MEMORY_MIN_SCORE".into())
        );
        // Out of range: refused, naming the setting and where it came from.
        std::fs::write(root.join("cairn.toml"), "[search]\nrelative_floor = 1.5\n").unwrap();
        let err = Config::load_layers(root, &layers(None, &[], &[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cairn.toml") && err.contains("[search] relative_floor 1.5"),
            "{err}"
        );
        std::fs::write(root.join("cairn.toml"), "").unwrap();
        let err = Config::load_layers(root, &layers(None, &[], &["memory.min_score=-0.1"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--set") && err.contains("[memory] min_score -0.1"),
            "{err}"
        );
    }

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

        // Outside git: the nearest folder with an index (or memories) in
        // its .cairn/, not the folder the command runs in.
        std::fs::create_dir_all(root.join("plain/.cairn")).unwrap();
        std::fs::create_dir_all(root.join("plain/docs/deep")).unwrap();
        assert_eq!(
            find_project_root(&root.join("plain/docs/deep")),
            root.join("plain/docs/deep"),
            "an empty .cairn/ is no project"
        );
        std::fs::write(root.join("plain/.cairn/index.sqlite"), b"").unwrap();
        assert_eq!(
            find_project_root(&root.join("plain/docs/deep")),
            root.join("plain")
        );
    }
}
