//! No secret on disk by our doing: every credential shape of the fixture
//! (`cairn_test_support::secrets`, ≥ 45 shapes in gitleaks' families) is
//! driven through every channel — the CLI (text, tags, entities, update,
//! a refused `--source` or `--ttl`), MCP (`memory_store` text, tags,
//! entities, sources, type, ttl and importance, `relate` names and
//! observations), capture for all four agents (Claude Code, Codex, OpenCode,
//! OpenClaw), `import` and git commit messages — and then looked for in
//! every file under `.cairn/` (memory files, history, trash, audit log,
//! session logs, hook state and health, the SQLite index and its WAL) and
//! in what the CLI and the MCP server answer (`recall`, `transcript`,
//! `why`, errors). A channel that let one through is named with the shapes
//! it let through, all channels at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_test_support::secrets::{Shape, shapes};
use serde_json::{Value, json};

use super::capture_clients::{OPENCODE_SESSION, hook, opencode_db, opencode_message};
use super::serve::Server;
use super::{Cli, Project};

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else if p.is_file() {
            // Regular files only: the daemon's socket is no file to read.
            out.push(p);
        }
    }
    out
}

/// The shapes whose secret is found in `haystack` (bytes of a file or output).
fn leaked<'a>(shapes: &'a [Shape], haystack: &[u8]) -> Vec<&'a str> {
    shapes
        .iter()
        .filter(|s| {
            haystack
                .windows(s.secret.len())
                .any(|w| w == s.secret.as_bytes())
        })
        .map(|s| s.name)
        .collect()
}

/// A one-line form of a shape's line (key blocks keep their newlines in
/// JSON strings; a tag or a CLI argument is one line).
fn one_line(s: &Shape) -> String {
    s.line.replace('\n', " ")
}

/// Claude Code's transcript: per shape a user turn, an assistant turn and a
/// tool result holding it.
fn claude_transcript(shapes: &[Shape]) -> String {
    let mut out = String::new();
    for (i, s) in shapes.iter().enumerate() {
        let lines = [
            json!({"type": "user", "uuid": format!("u{i}"), "message": {"role": "user",
                "content": format!("Please check: {}", s.line)}}),
            json!({"type": "assistant", "uuid": format!("a{i}"), "message": {"role": "assistant",
                "content": [{"type": "text", "text": format!("Found {}", s.line)},
                {"type": "tool_use", "id": format!("t{i}"), "name": "Bash",
                 "input": {"command": format!("deploy --with '{}'", s.line)}}]}}),
            json!({"type": "user", "uuid": format!("r{i}"), "message": {"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "is_error": true,
                "content": format!("error: {}", s.line)}]}}),
        ];
        for l in lines {
            out.push_str(&l.to_string());
            out.push('\n');
        }
    }
    out
}

/// A Codex rollout with the same turns.
fn codex_rollout(shapes: &[Shape]) -> String {
    let mut out = String::new();
    out.push_str(&json!({"type": "session_meta", "payload": {"id": "codex-secrets"}}).to_string());
    out.push('\n');
    for (i, s) in shapes.iter().enumerate() {
        let lines = [
            json!({"type": "response_item", "payload": {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": format!("Please check: {}", s.line)}]}}),
            json!({"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                "arguments": json!({"command": ["bash", "-lc", format!("deploy '{}'", s.line)]}).to_string(),
                "call_id": format!("c{i}")}}),
            json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": format!("c{i}"),
                "output": json!({"output": format!("error: {}", s.line), "metadata": {"exit_code": 1}}).to_string()}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": format!("Found {}", s.line)}]}}),
        ];
        for l in lines {
            out.push_str(&l.to_string());
            out.push('\n');
        }
    }
    out
}

/// An OpenClaw transcript (the pi agent's JSONL) with the same turns.
fn openclaw_transcript(session: &str, shapes: &[Shape]) -> String {
    let mut out = json!({"type": "session", "version": 3, "id": session}).to_string();
    out.push('\n');
    for (i, s) in shapes.iter().enumerate() {
        let lines = [
            json!({"type": "message", "id": format!("u{i}"), "message": {"role": "user",
                "content": [{"type": "text", "text": format!("Please check: {}", s.line)}]}}),
            json!({"type": "message", "id": format!("a{i}"), "message": {"role": "assistant",
                "content": [{"type": "toolCall", "id": format!("t{i}"), "name": "exec",
                "arguments": {"command": format!("deploy '{}'", s.line)}},
                {"type": "text", "text": format!("Found {}", s.line)}]}}),
            json!({"type": "message", "id": format!("r{i}"), "message": {"role": "toolResult",
                "toolCallId": format!("t{i}"), "toolName": "exec", "isError": true,
                "content": [{"type": "text", "text": format!("error: {}", s.line)}]}}),
        ];
        for l in lines {
            out.push_str(&l.to_string());
            out.push('\n');
        }
    }
    out
}

#[test]
fn no_credential_shape_survives_any_channel() {
    let shapes = shapes();
    assert!(shapes.len() >= 95, "{} shapes", shapes.len());
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    // Per channel, the shapes that got through into what was stored or printed.
    let mut table: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut printed: BTreeMap<&str, Vec<u8>> = BTreeMap::new();

    // CLI: text is redacted and stored; a tag or an entity holding a secret
    // is refused, with an error that names the field and not the secret.
    let mut cli_out = Vec::new();
    let mut not_refused: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for s in &shapes {
        let out = p.ok(&["remember", &format!("deploy note: {}", s.line), "--json"]);
        cli_out.extend_from_slice(out.as_bytes());
        let id = serde_json::from_str::<Value>(&out).unwrap()["memory"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        p.ok(&["update", &id, "--text", &format!("updated: {}", s.line)]);
        for flag in ["--tag", "--entity"] {
            let r = p.run(&[
                "remember",
                "tagged deploy note",
                &format!("{flag}={}", one_line(s)),
            ]);
            let err = String::from_utf8_lossy(&r.stderr);
            if r.status.success() || !err.contains("holds a secret") {
                not_refused
                    .entry(format!("cli {flag}"))
                    .or_default()
                    .push(s.name);
            }
            cli_out.extend_from_slice(&r.stdout);
            cli_out.extend_from_slice(&r.stderr);
        }
        // A field the CLI refuses is echoed in its error, redacted.
        for flag in ["--source", "--ttl"] {
            let r = p.run(&[
                "remember",
                "sourced deploy note",
                &format!("{flag}={}", one_line(s)),
                "--json",
            ]);
            cli_out.extend_from_slice(&r.stdout);
            cli_out.extend_from_slice(&r.stderr);
        }
    }
    cli_out.extend_from_slice(
        p.ok(&["recall", "deploy note", "-n", "100", "--json"])
            .as_bytes(),
    );
    printed.insert("cli", cli_out);

    // MCP over stdio: the same fields, and relate's names and observations.
    let mut s = Server::start(&p, &[], &[("CAIRN_NO_DAEMON", "1")]);
    s.initialize();
    let mut mcp_out = Vec::new();
    // A JSON-RPC error (arguments that do not parse) is an answer too.
    let ask = |s: &mut Server, call: Value| {
        s.call("tools/call", call)
            .unwrap_or_else(|e| json!({"error": e}))
    };
    for (i, sh) in shapes.iter().enumerate() {
        let answers = [
            ask(
                &mut s,
                json!({"name": "memory_store", "arguments": {"text": format!("mcp note {i}: {}", sh.line)}}),
            ),
            ask(
                &mut s,
                json!({"name": "memory_store", "arguments": {"text": "mcp tagged note", "tags": [one_line(sh)]}}),
            ),
            ask(
                &mut s,
                json!({"name": "memory_store", "arguments": {"text": "mcp entity note", "entities": [one_line(sh)]}}),
            ),
            ask(
                &mut s,
                json!({"name": "relate", "arguments": {"entities": [{"name": one_line(sh), "entityType": "service"}]}}),
            ),
            ask(
                &mut s,
                json!({"name": "relate", "arguments": {"relations": [{"from": "Deploy", "to": one_line(sh), "relationType": "uses"}]}}),
            ),
            ask(
                &mut s,
                json!({"name": "relate", "arguments": {"observations": [{"entityName": format!("Deploy{i}"), "contents": [format!("uses {}", sh.line)]}]}}),
            ),
            // Fields an answer or an error echoes: sources and type, ttl, and
            // an importance that is no number (serde's error quotes it).
            ask(
                &mut s,
                json!({"name": "memory_store", "arguments": {"text": format!("mcp sourced note {i}"), "sources": [one_line(sh)], "type": one_line(sh)}}),
            ),
            ask(
                &mut s,
                json!({"name": "memory_store", "arguments": {"text": "mcp ttl note", "ttl": one_line(sh)}}),
            ),
            ask(
                &mut s,
                json!({"name": "memory_store", "arguments": {"text": "mcp importance note", "importance": one_line(sh)}}),
            ),
            // Ids the errors name: a memory replaced, a memory changed.
            ask(
                &mut s,
                json!({"name": "memory_store", "arguments": {"text": format!("mcp replacing note {i}"), "supersedes": [one_line(sh)]}}),
            ),
            ask(
                &mut s,
                json!({"name": "memory_update", "arguments": {"id": one_line(sh), "importance": 3}}),
            ),
        ];
        for (k, a) in answers.iter().enumerate() {
            let refused = a["isError"] == true || a.get("error").is_some();
            // Text and observations are stored redacted; names are refused.
            if k <= 5 && refused != matches!(k, 1..=4) {
                not_refused
                    .entry(format!("mcp call {k}"))
                    .or_default()
                    .push(sh.name);
            }
            mcp_out.extend_from_slice(a.to_string().as_bytes());
        }
    }
    s.finish();
    printed.insert("mcp", mcp_out);

    // Capture, all four agents.
    let home = tempfile::tempdir().unwrap();
    let claude_dir = home.path().join("claude");
    let claude = claude_dir.join("projects/p/claude-secrets.jsonl");
    std::fs::create_dir_all(claude.parent().unwrap()).unwrap();
    std::fs::write(&claude, claude_transcript(&shapes)).unwrap();
    let input = json!({"session_id": "claude-secrets", "transcript_path": claude,
        "cwd": p.path(""), "hook_event_name": "Stop"})
    .to_string();
    let env = [("CLAUDE_CONFIG_DIR", claude_dir.as_path())];
    hook(&p, &[], "claude-code", "Stop", &input, &env);
    let shown = p
        .command(&[
            "transcript",
            "claude-secrets",
            "--json",
            "--context",
            "1000",
        ])
        .env("CLAUDE_CONFIG_DIR", &claude_dir)
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(String::from_utf8_lossy(&shown.stdout).contains("Please check"));
    printed.insert("transcript (claude-code)", shown.stdout);

    let codex_home = home.path().join("codex");
    let rollout =
        codex_home.join("sessions/2026/11/26/rollout-2026-11-26T10-00-00-codex-secrets.jsonl");
    std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    std::fs::write(&rollout, codex_rollout(&shapes)).unwrap();
    let notify =
        json!({"type": "agent-turn-complete", "thread-id": "codex-secrets", "cwd": p.path("")});
    let out = p
        .command(&["hook", "codex", &notify.to_string()])
        .env("CODEX_HOME", &codex_home)
        .output()
        .unwrap();
    assert!(out.status.success());

    let data = home.path().join("xdg");
    std::fs::create_dir_all(data.join("opencode")).unwrap();
    let conn = opencode_db(&data.join("opencode/opencode.db"));
    for (i, sh) in shapes.iter().enumerate() {
        let at = 1_763_700_000_000 + 10 * i as i64;
        opencode_message(
            &conn,
            &format!("msg_{i:04}u"),
            at,
            "user",
            &[json!({"type": "text", "text": format!("Please check: {}", sh.line)})],
        );
        opencode_message(
            &conn,
            &format!("msg_{i:04}a"),
            at + 1,
            "assistant",
            &[
                json!({"type": "tool", "callID": format!("call_{i}"), "tool": "bash", "state": {"status": "completed",
                "input": {"command": format!("deploy '{}'", sh.line)}, "output": format!("error: {}", sh.line),
                "title": "deploy", "metadata": {}, "time": {"start": 1, "end": 2}}}),
                json!({"type": "text", "text": format!("Found {}", sh.line)}),
            ],
        );
    }
    drop(conn);
    let input = json!({"session_id": OPENCODE_SESSION, "cwd": p.path(""), "hook_event_name": "session.idle"}).to_string();
    hook(
        &p,
        &[],
        "opencode",
        "session.idle",
        &input,
        &[("XDG_DATA_HOME", data.as_path())],
    );

    let state = home.path().join("openclaw");
    let session = "5b0e6a1e-7425-40de-944b-e07fc1f90ae7";
    let transcript = state.join(format!("agents/work/sessions/{session}.jsonl"));
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    std::fs::write(&transcript, openclaw_transcript(session, &shapes)).unwrap();
    let input = json!({"hook_event_name": "command:new", "session_key": "agent:work:main",
        "session_id": session, "session_file": ""})
    .to_string();
    hook(
        &p,
        &[],
        "openclaw",
        "command:new",
        &input,
        &[("OPENCLAW_STATE_DIR", state.as_path())],
    );

    // Four agents' sessions each left a summary in the session log.
    let logs = files_under(&p.path(".cairn/memory/sessions"));
    let log: String = logs
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    for (agent, marker) in [
        ("claude-code", "session:claude-secrets"),
        ("codex", "session:codex-secrets"),
        ("opencode", OPENCODE_SESSION),
        ("openclaw", session),
    ] {
        assert!(log.contains(marker), "{agent} captured nothing: {log}");
    }
    assert!(log.contains("Please check"), "{log}");

    // Import: memories holding each shape in their text are redacted; a tag
    // holding one refuses the whole import before anything is written.
    let memory_file = |id: &str, tags: &str, text: &str| {
        json!({"record": "memory", "path": format!(".cairn/memory/{id}.md"),
            "text": format!("---\nid: {id}\ntype: fact\nimportance: 5\ntags: [{tags}]\n\
                created: 2026-11-26T10:00:00Z\nupdated: 2026-11-26T10:00:00Z\n---\n\n{text}\n")})
        .to_string()
    };
    let mut jsonl = String::new();
    for (i, sh) in shapes.iter().enumerate() {
        jsonl.push_str(&memory_file(
            &format!("imp{i}"),
            "",
            &format!("imported: {}", sh.line),
        ));
        jsonl.push('\n');
    }
    let export = home.path().join("export.jsonl");
    std::fs::write(&export, &jsonl).unwrap();
    let imported = p.run(&["import", export.to_str().unwrap()]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let bad = home.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        memory_file(
            "imp-bad",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "tagged",
        ),
    )
    .unwrap();
    let refused = p.run(&["import", bad.to_str().unwrap()]);
    assert!(
        !refused.status.success(),
        "an import with a secret tag was accepted"
    );
    assert!(!p.path(".cairn/memory/imp-bad.md").exists());
    printed.insert("import", refused.stderr);

    // Git history: each shape in a commit's subject and body.
    let root = p.root();
    assert!(cairn_test_support::git(
        &root,
        &["init", "-q", "-b", "main"]
    ));
    for (i, sh) in shapes.iter().enumerate() {
        p.write("deploy.md", &format!("# Deploy\n\nDeploy number {i}.\n"));
        assert!(cairn_test_support::git(&root, &["add", "deploy.md"]));
        let msg = format!("Deploy {i}: {}\n\nRotated after {}", one_line(sh), sh.line);
        let date = format!("2026-11-26T{:02}:{:02}:00Z", i / 60, i % 60);
        assert!(cairn_test_support::git_at(
            &root,
            &["commit", "-q", "-m", &msg],
            Some(&date)
        ));
    }

    // What is on disk: every file under .cairn, the index and its WAL included.
    p.ok(&["index"]);
    let why = p.run(&[
        "why",
        "deploy.md",
        "--limit",
        "1000",
        "--max-tokens",
        "1000000",
        "--json",
    ]);
    assert!(
        why.status.success() && String::from_utf8_lossy(&why.stdout).contains("Rotated after"),
        "why: {}",
        String::from_utf8_lossy(&why.stderr)
    );
    printed.insert("history (why)", why.stdout);
    let mut on_disk = 0;
    for f in files_under(&p.path(".cairn")) {
        let bytes = std::fs::read(&f).unwrap();
        on_disk += 1;
        let name = f
            .strip_prefix(p.path(".cairn"))
            .unwrap()
            .display()
            .to_string();
        let hits = leaked(&shapes, &bytes);
        if !hits.is_empty() {
            table.insert(Box::leak(name.into_boxed_str()), hits);
        }
    }
    for (channel, out) in &printed {
        let hits = leaked(&shapes, out);
        if !hits.is_empty() {
            table.insert(channel, hits);
        }
    }
    eprintln!(
        "{} shapes × channels (CLI, MCP, capture ×4, import, history): {} files under .cairn and {} outputs searched; leaked: {}; names not refused: {}",
        shapes.len(),
        on_disk,
        printed.len(),
        table.values().map(Vec::len).sum::<usize>(),
        not_refused.values().map(Vec::len).sum::<usize>()
    );
    assert!(
        table.is_empty() && not_refused.is_empty(),
        "secrets left (where → shapes): {table:#?}\nnames stored, not refused: {not_refused:#?}",
    );
    // The stored texts are there, redacted: the channels were exercised.
    let memories = files_under(&p.path(".cairn/memory"));
    let all: String = memories
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    // (`update` replaced each CLI memory's first text.)
    for needle in ["updated: ", "mcp note ", "imported: ", "uses [redacted]"] {
        assert!(all.contains(needle), "nothing stored through {needle:?}");
    }
}
