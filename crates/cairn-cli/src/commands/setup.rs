//! `cairn setup <agent>`: one command that wires an agent to cairn: its MCP
//! server and, where cairn captures the agent's sessions, the capture and
//! memory hooks. By default into the user's own settings (files of the
//! project kept out of git through `.git/info/exclude`, or the agent's
//! per-user file); with `--shared` into the project's shared files, meant to
//! be committed. `--print` shows what would be added and writes nothing;
//! `--undo` removes exactly what setup adds and keeps every other entry.
//!
//! The files are the user's: setup inserts its entries into their text and
//! touches no other byte ([`super::jsontext`]), writes through links and
//! keeps mode and owner ([`super::userfile`]), and refuses an entry named
//! `cairn` it did not write. What it did to each file is recorded in
//! cairn's per-user data folder (`setup.json`, see [`Record`]): whether the
//! file was there, the objects setup made, and the text edits themselves.
//! While a file still holds exactly what setup wrote, `--undo` reverts those
//! edits and gives the user's bytes back unchanged; once someone else
//! changed it (Claude Code rewrites `~/.claude.json` as it runs), `--undo`
//! takes out cairn's entries as text spans instead. Recording edits rather
//! than a copy of the file keeps the user's data (`~/.claude.json` holds an
//! API key) out of cairn's files: an edit's removed text is only cairn's
//! own or whitespace.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::Digest;

use super::capture::{
    MARK, add_claude_hooks, codex_home, is_cairn_program, opencode_plugin, remove_claude_hooks,
};
use super::jsontext::{Doc, Seg, TextEdit};
use super::userfile;
use crate::args::SetupClient;

/// The name of cairn's MCP server entry.
const NAME: &str = "cairn";

/// The comment line above each path setup keeps out of git in
/// `.git/info/exclude` (`--undo` removes the pair).
const EXCLUDE_MARK: &str = "# cairn setup: this clone's own settings, not committed";

/// What one file gets from setup.
enum Edit {
    /// cairn's Claude Code hooks in a settings file.
    ClaudeHooks { program: String },
    /// cairn's MCP server entry at `keys…` / [`NAME`] of a JSON file.
    Server { keys: Vec<String>, entry: Value },
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
    /// The mode of the file when setup makes it (None: the usual one).
    new_mode: Option<u32>,
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

/// What setup did to one file, kept until `--undo` (in `setup.json` of
/// cairn's per-user data folder).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Record {
    /// The file written (symbolic links followed).
    file: PathBuf,
    /// The project and what for (the agent; for `.git/info/exclude`, the pattern).
    project: String,
    what: String,
    /// Whether the file was there before setup first wrote it; its text
    /// then when it was blank (whitespace only).
    existed: bool,
    #[serde(default)]
    blank: Option<String>,
    /// The SHA-256 of the text setup last wrote.
    sha256: String,
    /// The edits from the user's text to that text, in order; None once
    /// they cannot be reverted exactly (the file changed in between).
    #[serde(default)]
    edits: Option<Vec<TextEdit>>,
    /// The objects setup made (paths of keys): taken out when undo leaves
    /// them empty; the user's own stay even when empty.
    #[serde(default)]
    created: Vec<Vec<String>>,
    /// Whether setup wrote the MCP server entry (one it found is the user's).
    #[serde(default)]
    entry: bool,
}

/// Every [`Record`], loaded from and saved to `setup.json`.
struct Records {
    path: Option<PathBuf>,
    list: Vec<Record>,
    changed: bool,
}

fn sha256(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Records {
    fn load() -> anyhow::Result<Records> {
        let path = cairn::paths::user_data_dir().map(|d| d.join("setup.json"));
        let list = match path.as_deref().map(userfile::read).transpose()?.flatten() {
            Some(text) if !text.trim().is_empty() => {
                serde_json::from_str(&text).with_context(|| {
                    format!(
                        "{} is not what cairn setup writes; move it away",
                        path.as_deref().unwrap_or(Path::new("")).display()
                    )
                })?
            }
            _ => Vec::new(),
        };
        Ok(Records {
            path,
            list,
            changed: false,
        })
    }

    fn find(&self, file: &Path, project: &str, what: &str) -> Option<&Record> {
        self.list
            .iter()
            .find(|r| r.file == file && r.project == project && r.what == what)
    }

    fn take(&mut self, file: &Path, project: &str, what: &str) -> Option<Record> {
        let i = self
            .list
            .iter()
            .position(|r| r.file == file && r.project == project && r.what == what)?;
        self.changed = true;
        Some(self.list.remove(i))
    }

    fn put(&mut self, r: Record) {
        self.take(&r.file.clone(), &r.project.clone(), &r.what.clone());
        self.list.push(r);
        self.changed = true;
    }

    /// The record after setup changed `file` from `before` to `after` by
    /// `edits` (creating `created`): a new one, or the one there extended.
    #[allow(clippy::too_many_arguments)]
    fn wrote(
        &mut self,
        file: &Path,
        project: &str,
        what: &str,
        before: Option<&str>,
        after: &str,
        edits: Option<Vec<TextEdit>>,
        created: Vec<Vec<String>>,
        entry: bool,
    ) {
        let mut r = match self.take(file, project, what) {
            Some(mut r) => {
                // Exact undo goes on only from the text setup last wrote.
                let current = before.is_some_and(|b| sha256(b) == r.sha256);
                r.edits = match (r.edits, edits, current) {
                    (Some(mut old), Some(new), true) => {
                        old.extend(new);
                        Some(old)
                    }
                    _ => None,
                };
                r
            }
            None => Record {
                file: file.to_path_buf(),
                project: project.to_string(),
                what: what.to_string(),
                existed: before.is_some(),
                blank: before.filter(|b| b.trim().is_empty()).map(str::to_string),
                edits,
                ..Record::default()
            },
        };
        r.sha256 = sha256(after);
        for c in created {
            if !r.created.contains(&c) {
                r.created.push(c);
            }
        }
        r.entry |= entry;
        self.put(r);
    }

    /// Writes `setup.json` (0600: it names the user's files), or removes it
    /// when no record is left.
    fn save(&self) -> anyhow::Result<()> {
        let Some(path) = self.path.as_deref().filter(|_| self.changed) else {
            return Ok(());
        };
        if self.list.is_empty() {
            if path.exists() {
                userfile::remove(path)?;
                // The data folder setup made for it goes with it when empty.
                if let Some(dir) = path.parent() {
                    let _ = std::fs::remove_dir(dir);
                }
            }
            return Ok(());
        }
        userfile::write(
            path,
            &(serde_json::to_string_pretty(&self.list)? + "\n"),
            Some(0o600),
        )
    }
}

/// Which of setup's steps a command takes: all of them (`setup`), the MCP
/// server alone (`mcp install`) or the hooks alone (`hooks install`), each
/// into the same files, local unless `--shared`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    All,
    Mcp,
    Hooks,
}

/// `cairn setup`: see the module documentation.
pub(crate) fn run(
    root: &Path,
    client: SetupClient,
    shared: bool,
    print: bool,
    undo: bool,
) -> anyhow::Result<()> {
    run_part(root, client, shared, print, undo, Part::All)
}

/// [`run`] for `part` of setup's steps.
pub(crate) fn run_part(
    root: &Path,
    client: SetupClient,
    shared: bool,
    print: bool,
    undo: bool,
    part: Part,
) -> anyhow::Result<()> {
    let program = if undo {
        super::install::command()
    } else {
        super::install::announced_command()
    };
    let mut steps = plan(root, client, shared, &program)?;
    steps.retain(|s| match part {
        Part::All => true,
        Part::Mcp => matches!(s.edit, Edit::Server { .. }),
        Part::Hooks => !matches!(s.edit, Edit::Server { .. }),
    });
    if matches!(client, SetupClient::Codex) && shared {
        eprintln!(
            "Codex keeps MCP servers and notify in ~/.codex/config.toml, per user: nothing there is shared"
        );
    }
    let agent = agent_name(client);
    if print {
        for step in &steps {
            print_step(step, shared);
        }
        return Ok(());
    }
    // Local settings stay out of git; a file git already tracks is the
    // team's, and only --shared changes it. Checked before anything is written.
    if !shared && !undo {
        for rel in steps.iter().filter_map(|s| s.rel.as_deref()) {
            if git_tracked(root, rel) {
                bail!(
                    "{rel} is tracked by git (shared with the team): `cairn setup {} --shared` adds cairn to it; nothing was written",
                    client_arg(client)
                );
            }
        }
    }
    let project = claude_project_key(root);
    let who = if shared {
        format!("{} --shared", client_arg(client))
    } else {
        client_arg(client).to_string()
    };
    let mut records = Records::load()?;
    let mut changed_any = false;
    if undo {
        // Last written first: each file then still holds what setup wrote
        // last, and its edits revert exactly.
        for step in steps.iter().rev() {
            changed_any |= undo_step(root, step, shared, &project, &who, &mut records)?;
        }
        records.save()?;
        if !changed_any {
            say!("nothing of cairn's to remove for {agent}");
        }
        return Ok(());
    }
    // Every file's new text first: a file setup cannot edit (not JSON, an
    // entry of the user's, a value of the wrong shape) stops it before any
    // file is written.
    let mut texts = Vec::with_capacity(steps.len());
    for step in &steps {
        let file = userfile::resolve(&step.path)?;
        let rec = records.find(&file, &project, &who);
        texts.push((file.clone(), new_text(step, rec)?));
    }
    for (step, (file, change)) in steps.iter().zip(texts) {
        let changed = match change {
            None => false,
            Some(c) => {
                userfile::write(&step.path, &c.after, step.new_mode)?;
                records.wrote(
                    &file,
                    &project,
                    &who,
                    c.before.as_deref(),
                    &c.after,
                    c.edits,
                    c.created,
                    c.entry,
                );
                true
            }
        };
        let mut kept = "";
        if let (Some(rel), false) = (&step.rel, shared)
            && exclude(root, rel, &project, &who, &mut records)?
        {
            kept = " (kept out of git in .git/info/exclude)";
        }
        // After each file: a failure at the next still leaves this one undoable.
        records.save()?;
        if changed {
            say!("{}: {}{kept}", step.path.display(), step.what);
        } else {
            say!("{}: {} already there{kept}", step.path.display(), step.what);
        }
        changed_any |= changed || !kept.is_empty();
    }
    records.save()?;
    if part == Part::Mcp && !matches!(client, SetupClient::Cursor | SetupClient::Vscode) {
        say!(
            "{agent}: MCP server only; its hooks (session capture, memories brought into sessions): `cairn hooks install {}`, or `cairn setup {}` for both",
            client_arg(client),
            client_arg(client)
        );
    } else if matches!(client, SetupClient::Cursor | SetupClient::Vscode) {
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
            steps.push(Step {
                path,
                rel,
                what: "capture hooks (Stop, SessionEnd) and memory hooks (SessionStart, UserPromptSubmit)",
                edit: Edit::ClaudeHooks {
                    program: program.to_string(),
                },
                new_mode: None,
            });
            let entry = json!({"type": "stdio", "command": program, "args": ["serve"], "env": {}});
            if shared {
                let (path, rel) = in_project(".mcp.json");
                steps.push(server_step(path, rel, vec!["mcpServers".into()], entry));
            } else {
                // Claude Code's local scope (`claude mcp add --scope local`):
                // ~/.claude.json, under the project's path. Claude Code
                // keeps the account and its key there: a file setup makes
                // is the user's alone, as Claude Code makes it.
                let key = claude_project_key(root);
                let mut step = server_step(
                    claude_user_file()?,
                    None,
                    vec!["projects".into(), key, "mcpServers".into()],
                    entry,
                );
                step.new_mode = Some(0o600);
                steps.push(step);
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
                new_mode: Some(0o600),
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
                new_mode: None,
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

/// The program of an MCP server entry: `command` (a string, or the first
/// word of OpenCode's array).
fn entry_program(entry: &Value) -> Option<&str> {
    match entry.get("command")? {
        Value::String(s) => Some(s.as_str()),
        Value::Array(a) => a.first().and_then(Value::as_str),
        _ => None,
    }
}

/// Whether an MCP server entry runs cairn.
fn runs_cairn(entry: &Value) -> bool {
    entry_program(entry).is_some_and(is_cairn_program)
}

/// Whether `found` is the entry a cairn installer writes, `ours`, but for
/// the program's path (an earlier setup or `mcp install` wrote it, where
/// cairn was elsewhere) and a `"type": "stdio"` / empty `env` said or not.
pub(crate) fn installed_entry(found: &Value, ours: &Value) -> bool {
    fn norm(v: &Value, program: &str) -> Option<Value> {
        let mut v = v.as_object()?.clone();
        match v.get_mut("command")? {
            Value::String(s) => *s = program.to_string(),
            Value::Array(a) if !a.is_empty() => a[0] = json!(program),
            _ => return None,
        }
        if v.get("type").is_some_and(|t| t == "stdio") {
            v.remove("type");
        }
        if v.get("env").is_some_and(|e| e == &json!({})) {
            v.remove("env");
        }
        Some(Value::Object(v))
    }
    runs_cairn(found)
        && norm(found, "cairn").is_some()
        && norm(found, "cairn") == norm(ours, "cairn")
}

/// The step that puts `entry` under `keys…` / [`NAME`] of a JSON file.
fn server_step(path: PathBuf, rel: Option<String>, keys: Vec<String>, entry: Value) -> Step {
    Step {
        path,
        rel,
        what: "MCP server",
        edit: Edit::Server { keys, entry },
        new_mode: None,
    }
}

fn segs(keys: &[String]) -> Vec<Seg> {
    keys.iter().map(Seg::from).collect()
}

/// Puts `entry` at `keys…` / [`NAME`] of the document as text (objects
/// missing on the way are made, and said in the result); an entry there is
/// replaced only when cairn wrote it (`recorded`, or it is what an
/// installer writes). A value on the way that is not an object, or a
/// `cairn` of the user's, is an error and nothing is changed. Returns the
/// objects made and whether the entry was written.
pub(crate) fn add_server(
    doc: &mut Doc,
    keys: &[String],
    entry_name: &str,
    entry: &Value,
    recorded: bool,
    name: &str,
) -> anyhow::Result<(Vec<Vec<String>>, bool)> {
    let root = doc.root();
    let mut node = &root;
    let mut depth = 0;
    for k in keys {
        let Some(next) = node.member(k) else { break };
        if next.members().is_none() {
            bail!(
                "{name}: {} is {}, not an object; left unchanged",
                keys[..=depth].join("."),
                next.what(&doc.text)
            );
        }
        node = next;
        depth += 1;
    }
    if depth == keys.len() {
        let mut at = segs(keys);
        at.push(entry_name.into());
        if let Some(found) = doc.value(&at) {
            if found == *entry {
                return Ok((Vec::new(), false));
            }
            if !(recorded || installed_entry(&found, entry)) {
                bail!(
                    "{name}: an MCP server named \"{entry_name}\" is already there ({}), and cairn setup did not write it; \
                     left unchanged: rename or remove it, then run setup again",
                    found
                );
            }
            doc.replace(&at, entry)?;
            return Ok((Vec::new(), true));
        }
        doc.insert_member(&segs(keys), entry_name, entry)?;
        return Ok((Vec::new(), true));
    }
    // The missing objects, made in one member of the deepest one there.
    let mut value = json!({ entry_name: entry });
    for k in keys[depth + 1..].iter().rev() {
        let mut m = Map::new();
        m.insert(k.clone(), value);
        value = Value::Object(m);
    }
    doc.insert_member(&segs(&keys[..depth]), &keys[depth], &value)?;
    let created = (depth..keys.len()).map(|d| keys[..=d].to_vec()).collect();
    Ok((created, true))
}

/// What undo found of an MCP server entry.
enum Found {
    Nothing,
    Removed,
    /// An entry named cairn that setup did not write (what it runs).
    Theirs(String),
}

/// Takes cairn's entry out of `keys…` / [`NAME`] when setup wrote it
/// (`rec`), then each object on the way that setup made and leaves empty.
fn remove_server(doc: &mut Doc, keys: &[String], rec: Option<&Record>) -> anyhow::Result<Found> {
    let mut at = segs(keys);
    at.push(NAME.into());
    let Some(found) = doc.value(&at) else {
        return Ok(Found::Nothing);
    };
    if !(rec.is_some_and(|r| r.entry) && runs_cairn(&found)) {
        return Ok(Found::Theirs(found.to_string()));
    }
    doc.remove(&at)?;
    for d in (0..keys.len()).rev() {
        let path = &keys[..=d];
        let made = rec.is_some_and(|r| r.created.iter().any(|c| c == path));
        let empty = doc
            .root()
            .at(&segs(path))
            .and_then(|n| n.members().map(<[_]>::is_empty))
            .unwrap_or(false);
        if !(made && empty) {
            break;
        }
        doc.remove(&segs(path))?;
    }
    Ok(Found::Removed)
}

/// A file's text before and after setup, and how it got there.
struct Change {
    before: Option<String>,
    after: String,
    edits: Option<Vec<TextEdit>>,
    created: Vec<Vec<String>>,
    entry: bool,
}

/// What `step` makes of its file: None when it already holds it all.
fn new_text(step: &Step, rec: Option<&Record>) -> anyhow::Result<Option<Change>> {
    let name = step.path.display().to_string();
    let before = match &step.edit {
        Edit::Owned { .. } => None,
        _ => userfile::read(&step.path)?,
    };
    let change = match &step.edit {
        Edit::ClaudeHooks { program } => {
            let mut doc = Doc::new(before.clone().unwrap_or_default(), &name)?;
            let created = add_claude_hooks(&mut doc, program, &name)?;
            (!doc.edits.is_empty() && Some(&doc.text) != before.as_ref()).then(|| Change {
                before: before.clone(),
                after: doc.text.clone(),
                edits: Some(doc.edits.clone()),
                created,
                entry: false,
            })
        }
        Edit::Server { keys, entry } => {
            let mut doc = Doc::new(before.clone().unwrap_or_default(), &name)?;
            let (created, wrote) = add_server(
                &mut doc,
                keys,
                NAME,
                entry,
                rec.is_some_and(|r| r.entry),
                &name,
            )?;
            wrote.then(|| Change {
                before: before.clone(),
                after: doc.text.clone(),
                edits: Some(doc.edits.clone()),
                created,
                entry: true,
            })
        }
        Edit::Owned { text } => {
            let now = userfile::read(&step.path)?;
            if let Some(t) = &now
                && t != text
                && !t.starts_with(MARK)
            {
                bail!(
                    "{name} exists and was not written by cairn; left unchanged (move it away to install)"
                );
            }
            (now.as_deref() != Some(text.as_str())).then(|| Change {
                before: now.clone(),
                after: text.clone(),
                edits: None,
                created: Vec::new(),
                entry: false,
            })
        }
        Edit::Codex { program } => {
            let (mut doc, _) = read_toml(&step.path)?;
            // toml_edit keeps the rest of the file as it was; its edits are
            // not recorded (their span could hold the user's settings).
            codex_add(&mut doc, program, &step.path)?.then(|| Change {
                before: before.clone(),
                after: doc.to_string(),
                edits: None,
                created: Vec::new(),
                entry: false,
            })
        }
    };
    Ok(change)
}

fn print_step(step: &Step, shared: bool) {
    let local = match (&step.rel, shared) {
        (Some(_), false) => " (kept out of git in .git/info/exclude)",
        _ => "",
    };
    let body = match &step.edit {
        Edit::ClaudeHooks { program } => {
            let mut doc = Doc::new(String::new(), "").expect("an empty document");
            let _ = add_claude_hooks(&mut doc, program, "");
            doc.text.trim_end().to_string()
        }
        Edit::Server { keys, entry } => {
            let mut doc = Doc::new(String::new(), "").expect("an empty document");
            let _ = add_server(&mut doc, keys, NAME, entry, false, "");
            doc.text.trim_end().to_string()
        }
        Edit::Owned { text } => text.trim_end().to_string(),
        Edit::Codex { program } => format!(
            "[mcp_servers.{NAME}]\ncommand = {program:?}\nargs = [\"serve\"]\n\nnotify = [{program:?}, \"hook\", \"codex\"]"
        ),
    };
    say!("// {}: {}{local}\n{body}\n", step.path.display(), step.what);
}

/// Takes out of `step`'s file what setup added (see the module
/// documentation); whether anything was removed.
fn undo_step(
    root: &Path,
    step: &Step,
    shared: bool,
    project: &str,
    who: &str,
    records: &mut Records,
) -> anyhow::Result<bool> {
    let file = userfile::resolve(&step.path)?;
    let rec = records.take(&file, project, who);
    let mut changed = false;
    if let Some(text) = userfile::read(&step.path)? {
        changed = undo_file(root, step, &text, rec.as_ref())?;
    }
    if let (Some(rel), false) = (&step.rel, shared) {
        // The exclude line goes when setup added it, or (from a setup that
        // kept no record) when the file it kept out of git is gone.
        changed |= unexclude(root, rel, project, who, records, !step.path.exists())?;
    }
    Ok(changed)
}

fn undo_file(root: &Path, step: &Step, text: &str, rec: Option<&Record>) -> anyhow::Result<bool> {
    let name = step.path.display().to_string();
    let gone = |what: &str| -> anyhow::Result<bool> {
        userfile::remove(&step.path)?;
        remove_empty_dirs(root, &step.path);
        say!("removed {} (cairn's {what} was all it held)", name);
        Ok(true)
    };
    // Exact: the file holds what setup last wrote; its edits reverted give
    // the user's bytes back.
    if let Some(r) = rec
        && let Some(edits) = &r.edits
        && sha256(text) == r.sha256
        && let Some(original) = edits
            .iter()
            .rev()
            .try_fold(text.to_string(), |t, e| e.revert(&t))
    {
        if !r.existed {
            return gone(step.what);
        }
        userfile::write(&step.path, &original, None)?;
        say!("{name}: removed cairn's {}", step.what);
        return Ok(true);
    }
    // The file changed since: cairn's entries out, as text.
    let after = match &step.edit {
        Edit::ClaudeHooks { .. } => {
            let mut doc = Doc::new(text.to_string(), &name)?;
            if !remove_claude_hooks(&mut doc, rec.map(|r| r.created.as_slice()))? {
                return Ok(false);
            }
            Some(doc)
        }
        Edit::Server { keys, .. } => {
            let mut doc = Doc::new(text.to_string(), &name)?;
            match remove_server(&mut doc, keys, rec)? {
                Found::Nothing => return Ok(false),
                Found::Theirs(what) => {
                    say!(
                        "{name}: the MCP server \"{NAME}\" ({what}) is not one this setup recorded writing \
                         (yours, or an older cairn's); left as it is"
                    );
                    return Ok(false);
                }
                Found::Removed => Some(doc),
            }
        }
        Edit::Owned { .. } => {
            if !text.starts_with(MARK) {
                return Ok(false);
            }
            return gone(step.what);
        }
        Edit::Codex { .. } => {
            let (mut doc, _) = read_toml(&step.path)?;
            if !codex_remove(&mut doc) {
                return Ok(false);
            }
            let out = doc.to_string();
            if out.trim().is_empty() {
                match rec {
                    Some(r) if !r.existed => return gone(step.what),
                    Some(r) => userfile::write(&step.path, r.blank.as_deref().unwrap_or(""), None)?,
                    None => userfile::write(&step.path, &out, None)?,
                }
            } else {
                userfile::write(&step.path, &out, None)?;
            }
            say!("{name}: removed cairn's {}", step.what);
            return Ok(true);
        }
    };
    let Some(doc) = after else {
        return Ok(false);
    };
    match rec {
        // A file setup made, holding nothing else now: gone again.
        Some(r) if !r.existed && doc.is_empty_object() => return gone(step.what),
        Some(r) if doc.is_empty_object() && r.blank.is_some() => {
            userfile::write(&step.path, r.blank.as_deref().unwrap_or(""), None)?;
        }
        _ => userfile::write(&step.path, &doc.text, None)?,
    }
    say!("{name}: removed cairn's {}", step.what);
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

/// Whether a Codex MCP server entry is what setup writes: a cairn program
/// (wherever it is) with `args = ["serve"]`.
fn codex_server_is_ours(item: &toml_edit::Item) -> bool {
    let Some(t) = item.as_table_like() else {
        return false;
    };
    let args: Option<Vec<&str>> = t
        .get("args")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
    t.get("command")
        .and_then(|c| c.as_str())
        .is_some_and(is_cairn_program)
        && args.as_deref() == Some(&["serve"][..])
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
        if servers.get(NAME).is_some_and(|t| !codex_server_is_ours(t)) {
            bail!(
                "{}: an MCP server [mcp_servers.{NAME}] is already there, and cairn setup did not write it; \
                 left unchanged: rename or remove it, then run setup again",
                path.display()
            );
        }
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
        && servers.get(NAME).is_some_and(codex_server_is_ours)
    {
        servers.remove(NAME);
        changed = true;
        if servers.is_empty() {
            doc.remove("mcp_servers");
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
/// ignores it: two lines appended (recorded, for `--undo`); whether they were.
fn exclude(
    root: &Path,
    rel: &str,
    project: &str,
    who: &str,
    records: &mut Records,
) -> anyhow::Result<bool> {
    let Some(file) = exclude_file(root) else {
        return Ok(false);
    };
    if git(root, &["check-ignore", "-q", "--", rel]).is_some() {
        return Ok(false);
    }
    let pattern = exclude_pattern(root, rel);
    let before = userfile::read(&file)?;
    let text = before.clone().unwrap_or_default();
    if text.lines().any(|l| l.trim() == pattern) {
        return Ok(false);
    }
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut inserted = String::new();
    if !text.is_empty() && !text.ends_with('\n') {
        inserted.push_str(nl);
    }
    inserted.push_str(&format!("{EXCLUDE_MARK}{nl}{pattern}{nl}"));
    let edit = TextEdit {
        offset: text.len(),
        removed: String::new(),
        inserted,
    };
    let after = format!("{text}{}", edit.inserted);
    userfile::write(&file, &after, None)?;
    records.wrote(
        &userfile::resolve(&file)?,
        project,
        &format!("{who} exclude {pattern}"),
        before.as_deref(),
        &after,
        Some(vec![edit]),
        Vec::new(),
        false,
    );
    Ok(true)
}

/// Takes out of `.git/info/exclude` the lines [`exclude`] added for `rel`:
/// when it recorded adding them, or (`unrecorded_too`) whenever they are
/// there. Whether it did.
fn unexclude(
    root: &Path,
    rel: &str,
    project: &str,
    who: &str,
    records: &mut Records,
    unrecorded_too: bool,
) -> anyhow::Result<bool> {
    let Some(file) = exclude_file(root) else {
        return Ok(false);
    };
    let pattern = exclude_pattern(root, rel);
    let target = userfile::resolve(&file)?;
    let rec = records.take(&target, project, &format!("{who} exclude {pattern}"));
    if rec.is_none() && !unrecorded_too {
        return Ok(false);
    }
    let Some(text) = userfile::read(&file)? else {
        return Ok(false);
    };
    if let Some(r) = &rec
        && let Some(edits) = &r.edits
        && sha256(&text) == r.sha256
        && let Some(original) = edits
            .iter()
            .rev()
            .try_fold(text.clone(), |t, e| e.revert(&t))
    {
        if !r.existed && original.is_empty() {
            userfile::remove(&file)?;
        } else {
            userfile::write(&file, &original, None)?;
        }
        return Ok(true);
    }
    // Changed since: the two lines out, every other byte kept.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let bare = |l: &str| l.trim_end_matches(['\n', '\r']).to_string();
    let Some(i) = (0..lines.len().saturating_sub(1))
        .find(|&i| bare(lines[i]) == EXCLUDE_MARK && bare(lines[i + 1]) == pattern)
    else {
        return Ok(false);
    };
    let mut out: String = lines[..i].concat();
    out.push_str(&lines[i + 2..].concat());
    userfile::write(&file, &out, None)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_entry_comes_out_with_the_objects_it_alone_made() {
        let keys: Vec<String> = vec!["projects".into(), "/p".into(), "mcpServers".into()];
        let original =
            "{\n  \"projects\": {\n    \"/q\": {\"x\": 1}\n  },\n  \"numStartups\": 3\n}\n";
        let entry = json!({"command": "cairn", "args": ["serve"]});
        let mut doc = Doc::new(original.into(), "f").unwrap();
        let (created, wrote) = add_server(&mut doc, &keys, NAME, &entry, false, "f").unwrap();
        assert!(wrote);
        assert_eq!(created, [keys[..2].to_vec(), keys.to_vec()]);
        let v: Value = serde_json::from_str(&doc.text).unwrap();
        assert_eq!(v["projects"]["/p"]["mcpServers"]["cairn"], entry);
        let rec = Record {
            created,
            entry: true,
            ..Record::default()
        };
        assert!(matches!(
            remove_server(&mut doc, &keys, Some(&rec)).unwrap(),
            Found::Removed
        ));
        assert_eq!(doc.text, original);
        // Another program named cairn is the user's: refused, then kept.
        let mine =
            "{\"projects\": {\"/p\": {\"mcpServers\": {\"cairn\": {\"command\": \"node\"}}}}}";
        let mut doc = Doc::new(mine.into(), "f").unwrap();
        let err = add_server(&mut doc, &keys, NAME, &entry, false, "f").unwrap_err();
        assert!(err.to_string().contains("did not write it"), "{err}");
        assert!(matches!(
            remove_server(&mut doc, &keys, None).unwrap(),
            Found::Theirs(_)
        ));
        assert_eq!(doc.text, mine);
        // A value on the way that is not an object is refused, not replaced.
        let mut doc = Doc::new("{\"projects\": []}".into(), "f").unwrap();
        assert!(add_server(&mut doc, &keys, NAME, &entry, false, "f").is_err());
        // An earlier installer's entry (another path to cairn) is cairn's.
        assert!(installed_entry(
            &json!({"command": "/opt/cairn", "args": ["serve"]}),
            &json!({"type": "stdio", "command": "cairn", "args": ["serve"], "env": {}})
        ));
        assert!(!installed_entry(
            &json!({"command": "cairn", "args": ["serve", "-v"]}),
            &json!({"command": "cairn", "args": ["serve"]})
        ));
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
