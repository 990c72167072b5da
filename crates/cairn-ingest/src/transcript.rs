//! Agent transcripts (Claude Code's JSONL, Codex rollouts): turns, an extractive summary of
//! a stretch of them, and secret redaction. Pure functions: the caller reads
//! the file and keeps track of what was already captured.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;

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
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        if kind != "user" && kind != "assistant" {
            continue;
        }
        let n = first_line + i;
        let id = v
            .get("uuid")
            .and_then(Value::as_str)
            .map_or_else(|| format!("line{n}"), str::to_string);
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
        for (name, arg) in &tools {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("[{name}] {arg}"));
        }
        for r in &results {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("[result] {r}"));
        }
        if text.is_empty() {
            continue;
        }
        out.push(Turn {
            id,
            line: n,
            role: role.to_string(),
            text,
            tools,
            error,
            time,
        });
    }
    out
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
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("type").and_then(Value::as_str) != Some("response_item") {
            continue;
        }
        let n = first_line + i;
        let p = &v["payload"];
        let time = v
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut turn = Turn {
            id: p["call_id"]
                .as_str()
                .or_else(|| p["id"].as_str())
                .map_or_else(|| format!("line{n}"), str::to_string),
            line: n,
            role: String::new(),
            text: String::new(),
            tools: Vec::new(),
            error: false,
            time,
        };
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
                    continue;
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
            _ => continue,
        }
        out.push(turn);
    }
    out
}

/// Each secret's pattern and what replaces it (names and users stay).
static SECRETS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        // <private>…</private> spans, across lines.
        (r"(?s)<private>.*?</private>", "[redacted]"),
        // Provider keys and tokens with a known shape.
        (r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}", "[redacted]"),
        (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "[redacted]"),
        (r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", "[redacted]"),
        (r"\bgithub_pat_[A-Za-z0-9_]{20,}", "[redacted]"),
        (r"\bglpat-[A-Za-z0-9_\-]{20,}", "[redacted]"),
        (r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "[redacted]"),
        (r"\bxox[abprse]-[A-Za-z0-9\-]{10,}", "[redacted]"),
        (
            r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
            "[redacted]",
        ),
        (r"\bAIza[0-9A-Za-z_\-]{30,}", "[redacted]"),
        (r"\bya29\.[A-Za-z0-9_\-]{20,}", "[redacted]"),
        (r"\bnpm_[A-Za-z0-9]{36}\b", "[redacted]"),
        (r"\bpypi-[A-Za-z0-9_\-]{50,}", "[redacted]"),
        (r"\bhf_[A-Za-z0-9]{30,}\b", "[redacted]"),
        (
            r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
            "[redacted]",
        ),
        (r"\bdop_v1_[a-f0-9]{64}\b", "[redacted]"),
        (r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "[redacted]"),
        (r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}", "[redacted]"),
        (r"\bdapi[a-f0-9]{32}\b", "[redacted]"),
        (r"\blin_api_[A-Za-z0-9]{40}\b", "[redacted]"),
        (r"\bSK[0-9a-fA-F]{32}\b", "[redacted]"),
        (r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b", "[redacted]"),
        (
            r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
            "[redacted]",
        ),
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)-----END [A-Z ]*PRIVATE KEY-----",
            "[redacted]",
        ),
        // key = value / key: value for names that say secret (the name stays).
        (KEY_VALUE, "$1$2[redacted]"),
        // Authorization: Bearer … / Basic …
        (r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{12,}", "[redacted]"),
        (BASIC_AUTH, "$1[redacted]"),
        // The password of a URL's userinfo (postgres://user:pw@host).
        (URL_USERINFO, "$1:[redacted]@"),
    ]
    .iter()
    .filter_map(|(p, with)| Regex::new(p).ok().map(|r| (r, *with)))
    .collect()
});

/// `NAME=value`, `name: value` or JSON's `"name": "value"` where the name
/// says key, secret, token or password. A value already `[redacted]` is
/// taken as it is (redacting twice changes nothing more).
const KEY_VALUE: &str = r#"(?i)\b([A-Za-z0-9_]*(?:api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|secret|token|password|passwd)[A-Za-z0-9_]*"?)(\s*[:=]\s*)(\[redacted\]|"[^"]*"|'[^']*'|[^\s,;]+)"#;

/// `Authorization: Basic <base64>` (only after the header's name: "basic"
/// alone is a common word).
const BASIC_AUTH: &str =
    r"(?i)(authorization[\x22']?\s*[:=]\s*[\x22']?basic\s+)[A-Za-z0-9+/]{8,}={0,2}";

/// `scheme://user:password@`: the user stays, the password goes.
const URL_USERINFO: &str = r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]+):[^@\s/]+@";

/// `text` with secrets replaced by `[redacted]`: `<private>` spans, keys
/// and tokens of known shapes (OpenAI/Anthropic `sk-…`, AWS `AKIA…`, GitHub,
/// Slack, Google, JWTs, PEM private keys, bearer tokens) and the values of
/// `NAME=value` / `name: value` where the name says key, secret, token or
/// password.
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for (re, with) in SECRETS.iter() {
        out = re.replace_all(&out, *with).into_owned();
    }
    bare_aws_secrets(&out)
}

/// A bare AWS secret access key: 40 characters of base64 with upper and
/// lower case, a digit and a `/` or `+`, standing alone. Git hashes and
/// other hex strings have no `/` or `+`, so they stay.
fn bare_aws_secrets(text: &str) -> String {
    static RUN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-z0-9/+]{40}").expect("the bare-key pattern compiles"));
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || c == '/' || c == '+' || c == '=';
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in RUN.find_iter(text) {
        let k = m.as_str();
        let alone = !text[..m.start()].chars().next_back().is_some_and(is_b64)
            && !text[m.end()..].chars().next().is_some_and(is_b64);
        let mixed = k.contains(|c: char| c.is_ascii_uppercase())
            && k.contains(|c: char| c.is_ascii_lowercase())
            && k.contains(|c: char| c.is_ascii_digit())
            && k.contains(['/', '+']);
        if alone && mixed {
            out.push_str(&text[last..m.start()]);
            out.push_str("[redacted]");
            last = m.end();
        }
    }
    out.push_str(&text[last..]);
    out
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
                if !text.trim().is_empty() {
                    said.push(clip(&text, 400));
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
            _ if t.error => {
                let first = t
                    .text
                    .lines()
                    .find(|l| l.starts_with("[result] error:"))
                    .unwrap_or(&t.text);
                errors.push(clip(first.trim_start_matches("[result] error:"), 200));
            }
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

    /// Each line holds one secret (the part after `=>` must be gone) in the
    /// shapes the gitleaks and trufflehog rule families name; prose and git
    /// hashes around them stay.
    const SHAPES: &[(&str, &str)] = &[
        ("openai", "key sk-proj-AbCdEfGhIjKlMnOpQrStUv1234"),
        ("anthropic", "ANTHROPIC sk-ant-api03-AbCdEfGhIjKlMnOpQrSt"),
        ("aws key id", "AKIAIOSFODNN7EXAMPLE"),
        ("aws temp key id", "ASIAIOSFODNN7EXAMPL2"),
        (
            "aws secret, bare",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        (
            "aws secret, named",
            "aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
        ),
        ("github classic", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        (
            "github fine-grained",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        ),
        ("gitlab", "glpat-AbCdEfGhIjKlMnOpQrSt"),
        ("stripe live", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        ("stripe restricted", "rk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        ("slack bot", "xoxb-123456789012-abcdefghijkl"),
        (
            "slack webhook",
            "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
        ),
        ("google api", "AIzaSyA-abcdefghijklmnopqrstuvwxyz12345"),
        ("google oauth", "ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz"),
        ("npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
        (
            "pypi",
            "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTkwYWItY2RlZi0xMjM0LTU2Nzg5MGFiY2RlZgACJXsicGVy",
        ),
        ("hugging face", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
        (
            "sendgrid",
            "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        (
            "digitalocean",
            "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ),
        ("shopify", "shpat_0123456789abcdef0123456789abcdef"),
        ("square", "sq0atp-abcdefghijklmnopqrstuv"),
        ("databricks", "dapi0123456789abcdef0123456789abcdef"),
        ("linear", "lin_api_abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
        ("twilio", "SK0123456789abcdef0123456789abcdef"),
        (
            "telegram bot",
            "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
        ),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        ("bearer", "Authorization: Bearer abcdefghijklmnop123"),
        ("basic", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
        (
            "url userinfo",
            "postgres://cairn:s3cretPassw0rd@db.example:5432/kb",
        ),
        ("json password", r#"{"password": "hunter2hunter2"}"#),
        ("env password", "DB_PASSWORD=correct-horse-battery"),
        ("yaml token", "token: 0123456789abcdefABCDEF"),
        (
            "azure account key",
            "AccountKey=abcdefghijklmnopqrstuvwxyz0123456789+/ABCDEF==",
        ),
        (
            "pem",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        ),
        ("private span", "<private>my home address</private>"),
    ];

    /// The secret part of a fixture line: what must not survive.
    fn secret_of(line: &str) -> &str {
        for sep in ["= ", "=", ": ", " "] {
            if let Some((_, v)) = line.rsplit_once(sep)
                && v.len() >= 8
            {
                return v.trim_matches(|c| c == '"' || c == '}' || c == '{');
            }
        }
        line
    }

    #[test]
    fn at_least_25_credential_shapes_are_removed_and_prose_stays() {
        assert!(SHAPES.len() >= 25);
        for (name, line) in SHAPES {
            let secret = match *name {
                "url userinfo" => "s3cretPassw0rd",
                "pem" => "MIIEowIBAAKCAQEA",
                "private span" => "home address",
                "basic" => "dXNlcjpwYXNzd29yZA",
                _ => secret_of(line),
            };
            let r = redact(&format!("Before it, {line} and after it."));
            assert!(!r.contains(secret), "{name}: {secret} left in {r}");
            assert!(
                r.contains("Before it,") && r.contains("after it."),
                "{name}: {r}"
            );
        }
        // Prose, a basic setup and a git hash stay.
        let plain = "The basic configuration works; commit 3c20f27a9b1e4d5f60718293a4b5c6d7e8f90123 fixed it.";
        assert_eq!(redact(plain), plain);
    }

    #[test]
    fn a_token_at_the_clip_edge_loses_all_of_itself() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let text = format!("{}{token}", "x ".repeat(190));
        let clipped = clip(&text, 400);
        assert!(!clipped.contains("ghp_abc"), "{clipped}");
    }

    #[test]
    fn secrets_of_every_shape_are_removed() {
        let text = "key sk-ant-api03-abcdefghijklmnopqrstuv, aws AKIAABCDEFGHIJKLMNOP, \
                    gh ghp_abcdefghijklmnopqrstuvwxyz0123456789, password: hunter2secret, \
                    DB_PASSWORD=\"p@ss word\", Authorization: Bearer abcdefghijklmnop123, \
                    <private>my home address\nline two</private> done";
        let r = redact(text);
        for secret in [
            "sk-ant",
            "AKIAABCD",
            "ghp_",
            "hunter2",
            "p@ss",
            "abcdefghijklmnop123",
            "home address",
        ] {
            assert!(!r.contains(secret), "{secret} left in {r}");
        }
        assert!(
            r.contains("password: [redacted]") && r.ends_with("done"),
            "{r}"
        );
        assert_eq!(redact("nothing to hide here"), "nothing to hide here");
    }
}
