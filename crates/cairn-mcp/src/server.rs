//! The MCP tools: a thin adapter from tool calls to the engine.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn::{Engine, Freshness, Mode, SearchOptions};
use cairn_core::Kind;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::budget::{MIN_BUDGET, Match, budgeted, unbudgeted};

/// Most matches one search returns.
pub const MAX_LIMIT: usize = 20;
/// Most lines of context `expand` adds on each side.
pub const MAX_CONTEXT_LINES: u32 = 200;

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

/// Arguments of `relate`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RelateArgs {
    /// Entities to create (or add observations and a type to).
    #[serde(default)]
    pub entities: Vec<cairn::EntityInput>,
    /// Relations between entities.
    #[serde(default)]
    pub relations: Vec<cairn::RelationInput>,
    /// Observations to add to entities.
    #[serde(default)]
    pub observations: Vec<cairn::ObservationInput>,
}

/// Arguments of `graph`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GraphArgs {
    /// `neighbors`, `path` or `communities`.
    pub op: String,
    /// For `neighbors`: the entity (a symbol, a concept, a file path).
    pub name: Option<String>,
    /// For `path`: the start entity.
    pub from: Option<String>,
    /// For `path`: the end entity.
    pub to: Option<String>,
    /// Most neighbours or communities to return (default 30, at most 200).
    pub limit: Option<u32>,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for, in plain words or code identifiers.
    pub query: String,
    /// Matches to return, 1-20 (default 5; 20 when max_tokens is set).
    pub limit: Option<u32>,
    /// The file you are editing, relative to the project root: documents of its area rank higher.
    pub current_file: Option<String>,
    /// Only files whose project-relative path starts with this, e.g. "docs/api/".
    pub path_prefix: Option<String>,
    /// Only these kinds of source: "doc", "memory", "code" (default: all).
    pub kind: Option<Vec<String>>,
    /// Token budget for the whole answer (at least 100). The answer then lists every match compactly and gives full text for the best ones that fit.
    pub max_tokens: Option<u32>,
    /// Leave out matches whose score is below this (the fused RRF score each match reports; 0 turns the floor off). Default: the project's `[search] min_score`.
    pub min_score: Option<f64>,
    /// Leave out matches scoring below this share (0-1) of the best match's score (0 turns it off). Default: the project's `[search] relative_floor`.
    pub relative_floor: Option<f64>,
}

/// Arguments of `expand`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExpandArgs {
    /// A chunk id from a search result.
    pub chunk_id: String,
    /// Extra lines before and after the section (default 0, at most 200).
    pub context_lines: Option<u32>,
}

/// Arguments of `get`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetArgs {
    /// An indexed file, relative to the project root, e.g. "docs/setup.md".
    pub path: String,
    /// First line to return, 1-based (default 1).
    pub start_line: Option<u32>,
    /// Last line to return, inclusive (default: end of file).
    pub end_line: Option<u32>,
}

/// Arguments of `memory_store`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct StoreArgs {
    /// What to remember: one self-contained fact, decision or preference.
    /// Secrets in it (keys, tokens, passwords, URL passwords) are replaced by
    /// `[redacted]` before anything is stored.
    pub text: String,
    /// fact, decision, preference, convention, entity, relationship, event or note (default note).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// 1 (trivia) to 10 (must never be forgotten); default 5.
    pub importance: Option<u8>,
    /// Labels, e.g. ["caching"].
    pub tags: Option<Vec<String>>,
    /// Names it is about, besides those found in the text.
    pub entities: Option<Vec<String>>,
    /// Forget after this long: "30d", "12h", "2w".
    pub ttl: Option<String>,
    /// Files it was learned from: "path", "path#Heading" or "path:line". Recall flags the memory when they change.
    pub sources: Option<Vec<String>>,
}

/// Arguments of `memory_update`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateArgs {
    /// The memory id.
    pub id: String,
    /// New text.
    pub text: Option<String>,
    /// New type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// New importance, 1-10.
    pub importance: Option<u8>,
    /// Replace the tags.
    pub tags: Option<Vec<String>>,
    /// New time to live from now, e.g. "30d".
    pub ttl: Option<String>,
    /// Show the result without writing it.
    pub dry_run: Option<bool>,
}

/// Arguments of `memory_forget`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForgetArgs {
    /// The memory id.
    pub id: String,
    /// Show what would be forgotten without doing it.
    pub dry_run: Option<bool>,
}

/// Arguments of `memory_recall`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecallArgs {
    /// What to recall, in plain words.
    pub query: String,
    /// Memories to return, 1-20 (default 5).
    pub limit: Option<u32>,
    /// Skip this many first.
    pub offset: Option<u32>,
    /// Only these types.
    pub types: Option<Vec<String>>,
    /// Only memories with one of these tags.
    pub tags: Option<Vec<String>>,
    /// Only memories naming one of these entities.
    pub entities: Option<Vec<String>>,
    /// Only this important or more (1-10).
    pub min_importance: Option<u8>,
    /// Only created at or after this time (RFC 3339 or YYYY-MM-DD).
    pub since: Option<String>,
    /// Only created at or before this time.
    pub until: Option<String>,
    /// Include expired memories.
    pub include_expired: Option<bool>,
    /// Token budget for the whole answer (at least 100): a compact line per memory plus the full text of the best that fit.
    pub max_tokens: Option<u32>,
    /// Leave out memories whose fused search score is below this (RRF units; 0 turns the floor off). Default: the project's `[memory] min_score`.
    pub min_score: Option<f64>,
    /// Leave out memories less relevant than this share (0-1) of the best match (0 turns it off). Default: the project's `[memory] relative_floor`.
    pub relative_floor: Option<f64>,
}

/// A recalled memory as a budgeted answer lists it.
struct RecalledItem<'a>(&'a cairn::Recalled);

impl crate::budget::Item for RecalledItem<'_> {
    fn line(&self) -> String {
        let r = self.0;
        let m = &r.memory.memory;
        let flag = if r.source_changed {
            ", source changed"
        } else {
            ""
        };
        let head: String = r.memory.text.chars().take(60).collect();
        format!(
            "{} {} imp {} ({:.3}{flag}) {head}",
            m.id, m.kind, m.importance, r.score
        )
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
pub struct TranscriptArgs {
    /// The session id, from a session log's anchor comment (`<!-- session:<id> turn:<id> … -->`).
    pub session_id: String,
    /// The turn id to center on (default: the session's last turn).
    pub turn_id: Option<String>,
    /// Turns on each side (default 3, at most 20).
    pub context: Option<u32>,
}

/// Arguments of `memory_list`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Only these types.
    pub types: Option<Vec<String>>,
    /// Only memories with one of these tags.
    pub tags: Option<Vec<String>>,
    /// Most to return (default 50).
    pub limit: Option<u32>,
    /// Skip this many first (newest first).
    pub offset: Option<u32>,
    /// Include expired memories.
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
    CairnServer::tool_router()
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
            tool_router: Self::tool_router(),
        }
    }

    /// Search the project's docs, code and memories (BM25 + embeddings + graph, fused).
    #[tool(
        description = "Search this project's indexed docs, code and memories by meaning, keywords and links (one ranked list; kind filters doc/code/memory). Returns matches best first, each with chunk id, path, line range, heading breadcrumb, score, and whether the file changed since indexing (source: fresh/changed/deleted). Matches far below the best are left out (min_score, relative_floor). Use max_tokens to bound the answer; use expand for a match's whole section.",
        annotations(
            title = "Search the project knowledge base",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let shared = self.shared.clone();
        answer(move || search(&shared, args)).await
    }

    /// The whole section around a chunk.
    #[tool(
        description = "Expand a search match to its whole section: from its heading to the next heading of the same or higher level, with line numbers. Optional context_lines adds lines on both sides.",
        annotations(
            title = "Expand a match to its section",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn expand(
        &self,
        Parameters(args): Parameters<ExpandArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let ctx = args.context_lines.unwrap_or(0).min(MAX_CONTEXT_LINES);
            engine
                .expand(&args.chunk_id, ctx)
                .map(|s| json!(s))
                .map_err(|e| e.to_string())
        })
        .await
    }

    /// Lines of an indexed file.
    #[tool(
        description = "Read an indexed file of this project, whole or a line range. The path is relative to the project root; absolute paths, '..' and links leading outside the indexed folders are refused.",
        annotations(
            title = "Read an indexed file",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn get(
        &self,
        Parameters(args): Parameters<GetArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            engine
                .read_file(&args.path, args.start_line, args.end_line)
                .map(|f| json!(f))
                .map_err(|e| e.to_string())
        })
        .await
    }

    /// Store a memory.
    #[tool(
        description = "Remember something for later sessions: a fact, decision, preference or convention about this project or its user. Saved as a markdown file. A near-duplicate of the same type is updated instead of copied (the answer says so).",
        annotations(
            title = "Store a memory",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
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
        description = "Change a stored memory by id: text, type, importance, tags or time to live. dry_run shows the result without writing. The old version can be restored with `cairn undo`.",
        annotations(
            title = "Update a memory",
            read_only_hint = false,
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
        description = "Forget a memory by id (the file moves to the trash; `cairn undo` restores it). dry_run shows what would be forgotten.",
        annotations(
            title = "Forget a memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
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
        description = "Recall stored memories relevant to a query, best first: search relevance, scaled by importance, recency and how often each was used; memories far less relevant than the best are left out (min_score, relative_floor). Flags memories whose cited source file changed since (source_changed: trust them less). Filters: types, tags, entities, min_importance, since/until.",
        annotations(
            title = "Recall memories",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
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
            };
            let budget = args.max_tokens.map(|b| b as usize);
            if let Some(b) = budget
                && b < MIN_BUDGET
            {
                return Err(format!(
                    "max_tokens {b} is too small: give at least {MIN_BUDGET}"
                ));
            }
            let hits = engine
                .recall(&args.query, &opts)
                .map_err(|e| e.to_string())?;
            let head = json!({"query": args.query, "total": hits.len()});
            match budget {
                None => {
                    let mut v = head;
                    v["memories"] = json!(hits);
                    Ok(v)
                }
                Some(b) => {
                    let items: Vec<RecalledItem<'_>> = hits.iter().map(RecalledItem).collect();
                    budgeted(head, &items, b)
                        .ok_or_else(|| format!("max_tokens {b} is too small for this answer"))
                }
            }
        })
        .await
    }

    /// List memories.
    #[tool(
        description = "List stored memories, newest first, optionally by type or tag.",
        annotations(
            title = "List memories",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
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
                limit: args.limit.map_or(50, |l| l as usize).clamp(1, 500),
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
        description = "The original turns (user, assistant, tool calls summarised) of a captured agent session around one turn: the detail behind a session-log memory. Give the session and turn ids from the log's anchor comment.",
        annotations(
            title = "Read a captured transcript",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn transcript(
        &self,
        Parameters(args): Parameters<TranscriptArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let ctx = args.context.unwrap_or(3).min(20) as usize;
            engine
                .transcript(&args.session_id, args.turn_id.as_deref(), ctx)
                .map(|t| json!(t))
                .map_err(|e| e.to_string())
        })
        .await
    }

    /// Entities, relations and observations.
    #[tool(
        description = "Record knowledge as a graph: entities (name, entityType, observations), relations between entities (from, to, relationType in active voice, e.g. implemented_by, depends_on) and observations added to entities. Same shapes as the reference MCP memory server's create_entities / create_relations / add_observations. Stored as memory files (type entity / relationship) and linked into the search graph, so search finds code and docs through them. A relation stored twice is kept once.",
        annotations(
            title = "Relate entities",
            read_only_hint = false,
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
        description = "Explore the knowledge graph that links code symbols (definitions, calls, imports, implements), docs (links, headings, mentions) and memories (entities, relations). op=neighbors with name: what defines, calls, mentions or relates to an entity (any naming convention, or a file path). op=path with from and to: the shortest chain of links between two entities. op=communities: clusters of related files and concepts, each labelled by its most central entities.",
        annotations(
            title = "Explore the knowledge graph",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn graph(
        &self,
        Parameters(args): Parameters<GraphArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let engine = self.shared.engine.clone();
        answer(move || {
            let limit = args.limit.unwrap_or(30).clamp(1, 200) as usize;
            match args.op.as_str() {
                "neighbors" => {
                    let name = args.name.as_deref().ok_or("op=neighbors needs name")?;
                    engine.graph_neighbors(name, limit).map(|n| json!(n))
                }
                "path" => {
                    let from = args.from.as_deref().ok_or("op=path needs from")?;
                    let to = args.to.as_deref().ok_or("op=path needs to")?;
                    engine.graph_path(from, to).map(|p| {
                        json!({"path": p.into_iter().map(|(n, rel)| json!({"node": n, "rel_to_next": rel})).collect::<Vec<_>>()})
                    })
                }
                "communities" => engine.graph_communities(3).map(|mut c| {
                    c.communities.truncate(limit);
                    json!(c)
                }),
                other => {
                    return Err(format!(
                        "unknown op {other:?}: use neighbors, path or communities"
                    ));
                }
            }
            .map_err(|e| e.to_string())
        })
        .await
    }

    /// Index the project now.
    #[tool(
        description = "Bring the index up to date with the project's files now (new, changed and deleted docs, code and memories); returns what changed. Only needed when no watcher runs (see status.watching).",
        annotations(
            title = "Index the project",
            read_only_hint = false,
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
        description = "Index status: files, chunks, embedded chunks, model, last index time, whether a watcher re-indexes on change, whether indexing or embedding is running, and how many indexed files changed since.",
        annotations(
            title = "Index status",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn status(&self) -> Result<CallToolResult, ErrorData> {
        let shared = self.shared.clone();
        answer(move || status(&shared)).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CairnServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Cairn indexes this project's docs, code and agent memories. Call `search` \
                 before answering questions about the project (pass current_file when editing, \
                 max_tokens to bound the answer), `expand` for a match's whole section, `get` \
                 for a file's lines, `status` for index health. Use `memory_recall` at the start \
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
    let mut kinds = Vec::new();
    for k in args.kind.iter().flatten() {
        kinds.push(
            Kind::parse(k).ok_or_else(|| {
                format!("unknown kind {k:?}: use \"doc\", \"memory\" or \"code\"")
            })?,
        );
    }
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
        raw_fts: false,
        mode,
        kinds,
        no_graph: false,
        explain: false,
        min_score: args.min_score,
        relative_floor: args.relative_floor,
    };
    let hits = engine
        .search(&args.query, &opts)
        .map_err(|e| e.to_string())?;
    let ids: Vec<&str> = hits.iter().map(|h| h.chunk_id.as_str()).collect();
    let texts = engine.chunk_texts(&ids).map_err(|e| e.to_string())?;
    let paths: Vec<&str> = hits
        .iter()
        .map(|h| h.path.as_str())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let fresh = engine.freshness(&paths).map_err(|e| e.to_string())?;
    let matches: Vec<Match<'_>> = hits
        .iter()
        .zip(&texts)
        .map(|(hit, text)| Match {
            hit,
            text: text.as_deref().unwrap_or(&hit.snippet),
            source: fresh.get(&hit.path).copied().unwrap_or(Freshness::Changed),
        })
        .collect();
    let mut head = json!({
        "query": args.query,
        "retrievers": match mode { Mode::Hybrid => "bm25+vector", Mode::Bm25 => "bm25", Mode::Vector => "vector" },
        "total": matches.len(),
    });
    let note = match note {
        None if matches.is_empty() && engine.status().is_ok_and(|s| s.files == 0) => Some(
            "the index is empty: run `cairn index` in the project, or serve with --build-index"
                .to_string(),
        ),
        other => other,
    };
    if let Some(n) = note {
        head["note"] = json!(n);
    }
    match budget {
        None => Ok(unbudgeted(head, &matches)),
        Some(b) => budgeted(head, &matches, b)
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
