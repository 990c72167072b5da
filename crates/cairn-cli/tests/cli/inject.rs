//! Memory without asking: `cairn hook claude-code SessionStart` and
//! `UserPromptSubmit` answer in Claude Code's hook output format, within
//! their budgets, inject nothing when nothing is relevant, and record
//! counts (never the injected text) in the health file, with the recent
//! injections: each prompt's redacted start and why each memory came.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};

use super::{Cli, Project};

/// Runs an injecting hook with `input` on stdin; its exit status and stdout.
fn hook(p: &Project, event: &str, input: &Value) -> (bool, String) {
    let mut child = p
        .command(&["hook", "claude-code", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cairn runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).expect("utf-8"),
    )
}

fn git(p: &Project, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(p.path(""))
        .output()
        .expect("git runs")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn health(p: &Project) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap())
        .unwrap()
}

/// A session starts with the last session's summary and the memories of
/// its branch and changed files, in `additionalContext`, within 1,500 tokens.
#[test]
fn session_start_brings_the_last_session_and_the_branch_memories() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.write("src/caching/redis.rs", "pub fn ttl() -> u64 { 300 }\n");
    git(&p, &["init", "-q", "-b", "feature/redis-ttl"]);
    git(&p, &["add", "."]);
    git(&p, &["commit", "-q", "-m", "redis ttl"]);
    p.write(
        ".cairn/memory/sessions/2026-11-20.md",
        "# Sessions 2026-11-20\n\n### 09:10\n\n<!-- session:a turn:1 transcript:/x -->\n\nOld work on the queue.\n",
    );
    p.write(
        ".cairn/memory/sessions/2026-11-24.md",
        "# Sessions 2026-11-24\n\n### 16:05\n\n<!-- session:b turn:9 transcript:/y -->\n\nMoved the session TTL into the redis module; tests pass.\n",
    );
    for (text, kind) in [
        (
            "Redis session TTL is five minutes; refresh it on every request.",
            "decision",
        ),
        ("The garden tomatoes are watered twice a week.", "fact"),
    ] {
        p.ok(&["remember", text, "--type", kind, "-q"]);
    }
    let (ok, out) = hook(
        &p,
        "SessionStart",
        &json!({"cwd": p.path(""), "hook_event_name": "SessionStart", "source": "startup"}),
    );
    assert!(ok);
    let v: Value = serde_json::from_str(&out).expect("one JSON object on stdout");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("Last session (2026-11-24 16:05)"), "{ctx}");
    assert!(ctx.contains("Moved the session TTL"), "{ctx}");
    assert!(!ctx.contains("<!--") && !ctx.contains("Old work"), "{ctx}");
    assert!(ctx.contains("Redis session TTL is five minutes"), "{ctx}");
    assert!(
        !ctx.contains("tomatoes"),
        "unrelated memories stay out: {ctx}"
    );
    let h = &health(&p)["claude-code"]["injected"]["SessionStart"];
    assert_eq!(h["runs"], 1, "{h}");
    assert_eq!(h["last"]["last_session"], true, "{h}");
    assert!(h["last"]["memories"].as_u64().unwrap() >= 1, "{h}");
    let tokens = h["last"]["tokens"].as_u64().unwrap();
    assert!(tokens <= 1500 && tokens as usize >= ctx.len() / 8, "{h}");
    let file = std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap();
    assert!(
        !file.contains("five minutes"),
        "no text in the health file: {file}"
    );
    // The recent injections (the page's home lists them): the event, no
    // prompt for a session start, each memory's id and why it was chosen.
    let recent = &health(&p)["claude-code"]["recent"];
    assert_eq!(recent.as_array().map(Vec::len), Some(1), "{recent}");
    assert_eq!(recent[0]["event"], "SessionStart", "{recent}");
    assert!(recent[0]["prompt"].is_null(), "{recent}");
    assert_eq!(recent[0]["last_session"], true, "{recent}");
    let why = recent[0]["why"].as_array().unwrap();
    assert!(
        !why.is_empty() && why.iter().all(|w| w.as_str().unwrap().starts_with('m')),
        "{recent}"
    );
}

/// Without a model no prompt is judged close: nothing on stdout, exit 0;
/// garbage on stdin and an empty project fail open the same way.
#[test]
fn prompt_hooks_fail_open_and_stay_silent_without_a_model() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.ok(&["remember", "Staging deploys need a green build.", "-q"]);
    let (ok, out) = hook(
        &p,
        "UserPromptSubmit",
        &json!({"cwd": p.path(""), "prompt": "how do we deploy to staging?"}),
    );
    assert!(ok && out.is_empty(), "{out}");
    let (ok, out) = hook(&p, "UserPromptSubmit", &json!("not an object"));
    assert!(ok && out.is_empty(), "{out}");
    let empty = Project::with_config("[embed]\nmodel = \"none\"\n");
    let (ok, out) = hook(&empty, "SessionStart", &json!({"cwd": empty.path("")}));
    assert!(ok && out.is_empty(), "{out}");
    assert!(
        !empty.path(".cairn/index.sqlite").exists(),
        "a hook creates no index"
    );
    let h = &health(&p)["claude-code"]["injected"]["UserPromptSubmit"];
    assert_eq!(h["runs"], 2);
    // Times in whole seconds (`2026-11-26T10:45:02Z`), not nanoseconds.
    for time in [&h["last"]["time"], &h["last_error"]["time"]] {
        if let Some(t) = time.as_str() {
            assert!(t.len() == 20 && t.ends_with('Z'), "{h}");
        }
    }
    assert!(
        h["last"]["time"].is_string() || h["last_error"]["time"].is_string(),
        "{h}"
    );
}

/// With the model: a prompt close to a memory brings it, an unrelated
/// prompt brings nothing, and the block keeps to 500 tokens.
#[test]
#[ignore = "full tier: needs the model"]
fn a_prompt_brings_only_the_memories_close_to_it() {
    let p = Project::new();
    for text in [
        "Staging deploys need a green build on main and go out through the deploy-staging workflow.",
        "Release artifacts are signed with the team's GPG key before publishing.",
        "The garden tomatoes are watered twice a week.",
    ] {
        p.ok(&["remember", text, "-q"]);
    }
    let (ok, out) = hook(
        &p,
        "UserPromptSubmit",
        &json!({"cwd": p.path(""), "prompt": "how do we deploy to staging?"}),
    );
    assert!(ok);
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("deploy-staging workflow"), "{ctx}");
    assert!(!ctx.contains("tomatoes"), "{ctx}");
    let tokens = health(&p)["claude-code"]["injected"]["UserPromptSubmit"]["last"]["tokens"]
        .as_u64()
        .unwrap();
    assert!(tokens <= 500, "{tokens}");
    let (ok, out) = hook(
        &p,
        "UserPromptSubmit",
        &json!({"cwd": p.path(""), "prompt": "what is the capital of Mongolia"}),
    );
    assert!(ok);
    assert!(out.is_empty(), "nothing relevant, nothing injected: {out}");
    let h = &health(&p)["claude-code"]["injected"]["UserPromptSubmit"];
    assert_eq!(
        (h["runs"].as_u64(), h["with_memories"].as_u64()),
        (Some(2), Some(1)),
        "{h}"
    );
    // Only the prompt that brought memories joins the recent ones, with
    // each memory's similarity and the floor that let it through.
    let recent = &health(&p)["claude-code"]["recent"];
    assert_eq!(recent.as_array().map(Vec::len), Some(1), "{recent}");
    assert_eq!(
        recent[0]["prompt"], "how do we deploy to staging?",
        "{recent}"
    );
    let why = recent[0]["why"][0].as_str().unwrap();
    assert!(
        why.contains("similarity 0.") && why.contains("(floor 0."),
        "{why}"
    );
}

/// `hooks install claude-code` wires the recall hooks beside capture.
#[test]
fn install_wires_session_start_and_prompt_hooks() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    let install = || {
        let out = p
            .command(&["hooks", "install", "claude-code"])
            .env("PATH", super::path_with_cairn())
            .output()
            .expect("cairn runs");
        assert!(out.status.success(), "{out:?}");
    };
    install();
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(p.path(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    for event in ["Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"] {
        assert_eq!(
            s["hooks"][event][0]["hooks"][0]["command"],
            format!(
                "command -v cairn >/dev/null 2>&1 || exit 0; exec cairn hook claude-code {event}"
            ),
            "{s}"
        );
    }
    // Twice changes nothing.
    install();
    let again: Value = serde_json::from_str(
        &std::fs::read_to_string(p.path(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s, again);
}

/// Issue 61 (14): garbage on a hook's stdin is an error in its health, for
/// the injecting hooks (which still inject) and the capturing ones.
#[test]
fn garbage_on_a_hooks_stdin_is_counted_as_an_error() {
    let p = Project::with_config("[embed]\nmodel = \"none\"\n");
    p.ok(&["index", "-q"]);
    let (ok, _) = hook(&p, "SessionStart", &json!("not the hook's input {"));
    assert!(ok, "a hook never fails its agent");
    let (ok, _) = hook(&p, "Stop", &json!(42));
    assert!(ok);
    let health: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path(".cairn/hooks/health.json")).unwrap())
            .unwrap();
    let injected = &health["claude-code"]["injected"]["SessionStart"]["last_error"]["message"];
    assert!(
        injected
            .as_str()
            .is_some_and(|m| m.contains("not the hook's JSON input")),
        "{health}"
    );
    let captured = &health["claude-code"]["last_error"]["message"];
    assert!(
        captured
            .as_str()
            .is_some_and(|m| m.contains("not the hook's JSON input")),
        "{health}"
    );
}
