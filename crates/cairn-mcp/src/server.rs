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
use serde::Deserialize;
use serde_json::{Value, json};

use crate::budget::{MIN_BUDGET, budgeted, unbudgeted};

/// Most matches one search returns.
pub const MAX_LIMIT: usize = 20;
/// Most lines of context `expand` adds on each side.
pub const MAX_CONTEXT_LINES: u32 = 200;
/// Most transcript turns `transcript` shows on each side.
pub const MAX_TRANSCRIPT_CONTEXT: u32 = 20;
/// Most memories one `memory_list` returns.
pub const MAX_LIST: u32 = 500;
/// Most neighbours or communities one `graph` call returns.
pub const MAX_GRAPH_LIMIT: u32 = 200;

/// What every connection shares: the engine and what the server is doing.
pub struct Shared {
    /// The project's engine.
    pub engine: Arc<Engine>,
    /// Whether a file watcher is re-indexing on change.
    pub watching: AtomicBool,
    /// Whether an index pass is running right now.
    pub indexing: AtomicBool,
}

impl Shared {
    /// Shares an engine; nothing running yet.
    pub fn new(engine: Arc<Engine>) -> Arc<Shared> {
        Arc::new(Shared {
            engine,
            watching: AtomicBool::new(false),
            indexing: AtomicBool::new(false),
        })
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
    // Default 30.
    #[schemars(range(min = 1, max = MAX_GRAPH_LIMIT))]
    pub limit: Option<u32>,
}

/// A kind of source `search` may keep to.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SourceKind {
    Doc,
    Code,
    Memory,
}

impl From<SourceKind> for Kind {
    fn from(k: SourceKind) -> Kind {
        match k {
            SourceKind::Doc => Kind::Doc,
            SourceKind::Code => Kind::Code,
            SourceKind::Memory => Kind::Memory,
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
    /// fts: FTS5 query syntax (keywords only).
    pub syntax: Option<Syntax>,
    // Default: `[search] limit` (5); 20 with max_tokens.
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    pub limit: Option<u32>,
    /// The file being edited (boosts its domain).
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
}

/// Arguments of `expand`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ExpandArgs {
    pub chunk_id: String,
    #[schemars(range(min = 0, max = MAX_CONTEXT_LINES))]
    pub context_lines: Option<u32>,
    // Default 2000.
    #[schemars(range(min = MIN_BUDGET, max = cairn::MAX_TOKENS))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `get`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct GetArgs {
    /// Relative to the project root.
    pub path: String,
    #[schemars(range(min = 1))]
    pub start_line: Option<u32>,
    #[schemars(range(min = 1))]
    pub end_line: Option<u32>,
    // Default 2000.
    #[schemars(range(min = MIN_BUDGET, max = cairn::MAX_TOKENS))]
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
    // Default 5.
    #[schemars(range(min = 1, max = 10))]
    pub importance: Option<u8>,
    pub tags: Option<Vec<String>>,
    pub entities: Option<Vec<String>>,
    /// Forget after, e.g. 30d.
    pub ttl: Option<String>,
    /// Files it came from.
    pub sources: Option<Vec<String>>,
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
    /// fts: FTS5 query syntax (keywords only).
    pub syntax: Option<Syntax>,
    // Default 5; 20 with max_tokens.
    #[schemars(range(min = 1, max = MAX_LIMIT))]
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
        format!(
            "{} {} imp {} ({:.3}{flag})",
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
    /// Default 3.
    #[schemars(range(min = 0, max = MAX_TRANSCRIPT_CONTEXT))]
    pub context: Option<u32>,
}

/// Arguments of `memory_list`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ListArgs {
    pub types: Option<Vec<String>>,
    pub tags: Option<Vec<String>>,
    // Default 50.
    #[schemars(range(min = 1, max = MAX_LIST))]
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

fn text_result(v: &Value) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(v.to_string())])
}

fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

/// Runs blocking engine work off the async executor and turns its outcome
/// into a tool result: the JSON answer, or an error the model can read.
async fn answer(
    f: impl FnOnce() -> Result<Value, String> + Send + 'static,
) -> Result<CallToolResult, ErrorData> {
    let out = tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(format!("internal error: {e}")));
    Ok(match out {
        Ok(v) => text_result(&v),
        Err(e) => tool_error(e),
    })
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

    /// Search the project's docs, code and memories (BM25 + embeddings + graph, fused).
    #[tool(
        description = "Search the project's docs, code and memories; best first.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let shared = self.shared.clone();
        answer(move || search(&shared, args)).await
    }

    /// The section or definition around a chunk, within a token budget.
    #[tool(
        description = "A match's whole section or enclosing definition, within max_tokens (default 2000).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn expand(
        &self,
        Parameters(args): Parameters<ExpandArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let ctx = args.context_lines.unwrap_or(0).min(MAX_CONTEXT_LINES);
            let budget = args.max_tokens.map_or(0, |t| t as usize);
            engine
                .expand(&args.chunk_id, ctx, budget)
                .map(|s| json!(s))
                .map_err(|e| e.to_string())
        })
        .await
    }

    /// Lines of an indexed file, within a token budget.
    #[tool(
        description = "Lines of an indexed file, within max_tokens (default 2000).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get(
        &self,
        Parameters(args): Parameters<GetArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            engine
                .read_file(
                    &args.path,
                    args.start_line,
                    args.end_line,
                    args.max_tokens.map_or(0, |t| t as usize),
                )
                .map(|f| json!(f))
                .map_err(|e| e.to_string())
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
        Parameters(args): Parameters<StoreArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            engine
                .remember(&cairn::MemoryInput {
                    text: args.text,
                    kind: args.kind,
                    importance: args.importance,
                    tags: args.tags.unwrap_or_default(),
                    entities: args.entities.unwrap_or_default(),
                    ttl: args.ttl,
                    expires: None,
                    sources: args.sources.unwrap_or_default(),
                    client: "mcp".into(),
                    created: None,
                })
                .map(|s| json!(s))
                .map_err(|e| e.to_string())
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
        let engine = self.shared.engine.clone();
        answer(move || {
            let patch = cairn::MemoryPatch {
                text: args.text,
                kind: args.kind,
                importance: args.importance,
                tags: args.tags,
                ttl: args.ttl,
                expires: None,
                client: "mcp".into(),
            };
            engine
                .update_memory(&args.id, &patch, args.dry_run.unwrap_or(false))
                .map(|m| json!(m))
                .map_err(|e| e.to_string())
        })
        .await
    }

    /// Forget a memory.
    #[tool(
        description = "Forget a memory by id (`cairn undo` restores it).",
        annotations(destructive_hint = true, open_world_hint = false)
    )]
    async fn memory_forget(
        &self,
        Parameters(args): Parameters<ForgetArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let dry = args.dry_run.unwrap_or(false);
            engine
                .forget(&args.id, dry, "mcp")
                .map(|m| json!({"forgotten": !dry, "memory": m}))
                .map_err(|e| e.to_string())
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
        let engine = self.shared.engine.clone();
        answer(move || {
            if args.query.trim().is_empty() {
                return Err("query is empty: say what to recall".into());
            }
            let default_limit = if args.max_tokens.is_some() {
                MAX_LIMIT
            } else {
                5
            };
            let opts = cairn::RecallOptions {
                limit: args
                    .limit
                    .map_or(default_limit, |l| l as usize)
                    .clamp(1, MAX_LIMIT),
                offset: args.offset.unwrap_or(0) as usize,
                types: args.types.unwrap_or_default(),
                tags: args.tags.unwrap_or_default(),
                entities: args.entities.unwrap_or_default(),
                min_importance: args.min_importance,
                since: args.since,
                until: args.until,
                include_expired: args.include_expired.unwrap_or(false),
                no_touch: false,
                min_score: args.min_score,
                relative_floor: args.relative_floor,
                raw_fts: args.syntax == Some(Syntax::Fts),
                standing: false,
            };
            let budget = args.max_tokens.map(|b| b as usize);
            if let Some(b) = budget
                && b < MIN_BUDGET
            {
                return Err(format!(
                    "max_tokens {b} is too small: give at least {MIN_BUDGET}"
                ));
            }
            let (hits, found) = engine
                .recall_counted(&args.query, &opts)
                .map_err(|e| e.to_string())?;
            let mut head = json!({"query": args.query, "total": hits.len()});
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
                    for _ in 0..3 {
                        v["tokens_used"] = json!(cairn_search::estimate_tokens(&v.to_string()));
                    }
                    Ok(v)
                }
                Some(b) => {
                    let items: Vec<RecalledItem<'_>> = hits.iter().map(RecalledItem).collect();
                    // `has_more` counts this page's offset: what is past it.
                    budgeted(head, &items, found.saturating_sub(opts.offset), b)
                        .ok_or_else(|| format!("max_tokens {b} is too small for this answer"))
                }
            }
        })
        .await
    }

    /// List memories.
    #[tool(
        description = "Memories, newest first.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn memory_list(
        &self,
        Parameters(args): Parameters<ListArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let opts = cairn::ListOptions {
                types: args.types.unwrap_or_default(),
                tags: args.tags.unwrap_or_default(),
                include_expired: args.include_expired.unwrap_or(false),
                limit: args
                    .limit
                    .map_or(50, |l| l as usize)
                    .clamp(1, MAX_LIST as usize),
                offset: args.offset.unwrap_or(0) as usize,
            };
            engine
                .list_memories(&opts)
                .map(|m| json!({"total": m.len(), "memories": m}))
                .map_err(|e| e.to_string())
        })
        .await
    }

    /// Original turns of a captured session.
    #[tool(
        description = "Turns of a captured session around one turn (ids from a session log).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn transcript(
        &self,
        Parameters(args): Parameters<TranscriptArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let ctx = args.context.unwrap_or(3).min(MAX_TRANSCRIPT_CONTEXT) as usize;
            engine
                .transcript(&args.session_id, args.turn_id.as_deref(), ctx)
                .map(|t| json!(t))
                .map_err(|e| e.to_string())
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
        Parameters(args): Parameters<RelateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            if args.entities.is_empty() && args.relations.is_empty() && args.observations.is_empty()
            {
                return Err("give entities, relations or observations".into());
            }
            engine
                .relate(&args.entities, &args.relations, &args.observations, "mcp")
                .map(|r| json!(r))
                .map_err(|e| e.to_string())
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
        Parameters(args): Parameters<GraphArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let limit = args.limit.unwrap_or(30).clamp(1, MAX_GRAPH_LIMIT) as usize;
            match args.op {
                GraphOp::Neighbors => {
                    let name = args.name.as_deref().ok_or("op=neighbors needs name")?;
                    engine.graph_neighbors(name, limit).map(|n| json!(n))
                }
                GraphOp::Path => {
                    let from = args.from.as_deref().ok_or("op=path needs from")?;
                    let to = args.to.as_deref().ok_or("op=path needs to")?;
                    engine.graph_path(from, to).map(|p| {
                        json!({"path": p.into_iter().map(|(n, rel)| json!({"node": n, "rel_to_next": rel})).collect::<Vec<_>>()})
                    })
                }
                GraphOp::Communities => engine.graph_communities(3).map(|mut c| {
                    c.communities.truncate(limit);
                    json!(c)
                }),
            }
            .map_err(|e| e.to_string())
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
        let shared = self.shared.clone();
        answer(move || {
            let roots = shared.engine.default_roots();
            shared.indexing.store(true, Ordering::SeqCst);
            let report = shared.engine.index(&roots, &cairn::NoProgress);
            shared.indexing.store(false, Ordering::SeqCst);
            let r = report.map_err(|e| e.to_string())?;
            Ok(json!({
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
            }))
        })
        .await
    }

    /// Index facts.
    #[tool(
        description = "Index health: files, chunks, vectors, model, watcher, stale files.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn status(&self) -> Result<CallToolResult, ErrorData> {
        let shared = self.shared.clone();
        answer(move || status(&shared)).await
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
        self.tool_router.call(tcc).await
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

/// `search`: validate, run, check freshness of the hits, shape the answer.
fn search(shared: &Shared, args: SearchArgs) -> Result<Value, String> {
    let engine = &shared.engine;
    if args.query.trim().is_empty() {
        return Err("query is empty: say what to look for".into());
    }
    let budget = args.max_tokens.map(|b| b as usize);
    if let Some(b) = budget
        && b < MIN_BUDGET
    {
        return Err(format!(
            "max_tokens {b} is too small: give at least {MIN_BUDGET}"
        ));
    }
    let default_limit = if budget.is_some() {
        MAX_LIMIT
    } else {
        engine.config().search.limit
    };
    let limit = args
        .limit
        .map_or(default_limit, |l| l as usize)
        .clamp(1, MAX_LIMIT);
    let kinds: Vec<Kind> = args.kind.iter().flatten().map(|&k| k.into()).collect();
    // While vectors are being computed only part of the index has them:
    // answer from BM25 alone, and say so.
    let embedding = engine.embedding_in_progress();
    let (mode, note) = match (engine.embedder().is_some(), embedding) {
        (false, _) => (
            Mode::Bm25,
            Some("no embedding model loaded: keyword (BM25) search only".to_string()),
        ),
        (true, true) => {
            let s = engine.status().map_err(|e| e.to_string())?;
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
        current_file: args.current_file.clone(),
        path_prefix: args.path_prefix.clone(),
        raw_fts: args.syntax == Some(Syntax::Fts),
        mode,
        kinds,
        no_graph: false,
        explain: false,
        min_score: args.min_score,
        relative_floor: args.relative_floor,
    };
    let searched = engine
        .search_with_retrievers(&args.query, &opts)
        .map_err(|e| e.to_string())?;
    let matches = searched.hits;
    let mut head = json!({
        "query": args.query,
        "retrievers": searched.retrievers.join("+"),
        "total": matches.len(),
    });
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
        Some(b) => budgeted(head, &matches, searched.total, b)
            .ok_or_else(|| format!("max_tokens {b} is too small for this answer")),
    }
}

/// `status`: the engine's figures plus what this server is doing.
fn status(shared: &Shared) -> Result<Value, String> {
    let engine = &shared.engine;
    let s = engine.status().map_err(|e| e.to_string())?;
    let stale = engine.stale_files().map_err(|e| e.to_string())?;
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
