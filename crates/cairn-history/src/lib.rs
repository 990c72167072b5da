//! `cairn-history` reads a project's git history: each commit with its
//! message, author, date, the files it changed and — its diff hunks mapped
//! onto the definitions that held those lines in that very commit — the
//! symbols it changed.
//!
//! [`read_history`] walks from `HEAD` back to the last head a pass saw
//! (or at most [`HistoryOptions::max_commits`] commits), newest first, with
//! libgit2 (no `git` process). Every field that came from outside (subject,
//! body, author) is run through [`cairn_ingest::redact`] here, so no caller
//! sees a secret a commit message held; e-mail addresses are not kept.
//! Merges and bots (dependabot, renovate, `[bot]` authors) are marked
//! ([`Commit::is_noise`]) so the index can weigh them down.
//!
//! # Example
//!
//! ```no_run
//! use cairn_history::{HistoryOptions, read_history};
//!
//! let h = read_history(std::path::Path::new("."), &HistoryOptions::default()).unwrap();
//! for c in h.commits.iter().take(3) {
//!     println!("{} {}", c.short(), c.subject);
//! }
//! ```
#![deny(missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cairn_ingest::{
    ChunkOptions, Language, ParsedCode, chunk_code, enclosing_definition, generated_reason, redact,
};
use git2::{Diff, DiffOptions, Oid, Repository, Sort};

/// What reading the history can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// libgit2 failed on the repository at `path`.
    #[error("git history of {path}: {source}")]
    Git {
        /// The repository (its work tree).
        path: PathBuf,
        /// libgit2's error.
        source: git2::Error,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Bounds of one read.
#[derive(Clone, Debug)]
pub struct HistoryOptions {
    /// The most commits one read returns (newest first).
    pub max_commits: usize,
    /// The last head a read returned: only commits after it are read
    /// (when it is no longer in the history, the walk starts over, bounded).
    pub since: Option<String>,
    /// The most files of one commit whose changes are listed.
    pub max_files: usize,
    /// Files larger than this (bytes) are listed but not parsed for symbols.
    pub max_parse_bytes: usize,
    /// The most changed symbols kept per file.
    pub max_symbols: usize,
    /// Threads that read the commits (0: one per core, up to four).
    pub threads: usize,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            max_commits: 5000,
            since: None,
            max_files: 64,
            max_parse_bytes: 512 * 1024,
            max_symbols: 32,
            threads: 0,
        }
    }
}

/// One file a commit changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// Path after the commit (before it, for a deletion), `/`-separated.
    pub path: String,
    /// `A`dded, `M`odified, `D`eleted, `R`enamed or `C`opied … (git's letters).
    pub status: char,
    /// The path before the commit, for a rename or a copy (`/`-separated):
    /// what lets a reader follow a file through its renames.
    pub from: Option<String>,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// The line ranges (1-based, inclusive) the commit touched in the new
    /// file (a pure removal: the line it left off at), in file order.
    pub hunks: Vec<(u32, u32)>,
    /// The definitions (names, as the code chunker finds them) that held a
    /// touched line in the commit's version of the file (the old version for
    /// a removal), in file order, each once.
    pub symbols: Vec<String>,
}

/// One commit.
#[derive(Clone, Debug)]
pub struct Commit {
    /// Full hex id.
    pub sha: String,
    /// First line of the message (redacted).
    pub subject: String,
    /// The rest of the message, trimmed (redacted).
    pub body: String,
    /// Author name (redacted; no e-mail).
    pub author: String,
    /// Commit time, unix seconds.
    pub time: i64,
    /// Parent count (2 or more: a merge).
    pub parents: usize,
    /// Written by a bot (dependabot, renovate, a `[bot]` account).
    pub bot: bool,
    /// The files changed against the first parent (at most
    /// [`HistoryOptions::max_files`]).
    pub files: Vec<FileChange>,
    /// Files changed beyond those listed.
    pub more_files: usize,
}

impl Commit {
    /// The first twelve hex digits of the id.
    pub fn short(&self) -> &str {
        &self.sha[..self.sha.len().min(12)]
    }

    /// A merge commit.
    pub fn is_merge(&self) -> bool {
        self.parents > 1
    }

    /// A merge or a bot's commit: weighed down wherever commits rank.
    pub fn is_noise(&self) -> bool {
        self.bot || self.is_merge()
    }
}

/// What one read found.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// The head the walk started from (`None`: no commit yet).
    pub head: Option<String>,
    /// New commits, newest first.
    pub commits: Vec<Commit>,
    /// The walk stopped at [`HistoryOptions::max_commits`] before it reached
    /// the last head seen (or the first commit).
    pub truncated: bool,
    /// What could not be read and was left out, one line each, naming the
    /// object and libgit2's error: a commit that could not be read (left
    /// out, and what lies only behind it), a file whose lines could not be
    /// read (listed without them). A damaged repository costs those, not
    /// the read.
    pub warnings: Vec<String>,
}

/// The most characters of a commit's subject kept (the rest is cut, with `…`).
pub const MAX_SUBJECT_CHARS: usize = 300;

/// The most characters of a commit's body kept (the rest is cut, with `…`).
pub const MAX_BODY_CHARS: usize = 8000;

/// The most bytes of a raw commit message read (cut at a space before it,
/// so no word, and no secret, is cut in two): enough for any message a
/// person wrote; a generated one of megabytes costs no more.
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// Whether `dir` lies in a git work tree (libgit2's discovery, upwards).
pub fn is_repository(dir: &Path) -> bool {
    Repository::discover(dir).is_ok()
}

/// The head commit of the repository holding `dir`, if it has one.
pub fn head(dir: &Path) -> Result<Option<String>> {
    let repo = open(dir)?;
    Ok(head_oid(&repo).map(|o| o.to_string()))
}

fn open(dir: &Path) -> Result<Repository> {
    Repository::discover(dir).map_err(|source| Error::Git {
        path: dir.to_path_buf(),
        source,
    })
}

fn head_oid(repo: &Repository) -> Option<Oid> {
    repo.head().ok()?.peel_to_commit().ok().map(|c| c.id())
}

/// Whether an author looks like a bot: a `[bot]` account, dependabot,
/// renovate, or a name ending in `-bot`.
pub fn is_bot(name: &str, email: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let e = email.to_ascii_lowercase();
    n.ends_with("[bot]")
        || n.ends_with("-bot")
        || e.contains("[bot]")
        || ["dependabot", "renovate", "greenkeeper", "github-actions"]
            .iter()
            .any(|b| n.contains(b) || e.contains(b))
}

/// Reads the commits of the repository holding `dir` that are newer than
/// `opts.since`, newest first, at most `opts.max_commits`. When `dir` is a
/// folder inside the work tree, only changes under it are read (a commit
/// that changed nothing there is left out) and paths are relative to it;
/// otherwise they are relative to the work tree's root.
///
/// A damaged repository fails only the parts it damaged: a commit that
/// cannot be read is left out (and, when the walk cannot go on past it,
/// the commits only it leads to); a file whose blob cannot be read is
/// listed without its lines. Each becomes a line of [`History::warnings`].
/// Only a repository that cannot be opened at all is an error.
pub fn read_history(dir: &Path, opts: &HistoryOptions) -> Result<History> {
    read_history_with(dir, opts, &mut |_, _| {})
}

/// [`read_history`], telling `walked(done, total)` before the first commit
/// is read (`done` 0) and after each: reading a commit (its diff, the
/// definitions it changed) is the walk's cost, 92 s for pytest's 5,000, so a
/// caller can show it from the first commit on.
pub fn read_history_with(
    dir: &Path,
    opts: &HistoryOptions,
    walked: &mut dyn FnMut(usize, usize),
) -> Result<History> {
    let repo = open(dir)?;
    let prefix = prefix_of(&repo, dir);
    let mut out = History::default();
    let head = match repo.head() {
        // An unborn branch: no commit yet.
        Err(_) => return Ok(out),
        Ok(r) => match r.peel_to_commit() {
            Ok(c) => c.id(),
            Err(e) => {
                let id = r
                    .target()
                    .map_or_else(|| "HEAD".to_string(), |o| o.to_string());
                out.warnings
                    .push(format!("the head commit {id} cannot be read: {e}"));
                return Ok(out);
            }
        },
    };
    out.head = Some(head.to_string());
    let since = opts.since.as_deref().and_then(|s| Oid::from_str(s).ok());
    if since == Some(head) {
        return Ok(out);
    }
    // Only what came after the last head seen (an unknown one: a rewritten
    // history, read again, bounded).
    let since = since.filter(|s| repo.find_commit(*s).is_ok());
    let (oids, truncated) = match revwalk(&repo, head, since, opts.max_commits) {
        Ok(walked) => walked,
        Err(e) => {
            out.warnings.push(format!(
                "walking the history failed ({e}); walked parent by parent instead"
            ));
            walk_by_parents(&repo, head, since, opts.max_commits, &mut out.warnings)
        }
    };
    out.truncated = truncated;
    let total = oids.len();
    walked(0, total);
    let threads = match opts.threads {
        0 => walk_threads(total),
        n => n.min(total.max(1)),
    };
    if threads <= 1 {
        for (done, oid) in oids.into_iter().enumerate() {
            walked(done + 1, total);
            if let Some(c) = read_one(&repo, oid, opts, &prefix, &mut out.warnings) {
                out.commits.push(c);
            }
        }
        return Ok(out);
    }
    drop(repo);
    read_in_parallel(dir, &oids, opts, &prefix, threads, walked, &mut out);
    Ok(out)
}

/// Commits read per thread before a second thread is worth its start.
const COMMITS_PER_THREAD: usize = 64;

/// How many threads read the commits: one per core up to four (each
/// diffs trees and parses the changed blobs, the stage's whole cost), and
/// one for a short walk.
fn walk_threads(commits: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(4).min(commits / COMMITS_PER_THREAD).max(1)
}

/// One commit by its id, or `None` with the reason in `warnings`.
fn read_one(
    repo: &Repository,
    oid: Oid,
    opts: &HistoryOptions,
    prefix: &str,
    warnings: &mut Vec<String>,
) -> Option<Commit> {
    match repo.find_commit(oid) {
        Ok(commit) => read_commit(repo, &commit, opts, prefix, warnings),
        Err(e) => {
            warnings.push(format!("commit {oid} left out: it cannot be read: {e}"));
            None
        }
    }
}

/// The commits of `oids` read by `threads` threads, each with its own
/// handle on the repository (libgit2's are not shared between threads),
/// taking the next commit as it finishes one; kept in the walk's order,
/// each commit's warnings with it. `walked` counts them as they come.
fn read_in_parallel(
    dir: &Path,
    oids: &[Oid],
    opts: &HistoryOptions,
    prefix: &str,
    threads: usize,
    walked: &mut dyn FnMut(usize, usize),
    out: &mut History,
) {
    type Read = (usize, Option<Commit>, Vec<String>);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<Read>();
    let mut slots: Vec<Option<(Option<Commit>, Vec<String>)>> = vec![None; oids.len()];
    let mut failed_opens = Vec::new();
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for _ in 0..threads {
            let tx = tx.clone();
            let next = &next;
            handles.push(s.spawn(move || -> std::result::Result<(), String> {
                let repo = open(dir).map_err(|e| e.to_string())?;
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&oid) = oids.get(i) else {
                        return Ok(());
                    };
                    let mut warnings = Vec::new();
                    let c = read_one(&repo, oid, opts, prefix, &mut warnings);
                    if tx.send((i, c, warnings)).is_err() {
                        return Ok(());
                    }
                }
            }));
        }
        drop(tx);
        let mut done = 0;
        for (i, c, w) in rx {
            done += 1;
            walked(done, oids.len());
            slots[i] = Some((c, w));
        }
        for h in handles {
            match h.join() {
                Ok(Err(e)) => failed_opens.push(e),
                Ok(Ok(())) => {}
                // A panic in a reader thread (a libgit2 or parser bug)
                // costs the commits it held, named below, not the pass.
                Err(_) => failed_opens.push("a history reader thread panicked".to_string()),
            }
        }
    });
    out.warnings.extend(failed_opens);
    for (slot, oid) in slots.into_iter().zip(oids) {
        match slot {
            Some((c, w)) => {
                out.warnings.extend(w);
                out.commits.extend(c);
            }
            None => out
                .warnings
                .push(format!("commit {oid} left out: it was not read")),
        }
    }
}

/// libgit2's walk from `head` (newest first, parents after children), not
/// into `since` or what it holds, at most `max` commits; whether it
/// stopped at `max`. Fails as a whole on a commit it cannot parse.
fn revwalk(
    repo: &Repository,
    head: Oid,
    since: Option<Oid>,
    max: usize,
) -> std::result::Result<(Vec<Oid>, bool), git2::Error> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
    walk.push(head)?;
    if let Some(since) = since {
        walk.hide(since)?;
    }
    let mut oids = Vec::new();
    for oid in walk {
        if oids.len() >= max {
            return Ok((oids, true));
        }
        oids.push(oid?);
    }
    Ok((oids, false))
}

/// The walk of [`revwalk`] done by hand, for a repository where libgit2's
/// fails: newest first by commit time, each parent read on its own, so a
/// commit that cannot be read costs itself and what lies only behind it
/// (each named in `warnings`), not the walk. Commits `since` holds are not
/// entered.
fn walk_by_parents(
    repo: &Repository,
    head: Oid,
    since: Option<Oid>,
    max: usize,
    warnings: &mut Vec<String>,
) -> (Vec<Oid>, bool) {
    use std::collections::{BinaryHeap, HashSet};
    let mut queue = BinaryHeap::new();
    let mut seen = HashSet::new();
    let mut oids = Vec::new();
    if let Ok(c) = repo.find_commit(head) {
        queue.push((c.time().seconds(), head));
        seen.insert(head);
    }
    while let Some((_, oid)) = queue.pop() {
        let held =
            since.is_some_and(|s| s == oid || repo.graph_descendant_of(s, oid).unwrap_or(false));
        if held {
            continue;
        }
        if oids.len() >= max {
            return (oids, true);
        }
        oids.push(oid);
        let Ok(commit) = repo.find_commit(oid) else {
            continue;
        };
        for parent in commit.parent_ids() {
            if !seen.insert(parent) {
                continue;
            }
            match repo.find_commit(parent) {
                Ok(p) => queue.push((p.time().seconds(), parent)),
                Err(e) => warnings.push(format!(
                    "commit {parent} (a parent of {oid}) cannot be read, so the history behind it is left out: {e}"
                )),
            }
        }
    }
    (oids, false)
}

/// One commit by revision (`HEAD~3`, a hex prefix), read as
/// [`read_history`] reads each; `None` when it changed nothing under `dir`.
pub fn read_commit_at(dir: &Path, rev: &str, opts: &HistoryOptions) -> Result<Option<Commit>> {
    let repo = open(dir)?;
    let git = |source| Error::Git {
        path: dir.to_path_buf(),
        source,
    };
    let commit = repo
        .revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(git)?;
    let mut warnings = Vec::new();
    let c = read_commit(&repo, &commit, opts, &prefix_of(&repo, dir), &mut warnings);
    for w in warnings {
        tracing::warn!("{w}");
    }
    Ok(c)
}

/// `dir` relative to the work tree, `/`-terminated (`""`: its root or outside).
fn prefix_of(repo: &Repository, dir: &Path) -> String {
    let Some(w) = repo.workdir() else {
        return String::new();
    };
    let w = w.canonicalize().unwrap_or_else(|_| w.to_path_buf());
    let d = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    match d.strip_prefix(&w) {
        Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/", slash(rel)),
        _ => String::new(),
    }
}

/// One commit; `None` when `prefix` is set and it changed nothing under it.
fn read_commit(
    repo: &Repository,
    commit: &git2::Commit<'_>,
    opts: &HistoryOptions,
    prefix: &str,
    warnings: &mut Vec<String>,
) -> Option<Commit> {
    let message = String::from_utf8_lossy(cut_message(commit.message_bytes())).into_owned();
    let message = message.trim();
    let (subject, body) = message.split_once('\n').unwrap_or((message, ""));
    let author = commit.author();
    let name = String::from_utf8_lossy(author.name_bytes()).into_owned();
    let email = String::from_utf8_lossy(author.email_bytes()).into_owned();
    let bot = is_bot(&name, &email);
    let parents = commit.parent_count();
    // A tree or blob that cannot be read costs the commit its file list,
    // not its message (or the commits after it).
    let (files, more_files) = match changed_files(repo, commit, opts, prefix, warnings) {
        Ok(Some(listed)) => listed,
        Ok(None) => return None,
        Err(e) => {
            warnings.push(format!(
                "commit {}: its files are not listed: {e}",
                commit.id()
            ));
            (Vec::new(), 0)
        }
    };
    Some(Commit {
        sha: commit.id().to_string(),
        subject: cut_chars(&redact(subject.trim()), MAX_SUBJECT_CHARS),
        body: cut_chars(&redact(body.trim()), MAX_BODY_CHARS),
        author: redact(name.trim()),
        time: commit.time().seconds(),
        parents,
        bot,
        files,
        more_files,
    })
}

/// The files `commit` changed against its first parent (paths relative to
/// `prefix`); `None` when it changed nothing under `prefix`.
fn changed_files(
    repo: &Repository,
    commit: &git2::Commit<'_>,
    opts: &HistoryOptions,
    prefix: &str,
    warnings: &mut Vec<String>,
) -> std::result::Result<Option<(Vec<FileChange>, usize)>, git2::Error> {
    let unreadable = |what: &str, id: Oid, e: git2::Error| {
        git2::Error::from_str(&format!("{what} {id} cannot be read: {e}"))
    };
    let tree = commit
        .tree()
        .map_err(|e| unreadable("tree", commit.tree_id(), e))?;
    let parent_tree = match commit.parent(0) {
        Ok(p) => Some(p.tree().map_err(|e| unreadable("tree", p.tree_id(), e))?),
        Err(e) if commit.parent_count() > 0 => {
            return Err(unreadable("commit", commit.parent_id(0)?, e));
        }
        Err(_) => None,
    };
    let mut diff_opts = DiffOptions::new();
    diff_opts.context_lines(0).ignore_submodules(true);
    if !prefix.is_empty() {
        diff_opts.pathspec(prefix);
    }
    let mut diff =
        repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut diff_opts))?;
    if !prefix.is_empty() && diff.deltas().len() == 0 {
        return Ok(None);
    }
    // Renames: a moved file is one change, not a deletion and an addition.
    // Finding them reads blobs: one that cannot be read costs the renames.
    if diff.deltas().len() <= 400
        && let Err(e) = diff.find_similar(None)
    {
        warnings.push(format!(
            "commit {}: renames not found (a blob cannot be read): {e}",
            commit.id()
        ));
    }
    let mut lost = Vec::new();
    let (mut files, more_files) =
        file_changes(repo, &diff, opts, commit.parent_count() > 1, &mut lost)?;
    warnings.extend(
        lost.into_iter()
            .map(|w| format!("commit {}: {w}", commit.id())),
    );
    for f in &mut files {
        if let Some(rel) = f.path.strip_prefix(prefix) {
            f.path = rel.to_string();
        }
        if let Some(rel) = f.from.as_deref().and_then(|p| p.strip_prefix(prefix)) {
            f.from = Some(rel.to_string());
        }
    }
    Ok(Some((files, more_files)))
}

/// At most [`MAX_MESSAGE_BYTES`] of a raw message, cut after the last
/// whitespace before the bound (a word longer than the whole bound is
/// dropped): a secret is never cut into a piece redaction would not know.
fn cut_message(raw: &[u8]) -> &[u8] {
    if raw.len() <= MAX_MESSAGE_BYTES {
        return raw;
    }
    let head = &raw[..MAX_MESSAGE_BYTES];
    let end = head
        .iter()
        .rposition(|b| b.is_ascii_whitespace())
        .unwrap_or(0);
    &raw[..end]
}

/// `text` cut to `max` characters, with `…` when cut.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
    }
}

/// The most hunks of one file looked up in the syntax tree when no chunk's
/// definition covers them (each lookup parses the file again).
const MAX_FALLBACK_HUNKS: usize = 8;

/// A file's hunks as libgit2 reports them: `(old_start, old_lines,
/// new_start, new_lines)`.
type Hunks = Vec<(u32, u32, u32, u32)>;

fn file_changes(
    repo: &Repository,
    diff: &Diff<'_>,
    opts: &HistoryOptions,
    merge: bool,
    warnings: &mut Vec<String>,
) -> std::result::Result<(Vec<FileChange>, usize), git2::Error> {
    let total = diff.deltas().len();
    let listed = total.min(opts.max_files);
    let mut files = Vec::with_capacity(listed);
    for (i, delta) in diff.deltas().take(listed).enumerate() {
        let status = match delta.status() {
            git2::Delta::Added => 'A',
            git2::Delta::Deleted => 'D',
            git2::Delta::Renamed => 'R',
            git2::Delta::Copied => 'C',
            git2::Delta::Typechange => 'T',
            _ => 'M',
        };
        let new_path = delta.new_file().path().map(slash);
        let old_path = delta.old_file().path().map(slash);
        let Some(path) = new_path.clone().or(old_path.clone()) else {
            continue;
        };
        // A merge's own diff against its first parent is the branch it
        // brought in: its files are listed, its lines not read. Each listed
        // file's patch is computed alone, so a commit of ten thousand files
        // costs its first `max_files`.
        let mut hunks: Hunks = Vec::new();
        let (mut added, mut removed) = (0, 0);
        if !merge && !delta.flags().is_binary() {
            // A blob that cannot be read costs this file's lines, not the
            // commit: the file is still listed.
            match patch_lines(diff, i) {
                Ok(Some((a, r, h))) => (added, removed, hunks) = (a, r, h),
                Ok(None) => {}
                Err(e) => {
                    let bad: Vec<String> = [delta.old_file().id(), delta.new_file().id()]
                        .into_iter()
                        .filter(|id| !id.is_zero() && repo.find_blob(*id).is_err())
                        .map(|id| format!("blob {id}"))
                        .collect();
                    let which = if bad.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} cannot be read)", bad.join(", "))
                    };
                    warnings.push(format!("{path}: lines not read{which}: {e}"));
                }
            }
        }
        let symbols = if hunks.is_empty() {
            Vec::new()
        } else {
            let new = blob_text(repo, delta.new_file().id(), opts.max_parse_bytes);
            let old = if hunks.iter().any(|h| h.3 == 0 && h.1 > 0) {
                blob_text(repo, delta.old_file().id(), opts.max_parse_bytes)
            } else {
                None
            };
            touched_symbols(
                new_path.as_deref().unwrap_or(&path),
                new.as_deref(),
                old_path.as_deref().unwrap_or(&path),
                old.as_deref(),
                &hunks,
                opts.max_symbols,
            )
        };
        let from = old_path.filter(|o| matches!(status, 'R' | 'C') && *o != path);
        files.push(FileChange {
            path,
            status,
            from,
            added,
            removed,
            hunks: hunks
                .iter()
                .map(|&(_, _, start, n)| (start.max(1), (start + n.max(1) - 1).max(1)))
                .collect(),
            symbols,
        });
    }
    Ok((files, total - listed))
}

/// Lines added, lines removed and hunks of file `i` of `diff`; `None` for
/// no patch (nothing to compare).
fn patch_lines(
    diff: &Diff<'_>,
    i: usize,
) -> std::result::Result<Option<(u32, u32, Hunks)>, git2::Error> {
    let Some(patch) = git2::Patch::from_diff(diff, i)? else {
        return Ok(None);
    };
    let (_, adds, dels) = patch.line_stats()?;
    let mut hunks = Vec::with_capacity(patch.num_hunks());
    for h in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(h)?;
        hunks.push((
            hunk.old_start(),
            hunk.old_lines(),
            hunk.new_start(),
            hunk.new_lines(),
        ));
    }
    Ok(Some((
        u32::try_from(adds).unwrap_or(u32::MAX),
        u32::try_from(dels).unwrap_or(u32::MAX),
        hunks,
    )))
}

fn slash(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// The text of a blob, if it is one, not too large, text and not generated.
fn blob_text(repo: &Repository, id: Oid, max: usize) -> Option<String> {
    if id.is_zero() {
        return None;
    }
    let blob = repo.find_blob(id).ok()?;
    if blob.size() > max || blob.is_binary() {
        return None;
    }
    String::from_utf8(blob.content().to_vec()).ok()
}

/// The definitions holding the lines `hunks` touched: in `new` for lines
/// added or changed, in `old` for lines only removed. Each name once, in
/// the order found, at most `max`.
fn touched_symbols(
    new_path: &str,
    new: Option<&str>,
    old_path: &str,
    old: Option<&str>,
    hunks: &Hunks,
    max: usize,
) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |path: &str, text: &str, ranges: &[(u32, u32)]| {
        if ranges.is_empty()
            || Language::of_path(path).is_none()
            || generated_reason(path, text).is_some()
        {
            return;
        }
        // Small definitions are not merged into their neighbours here: each
        // keeps its own lines. A definition too big for one chunk goes on in
        // the chunks after it that carry its breadcrumb.
        let opts = ChunkOptions {
            min_chars: 0,
            ..ChunkOptions::default()
        };
        // Parsed once for both questions; the links the chunker reads for
        // the graph are not needed here (sympy's walk: half its time went
        // to parsing each file again per hunk and to those links).
        let parsed = ParsedCode::parse(path, text);
        let doc = match &parsed {
            Some(p) => p.chunks_without_links(&opts),
            None => chunk_code(path, text, &opts),
        };
        let mut covered = vec![false; ranges.len()];
        for (name, _, ci) in &doc.symbols {
            let Some(c) = doc.chunks.get(*ci) else {
                continue;
            };
            let end = doc.chunks[*ci..]
                .iter()
                .take_while(|n| n.heading_path == c.heading_path)
                .map(|n| n.end_line)
                .max()
                .unwrap_or(c.end_line);
            for (i, &(s, e)) in ranges.iter().enumerate() {
                if s <= end && e >= c.start_line {
                    covered[i] = true;
                    if seen.insert(name.clone()) {
                        names.push(name.clone());
                    }
                }
            }
        }
        // A hunk inside a definition whose body the chunker split (a long
        // function): the smallest definition holding it, from the tree.
        for (i, &(s, e)) in ranges.iter().enumerate().take(MAX_FALLBACK_HUNKS) {
            if covered[i] {
                continue;
            }
            let found = match &parsed {
                Some(p) => p.enclosing_definition(s, e),
                None => enclosing_definition(path, text, s, e),
            };
            if let Some(d) = found
                && seen.insert(d.name.clone())
            {
                names.push(d.name);
            }
        }
    };
    if let Some(text) = new {
        let ranges: Vec<(u32, u32)> = hunks
            .iter()
            .filter(|h| h.3 > 0)
            .map(|&(_, _, s, n)| (s, s + n - 1))
            .collect();
        add(new_path, text, &ranges);
    }
    if let Some(text) = old {
        let ranges: Vec<(u32, u32)> = hunks
            .iter()
            .filter(|h| h.3 == 0 && h.1 > 0)
            .map(|&(s, n, _, _)| (s, s + n - 1))
            .collect();
        add(old_path, text, &ranges);
    }
    names.truncate(max);
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.org")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.org")
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn commits_map_hunks_onto_definitions_and_redact_messages() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(
            d.join("lib.rs"),
            "/// Adds.\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n/// Subtracts.\npub fn sub(a: u32, b: u32) -> u32 {\n    a - b\n}\n",
        )
        .unwrap();
        git(d, &["add", "."]);
        git(d, &["commit", "-q", "-m", "Add and sub"]);
        let first = read_history(d, &HistoryOptions::default()).unwrap();
        assert_eq!(first.commits.len(), 1);
        let c = &first.commits[0];
        assert_eq!(c.files[0].status, 'A');
        assert_eq!(c.files[0].symbols, ["add", "sub"]);

        std::fs::write(
            d.join("lib.rs"),
            "/// Adds.\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n/// Subtracts.\npub fn sub(a: u32, b: u32) -> u32 {\n    a.saturating_sub(b)\n}\n",
        )
        .unwrap();
        git(d, &["add", "."]);
        let token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
        git(
            d,
            &[
                "commit",
                "-q",
                "-m",
                &format!("Saturate sub\n\nThe CI token {token} leaked here."),
            ],
        );
        let since = HistoryOptions {
            since: first.head.clone(),
            ..HistoryOptions::default()
        };
        let second = read_history(d, &since).unwrap();
        assert_eq!(second.commits.len(), 1, "only the new commit");
        let c = &second.commits[0];
        assert_eq!(c.subject, "Saturate sub");
        assert!(!c.body.contains(token), "{}", c.body);
        assert!(c.body.contains(cairn_ingest::REDACTED), "{}", c.body);
        assert_eq!(c.files[0].symbols, ["sub"]);
        assert_eq!(c.files[0].hunks, [(8, 8)]);
        assert_eq!((c.files[0].added, c.files[0].removed), (1, 1));
        assert!(!c.is_noise());

        // Nothing new: nothing read.
        let again = HistoryOptions {
            since: second.head.clone(),
            ..HistoryOptions::default()
        };
        assert!(read_history(d, &again).unwrap().commits.is_empty());
    }

    /// A repository of three commits, each changing `a.py`.
    fn three_commits(d: &Path) {
        git(d, &["init", "-q", "-b", "main"]);
        for i in 1..=3 {
            std::fs::write(d.join("a.py"), format!("def f():\n    return {i}\n")).unwrap();
            std::fs::write(d.join(format!("d{i}.md")), format!("# Doc {i}\n")).unwrap();
            git(d, &["add", "."]);
            git(d, &["commit", "-q", "-m", &format!("change {i}")]);
        }
    }

    /// The id of a revision (`HEAD~1`, `HEAD~1:a.py`).
    fn rev(d: &Path, spec: &str) -> String {
        let out = Command::new("git")
            .args(["rev-parse", spec])
            .current_dir(d)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Overwrites a loose object with bytes that are no zlib stream.
    fn corrupt(d: &Path, id: &str) {
        let path = d.join(".git/objects").join(&id[..2]).join(&id[2..]);
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms).unwrap();
        std::fs::write(&path, b"this is no git object at all, only garbage bytes").unwrap();
    }

    #[test]
    fn a_corrupt_blob_costs_its_lines_not_the_history() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        three_commits(d);
        let blob = rev(d, "HEAD~1:a.py");
        corrupt(d, &blob);
        let h = read_history(d, &HistoryOptions::default()).unwrap();
        assert_eq!(h.commits.len(), 3, "every commit read: {:?}", h.warnings);
        assert!(
            h.warnings.iter().any(|w| w.contains(&blob)),
            "the blob is named: {:?}",
            h.warnings
        );
        // The commit that wrote it still lists the file.
        let mid = &h.commits[1];
        assert!(mid.files.iter().any(|f| f.path == "a.py"), "{mid:?}");
    }

    #[test]
    fn commits_read_on_several_threads_are_those_read_on_one_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        for i in 0..150 {
            let body = format!("pub fn step_{}() -> u32 {{\n    {i}\n}}\n", i % 7);
            std::fs::write(d.join(format!("m{}.rs", i % 5)), body).unwrap();
            git(d, &["add", "-A"]);
            git(d, &["commit", "-q", "-m", &format!("Step {i}")]);
        }
        let repo = open(d).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap().id();
        let (oids, _) = revwalk(&repo, head, None, 1000).unwrap();
        assert_eq!(oids.len(), 150);
        let prefix = prefix_of(&repo, d);
        let opts = HistoryOptions::default();
        let mut one = Vec::new();
        for &oid in &oids {
            one.extend(read_one(&repo, oid, &opts, &prefix, &mut Vec::new()));
        }
        let mut counted = Vec::new();
        let mut out = History::default();
        read_in_parallel(
            d,
            &oids,
            &opts,
            &prefix,
            3,
            &mut |done, total| counted.push((done, total)),
            &mut out,
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        let shas = |c: &[Commit]| c.iter().map(|c| c.sha.clone()).collect::<Vec<_>>();
        assert_eq!(shas(&out.commits), shas(&one));
        let symbols = |c: &[Commit]| {
            c.iter()
                .map(|c| {
                    c.files
                        .iter()
                        .map(|f| f.symbols.clone())
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(symbols(&out.commits), symbols(&one));
        assert!(
            out.commits[0].files[0]
                .symbols
                .iter()
                .any(|s| s.starts_with("step_"))
        );
        assert_eq!(counted.len(), 150);
        assert_eq!(counted.last(), Some(&(150, 150)));
    }

    #[test]
    fn a_corrupt_commit_or_tree_is_left_out_and_named() {
        for what in ["commit", "tree"] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            three_commits(d);
            let id = match what {
                "commit" => rev(d, "HEAD~1"),
                _ => rev(d, "HEAD~1^{tree}"),
            };
            let head = rev(d, "HEAD");
            corrupt(d, &id);
            let h = read_history(d, &HistoryOptions::default())
                .unwrap_or_else(|e| panic!("a corrupt {what} fails the read: {e}"));
            assert_eq!(h.head.as_deref(), Some(head.as_str()));
            assert!(
                h.commits.iter().any(|c| c.sha == head),
                "{what}: the head commit is read: {:?}",
                h.warnings
            );
            assert!(
                h.warnings.iter().any(|w| w.contains(&id)),
                "{what}: the object is named: {:?}",
                h.warnings
            );
        }
    }

    #[test]
    fn one_huge_message_is_cut_and_no_secret_is_cut_in_two() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("a.py"), "x = 1\n").unwrap();
        git(d, &["add", "."]);
        let token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
        // One line of 200 KB, a secret where the raw cut falls.
        let mut msg = "word ".repeat(MAX_MESSAGE_BYTES / 5 - 4);
        msg.push_str(token);
        msg.push(' ');
        msg.push_str(&"more ".repeat(40_000));
        let file = dir.path().join("msg.txt");
        std::fs::write(&file, &msg).unwrap();
        git(d, &["commit", "-q", "-F", file.to_str().unwrap()]);
        let h = read_history(d, &HistoryOptions::default()).unwrap();
        let c = &h.commits[0];
        assert!(
            c.subject.chars().count() <= MAX_SUBJECT_CHARS + 1,
            "{}",
            c.subject.len()
        );
        assert!(c.body.chars().count() <= MAX_BODY_CHARS + 1);
        let cut = cut_message(msg.as_bytes());
        assert!(cut.len() <= MAX_MESSAGE_BYTES);
        let kept = String::from_utf8_lossy(cut);
        assert!(!kept.contains("ghp_12345"), "no piece of the token is kept");
    }

    #[test]
    fn renames_name_the_path_they_came_from() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::write(d.join("f0.py"), "def renamed_fn(x):\n    return x + 1\n").unwrap();
        git(d, &["add", "."]);
        git(d, &["commit", "-q", "-m", "add"]);
        git(d, &["mv", "f0.py", "f1.py"]);
        git(d, &["commit", "-q", "-m", "rename"]);
        let h = read_history(d, &HistoryOptions::default()).unwrap();
        let f = &h.commits[0].files[0];
        assert_eq!((f.status, f.path.as_str()), ('R', "f1.py"));
        assert_eq!(f.from.as_deref(), Some("f0.py"));
        assert_eq!(h.commits[1].files[0].from, None);
    }

    #[test]
    fn bots_are_recognised() {
        assert!(is_bot(
            "dependabot[bot]",
            "49699333+dependabot[bot]@users.noreply.github.com"
        ));
        assert!(is_bot("Renovate Bot", "bot@renovateapp.com"));
        assert!(!is_bot("Ada Lovelace", "ada@example.org"));
    }
}
