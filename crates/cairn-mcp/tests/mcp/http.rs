//! Streamable HTTP in process: raw TCP clients against `serve_on_listener`,
//! with short timeouts so slow and idle clients are seen being cut off.

use std::net::SocketAddr;
use std::time::Duration;

use cairn_mcp::http::{CancellationToken, HttpLimits, HttpOptions, serve_on_listener};
use cairn_test_support::Project;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use super::{Serve, docs};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// Short limits: what the tests wait out.
fn quick() -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_millis(300),
        body_timeout: Duration::from_millis(300),
        ..HttpLimits::default()
    }
}

struct Running {
    addr: SocketAddr,
    cancel: CancellationToken,
    served: JoinHandle<cairn_mcp::Result<()>>,
    _project: Project,
}

async fn start(limits: HttpLimits, token: Option<&str>) -> Running {
    let opts = HttpOptions {
        token: token.map(str::to_owned),
        limits,
        ..HttpOptions::default()
    };
    start_with(opts).await
}

async fn start_with(opts: HttpOptions) -> Running {
    let p = Project::new();
    docs(&p);
    let shared = p.shared();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let cancel = CancellationToken::new();
    let served = tokio::spawn(serve_on_listener(shared, opts, listener, cancel.clone()));
    Running {
        addr,
        cancel,
        served,
        _project: p,
    }
}

/// Reads until the peer closes, `done` holds of what came, or 5 s pass.
async fn read_until(s: &mut TcpStream, done: impl Fn(&str) -> bool) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let limit = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(limit, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                out.extend_from_slice(&buf[..n]);
                if done(&String::from_utf8_lossy(&out)) {
                    break;
                }
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One request on a new connection; the answer (up to the first JSON-RPC
/// message of an SSE stream, or the whole body).
async fn exchange(addr: SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request.as_bytes()).await.expect("send");
    read_until(&mut s, |t| {
        t.contains("\"result\"") || t.contains("\"error\"")
    })
    .await
}

fn post(addr: SocketAddr, headers: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn health(addr: SocketAddr, headers: &str) -> String {
    format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n")
}

/// Whether the server closes `s` within `limit` (reading whatever it sends).
async fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

fn session_id(answer: &str) -> Option<String> {
    answer
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| l.split_once(':').map(|(_, v)| v.trim().to_string()))
        })
        .flatten()
}

#[tokio::test]
async fn slow_header_connections_are_closed() {
    let srv = start(quick(), None).await;
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(srv.addr).await.unwrap();
        // A request line and one header, never the blank line that ends them.
        s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        slow.push(s);
    }
    for s in &mut slow {
        assert!(
            closed_within(s, Duration::from_secs(3)).await,
            "a connection that never finished its headers is still open"
        );
    }
    // The server still answers.
    let ok = exchange(srv.addr, &health(srv.addr, "")).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let srv = start(quick(), None).await;
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    let req = format!("GET /health HTTP/1.1\r\nHost: {}\r\n\r\n", srv.addr);
    s.write_all(req.as_bytes()).await.unwrap();
    let answer = read_until(&mut s, |t| t.contains("\"status\":\"ok\"}")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        closed_within(&mut s, Duration::from_secs(3)).await,
        "an idle keep-alive connection is still open"
    );
}

#[tokio::test]
async fn a_trickling_body_is_cut_off_and_a_large_one_refused() {
    let limits = HttpLimits {
        max_body_bytes: 1024,
        ..quick()
    };
    let srv = start(limits, None).await;
    // 10 of the 100 bytes announced, then nothing.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        srv.addr
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let answer = read_until(&mut s, |_| false).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(closed_within(&mut s, Duration::from_secs(3)).await);

    // Announced over the limit: refused before a byte of it is sent.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 5000000\r\n\r\n",
        srv.addr
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let answer = read_until(&mut s, |t| t.contains("Payload Too Large")).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Chunked, no length announced: cut at the limit.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    let chunk = "x".repeat(2000);
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        srv.addr,
        chunk.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let answer = read_until(&mut s, |t| t.contains("Payload Too Large")).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

#[tokio::test]
async fn at_the_connection_cap_an_unused_connection_makes_room() {
    let limits = HttpLimits {
        max_connections: 4,
        header_timeout: Duration::from_secs(30),
        ..HttpLimits::default()
    };
    let srv = start(limits, None).await;
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(srv.addr).await.unwrap());
    }
    // Let the server take all four before the fifth comes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ok = exchange(srv.addr, &health(srv.addr, "")).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(
        closed_within(&mut idle[0], Duration::from_secs(3)).await,
        "the oldest idle connection was kept past the cap"
    );
}

#[tokio::test]
async fn at_the_connection_cap_a_new_connection_waits_for_a_slot() {
    let limits = HttpLimits {
        max_connections: 1,
        header_timeout: Duration::from_secs(1),
        ..HttpLimits::default()
    };
    let srv = start(limits, None).await;
    // A keep-alive connection that has been used: not closed to make room.
    let mut first = TcpStream::connect(srv.addr).await.unwrap();
    let req = format!("GET /health HTTP/1.1\r\nHost: {}\r\n\r\n", srv.addr);
    first.write_all(req.as_bytes()).await.unwrap();
    let answer = read_until(&mut first, |t| t.contains("\"status\":\"ok\"}")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The second is served once the first times out idle.
    let second = exchange(srv.addr, &health(srv.addr, "")).await;
    assert!(second.starts_with("HTTP/1.1 200"), "{second}");
    assert!(closed_within(&mut first, Duration::from_secs(1)).await);
}

#[tokio::test]
async fn an_open_event_stream_is_not_timed_out_and_holds_its_slot() {
    let limits = HttpLimits {
        max_connections: 1,
        ..quick()
    };
    let srv = start(limits, None).await;
    let a = srv.addr;
    let init = exchange(a, &post(a, "", INIT)).await;
    let id = session_id(&init).expect("a session id");
    let headers = format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let noted = exchange(a, &post(a, &headers, note)).await;
    assert!(noted.starts_with("HTTP/1.1 202"), "{noted}");
    // The session's event stream: a response that does not end.
    let mut stream = TcpStream::connect(a).await.unwrap();
    let get =
        format!("GET /mcp HTTP/1.1\r\nHost: {a}\r\nAccept: text/event-stream\r\n{headers}\r\n");
    stream.write_all(get.as_bytes()).await.unwrap();
    let head = read_until(&mut stream, |t| t.contains("\r\n\r\n")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        !closed_within(&mut stream, Duration::from_secs(1)).await,
        "the header timeout closed an event stream"
    );
    // The only slot is busy: a new connection is told so.
    let busy = exchange(a, &health(a, "")).await;
    assert!(busy.starts_with("HTTP/1.1 503"), "{busy}");
}

#[tokio::test]
async fn health_checks_host_origin_and_token() {
    let srv = start(quick(), Some("s3cret")).await;
    let a = srv.addr;
    let no_token = exchange(a, &health(a, "")).await;
    assert!(no_token.starts_with("HTTP/1.1 401"), "{no_token}");
    let wrong = exchange(a, &health(a, "Authorization: Bearer nope\r\n")).await;
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let good = exchange(a, &health(a, "Authorization: Bearer s3cret\r\n")).await;
    assert!(good.starts_with("HTTP/1.1 200"), "{good}");
    assert!(good.contains("\"status\":\"ok\""), "{good}");
    let rebind = exchange(
        a,
        "GET /health HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer s3cret\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(rebind.starts_with("HTTP/1.1 403"), "{rebind}");
    let origin = exchange(
        a,
        &health(
            a,
            "Authorization: Bearer s3cret\r\nOrigin: http://evil.example\r\n",
        ),
    )
    .await;
    assert!(origin.starts_with("HTTP/1.1 403"), "{origin}");
    let local_origin = exchange(
        a,
        &health(
            a,
            "Authorization: Bearer s3cret\r\nOrigin: http://localhost:3000\r\n",
        ),
    )
    .await;
    assert!(local_origin.starts_with("HTTP/1.1 200"), "{local_origin}");
    // /mcp keeps its checks.
    let mcp = exchange(a, &post(a, "", INIT)).await;
    assert!(mcp.starts_with("HTTP/1.1 401"), "{mcp}");
    let mcp = exchange(a, &post(a, "Authorization: Bearer s3cret\r\n", INIT)).await;
    assert!(mcp.starts_with("HTTP/1.1 200"), "{mcp}");
}

#[tokio::test]
async fn malformed_json_rpc_is_a_bad_request() {
    let srv = start(quick(), None).await;
    let a = srv.addr;
    let broken = exchange(a, &post(a, "", "{not json")).await;
    assert!(broken.starts_with("HTTP/1.1 400"), "{broken}");
    assert!(broken.contains("-32700"), "{broken}");
    let not_rpc = exchange(a, &post(a, "", r#"{"hello": 1}"#)).await;
    assert!(not_rpc.starts_with("HTTP/1.1 400"), "{not_rpc}");
    assert!(not_rpc.contains("-32600"), "{not_rpc}");
    // A body that is not declared JSON is still 415.
    let text = format!(
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nContent-Type: text/plain\r\nAccept: application/json, text/event-stream\r\nContent-Length: 9\r\nConnection: close\r\n\r\n{{not json"
    );
    let text = exchange(a, &text).await;
    assert!(text.starts_with("HTTP/1.1 415"), "{text}");
}

/// A session's headers, for its requests after `initialize`.
fn in_session(id: &str) -> String {
    format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n")
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

/// A new session, said initialized: its id.
async fn session(a: SocketAddr) -> String {
    let init = exchange(a, &post(a, "", INIT)).await;
    assert!(init.starts_with("HTTP/1.1 200"), "{init}");
    let id = session_id(&init).expect("a session id");
    let noted = exchange(a, &post(a, &in_session(&id), INITIALIZED)).await;
    assert!(noted.starts_with("HTTP/1.1 202"), "{noted}");
    id
}

/// The session's event stream, open (the session is busy while it is).
async fn open_stream(a: SocketAddr, id: &str) -> TcpStream {
    let mut s = TcpStream::connect(a).await.expect("connect");
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {a}\r\nAccept: text/event-stream\r\n{}\r\n",
        in_session(id)
    );
    s.write_all(get.as_bytes()).await.expect("send");
    let head = read_until(&mut s, |t| t.contains("\r\n\r\n")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    s
}

/// At the cap a new session ends the least recently used idle one; only a
/// table of busy sessions answers 503.
#[tokio::test]
async fn at_the_session_cap_the_least_recently_used_idle_session_makes_room() {
    let limits = HttpLimits {
        max_sessions: 2,
        ..quick()
    };
    let srv = start(limits, None).await;
    let a = srv.addr;
    let first = session(a).await;
    let second = session(a).await;
    let third = session(a).await;
    let gone = exchange(a, &post(a, &in_session(&first), PING)).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
    let kept = exchange(a, &post(a, &in_session(&second), PING)).await;
    assert!(kept.starts_with("HTTP/1.1 200"), "{kept}");
    // Both live sessions busy (their event streams open): no room.
    let _streams = [open_stream(a, &second).await, open_stream(a, &third).await];
    let refused = exchange(a, &post(a, "", INIT)).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("none of them idle"), "{refused}");
}

/// A session that sends nothing after its `initialize` is dropped after
/// `session_unused`; one that said `notifications/initialized` stays.
#[tokio::test]
async fn a_session_unused_after_initialize_is_dropped() {
    let limits = HttpLimits {
        session_unused: Duration::from_millis(500),
        ..quick()
    };
    let srv = start(limits, None).await;
    let a = srv.addr;
    let init = exchange(a, &post(a, "", INIT)).await;
    let abandoned = session_id(&init).expect("a session id");
    let used = session(a).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let gone = exchange(a, &post(a, &in_session(&abandoned), PING)).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
    let kept = exchange(a, &post(a, &in_session(&used), PING)).await;
    assert!(kept.starts_with("HTTP/1.1 200"), "{kept}");
}

/// Issue 34: 300 `initialize` calls never followed up, from the client's
/// own (loopback) address, once locked every new client out for 10 minutes
/// (503 at 128 sessions). Now the new client initializes and searches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_initializes_do_not_lock_a_new_client_out() {
    let srv = start(HttpLimits::default(), None).await;
    let a = srv.addr;
    for _ in 0..300 {
        exchange(a, &post(a, "", INIT)).await;
    }
    let id = session(a).await;
    let search = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"redis ttl refreshed"}}}"#;
    let found = exchange(a, &post(a, &in_session(&id), search)).await;
    assert!(found.starts_with("HTTP/1.1 200"), "{found}");
    assert!(found.contains("docs/cache.md"), "{found}");
}

/// With a page token, the page's API answers only calls that carry it
/// (403 otherwise), and every answer, refusals included, forbids framing,
/// sniffing and referrers and allows only the page's own files.
#[tokio::test]
async fn the_page_api_wants_the_page_token_and_no_answer_may_be_framed() {
    let srv = start_with(HttpOptions {
        page_token: Some("p4ge-t0ken".into()),
        limits: quick(),
        ..HttpOptions::default()
    })
    .await;
    let a = srv.addr;
    let get = |path: &str, headers: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: {a}\r\n{headers}Connection: close\r\n\r\n")
    };
    let guarded = |answer: &str| {
        let head = answer
            .split("\r\n\r\n")
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        for line in [
            "x-frame-options: deny",
            "x-content-type-options: nosniff",
            "referrer-policy: no-referrer",
        ] {
            assert!(head.contains(line), "no {line}: {head}");
        }
        let csp = head
            .lines()
            .find_map(|l| l.strip_prefix("content-security-policy: "))
            .unwrap_or_else(|| panic!("no CSP: {head}"));
        for part in ["default-src 'self'", "frame-ancestors 'none'"] {
            assert!(csp.contains(part), "{csp}");
        }
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
    };
    let page = exchange(a, &get("/?token=p4ge-t0ken", "")).await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    guarded(&page);
    // The policy allows no inline script or style: the page has none.
    let html = page.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert_eq!(
        html.matches("<script").count(),
        html.matches("<script src=").count(),
        "{html}"
    );
    assert!(
        !html.contains("<style") && !html.contains("style="),
        "{html}"
    );
    guarded(&exchange(a, &get("/ui/app.js", "")).await);
    for headers in [
        "",
        "X-Cairn-Token: wrong\r\n",
        "X-Cairn-Token: p4ge-t0ke\r\n",
    ] {
        let refused = exchange(a, &get("/api/status", headers)).await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{headers}: {refused}");
        assert!(refused.contains("token"), "{refused}");
        guarded(&refused);
    }
    // The token in the query is the page's business, not the API's.
    let refused = exchange(a, &get("/api/status?token=p4ge-t0ken", "")).await;
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    let ok = exchange(a, &get("/api/status", "X-Cairn-Token: p4ge-t0ken\r\n")).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("\"files\""), "{ok}");
    guarded(&ok);
    let body = r#"{"id":"m-none","dry_run":true}"#;
    let forget = format!(
        "POST /api/memory/forget HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let refused = exchange(a, &forget).await;
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    // Refused before the routes: a Host check's answer is guarded too.
    let rebind = exchange(
        a,
        "GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(rebind.starts_with("HTTP/1.1 403"), "{rebind}");
    guarded(&rebind);
}

#[tokio::test]
async fn shutdown_ends_serving_with_connections_open() {
    let srv = start(HttpLimits::default(), None).await;
    let _idle = TcpStream::connect(srv.addr).await.unwrap();
    let mut used = TcpStream::connect(srv.addr).await.unwrap();
    let req = format!("GET /health HTTP/1.1\r\nHost: {}\r\n\r\n", srv.addr);
    used.write_all(req.as_bytes()).await.unwrap();
    read_until(&mut used, |t| t.contains("\"status\":\"ok\"}")).await;
    srv.cancel.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(10), srv.served).await;
    assert!(
        matches!(ended, Ok(Ok(Ok(())))),
        "serving did not end: {ended:?}"
    );
}

/// Ending a session with `DELETE /mcp` answers 200 (not 202, which the
/// official SDK reports as a failed termination), and the session is gone.
#[tokio::test]
async fn deleting_a_session_answers_200_and_ends_it() {
    let srv = start(quick(), None).await;
    let a = srv.addr;
    let first = exchange(a, &post(a, "", INIT)).await;
    let id = session_id(&first).expect("a session id");
    let mut s = TcpStream::connect(a).await.expect("connect");
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {a}\r\nMcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\nConnection: close\r\n\r\n"
    );
    s.write_all(delete.as_bytes()).await.expect("send");
    let answer = read_until(&mut s, |t| t.contains("\r\n\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let headers = format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n");
    let gone = exchange(a, &post(a, &headers, ping)).await;
    assert!(gone.starts_with("HTTP/1.1 404"), "{gone}");
}

/// The web page: its assets without the token (they hold no data), its API
/// only with it, both behind the `Host` and `Origin` checks; the API's
/// posts are plain JSON, not JSON-RPC, and a cross-site one is refused.
#[tokio::test]
async fn the_page_and_its_api_keep_the_http_rules() {
    let srv = start(quick(), Some("s3cret")).await;
    let a = srv.addr;
    let get = |path: &str, headers: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: {a}\r\n{headers}Connection: close\r\n\r\n")
    };
    let page = exchange(a, &get("/", "")).await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(
        page.contains("text/html") && page.contains("<title>Cairn</title>"),
        "{page}"
    );
    let js = exchange(a, &get("/ui/app.js", "")).await;
    assert!(
        js.starts_with("HTTP/1.1 200") && js.contains("text/javascript"),
        "{js}"
    );
    let api = exchange(a, &get("/api/search?q=redis", "")).await;
    assert!(api.starts_with("HTTP/1.1 401"), "{api}");
    let api = exchange(
        a,
        &get("/api/search?q=redis", "Authorization: Bearer s3cret\r\n"),
    )
    .await;
    assert!(api.starts_with("HTTP/1.1 200"), "{api}");
    assert!(api.contains("docs/cache.md"), "{api}");
    let rebind = exchange(
        a,
        "GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(rebind.starts_with("HTTP/1.1 403"), "{rebind}");
    let body = r#"{"id":"m-none","dry_run":true}"#;
    let forget = |headers: &str| {
        format!(
            "POST /api/memory/forget HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let ok = exchange(a, &forget("Authorization: Bearer s3cret\r\n")).await;
    // Read as the API's JSON (no such memory), not refused as bad JSON-RPC.
    assert!(
        ok.starts_with("HTTP/1.1 400") && ok.contains("no memory with id"),
        "{ok}"
    );
    let cross = exchange(
        a,
        &forget("Authorization: Bearer s3cret\r\nOrigin: http://evil.example\r\n"),
    )
    .await;
    assert!(cross.starts_with("HTTP/1.1 403"), "{cross}");
    let bad = exchange(
        a,
        &get(
            "/api/search?q=x&kind=video",
            "Authorization: Bearer s3cret\r\n",
        ),
    )
    .await;
    assert!(
        bad.starts_with("HTTP/1.1 400") && bad.contains("doc, code, memory or history"),
        "{bad}"
    );
}

/// Issue 60: over HTTP too, `arguments: [1,2]` is -32602 (invalid
/// params), not -32601 (method not found).
#[tokio::test]
async fn tool_call_arguments_that_are_an_array_are_invalid_params() {
    let srv = start(quick(), None).await;
    let a = srv.addr;
    let id = session(a).await;
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":[1,2]}}"#;
    let answer = exchange(a, &post(a, &in_session(&id), call)).await;
    assert!(answer.contains("\"code\":-32602"), "{answer}");
    assert!(
        answer.contains("`arguments` must be an object, not an array"),
        "{answer}"
    );
    assert!(answer.contains("\"id\":9"), "{answer}");
}
