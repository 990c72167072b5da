//! The project's git history as the index holds it, and `cairn why`: the
//! commits that introduced and changed a definition or a file, newest
//! first, with their messages, the lines they touched and the memories
//! anchored to the same code, within a token budget.
//!
//! The indexer's history stage (`indexer/history.rs`, the `history`
//! feature) writes one record per commit under [`HISTORY_PREFIX`]; its
//! metadata JSON is a [`CommitMeta`]. `why` reads those records only, from
//! one snapshot: it needs no git library and no repository.

use cairn_core::{HISTORY_PREFIX, entity_key};
use cairn_search::estimate_tokens;
use serde::{Deserialize, Serialize};

use crate::access::confine;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::limits;

/// The metadata key of the last head a pass read.
pub(crate) const HEAD_KEY: &str = "history_head";

/// One file of a stored commit record.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CommitFile {
    /// Project-relative path (after the commit).
    pub path: String,
    /// `A`, `M`, `D`, `R`, `C`, `T`.
    pub status: String,
    /// The path before the commit, for a rename or a copy (records of
    /// history format 1 have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// Line ranges touched in the commit's version of the file.
    pub hunks: Vec<(u32, u32)>,
    /// Definitions changed.
    pub symbols: Vec<String>,
}

/// A commit record's metadata, as stored and as `cairn why` reads it back.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CommitMeta {
    /// Full hex id.
    pub sha: String,
    /// First line of the message (redacted).
    pub subject: String,
    /// The rest of the message (redacted, at most 4,000 characters).
    pub body: String,
    /// Author name (redacted).
    pub author: String,
    /// Commit time, unix seconds.
    pub time: i64,
    /// A merge commit.
    pub merge: bool,
    /// A bot's commit.
    pub bot: bool,
    /// Files changed (those under the project root, at most the reader's bound).
    pub files: Vec<CommitFile>,
    /// Files changed beyond those listed.
    pub more_files: usize,
}

/// The record path of a commit.
pub(crate) fn record_path(sha: &str, noise: bool) -> String {
    let short = &sha[..sha.len().min(12)];
    if noise {
        format!("{HISTORY_PREFIX}noise/{short}")
    } else {
        format!("{HISTORY_PREFIX}{short}")
    }
}

/// `YYYY-MM-DD` of a unix time.
pub(crate) fn day(time: i64) -> String {
    jiff::Timestamp::from_second(time)
        .map(|t| t.strftime("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

/// How to answer `why`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WhyOptions {
    /// The most commits listed (0: 10; at most [`limits::MAX_HITS`]).
    pub limit: usize,
    /// The answer's token budget (0: [`limits::DEFAULT_READ_TOKENS`]; at
    /// most [`limits::MAX_TOKENS`]), by `cairn_search::estimate_tokens`.
    pub max_tokens: usize,
}

/// One commit of a `why` answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WhyCommit {
    /// Full hex id.
    pub sha: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// Author name (redacted).
    pub author: String,
    /// First line of the message (redacted).
    pub subject: String,
    /// The rest of the message (redacted; cut to fit the budget).
    pub body: String,
    /// `symbol`: it changed the definition asked about; `file`: it changed
    /// the file.
    pub matched: String,
    /// A merge or a bot's commit.
    pub noise: bool,
    /// A merge.
    #[serde(default)]
    pub merge: bool,
    /// The file(s) asked about as the commit changed them: lines touched
    /// (in that commit's version), definitions changed.
    pub files: Vec<CommitFile>,
}

/// A memory anchored to the same code (a source in the file, or the
/// symbol among its entities).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WhyMemory {
    /// Memory id.
    pub id: String,
    /// Memory type.
    pub kind: String,
    /// Its text (cut to fit the budget).
    pub text: String,
}

/// The answer to `why <symbol | path[:line]>`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Why {
    /// What was asked.
    pub target: String,
    /// The file, when the target named one (or the symbol's only file).
    pub path: Option<String>,
    /// The definition: named, or the one holding the line asked about.
    pub symbol: Option<String>,
    /// That definition's lines in the file now.
    pub lines: Option<(u32, u32)>,
    /// Commits, newest first: those that changed the definition, then the
    /// file's other commits.
    pub commits: Vec<WhyCommit>,
    /// Commits that matched in all (before the limit and the budget),
    /// merges included.
    pub matched: usize,
    /// How many of them are merges (diffed against their first parent,
    /// they repeat the branch's own commits; `git log --follow` leaves
    /// them out).
    #[serde(default)]
    pub merges: usize,
    /// Memories anchored to the same code.
    pub memories: Vec<WhyMemory>,
    /// Estimated tokens of the answer's text.
    pub tokens: usize,
    /// The budget it was cut to.
    pub max_tokens: usize,
    /// Whether the budget or the limit left commits out.
    pub truncated: bool,
    /// How many commit records the index holds (0: no history indexed).
    pub commits_indexed: usize,
}

/// `path:12` or `path:12-30` → (path, lines); anything else → (target, None).
fn split_target(target: &str) -> (&str, Option<(u32, u32)>) {
    if let Some((path, tail)) = target.rsplit_once(':') {
        let (a, b) = tail.split_once('-').unwrap_or((tail, tail));
        if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>())
            && a >= 1
            && !path.is_empty()
        {
            return (path, Some((a, b.max(a))));
        }
    }
    (target, None)
}

/// The last segment of a qualified name (`Engine::search`, `jv.parse`).
fn bare_symbol(name: &str) -> &str {
    let name = name.trim().trim_end_matches("()");
    name.rsplit("::")
        .next()
        .and_then(|s| s.rsplit('.').next())
        .unwrap_or(name)
}

/// A commit's tokens as `why` prints it.
fn commit_tokens(c: &WhyCommit) -> usize {
    let files: usize = c
        .files
        .iter()
        .map(|f| {
            estimate_tokens(&f.path)
                + 4 * f.hunks.len()
                + 8
                + f.symbols
                    .iter()
                    .map(|s| estimate_tokens(s) + 1)
                    .sum::<usize>()
        })
        .sum();
    12 + estimate_tokens(&c.author) + estimate_tokens(&c.subject) + estimate_tokens(&c.body) + files
}

/// The most tokens of a subject `why` shows (older records kept subjects
/// of any length).
const MAX_SUBJECT_TOKENS: usize = 80;

/// The commits that fit in `budget` tokens, in their order, with how many
/// tokens they take and whether anything was cut. Each commit's subject and
/// files come first; the bodies share what is left, none taking more than
/// its fair part (a shorter one leaves the rest to the others), so one
/// long message does not crowd out the commits after it. A commit is left
/// out (with those after it) only when not even its subject and files fit.
fn fit_commits(chosen: Vec<WhyCommit>, budget: usize) -> (Vec<WhyCommit>, usize, bool) {
    let mut cut = false;
    let mut fixed = 0;
    let mut kept: Vec<(WhyCommit, String)> = Vec::new();
    for mut c in chosen {
        let body = std::mem::take(&mut c.body);
        if estimate_tokens(&c.subject) > MAX_SUBJECT_TOKENS {
            c.subject = cut_to_tokens(&c.subject, MAX_SUBJECT_TOKENS);
            cut = true;
        }
        let left = budget.saturating_sub(fixed);
        let mut cost = commit_tokens(&c);
        if cost > left {
            // The subject shrinks to what is left, if enough is left to say
            // something.
            let others = cost - estimate_tokens(&c.subject);
            if others + 8 > left {
                cut = true;
                break;
            }
            c.subject = cut_to_tokens(&c.subject, left - others);
            cost = commit_tokens(&c);
            cut = true;
        }
        fixed += cost;
        kept.push((c, body));
    }
    // Water-filling: the shortest bodies first, each at most an equal share
    // of what remains.
    let mut order: Vec<usize> = (0..kept.len()).collect();
    order.sort_by_key(|&i| estimate_tokens(&kept[i].1));
    let mut left = budget.saturating_sub(fixed);
    let mut spent = fixed;
    for (n, &i) in order.iter().enumerate() {
        let share = left / (order.len() - n);
        let (c, body) = &mut kept[i];
        let before = commit_tokens(c);
        c.body = if estimate_tokens(body) <= share {
            std::mem::take(body)
        } else {
            cut = true;
            cut_to_tokens(body, share)
        };
        let added = commit_tokens(c).saturating_sub(before);
        left = left.saturating_sub(added);
        spent += added;
    }
    (kept.into_iter().map(|(c, _)| c).collect(), spent, cut)
}

/// For each record (newest first) and each of its files, the file's name
/// now: its path followed through the renames of the records after it;
/// `None` when a later record deleted it. Read newest first, so each
/// rename maps the old name to what the new one became (300 renames: one
/// pass, no chain walked 300 times).
fn current_names(records: &[CommitMeta]) -> Vec<Vec<Option<String>>> {
    use std::collections::HashMap;
    // A name as it was just before the record being read → its name now.
    let mut now: HashMap<String, Option<String>> = HashMap::new();
    let resolve = |now: &HashMap<String, Option<String>>, p: &str| match now.get(p) {
        Some(n) => n.clone(),
        None => Some(p.to_string()),
    };
    let mut out = Vec::with_capacity(records.len());
    for m in records {
        out.push(m.files.iter().map(|f| resolve(&now, &f.path)).collect());
        let mut updates: Vec<(String, Option<Option<String>>)> = Vec::new();
        for f in &m.files {
            match (f.status.as_str(), &f.from) {
                ("R", Some(old)) => {
                    // Before this commit the new name was not this file.
                    updates.push((f.path.clone(), None));
                    updates.push((old.clone(), Some(resolve(&now, &f.path))));
                }
                // Before it was added, its name was another file's (if any).
                ("A", _) => updates.push((f.path.clone(), None)),
                // Before it was deleted, it was there: and is gone now.
                ("D", _) => updates.push((f.path.clone(), Some(None))),
                _ => {}
            }
        }
        for (name, to) in updates {
            match to {
                Some(to) => {
                    now.insert(name, to);
                }
                None => {
                    now.remove(&name);
                }
            }
        }
    }
    out
}

/// `text` cut to about `tokens` tokens, on a character boundary, with `…`.
fn cut_to_tokens(text: &str, tokens: usize) -> String {
    if estimate_tokens(text) <= tokens {
        return text.to_string();
    }
    // A token is about four characters of prose: shrink until it fits.
    let mut chars = tokens.saturating_mul(4);
    loop {
        let cut: String = text.chars().take(chars).collect();
        // The `…` counts too: the cut text with it fits.
        let out = if cut.is_empty() {
            cut
        } else {
            format!("{}…", cut.trim_end())
        };
        if chars == 0 || estimate_tokens(&out) <= tokens {
            return out;
        }
        chars = chars * 3 / 4;
    }
}

impl Engine {
    /// The commits that introduced and changed `target` — a symbol
    /// (`search`, `Engine::search`) or a project path, optionally with a
    /// line or lines (`src/lib.rs:120`, the definition holding them) — newest
    /// first, with the memories anchored to the same code, within
    /// [`WhyOptions::max_tokens`].
    pub fn why(&self, target: &str, opts: &WhyOptions) -> Result<Why> {
        let limit = limits::count(opts.limit, 10, limits::MAX_HITS);
        let max_tokens = limits::count(
            opts.max_tokens,
            limits::DEFAULT_READ_TOKENS,
            limits::MAX_TOKENS,
        );
        let target = target.trim();
        if target.is_empty() {
            return Err(Error::Query("why: name a symbol or a path[:line]".into()));
        }
        let (path_part, lines) = split_target(target);
        let roots = self.real_roots();
        let project: Vec<std::path::PathBuf> = self.root.canonicalize().into_iter().collect();
        let within = if roots.is_empty() { &project } else { &roots };
        let rel = path_part.trim_start_matches("./").replace('\\', "/");
        let file = confine(&self.root, &rel, within).filter(|p| p.is_file());
        let (mut path, mut symbol, mut def_lines) = (None, None, None);
        match (&file, lines) {
            (Some(abs), Some((a, b))) => {
                path = Some(rel.clone());
                let text = cairn_ingest::read_text(abs).map_err(|e| Error::Io {
                    path: abs.clone(),
                    source: std::io::Error::other(e.to_string()),
                })?;
                if let Some(d) = cairn_ingest::enclosing_definition(&rel, &text, a, b) {
                    symbol = Some(d.name);
                    def_lines = Some((d.start_line, d.end_line));
                }
            }
            (Some(_), None) => path = Some(rel.clone()),
            (None, Some(_)) => {
                return Err(Error::NotFound(format!(
                    "why: no file {path_part:?} in the project"
                )));
            }
            (None, None) => symbol = Some(bare_symbol(target).to_string()),
        }
        let metas = self.with_snapshot(|snap| Ok(snap.metas_under(HISTORY_PREFIX)?))?;
        let commits_indexed = metas.len();
        let mut records: Vec<CommitMeta> = metas
            .iter()
            .filter_map(|(_, json)| serde_json::from_str(json).ok())
            .collect();
        records.sort_by_key(|m| std::cmp::Reverse(m.time));
        // Each file of each commit under its name now, renames followed: a
        // definition written in `a.py` that moved to `b.py` is in `b.py`.
        let now_named = current_names(&records);
        let exists = |rel: &str| confine(&self.root, rel, within).is_some_and(|p| p.is_file());
        let key = symbol.as_deref().map(entity_key);
        let has_symbol = |f: &CommitFile| {
            key.as_ref()
                .is_some_and(|k| f.symbols.iter().any(|s| entity_key(s) == *k))
        };
        // (group: 0 symbol, 1 file; noise; the file is gone now; newest first)
        let mut found: Vec<(u8, bool, bool, i64, WhyCommit)> = Vec::new();
        let mut symbol_paths: Vec<String> = Vec::new();
        for (m, names) in records.into_iter().zip(now_named) {
            // The path asked about, under any name the file had.
            let in_path = |f: &CommitFile, now: &Option<String>| {
                path.as_deref()
                    .is_none_or(|p| f.path == p || now.as_deref() == Some(p))
            };
            let mut gone = true;
            let sym_files: Vec<CommitFile> = m
                .files
                .iter()
                .zip(&names)
                .filter(|(f, now)| in_path(f, now) && has_symbol(f))
                .map(|(f, now)| {
                    if let Some(now) = now {
                        if !symbol_paths.contains(now) {
                            symbol_paths.push(now.clone());
                        }
                        gone &= !exists(now);
                    }
                    f.clone()
                })
                .collect();
            let (group, files) = if !sym_files.is_empty() {
                (0, sym_files)
            } else if let Some(p) = path.as_deref() {
                let of_file: Vec<CommitFile> = m
                    .files
                    .iter()
                    .zip(&names)
                    .filter(|(f, now)| f.path == p || now.as_deref() == Some(p))
                    .map(|(f, _)| f.clone())
                    .collect();
                if of_file.is_empty() {
                    continue;
                }
                gone = false;
                (1, of_file)
            } else {
                continue;
            };
            let noise = m.merge || m.bot;
            found.push((
                group,
                noise,
                gone,
                m.time,
                WhyCommit {
                    date: day(m.time),
                    sha: m.sha,
                    author: m.author,
                    subject: m.subject,
                    body: m.body,
                    matched: if group == 0 { "symbol" } else { "file" }.into(),
                    noise,
                    merge: m.merge,
                    files,
                },
            ));
        }
        // The definition as it is now first: commits to a file since
        // deleted come after those to a file that exists.
        found.sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)).then(b.3.cmp(&a.3)));
        if path.is_none() {
            // The file the definition is in now, when one file holds it.
            symbol_paths.retain(|p| exists(p));
            if symbol_paths.len() == 1 {
                path = symbol_paths.pop();
            }
        }
        let matched = found.len();
        let merges = found.iter().filter(|f| f.4.merge).count();

        // Memories anchored to the same code: a quarter of the budget at most.
        let mut memories = Vec::new();
        let mut tokens = 0;
        let mem_budget = max_tokens / 4;
        let vault = self.vault();
        for (_, m) in self.indexed_memories()? {
            let cites = path.as_deref().is_some_and(|p| {
                m.sources
                    .iter()
                    .any(|s| cairn_core::Memory::source_path(s) == p)
            });
            let names = key.as_ref().is_some_and(|k| {
                m.entities
                    .iter()
                    .chain(m.entity.iter())
                    .any(|e| entity_key(e) == *k)
            });
            if !(cites || names) {
                continue;
            }
            let left = mem_budget.saturating_sub(tokens);
            if left < 16 {
                break;
            }
            // The index keeps a memory's frontmatter, not its text: the
            // text comes from its file (issue 61: `why` printed it empty).
            let full = vault.read(&m.id).map(|f| f.text).unwrap_or_default();
            let text = cut_to_tokens(&full, left - 8);
            tokens += estimate_tokens(&text) + 8;
            memories.push(WhyMemory {
                id: m.id,
                kind: m.kind,
                text,
            });
        }

        let chosen: Vec<WhyCommit> = found.into_iter().take(limit).map(|f| f.4).collect();
        let (commits, spent, cut) = fit_commits(chosen, max_tokens.saturating_sub(tokens));
        tokens += spent;
        let truncated = matched > limit || cut || commits.len() < matched.min(limit);
        Ok(Why {
            target: target.to_string(),
            path,
            symbol,
            lines: def_lines,
            commits,
            matched,
            merges,
            memories,
            tokens,
            max_tokens,
            truncated,
            commits_indexed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split_into_path_and_lines() {
        assert_eq!(split_target("src/a.rs:12"), ("src/a.rs", Some((12, 12))));
        assert_eq!(split_target("src/a.rs:12-30"), ("src/a.rs", Some((12, 30))));
        assert_eq!(split_target("src/a.rs"), ("src/a.rs", None));
        assert_eq!(split_target("Engine::search"), ("Engine::search", None));
        assert_eq!(bare_symbol("Engine::search"), "search");
        assert_eq!(bare_symbol("jv.parse()"), "parse");
    }

    #[test]
    fn a_cut_body_fits_its_tokens() {
        let long = "word ".repeat(2000);
        let cut = cut_to_tokens(&long, 100);
        assert!(estimate_tokens(&cut) <= 100, "{}", estimate_tokens(&cut));
        for n in 0..40 {
            assert!(estimate_tokens(&cut_to_tokens("Why change 7 was made.", n)) <= n);
        }
        assert_eq!(cut_to_tokens("short", 100), "short");
    }
}
