//! `cairn serve` end to end: the real binary, real clients.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_test_support::TOOL_NAMES;
use serde_json::{Value, json};

use super::{Cli, Project, docs};

/// A `cairn serve` process driven over stdio with raw JSON-RPC lines.
pub(super) struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    pub(super) fn start(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut cmd = p.command(&[&["serve"], args].concat());
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("cairn serve starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    pub(super) fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").expect("write to server");
        self.stdin.flush().expect("flush");
    }

    /// A request's result, or its JSON-RPC error.
    pub(super) fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read from server");
            assert!(n > 0, "server closed stdout while we waited for {method}");
            let msg: Value = serde_json::from_str(&line).expect("JSON-RPC line");
            if msg["id"] == id {
                return match msg.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(msg["result"].clone()),
                };
            }
        }
    }

    pub(super) fn request(&mut self, method: &str, params: Value) -> Value {
        self.call(method, params)
            .unwrap_or_else(|e| panic!("{method}: {e}"))
    }

    pub(super) fn initialize(&mut self) -> Value {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    /// A tool's JSON answer.
    pub(super) fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        let text = r["content"][0]["text"].as_str().expect("text content");
        assert_ne!(r["isError"], true, "{name}: {text}");
        serde_json::from_str(text).expect("JSON answer")
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends bytes as one line, whatever they are.
    fn send_raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).expect("write to server");
        self.stdin.write_all(b"\n").expect("write to server");
        self.stdin.flush().expect("flush");
    }

    /// The server's next line, as JSON.
    fn next_line(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read from server");
        assert!(n > 0, "server closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Closes stdin and waits; returns stderr.
    pub(super) fn finish(mut self) -> String {
        drop(self.stdin);
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }
}

/// Daemon processes serving `root` (Linux: from /proc).
fn daemons_of(root: &Path) -> Vec<u32> {
    let root = root.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.iter().any(|a| a == "daemon") && args.contains(&root) {
            out.push(pid);
        }
    }
    out
}

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// A Python with the official MCP SDK, in a venv under the target folder
/// (made on first use: the project installs what its tests need).
fn python_mcp() -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _one = cairn_core::sync::lock(&LOCK);
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
    let python = venv.join("bin").join("python");
    let ready = |py: &Path| {
        Command::new(py)
            .args(["-c", "import mcp.client.stdio"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !ready(&python) {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 -m venv");
        assert!(status.success(), "python3 -m venv failed");
        let out = Command::new(&python)
            .args(["-m", "pip", "install", "-q", "mcp==2.3.0"])
            .output()
            .expect("pip runs");
        assert!(
            out.status.success(),
            "pip install mcp==2.3.0 failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    python
}

/// Runs `mcp_client.py` with these arguments; its JSON report.
fn python_client(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/mcp_client.py");
    let out = Command::new(python_mcp())
        .arg(script)
        .args(args)
        .output()
        .expect("python client runs");
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("client JSON")
}

/// What both transports must show the Python client.
fn check_python_report(v: &Value) {
    assert_eq!(v["tools"], json!(TOOL_NAMES));
    assert_eq!(
        v["search"]["matches"][0]["path"], "docs/cache/redis.md",
        "{v}"
    );
    assert_eq!(v["search"]["matches"][0]["source"], "fresh");
    // The hit is lines 1-7 (its parent headings merged in): the section
    // shown is never narrower than the hit.
    let expanded = v["expand"]["text"].as_str().unwrap();
    assert!(
        expanded.starts_with("# Architecture") && expanded.contains("### Redis Setup"),
        "{v}"
    );
    assert_eq!(v["expand"]["start_line"], 1, "{v}");
    assert_eq!(v["get_refused"]["is_error"], true);
}

#[test]
#[ignore = "full tier: needs Python MCP SDK and the model"]
fn official_python_sdk_drives_cairn_over_stdio() {
    let p = Project::new();
    docs(&p);
    p.ok(&["index", "-q"]);
    let root = p.path("");
    let v = python_client(&[
        "stdio",
        env!("CARGO_BIN_EXE_cairn"),
        root.to_str().unwrap(),
        "--idle-timeout",
        "2",
    ]);
    assert_eq!(v["server"], "cairn");
    check_python_report(&v);
    eprintln!(
        "python SDK: initialize answered in {:.0} ms",
        v["initialize_ms"].as_f64().unwrap()
    );
}

#[cfg(target_os = "linux")]
#[test]
fn two_stdio_clients_share_one_daemon() {
    // BM25 only: the test is about sharing one daemon, not vectors.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let root = p.path("").canonicalize().unwrap();
    let mut a = Server::start(&p, &["--idle-timeout", "3"], &[]);
    let mut b = Server::start(&p, &["--idle-timeout", "3"], &[]);
    a.initialize();
    b.initialize();
    let ha = a.tool("search", json!({"query": "session expiry in redis"}));
    let hb = b.tool("search", json!({"query": "session expiry in redis"}));
    assert_eq!(ha["matches"][0]["path"], "docs/cache/redis.md");
    assert_eq!(ha["matches"], hb["matches"]);
    let daemons = daemons_of(&root);
    assert_eq!(daemons.len(), 1, "one daemon per project: {daemons:?}");
    let daemon_rss = cairn_bench::rss_kib(daemons[0]).unwrap();
    for c in [&a, &b] {
        let rss = cairn_bench::rss_kib(c.pid()).unwrap();
        assert!(rss < 30 * 1024, "client RSS {rss} KiB");
        eprintln!("client {} RSS {} KiB", c.pid(), rss);
    }
    eprintln!("daemon {} RSS {} KiB", daemons[0], daemon_rss);
    a.finish();
    b.finish();
    // Idle timeout: the daemon leaves, and takes its socket with it.
    assert!(
        wait_until(Duration::from_secs(15), || daemons_of(&root).is_empty()),
        "daemon still running after its idle timeout"
    );
    assert!(!p.path(".cairn/daemon.sock").exists());
}

#[test]
fn watch_reindexes_changes_while_serving() {
    // No model: the test is about watching, and BM25 is enough to see it.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    for i in 0..500 {
        p.write(
            &format!("bulk/f{i:03}.md"),
            &format!("# Bulk {i}\n\nFiller text number {i} about nothing in particular at all.\n"),
        );
    }
    p.ok(&["index", "-q"]);
    let mut s = Server::start(&p, &["--watch", "--no-daemon"], &[("CAIRN_LOG", "info")]);
    s.initialize();
    assert_eq!(s.tool("status", json!({}))["watching"], true);

    // An edit shows up in search within 3 s.
    p.write(
        "docs/deploy.md",
        "# Deployments\n\nReleases now go out with a canary stage named bluebird before the full rollout.\n",
    );
    let edited = Instant::now();
    let seen = wait_until(Duration::from_secs(3), || {
        let v = s.tool("search", json!({"query": "bluebird canary"}));
        v["matches"][0]["path"] == "docs/deploy.md"
    });
    assert!(seen, "edit not searchable 3 s later");
    eprintln!("edit searchable after {} ms", edited.elapsed().as_millis());

    // A new file, a deletion and a rename.
    p.write(
        "docs/new.md",
        "# Newcomer\n\nThe zeppelin hangar holds spare parts.\n",
    );
    std::fs::remove_file(p.path("docs/garden.md")).unwrap();
    std::fs::rename(p.path("docs/deploy.md"), p.path("docs/release.md")).unwrap();
    assert!(wait_until(Duration::from_secs(5), || {
        let z = s.tool("search", json!({"query": "zeppelin hangar"}));
        let t = s.tool("search", json!({"query": "tomatoes basil"}));
        let r = s.tool("search", json!({"query": "bluebird canary"}));
        z["matches"][0]["path"] == "docs/new.md"
            && t["total"] == 0
            && r["matches"][0]["path"] == "docs/release.md"
    }));

    // 500 files at once: one index pass, and the server answers meanwhile.
    for i in 0..500 {
        p.write(
            &format!("bulk/f{i:03}.md"),
            &format!("# Bulk {i}\n\nRewritten filler {i} mentioning the word quokka.\n"),
        );
    }
    let mut answered = 0;
    let done = wait_until(Duration::from_secs(20), || {
        let v = s.tool("search", json!({"query": "quokka", "limit": 20}));
        answered += 1;
        v["total"] == 20
    });
    assert!(done, "bulk rewrite not indexed in 20 s");
    // Wait out the debounce so a (wrong) second pass would have shown up.
    std::thread::sleep(Duration::from_secs(2));
    let status = s.tool("status", json!({}));
    assert_eq!(status["files"], 503);
    let log = s.finish();
    let passes: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("watch: one index pass"))
        .collect();
    // The passes after the rename: exactly one, with all 500 files in it.
    let bulk: Vec<&&str> = passes
        .iter()
        .filter(|l| !l.contains(" 0 changed,"))
        .filter(|l| !l.contains(" 1 changed,"))
        .collect();
    assert_eq!(
        bulk.len(),
        1,
        "expected one pass for the burst:\n{}",
        passes.join("\n")
    );
    assert!(bulk[0].contains(" 500 changed,"), "{}", bulk[0]);
    eprintln!(
        "{}\nsearches answered during the burst: {answered}",
        passes.join("\n")
    );
}

#[test]
#[ignore = "full tier: needs the model"]
fn build_index_answers_bm25_while_embedding() {
    let p = Project::new();
    super::many_docs(&p.path(""), 120);
    // Through the shared daemon: it indexes, streams progress to this
    // client's stderr, then serves while the vectors are computed.
    let mut s = Server::start(&p, &["--build-index", "--idle-timeout", "2"], &[]);
    s.initialize();
    let st = s.tool("status", json!({}));
    assert_eq!(st["files"], 120, "{st}");
    let chunks = st["chunks"].as_u64().unwrap();
    assert!(st["embedded_chunks"].as_u64().unwrap() < chunks, "{st}");
    assert_eq!(st["embedding_in_progress"], true, "{st}");
    let v = s.tool("search", json!({"query": "cache session"}));
    assert_eq!(v["retrievers"], "bm25", "{v}");
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("embeddings are being computed")
    );
    assert!(v["total"].as_u64().unwrap() > 0);
    let done = wait_until(Duration::from_secs(300), || {
        let st = s.tool("status", json!({}));
        st["embedded_chunks"].as_u64() == Some(chunks) && st["embedding_in_progress"] == false
    });
    assert!(done, "embeddings not done in 300 s");
    let v = s.tool("search", json!({"query": "cache session"}));
    assert_eq!(v["retrievers"], "bm25+vector+graph", "{v}");
    let err = s.finish();
    assert!(err.contains("cairn: indexed 120 files"), "{err}");
}

#[test]
#[ignore = "full tier: needs Python MCP SDK and the model"]
fn http_serves_mcp_with_health_host_origin_and_token_checks() {
    let p = Project::new();
    docs(&p);
    p.ok(&["index", "-q"]);
    // Non-loopback without a token is refused before binding.
    let out = p.run(&["serve", "--http", "0.0.0.0:0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a bearer token"));

    let server =
        HttpServer::start(p.command(&["serve", "--http", "127.0.0.1:0", "--token", "s3cret"]));
    let addr = server.addr.clone();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let post = |headers: &str| {
        http(
            &addr,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{init}",
                init.len()
            ),
        )
    };
    let health = http(
        &addr,
        &format!(
            "GET /health HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\nConnection: close\r\n\r\n"
        ),
    );
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.contains("\"status\":\"ok\""), "{health}");
    let no_token = post("");
    assert!(no_token.starts_with("HTTP/1.1 401"), "{no_token}");
    let wrong = post("Authorization: Bearer nope\r\n");
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let good = post("Authorization: Bearer s3cret\r\n");
    assert!(good.starts_with("HTTP/1.1 200"), "{good}");
    assert!(good.contains("\"cairn\""), "{good}");
    let evil_origin = post("Authorization: Bearer s3cret\r\nOrigin: http://evil.example\r\n");
    assert!(evil_origin.starts_with("HTTP/1.1 403"), "{evil_origin}");
    let rebind = http(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{init}",
            init.len()
        ),
    );
    assert!(rebind.starts_with("HTTP/1.1 403"), "{rebind}");

    // The official Python SDK over streamable HTTP, with the token.
    let v = python_client(&["http", &format!("http://{addr}/mcp"), "s3cret"]);
    check_python_report(&v);
}

/// A `cairn serve --http` process; killed when dropped.
struct HttpServer {
    child: Child,
    addr: String,
}

impl HttpServer {
    /// Starts `cmd` and waits for the address it prints on stderr.
    fn start(mut cmd: Command) -> HttpServer {
        let mut child = cmd
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("http server starts");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let addr = loop {
            let mut line = String::new();
            assert!(err.read_line(&mut line).unwrap() > 0, "server exited");
            if let Some(rest) = line.split("http://").nth(1) {
                break rest.split('/').next().unwrap().to_string();
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        HttpServer { child, addr }
    }

    fn health(&self, headers: &str) -> String {
        let addr = &self.addr;
        http(
            addr,
            &format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n"),
        )
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn http_token_file_is_read_and_a_bad_one_named() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let http = ["serve", "--http", "127.0.0.1:0"];
    let missing = p.path("no-such-token");
    let out = p.run(&[&http[..], &["--token-file", missing.to_str().unwrap()]].concat());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-token"), "{err}");

    p.write("empty-token", "\n  \n");
    let out = p.run(&[&http[..], &["--token-file", "empty-token"]].concat());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("empty-token") && err.contains("empty"),
        "{err}"
    );

    p.write("token", "  s3cret  \nsecond line ignored\n");
    let out = p.run(&[&http[..], &["--token", "x", "--token-file", "token"]].concat());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not both"));

    // The file wins over the environment.
    let mut cmd = p.command(&[&http[..], &["--token-file", "token"]].concat());
    cmd.env("CAIRN_HTTP_TOKEN", "from-env");
    let server = HttpServer::start(cmd);
    let ok = server.health("Authorization: Bearer s3cret\r\n");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let env = server.health("Authorization: Bearer from-env\r\n");
    assert!(env.starts_with("HTTP/1.1 401"), "{env}");
    let none = server.health("");
    assert!(none.starts_with("HTTP/1.1 401"), "{none}");
}

#[cfg(unix)]
#[test]
fn http_health_answers_past_300_idle_connections_with_256_descriptors() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "ulimit -n 256 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .current_dir(p.path(""))
        .env_remove("CAIRN_LOG");
    let server = HttpServer::start(cmd);
    let idle: Vec<std::net::TcpStream> = (0..300)
        .map(|_| std::net::TcpStream::connect(&server.addr).expect("connect"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let health = server.health("");
    assert!(health.starts_with("HTTP/1.1 200"), "{health:?}");
    drop(idle);
}

/// One raw HTTP/1.1 exchange; the whole response as text.
fn http(addr: &str, request: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).expect("send");
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    // Read until the first SSE event or the end of the body.
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&out);
                if text.contains("\"result\"") || text.contains("\"error\"") {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn mcp_install_writes_client_configs_and_keeps_other_entries() {
    let p = Project::new();
    let home = tempfile::tempdir().unwrap();
    p.write(
        ".mcp.json",
        r#"{"mcpServers": {"other": {"command": "other-server"}}}"#,
    );
    // The shared files (the default is your own settings, as `setup`'s:
    // setup.rs tests it with a home of its own).
    p.ok(&["mcp", "install", "claude-code", "--shared"]);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".mcp.json")).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(v["mcpServers"]["cairn"]["args"], json!(["serve"]));

    p.ok(&["mcp", "install", "cursor", "--shared"]);
    p.ok(&["mcp", "install", "vscode", "--shared"]);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".vscode/mcp.json")).unwrap())
            .unwrap();
    assert_eq!(v["servers"]["cairn"]["type"], "stdio");
    assert!(p.path(".cursor/mcp.json").exists());

    let codex = home.path().join("config.toml");
    std::fs::write(
        &codex,
        "# my settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\n",
    )
    .unwrap();
    let out = p
        .command(&["mcp", "install", "codex"])
        .env("CODEX_HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let toml = std::fs::read_to_string(&codex).unwrap();
    assert!(
        toml.contains("# my settings") && toml.contains("docs-server"),
        "{toml}"
    );
    assert!(toml.contains("[mcp_servers.cairn]"), "{toml}");

    // --print writes nothing.
    let before = std::fs::read_to_string(p.path(".mcp.json")).unwrap();
    let printed = p.ok(&["mcp", "install", "claude-code", "--print", "--name", "kb"]);
    assert!(printed.contains("\"kb\""));
    assert_eq!(
        std::fs::read_to_string(p.path(".mcp.json")).unwrap(),
        before
    );

    // A broken file is reported and left alone.
    p.write(".cursor/mcp.json", "{ broken");
    let out = p.run(&["mcp", "install", "cursor", "--shared"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    assert_eq!(
        std::fs::read_to_string(p.path(".cursor/mcp.json")).unwrap(),
        "{ broken"
    );
}

/// Issue 34: over stdio, each malformed line once got no answer (the agent
/// waited) and a 10 MB memory was stored. Now, through the daemon and
/// without it, each gets a JSON-RPC error with a null id (-32700 when it is
/// not JSON, -32600 when it is no request or is over the 4 MiB cap), nothing
/// of it runs, and the next request is served.
#[test]
fn malformed_and_oversized_stdio_lines_are_answered_and_serving_goes_on() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let big = json!({"jsonrpc": "2.0", "id": 90, "method": "tools/call", "params": {
        "name": "memory_store", "arguments": {"text": "x".repeat(5 << 20)}}});
    let cases: Vec<(&str, Vec<u8>, i64)> = vec![
        ("deep nesting", "[".repeat(100_000).into_bytes(), -32700),
        (
            "a huge id",
            br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}"#
                .to_vec(),
            -32600,
        ),
        (
            "a lone surrogate",
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_store","arguments":{"text":"\ud800"}}}"#
                .to_vec(),
            -32700,
        ),
        (
            "bytes that are not UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"x\":\"\xc3\x28\xff\"}".to_vec(),
            -32700,
        ),
        ("not JSON", b"hello, server".to_vec(), -32700),
        ("over the cap", big.to_string().into_bytes(), -32600),
    ];
    for args in [&["--no-daemon"][..], &["--idle-timeout", "2"][..]] {
        let mut s = Server::start(&p, args, &[]);
        s.initialize();
        for (i, (what, line, code)) in cases.iter().enumerate() {
            // A ping right behind it: the error must come first (a server
            // that says nothing would have the ping's answer read here).
            s.send_raw(line);
            let ping = json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "ping"});
            s.send(&ping);
            let answer = s.next_line();
            assert_eq!(answer["error"]["code"], *code, "{args:?} {what}: {answer}");
            assert!(
                answer.get("id").is_some_and(Value::is_null),
                "{args:?} {what}: {answer}"
            );
            let pong = s.next_line();
            assert_eq!(pong["id"], 1000 + i, "{args:?} {what}: {pong}");
            assert!(pong["result"].is_object(), "{args:?} {what}: {pong}");
            let v = s.tool("search", json!({"query": "session expiry in redis"}));
            assert_eq!(
                v["matches"][0]["path"], "docs/cache/redis.md",
                "{args:?} after {what}: {v}"
            );
        }
        let listed = s.tool("memory_list", json!({}));
        assert_eq!(listed["total"], 0, "{args:?}: {listed}");
        s.finish();
    }
}

#[cfg(unix)]
#[test]
fn stdio_serves_by_itself_when_the_daemon_cannot_start() {
    // BM25 only: the test is about the fallback, not vectors.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    // A folder where the socket should go: the daemon cannot bind and exits.
    std::fs::create_dir_all(p.path(".cairn/daemon.sock/in-the-way")).unwrap();
    let started = Instant::now();
    let mut s = Server::start(&p, &["--idle-timeout", "2"], &[]);
    s.initialize();
    let v = s.tool("search", json!({"query": "session expiry in redis"}));
    assert_eq!(v["matches"][0]["path"], "docs/cache/redis.md");
    let waited = started.elapsed();
    let err = s.finish();
    assert!(err.contains("serving from this process"), "{err}");
    assert!(waited < Duration::from_secs(15), "fallback took {waited:?}");
}

#[cfg(unix)]
#[test]
#[ignore = "full tier: needs the model"]
fn two_clients_storing_through_the_daemon_lose_nothing() {
    // Only exact repeats merge here: the test is about concurrency.
    let p = Project::with_config("[memory]\nduplicate_threshold = 0.9999\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let clients: Vec<_> = (0..2)
        .map(|c| {
            let mut s = Server::start(&p, &["--idle-timeout", "2"], &[]);
            s.initialize();
            std::thread::spawn(move || {
                for i in 0..20 {
                    let v = s.tool(
                        "memory_store",
                        json!({"text": format!("client{c} remembers item{i} zq{c}x{i}: {}", ["apples", "boats", "cables", "drums"][i % 4]), "type": "fact"}),
                    );
                    assert_eq!(v["action"], "created", "{v}");
                    let r = s.tool("memory_recall", json!({"query": format!("zq{c}x{i}")}));
                    assert!(r["total"].as_u64().unwrap() > 0, "{r}");
                }
                s.finish()
            })
        })
        .collect();
    for c in clients {
        let err = c.join().expect("client thread");
        assert!(!err.contains("locked"), "{err}");
    }
    let files = std::fs::read_dir(p.path(".cairn/memory"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert_eq!(
        files.iter().filter(|f| f.ends_with(".md")).count(),
        40,
        "{files:?}"
    );
    assert!(!files.iter().any(|f| f.ends_with(".tmp")));
}

/// Killing the shared daemon does not end the session: the client's next
/// call starts a daemon again and is answered. Before, the client exited and
/// the agent saw "Connection closed" on every later call.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_daemon_is_restarted_and_the_session_goes_on() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let root = p.path("").canonicalize().unwrap();
    let mut s = Server::start(&p, &["--idle-timeout", "5"], &[]);
    s.initialize();
    let before = s.tool("search", json!({"query": "session expiry in redis"}));
    for round in 0..3 {
        let daemons = daemons_of(&root);
        assert_eq!(daemons.len(), 1, "round {round}: {daemons:?}");
        let killed = std::process::Command::new("kill")
            .args(["-9", &daemons[0].to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        assert!(wait_until(Duration::from_secs(5), || !daemons_of(&root)
            .contains(&daemons[0])));
        let after = s.tool("search", json!({"query": "session expiry in redis"}));
        assert_eq!(before["matches"], after["matches"], "round {round}");
    }
    let err = s.finish();
    assert!(err.contains("went away"), "{err}");
}

/// Three clients store memories through the daemon while it is killed
/// (kill -9) four times: every store a client saw acknowledged is on disk
/// exactly once, and no text is on disk twice. A store in flight at a kill
/// is answered with an error (retryable), never with silence.
#[cfg(target_os = "linux")]
#[test]
fn daemon_killed_during_stores_loses_and_doubles_nothing() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let root = p.path("").canonicalize().unwrap();
    let clients: Vec<_> = (0..3)
        .map(|c| {
            let mut s = Server::start(&p, &["--idle-timeout", "5"], &[]);
            s.initialize();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut refused = 0;
                for i in 0..40 {
                    let text = format!("client{c} keeps note{i} marker zk{c}q{i}");
                    let r = s.call(
                        "tools/call",
                        json!({"name": "memory_store", "arguments": {"text": text, "type": "fact"}}),
                    );
                    match r {
                        Ok(v) if v["isError"] != true => acked.push(text),
                        _ => refused += 1,
                    }
                }
                (acked, refused, s.finish())
            })
        })
        .collect();
    let mut kills = 0;
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(250));
        if let Some(pid) = daemons_of(&root).first() {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
            kills += 1;
        }
    }
    let mut acked = Vec::new();
    let mut refused = 0;
    for c in clients {
        let (a, r, _) = c.join().expect("client thread");
        acked.extend(a);
        refused += r;
    }
    let texts: Vec<String> = std::fs::read_dir(p.path(".cairn/memory"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    eprintln!(
        "{kills} kills: {} stores acknowledged, {refused} answered with an error, {} files",
        acked.len(),
        texts.len()
    );
    assert!(kills >= 2, "the daemon was killed {kills} times");
    for t in &acked {
        let n = texts.iter().filter(|f| f.contains(t.as_str())).count();
        assert_eq!(n, 1, "{t:?} is on disk {n} times");
    }
    for c in 0..3 {
        for i in 0..40 {
            let marker = format!("marker zk{c}q{i}\n");
            let n = texts.iter().filter(|f| f.contains(&marker)).count();
            assert!(n <= 1, "{marker:?} on disk {n} times");
        }
    }
}

/// Runs `cairn ARGS` in `p`: through its daemon if one runs, or here
/// (`CAIRN_NO_DAEMON=1`) when `here`. (success, stdout, stderr)
fn cli(p: &Project, args: &[&str], here: bool) -> (bool, String, String) {
    let mut cmd = p.command(args);
    if here {
        cmd.env("CAIRN_NO_DAEMON", "1");
    }
    let out = cmd.output().expect("cairn runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// With the project's daemon running, `cairn search` is answered by it (the
/// same hits as searching here); run with another configuration, or with
/// `CAIRN_NO_DAEMON`, it searches by itself; a query the search refuses gets
/// the same error either way.
#[test]
fn cli_search_is_answered_by_a_running_daemon() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let mut s = Server::start(&p, &["--idle-timeout", "3"], &[]);
    s.initialize();
    let search = |args: &[&str], local: bool| cli(&p, args, local);
    let q = ["-vv", "search", "session expiry in redis", "--json"];
    let (ok, warm, log) = search(&q, false);
    assert!(ok, "{log}");
    assert!(log.contains("answered by the project's daemon"), "{log}");
    let (ok, here, log) = search(&q, true);
    assert!(
        ok && !log.contains("answered by the project's daemon"),
        "{log}"
    );
    let hits = |out: &str| -> Vec<(String, u64, String)> {
        let v: Value = serde_json::from_str(out).expect("JSON hits");
        v.as_array()
            .expect("a list")
            .iter()
            .map(|h| {
                (
                    h["path"].as_str().unwrap_or("").to_string(),
                    h["start_line"].as_u64().unwrap_or(0),
                    format!("{:.9}", h["score"].as_f64().unwrap_or(0.0)),
                )
            })
            .collect()
    };
    assert_eq!(hits(&warm)[0].0, "docs/cache/redis.md");
    assert_eq!(hits(&warm), hits(&here));

    // Another configuration than the daemon's: searched here, as configured.
    let (ok, out, log) = search(
        &[
            "-vv",
            "--set",
            "search.limit=1",
            "search",
            "redis",
            "--json",
        ],
        false,
    );
    assert!(
        ok && !log.contains("answered by the project's daemon"),
        "{log}"
    );
    assert_eq!(hits(&out).len(), 1);

    // A raw FTS5 query that does not parse: the same error as without a daemon.
    let bad = ["search", "--fts", "\"unclosed", "--json"];
    let (ok_warm, _, err_warm) = search(&bad, false);
    let (ok_here, _, err_here) = search(&bad, true);
    assert!(!ok_warm && !ok_here);
    assert_eq!(err_warm, err_here);
    s.finish();
}

/// `cairn status` while the project's daemon runs is the daemon's own (only
/// it knows whether it is computing vectors now), names it, and counts what
/// a status read here counts; another configuration reads here.
#[cfg(unix)]
#[test]
fn cli_status_is_answered_by_a_running_daemon() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    let mut s = Server::start(&p, &["--idle-timeout", "3"], &[]);
    s.initialize();
    let daemon = daemons_of(&p.root());
    assert_eq!(daemon.len(), 1, "{daemon:?}");
    let status = |args: &[&str], local: bool| -> Value {
        let (ok, out, log) = cli(&p, args, local);
        assert!(ok, "{log}");
        serde_json::from_str(&out).expect("JSON status")
    };
    let warm = status(&["status", "--json"], false);
    let here = status(&["status", "--json"], true);
    assert_eq!(
        warm["daemon_pid"].as_u64(),
        Some(u64::from(daemon[0])),
        "{warm}"
    );
    assert!(here.get("daemon_pid").is_none(), "{here}");
    for key in [
        "files",
        "chunks",
        "embedded_chunks",
        "index_path",
        "last_indexed",
    ] {
        assert_eq!(warm[key], here[key], "{key}");
    }
    assert_eq!(warm["embedding_in_progress"], false);
    let other = status(&["--set", "search.limit=1", "status", "--json"], false);
    assert!(other.get("daemon_pid").is_none(), "{other}");
    let human = p.command(&["status"]).output().expect("cairn status runs");
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains(&format!("daemon      running (pid {})", daemon[0])),
        "{human}"
    );
    s.finish();
}

/// `cairn recall` while the project's daemon runs is answered by it (its
/// model loaded), with the same memories, scores and blend as a recall here;
/// another configuration recalls here.
#[cfg(unix)]
#[test]
fn cli_recall_is_answered_by_a_running_daemon() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    docs(&p);
    p.ok(&["index", "-q"]);
    p.ok(&[
        "remember",
        "staging deploys run the blue-green script",
        "--type",
        "decision",
        "-q",
    ]);
    p.ok(&[
        "remember",
        "release builds are signed with the team key",
        "-q",
    ]);
    let mut s = Server::start(&p, &["--idle-timeout", "3"], &[]);
    s.initialize();
    let recall = |args: &[&str], local: bool| -> (Value, String) {
        let (ok, out, log) = cli(&p, args, local);
        assert!(ok, "{log}");
        (serde_json::from_str(&out).expect("JSON memories"), log)
    };
    let q = ["-vv", "recall", "how do we deploy to staging", "--json"];
    let (warm, log) = recall(&q, false);
    assert!(log.contains("answered by the project's daemon"), "{log}");
    let (here, log) = recall(&q, true);
    assert!(!log.contains("answered by the project's daemon"), "{log}");
    let view = |v: &Value| -> Vec<(String, String, String)> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|h| {
                (
                    h["memory"]["id"].as_str().unwrap_or("").to_string(),
                    h["memory"]["text"].as_str().unwrap_or("").to_string(),
                    format!(
                        "{:.6}",
                        h["terms"][0]["contribution"].as_f64().unwrap_or(0.0)
                    ),
                )
            })
            .collect()
    };
    let w = view(&warm);
    assert!(!w.is_empty() && w[0].1.contains("blue-green"), "{warm}");
    assert_eq!(w, view(&here));
    let (_, log) = recall(
        &[
            "-vv",
            "--set",
            "memory.relative_floor=0",
            "recall",
            "staging",
            "--json",
        ],
        false,
    );
    assert!(!log.contains("answered by the project's daemon"), "{log}");
    s.finish();
}

/// `cairn graph` views while the project's daemon runs are answered from its
/// warm graph, the same as views built here; another configuration builds
/// them here.
#[cfg(unix)]
#[test]
fn cli_graph_is_answered_by_a_running_daemon() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write(
        "src/gate.rs",
        "/// Throttles logins.\npub struct RateGate {\n    limit: u32,\n}\n\nimpl RateGate {\n    pub fn admit(&self, tokens: u32) -> bool {\n        tokens <= self.limit\n    }\n}\n",
    );
    p.write(
        "src/login.rs",
        "use crate::gate::RateGate;\n\npub fn login(gate: &RateGate) -> bool {\n    gate.admit(1)\n}\n",
    );
    p.write(
        "docs/throttling.md",
        "# Login throttling\n\nEvery login passes the `RateGate` first; see `login` in src/login.rs.\n",
    );
    p.ok(&["index", "-q"]);
    let mut s = Server::start(&p, &["--idle-timeout", "3"], &[]);
    s.initialize();
    let graph = |args: &[&str], local: bool| -> (String, String) {
        let (ok, out, log) = cli(&p, args, local);
        assert!(ok, "{args:?}: {log}");
        (out, log)
    };
    for view in [
        vec!["-vv", "graph", "neighbors", "RateGate", "--json"],
        vec!["-vv", "graph", "path", "login", "RateGate", "--json"],
        vec!["-vv", "graph", "communities", "--min-size", "1", "--json"],
    ] {
        let (warm, log) = graph(&view, false);
        assert!(
            log.contains("answered by the project's daemon"),
            "{view:?}: {log}"
        );
        let (here, log) = graph(&view, true);
        assert!(!log.contains("answered by the project's daemon"), "{log}");
        let mut warm: Value = serde_json::from_str(&warm).expect("JSON");
        let mut here: Value = serde_json::from_str(&here).expect("JSON");
        // The time it took differs; everything else is the same graph's.
        for v in [&mut warm, &mut here] {
            if let Some(o) = v.as_object_mut() {
                o.remove("millis");
            }
        }
        assert_eq!(warm, here, "{view:?}");
    }
    let (out, _) = graph(&["graph", "neighbors", "RateGate"], false);
    assert!(out.contains("RateGate"), "{out}");
    let (_, log) = graph(
        &[
            "-vv",
            "--set",
            "search.limit=1",
            "graph",
            "neighbors",
            "RateGate",
        ],
        false,
    );
    assert!(!log.contains("answered by the project's daemon"), "{log}");
    s.finish();
}
