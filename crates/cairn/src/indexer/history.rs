//! The index pass's history stage: the project's git commits since the
//! last head a pass saw (`history_head` in the index's metadata; at most
//! `[history] max_commits`), each written as a record under
//! [`HISTORY_PREFIX`] — one chunk (subject as its heading; body, author,
//! date, the files and the definitions it changed as its text), the
//! commit's structured fields as the record's metadata JSON (what `cairn
//! why` reads), and `changed` edges from the commit to each file and
//! definition it changed. One transaction per [`COMMITS_PER_BATCH`]
//! commits; the head is recorded after the last, so a killed pass reads the
//! same commits again and rewrites the same records.

use super::IndexReport;
use crate::engine::Engine;
use crate::error::Result;
use crate::history::{CommitFile, CommitMeta, HEAD_KEY, day, record_path};
use crate::progress::Progress;
use cairn_core::{
    Change, Chunk, DocWrite, HISTORY_PREFIX, IndexWriter, Link, Relation, WriteBatch,
};

/// The metadata key of the format the commit records were written in.
const FORMAT_KEY: &str = "history_format";

/// The format of the commit records: "2" adds the path a renamed file
/// came from ([`CommitFile::from`]), which `why` follows.
const HISTORY_FORMAT: &str = "2";

/// Commits per write transaction.
const COMMITS_PER_BATCH: usize = 256;

/// The most characters of a commit's body kept in its record.
const MAX_BODY_CHARS: usize = 4000;

/// The most files a record's text names (all listed files stay in its
/// metadata).
const MAX_TEXT_FILES: usize = 24;

/// The most hunks of one file kept in a record's metadata.
const MAX_HUNKS: usize = 64;

/// Weight of a `changed` edge (commit → file or symbol): as loose as a
/// chunk's tie to its own file (`Relation::In`), so that a commit that
/// touched many definitions is no strong bridge between them for the
/// graph retriever.
const CHANGED_WEIGHT: f32 = 0.3;

/// Factor on the weight of a merge's or a bot's `changed` edges.
const NOISE_EDGE_FACTOR: f32 = 0.2;

impl Engine {
    /// Reads the commits since the last pass and writes their records (or,
    /// with `[history] enabled = false`, removes any written before).
    pub(super) fn index_history(
        &self,
        store: &mut dyn IndexWriter,
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<()> {
        let started = std::time::Instant::now();
        let last = store.meta(HEAD_KEY)?.filter(|h| !h.is_empty());
        if !self.config.history.enabled || self.config.history.max_commits == 0 {
            if last.is_some() {
                let gone: Vec<Change> = store
                    .manifest()?
                    .into_keys()
                    .filter(|p| p.starts_with(HISTORY_PREFIX))
                    .map(Change::Delete)
                    .collect();
                report.commits_removed = gone.len();
                store.write(&WriteBatch {
                    changes: gone,
                    ..Default::default()
                })?;
                store.set_meta(HEAD_KEY, "")?;
            }
            return Ok(());
        }
        if !cairn_history::is_repository(&self.root) {
            return Ok(());
        }
        // Records of an older format (without the paths renames came
        // from) are read again, bounded by `max_commits`, and rewritten.
        let same_format = store.meta(FORMAT_KEY)?.as_deref() == Some(HISTORY_FORMAT);
        let opts = cairn_history::HistoryOptions {
            max_commits: self.config.history.max_commits,
            since: last.filter(|_| same_format),
            ..Default::default()
        };
        // A repository libgit2 cannot read costs the history, not the pass:
        // the files are indexed, and the report says why there is no history.
        // The walk shown from its first commit: reading the commits is the
        // stage's cost, writing their records is quick.
        let mut shown = false;
        let mut walked = |done: usize, total: usize| {
            if !shown {
                progress.stage("history", total as u64);
                shown = true;
            } else if done > 0 {
                progress.inc(1);
            }
        };
        let read = cairn_history::read_history_with(&self.root, &opts, &mut walked);
        if shown {
            progress.finish();
        }
        let history = match read {
            Ok(h) => h,
            Err(e) => {
                let why = format!("not read, the files are indexed without it: {e}");
                tracing::warn!("history {why}");
                report.history_warnings.push(why);
                return Ok(());
            }
        };
        for w in &history.warnings {
            tracing::warn!("history: {w}");
        }
        report
            .history_warnings
            .extend(history.warnings.iter().cloned());
        let Some(head) = history.head.clone() else {
            return Ok(());
        };
        let tag = self.pipeline_tag();
        let mut changes = Vec::new();
        for commit in &history.commits {
            changes.push(Change::Upsert(commit_record(commit, &tag)));
            report.commits_indexed += 1;
            if changes.len() >= COMMITS_PER_BATCH {
                store.write(&WriteBatch {
                    changes: std::mem::take(&mut changes),
                    ..Default::default()
                })?;
            }
        }
        if !changes.is_empty() {
            store.write(&WriteBatch {
                changes,
                ..Default::default()
            })?;
        }
        store.set_meta(HEAD_KEY, &head)?;
        store.set_meta(FORMAT_KEY, HISTORY_FORMAT)?;
        report.history_seconds = started.elapsed().as_secs_f64();
        if history.truncated {
            tracing::info!(
                "history: read the newest {} commits ([history] max_commits)",
                opts.max_commits
            );
        }
        Ok(())
    }
}

/// A commit as a record.
fn commit_record(c: &cairn_history::Commit, tag: &str) -> DocWrite {
    let files: Vec<CommitFile> = c
        .files
        .iter()
        .map(|f| CommitFile {
            path: f.path.clone(),
            status: f.status.to_string(),
            from: f.from.clone(),
            added: f.added,
            removed: f.removed,
            hunks: f.hunks.iter().take(MAX_HUNKS).copied().collect(),
            symbols: f.symbols.clone(),
        })
        .collect();
    let noise = c.is_noise();
    let path = record_path(&c.sha, noise);
    let subject: String = c.subject.chars().take(200).collect();
    let mut text = c.subject.clone();
    let body: String = c.body.chars().take(MAX_BODY_CHARS).collect();
    if !body.is_empty() {
        text.push_str("\n\n");
        text.push_str(&body);
    }
    let what = if c.is_merge() {
        "merge"
    } else if c.bot {
        "bot commit"
    } else {
        "commit"
    };
    text.push_str(&format!(
        "\n\n{what} {} by {} on {}",
        c.short(),
        c.author,
        day(c.time)
    ));
    for f in files.iter().take(MAX_TEXT_FILES) {
        text.push_str(&format!(
            "\n{} {} (+{} -{})",
            f.status, f.path, f.added, f.removed
        ));
        if !f.symbols.is_empty() {
            text.push_str(": ");
            text.push_str(&f.symbols.join(", "));
        }
    }
    let more = files.len().saturating_sub(MAX_TEXT_FILES) + c.more_files;
    if more > 0 {
        text.push_str(&format!("\n… and {more} more files"));
    }
    let lines = u32::try_from(text.lines().count().max(1)).unwrap_or(u32::MAX);
    let chunk = Chunk::new(&path, vec![subject], 1, 1, lines, text);
    let changed = Relation::Explicit("changed".into());
    let factor = if noise { NOISE_EDGE_FACTOR } else { 1.0 };
    let mut links = Vec::new();
    for f in &files {
        let mut l = Link::from_chunk(0, f.path.clone(), changed.clone());
        l.weight = CHANGED_WEIGHT * factor;
        links.push(l);
        for s in &f.symbols {
            let mut l = Link::from_chunk(0, s.clone(), changed.clone());
            l.weight = CHANGED_WEIGHT * factor;
            links.push(l);
        }
    }
    let meta = CommitMeta {
        sha: c.sha.clone(),
        subject: c.subject.clone(),
        body,
        author: c.author.clone(),
        time: c.time,
        merge: c.is_merge(),
        bot: c.bot,
        files,
        more_files: c.more_files,
    };
    let size = chunk.text.len() as u64;
    DocWrite {
        path,
        hash: c.sha.clone(),
        mtime_ns: c.time.saturating_mul(1_000_000_000),
        size,
        pipeline: tag.to_string(),
        title: Some(c.subject.clone()),
        tags: Vec::new(),
        domain: "history".into(),
        meta: serde_json::to_string(&meta).unwrap_or_else(|_| "{}".into()),
        chunks: vec![chunk],
        links,
        source: None,
    }
}
