//! Capture: a recorded Claude Code transcript → hook → session log →
//! index → recall → transcript.

use std::io::Write;
use std::process::Stdio;

use super::Project;

const SESSION: &str = "8f1c2d3e-0000-4000-8000-000000000001";

fn run_hook(p: &Project, transcript: &std::path::Path, extra_env: &[(&str, &str)]) {
    let input = serde_json::json!({
        "session_id": SESSION,
        "transcript_path": transcript,
        "cwd": p.path(""),
        "hook_event_name": "Stop",
    });
    let mut cmd = p.command(&["hook", "claude-code", "Stop"]);
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

#[test]
fn a_claude_code_session_is_captured_recalled_and_traced_back() {
    let p = Project::new("");
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
        log.contains(&format!("<!-- session:{SESSION} turn:u4 transcript:")),
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
    let p = Project::new("[capture]\nbudget_ms = 100\n");
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
    let q = Project::new("");
    let mut child = q
        .command(&["hook", "claude-code", "Stop"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"not json").unwrap();
    assert!(child.wait().unwrap().success());
    assert!(!q.path(".cairn/memory").exists());
    let health = std::fs::read_to_string(q.path(".cairn/hooks/health.json")).unwrap();
    assert!(health.contains("session_id"), "{health}");
}

#[test]
fn hooks_install_adds_stop_and_session_end_once() {
    let p = Project::new("");
    p.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(ls:*)"]}}"#,
    );
    p.ok(&["hooks", "install", "claude-code"]);
    p.ok(&["hooks", "install", "claude-code"]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls:*)");
    for event in ["Stop", "SessionEnd"] {
        let groups = v["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{v}");
        assert_eq!(
            groups[0]["hooks"][0]["command"],
            format!("cairn hook claude-code {event}")
        );
    }
}
