//! `cairn bench mcp`: what an MCP client waits for, measured with the real
//! binary over stdio: start → `initialize` answered, and `search` round trips.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::args::BenchMcpArgs;

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn spawn(root: &Path, args: &[&str]) -> anyhow::Result<Client> {
        let exe = std::env::current_exe().context("locating cairn")?;
        let mut child = Command::new(exe)
            .arg("-C")
            .arg(root)
            .arg("-q")
            .arg("serve")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting cairn serve")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        Ok(Client {
            child,
            stdin,
            stdout,
            next: 1,
        })
    }

    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next;
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}")?;
        self.stdin.flush()?;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("cairn serve closed its output during {method}");
            }
            let v: Value = serde_json::from_str(&line)?;
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    bail!("{method}: {e}");
                }
                return Ok(v["result"].clone());
            }
        }
    }

    fn initialize(&mut self) -> anyhow::Result<()> {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cairn-bench", "version": "0"}}),
        )?;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        writeln!(self.stdin, "{note}")?;
        Ok(())
    }

    fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Time from spawning `cairn serve <args>` to its `initialize` answer.
fn time_starts(root: &Path, args: &[&str], n: usize) -> anyhow::Result<Vec<f64>> {
    let mut out = Vec::new();
    for _ in 0..n.max(1) {
        let t = Instant::now();
        let mut c = Client::spawn(root, args)?;
        c.initialize()?;
        out.push(ms(t.elapsed()));
        c.close();
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

/// The search queries: the `text` of each JSON line of `path`, else three
/// questions about any project.
fn bench_queries(path: Option<&Path>) -> anyhow::Result<Vec<String>> {
    let queries: Vec<String> = match path {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("reading {}", path.display()))?
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["text"].as_str().map(str::to_string))
            .collect(),
        None => [
            "how is the index kept up to date",
            "what does search return",
            "where are settings read from",
        ]
        .map(String::from)
        .to_vec(),
    };
    if queries.is_empty() {
        bail!("no queries (each line needs a \"text\" field)");
    }
    Ok(queries)
}

pub fn run(root: &Path, args: &BenchMcpArgs) -> anyhow::Result<()> {
    if !cairn::paths::index_file(root).exists() {
        bail!("no index in {}: run `cairn index` first", root.display());
    }
    let queries = bench_queries(args.queries.as_deref())?;

    // 1. A process of its own: opens the index and loads the model first.
    let own = time_starts(root, &["--no-daemon"], args.starts)?;
    // 2. The shared daemon, once it is up: the client only connects.
    let mut keeper = Client::spawn(root, &["--idle-timeout", "60"])?;
    keeper.initialize()?;
    let shared = time_starts(root, &[], args.starts)?;
    // Memory: two more clients attached at once, and the daemon they share.
    let mut a = Client::spawn(root, &[])?;
    let mut b = Client::spawn(root, &[])?;
    a.initialize()?;
    b.initialize()?;
    let client_rss = [
        cairn_bench::rss_kib(a.child.id()),
        cairn_bench::rss_kib(b.child.id()),
    ];
    let daemon_pid = std::fs::read_to_string(cairn::paths::daemon_lock(root))
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    let daemon_rss = daemon_pid.and_then(cairn_bench::rss_kib);
    a.close();
    b.close();

    keeper.close();

    // 3. Search round trips. A server process of its own, so every query is
    //    new to it (a warm daemon may have cached the query vectors).
    let mut server = Client::spawn(root, &["--no-daemon"])?;
    server.initialize()?;
    let mut times = Vec::with_capacity(args.searches);
    for q in queries.iter().cycle().take(args.searches) {
        let t = Instant::now();
        let r = server.request(
            "tools/call",
            json!({"name": "search", "arguments": {"query": q}}),
        )?;
        times.push(ms(t.elapsed()));
        if r["isError"] == true {
            bail!("search failed: {}", r["content"][0]["text"]);
        }
    }
    // What a server holds once it has answered: model, vectors, graph.
    let server_rss = cairn_bench::rss_kib(server.child.id());
    server.close();
    times.sort_by(f64::total_cmp);
    let report = json!({
        "client_rss_kib": client_rss,
        "daemon_rss_kib": daemon_rss,
        "server_rss_after_searches_kib": server_rss,
        "start_own_process_ms": {"median": percentile(&own, 0.5), "min": own[0]},
        "start_shared_daemon_ms": {"median": percentile(&shared, 0.5), "min": shared[0]},
        "search": {
            "n": times.len(),
            "distinct_queries": queries.len().min(args.searches),
            "p50_ms": percentile(&times, 0.5),
            "p95_ms": percentile(&times, 0.95),
        },
    });
    if args.json {
        crate::print::json(&report)?;
    } else {
        say!(
            "start -> initialize answered: own process median {:.1} ms (min {:.1}); shared daemon median {:.1} ms (min {:.1})",
            percentile(&own, 0.5),
            own[0],
            percentile(&shared, 0.5),
            shared[0]
        );
        if let ([Some(a), Some(b)], Some(d)) = (client_rss, daemon_rss) {
            say!("two clients attached: RSS {a} KiB and {b} KiB; the daemon they share: {d} KiB");
        }
        say!(
            "search round trip over MCP stdio ({} searches): p50 {:.1} ms, p95 {:.1} ms",
            times.len(),
            percentile(&times, 0.5),
            percentile(&times, 0.95)
        );
        if let Some(r) = server_rss {
            say!("the server that answered them: RSS {r} KiB");
        }
    }
    Ok(())
}
