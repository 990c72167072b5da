//! Capture: a recorded Claude Code transcript → hook → session log →
//! index → recall → transcript.

use std::io::Write;
use std::process::Stdio;

use super::{Cli, Project};

const SESSION: &str = "8f1c2d3e-0000-4000-8000-000000000001";

/// Reads one HTTP request from a fake server's connection; its body.
fn read_body(s: &std::net::TcpStream) -> Vec<u8> {
    use std::io::{BufRead, BufReader, Read};
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut len = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
    body
}

fn run_hook(p: &Project, transcript: &std::path::Path, extra_env: &[(&str, &str)]) {
    run_hook_with(p, transcript, extra_env, &[]);
}

/// `global`: flags before the subcommand (`--store …`, `--set …`).
fn run_hook_with(
    p: &Project,
    transcript: &std::path::Path,
    extra_env: &[(&str, &str)],
    global: &[&str],
) {
    let input = serde_json::json!({
        "session_id": SESSION,
        "transcript_path": transcript,
        "cwd": p.path(""),
        "hook_event_name": "Stop",
    });
    let args: Vec<&str> = global
        .iter()
        .copied()
        .chain(["hook", "claude-code", "Stop"])
        .collect();
    let mut cmd = p.command(&args);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "hooks fail open: always exit 0");
    assert!(out.stdout.is_empty(), "a hook prints nothing on stdout");
}

/// Regression (issue 16): the hook opened the engine on SQLite whatever the
/// configured store, so a team on PostgreSQL got its sessions indexed into a
/// stray `.cairn/index.sqlite` instead of the shared index.
#[test]
#[ignore = "full tier: needs PostgreSQL and the model"]
fn a_hook_indexes_into_the_configured_postgres_store() {
    let p = Project::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures/claude-session.jsonl");
    let transcript = p.path("transcripts/session.jsonl");
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    std::fs::copy(&fixture, &transcript).unwrap();
    let uri = super::pg_uri();
    let project = format!(
        "store.project=hook-{}",
        p.path("").file_name().unwrap().to_string_lossy()
    );
    let global = ["--store", uri.as_str(), "--set", project.as_str()];
    run_hook_with(&p, &transcript, &[], &global);
    let health = std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap();
    assert!(health.contains("last_success"), "{health}");
    assert!(
        !p.path(".cairn/index.sqlite").exists(),
        "the hook wrote a SQLite index although the store is PostgreSQL"
    );
    let args: Vec<&str> = global
        .iter()
        .copied()
        .chain(["recall", "why did login fail after the deploy", "--json"])
        .collect();
    let v = p.json(&args);
    assert!(
        v[0]["memory"]["text"].as_str().unwrap().contains("argon2"),
        "{v}"
    );
}

#[test]
fn a_claude_code_session_is_captured_recalled_and_traced_back() {
    // BM25 only: the test is about capture, recall finds the log by its words.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures/claude-session.jsonl");
    let transcript = p.path("transcripts/session.jsonl");
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let all = std::fs::read_to_string(&fixture).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    // The session so far: everything but the last two lines.
    std::fs::write(&transcript, lines[..lines.len() - 2].join("\n") + "\n").unwrap();
    run_hook(&p, &transcript, &[]);

    let logs: Vec<_> = std::fs::read_dir(p.path(".cairn/memory/sessions"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(logs.len(), 1);
    let log = std::fs::read_to_string(logs[0].path()).unwrap();
    assert!(
        log.contains(&format!(
            "<!-- session:{SESSION} turn:u4 client:claude-code -->"
        )),
        "{log}"
    );
    assert!(log.contains("### "), "{log}");
    assert!(
        log.contains("argon2") && log.contains("cargo test -p auth login"),
        "{log}"
    );
    assert!(log.contains("src/auth/password.rs"), "{log}");
    for secret in ["sk-live", "4eC39HqLyjWDarjtT1zdp7dc"] {
        assert!(!log.contains(secret), "secret {secret} in {log}");
    }
    let health: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap())
            .unwrap();
    assert!(
        health["claude-code"]["last_success"].is_string(),
        "{health}"
    );

    // Indexed: recall finds the session log.
    let v = p.json(&["recall", "why did login fail after the deploy", "--json"]);
    assert!(
        v[0]["memory"]["text"].as_str().unwrap().contains("argon2"),
        "{v}"
    );

    // The rest of the session arrives; the next capture takes only the new turns.
    std::fs::write(&transcript, all.clone()).unwrap();
    run_hook(&p, &transcript, &[]);
    let log = std::fs::read_to_string(logs[0].path()).unwrap();
    assert_eq!(log.matches("<!-- session:").count(), 2, "{log}");
    assert!(
        log.contains("turn:a4") && log.contains("regression test"),
        "{log}"
    );
    assert!(!log.contains("Tr0ub4dor"), "private span leaked: {log}");
    // Nothing new: nothing written.
    run_hook(&p, &transcript, &[]);
    let again = std::fs::read_to_string(logs[0].path()).unwrap();
    assert_eq!(again, log);

    // L3: the original turns behind the anchor.
    let t = p.json(&[
        "transcript",
        SESSION,
        "--turn",
        "u3",
        "--context",
        "1",
        "--json",
    ]);
    let ids: Vec<&str> = t["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a2", "u3", "a3"]);
    assert_eq!(t["turns"][1]["error"], true);
    let out = p.run(&["transcript", "no-such-session"]);
    assert!(!out.status.success());
}

#[test]
fn a_hook_that_runs_out_of_time_still_exits_0_and_records_it() {
    // No model: the transcript alone is too large for the budget.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n[capture]\nbudget_ms = 100\n");
    let transcript = p.path("t.jsonl");
    // A transcript too large to summarise and index in 100 ms.
    let line = r#"{"type":"user","uuid":"uX","message":{"role":"user","content":"Please look at the flaky integration test in the payments module again"}}"#;
    std::fs::write(
        &transcript,
        (0..20_000)
            .map(|i| line.replace("uX", &format!("u{i}")))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let started = std::time::Instant::now();
    run_hook(&p, &transcript, &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let health: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap())
            .unwrap();
    let err = health["claude-code"]["last_error"]["message"]
        .as_str()
        .unwrap();
    assert!(err.contains("gave up after 100 ms"), "{health}");
    // Bad input is recorded too, never turned into a memory.
    let q = Project::with_config("[embed]\nmodel = \"none\"\n");
    let mut child = q
        .command(&["hook", "claude-code", "Stop"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"not json").unwrap();
    assert!(child.wait().unwrap().success());
    assert!(!q.path(".cairn/memory").exists());
    let health = std::fs::read_to_string(q.path(".cairn/hooks/health.json")).unwrap();
    assert!(health.contains("not the hook's JSON input"), "{health}");
}

#[test]
fn hooks_install_adds_stop_and_session_end_once() {
    let p = Project::new();
    p.write(
        ".claude/settings.local.json",
        r#"{"permissions": {"allow": ["Bash(ls:*)"]}}"#,
    );
    for _ in 0..2 {
        let out = p
            .command(&["hooks", "install", "claude-code"])
            .env("PATH", super::path_with_cairn())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(p.path(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls:*)");
    for event in ["Stop", "SessionEnd"] {
        let groups = v["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{v}");
        assert_eq!(
            groups[0]["hooks"][0]["command"],
            format!(
                "command -v cairn >/dev/null 2>&1 || exit 0; exec cairn hook claude-code {event}"
            )
        );
    }
}

/// Regression (issue 23): `hooks install claude-code` and `codex` wrote a
/// bare `cairn` when cairn was not on PATH, so the client's hooks failed
/// silently; `mcp install`, opencode and openclaw wrote the absolute path.
/// Now every installer writes the program `mcp install` does, says so on
/// stderr, and replaces (not duplicates) what an earlier install wrote.
#[test]
fn hooks_install_off_path_writes_the_absolute_path_and_says_so() {
    let p = Project::new();
    let codex = tempfile::tempdir().unwrap();
    let exe = env!("CARGO_BIN_EXE_cairn");
    let install = |client: &str, path: &std::path::Path, print: bool| {
        let mut args = vec!["hooks", "install", client];
        if print {
            args.push("--print");
        }
        let out = p
            .command(&args)
            .env("CODEX_HOME", codex.path())
            .env("PATH", path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{client}: {out:?}");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let settings = || -> serde_json::Value {
        serde_json::from_str(
            &std::fs::read_to_string(p.path(".claude/settings.local.json")).unwrap(),
        )
        .unwrap()
    };
    let notify =
        || -> String { std::fs::read_to_string(codex.path().join("config.toml")).unwrap() };
    let events = ["Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"];

    // On PATH: the bare name, and no notice.
    for client in ["claude-code", "codex"] {
        let (_, err) = install(client, super::path_with_cairn(), false);
        assert!(!err.contains("not on PATH"), "{err}");
    }
    assert_eq!(
        settings()["hooks"]["Stop"][0]["hooks"][0]["command"],
        "command -v cairn >/dev/null 2>&1 || exit 0; exec cairn hook claude-code Stop"
    );
    assert!(
        notify().contains(r#"notify = ["cairn", "hook", "codex"]"#),
        "{}",
        notify()
    );

    // Off PATH: the absolute path, said on stderr, for every client.
    let off = std::path::Path::new("/nonexistent");
    for client in ["claude-code", "codex", "opencode"] {
        let (out, err) = install(client, off, true);
        assert!(out.contains(exe), "{client}: {out}");
        assert!(
            err.contains("not on PATH") && err.contains(exe),
            "{client}: {err}"
        );
    }
    for client in ["claude-code", "codex"] {
        install(client, off, false);
    }
    let v = settings();
    for event in events {
        let commands: Vec<&str> = v["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter_map(|h| h["command"].as_str())
            .collect();
        // The earlier hook now runs this program: one hook, not two.
        assert_eq!(
            commands,
            [format!(
                "command -v {exe} >/dev/null 2>&1 || exit 0; exec {exe} hook claude-code {event}"
            )],
            "{v}"
        );
    }
    let toml = notify();
    assert!(
        toml.contains(&format!(r#"notify = ["{exe}", "hook", "codex"]"#)),
        "{toml}"
    );
    // Twice changes nothing.
    let (out, _) = install("codex", off, false);
    assert!(out.contains("already notifies cairn"), "{out}");
    assert_eq!(notify(), toml);
}

/// Regression (issue 23): `cairn transcript` (and so the MCP `transcript`
/// tool) redacted secrets in tool commands only; what the user and the
/// assistant said came back in clear.
#[test]
fn a_transcript_shows_no_secret_of_the_session_file() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let secrets = [
        "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
        "AKIAIOSFODNN7EXAMPLE",
        "hunter2secret",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUv1234",
        "xoxb-1234567890-abcdefghij",
    ];
    let lines = [
        serde_json::json!({"type": "user", "uuid": "u1", "timestamp": "2026-11-21T09:00:00Z",
            "message": {"role": "user", "content": "Deploy with token ghp_0123456789abcdefghijklmnopqrstuvwxyz please"}}),
        serde_json::json!({"type": "assistant", "uuid": "a1", "timestamp": "2026-11-21T09:00:05Z",
            "message": {"role": "assistant", "content": [
                {"type": "text", "text": "New key is AKIAIOSFODNN7EXAMPLE with password: hunter2secret"},
                {"type": "tool_use", "id": "t1", "name": "Bash",
                 "input": {"command": "OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUv1234 cargo test"}}]}}),
        serde_json::json!({"type": "user", "uuid": "u2", "timestamp": "2026-11-21T09:00:09Z",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "Slack token xoxb-1234567890-abcdefghij in the log"}]}}),
        serde_json::json!({"type": "assistant", "uuid": "a2", "timestamp": "2026-11-21T09:00:12Z",
            "message": {"role": "assistant", "content": "Rotated it; the tests pass."}}),
    ];
    let transcript = p.path("transcripts/session.jsonl");
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    run_hook(&p, &transcript, &[]);

    let human = p.ok(&["transcript", SESSION, "--turn", "a1", "--context", "5"]);
    let json = p.ok(&[
        "transcript",
        SESSION,
        "--turn",
        "a1",
        "--context",
        "5",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["turns"].as_array().map(Vec::len), Some(4), "{v}");
    assert_eq!(v["turn_id"], "a1");
    for shown in [&human, &json] {
        for secret in secrets {
            assert!(!shown.contains(secret), "secret {secret} shown: {shown}");
        }
        // The words around the secrets stay.
        assert!(
            shown.contains("Deploy with token [redacted] please")
                && shown.contains("New key is [redacted] with password: [redacted]")
                && shown.contains("Rotated it"),
            "{shown}"
        );
    }
    assert!(human.contains("> [assistant] a1"), "{human}");
}

/// A fake OpenAI-compatible server on loopback: answers every request with
/// `content` after `delay`; the requests it saw come back through the handle.
fn fake_llm(
    content: &'static str,
    delay: std::time::Duration,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut s = stream;
                let body = read_body(&s);
                log.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&body).into_owned());
                std::thread::sleep(delay);
                let answer = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string();
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                    answer.len()
                );
            });
        }
    });
    (url, seen)
}

fn user_llm_config(p: &Project, url: &str, timeout_ms: u64) -> std::path::PathBuf {
    let path = p.path("user-config.toml");
    std::fs::write(
        &path,
        format!("[llm]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake-1\"\napi_key_env = \"FAKE_LLM_KEY\"\ntimeout_ms = {timeout_ms}\n"),
    )
    .unwrap();
    path
}

#[test]
fn compact_summarises_recent_memories_with_the_configured_model() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    for text in [
        "We deploy on Tuesdays after the standup",
        "Session cache TTL is five minutes in Redis",
        "The billing service retries charges three times",
    ] {
        p.ok(&["remember", text, "--type", "decision"]);
    }
    // No model configured: a clear error that says how.
    let out = p
        .command(&["compact"])
        .env("CAIRN_CONFIG", "none")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("compact needs a language model") && err.contains("[llm] provider"),
        "{err}"
    );

    let (url, seen) = fake_llm(
        "- Deploys: Tuesdays\n- Redis session TTL: 5 min\n- Billing retries: 3",
        std::time::Duration::ZERO,
    );
    let user = user_llm_config(&p, &url, 5000);
    let run = |args: &[&str]| {
        p.command(args)
            .env("CAIRN_CONFIG", &user)
            .env("FAKE_LLM_KEY", "k-fake")
            .output()
            .unwrap()
    };
    let dry = run(&["compact", "--since", "7d", "--dry-run"]);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(String::from_utf8_lossy(&dry.stdout).contains("Redis session TTL"));
    assert!(!p.path(".cairn/memory/sessions").exists(), "dry run wrote");
    let prompt = seen.lock().unwrap()[0].clone();
    assert!(
        prompt.contains("billing service retries") && prompt.contains("fake-1"),
        "{prompt}"
    );

    let done = run(&["compact", "--since", "7d"]);
    assert!(done.status.success());
    let log = std::fs::read_dir(p.path(".cairn/memory/sessions"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .next()
        .unwrap();
    assert!(
        log.contains("compact") && log.contains("<!-- compact: 3 memories since 7d -->"),
        "{log}"
    );
    // Indexed: the summary is found.
    let v = p.json(&["search", "billing retries", "--json"]);
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .any(|h| h["path"].as_str().unwrap().contains("sessions/")),
        "{v}"
    );
}

#[test]
fn a_hook_with_a_slow_model_still_finishes_in_budget_and_records_it() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n[capture]\nbudget_ms = 3000\n");
    let (url, _seen) = fake_llm("never in time", std::time::Duration::from_secs(10));
    let user = user_llm_config(&p, &url, 500);
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures/claude-session.jsonl");
    // In the project: transcripts are read only from there or a client's
    // own folder.
    let fixture = {
        let copy = p.path("transcripts/session.jsonl");
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(&fixture, &copy).unwrap();
        copy
    };
    let started = std::time::Instant::now();
    run_hook(
        &p,
        &fixture,
        &[
            ("CAIRN_CONFIG", user.to_str().unwrap()),
            ("FAKE_LLM_KEY", "k"),
        ],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let health = std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap();
    assert!(health.contains("language model unavailable"), "{health}");
    assert!(health.contains("last_success"), "{health}");
    // status and doctor show it.
    let status = p.json(&["status", "--json"]);
    assert!(
        status["hooks"]["claude-code"]["last_error"]["message"]
            .as_str()
            .unwrap()
            .contains("language model unavailable"),
        "{status}"
    );
    let doctor = p.ok(&["doctor"]);
    assert!(
        doctor.contains("hooks") && doctor.contains("claude-code: last success"),
        "{doctor}"
    );
    // The extractive summary was written instead.
    let log = std::fs::read_dir(p.path(".cairn/memory/sessions"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .next()
        .unwrap();
    assert!(
        log.contains("**Asked:**") && !log.contains("never in time"),
        "{log}"
    );
}

/// A fake OpenAI-compatible `/embeddings` server: a bag-of-words vector of
/// 32 dimensions per input; counts the texts it embedded per model.
/// Texts embedded, per request: (model, how many).
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, usize)>>>;

fn fake_embeddings() -> (String, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let body = read_body(&s);
            let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let inputs: Vec<String> = req["input"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect();
            log.lock().unwrap().push((
                req["model"].as_str().unwrap_or("").to_string(),
                inputs.len(),
            ));
            let data: Vec<serde_json::Value> = inputs
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut v = vec![0.0f64; 32];
                    for w in t
                        .to_lowercase()
                        .split(|c: char| !c.is_alphanumeric())
                        .filter(|w| !w.is_empty())
                    {
                        let h = w
                            .bytes()
                            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
                        v[(h % 32) as usize] += 1.0;
                    }
                    serde_json::json!({"index": i, "embedding": v})
                })
                .collect();
            let answer = serde_json::json!({"data": data}).to_string();
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, seen)
}

#[test]
fn a_remote_embedding_model_gets_its_own_vector_space_and_switching_re_embeds() {
    let p = Project::new();
    super::docs(&p);
    let (url, seen) = fake_embeddings();
    let user = p.path("user-config.toml");
    let write_user = |model: &str| {
        std::fs::write(
            &user,
            format!("[embed]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"{model}\"\napi_key_env = \"FAKE_EMBED_KEY\"\n"),
        )
        .unwrap();
    };
    let run = |args: &[&str]| {
        let out = p
            .command(args)
            .env("CAIRN_CONFIG", &user)
            .env("FAKE_EMBED_KEY", "k")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap_or_default()
    };
    write_user("fake-embed-1");
    run(&["index", "-q"]);
    let st = run(&["status", "--json"]);
    assert_eq!(st["model"], "openai:fake-embed-1", "{st}");
    assert_eq!(st["embedded_chunks"], st["chunks"]);
    let hits = run(&["search", "tomatoes basil", "--json", "--mode", "vector"]);
    assert_eq!(hits[0]["path"], "docs/garden.md", "{hits}");

    // Another model: its own space, every chunk embedded again.
    let before: usize = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| m == "fake-embed-2")
        .map(|(_, n)| *n)
        .sum();
    assert_eq!(before, 0);
    write_user("fake-embed-2");
    run(&["index", "-q"]);
    let st = run(&["status", "--json"]);
    assert_eq!(st["model"], "openai:fake-embed-2");
    assert_eq!(st["embedded_chunks"], st["chunks"]);
    let embedded: usize = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| m == "fake-embed-2")
        .map(|(_, n)| *n)
        .sum();
    assert!(
        embedded as u64 >= st["chunks"].as_u64().unwrap(),
        "{embedded}"
    );
    // A project file may not choose the provider.
    p.write("cairn.toml", "[embed]\nprovider = \"openai\"\n");
    let out = p.run(&["status"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("may only be set in the user config file")
    );
}

#[test]
fn a_codex_turn_is_captured_through_notify() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let codex = tempfile::tempdir().unwrap();
    let day = codex.path().join("sessions/2026/11/21");
    std::fs::create_dir_all(&day).unwrap();
    let id = "0199aa00-c0de-7000-8000-000000000042";
    let rollout = format!(
        r#"{{"timestamp":"2026-11-21T10:00:00Z","type":"session_meta","payload":{{"id":"{id}","cwd":"/w"}}}}
{{"timestamp":"2026-11-21T10:00:01Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"<environment_context>cwd</environment_context>"}}]}}}}
{{"timestamp":"2026-11-21T10:00:02Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Why does the cache test fail on CI?"}}]}}}}
{{"timestamp":"2026-11-21T10:00:03Z","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"bash\",\"-lc\",\"GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz cargo test cache\"]}}","call_id":"call_7"}}}}
{{"timestamp":"2026-11-21T10:00:09Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_7","output":"{{\"output\":\"test cache_ttl ... FAILED\",\"metadata\":{{\"exit_code\":101}}}}"}}}}
{{"timestamp":"2026-11-21T10:00:12Z","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"The TTL constant was in seconds while the test expects minutes; fixed in cache.rs."}}]}}}}
"#
    );
    std::fs::write(
        day.join(format!("rollout-2026-11-21T10-00-00-{id}.jsonl")),
        rollout,
    )
    .unwrap();
    let notify = serde_json::json!({"type": "agent-turn-complete", "thread-id": id, "cwd": p.path(""), "turn-id": "1"});
    let out = p
        .command(&["hook", "codex", &notify.to_string()])
        .env("CODEX_HOME", codex.path())
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    let log = std::fs::read_dir(p.path(".cairn/memory/sessions"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .next()
        .expect("a session log");
    assert!(log.contains(&format!("<!-- session:{id} turn:")), "{log}");
    assert!(
        log.contains("cargo test cache") && log.contains("seconds while the test expects minutes"),
        "{log}"
    );
    assert!(!log.contains("ghp_0123"), "{log}");
    let out = p
        .command(&["transcript", id, "--json"])
        .env("CODEX_HOME", codex.path())
        .output()
        .unwrap();
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        t["turns"].as_array().unwrap().last().unwrap()["role"],
        "assistant"
    );
    // Outside the clients' folders and the project, a transcript is not read.
    let out = p
        .command(&["transcript", id])
        .env("CODEX_HOME", "/nonexistent")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("clients' own folders"));

    // hooks install codex sets notify once and keeps the rest of the file.
    std::fs::write(codex.path().join("config.toml"), "# mine\nmodel = \"o3\"\n").unwrap();
    let install = |c: &Project| {
        c.command(&["hooks", "install", "codex"])
            .env("CODEX_HOME", codex.path())
            .env("PATH", super::path_with_cairn())
            .output()
            .unwrap()
    };
    assert!(install(&p).status.success());
    assert!(install(&p).status.success());
    let toml = std::fs::read_to_string(codex.path().join("config.toml")).unwrap();
    assert!(
        toml.contains("# mine") && toml.contains(r#"notify = ["cairn", "hook", "codex"]"#),
        "{toml}"
    );
    std::fs::write(codex.path().join("config.toml"), "notify = [\"other\"]\n").unwrap();
    let out = install(&p);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already has notify"));
}

/// A fake OpenAI-compatible server that refuses every request with 401 and,
/// as some proxies do, echoes the request's `Authorization` header in its body.
fn fake_llm_echoing_401() -> String {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut auth = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if line.to_ascii_lowercase().starts_with("authorization:") {
                        auth = line.trim().to_string();
                    }
                }
                let answer =
                    serde_json::json!({"error": {"message": format!("invalid key; you sent {auth}")}})
                        .to_string();
                let mut s = stream;
                let _ = write!(
                    s,
                    "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            });
        }
    });
    url
}

#[test]
fn a_provider_that_echoes_the_key_never_gets_it_onto_disk_or_screen() {
    let key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let user = user_llm_config(&p, &fake_llm_echoing_401(), 5000);
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures/claude-session.jsonl");
    // In the project: transcripts are read only from there or a client's
    // own folder.
    let fixture = {
        let copy = p.path("transcripts/session.jsonl");
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(&fixture, &copy).unwrap();
        copy
    };
    let env = [
        ("CAIRN_CONFIG", user.to_str().unwrap()),
        ("FAKE_LLM_KEY", key),
    ];
    run_hook(&p, &fixture, &env);
    let health = std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap();
    assert!(health.contains("401"), "the failure is recorded: {health}");
    assert!(!health.contains(&key[8..]), "{health}");
    let mut doctor = p.command(&["doctor"]);
    let doctor = doctor.envs(env).output().unwrap();
    let shown = String::from_utf8_lossy(&doctor.stdout).into_owned()
        + &String::from_utf8_lossy(&doctor.stderr);
    assert!(!shown.contains(&key[8..]), "{shown}");
    // compact fails on the same provider: its error names no key either.
    p.ok(&["remember", "deploys go out on Fridays", "-q"]);
    let out = p.command(&["compact"]).envs(env).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("401"), "{err}");
    assert!(!err.contains(&key[8..]), "{err}");
    for e in std::fs::read_dir(p.path(".cairn")).unwrap().flatten() {
        if e.path().is_file() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            assert!(!text.contains(&key[8..]), "{}", e.path().display());
        }
    }
}

/// Issue 61 (14): the Stop hook captured a transcript that `cairn
/// transcript` then refused to read. Both go through one check now: a
/// transcript outside the project and the clients' folders is refused at
/// capture, said in the hook's health, and nothing of it is stored.
#[test]
fn a_transcript_outside_the_known_folders_is_refused_at_capture() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let elsewhere = tempfile::tempdir().unwrap();
    let transcript = elsewhere.path().join("session.jsonl");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/cli/fixtures/claude-session.jsonl"),
        &transcript,
    )
    .unwrap();
    run_hook(&p, &transcript, &[]);
    let health = std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap();
    assert!(
        health.contains("transcripts are read only from the clients' own folders"),
        "{health}"
    );
    assert!(!p.path(".cairn/memory/sessions").exists());
}
