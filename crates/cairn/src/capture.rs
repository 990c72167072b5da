//! Capture from agents: a client's hook hands us its transcript; the new
//! turns since the last capture become an extractive summary in the daily
//! session log (`<memory>/sessions/YYYY-MM-DD.md`), which is indexed like any
//! memory. `transcript` reads the original turns back (progressive
//! disclosure: search → expand → transcript).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_ingest::{
    Turn, parse_claude_transcript, parse_codex_rollout, parse_openclaw_session,
    parse_opencode_session, redact, summarize,
};
use serde::{Deserialize, Serialize};

use crate::clients::read_session;
use crate::engine::Engine;
use crate::error::{Error, Result, io};
use crate::progress::NoProgress;
use crate::vault::write_atomic;

/// What a client's hook passes on stdin (Claude Code's shape; unknown fields ignored).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct HookInput {
    /// The client's session id.
    pub session_id: String,
    /// The session's transcript (JSONL), or for OpenCode its store (the
    /// `opencode.db` database or the older `storage/` folder).
    pub transcript_path: String,
    /// The folder the agent works in.
    pub cwd: String,
    /// `Stop`, `SessionEnd`, …
    pub hook_event_name: String,
}

/// What a capture did.
#[derive(Clone, Debug, Serialize)]
pub struct Captured {
    /// Turns read since the last capture of this session.
    pub turns: usize,
    /// The daily log written to (None when there was nothing new).
    pub log: Option<PathBuf>,
    /// `llm` or `extractive`.
    pub summary: &'static str,
    /// Why the configured model was not used (the extractive summary was).
    pub llm_error: Option<String>,
}

/// What `compact` did.
#[derive(Clone, Debug, Serialize)]
pub struct Compacted {
    /// Memories summarised.
    pub memories: usize,
    /// The summary.
    pub summary: String,
    /// The daily log it was appended to (None for a dry run).
    pub log: Option<PathBuf>,
}

/// Which memories `compact` takes.
#[derive(Clone, Debug, Default)]
pub struct CompactOptions {
    /// Created at or after this time: RFC 3339, a date, or a span back from now (`7d`).
    pub since: Option<String>,
    /// Only these types.
    pub types: Vec<String>,
    /// Only these tags.
    pub tags: Vec<String>,
    /// Print only; write nothing.
    pub dry_run: bool,
}

const SESSION_PROMPT: &str = "You summarise a stretch of a coding agent's session for its long-term memory. \
Write at most 8 short bullet points: what the user asked, decisions taken and why, facts learned about \
the code or the user, files changed, commands that mattered, errors and how they were resolved. \
No preamble. Never repeat secrets.";

const COMPACT_PROMPT: &str = "You compact an AI coding agent's memories. Write a concise markdown summary \
that keeps every fact, decision, convention and code pattern (names, paths, versions, numbers exactly as \
given), groups related items, and drops repetition. No preamble.";

/// Original turns around one turn of a session.
#[derive(Clone, Debug, Serialize)]
pub struct TranscriptView {
    /// The session.
    pub session_id: String,
    /// Its transcript file.
    pub transcript: PathBuf,
    /// The turn asked for (or the session's last).
    pub turn_id: String,
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

/// Per session: the transcript and how many of its lines were captured
/// (for OpenCode: its store, and how many messages).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SessionState {
    client: String,
    transcript: PathBuf,
    lines: usize,
}

type State = BTreeMap<String, SessionState>;

/// The transcript parser of a client.
fn parser(client: &str) -> Result<fn(&str, usize) -> Vec<Turn>> {
    match client {
        "claude-code" => Ok(parse_claude_transcript),
        "codex" => Ok(parse_codex_rollout),
        "opencode" => Ok(parse_opencode_session),
        "openclaw" => Ok(parse_openclaw_session),
        other => Err(Error::Query(format!(
            "unknown client {other:?}: claude-code, codex, opencode or openclaw"
        ))),
    }
}

impl Engine {
    fn hooks_dir(&self) -> PathBuf {
        crate::paths::hooks_dir(&self.root)
    }

    fn load_state(&self) -> State {
        std::fs::read_to_string(self.hooks_dir().join("state.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// The configured language model, if any (`[llm]`); its key is read
    /// from the variable `api_key_env` names.
    pub fn llm(&self) -> Result<Option<cairn_llm::Provider>> {
        let c = &self.config.llm;
        let (api, default_url) = match c.provider.as_str() {
            "" | "none" => return Ok(None),
            "openai" => (cairn_llm::Api::OpenAi, "https://api.openai.com/v1"),
            "anthropic" => (cairn_llm::Api::Anthropic, "https://api.anthropic.com"),
            other => {
                return Err(Error::Query(format!(
                    "[llm] provider {other:?}: use \"openai\" (any OpenAI-compatible server), \"anthropic\" or \"none\""
                )));
            }
        };
        if c.model.trim().is_empty() {
            return Err(Error::Query("[llm] model is not set".into()));
        }
        let api_key = if c.api_key_env.is_empty() {
            String::new()
        } else {
            std::env::var(&c.api_key_env).map_err(|_| {
                Error::Query(format!(
                    "[llm] api_key_env names {}, which is not set in the environment",
                    c.api_key_env
                ))
            })?
        };
        Ok(Some(cairn_llm::Provider {
            api,
            base_url: if c.base_url.is_empty() {
                default_url.to_string()
            } else {
                c.base_url.clone()
            },
            model: c.model.clone(),
            api_key,
            timeout: Duration::from_millis(c.timeout_ms.max(1)),
        }))
    }

    /// Asks the language model for a summary of recent memories and appends
    /// it to today's session log (indexed like any memory); a dry run only
    /// returns it. Without `[llm]` settings: an error saying how to add them.
    pub fn compact(&self, opts: &CompactOptions) -> Result<Compacted> {
        let Some(provider) = self.llm()? else {
            return Err(Error::Query(
                "compact needs a language model: set [llm] provider = \"openai\" (or \"anthropic\"), \
                 model and api_key_env (the name of the variable holding the key) in \
                 ~/.config/cairn/config.toml, or CAIRN_LLM_PROVIDER / CAIRN_LLM_MODEL / \
                 CAIRN_LLM_API_KEY_ENV (and CAIRN_LLM_BASE_URL for Ollama, vLLM or LM Studio)"
                    .into(),
            ));
        };
        let since = match opts.since.as_deref() {
            None => None,
            Some(s) => Some(
                crate::vault::parse_ttl(s)
                    .map(|secs| jiff::Timestamp::now().as_second() - secs)
                    .or_else(|| crate::vault::parse_time(s))
                    .ok_or_else(|| {
                        Error::Query(format!("since {s:?}: use 7d, 12h, a date or RFC 3339"))
                    })?,
            ),
        };
        let memories: Vec<_> = self
            .list_memories(&crate::memory::ListOptions {
                types: opts.types.clone(),
                tags: opts.tags.clone(),
                limit: 10_000,
                ..Default::default()
            })?
            .into_iter()
            .filter(|m| {
                since.is_none_or(|s| {
                    crate::vault::parse_time(&m.memory.created).is_some_and(|c| c >= s)
                })
            })
            .collect();
        if memories.is_empty() {
            return Err(Error::NotFound(
                "no memories match: nothing to compact".into(),
            ));
        }
        let prompt: String = memories
            .iter()
            .map(|m| {
                format!(
                    "- [{} · importance {} · {}] {}",
                    m.memory.kind, m.memory.importance, m.memory.created, m.text
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let summary = redact(
            &provider
                .complete(COMPACT_PROMPT, &redact(&prompt), 1200)
                .map_err(|e| {
                    // A provider's error body can echo the request's key.
                    Error::Query(redact(&format!("the language model failed: {e}")))
                })?,
        );
        let mut log = None;
        if !opts.dry_run {
            let now = jiff::Timestamp::now();
            let day = now.strftime("%Y-%m-%d").to_string();
            let path = self.memory_dir().join("sessions").join(format!("{day}.md"));
            let _lock =
                crate::lock::Locked::take(&self.hooks_dir().join("lock"), Duration::from_secs(3))?;
            let _one_writer = self.memory_writer()?;
            let mut body = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => format!("# Sessions {day}\n"),
                Err(e) => return Err(io(&path)(e)),
            };
            body.push_str(&format!(
                "\n### {} compact\n\n<!-- compact: {} memories{} -->\n\n{summary}\n",
                now.strftime("%H:%M"),
                memories.len(),
                opts.since
                    .as_deref()
                    .map(|s| format!(" since {s}"))
                    .unwrap_or_default()
            ));
            write_atomic(&path, &body)?;
            self.index(&[], &NoProgress)?;
            log = Some(path);
        }
        Ok(Compacted {
            memories: memories.len(),
            summary,
            log,
        })
    }

    /// Captures the turns of a Claude Code session; see [`Engine::capture`].
    pub fn capture_claude(&self, input: &HookInput) -> Result<Captured> {
        self.capture("claude-code", input)
    }

    /// Captures the turns of a client's session (`claude-code` transcript,
    /// `codex` rollout, `opencode` store, `openclaw` transcript) added since
    /// its last capture: summary (secrets removed) under `### HH:MM` in
    /// today's session log (UTC) with an anchor comment
    /// `<!-- session:<id> turn:<id> client:<client> -->`, then indexed;
    /// paths of the project in the summary are relative, the home folder `~`.
    /// What was captured is counted in lines of the transcript (for OpenCode,
    /// messages in order), so a run with nothing new writes nothing.
    pub fn capture(&self, client: &str, input: &HookInput) -> Result<Captured> {
        if input.session_id.trim().is_empty() || input.transcript_path.trim().is_empty() {
            return Err(Error::Query(
                "hook input needs session_id and transcript_path".into(),
            ));
        }
        let _lock =
            crate::lock::Locked::take(&self.hooks_dir().join("lock"), Duration::from_secs(3))?;
        let mut state = self.load_state();
        let parse = parser(client)?;
        let key = format!("{client}:{}", input.session_id);
        let transcript = PathBuf::from(&input.transcript_path);
        // The one check `cairn transcript` reads through: a session captured
        // from a file it would refuse could never be read back (issue 61),
        // and a hook's input names any file it likes.
        if !self.known_transcript(&transcript) {
            return Err(Error::PathRefused {
                path: transcript.display().to_string(),
                reason: TRANSCRIPT_FOLDERS.into(),
            });
        }
        let text = read_session(client, &transcript, &input.session_id)?;
        let done = state.get(&key).map_or(0, |s| s.lines);
        let all_lines = text.lines().count();
        let new: String = text.lines().skip(done).collect::<Vec<_>>().join("\n");
        let turns = parse(&new, done);
        let extractive = summarize(&turns);
        let (mut summary, mut kind, mut llm_error) = (extractive.clone(), "extractive", None);
        if !extractive.is_empty() {
            match self.llm() {
                Ok(None) => {}
                Ok(Some(p)) => {
                    let text: String = turns
                        .iter()
                        .map(|t| format!("[{}] {}", t.role, t.text))
                        .collect::<Vec<_>>()
                        .join("\n\n");
                    match p.complete(SESSION_PROMPT, &redact(&text), 600) {
                        Ok(s) => {
                            summary = redact(&s);
                            kind = "llm";
                        }
                        // Stored in the hook's health file: redacted, since a
                        // provider's error body can echo the request's key.
                        Err(e) => llm_error = Some(redact(&e.to_string())),
                    }
                }
                Err(e) => llm_error = Some(redact(&e.to_string())),
            }
        }
        // The session log is committed: no path of this machine in it.
        let summary = unmachine(&summary, &self.root, &input.cwd);
        let mut log = None;
        if !summary.is_empty() {
            let last = turns.last().map_or("", |t| t.id.as_str());
            let now = jiff::Timestamp::now();
            let day = now.strftime("%Y-%m-%d").to_string();
            let path = self.memory_dir().join("sessions").join(format!("{day}.md"));
            // The day's log is shared by every worktree of the checkout:
            // read and appended under the memory-writer lock, not only this
            // worktree's hook lock, so two sessions' captures both stay.
            let one_writer = self.memory_writer()?;
            let mut body = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    format!("# Sessions {day}\n")
                }
                Err(e) => return Err(io(&path)(e)),
            };
            // The anchor's ids come from the client: redacted like the
            // summary, so the session log holds no secret of its own. The
            // transcript is named by the session id and client, not its path
            // (a path of this machine, under the user's home, and in Claude
            // Code's case spelling the project's folder): `cairn transcript`
            // finds it in `.cairn/hooks/state.json`, which stays local.
            body.push_str(&format!(
                "\n### {}\n\n<!-- session:{} turn:{} client:{client} -->\n\n{summary}\n",
                now.strftime("%H:%M"),
                redact(&input.session_id),
                redact(last),
            ));
            write_atomic(&path, &body)?;
            drop(one_writer);
            log = Some(path);
        }
        state.insert(
            key,
            SessionState {
                client: client.into(),
                transcript,
                lines: all_lines,
            },
        );
        let state_path = self.hooks_dir().join("state.json");
        write_atomic(
            &state_path,
            serde_json::to_string_pretty(&state).unwrap_or_default(),
        )?;
        if log.is_some() {
            self.index(&[], &NoProgress)?;
        }
        Ok(Captured {
            turns: turns.len(),
            log,
            summary: kind,
            llm_error,
        })
    }

    /// Whether a transcript lies in a client's own folder or in the project.
    fn known_transcript(&self, path: &Path) -> bool {
        let Ok(real) = path.canonicalize() else {
            return false;
        };
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let mut roots: Vec<PathBuf> = vec![self.root.clone()];
        roots.extend(home.iter().map(|h| h.join(".claude")));
        roots.extend(home.iter().map(|h| h.join(".codex")));
        for var in ["CLAUDE_CONFIG_DIR", "CODEX_HOME"] {
            roots.extend(std::env::var_os(var).map(PathBuf::from));
        }
        roots.extend(crate::clients::opencode_data_dir());
        roots.extend(crate::clients::openclaw_state_dir());
        roots
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .any(|r| real.starts_with(r))
    }

    /// The original turns of a captured session around `turn_id` (default:
    /// its last turn), `context` turns on each side. Only transcripts a hook
    /// of this project recorded are read.
    pub fn transcript(
        &self,
        session_id: &str,
        turn_id: Option<&str>,
        context: usize,
    ) -> Result<TranscriptView> {
        let state = self.load_state();
        let entry = state
            .iter()
            .find(|(k, _)| k.rsplit_once(':').is_some_and(|(_, s)| s == session_id))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "no captured session {session_id:?} in this project"
                ))
            })?;
        if !self.known_transcript(&entry.transcript) {
            return Err(Error::PathRefused {
                path: entry.transcript.display().to_string(),
                reason: TRANSCRIPT_FOLDERS.into(),
            });
        }
        let text = read_session(&entry.client, &entry.transcript, session_id)?;
        let turns = parser(&entry.client)?(&text, 0);
        let at = match turn_id {
            Some(id) => turns.iter().position(|t| t.id == id).ok_or_else(|| {
                Error::NotFound(format!("no turn {id:?} in session {session_id:?}"))
            })?,
            None => turns.len().saturating_sub(1),
        };
        let context = context.min(crate::limits::MAX_CONTEXT);
        let start = at.saturating_sub(context);
        let end = at.saturating_add(context + 1).min(turns.len());
        // The session file is the client's, secrets and all: nothing of it
        // leaves here unredacted (the parsers redact only what they clip).
        Ok(TranscriptView {
            session_id: session_id.to_string(),
            transcript: entry.transcript.clone(),
            turn_id: turns.get(at).map(|t| redact(&t.id)).unwrap_or_default(),
            turns: turns[start..end].iter().map(redact_turn).collect(),
        })
    }
}

/// Where transcripts are read from, as a refusal says it.
const TRANSCRIPT_FOLDERS: &str = "transcripts are read only from the clients' own folders \
     (~/.claude, $CLAUDE_CONFIG_DIR, $CODEX_HOME or ~/.codex, OpenCode's data folder, \
     $OPENCLAW_STATE_DIR or ~/.openclaw) or the project";

/// Whether `c` can continue a file name (so a path followed by it is
/// another, longer name).
fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '@')
}

/// `text` with the paths of this machine taken out: a path in the project
/// (its folder as given, resolved, or the folder the agent worked in when
/// that lies in it) becomes relative to it (`src/x.rs`; the folder itself
/// `.`), a path in the home folder starts with `~`. Session logs are
/// committed and shared: they should read the same on every machine.
pub(crate) fn unmachine(text: &str, root: &Path, cwd: &str) -> String {
    let mut prefixes: Vec<(String, &str)> = Vec::new();
    let mut push = |p: &Path, to: &'static str| {
        let s = p
            .to_string_lossy()
            .trim_end_matches(['/', '\\'])
            .to_string();
        // A bare `/` (or an empty path) would rewrite every absolute path.
        if s.len() > 1 && !prefixes.iter().any(|(q, _)| *q == s) {
            prefixes.push((s, to));
        }
    };
    for r in [Some(root.to_path_buf()), root.canonicalize().ok()]
        .into_iter()
        .flatten()
    {
        push(&r, ".");
    }
    let cwd = Path::new(cwd);
    if cwd.is_absolute() {
        for r in [Some(root.to_path_buf()), root.canonicalize().ok()]
            .into_iter()
            .flatten()
        {
            if let Ok(sub) = cwd.strip_prefix(&r)
                && sub.as_os_str().is_empty()
            {
                push(cwd, ".");
            }
        }
    }
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    if let Some(h) = home {
        for h in [Some(h.clone()), h.canonicalize().ok()]
            .into_iter()
            .flatten()
        {
            push(&h, "~");
        }
    }
    // Longest first: the project usually lies in the home folder.
    prefixes.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    let mut out = text.to_string();
    for (prefix, to) in &prefixes {
        let mut done = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(prefix.as_str()) {
            let before = if at > 0 {
                rest[..at].chars().last()
            } else {
                done.chars().last()
            };
            let after_text = &rest[at + prefix.len()..];
            let after = after_text.chars().next();
            let starts = before.is_none_or(|c| !name_char(c) && c != '/' && c != '\\');
            done.push_str(&rest[..at]);
            match after {
                Some('/' | '\\') if starts => {
                    if *to == "~" {
                        done.push('~');
                        rest = after_text;
                    } else {
                        // `<root>/src/x.rs` → `src/x.rs`.
                        rest = &after_text[1..];
                    }
                }
                a if starts && a.is_none_or(|c| !name_char(c)) => {
                    done.push_str(to);
                    rest = after_text;
                }
                _ => {
                    done.push_str(prefix);
                    rest = after_text;
                }
            }
        }
        done.push_str(rest);
        out = done;
    }
    out
}

/// `turn` with every text read from the session file redacted: what was
/// said, tool calls and results, its id and time.
fn redact_turn(turn: &Turn) -> Turn {
    Turn {
        id: redact(&turn.id),
        line: turn.line,
        role: redact(&turn.role),
        text: redact(&turn.text),
        tools: turn
            .tools
            .iter()
            .map(|(tool, arg)| (redact(tool), redact(arg)))
            .collect(),
        error: turn.error,
        time: turn.time.as_deref().map(redact),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_the_machine_leave_a_summary() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("shop");
        std::fs::create_dir_all(&root).unwrap();
        let r = root.display().to_string();
        let text = format!(
            "- Edited {r}/src/auth/password.rs and {r}/tests/login.rs\n- ran `ls {r}` in {r}; not {r}2/x nor /x{r}/y"
        );
        let got = unmachine(&text, &root, &r);
        assert_eq!(
            got,
            format!(
                "- Edited src/auth/password.rs and tests/login.rs\n- ran `ls .` in .; not {r}2/x nor /x{r}/y"
            )
        );
        assert_eq!(unmachine("no paths here", &root, ""), "no paths here");
        // A root of `/` would rewrite every path: left alone.
        assert_eq!(unmachine("/etc/hosts", Path::new("/"), "/"), "/etc/hosts");
    }
}
