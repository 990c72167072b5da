//! Capture from OpenCode and OpenClaw: each client's store written in its
//! own format, the hook cairn's plugin or hook would run, the session log.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use super::{Cli, Project};

/// Runs `cairn [global…] hook <client> <event>` with `stdin` and `env`;
/// asserts that it exits 0 and prints nothing (hooks fail open).
pub(super) fn hook(
    p: &Project,
    global: &[&str],
    client: &str,
    event: &str,
    stdin: &str,
    env: &[(&str, &Path)],
) {
    let args: Vec<&str> = global
        .iter()
        .copied()
        .chain(["hook", client, event])
        .collect();
    let mut cmd = p.command(&args);
    for (k, v) in env {
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
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "hooks fail open: always exit 0");
    assert!(out.stdout.is_empty(), "a hook prints nothing on stdout");
}

/// Today's session log (the one file under `.cairn/memory/sessions`).
fn session_log(p: &Project) -> String {
    let logs: Vec<_> = std::fs::read_dir(p.path(".cairn/memory/sessions"))
        .expect("a session log")
        .flatten()
        .collect();
    assert_eq!(logs.len(), 1);
    std::fs::read_to_string(logs[0].path()).unwrap()
}

fn health(p: &Project) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap())
        .unwrap()
}

pub(super) const OPENCODE_SESSION: &str = "ses_5f1a2b3c4d5eFfGgHhIiJjKk";

/// OpenCode's `message` and `part` tables (`session/session.sql.ts`), the
/// `data` columns holding the message and part JSON without their ids.
pub(super) fn opencode_db(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
             time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
         CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
             time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);",
    )
    .unwrap();
    conn
}

pub(super) fn opencode_message(
    conn: &rusqlite::Connection,
    id: &str,
    at: i64,
    role: &str,
    parts: &[serde_json::Value],
) {
    let info = serde_json::json!({"role": role, "time": {"created": at}, "agent": "build",
        "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}});
    conn.execute(
        "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
        rusqlite::params![id, OPENCODE_SESSION, at, info.to_string()],
    )
    .unwrap();
    for (i, part) in parts.iter().enumerate() {
        conn.execute(
            "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
            rusqlite::params![
                format!("prt_{id}_{i}"),
                id,
                OPENCODE_SESSION,
                at,
                part.to_string()
            ],
        )
        .unwrap();
    }
}

#[test]
fn an_opencode_session_is_captured_from_its_database_once_then_only_its_new_turns() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("opencode")).unwrap();
    let conn = opencode_db(&data.path().join("opencode/opencode.db"));
    opencode_message(
        &conn,
        "msg_0001",
        1_763_700_000_000,
        "user",
        &[
            serde_json::json!({"type": "text", "text": "The login test fails since the argon2 upgrade"}),
        ],
    );
    opencode_message(
        &conn,
        "msg_0002",
        1_763_700_001_000,
        "assistant",
        &[
            serde_json::json!({"type": "step-start"}),
            serde_json::json!({"type": "tool", "callID": "call_1", "tool": "bash", "state": {"status": "completed",
            "input": {"command": "OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUv1234 cargo test -p auth login"},
            "output": "test login ... FAILED", "title": "cargo test", "metadata": {}, "time": {"start": 1, "end": 2}}}),
            serde_json::json!({"type": "text", "text": "Pinned argon2 to 0.5: the new default params broke the stored hashes."}),
        ],
    );
    let input = serde_json::json!({"session_id": OPENCODE_SESSION, "cwd": p.path(""), "hook_event_name": "session.idle"}).to_string();
    let env = [("XDG_DATA_HOME", data.path())];
    hook(&p, &[], "opencode", "session.idle", &input, &env);

    let log = session_log(&p);
    assert!(
        log.contains(&format!(
            "<!-- session:{OPENCODE_SESSION} turn:call_1 client:opencode -->"
        )),
        "{log}"
    );
    assert!(
        log.contains("argon2 upgrade")
            && log.contains("cargo test -p auth login")
            && log.contains("Pinned argon2"),
        "{log}"
    );
    assert!(
        !log.contains("sk-proj-AbCd") && !log.contains("AbCdEfGhIjKl"),
        "secret in {log}"
    );
    assert!(health(&p)["opencode"]["last_success"].is_string());

    // Idle again with nothing new: nothing written.
    hook(&p, &[], "opencode", "session.idle", &input, &env);
    assert_eq!(session_log(&p), log);

    // Two more messages: only they are added.
    opencode_message(
        &conn,
        "msg_0003",
        1_763_700_060_000,
        "user",
        &[
            serde_json::json!({"type": "text", "text": "Add a regression test for the stored hashes"}),
        ],
    );
    opencode_message(
        &conn,
        "msg_0004",
        1_763_700_061_000,
        "assistant",
        &[
            serde_json::json!({"type": "tool", "callID": "call_2", "tool": "write", "state": {"status": "completed",
            "input": {"filePath": "tests/hash_compat.rs", "content": "…"}, "output": "", "title": "", "metadata": {}, "time": {"start": 1, "end": 2}}}),
            serde_json::json!({"type": "text", "text": "Added tests/hash_compat.rs with a hash from the old params."}),
        ],
    );
    hook(&p, &[], "opencode", "session.compacted", &input, &env);
    let log = session_log(&p);
    assert_eq!(log.matches("<!-- session:").count(), 2, "{log}");
    assert!(
        log.contains("turn:msg_0004") && log.contains("tests/hash_compat.rs"),
        "{log}"
    );
    assert_eq!(
        log.matches("argon2 upgrade").count(),
        1,
        "a turn was captured twice: {log}"
    );

    // The original turns behind the anchor.
    let out = p
        .command(&["transcript", OPENCODE_SESSION, "--json"])
        .env("XDG_DATA_HOME", data.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(t["turn_id"], "msg_0004", "{t}");
}

#[test]
fn an_older_opencode_json_storage_is_read_too() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let data = tempfile::tempdir().unwrap();
    let storage = data.path().join("opencode/storage");
    let put = |rel: &str, v: serde_json::Value| {
        let path = storage.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, v.to_string()).unwrap();
    };
    let s = OPENCODE_SESSION;
    put(
        &format!("session/proj1/{s}.json"),
        serde_json::json!({"id": s, "projectID": "proj1", "directory": "/w", "title": "t", "time": {"created": 1, "updated": 2}}),
    );
    put(
        &format!("message/{s}/msg_a.json"),
        serde_json::json!({"id": "msg_a", "sessionID": s, "role": "user", "time": {"created": 1}}),
    );
    put(
        "part/msg_a/prt_a.json",
        serde_json::json!({"id": "prt_a", "sessionID": s, "messageID": "msg_a", "type": "text", "text": "Why is the nightly export slow?"}),
    );
    put(
        &format!("message/{s}/msg_b.json"),
        serde_json::json!({"id": "msg_b", "sessionID": s, "role": "assistant", "time": {"created": 2}}),
    );
    put(
        "part/msg_b/prt_b.json",
        serde_json::json!({"id": "prt_b", "sessionID": s, "messageID": "msg_b", "type": "text", "text": "The export query had no index on updated_at."}),
    );
    let input = serde_json::json!({"session_id": s, "cwd": p.path("")}).to_string();
    hook(
        &p,
        &[],
        "opencode",
        "session.idle",
        &input,
        &[("XDG_DATA_HOME", data.path())],
    );
    let log = session_log(&p);
    assert!(
        log.contains("turn:msg_b") && log.contains("no index on updated_at"),
        "{log}"
    );
}

use cairn_test_support::openclaw::{
    SCHEMA as OPENCLAW_SCHEMA, SESSION as OPENCLAW_SESSION, TRANSCRIPT as OPENCLAW_TRANSCRIPT,
};

#[test]
fn an_openclaw_session_is_captured_on_new_then_only_its_new_turns_on_compaction() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let state = tempfile::tempdir().unwrap();
    let transcript = state
        .path()
        .join(format!("agents/work/sessions/{OPENCLAW_SESSION}.jsonl"));
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    std::fs::write(&transcript, OPENCLAW_TRANSCRIPT).unwrap();
    let env = [("OPENCLAW_STATE_DIR", state.path())];
    let root = p.path("");
    let global = ["-C", root.to_str().unwrap()];
    // /new: the hook names the replaced session by key and id only.
    let input =
        serde_json::json!({"hook_event_name": "command:new", "session_key": "agent:work:main",
        "session_id": OPENCLAW_SESSION, "session_file": ""})
        .to_string();
    hook(&p, &global, "openclaw", "command:new", &input, &env);
    let log = session_log(&p);
    assert!(
        log.contains(&format!(
            "<!-- session:{OPENCLAW_SESSION} turn:e0000004 client:openclaw -->"
        )),
        "{log}"
    );
    assert!(
        log.contains("backup upload")
            && log.contains("rclone check")
            && log.contains("write grant"),
        "{log}"
    );
    assert!(log.contains("AccessDenied"), "errors are kept: {log}");
    assert!(!log.contains("ghp_0123"), "secret in {log}");
    hook(&p, &global, "openclaw", "command:new", &input, &env);
    assert_eq!(session_log(&p), log, "nothing new: nothing written");

    // More turns, then compaction: the hook names the transcript file.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    writeln!(f, r#"{{"type":"message","id":"e0000005","parentId":"e0000004","timestamp":"2026-03-02T09:05:00.000Z","message":{{"role":"user","content":"Restore the grant and retry the upload"}}}}"#).unwrap();
    writeln!(f, r#"{{"type":"message","id":"e0000006","parentId":"e0000005","timestamp":"2026-03-02T09:05:09.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"Grant restored; the retry uploaded 14 GB."}}]}}}}"#).unwrap();
    drop(f);
    let input = serde_json::json!({"hook_event_name": "session:compact:before", "session_key": "agent:work:main",
        "session_id": OPENCLAW_SESSION, "session_file": transcript})
    .to_string();
    hook(
        &p,
        &global,
        "openclaw",
        "session:compact:before",
        &input,
        &env,
    );
    let log = session_log(&p);
    assert_eq!(log.matches("<!-- session:").count(), 2, "{log}");
    assert!(
        log.contains("turn:e0000006") && log.contains("uploaded 14 GB"),
        "{log}"
    );
    assert_eq!(
        log.matches("backup upload").count(),
        1,
        "a turn was captured twice: {log}"
    );
    assert!(health(&p)["openclaw"]["last_success"].is_string());
}

/// Adds one event of the OpenClaw session at `seq`, zstd-compressed as
/// OpenClaw stores large ones when `compress`.
fn openclaw_event(db: &rusqlite::Connection, seq: i64, line: &str, compress: bool) {
    if compress {
        db.execute(
            "INSERT INTO transcript_events (session_id, seq, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?1, ?2, 1, ?3, ?4, '{}')",
            rusqlite::params![OPENCLAW_SESSION, seq, zstd::bulk::compress(line.as_bytes(), 3).unwrap(), line.len() as i64],
        )
        .unwrap();
    } else {
        db.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, 1)",
            rusqlite::params![OPENCLAW_SESSION, seq, line],
        )
        .unwrap();
    }
}

/// `<state>/agents/work/agent/openclaw-agent.sqlite` holding the session.
fn openclaw_db(state: &Path) -> (std::path::PathBuf, rusqlite::Connection) {
    let path = state.join("agents/work/agent/openclaw-agent.sqlite");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(OPENCLAW_SCHEMA).unwrap();
    db.execute_batch(&format!(
        "PRAGMA foreign_keys = ON;
         INSERT INTO session_nodes VALUES ('agent:work:main', '{OPENCLAW_SESSION}', '{{}}', 1);
         INSERT INTO session_windows VALUES ('{OPENCLAW_SESSION}', 'agent:work:main', 1, 1);"
    ))
    .unwrap();
    (path, db)
}

#[test]
fn an_openclaw_session_in_its_sqlite_store_is_captured_once_then_only_its_new_events() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let state = tempfile::tempdir().unwrap();
    let (_, db) = openclaw_db(state.path());
    for (seq, line) in OPENCLAW_TRANSCRIPT.lines().enumerate() {
        // The event with the key is one OpenClaw compressed.
        openclaw_event(&db, seq as i64 + 1, line, line.contains("ghp_"));
    }
    // A stale JSONL beside it: the database holds the session, so it wins.
    let jsonl = state
        .path()
        .join(format!("agents/work/sessions/{OPENCLAW_SESSION}.jsonl"));
    std::fs::create_dir_all(jsonl.parent().unwrap()).unwrap();
    std::fs::write(
        &jsonl,
        r#"{"type":"message","id":"old","message":{"role":"user","content":"stale jsonl words"}}"#,
    )
    .unwrap();
    let env = [("OPENCLAW_STATE_DIR", state.path())];
    let root = p.path("");
    let global = ["-C", root.to_str().unwrap()];
    let input =
        serde_json::json!({"hook_event_name": "command:new", "session_key": "agent:work:main",
        "session_id": OPENCLAW_SESSION, "session_file": ""})
        .to_string();
    hook(&p, &global, "openclaw", "command:new", &input, &env);
    let log = session_log(&p);
    assert!(
        log.contains(&format!(
            "<!-- session:{OPENCLAW_SESSION} turn:e0000004 client:openclaw -->"
        )),
        "{log}"
    );
    // Read from the agent's database (where the hook's local state says).
    let state = std::fs::read_to_string(p.path(".cairn/hooks/state.json")).unwrap();
    assert!(state.contains("openclaw-agent.sqlite"), "{state}");
    assert!(
        log.contains("backup upload")
            && log.contains("rclone check")
            && log.contains("AccessDenied")
            && log.contains("write grant"),
        "{log}"
    );
    assert!(!log.contains("ghp_0123"), "secret in {log}");
    assert!(!log.contains("stale jsonl"), "{log}");
    hook(&p, &global, "openclaw", "command:new", &input, &env);
    assert_eq!(session_log(&p), log, "nothing new: nothing written");

    openclaw_event(
        &db,
        7,
        r#"{"type":"message","id":"e0000005","parentId":"e0000004","timestamp":"2026-03-02T09:05:00.000Z","message":{"role":"user","content":"Restore the grant and retry the upload"}}"#,
        false,
    );
    openclaw_event(
        &db,
        8,
        r#"{"type":"message","id":"e0000006","parentId":"e0000005","timestamp":"2026-03-02T09:05:09.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Grant restored; the retry uploaded 14 GB."}]}}"#,
        true,
    );
    drop(db);
    // Compaction names the session's (stale) file: the database still wins.
    let input = serde_json::json!({"hook_event_name": "session:compact:before", "session_key": "agent:work:main",
        "session_id": OPENCLAW_SESSION, "session_file": jsonl})
    .to_string();
    hook(
        &p,
        &global,
        "openclaw",
        "session:compact:before",
        &input,
        &env,
    );
    let log = session_log(&p);
    assert_eq!(log.matches("<!-- session:").count(), 2, "{log}");
    assert!(
        log.contains("turn:e0000006") && log.contains("uploaded 14 GB"),
        "{log}"
    );
    assert_eq!(
        log.matches("backup upload").count(),
        1,
        "a turn was captured twice: {log}"
    );
    assert!(!log.contains("stale jsonl"), "{log}");
    assert!(health(&p)["openclaw"]["last_success"].is_string());
}

#[test]
fn the_openclaw_hook_fails_open_on_a_locked_or_garbage_database() {
    let input =
        serde_json::json!({"hook_event_name": "command:stop", "session_key": "agent:work:main",
        "session_id": OPENCLAW_SESSION, "session_file": ""})
        .to_string();
    // Locked: a writer holds the database exclusively past the busy timeout.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let state = tempfile::tempdir().unwrap();
    let (_, db) = openclaw_db(state.path());
    openclaw_event(&db, 1, OPENCLAW_TRANSCRIPT.lines().nth(2).unwrap(), false);
    db.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
        .unwrap();
    let env = [("OPENCLAW_STATE_DIR", state.path())];
    hook(&p, &[], "openclaw", "command:stop", &input, &env);
    assert!(!p.path(".cairn/memory").exists());
    let h = health(&p);
    let message = h["openclaw"]["last_error"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(message.contains("openclaw-agent.sqlite"), "{h}");
    db.execute_batch("COMMIT;").unwrap();
    drop(db);

    // Garbage where the database should be, and no JSONL.
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let state = tempfile::tempdir().unwrap();
    let path = state.path().join("agents/work/agent/openclaw-agent.sqlite");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "this is not a database, only some words in a file").unwrap();
    let env = [("OPENCLAW_STATE_DIR", state.path())];
    hook(&p, &[], "openclaw", "command:stop", &input, &env);
    assert!(!p.path(".cairn/memory").exists());
    let h = health(&p);
    let message = h["openclaw"]["last_error"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(message.contains("openclaw-agent.sqlite"), "{h}");
}

#[test]
fn opencode_and_openclaw_hooks_exit_0_on_garbage_and_record_it() {
    for client in ["opencode", "openclaw"] {
        for stdin in [
            "not json",
            "{}",
            r#"{"session_id": "../../etc/passwd", "session_key": "agent:../x"}"#,
        ] {
            let p = Project::with_config("[embed]\nmodel = \"none\"\n");
            let empty = tempfile::tempdir().unwrap();
            let env = [
                ("XDG_DATA_HOME", empty.path()),
                ("OPENCLAW_STATE_DIR", empty.path()),
            ];
            hook(&p, &[], client, "session.idle", stdin, &env);
            assert!(!p.path(".cairn/memory").exists(), "{client} {stdin}");
            let h = health(&p);
            assert!(
                h[client]["last_error"]["message"].is_string(),
                "{client} {stdin}: {h}"
            );
        }
    }
}

#[test]
fn hooks_install_opencode_and_openclaw_once_and_never_over_other_files() {
    let p = Project::new();
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("openclaw-state");
    let install = |p: &Project, client: &str, extra: &[&str]| {
        let args: Vec<&str> = ["hooks", "install", client]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        p.command(&args)
            .env("HOME", home.path())
            .env("OPENCLAW_STATE_DIR", &state)
            .output()
            .unwrap()
    };

    // OpenCode: a project plugin beside the user's own ones.
    p.write(
        ".opencode/plugins/mine.js",
        "export const Mine = async () => ({})\n",
    );
    p.write(".opencode/opencode.json", "{\"plugin\": []}\n");
    let dry = install(&p, "opencode", &["--print"]);
    assert!(dry.status.success());
    assert!(String::from_utf8_lossy(&dry.stdout).contains("session.idle"));
    assert!(
        !p.path(".opencode/plugins/cairn-capture.js").exists(),
        "--print wrote"
    );
    assert!(install(&p, "opencode", &[]).status.success());
    let plugin = std::fs::read_to_string(p.path(".opencode/plugins/cairn-capture.js")).unwrap();
    assert!(install(&p, "opencode", &[]).status.success());
    assert_eq!(
        std::fs::read_to_string(p.path(".opencode/plugins/cairn-capture.js")).unwrap(),
        plugin
    );
    assert!(
        plugin.contains(r#"["hook", "opencode", event]"#)
            && plugin.contains("session.idle")
            && plugin.contains("session.compacted"),
        "{plugin}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".opencode/plugins/mine.js")).unwrap(),
        "export const Mine = async () => ({})\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".opencode/opencode.json")).unwrap(),
        "{\"plugin\": []}\n"
    );
    // A file of that name cairn did not write stays as it is.
    let q = Project::new();
    q.write(".opencode/plugins/cairn-capture.js", "// my own\n");
    let out = install(&q, "opencode", &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not written by cairn"));
    assert_eq!(
        std::fs::read_to_string(q.path(".opencode/plugins/cairn-capture.js")).unwrap(),
        "// my own\n"
    );

    // OpenClaw: a managed hook under its state folder, naming this project.
    std::fs::create_dir_all(state.join("hooks/my-hook")).unwrap();
    std::fs::write(
        state.join("hooks/my-hook/HOOK.md"),
        "---\nname: my-hook\n---\n",
    )
    .unwrap();
    assert!(install(&p, "openclaw", &[]).status.success());
    assert!(install(&p, "openclaw", &[]).status.success());
    let dir = state.join("hooks/cairn-capture");
    let md = std::fs::read_to_string(dir.join("HOOK.md")).unwrap();
    let handler = std::fs::read_to_string(dir.join("handler.ts")).unwrap();
    assert!(
        md.starts_with("---\nname: cairn-capture\n")
            && md.contains(r#""events": ["command:new", "command:reset", "command:stop", "session:compact:before"]"#),
        "{md}"
    );
    let root = p.path("").canonicalize().unwrap();
    assert!(
        handler.contains("export default handler")
            && handler.contains(&serde_json::to_string(&root.to_string_lossy()).unwrap())
            && handler.contains(r#""hook", "openclaw""#),
        "{handler}"
    );
    assert_eq!(
        std::fs::read_to_string(state.join("hooks/my-hook/HOOK.md")).unwrap(),
        "---\nname: my-hook\n---\n"
    );
    // Sessions go to one project: another project's install is refused.
    let out = install(&q, "openclaw", &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("another project"));
    assert_eq!(
        std::fs::read_to_string(dir.join("handler.ts")).unwrap(),
        handler
    );
}
