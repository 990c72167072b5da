//! `cairn setup <agent>`: one command that wires an agent to cairn: its MCP
//! server and, where cairn captures the agent's sessions, the capture and
//! memory hooks. By default into the user's own settings (files of the
//! project kept out of git through `.git/info/exclude`, or the agent's
//! per-user file); with `--shared` into the project's shared files, meant to
//! be committed. `--print` shows what would be added and writes nothing;
//! `--undo` removes exactly what setup adds and keeps every other entry.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::capture::{
    MARK, add_claude_hooks, codex_home, is_cairn_program, opencode_plugin, read_json_object,
    remove_claude_hooks, write_ours,
};
use super::install::write_atomic;
use crate::args::SetupClient;

/// The name of cairn's MCP server entry.
const NAME: &str = "cairn";

/// The comment line above each path setup keeps out of git in
/// `.git/info/exclude` (`--undo` removes the pair).
const EXCLUDE_MARK: &str = "# cairn setup: this clone's own settings, not committed";

/// What one file gets from setup.
enum Edit {
    /// Entries in a JSON document: added by `add`, removed by `remove`
    /// (each says whether the document changed); `snippet` is what
    /// `--print` shows.
    Json {
        add: Box<dyn Fn(&mut Value) -> bool>,
        remove: Box<dyn Fn(&mut Value) -> bool>,
        snippet: Value,
    },
    /// A whole file cairn writes (its first line carries [`MARK`]).
    Owned { text: String },
    /// Codex's `config.toml`: the MCP server and `notify`.
    Codex { program: String },
}

/// One file setup edits.
struct Step {
    path: PathBuf,
    /// The path relative to the project when the file is in it.
    rel: Option<String>,
    /// What it adds there, in words.
    what: &'static str,
    edit: Edit,
}

fn agent_name(client: SetupClient) -> &'static str {
    match client {
        SetupClient::ClaudeCode => "Claude Code",
        SetupClient::Codex => "Codex",
        SetupClient::Cursor => "Cursor",
        SetupClient::Vscode => "VS Code",
        SetupClient::Opencode => "OpenCode",
    }
}

/// `cairn setup`: see the module documentation.
pub(crate) fn run(
    root: &Path,
    client: SetupClient,
    shared: bool,
    print: bool,
    undo: bool,
) -> anyhow::Result<()> {
    let program = if undo {
        super::install::command()
    } else {
        super::install::announced_command()
    };
    let steps = plan(root, client, shared, &program)?;
    if matches!(client, SetupClient::Codex) && shared {
        eprintln!(
            "Codex keeps MCP servers and notify in ~/.codex/config.toml, per user: nothing there is shared"
        );
    }
    // Local settings stay out of git; a file git already tracks is the
    // team's, and only --shared changes it. Checked before anything is written.
    if !shared && !undo && !print {
        for rel in steps.iter().filter_map(|s| s.rel.as_deref()) {
            if git_tracked(root, rel) {
                bail!(
                    "{rel} is tracked by git (shared with the team): `cairn setup {} --shared` adds cairn to it; nothing was written",
                    client_arg(client)
                );
            }
        }
    }
    let mut changed_any = false;
    for step in &steps {
        changed_any |= if undo {
            undo_step(root, step, shared)?
        } else if print {
            print_step(step, shared);
            false
        } else {
            add_step(root, step, shared)?
        };
    }
    let agent = agent_name(client);
    if print {
        return Ok(());
    }
    if undo {
        if !changed_any {
            say!("nothing of cairn's to remove for {agent}");
        }
        return Ok(());
    }
    if matches!(client, SetupClient::Cursor | SetupClient::Vscode) {
        say!(
            "{agent}: MCP only (cairn captures sessions of Claude Code, Codex, OpenCode and OpenClaw)"
        );
    }
    if changed_any {
        say!("restart {agent} to load cairn");
    } else {
        say!("{agent} is already set up: nothing changed");
    }
    Ok(())
}

fn client_arg(client: SetupClient) -> &'static str {
    match client {
        SetupClient::ClaudeCode => "claude-code",
        SetupClient::Codex => "codex",
        SetupClient::Cursor => "cursor",
        SetupClient::Vscode => "vscode",
        SetupClient::Opencode => "opencode",
    }
}

/// The files setup edits for `client`, and what it adds to each.
fn plan(
    root: &Path,
    client: SetupClient,
    shared: bool,
    program: &str,
) -> anyhow::Result<Vec<Step>> {
    let in_project = |rel: &str| (root.join(rel), Some(rel.to_string()));
    let mut steps = Vec::new();
    match client {
        SetupClient::ClaudeCode => {
            let settings = if shared {
                ".claude/settings.json"
            } else {
                ".claude/settings.local.json"
            };
            let (path, rel) = in_project(settings);
            let mut snippet = json!({});
            add_claude_hooks(&mut snippet, program);
            let p = program.to_string();
            steps.push(Step {
                path,
                rel,
                what: "capture hooks (Stop, SessionEnd) and memory hooks (SessionStart, UserPromptSubmit)",
                edit: Edit::Json {
                    add: Box::new(move |doc| add_claude_hooks(doc, &p)),
                    remove: Box::new(remove_claude_hooks),
                    snippet,
                },
            });
            let entry = json!({"type": "stdio", "command": program, "args": ["serve"], "env": {}});
            if shared {
                let (path, rel) = in_project(".mcp.json");
                steps.push(server_step(path, rel, vec!["mcpServers".into()], entry));
            } else {
                // Claude Code's local scope (`claude mcp add --scope local`):
                // ~/.claude.json, under the project's path.
                let key = claude_project_key(root);
                steps.push(server_step(
                    claude_user_file()?,
                    None,
                    vec!["projects".into(), key, "mcpServers".into()],
                    entry,
                ));
            }
        }
        SetupClient::Codex => {
            let path = codex_home()
                .context("no home folder (HOME) to find ~/.codex")?
                .join("config.toml");
            steps.push(Step {
                path,
                rel: None,
                what: "MCP server and notify (capture after each turn)",
                edit: Edit::Codex {
                    program: program.to_string(),
                },
            });
        }
        SetupClient::Cursor => {
            let (path, rel) = in_project(".cursor/mcp.json");
            let entry = json!({"command": program, "args": ["serve", "-C", "${workspaceFolder}"]});
            steps.push(server_step(path, rel, vec!["mcpServers".into()], entry));
        }
        SetupClient::Vscode => {
            let (path, rel) = in_project(".vscode/mcp.json");
            let entry = json!({"type": "stdio", "command": program, "args": ["serve", "-C", "${workspaceFolder}"]});
            steps.push(server_step(path, rel, vec!["servers".into()], entry));
        }
        SetupClient::Opencode => {
            let (path, rel) = in_project("opencode.json");
            let entry = json!({"type": "local", "command": [program, "serve"], "enabled": true});
            steps.push(server_step(path, rel, vec!["mcp".into()], entry));
            let (path, rel) = in_project(".opencode/plugins/cairn-capture.js");
            steps.push(Step {
                path,
                rel,
                what: "capture plugin (session.idle, session.compacted)",
                edit: Edit::Owned {
                    text: opencode_plugin(program),
                },
            });
        }
    }
    Ok(steps)
}

/// Claude Code's per-user file, where local-scope MCP servers are kept:
/// `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
fn claude_user_file() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join(".claude.json"));
    }
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .context("no home folder (HOME) to find ~/.claude.json")?;
    Ok(PathBuf::from(home).join(".claude.json"))
}

/// The key of the project in `~/.claude.json`'s `projects`: its absolute
/// path as Claude Code sees its working folder (symbolic links resolved;
/// `/`-separated on Windows).
fn claude_project_key(root: &Path) -> String {
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let text = real.to_string_lossy().into_owned();
    if cfg!(windows) {
        text.trim_start_matches(r"\\?\").replace('\\', "/")
    } else {
        text
    }
}

/// Whether an MCP server entry runs cairn: `command` is a cairn program
/// (a string, or the first word of OpenCode's array).
fn runs_cairn(entry: &Value) -> bool {
    let program = match &entry["command"] {
        Value::String(s) => Some(s.as_str()),
        Value::Array(a) => a.first().and_then(Value::as_str),
        _ => None,
    };
    program.is_some_and(is_cairn_program)
}

/// The step that puts `entry` under `keys…` / [`NAME`] of a JSON file;
/// its removal takes the entry (when it runs cairn) and every object on the
/// way left empty by it.
fn server_step(path: PathBuf, rel: Option<String>, keys: Vec<String>, entry: Value) -> Step {
    let mut snippet = json!({});
    set_at(&mut snippet, &keys, entry.clone());
    let add_keys = keys.clone();
    Step {
        path,
        rel,
        what: "MCP server",
        edit: Edit::Json {
            add: Box::new(move |doc| {
                let before = doc.clone();
                set_at(doc, &add_keys, entry.clone());
                *doc != before
            }),
            remove: Box::new(move |doc| remove_at(doc, &keys)),
            snippet,
        },
    }
}

/// Sets `doc[keys…][NAME] = entry`, making objects on the way (a value on
/// the way that is not an object is replaced: cairn's entry needs the path).
fn set_at(doc: &mut Value, keys: &[String], entry: Value) {
    let mut at = doc;
    for k in keys {
        if !at[k.as_str()].is_object() {
            at[k.as_str()] = json!({});
        }
        at = &mut at[k.as_str()];
    }
    at[NAME] = entry;
}

/// Removes `doc[keys…][NAME]` when it runs cairn, then each object on the
/// way that it leaves empty; whether anything was removed.
fn remove_at(doc: &mut Value, keys: &[String]) -> bool {
    fn go(at: &mut Value, keys: &[String]) -> bool {
        let Some(obj) = at.as_object_mut() else {
            return false;
        };
        match keys.split_first() {
            None => {
                if obj.get(NAME).is_some_and(runs_cairn) {
                    obj.remove(NAME);
                    true
                } else {
                    false
                }
            }
            Some((k, rest)) => {
                let Some(next) = obj.get_mut(k.as_str()) else {
                    return false;
                };
                let removed = go(next, rest);
                if removed && next.as_object().is_some_and(|o| o.is_empty()) {
                    obj.remove(k.as_str());
                }
                removed
            }
        }
    }
    go(doc, keys)
}

fn print_step(step: &Step, shared: bool) {
    let local = match (&step.rel, shared) {
        (Some(_), false) => " (kept out of git in .git/info/exclude)",
        _ => "",
    };
    let body = match &step.edit {
        Edit::Json { snippet, .. } => serde_json::to_string_pretty(snippet).unwrap_or_default(),
        Edit::Owned { text } => text.trim_end().to_string(),
        Edit::Codex { program } => format!(
            "[mcp_servers.{NAME}]\ncommand = {program:?}\nargs = [\"serve\"]\n\nnotify = [{program:?}, \"hook\", \"codex\"]"
        ),
    };
    say!("// {}: {}{local}\n{body}\n", step.path.display(), step.what);
}

fn add_step(root: &Path, step: &Step, shared: bool) -> anyhow::Result<bool> {
    let changed = match &step.edit {
        Edit::Json { add, .. } => {
            let mut doc = read_json_object(&step.path)?;
            let changed = add(&mut doc);
            if changed {
                write_atomic(&step.path, &(serde_json::to_string_pretty(&doc)? + "\n"))?;
            }
            changed
        }
        Edit::Owned { text } => write_ours(&step.path, text, false)?,
        Edit::Codex { program } => {
            let (mut doc, _) = read_toml(&step.path)?;
            let changed = codex_add(&mut doc, program, &step.path)?;
            if changed {
                write_atomic(&step.path, &doc.to_string())?;
            }
            changed
        }
    };
    let mut kept = "";
    if let (Some(rel), false) = (&step.rel, shared)
        && exclude(root, rel)?
    {
        kept = " (kept out of git in .git/info/exclude)";
    }
    if changed {
        say!("{}: {}{kept}", step.path.display(), step.what);
    } else {
        say!("{}: {} already there{kept}", step.path.display(), step.what);
    }
    Ok(changed || !kept.is_empty())
}

fn undo_step(root: &Path, step: &Step, shared: bool) -> anyhow::Result<bool> {
    if !step.path.exists() {
        return Ok(false);
    }
    let (changed, now_empty) = match &step.edit {
        Edit::Json { remove, .. } => {
            let mut doc = read_json_object(&step.path)?;
            let changed = remove(&mut doc);
            let empty = doc.as_object().is_some_and(|o| o.is_empty());
            if changed && !empty {
                write_atomic(&step.path, &(serde_json::to_string_pretty(&doc)? + "\n"))?;
            }
            (changed, empty)
        }
        Edit::Owned { .. } => {
            let text = std::fs::read_to_string(&step.path)
                .with_context(|| format!("reading {}", step.path.display()))?;
            (text.starts_with(MARK), true)
        }
        Edit::Codex { .. } => {
            let (mut doc, _) = read_toml(&step.path)?;
            let changed = codex_remove(&mut doc);
            let text = doc.to_string();
            if changed && !text.trim().is_empty() {
                write_atomic(&step.path, &text)?;
            }
            (changed, text.trim().is_empty())
        }
    };
    if !changed {
        return Ok(false);
    }
    if now_empty {
        std::fs::remove_file(&step.path)
            .with_context(|| format!("removing {}", step.path.display()))?;
        remove_empty_dirs(root, &step.path);
        say!(
            "removed {} (cairn's {} was all it held)",
            step.path.display(),
            step.what
        );
    } else {
        say!("{}: removed cairn's {}", step.path.display(), step.what);
    }
    if let (Some(rel), false) = (&step.rel, shared)
        && !step.path.exists()
    {
        unexclude(root, rel)?;
    }
    Ok(true)
}

/// Removes the folders of `file` left empty, up to (not including) `root`;
/// only when `file` lies in the project.
fn remove_empty_dirs(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// A TOML file as a document (missing: empty).
pub(super) fn read_toml(path: &Path) -> anyhow::Result<(toml_edit::DocumentMut, bool)> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Default::default(), false));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let doc = text
        .parse()
        .with_context(|| format!("{} is not valid TOML; left unchanged", path.display()))?;
    Ok((doc, true))
}

/// Whether a TOML value is `notify = [<cairn>, "hook", "codex"]`.
fn codex_notify_is_ours(item: &toml_edit::Item) -> bool {
    let parts: Option<Vec<&str>> = item
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
    matches!(parts.as_deref(), Some([p, "hook", "codex"]) if is_cairn_program(p))
}

/// The `[mcp_servers]` table of Codex's config, made (implicit) when missing.
pub(super) fn codex_servers<'d>(
    doc: &'d mut toml_edit::DocumentMut,
    path: &Path,
) -> anyhow::Result<&'d mut toml_edit::Table> {
    doc.entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .with_context(|| {
            format!(
                "{}: mcp_servers is not a table; left unchanged",
                path.display()
            )
        })
}

/// Codex's entry for an MCP server: `command = program`, `args = ["serve"]`.
pub(super) fn codex_server(program: &str) -> toml_edit::Item {
    let mut entry = toml_edit::Table::new();
    entry["command"] = toml_edit::value(program);
    let mut args = toml_edit::Array::new();
    args.push("serve");
    entry["args"] = toml_edit::value(args);
    toml_edit::Item::Table(entry)
}

/// Adds `[mcp_servers.cairn]` and `notify` to Codex's config (a notify of
/// another program is kept, and capture is then left out, said on stderr).
fn codex_add(doc: &mut toml_edit::DocumentMut, program: &str, path: &Path) -> anyhow::Result<bool> {
    let before = doc.to_string();
    let servers = codex_servers(doc, path)?;
    let same = servers
        .get(NAME)
        .and_then(|t| t.as_table())
        .is_some_and(|t| {
            t.get("command").and_then(|c| c.as_str()) == Some(program)
                && t.get("args").map(|a| a.to_string().replace(' ', ""))
                    == Some("[\"serve\"]".into())
        });
    if !same {
        servers.insert(NAME, codex_server(program));
    }
    match doc.get("notify") {
        Some(item) if !codex_notify_is_ours(item) => eprintln!(
            "{} already has notify = {}; Codex runs one notifier, so capture is not wired: call `cairn hook codex <json>` from it",
            path.display(),
            item.to_string().trim()
        ),
        _ => {
            let mut arr = toml_edit::Array::new();
            for part in [program, "hook", "codex"] {
                arr.push(part);
            }
            let ours = toml_edit::value(arr);
            if doc.get("notify").map(|n| n.to_string()) != Some(ours.to_string()) {
                doc["notify"] = ours;
            }
        }
    }
    Ok(doc.to_string() != before)
}

/// Removes cairn's MCP server (and `mcp_servers` when it leaves it empty)
/// and cairn's notify from Codex's config.
fn codex_remove(doc: &mut toml_edit::DocumentMut) -> bool {
    let mut changed = false;
    if let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(|s| s.as_table_like_mut())
    {
        let ours = servers
            .get(NAME)
            .and_then(|t| t.as_table_like())
            .and_then(|t| t.get("command"))
            .and_then(|c| c.as_str())
            .is_some_and(is_cairn_program);
        if ours {
            servers.remove(NAME);
            changed = true;
            if servers.is_empty() {
                doc.remove("mcp_servers");
            }
        }
    }
    if doc.get("notify").is_some_and(codex_notify_is_ours) {
        doc.remove("notify");
        changed = true;
    }
    changed
}

/// Runs git in the project; its stdout when it succeeds.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether git tracks `rel` (then it is shared, whatever the ignore files say).
fn git_tracked(root: &Path, rel: &str) -> bool {
    git(root, &["ls-files", "--error-unmatch", "--", rel]).is_some()
}

/// This clone's `.git/info/exclude` (None outside a git work tree).
fn exclude_file(root: &Path) -> Option<PathBuf> {
    git(root, &["rev-parse", "--is-inside-work-tree"]).filter(|s| s == "true")?;
    let p = PathBuf::from(git(root, &["rev-parse", "--git-path", "info/exclude"])?);
    Some(if p.is_absolute() { p } else { root.join(p) })
}

/// The pattern that names `rel` from the top of the work tree.
fn exclude_pattern(root: &Path, rel: &str) -> String {
    let prefix = git(root, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    format!("/{prefix}{rel}")
}

/// Keeps `rel` out of git through `.git/info/exclude` unless git already
/// ignores it; whether a line was added.
fn exclude(root: &Path, rel: &str) -> anyhow::Result<bool> {
    let Some(file) = exclude_file(root) else {
        return Ok(false);
    };
    if git(root, &["check-ignore", "-q", "--", rel]).is_some() {
        return Ok(false);
    }
    let pattern = exclude_pattern(root, rel);
    let mut text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    if text.lines().any(|l| l.trim() == pattern) {
        return Ok(false);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("{EXCLUDE_MARK}\n{pattern}\n"));
    write_atomic(&file, &text)?;
    Ok(true)
}

/// Takes out of `.git/info/exclude` the line [`exclude`] added for `rel`.
fn unexclude(root: &Path, rel: &str) -> anyhow::Result<()> {
    let Some(file) = exclude_file(root) else {
        return Ok(());
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(());
    };
    let pattern = exclude_pattern(root, rel);
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if lines[i] == EXCLUDE_MARK && lines.get(i + 1) == Some(&pattern.as_str()) {
            i += 2;
            continue;
        }
        kept.push(lines[i]);
        i += 1;
    }
    if kept.len() != lines.len() {
        let mut out = kept.join("\n");
        if !out.is_empty() {
            out.push('\n');
        }
        write_atomic(&file, &out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_entry_comes_out_with_the_objects_it_alone_filled() {
        let keys: Vec<String> = vec!["projects".into(), "/p".into(), "mcpServers".into()];
        let mut doc = json!({"projects": {"/q": {"x": 1}}, "numStartups": 3});
        set_at(
            &mut doc,
            &keys,
            json!({"command": "cairn", "args": ["serve"]}),
        );
        assert_eq!(
            doc["projects"]["/p"]["mcpServers"]["cairn"]["command"],
            "cairn"
        );
        assert!(remove_at(&mut doc, &keys));
        assert_eq!(doc, json!({"projects": {"/q": {"x": 1}}, "numStartups": 3}));
        // Another program named cairn is the user's: kept.
        set_at(
            &mut doc,
            &keys,
            json!({"command": "node", "args": ["x.js"]}),
        );
        assert!(!remove_at(&mut doc, &keys));
        // OpenCode's command is an array.
        assert!(runs_cairn(&json!({"command": ["/opt/bin/cairn", "serve"]})));
    }

    #[test]
    fn codex_gets_the_server_and_notify_once_and_loses_only_them() {
        let path = Path::new("config.toml");
        let mut doc: toml_edit::DocumentMut =
            "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n"
                .parse()
                .unwrap();
        assert!(codex_add(&mut doc, "cairn", path).unwrap());
        assert!(!codex_add(&mut doc, "cairn", path).unwrap(), "{doc}");
        assert!(
            doc.to_string()
                .contains("notify = [\"cairn\", \"hook\", \"codex\"]")
        );
        assert!(codex_remove(&mut doc));
        assert_eq!(
            doc.to_string(),
            "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n"
        );
        // Another notifier stays.
        let mut doc: toml_edit::DocumentMut = "notify = [\"notify-send\"]\n".parse().unwrap();
        codex_add(&mut doc, "cairn", path).unwrap();
        assert!(doc.to_string().contains("notify-send"));
        codex_remove(&mut doc);
        assert_eq!(doc.to_string(), "notify = [\"notify-send\"]\n");
    }
}
