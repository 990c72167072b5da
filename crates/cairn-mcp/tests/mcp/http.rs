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

/// The head of an answer, lower case.
fn head_of(answer: &str) -> String {
    answer
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// A header of an answer (name in lower case), if there.
fn header_of(answer: &str, name: &str) -> Option<String> {
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

/// Every answer, refusals included, forbids framing, sniffing, referrers
/// and caching, and allows only the page's own files.
fn guarded(answer: &str) {
    let head = head_of(answer);
    for line in [
        "x-frame-options: deny",
        "x-content-type-options: nosniff",
        "referrer-policy: no-referrer",
        "cache-control: no-store",
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
}

/// Issue 60: the page's address carries a one-time token, which its first
/// load trades for an `HttpOnly`, `SameSite=Strict` cookie with a 303 to
/// the clean address (no-store); the API answers on that cookie, sent with
/// the page's header from no other origin, and nothing else (403); the
/// token, once spent, opens nothing. (Before, the token in the address was
/// the API's key for as long as the server ran, and the browser kept it.)
#[tokio::test]
async fn the_page_trades_its_one_time_token_for_a_cookie() {
    let keys = cairn_mcp::ui::PageKeys::new().expect("keys");
    let token = keys.issue().expect("a token");
    let srv = start_with(HttpOptions {
        page: Some(keys.clone()),
        limits: quick(),
        ..HttpOptions::default()
    })
    .await;
    let a = srv.addr;
    let get = |path: &str, headers: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: {a}\r\n{headers}Connection: close\r\n\r\n")
    };
    let first = exchange(a, &get(&format!("/?token={token}"), "")).await;
    assert!(first.starts_with("HTTP/1.1 303"), "{first}");
    assert_eq!(
        header_of(&first, "location").as_deref(),
        Some("/"),
        "{first}"
    );
    guarded(&first);
    let set = header_of(&first, "set-cookie").unwrap_or_else(|| panic!("no cookie: {first}"));
    let attrs: Vec<&str> = set.split(';').map(str::trim).collect();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(attrs.contains(&attr), "{attr} missing: {set}");
    }
    let pair = attrs[0];
    assert!(
        pair.starts_with(&format!("cairn-page-{}=", a.port())),
        "{set}"
    );
    assert!(!set.contains(&token), "the cookie is not the token: {set}");
    let cookie = format!("Cookie: {pair}\r\n");
    let page_call = format!("{cookie}X-Cairn-Page: 1\r\n");

    // The clean address: the page, no data, not to be kept.
    let page = exchange(a, &get("/", "")).await;
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

    // The cookie with the page's header: answered, from the page's own
    // origin too.
    let ok = exchange(a, &get("/api/status", &page_call)).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("\"files\""), "{ok}");
    guarded(&ok);
    let own = format!("{page_call}Origin: http://{a}\r\n");
    let ok = exchange(a, &get("/api/status", &own)).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    // Refused: no cookie, a wrong one, another port's name, the cookie
    // without the page's header (a form or `no-cors` fetch of another
    // page), from another loopback origin (a web app on another port, for
    // which the cookie is same-site), the token itself as a key.
    let wrong = format!(
        "Cookie: cairn-page-{}={}\r\nX-Cairn-Page: 1\r\n",
        a.port(),
        "0".repeat(64)
    );
    let value = pair.split_once('=').map(|(_, v)| v).unwrap_or_default();
    let other_port = format!("Cookie: cairn-page-1={value}\r\nX-Cairn-Page: 1\r\n");
    let other_origin = format!("{page_call}Origin: http://127.0.0.1:1\r\n");
    let token_header = format!("X-Cairn-Token: {token}\r\nX-Cairn-Page: 1\r\n");
    for headers in [
        "X-Cairn-Page: 1\r\n",
        wrong.as_str(),
        other_port.as_str(),
        cookie.as_str(),
        other_origin.as_str(),
        token_header.as_str(),
    ] {
        let refused = exchange(a, &get("/api/status", headers)).await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{headers}: {refused}");
        assert!(refused.contains("key"), "{refused}");
        guarded(&refused);
    }
    let body = r#"{"id":"m-none","dry_run":true}"#;
    let forget = |headers: &str| {
        format!(
            "POST /api/memory/forget HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let refused = exchange(a, &forget(&cookie)).await;
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    let answered = exchange(a, &forget(&own)).await;
    assert!(
        answered.starts_with("HTTP/1.1 400") && answered.contains("no memory with id"),
        "{answered}"
    );

    // Spent: the same address opens nothing without the cookie, and sends
    // a browser that has it on to the page, with no new cookie.
    let again = exchange(a, &get(&format!("/?token={token}"), "")).await;
    assert!(again.starts_with("HTTP/1.1 403"), "{again}");
    assert!(again.contains("used already"), "{again}");
    assert!(header_of(&again, "set-cookie").is_none(), "{again}");
    guarded(&again);
    let back = exchange(a, &get(&format!("/?token={token}"), &cookie)).await;
    assert!(back.starts_with("HTTP/1.1 303"), "{back}");
    assert!(header_of(&back, "set-cookie").is_none(), "{back}");
    // A new token (a second `cairn ui`) opens it again, with the same key.
    let second = keys.issue().expect("a second token");
    let opened = exchange(a, &get(&format!("/?token={second}"), "")).await;
    assert_eq!(header_of(&opened, "set-cookie"), Some(set), "{opened}");
    // Refused before the routes: a Host check's answer is guarded too.
    let rebind = exchange(
        a,
        "GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(rebind.starts_with("HTTP/1.1 403"), "{rebind}");
    guarded(&rebind);
}

/// With `serve --http --token`, the page's key is the bearer token: in
/// `X-Cairn-Token` (its address carries it as `#token=…`), never spent;
/// the cookie it gets from `/?token=…` stands in for the bearer on the API
/// only, never on `/mcp`.
#[tokio::test]
async fn the_bearer_token_is_the_pages_key_and_its_cookie_is_for_the_api_only() {
    let srv = start_with(HttpOptions {
        token: Some("s3cret".into()),
        page: Some(cairn_mcp::ui::PageKeys::fixed("s3cret").expect("keys")),
        limits: quick(),
        ..HttpOptions::default()
    })
    .await;
    let a = srv.addr;
    let get = |path: &str, headers: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: {a}\r\n{headers}Connection: close\r\n\r\n")
    };
    let headers = "Authorization: Bearer s3cret\r\nX-Cairn-Token: s3cret\r\n";
    for _ in 0..2 {
        let ok = exchange(a, &get("/api/status", headers)).await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    }
    let opened = exchange(a, &get("/?token=s3cret", "")).await;
    assert!(opened.starts_with("HTTP/1.1 303"), "{opened}");
    let set = header_of(&opened, "set-cookie").expect("a cookie");
    let pair = set.split(';').next().unwrap_or_default();
    let cookie = format!("Cookie: {pair}\r\nX-Cairn-Page: 1\r\n");
    let ok = exchange(a, &get("/api/status", &cookie)).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let mcp = exchange(a, &post(a, &cookie, INIT)).await;
    assert!(mcp.starts_with("HTTP/1.1 401"), "{mcp}");
    let health = exchange(a, &get("/health", &cookie)).await;
    assert!(health.starts_with("HTTP/1.1 401"), "{health}");
}

/// Issue 60: one address holds its share (64) of used sessions, from a
/// client that never ends them; ten new clients then initialize together
/// and each sends its next messages: all ten are answered. (Before, each
/// `initialize` ended the newest unused session, another new client's:
/// 8 or 9 of 10 had their next message answered 404.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_arriving_together_keep_their_sessions() {
    let srv = start(HttpLimits::default(), None).await;
    let a = srv.addr;
    for _ in 0..64 {
        let id = session(a).await;
        let used = exchange(a, &post(a, &in_session(&id), PING)).await;
        assert!(used.starts_with("HTTP/1.1 200"), "{used}");
    }
    let together = std::sync::Arc::new(tokio::sync::Barrier::new(10));
    let clients: Vec<_> = (0..10)
        .map(|_| {
            let together = together.clone();
            tokio::spawn(async move {
                let init = exchange(a, &post(a, "", INIT)).await;
                let id = session_id(&init);
                // Every client has its session before any sends more.
                together.wait().await;
                let Some(id) = id else {
                    return format!("initialize: {init}");
                };
                let noted = exchange(a, &post(a, &in_session(&id), INITIALIZED)).await;
                if !noted.starts_with("HTTP/1.1 202") {
                    return format!("initialized: {noted}");
                }
                let search = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"redis ttl refreshed"}}}"#;
                let found = exchange(a, &post(a, &in_session(&id), search)).await;
                if found.starts_with("HTTP/1.1 200") && found.contains("docs/cache.md") {
                    String::new()
                } else {
                    format!("first call: {found}")
                }
            })
        })
        .collect();
    let mut failed = Vec::new();
    for c in clients {
        let outcome = c.await.expect("a client");
        if !outcome.is_empty() {
            failed.push(outcome.lines().next().unwrap_or_default().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of 10 failed: {failed:?}",
        failed.len()
    );
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
