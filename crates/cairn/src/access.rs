//! What the files say now: freshness of indexed files, the section around a
//! chunk (`expand`), and reading an indexed file (`get`) without letting a
//! path leave the project.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use cairn_core::DocRecord;
use cairn_ingest::{headings, read_text, unix_nanos};
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};

/// Whether a file still has the content that was indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Freshness {
    /// The file has the indexed content.
    Fresh,
    /// The file changed since it was indexed: line numbers and text may be off.
    Changed,
    /// The file is gone.
    Deleted,
}

/// The section around a chunk, read from the file.
#[derive(Clone, Debug, Serialize)]
pub struct Section {
    /// The chunk asked for.
    pub chunk_id: String,
    /// File, relative to the project root.
    pub path: String,
    /// The chunk's breadcrumb.
    pub breadcrumb: String,
    /// First line of the returned text, 1-based.
    pub start_line: u32,
    /// Last line of the returned text, inclusive.
    pub end_line: u32,
    /// Lines `start_line..=end_line` of the file.
    pub text: String,
    /// Whether the file still has the indexed content.
    pub freshness: Freshness,
}

/// Some lines of an indexed file.
#[derive(Clone, Debug, Serialize)]
pub struct FileText {
    /// File, relative to the project root.
    pub path: String,
    /// First line returned, 1-based.
    pub start_line: u32,
    /// Last line returned, inclusive.
    pub end_line: u32,
    /// Lines in the whole file.
    pub total_lines: u32,
    /// The lines.
    pub text: String,
    /// Whether the file still has the indexed content.
    pub freshness: Freshness,
}

/// The one path check every file read goes through: `rel` (relative to
/// `root`) as the real path it names, links resolved, when that stays under
/// one of `within` (canonical folders); `None` when it is absolute, climbs
/// with `..`, leaves them through a link (a file or a folder swapped for a
/// link to `/etc`), or is not there.
pub(crate) fn confine(root: &Path, rel: &str, within: &[PathBuf]) -> Option<PathBuf> {
    if !is_plain_relative(rel) {
        return None;
    }
    let real = root.join(rel).canonicalize().ok()?;
    within.iter().any(|w| real.starts_with(w)).then_some(real)
}

/// `rel` names a place below its base by its words alone: not absolute, no
/// root or drive, no `..`.
pub(crate) fn is_plain_relative(rel: &str) -> bool {
    let p = Path::new(rel);
    !p.is_absolute()
        && !p.has_root()
        && !p.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::Prefix(_) | Component::RootDir
            )
        })
}

/// Compares the file on disk with its manifest record: a stat first, the
/// content hash only when the stat differs (a `touch` is still fresh). A
/// path that now leads out of the indexed roots is gone as far as the index
/// is concerned: nothing out there is read.
fn check(root: &Path, roots: &[PathBuf], rec: &DocRecord) -> Freshness {
    let Some(abs) = confine(root, &rec.path, roots) else {
        return Freshness::Deleted;
    };
    let meta = match std::fs::metadata(&abs) {
        Ok(m) if m.is_file() => m,
        _ => return Freshness::Deleted,
    };
    if meta.len() == rec.size && meta.modified().map_or(0, unix_nanos) == rec.mtime_ns {
        return Freshness::Fresh;
    }
    match read_text(&abs) {
        Ok(text) if cairn_core::content_hash(text.as_bytes()) == rec.hash => Freshness::Fresh,
        Ok(_) => Freshness::Changed,
        Err(_) if abs.is_file() => Freshness::Changed,
        Err(_) => Freshness::Deleted,
    }
}

/// `text`'s lines `start..=end` (1-based, clamped), joined with `\n`.
fn line_range(text: &str, start: u32, end: u32) -> String {
    text.lines()
        .skip(start.saturating_sub(1) as usize)
        .take(end.saturating_sub(start) as usize + 1)
        .collect::<Vec<_>>()
        .join("\n")
}

impl Engine {
    /// The indexed roots as real paths: what [`confine`] keeps reads within.
    pub(crate) fn real_roots(&self) -> Vec<PathBuf> {
        self.default_roots()
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .collect()
    }

    /// Freshness of each of these indexed paths; a path the index no longer
    /// knows is reported as changed.
    pub fn freshness(&self, paths: &[&str]) -> Result<HashMap<String, Freshness>> {
        let records = self.with_snapshot(|snap| {
            paths
                .iter()
                .map(|p| Ok(((*p).to_string(), snap.document(p)?)))
                .collect::<Result<Vec<_>>>()
        })?;
        let roots = self.real_roots();
        Ok(records
            .into_iter()
            .map(|(path, rec)| {
                let f = rec.map_or(Freshness::Changed, |r| check(&self.root, &roots, &r));
                (path, f)
            })
            .collect())
    }

    /// The indexed text of each chunk id (`None` for an id no longer indexed).
    pub fn chunk_texts(&self, ids: &[&str]) -> Result<Vec<Option<String>>> {
        self.with_snapshot(|snap| {
            ids.iter()
                .map(|id| Ok(snap.chunk_by_id(id)?.map(|r| r.chunk.text)))
                .collect()
        })
    }

    /// Indexed files whose content changed or which are gone since indexing.
    pub fn stale_files(&self) -> Result<Vec<(String, Freshness)>> {
        let docs = self.with_snapshot(|snap| Ok(snap.documents()?))?;
        let roots = self.real_roots();
        Ok(docs
            .iter()
            .filter_map(|d| match check(&self.root, &roots, d) {
                Freshness::Fresh => None,
                f => Some((d.path.clone(), f)),
            })
            .collect())
    }

    /// The whole section around a chunk: from its heading to the next heading
    /// of the same or a higher level (text before the first heading: up to
    /// that heading), widened by `context_lines` on each side. Read from the
    /// file as it is now; when the file is gone, the chunk's indexed text.
    pub fn expand(&self, chunk_id: &str, context_lines: u32) -> Result<Section> {
        let (row, rec) = self.with_snapshot(|snap| {
            let row = snap
                .chunk_by_id(chunk_id.trim())?
                .ok_or_else(|| Error::NotFound(format!("no chunk with id {chunk_id:?}")))?;
            let rec = snap.document(&row.chunk.path)?;
            Ok((row, rec))
        })?;
        let chunk = row.chunk;
        let roots = self.real_roots();
        let freshness = rec.map_or(Freshness::Changed, |r| check(&self.root, &roots, &r));
        let read = confine(&self.root, &chunk.path, &roots).map(|abs| read_text(&abs));
        let text = match read {
            Some(Ok(t)) => t,
            _ => {
                return Ok(Section {
                    chunk_id: chunk.id.clone(),
                    breadcrumb: chunk.breadcrumb(),
                    path: chunk.path,
                    start_line: chunk.start_line,
                    end_line: chunk.end_line,
                    text: chunk.text,
                    freshness: Freshness::Deleted,
                });
            }
        };
        let total = u32::try_from(text.lines().count())
            .unwrap_or(u32::MAX)
            .max(1);
        let heads = headings(&text);
        // The chunk's own heading: the last one at or above its end with its
        // innermost heading's level and text (a chunk may begin with small
        // sections merged in front of it, or continue a split section).
        let own = heads
            .iter()
            .rev()
            .find(|h| {
                h.line <= chunk.end_line
                    && h.level == chunk.level
                    && chunk.heading_path.last() == Some(&h.text)
            })
            .or_else(|| heads.iter().rev().find(|h| h.line <= chunk.start_line));
        let (start, end) = match own {
            Some(own) => {
                let end = heads
                    .iter()
                    .find(|h| h.line > own.line && h.level <= own.level)
                    .map_or(total, |h| h.line - 1);
                (own.line, end)
            }
            None => {
                let end = heads.first().map_or(total, |h| h.line.saturating_sub(1));
                (1, end.max(chunk.end_line.min(total)))
            }
        };
        // Blank lines before the next heading are not part of the section.
        let lines: Vec<&str> = text.lines().collect();
        let mut end = end;
        while end > start
            && lines
                .get(end as usize - 1)
                .is_some_and(|l| l.trim().is_empty())
        {
            end -= 1;
        }
        let start = start.saturating_sub(context_lines).max(1);
        let end = end.saturating_add(context_lines).min(total).max(start);
        Ok(Section {
            chunk_id: chunk.id.clone(),
            breadcrumb: chunk.breadcrumb(),
            path: chunk.path,
            start_line: start,
            end_line: end,
            text: line_range(&text, start, end),
            freshness,
        })
    }

    /// Lines `start..=end` (1-based; whole file when absent) of an indexed
    /// file. `path` is relative to the project root; absolute paths, `..`,
    /// symbolic links that lead out of the indexed roots and files the index
    /// does not hold are refused.
    pub fn read_file(&self, path: &str, start: Option<u32>, end: Option<u32>) -> Result<FileText> {
        let rel = self.resolve(path)?;
        let rec = self
            .with_snapshot(|snap| Ok(snap.document(&rel)?))?
            .ok_or_else(|| Error::PathRefused {
                path: path.to_string(),
                reason: "not in the index (get reads indexed files only; see `search`)".into(),
            })?;
        let roots = self.real_roots();
        let abs = confine(&self.root, &rel, &roots).ok_or_else(|| Error::PathRefused {
            path: path.to_string(),
            reason: "it resolves outside the indexed roots (a symbolic link leading out?)".into(),
        })?;
        let text = read_text(&abs).map_err(|e| Error::NotFound(e.to_string()))?;
        let total = u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
        let first = start.unwrap_or(1).max(1);
        let last = end.unwrap_or(total).min(total);
        if total > 0 && first > total {
            return Err(Error::Query(format!(
                "{rel} has {total} lines; start_line {first} is past the end"
            )));
        }
        if last < first && total > 0 {
            return Err(Error::Query(format!(
                "end_line {last} is before start_line {first}"
            )));
        }
        Ok(FileText {
            freshness: check(&self.root, &roots, &rec),
            text: line_range(&text, first, last),
            path: rel,
            start_line: first,
            end_line: last,
            total_lines: total,
        })
    }

    /// The project-relative, `/`-separated form of a path an agent gave, once
    /// it is known to stay inside an indexed root.
    fn resolve(&self, path: &str) -> Result<String> {
        let refuse = |reason: &str| Error::PathRefused {
            path: path.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = path.trim();
        if trimmed.is_empty() {
            return Err(refuse("empty path"));
        }
        let p = Path::new(trimmed);
        if p.is_absolute() || trimmed.starts_with('/') || trimmed.starts_with('\\') || p.has_root()
        {
            return Err(refuse(
                "absolute paths are refused: give a path relative to the project root",
            ));
        }
        if p.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::Prefix(_) | Component::RootDir
            )
        }) {
            return Err(refuse(
                "`..` is refused: the path must stay inside the project",
            ));
        }
        let abs = self.root.join(p);
        let real = abs
            .canonicalize()
            .map_err(|e| Error::NotFound(format!("{trimmed}: {e}")))?;
        let roots: Vec<PathBuf> = self
            .default_roots()
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .collect();
        if !roots.iter().any(|r| real.starts_with(r)) {
            return Err(refuse(
                "it resolves outside the indexed roots (a symbolic link leading out?)",
            ));
        }
        let root = self.root.canonicalize().map_err(|source| Error::Io {
            path: self.root.clone(),
            source,
        })?;
        let rel = real.strip_prefix(&root).map_err(|_| {
            refuse("it resolves outside the project (a symbolic link leading out?)")
        })?;
        Ok(rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::line_range;

    #[test]
    fn line_ranges_are_inclusive_and_clamped() {
        let t = "a\nb\nc\nd";
        assert_eq!(line_range(t, 2, 3), "b\nc");
        assert_eq!(line_range(t, 1, 1), "a");
        assert_eq!(line_range(t, 3, 99), "c\nd");
    }
}
