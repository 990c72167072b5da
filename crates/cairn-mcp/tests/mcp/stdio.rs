//! MCP over a line-delimited stream (what `cairn serve` speaks on stdio and
//! the daemon on its socket), through `serve_lines` over an in-memory pipe:
//! malformed and oversized lines each get a JSON-RPC error, and the session
//! goes on.

use cairn_mcp::{MAX_MESSAGE_BYTES, serve_lines};
use cairn_test_support::Project;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

use super::{Serve, docs};

struct Client {
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
}

impl Client {
    async fn send(&mut self, line: &[u8]) {
        self.write.write_all(line).await.expect("send");
        self.write.write_all(b"\n").await.expect("send");
    }

    /// The server's next line, as JSON.
    async fn answer(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            self.read.read_line(&mut line),
        )
        .await
        .expect("an answer in time")
        .expect("read");
        assert!(read > 0, "the server closed its output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// A tool call's JSON answer.
    async fn tool(&mut self, id: u64, name: &str, args: Value) -> Value {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": args}});
        self.send(call.to_string().as_bytes()).await;
        let answer = self.answer().await;
        assert_eq!(answer["id"], id, "{answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text: {answer}"));
        serde_json::from_str(text).expect("JSON answer")
    }
}

async fn connect(p: &Project) -> Client {
    let (server, client) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server);
    tokio::spawn(serve_lines(p.shared(), read, write));
    let (read, write) = tokio::io::split(client);
    let mut c = Client {
        write,
        read: BufReader::new(read),
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    c.send(init.to_string().as_bytes()).await;
    let answer = c.answer().await;
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    c.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    c
}

/// Issue 34: each of these once got no answer at all (the client waited
/// for ever, or gave up); now each gets a JSON-RPC error with a null id,
/// and the next request is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_malformed_line_is_answered_and_the_session_goes_on() {
    let p = Project::new();
    docs(&p);
    let mut c = connect(&p).await;
    let deep = "[".repeat(100_000);
    let cases: Vec<(&str, Vec<u8>, i64)> = vec![
        ("deep nesting", deep.into_bytes(), -32700),
        (
            "a huge id",
            br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}"#
                .to_vec(),
            -32600,
        ),
        (
            "an id out of range",
            br#"{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}"#.to_vec(),
            -32700,
        ),
        (
            "a lone surrogate",
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"\ud800"}}}"#
                .to_vec(),
            -32700,
        ),
        (
            "bytes that are not UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"x\":\"\xc3\x28\xff\"}"
                .to_vec(),
            -32700,
        ),
        ("not JSON", b"GET / HTTP/1.1".to_vec(), -32700),
        ("JSON, not a request", br#"{"hello": "world"}"#.to_vec(), -32600),
    ];
    for (i, (what, line, code)) in cases.into_iter().enumerate() {
        // A ping right behind it: the error must come first (a server that
        // says nothing would have the ping's answer read here).
        c.send(&line).await;
        let ping = json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "ping"});
        c.send(ping.to_string().as_bytes()).await;
        let answer = c.answer().await;
        assert_eq!(answer["jsonrpc"], "2.0", "{what}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        assert!(
            answer.get("id").is_some_and(Value::is_null),
            "{what}: {answer}"
        );
        let prefix = if code == -32700 {
            "Parse error: "
        } else {
            "Invalid Request: "
        };
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(prefix)),
            "{what}: {answer}"
        );
        let pong = c.answer().await;
        assert_eq!(pong["id"], 1000 + i, "{what}: {pong}");
        let v = c
            .tool(100 + i as u64, "search", json!({"query": "redis ttl"}))
            .await;
        assert_eq!(
            v["matches"][0]["path"], "docs/cache.md",
            "after {what}: {v}"
        );
    }
}

/// A line over `MAX_MESSAGE_BYTES` (the HTTP body cap) is refused unread:
/// a 5 MB `memory_store` stores nothing, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_the_cap_is_refused_and_nothing_is_stored() {
    let p = Project::new();
    docs(&p);
    let mut c = connect(&p).await;
    let text = "x".repeat(MAX_MESSAGE_BYTES + 1000);
    let store = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "memory_store", "arguments": {"text": text}}});
    c.send(store.to_string().as_bytes()).await;
    c.send(br#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#)
        .await;
    let answer = c.answer().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(c.answer().await["id"], "after");
    assert!(answer.get("id").is_some_and(Value::is_null), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&MAX_MESSAGE_BYTES.to_string()),
        "{message}"
    );
    let listed = c.tool(6, "memory_list", json!({})).await;
    assert_eq!(listed["total"], 0, "{listed}");
    // Just under the cap is read.
    let pad = "y".repeat(MAX_MESSAGE_BYTES - 1000);
    let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list",
        "params": {"_meta": {"pad": pad}}});
    c.send(list.to_string().as_bytes()).await;
    let answer = c.answer().await;
    assert!(answer["result"]["tools"].is_array(), "{answer}");
}

/// Issue 60: a `tools/call` whose `arguments` is an array (`[1,2]`), not
/// an object, was answered -32601 "method not found": rmcp could not read
/// it as a tool call and took it for an unknown method. Bad params of a
/// known method are -32602 (invalid params), with what is wrong and the
/// request's id; an unknown method is still -32601; the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_params_of_a_tool_call_are_invalid_params_not_an_unknown_method() {
    let p = Project::new();
    docs(&p);
    let mut c = connect(&p).await;
    let cases = [
        (
            json!({"name": "search", "arguments": [1, 2]}),
            -32602,
            "`arguments` must be an object, not an array",
        ),
        (
            json!({"name": "search", "arguments": "redis"}),
            -32602,
            "`arguments` must be an object, not a string",
        ),
        (
            json!({"name": 7, "arguments": {}}),
            -32602,
            "`name` must be a string",
        ),
        (
            json!({"arguments": {}}),
            -32602,
            "`name` (the tool) is missing",
        ),
    ];
    for (i, (params, code, says)) in cases.into_iter().enumerate() {
        let id = 500 + i as u64;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        c.send(call.to_string().as_bytes()).await;
        let answer = c.answer().await;
        assert_eq!(answer["id"], id, "{params}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{params}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.starts_with("Invalid params for tools/call") && message.contains(says),
            "{params}: {answer}"
        );
    }
    let unknown = json!({"jsonrpc": "2.0", "id": 600, "method": "tools/frobnicate", "params": {}});
    c.send(unknown.to_string().as_bytes()).await;
    let answer = c.answer().await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    let v = c.tool(601, "search", json!({"query": "redis ttl"})).await;
    assert_eq!(v["matches"][0]["path"], "docs/cache.md", "{v}");
}
