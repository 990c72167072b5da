//! `cairn mcp install <client>`: add cairn to an MCP client's configuration,
//! keeping every other entry (and, for TOML, every comment) as it was.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::jsontext::Doc;
use super::setup::{codex_server, codex_servers, read_toml};
use crate::args::McpClient as Client;
use serde_json::{Value, json};

/// The command clients should run: `cairn` when that name on PATH is this
/// very program, else this program's absolute path.
pub(crate) fn command() -> String {
    let exe = std::env::current_exe().ok();
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(if cfg!(windows) { "cairn.exe" } else { "cairn" }))
            .find(|p| p.is_file())
    });
    match (exe, on_path) {
        (Some(exe), Some(found)) if found.canonicalize().ok() == exe.canonicalize().ok() => {
            "cairn".into()
        }
        (Some(exe), _) => exe.to_string_lossy().into_owned(),
        (None, _) => "cairn".into(),
    }
}

/// [`command`], and when it is not `cairn` a notice on stderr (not stdout:
/// `--print`'s stdout is a snippet to paste) that the client will run this
/// absolute path. Every installer (`mcp install`, `hooks install`) writes
/// the program it returns.
pub(crate) fn announced_command() -> String {
    let cmd = command();
    if cmd != "cairn" {
        eprintln!(
            "cairn is not on PATH as this program: the client will run {cmd} \
             (`cargo install --path crates/cairn-cli` puts cairn on PATH)"
        );
    }
    cmd
}

/// Adds `entry` under `key.name` of a JSON config file as text (the rest of
/// the file byte for byte as it was), creating the file if needed; refuses a
/// file that is not a JSON object, a `key` that is not an object, and an
/// entry of that name that a cairn installer did not write. The new text,
/// or None when the file already holds the entry.
fn merge_json(path: &Path, key: &str, name: &str, entry: Value) -> anyhow::Result<Option<String>> {
    let file = path.display().to_string();
    let before = super::userfile::read(path)?;
    let mut doc = Doc::new(before.clone().unwrap_or_default(), &file)?;
    if let Some(found) = doc.value(&[key.into(), name.into()])
        && found != entry
        && !super::setup::installed_entry(&found, &entry)
    {
        bail!(
            "{file}: an MCP server named {name:?} is already there ({found}), and no cairn installer wrote it; \
             left unchanged (`--name` installs cairn under another name)"
        );
    }
    let (_, wrote) =
        super::setup::add_server(&mut doc, &[key.to_string()], name, &entry, true, &file)?;
    Ok((wrote && before.as_deref() != Some(doc.text.as_str())).then_some(doc.text))
}

fn codex_config() -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os("CODEX_HOME") {
        return Ok(PathBuf::from(home).join("config.toml"));
    }
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .context("no home folder (HOME) to find ~/.codex/config.toml")?;
    Ok(PathBuf::from(home).join(".codex").join("config.toml"))
}

/// What `cairn setup` does beyond this MCP entry, told after it.
fn setup_adds(client: Client) -> &'static str {
    match client {
        Client::ClaudeCode => {
            "memories are only searched on request: session capture and memory injection need \
             hooks too; `cairn setup claude-code` wires both, into your own \
             .claude/settings.local.json (this .mcp.json is shared with the team)"
        }
        Client::Codex => "session capture needs Codex's notify too: `cairn setup codex` wires both",
        Client::Cursor => {
            "`cairn setup cursor` writes the same entry and keeps it out of git (this file is shared)"
        }
        Client::Vscode => {
            "`cairn setup vscode` writes the same entry and keeps it out of git (this file is shared)"
        }
    }
}

pub fn install(root: &Path, client: Client, print: bool, name: &str) -> anyhow::Result<()> {
    let cmd = announced_command();
    match client {
        Client::Codex => {
            let path = codex_config()?;
            let (mut doc, _) = read_toml(&path)?;
            codex_servers(&mut doc, &path)?.insert(name, codex_server(&cmd));
            if print {
                let snippet =
                    format!("[mcp_servers.{name}]\ncommand = {cmd:?}\nargs = [\"serve\"]\n");
                say!("# add to {}\n{snippet}", path.display());
            } else {
                super::userfile::write(&path, &doc.to_string(), Some(0o600))?;
                say!("added MCP server {name:?} to {}", path.display());
                say!("{}", setup_adds(client));
            }
        }
        Client::ClaudeCode | Client::Cursor | Client::Vscode => {
            let (path, key, entry) = match client {
                // Claude Code starts project servers in the project folder.
                Client::ClaudeCode => (
                    root.join(".mcp.json"),
                    "mcpServers",
                    json!({"command": cmd, "args": ["serve"]}),
                ),
                Client::Cursor => (
                    root.join(".cursor").join("mcp.json"),
                    "mcpServers",
                    json!({"command": cmd, "args": ["serve", "-C", "${workspaceFolder}"]}),
                ),
                _ => (
                    root.join(".vscode").join("mcp.json"),
                    "servers",
                    json!({"type": "stdio", "command": cmd, "args": ["serve", "-C", "${workspaceFolder}"]}),
                ),
            };
            if print {
                say!(
                    "// add to {}\n{}",
                    path.display(),
                    serde_json::to_string_pretty(&json!({ key: { name: entry } }))?
                );
            } else {
                if let Some(text) = merge_json(&path, key, name, entry)? {
                    super::userfile::write(&path, &text, None)?;
                }
                say!("added MCP server {name:?} to {}", path.display());
                say!("{}", setup_adds(client));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_other_servers_and_refuses_broken_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"other": {"command": "x"}}, "keep": 1}"#,
        )
        .unwrap();
        let text = merge_json(&path, "mcpServers", "cairn", json!({"command": "cairn"}))
            .unwrap()
            .unwrap();
        assert_eq!(
            text,
            r#"{"mcpServers": {"other": {"command": "x"}, "cairn": {"command": "cairn"}}, "keep": 1}"#
        );
        // A server of that name that no installer wrote is refused.
        std::fs::write(&path, r#"{"mcpServers": {"cairn": {"command": "node"}}}"#).unwrap();
        assert!(merge_json(&path, "mcpServers", "cairn", json!({"command": "cairn"})).is_err());
        // "hooks"-like values of the wrong shape are refused, not replaced.
        std::fs::write(&path, r#"{"mcpServers": []}"#).unwrap();
        assert!(merge_json(&path, "mcpServers", "cairn", json!({"command": "cairn"})).is_err());
        std::fs::write(&path, "{ not json").unwrap();
        assert!(merge_json(&path, "mcpServers", "cairn", json!({})).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
    }
}
