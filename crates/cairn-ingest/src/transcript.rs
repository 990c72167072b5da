//! Agent transcripts (Claude Code's JSONL, Codex rollouts): turns, an extractive summary of
//! a stretch of them, and secret redaction. Pure functions: the caller reads
//! the file and keeps track of what was already captured.

use serde::Serialize;
use serde_json::Value;

use crate::redact::redact;

/// One turn of a transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Turn {
    /// The line's `uuid` (or its line number when it has none).
    pub id: String,
    /// 0-based line in the transcript file.
    pub line: usize,
    /// `user`, `assistant` or `tool` (a tool result sent back as a user line).
    pub role: String,
    /// The text said (tool calls and results summarised in one line each).
    pub text: String,
    /// Tool calls of an assistant turn: `(tool, main argument)`.
    pub tools: Vec<(String, String)>,
    /// Whether a tool result reported an error.
    pub error: bool,
    /// The line's timestamp, if any.
    pub time: Option<String>,
}

impl Turn {
    /// A turn of line `n` with no text yet: its id `id`, or `line{n}` when
    /// the line has none.
    pub(crate) fn at(id: Option<&str>, n: usize, role: &str, time: Option<String>) -> Turn {
        Turn {
            id: id.map_or_else(|| format!("line{n}"), str::to_string),
            line: n,
            role: role.to_string(),
            text: String::new(),
            tools: Vec::new(),
            error: false,
            time,
        }
    }
}

/// Reads JSONL transcript lines, the loop every client's reader shares:
/// each line that is JSON goes to `turns` with its number in the file
/// (`first_line` is the number of the first line given), which returns the
/// line's turns; lines that are not JSON are skipped.
pub(crate) fn parse_jsonl<I: IntoIterator<Item = Turn>>(
    text: &str,
    first_line: usize,
    mut turns: impl FnMut(&Value, usize) -> I,
) -> Vec<Turn> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| Some((first_line + i, serde_json::from_str::<Value>(line).ok()?)))
        .flat_map(|(n, v)| turns(&v, n))
        .collect()
}

/// Adds one `[tool] argument` line per tool call to a turn's text.
pub(crate) fn push_tool_lines(text: &mut String, tools: &[(String, String)]) {
    for (tool, arg) in tools {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("[{tool}] {arg}"));
    }
}

/// The most characters of one tool result kept in a turn's text.
pub(crate) const TOOL_RESULT_CHARS: usize = 300;

/// Characters past a cut that are redacted with the kept ones.
const CLIP_MARGIN: usize = 4_096;

/// `s` without its secrets, cut at `max` characters: redacted first, so a
/// token cut in half cannot keep most of itself (a `ghp_` token clipped at
/// 400 characters used to keep 29 of its 36).
pub(crate) fn clip(s: &str, max: usize) -> String {
    // Only the start can be kept, so only the start is redacted: a window
    // wide enough for any secret that begins before the cut (a PEM key of
    // 4,096 bits is ~3,200 characters), not a tool result of megabytes.
    let window: String = s.trim().chars().take(max + CLIP_MARGIN).collect();
    let s = redact(&window);
    let s = s.trim();
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// The main argument of a tool call, for a one-line summary.
pub(crate) fn tool_arg(name: &str, input: &Value) -> String {
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    match name {
        "Bash" => field("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("notebook_path"))
        }
        "Grep" | "Glob" => field("pattern"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        "Task" => field("description"),
        _ => None,
    }
    .or_else(|| {
        input
            .as_object()
            .and_then(|o| o.values().find_map(Value::as_str).map(str::to_string))
    })
    .map(|s| clip(&s, 200))
    .unwrap_or_default()
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| match i.get("type").and_then(Value::as_str) {
                Some("text") => i.get("text").and_then(Value::as_str).map(str::to_string),
                _ => i.as_str().map(str::to_string),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Parses Claude Code transcript lines (`{"type": "user" | "assistant",
/// "message": {"content": …}, "uuid": …}`); other lines (summaries, system
/// notes) and lines that are not JSON are skipped. `first_line` is the
/// number of the first line given.
pub fn parse_claude_transcript(text: &str, first_line: usize) -> Vec<Turn> {
    parse_jsonl(text, first_line, |v, n| {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        if kind != "user" && kind != "assistant" {
            return None;
        }
        let time = v
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        let content = v
            .pointer("/message/content")
            .cloned()
            .unwrap_or(Value::Null);
        let mut tools = Vec::new();
        let mut results = Vec::new();
        let mut error = false;
        if let Value::Array(items) = &content {
            for item in items {
                match item.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let name = item
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("tool")
                            .to_string();
                        let arg = tool_arg(&name, item.get("input").unwrap_or(&Value::Null));
                        tools.push((name, arg));
                    }
                    Some("tool_result") => {
                        let is_error = item.get("is_error").and_then(Value::as_bool) == Some(true);
                        error |= is_error;
                        let body = text_of(item.get("content").unwrap_or(&Value::Null));
                        results.push(format!(
                            "{}{}",
                            if is_error { "error: " } else { "" },
                            clip(&body, TOOL_RESULT_CHARS)
                        ));
                    }
                    _ => {}
                }
            }
        }
        let said = text_of(&content);
        let role = if kind == "user" && said.trim().is_empty() && !results.is_empty() {
            "tool"
        } else {
            kind
        };
        let mut text = said.trim().to_string();
        push_tool_lines(&mut text, &tools);
        for r in &results {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("[result] {r}"));
        }
        if text.is_empty() {
            return None;
        }
        let uuid = v.get("uuid").and_then(Value::as_str);
        Some(Turn {
            text,
            tools,
            error,
            ..Turn::at(uuid, n, role, time)
        })
    })
}

/// The first file an `apply_patch` envelope updates or adds
/// (`*** Update File: path`), for a one-line summary.
pub(crate) fn patch_file(patch: &str) -> String {
    patch
        .lines()
        .find_map(|l| {
            l.strip_prefix("*** Update File: ")
                .or_else(|| l.strip_prefix("*** Add File: "))
        })
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Parses Codex CLI rollout lines (`{"timestamp", "type": "response_item",
/// "payload": {"type": "message" | "function_call" | "function_call_output"}}`).
/// Session metadata, events and the injected `<environment_context>` /
/// `<user_instructions>` messages are skipped.
pub fn parse_codex_rollout(text: &str, first_line: usize) -> Vec<Turn> {
    parse_jsonl(text, first_line, |v, n| {
        if v.get("type").and_then(Value::as_str) != Some("response_item") {
            return None;
        }
        let p = &v["payload"];
        let time = v
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        let call = p["call_id"].as_str().or_else(|| p["id"].as_str());
        let mut turn = Turn::at(call, n, "", time);
        match p["type"].as_str() {
            Some("message") => {
                let text = p["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                let t = text.trim_start();
                if t.is_empty()
                    || t.starts_with("<environment_context>")
                    || t.starts_with("<user_instructions>")
                {
                    return None;
                }
                turn.role = match p["role"].as_str() {
                    Some("assistant") => "assistant",
                    _ => "user",
                }
                .into();
                turn.text = text.trim().to_string();
                turn.id = format!("line{n}");
            }
            Some("function_call") => {
                let name = p["name"].as_str().unwrap_or("tool");
                let args: Value = p["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or_else(|| p["arguments"].clone());
                let (tool, arg) = match name {
                    "shell" | "exec_command" | "local_shell" => {
                        let cmd = match &args["command"] {
                            Value::Array(parts) => {
                                let parts: Vec<&str> =
                                    parts.iter().filter_map(Value::as_str).collect();
                                // ["bash", "-lc", "cargo test"] → "cargo test"
                                match parts.as_slice() {
                                    [_, flag, script] if flag.starts_with('-') => {
                                        script.to_string()
                                    }
                                    _ => parts.join(" "),
                                }
                            }
                            Value::String(s) => s.clone(),
                            _ => String::new(),
                        };
                        ("Bash".to_string(), clip(&cmd, 200))
                    }
                    "apply_patch" => {
                        let patch = args["input"].as_str().or(args.as_str()).unwrap_or("");
                        ("Edit".to_string(), patch_file(patch))
                    }
                    other => (other.to_string(), tool_arg(other, &args)),
                };
                turn.role = "assistant".into();
                turn.text = format!("[{tool}] {arg}");
                turn.tools.push((tool, arg));
            }
            Some("function_call_output") => {
                let raw = p["output"]
                    .as_str()
                    .map_or_else(|| p["output"].to_string(), str::to_string);
                let (body, code) = match serde_json::from_str::<Value>(&raw) {
                    Ok(o) => (
                        o["output"].as_str().unwrap_or(&raw).to_string(),
                        o.pointer("/metadata/exit_code").and_then(Value::as_i64),
                    ),
                    Err(_) => (raw.clone(), None),
                };
                turn.error = code.is_some_and(|c| c != 0);
                turn.role = "tool".into();
                turn.text = format!(
                    "[result] {}{}",
                    if turn.error { "error: " } else { "" },
                    clip(&body, TOOL_RESULT_CHARS)
                );
            }
            _ => return None,
        }
        Some(turn)
    })
}

/// The sentences of an assistant's text that say what is, not what it is
/// about to do: "I'll look at how Console computes its width" and "Let me
/// check the tests" are intentions, not conclusions, and are left out.
fn conclusions(text: &str) -> String {
    const INTENTIONS: [&str; 14] = [
        "i'll ",
        "i will ",
        "let me ",
        "let's ",
        "i'm going to ",
        "i am going to ",
        "now i'll ",
        "now let me ",
        "next, i",
        "next i'll",
        "first, i'll",
        "first, let me",
        "i need to ",
        "i should ",
    ];
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let end = matches!(b, b'.' | b'!' | b'?' | b':')
            && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if end || i + 1 == bytes.len() {
            let sentence = text[start..=i].trim();
            let lower = sentence.to_lowercase();
            if !sentence.is_empty() && !INTENTIONS.iter().any(|p| lower.starts_with(p)) {
                out.push(sentence);
            }
            start = i + 1;
        }
    }
    out.join(" ")
}

/// What a failed tool's output says went wrong, in one line: its first line
/// and the lines that name the failure (`AssertionError: …`, `FAILED
/// tests/…`, `panicked at`, `error[E0308]: …`), not only the first line,
/// which for a test run is its progress dots (`F.....`).
fn error_gist(text: &str) -> String {
    let body = text
        .find("[result] error:")
        .map_or(text, |i| &text[i + "[result] error:".len()..]);
    let lines: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let Some(&first) = lines.first() else {
        return String::new();
    };
    let mut kept = vec![first];
    for l in lines.iter().skip(1).filter(|l| names_failure(l)) {
        if kept.len() == 3 {
            break;
        }
        if !kept.contains(l) {
            kept.push(l);
        }
    }
    // A traceback ends with its error: keep the last telling line too.
    if let Some(last) = lines.iter().rev().find(|l| names_failure(l))
        && !kept.contains(last)
    {
        if kept.len() == 3 {
            kept.pop();
        }
        kept.push(last);
    }
    clip(&kept.join(" … "), 300)
}

/// Whether an output line names a failure: an exception or error class
/// (`AssertionError`, `ValueError:`), a failed test, a panic, a compiler or
/// tool error.
fn names_failure(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    line.starts_with("FAILED")
        || line.starts_with("E ")
        || lower.starts_with("error")
        || lower.starts_with("fatal")
        || lower.contains("panicked")
        || line
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w.len() > 5 && (w.ends_with("Error") || w.ends_with("Exception")))
}

/// An extractive summary of some turns, secrets removed: what the user
/// asked, what the assistant concluded, files touched, commands run and
/// errors met. Empty when the turns hold nothing worth keeping.
pub fn summarize(turns: &[Turn]) -> String {
    let mut asked = Vec::new();
    let mut said = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut commands = Vec::new();
    let mut errors = Vec::new();
    for t in turns {
        match t.role.as_str() {
            "user" => asked.push(clip(&t.text, 400)),
            "assistant" => {
                let text: String = t
                    .text
                    .lines()
                    .filter(|l| !l.starts_with('['))
                    .collect::<Vec<_>>()
                    .join(" ");
                let concluded = conclusions(&text);
                if !concluded.trim().is_empty() {
                    said.push(clip(&concluded, 400));
                }
                for (tool, arg) in &t.tools {
                    match tool.as_str() {
                        "Bash" => commands.push(arg.clone()),
                        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Read"
                            if !arg.is_empty() && !files.contains(arg) =>
                        {
                            files.push(arg.clone());
                        }
                        _ => {}
                    }
                }
            }
            _ if t.error => errors.push(error_gist(&t.text)),
            _ => {}
        }
    }
    let mut out = String::new();
    let mut section = |title: &str, items: &[String]| {
        if !items.is_empty() {
            out.push_str(&format!("**{title}:**\n"));
            for i in items {
                out.push_str(&format!("- {}\n", i.replace('\n', " ")));
            }
        }
    };
    section("Asked", &asked);
    section("Concluded", &said);
    section("Files", &files);
    section("Commands", &commands);
    section("Errors", &errors);
    redact(out.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = r#"{"type":"summary","summary":"Login bug"}
{"type":"user","uuid":"u1","timestamp":"2026-11-22T06:00:00Z","message":{"role":"user","content":"The login endpoint returns 500 since yesterday. Please fix it."}}
{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":[{"type":"text","text":"I'll look at the handler."},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"src/auth/login.rs"}}]}}
{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"fn login() { ... }"}]}}
{"type":"assistant","uuid":"a2","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cargo test auth"}}]}}
{"type":"user","uuid":"u3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"thread panicked: OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234 missing scope"}]}}
{"type":"assistant","uuid":"a3","message":{"role":"assistant","content":[{"type":"text","text":"Decided: hash with argon2 and keep the session TTL at 5 minutes."},{"type":"tool_use","id":"t3","name":"Edit","input":{"file_path":"src/auth/login.rs","old_string":"a","new_string":"b"}}]}}
not json at all
"#;

    #[test]
    fn turns_summary_and_redaction() {
        let turns = parse_claude_transcript(FIXTURE, 0);
        assert_eq!(turns.len(), 6);
        assert_eq!(turns[0].id, "u1");
        assert_eq!(turns[0].line, 1);
        assert_eq!(turns[2].role, "tool");
        assert!(turns[4].error);
        assert_eq!(
            turns[3].tools,
            [("Bash".to_string(), "cargo test auth".to_string())]
        );
        let s = summarize(&turns);
        assert!(s.contains("login endpoint returns 500"), "{s}");
        assert!(s.contains("argon2"), "{s}");
        assert!(
            s.contains("src/auth/login.rs") && s.contains("cargo test auth"),
            "{s}"
        );
        assert!(s.contains("**Errors:**"), "{s}");
        assert!(!s.contains("sk-proj"), "{s}");
    }

    #[test]
    fn a_failed_test_run_keeps_the_line_that_says_why() {
        let out = "[result] error: F.....\n\n=== FAILURES ===\n___ test_cache ___\n\n    def test_cache():\n\
                   >       assert get(1) == 2\nE       AssertionError: assert 1 == 2\n\n\
                   FAILED tests/test_cache.py::test_cache - AssertionError: assert 1 == 2\n1 failed, 5 passed";
        let mut turn = Turn::at(Some("u9"), 9, "tool", None);
        turn.text = out.into();
        turn.error = true;
        let s = summarize(&[turn]);
        assert!(s.contains("F....."), "{s}");
        assert!(s.contains("AssertionError: assert 1 == 2"), "{s}");
        assert!(s.contains("FAILED tests/test_cache.py::test_cache"), "{s}");
        assert!(!s.contains("def test_cache"), "{s}");
    }

    #[test]
    fn codex_rollouts_become_turns() {
        let rollout = r#"{"timestamp":"2026-11-21T10:00:00Z","type":"session_meta","payload":{"id":"c-1","cwd":"/w"}}
{"timestamp":"2026-11-21T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}
{"timestamp":"2026-11-21T10:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Why does the cache test fail?"}]}}
{"timestamp":"2026-11-21T10:00:03Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo test cache\"]}","call_id":"call_1"}}
{"timestamp":"2026-11-21T10:00:09Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"test cache_ttl ... FAILED\",\"metadata\":{\"exit_code\":101}}"}}
{"timestamp":"2026-11-21T10:00:10Z","type":"event_msg","payload":{"type":"token_count"}}
{"timestamp":"2026-11-21T10:00:12Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The TTL constant was in seconds, the test expects minutes."}]}}
"#;
        let turns = parse_codex_rollout(rollout, 0);
        let roles: Vec<&str> = turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
        assert_eq!(turns[1].tools, [("Bash".into(), "cargo test cache".into())]);
        assert_eq!(turns[1].id, "call_1");
        assert!(turns[2].error);
        let s = summarize(&turns);
        assert!(
            s.contains("cache test fail")
                && s.contains("cargo test cache")
                && s.contains("**Errors:**"),
            "{s}"
        );
    }

    #[test]
    fn concluded_keeps_conclusions_not_intentions() {
        assert_eq!(
            conclusions(
                "I'll look at how Console computes its width. The width comes from os.get_terminal_size! Let me check the tests."
            ),
            "The width comes from os.get_terminal_size!"
        );
        assert_eq!(conclusions("Let me look: now I'll read it."), "");
        assert_eq!(
            conclusions("Fixed: the cache TTL was in seconds"),
            "Fixed: the cache TTL was in seconds"
        );
    }

    #[test]
    fn a_token_at_the_clip_edge_loses_all_of_itself() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let text = format!("{}{token}", "x ".repeat(190));
        let clipped = clip(&text, 400);
        assert!(!clipped.contains("ghp_abc"), "{clipped}");
    }
}
