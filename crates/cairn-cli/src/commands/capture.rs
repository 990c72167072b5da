//! `cairn hook <client> <event>` (run by the client; fails open) and
//! `cairn hooks install <client>`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn::HookInput;
use serde_json::{Value, json};

use crate::args::{Cli, HookClient, TranscriptArgs};
use crate::project::load_config;

fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))
}

/// The newest rollout file of a Codex session under `$CODEX_HOME/sessions`.
fn codex_rollout(session: &str) -> Option<PathBuf> {
    fn walk(dir: &Path, session: &str, best: &mut Option<(std::time::SystemTime, PathBuf)>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, session, best);
            } else if p.extension().is_some_and(|x| x == "jsonl")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains(session))
            {
                let t = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
                    *best = Some((t, p));
                }
            }
        }
    }
    if session.is_empty() {
        return None;
    }
    let mut best = None;
    walk(&codex_home()?.join("sessions"), session, &mut best);
    best.map(|(_, p)| p)
}

/// Codex's `notify` JSON (passed as the last argument) as hook input.
fn codex_input(arg: &str) -> HookInput {
    let v: Value = serde_json::from_str(arg).unwrap_or_default();
    let session = ["thread-id", "thread_id", "session_id", "conversation-id"]
        .iter()
        .find_map(|k| v[*k].as_str())
        .unwrap_or_default()
        .to_string();
    HookInput {
        transcript_path: codex_rollout(&session)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        session_id: session,
        cwd: v["cwd"].as_str().unwrap_or_default().to_string(),
        hook_event_name: v["type"].as_str().unwrap_or("notify").to_string(),
    }
}

/// Changes `.cairn/hooks/health.json` (read, changed by `change`, written
/// whole by a rename); a file that cannot be read starts empty, one that
/// cannot be written is left as it was: hooks fail open.
pub(crate) fn update_health(root: &Path, change: impl FnOnce(&mut Value)) {
    let path = root.join(".cairn").join("hooks").join("health.json");
    let mut health: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    if !health.is_object() {
        health = json!({});
    }
    change(&mut health);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    if std::fs::write(
        &tmp,
        serde_json::to_string_pretty(&health).unwrap_or_default(),
    )
    .is_ok()
    {
        let _ = std::fs::rename(&tmp, &path);
    }
}

/// Records the outcome of a hook run in `.cairn/hooks/health.json`.
fn record_health(root: &Path, client: &str, outcome: Result<String, String>) {
    update_health(root, |health| {
        let now = jiff::Timestamp::now().to_string();
        let entry = &mut health[client];
        if !entry.is_object() {
            *entry = json!({});
        }
        match outcome {
            Ok(what) => {
                entry["last_success"] = json!(now);
                entry["last_result"] = json!(cairn::redact_secrets(&what));
            }
            // Whatever failed, no secret it quoted reaches the file (or doctor).
            Err(e) => {
                entry["last_error"] = json!({"time": now, "message": cairn::redact_secrets(&e)});
            }
        }
    });
}

/// Runs the capture within the configured budget. Never fails: every
/// problem is recorded in the hook health, not reported to the agent.
pub fn hook(cli: &Cli, client: HookClient, event: &str) {
    let input: HookInput = match client {
        HookClient::ClaudeCode => {
            let mut stdin = String::new();
            let _ = std::io::stdin().read_to_string(&mut stdin);
            serde_json::from_str(&stdin).unwrap_or_default()
        }
        // Codex runs `notify` with the event as its last argument.
        HookClient::Codex => codex_input(event),
    };
    let event = input.hook_event_name.clone();
    let start = if input.cwd.is_empty() {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
    } else {
        PathBuf::from(&input.cwd)
    };
    let root = match &cli.project {
        Some(p) => p.clone(),
        None => cairn::find_project_root(&start),
    };
    let name = match client {
        HookClient::ClaudeCode => "claude-code",
        HookClient::Codex => "codex",
    };
    let config = match load_config(cli, &root) {
        Ok(c) => c,
        Err(e) => return record_health(&root, name, Err(format!("{e:#}"))),
    };
    let budget = Duration::from_millis(config.capture.budget_ms.max(100));
    let (tx, rx) = std::sync::mpsc::channel();
    let worker_root = root.clone();
    std::thread::spawn(move || {
        let run = || -> anyhow::Result<(String, Option<String>)> {
            let engine = cairn::open(&worker_root, &config)?;
            let c = engine.capture(name, &input)?;
            let done = match c.log {
                Some(log) => format!(
                    "{event}: {} turns → {} ({} summary)",
                    c.turns,
                    log.display(),
                    c.summary
                ),
                None => format!("{event}: nothing new"),
            };
            Ok((done, c.llm_error))
        };
        let _ = tx.send(run().map_err(|e| format!("{e:#}")));
    });
    match rx.recv_timeout(budget) {
        Ok(Ok((done, llm_error))) => {
            // The capture worked; a model that failed is still worth knowing.
            if let Some(e) = llm_error {
                record_health(
                    &root,
                    name,
                    Err(format!(
                        "language model unavailable, extractive summary used: {e}"
                    )),
                );
            }
            record_health(&root, name, Ok(done));
        }
        Ok(Err(e)) => record_health(&root, name, Err(e)),
        Err(_) => record_health(
            &root,
            name,
            Err(format!(
                "gave up after {} ms (capture.budget_ms)",
                budget.as_millis()
            )),
        ),
    }
}

/// Adds `cairn hook claude-code <event>` for Stop and SessionEnd to the
/// project's `.claude/settings.json`, keeping everything else.
pub fn install(root: &Path, client: HookClient, print: bool) -> anyhow::Result<()> {
    if let HookClient::Codex = client {
        return install_codex(print);
    }
    let path = root.join(".claude").join("settings.json");
    let mut doc: Value = match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => serde_json::from_str(&t).map_err(|e| {
            anyhow::anyhow!("{} is not valid JSON ({e}); left unchanged", path.display())
        })?,
        _ => json!({}),
    };
    if !doc.is_object() {
        anyhow::bail!("{} is not a JSON object; left unchanged", path.display());
    }
    // Capture at Stop and SessionEnd; memory without asking at SessionStart
    // and UserPromptSubmit.
    for event in ["Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"] {
        let command = format!("cairn hook claude-code {event}");
        let list = &mut doc["hooks"][event];
        if !list.is_array() {
            *list = json!([]);
        }
        let present = list
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
            .any(|h| h["command"] == command.as_str());
        if !present && let Some(items) = list.as_array_mut() {
            items.push(json!({"hooks": [{"type": "command", "command": command, "timeout": 10}]}));
        }
    }
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    if print {
        say!("// {}\n{text}", path.display());
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.cairn-tmp");
    std::fs::write(&tmp, &text)?;
    std::fs::rename(&tmp, &path)?;
    say!(
        "capture hooks (Stop, SessionEnd) and recall hooks (SessionStart, UserPromptSubmit) in {}",
        path.display()
    );
    Ok(())
}

/// Sets `notify = ["cairn", "hook", "codex"]` in Codex's config.toml
/// (comments and other settings kept); refuses to replace another notifier.
fn install_codex(print: bool) -> anyhow::Result<()> {
    let path = codex_home()
        .ok_or_else(|| anyhow::anyhow!("no home folder to find ~/.codex"))?
        .join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| {
        anyhow::anyhow!("{} is not valid TOML ({e}); left unchanged", path.display())
    })?;
    let ours = ["cairn", "hook", "codex"];
    if let Some(existing) = doc.get("notify") {
        let same = existing
            .as_array()
            .is_some_and(|a| a.iter().filter_map(|v| v.as_str()).eq(ours.iter().copied()));
        if same {
            say!("codex already notifies cairn ({})", path.display());
            return Ok(());
        }
        anyhow::bail!(
            "{} already has notify = {}; Codex runs one notifier: call `cairn hook codex <json>` from it",
            path.display(),
            existing.to_string().trim()
        );
    }
    let mut arr = toml_edit::Array::new();
    for part in ours {
        arr.push(part);
    }
    doc["notify"] = toml_edit::value(arr);
    if print {
        say!(
            "# {}\nnotify = [\"cairn\", \"hook\", \"codex\"]",
            path.display()
        );
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("toml.cairn-tmp");
    std::fs::write(&tmp, doc.to_string())?;
    std::fs::rename(&tmp, &path)?;
    say!("codex notifies cairn after each turn ({})", path.display());
    Ok(())
}

/// `cairn transcript SESSION`: the original turns around `--turn`.
pub(crate) fn transcript(engine: &cairn::Engine, a: &TranscriptArgs) -> anyhow::Result<()> {
    let t = engine.transcript(&a.session, a.turn.as_deref(), a.context)?;
    if a.json {
        return crate::print::json(&t);
    }
    crate::print::transcript(&t);
    Ok(())
}
