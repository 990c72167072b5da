//! OpenClaw session transcripts as turns.
//!
//! OpenClaw writes one JSONL transcript per session,
//! `~/.openclaw/agents/<agentId>/sessions/<sessionId>.jsonl` (the state
//! folder moves with `OPENCLAW_STATE_DIR`; `sessions.json` beside it maps
//! session keys to ids), through the pi agent's `SessionManager`
//! (OpenClaw's docs/reference/session-management-compaction.md;
//! badlogic/pi-mono `packages/coding-agent/src/core/session-manager.ts`):
//!
//! - the first line is the header `{"type": "session", "version": 3, "id",
//!   "timestamp", "cwd"}`;
//! - then entries `{"type", "id", "parentId", "timestamp", …}`: `message`
//!   (`"message": {"role": …}`), `compaction` (`summary`,
//!   `firstKeptEntryId`), `model_change`, `thinking_level_change`,
//!   `branch_summary`, `custom`, `custom_message`, `label`, `session_info`.
//!
//! Messages (pi-mono `packages/ai/src/types.ts`): `user` with `content` a
//! string or `text` / `image` blocks; `assistant` with `text`, `thinking`
//! and `toolCall` (`id`, `name`, `arguments`) blocks; `toolResult` with
//! `toolCallId`, `toolName`, `content` blocks and `isError`. Only messages
//! become turns; OpenClaw's own summaries and state entries are skipped.
//!
//! Releases from v2026.8 on keep sessions in a per-agent SQLite database
//! instead (`agents/<agentId>/agent/openclaw-agent.sqlite`), one
//! `transcript_events` row per entry; `cairn`'s `clients.rs` lays those rows
//! out as these same lines.

use serde_json::Value;

use crate::transcript::{TOOL_RESULT_CHARS, Turn, clip, parse_jsonl, patch_file, tool_arg};

/// A tool call of OpenClaw as `(tool, main argument)`: its shell (`exec`,
/// the pi agent's `bash`) and file tools (`path`) named as the other
/// clients' are.
fn tool_call(name: &str, args: &Value) -> (String, String) {
    let field = |k: &str| args.get(k).and_then(Value::as_str);
    let path = || field("path").or_else(|| field("file_path")).unwrap_or("");
    let (tool, arg) = match name {
        "exec" | "bash" => ("Bash", field("command").unwrap_or("").to_string()),
        "read" => ("Read", path().to_string()),
        "write" => ("Write", path().to_string()),
        "edit" => ("Edit", path().to_string()),
        "apply_patch" => (
            "Edit",
            patch_file(field("input").or_else(|| field("patch")).unwrap_or("")),
        ),
        "web_fetch" => ("WebFetch", field("url").unwrap_or("").to_string()),
        "web_search" => ("WebSearch", field("query").unwrap_or("").to_string()),
        other => return (other.to_string(), tool_arg(other, args)),
    };
    (tool.to_string(), clip(&arg, 200))
}

/// The words of a `content` (a string, or `text` blocks; an image is
/// `[image]`).
fn words(content: &Value) -> String {
    match content {
        Value::String(s) => s.trim().to_string(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(|t| t.trim().to_string()),
                Some("image") => Some("[image]".to_string()),
                _ => None,
            })
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Parses OpenClaw transcript lines (see the module comment): a `user` or
/// `assistant` turn per message (tool calls summarised in one line each),
/// a `tool` turn per tool result. Each turn's id is its entry's `id`; lines
/// that are not JSON are skipped. `first_line` is the number of the first
/// line given.
pub fn parse_openclaw_session(text: &str, first_line: usize) -> Vec<Turn> {
    parse_jsonl(text, first_line, |v, n| {
        if v["type"].as_str() != Some("message") {
            return None;
        }
        let m = &v["message"];
        let time = v["timestamp"].as_str().map(str::to_string);
        let mut turn = Turn::at(v["id"].as_str(), n, "", time);
        match m["role"].as_str() {
            Some("user") => {
                turn.role = "user".into();
                turn.text = words(&m["content"]);
            }
            Some("assistant") => {
                turn.role = "assistant".into();
                let mut lines = Vec::new();
                for b in m["content"].as_array().into_iter().flatten() {
                    match b["type"].as_str() {
                        Some("text") => {
                            if let Some(t) = b["text"].as_str().map(str::trim)
                                && !t.is_empty()
                            {
                                lines.push(t.to_string());
                            }
                        }
                        Some("toolCall") => {
                            let (tool, arg) =
                                tool_call(b["name"].as_str().unwrap_or("tool"), &b["arguments"]);
                            lines.push(format!("[{tool}] {arg}"));
                            turn.tools.push((tool, arg));
                        }
                        _ => {}
                    }
                }
                turn.text = lines.join("\n");
            }
            Some("toolResult") => {
                turn.role = "tool".into();
                turn.error = m["isError"].as_bool() == Some(true);
                turn.text = format!(
                    "[result] {}{}",
                    if turn.error { "error: " } else { "" },
                    clip(&words(&m["content"]), TOOL_RESULT_CHARS)
                );
            }
            _ => return None,
        }
        (!turn.text.trim().is_empty()).then_some(turn)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_become_turns_and_the_rest_is_skipped() {
        let session = r#"{"type":"session","version":3,"id":"5f0c8a1e-0000-4000-8000-000000000001","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/home/u/.openclaw/workspace"}
{"type":"model_change","id":"a1b2c3d4","parentId":null,"timestamp":"2026-03-02T09:00:00.010Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}
{"type":"message","id":"e0000001","parentId":"a1b2c3d4","timestamp":"2026-03-02T09:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"Rotate the nightly backup log please"}],"timestamp":1772442005000}}
{"type":"message","id":"e0000002","parentId":"e0000001","timestamp":"2026-03-02T09:00:07.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"secret plan"},{"type":"text","text":"Checking the cron entry."},{"type":"toolCall","id":"toolu_1","name":"exec","arguments":{"command":"crontab -l"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","timestamp":1772442007000}}
{"type":"message","id":"e0000003","parentId":"e0000002","timestamp":"2026-03-02T09:00:08.000Z","message":{"role":"toolResult","toolCallId":"toolu_1","toolName":"exec","content":[{"type":"text","text":"crontab: no crontab for u"}],"isError":true,"timestamp":1772442008000}}
{"type":"compaction","id":"e0000004","parentId":"e0000003","timestamp":"2026-03-02T09:10:00.000Z","summary":"old stuff","firstKeptEntryId":"e0000002","tokensBefore":90000}
{"type":"message","id":"e0000005","parentId":"e0000004","timestamp":"2026-03-02T09:00:09.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"toolu_2","name":"write","arguments":{"path":"/etc/logrotate.d/backup","content":"..."}},{"type":"text","text":"Added a logrotate rule instead of cron."}],"stopReason":"stop","timestamp":1772442009000}}
"#;
        let turns = parse_openclaw_session(session, 0);
        let ids: Vec<&str> = turns.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["e0000001", "e0000002", "e0000003", "e0000005"]);
        assert_eq!(turns[0].line, 2);
        assert_eq!(turns[0].role, "user");
        assert_eq!(turns[1].tools, [("Bash".into(), "crontab -l".into())]);
        assert!(!turns[1].text.contains("secret plan"));
        assert!(turns[2].error && turns[2].role == "tool");
        assert_eq!(
            turns[3].tools,
            [("Write".into(), "/etc/logrotate.d/backup".into())]
        );
        let s = crate::summarize(&turns);
        assert!(
            s.contains("nightly backup")
                && s.contains("logrotate rule")
                && s.contains("crontab -l")
                && s.contains("/etc/logrotate.d/backup")
                && s.contains("**Errors:**"),
            "{s}"
        );
    }
}
