//! `cairn`: index a project's markdown and search it from the command line.

mod bench_graph;
mod bench_mcp;
mod bench_writers;
mod capture;
mod doctor;
mod install;
mod memory;
mod print;
mod progress;
mod serve;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use cairn::{Config, Engine, EvalOptions, Mode, SearchOptions, find_project_root, run_eval};
use cairn_core::{Embedder, Kind};
use cairn_embed::{
    KernelPath, MiniLm, MiniLmOptions, ModelSpec, cache_root, fetch_model, locate_model,
    resolve_kernel,
};
use clap::{Parser, Subcommand, ValueEnum};

use crate::progress::Bars;

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
    verbose: u8,
    /// Project folder (default: found from the current folder: cairn.toml, else git root, else here).
    #[arg(short = 'C', long, global = true, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    /// Override a setting for this run: section.key=value (repeatable; see `cairn config show`).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
    /// The index backend for this run: postgres://user@host/db (default: the
    /// project's SQLite file; also `[store] uri` in the user file or
    /// CAIRN_STORE_URI).
    #[arg(long, global = true, value_name = "URI")]
    pub(crate) store: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan, chunk, embed and store markdown; incremental on re-run.
    Index {
        /// Folders or files to index (default: [index] roots of cairn.toml, else the project).
        paths: Vec<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search the index (BM25 + vectors fused with RRF).
    Search {
        /// What to look for, in plain words (or FTS5 syntax with --fts).
        query: String,
        /// Number of hits.
        #[arg(short = 'n', long)]
        limit: Option<usize>,
        /// The file being edited: chunks of the same domain get a ×1.3 boost.
        #[arg(long, value_name = "PATH")]
        current_file: Option<String>,
        /// Only files whose project-relative path starts with this.
        #[arg(long, value_name = "PREFIX")]
        path_prefix: Option<String>,
        /// Which retrievers to use.
        #[arg(long, value_enum, default_value_t = ModeArg::Hybrid)]
        mode: ModeArg,
        /// Pass the query to FTS5 as is (phrases, OR, NOT, prefix*); BM25 only.
        #[arg(long)]
        fts: bool,
        /// Print hits as JSON.
        #[arg(long)]
        json: bool,
        /// Show each retriever's rank and RRF contribution, each boost, and the
        /// graph path that brought a hit in.
        #[arg(long)]
        explain: bool,
        /// Only these kinds of source: doc, code, memory (repeatable).
        #[arg(long, value_name = "KIND")]
        kind: Vec<String>,
        /// Leave the graph retriever out.
        #[arg(long)]
        no_graph: bool,
    },
    /// Write the index and the memory files as JSON Lines (stdout, or -o).
    Export {
        /// Include the current model's vectors (an import then needs no model run).
        #[arg(long)]
        vectors: bool,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Read an export (a file, or - for stdin): memory files are written
    /// back, documents and vectors go into the index.
    Import {
        /// The export file, or - for stdin.
        file: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The knowledge graph: neighbours of an entity, paths, communities.
    Graph {
        #[command(subcommand)]
        action: GraphAction,
    },
    /// Files, chunks, embedded chunks, model, index size, last index time.
    Status {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Score search on a labelled set (corpus/, queries.jsonl, qrels.tsv).
    Eval {
        /// The dataset folder.
        dir: PathBuf,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
        /// Rebuild the eval's index from scratch (embeddings included).
        #[arg(long)]
        fresh: bool,
        /// Score only the first N queries.
        #[arg(long, value_name = "N", default_value_t = 0)]
        queries: usize,
        /// LoCoMo as a memory benchmark: store every turn with `remember`,
        /// answer the questions with `recall`.
        #[arg(long)]
        memories: bool,
        /// With --store: also run the set on SQLite and print both side by side.
        #[arg(long, conflicts_with = "memories")]
        with_sqlite: bool,
    },
    /// Store a memory (a markdown file under .cairn/memory/); a near-duplicate
    /// of the same type is updated instead.
    Remember(memory::RememberArgs),
    /// Recall memories: hybrid search blended with importance, recency and use.
    Recall(memory::RecallArgs),
    /// Forget a memory, or every memory matching --type/--tag/--before/--expired
    /// (moved to .cairn/trash/; `cairn undo` brings one back).
    Forget(memory::ForgetArgs),
    /// Revert the last memory change (store, update, forget).
    Undo {
        /// The last change of this memory instead.
        #[arg(long)]
        id: Option<String>,
    },
    /// The audit log of memory changes, newest last.
    Log {
        /// Entries to show.
        #[arg(short = 'n', long, default_value_t = 20)]
        limit: usize,
        /// Print as JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// Run by an agent's hook: capture the new turns of its session into the
    /// daily session log. Always exits 0 (hooks fail open); health goes to
    /// .cairn/hooks/health.json.
    #[command(hide = true)]
    Hook {
        /// The client (claude-code, codex).
        #[arg(value_enum)]
        client: capture::HookClient,
        /// The hook event (Stop, SessionEnd, …); for codex, the notify JSON.
        event: String,
    },
    /// Wire capture into a client's hook configuration.
    Hooks {
        #[command(subcommand)]
        action: HooksAction,
    },
    /// Summarise recent memories with the configured language model into
    /// today's session log.
    Compact {
        /// Memories created since: 7d, 12h, a date or RFC 3339.
        #[arg(long)]
        since: Option<String>,
        /// Only this type (repeatable).
        #[arg(long = "type")]
        types: Vec<String>,
        /// Only this tag (repeatable).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Print the summary; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// The original turns of a captured session (around --turn).
    Transcript {
        /// The session id (from a session log's anchor comment).
        session: String,
        /// The turn id to center on (default: the last turn).
        #[arg(long)]
        turn: Option<String>,
        /// Turns on each side.
        #[arg(long, default_value_t = 3)]
        context: usize,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the project to AI assistants over MCP (stdio by default).
    ///
    /// Over stdio, every client attaches to one shared background process per
    /// project (started when absent, gone after --idle-timeout without clients).
    Serve(serve::ServeArgs),
    /// Set up an MCP client to use cairn.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Run the project's shared server process (started by `cairn serve`).
    #[command(hide = true)]
    Daemon(serve::DaemonArgs),
    /// Check the model files, the index (schema, integrity, FTS) and the
    /// shared daemon; --vacuum also compacts the index.
    Doctor {
        /// Optimize FTS and VACUUM the index; report its size before and after.
        #[arg(long)]
        vacuum: bool,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
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
enum GraphAction {
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
        #[arg(long, default_value_t = 3)]
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
enum HooksAction {
    /// Add cairn's capture hook (Stop and SessionEnd) to the client's settings.
    Install {
        /// The client.
        #[arg(value_enum)]
        client: capture::HookClient,
        /// Print the entry; write nothing.
        #[arg(long)]
        print: bool,
    },
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Every setting's effective value and the layer it came from
    /// (default < user file < cairn.toml < CAIRN_* environment < --set).
    Show {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum McpAction {
    /// Add cairn to a client's MCP configuration (other entries are kept).
    Install {
        /// The client.
        #[arg(value_enum)]
        client: install::Client,
        /// Print the entry and where it goes; write nothing.
        #[arg(long)]
        print: bool,
        /// Name of the server entry.
        #[arg(long, default_value = "cairn")]
        name: String,
    },
}

#[derive(Subcommand)]
enum ModelAction {
    /// Download the model files into the user cache (no-op when present).
    Fetch,
    /// Where the model is, whether it loads, and which kernel path it runs on.
    Status {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Embedding throughput on ~1,500-character prose chunks, and short-query latency.
    Embed {
        /// Chunks to embed.
        #[arg(long, default_value_t = 64)]
        chunks: usize,
        /// Characters per chunk.
        #[arg(long, default_value_t = 1500)]
        chars: usize,
        /// Only this kernel path (avx512, avx2, portable); default: every path this CPU runs.
        #[arg(long)]
        kernel: Option<String>,
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
    Mcp(bench_mcp::BenchMcpArgs),
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = if cli.quiet {
        "error"
    } else {
        match cli.verbose {
            0 => "warn",
            1 => "info",
            _ => "debug",
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) fn project_root(cli: &Cli) -> anyhow::Result<PathBuf> {
    let start = match &cli.project {
        Some(p) => p
            .canonicalize()
            .with_context(|| format!("project folder {}", p.display()))?,
        None => std::env::current_dir().context("current folder")?,
    };
    Ok(find_project_root(&start))
}

/// The configured embedder, fetching the model on first use; `None` (with one
/// warning) when it cannot be had, so search falls back to BM25.
/// An OpenAI-compatible embedding endpoint (`[embed] provider = "openai"`);
/// `None` with one warning when it cannot be reached.
fn remote_embedder(config: &Config) -> Option<Arc<dyn Embedder>> {
    let e = &config.embed;
    let api_key = if e.api_key_env.is_empty() {
        String::new()
    } else {
        match std::env::var(&e.api_key_env) {
            Ok(k) => k,
            Err(_) => {
                tracing::warn!(
                    "[embed] api_key_env names {}, which is not set; BM25 only",
                    e.api_key_env
                );
                return None;
            }
        }
    };
    let provider = cairn_llm::Provider {
        api: cairn_llm::Api::OpenAi,
        base_url: if e.base_url.is_empty() {
            "https://api.openai.com/v1".into()
        } else {
            e.base_url.clone()
        },
        model: e.model.clone(),
        api_key,
        timeout: std::time::Duration::from_secs(60),
    };
    match cairn_llm::RemoteEmbedder::connect(provider) {
        Ok(r) => Some(Arc::new(r)),
        Err(err) => {
            tracing::warn!("remote embedding model unavailable, searching with BM25 only: {err}");
            None
        }
    }
}

pub(crate) fn load_embedder(config: &Config, bars: &Bars) -> Option<Arc<dyn Embedder>> {
    let model = config.embed.model.as_str();
    if model == "none" {
        return None;
    }
    match config.embed.provider.as_str() {
        "local" | "" => {}
        "openai" => return remote_embedder(config),
        other => {
            tracing::warn!("unknown [embed] provider {other:?} (use local or openai); BM25 only");
            return None;
        }
    }
    if model != ModelSpec::MINILM_L6_V2.name {
        tracing::warn!("unknown model {model:?} in [embed] model; searching with BM25 only");
        return None;
    }
    let spec = ModelSpec::MINILM_L6_V2;
    let located = match locate_model(&spec) {
        Ok(Some(l)) => Ok(l),
        Ok(None) if config.embed.auto_fetch => {
            eprintln!("fetching the embedding model {} (first use)…", spec.name);
            fetch_model(&spec, bars)
        }
        Ok(None) => {
            tracing::warn!(
                "model {} is not cached and auto_fetch is off: run `cairn model fetch`; BM25 only",
                spec.name
            );
            return None;
        }
        Err(e) => Err(e),
    };
    let opts = MiniLmOptions {
        max_tokens: config.embed.max_tokens,
        threads: if config.embed.threads == 0 {
            MiniLmOptions::default().threads
        } else {
            config.embed.threads
        },
        ..MiniLmOptions::default()
    };
    match located.and_then(|l| MiniLm::load(&l, opts)) {
        Ok(m) => Some(Arc::new(m)),
        Err(e) => {
            tracing::warn!("embedding model unavailable, searching with BM25 only: {e}");
            None
        }
    }
}

/// The project's configuration with every layer, `--set` included.
pub(crate) fn load_config(cli: &Cli, root: &Path) -> anyhow::Result<Config> {
    Ok(Config::load_layers(root, &cairn::Layers::from_env(flag_sets(cli)))?.0)
}

/// `--set` pairs, with `--store` as `store.uri`.
fn flag_sets(cli: &Cli) -> Vec<String> {
    let mut sets = cli.sets.clone();
    if let Some(uri) = &cli.store {
        sets.push(format!("store.uri={uri}"));
    }
    sets
}

/// Opens the project's engine on the configured backend.
pub(crate) fn engine_on_store(
    root: &Path,
    config: Config,
    embedder: Option<Arc<dyn Embedder>>,
) -> anyhow::Result<Engine> {
    let uri = config.store.uri.trim().to_string();
    if uri.is_empty() {
        return Ok(Engine::open(root, config, embedder)?);
    }
    if !(uri.starts_with("postgres://") || uri.starts_with("postgresql://")) {
        bail!(
            "store {}: unknown backend (use postgres://user@host/db, or leave [store] uri empty for SQLite)",
            cairn_postgres::redact(&uri)
        );
    }
    let project = if config.store.project.trim().is_empty() {
        root.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "project".into())
    } else {
        config.store.project.trim().to_string()
    };
    let store = pg_store(&uri, &project, &config)?;
    let shown = PathBuf::from(format!(
        "{} (project {project})",
        cairn_postgres::redact(&uri)
    ));
    Ok(Engine::open_with(
        root,
        shown,
        Box::new(store),
        config,
        embedder,
    )?)
}

/// Connects to a PostgreSQL store with the configured search settings.
fn pg_store(uri: &str, project: &str, config: &Config) -> anyhow::Result<cairn_postgres::PgStore> {
    Ok(cairn_postgres::PgStore::connect(uri, project)
        .with_context(|| format!("store {}", cairn_postgres::redact(uri)))?
        .with_ef_search(config.store.ef_search))
}

pub(crate) fn open_engine(cli: &Cli, bars: &Bars, must_exist: bool) -> anyhow::Result<Engine> {
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    let index = root.join(".cairn").join("index.sqlite");
    if must_exist && config.store.uri.trim().is_empty() && !index.exists() {
        bail!("no index at {}: run `cairn index` first", index.display());
    }
    let embedder = load_embedder(&config, bars);
    engine_on_store(&root, config, embedder)
}

/// A setting as `config show` prints it: a store URI without its password.
fn shown_value(key: &str, value: &toml::Value) -> toml::Value {
    match (key, value) {
        ("store.uri", toml::Value::String(uri)) => toml::Value::String(cairn_postgres::redact(uri)),
        _ => value.clone(),
    }
}

/// A path given on the command line, relative to the project root when it lies inside it.
fn project_relative(root: &Path, p: &str) -> String {
    let abs = std::env::current_dir()
        .map(|d| d.join(p))
        .unwrap_or_else(|_| PathBuf::from(p));
    match abs
        .canonicalize()
        .ok()
        .and_then(|a| a.strip_prefix(root).ok().map(Path::to_path_buf))
    {
        Some(rel) => rel.to_string_lossy().replace('\\', "/"),
        None => p.trim_start_matches("./").to_string(),
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let bars = Bars::new(cli.quiet);
    match &cli.command {
        Command::Index { paths, json } => {
            let engine = open_engine(&cli, &bars, false)?;
            let roots: Vec<PathBuf> = if paths.is_empty() {
                engine
                    .config()
                    .index
                    .roots
                    .iter()
                    .map(|r| engine.root().join(r))
                    .collect()
            } else {
                let cwd = std::env::current_dir().context("current folder")?;
                paths.iter().map(|p| cwd.join(p)).collect()
            };
            let report = engine.index(&roots, &bars)?;
            if *json {
                print::json(&report)?;
            } else {
                print::index_report(&report, engine.embedder().is_some());
            }
        }
        Command::Search {
            query,
            limit,
            current_file,
            path_prefix,
            mode,
            fts,
            json,
            explain,
            kind,
            no_graph,
        } => {
            let engine = open_engine(&cli, &bars, true)?;
            let kinds = kind
                .iter()
                .map(|k| {
                    Kind::parse(k).ok_or_else(|| {
                        anyhow::anyhow!("unknown kind {k:?}: use doc, code or memory")
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let opts = SearchOptions {
                limit: limit.unwrap_or(0),
                current_file: current_file
                    .as_deref()
                    .map(|f| project_relative(engine.root(), f)),
                path_prefix: path_prefix.clone(),
                raw_fts: *fts,
                mode: (*mode).into(),
                kinds,
                no_graph: *no_graph,
                explain: *explain || *json,
            };
            let hits = engine.search(query, &opts)?;
            if *json {
                print::json(&hits)?;
            } else {
                print::hits(&hits, *explain);
            }
        }
        Command::Export { vectors, output } => {
            let engine = open_engine(&cli, &bars, true)?;
            let t = match output {
                Some(path) => {
                    let tmp = path.with_extension("jsonl.tmp");
                    let file = std::fs::File::create(&tmp)
                        .with_context(|| format!("create {}", tmp.display()))?;
                    let mut w = std::io::BufWriter::new(file);
                    let t = engine.export(&mut w, *vectors)?;
                    drop(w);
                    std::fs::rename(&tmp, path)
                        .with_context(|| format!("rename to {}", path.display()))?;
                    t
                }
                None => {
                    let stdout = std::io::stdout();
                    let mut w = std::io::BufWriter::new(stdout.lock());
                    engine.export(&mut w, *vectors)?
                }
            };
            eprintln!(
                "exported {} documents ({} chunks, {} links), {} memory files, {} vectors",
                t.documents, t.chunks, t.links, t.memories, t.vectors
            );
        }
        Command::Import { file, json } => {
            let engine = open_engine(&cli, &bars, false)?;
            let t = if file.as_os_str() == "-" {
                let stdin = std::io::stdin();
                engine.import(&mut stdin.lock(), "-")?
            } else {
                let f = std::fs::File::open(file)
                    .with_context(|| format!("open {}", file.display()))?;
                engine.import(&mut std::io::BufReader::new(f), &file.display().to_string())?
            };
            if *json {
                print::json(&t)?;
            } else {
                println!(
                    "imported {} documents ({} chunks, {} links), {} memory files ({} already there), {} vectors",
                    t.documents, t.chunks, t.links, t.memories, t.memories_unchanged, t.vectors
                );
            }
        }
        Command::Graph { action } => {
            let engine = open_engine(&cli, &bars, true)?;
            match action {
                GraphAction::Neighbors { name, limit, json } => {
                    let n = engine.graph_neighbors(name, *limit)?;
                    if *json {
                        print::json(&n)?;
                    } else {
                        print::neighborhood(&n);
                    }
                }
                GraphAction::Path { from, to, json } => {
                    let p = engine.graph_path(from, to)?;
                    if *json {
                        print::json(&p)?;
                    } else {
                        print::graph_path(&p);
                    }
                }
                GraphAction::Communities {
                    min_size,
                    limit,
                    json,
                } => {
                    let mut c = engine.graph_communities(*min_size)?;
                    if *limit > 0 {
                        c.communities.truncate(*limit);
                    }
                    if *json {
                        print::json(&c)?;
                    } else {
                        print::communities(&c);
                    }
                }
            }
        }
        Command::Status { json } => {
            let engine = open_engine(&cli, &bars, true)?;
            let status = engine.status()?;
            if *json {
                print::json(&status)?;
            } else {
                print::status(&status);
            }
        }
        Command::Eval {
            dir,
            json,
            fresh,
            queries,
            memories: true,
            ..
        } => {
            let config = load_config(&cli, &project_root(&cli)?)?;
            let dataset = dir
                .canonicalize()
                .with_context(|| format!("eval set {}", dir.display()))?;
            let key = &cairn_core::content_hash(dataset.to_string_lossy().as_bytes())[..12];
            let work_dir = cache_root()?.join("eval").join(format!("memories-{key}"));
            let embedder = load_embedder(&config, &bars);
            let opts = cairn::MemoryEvalOptions {
                work_dir,
                fresh: *fresh,
                max_queries: *queries,
                config,
            };
            let report = cairn::run_memory_eval(&dataset, embedder, &opts, &bars)?;
            if *json {
                print::json(&report)?;
            } else {
                println!(
                    "{} conversations: {} turns stored as {} memories ({} merged as near-duplicates) in {:.1} s",
                    report.conversations,
                    report.turns,
                    report.memories,
                    report.merged,
                    report.store_seconds
                );
                println!(
                    "{} questions with memory_recall: turn Recall@5 {:.4}, Recall@10 {:.4}; session Recall@5 {:.4}; recall p50 {:.1} ms, p95 {:.1} ms",
                    report.queries,
                    report.turn_recall_at_5,
                    report.turn_recall_at_10,
                    report.session_recall_at_5,
                    report.recall_p50_ms,
                    report.recall_p95_ms
                );
            }
        }
        Command::Eval {
            dir,
            json,
            fresh,
            queries,
            memories: false,
            with_sqlite,
        } => {
            let root = project_root(&cli)?;
            let config = load_config(&cli, &root)?;
            let dataset = dir
                .canonicalize()
                .with_context(|| format!("eval set {}", dir.display()))?;
            // The eval's index is keyed by its corpus, so query sets sharing a
            // corpus (SciFact test and train) share one index and its vectors.
            let corpus = dataset
                .join("corpus")
                .canonicalize()
                .with_context(|| format!("{}/corpus", dataset.display()))?;
            let name = corpus
                .parent()
                .and_then(Path::file_name)
                .map_or("eval".into(), |n| n.to_string_lossy().into_owned());
            let key = &cairn_core::content_hash(corpus.to_string_lossy().as_bytes())[..12];
            let index_path = cache_root()?
                .join("eval")
                .join(format!("{name}-{key}"))
                .join("index.sqlite");
            let embedder = load_embedder(&config, &bars);
            let opts = EvalOptions {
                index_path,
                fresh: *fresh,
                modes: vec![Mode::Hybrid, Mode::Bm25, Mode::Vector],
                max_queries: *queries,
                config,
            };
            let on_server = !opts.config.store.uri.trim().is_empty();
            if *with_sqlite && !on_server {
                bail!(
                    "--with-sqlite compares a --store postgres://… run with SQLite: give --store"
                );
            }
            // SQLite first, so both runs share the machine the same way.
            let sqlite = if *with_sqlite {
                Some(run_eval(&dataset, embedder.clone(), &opts, &bars)?)
            } else {
                None
            };
            let report = if !on_server {
                run_eval(&dataset, embedder, &opts, &bars)?
            } else {
                // One project per eval corpus in the shared database.
                let mut config = opts.config.clone();
                config.store.project = format!("eval-{name}-{key}");
                let open = |corpus: &Path| {
                    engine_on_store(corpus, config.clone(), embedder.clone())
                        .map_err(|e| cairn::Error::Query(format!("{e:#}")))
                };
                cairn::run_eval_on(&dataset, &open, &opts, &bars)?
            };
            match (sqlite, *json) {
                (Some(s), true) => {
                    print::json(&serde_json::json!({ "sqlite": s, "postgres": report }))?
                }
                (Some(s), false) => {
                    println!("SQLite:");
                    print::eval(&s);
                    println!(
                        "\nPostgreSQL ({}):",
                        cairn_postgres::redact(&opts.config.store.uri)
                    );
                    print::eval(&report);
                    println!();
                    print::eval_side_by_side(&s, &report);
                }
                (None, true) => print::json(&report)?,
                (None, false) => print::eval(&report),
            }
        }
        Command::Remember(args) => memory::remember(&open_engine(&cli, &bars, false)?, args)?,
        Command::Recall(args) => memory::recall(&open_engine(&cli, &bars, false)?, args)?,
        Command::Forget(args) => memory::forget(&open_engine(&cli, &bars, false)?, args)?,
        Command::Undo { id } => memory::undo(&open_engine(&cli, &bars, false)?, id.as_deref())?,
        Command::Log { limit, json } => {
            memory::log(&open_engine(&cli, &bars, false)?, *limit, *json)?
        }
        Command::Hook { client, event } => capture::hook(&cli, *client, event),
        Command::Hooks {
            action: HooksAction::Install { client, print },
        } => capture::install(&project_root(&cli)?, *client, *print)?,
        Command::Compact {
            since,
            types,
            tags,
            dry_run,
        } => {
            let engine = open_engine(&cli, &bars, false)?;
            let c = engine.compact(&cairn::CompactOptions {
                since: since.clone(),
                types: types.clone(),
                tags: tags.clone(),
                dry_run: *dry_run,
            })?;
            println!("{}", c.summary);
            match &c.log {
                Some(log) => eprintln!("compacted {} memories into {}", c.memories, log.display()),
                None => eprintln!("dry run: {} memories, nothing written", c.memories),
            }
        }
        Command::Transcript {
            session,
            turn,
            context,
            json,
        } => {
            let engine = open_engine(&cli, &bars, false)?;
            let t = engine.transcript(session, turn.as_deref(), *context)?;
            if *json {
                print::json(&t)?;
            } else {
                println!("session {} ({})", t.session_id, t.transcript.display());
                for turn in &t.turns {
                    let mark = if turn.id == t.turn_id { ">" } else { " " };
                    println!(
                        "{mark} [{}] {} {}",
                        turn.role,
                        turn.id,
                        turn.time.as_deref().unwrap_or("")
                    );
                    for line in turn.text.lines() {
                        println!("    {line}");
                    }
                }
            }
        }
        Command::Serve(args) => serve::serve(&cli, args, &bars)?,
        Command::Daemon(args) => serve::daemon(&cli, args, &bars)?,
        Command::Mcp {
            action:
                McpAction::Install {
                    client,
                    print,
                    name,
                },
        } => install::install(&project_root(&cli)?, *client, *print, name)?,
        Command::Doctor { vacuum, json } => {
            if !doctor::run(&cli, *vacuum, *json)? {
                bail!("doctor found problems (see above)");
            }
        }
        Command::Config {
            action: ConfigAction::Show { json },
        } => {
            let root = project_root(&cli)?;
            let (_, sources) =
                Config::load_layers(&root, &cairn::Layers::from_env(flag_sets(&cli)))?;
            if *json {
                let rows: Vec<serde_json::Value> = sources
                    .iter()
                    .map(|(k, v, s)| serde_json::json!({"key": k, "value": shown_value(k, v), "source": s.to_string()}))
                    .collect();
                print::json(&rows)?;
            } else {
                let width = sources
                    .iter()
                    .map(|(k, v, _)| k.len() + shown_value(k, v).to_string().len())
                    .max()
                    .unwrap_or(0);
                for (k, v, s) in &sources {
                    let kv = format!("{k} = {}", shown_value(k, v));
                    println!("{kv:<w$}   # {s}", w = width + 3);
                }
            }
        }
        Command::Model { action } => model(action, &bars)?,
        Command::Bench {
            what:
                BenchWhat::Recall {
                    memories,
                    queries,
                    json,
                },
        } => bench_recall(*memories, *queries, *json, &bars)?,
        Command::Bench {
            what: BenchWhat::Mcp(args),
        } => bench_mcp::run(&project_root(&cli)?, args)?,
        Command::Bench {
            what:
                BenchWhat::Graph {
                    edges,
                    queries,
                    json,
                },
        } => {
            let b = bench_graph::run(*edges, (*queries).max(1));
            if *json {
                print::json(&b)?;
            } else {
                bench_graph::print(&b);
            }
        }
        Command::Bench {
            what: BenchWhat::Writer { writer, memories },
        } => {
            let engine = open_engine(&cli, &bars, false)?;
            bench_writers::child(&engine, *writer, *memories)?;
        }
        Command::Bench {
            what:
                BenchWhat::Writers {
                    processes,
                    memories,
                    json,
                },
        } => {
            let uri = load_config(&cli, &project_root(&cli)?)?.store.uri;
            if uri.trim().is_empty() {
                bail!("bench writers needs a shared store: --store postgres://user@host/db");
            }
            let open = |dir: &Path, project: &str| -> anyhow::Result<Engine> {
                let mut config = load_config(&cli, dir)?;
                config.store.project = project.to_string();
                let embedder = load_embedder(&config, &bars);
                engine_on_store(dir, config, embedder)
            };
            let b =
                bench_writers::run(uri.trim(), (*processes).max(1), *memories, &cli.sets, &open)?;
            if *json {
                print::json(&b)?;
            } else {
                println!(
                    "{} writers × {} memories in {:.1} s ({:.1} remembers/s)",
                    b.processes, b.memories_each, b.seconds, b.remembers_per_second
                );
                println!(
                    "created {}   merged as near-duplicates {}",
                    b.created, b.merged_as_duplicates
                );
                println!("stored  {}   lost {}", b.stored, b.lost);
                println!(
                    "doubled: paths {}   chunks {}   memory texts {}",
                    b.duplicate_paths, b.duplicate_chunks, b.duplicate_memory_texts
                );
                println!(
                    "memory files per folder after a pass: {:?}",
                    b.files_per_folder
                );
            }
        }
        Command::Bench {
            what:
                BenchWhat::Vectors {
                    vectors,
                    queries,
                    planted,
                    dim,
                    json,
                },
        } => {
            let opts = cairn::VectorBenchOptions {
                vectors: *vectors,
                queries: *queries,
                planted: *planted,
                dim: *dim,
                k: 10,
            };
            bench_vectors(&cli, &opts, *json, &bars)?;
        }
        Command::Bench {
            what:
                BenchWhat::Embed {
                    chunks,
                    chars,
                    kernel,
                    threads,
                    json,
                },
        } => {
            let paths = match kernel {
                Some(name) => vec![
                    KernelPath::parse(name).with_context(|| format!("unknown kernel {name:?}"))?,
                ],
                None => KernelPath::available(),
            };
            bench_embed(*chunks, *chars, &paths, *threads, *json, &bars)?;
        }
    }
    Ok(())
}

fn model(action: &ModelAction, bars: &Bars) -> anyhow::Result<()> {
    let spec = ModelSpec::MINILM_L6_V2;
    match action {
        ModelAction::Fetch => {
            let loc = fetch_model(&spec, bars)?;
            println!("model {} ready in {}", spec.name, loc.dir.display());
        }
        ModelAction::Status { json } => {
            let loc = locate_model(&spec)?;
            let loaded = loc.as_ref().map(|l| {
                MiniLm::load(l, MiniLmOptions::default()).map(|m| m.model_id().to_string())
            });
            // Which kernel path an embedder loaded now would run (CAIRN_KERNEL
            // included), and every path this CPU can run.
            let kernel = resolve_kernel(None).map_err(|e| e.to_string());
            let runs: Vec<&str> = KernelPath::available().iter().map(|p| p.name()).collect();
            let value = serde_json::json!({
                "model": spec.name,
                "kernel": kernel.as_ref().ok().map(|p| p.name()),
                "kernel_error": kernel.as_ref().err(),
                "kernels_this_cpu_runs": runs,
                "dir": loc.as_ref().map(|l| l.dir.clone()),
                "present": loc.is_some(),
                "loads": matches!(loaded, Some(Ok(_))),
                "model_id": loaded.as_ref().and_then(|r| r.as_ref().ok().cloned()),
                "error": loaded.as_ref().and_then(|r| r.as_ref().err().map(|e| e.to_string())),
            });
            if *json {
                print::json(&value)?;
            } else {
                match &kernel {
                    Ok(p) => println!("kernel {p} (this CPU runs: {})", runs.join(", ")),
                    Err(e) => println!("kernel: {e}"),
                }
                match (&loc, &loaded) {
                    (None, _) => println!(
                        "model {}: not downloaded (run `cairn model fetch`)",
                        spec.name
                    ),
                    (Some(l), Some(Ok(id))) => {
                        println!("model {}: ready ({id}) in {}", spec.name, l.dir.display())
                    }
                    (Some(l), Some(Err(e))) => println!(
                        "model {}: present in {} but does not load: {e}",
                        spec.name,
                        l.dir.display()
                    ),
                    (Some(l), None) => println!("model {}: in {}", spec.name, l.dir.display()),
                }
            }
        }
    }
    Ok(())
}

fn bench_vectors(
    cli: &Cli,
    o: &cairn::VectorBenchOptions,
    json: bool,
    bars: &Bars,
) -> anyhow::Result<()> {
    let root = std::env::current_dir().context("current folder")?;
    let config = load_config(cli, &root)?;
    let uri = config.store.uri.trim().to_string();
    let store: Box<dyn cairn_core::IndexWriter> = if uri.is_empty() {
        let dir = cache_root()?.join("bench");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        cairn::sqlite_writer(&dir.join(format!("vectors-{}.sqlite", o.corpus_name())))?
    } else {
        let project = format!("bench-vectors-{}", o.corpus_name());
        Box::new(pg_store(&uri, &project, &config)?)
    };
    let b = cairn::run_vector_bench(store, o, bars)?;
    if json {
        return print::json(&b);
    }
    println!("store        {}", b.store);
    println!(
        "corpus       {} vectors × {} dims, {} queries, top {}",
        b.vectors, b.dim, b.queries, b.k
    );
    println!(
        "search       {}",
        if b.backend_index {
            "the backend's vector index (HNSW)"
        } else {
            "exact scan of the matrix loaded in memory"
        }
    );
    println!("load         {:.1} s", b.load_s);
    println!("index build  {:.1} s", b.build_s);
    println!("first query  {:.2} s", b.first_query_s);
    println!("recall@{}    {:.4}", b.k, b.recall_at_k);
    println!(
        "query        p50 {:.2} ms   p95 {:.2} ms",
        b.p50_ms, b.p95_ms
    );
    println!(
        "memory       RSS {:.0} MiB   peak {:.0} MiB",
        b.rss_mib, b.peak_rss_mib
    );
    Ok(())
}

fn bench_recall(n: usize, queries: usize, json: bool, bars: &Bars) -> anyhow::Result<()> {
    let dir = cache_root()?.join("bench").join(format!("recall-{n}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let config = Config::default();
    let embedder = load_embedder(&config, bars);
    let engine = Engine::open(&dir, config, embedder)?;
    let have = engine.status()?.files as usize;
    if have != n {
        if have > 0 {
            bail!(
                "{} holds {have} memories, not {n}: delete it to rebuild",
                dir.display()
            );
        }
        let t = Instant::now();
        let inputs: Vec<cairn::MemoryInput> = cairn_embed::synthetic_prose(n, 160, 11)
            .into_iter()
            .enumerate()
            .map(|(i, text)| cairn::MemoryInput {
                text: format!("{text} (note {i})"),
                kind: Some("fact".into()),
                importance: Some((i % 10 + 1) as u8),
                client: "bench".into(),
                ..cairn::MemoryInput::default()
            })
            .collect();
        engine.import_memories(&inputs, bars)?;
        eprintln!("built {n} memories in {:.1} s", t.elapsed().as_secs_f64());
    }
    let qs = cairn_embed::synthetic_prose(queries.max(1), 60, 97);
    let mut times: Vec<f64> = Vec::with_capacity(qs.len());
    for q in &qs {
        let t = Instant::now();
        engine.recall(q, &cairn::RecallOptions::default())?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let report = serde_json::json!({
        "memories": n,
        "recalls": times.len(),
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "model": engine.embedder().map(|e| e.model_id().to_string()),
    });
    if json {
        print::json(&report)?;
    } else {
        println!(
            "recall over {n} memories ({} recalls, each query new, limit 5): p50 {:.1} ms, p95 {:.1} ms",
            times.len(),
            pct(0.5),
            pct(0.95)
        );
    }
    Ok(())
}

fn bench_embed(
    chunks: usize,
    chars: usize,
    paths: &[KernelPath],
    threads: Option<usize>,
    json: bool,
    bars: &Bars,
) -> anyhow::Result<()> {
    let loc = fetch_model(&ModelSpec::MINILM_L6_V2, bars)?;
    let texts = cairn_embed::synthetic_prose(chunks.max(1), chars, 42);
    let query = "how long do sessions stay cached?";
    let mut rows = Vec::new();
    for &path in paths {
        let opts = MiniLmOptions {
            kernel: Some(path),
            threads: threads.unwrap_or(MiniLmOptions::default().threads).max(1),
            ..MiniLmOptions::default()
        };
        let threads = opts.threads;
        let model = MiniLm::load(&loc, opts)?;
        let seqs = texts
            .iter()
            .map(|t| model.tokenize(t))
            .collect::<Result<Vec<_>, _>>()?;
        let avg_tokens = seqs.iter().map(Vec::len).sum::<usize>() as f64 / seqs.len() as f64;
        model.embed_tokens(&seqs[..1]); // warm up
        let t = Instant::now();
        model.embed_tokens(&seqs);
        let secs = t.elapsed().as_secs_f64();
        let _ = model.embed(&[query]);
        let mut times: Vec<f64> = (0..50)
            .map(|_| {
                let t = Instant::now();
                let _ = model.embed(&[query]);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let row = serde_json::json!({
            "kernel": path.name(),
            "model": model.model_id(),
            "chunks": seqs.len(),
            "chars_per_chunk": chars,
            "avg_tokens": avg_tokens,
            "threads": threads,
            "seconds": secs,
            "chunks_per_sec": seqs.len() as f64 / secs,
            "query_median_ms": times[times.len() / 2],
        });
        if !json {
            println!(
                "{:<8} {} chunks of {chars} chars ({avg_tokens:.0} tokens avg), {threads} thread(s): {:.2} chunks/s; short query median {:.2} ms",
                path.name(),
                seqs.len(),
                seqs.len() as f64 / secs,
                times[times.len() / 2]
            );
        }
        rows.push(row);
    }
    if json {
        print::json(&rows)?;
    }
    Ok(())
}
