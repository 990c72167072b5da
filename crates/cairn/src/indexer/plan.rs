//! The index pass's plan: scan the roots (and the memory folder), diff what
//! was found against the manifest by stat — unchanged, to read (new, changed
//! or touched: `chunk.rs` reads, hashes and chunks them while the batches are
//! written), to fetch or to drop (shared memories) — and list the indexed
//! files that are gone.

use std::collections::HashSet;
use std::path::PathBuf;

use cairn_core::{Change, DocRecord, IndexWriter};
use cairn_ingest::{ScanOptions, ScannedFile, scan};
use cairn_search::domain_of;

use super::sync::{SyncPlan, leave_tombstone};
use super::{IndexReport, Pass, Skipped};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::paths::relative_path;
use crate::progress::Progress;

/// A file whose stat data differs from the manifest's (or that the manifest
/// lacks): to read, hash and, when its content changed, chunk.
pub(super) struct Work {
    /// The file as the scan found it.
    pub file: ScannedFile,
    /// Its project-relative path.
    pub rel: String,
    /// Its domain (first folder under its root).
    pub domain: String,
    /// What the manifest says of it, if anything.
    pub old: Option<DocRecord>,
    /// A memory file on a shared store.
    pub shared_memory: bool,
}

/// What a pass will write, delete and sync.
pub(super) struct Plan {
    /// Files to read (new, changed, or touched), in path order.
    pub work: Vec<Work>,
    /// Indexed files gone from their root.
    pub deletes: Vec<Change>,
    /// Shared store only: memories to fetch and to drop.
    pub sync: SyncPlan,
}

/// Every file the scan found, by project-relative path: (file, path, domain).
type Found = Vec<(ScannedFile, String, String)>;

impl Engine {
    /// Scans `roots` and the memory folder, diffs against the manifest by
    /// stat and lists deletions.
    pub(super) fn plan(
        &self,
        store: &dyn IndexWriter,
        pass: &Pass,
        roots: &[PathBuf],
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<Plan> {
        let scan_opts = ScanOptions {
            extensions: self.config.index.extensions.clone(),
            ignore_rules: true,
            other_files: self.config.index.other_files,
            skip: self.config.index.skip.clone(),
        };
        // The memory folder is always indexed (hidden or ignored or not),
        // with its own options: markdown only, no ignore rules.
        let memory_dir = self.memory_dir();
        let memory_opts = ScanOptions {
            extensions: vec!["md".into()],
            ignore_rules: false,
            ..ScanOptions::default()
        };
        let mut roots: Vec<(PathBuf, &ScanOptions)> =
            roots.iter().map(|r| (r.clone(), &scan_opts)).collect();
        if memory_dir.is_dir() {
            roots.push((memory_dir, &memory_opts));
        }

        let (found, prefixes) = self.scan_roots(&roots, report, progress)?;
        let mut plan = Plan {
            work: Vec::new(),
            deletes: Vec::new(),
            sync: SyncPlan::default(),
        };
        let seen = self.diff(pass, found, &mut plan, report);
        self.list_deletes(store, pass, &seen, &prefixes, &mut plan)?;
        report.files_deleted = plan.deletes.len();
        plan.sync.deleted = plan
            .deletes
            .iter()
            .filter_map(|c| match c {
                Change::Delete(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        plan.sync.seen = seen;
        Ok(plan)
    }

    /// 1. Scans every root: the files found (sorted by path, each once) and
    ///    each root as a project-relative prefix.
    fn scan_roots(
        &self,
        roots: &[(PathBuf, &ScanOptions)],
        report: &mut IndexReport,
        progress: &dyn Progress,
    ) -> Result<(Found, Vec<String>)> {
        progress.stage("scanning", 0);
        let mut found = Vec::new();
        let mut prefixes = Vec::new();
        for (root, opts) in roots {
            let abs = if root.is_absolute() {
                root.clone()
            } else {
                self.root.join(root)
            };
            let abs = abs
                .canonicalize()
                .map_err(|_| Error::MissingRoot { path: root.clone() })?;
            let root_rel = relative_path(&self.root, &abs);
            prefixes.push(root_rel.clone());
            let (files, issues) = scan(&abs, opts);
            report.skipped.extend(issues.into_iter().map(|i| Skipped {
                path: i.path,
                reason: i.reason,
                kind: i.kind,
            }));
            for f in files {
                let rel = relative_path(&self.root, &f.path);
                // The project's own cairn.toml is cairn's settings, not the
                // project's: not indexed, as `.cairn/` is not.
                if rel == "cairn.toml" {
                    continue;
                }
                let in_root = if abs.is_file() {
                    String::new()
                } else {
                    relative_path(&abs, &f.path)
                };
                found.push((f, rel, domain_of(&in_root).to_string()));
            }
            progress.inc(1);
        }
        progress.finish();
        // Memory files first: a pass killed midway (a rebuild after a
        // damaged index) has indexed them before any document.
        let mem = self.memory_prefix();
        let key = |rel: &str| (!rel.starts_with(&mem), rel.to_string());
        found.sort_by_key(|a| key(&a.1));
        found.dedup_by(|a, b| a.1 == b.1);
        report.files_seen = found.len();
        Ok((found, prefixes))
    }

    /// 2. Diffs the files found against the manifest by stat: what is to
    ///    be read goes to [`Plan::work`]. Returns every path found.
    fn diff(
        &self,
        pass: &Pass,
        found: Found,
        plan: &mut Plan,
        report: &mut IndexReport,
    ) -> HashSet<String> {
        let tag = self.pipeline_tag();
        let max_bytes = self.config.index.max_file_mb.saturating_mul(1024 * 1024);
        let mut seen: HashSet<String> = HashSet::with_capacity(found.len());
        for (file, rel, domain) in found {
            seen.insert(rel.clone());
            let old = pass.manifest.get(&rel);
            if let Some(old) = old
                && old.pipeline == tag
                && old.size == file.size
                && old.mtime_ns == file.mtime_ns
                && file.mtime_ns != 0
            {
                report.files_unchanged += 1;
                continue;
            }
            let shared_memory = pass.shared && rel.starts_with(&pass.mem_prefix);
            // Another machine wrote a newer version: fetch it.
            if shared_memory
                && let Some(old) = old
                && file.mtime_ns < old.mtime_ns
            {
                plan.sync.pulls.push((rel, old.mtime_ns));
                continue;
            }
            if file.size > max_bytes {
                let reason = format!(
                    "{} MiB, larger than [index] max_file_mb ({} MiB): not read",
                    file.size / (1024 * 1024),
                    self.config.index.max_file_mb
                );
                tracing::warn!("skipped {rel}: {reason}");
                report.skipped.push(Skipped {
                    path: file.path.clone(),
                    reason,
                    kind: cairn_ingest::LeftOut::TooLarge,
                });
                continue;
            }
            plan.work.push(Work {
                file,
                rel,
                domain,
                old: old.cloned(),
                shared_memory,
            });
        }
        seen
    }

    /// 3. Indexed files under a scanned root that the scan did not find
    ///    become deletes; on a shared store a memory never here is fetched
    ///    instead, and one forgotten here leaves a tombstone.
    fn list_deletes(
        &self,
        store: &dyn IndexWriter,
        pass: &Pass,
        seen: &HashSet<String>,
        prefixes: &[String],
        plan: &mut Plan,
    ) -> Result<()> {
        for (path, old) in &pass.manifest {
            // Commit records have no file: the history stage keeps them.
            if seen.contains(path)
                || path.starts_with(cairn_core::HISTORY_PREFIX)
                || !prefixes.iter().any(|pre| under(path, pre))
            {
                continue;
            }
            if pass.shared && path.starts_with(&pass.mem_prefix) {
                if !pass.synced.contains(path) {
                    // Never here: another machine's memory, to fetch.
                    plan.sync.pulls.push((path.clone(), old.mtime_ns));
                    continue;
                }
                // Here before and gone now: forgotten on this machine. The
                // tombstone tells the other machines to drop their copies.
                leave_tombstone(store, path, &old.hash)?;
            }
            plan.deletes.push(Change::Delete(path.clone()));
        }
        Ok(())
    }
}

/// Whether `path` lies under the root `prefix` ("" is the project root itself).
pub(super) fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|r| r.starts_with('/'))
}
