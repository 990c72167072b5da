//! The command line as clap sees it: every command, subcommand and flag.
//! What each command does lives in `commands/`.

use std::net::SocketAddr;
use std::path::PathBuf;

use cairn::Mode;
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "Local-first memory and knowledge base for AI coding agents"
)]
pub(crate) struct Cli {
    /// Less output: no progress bars, errors only.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    /// More log output on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Project folder, or the name of a project `cairn projects` lists (default: found from the current folder: cairn.toml or an existing .cairn/, else git root, else here). `search` takes several (repeat it).
    #[arg(short = 'C', long, global = true, value_name = "DIR|NAME", action = clap::ArgAction::Append)]
    pub(crate) project: Vec<PathBuf>,
    /// Override a setting for this run: section.key=value (repeatable; see `cairn config show`).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
    /// The index backend for this run: postgres://user@host/db (default: the
    /// project's SQLite file; also `[store] uri` in the user file or
    /// CAIRN_STORE_URI).
    #[arg(long, global = true, value_name = "URI")]
    pub(crate) store: Option<String>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Index docs, code and memories: scan, chunk, store (BM25 answers at once), embed, link the graph; incremental on re-run.
    Index(IndexArgs),
    /// Search the index (BM25, vectors and the graph, fused)
    Search(SearchArgs),
    /// Write the index and the memory files as JSON Lines (stdout, or -o).
    Export(ExportArgs),
    /// Read an export (a file, or - for stdin): memory files are written
    /// back, documents and vectors go into the index. Every line is checked
    /// first: a path out of the project is refused and nothing is written.
    Import(ImportArgs),
    /// The knowledge graph: neighbours of an entity, paths, communities.
    Graph {
        #[command(subcommand)]
        action: GraphAction,
    },
    /// Files, chunks, embedded chunks, model, index size, last index time.
    Status(StatusArgs),
    /// Score search on a labelled set (corpus/, queries.jsonl, qrels.tsv).
    Eval(EvalArgs),
    /// Store a memory (a markdown file under .cairn/memory/); a near-duplicate
    /// of the same type is updated instead.
    Remember(RememberArgs),
    /// Recall memories: hybrid search blended with importance, recency and use.
    Recall(RecallArgs),
    /// Forget a memory, or every memory matching --type/--tag/--before/--expired
    /// (moved to .cairn/trash/; `cairn undo` brings one back).
    Forget(ForgetArgs),
    /// Change a memory: its text, type, importance, tags or expiry
    /// (--dry-run shows the result without writing it).
    Update(UpdateArgs),
    /// Revert the last memory change (store, update, forget).
    Undo(UndoArgs),
    /// A search hit in full: its doc section or enclosing code definition,
    /// cut at a line to --max-tokens.
    Expand(ExpandArgs),
    /// Why is this code like this: the commits that introduced and changed
    /// a symbol or a file (path[:line] picks the definition holding the
    /// line), newest first, with their messages and the memories anchored
    /// to the same code (`[history]`).
    Why(WhyArgs),
    /// Keep the index up to date as files change (the watcher of `serve
    /// --watch`, without a server) until interrupted.
    Watch(WatchArgs),
    /// The audit log of memory changes, newest last.
    Log(LogArgs),
    /// The projects `cairn index` registered (name, identity, folder), for
    /// `--project NAME` and searches over several projects.
    Projects(ProjectsArgs),
    /// Run by an agent's hook: capture the new turns of its session into the
    /// daily session log. Always exits 0 (hooks fail open); health goes to
    /// .cairn/hooks/health.json.
    #[command(hide = true)]
    Hook(HookArgs),
    /// Wire capture into a client's hook configuration.
    Hooks {
        #[command(subcommand)]
        action: HooksAction,
    },
    /// Summarise recent memories with the configured language model into
    /// today's session log.
    Compact(CompactArgs),
    /// The original turns of a captured session (around --turn).
    Transcript(TranscriptArgs),
    /// Serve the project to AI assistants over MCP (stdio by default).
    ///
    /// Over stdio, every client attaches to one shared background process per
    /// project (started when absent, gone after --idle-timeout without clients).
    Serve(ServeArgs),
    /// The web page: search, memories, graph and health in a browser
    /// (loopback only, served by the project's daemon; also at / of
    /// `serve --http`).
    Ui(UiArgs),
    /// Wire an agent to cairn in one step: its MCP server and, for Claude
    /// Code, Codex and OpenCode, session capture and memory injection. Into
    /// your own settings by default (Claude Code: .claude/settings.local.json
    /// and ~/.claude.json; project files kept out of git in
    /// .git/info/exclude); --shared writes the project's shared files instead.
    Setup(SetupArgs),
    /// Set up an MCP client to use cairn.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Run the project's shared server process (started by `cairn serve`).
    #[command(hide = true)]
    Daemon(DaemonArgs),
    /// Check the model files, the index (schema, integrity, FTS) and the
    /// shared daemon; --vacuum also compacts the index.
    Doctor(DoctorArgs),
    /// The effective configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Manage the embedding model.
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
    /// Measure this machine.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand)]
pub(crate) enum GraphAction {
    /// What defines, calls, imports, mentions or relates to an entity (a
    /// symbol, a concept, or a file path; any naming convention).
    Neighbors {
        /// The entity.
        name: String,
        /// Most neighbours to show (0: all).
        #[arg(short = 'n', long, default_value_t = 40)]
        limit: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The shortest chain of links between two entities.
    Path {
        /// Start entity.
        from: String,
        /// End entity.
        to: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Clusters of related files and concepts (Leiden), labelled by their
    /// most central entities.
    Communities {
        /// Smallest community shown.
        #[arg(long, default_value_t = cairn_mcp::graph::MIN_COMMUNITY_SIZE)]
        min_size: usize,
        /// Most communities shown (0: all).
        #[arg(short = 'n', long, default_value_t = 30)]
        limit: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum HooksAction {
    /// Add cairn's hooks to the client: Claude Code's settings (capture at
    /// Stop and SessionEnd, recall without asking at SessionStart and
    /// UserPromptSubmit), Codex's notify, an OpenCode plugin (session.idle,
    /// session.compacted) or an OpenClaw hook (/new, /reset, /stop, compaction).
    Install {
        /// The client.
        #[arg(value_enum)]
        client: HookClient,
        /// Print the entry; write nothing.
        #[arg(long)]
        print: bool,
        /// Claude Code: write the project's shared `.claude/settings.json`
        /// (meant to be committed) instead of your own
        /// `.claude/settings.local.json`, as `cairn setup --shared` does.
        #[arg(long)]
        shared: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum ConfigAction {
    /// Every setting's effective value and the layer it came from
    /// (default < user file < cairn.toml < CAIRN_* environment < --set).
    Show {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum McpAction {
    /// Add cairn to a client's MCP configuration (other entries are kept).
    Install {
        /// The client.
        #[arg(value_enum)]
        client: McpClient,
        /// Print the entry and where it goes; write nothing.
        #[arg(long)]
        print: bool,
        /// Name of the server entry.
        #[arg(long, default_value = "cairn")]
        name: String,
        /// Write the project's shared file (Claude Code: `.mcp.json`;
        /// Cursor, VS Code: kept in git) instead of your own settings, as
        /// `cairn setup --shared` does.
        #[arg(long)]
        shared: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum ModelAction {
    /// Download the model files into the user cache (no-op when present).
    Fetch {
        /// Which model: an embedder as `[embed] model` names it,
        /// all-MiniLM-L6-v2 (the default) or bge-small-en-v1.5-int8dq; or the
        /// reranker, ms-marco-minilm-l12-v2-int8dq (`[search] rerank`).
        #[arg(long, default_value = "all-MiniLM-L6-v2")]
        model: String,
    },
    /// Where the model is, whether it loads, and which kernel path it runs on.
    Status {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
        /// Which model (as `[embed] model` names it, or the reranker
        /// ms-marco-minilm-l12-v2-int8dq).
        #[arg(long, default_value = "all-MiniLM-L6-v2")]
        model: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum BenchWhat {
    /// Embedding throughput on ~1,500-character prose chunks, and short-query latency.
    Embed {
        /// Chunks to embed.
        #[arg(long, default_value_t = 64)]
        chunks: usize,
        /// Characters per chunk.
        #[arg(long, default_value_t = 1500)]
        chars: usize,
        /// Embed the chunk texts of this index file (a project's
        /// `.cairn/index.sqlite`), each distinct text once as an index pass
        /// does, instead of synthetic prose; --chunks caps them (0 = all).
        #[arg(long, value_name = "FILE")]
        index: Option<PathBuf>,
        /// Embed the texts of this JSON file (an array of strings) instead,
        /// e.g. to time another runtime on the same inputs; --chunks caps
        /// them (0 = all).
        #[arg(long, value_name = "FILE", conflicts_with = "index")]
        texts: Option<PathBuf>,
        /// Only this kernel path (avx512, avx2, portable); default: every path this CPU runs.
        #[arg(long)]
        kernel: Option<String>,
        /// Which model (as `[embed] model` names it), at 256 tokens.
        #[arg(long, default_value = "all-MiniLM-L6-v2")]
        model: String,
        /// fp32, int8 (the linear layers in int8, on the integer path that
        /// goes with each kernel path) or both, one after the other.
        #[arg(long, default_value = "fp32")]
        precision: String,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// `recall` latency over N synthetic memories (query embedding included).
    Recall {
        /// Memories in the benchmark project (built once, then reused).
        #[arg(long, default_value_t = 10_000)]
        memories: usize,
        /// Recalls to time, each with a query new to the engine.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// MCP over stdio on this project: `cairn serve` start to `initialize`
    /// answered (own process and shared daemon), and `search` round trips.
    Mcp(BenchMcpArgs),
    /// The graph retriever (Personalized PageRank) and Leiden on a synthetic
    /// graph of N edges.
    Graph {
        /// Edges in the graph.
        #[arg(long, default_value_t = 100_000)]
        edges: usize,
        /// Queries to time.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Nearest-neighbour search at scale: N random unit vectors plus planted
    /// near-duplicates of each query vector, on the current store (SQLite:
    /// exact scan of the loaded matrix; with --store postgres://…: HNSW).
    /// The corpus is kept (SQLite: under the cache folder; PostgreSQL: project
    /// bench-vectors-<corpus>) so a second run with the same sizes only queries.
    Vectors {
        /// Vectors in the corpus.
        #[arg(long, default_value_t = 1_000_000)]
        vectors: usize,
        /// Query vectors.
        #[arg(long, default_value_t = 1_000)]
        queries: usize,
        /// Near-duplicates planted per query.
        #[arg(long, default_value_t = 10)]
        planted: usize,
        /// Vector length.
        #[arg(long, default_value_t = 384)]
        dim: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Concurrent writers on one shared store (needs --store postgres://…):
    /// P processes, each its own project folder (a machine) in one
    /// [store] project, each remembering M memories; then an audit for lost
    /// and doubled memories.
    Writers {
        /// Writer processes.
        #[arg(long, default_value_t = 8)]
        processes: usize,
        /// Memories per writer.
        #[arg(long, default_value_t = 500)]
        memories: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One writer of `bench writers` (started by it).
    #[command(hide = true)]
    Writer {
        /// This writer's number.
        #[arg(long)]
        writer: usize,
        /// Memories to remember.
        #[arg(long)]
        memories: usize,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ModeArg {
    Hybrid,
    Bm25,
    Vector,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Hybrid => Mode::Hybrid,
            ModeArg::Bm25 => Mode::Bm25,
            ModeArg::Vector => Mode::Vector,
        }
    }
}

#[derive(Args)]
pub(crate) struct IndexArgs {
    /// Folders or files to index (default: [index] roots of cairn.toml, else the project).
    pub(crate) paths: Vec<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct SearchArgs {
    /// What to look for, in plain words (or FTS5 syntax with --fts).
    pub(crate) query: String,
    /// Number of hits (1 or more, at most 1000 returned; default `[search] limit`).
    #[arg(short = 'n', long, value_parser = at_least_one)]
    pub(crate) limit: Option<usize>,
    /// The file being edited: chunks of the same domain get a ×1.3 boost.
    #[arg(long, value_name = "PATH")]
    pub(crate) current_file: Option<String>,
    /// Only files whose project-relative path starts with this.
    #[arg(long, value_name = "PREFIX")]
    pub(crate) path_prefix: Option<String>,
    /// Which retrievers to use.
    #[arg(long, value_enum, default_value_t = ModeArg::Hybrid)]
    pub(crate) mode: ModeArg,
    /// Pass the query to FTS5 as is (phrases, OR, NOT, prefix*, text:/breadcrumb:
    /// columns); BM25 only.
    #[arg(long)]
    pub(crate) fts: bool,
    /// Print hits as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Show each retriever's rank and contribution, each boost, and the
    /// graph path that brought a hit in.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Only these kinds of source: doc, code, memory, history (repeatable).
    #[arg(long, value_name = "KIND")]
    pub(crate) kind: Vec<String>,
    /// Leave the graph retriever out.
    #[arg(long)]
    pub(crate) no_graph: bool,
    /// Leave the names retriever out (definitions and files found by the
    /// names, paths and traceback frames in the query).
    #[arg(long)]
    pub(crate) no_names: bool,
    /// Leave out hits scoring below this (fused-score units; 0 = off; default
    /// `[search] min_score`).
    #[arg(long, value_name = "SCORE")]
    pub(crate) min_score: Option<f64>,
    /// Leave out hits scoring below this share of the best hit's score
    /// (0–1; 0 = off; default `[search] relative_floor`).
    #[arg(long, value_name = "SHARE")]
    pub(crate) relative_floor: Option<f64>,
    /// Rerank the top `[search] rerank_k` hits with the cross-encoder
    /// (default `[search] rerank`).
    #[arg(long, overrides_with = "no_rerank")]
    pub(crate) rerank: bool,
    /// Do not rerank, whatever `[search] rerank` says.
    #[arg(long, overrides_with = "rerank")]
    pub(crate) no_rerank: bool,
}

#[derive(Args)]
pub(crate) struct ExportArgs {
    /// Include the current model's vectors (an import then needs no model run).
    #[arg(long)]
    pub(crate) vectors: bool,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// The export file, or - for stdin.
    pub(crate) file: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct StatusArgs {
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct EvalArgs {
    /// The dataset folder.
    pub(crate) dir: PathBuf,
    /// Print the figures as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Rebuild the eval's index from scratch (embeddings included).
    #[arg(long)]
    pub(crate) fresh: bool,
    /// Score only the first N queries.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) queries: usize,
    /// LoCoMo as a memory benchmark: store every turn with `remember`,
    /// answer the questions with `recall`.
    #[arg(long)]
    pub(crate) memories: bool,
    /// With --store: also run the set on SQLite and print both side by side.
    #[arg(long, conflicts_with = "memories")]
    pub(crate) with_sqlite: bool,
    /// Also print the file and chunk scores of each query group (the
    /// projects of a code set: query ids `<group>_q…`).
    #[arg(long, conflicts_with = "memories")]
    pub(crate) by_group: bool,
    /// Score only one half of the set, as its split.tsv assigns the query
    /// groups (`tune`: what ranking changes are chosen on; `test`: held back).
    #[arg(long, value_name = "HALF", conflicts_with = "memories")]
    pub(crate) split: Option<String>,
    /// Also list each query whose first document is not relevant, with what
    /// came first (in --json: every query's outcome).
    #[arg(long, conflicts_with = "memories")]
    pub(crate) misses: bool,
    /// Also measure what `search`'s relevance floors would drop from the
    /// first 10 hits of each query, for a grid of settings.
    #[arg(long, conflicts_with = "memories")]
    pub(crate) floors: bool,
    /// Score the hybrid ranking with and without the cross-encoder: a row
    /// per k (20, 10) and blend (rerank, rrf); each k's `rerank` row times
    /// the reranker over k, its `rrf` row reuses those scores.
    #[arg(long, conflicts_with_all = ["memories", "with_sqlite"])]
    pub(crate) rerank: bool,
}

#[derive(Args)]
pub(crate) struct UpdateArgs {
    /// The memory id.
    pub(crate) id: String,
    /// New text.
    #[arg(long)]
    pub(crate) text: Option<String>,
    /// New type.
    #[arg(long = "type")]
    pub(crate) kind: Option<String>,
    /// New importance, 1 (trivia) to 10 (never forget).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub(crate) importance: Option<u8>,
    /// Replace the tags with these (repeatable).
    #[arg(long = "tag")]
    pub(crate) tags: Vec<String>,
    /// Forget after this long from now: 30d, 12h, 2w, 1y.
    #[arg(long)]
    pub(crate) ttl: Option<String>,
    /// Forget at this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    pub(crate) expires: Option<String>,
    /// Show the result without writing it.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct ExpandArgs {
    /// The chunk id a search hit carries (`id …` in `cairn search`).
    pub(crate) chunk_id: String,
    /// Lines of context around it, 0–1000.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub(crate) context: u32,
    /// Most tokens of text (the section is cut at a line past it).
    #[arg(long, default_value_t = 2000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=cairn::MAX_TOKENS as u64))]
    pub(crate) max_tokens: usize,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct WhyArgs {
    /// A symbol (`search`, `Engine::search`) or a project path, with a
    /// line or lines (`src/lib.rs:120`, `src/lib.rs:120-140`) or without.
    pub(crate) target: String,
    /// Most commits, 1–1000.
    #[arg(long, default_value_t = 10, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=cairn::MAX_HITS as u64))]
    pub(crate) limit: usize,
    /// Most tokens of the answer (messages are cut, then commits left out).
    #[arg(long, default_value_t = 2000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=cairn::MAX_TOKENS as u64))]
    pub(crate) max_tokens: usize,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct WatchArgs {
    /// Quiet time after a change before re-indexing, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = cairn_mcp::watch::DEFAULT_DEBOUNCE_MS)]
    pub(crate) debounce_ms: u64,
}

#[derive(Args)]
pub(crate) struct UndoArgs {
    /// The last change of this memory instead.
    #[arg(long)]
    pub(crate) id: Option<String>,
    /// Undo in your personal memories instead of the project's.
    #[arg(long)]
    pub(crate) personal: bool,
}

#[derive(Args)]
pub(crate) struct LogArgs {
    /// Entries to show.
    #[arg(short = 'n', long, default_value_t = 20)]
    pub(crate) limit: usize,
    /// Print as JSON lines.
    #[arg(long)]
    pub(crate) json: bool,
    /// The audit log of your personal memories instead of the project's.
    #[arg(long)]
    pub(crate) personal: bool,
}

#[derive(Args)]
pub(crate) struct ProjectsArgs {
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct HookArgs {
    /// The client (claude-code, codex, opencode, openclaw).
    #[arg(value_enum)]
    pub(crate) client: HookClient,
    /// The hook event (Stop, SessionEnd, session.idle, command:new, …); for
    /// codex, the notify JSON.
    pub(crate) event: String,
}

#[derive(Args)]
pub(crate) struct CompactArgs {
    /// Memories created since: 7d, 12h, a date or RFC 3339.
    #[arg(long)]
    pub(crate) since: Option<String>,
    /// Only this type (repeatable).
    #[arg(long = "type")]
    pub(crate) types: Vec<String>,
    /// Only this tag (repeatable).
    #[arg(long = "tag")]
    pub(crate) tags: Vec<String>,
    /// Print the summary; write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

#[derive(Args)]
pub(crate) struct TranscriptArgs {
    /// The session id (from a session log's anchor comment).
    pub(crate) session: String,
    /// The turn id to center on (default: the last turn).
    #[arg(long)]
    pub(crate) turn: Option<String>,
    /// Turns on each side.
    #[arg(long, default_value_t = 3)]
    pub(crate) context: usize,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct DoctorArgs {
    /// Optimize FTS and VACUUM the index; report its size before and after.
    #[arg(long)]
    pub(crate) vacuum: bool,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct RememberArgs {
    /// What to remember.
    pub(crate) text: String,
    /// Type: fact, decision, preference, convention, entity, relationship, event, note (others are kept).
    #[arg(long = "type", default_value = "note")]
    pub(crate) kind: String,
    /// 1 (trivia) to 10 (never forget).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub(crate) importance: u8,
    /// A tag (repeatable).
    #[arg(long = "tag")]
    pub(crate) tags: Vec<String>,
    /// An entity besides those found in the text (repeatable).
    #[arg(long = "entity")]
    pub(crate) entities: Vec<String>,
    /// Forget after this long: 30d, 12h, 2w, 1y.
    #[arg(long)]
    pub(crate) ttl: Option<String>,
    /// Forget at this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    pub(crate) expires: Option<String>,
    /// A file it was learned from: path, path#Heading or path:line (repeatable).
    #[arg(long = "source")]
    pub(crate) sources: Vec<String>,
    /// The id of an older memory this one replaces (repeatable); without
    /// it, a text that says a change ("moved to", "no longer") replaces the
    /// closest earlier memory of its type.
    #[arg(long = "supersedes", value_name = "ID")]
    pub(crate) supersedes: Vec<String>,
    /// A personal memory: kept in your own folder (`[memory] personal`),
    /// recalled in every project, never written into this one.
    #[arg(long, conflicts_with = "sources")]
    pub(crate) personal: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct RecallArgs {
    /// What to recall, in plain words (or FTS5 syntax with --fts).
    pub(crate) query: String,
    /// Memories to return (1 or more, at most 1000 returned).
    #[arg(short = 'n', long, default_value_t = 5, value_parser = at_least_one)]
    pub(crate) limit: usize,
    /// Skip this many first.
    #[arg(long, default_value_t = 0)]
    pub(crate) offset: usize,
    /// Only this type (repeatable).
    #[arg(long = "type")]
    pub(crate) types: Vec<String>,
    /// Only with this tag (repeatable: any of them).
    #[arg(long = "tag")]
    pub(crate) tags: Vec<String>,
    /// Only naming this entity (repeatable: any of them).
    #[arg(long = "entity")]
    pub(crate) entities: Vec<String>,
    /// Only this important or more (1 to 10).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub(crate) min_importance: Option<u8>,
    /// Only created at or after (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    pub(crate) since: Option<String>,
    /// Only created at or before.
    #[arg(long)]
    pub(crate) until: Option<String>,
    /// Include expired memories.
    #[arg(long)]
    pub(crate) include_expired: bool,
    /// Also show memories a newer one replaced, marked as replaced.
    #[arg(long)]
    pub(crate) replaced: bool,
    /// Leave out memories whose fused search score is below this
    /// (fused-score units; 0 = off; default `[memory] min_score`).
    #[arg(long, value_name = "SCORE")]
    pub(crate) min_score: Option<f64>,
    /// Leave out memories less relevant than this share of the best match
    /// (0–1; 0 = off; default `[memory] relative_floor`).
    #[arg(long, value_name = "SHARE")]
    pub(crate) relative_floor: Option<f64>,
    /// Pass the query to FTS5 as is (phrases, OR, NOT, prefix*, text:/breadcrumb:
    /// columns); keyword ranking only.
    #[arg(long)]
    pub(crate) fts: bool,
    /// Show each term of the score.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct ForgetArgs {
    /// The memory id (or use the filters below for a bulk forget).
    pub(crate) id: Option<String>,
    /// Every memory of this type (repeatable).
    #[arg(long = "type")]
    pub(crate) types: Vec<String>,
    /// Every memory with this tag (repeatable).
    #[arg(long = "tag")]
    pub(crate) tags: Vec<String>,
    /// Every memory created before this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long)]
    pub(crate) before: Option<String>,
    /// Every expired memory (alone: the expiry sweep).
    #[arg(long)]
    pub(crate) expired: bool,
    /// Show what would be forgotten; change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Confirm a bulk forget.
    #[arg(long)]
    pub(crate) yes: bool,
    /// Remove every copy of this memory, for a secret stored by mistake: the
    /// file, the trash and history copies, its index rows (then the index is
    /// vacuumed). Works on a memory already forgotten; cannot be undone.
    #[arg(long, requires = "id")]
    pub(crate) purge: bool,
    /// Forget in your personal memories instead of the project's.
    #[arg(long)]
    pub(crate) personal: bool,
}

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Index the project first (progress on stderr); BM25 answers at once,
    /// vectors are computed in the background.
    #[arg(long)]
    pub(crate) build_index: bool,
    /// Re-index files as they change (debounced).
    #[arg(long)]
    pub(crate) watch: bool,
    /// Quiet time after the last change before re-indexing, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = cairn_mcp::watch::DEFAULT_DEBOUNCE_MS)]
    pub(crate) debounce_ms: u64,
    /// Serve streamable HTTP at /mcp instead of stdio, on this address (default 127.0.0.1:8765).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8765")]
    pub(crate) http: Option<SocketAddr>,
    /// Bearer token HTTP clients must send (every request, /health too);
    /// required to bind other than loopback. A token given here is visible
    /// to other users in `ps`: prefer CAIRN_HTTP_TOKEN or --token-file.
    #[arg(long, env = "CAIRN_HTTP_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,
    /// Read the bearer token from this file (its first line, trimmed); it
    /// wins over CAIRN_HTTP_TOKEN, and cannot be given with --token.
    #[arg(long, value_name = "PATH")]
    pub(crate) token_file: Option<PathBuf>,
    /// Extra host names accepted in HTTP `Host` headers (loopback names always are).
    #[arg(long, value_name = "HOST")]
    pub(crate) allow_host: Vec<String>,
    /// Extra browser origins accepted over HTTP, e.g. https://app.example.com:443.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,
    /// Serve stdio from this process instead of the shared per-project daemon.
    #[arg(long)]
    pub(crate) no_daemon: bool,
    /// Seconds the shared daemon stays up without clients.
    #[arg(long, value_name = "SECS", default_value_t = 900)]
    pub(crate) idle_timeout: u64,
}

#[derive(Args)]
pub(crate) struct UiArgs {
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8766)]
    pub(crate) port: u16,
    /// Print the address; do not open a browser.
    #[arg(long)]
    pub(crate) no_open: bool,
    /// Do not re-index files as they change (the page then shows the index
    /// as it is).
    #[arg(long)]
    pub(crate) no_watch: bool,
    /// Seconds the shared daemon (which serves the page) stays up without
    /// clients, when this starts it.
    #[arg(long, value_name = "SECS", default_value_t = 900)]
    pub(crate) idle_timeout: u64,
}

#[derive(Args)]
pub(crate) struct DaemonArgs {
    /// Seconds to stay up without clients.
    #[arg(long, value_name = "SECS", default_value_t = 900)]
    pub(crate) idle_timeout: u64,
    /// Watch from the start.
    #[arg(long)]
    pub(crate) watch: bool,
    /// Watch debounce in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = cairn_mcp::watch::DEFAULT_DEBOUNCE_MS)]
    pub(crate) debounce_ms: u64,
}

#[derive(Args)]
pub(crate) struct BenchMcpArgs {
    /// Queries, one JSON object per line with a "text" field (an eval set's
    /// queries.jsonl); default: a few built-in questions.
    #[arg(long, value_name = "FILE")]
    pub(crate) queries: Option<PathBuf>,
    /// Searches to time (cycling through the queries).
    #[arg(long, default_value_t = 200)]
    pub(crate) searches: usize,
    /// Server starts to time, per way of starting.
    #[arg(long, default_value_t = 5)]
    pub(crate) starts: usize,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum HookClient {
    /// Claude Code (`.claude/settings.json`, JSONL transcripts).
    ClaudeCode,
    /// OpenAI Codex CLI (`notify` in `~/.codex/config.toml`, rollout JSONL).
    Codex,
    /// OpenCode (a plugin in `.opencode/plugins/`, sessions in its opencode.db).
    Opencode,
    /// OpenClaw (a hook in `~/.openclaw/hooks/`, JSONL session transcripts).
    Openclaw,
}

#[derive(Args)]
pub(crate) struct SetupArgs {
    /// The agent.
    #[arg(value_enum)]
    pub(crate) client: SetupClient,
    /// Write the project's shared files, meant to be committed (Claude Code:
    /// .claude/settings.json and .mcp.json; Cursor, VS Code, OpenCode: their
    /// project files, not kept out of git).
    #[arg(long)]
    pub(crate) shared: bool,
    /// Show what would be added, and where; write nothing.
    #[arg(long, conflicts_with = "undo")]
    pub(crate) print: bool,
    /// Remove what setup added (with --shared: from the shared files); every
    /// other entry stays.
    #[arg(long)]
    pub(crate) undo: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum SetupClient {
    /// Claude Code: hooks in .claude/settings.local.json, MCP server in
    /// ~/.claude.json for this project (`claude mcp add --scope local`).
    ClaudeCode,
    /// OpenAI Codex CLI: MCP server and notify in ~/.codex/config.toml.
    Codex,
    /// Cursor: .cursor/mcp.json (MCP only).
    Cursor,
    /// VS Code (Copilot agent mode): .vscode/mcp.json (MCP only).
    Vscode,
    /// OpenCode: opencode.json and a capture plugin in .opencode/plugins/.
    Opencode,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum McpClient {
    /// Claude Code: `~/.claude.json` for this project (local scope; with
    /// --shared, `.mcp.json` in the project).
    ClaudeCode,
    /// OpenAI Codex CLI: `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`).
    Codex,
    /// Cursor: `.cursor/mcp.json` in the project.
    Cursor,
    /// VS Code (Copilot agent mode): `.vscode/mcp.json` in the project.
    Vscode,
}

/// A count of results: 0 is refused (it would silently mean the default), a
/// huge one is accepted and bounded where it is used (at most 1,000 hits).
fn at_least_one(s: &str) -> Result<usize, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a count: give a whole number, 1 or more"))?;
    if n == 0 {
        return Err("0 would return nothing: give 1 or more (at most 1000 are returned)".into());
    }
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}
