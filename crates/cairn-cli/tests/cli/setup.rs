//! `cairn setup <agent>`: MCP and hooks in one command, into the user's own
//! settings; hooks a checkout without cairn runs exit 0 silently; session
//! logs hold no path of the machine.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::{Cli, Project};

const SESSION: &str = "8f1c2d3e-0000-4000-8000-000000000001";

/// A project in a git repository, with a home folder of its own.
struct Setup {
    p: Project,
    home: tempfile::TempDir,
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// PATH with the binary under test first (so installers write `cairn`),
/// then the system's (git).
fn path_with_cairn() -> std::ffi::OsString {
    let mut dirs = vec![super::path_with_cairn().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

impl Setup {
    fn new() -> Setup {
        let p = Project::with_config("[embed]\nmodel = \"none\"\n");
        git(&p.root(), &["init", "-q", "."]);
        Setup {
            p,
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn cairn(&self, args: &[&str]) -> Output {
        self.p
            .command(args)
            .env("HOME", self.home.path())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env("PATH", path_with_cairn())
            .output()
            .expect("cairn runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.cairn(args);
        assert!(out.status.success(), "cairn {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every file under the project (but .git/) and the home folder, with
    /// its text; and `.git/info/exclude`.
    fn files(&self) -> Vec<(PathBuf, String)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.file_name().is_some_and(|n| n == ".git") {
                    continue;
                }
                if p.is_dir() {
                    out.push((p.clone(), String::new()));
                    walk(&p, out);
                } else {
                    out.push((p.clone(), std::fs::read_to_string(&p).unwrap_or_default()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.p.root(), &mut out);
        walk(self.home.path(), &mut out);
        let exclude = self.p.path(".git/info/exclude");
        out.push((
            exclude.clone(),
            std::fs::read_to_string(exclude).unwrap_or_default(),
        ));
        out.sort();
        out
    }

    fn json(&self, path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn claude_json(&self) -> PathBuf {
        self.home.path().join(".claude.json")
    }
}

/// The hook commands of one event in a settings document.
fn commands(v: &Value, event: &str) -> Vec<String> {
    v["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().into_iter().flatten())
        .filter_map(|h| h["command"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn setup_claude_code_writes_local_settings_once_and_undo_leaves_nothing() {
    let s = Setup::new();
    let before = s.files();

    // --print shows it all and writes nothing.
    let printed = s.ok(&["setup", "claude-code", "--print"]);
    assert!(
        printed.contains(".claude/settings.local.json")
            && printed.contains(".claude.json")
            && printed.contains("exec cairn hook claude-code UserPromptSubmit"),
        "{printed}"
    );
    assert_eq!(s.files(), before, "--print wrote something");

    let out = s.ok(&["setup", "claude-code"]);
    assert!(out.contains("restart Claude Code"), "{out}");
    let local = s.p.path(".claude/settings.local.json");
    let settings = s.json(&local);
    for event in ["Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"] {
        assert_eq!(
            commands(&settings, event),
            [format!(
                "command -v cairn >/dev/null 2>&1 || exit 0; exec cairn hook claude-code {event}"
            )],
            "{settings}"
        );
    }
    // The shared files are not touched.
    assert!(!s.p.path(".claude/settings.json").exists());
    assert!(!s.p.path(".mcp.json").exists());
    // MCP in Claude Code's local scope: ~/.claude.json under the project's path.
    let key = s.p.root().canonicalize().unwrap().display().to_string();
    let user = s.json(&s.claude_json());
    assert_eq!(
        user["projects"][&key]["mcpServers"]["cairn"]["command"], "cairn",
        "{user}"
    );
    assert_eq!(
        user["projects"][&key]["mcpServers"]["cairn"]["args"][0],
        "serve"
    );
    // Kept out of git.
    let status = git(
        &s.p.root(),
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(!status.contains("settings.local.json"), "{status}");

    // Twice changes nothing.
    let once = s.files();
    let out = s.ok(&["setup", "claude-code"]);
    assert!(out.contains("nothing changed"), "{out}");
    assert_eq!(s.files(), once);

    // --undo leaves what was there before.
    s.ok(&["setup", "claude-code", "--undo"]);
    assert_eq!(s.files(), before);
    let out = s.ok(&["setup", "claude-code", "--undo"]);
    assert!(out.contains("nothing of cairn's"), "{out}");
}

#[test]
fn undo_keeps_the_users_own_hooks_and_servers() {
    let s = Setup::new();
    let mine = serde_json::json!({
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify-me.sh"}]}]}
    });
    s.p.write(
        ".claude/settings.local.json",
        &serde_json::to_string_pretty(&mine).unwrap(),
    );
    let key = s.p.root().canonicalize().unwrap().display().to_string();
    let user = serde_json::json!({
        "numStartups": 4,
        "projects": {&key: {"allowedTools": [], "mcpServers": {"db": {"command": "pg-mcp"}}}}
    });
    std::fs::write(s.claude_json(), user.to_string()).unwrap();

    s.ok(&["setup", "claude-code"]);
    let settings = s.json(&s.p.path(".claude/settings.local.json"));
    assert_eq!(
        commands(&settings, "Stop"),
        [
            "./notify-me.sh".to_string(),
            "command -v cairn >/dev/null 2>&1 || exit 0; exec cairn hook claude-code Stop".into()
        ]
    );
    let u = s.json(&s.claude_json());
    assert_eq!(u["projects"][&key]["mcpServers"]["db"]["command"], "pg-mcp");
    assert_eq!(
        u["projects"][&key]["mcpServers"]["cairn"]["command"],
        "cairn"
    );

    s.ok(&["setup", "claude-code", "--undo"]);
    assert_eq!(s.json(&s.p.path(".claude/settings.local.json")), mine);
    assert_eq!(s.json(&s.claude_json()), user);
}

#[test]
fn shared_setup_writes_the_committed_files_and_refuses_a_tracked_local_one() {
    let s = Setup::new();
    s.ok(&["setup", "claude-code", "--shared"]);
    let shared = s.json(&s.p.path(".claude/settings.json"));
    assert_eq!(commands(&shared, "SessionEnd").len(), 1, "{shared}");
    assert_eq!(
        s.json(&s.p.path(".mcp.json"))["mcpServers"]["cairn"]["command"],
        "cairn"
    );
    assert!(!s.claude_json().exists());
    let status = git(
        &s.p.root(),
        &["status", "--porcelain", "--untracked-files=all"],
    );
    assert!(
        status.contains(".claude/settings.json") && status.contains(".mcp.json"),
        "{status}"
    );
    s.ok(&["setup", "claude-code", "--shared", "--undo"]);
    assert!(!s.p.path(".claude").exists() && !s.p.path(".mcp.json").exists());

    // A project file git tracks is the team's: only --shared changes it.
    s.p.write(".cursor/mcp.json", "{}\n");
    git(&s.p.root(), &["add", ".cursor/mcp.json"]);
    let out = s.cairn(&["setup", "cursor"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--shared"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(s.p.path(".cursor/mcp.json")).unwrap(),
        "{}\n"
    );
}

#[test]
fn setup_for_the_other_agents_is_idempotent_and_undone() {
    let s = Setup::new();
    let codex = s.home.path().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, "# mine\nmodel = \"o3\"\n").unwrap();
    let before = s.files();
    for agent in ["codex", "cursor", "vscode", "opencode"] {
        s.ok(&["setup", agent]);
        let once = s.files();
        s.ok(&["setup", agent]);
        assert_eq!(s.files(), once, "{agent}: a second run changed something");
    }
    assert!(
        std::fs::read_to_string(&codex)
            .unwrap()
            .contains("[mcp_servers.cairn]")
    );
    assert_eq!(
        s.json(&s.p.path(".vscode/mcp.json"))["servers"]["cairn"]["type"],
        "stdio"
    );
    let oc = s.json(&s.p.path("opencode.json"));
    assert_eq!(
        oc["mcp"]["cairn"]["command"],
        serde_json::json!(["cairn", "serve"])
    );
    assert!(s.p.path(".opencode/plugins/cairn-capture.js").is_file());
    let status = git(
        &s.p.root(),
        &["status", "--porcelain", "--untracked-files=all"],
    );
    for file in ["opencode.json", ".cursor", ".vscode", ".opencode"] {
        assert!(!status.contains(file), "{file} not kept local: {status}");
    }
    for agent in ["codex", "cursor", "vscode", "opencode"] {
        s.ok(&["setup", agent, "--undo"]);
    }
    assert_eq!(s.files(), before);
}

/// Runs a hook command as Claude Code does (through `sh -c`) with `PATH`.
#[cfg(unix)]
fn run_hook_command(
    dir: &Path,
    command: &str,
    path: &std::ffi::OsStr,
    home: &Path,
    input: &str,
) -> Output {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("CAIRN_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The guard exits without reading stdin: a closed pipe is no failure.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

/// The fixture session, as if recorded in the project at `root`: its
/// transcript where Claude Code keeps it, under `home`.
fn claude_transcript(root: &Path, home: &Path) -> PathBuf {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/claude-session.jsonl");
    let text = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("/home/dev/shop", &root.display().to_string());
    let folder = root.display().to_string().replace(['/', '.'], "-");
    let path = home
        .join(".claude/projects")
        .join(folder)
        .join(format!("{SESSION}.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// The hooks setup wrote run cairn; in a checkout without cairn they exit
/// 0 and say nothing; the session they capture holds no path of the machine.
#[cfg(unix)]
#[test]
fn the_written_hooks_capture_and_without_cairn_exit_0_silently() {
    let s = Setup::new();
    s.ok(&["setup", "claude-code"]);
    let settings = s.json(&s.p.path(".claude/settings.local.json"));
    let root = s.p.root().canonicalize().unwrap();
    let transcript = claude_transcript(&root, s.home.path());
    let input = serde_json::json!({
        "session_id": SESSION,
        "transcript_path": transcript,
        "cwd": root,
        "hook_event_name": "Stop",
    })
    .to_string();

    // A teammate's checkout: no cairn on PATH. Every hook: 0, silent.
    let empty = tempfile::tempdir().unwrap();
    for event in ["Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"] {
        let [command] = &commands(&settings, event)[..] else {
            panic!("{settings}");
        };
        let out = run_hook_command(
            &root,
            command,
            empty.path().as_os_str(),
            s.home.path(),
            &input,
        );
        assert!(out.status.success(), "{event}: {out:?}");
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "{event}: {out:?}"
        );
    }
    assert!(!s.p.path(".cairn/memory/sessions").exists());

    // With cairn: the Stop hook captures the session.
    let [stop] = &commands(&settings, "Stop")[..] else {
        panic!("{settings}");
    };
    let out = run_hook_command(&root, stop, &path_with_cairn(), s.home.path(), &input);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    let logs: Vec<_> = std::fs::read_dir(s.p.path(".cairn/memory/sessions"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(logs.len(), 1);
    let log = std::fs::read_to_string(logs[0].path()).unwrap();
    assert!(
        log.contains(&format!(
            "<!-- session:{SESSION} turn:a4 client:claude-code -->"
        )) && log.contains("src/auth/password.rs"),
        "{log}"
    );
    // A memory too, so that log.jsonl is written.
    s.ok(&[
        "remember",
        "Legacy bcrypt hashes are rehashed to argon2id at login",
        "--source",
        "src/auth/password.rs",
    ]);

    // Nothing of this machine in what is committed.
    let machine = [
        s.p.root().display().to_string(),
        root.display().to_string(),
        s.home.path().display().to_string(),
        s.home.path().canonicalize().unwrap().display().to_string(),
        root.display().to_string().replace(['/', '.'], "-"),
    ];
    let mut seen = 0;
    for e in walk(&s.p.path(".cairn/memory")) {
        let text = std::fs::read_to_string(&e).unwrap();
        seen += 1;
        for m in &machine {
            assert!(
                !text.contains(m.as_str()),
                "{m} in {}:\n{text}",
                e.display()
            );
        }
    }
    assert!(seen >= 3, "session log, memory, log.jsonl: {seen} files");
    assert!(s.p.path(".cairn/memory/log.jsonl").is_file());
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `mcp install` says what it leaves out and which command adds it; it
/// writes where `setup` does (issue 61: one default, local, everywhere):
/// your own settings, not the team's `.mcp.json`.
#[test]
fn mcp_install_names_setup() {
    let s = Setup::new();
    let out = s.ok(&["mcp", "install", "claude-code"]);
    assert!(
        out.contains("cairn setup claude-code") && out.contains("hooks"),
        "{out}"
    );
    assert!(
        !s.p.path(".mcp.json").exists(),
        "the shared file is left alone"
    );
    let v = s.json(&s.claude_json());
    assert!(
        v["projects"]
            .as_object()
            .is_some_and(|p| p.values().any(|e| e["mcpServers"]["cairn"].is_object())),
        "{v}"
    );
    // And `hooks install` writes your own settings too.
    s.ok(&["hooks", "install", "claude-code"]);
    assert!(s.p.path(".claude/settings.local.json").exists());
    assert!(!s.p.path(".claude/settings.json").exists());
}

/// The Claude Code plugin (`plugins/claude-code`, listed in the repository's
/// `.claude-plugin/marketplace.json`) carries the hooks and the MCP server
/// `setup` writes.
#[test]
fn the_claude_code_plugin_matches_what_setup_writes() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let read = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(repo.join(rel)).unwrap()).unwrap()
    };
    let market = read(".claude-plugin/marketplace.json");
    assert!(market["owner"]["name"].is_string(), "{market}");
    let entry = &market["plugins"][0];
    let source = entry["source"].as_str().unwrap();
    assert!(source.starts_with("./"), "{source}");
    let plugin = read(&format!("{}/.claude-plugin/plugin.json", &source[2..]));
    assert_eq!(plugin["name"], entry["name"]);
    assert_eq!(plugin["mcpServers"]["cairn"]["command"], "cairn");
    assert_eq!(plugin["mcpServers"]["cairn"]["args"][0], "serve");
    let hooks = read(&format!("{}/hooks/hooks.json", &source[2..]));

    let s = Setup::new();
    s.ok(&["setup", "claude-code"]);
    let settings = s.json(&s.p.path(".claude/settings.local.json"));
    assert_eq!(hooks["hooks"], settings["hooks"]);
}

/// What `stat` and `sha256sum` say of a user's file, as the tests of
/// issue 60 compare them: mode, owner, whether the path is a link (and
/// where to), and the bytes (through the link). None when there is none.
#[cfg(unix)]
#[derive(Debug, PartialEq)]
struct Stat {
    mode: u32,
    owner: (u32, u32),
    link: Option<PathBuf>,
    bytes: String,
}

#[cfg(unix)]
fn stat(path: &Path) -> Option<Stat> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(Stat {
        mode: m.mode() & 0o7777,
        owner: (m.uid(), m.gid()),
        link: std::fs::read_link(path).ok(),
        bytes: String::from_utf8(std::fs::read(path).unwrap()).unwrap(),
    })
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A `~/.claude.json` as Claude Code keeps it: the account and its key.
const ACCOUNT: &str = "{\n    \"numStartups\": 12,\n    \"oauthAccount\": {\"emailAddress\": \"me@example.com\"},\n    \"primaryApiKey\": \"sk-ant-api03-NOT-A-REAL-KEY\",\n    \"projects\": {}\n}";

#[cfg(unix)]
#[test]
fn claude_json_keeps_its_mode_owner_and_bytes_through_setup_and_undo() {
    let s = Setup::new();
    let file = s.claude_json();
    std::fs::write(&file, ACCOUNT).unwrap();
    set_mode(&file, 0o600);
    // As root the file can be another user's: it stays theirs.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&file, Some(1000), Some(1000)).unwrap();
    }
    let before = stat(&file).unwrap();

    s.ok(&["setup", "claude-code"]);
    let during = stat(&file).unwrap();
    assert_eq!(during.mode, 0o600, "mode after setup");
    assert_eq!(during.owner, before.owner, "owner after setup");
    let key = s.p.root().canonicalize().unwrap().display().to_string();
    let u = s.json(&file);
    assert_eq!(
        u["projects"][&key]["mcpServers"]["cairn"]["command"],
        "cairn"
    );
    assert_eq!(u["primaryApiKey"], "sk-ant-api03-NOT-A-REAL-KEY");
    // The user's bytes are all there, in their order and layout.
    let text = during.bytes.clone();
    assert!(
        text.starts_with("{\n    \"numStartups\": 12,\n    \"oauthAccount\": {\"emailAddress\": \"me@example.com\"},\n    \"primaryApiKey\": \"sk-ant-api03-NOT-A-REAL-KEY\",\n    \"projects\": {"),
        "{text}"
    );
    // What setup recorded for --undo holds no byte of the account.
    let records = std::fs::read_to_string(s.p.path(".user-data/setup.json")).unwrap();
    assert!(
        !records.contains("sk-ant") && !records.contains("me@example"),
        "{records}"
    );

    s.ok(&["setup", "claude-code", "--undo"]);
    assert_eq!(stat(&file).unwrap(), before, "after --undo");
    assert!(!s.p.path(".user-data").exists());

    // A ~/.claude.json setup makes is the user's alone, as Claude Code's is.
    std::fs::remove_file(&file).unwrap();
    s.ok(&["setup", "claude-code"]);
    assert_eq!(stat(&file).unwrap().mode, 0o600);
    s.ok(&["setup", "claude-code", "--undo"]);
    assert!(!file.exists());
}

#[cfg(unix)]
#[test]
fn linked_settings_stay_links_and_their_targets_come_back_byte_for_byte() {
    let s = Setup::new();
    let dotfiles = s.home.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("claude.json"), ACCOUNT).unwrap();
    set_mode(&dotfiles.join("claude.json"), 0o600);
    std::os::unix::fs::symlink("dotfiles/claude.json", s.claude_json()).unwrap();
    let local_target = dotfiles.join("settings.local.json");
    std::fs::write(&local_target, "{\n  \"permissions\": {}\n}\n").unwrap();
    std::fs::create_dir_all(s.p.path(".claude")).unwrap();
    let local = s.p.path(".claude/settings.local.json");
    std::os::unix::fs::symlink(&local_target, &local).unwrap();
    let paths = [
        s.claude_json(),
        dotfiles.join("claude.json"),
        local.clone(),
        local_target.clone(),
    ];
    let before: Vec<_> = paths.iter().map(|p| stat(p)).collect();

    s.ok(&["setup", "claude-code"]);
    for link in [s.claude_json(), local.clone()] {
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{} is no longer a link",
            link.display()
        );
    }
    assert_eq!(commands(&s.json(&local_target), "Stop").len(), 1);
    let key = s.p.root().canonicalize().unwrap().display().to_string();
    assert_eq!(
        s.json(&dotfiles.join("claude.json"))["projects"][&key]["mcpServers"]["cairn"]["command"],
        "cairn"
    );
    assert_eq!(stat(&dotfiles.join("claude.json")).unwrap().mode, 0o600);

    s.ok(&["setup", "claude-code", "--undo"]);
    let after: Vec<_> = paths.iter().map(|p| stat(p)).collect();
    assert_eq!(after, before);
}

#[test]
fn a_cairn_server_the_user_wrote_is_refused_and_never_removed() {
    let s = Setup::new();
    let key = s.p.root().canonicalize().unwrap().display().to_string();
    let mine = serde_json::json!({"projects": {&key: {"mcpServers": {"cairn": {
        "command": "/home/me/src/cairn/target/release/cairn", "args": ["serve", "--verbose"]
    }}}}})
    .to_string();
    std::fs::write(s.claude_json(), &mine).unwrap();
    let before = s.files();

    let out = s.cairn(&["setup", "claude-code"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        err.contains("did not write it") && err.contains(".claude.json"),
        "{err}"
    );
    // Refused before anything was written: no hooks either.
    assert_eq!(s.files(), before);

    let out = s.ok(&["setup", "claude-code", "--undo"]);
    assert!(out.contains("left as it is"), "{out}");
    assert_eq!(std::fs::read_to_string(s.claude_json()).unwrap(), mine);

    // `mcp install` does not replace it either.
    s.p.write(
        ".mcp.json",
        r#"{"mcpServers": {"cairn": {"command": "node", "args": ["x.js"]}}}"#,
    );
    let out = s.cairn(&["mcp", "install", "claude-code", "--shared"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        std::fs::read_to_string(s.p.path(".mcp.json"))
            .unwrap()
            .contains("x.js")
    );
}

#[test]
fn hooks_of_any_shape_get_an_answer_and_the_users_value_stays() {
    let s = Setup::new();
    for (text, says) in [
        ("{\"hooks\": []}\n", "\"hooks\" is a list"),
        ("{\"hooks\": \"none\"}\n", "\"hooks\" is a string"),
        (
            "{\"hooks\": {\"Stop\": {\"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}}}\n",
            "hooks.Stop is an object",
        ),
    ] {
        for (args, rel) in [
            (&["setup", "claude-code"][..], ".claude/settings.local.json"),
            (
                &["hooks", "install", "claude-code"][..],
                ".claude/settings.local.json",
            ),
            (
                &["hooks", "install", "claude-code", "--shared"][..],
                ".claude/settings.json",
            ),
        ] {
            s.p.write(rel, text);
            let before = s.files();
            let out = s.cairn(args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?} on {text}: {out:?}");
            assert!(
                err.contains(says) && err.contains(rel),
                "{args:?} on {text}: {err}"
            );
            assert_eq!(s.files(), before, "{args:?} changed a file on {text}");
            s.p.remove(rel);
        }
    }
    // Groups and hooks of odd shapes are the user's: kept, cairn's added.
    let odd = "{\"hooks\": {\"Stop\": [1, \"a\", {\"hooks\": 3}, {\"hooks\": [null, 2]}]}}";
    s.p.write(".claude/settings.local.json", odd);
    let before = s.files();
    s.ok(&["setup", "claude-code"]);
    let v = s.json(&s.p.path(".claude/settings.local.json"));
    assert_eq!(v["hooks"]["Stop"][3]["hooks"], serde_json::json!([null, 2]));
    assert_eq!(commands(&v, "Stop").len(), 1, "{v}");
    s.ok(&["setup", "claude-code", "--undo"]);
    assert_eq!(s.files(), before);
}

#[cfg(unix)]
#[test]
fn undo_gives_back_the_users_settings_and_exclude_byte_for_byte() {
    let s = Setup::new();
    // The user's own layout: four spaces, CRLF, no final newline, an
    // empty event of theirs; an exclude file with no final newline.
    let settings = "{\r\n    \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\r\n    \"hooks\": {\r\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./notify-me.sh\"}]}],\r\n        \"SessionStart\": [ ]\r\n    }\r\n}";
    s.p.write(".claude/settings.local.json", settings);
    set_mode(&s.p.path(".claude/settings.local.json"), 0o640);
    let exclude = s.p.path(".git/info/exclude");
    std::fs::write(&exclude, "# mine\n*.swp\n/scratch").unwrap();
    set_mode(&exclude, 0o600);
    let user = s.claude_json();
    std::fs::write(&user, ACCOUNT).unwrap();
    set_mode(&user, 0o600);
    let paths = [
        s.p.path(".claude/settings.local.json"),
        exclude.clone(),
        user,
    ];
    let before: Vec<_> = paths.iter().map(|p| stat(p)).collect();
    let files = s.files();

    s.ok(&["setup", "claude-code"]);
    let text = std::fs::read_to_string(&paths[0]).unwrap();
    // Inserted in the file's own layout; the user's bytes before it untouched.
    assert!(
        text.starts_with("{\r\n    \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\r\n    \"hooks\": {\r\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./notify-me.sh\"}]}, {\"hooks\": [{\"type\": \"command\", \"command\": \"command -v cairn"),
        "{text}"
    );
    assert_eq!(commands(&s.json(&paths[0]), "SessionStart").len(), 1);
    assert!(
        std::fs::read_to_string(&exclude)
            .unwrap()
            .starts_with("# mine\n*.swp\n/scratch\n# cairn setup")
    );
    // Twice: nothing changes.
    let once = s.files();
    s.ok(&["setup", "claude-code"]);
    assert_eq!(s.files(), once);

    s.ok(&["setup", "claude-code", "--undo"]);
    let after: Vec<_> = paths.iter().map(|p| stat(p)).collect();
    assert_eq!(after, before);
    assert_eq!(s.files(), files);
}

#[test]
fn a_file_that_was_empty_is_left_empty() {
    let s = Setup::new();
    s.p.write(".claude/settings.local.json", "");
    std::fs::write(s.claude_json(), "").unwrap();
    let before = s.files();
    s.ok(&["setup", "claude-code"]);
    assert_eq!(
        commands(&s.json(&s.p.path(".claude/settings.local.json")), "Stop").len(),
        1
    );
    s.ok(&["setup", "claude-code", "--undo"]);
    assert_eq!(s.files(), before);
    assert_eq!(
        std::fs::read(s.p.path(".claude/settings.local.json")).unwrap(),
        b""
    );
    assert_eq!(std::fs::read(s.claude_json()).unwrap(), b"");
    // Codex's config too.
    let codex = s.home.path().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, "").unwrap();
    s.ok(&["setup", "codex"]);
    assert!(
        std::fs::read_to_string(&codex)
            .unwrap()
            .contains("[mcp_servers.cairn]")
    );
    s.ok(&["setup", "codex", "--undo"]);
    assert_eq!(std::fs::read(&codex).unwrap(), b"");
}

/// Claude Code rewrites `~/.claude.json` as it runs, and the user edits
/// their settings: `--undo` then takes out cairn's entries and keeps
/// everything else, the user's changes included.
#[test]
fn undo_after_the_files_changed_takes_out_only_cairns_entries() {
    let s = Setup::new();
    std::fs::write(s.claude_json(), ACCOUNT).unwrap();
    s.p.write(".claude/settings.local.json", "{\"env\": {\"A\": \"1\"}}\n");
    s.ok(&["setup", "claude-code"]);
    let key = s.p.root().canonicalize().unwrap().display().to_string();

    // Claude Code's own rewrite: two spaces, a counter, the project's state.
    let mut u = s.json(&s.claude_json());
    u["numStartups"] = 13.into();
    u["projects"][&key]["allowedTools"] = serde_json::json!([]);
    std::fs::write(s.claude_json(), serde_json::to_string_pretty(&u).unwrap()).unwrap();
    // The user's own hook, added after setup's.
    let local = s.p.path(".claude/settings.local.json");
    let mut v = s.json(&local);
    v["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"hooks": [{"type": "command", "command": "./mine.sh"}]}));
    std::fs::write(&local, serde_json::to_string_pretty(&v).unwrap()).unwrap();

    s.ok(&["setup", "claude-code", "--undo"]);
    let u = s.json(&s.claude_json());
    assert_eq!(u["numStartups"], 13);
    assert_eq!(u["projects"][&key], serde_json::json!({"allowedTools": []}));
    assert_eq!(u["primaryApiKey"], "sk-ant-api03-NOT-A-REAL-KEY");
    let v = s.json(&local);
    assert_eq!(
        v,
        serde_json::json!({"env": {"A": "1"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./mine.sh"}]}]}})
    );
}

/// Two projects set up in one `~/.claude.json`, undone in either order:
/// the file comes back as it was.
#[test]
fn two_projects_undone_in_either_order_leave_claude_json_as_it_was() {
    for first_undone in [0, 1] {
        let a = Setup::new();
        let b = Project::with_config("[embed]\nmodel = \"none\"\n");
        git(&b.root(), &["init", "-q", "."]);
        let run_b = |args: &[&str]| {
            let out = b
                .command(args)
                .env("HOME", a.home.path())
                .env("CAIRN_DATA_DIR", a.p.path(".user-data"))
                .env_remove("CLAUDE_CONFIG_DIR")
                .env("PATH", path_with_cairn())
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
        };
        std::fs::write(a.claude_json(), ACCOUNT).unwrap();
        a.ok(&["setup", "claude-code"]);
        run_b(&["setup", "claude-code"]);
        let key = |p: &Project| p.root().canonicalize().unwrap().display().to_string();
        let u = a.json(&a.claude_json());
        for p in [&a.p, &b] {
            assert_eq!(
                u["projects"][key(p)]["mcpServers"]["cairn"]["command"],
                "cairn"
            );
        }
        if first_undone == 0 {
            a.ok(&["setup", "claude-code", "--undo"]);
            run_b(&["setup", "claude-code", "--undo"]);
        } else {
            run_b(&["setup", "claude-code", "--undo"]);
            a.ok(&["setup", "claude-code", "--undo"]);
        }
        assert_eq!(
            std::fs::read_to_string(a.claude_json()).unwrap(),
            ACCOUNT,
            "undone {}",
            ["a first", "b first"][first_undone]
        );
    }
}
