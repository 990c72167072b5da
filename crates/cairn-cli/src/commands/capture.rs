//! `cairn hook <client> <event>` (run by the client; fails open) and
//! `cairn hooks install <client>`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use cairn::HookInput;
use serde_json::{Value, json};

use super::jsontext::{Doc, Node, Seg};
use crate::args::{Cli, HookClient, TranscriptArgs};
use crate::project::load_config;

pub(crate) fn codex_home() -> Option<PathBuf> {
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

/// What cairn's OpenCode plugin pipes in: `{"session_id", "cwd",
/// "hook_event_name"}`; the session is read from OpenCode's own store.
fn opencode_input(stdin: &str, event: &str) -> HookInput {
    let v: Value = serde_json::from_str(stdin).unwrap_or_default();
    let session = v["session_id"].as_str().unwrap_or_default().to_string();
    HookInput {
        transcript_path: cairn::opencode_store(&session)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        session_id: session,
        cwd: v["cwd"].as_str().unwrap_or_default().to_string(),
        hook_event_name: v["hook_event_name"].as_str().unwrap_or(event).to_string(),
    }
}

/// What cairn's OpenClaw hook pipes in: `{"hook_event_name", "session_key",
/// "session_id", "session_file"}` of the session the event ends or compacts.
fn openclaw_input(stdin: &str, event: &str) -> HookInput {
    let v: Value = serde_json::from_str(stdin).unwrap_or_default();
    let field = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    let session = field("session_id");
    HookInput {
        transcript_path: cairn::openclaw_transcript(
            &field("session_key"),
            &session,
            &field("session_file"),
        )
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default(),
        session_id: session,
        cwd: String::new(),
        hook_event_name: v["hook_event_name"].as_str().unwrap_or(event).to_string(),
    }
}

fn client_name(client: HookClient) -> &'static str {
    match client {
        HookClient::ClaudeCode => "claude-code",
        HookClient::Codex => "codex",
        HookClient::Opencode => "opencode",
        HookClient::Openclaw => "openclaw",
    }
}

/// Changes `.cairn/hooks/health.json` (read, changed by `change`, written
/// whole by a rename); a file that cannot be read starts empty, one that
/// cannot be written is left as it was: hooks fail open.
pub(crate) fn update_health(root: &Path, change: impl FnOnce(&mut Value)) {
    let path = cairn::paths::hooks_health(root);
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
        let now = cairn::now_rfc3339();
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

/// The project a hook works on: `-C`, else the one around the folder the
/// client says it works in (else the current folder).
pub(crate) fn hook_root(cli: &Cli, cwd: &str) -> PathBuf {
    if let Some(p) = cli.project.first() {
        return p.clone();
    }
    let start = if cwd.is_empty() {
        std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
    } else {
        PathBuf::from(cwd)
    };
    cairn::find_project_root(&start)
}

/// Runs the capture within the configured budget. Never fails: every
/// problem is recorded in the hook health, not reported to the agent.
pub fn hook(cli: &Cli, client: HookClient, event: &str) {
    let stdin = || {
        let mut text = String::new();
        let _ = std::io::stdin().read_to_string(&mut text);
        text
    };
    let input: HookInput = match client {
        HookClient::ClaudeCode => {
            let text = stdin();
            match serde_json::from_str(&text) {
                Ok(input) => input,
                Err(e) => {
                    let root = hook_root(cli, "");
                    return record_health(
                        &root,
                        client_name(client),
                        Err(format!(
                            "stdin ({} bytes) is not the hook's JSON input: {e}",
                            text.len()
                        )),
                    );
                }
            }
        }
        // Codex runs `notify` with the event as its last argument.
        HookClient::Codex => codex_input(event),
        HookClient::Opencode => opencode_input(&stdin(), event),
        HookClient::Openclaw => openclaw_input(&stdin(), event),
    };
    let event = input.hook_event_name.clone();
    let root = hook_root(cli, &input.cwd);
    let name = client_name(client);
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

/// `word` as one word of a POSIX shell command line (Claude Code runs a
/// hook's command through the shell): as it is when it holds nothing the
/// shell reads specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,=@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Whether `program` (a command's first word, perhaps shell-quoted) names a
/// cairn binary: `cairn`, or a path to one, as an earlier install wrote it.
pub(crate) fn is_cairn_program(program: &str) -> bool {
    let program = program.trim_matches('\'');
    Path::new(program)
        .file_stem()
        .is_some_and(|stem| stem == "cairn")
}

/// Whether a Claude Code hook command is one cairn wrote for `event`
/// (`<cairn> hook claude-code <event>`, bare or behind the guard
/// [`claude_hook_command`] writes), whatever program path it names.
fn is_cairn_hook(command: &str, event: &str) -> bool {
    let Some(head) = command.strip_suffix(&format!(" hook claude-code {event}")) else {
        return false;
    };
    let program = match head.rsplit_once("; exec ") {
        Some((guard, program)) if guard.starts_with("command -v ") => program,
        Some(_) => return false,
        None => head,
    };
    is_cairn_program(program)
}

/// The Claude Code events cairn hooks: capture at Stop and SessionEnd,
/// memory without asking at SessionStart and UserPromptSubmit.
pub(crate) const CLAUDE_EVENTS: [&str; 4] =
    ["Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"];

/// The command line of cairn's Claude Code hook for `event`: run through
/// the shell (Claude Code runs hook commands with `sh`; on Windows with Git
/// Bash), it exits 0 silently when `program` cannot be found, so a
/// teammate's checkout without cairn gets no failing hook.
pub(crate) fn claude_hook_command(program: &str, event: &str) -> String {
    let p = shell_word(program);
    format!("command -v {p} >/dev/null 2>&1 || exit 0; exec {p} hook claude-code {event}")
}

/// The command of a hook (an object with a string `command`).
fn hook_command(doc: &Doc, hook: &Node) -> Option<String> {
    let c = hook.member("command")?;
    serde_json::from_str(&doc.text[c.start..c.end]).ok()
}

/// Where cairn's hooks for `event` are in a settings document: (group,
/// hook in it, hooks in that group). Groups and hooks of another shape
/// are the user's business and skipped.
fn cairn_hooks(doc: &Doc, event: &str) -> Vec<(usize, usize, usize)> {
    let root = doc.root();
    let Some(groups) = root
        .at(&["hooks".into(), event.into()])
        .and_then(Node::elements)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (gi, group) in groups.iter().enumerate() {
        let Some(hooks) = group.member("hooks").and_then(Node::elements) else {
            continue;
        };
        for (hi, hook) in hooks.iter().enumerate() {
            if hook_command(doc, hook).is_some_and(|c| is_cairn_hook(&c, event)) {
                out.push((gi, hi, hooks.len()));
            }
        }
    }
    out
}

/// Adds cairn's hooks (see [`CLAUDE_EVENTS`]) to a Claude Code settings
/// document as text, keeping every other byte; a hook an earlier install
/// wrote (perhaps naming cairn otherwise, perhaps unguarded) is updated,
/// not added beside it. `hooks` that is not an object, or one of cairn's
/// events that is not a list, is an error (`name` says which file) and
/// nothing is changed. Returns the objects it made (paths of keys).
pub(crate) fn add_claude_hooks(
    doc: &mut Doc,
    program: &str,
    name: &str,
) -> anyhow::Result<Vec<Vec<String>>> {
    let root = doc.root();
    if let Some(hooks) = root.member("hooks") {
        if hooks.members().is_none() {
            anyhow::bail!(
                "{name}: \"hooks\" is {}, not an object of events (Claude Code reads {{\"hooks\": {{\"Stop\": [...]}}}}); left unchanged",
                hooks.what(&doc.text)
            );
        }
        for event in CLAUDE_EVENTS {
            if let Some(list) = hooks.member(event)
                && list.elements().is_none()
            {
                anyhow::bail!(
                    "{name}: hooks.{event} is {}, not a list of hook groups (Claude Code reads \"{event}\": [{{\"hooks\": [...]}}]); left unchanged",
                    list.what(&doc.text)
                );
            }
        }
    }
    let mut created = Vec::new();
    for event in CLAUDE_EVENTS {
        let command = claude_hook_command(program, event);
        let found = cairn_hooks(doc, event);
        for &(gi, hi, _) in &found {
            let path: Vec<Seg> = vec![
                "hooks".into(),
                event.into(),
                gi.into(),
                "hooks".into(),
                hi.into(),
                "command".into(),
            ];
            if doc.value(&path) != Some(json!(command)) {
                doc.replace(&path, &json!(command))?;
            }
        }
        if !found.is_empty() {
            continue;
        }
        let group = json!({"hooks": [{"type": "command", "command": command, "timeout": 10}]});
        let root = doc.root();
        if root.member("hooks").is_none() {
            doc.insert_member(&[], "hooks", &json!({ event: [group] }))?;
            created.push(vec!["hooks".to_string()]);
        } else if root.at(&["hooks".into(), event.into()]).is_none() {
            doc.insert_member(&["hooks".into()], event, &json!([group]))?;
        } else {
            doc.push_element(&["hooks".into(), event.into()], &group)?;
            continue;
        }
        created.push(vec!["hooks".to_string(), event.to_string()]);
    }
    Ok(created)
}

/// Removes every hook cairn wrote from a Claude Code settings document, as
/// text: the hook, or its group when it held only that; then an event and
/// `hooks` left empty by it when setup made them (`created`; with no record,
/// whenever they are left empty). The user's own hooks stay as they are.
/// Whether the document changed.
pub(crate) fn remove_claude_hooks(
    doc: &mut Doc,
    created: Option<&[Vec<String>]>,
) -> anyhow::Result<bool> {
    let made = |path: &[&str]| created.is_none_or(|c| c.iter().any(|p| p == path));
    let empty = |doc: &Doc, path: &[Seg]| {
        doc.root().at(path).is_some_and(|n| {
            n.elements().is_some_and(<[_]>::is_empty) || n.members().is_some_and(<[_]>::is_empty)
        })
    };
    let mut changed = false;
    for event in CLAUDE_EVENTS {
        let list: Vec<Seg> = vec!["hooks".into(), event.into()];
        let mut here = false;
        // Last first: the places of the others stay as found.
        for (gi, hi, n) in cairn_hooks(doc, event).into_iter().rev() {
            let mut path = list.clone();
            path.push(gi.into());
            if n > 1 {
                path.extend(["hooks".into(), hi.into()]);
            }
            doc.remove(&path)?;
            here = true;
        }
        if here && empty(doc, &list) && made(&["hooks", event]) {
            doc.remove(&list)?;
        }
        changed |= here;
    }
    if changed && empty(doc, &["hooks".into()]) && made(&["hooks"]) {
        doc.remove(&["hooks".into()])?;
    }
    Ok(changed)
}

/// Adds cairn's hooks to the project's shared `.claude/settings.json`,
/// keeping everything else (`cairn setup claude-code` writes the user's
/// local file instead). The program is the one `mcp install` writes:
/// `cairn` when that is this program on PATH, else its absolute path (and a
/// notice on stderr).
pub fn install(root: &Path, client: HookClient, print: bool) -> anyhow::Result<()> {
    let program = super::install::announced_command();
    match client {
        HookClient::Codex => return install_codex(&program, print),
        HookClient::Opencode => return install_opencode(root, &program, print),
        HookClient::Openclaw => return install_openclaw(root, &program, print),
        HookClient::ClaudeCode => {}
    }
    let path = root.join(".claude").join("settings.json");
    let name = path.display().to_string();
    let before = super::userfile::read(&path)?;
    let mut doc = Doc::new(before.clone().unwrap_or_default(), &name)?;
    add_claude_hooks(&mut doc, &program, &name)?;
    if print {
        say!("// {name}\n{}", doc.text);
        return Ok(());
    }
    if before.as_deref() != Some(doc.text.as_str()) {
        super::userfile::write(&path, &doc.text, None)?;
    }
    say!(
        "capture hooks (Stop, SessionEnd) and recall hooks (SessionStart, UserPromptSubmit) in {} \
         (shared with the team; `cairn setup claude-code` writes your own .claude/settings.local.json \
         and adds the MCP server)",
        path.display()
    );
    Ok(())
}

/// Sets `notify = ["<cairn>", "hook", "codex"]` in Codex's config.toml
/// (comments and other settings kept; `<cairn>` is `program`); replaces a
/// notify an earlier install wrote, refuses to replace another notifier.
fn install_codex(program: &str, print: bool) -> anyhow::Result<()> {
    let path = codex_home()
        .ok_or_else(|| anyhow::anyhow!("no home folder to find ~/.codex"))?
        .join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| {
        anyhow::anyhow!("{} is not valid TOML ({e}); left unchanged", path.display())
    })?;
    let ours = [program, "hook", "codex"];
    if let Some(existing) = doc.get("notify") {
        let parts: Option<Vec<&str>> = existing
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
        match parts.as_deref() {
            Some(p) if p == ours => {
                say!("codex already notifies cairn ({})", path.display());
                return Ok(());
            }
            // Written by an earlier install, naming cairn otherwise.
            Some([cairn, "hook", "codex"]) if is_cairn_program(cairn) => {}
            _ => anyhow::bail!(
                "{} already has notify = {}; Codex runs one notifier: call `cairn hook codex <json>` from it",
                path.display(),
                existing.to_string().trim()
            ),
        }
    }
    let mut arr = toml_edit::Array::new();
    for part in ours {
        arr.push(part);
    }
    let line = format!("notify = {arr}");
    doc["notify"] = toml_edit::value(arr);
    if print {
        say!("# {}\n{line}", path.display());
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    super::userfile::write(&path, &doc.to_string(), Some(0o600))?;
    say!("codex notifies cairn after each turn ({})", path.display());
    Ok(())
}

/// The first line of the files cairn writes into other clients' folders:
/// a file that starts otherwise is the user's, never replaced.
pub(crate) const MARK: &str = "// Written by `cairn hooks install";

/// Writes `text` to `path` unless it already holds it; a file there that
/// cairn did not write is left alone (an error). Says what it did.
pub(crate) fn write_ours(path: &Path, text: &str, print: bool) -> anyhow::Result<bool> {
    let existing = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    if existing.as_deref() == Some(text) {
        if !print {
            say!("already installed: {}", path.display());
        }
        return Ok(false);
    }
    if let Some(t) = &existing
        && !t.starts_with(MARK)
    {
        anyhow::bail!(
            "{} exists and was not written by cairn; left unchanged (move it away to install)",
            path.display()
        );
    }
    if print {
        say!("// {}\n{text}", path.display());
        return Ok(false);
    }
    super::userfile::write(path, text, None)?;
    Ok(true)
}

/// The OpenCode plugin: on `session.idle` (or `session.status` idle, which
/// newer releases send instead) and `session.compacted` it pipes the session
/// id to `cairn hook opencode <event>` and returns at once.
pub(crate) fn opencode_plugin(cmd: &str) -> String {
    let cmd = serde_json::to_string(cmd).unwrap_or_else(|_| "\"cairn\"".into());
    format!(
        r#"{MARK} opencode`: captures this project's sessions into cairn's memory.
// Each time a session goes idle or is compacted, its id goes to
// `cairn hook opencode <event>`, which reads the new turns from OpenCode's own
// store. Fire and forget: a capture never blocks or fails the session.
import {{ spawn }} from "node:child_process"

const CAIRN = {cmd}

export const CairnCapture = async ({{ directory }}) => {{
  const last = new Map()
  const capture = (event, sessionID) => {{
    if (!sessionID) return
    const now = Date.now()
    if (now - (last.get(sessionID) ?? 0) < 2000) return
    last.set(sessionID, now)
    try {{
      const child = spawn(CAIRN, ["hook", "opencode", event], {{
        cwd: directory,
        stdio: ["pipe", "ignore", "ignore"],
      }})
      child.on("error", () => {{}})
      child.stdin.on("error", () => {{}})
      child.stdin.end(JSON.stringify({{ session_id: sessionID, cwd: directory, hook_event_name: event }}))
    }} catch {{}}
  }}
  return {{
    event: async ({{ event }}) => {{
      const id = event?.properties?.sessionID
      if (event?.type === "session.idle" || event?.type === "session.compacted") capture(event.type, id)
      else if (event?.type === "session.status" && event.properties?.status?.type === "idle") capture("session.idle", id)
    }},
  }}
}}
"#
    )
}

/// Writes `.opencode/plugins/cairn-capture.js` into the project (OpenCode
/// loads every file there at startup).
fn install_opencode(root: &Path, program: &str, print: bool) -> anyhow::Result<()> {
    let path = root
        .join(".opencode")
        .join("plugins")
        .join("cairn-capture.js");
    if write_ours(&path, &opencode_plugin(program), print)? {
        say!(
            "opencode captures each session when it goes idle or is compacted ({}; restart opencode)",
            path.display()
        );
    }
    Ok(())
}

/// The OpenClaw hook: `HOOK.md` (the events) and `handler.ts`, which pipes
/// the session's key, id and transcript to `cairn -C <project> hook openclaw`.
fn openclaw_hook(cmd: &str, root: &Path) -> (String, String) {
    let requires = if cmd == "cairn" {
        r#", "requires": { "bins": ["cairn"] }"#
    } else {
        ""
    };
    let hook_md = format!(
        r#"---
name: cairn-capture
description: "Capture each session's new turns into cairn's memory on /new, /reset, /stop and before compaction"
metadata: {{ "openclaw": {{ "emoji": "🪨", "events": ["command:new", "command:reset", "command:stop", "session:compact:before"]{requires} }} }}
---

# cairn capture

Written by `cairn hooks install openclaw` for the project {root}.
When a session ends (`/new`, `/reset`), is stopped (`/stop`) or is about to be
compacted, the handler hands its transcript to `cairn hook openclaw`, which
adds a summary of the turns since the last capture (secrets removed) to the
project's session log. It never blocks or fails the command.
"#,
        root = root.display()
    );
    let cmd = serde_json::to_string(cmd).unwrap_or_else(|_| "\"cairn\"".into());
    let project = serde_json::to_string(&root.to_string_lossy()).unwrap_or_default();
    let handler = format!(
        r#"{MARK} openclaw`: hands the session that ends or is
// compacted to `cairn hook openclaw`, which captures its new turns into the
// project's memory. Fire and forget: it never blocks or fails the command.
import {{ spawn }} from "node:child_process";

const CAIRN = {cmd};
const PROJECT = {project};

const handler = async (event) => {{
  try {{
    const ctx = event?.context ?? {{}};
    // /new and /reset: the session being replaced; /stop and compaction: this one.
    const entry = ctx.previousSessionEntry ?? ctx.sessionEntry ?? {{}};
    const name = `${{event.type}}:${{event.action}}`;
    const input = JSON.stringify({{
      hook_event_name: name,
      session_key: event.sessionKey ?? "",
      session_id: ctx.previousSessionEntry?.sessionId ?? ctx.sessionId ?? entry.sessionId ?? "",
      session_file: entry.sessionFile ?? "",
    }});
    const child = spawn(CAIRN, ["-C", PROJECT, "hook", "openclaw", name], {{
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    }});
    child.on("error", () => {{}});
    child.stdin.on("error", () => {{}});
    child.stdin.end(input);
    child.unref();
  }} catch {{}}
}};

export default handler;
"#
    );
    (hook_md, handler)
}

/// Writes the managed hook `cairn-capture` (`HOOK.md`, `handler.ts`) under
/// OpenClaw's state folder; OpenClaw sessions belong to no project, so the
/// hook names this one.
fn install_openclaw(root: &Path, program: &str, print: bool) -> anyhow::Result<()> {
    let dir = cairn::openclaw_state_dir()
        .context("no home folder to find ~/.openclaw (set OPENCLAW_STATE_DIR)")?
        .join("hooks")
        .join("cairn-capture");
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let (hook_md, handler) = openclaw_hook(program, &root);
    let handler_path = dir.join("handler.ts");
    if let Ok(existing) = std::fs::read_to_string(&handler_path)
        && existing.starts_with(MARK)
        && existing != handler
        && !print
    {
        anyhow::bail!(
            "{} already captures another project; OpenClaw sessions go to one project: remove {} first",
            handler_path.display(),
            dir.display()
        );
    }
    // HOOK.md is markdown: ours carries the mark in its body, not its first line.
    let md_path = dir.join("HOOK.md");
    match std::fs::read_to_string(&md_path) {
        Ok(t) if !t.contains("Written by `cairn hooks install openclaw`") => anyhow::bail!(
            "{} exists and was not written by cairn; left unchanged",
            md_path.display()
        ),
        _ => {}
    }
    let wrote = write_ours(&handler_path, &handler, print)?;
    if print {
        say!("// {}\n{hook_md}", md_path.display());
        return Ok(());
    }
    if std::fs::read_to_string(&md_path).ok().as_deref() != Some(hook_md.as_str()) {
        std::fs::write(&md_path, &hook_md)
            .with_context(|| format!("writing {}", md_path.display()))?;
    }
    if wrote {
        say!(
            "openclaw hook cairn-capture in {}: enable it with `openclaw hooks enable cairn-capture`, then restart the gateway",
            dir.display()
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_path_is_one_shell_word() {
        assert_eq!(shell_word("cairn"), "cairn");
        assert_eq!(shell_word("/opt/bin/cairn"), "/opt/bin/cairn");
        assert_eq!(shell_word("/my tools/cairn"), "'/my tools/cairn'");
        assert_eq!(shell_word("/it's/cairn"), r"'/it'\''s/cairn'");
    }

    #[test]
    fn a_hook_an_earlier_install_wrote_is_recognised_whatever_its_program() {
        for command in [
            "cairn hook claude-code Stop",
            "/opt/bin/cairn hook claude-code Stop",
            "'/my tools/cairn' hook claude-code Stop",
        ] {
            assert!(is_cairn_hook(command, "Stop"), "{command}");
        }
        assert!(!is_cairn_hook("cairn hook claude-code Stop", "SessionEnd"));
        assert!(!is_cairn_hook("other hook claude-code Stop", "Stop"));
        assert!(!is_cairn_hook("./lint.sh", "Stop"));
    }
}
