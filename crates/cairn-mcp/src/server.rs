//! The MCP tools: a thin adapter from tool calls to the engine.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn::{Engine, Mode, SearchOptions};
use cairn_core::Kind;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::budget::{MIN_BUDGET, budgeted, stamp_tokens, unbudgeted};
use crate::error::CallError;
use crate::graph::{GraphView, MIN_COMMUNITY_SIZE, graph_view};

/// Most matches one search returns.
pub const MAX_LIMIT: usize = 20;
/// Most lines of context `expand` adds on each side.
pub const MAX_CONTEXT_LINES: u32 = 200;
/// Most transcript turns `transcript` shows on each side.
pub const MAX_TRANSCRIPT_CONTEXT: u32 = 20;
/// Transcript turns `transcript` shows on each side when not told.
pub const DEFAULT_TRANSCRIPT_CONTEXT: u32 = 3;
/// Most memories one `memory_list` returns.
pub const MAX_LIST: u32 = 500;
/// Memories one `memory_list` returns when not told.
pub const DEFAULT_LIST: u32 = 50;
/// Memories one `memory_recall` returns when not told and without a budget
/// (with one, [`MAX_LIMIT`]: the budget decides).
pub const DEFAULT_RECALL_LIMIT: u32 = 5;
/// Most neighbours or communities one `graph` call returns.
pub const MAX_GRAPH_LIMIT: u32 = 200;
/// Neighbours or communities one `graph` call returns when not told.
pub const DEFAULT_GRAPH_LIMIT: u32 = 30;

/// What every connection shares: the engine and what the server is doing.
pub struct Shared {
    /// The project's engine.
    pub engine: Arc<Engine>,
    /// Whether a file watcher is re-indexing on change.
    pub watching: AtomicBool,
    /// Whether an index pass is running right now.
    pub indexing: AtomicBool,
    /// Other registered projects a `search` with `projects` opened, by root
    /// (kept for the next search; at most twice the projects of a search).
    pub others: std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, Arc<Engine>>>,
}

impl Shared {
    /// Shares an engine; nothing running yet.
    pub fn new(engine: Arc<Engine>) -> Arc<Shared> {
        Arc::new(Shared {
            engine,
            watching: AtomicBool::new(false),
            indexing: AtomicBool::new(false),
            others: Default::default(),
        })
    }

    /// The engine of a project `search` names: this one for `.` (or its own
    /// name or root), else a project `cairn projects` lists (by name or
    /// identity, never an arbitrary folder), opened once with this
    /// engine's embedder when the model is the same.
    fn project(&self, name: &str) -> Result<Arc<Engine>, CallError> {
        if name == "." {
            return Ok(self.engine.clone());
        }
        let projects = cairn::Projects::load()?;
        let Some(entry) = projects
            .entries()
            .iter()
            .find(|e| e.name == name || (name.len() >= 6 && e.id.starts_with(name)))
        else {
            return Err(format!(
                "no registered project {name:?} (`cairn projects` lists them; `.` is this one)"
            )
            .into());
        };
        let root = entry.root.clone();
        if root == self.engine.root() {
            return Ok(self.engine.clone());
        }
        let mut others = cairn_core::sync::lock(&self.others);
        if let Some(e) = others.get(&root) {
            return Ok(e.clone());
        }
        let config = cairn::Config::load(&root)?;
        if config.store.uri.trim().is_empty() && !cairn::paths::index_file(&root).exists() {
            return Err(format!("project {name:?} has no index: run `cairn index` there").into());
        }
        let mine = self.engine.config();
        let open = cairn::Open::new(&root, &config);
        let open = if config.embed.model == mine.embed.model
            && config.embed.provider == mine.embed.provider
        {
            open.embedder(self.engine.embedder().cloned())
        } else {
            open
        };
        let engine = Arc::new(open.engine()?);
        if others.len() >= 2 * cairn::MAX_SEARCH_PROJECTS {
            others.clear();
        }
        others.insert(root, engine.clone());
        Ok(engine)
    }

    /// Computes missing vectors on a thread of its own (one backfill at a
    /// time: a second waits for the first, then finds nothing to do).
    pub fn spawn_backfill(&self) {
        let engine = self.engine.clone();
        engine.expect_backfill();
        let spawned = std::thread::Builder::new()
            .name("cairn-embed".into())
            .spawn(move || match engine.embed_pending(&cairn::NoProgress) {
                Ok(0) => {}
                Ok(n) => tracing::info!("embedded {n} chunks in the background"),
                Err(e) => tracing::warn!("background embedding failed: {e}"),
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start background embedding: {e}");
        }
    }
}

// The argument types below are what the tools' input schemas are made of: a
// field's doc comment is the description a model reads, so a field whose
// name, type and range say it all has none (`//` notes are for us).

/// Arguments of `relate`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RelateArgs {
    #[serde(default)]
    pub entities: Vec<cairn::EntityInput>,
    #[serde(default)]
    pub relations: Vec<cairn::RelationInput>,
    #[serde(default)]
    pub observations: Vec<cairn::ObservationInput>,
}

/// What `graph` does.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum GraphOp {
    Neighbors,
    Path,
    Communities,
}

/// Arguments of `graph`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GraphArgs {
    pub op: GraphOp,
    pub name: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    #[schemars(
        range(min = 1, max = MAX_GRAPH_LIMIT),
        description = format!("Default {DEFAULT_GRAPH_LIMIT}.")
    )]
    pub limit: Option<u32>,
}

/// A kind of source `search` may keep to.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SourceKind {
    Doc,
    Code,
    Memory,
    History,
}

impl From<SourceKind> for Kind {
    fn from(k: SourceKind) -> Kind {
        match k {
            SourceKind::Doc => Kind::Doc,
            SourceKind::Code => Kind::Code,
            SourceKind::Memory => Kind::Memory,
            SourceKind::History => Kind::History,
        }
    }
}

/// How a query is read.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Syntax {
    // Plain words, any of which may match.
    #[default]
    Plain,
    // FTS5, keyword ranking only.
    Fts,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SearchArgs {
    pub query: String,
    /// fts: FTS5 syntax.
    pub syntax: Option<Syntax>,
    // Default: `[search] limit` (at most MAX_LIMIT); MAX_LIMIT with max_tokens.
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    pub limit: Option<u32>,
    /// File being edited.
    pub current_file: Option<String>,
    pub path_prefix: Option<String>,
    pub kind: Option<Vec<SourceKind>>,
    // The whole answer's budget: a line per match, full text for the best that fit.
    #[schemars(range(min = MIN_BUDGET, max = cairn::MAX_TOKENS))]
    pub max_tokens: Option<u32>,
    // Leave out matches scoring under this (the fused score each match
    // reports; 0: off). Default: `[search] min_score`.
    #[schemars(range(min = 0.0))]
    pub min_score: Option<f64>,
    // Drop matches under this share of the best score.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub relative_floor: Option<f64>,
    // Registered projects (names or identities) to search instead, "." this
    // one; at most cairn::MAX_SEARCH_PROJECTS (checked in `search`). No
    // description: tools/list is held to its token budget.
    pub projects: Option<Vec<String>>,
    // Cross-encoder rerank of the top `[search] rerank_k` (slower).
    // Default: `[search] rerank`.
    pub rerank: Option<bool>,
}

/// Arguments of `expand`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ExpandArgs {
    pub chunk_id: String,
    #[schemars(range(min = 0, max = MAX_CONTEXT_LINES))]
    pub context_lines: Option<u32>,
    #[schemars(
        range(min = MIN_BUDGET, max = cairn::MAX_TOKENS),
        description = format!("Default {}.", cairn::DEFAULT_READ_TOKENS)
    )]
    pub max_tokens: Option<u32>,
}

/// Arguments of `why`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct WhyArgs {
    pub target: String,
    #[schemars(
        range(min = MIN_BUDGET, max = cairn::MAX_TOKENS),
        description = format!("Default {}.", cairn::DEFAULT_READ_TOKENS)
    )]
    pub max_tokens: Option<u32>,
}

/// Arguments of `get`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GetArgs {
    /// Project-relative.
    pub path: String,
    #[schemars(range(min = 1))]
    pub start_line: Option<u32>,
    #[schemars(range(min = 1))]
    pub end_line: Option<u32>,
    #[schemars(
        range(min = MIN_BUDGET, max = cairn::MAX_TOKENS),
        description = format!("Default {}.", cairn::DEFAULT_READ_TOKENS)
    )]
    pub max_tokens: Option<u32>,
}

/// Arguments of `memory_store`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct StoreArgs {
    /// One self-contained fact.
    pub text: String,
    /// fact, decision, convention, … (default note).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    #[schemars(
        range(min = 1, max = 10),
        description = format!("Default {}.", cairn_core::DEFAULT_IMPORTANCE)
    )]
    pub importance: Option<u8>,
    pub tags: Option<Vec<String>>,
    pub entities: Option<Vec<String>>,
    /// Forget after, e.g. 30d.
    pub ttl: Option<String>,
    /// Files it came from.
    pub sources: Option<Vec<String>>,
    /// Ids of memories it replaces.
    pub supersedes: Option<Vec<String>>,
}

/// Arguments of `memory_update`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct UpdateArgs {
    pub id: String,
    pub text: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    #[schemars(range(min = 1, max = 10))]
    pub importance: Option<u8>,
    pub tags: Option<Vec<String>>,
    // From now, like memory_store's.
    pub ttl: Option<String>,
    pub dry_run: Option<bool>,
}

impl UpdateArgs {
    /// The memory's id, the change (made by `client`) and whether it is
    /// only a dry run: one reading for MCP's `memory_update` and the page's.
    pub(crate) fn into_patch(self, client: &str) -> (String, cairn::MemoryPatch, bool) {
        let patch = cairn::MemoryPatch {
            text: self.text,
            kind: self.kind,
            importance: self.importance,
            tags: self.tags,
            ttl: self.ttl,
            expires: None,
            client: client.into(),
        };
        (self.id, patch, self.dry_run.unwrap_or(false))
    }
}

/// Arguments of `memory_forget`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ForgetArgs {
    pub id: String,
    pub dry_run: Option<bool>,
}

/// Arguments of `memory_recall`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RecallArgs {
    pub query: String,
    /// fts: FTS5 syntax.
    pub syntax: Option<Syntax>,
    #[schemars(
        range(min = 1, max = MAX_LIMIT),
        description = format!("Default {DEFAULT_RECALL_LIMIT}; {MAX_LIMIT} with max_tokens.")
    )]
    pub limit: Option<u32>,
    #[schemars(range(min = 0, max = cairn::MAX_OFFSET))]
    pub offset: Option<u32>,
    pub types: Option<Vec<String>>,
    pub tags: Option<Vec<String>>,
    pub entities: Option<Vec<String>>,
    #[schemars(range(min = 1, max = 10))]
    pub min_importance: Option<u8>,
    // RFC 3339 or YYYY-MM-DD.
    pub since: Option<String>,
    pub until: Option<String>,
    pub include_expired: Option<bool>,
    // The whole answer's budget: a line per match, full text for the best that fit.
    #[schemars(range(min = MIN_BUDGET, max = cairn::MAX_TOKENS))]
    pub max_tokens: Option<u32>,
    // Leave out memories whose search score is under this (0: off).
    // Default: `[memory] min_score`.
    #[schemars(range(min = 0.0))]
    pub min_score: Option<f64>,
    // Drop memories under this share of the best relevance.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub relative_floor: Option<f64>,
}

/// A recalled memory as a budgeted answer lists it.
struct RecalledItem<'a>(&'a cairn::Recalled);

impl crate::budget::Item for RecalledItem<'_> {
    fn head(&self) -> String {
        let r = self.0;
        let m = &r.memory.memory;
        let flag = if r.source_changed {
            ", source changed"
        } else {
            ""
        };
        let mine = if r.personal { ", personal" } else { "" };
        format!(
            "{} {} imp {} ({:.3}{flag}{mine})",
            m.id, m.kind, m.importance, r.score
        )
    }
    fn about(&self) -> &str {
        &self.0.memory.text
    }
    fn id(&self) -> &str {
        &self.0.memory.memory.id
    }
    fn text(&self) -> &str {
        &self.0.memory.text
    }
}

/// Arguments of `transcript`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct TranscriptArgs {
    pub session_id: String,
    // Default: the last.
    pub turn_id: Option<String>,
    #[schemars(
        range(min = 0, max = MAX_TRANSCRIPT_CONTEXT),
        description = format!("Default {DEFAULT_TRANSCRIPT_CONTEXT}.")
    )]
    pub context: Option<u32>,
}

/// Arguments of `memory_list`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ListArgs {
    pub types: Option<Vec<String>>,
    pub tags: Option<Vec<String>>,
    #[schemars(
        range(min = 1, max = MAX_LIST),
        description = format!("Default {DEFAULT_LIST}.")
    )]
    pub limit: Option<u32>,
    #[schemars(range(min = 0, max = cairn::MAX_OFFSET))]
    pub offset: Option<u32>,
    pub include_expired: Option<bool>,
}

/// The Cairn MCP server: one per connection, all sharing one [`Shared`].
#[derive(Clone)]
pub struct CairnServer {
    shared: Arc<Shared>,
    tool_router: ToolRouter<CairnServer>,
}

/// A tool's refusal, any secret in it redacted: an error repeats what it
/// refused (a path, a value), and the client's arguments may hold a secret.
fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(cairn::redact_secrets(
        &message.into(),
    ))])
}

/// The tools annotated read-only: the stdio proxy may send a call of one
/// again to a restarted daemon, since running it twice changes nothing.
pub(crate) fn read_only_tools() -> std::collections::HashSet<String> {
    CairnServer::tools()
        .list_all()
        .into_iter()
        .filter(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true))
        .map(|t| t.name.to_string())
        .collect()
}

/// A budget as the engine takes it.
fn tokens(max_tokens: Option<u32>, default: usize) -> usize {
    max_tokens.map_or(default, |t| t as usize)
}

// Every tool below destructures its arguments, calls the engine through
// `answer` and returns: the ranges in the schemas are held by `call_tool`
// (see `crate::schema`) before a tool runs, so no tool checks or clamps them
// again.
#[tool_router]
impl CairnServer {
    /// A server over the shared engine.
    pub fn new(shared: Arc<Shared>) -> CairnServer {
        CairnServer {
            shared,
            tool_router: Self::tools(),
        }
    }

    /// The tools as clients see them: the router with each input schema
    /// tidied (see [`crate::schema`]), which calls are then checked against.
    pub fn tools() -> ToolRouter<CairnServer> {
        let mut router = Self::tool_router();
        for route in router.map.values_mut() {
            route.attr.input_schema = Arc::new(crate::schema::tidy(&route.attr.input_schema));
        }
        router
    }

    /// Runs blocking engine work off the async executor and turns its
    /// outcome into a tool result: the answer as JSON, or the error as a
    /// tool error the model can read.
    async fn answer<T: Serialize>(
        &self,
        f: impl FnOnce(&Shared) -> Result<T, CallError> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let shared = self.shared.clone();
        let out = tokio::task::spawn_blocking(move || {
            f(&shared).and_then(|v| {
                serde_json::to_value(v).map_err(|e| CallError::Internal(e.to_string()))
            })
        })
        .await
        .unwrap_or_else(|e| Err(CallError::Internal(e.to_string())));
        Ok(match out {
            Ok(v) => CallToolResult::success(vec![ContentBlock::text(v.to_string())]),
            Err(e) => tool_error(e.to_string()),
        })
    }

    /// Search the project's docs, code and memories (BM25 + embeddings + graph, fused).
    #[tool(
        description = "Search docs, code and memories; best first.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| search(s, args)).await
    }

    /// The section or definition around a chunk, within a token budget.
    #[tool(
        description = "A match's section or enclosing definition, within max_tokens.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn expand(
        &self,
        Parameters(ExpandArgs {
            chunk_id,
            context_lines,
            max_tokens,
        }): Parameters<ExpandArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let budget = tokens(max_tokens, cairn::DEFAULT_READ_TOKENS);
            Ok(s.engine
                .expand(&chunk_id, context_lines.unwrap_or(0), budget)?)
        })
        .await
    }

    /// The commits behind a symbol or a file, within a token budget.
    #[tool(
        description = "Commits that changed a symbol or path[:line], newest first.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn why(
        &self,
        Parameters(WhyArgs { target, max_tokens }): Parameters<WhyArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let opts = cairn::WhyOptions {
                limit: 10,
                max_tokens: tokens(max_tokens, cairn::DEFAULT_READ_TOKENS),
            };
            Ok(s.engine.why(&target, &opts)?)
        })
        .await
    }

    /// Lines of an indexed file, within a token budget.
    #[tool(
        description = "Lines of an indexed file, within max_tokens.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get(
        &self,
        Parameters(GetArgs {
            path,
            start_line,
            end_line,
            max_tokens,
        }): Parameters<GetArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let budget = tokens(max_tokens, cairn::DEFAULT_READ_TOKENS);
            Ok(s.engine.read_file(&path, start_line, end_line, budget)?)
        })
        .await
    }

    /// Store a memory.
    #[tool(
        description = "Remember a fact, decision or convention; secrets are redacted.",
        annotations(destructive_hint = false, open_world_hint = false)
    )]
    async fn memory_store(
        &self,
        Parameters(StoreArgs {
            text,
            kind,
            importance,
            tags,
            entities,
            ttl,
            sources,
            supersedes,
        }): Parameters<StoreArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            Ok(s.engine.remember(&cairn::MemoryInput {
                text,
                kind,
                importance,
                tags: tags.unwrap_or_default(),
                entities: entities.unwrap_or_default(),
                ttl,
                expires: None,
                sources: sources.unwrap_or_default(),
                client: "mcp".into(),
                created: None,
                supersedes: supersedes.unwrap_or_default(),
                // An agent is no person: it never replaces a more important memory.
                by_person: false,
            })?)
        })
        .await
    }

    /// Change a memory.
    #[tool(
        description = "Change a memory by id (`cairn undo` reverts it).",
        annotations(
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn memory_update(
        &self,
        Parameters(args): Parameters<UpdateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let (id, patch, dry_run) = args.into_patch("mcp");
        self.answer(move |s| Ok(s.engine.update_memory(&id, &patch, dry_run)?))
            .await
    }

    /// Forget a memory.
    #[tool(
        description = "Forget a memory by id (`cairn undo` restores it).",
        annotations(destructive_hint = true, open_world_hint = false)
    )]
    async fn memory_forget(
        &self,
        Parameters(ForgetArgs { id, dry_run }): Parameters<ForgetArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let dry = dry_run.unwrap_or(false);
            let memory = s.engine.forget(&id, dry, "mcp")?;
            Ok(json!({"forgotten": !dry, "memory": memory}))
        })
        .await
    }

    /// Recall memories.
    #[tool(
        description = "Memories relevant to a query, best first.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_recall(
        &self,
        Parameters(args): Parameters<RecallArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| recall(s, args)).await
    }

    /// List memories.
    #[tool(
        description = "Memories, newest first.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_list(
        &self,
        Parameters(ListArgs {
            types,
            tags,
            limit,
            offset,
            include_expired,
        }): Parameters<ListArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let memories = s.engine.list_memories(&cairn::ListOptions {
                types: types.unwrap_or_default(),
                tags: tags.unwrap_or_default(),
                include_expired: include_expired.unwrap_or(false),
                limit: limit.unwrap_or(DEFAULT_LIST) as usize,
                offset: offset.unwrap_or(0) as usize,
            })?;
            Ok(json!({"total": memories.len(), "memories": memories}))
        })
        .await
    }

    /// Original turns of a captured session.
    #[tool(
        description = "Turns of a captured session around one turn.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn transcript(
        &self,
        Parameters(TranscriptArgs {
            session_id,
            turn_id,
            context,
        }): Parameters<TranscriptArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let context = context.unwrap_or(DEFAULT_TRANSCRIPT_CONTEXT) as usize;
            Ok(s.engine
                .transcript(&session_id, turn_id.as_deref(), context)?)
        })
        .await
    }

    /// Entities, relations and observations.
    #[tool(
        description = "Record entities, relations (e.g. depends_on) and observations.",
        annotations(
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn relate(
        &self,
        Parameters(RelateArgs {
            entities,
            relations,
            observations,
        }): Parameters<RelateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            if entities.is_empty() && relations.is_empty() && observations.is_empty() {
                return Err("give entities, relations or observations".into());
            }
            Ok(s.engine
                .relate(&entities, &relations, &observations, "mcp")?)
        })
        .await
    }

    /// Read the knowledge graph.
    #[tool(
        description = "Links between code, docs, memories: neighbors of name, path from→to, communities.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn graph(
        &self,
        Parameters(GraphArgs {
            op,
            name,
            from,
            to,
            limit,
        }): Parameters<GraphArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.answer(move |s| {
            let limit = limit.unwrap_or(DEFAULT_GRAPH_LIMIT) as usize;
            let view = match op {
                GraphOp::Neighbors => GraphView::Neighbors {
                    name: name.ok_or("op=neighbors needs name")?,
                    limit,
                },
                GraphOp::Path => GraphView::Path {
                    from: from.ok_or("op=path needs from")?,
                    to: to.ok_or("op=path needs to")?,
                },
                GraphOp::Communities => GraphView::Communities {
                    min_size: MIN_COMMUNITY_SIZE,
                    limit,
                },
            };
            Ok(graph_view(&s.engine, &view)?.into_value())
        })
        .await
    }

    /// Index the project now.
    #[tool(
        description = "Index changed files now (needless while status.watching).",
        annotations(
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn index_project(&self) -> Result<CallToolResult, ErrorData> {
        self.answer(|s| {
            let roots = s.engine.default_roots();
            s.indexing.store(true, Ordering::SeqCst);
            let report = s.engine.index(&roots, &cairn::NoProgress);
            s.indexing.store(false, Ordering::SeqCst);
            let r = report?;
            let mut answer = json!({
                "files_seen": r.files_seen,
                "added": r.files_added,
                "changed": r.files_changed,
                "deleted": r.files_deleted,
                "unchanged": r.files_unchanged,
                "chunks_written": r.chunks_written,
                "chunks_embedded": r.chunks_embedded,
                "code_chunks_by_language": r.languages,
                "skipped": r.skipped.iter().map(|s| json!({"path": s.path, "reason": s.reason})).collect::<Vec<_>>(),
                "seconds": r.seconds,
            });
            // Said only when there is something to say: files read lossily,
            // history left out (a damaged repository).
            if !r.notes.is_empty() {
                answer["notes"] = json!(r.notes.iter().map(|n| json!({"path": n.path, "note": n.note})).collect::<Vec<_>>());
            }
            if !r.history_warnings.is_empty() {
                answer["history_warnings"] = json!(r.history_warnings);
            }
            Ok(answer)
        })
        .await
    }

    /// Index facts.
    #[tool(
        description = "Index health: counts, model, watcher, stale files.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn status(&self) -> Result<CallToolResult, ErrorData> {
        self.answer(status).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CairnServer {
    /// Checks the arguments against the tool's schema (ranges, enums), then
    /// runs the tool: a value out of range is a tool error naming the field
    /// and what it may be, never clamped in silence.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        if let (Some(tool), Some(args)) = (
            self.tool_router.get(&request.name),
            request.arguments.as_ref(),
        ) && let Err(e) = crate::schema::check(&tool.input_schema, args)
        {
            return Ok(tool_error(e).into());
        }
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        // Arguments that do not parse are answered with serde's words, which
        // quote the value ("invalid type: string \"…\""): redacted too.
        self.tool_router.call(tcc).await.map_err(|mut e| {
            e.message = cairn::redact_secrets(&e.message).into();
            e
        })
    }

    /// A request rmcp could not read as its method's: for a method MCP
    /// defines, that is bad params (`tools/call` with `arguments: [1,2]`
    /// was answered -32601 "method not found"), -32602 as JSON-RPC says,
    /// with what is wrong; any other method is not found.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        Err(unreadable_request(&request.method, request.params.as_ref()))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Cairn indexes this project's docs, code and agent memories. Call `search` \
                 before answering questions about the project (pass current_file when editing, \
                 max_tokens to bound the answer), `expand` for a match's whole section or function, \
                 `get` for a file's lines (both within max_tokens), `status` for index health. Use `memory_recall` at the start \
                 of a task and `memory_store` for decisions, conventions and facts worth keeping; \
                 `relate` to record how entities connect, `graph` to follow those links.",
            )
    }
}

/// The client requests MCP defines: one that reaches
/// [`ServerHandler::on_custom_request`] had params rmcp could not read.
const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// The error for a request whose method or params rmcp could not read:
/// -32602 (invalid params) naming what is wrong for a method MCP defines,
/// else -32601 (method not found).
pub(crate) fn unreadable_request(method: &str, params: Option<&Value>) -> ErrorData {
    if !MCP_METHODS.contains(&method) {
        return ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            // rmcp's own answer: the method's name.
            method.to_string(),
            None,
        );
    }
    let why = if method == "tools/call" {
        tool_call_params_problem(params)
    } else {
        "they do not fit the method's schema".to_string()
    };
    ErrorData::invalid_params(format!("Invalid params for {method}: {why}"), None)
}

/// What is wrong with a `tools/call`'s params, in words.
fn tool_call_params_problem(params: Option<&Value>) -> String {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let Some(Value::Object(p)) = params else {
        return match params {
            None => "params are missing: give {\"name\": TOOL, \"arguments\": {…}}".into(),
            Some(v) => format!("params must be an object, not {}", kind(v)),
        };
    };
    match (p.get("name"), p.get("arguments")) {
        (None, _) => "`name` (the tool) is missing".into(),
        (Some(n), _) if !n.is_string() => format!("`name` must be a string, not {}", kind(n)),
        (_, Some(a)) if !(a.is_object() || a.is_null()) => {
            format!("`arguments` must be an object, not {}", kind(a))
        }
        _ => match serde_json::from_value::<rmcp::model::CallToolRequestParams>(Value::Object(
            p.clone(),
        )) {
            Err(e) => e.to_string(),
            Ok(_) => "they do not fit the method's schema".into(),
        },
    }
}

/// `search`: run, say how it ran, shape the answer.
fn search(
    shared: &Shared,
    SearchArgs {
        query,
        syntax,
        limit,
        current_file,
        path_prefix,
        kind,
        max_tokens,
        min_score,
        relative_floor,
        projects,
        rerank,
    }: SearchArgs,
) -> Result<Value, CallError> {
    let engine = &shared.engine;
    if query.trim().is_empty() {
        return Err("query is empty: say what to look for".into());
    }
    let projects = projects.unwrap_or_default();
    if projects.len() > cairn::MAX_SEARCH_PROJECTS {
        return Err(format!(
            "{} projects asked: at most {}",
            projects.len(),
            cairn::MAX_SEARCH_PROJECTS
        )
        .into());
    }
    let budget = max_tokens.map(|b| b as usize);
    // The configured default may say more than one call returns.
    let limit = match (limit, budget) {
        (Some(l), _) => l as usize,
        (None, Some(_)) => MAX_LIMIT,
        (None, None) => engine.config().search.limit.clamp(1, MAX_LIMIT),
    };
    let kinds: Vec<Kind> = kind.iter().flatten().map(|&k| k.into()).collect();
    // While vectors are being computed only part of the index has them:
    // answer from BM25 alone, and say so.
    let embedding = engine.embedding_in_progress();
    let (mode, note) = match (engine.embedder().is_some(), embedding) {
        (false, _) => (
            Mode::Bm25,
            Some("no embedding model loaded: keyword (BM25) search only".to_string()),
        ),
        (true, true) => {
            let s = engine.status()?;
            (
                Mode::Bm25,
                Some(format!(
                    "embeddings are being computed ({} of {} chunks): keyword (BM25) search only until done",
                    s.embedded_chunks, s.chunks
                )),
            )
        }
        (true, false) => (Mode::Hybrid, None),
    };
    let opts = SearchOptions {
        limit,
        current_file,
        path_prefix,
        raw_fts: syntax == Some(Syntax::Fts),
        mode,
        kinds,
        no_graph: false,
        explain: false,
        min_score,
        relative_floor,
        rerank,
        ..SearchOptions::default()
    };
    if !projects.is_empty() {
        return search_several(shared, &projects, &query, &opts, budget);
    }
    let searched = engine.search_with_retrievers(&query, &opts)?;
    let matches = searched.hits;
    let mut head = json!({
        "query": query,
        "retrievers": searched.retrievers.join("+"),
        "total": matches.len(),
    });
    if let Some(r) = &searched.rerank {
        head["rerank"] = match (&r.error, r.over_budget) {
            (Some(e), _) => json!(format!("not applied: {e}")),
            (None, true) => json!(format!(
                "top {} of {} reranked, then its budget ran out ({:.0} ms)",
                r.scored, r.asked, r.ms
            )),
            (None, false) => json!(format!("top {} reranked ({:.0} ms)", r.scored, r.ms)),
        };
    }
    if !matches.is_empty() {
        confidence_into(&mut head, searched.confidence, "hit", budget.is_some());
    }
    let note = match note {
        None if matches.is_empty() && engine.status().is_ok_and(|s| s.files == 0) => Some(
            "the index is empty: call the index_project tool (or run `cairn index` in the project, or serve with --build-index)"
                .to_string(),
        ),
        other => other,
    };
    if let Some(n) = note {
        head["note"] = json!(n);
    }
    match budget {
        None => Ok(unbudgeted(head, &matches, searched.total)),
        Some(b) => fit(budgeted(head, &matches, searched.total, b), b),
    }
}

/// `search` over several projects: each hit names its project (a field of
/// each match; the first word of each index line within a budget).
fn search_several(
    shared: &Shared,
    projects: &[String],
    query: &str,
    opts: &SearchOptions,
    budget: Option<usize>,
) -> Result<Value, CallError> {
    let mut engines: Vec<(String, Arc<Engine>)> = Vec::new();
    for name in projects {
        let e = shared.project(name)?;
        if !engines.iter().any(|(_, o)| o.root() == e.root()) {
            engines.push((name.clone(), e));
        }
    }
    let named: Vec<(String, &Engine)> = engines.iter().map(|(n, e)| (n.clone(), &**e)).collect();
    let hits = cairn::search_projects(&named, query, opts)?;
    let head = json!({
        "query": query,
        "projects": engines.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        "total": hits.len(),
    });
    let total = hits.len();
    match budget {
        None => {
            let plain: Vec<cairn_core::Hit> = hits.iter().map(|h| h.hit.clone()).collect();
            let mut out = unbudgeted(head, &plain, total);
            if let Some(list) = out["matches"].as_array_mut() {
                for (m, h) in list.iter_mut().zip(&hits) {
                    m["project"] = json!(h.project);
                    if !h.also_in.is_empty() {
                        m["also_in"] = json!(h.also_in);
                    }
                }
            }
            stamp_tokens(&mut out);
            Ok(out)
        }
        Some(b) => fit(budgeted(head, &hits, total, b), b),
    }
}

/// `memory_recall`: run, shape the answer (every memory, or within the budget).
fn recall(
    shared: &Shared,
    RecallArgs {
        query,
        syntax,
        limit,
        offset,
        types,
        tags,
        entities,
        min_importance,
        since,
        until,
        include_expired,
        max_tokens,
        min_score,
        relative_floor,
    }: RecallArgs,
) -> Result<Value, CallError> {
    let engine = &shared.engine;
    if query.trim().is_empty() {
        return Err("query is empty: say what to recall".into());
    }
    let budget = max_tokens.map(|b| b as usize);
    let default_limit = if budget.is_some() {
        MAX_LIMIT
    } else {
        DEFAULT_RECALL_LIMIT as usize
    };
    let opts = cairn::RecallOptions {
        limit: limit.map_or(default_limit, |l| l as usize),
        offset: offset.unwrap_or(0) as usize,
        types: types.unwrap_or_default(),
        tags: tags.unwrap_or_default(),
        entities: entities.unwrap_or_default(),
        min_importance,
        since,
        until,
        include_expired: include_expired.unwrap_or(false),
        no_touch: false,
        min_score,
        relative_floor,
        raw_fts: syntax == Some(Syntax::Fts),
        standing: false,
        show_replaced: false,
    };
    let (hits, found) = engine.recall_counted(&query, &opts)?;
    let mut head = json!({"query": query, "total": hits.len()});
    confidence_into(
        &mut head,
        cairn::Confidence::of(
            hits.iter().map(|h| h.similarity),
            engine.embedder().is_some() && !opts.raw_fts && !hits.is_empty(),
            engine.config().search.confident_similarity,
        ),
        "memory",
        budget.is_some(),
    );
    match budget {
        None => {
            let mut v = head;
            v["total_count"] = json!(found);
            v["has_more"] = json!(opts.offset + hits.len() < found);
            v["memories"] = json!(hits);
            stamp_tokens(&mut v);
            Ok(v)
        }
        Some(b) => {
            let items: Vec<RecalledItem<'_>> = hits.iter().map(RecalledItem).collect();
            // `has_more` counts this page's offset: what is past it.
            fit(
                budgeted(head, &items, found.saturating_sub(opts.offset), b),
                b,
            )
        }
    }
}

/// A budgeted answer, or the error that says the budget is too small for it.
fn fit(answer: Option<Value>, budget: usize) -> Result<Value, CallError> {
    answer.ok_or_else(|| format!("max_tokens {budget} is too small for this answer").into())
}

/// `status`: the engine's figures plus what this server is doing.
pub(crate) fn status(shared: &Shared) -> Result<Value, CallError> {
    let engine = &shared.engine;
    let s = engine.status()?;
    let stale = engine.stale_files()?;
    let mut v = json!(s);
    v["watching"] = json!(shared.watching.load(Ordering::SeqCst));
    v["indexing"] = json!(shared.indexing.load(Ordering::SeqCst));
    v["stale_files"] = json!(stale.len());
    v["stale_examples"] = json!(stale.iter().take(5).map(|(p, _)| p).collect::<Vec<_>>());
    Ok(v)
}

/// Puts an answer's relevance into its head: `confident` (a hit at least
/// `[search] confident_similarity` close to the query), `best_similarity`,
/// and a `note` when nothing is close (a budgeted answer carries the flag
/// alone); nothing when no vectors ran.
fn confidence_into(
    head: &mut Value,
    confidence: Option<cairn::Confidence>,
    what: &str,
    budgeted: bool,
) {
    let Some(c) = confidence else {
        return;
    };
    head["confident"] = json!(c.confident);
    if budgeted {
        // Every token counts there: the flag alone.
        return;
    }
    if let Some(b) = c.best_similarity {
        head["best_similarity"] = json!((b * 1000.0).round() / 1000.0);
    }
    if let Some(note) = c.note(what) {
        head["note"] = json!(note);
    }
}
