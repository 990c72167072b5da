//! OpenCode sessions as turns.
//!
//! OpenCode (anomalyco/opencode, formerly sst/opencode) keeps a session as
//! messages and their parts, not as one transcript file:
//!
//! - current releases: the SQLite database `opencode.db` in its data folder
//!   (`$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`; other
//!   channels write `opencode-<channel>.db`, and `OPENCODE_DB` moves it),
//!   tables `message(id, session_id, time_created, data)` and
//!   `part(id, message_id, session_id, data)` whose `data` column is the JSON
//!   of the message or part without its ids (`session/session.sql.ts`);
//! - older releases: JSON files under `storage/` in the same folder,
//!   `message/<sessionID>/<messageID>.json` and `part/<messageID>/<partID>.json`
//!   (what `storage/json-migration.ts` reads into the database).
//!
//! The caller lays either store out as one JSON line per message in order,
//! `{"info": <message>, "parts": [<part>, …]}` — the `MessageV2.WithParts`
//! shape OpenCode's own API and `opencode export` return — and this module
//! reads those lines. A message is `{id, role: "user" | "assistant",
//! time: {created: <ms>}}`; the parts that carry words are `text` (`text`,
//! `synthetic` for text OpenCode injected itself), `file` (`filename`) and
//! `tool` (`tool`, `callID`, `state: {status: "completed" | "error" | …,
//! input, output, error}`); reasoning, step, snapshot and patch parts are
//! skipped (`session/message-v2.ts`).

use serde_json::Value;

use crate::transcript::{
    TOOL_RESULT_CHARS, Turn, clip, parse_jsonl, patch_file, push_tool_lines, tool_arg,
};

/// A tool call of OpenCode as `(tool, main argument)`, its built-in tools
/// (`bash`, `read`, `edit`, … with camelCase `filePath`) named as the other
/// clients' are, so the summary lists commands and files alike.
fn tool_call(name: &str, input: &Value) -> (String, String) {
    let field = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or("");
    let (tool, arg) = match name {
        "bash" => ("Bash", field("command").to_string()),
        "read" => ("Read", field("filePath").to_string()),
        "write" => ("Write", field("filePath").to_string()),
        "edit" | "multiedit" => ("Edit", field("filePath").to_string()),
        "patch" | "apply_patch" => ("Edit", patch_file(field("patchText"))),
        "grep" | "glob" => (
            if name == "grep" { "Grep" } else { "Glob" },
            field("pattern").to_string(),
        ),
        "webfetch" => ("WebFetch", field("url").to_string()),
        "websearch" => ("WebSearch", field("query").to_string()),
        "task" => ("Task", field("description").to_string()),
        other => return (other.to_string(), tool_arg(other, input)),
    };
    (tool.to_string(), clip(&arg, 200))
}

/// Milliseconds since the epoch as RFC 3339.
fn millis(v: &Value) -> Option<String> {
    let ms = v.as_i64()?;
    jiff::Timestamp::from_millisecond(ms)
        .ok()
        .map(|t| t.to_string())
}

/// Parses an OpenCode session laid out as one `{"info", "parts"}` line per
/// message (see the module comment). Each message gives a `user` or
/// `assistant` turn (its id the message's), and each finished tool call
/// that said something or failed a `tool` turn with its output (its id the
/// call's), after its message's turn. Lines that are not JSON
/// are skipped. `first_line` is the number of the first line given.
pub fn parse_opencode_session(text: &str, first_line: usize) -> Vec<Turn> {
    parse_jsonl(text, first_line, |v, n| {
        let mut out = Vec::new();
        let info = &v["info"];
        let role = match info["role"].as_str() {
            Some("user") => "user",
            Some("assistant") => "assistant",
            _ => return Vec::new(),
        };
        // A tool call without an id is named after its message's.
        let id = Turn::at(info["id"].as_str(), n, role, None).id;
        let time = millis(&info["time"]["created"]);
        let parts = v["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
        let mut said = Vec::new();
        let mut tools = Vec::new();
        let mut results = Vec::new();
        for p in parts {
            match p["type"].as_str() {
                Some("text")
                    if p["synthetic"].as_bool() != Some(true)
                        && p["ignored"].as_bool() != Some(true) =>
                {
                    if let Some(t) = p["text"].as_str().map(str::trim)
                        && !t.is_empty()
                    {
                        said.push(t.to_string());
                    }
                }
                Some("file") => {
                    let name = p["filename"]
                        .as_str()
                        .or_else(|| p["source"]["path"].as_str())
                        .unwrap_or("file");
                    said.push(format!("[file] {name}"));
                }
                Some("tool") => {
                    let name = p["tool"].as_str().unwrap_or("tool");
                    let state = &p["state"];
                    tools.push(tool_call(name, &state["input"]));
                    let call = p["callID"]
                        .as_str()
                        .or_else(|| p["id"].as_str())
                        .map_or_else(|| format!("{id}:{}", results.len()), str::to_string);
                    match state["status"].as_str() {
                        Some("completed") => results.push((
                            call,
                            false,
                            clip(state["output"].as_str().unwrap_or(""), TOOL_RESULT_CHARS),
                            millis(&state["time"]["end"]),
                        )),
                        Some("error") => results.push((
                            call,
                            true,
                            clip(state["error"].as_str().unwrap_or(""), TOOL_RESULT_CHARS),
                            millis(&state["time"]["end"]),
                        )),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        let mut text = said.join("\n");
        push_tool_lines(&mut text, &tools);
        if !text.is_empty() {
            out.push(Turn {
                text,
                tools,
                ..Turn::at(Some(&id), n, role, time.clone())
            });
        }
        for (call, error, body, end) in results {
            if body.is_empty() && !error {
                continue;
            }
            out.push(Turn {
                text: format!("[result] {}{body}", if error { "error: " } else { "" }),
                error,
                ..Turn::at(Some(&call), n, "tool", end.or_else(|| time.clone()))
            });
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_tool_and_file_parts_become_turns() {
        let session = r#"{"info":{"id":"msg_01","sessionID":"ses_1","role":"user","time":{"created":1763700000000}},"parts":[{"id":"prt_01","type":"text","text":"Why is the build red?"},{"id":"prt_02","type":"text","text":"Called the Read tool","synthetic":true},{"id":"prt_03","type":"file","mime":"text/plain","filename":"ci.log","url":"file:///w/ci.log"}]}
{"info":{"id":"msg_02","sessionID":"ses_1","role":"assistant","time":{"created":1763700001000}},"parts":[{"id":"prt_04","type":"step-start"},{"id":"prt_05","type":"reasoning","text":"thinking hard","time":{"start":1}},{"id":"prt_06","type":"tool","callID":"call_a","tool":"bash","state":{"status":"completed","input":{"command":"cargo build"},"output":"error[E0308]: mismatched types","title":"cargo build","metadata":{},"time":{"start":1763700001500,"end":1763700002000}}},{"id":"prt_07","type":"tool","callID":"call_b","tool":"edit","state":{"status":"error","input":{"filePath":"src/lib.rs","oldString":"a","newString":"b"},"error":"oldString not found","time":{"start":1,"end":2}}},{"id":"prt_08","type":"text","text":"The return type was u32, not usize."}]}
not json
"#;
        let turns = parse_opencode_session(session, 0);
        let roles: Vec<&str> = turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool"]);
        assert_eq!(turns[0].id, "msg_01");
        assert_eq!(turns[0].text, "Why is the build red?\n[file] ci.log");
        assert_eq!(turns[0].time.as_deref(), Some("2025-11-21T04:40:00Z"));
        assert_eq!(
            turns[1].tools,
            [
                ("Bash".into(), "cargo build".into()),
                ("Edit".into(), "src/lib.rs".into())
            ]
        );
        assert!(turns[1].text.starts_with("The return type was u32"));
        assert!(!turns[1].text.contains("thinking hard"));
        assert_eq!(turns[2].id, "call_a");
        assert!(!turns[2].error && turns[2].text.contains("mismatched types"));
        assert!(turns[3].error && turns[3].text.contains("oldString not found"));
        assert_eq!(turns[3].line, 1);
        let s = crate::summarize(&turns);
        assert!(
            s.contains("build red") && s.contains("cargo build") && s.contains("src/lib.rs"),
            "{s}"
        );
        assert!(s.contains("**Errors:**"), "{s}");
    }
}
