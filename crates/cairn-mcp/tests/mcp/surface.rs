//! The tool surface: how much `tools/list` costs a model, what its schemas
//! say, that the server holds every call to them, and that `expand` and `get`
//! keep to a budget.

use cairn_mcp::CairnServer;
use cairn_search::estimate_tokens;
use cairn_test_support::Project;
use serde_json::{Value, json};

use super::{Serve, connect, docs, err, ok};

/// What one agent pays, in tokens, for Cairn's tool list in its context.
/// 2,500 until this wave's tools: `why` (issue 41: 2,494 before it, 2,575
/// with it), `search`'s `projects` and `rerank` and `memory_store`'s
/// `supersedes` (issues 40, 37, 43) make 2,676. Folding `why` into
/// `graph` as an op would win back about 80.
const TOOLS_LIST_BUDGET: usize = 2_700;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_fits_its_token_budget() {
    let p = Project::new();
    let client = connect(p.shared()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let wire = serde_json::to_string(&json!({ "tools": tools })).expect("JSON");
    let tokens = estimate_tokens(&wire);
    if std::env::var("CAIRN_DUMP_TOOLS").is_ok() {
        eprintln!("{wire}");
        eprintln!("tools/list: {tokens} tokens, {} bytes", wire.len());
    }
    assert!(
        tokens <= TOOLS_LIST_BUDGET,
        "tools/list is {tokens} tokens ({} bytes), over {TOOLS_LIST_BUDGET}",
        wire.len()
    );
    // The router the server is built from gives the same list.
    let local =
        serde_json::to_string(&json!({ "tools": CairnServer::tools().list_all() })).expect("JSON");
    assert_eq!(local, wire);
    client.cancel().await.expect("close");
}

/// Every schema object below `v`, with where it is.
fn schemas<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    if let Value::Object(o) = v {
        out.push((at.clone(), v));
        if let Some(Value::Object(props)) = o.get("properties") {
            for (k, p) in props {
                schemas(p, format!("{at}.{k}"), out);
            }
        }
        if let Some(items) = o.get("items") {
            schemas(items, format!("{at}[]"), out);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_state_ranges_and_enums_without_noise() {
    let tools = CairnServer::tools().list_all();
    let mut all = Vec::new();
    for t in &tools {
        let schema = Value::Object((*t.input_schema).clone());
        assert!(schema.get("$schema").is_none(), "{}", t.name);
        assert!(schema.get("$defs").is_none(), "{}", t.name);
        let mut found = Vec::new();
        schemas(&schema, t.name.to_string(), &mut found);
        for (at, s) in found {
            all.push((at, s.clone()));
        }
    }
    for (at, s) in &all {
        for noise in ["format", "$ref", "anyOf", "oneOf", "default", "title"] {
            assert!(s.get(noise).is_none(), "{at} has {noise}: {s}");
        }
        assert!(
            s.get("type").is_some_and(Value::is_string),
            "{at}: one type, no null union: {s}"
        );
    }
    let field = |at: &str| {
        all.iter()
            .find(|(a, _)| a == at)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("no {at}"))
    };
    let range = |at: &str| {
        let s = field(at);
        (s["minimum"].as_i64(), s["maximum"].as_i64())
    };
    for at in [
        "memory_store.importance",
        "memory_update.importance",
        "memory_recall.min_importance",
    ] {
        assert_eq!(range(at), (Some(1), Some(10)), "{at}");
    }
    assert_eq!(range("search.limit"), (Some(1), Some(20)));
    assert_eq!(range("memory_recall.limit"), (Some(1), Some(20)));
    assert_eq!(range("memory_list.limit"), (Some(1), Some(500)));
    assert_eq!(range("memory_recall.offset"), (Some(0), Some(10_000)));
    assert_eq!(range("expand.context_lines"), (Some(0), Some(200)));
    assert_eq!(range("transcript.context"), (Some(0), Some(20)));
    assert_eq!(range("graph.limit"), (Some(1), Some(200)));
    for tool in ["search", "memory_recall", "expand", "get", "why"] {
        assert_eq!(
            range(&format!("{tool}.max_tokens")),
            (Some(100), Some(1_000_000)),
            "{tool}"
        );
    }
    assert_eq!(
        field("graph.op")["enum"],
        json!(["neighbors", "path", "communities"])
    );
    assert_eq!(
        field("search.kind[]")["enum"],
        json!(["doc", "code", "memory", "history"])
    );
}

/// Every bounded field: a call just past each end of its range is refused
/// with a tool error naming the field and the range.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_value_out_of_range_is_refused_naming_the_field() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    // Required arguments, so that only the bounded field is wrong.
    let base = |tool: &str| match tool {
        "search" | "memory_recall" => json!({"query": "redis"}),
        "expand" => json!({"chunk_id": "0000000000000000"}),
        "get" => json!({"path": "docs/cache.md"}),
        "why" => json!({"target": "docs/cache.md"}),
        "memory_store" => json!({"text": "a fact worth keeping"}),
        "memory_update" | "memory_forget" => json!({"id": "m-none"}),
        "graph" => json!({"op": "communities"}),
        "transcript" => json!({"session_id": "s-none"}),
        _ => json!({}),
    };
    let mut checked = 0;
    for t in CairnServer::tools().list_all() {
        let props = t.input_schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (name, s) in props {
            // Whole-number bounds of `number` fields (floors) are the engine's to check.
            if s["type"] != "integer" {
                continue;
            }
            let (Some(min), max) = (s["minimum"].as_i64(), s["maximum"].as_i64()) else {
                continue;
            };
            let range = match max {
                Some(max) => format!("{name} must be an integer from {min} to {max}"),
                None => format!("{name} must be an integer of at least {min}"),
            };
            let mut outside = vec![min - 1];
            outside.extend(max.map(|m| m + 1));
            for v in outside {
                let mut args = base(&t.name);
                args[&name] = json!(v);
                let msg = err(&client, &t.name, args).await;
                assert_eq!(msg, format!("{range} (got {v})"), "{}.{name}", t.name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "{checked} bounds checked");
    // A string where a number goes, and a number that is not whole.
    let msg = err(&client, "search", json!({"query": "x", "limit": "5"})).await;
    assert_eq!(msg, r#"limit must be an integer from 1 to 20 (got "5")"#);
    let msg = err(&client, "search", json!({"query": "x", "limit": 2.5})).await;
    assert!(msg.starts_with("limit must be an integer"), "{msg}");
    // null is absent.
    ok(&client, "search", json!({"query": "redis", "limit": null})).await;
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn importance_out_of_range_is_refused_not_stored_as_ten() {
    let p = Project::new();
    docs(&p);
    let client = connect(p.shared()).await;
    let msg = err(
        &client,
        "memory_store",
        json!({"text": "deploys go out on Fridays", "importance": 50}),
    )
    .await;
    assert_eq!(msg, "importance must be an integer from 1 to 10 (got 50)");
    let l = ok(&client, "memory_list", json!({})).await;
    assert_eq!(l["total"], 0, "nothing stored: {l}");
    let m = ok(
        &client,
        "memory_store",
        json!({"text": "deploys go out on Fridays", "importance": 10}),
    )
    .await;
    assert_eq!(m["memory"]["importance"], 10);
    let id = m["memory"]["id"].as_str().unwrap().to_string();
    let msg = err(
        &client,
        "memory_update",
        json!({"id": id, "importance": 11}),
    )
    .await;
    assert_eq!(msg, "importance must be an integer from 1 to 10 (got 11)");
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expand_and_get_keep_to_max_tokens() {
    let p = Project::new();
    let mut doc =
        String::from("# Runbook\n\nThe on-call rotation and its pager.\n\n## Incidents\n\n");
    for i in 0..2_000 {
        doc.push_str(&format!(
            "Step {i}: check the dashboard, page the owner, write the timeline.\n"
        ));
    }
    p.write("docs/runbook.md", &doc);
    let client = connect(p.shared()).await;
    let v = ok(
        &client,
        "search",
        json!({"query": "dashboard owner timeline", "limit": 1}),
    )
    .await;
    let id = v["matches"][0]["id"].as_str().unwrap().to_string();

    let s = ok(&client, "expand", json!({"chunk_id": id})).await;
    assert_eq!(s["truncated"], true, "{s}");
    assert_eq!(s["scope"], "section");
    assert!(estimate_tokens(s["text"].as_str().unwrap()) <= cairn::DEFAULT_READ_TOKENS);
    assert_eq!(s["full_end_line"], 2_006);
    assert!(s["hint"].as_str().unwrap().contains("max_tokens"), "{s}");
    let s = ok(
        &client,
        "expand",
        json!({"chunk_id": id, "max_tokens": 300}),
    )
    .await;
    assert!(estimate_tokens(s["text"].as_str().unwrap()) <= 300);
    let s = ok(
        &client,
        "expand",
        json!({"chunk_id": id, "max_tokens": 100_000}),
    )
    .await;
    assert!(s.get("truncated").is_none(), "whole section: {s}");
    // The hit's chunk begins at line 1 (the short intro above "Incidents"
    // merged into it): the section shown is never narrower than the hit.
    assert_eq!(
        (s["start_line"].as_u64(), s["end_line"].as_u64()),
        (Some(1), Some(2_006))
    );

    let g = ok(
        &client,
        "get",
        json!({"path": "docs/runbook.md", "max_tokens": 200}),
    )
    .await;
    assert_eq!(g["truncated"], true);
    assert!(estimate_tokens(g["text"].as_str().unwrap()) <= 200);
    assert_eq!(g["total_lines"], 2_006);
    let next = g["end_line"].as_u64().unwrap() + 1;
    assert!(
        g["hint"]
            .as_str()
            .unwrap()
            .contains(&format!("start_line {next}")),
        "{g}"
    );
    client.cancel().await.expect("close");
}
