//! `cairn index`: the index pass and its report. [`Engine::index_with`] is
//! the driver; each stage lives in its own file, called in this order:
//!
//! ```text
//! plan.rs   scan the roots, diff against the manifest by stat, list deletions
//! write.rs  write what the chunk workers give (chunk.rs: read, hash and chunk
//!           on worker threads), one transaction per batch of files
//! sync.rs   shared store only: fetch and drop memory files, save the list
//! write.rs  stamp the pass (last_indexed, optimize)
//! embed.rs  backfill the vectors of every chunk still without one (unless
//!           deferred to the daemon's background thread)
//! ```
//!
//! Chunks are written before any vector is computed, so BM25 answers for
//! them while the model works (and a concurrent reader sees them batch by
//! batch). The store is locked from the plan to the stamp; a killed indexer
//! loses at most the batch it was writing, and of the vectors at most the
//! last 512 (each group goes to the embedding cache as it is done). Each
//! document records the pipeline version that chunked it, so the next pass
//! resumes; the backfill finds what is still without a vector.

mod chunk;
mod embed;
#[cfg(feature = "history")]
mod history;
mod plan;
mod sync;
mod write;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use cairn_core::{DocRecord, DocWrite, IndexWriter};
use serde::Serialize;

use crate::engine::Engine;
use crate::error::Result;
use crate::progress::Progress;

/// A file left out of the index, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: String,
    /// Which kind of reason it is (what `cairn status` counts by).
    pub kind: cairn_ingest::LeftOut,
}

/// One kind of reason files were left out by the last full pass: how many,
/// and one of them (what `cairn status` and the page list, a line each).
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct LeftOutLine {
    /// The kind of reason.
    pub kind: cairn_ingest::LeftOut,
    /// The reason in words.
    pub label: String,
    /// Files left out so.
    pub count: usize,
    /// One of them, project-relative, with its own reason
    /// (`assets/logo.png: binary (.png)`).
    pub example: String,
}

/// The meta key of the last full pass's [`LeftOutLine`]s (JSON).
pub(crate) const LEFT_OUT_META: &str = "left_out";

/// What `skipped` says per kind of reason: a line each, most files first.
pub fn left_out_lines(skipped: &[Skipped], root: &std::path::Path) -> Vec<LeftOutLine> {
    let mut by: std::collections::BTreeMap<cairn_ingest::LeftOut, LeftOutLine> = Default::default();
    for s in skipped {
        let line = by.entry(s.kind).or_insert_with(|| LeftOutLine {
            kind: s.kind,
            label: s.kind.label().to_string(),
            count: 0,
            example: format!(
                "{}: {}",
                s.path.strip_prefix(root).unwrap_or(&s.path).display(),
                s.reason
            ),
        });
        line.count += 1;
    }
    let mut lines: Vec<LeftOutLine> = by.into_values().collect();
    lines.sort_by(|a, b| b.count.cmp(&a.count).then(a.kind.cmp(&b.kind)));
    lines
}

/// A file indexed, with something to say about how it was read (bytes
/// that were not valid UTF-8, read as U+FFFD).
#[derive(Clone, Debug, Serialize)]
pub struct Noted {
    /// The file.
    pub path: PathBuf,
    /// What to say.
    pub note: String,
}

/// What an index run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexReport {
    /// Markdown files found.
    pub files_seen: usize,
    /// Files unchanged since the last run (by stat, or by hash after a touch).
    pub files_unchanged: usize,
    /// New files indexed.
    pub files_added: usize,
    /// Changed files re-indexed.
    pub files_changed: usize,
    /// Files removed from the index (deleted, moved away or now ignored).
    pub files_deleted: usize,
    /// Chunks written.
    pub chunks_written: usize,
    /// Texts run through the model.
    pub chunks_embedded: usize,
    /// Chunks whose vector came from the cache.
    pub embed_cache_hits: usize,
    /// Vectors taken from the per-user embedding cache (texts another
    /// index of this user embedded: another worktree, clone or project).
    pub user_cache_hits: usize,
    /// Files that could not be indexed (or were left out: generated code).
    pub skipped: Vec<Skipped>,
    /// Files indexed with a note: not read exactly as written.
    pub notes: Vec<Noted>,
    /// Why the git history, or some of it, was not read (a corrupt object:
    /// the commit or the stage left out, the files indexed all the same).
    pub history_warnings: Vec<String>,
    /// Code chunks written per language (`rust`, `python`, …, `text`).
    pub languages: std::collections::BTreeMap<String, usize>,
    /// Memory files fetched from a shared store (written elsewhere or newer there).
    pub memories_pulled: usize,
    /// Local memory files removed because another machine forgot them.
    pub memories_dropped: usize,
    /// Commits of the project's git history written (`[history]`).
    pub commits_indexed: usize,
    /// Commit records removed (`[history] enabled = false`).
    pub commits_removed: usize,
    /// Seconds the history stage took.
    pub history_seconds: f64,
    /// What the memory files this pass wrote replace, one line each
    /// (`m2 replaces m1`, `m3 names 50 … none replaced`): a committed file
    /// or an import that hides a memory says so when it is indexed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<String>,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl IndexReport {
    /// Adds another pass's (or a chunk worker's) report to this one: counts,
    /// skipped files, chunks per language and seconds summed.
    pub fn add(&mut self, other: IndexReport) {
        self.files_seen += other.files_seen;
        self.files_unchanged += other.files_unchanged;
        self.files_added += other.files_added;
        self.files_changed += other.files_changed;
        self.files_deleted += other.files_deleted;
        self.chunks_written += other.chunks_written;
        self.chunks_embedded += other.chunks_embedded;
        self.embed_cache_hits += other.embed_cache_hits;
        self.user_cache_hits += other.user_cache_hits;
        self.skipped.extend(other.skipped);
        self.notes.extend(other.notes);
        self.history_warnings.extend(other.history_warnings);
        for (lang, n) in other.languages {
            *self.languages.entry(lang).or_default() += n;
        }
        self.memories_pulled += other.memories_pulled;
        self.memories_dropped += other.memories_dropped;
        self.commits_indexed += other.commits_indexed;
        self.commits_removed += other.commits_removed;
        self.history_seconds += other.history_seconds;
        self.replacements.extend(other.replacements);
        self.seconds += other.seconds;
    }
}

/// Version of everything that turns a file into stored chunks (chunker rules,
/// embed text), recorded with each document together with the `[chunk]`
/// settings ([`Engine::pipeline_tag`]). A file chunked by another
/// version is re-chunked on the next run even when unchanged; the embedding
/// cache still skips every text already embedded.
const PIPELINE_VERSION: &str = "32";

/// A chunked file on its way to its batch.
struct Pending {
    doc: DocWrite,
    is_new: bool,
}

/// How to run an index pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct IndexOptions {
    /// Leave the vectors to a later [`Engine::embed_pending`] instead of
    /// computing them before the pass returns: `serve --build-index` answers
    /// searches while its background thread computes them.
    pub defer_embedding: bool,
}

/// What a pass reads before it plans: the manifest and how to treat it.
struct Pass {
    /// The index's documents as last written.
    manifest: HashMap<String, DocRecord>,
    /// Whether the store is shared with other machines (memories synced through it).
    shared: bool,
    /// The memory folder as a project-relative prefix ending in `/`.
    mem_prefix: String,
    /// Shared store only: the memory files here after the last pass.
    synced: HashSet<String>,
}

impl Engine {
    /// Indexes `roots` (folders or files, relative to the current directory or
    /// absolute). Files under those roots that are no longer there are removed.
    pub fn index(&self, roots: &[PathBuf], progress: &dyn Progress) -> Result<IndexReport> {
        self.index_with(roots, IndexOptions::default(), progress)
    }

    /// [`Engine::index`] with options. One index pass runs at a time per
    /// engine; searches go on from the last committed state meanwhile.
    pub fn index_with(
        &self,
        roots: &[PathBuf],
        options: IndexOptions,
        progress: &dyn Progress,
    ) -> Result<IndexReport> {
        let started = std::time::Instant::now();
        let mut report = IndexReport::default();
        let mut store = cairn_core::sync::lock(&self.store);
        let pass = self.begin_pass(&**store)?;

        // Plan: scan every root, diff against the manifest by stat, list
        // what left.
        let mut plan = self.plan(&**store, &pass, roots, &mut report, progress)?;

        // Write: what the chunk workers give, one transaction per batch.
        self.write_stream(
            &mut **store,
            std::mem::take(&mut plan.deletes),
            &plan.work,
            &mut plan.sync,
            &mut report,
            progress,
        )?;
        // Sync shared memories; stamp the pass: the files are indexed, and a
        // pass killed from here on leaves them searchable.
        if pass.shared {
            self.sync_memories(&**store, &pass, &plan.sync, &mut report)?;
        }
        self.stamp_pass(&**store, &report)?;
        // What was left out, counted by reason: a full pass (over every
        // `[index] roots` folder) met every file, so its count stands until
        // the next one.
        if self.covers_default_roots(roots) {
            let lines = left_out_lines(&report.skipped, &self.root);
            let json = serde_json::to_string(&lines).unwrap_or_else(|_| "[]".into());
            store.set_meta(LEFT_OUT_META, &json)?;
        }
        drop(store);
        let memories: Vec<String> = plan
            .work
            .iter()
            .filter(|w| w.rel.starts_with(&pass.mem_prefix))
            .map(|w| crate::memory::stem_of(&w.rel))
            .collect();
        if !memories.is_empty() {
            report.replacements = self.replacements_of(&memories)?;
        }

        // Vectors: every chunk still without one of this model (this pass's,
        // and any a model change, an earlier run without a model or a killed
        // pass left), while BM25 already answers for all of them. The files'
        // first: history never delays the code (issue 65: a first index of
        // pytest walked 5,000 commits for 92 s before a file had a vector).
        if !options.defer_embedding {
            let (embedded, from_user_cache) = self.embed_pending_counted(progress)?;
            report.chunks_embedded += embedded;
            report.user_cache_hits += from_user_cache;
        }
        // The git history since the last pass, one transaction per batch,
        // then its records' vectors.
        #[cfg(feature = "history")]
        {
            let mut store = cairn_core::sync::lock(&self.store);
            let before = report.commits_indexed + report.commits_removed;
            self.index_history(&mut **store, &mut report, progress)?;
            let commits = report.commits_indexed + report.commits_removed - before;
            if commits > 0 {
                // Stamped again for the commits alone (optimized when they
                // are many, as the files' stamp does for files).
                let only = IndexReport {
                    commits_indexed: commits,
                    ..IndexReport::default()
                };
                self.stamp_pass(&**store, &only)?;
            }
            drop(store);
            if !options.defer_embedding && report.commits_indexed > 0 {
                let (embedded, from_user_cache) = self.embed_pending_counted(progress)?;
                report.chunks_embedded += embedded;
                report.user_cache_hits += from_user_cache;
            }
        }
        // A large pass leaves a log as large as the index beside it (23.8 MB
        // beside 23.6 MB on ripgrep): fold it in and shrink it (a backfill
        // that embedded anything does the same at its end).
        if report.files_added
            + report.files_changed
            + report.files_deleted
            + report.commits_indexed
            + report.commits_removed
            > 0
        {
            cairn_core::sync::lock(&self.store).checkpoint()?;
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Whether a pass over `roots` walks every `[index] roots` folder.
    fn covers_default_roots(&self, roots: &[PathBuf]) -> bool {
        let canon = |p: &PathBuf| {
            let abs = if p.is_absolute() {
                p.clone()
            } else {
                self.root.join(p)
            };
            abs.canonicalize().ok()
        };
        let given: Vec<PathBuf> = roots.iter().filter_map(canon).collect();
        !given.is_empty()
            && self
                .default_roots()
                .iter()
                .filter_map(canon)
                .all(|d| given.iter().any(|g| d.starts_with(g)))
    }

    /// Reads what the pass needs to know before it scans; on a shared store,
    /// makes sure the memory folder exists to receive.
    fn begin_pass(&self, store: &dyn IndexWriter) -> Result<Pass> {
        let manifest = store.manifest()?;
        let tag = self.pipeline_tag();
        let older = manifest
            .values()
            .filter(|d| d.pipeline != tag && !d.path.starts_with(cairn_core::HISTORY_PREFIX))
            .count();
        if older > 0 {
            tracing::info!(
                "{older} files were chunked by another pipeline version: re-chunking them"
            );
        }
        let shared = store.shared();
        if shared {
            self.create_memory_dir()?;
        }
        let mem_prefix = self.memory_prefix();
        let synced = if shared {
            self.synced_memories()
        } else {
            HashSet::new()
        };
        Ok(Pass {
            manifest,
            shared,
            mem_prefix,
            synced,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::plan::under;

    /// Several chunk workers hand their files over in the plan's order,
    /// every file once, whatever the channel size; a writer error stops
    /// the stream and comes back.
    #[test]
    fn chunk_workers_keep_the_plan_order() {
        use super::chunk::Prepared;
        use super::plan::Work;
        // The test-support crate's engine is another build of this crate:
        // open one here, with no model.
        let p = cairn_test_support::Project::with_config("[embed]\nmodel = \"none\"\n");
        let mut work = Vec::new();
        for i in 0..41 {
            let rel = format!("d{}/f{i:02}.md", i % 3);
            p.write(&rel, &format!("# F{i}\n\nfile {i}\n"));
            let path = p.path(&rel);
            let size = std::fs::metadata(&path).unwrap().len();
            work.push(Work {
                file: cairn_ingest::ScannedFile {
                    path,
                    size,
                    mtime_ns: 1,
                },
                rel,
                domain: String::new(),
                old: None,
                shared_memory: false,
            });
        }
        let config = crate::Config::load_layers(&p.root(), &crate::Layers::default())
            .unwrap()
            .0;
        let e = crate::Open::new(&p.root(), &config).engine().unwrap();
        for (workers, ahead) in [(1, 1), (3, 1), (3, 7), (4, 100)] {
            let mut got = Vec::new();
            e.chunk_stream(&work, workers, ahead, |prepared| {
                if let Prepared::Chunked { pending, .. } = prepared {
                    got.push(pending.doc.path);
                }
                Ok(())
            })
            .unwrap();
            let want: Vec<&str> = work.iter().map(|w| w.rel.as_str()).collect();
            assert_eq!(got, want, "{workers} workers, {ahead} ahead");
        }
        let mut seen = 0;
        let err = e.chunk_stream(&work, 3, 2, |_| {
            seen += 1;
            if seen == 5 {
                return Err(crate::Error::NotFound("stop".into()));
            }
            Ok(())
        });
        assert!(err.is_err());
        assert_eq!(seen, 5);
    }

    #[test]
    fn relative_paths() {
        assert!(under("docs/a.md", "docs") && !under("docs2/a.md", "docs") && under("x.md", ""));
    }
}
