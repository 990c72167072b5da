//! The vault: memories as markdown files, written atomically, with a trash,
//! content-addressed history and an append-only audit log, so every change
//! can be seen and undone.
//!
//! ```text
//! .cairn/memory/<id>.md     one memory: YAML frontmatter + text (source of truth)
//! .cairn/memory/log.jsonl   one line per store / update / forget / undo
//! .cairn/history/<hash>.md  every version a change replaced or removed
//! ```

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cairn_core::{DEFAULT_IMPORTANCE, Memory, content_hash};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, io};

/// One line of the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// When (RFC 3339, UTC).
    pub time: String,
    /// `store`, `update`, `forget`, `expire` or `undo`.
    pub action: String,
    /// The memory.
    pub id: String,
    /// Content hash of the file before (None: it did not exist).
    pub before: Option<String>,
    /// Content hash of the file after (None: it is gone).
    pub after: Option<String>,
    /// Who asked (`cli`, `mcp`, a client name).
    pub client: String,
    /// For an `undo`: the line (0-based) of the change it reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<usize>,
    /// The memories this change made it name as replaced (`supersedes`),
    /// when the change set or altered that list: every replacement is in
    /// the log.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
}

/// Where one line of the audit log stands for `undo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UndoState {
    /// Its memory's newest change not yet undone: the one an undo of that
    /// memory reverts now.
    Undoable,
    /// Already reverted, by the undo at line `by`.
    Undone {
        /// The line of that undo.
        by: usize,
    },
    /// A later change of the same memory (line `by`) comes first.
    Superseded {
        /// The line of that change.
        by: usize,
    },
    /// The memory was purged: no version is left to go back to.
    Purged,
    /// Nothing an undo reverts (an undo or a purge).
    Final,
}

/// Each log entry's [`UndoState`], in the log's order: the rule
/// `Engine::undo` follows (an undo reverts a memory's newest change not yet
/// undone, so undoing again walks back through its changes).
pub fn undo_states(entries: &[LogEntry]) -> Vec<UndoState> {
    let undone: HashMap<usize, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.undoes.map(|line| (line, i)))
        .collect();
    let purged: HashSet<&str> = entries
        .iter()
        .filter(|e| e.action == "purge")
        .map(|e| e.id.as_str())
        .collect();
    let mut newest: HashMap<&str, usize> = HashMap::new();
    let mut out = vec![UndoState::Final; entries.len()];
    for (i, e) in entries.iter().enumerate().rev() {
        out[i] = if e.action == "undo" || e.action == "purge" {
            UndoState::Final
        } else if let Some(&by) = undone.get(&i) {
            UndoState::Undone { by }
        } else if purged.contains(e.id.as_str()) {
            UndoState::Purged
        } else if let Some(&by) = newest.get(e.id.as_str()) {
            UndoState::Superseded { by }
        } else {
            newest.insert(&e.id, i);
            UndoState::Undoable
        };
    }
    out
}

/// The memory folder of one project.
#[derive(Clone, Debug)]
pub struct Vault {
    dir: PathBuf,
    history: PathBuf,
    trash: PathBuf,
}

/// RFC 3339 UTC, whole seconds (`2026-11-26T10:45:02Z`): every time cairn
/// writes or shows.
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

/// Every RFC 3339 time in `value` (a string, at any depth) with a fraction
/// of a second cut to whole seconds: hooks before this version wrote
/// `10:45:02.654661908Z` into `.cairn/hooks/health.json`, which status
/// shows (CLI, MCP, the page).
pub fn whole_seconds(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => {
            if s.contains('.')
                && s.contains('T')
                && let Ok(t) = s.parse::<jiff::Timestamp>()
                && let Ok(whole) = jiff::Timestamp::from_second(t.as_second())
            {
                *s = whole.to_string();
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(whole_seconds),
        serde_json::Value::Object(map) => map.values_mut().for_each(whole_seconds),
        _ => {}
    }
}

/// Unix seconds of an RFC 3339 time or a `YYYY-MM-DD` date (midnight UTC).
pub(crate) fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts.as_second());
    }
    let date = s.parse::<jiff::civil::Date>().ok()?;
    date.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_second())
}

/// RFC 3339 of unix seconds.
pub(crate) fn format_time(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).map_or_else(|_| now_rfc3339(), |t| t.to_string())
}

/// Seconds in a time-to-live such as `30d`, `12h`, `2w`, `90m`, `1y`.
pub fn parse_ttl(ttl: &str) -> Option<i64> {
    let t = ttl.trim();
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = t.split_at(split);
    let n: i64 = n.parse().ok()?;
    let unit_secs = match unit.trim() {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        "y" => 365 * 86_400,
        _ => return None,
    };
    n.checked_mul(unit_secs)
}

/// A frontmatter field a memory was read without, because its value has
/// the wrong shape (`type: {a: 1}`); the other fields are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DroppedField {
    /// The field's name.
    pub(crate) field: &'static str,
    /// What was wrong with it.
    pub(crate) reason: String,
}

fn scalar(v: &serde_yaml::Value) -> Option<String> {
    match v {
        serde_yaml::Value::String(s) => Some(s.clone()),
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        serde_yaml::Value::Bool(b) => Some(b.to_string()),
        serde_yaml::Value::Tagged(t) => scalar(&t.value),
        _ => None,
    }
}

/// The YAML kind of a value, for a message.
fn shape(v: &serde_yaml::Value) -> &'static str {
    match v {
        serde_yaml::Value::Null => "nothing",
        serde_yaml::Value::Bool(_) => "a boolean",
        serde_yaml::Value::Number(_) => "a number",
        serde_yaml::Value::String(_) => "text",
        serde_yaml::Value::Sequence(_) => "a list",
        serde_yaml::Value::Mapping(_) => "a mapping",
        serde_yaml::Value::Tagged(t) => shape(&t.value),
    }
}

/// Reads a memory's frontmatter one field at a time: a field whose value
/// has the wrong shape is left out (and listed), never the whole memory.
struct Fields<'a> {
    map: Option<&'a serde_yaml::Mapping>,
    dropped: Vec<DroppedField>,
}

impl<'a> Fields<'a> {
    /// The value of `field`, if present and not null.
    fn get(&self, field: &str) -> Option<&'a serde_yaml::Value> {
        self.map?.get(field).filter(|v| !v.is_null())
    }

    fn drop(&mut self, field: &'static str, reason: String) {
        self.dropped.push(DroppedField { field, reason });
    }

    /// A text field (numbers and booleans as written).
    fn scalar(&mut self, field: &'static str) -> Option<String> {
        let v = self.get(field)?;
        let s = scalar(v);
        if s.is_none() {
            self.drop(field, format!("expected text, found {}", shape(v)));
        }
        s
    }

    /// A list field: a YAML list of scalars or one comma-separated string.
    /// Items that are not scalars are left out.
    fn list(&mut self, field: &'static str) -> Vec<String> {
        match self.get(field) {
            None => Vec::new(),
            Some(serde_yaml::Value::Sequence(items)) => {
                let kept: Vec<String> = items.iter().filter_map(scalar).collect();
                if kept.len() < items.len() {
                    let bad = items.len() - kept.len();
                    self.drop(field, format!("{bad} item(s) that are not text left out"));
                }
                kept
            }
            Some(other) => match scalar(other) {
                Some(s) => s
                    .split(',')
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .collect(),
                None => {
                    self.drop(field, format!("expected a list, found {}", shape(other)));
                    Vec::new()
                }
            },
        }
    }

    /// `importance`: a number, rounded and clamped to 1–10.
    fn importance(&mut self) -> u8 {
        let Some(v) = self.get("importance") else {
            return DEFAULT_IMPORTANCE;
        };
        match scalar(v).and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(n) if n.is_finite() => n.round().clamp(1.0, 10.0) as u8,
            _ => {
                let found = match v {
                    serde_yaml::Value::String(s) => format!("{s:?}"),
                    other => shape(other).to_string(),
                };
                self.drop("importance", format!("expected a number, found {found}"));
                DEFAULT_IMPORTANCE
            }
        }
    }

    /// `relations`: a list of `{from, to, rel}`; malformed entries are left out.
    fn relations(&mut self) -> Vec<cairn_core::MemoryRelation> {
        match self.get("relations") {
            None => Vec::new(),
            Some(serde_yaml::Value::Sequence(items)) => {
                let kept: Vec<cairn_core::MemoryRelation> = items
                    .iter()
                    .filter_map(|i| serde_yaml::from_value(i.clone()).ok())
                    .collect();
                if kept.len() < items.len() {
                    let bad = items.len() - kept.len();
                    self.drop(
                        "relations",
                        format!("{bad} entry(ies) without text from, to and rel left out"),
                    );
                }
                kept
            }
            Some(other) => {
                self.drop(
                    "relations",
                    format!("expected a list, found {}", shape(other)),
                );
                Vec::new()
            }
        }
    }
}

/// A memory from a frontmatter mapping (YAML or its JSON copy in the index)
/// and a body; `fallback_id` (the file stem) when the id is missing.
pub(crate) fn memory_from_yaml(front: &serde_yaml::Value, body: &str, fallback_id: &str) -> Memory {
    memory_from_yaml_checked(front, body, fallback_id).0
}

/// [`memory_from_yaml`], and the fields it left out because their values
/// have the wrong shape. A hand-edited memory with gaps or one bad field
/// still loads with everything else it says.
pub(crate) fn memory_from_yaml_checked(
    front: &serde_yaml::Value,
    body: &str,
    fallback_id: &str,
) -> (Memory, Vec<DroppedField>) {
    let mut f = Fields {
        map: front.as_mapping(),
        dropped: Vec::new(),
    };
    let id = f
        .scalar("id")
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| fallback_id.to_string());
    let kind = f
        .scalar("type")
        .filter(|k| !k.trim().is_empty())
        .unwrap_or_else(|| "note".into());
    let importance = f.importance();
    let tags = f.list("tags");
    let entities = f.list("entities");
    let created = f.scalar("created").unwrap_or_default();
    let updated = f
        .scalar("updated")
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| created.clone());
    let expires = f.scalar("expires").filter(|s| !s.is_empty());
    let sources = f.list("sources");
    let source_hashes = f.list("source_hashes");
    let entity = f.scalar("entity");
    let entity_type = f.scalar("entity_type");
    let relations = f.relations();
    let supersedes = f.list("supersedes");
    let m = Memory {
        id,
        kind,
        importance,
        tags,
        entities,
        created,
        updated,
        expires,
        sources,
        source_hashes,
        entity,
        entity_type,
        relations,
        supersedes,
        text: body.trim().to_string(),
    };
    (m, f.dropped)
}

/// Logs each field a memory file was read without (`tracing::warn`, on
/// stderr): the file itself is left as it is.
pub(crate) fn warn_dropped(path: &Path, dropped: &[DroppedField]) {
    for d in dropped {
        tracing::warn!(
            "{}: frontmatter field `{}` ignored ({}); the memory keeps its other fields",
            path.display(),
            d.field,
            d.reason
        );
    }
}

/// The file text of a memory.
pub(crate) fn render(m: &Memory) -> String {
    let yaml = serde_yaml::to_string(m).unwrap_or_default();
    format!("---\n{yaml}---\n\n{}\n", m.text.trim())
}

/// The id prefix of a session log read as a memory (`session-2026-11-26`).
pub(crate) const SESSION_ID_PREFIX: &str = "session-";

/// The type a session log has as a memory.
pub(crate) const SESSION_KIND: &str = "session";

/// The day of a session-log id, when `id` is one (`YYYY-MM-DD`, digits).
fn session_day(id: &str) -> Option<&str> {
    let day = id.strip_prefix(SESSION_ID_PREFIX)?;
    let shape = day.len() == 10
        && day.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    shape.then_some(day)
}

/// A session log (`sessions/<date>.md`, no frontmatter) as a memory: type
/// `session`, created at the day's start (UTC), updated at its last
/// `### HH:MM` entry, its text the log.
pub(crate) fn session_memory(id: &str, text: &str) -> Memory {
    let day = session_day(id).unwrap_or("1970-01-01");
    let last = text
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .filter_map(|h| h.get(..5))
        .rfind(|hm| hm.as_bytes().get(2) == Some(&b':'))
        .unwrap_or("00:00");
    Memory {
        id: id.to_string(),
        kind: SESSION_KIND.into(),
        importance: DEFAULT_IMPORTANCE,
        created: format!("{day}T00:00:00Z"),
        updated: format!("{day}T{last}:00Z"),
        text: text.trim().to_string(),
        ..Memory::default()
    }
}

/// Parses a memory file's text.
pub(crate) fn parse(text: &str, fallback_id: &str) -> Memory {
    let (front, lines) = cairn_ingest::split_frontmatter(text);
    let body: String = text.lines().skip(lines).collect::<Vec<_>>().join("\n");
    let raw = match front {
        Some(Ok(f)) => f.raw,
        _ => serde_yaml::Value::Null,
    };
    memory_from_yaml(&raw, &body, fallback_id)
}

/// A new memory id: the date and 8 hex digits of a hash of the text, the
/// time, the process and a counter, so two processes never collide.
pub(crate) fn new_id(text: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let now = jiff::Timestamp::now();
    let seed = format!(
        "{text}\0{}\0{}\0{}",
        now.as_nanosecond(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    );
    let date = now.strftime("%Y%m%d").to_string();
    format!("m{date}-{}", &content_hash(seed.as_bytes())[..8])
}

impl Vault {
    /// The vault in `dir` (created on first write); history beside it.
    pub fn new(dir: PathBuf) -> Vault {
        let beside = |name: &str| {
            dir.parent()
                .map_or_else(|| dir.join(format!(".{name}")), |p| p.join(name))
        };
        let (history, trash) = (beside("history"), beside("trash"));
        Vault {
            dir,
            history,
            trash,
        }
    }

    /// The memory folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folders beside it: kept versions (history) and the trash.
    pub(crate) fn side_dirs(&self) -> [&Path; 2] {
        [&self.history, &self.trash]
    }

    /// The file of a memory id (`session-<date>`: the session log
    /// `sessions/<date>.md`).
    pub fn path_of(&self, id: &str) -> Result<PathBuf> {
        if let Some(day) = session_day(id) {
            return Ok(self.dir.join("sessions").join(format!("{day}.md")));
        }
        let ok = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(Error::NotFound(format!("no memory with id {id:?}")));
        }
        Ok(self.dir.join(format!("{id}.md")))
    }

    /// Reads a memory by id.
    pub fn read(&self, id: &str) -> Result<Memory> {
        let path = self.path_of(id)?;
        let text = match read_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotFound(format!("no memory with id {id:?}")));
            }
            Err(e) => return Err(io(&path)(e)),
        };
        if session_day(id).is_some() {
            return Ok(session_memory(id, &text));
        }
        Ok(parse(&text, id))
    }

    /// The current file text of a memory, if the file exists.
    fn current(&self, id: &str) -> Result<Option<String>> {
        let path = self.path_of(id)?;
        match read_string(&path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Keeps a version in the history; returns its hash.
    fn keep(&self, text: &str) -> Result<String> {
        let hash = content_hash(text.as_bytes());
        let path = self.history.join(format!("{hash}.md"));
        if !path.exists() {
            write_atomic(&path, text)?;
        }
        Ok(hash)
    }

    /// The memory as a kept version (by hash) holds it.
    pub(crate) fn version_of(&self, hash: &str, id: &str) -> Result<Memory> {
        Ok(parse(&self.version(hash)?, id))
    }

    /// A kept version by hash.
    fn version(&self, hash: &str) -> Result<String> {
        let path = self.history.join(format!("{hash}.md"));
        std::fs::read_to_string(&path).map_err(io(&path))
    }

    /// Writes a memory (atomically) and logs the change; returns the log entry.
    /// Every field is redacted first ([`crate::secrets::memory`]): no
    /// caller can write a secret into the file or its history.
    pub fn save(&self, m: &Memory, action: &str, client: &str) -> Result<LogEntry> {
        let m = &crate::secrets::memory(m);
        let current = self.current(&m.id)?;
        let replaced_before = current
            .as_deref()
            .map(|t| parse(t, &m.id).supersedes)
            .unwrap_or_default();
        let before = current.map(|t| self.keep(&t)).transpose()?;
        let text = render(m);
        let after = self.keep(&text)?;
        write_atomic(&self.path_of(&m.id)?, &text)?;
        self.log(LogEntry {
            time: now_rfc3339(),
            action: action.into(),
            id: m.id.clone(),
            before,
            after: Some(after),
            client: client.into(),
            undoes: None,
            replaces: if m.supersedes != replaced_before {
                m.supersedes.clone()
            } else {
                Vec::new()
            },
        })
    }

    /// Moves a memory file to the trash folder (its text also stays in the
    /// history, for `undo`) and logs it.
    pub fn remove(&self, id: &str, action: &str, client: &str) -> Result<LogEntry> {
        self.remove_undoing(id, action, client, None)
    }

    fn remove_undoing(
        &self,
        id: &str,
        action: &str,
        client: &str,
        undoes: Option<usize>,
    ) -> Result<LogEntry> {
        let path = self.path_of(id)?;
        let Some(text) = self.current(id)? else {
            return Err(Error::NotFound(format!("no memory with id {id:?}")));
        };
        let before = self.keep(&text)?;
        write_atomic(&self.trash.join(format!("{id}.md")), &text)?;
        std::fs::remove_file(&path).map_err(io(&path))?;
        self.log(LogEntry {
            time: now_rfc3339(),
            action: action.into(),
            id: id.into(),
            before: Some(before),
            after: None,
            client: client.into(),
            undoes,
            replaces: Vec::new(),
        })
    }

    /// Removes every copy of a memory's text: its file, its trash copy and
    /// every version the log names in the history; logs `purge` (the log
    /// holds hashes, never text). Returns the files removed; none found is
    /// [`Error::NotFound`]. Afterwards nothing can undo a change to it.
    pub fn purge(&self, id: &str, client: &str) -> Result<Vec<PathBuf>> {
        let mut candidates = vec![self.path_of(id)?, self.trash.join(format!("{id}.md"))];
        for e in self.entries()?.iter().filter(|e| e.id == id) {
            for hash in e.before.iter().chain(&e.after) {
                // Hashes come from our own log; still, only plain names.
                if hash.chars().all(|c| c.is_ascii_alphanumeric()) {
                    candidates.push(self.history.join(format!("{hash}.md")));
                }
            }
        }
        candidates.sort();
        candidates.dedup();
        let mut removed = Vec::new();
        for path in candidates {
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&path)(e)),
            }
        }
        if removed.is_empty() {
            return Err(Error::NotFound(format!(
                "no memory with id {id:?} (not in the folder, the trash or the history)"
            )));
        }
        self.log(LogEntry {
            time: now_rfc3339(),
            action: "purge".into(),
            id: id.into(),
            before: None,
            after: None,
            client: client.into(),
            undoes: None,
            replaces: Vec::new(),
        })?;
        Ok(removed)
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("log.jsonl")
    }

    /// Appends one line to the audit log (one `write` of one line on a file
    /// opened for appending: concurrent writers never interleave lines).
    fn log(&self, mut entry: LogEntry) -> Result<LogEntry> {
        // The client's name comes from outside (MCP clientInfo, a hook).
        entry.client = cairn_ingest::redact(&entry.client);
        let path = self.log_path();
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let mut line = serde_json::to_string(&entry).unwrap_or_default();
        line.push('\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        f.write_all(line.as_bytes()).map_err(io(&path))?;
        Ok(entry)
    }

    /// The audit log, oldest first (unreadable lines are skipped).
    pub fn entries(&self) -> Result<Vec<LogEntry>> {
        let path = self.log_path();
        match std::fs::read_to_string(&path) {
            Ok(t) => Ok(t
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Reverts one logged change (line `line` of the log): the file goes back
    /// to its `before` version (or away, when it did not exist before).
    /// Logged as `undo`.
    pub fn revert(&self, line: usize, entry: &LogEntry, client: &str) -> Result<LogEntry> {
        match &entry.before {
            Some(hash) => {
                let text = self.version(hash)?;
                let m = parse(&text, &entry.id);
                let before = self
                    .current(&entry.id)?
                    .map(|t| self.keep(&t))
                    .transpose()?;
                write_atomic(&self.path_of(&m.id)?, &text)?;
                self.log(LogEntry {
                    time: now_rfc3339(),
                    action: "undo".into(),
                    id: entry.id.clone(),
                    before,
                    after: Some(hash.clone()),
                    client: client.into(),
                    undoes: Some(line),
                    replaces: Vec::new(),
                })
            }
            None => self.remove_undoing(&entry.id, "undo", client, Some(line)),
        }
    }
}

/// A memory file's text. Only a regular file is read: a FIFO put in its
/// place is refused at once instead of blocking the reader for good.
fn read_string(path: &Path) -> std::io::Result<String> {
    let bytes = cairn_ingest::read_regular_file(path)?;
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// Writes `text` (or any bytes) to `path` through a temporary file in the
/// same folder and a rename, so readers see the old file or the new one,
/// never half of one.
pub(crate) fn write_atomic(path: &Path, text: impl AsRef<[u8]>) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(text.as_ref()))
}

/// [`write_atomic`] with the bytes written by `write` (through a buffer),
/// for a file too large to build in memory first.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let tmp = dir.join(format!(
        ".{}.{}-{}.tmp",
        path.file_name().map_or("x".into(), |n| n.to_string_lossy()),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    ));
    let result = (|| {
        let mut f = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?);
        write(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(source) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::Io {
            path: path.to_path_buf(),
            source,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Memory {
        Memory {
            id: "m1".into(),
            kind: "decision".into(),
            importance: 8,
            tags: vec!["caching".into()],
            entities: vec!["Redis".into()],
            created: "2026-11-22T06:00:00Z".into(),
            updated: "2026-11-22T06:00:00Z".into(),
            expires: None,
            sources: vec![],
            source_hashes: vec![],
            text: "We use Redis with a 5-minute TTL.".into(),
            ..Memory::default()
        }
    }

    #[test]
    fn files_round_trip_and_tolerate_gaps() {
        let m = memory();
        let text = render(&m);
        assert!(text.starts_with("---\nid: m1\ntype: decision\n"), "{text}");
        assert_eq!(parse(&text, "other"), m);
        let hand = "---\ntype: preference\nimportance: 42\ntags: a, b\n---\nLikes tabs.\n";
        let p = parse(hand, "m-hand");
        assert_eq!(p.id, "m-hand");
        assert_eq!(p.importance, 10);
        assert_eq!(p.tags, ["a", "b"]);
        assert_eq!(p.text, "Likes tabs.");
        let bare = parse("Just a thought.", "m-bare");
        assert_eq!((bare.kind.as_str(), bare.importance), ("note", 5));
    }

    #[test]
    fn one_bad_field_costs_only_itself() {
        let text = "---\nid: m-x\ntype: {a: 1}\nimportance: 9\ntags: [keep, me]\n\
                    entities: [Redis]\ncreated: 2026-01-02T00:00:00Z\n---\nBody.\n";
        let m = parse(text, "fallback");
        assert_eq!(m.id, "m-x");
        assert_eq!(m.kind, "note");
        assert_eq!(m.importance, 9);
        assert_eq!(m.tags, ["keep", "me"]);
        assert_eq!(m.entities, ["Redis"]);
        assert_eq!(m.created, "2026-01-02T00:00:00Z");
        assert_eq!(m.text, "Body.");

        let (front, _) = cairn_ingest::split_frontmatter(text);
        let raw = front.unwrap().unwrap().raw;
        let (_, dropped) = memory_from_yaml_checked(&raw, "", "x");
        assert_eq!(dropped.len(), 1, "{dropped:?}");
        assert_eq!(dropped[0].field, "type");
        assert!(dropped[0].reason.contains("mapping"), "{dropped:?}");

        // Every field of the wrong shape is named; the good ones stay.
        let text = "---\ntype: decision\nimportance: lots\ntags: {a: 1}\n\
                    relations: [{from: A, to: B, rel: uses}, {from: [1]}]\n\
                    expires: [x]\n---\nBody.\n";
        let (front, _) = cairn_ingest::split_frontmatter(text);
        let raw = front.unwrap().unwrap().raw;
        let (m, dropped) = memory_from_yaml_checked(&raw, "Body.", "m-y");
        assert_eq!((m.kind.as_str(), m.importance), ("decision", 5));
        assert!(m.tags.is_empty() && m.expires.is_none());
        assert_eq!(m.relations.len(), 1);
        let names: Vec<&str> = dropped.iter().map(|d| d.field).collect();
        assert_eq!(names, ["importance", "tags", "expires", "relations"]);
    }

    #[test]
    fn ttl_and_times() {
        assert_eq!(parse_ttl("30d"), Some(30 * 86_400));
        assert_eq!(parse_ttl("2w"), Some(14 * 86_400));
        assert_eq!(parse_ttl("12h"), Some(43_200));
        assert_eq!(parse_ttl("5x"), None);
        assert_eq!(parse_ttl("d"), None);
        assert_eq!(parse_time("1970-01-02"), Some(86_400));
        assert_eq!(parse_time("1970-01-01T00:01:00Z"), Some(60));
        assert_eq!(format_time(60), "1970-01-01T00:01:00Z");
    }

    #[test]
    fn save_remove_and_revert_through_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let v = Vault::new(dir.path().join("memory"));
        let mut m = memory();
        let stored = v.save(&m, "store", "test").unwrap();
        assert!(stored.before.is_none());
        m.text = "We use Redis with a 10-minute TTL.".into();
        let updated = v.save(&m, "update", "test").unwrap();
        assert_eq!(updated.before, stored.after);
        v.revert(1, &updated, "test").unwrap();
        assert!(v.read("m1").unwrap().text.contains("5-minute"));
        let forgot = v.remove("m1", "forget", "test").unwrap();
        assert!(v.read("m1").is_err());
        assert!(dir.path().join("trash/m1.md").exists());
        v.revert(3, &forgot, "test").unwrap();
        assert!(v.read("m1").unwrap().text.contains("5-minute"));
        v.revert(0, &stored, "test").unwrap();
        assert!(v.read("m1").is_err());
        let actions: Vec<String> = v.entries().unwrap().into_iter().map(|e| e.action).collect();
        assert_eq!(
            actions,
            ["store", "update", "undo", "forget", "undo", "undo"]
        );
        // No temporary files are left behind.
        let leftovers: Vec<_> = std::fs::read_dir(v.dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        assert!(v.path_of("../x").is_err());
    }

    /// Only each memory's newest change not undone is undoable: the row a
    /// page offers Undo on, and the one `undo` of that memory reverts.
    #[test]
    fn undo_states_follow_the_undo_rule() {
        let line = |action: &str, id: &str, undoes: Option<usize>| LogEntry {
            time: "2026-11-25T16:00:00Z".into(),
            action: action.into(),
            id: id.into(),
            before: None,
            after: None,
            client: "test".into(),
            undoes,
            replaces: Vec::new(),
        };
        let log = [
            line("store", "a", None),
            line("store", "b", None),
            line("update", "a", None),
            line("undo", "a", Some(2)),
            line("store", "c", None),
            line("forget", "c", None),
            line("store", "d", None),
            line("purge", "d", None),
        ];
        assert_eq!(
            undo_states(&log),
            [
                UndoState::Undoable,
                UndoState::Undoable,
                UndoState::Undone { by: 3 },
                UndoState::Final,
                UndoState::Superseded { by: 5 },
                UndoState::Undoable,
                UndoState::Purged,
                UndoState::Final,
            ]
        );
    }
}
