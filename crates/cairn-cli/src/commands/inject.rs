//! `cairn hook claude-code SessionStart|UserPromptSubmit`: memory the agent
//! gets without asking, printed in Claude Code's hook output format
//! (`hookSpecificOutput.additionalContext`). Recall goes through the
//! project's warm daemon when one runs. Fails open: whatever goes wrong, or
//! takes longer than `[capture] budget_ms`, prints nothing and exits 0; the
//! health file records counts and tokens, never the injected text, and its
//! last [`RECENT_INJECTIONS`] injections (what the page's home shows): the
//! time, the event, the prompt's first [`PROMPT_EXCERPT_CHARS`] characters
//! with secrets redacted, and each memory's id with what let it through
//! (its similarity and the floor, or why a session digest chose it).

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use cairn::{Config, Injection};
use cairn_mcp::daemon::{RecallRequest, config_fingerprint, recall_via_daemon};
use serde::Deserialize;
use serde_json::json;

use crate::args::Cli;
use crate::commands::capture::{hook_root, update_health};
use crate::project::load_config;

/// Injections the health file keeps, newest last.
pub(crate) const RECENT_INJECTIONS: usize = 20;

/// Characters of a prompt the health file keeps (after redaction).
pub(crate) const PROMPT_EXCERPT_CHARS: usize = 160;

/// The hook events that inject rather than capture.
pub(crate) fn injects(event: &str) -> bool {
    matches!(event, "SessionStart" | "UserPromptSubmit")
}

/// What Claude Code passes these hooks on stdin (unknown fields ignored).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Input {
    cwd: String,
    prompt: String,
}

/// Recalls through the daemon when one answers, else here.
fn recall(
    root: &Path,
    config: &Config,
    query: &str,
    options: cairn::RecallOptions,
) -> anyhow::Result<Vec<cairn::Recalled>> {
    if std::env::var_os("CAIRN_NO_DAEMON").is_none()
        && let Some(hits) = recall_via_daemon(
            root,
            RecallRequest {
                query: query.to_string(),
                options: options.clone(),
                config: config_fingerprint(config),
            },
        )
    {
        return Ok(hits);
    }
    // No index yet: nothing to inject (never create one from a hook).
    if !cairn::paths::index_file(root).exists() && config.store.uri.trim().is_empty() {
        return Ok(Vec::new());
    }
    Ok(cairn::open(root, config)?.recall(query, &options)?)
}

/// Runs `git` in `root` and returns its output lines (none on any failure).
fn git_lines(root: &Path, args: &[&str]) -> Vec<String> {
    std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The branch and the files changed lately: uncommitted ones, then those of
/// the last five commits, at most 20.
fn git_context(root: &Path) -> (Option<String>, Vec<String>) {
    // `symbolic-ref` names a branch with no commit yet too; none when detached.
    let branch = git_lines(root, &["symbolic-ref", "--short", "-q", "HEAD"])
        .into_iter()
        .next();
    let mut changed: Vec<String> = git_lines(root, &["status", "--porcelain"])
        .into_iter()
        .filter_map(|l| {
            l.get(3..)
                .map(|p| p.rsplit(" -> ").next().unwrap_or(p).to_string())
        })
        .collect();
    for f in git_lines(root, &["log", "-n", "5", "--name-only", "--format="]) {
        if !changed.contains(&f) {
            changed.push(f);
        }
    }
    changed.truncate(20);
    (branch, changed)
}

/// The block for one event.
fn inject(root: &Path, config: &Config, event: &str, input: &Input) -> anyhow::Result<Injection> {
    let cfg = &config.inject;
    if event == "UserPromptSubmit" {
        if input.prompt.trim().is_empty() || config.embed.model == "none" {
            return Ok(Injection::default());
        }
        let hits = recall(root, config, &input.prompt, cairn::prompt_recall(cfg))?;
        return Ok(cairn::prompt_block(
            &hits,
            cfg.prompt_min_similarity,
            cfg.prompt_tokens,
        ));
    }
    let (branch, changed) = git_context(root);
    let project = root
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let query = cairn::session_query(&project, branch.as_deref(), &changed);
    let hits = if query.trim().is_empty() {
        Vec::new()
    } else {
        recall(root, config, &query, cairn::session_recall(cfg))?
    };
    Ok(cairn::session_block(
        cairn::last_session(&root.join(&config.memory.dir)),
        &hits,
        cfg.session_tokens,
    ))
}

/// Runs an injecting hook (see the module documentation).
pub(crate) fn hook(cli: &Cli, event: &str) {
    let mut stdin = String::new();
    let _ = std::io::stdin().read_to_string(&mut stdin);
    let parsed = serde_json::from_str::<Input>(&stdin);
    let unreadable = parsed.as_ref().err().map(|e| {
        format!(
            "stdin ({} bytes) is not the hook's JSON input: {e}; memories injected for the folder it ran in",
            stdin.len()
        )
    });
    let input: Input = parsed.unwrap_or_default();
    let root = hook_root(cli, &input.cwd);
    let prompt = excerpt(&input.prompt);
    let record = |root: &Path, event: &str, outcome| record(root, event, &prompt, outcome);
    // Garbage on stdin is an error of the hook's, counted in its health.
    if let Some(e) = unreadable {
        record(&root, event, Err(e));
    }
    let config = match load_config(cli, &root) {
        Ok(c) => c,
        Err(e) => return record(&root, event, Err(format!("{e:#}"))),
    };
    let budget = Duration::from_millis(config.capture.budget_ms.max(100));
    let (tx, rx) = std::sync::mpsc::channel();
    let (worker_root, worker_event) = (root.clone(), event.to_string());
    std::thread::spawn(move || {
        let out = inject(&worker_root, &config, &worker_event, &input);
        let _ = tx.send(out.map_err(|e| format!("{e:#}")));
    });
    match rx.recv_timeout(budget) {
        Ok(Ok(block)) => {
            if !block.text.is_empty() {
                let out = json!({"hookSpecificOutput": {
                    "hookEventName": event,
                    "additionalContext": block.text,
                }});
                crate::print::out_line(format_args!("{out}"));
            }
            record(&root, event, Ok(block));
        }
        Ok(Err(e)) => record(&root, event, Err(e)),
        Err(_) => record(
            &root,
            event,
            Err(format!(
                "gave up after {} ms (capture.budget_ms): nothing injected",
                budget.as_millis()
            )),
        ),
    }
}

/// A prompt as the health file keeps it: secrets redacted, on one line,
/// its first [`PROMPT_EXCERPT_CHARS`] characters.
fn excerpt(prompt: &str) -> String {
    let one_line = cairn::redact_secrets(prompt)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut out: String = one_line.chars().take(PROMPT_EXCERPT_CHARS).collect();
    if one_line.chars().nth(PROMPT_EXCERPT_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Records what was injected (counts and tokens) or why nothing was; an
/// injection that brought memories also joins the recent ones.
fn record(root: &Path, event: &str, prompt: &str, outcome: Result<Injection, String>) {
    update_health(root, |health| {
        let now = cairn::now_rfc3339();
        let entry = &mut health["claude-code"]["injected"][event];
        if !entry.is_object() {
            *entry = json!({"runs": 0, "with_memories": 0, "tokens": 0});
        }
        match outcome {
            Ok(b) => {
                let n = |e: &serde_json::Value, k: &str| e[k].as_u64().unwrap_or(0);
                let (runs, with, tokens) = (
                    n(entry, "runs"),
                    n(entry, "with_memories"),
                    n(entry, "tokens"),
                );
                entry["runs"] = json!(runs + 1);
                entry["with_memories"] = json!(with + u64::from(b.memories > 0));
                entry["tokens"] = json!(tokens + b.tokens as u64);
                entry["last"] = json!({
                    "time": now,
                    "memories": b.memories,
                    "tokens": b.tokens,
                    "last_session": b.last_session,
                    "why": b.reasons,
                });
                if b.memories > 0 || b.last_session {
                    let recent = &mut health["claude-code"]["recent"];
                    if !recent.is_array() {
                        *recent = json!([]);
                    }
                    if let Some(list) = recent.as_array_mut() {
                        list.push(json!({
                            "time": now,
                            "event": event,
                            "prompt": (event == "UserPromptSubmit").then_some(prompt),
                            "tokens": b.tokens,
                            "last_session": b.last_session,
                            "why": b.reasons,
                        }));
                        let extra = list.len().saturating_sub(RECENT_INJECTIONS);
                        list.drain(..extra);
                    }
                }
            }
            Err(e) => {
                entry["last_error"] = json!({"time": now, "message": cairn::redact_secrets(&e)});
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_kept_redacted_on_one_line_and_cut() {
        let kept = excerpt("deploy with\n  key AKIAIOSFODNN7EXAMPLE please");
        assert!(!kept.contains("AKIAIOSFODNN7EXAMPLE"), "{kept}");
        assert!(kept.starts_with("deploy with key "), "{kept}");
        let long = excerpt(&"word ".repeat(100));
        assert_eq!(long.chars().count(), PROMPT_EXCERPT_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
