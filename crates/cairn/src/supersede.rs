//! Memory that knows what replaced what: a new memory that updates an older
//! one ("we moved session caching to Memcached" after "we use Redis for
//! session caching") names it in its `supersedes` list, and recall shows the
//! newest with the older ones it replaced, never the older alone as if it
//! still held.
//!
//! The link is stored once, in the newer memory's frontmatter: which memory
//! replaced an older one is read from the newer's list ([`Engine::
//! supersessions`]). One file write makes a link and one undo (of that
//! store) unmakes it; forgetting the newer memory makes the older current
//! again.
//!
//! Found without a language model: the new text says a change (a word of
//! [`CHANGE_WORDS`]), its type is not a record of what happened
//! ([`HISTORICAL_TYPES`]), and an earlier memory of the same type is close in
//! meaning (cosine ≥ `[memory] supersede_threshold`) and shares a subject
//! word with it ([`shares_subject`]), or the caller names
//! the older memory (`remember --supersedes <id>`).
//!
//! One memory cannot hide the others: a link holds only when the older
//! memory is of the newer's type and no more important than it, and a
//! memory that names more than [`MAX_REPLACED`] replaces none ([`Bound`]).
//! The bound is applied where the chains are read ([`chains_of`]), so a
//! memory file committed by hand, brought by an import or stored over MCP
//! is held to it as well as one `remember` wrote; `remember` refuses such
//! a list outright. Only a person at the CLI may replace a more important
//! memory: the new one then takes the older's importance, so the read-time
//! rule holds for it too. `doctor` lists the memories that replace more
//! than one and the links the bound refused; an index pass reports the
//! replacements its memory files made.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cairn_core::sync;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{MemoryView, Recalled};
use crate::vault::parse_time;
use cairn_core::Memory;

/// Words and phrases that say something changed ("moved" covers "we
/// moved session caching to Memcached", the object between them). A memory holding one of these and
/// close in meaning to an earlier one of its type replaces it.
pub const CHANGE_WORDS: &[&str] = &[
    "moved",
    "moving",
    "migrated",
    "migrating",
    "switched",
    "switching",
    "replaced",
    "replaces",
    "replacing",
    "no longer",
    "not anymore",
    "instead of",
    "rather than",
    "now use",
    "now uses",
    "now using",
    "we now",
    "deprecated",
    "superseded",
    "reverted",
    "changed to",
    "changed from",
    "from now on",
    "dropped",
    "stopped using",
    "went back to",
    // The words release notes and decision records say a change with
    // ("Remove the --build-dir option", "replace winapi with windows-sys",
    // "rename join_one to join_next", "Use http_date instead."): chosen on
    // the tuning half of eval/decisions. Not "removes", which describes
    // what a thing does ("the move tool removes files").
    "remove",
    "removed",
    "replace",
    "replacement",
    "switch",
    "rename",
    "renamed",
    "drop",
    "deprecate",
    "instead",
    "in favor of",
    "in favour of",
];

/// Memory types a word of change never links on its own (`--supersedes`
/// still does): an event records what happened, and a later event ("we
/// moved the meeting") does not make an earlier one untrue. Measured on
/// LoCoMo stored as memories (every turn an event): BENCHMARKS.md, "Memory
/// that knows time".
pub const HISTORICAL_TYPES: &[&str] = &["event"];

/// Links followed at most from a memory to its newest replacement (a
/// chain longer than this, or a cycle a hand edit made, stops there).
const MAX_CHAIN: usize = 32;

/// The most memories one memory replaces. A decision restated replaces
/// the one or two it changes; a list of thirty is no restatement, and a
/// memory naming more than this replaces none of them.
pub const MAX_REPLACED: usize = 3;

/// The most characters of a replaced memory's text recall shows beside
/// the memory that replaced it.
const REPLACED_LINE_CHARS: usize = 160;

/// A memory's text as one line of at most [`REPLACED_LINE_CHARS`].
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(REPLACED_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &joined[..at]),
        None => joined,
    }
}

/// Score factor of a replaced memory when recall is asked to show the
/// replaced ones too: below the memory that replaced it.
pub const SUPERSEDED_FACTOR: f64 = 0.5;

/// Whether `text` says that something changed. An identifier is one word
/// (`send_replace` says no "replace").
pub fn says_change(text: &str) -> bool {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    let joined = format!(" {} ", words.join(" "));
    CHANGE_WORDS
        .iter()
        .any(|p| joined.contains(&format!(" {p} ")))
}

/// Words that name no subject: a shared one says nothing about whether two
/// memories speak of the same thing.
const NOT_A_SUBJECT: &[&str] = &[
    "about", "after", "again", "also", "always", "because", "been", "before", "being", "does",
    "done", "each", "from", "have", "here", "into", "just", "like", "made", "make", "more", "most",
    "much", "must", "need", "never", "only", "other", "over", "same", "should", "since", "some",
    "than", "that", "their", "them", "then", "there", "these", "they", "this", "those", "through",
    "used", "uses", "using", "very", "want", "were", "what", "when", "where", "which", "while",
    "will", "with", "would", "your", "moved", "instead", "longer", "now", "rather", "switched",
    "replaced", "anymore", "favor", "favour", "option", "options",
];

/// The words of `text` that may name a subject: four letters or more, not a
/// function word or a word of change.
fn subject_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| {
            w.chars().count() >= 4 && !NOT_A_SUBJECT.contains(w) && !CHANGE_WORDS.contains(w)
        })
        .map(str::to_string)
        .collect()
}

/// Whether two texts speak of one subject: they share two words that may
/// name one (four letters or more, not a function word or a word of change,
/// not in `common`), or one that is at least a third of the shorter text's
/// such words. Cosine alone puts unrelated short texts of one model close
/// together, and one shared word among many is not enough either: "We no
/// longer hash passwords in the test fixtures" shares only "passwords" (of
/// four) with "Passwords are hashed with bcrypt at cost 12" and is about
/// something else. Chosen on the tuning half of eval/decisions: wrong
/// links 7 → 3 with the chains' links kept (0.640); any one shared word,
/// as before, and half instead of a third (wrong 2, links 0.560) measured
/// beside it (BENCHMARKS.md, "Memory that knows time").
pub fn shares_subject(a: &str, b: &str, common: &[String]) -> bool {
    let words = |t: &str| {
        let mut w: Vec<String> = subject_words(t)
            .into_iter()
            .filter(|w| !common.contains(w))
            .collect();
        w.sort();
        w.dedup();
        w
    };
    let (a, b) = (words(a), words(b));
    let shared = a.iter().filter(|w| b.contains(w)).count();
    let fewer = a.len().min(b.len());
    shared >= 2 || (shared >= 1 && shared * 3 >= fewer)
}

/// The subject words at least [`COMMON_SAMPLE`] of `texts` hold, and more
/// than half of them: in a project's memories, its own name ("pytest",
/// "werkzeug") or a namespace is in most of them and says nothing about
/// two being about one thing (eval/decisions: such words made most of the
/// wrong links). `texts` are the memories nearest the new one, so a chain's
/// own subject is in several of them too: a chain has two or three, fewer
/// than [`COMMON_SAMPLE`].
fn common_words<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut n = 0usize;
    for t in texts {
        n += 1;
        let mut words = subject_words(t);
        words.sort();
        words.dedup();
        for w in words {
            *counts.entry(w).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .filter(|(_, c)| *c >= COMMON_SAMPLE && c * 2 > n)
        .map(|(w, _)| w)
        .collect()
}

/// The fewest of the nearest memories a word must be in to be common.
const COMMON_SAMPLE: usize = 5;

/// Which memory replaced which: old id → the id of the memory that names
/// it in `supersedes`.
pub type Chains = HashMap<String, String>;

/// Where one memory stands in the chains: the ids it replaced and the id
/// that replaced it (for `cairn log`, the page and `show`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChainLinks {
    /// The memories this one replaced (oldest id first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// The memory that replaced this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<String>,
}

/// Each memory's [`ChainLinks`] at once, from `chains` (old → new): one
/// pass, for views that list many memories.
pub fn chain_links(chains: &Chains) -> HashMap<String, ChainLinks> {
    let mut out: HashMap<String, ChainLinks> = HashMap::new();
    for (old, new) in chains {
        out.entry(old.clone()).or_default().replaced_by = Some(new.clone());
        out.entry(new.clone())
            .or_default()
            .replaces
            .push(old.clone());
    }
    for links in out.values_mut() {
        links.replaces.sort();
    }
    out
}

/// Why the bound refused a link a memory's `supersedes` names.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The memory names more than [`MAX_REPLACED`]: it replaces none.
    TooMany,
    /// The older memory is of another type.
    OtherType,
    /// The older memory is more important than the newer.
    MoreImportant,
}

impl Refusal {
    /// The reason in words, for `doctor` and the index report.
    pub fn reason(&self) -> String {
        match self {
            Refusal::TooMany => format!("it names more than {MAX_REPLACED}"),
            Refusal::OtherType => "it is of another type".into(),
            Refusal::MoreImportant => "it is more important".into(),
        }
    }
}

/// What the bound made of the memories' `supersedes` lists: the links that
/// hold, each memory's count of names, and the links refused.
#[derive(Clone, Debug, Default)]
pub struct Bound {
    /// The links that hold: old id → new id.
    pub chains: Chains,
    /// Per memory that names any: `(id, how many it names)`.
    pub naming: Vec<(String, usize)>,
    /// Links refused: `(new id, old id, why)`.
    pub refused: Vec<(String, String, Refusal)>,
}

/// A memory's fields the bound reads from its indexed metadata.
struct Facts {
    id: String,
    kind: String,
    importance: u8,
    created: i64,
    supersedes: Vec<String>,
}

fn facts(json: &str) -> Option<Facts> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    Some(Facts {
        id: value["id"].as_str()?.to_string(),
        kind: value["type"].as_str().unwrap_or_default().to_lowercase(),
        importance: value["importance"]
            .as_u64()
            .map_or(cairn_core::DEFAULT_IMPORTANCE, |i| i.min(10) as u8),
        created: value["created"].as_str().and_then(parse_time).unwrap_or(0),
        supersedes: value["supersedes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
    })
}

/// The chains the memories' metadata (`(path, JSON)`) state, held to the
/// bound (see the module documentation): old id → id of the latest stored
/// memory that names it in `supersedes` and may replace it.
pub fn chains_of(metas: Vec<(String, String)>) -> Bound {
    // Most memories replace nothing and are named by none: only the ones
    // that name others, and the ones they name (a memory file is named by
    // its id), are parsed — this runs on every index pass that wrote one.
    let newer: Vec<Facts> = metas
        .iter()
        .filter(|(_, json)| json.contains("\"supersedes\""))
        .filter_map(|(_, json)| facts(json))
        .filter(|f| !f.supersedes.is_empty())
        .collect();
    let named: HashSet<&str> = newer
        .iter()
        .flat_map(|f| f.supersedes.iter().map(String::as_str))
        .collect();
    let older: Vec<Facts> = metas
        .iter()
        .filter(|(path, _)| named.contains(crate::memory::stem_of(path).as_str()))
        .filter_map(|(_, json)| facts(json))
        .collect();
    let by_id: HashMap<&str, &Facts> = newer
        .iter()
        .chain(&older)
        .map(|f| (f.id.as_str(), f))
        .collect();
    let mut links: HashMap<String, (String, i64)> = HashMap::new();
    let mut bound = Bound::default();
    for new in &newer {
        let mut named = new.supersedes.clone();
        named.retain(|o| *o != new.id);
        named.sort();
        named.dedup();
        bound.naming.push((new.id.clone(), named.len()));
        let too_many = named.len() > MAX_REPLACED;
        for old in named {
            let refusal = match by_id.get(old.as_str()) {
                _ if too_many => Some(Refusal::TooMany),
                // Forgotten since (or never here): nothing to hide, and
                // nothing to report.
                None => continue,
                Some(o) if o.kind != new.kind => Some(Refusal::OtherType),
                Some(o) if o.importance > new.importance => Some(Refusal::MoreImportant),
                Some(_) => None,
            };
            match refusal {
                Some(why) => bound.refused.push((new.id.clone(), old, why)),
                None => {
                    if links.get(&old).is_none_or(|(_, t)| new.created >= *t) {
                        links.insert(old, (new.id.clone(), new.created));
                    }
                }
            }
        }
    }
    bound.naming.sort();
    bound
        .refused
        .sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    bound.chains = links.into_iter().map(|(k, (v, _))| (k, v)).collect();
    bound
}

impl Engine {
    /// Which memory replaced which: `old id → id of the memory whose
    /// `supersedes` names it`, over the indexed memories (a forgotten
    /// memory replaces nothing). When two memories name the same older one,
    /// the later stored wins. Read once per index generation.
    pub fn supersessions(&self) -> Result<Arc<Chains>> {
        let prefix = self.memory_prefix();
        self.with_snapshot(|snap| {
            let generation = snap.generation()?;
            let mut slot = sync::lock(&self.supersessions);
            if let Some((g, chains)) = slot.as_ref()
                && *g == generation
            {
                return Ok(chains.clone());
            }
            let chains = Arc::new(chains_of(snap.metas_under(&prefix)?).chains);
            *slot = Some((generation, chains.clone()));
            Ok(chains)
        })
    }

    /// What the memories `ids` (written by an index pass) replace, held to
    /// the bound: a line per link made and per link refused.
    pub(crate) fn replacements_of(&self, ids: &[String]) -> Result<Vec<String>> {
        let bound = self.supersession_bound()?;
        let mut out = Vec::new();
        let mut made: Vec<(&String, &String)> = bound
            .chains
            .iter()
            .filter(|(_, new)| ids.contains(new))
            .collect();
        made.sort();
        for (old, new) in made {
            out.push(format!("{new} replaces {old}"));
        }
        for (new, n) in bound.naming.iter().filter(|(id, _)| ids.contains(id)) {
            let refused: Vec<&(String, String, Refusal)> =
                bound.refused.iter().filter(|r| r.0 == *new).collect();
            if refused.iter().any(|r| r.2 == Refusal::TooMany) {
                out.push(format!(
                    "{new} names {n} memories under supersedes: none replaced (at most {MAX_REPLACED})"
                ));
                continue;
            }
            for (_, old, why) in refused {
                out.push(format!("{new} does not replace {old}: {}", why.reason()));
            }
        }
        Ok(out)
    }

    /// The memories' `supersedes` lists held to the bound, with what it
    /// refused (for `doctor` and the index report).
    pub fn supersession_bound(&self) -> Result<Bound> {
        let prefix = self.memory_prefix();
        self.with_snapshot(|snap| Ok(chains_of(snap.metas_under(&prefix)?)))
    }

    /// The memories a new one of `kind` and `importance` replaces, and the
    /// importance it is stored with: those `named` (each must exist, be of
    /// the same type and, unless `by_person`, be no more important; at most
    /// [`MAX_REPLACED`]) — a person at the CLI naming a more important one
    /// gives the new memory that importance — and, when `text` says a
    /// change and none is named, the memory of type `kind` and no higher
    /// importance most like it among `alike` (the store's one lookup of
    /// similar memories, best first) that was stored before `created`, at
    /// cosine ≥ `[memory] supersede_threshold` (0 turns the search off) and
    /// sharing a subject word with it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn supersedes_of(
        &self,
        text: &str,
        kind: &str,
        importance: u8,
        named: &[String],
        by_person: bool,
        created: &str,
        alike: &[(String, f64)],
    ) -> Result<(Vec<String>, u8)> {
        let vault = self.vault();
        let mut out: Vec<String> = Vec::new();
        let mut importance = importance;
        for id in named {
            let id = id.trim();
            if id.is_empty() || out.iter().any(|o| o == id) {
                continue;
            }
            let old = vault.read(id).map_err(|_| {
                Error::NotFound(format!(
                    "--supersedes {id:?}: no such memory (see `cairn memories`)"
                ))
            })?;
            if !old.kind.eq_ignore_ascii_case(kind) {
                return Err(Error::Query(format!(
                    "--supersedes {id:?}: it is a {}, and a {kind} replaces only memories of its own type",
                    old.kind
                )));
            }
            if old.importance > importance {
                if !by_person {
                    return Err(Error::Query(format!(
                        "--supersedes {id:?}: it has importance {} above this memory's {importance}; \
                         only a person at the CLI (`cairn remember --supersedes`) replaces a more important memory",
                        old.importance
                    )));
                }
                importance = old.importance;
            }
            out.push(id.to_string());
        }
        if out.len() > MAX_REPLACED {
            return Err(Error::Query(format!(
                "supersedes names {} memories: one memory replaces at most {MAX_REPLACED}",
                out.len()
            )));
        }
        let threshold = self.config.memory.supersede_threshold;
        let historical = HISTORICAL_TYPES
            .iter()
            .any(|t| kind.eq_ignore_ascii_case(t));
        if !out.is_empty() || threshold <= 0.0 || historical || !says_change(text) {
            return Ok((out, importance));
        }
        let created = parse_time(created).unwrap_or(i64::MAX);
        // Every similar memory (the store's lookup of the nearest) is a
        // sample of what the project's memories share.
        let similar: Vec<Memory> = alike
            .iter()
            .map(|(path, _)| crate::memory::stem_of(path))
            .filter(|id| !id.starts_with(crate::vault::SESSION_ID_PREFIX))
            .filter_map(|id| vault.read(&id).ok())
            .collect();
        let common = common_words(similar.iter().map(|m| m.text.as_str()));
        let close = |id: &str| {
            alike
                .iter()
                .any(|(p, s)| *s >= threshold && crate::memory::stem_of(p) == id)
        };
        for m in &similar {
            let earlier = parse_time(&m.created).is_none_or(|t| t <= created);
            if close(&m.id)
                && m.kind.eq_ignore_ascii_case(kind)
                && m.importance <= importance
                && earlier
                && shares_subject(text, &m.text, &common)
            {
                out.push(m.id.clone());
                break;
            }
        }
        Ok((out, importance))
    }

    /// Recall's view of the chains: each replaced memory among `out` is
    /// marked with what replaced it; the newest memory of its chain is put
    /// in the list if missing (with the replaced one's score: it answers
    /// what that one was found for) and lists the ones it replaced. Unless
    /// `show_replaced`, the replaced memories then leave the list; with it,
    /// they stay, scored × [`SUPERSEDED_FACTOR`].
    pub(crate) fn apply_supersessions(
        &self,
        out: &mut Vec<Recalled>,
        chains: &HashMap<String, String>,
        show_replaced: bool,
    ) {
        if chains.is_empty() {
            return;
        }
        let newest_of = |id: &str| -> Option<String> {
            let mut at = chains.get(id)?.clone();
            for _ in 0..MAX_CHAIN {
                match chains.get(&at) {
                    Some(next) if next != id => at = next.clone(),
                    _ => break,
                }
            }
            Some(at)
        };
        let vault = self.vault();
        let mut replaced: Vec<(usize, String)> = Vec::new();
        for (i, r) in out.iter_mut().enumerate() {
            let id = r.memory.memory.id.clone();
            if let Some(next) = chains.get(&id) {
                r.superseded_by = Some(next.clone());
                if let Some(newest) = newest_of(&id) {
                    replaced.push((i, newest));
                }
            }
        }
        let mut added: Vec<Recalled> = Vec::new();
        for (i, newest) in &replaced {
            let old_id = out[*i].memory.memory.id.clone();
            let old_line = one_line(&out[*i].memory.text);
            let score = out[*i].score;
            let holder = out
                .iter_mut()
                .chain(added.iter_mut())
                .find(|r| r.memory.memory.id == *newest);
            match holder {
                Some(h) => {
                    if !h.replaces.contains(&old_id) {
                        h.replaces.push(old_id);
                        h.replaced_lines.push(old_line);
                    }
                    h.score = h.score.max(score);
                }
                None => {
                    let Ok(m) = vault.read(newest) else { continue };
                    added.push(Recalled {
                        memory: MemoryView::from(m),
                        score,
                        source_changed: false,
                        expired: false,
                        terms: Vec::new(),
                        similarity: None,
                        standing: false,
                        superseded_by: None,
                        replaces: vec![old_id],
                        replaced_lines: vec![old_line],
                        personal: false,
                    });
                }
            }
        }
        out.extend(added);
        if show_replaced {
            for r in out.iter_mut() {
                if r.superseded_by.is_some() {
                    r.score *= SUPERSEDED_FACTOR;
                }
            }
        } else {
            out.retain(|r| r.superseded_by.is_none());
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
}

#[cfg(test)]
mod tests {
    use super::says_change;

    #[test]
    fn chain_links_read_both_ways() {
        let chains = super::Chains::from([
            ("a".to_string(), "b".to_string()),
            ("b".to_string(), "c".to_string()),
            ("x".to_string(), "c".to_string()),
        ]);
        let links = super::chain_links(&chains);
        assert_eq!(links["a"].replaced_by.as_deref(), Some("b"));
        assert!(links["a"].replaces.is_empty());
        assert_eq!(links["b"].replaces, vec!["a".to_string()]);
        assert_eq!(links["b"].replaced_by.as_deref(), Some("c"));
        assert_eq!(links["c"].replaces, vec!["b".to_string(), "x".to_string()]);
        assert_eq!(links["c"].replaced_by, None);
        assert!(!links.contains_key("z"));
    }

    #[test]
    fn change_words() {
        assert!(says_change("We moved session caching to Memcached."));
        assert!(says_change("The API no longer accepts XML"));
        assert!(says_change("Use ruff instead of flake8"));
        assert!(says_change("we switched to pnpm"));
        assert!(!says_change("We use Redis for session caching"));
        assert!(!says_change("the move tool removes files"));
        assert!(!says_change("prefers small commits"));
        // Release-note wording (eval/decisions, tuning half).
        assert!(says_change(
            "Remove the ``--build-dir`` option, as per the deprecation."
        ));
        assert!(says_change(
            "The user agent parser and the ``useragents`` module is removed."
        ));
        assert!(says_change(
            "windows: replace `winapi` dependency with `windows-sys`"
        ));
        assert!(says_change("joinset: rename `join_one` to `join_next`"));
        assert!(says_change(
            "Switch to the new dependency resolver by default."
        ));
        assert!(says_change("Drop support for Python 2."));
        assert!(says_change(
            "Remove the ``cookie_date`` function. Use ``http_date`` instead."
        ));
        assert!(says_change(
            "Adds `AsyncFd` as a replacement for v0.2's `PollEvented`."
        ));
        assert!(says_change(
            "Deprecate undocumented ``--skip-requirements-regex`` option."
        ));
        assert!(says_change("Removed upload and register in favor of twine"));
        assert!(!says_change(
            "Add ``--ignore-requires-python`` support to pip download."
        ));
        assert!(!says_change("the cleanup job removes stale branches"));
        assert!(!says_change("sync: add `watch::Sender::send_replace`"));
    }

    #[test]
    fn subjects() {
        use super::shares_subject;
        assert!(shares_subject(
            "We use Redis for session caching",
            "We moved session caching to Memcached",
            &[]
        ));
        assert!(!shares_subject(
            "We use Redis for session caching",
            "We switched the CI runner to GitHub Actions, rather than Jenkins",
            &[]
        ));
        // One shared word among many is no subject (issue 60).
        assert!(!shares_subject(
            "Passwords are hashed with bcrypt at cost 12: a security requirement",
            "We no longer hash passwords in the test fixtures",
            &[]
        ));
        // A word of change is no subject: two deprecations of different
        // options share only "deprecated".
        assert!(!shares_subject(
            "Deprecate ``--install-options`` which forces pip to use the deprecated ``install`` command",
            "Removed the deprecated ``--egg`` parameter",
            &[]
        ));
        // Nor is "option": two removed options are two subjects.
        assert!(!shares_subject(
            "Remove deprecated ``--find-links`` option in ``pip freeze``",
            "Remove the ``--build-dir`` option, as per the deprecation.",
            &[]
        ));
        assert!(shares_subject(
            "Deprecate -b/--build/--build-dir/--build-directory.",
            "Remove the ``--build-dir`` option, as per the deprecation.",
            &[]
        ));
        // A word most of the nearest memories hold (the project's name) is
        // no subject either.
        let common = super::common_words(
            [
                "pytest no longer depends on the py library",
                "pytest's setup.py file is removed",
                "pytest now requires Python 3.8",
                "pytest drops support for nose",
                "pytest renamed the junit option",
                "the toml parser moved to tomli",
            ]
            .into_iter(),
        );
        assert_eq!(common, vec!["pytest".to_string()]);
        assert!(!shares_subject(
            "pytest's setup.py file is removed",
            "pytest no longer depends on the py library",
            &common
        ));
        // A chain's own subject, in two or three of them, stays one.
        let few =
            super::common_words(["html5lib parsing", "drop html5lib", "the resolver"].into_iter());
        assert!(few.is_empty());
    }
}
