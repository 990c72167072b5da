//! Agent memories: store (with near-duplicate merging and entity
//! extraction), update, forget, undo, list and recall (hybrid search blended
//! with importance, recency, frequency and stale sources).

use std::collections::BTreeMap;

use cairn_core::{DEFAULT_IMPORTANCE, EmbedError, Memory, content_hash, sync};
use cairn_ingest::extract_entities;
use cairn_search::{Floor, MemorySignals, Term, blend};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::limits;
use crate::progress::{NoProgress, Progress};
use crate::search::{Mode, SearchOptions};
use crate::vault::{
    LogEntry, UndoState, Vault, format_time, new_id, now_rfc3339, parse_time, parse_ttl,
    undo_states,
};

/// What to store.
#[derive(Clone, Debug, Default)]
pub struct MemoryInput {
    /// The memory text.
    pub text: String,
    /// Its type (default `note`).
    pub kind: Option<String>,
    /// 1–10 (default 5).
    pub importance: Option<u8>,
    /// Labels.
    pub tags: Vec<String>,
    /// Entities besides those found in the text.
    pub entities: Vec<String>,
    /// Time to live, e.g. `30d`.
    pub ttl: Option<String>,
    /// Expiry time (RFC 3339 or `YYYY-MM-DD`); wins over `ttl`.
    pub expires: Option<String>,
    /// Files it was learned from (`path`, `path#Heading`, `path:line`).
    pub sources: Vec<String>,
    /// Who stores it (for the audit log).
    pub client: String,
    /// When it happened, for memories imported from the past (RFC 3339 or
    /// `YYYY-MM-DD`; default now). Also its `updated` time.
    pub created: Option<String>,
    /// Ids of older memories this one replaces (each must exist, of the
    /// same type, at most [`crate::supersede::MAX_REPLACED`]); none named:
    /// found when the text says a change ([`crate::supersede`]).
    pub supersedes: Vec<String>,
    /// Set by the CLI alone: a person typed this `--supersedes`, so it may
    /// name a more important memory (the new one takes its importance).
    /// An agent over MCP, a hook or an import never sets it.
    pub by_person: bool,
}

/// Changes to a memory; `None` keeps a field as it is.
#[derive(Clone, Debug, Default)]
pub struct MemoryPatch {
    /// New text.
    pub text: Option<String>,
    /// New type.
    pub kind: Option<String>,
    /// New importance.
    pub importance: Option<u8>,
    /// Replace the tags.
    pub tags: Option<Vec<String>>,
    /// New time to live from now.
    pub ttl: Option<String>,
    /// New expiry.
    pub expires: Option<String>,
    /// Who changes it.
    pub client: String,
}

/// A memory with its text, as tools return it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MemoryView {
    /// Frontmatter fields.
    #[serde(flatten)]
    pub memory: Memory,
    /// The memory text.
    pub text: String,
}

impl From<Memory> for MemoryView {
    fn from(memory: Memory) -> MemoryView {
        let text = memory.text.clone();
        MemoryView { memory, text }
    }
}

/// One logged change undone, or (dry run) what undoing it would do: see
/// [`Engine::undo_change`].
#[derive(Clone, Debug, Serialize)]
pub struct Undone {
    /// The change's line in the log (0-based).
    pub line: usize,
    /// The change.
    pub change: LogEntry,
    /// Whether undoing it removes the memory (the change created it).
    pub removes: bool,
    /// The memory as the undo leaves it; when the undo removes it, as it
    /// is before (None when its file is gone already).
    pub memory: Option<MemoryView>,
    /// The `undo` line written; None on a dry run.
    pub undo: Option<LogEntry>,
}

/// What a store did.
#[derive(Clone, Debug, Serialize)]
pub struct Stored {
    /// `created`, or `updated` when a near-duplicate was merged into.
    pub action: &'static str,
    /// Cosine similarity to the memory it was merged into.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// The memory as now on disk.
    pub memory: MemoryView,
    /// Set when the memory was written but not yet indexed (see
    /// [`Engine::remember`]): it is stored; do not store it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// Set when the embedding queue was past 80 % full and this store
    /// waited before writing (see [`Engine::admit_write`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowed: Option<String>,
}

/// How to recall.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RecallOptions {
    /// Memories to return (0 = 5).
    pub limit: usize,
    /// Skip this many first.
    pub offset: usize,
    /// Only these types.
    pub types: Vec<String>,
    /// Only memories with one of these tags.
    pub tags: Vec<String>,
    /// Only memories naming one of these entities (case-insensitive).
    pub entities: Vec<String>,
    /// Only this important or more.
    pub min_importance: Option<u8>,
    /// Only created at or after (RFC 3339 or date).
    pub since: Option<String>,
    /// Only created at or before (RFC 3339 or date).
    pub until: Option<String>,
    /// Include expired memories.
    pub include_expired: bool,
    /// Do not count this recall as an access.
    pub no_touch: bool,
    /// Leave out memories whose fused search score is below this (RRF
    /// units); `None`: `[memory] min_score`.
    pub min_score: Option<f64>,
    /// Leave out memories whose relevance (fused score over the best
    /// matching memory's) is below this; `None`: `[memory] relative_floor`.
    pub relative_floor: Option<f64>,
    /// Pass the query to FTS5 as it is (phrases, OR, NOT, prefix `*`,
    /// `breadcrumb:`/`text:` columns): keyword ranking only.
    pub raw_fts: bool,
    /// Also return the standing memories the query did not reach (after
    /// the hits, marked `standing`): gotchas, decisions, conventions and
    /// any memory of importance ≥ 8. For a session's digest.
    pub standing: bool,
    /// Also return memories a newer one replaced (marked `superseded_by`,
    /// ranked below it); by default only the newest of a chain is returned,
    /// listing what it `replaces`.
    pub show_replaced: bool,
}

/// A recalled memory, its score and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Recalled {
    /// The memory.
    pub memory: MemoryView,
    /// Blended score (higher is better).
    pub score: f64,
    /// A cited file changed or vanished since the memory was written.
    pub source_changed: bool,
    /// It is past its expiry (only with `include_expired`).
    pub expired: bool,
    /// The blend's terms.
    pub terms: Vec<Term>,
    /// Cosine similarity of its best chunk to the query, when the vectors
    /// ranked it: unlike `score`, comparable across queries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// Not reached by the query: a standing memory
    /// ([`RecallOptions::standing`]), score 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub standing: bool,
    /// The newer memory that replaced this one (only with
    /// [`RecallOptions::show_replaced`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// Ids of the older memories this one replaced that the query reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// The text of each memory in `replaces`, cut to one line, in its order:
    /// the reason a replaced decision gave stays in sight beside the memory
    /// that replaced it ("we moved to Memcached" says what, the older one
    /// said why).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced_lines: Vec<String>,
    /// A personal memory (`[memory] personal`: the user's own folder,
    /// recalled in every project, never written into one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub personal: bool,
}

/// Which memories a bulk forget takes.
#[derive(Clone, Debug, Default)]
pub struct ForgetFilter {
    /// Any of these types.
    pub types: Vec<String>,
    /// Any of these tags.
    pub tags: Vec<String>,
    /// Created before this time (RFC 3339 or date).
    pub before: Option<String>,
    /// Only expired memories (alone: the expiry sweep).
    pub expired: bool,
}

/// Filters of `list`.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Only these types.
    pub types: Vec<String>,
    /// Only with one of these tags.
    pub tags: Vec<String>,
    /// Include expired memories.
    pub include_expired: bool,
    /// Most to return (0 = 50).
    pub limit: usize,
    /// Skip this many first (newest first).
    pub offset: usize,
}

/// The memory id a file path stands for: its name without `.md`.
/// The memory id of an indexed memory path: the file's stem, or
/// `session-<date>` for a session log (`sessions/<date>.md`).
pub(crate) fn stem_of(path: &str) -> String {
    let mut parts = path.rsplit('/');
    let stem = parts
        .next()
        .and_then(|f| f.strip_suffix(".md"))
        .unwrap_or_default();
    match parts.next() {
        Some("sessions") => format!("{}{stem}", crate::vault::SESSION_ID_PREFIX),
        _ => stem.to_string(),
    }
}

pub(crate) fn now_secs() -> i64 {
    jiff::Timestamp::now().as_second()
}

fn expiry(ttl: Option<&str>, expires: Option<&str>) -> Result<Option<String>> {
    if let Some(e) = expires.filter(|e| !e.trim().is_empty()) {
        return parse_time(e).map(|s| Some(format_time(s))).ok_or_else(|| {
            let e = cairn_ingest::redact(e);
            Error::Query(format!("expires {e:?}: use RFC 3339 or YYYY-MM-DD"))
        });
    }
    match ttl.filter(|t| !t.trim().is_empty()) {
        None => Ok(None),
        Some(t) => {
            // A refusal repeats what it refuses, less any secret in it.
            let shown = cairn_ingest::redact(t);
            let t = shown.as_str();
            let secs = parse_ttl(t).ok_or_else(|| {
                Error::Query(format!("ttl {t:?}: use e.g. 30d, 12h, 2w, 90m, 1y"))
            })?;
            // Checked: a ttl of i64::MAX seconds once wrapped into an expiry of now.
            let at = now_secs()
                .checked_add(secs)
                .filter(|at| jiff::Timestamp::from_second(*at).is_ok())
                .ok_or_else(|| {
                    Error::Query(format!(
                        "ttl {t:?}: too long (an expiry must fall before the year 10000)"
                    ))
                })?;
            Ok(Some(format_time(at)))
        }
    }
}

/// Cited sources as stored and answered: redacted like every other field
/// (the answer to `memory_store` echoes them).
fn clean_sources(sources: &[String]) -> Vec<String> {
    sources.iter().map(|s| cairn_ingest::redact(s)).collect()
}

fn clean_kind(kind: Option<&str>) -> String {
    // Redacted before it is lower-cased: shapes are told by their case.
    kind.map(|k| cairn_ingest::redact(k.trim()).to_lowercase())
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "note".into())
}

fn merge(into: &mut Vec<String>, more: &[String]) {
    for m in more {
        let m = m.trim();
        if !m.is_empty() && !into.iter().any(|x| x.eq_ignore_ascii_case(m)) {
            into.push(m.to_string());
        }
    }
}

fn is_expired(m: &Memory, now: i64) -> bool {
    m.expires
        .as_deref()
        .and_then(parse_time)
        .is_some_and(|t| t <= now)
}

/// The memory-writer lock, both parts (see [`Engine::memory_writer`]).
pub(crate) struct MemoryWriter {
    _shared: Option<Box<dyn Send>>,
    _file: crate::lock::Locked,
}

impl Engine {
    /// The project's memory vault.
    pub fn vault(&self) -> Vault {
        Vault::new(self.memory_dir())
    }

    /// The project's memory-writer lock, held while a memory is checked and
    /// written, so writers take turns: the lock file `.cairn/memory.lock`
    /// across threads and processes of this folder, then, on a shared store,
    /// the store's lock across machines ([`cairn_core::IndexWriter::memory_lock`]:
    /// a PostgreSQL advisory lock per project), waited for without holding
    /// the engine's writer, so other threads' index passes go on meanwhile.
    pub(crate) fn memory_writer(&self) -> Result<MemoryWriter> {
        let wait = std::time::Duration::from_secs(60);
        let file = crate::lock::Locked::take(&crate::paths::memory_lock(&self.memory_root), wait)?;
        let lock = sync::lock(&self.store).memory_lock();
        let shared = lock.map(|l| l.take(wait)).transpose()?;
        Ok(MemoryWriter {
            _shared: shared,
            _file: file,
        })
    }

    /// Brings the index up to date with the memory folder, after a memory
    /// file was written. The write happened, so a failure here (the index
    /// locked past the busy timeout, the model gone) is not the caller's
    /// error: an agent told "failed" would store again and make a duplicate.
    /// It is logged and returned as a warning; the next index pass catches up.
    fn reindex_memories(&self) -> Option<String> {
        match self.index(&[], &NoProgress) {
            Ok(_) => None,
            Err(e) => {
                let warning = format!(
                    "the memory was written, but indexing it failed: {e}; \
                     the next index pass (or `cairn index`) picks it up"
                );
                tracing::warn!("{warning}");
                Some(warning)
            }
        }
    }

    /// Content hashes of the cited files, now ("missing" for a file that is
    /// not there, or that now leads out of the project: nothing outside is read).
    /// Whether a file the memory cites changed or vanished since it was
    /// written (a "stale source" memory).
    pub fn source_changed(&self, m: &Memory) -> bool {
        !m.sources.is_empty() && self.source_hashes(&m.sources) != m.source_hashes
    }

    fn source_hashes(&self, sources: &[String]) -> Vec<String> {
        let project: Vec<std::path::PathBuf> = self.root.canonicalize().into_iter().collect();
        sources
            .iter()
            .map(|s| {
                crate::access::confine(&self.root, Memory::source_path(s), &project)
                    .and_then(|path| cairn_ingest::read_regular_file(&path).ok())
                    .map_or_else(|| "missing".into(), |b| content_hash(&b))
            })
            .collect()
    }

    /// Refuses cited sources that are not project files: absolute paths,
    /// `..`, or links out of the project (a source's hash would tell whether
    /// a file out there changed). A source not there yet is allowed.
    fn check_sources(&self, sources: &[String]) -> Result<()> {
        let project: Vec<std::path::PathBuf> = self.root.canonicalize().into_iter().collect();
        for s in sources {
            let rel = Memory::source_path(s);
            let ok = crate::access::is_plain_relative(rel)
                && (!self.root.join(rel).exists()
                    || crate::access::confine(&self.root, rel, &project).is_some());
            if !ok {
                return Err(Error::PathRefused {
                    // The refusal is printed: a secret pasted as a source is not.
                    path: cairn_ingest::redact(s),
                    reason: "a source must be a file of the project, given relative to its root"
                        .into(),
                });
            }
        }
        Ok(())
    }

    /// The memories nearest in meaning to `text`, embedded as a memory
    /// (not as a query: the same text then scores 1 with a retrieval model
    /// too), as `(path, cosine)` best first, those at `floor` or more. One
    /// lookup serves both checks of a store: the near-duplicate and the
    /// memory it replaces ([`crate::supersede`]). Empty without a model; a
    /// model that cannot embed now (a remote endpoint down) costs the
    /// checks, not the memory: it is stored, and embedded by a later pass.
    fn alike_memories(&self, text: &str, floor: f64) -> Result<Vec<(String, f64)>> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(Vec::new());
        };
        let prefix = self.memory_prefix();
        let qv = match embedder.embed(&[text]) {
            Ok(mut v) => v.pop().ok_or_else(|| {
                EmbedError::new(format!("{} returned no vector", embedder.model_id()))
            })?,
            Err(e) => {
                tracing::warn!(
                    "no near-duplicate or replacement check for this memory ({e}): stored as new"
                );
                return Ok(Vec::new());
            }
        };
        self.with_snapshot(|snap| {
            let top = self.nearest(
                snap,
                embedder.as_ref(),
                text,
                Some(&qv[..]),
                8,
                Some(&prefix),
            )?;
            let ids: Vec<i64> = top
                .iter()
                .filter(|hit| hit.score >= floor)
                .map(|hit| hit.id.0)
                .collect();
            let rows = snap.chunks(&ids)?;
            Ok(top
                .into_iter()
                .filter_map(|hit| {
                    let row = rows.iter().find(|r| r.rowid == hit.id.0)?;
                    Some((row.chunk.path.clone(), hit.score))
                })
                .collect())
        })
    }

    /// The memory of type `kind` among `alike` at cosine ≥ `[memory]
    /// duplicate_threshold`, if any.
    fn near_duplicate(&self, alike: &[(String, f64)], kind: &str) -> Result<Option<(Memory, f64)>> {
        let threshold = self.config.memory.duplicate_threshold;
        let vault = self.vault();
        for (path, score) in alike.iter().filter(|(_, s)| *s >= threshold) {
            let id = stem_of(path);
            if let Some(m) = self.read_or_fetch(&vault, &id, path)?
                && m.kind == kind
            {
                return Ok(Some((m, *score)));
            }
        }
        Ok(None)
    }

    /// A memory of the vault; on a shared store, one another machine wrote
    /// and this folder has not fetched yet is fetched now (as the next index
    /// pass would), so it can be updated here as a near-duplicate.
    fn read_or_fetch(&self, vault: &Vault, id: &str, path: &str) -> Result<Option<Memory>> {
        match vault.read(id) {
            Ok(m) => return Ok(Some(m)),
            Err(Error::NotFound(_)) => {}
            Err(_) => return Ok(None),
        }
        // Memories only, not session logs in a subfolder.
        if path != format!("{}{id}.md", self.memory_prefix()) {
            return Ok(None);
        }
        let fetched = {
            let store = sync::lock(&self.store);
            if !store.shared() {
                return Ok(None);
            }
            store.source(path)?
        };
        let Some(text) = fetched else {
            return Ok(None);
        };
        crate::vault::write_atomic(&vault.path_of(id)?, &text)?;
        Ok(vault.read(id).ok())
    }

    /// Stores a memory: a new file, or an update of a near-duplicate of the
    /// same type (cosine ≥ `[memory] duplicate_threshold`).
    pub fn remember(&self, input: &MemoryInput) -> Result<Stored> {
        // No secret is stored, indexed or made an entity: every field is
        // redacted (text) or refused (a tag or entity holding one) first.
        let redacted = crate::secrets::text("memory text", &input.text)?;
        let text = redacted.as_str();
        if text.is_empty() {
            return Err(Error::Query("memory text is empty".into()));
        }
        let given_tags = crate::secrets::names("tag", &input.tags)?;
        let given_entities = crate::secrets::names("entity", &input.entities)?;
        let kind = clean_kind(input.kind.as_deref());
        let importance = input.importance.unwrap_or(DEFAULT_IMPORTANCE).clamp(1, 10);
        let expires = expiry(input.ttl.as_deref(), input.expires.as_deref())?;
        let sources = clean_sources(&input.sources);
        self.check_sources(&sources)?;
        let mut entities = Vec::new();
        merge(&mut entities, &given_entities);
        merge(&mut entities, &extract_entities(text));
        let now = match input.created.as_deref() {
            Some(c) => format_time(parse_time(c).ok_or_else(|| {
                let c = cairn_ingest::redact(c);
                Error::Query(format!("created {c:?}: use RFC 3339 or YYYY-MM-DD"))
            })?),
            None => now_rfc3339(),
        };
        let vault = self.vault();
        let client = if input.client.is_empty() {
            "cli"
        } else {
            &input.client
        };

        // The near-duplicate check and the write are one critical section
        // per project, across the daemon's threads and across processes:
        // four agents storing the same text at once make one memory.
        let slowed = self.admit_write()?;
        let _one_writer = self.memory_writer()?;
        // One lookup for both checks, down to the lower threshold.
        let cfg = &self.config.memory;
        let floor = match cfg.supersede_threshold {
            t if t > 0.0 => t.min(cfg.duplicate_threshold),
            _ => cfg.duplicate_threshold,
        };
        let alike = self.alike_memories(text, floor)?;
        // A text that says a change ("moved to", "no longer") is not a
        // copy of the memory it changes, however alike: it replaces it.
        let duplicate = self.near_duplicate(&alike, &kind)?.filter(|(m, _)| {
            input.supersedes.is_empty()
                && (!crate::supersede::says_change(text) || crate::supersede::says_change(&m.text))
        });
        if let Some((mut m, similarity)) = duplicate {
            m.text = text.to_string();
            m.importance = m.importance.max(importance);
            merge(&mut m.tags, &given_tags);
            merge(&mut m.entities, &entities);
            if expires.is_some() {
                m.expires = expires;
            }
            for s in &sources {
                if !m.sources.contains(s) {
                    m.sources.push(s.clone());
                }
            }
            m.source_hashes = self.source_hashes(&m.sources);
            m.updated = now;
            vault.save(&m, "update", client)?;
            let warning = self.reindex_memories();
            return Ok(Stored {
                action: "updated",
                similarity: Some(similarity),
                memory: m.into(),
                warning,
                slowed,
            });
        }

        let (supersedes, importance) = self.supersedes_of(
            text,
            &kind,
            importance,
            &input.supersedes,
            input.by_person,
            &now,
            &alike,
        )?;
        let mut tags = Vec::new();
        merge(&mut tags, &given_tags);
        let m = Memory {
            id: new_id(text),
            supersedes,
            kind,
            importance,
            tags,
            entities,
            created: now.clone(),
            updated: now,
            expires,
            source_hashes: self.source_hashes(&sources),
            sources,
            text: text.to_string(),
            ..Memory::default()
        };
        vault.save(&m, "store", client)?;
        let warning = self.reindex_memories();
        Ok(Stored {
            action: "created",
            similarity: None,
            memory: m.into(),
            warning,
            slowed,
        })
    }

    /// Writes many memories as files at once (no near-duplicate check: for
    /// imports and benchmarks), then indexes them in one pass. Returns how
    /// many were written.
    pub fn import_memories(
        &self,
        inputs: &[MemoryInput],
        progress: &dyn Progress,
    ) -> Result<usize> {
        // Every record is checked before any is written: a secret-only
        // text or a tag or entity holding a secret refuses the import.
        let mut cleaned = Vec::with_capacity(inputs.len());
        for (i, input) in inputs.iter().enumerate() {
            let sources = clean_sources(&input.sources);
            self.check_sources(&sources)?;
            let at = |e: Error| Error::Query(format!("memory {} of {}: {e}", i + 1, inputs.len()));
            cleaned.push((
                crate::secrets::text("memory text", &input.text).map_err(at)?,
                crate::secrets::names("tag", &input.tags).map_err(at)?,
                crate::secrets::names("entity", &input.entities).map_err(at)?,
                sources,
            ));
        }
        let vault = self.vault();
        let one_writer = self.memory_writer()?;
        progress.stage("writing memories", inputs.len() as u64);
        for (input, (text, given_tags, given_entities, sources)) in inputs.iter().zip(&cleaned) {
            let text = text.as_str();
            if text.is_empty() {
                continue;
            }
            let when = match input.created.as_deref() {
                Some(c) => parse_time(c).map_or_else(now_rfc3339, format_time),
                None => now_rfc3339(),
            };
            let mut tags = Vec::new();
            merge(&mut tags, given_tags);
            let mut entities = Vec::new();
            merge(&mut entities, given_entities);
            merge(&mut entities, &extract_entities(text));
            let m = Memory {
                id: new_id(text),
                kind: clean_kind(input.kind.as_deref()),
                importance: input.importance.unwrap_or(DEFAULT_IMPORTANCE).clamp(1, 10),
                tags,
                entities,
                created: when.clone(),
                updated: when,
                expires: expiry(input.ttl.as_deref(), input.expires.as_deref())?,
                source_hashes: self.source_hashes(sources),
                sources: sources.clone(),
                text: text.to_string(),
                ..Memory::default()
            };
            vault.save(
                &m,
                "store",
                if input.client.is_empty() {
                    "import"
                } else {
                    &input.client
                },
            )?;
            progress.inc(1);
        }
        progress.finish();
        drop(one_writer);
        self.index(&[], progress)?;
        Ok(inputs.len())
    }

    /// Changes a memory; with `dry_run`, only shows the result.
    pub fn update_memory(
        &self,
        id: &str,
        patch: &MemoryPatch,
        dry_run: bool,
    ) -> Result<MemoryView> {
        // Read, change and write under the memory-writer lock (shared by the
        // CLI, the daemon and every worktree of the checkout): two writers
        // changing different fields of one memory both keep their change,
        // and each log entry's `before` is the previous entry's `after`.
        let _one_writer = (!dry_run).then(|| self.memory_writer()).transpose()?;
        let vault = self.vault();
        let mut m = vault.read(id)?;
        if m.kind == crate::vault::SESSION_KIND {
            return Err(Error::Query(format!(
                "{id} is a session log: the capture hooks write it, so it is read-only (forget removes it)"
            )));
        }
        if let Some(t) = patch.text.as_deref() {
            // Redacted as `remember` does: no secret is stored, indexed or
            // made an entity.
            let t = crate::secrets::text("memory text", t)?;
            if t.is_empty() {
                return Err(Error::Query("memory text is empty".into()));
            }
            m.text = t;
            let found = extract_entities(&m.text);
            merge(&mut m.entities, &found);
        }
        if let Some(k) = patch.kind.as_deref() {
            m.kind = clean_kind(Some(k));
        }
        if let Some(i) = patch.importance {
            m.importance = i.clamp(1, 10);
        }
        if let Some(tags) = &patch.tags {
            let tags = crate::secrets::names("tag", tags)?;
            m.tags.clear();
            merge(&mut m.tags, &tags);
        }
        if patch.ttl.is_some() || patch.expires.is_some() {
            m.expires = expiry(patch.ttl.as_deref(), patch.expires.as_deref())?;
        }
        m.updated = now_rfc3339();
        if !dry_run {
            let client = if patch.client.is_empty() {
                "cli"
            } else {
                &patch.client
            };
            vault.save(&m, "update", client)?;
            self.reindex_memories();
        }
        Ok(m.into())
    }

    /// Forgets a memory (the file goes to the trash; `undo` brings it back).
    pub fn forget(&self, id: &str, dry_run: bool, client: &str) -> Result<MemoryView> {
        let _one_writer = (!dry_run).then(|| self.memory_writer()).transpose()?;
        let vault = self.vault();
        let m = vault.read(id)?;
        if !dry_run {
            vault.remove(id, "forget", if client.is_empty() { "cli" } else { client })?;
            self.reindex_memories();
        }
        Ok(m.into())
    }

    /// Removes every copy of a memory, for a secret stored by mistake: the
    /// file, its trash copy and history versions ([`Vault::purge`]), its
    /// index rows, and then the index is vacuumed (FTS optimize, `VACUUM`,
    /// WAL checkpoint) so no freed page or log frame keeps the text. Works on
    /// a memory already forgotten. Returns the files removed.
    pub fn purge_memory(&self, id: &str, client: &str) -> Result<Vec<std::path::PathBuf>> {
        let _one_writer = self.memory_writer()?;
        let removed = self
            .vault()
            .purge(id, if client.is_empty() { "cli" } else { client })?;
        // Here a failure is an error: the caller must know the index may
        // still hold the text.
        self.index(&[], &NoProgress)?;
        self.vacuum()?;
        Ok(removed)
    }

    /// Forgets every memory matching a filter: any of `types`, any of `tags`,
    /// created before `before`, or (`expired`) past its expiry — logged as
    /// `forget`, or `expire` for the expiry sweep. With `dry_run`, only lists
    /// them. An empty filter matches nothing.
    pub fn forget_where(
        &self,
        filter: &ForgetFilter,
        dry_run: bool,
        client: &str,
    ) -> Result<Vec<MemoryView>> {
        let before = filter
            .before
            .as_deref()
            .map(|b| {
                parse_time(b).ok_or_else(|| {
                    Error::Query(format!("before {b:?}: use RFC 3339 or YYYY-MM-DD"))
                })
            })
            .transpose()?;
        if filter.types.is_empty() && filter.tags.is_empty() && before.is_none() && !filter.expired
        {
            return Err(Error::Query(
                "a bulk forget needs a filter (type, tag, before or expired)".into(),
            ));
        }
        let _one_writer = (!dry_run).then(|| self.memory_writer()).transpose()?;
        let now = now_secs();
        let matching: Vec<Memory> = self
            .indexed_memories()?
            .into_iter()
            .map(|(_, m)| m)
            .filter(|m| filter.types.is_empty() || filter.types.contains(&m.kind))
            .filter(|m| filter.tags.is_empty() || m.tags.iter().any(|t| filter.tags.contains(t)))
            .filter(|m| before.is_none_or(|b| parse_time(&m.created).is_some_and(|c| c < b)))
            .filter(|m| !filter.expired || is_expired(m, now))
            .collect();
        let vault = self.vault();
        let action = if filter.expired && filter.types.is_empty() && filter.tags.is_empty() {
            "expire"
        } else {
            "forget"
        };
        let mut out = Vec::with_capacity(matching.len());
        for m in matching {
            let full = vault.read(&m.id).unwrap_or(m);
            if !dry_run {
                vault.remove(
                    &full.id,
                    action,
                    if client.is_empty() { "cli" } else { client },
                )?;
            }
            out.push(full.into());
        }
        if !dry_run && !out.is_empty() {
            self.reindex_memories();
        }
        Ok(out)
    }

    /// Reverts the last change not yet undone (of memory `id`, when given).
    pub fn undo(&self, id: Option<&str>, client: &str) -> Result<LogEntry> {
        let entries = self.vault().entries()?;
        // A purged memory has no versions left to go back to (`Purged`).
        let states = undo_states(&entries);
        let nothing = || Error::NotFound("nothing to undo".into());
        let (line, entry) = entries
            .iter()
            .enumerate()
            .rev()
            .find(|(i, e)| states[*i] == UndoState::Undoable && id.is_none_or(|id| e.id == id))
            .ok_or_else(nothing)?;
        // Asked by id or as "the last change", the removal of a memory an
        // undo of its store means is what the caller asked for.
        self.undo_change(line, &entry.id, false, true, client)?
            .undo
            .ok_or_else(nothing)
    }

    /// Reverts exactly the change at line `line` of the log (0-based, as
    /// [`Vault::entries`] lists it), which must be a change of memory `id`
    /// and still its newest change not undone ([`UndoState::Undoable`]);
    /// otherwise [`Error::Conflict`] says why (already undone, a later
    /// change first, purged), and nothing is written. With `dry_run`, only
    /// says what the undo would do. Undoing a `store` removes the memory
    /// (to the trash, like a forget): without `confirm_removal` that undo is
    /// a [`Error::Conflict`] too (its dry run is not), so a caller acting on
    /// a click shows the dry run first.
    pub fn undo_change(
        &self,
        line: usize,
        id: &str,
        dry_run: bool,
        confirm_removal: bool,
        client: &str,
    ) -> Result<Undone> {
        let _one_writer = self.memory_writer()?;
        let vault = self.vault();
        let entries = vault.entries()?;
        let change = entries
            .get(line)
            .filter(|e| e.id == id)
            .ok_or_else(|| {
                Error::Conflict(format!(
                    "log line {line} is not a change of {id:?} (the log changed?): reload the timeline"
                ))
            })?
            .clone();
        let at = |by: usize| {
            entries
                .get(by)
                .map(|e| format!("{} at {}", e.action, e.time))
                .unwrap_or_default()
        };
        match undo_states(&entries)[line] {
            UndoState::Undoable => {}
            UndoState::Undone { by } => {
                return Err(Error::Conflict(format!(
                    "this {} of {id} was already undone ({})",
                    change.action,
                    at(by)
                )));
            }
            UndoState::Superseded { by } => {
                return Err(Error::Conflict(format!(
                    "a later change of {id} ({}) must be undone first",
                    at(by)
                )));
            }
            UndoState::Purged => {
                return Err(Error::Conflict(format!(
                    "{id} was purged: no version is left to go back to"
                )));
            }
            UndoState::Final => {
                return Err(Error::Conflict(format!(
                    "an {} cannot be undone",
                    change.action
                )));
            }
        }
        let removes = change.before.is_none();
        if removes && !dry_run && !confirm_removal {
            return Err(Error::Conflict(format!(
                "undoing this {} removes memory {id}: preview it (dry run) and confirm",
                change.action
            )));
        }
        let memory = match &change.before {
            Some(hash) => Some(vault.version_of(hash, id)?),
            None => vault.read(id).ok(),
        };
        let undo = if dry_run {
            None
        } else {
            let done = vault.revert(
                line,
                &change,
                if client.is_empty() { "cli" } else { client },
            )?;
            self.reindex_memories();
            Some(done)
        };
        Ok(Undone {
            line,
            change,
            removes,
            memory: memory.map(MemoryView::from),
            undo,
        })
    }

    /// Memories as the index knows them, from their stored frontmatter:
    /// `(path, memory without text)`.
    pub(crate) fn indexed_memories(&self) -> Result<Vec<(String, Memory)>> {
        let prefix = self.memory_prefix();
        let metas = self.with_snapshot(|snap| Ok(snap.metas_under(&prefix)?))?;
        Ok(metas
            .into_iter()
            .map(|(path, json)| {
                let stem = stem_of(&path);
                if stem.starts_with(crate::vault::SESSION_ID_PREFIX) {
                    // Its kind and day come from the file (no frontmatter).
                    let m = self
                        .vault()
                        .read(&stem)
                        .unwrap_or_else(|_| crate::vault::session_memory(&stem, ""));
                    return (path, m);
                }
                let value: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
                let yaml = serde_yaml::to_value(&value).unwrap_or_default();
                let m = crate::vault::memory_from_yaml(&yaml, "", &stem);
                (path, m)
            })
            .collect())
    }

    /// How many unexpired memories of each type the index holds (session
    /// logs under `session`, one per day).
    pub fn memory_counts(&self) -> Result<BTreeMap<String, usize>> {
        let now = now_secs();
        let mut out = BTreeMap::new();
        for (_, m) in self.indexed_memories()? {
            if !is_expired(&m, now) {
                *out.entry(m.kind).or_insert(0) += 1;
            }
        }
        Ok(out)
    }

    /// Memories newest first, filtered.
    pub fn list_memories(&self, opts: &ListOptions) -> Result<Vec<MemoryView>> {
        let now = now_secs();
        let mut all: Vec<Memory> = self
            .indexed_memories()?
            .into_iter()
            .map(|(_, m)| m)
            .filter(|m| opts.types.is_empty() || opts.types.contains(&m.kind))
            .filter(|m| opts.tags.is_empty() || m.tags.iter().any(|t| opts.tags.contains(t)))
            .filter(|m| opts.include_expired || !is_expired(m, now))
            .collect();
        all.sort_by(|a, b| b.updated.cmp(&a.updated).then(b.id.cmp(&a.id)));
        let limit = limits::count(opts.limit, 50, limits::MAX_HITS);
        let vault = self.vault();
        Ok(all
            .into_iter()
            .skip(opts.offset.min(limits::MAX_OFFSET))
            .take(limit)
            .map(|m| vault.read(&m.id).unwrap_or(m).into())
            .collect())
    }

    /// Recalls memories for a query: hybrid search over the memory folder,
    /// filtered, cut by the relevance floors (relevance is a memory's fused
    /// score over the best score among the memories the filters keep), then
    /// ranked by [`cairn_search::blend`] (relevance gating importance,
    /// recency, frequency; × 0.7 when a cited source changed). Each returned
    /// memory's access count and time are updated.
    pub fn recall(&self, query: &str, opts: &RecallOptions) -> Result<Vec<Recalled>> {
        let (mut hits, _) = self.recall_counted(query, opts)?;
        if opts.standing {
            self.add_standing(&mut hits)?;
        }
        Ok(hits)
    }

    /// Appends the standing memories `hits` lacks: gotchas, decisions and
    /// conventions ([`crate::inject::type_priority`] ≥ 3) and any memory of
    /// importance ≥ [`crate::inject::STANDING_IMPORTANCE`], newest first,
    /// unexpired.
    fn add_standing(&self, hits: &mut Vec<Recalled>) -> Result<()> {
        let listed = self.list_memories(&ListOptions {
            limit: limits::MAX_HITS,
            ..ListOptions::default()
        })?;
        // A replaced memory no longer stands: the one that replaced it does
        // (recall hides it; the digest that is shown unasked must too).
        let chains = self.supersessions()?;
        for m in listed {
            let k = &m.memory;
            let stands = crate::inject::type_priority(&k.kind) >= 3
                || k.importance >= crate::inject::STANDING_IMPORTANCE;
            if stands
                && !chains.contains_key(&k.id)
                && !hits.iter().any(|h| h.memory.memory.id == k.id)
            {
                hits.push(Recalled {
                    memory: m,
                    score: 0.0,
                    source_changed: false,
                    expired: false,
                    terms: Vec::new(),
                    similarity: None,
                    standing: true,
                    superseded_by: None,
                    replaces: Vec::new(),
                    replaced_lines: Vec::new(),
                    personal: false,
                });
            }
        }
        Ok(())
    }

    /// [`Engine::recall`], and how many memories matched in all (above the
    /// floors, with the filters; the page `offset`/`limit` cuts from them).
    /// The personal memories (`[memory] personal`) are recalled beside the
    /// project's and marked [`Recalled::personal`] (`personal.rs`).
    pub fn recall_counted(
        &self,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<(Vec<Recalled>, usize)> {
        // Asked at each recall, not only when the engine opened: a daemon
        // started before `git worktree add` shares the folder from then on.
        let shared = self.memory_shared
            || crate::git::checkout(&self.root).is_some_and(|c| c.has_worktrees());
        if shared {
            // Another worktree may have stored a memory since this index
            // last looked: a pass over the memory folder alone picks it up
            // (its vectors left to later while a backfill runs, so a recall
            // never waits for one; BM25 finds it meanwhile).
            let backfilling = self.embed_lock.try_lock().is_err();
            let options = crate::indexer::IndexOptions {
                defer_embedding: backfilling,
            };
            if let Err(e) = self.index_with(&[], options, &NoProgress) {
                tracing::warn!("recall without the latest memories of other worktrees: {e}");
            }
        }
        match self.personal_engine(false)? {
            Some(personal) => self.recall_with_personal(&personal, query, opts),
            None => self.recall_here(query, opts),
        }
    }

    /// The project's own memories of a recall (no personal ones).
    pub(crate) fn recall_here(
        &self,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<(Vec<Recalled>, usize)> {
        let floor = Floor::new(
            opts.min_score.unwrap_or(self.config.memory.min_score),
            opts.relative_floor
                .unwrap_or(self.config.memory.relative_floor),
        )
        .map_err(|e| Error::Query(e.to_string()))?;
        let limit = limits::count(opts.limit, 5, limits::MAX_HITS);
        let offset = opts.offset.min(limits::MAX_OFFSET);
        let now = now_secs();
        let time = cairn_search::read_query(query, now);
        // A question that names a type ("the latest decision") with a time
        // keeps to that type; one that asks nothing but time and type ("what
        // did we learn yesterday") is answered by listing those memories in
        // time order: their words need not match the question's.
        let asked = crate::when::asked(query, &time);
        let typed;
        let opts = match asked.kind {
            Some(kind)
                if opts.types.is_empty()
                    && !opts.raw_fts
                    && (asked.only_time_and_type || !time.is_empty()) =>
            {
                typed = RecallOptions {
                    types: vec![kind.to_string()],
                    ..opts.clone()
                };
                &typed
            }
            _ => opts,
        };
        if asked.only_time_and_type && !opts.raw_fts {
            return self.recall_listing(&time, opts, now, limit, offset);
        }
        let depth = ((offset + limit) * 4).max(100);
        let search = SearchOptions {
            limit: depth,
            path_prefix: Some(self.memory_prefix()),
            raw_fts: opts.raw_fts,
            mode: if self.embedder.is_some() && !self.embedding_in_progress() && !opts.raw_fts {
                Mode::Hybrid
            } else {
                Mode::Bm25
            },
            // Recall blends relevance with importance, recency and use;
            // `[search] rerank` is search's alone.
            rerank: Some(false),
            ..SearchOptions::default()
        };
        let candidates = self.rank(query, &search, depth, depth)?;
        let filter = RecallFilter::of(opts)?;

        // Metadata and usage of every candidate, read in one snapshot.
        let facts = self.with_snapshot(|snap| {
            candidates
                .iter()
                .map(|c| {
                    let meta = snap.meta_of(&c.row.chunk.path)?.unwrap_or_default();
                    let stem = stem_of(&c.row.chunk.path);
                    let value: serde_json::Value = serde_json::from_str(&meta).unwrap_or_default();
                    let id = value["id"].as_str().unwrap_or(&stem).to_string();
                    Ok((meta, snap.memory_stats(&id)?))
                })
                .collect::<Result<Vec<_>>>()
        })?;
        let mut kept = Vec::new();
        for (c, (meta, stats)) in candidates.into_iter().zip(facts) {
            let m = candidate_memory(&c.row.chunk, &meta);
            let expired = is_expired(&m, now);
            if filter.keeps(&m, expired, opts) {
                let similarity = c
                    .signals
                    .iter()
                    .find(|s| s.retriever == cairn_core::Retriever::Vector)
                    .map(|s| s.raw);
                kept.push((c.score, m, expired, stats, similarity));
            }
        }
        // Candidates come best first, so the first kept is the best match
        // the filters allow: relevance 1, the floors measured from it.
        let kept = floor.cut(kept, |k| k.0);
        let mut out = self.blend_recalled(kept, now);
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
        let chains = self.supersessions()?;
        self.apply_supersessions(&mut out, &chains, opts.show_replaced);
        if time.is_empty() {
            // A session log is a diary: it answers "what did we do
            // yesterday", and it mentions everything, so a question that
            // names no time gets the memories written to answer it first.
            for r in &mut out {
                if r.memory
                    .memory
                    .id
                    .starts_with(crate::vault::SESSION_ID_PREFIX)
                {
                    r.score *= SESSION_LOG_FACTOR;
                }
            }
            out.sort_by(|a, b| b.score.total_cmp(&a.score));
        }
        crate::when::apply(&mut out, &time, self.config.memory.time_factor);
        let total = out.len();
        let mut out: Vec<Recalled> = out.into_iter().skip(offset).take(limit).collect();
        self.finish_recall(&mut out, opts, now)?;
        Ok((out, total))
    }

    /// A recall that asks only for a time or a type: the memories of that
    /// type inside that span, newest first (oldest first when it asks for
    /// the first), replaced ones hidden as in any recall.
    fn recall_listing(
        &self,
        time: &cairn_search::TimeQuery,
        opts: &RecallOptions,
        now: i64,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<Recalled>, usize)> {
        let filter = RecallFilter::of(opts)?;
        let listed = self.list_memories(&ListOptions {
            types: opts.types.clone(),
            tags: opts.tags.clone(),
            include_expired: opts.include_expired,
            limit: limits::MAX_HITS,
            offset: 0,
        })?;
        let label = if time.phrase.is_empty() {
            "listed by time".to_string()
        } else {
            format!("listed by time ({})", time.phrase)
        };
        let mut out: Vec<(i64, Recalled)> = Vec::new();
        for v in listed {
            let at = crate::when::event_time(&v.memory, &v.text).unwrap_or(0);
            let expired = is_expired(&v.memory, now);
            if time.range.is_some_and(|r| !r.contains(at))
                || !filter.keeps(&v.memory, expired, opts)
            {
                continue;
            }
            out.push((
                at,
                Recalled {
                    memory: v,
                    score: 1.0,
                    source_changed: false,
                    expired,
                    terms: vec![cairn_search::Term {
                        name: label.clone().into(),
                        value: 1.0,
                        contribution: 1.0,
                    }],
                    similarity: None,
                    standing: false,
                    superseded_by: None,
                    replaces: Vec::new(),
                    replaced_lines: Vec::new(),
                    personal: false,
                },
            ));
        }
        match time.order {
            Some(cairn_search::TimeOrder::Oldest) => out.sort_by_key(|(at, _)| *at),
            _ => out.sort_by_key(|(at, _)| std::cmp::Reverse(*at)),
        }
        let mut out: Vec<Recalled> = out.into_iter().map(|(_, r)| r).collect();
        let chains = self.supersessions()?;
        self.apply_supersessions(&mut out, &chains, opts.show_replaced);
        let total = out.len();
        let mut out: Vec<Recalled> = out.into_iter().skip(offset).take(limit).collect();
        self.finish_recall(&mut out, opts, now)?;
        Ok((out, total))
    }

    /// The kept candidates of a recall as [`Recalled`]s: relevance (their
    /// fused score over the best's) blended with importance, recency and
    /// use.
    fn blend_recalled(&self, kept: Vec<KeptMemory>, now: i64) -> Vec<Recalled> {
        let best = kept.first().map_or(1.0, |k| k.0.max(f64::MIN_POSITIVE));
        let mut out = Vec::with_capacity(kept.len());
        for (fused, m, expired, (count, last), similarity) in kept {
            let touched = last.max(parse_time(&m.updated).unwrap_or(0));
            let source_changed =
                !m.sources.is_empty() && self.source_hashes(&m.sources) != m.source_hashes;
            let (score, terms) = blend(
                &MemorySignals {
                    relevance: fused / best,
                    importance: m.importance,
                    days_since_access: (now - touched).max(0) as f64 / 86_400.0,
                    access_count: count,
                    source_changed,
                },
                &self.config.memory.weights,
            );
            out.push(Recalled {
                memory: m.into(),
                score,
                source_changed,
                expired,
                terms,
                similarity,
                standing: false,
                superseded_by: None,
                replaces: Vec::new(),
                replaced_lines: Vec::new(),
                personal: false,
            });
        }
        out
    }

    /// The page of a recall made whole: each memory's full text from its
    /// file (the best chunk may be part of it), and, unless asked not to,
    /// the access counted.
    fn finish_recall(&self, out: &mut [Recalled], opts: &RecallOptions, now: i64) -> Result<()> {
        let vault = self.vault();
        for r in out.iter_mut() {
            if let Ok(full) = vault.read(&r.memory.memory.id) {
                // A session log holds a day of sessions: the one that
                // matched is the answer, not the day.
                let text = if r
                    .memory
                    .memory
                    .id
                    .starts_with(crate::vault::SESSION_ID_PREFIX)
                {
                    session_around(&full.text, &r.memory.memory.text)
                        .unwrap_or_else(|| r.memory.memory.text.clone())
                } else {
                    full.text
                };
                r.memory.text = text.clone();
                r.memory.memory.text = text;
            }
        }
        if !opts.no_touch && !out.is_empty() {
            let ids: Vec<&str> = out.iter().map(|r| r.memory.memory.id.as_str()).collect();
            // Usage counts are best effort: while an index pass holds the
            // writer (a watch re-index, a build), a recall does not wait for
            // it and this access goes uncounted.
            match sync::try_lock(&self.store) {
                Some(mut store) => store.record_access(&ids, now)?,
                None => tracing::debug!("writer busy: {} accesses not counted", ids.len()),
            }
        }
        Ok(())
    }
}

/// Factor of a session log's recall score when the query names no time
/// (issue 61: the day's log came second for "session caching", matched by
/// its heading). Set by that case, not tuned on a set.
const SESSION_LOG_FACTOR: f64 = 0.6;

/// The session (`### HH:MM` section of a day's session log) holding the
/// start of `part` (a chunk of it), whole; `None` when `part` is not in
/// `log`.
fn session_around(log: &str, part: &str) -> Option<String> {
    let part = part.trim();
    if part == log.trim() {
        // The whole day (a recall that lists by time): kept whole.
        return Some(part.to_string());
    }
    let at = log.find(part)?;
    // The session heading at the part's start or inside it (a part may
    // begin with the day's title), else the one above it.
    let inside = if part.starts_with("### ") {
        Some(0)
    } else {
        part.find("\n### ").map(|i| i + 1)
    };
    let start = match inside {
        Some(i) => at + i,
        None => log[..at].rfind("\n### ").map_or(0, |i| i + 1),
    };
    let end = log[start + 1..]
        .find("\n### ")
        .map_or(log.len(), |i| start + 1 + i);
    Some(log[start..end].trim().to_string())
}

/// A recall candidate the filters kept: fused score, the memory, whether
/// it expired, its `(access count, last access)`, its cosine.
type KeptMemory = (f64, Memory, bool, (u64, i64), Option<f64>);

/// A candidate chunk's memory: from its file's metadata, or, for a session
/// log, as the vault reads one.
fn candidate_memory(chunk: &cairn_core::Chunk, meta: &str) -> Memory {
    let stem = stem_of(&chunk.path);
    let value: serde_json::Value = serde_json::from_str(meta).unwrap_or_default();
    let yaml = serde_yaml::to_value(&value).unwrap_or_default();
    if stem.starts_with(crate::vault::SESSION_ID_PREFIX) {
        // A session log: its kind, day and text as the vault reads it.
        let mut m = crate::vault::session_memory(&stem, &chunk.text);
        m.text = chunk.text.clone();
        m
    } else {
        crate::vault::memory_from_yaml(&yaml, &chunk.text, &stem)
    }
}

/// What a recall's filters ask, read once.
struct RecallFilter {
    since: Option<i64>,
    until: Option<i64>,
    entities: Vec<String>,
}

impl RecallFilter {
    fn of(opts: &RecallOptions) -> Result<RecallFilter> {
        let time = |s: &Option<String>, what: &str| {
            s.as_deref()
                .map(|s| {
                    parse_time(s).ok_or_else(|| {
                        Error::Query(format!("{what} {s:?}: use RFC 3339 or YYYY-MM-DD"))
                    })
                })
                .transpose()
        };
        Ok(RecallFilter {
            since: time(&opts.since, "since")?,
            until: time(&opts.until, "until")?,
            entities: opts.entities.iter().map(|s| s.to_lowercase()).collect(),
        })
    }

    /// Whether memory `m` passes the filters of `opts`.
    fn keeps(&self, m: &Memory, expired: bool, opts: &RecallOptions) -> bool {
        let created = parse_time(&m.created);
        (opts.include_expired || !expired)
            && (opts.types.is_empty() || opts.types.iter().any(|t| t.eq_ignore_ascii_case(&m.kind)))
            && (opts.tags.is_empty() || m.tags.iter().any(|t| opts.tags.contains(t)))
            && (self.entities.is_empty()
                || m.entities
                    .iter()
                    .any(|e| self.entities.contains(&e.to_lowercase())))
            && opts.min_importance.is_none_or(|i| m.importance >= i)
            && self.since.is_none_or(|s| created.is_some_and(|c| c >= s))
            && self.until.is_none_or(|u| created.is_some_and(|c| c <= u))
    }
}
