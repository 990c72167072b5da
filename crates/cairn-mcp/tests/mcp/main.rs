//! In-process MCP tests: an rmcp client talks to the server over
//! `tokio::io::duplex`, on a temp project indexed with the fake embedder.

mod http;
mod stdio;
mod surface;
mod ui;

use std::sync::Arc;

use cairn::NoProgress;
use cairn_mcp::{CairnServer, Shared};
use cairn_test_support::{Project, TOOL_NAMES};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The project's engine (fake embedder), indexed, behind an MCP server.
trait Serve {
    fn shared(&self) -> Arc<Shared>;
}

impl Serve for Project {
    fn shared(&self) -> Arc<Shared> {
        let engine = self.engine();
        engine
            .index(&engine.default_roots(), &NoProgress)
            .expect("index");
        Shared::new(Arc::new(engine))
    }
}

async fn connect(shared: Arc<Shared>) -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = CairnServer::new(shared)
            .serve(server_io)
            .await
            .expect("server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_io).await.expect("client connects")
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .expect("call answered")
}

fn text(r: &CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .expect("text content")
}

/// The JSON answer of a successful call.
async fn ok(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Value {
    let r = call(client, tool, args.clone()).await;
    assert_ne!(r.is_error, Some(true), "{tool} {args} failed: {}", text(&r));
    serde_json::from_str(&text(&r)).expect("JSON answer")
}

/// The error message of a failed call.
async fn err(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> String {
    let r = call(client, tool, args.clone()).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "{tool} {args} should fail: {}",
        text(&r)
    );
    text(&r)
}

fn docs(p: &Project) {
    p.write(
        "docs/cache.md",
        "# Architecture\n\nIntro paragraph that is long enough to stand as a chunk of its own in the index, about the system.\n\n## Caching\n\nSessions live in Redis for five minutes; the TTL is refreshed on each request so active users stay signed in.\n\n### Eviction\n\nRedis evicts the least recently used keys when memory runs short, which the session store tolerates.\n\n## Queue\n\nJobs go to a Postgres queue with SKIP LOCKED and three attempts per job before they land in the dead letter table.\n",
    );
    p.write(
        "docs/garden.md",
        "# Gardening\n\nTomatoes need full sun, deep watering twice a week and a wooden stake to climb. Basil grows well beside them.\n",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_tools_with_schemas_and_annotations() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, TOOL_NAMES);
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        let reads =
            !(t.name.starts_with("memory_") || t.name == "relate" || t.name == "index_project")
                || t.name == "memory_recall"
                || t.name == "memory_list";
        // Hints are sent only where they differ from the protocol's defaults
        // (readOnly false, destructive true, idempotent false, openWorld
        // true); destructive and idempotent mean nothing for a read-only tool.
        assert_eq!(a.read_only_hint.unwrap_or(false), reads, "{}", t.name);
        assert_eq!(a.open_world_hint, Some(false), "{}", t.name);
        if reads {
            assert_eq!(a.destructive_hint, None, "{}", t.name);
        } else {
            let destroys = t.name == "memory_forget" || t.name == "memory_update";
            assert_eq!(a.destructive_hint, Some(destroys), "{}", t.name);
        }
        assert!(t.description.as_ref().is_some_and(|d| d.len() > 20));
    }
    let search = tools.iter().find(|t| t.name == "search").expect("search");
    let props = search.input_schema["properties"]
        .as_object()
        .expect("props");
    for arg in [
        "query",
        "limit",
        "current_file",
        "path_prefix",
        "kind",
        "max_tokens",
        "min_score",
        "relative_floor",
    ] {
        assert!(props.contains_key(arg), "search has no {arg}");
    }
    assert_eq!(search.input_schema["required"], json!(["query"]));
    let recall = tools
        .iter()
        .find(|t| t.name == "memory_recall")
        .expect("memory_recall");
    for arg in ["min_score", "relative_floor", "min_importance"] {
        assert!(
            recall.input_schema["properties"]
                .as_object()
                .is_some_and(|p| p.contains_key(arg)),
            "memory_recall has no {arg}"
        );
    }
    client.cancel().await.expect("close");
}

/// Issue 18: `min_score` and `relative_floor` reach the engine from both
/// tools, and out-of-range values are refused with their name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relevance_floors_are_arguments_of_search_and_recall() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    let q = "redis session ttl";
    let all = ok(
        &client,
        "search",
        json!({"query": q, "relative_floor": 0.0, "min_score": 0.0}),
    )
    .await;
    let paths = |v: &Value| -> Vec<String> {
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(paths(&all).contains(&"docs/garden.md".to_string()), "{all}");
    let best = all["matches"][0]["score"].as_f64().unwrap();
    let none = ok(
        &client,
        "search",
        json!({"query": q, "min_score": best * 2.0}),
    )
    .await;
    assert_eq!(none["total"], 0, "{none}");
    let only_best = ok(
        &client,
        "search",
        json!({"query": q, "relative_floor": 1.0}),
    )
    .await;
    assert_eq!(paths(&only_best), ["docs/cache.md"], "{only_best}");
    let msg = err(
        &client,
        "search",
        json!({"query": q, "relative_floor": 2.0}),
    )
    .await;
    assert!(msg.contains("relative_floor 2"), "{msg}");

    for text in [
        "Sessions are cached in Redis for five minutes",
        "The garden tomatoes are watered twice a week",
    ] {
        ok(&client, "memory_store", json!({"text": text})).await;
    }
    let r = ok(
        &client,
        "memory_recall",
        json!({"query": "redis session cache", "relative_floor": 0.0}),
    )
    .await;
    assert_eq!(r["total"], 2, "{r}");
    let r = ok(
        &client,
        "memory_recall",
        json!({"query": "redis session cache", "relative_floor": 1.0}),
    )
    .await;
    assert_eq!(r["total"], 1, "{r}");
    assert!(r.to_string().contains("Redis"), "{r}");
    let r = ok(
        &client,
        "memory_recall",
        // Fused scores top out near 2 (every list first) times the boosts.
        json!({"query": "redis session cache", "min_score": 5.0}),
    )
    .await;
    assert_eq!(r["total"], 0, "{r}");
    let msg = err(
        &client,
        "memory_recall",
        json!({"query": "redis", "min_score": -1.0}),
    )
    .await;
    assert!(msg.contains("min_score -1"), "{msg}");
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_expand_get_status() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;

    let v = ok(
        &client,
        "search",
        json!({"query": "redis ttl refreshed on each request"}),
    )
    .await;
    let first = &v["matches"][0];
    assert_eq!(first["path"], "docs/cache.md", "{v}");
    assert_eq!(first["source"], "fresh");
    assert!(first["text"].as_str().unwrap().contains("Redis"));
    assert_eq!(v["retrievers"], "bm25+vector+graph", "every list that ran");
    let id = first["id"].as_str().unwrap().to_string();

    // Filters: path prefix and kind.
    let v = ok(
        &client,
        "search",
        json!({"query": "tomatoes sun", "path_prefix": "docs/cache"}),
    )
    .await;
    assert!(
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["path"] == "docs/cache.md")
    );
    let v = ok(
        &client,
        "search",
        json!({"query": "tomatoes", "kind": ["memory"]}),
    )
    .await;
    assert_eq!(v["total"], 0, "{v}");
    let msg = err(
        &client,
        "search",
        json!({"query": "x", "kind": ["pictures"]}),
    )
    .await;
    assert_eq!(
        msg,
        r#"kind must be one of "doc", "code", "memory", "history" (got "pictures")"#
    );
    let msg = err(&client, "search", json!({"query": "   "})).await;
    assert!(msg.contains("empty"), "{msg}");
    // Hostile input is an answer, not a crash.
    ok(
        &client,
        "search",
        json!({"query": "\"unbalanced AND ( NEAR*"}),
    )
    .await;

    // expand: the chunk's whole section, heading to the next heading of the
    // same or higher level (its subsection included).
    let s = ok(&client, "expand", json!({"chunk_id": id})).await;
    let t = s["text"].as_str().unwrap();
    assert!(t.starts_with("## Caching"), "{t}");
    assert!(t.contains("### Eviction") && !t.contains("## Queue"), "{t}");
    assert_eq!(s["start_line"], 5);
    assert_eq!(s["end_line"], 11);
    let s = ok(
        &client,
        "expand",
        json!({"chunk_id": id, "context_lines": 2}),
    )
    .await;
    assert_eq!(
        (s["start_line"].as_u64(), s["end_line"].as_u64()),
        (Some(3), Some(13))
    );
    let msg = err(&client, "expand", json!({"chunk_id": "0000000000000000"})).await;
    assert!(msg.contains("no chunk"), "{msg}");

    // get: whole file and a line range.
    let g = ok(&client, "get", json!({"path": "docs/garden.md"})).await;
    assert!(g["text"].as_str().unwrap().starts_with("# Gardening"));
    assert_eq!(g["freshness"], "fresh");
    let g = ok(
        &client,
        "get",
        json!({"path": "docs/cache.md", "start_line": 5, "end_line": 5}),
    )
    .await;
    assert_eq!(g["text"], "## Caching");
    let msg = err(
        &client,
        "get",
        json!({"path": "docs/cache.md", "start_line": 500}),
    )
    .await;
    assert!(msg.contains("past the end"), "{msg}");

    let st = ok(&client, "status", json!({})).await;
    assert_eq!(st["files"], 2);
    assert!(st["chunks"].as_u64().unwrap() >= 4);
    assert_eq!(st["embedded_chunks"], st["chunks"]);
    assert_eq!(st["watching"], false);
    assert_eq!(st["stale_files"], 0);
    assert!(st["last_indexed"].as_i64().is_some());
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_300_token_budget_is_never_exceeded_with_50_matches() {
    let p = Project::new();
    for i in 0..50 {
        p.write(
            &format!("notes/n{i:02}.md"),
            &format!(
                "# Note {i}\n\n## Rate limiting\n\nThe rate limiter for service {i} allows {} requests per second with a burst of {} and answers 429 with a Retry-After header when the bucket is empty. {}\n",
                100 + i,
                20 + i,
                "Clients back off exponentially and log the event. ".repeat(6)
            ),
        );
    }
    let client = connect(p.shared()).await;
    let v = ok(&client, "search", json!({"query": "rate limiter"})).await;
    assert_eq!(v["total"], 5, "default limit");
    for budget in [100u32, 300, 1000] {
        let r = call(
            &client,
            "search",
            json!({"query": "rate limiter burst", "max_tokens": budget, "limit": 20}),
        )
        .await;
        let body = text(&r);
        let used = cairn_search::estimate_tokens(&body);
        assert!(used <= budget as usize, "{budget}: {used} tokens\n{body}");
        let v: Value = serde_json::from_str(&body).expect("JSON");
        let index = v["index"].as_array().unwrap();
        assert!(!index.is_empty());
        // 20 returned of all the notes that match.
        assert!(v["total_count"].as_u64().unwrap() >= 20, "{v}");
        assert_eq!(v["has_more"], true, "{v}");
        let line = index[0].as_str().unwrap();
        assert!(line.contains("notes/n") && line.contains("fresh"), "{line}");
        if budget >= 300 {
            assert!(!v["details"].as_array().unwrap().is_empty(), "{v}");
        }
    }
    let msg = err(
        &client,
        "search",
        json!({"query": "rate limiter", "max_tokens": 10}),
    )
    .await;
    assert_eq!(
        msg,
        "max_tokens must be an integer from 100 to 1000000 (got 10)"
    );
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hits_say_when_their_file_changed_or_was_deleted() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    let source = |v: &Value, path: &str| {
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["path"] == path)
            .map(|m| m["source"].clone())
    };
    let v = ok(&client, "search", json!({"query": "tomatoes basil"})).await;
    assert_eq!(source(&v, "docs/garden.md"), Some(json!("fresh")));

    // A touch keeps the content: still fresh.
    let f = std::fs::File::options()
        .append(true)
        .open(p.root().join("docs/garden.md"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let v = ok(&client, "search", json!({"query": "tomatoes basil"})).await;
    assert_eq!(source(&v, "docs/garden.md"), Some(json!("fresh")));

    p.write(
        "docs/garden.md",
        "# Gardening\n\nTomatoes need full sun and a stake. Basil too. Edited.\n",
    );
    let v = ok(&client, "search", json!({"query": "tomatoes basil"})).await;
    assert_eq!(source(&v, "docs/garden.md"), Some(json!("changed")), "{v}");
    let st = ok(&client, "status", json!({})).await;
    assert_eq!(st["stale_files"], 1);

    std::fs::remove_file(p.root().join("docs/garden.md")).unwrap();
    let v = ok(&client, "search", json!({"query": "tomatoes basil"})).await;
    assert_eq!(source(&v, "docs/garden.md"), Some(json!("deleted")), "{v}");
    let v = ok(
        &client,
        "search",
        json!({"query": "tomatoes basil", "max_tokens": 200}),
    )
    .await;
    assert!(v["index"][0].as_str().unwrap().contains("deleted)"), "{v}");
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_refuses_paths_that_leave_the_project() {
    let p = Project::new();
    docs(&p);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "# Secret\n\ntop secret\n").unwrap();
    std::fs::write(p.root().join("notes.bin"), "not indexed").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            p.root().join("docs/link.md"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), p.root().join("docs/out")).unwrap();
    }
    let client = connect(p.shared()).await;
    let abs_secret = outside.path().join("secret.md");
    let cases = [
        ("../secret.md", "`..`"),
        ("docs/../../secret.md", "`..`"),
        ("/etc/passwd", "absolute"),
        (abs_secret.to_str().unwrap(), "absolute"),
        ("", "empty"),
        ("notes.bin", "not in the index"),
    ];
    for (path, why) in cases {
        let msg = err(&client, "get", json!({ "path": path })).await;
        assert!(msg.contains(why), "{path}: {msg}");
    }
    #[cfg(unix)]
    for path in ["docs/link.md", "docs/out/secret.md"] {
        let msg = err(&client, "get", json!({ "path": path })).await;
        assert!(msg.contains("outside"), "{path}: {msg}");
        assert!(!msg.contains("top secret"));
    }
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memories_through_mcp() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    let stored = ok(
        &client,
        "memory_store",
        json!({"text": "Sessions are cached in Redis for five minutes by SessionStore", "type": "decision", "importance": 8, "tags": ["caching"]}),
    )
    .await;
    assert_eq!(stored["action"], "created");
    let id = stored["memory"]["id"].as_str().unwrap().to_string();
    assert!(p.root().join(format!(".cairn/memory/{id}.md")).exists());
    let again = ok(
        &client,
        "memory_store",
        json!({"text": "sessions are cached in redis for five minutes by SessionStore.", "type": "decision"}),
    )
    .await;
    assert_eq!(again["action"], "updated", "{again}");
    assert_eq!(again["memory"]["id"], id.as_str());

    let r = ok(
        &client,
        "memory_recall",
        json!({"query": "redis session cache"}),
    )
    .await;
    assert_eq!(r["memories"][0]["memory"]["id"], id.as_str(), "{r}");
    // Issue 61: a capitalised name inside a sentence (Redis) is an entity.
    assert_eq!(
        r["memories"][0]["memory"]["entities"],
        json!(["Redis", "SessionStore"])
    );
    // Memories are in `search` too, and `kind` can pick them.
    let s = ok(
        &client,
        "search",
        json!({"query": "redis session cache", "kind": ["memory"]}),
    )
    .await;
    assert!(
        s["matches"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with(".cairn/memory/"),
        "{s}"
    );
    let d = ok(
        &client,
        "search",
        json!({"query": "redis session cache", "kind": ["doc"]}),
    )
    .await;
    let docs_only = d["matches"].as_array().unwrap();
    assert_eq!(docs_only[0]["path"], "docs/cache.md", "{d}");
    assert!(
        docs_only
            .iter()
            .all(|m| m["path"].as_str().unwrap().starts_with("docs/"))
    );

    let u = ok(
        &client,
        "memory_update",
        json!({"id": id, "importance": 3, "dry_run": true}),
    )
    .await;
    assert_eq!(u["importance"], 3);
    let l = ok(&client, "memory_list", json!({})).await;
    assert_eq!(l["total"], 1);
    assert_eq!(l["memories"][0]["importance"], 8, "dry run changed nothing");
    ok(&client, "memory_forget", json!({"id": id})).await;
    let r = ok(
        &client,
        "memory_recall",
        json!({"query": "redis session cache"}),
    )
    .await;
    assert_eq!(r["total"], 0);
    let msg = err(&client, "memory_forget", json!({"id": id})).await;
    assert!(msg.contains("no memory"), "{msg}");
    let msg = err(&client, "memory_store", json!({"text": "  "})).await;
    assert!(msg.contains("empty"), "{msg}");
    client.cancel().await.expect("close");
}

/// `syntax: "fts"` passes FTS5's query language through search and recall:
/// phrases, NOT, prefixes, column filters; a malformed query is a tool
/// error that names the syntax, and plain text stays plain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fts_syntax_in_search_and_recall() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    let paths = |v: &Value| -> Vec<String> {
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{} {}",
                    m["path"].as_str().unwrap(),
                    m["breadcrumb"].as_str().unwrap()
                )
            })
            .collect()
    };
    let fts = |q: &str| json!({"query": q, "syntax": "fts", "relative_floor": 0.0});
    // A phrase, and the same phrase excluded by NOT.
    let v = ok(&client, "search", fts("\"five minutes\"")).await;
    assert_eq!(v["total"], 1, "{v}");
    assert!(paths(&v)[0].contains("Caching"), "{v}");
    assert_eq!(v["retrievers"], "bm25", "{v}");
    let v = ok(&client, "search", fts("redis NOT minutes")).await;
    let found = paths(&v);
    assert!(found.iter().all(|f| !f.ends_with("Caching")), "{v}");
    assert!(found.iter().any(|f| f.ends_with("Eviction")), "{v}");
    // A prefix, and a column filter on the breadcrumb.
    let v = ok(&client, "search", fts("tomato*")).await;
    assert_eq!(paths(&v), ["docs/garden.md Gardening"], "{v}");
    let v = ok(&client, "search", fts("breadcrumb: queue")).await;
    assert!(paths(&v).iter().all(|f| f.ends_with("Queue")), "{v}");
    assert_eq!(v["total"], 1, "{v}");
    // Malformed: a clear error, not an empty answer.
    let msg = err(&client, "search", fts("\"five minutes")).await;
    assert!(
        msg.contains("invalid full-text query") && msg.contains("FTS5 syntax"),
        "{msg}"
    );
    let msg = err(&client, "search", fts("nosuchcolumn: redis")).await;
    assert!(msg.contains("no such column"), "{msg}");
    // Plain text with the same characters is words.
    let v = ok(&client, "search", json!({"query": "\"five minutes"})).await;
    assert!(v["total"].as_u64().unwrap() >= 1, "{v}");
    assert!(
        err(&client, "search", json!({"query": "x", "syntax": "regex"}))
            .await
            .contains("syntax")
    );

    for text in [
        "Sessions are cached in Redis for five minutes",
        "The Redis cluster also backs the job queue",
        "The garden tomatoes are watered twice a week",
    ] {
        ok(&client, "memory_store", json!({"text": text})).await;
    }
    let recall = |q: &str| json!({"query": q, "syntax": "fts", "relative_floor": 0.0});
    let texts = |v: &Value| -> Vec<String> {
        v["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["memory"]["text"].as_str().unwrap().trim().to_string())
            .collect()
    };
    let v = ok(&client, "memory_recall", recall("redis NOT minutes")).await;
    assert_eq!(
        texts(&v),
        ["The Redis cluster also backs the job queue"],
        "{v}"
    );
    let v = ok(
        &client,
        "memory_recall",
        recall("\"twice a week\" OR \"five minutes\""),
    )
    .await;
    assert_eq!(v["total"], 2, "{v}");
    let v = ok(&client, "memory_recall", recall("tomat*")).await;
    assert_eq!(
        texts(&v),
        ["The garden tomatoes are watered twice a week"],
        "{v}"
    );
    let msg = err(&client, "memory_recall", recall("(redis")).await;
    assert!(msg.contains("invalid full-text query"), "{msg}");
    client.cancel().await.expect("close");
}

/// The dual response: `total_count` of all matches past the limit,
/// `has_more`, `tokens_used` as sent, an index line per match with a
/// summary, in search and recall, budgeted or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_count_what_they_found_and_what_they_cost() {
    let p = Project::new();
    for i in 0..12 {
        p.write(
            &format!("docs/service-{i}.md"),
            &format!(
                "# Service {i}\n\nThe rate limiter of service {i} allows {} requests per second.\n",
                100 + i
            ),
        );
    }
    let client = connect(p.shared()).await;
    let q = json!({"query": "rate limiter requests", "limit": 5, "relative_floor": 0.0});
    let v = ok(&client, "search", q.clone()).await;
    assert_eq!(v["total"], 5, "{v}");
    assert_eq!(v["total_count"], 12, "{v}");
    assert_eq!(v["has_more"], true, "{v}");
    let sent = text(&call(&client, "search", q).await);
    assert_eq!(
        v["tokens_used"].as_u64().unwrap() as usize,
        cairn_search::estimate_tokens(&sent)
    );
    let v = ok(
        &client,
        "search",
        json!({"query": "rate limiter requests", "max_tokens": 4000, "relative_floor": 0.0}),
    )
    .await;
    assert_eq!(v["total_count"], 12, "{v}");
    assert_eq!(
        v["index"].as_array().unwrap().len(),
        12,
        "every match listed: {v}"
    );
    assert_eq!(v["has_more"], false, "{v}");
    let line = v["index"][0].as_str().unwrap();
    assert!(
        line.contains("): ") && line.contains("rate limiter"),
        "{line}"
    );
    assert!(v["tokens_used"].as_u64().unwrap() <= 4000);

    for i in 0..8 {
        ok(&client, "memory_store", json!({"text": format!("Deploy note {i}: staging deploys run at {i} am with a canary first")})).await;
    }
    let v = ok(
        &client,
        "memory_recall",
        json!({"query": "staging deploy canary", "limit": 3, "relative_floor": 0.0}),
    )
    .await;
    assert_eq!(
        (v["total"].as_u64(), v["total_count"].as_u64()),
        (Some(3), Some(8)),
        "{v}"
    );
    assert_eq!(v["has_more"], true);
    let v = ok(
        &client,
        "memory_recall",
        json!({"query": "staging deploy canary", "limit": 3, "offset": 6, "relative_floor": 0.0}),
    )
    .await;
    assert_eq!(v["total"], 2, "{v}");
    assert_eq!(v["has_more"], false, "{v}");
    let v = ok(
        &client,
        "memory_recall",
        json!({"query": "staging deploy canary", "max_tokens": 2000, "relative_floor": 0.0}),
    )
    .await;
    assert_eq!(v["index"].as_array().unwrap().len(), 8, "{v}");
    assert_eq!(
        (v["total_count"].as_u64(), v["has_more"].as_bool()),
        (Some(8), Some(false)),
        "{v}"
    );
    assert!(
        v["index"][0].as_str().unwrap().contains(": Deploy note"),
        "{v}"
    );
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_recall_keeps_to_a_token_budget() {
    let p = Project::new();
    docs(&p);
    let shared = p.shared();
    let inputs: Vec<cairn::MemoryInput> = (0..40)
        .map(|i| cairn::MemoryInput {
            text: format!(
                "Rate limiter note {i}: service{i} allows {} requests per second with a burst of {}; clients back off exponentially when they get 429.",
                100 + i,
                20 + i
            ),
            kind: Some("fact".into()),
            ..cairn::MemoryInput::default()
        })
        .collect();
    shared
        .engine
        .import_memories(&inputs, &NoProgress)
        .expect("import");
    let client = connect(shared).await;
    for budget in [100u32, 300] {
        let r = call(
            &client,
            "memory_recall",
            json!({"query": "rate limiter burst", "max_tokens": budget}),
        )
        .await;
        let body = text(&r);
        assert!(
            cairn_search::estimate_tokens(&body) <= budget as usize,
            "{budget}: {body}"
        );
        let v: Value = serde_json::from_str(&body).unwrap();
        let index = v["index"].as_array().unwrap();
        assert!(!index.is_empty());
        assert_eq!(v["total_count"], 40, "{v}");
        assert_eq!(v["has_more"], true, "{v}");
        assert!(index[0].as_str().unwrap().contains(" fact imp 5 "), "{v}");
    }
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relate_graph_and_index_project() {
    let p = Project::new();
    p.write(
        "docs/throttle.md",
        "# Login throttling\n\nFive failed sign-ins lock the account for fifteen minutes.\n",
    );
    p.write(
        "src/gate.rs",
        "pub struct RateGate {\n    limit: usize,\n}\n\nimpl RateGate {\n    pub fn admit(&self, n: usize) -> bool {\n        n < self.limit\n    }\n}\n",
    );
    let client = connect(p.shared()).await;
    p.write(
        "src/lock.py",
        "def lock_account(user):\n    \"\"\"Locks after too many failures.\"\"\"\n    user.locked = True\n",
    );
    let r = ok(&client, "index_project", json!({})).await;
    assert_eq!(r["added"], 1, "{r}");
    assert_eq!(r["code_chunks_by_language"]["python"], 1, "{r}");
    // What a code search for the concept gives RateGate before the relation.
    let gate_score = |hits: &serde_json::Value| {
        hits["matches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["path"] == "src/gate.rs")
            .and_then(|m| m["score"].as_f64())
            .unwrap_or(0.0)
    };
    let code_search = json!({"query": "login throttling", "kind": ["code"]});
    let before = gate_score(&ok(&client, "search", code_search.clone()).await);
    let r = ok(
        &client,
        "relate",
        json!({
            "entities": [{"name": "RateGate", "entityType": "struct", "observations": ["counts strikes"]}],
            "relations": [{"from": "Login throttling", "to": "RateGate", "relationType": "implemented_by"}],
            "observations": [{"entityName": "RateGate", "contents": ["lives in src/gate.rs"]}]
        }),
    )
    .await;
    assert_eq!(r["relations_added"], 1, "{r}");
    assert_eq!(r["entities_created"], json!(["RateGate"]), "{r}");
    let n = ok(
        &client,
        "graph",
        json!({"op": "neighbors", "name": "rate_gate"}),
    )
    .await;
    let rels: Vec<&str> = n["neighbors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["rel"].as_str())
        .collect();
    assert!(
        rels.contains(&"defines") && rels.contains(&"implemented_by"),
        "{n}"
    );
    let path = ok(
        &client,
        "graph",
        json!({"op": "path", "from": "Login throttling", "to": "admit"}),
    )
    .await;
    assert!(path["path"].as_array().unwrap().len() >= 3, "{path}");
    let c = ok(&client, "graph", json!({"op": "communities"})).await;
    assert!(c["edges"].as_u64().unwrap() > 3, "{c}");
    assert_eq!(
        err(&client, "graph", json!({"op": "nope"})).await,
        r#"op must be one of "neighbors", "path", "communities" (got "nope")"#
    );
    assert!(
        err(&client, "graph", json!({"op": "neighbors"}))
            .await
            .contains("needs name")
    );
    assert!(
        err(&client, "relate", json!({}))
            .await
            .contains("give entities")
    );
    // The relation brings the concept's words to RateGate through the graph:
    // its score rises (it had neither the words nor their meaning). First
    // place is no promise: `lock_account`, "locks after too many failures",
    // is close in meaning to the query.
    let hits = ok(&client, "search", code_search).await;
    let after = gate_score(&hits);
    assert!(after > before, "RateGate {before} → {after}: {hits}");
    let top2: Vec<&str> = hits["matches"]
        .as_array()
        .unwrap()
        .iter()
        .take(2)
        .filter_map(|m| m["path"].as_str())
        .collect();
    assert!(top2.contains(&"src/gate.rs"), "{hits}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_huge_number_does_not_end_the_server() {
    // memory_recall with offset 1e9 once aborted the shared daemon (a 256 GiB
    // allocation), cutting off every attached agent.
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    ok(
        &client,
        "memory_store",
        json!({"text": "deploys go out on Fridays"}),
    )
    .await;
    // Numbers past a field's range are refused, naming it (they were once
    // clamped in silence).
    for (tool, args) in [
        (
            "memory_recall",
            json!({"query": "deploy", "offset": 1_000_000_000u32}),
        ),
        (
            "memory_recall",
            json!({"query": "deploy", "offset": u32::MAX, "limit": u32::MAX}),
        ),
        (
            "memory_recall",
            json!({"query": "deploy", "limit": u32::MAX, "max_tokens": u32::MAX}),
        ),
        (
            "memory_recall",
            json!({"query": "deploy", "offset": u64::MAX}),
        ),
        (
            "memory_list",
            json!({"offset": u32::MAX, "limit": u32::MAX}),
        ),
        ("search", json!({"query": "redis", "limit": u32::MAX})),
        ("expand", json!({"chunk_id": "x", "max_tokens": u64::MAX})),
    ] {
        let msg = err(&client, tool, args).await;
        assert!(msg.contains("must be an integer"), "{tool}: {msg}");
    }
    // The largest values in range are answers.
    ok(
        &client,
        "memory_recall",
        json!({"query": "deploy", "offset": cairn::MAX_OFFSET, "limit": 20, "max_tokens": cairn::MAX_TOKENS}),
    )
    .await;
    ok(
        &client,
        "memory_list",
        json!({"offset": cairn::MAX_OFFSET, "limit": 500}),
    )
    .await;
    // The same connection still answers.
    let v = ok(&client, "memory_recall", json!({"query": "deploy Fridays"})).await;
    assert!(v.to_string().contains("Fridays"), "{v}");
}

/// A search over an empty index tells the agent what to do about it: the
/// `index_project` tool, which then makes the same search answer.
#[tokio::test]
async fn an_empty_index_points_the_agent_to_index_project() {
    let p = Project::new();
    p.write(
        "docs/throttle.md",
        "# Login throttling\n\nFive failed sign-ins lock the account for fifteen minutes.\n",
    );
    let client = connect(Shared::new(Arc::new(p.engine()))).await;
    let r = ok(&client, "search", json!({"query": "login throttling"})).await;
    assert_eq!(r["total"], 0, "{r}");
    assert!(
        r["note"]
            .as_str()
            .is_some_and(|n| n.contains("index_project")),
        "{r}"
    );
    ok(&client, "index_project", json!({})).await;
    let r = ok(&client, "search", json!({"query": "login throttling"})).await;
    assert!(r["total"].as_u64().is_some_and(|n| n >= 1), "{r}");
}
