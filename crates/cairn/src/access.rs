//! What the files say now: freshness of indexed files, the section or code
//! definition around a chunk (`expand`), and reading an indexed file (`get`)
//! without letting a path leave the project. Both reads keep to a token
//! budget: the text is cut after the last whole line that fits, and the
//! answer says so and how to read on.

use std::path::{Component, Path, PathBuf};

use cairn_core::{Chunk, DocRecord, Freshness, Kind};
use cairn_ingest::{doc_headings, enclosing_definition, read_text, unix_nanos};
use cairn_search::estimate_tokens;
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::limits;

/// The section or definition around a chunk, read from the file.
#[derive(Clone, Debug, Serialize)]
pub struct Section {
    /// The chunk asked for.
    pub chunk_id: String,
    /// File, relative to the project root.
    pub path: String,
    /// The chunk's breadcrumb.
    pub breadcrumb: String,
    /// What the lines are: `section` (a doc's heading and what follows it),
    /// the code definition that holds the chunk (`function admit`,
    /// `impl Gate`), or `chunk` (code outside any definition, or in a
    /// language without a grammar).
    pub scope: String,
    /// First line of the returned text, 1-based.
    pub start_line: u32,
    /// Last line of the returned text, inclusive.
    pub end_line: u32,
    /// Lines `start_line..=end_line` of the file.
    pub text: String,
    /// Whether the file still has the indexed content.
    pub freshness: Freshness,
    /// The text is only part of the section: it was cut to the token budget.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// When truncated: the whole section's first line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_start_line: Option<u32>,
    /// When truncated: the whole section's last line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_end_line: Option<u32>,
    /// When truncated: how to read the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
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
    /// Fewer lines than asked for: the text was cut to the token budget.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// When truncated: the last line asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_end_line: Option<u32>,
    /// When truncated: how to read the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Lines of a text cut to a token budget.
#[derive(Debug, PartialEq, Eq)]
struct Fitted {
    /// The lines that fit, joined with `\n`.
    text: String,
    /// The last line in `text` (1-based; `start - 1` when there is none).
    end: u32,
    /// Lines (or the end of a line) were left out.
    truncated: bool,
}

/// Lines `start..=end` (1-based, inclusive) of `lines` as one text of at most
/// `budget` tokens ([`estimate_tokens`]), cut after the last whole line that
/// fits. A first line longer than the whole budget is cut inside, at a
/// character boundary, so that something is always shown.
fn fit_lines(lines: &[&str], start: u32, end: u32, budget: usize) -> Fitted {
    let mut text = String::new();
    let mut used = 0usize;
    let mut shown = start.saturating_sub(1);
    for n in start..=end {
        let Some(line) = (n as usize).checked_sub(1).and_then(|i| lines.get(i)) else {
            break;
        };
        // Runs never cross a line, so costs add up: a newline costs one.
        let cost = estimate_tokens(line) + usize::from(n > start);
        if used + cost > budget {
            if n == start {
                text = prefix_within(line, budget).to_string();
                shown = start;
            }
            return Fitted {
                text,
                end: shown,
                truncated: true,
            };
        }
        if n > start {
            text.push('\n');
        }
        text.push_str(line);
        used += cost;
        shown = n;
    }
    Fitted {
        text,
        end: shown,
        truncated: false,
    }
}

/// Where a read was cut, to tell the reader how to read on.
struct Cut {
    /// The token budget.
    budget: usize,
    /// The lines the whole answer would hold.
    range: (u32, u32),
    /// The lines shown.
    shown: (u32, u32),
    /// The last line shown is only its beginning.
    partial: bool,
}

impl Cut {
    /// How to get the rest, for the tool `tool` on `path`.
    fn hint(&self, path: &str, tool: &str) -> String {
        let ((start, end), (from, shown)) = (self.range, self.shown);
        let mut rest = Vec::new();
        if from > start {
            rest.push(format!(
                "start_line {start}, end_line {} (before)",
                from - 1
            ));
        }
        if shown < end {
            rest.push(format!("start_line {} (after)", shown + 1));
        }
        let partial = if self.partial {
            format!(" Line {shown} alone is over the budget: only its start is shown.")
        } else {
            String::new()
        };
        let more = if rest.is_empty() {
            format!("call {tool} with a larger max_tokens")
        } else {
            format!(
                "call get on {path} with {}, or {tool} with a larger max_tokens",
                rest.join(" or ")
            )
        };
        format!(
            "cut to max_tokens {}: lines {from}-{shown} of {start}-{end} shown.{partial} For more, {more}",
            self.budget
        )
    }
}

/// Whether `text`, the lines shown ending with line `last`, ends inside it.
fn is_partial(lines: &[&str], last: u32, text: &str) -> bool {
    (last as usize)
        .checked_sub(1)
        .and_then(|i| lines.get(i))
        .is_some_and(|l| !text.ends_with(l))
}

/// Lines `range` of `lines` within `budget` tokens, showing the chunk at
/// `chunk` (1-based, inclusive): from the range's first line when the chunk
/// is in what fits from there, else from the chunk's first line (then, if the
/// rest of the range fits, from as many lines before it as the budget
/// allows). Returns the first line shown and the text; `truncated` is set
/// whenever lines of the range were left out, before or after.
fn window(lines: &[&str], range: (u32, u32), chunk: (u32, u32), budget: usize) -> (u32, Fitted) {
    let (start, end) = range;
    let fit = fit_lines(lines, start, end, budget);
    let chunk_start = chunk.0.clamp(start, end);
    if !fit.truncated || fit.end >= chunk.1.min(end) || chunk_start <= start {
        return (start, fit);
    }
    let mut fit = fit_lines(lines, chunk_start, end, budget);
    let mut from = chunk_start;
    if !fit.truncated {
        let mut left = budget.saturating_sub(estimate_tokens(&fit.text));
        while from > start {
            let Some(line) = lines.get(from as usize - 2) else {
                break;
            };
            let cost = estimate_tokens(line) + 1;
            if cost > left {
                break;
            }
            left -= cost;
            from -= 1;
        }
        fit.text = lines[from as usize - 1..fit.end as usize].join("\n");
    }
    fit.truncated = true;
    (from, fit)
}

/// The longest prefix of `line` that costs at most `budget` tokens (the cost
/// of a prefix never exceeds that of a longer one).
fn prefix_within(line: &str, budget: usize) -> &str {
    let bounds: Vec<usize> = line
        .char_indices()
        .map(|(i, _)| i)
        .chain([line.len()])
        .collect();
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if estimate_tokens(&line[..bounds[mid]]) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    &line[..bounds[lo]]
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
pub(crate) fn check(root: &Path, roots: &[PathBuf], rec: &DocRecord) -> Freshness {
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

/// A file's text as `get` and `expand` show it: an environment template's
/// (`.env.example`) with its values redacted, as it was indexed.
fn env_redacted(path: &str, text: String) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    if cairn_ingest::is_env_template(name) {
        cairn_ingest::redact_env(&text)
    } else {
        text
    }
}

impl Engine {
    /// The indexed roots as real paths: what [`confine`] keeps reads within.
    pub(crate) fn real_roots(&self) -> Vec<PathBuf> {
        self.default_roots()
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .collect()
    }

    /// Indexed files whose content changed or which are gone since indexing.
    pub fn stale_files(&self) -> Result<Vec<(String, Freshness)>> {
        let docs = self.with_snapshot(|snap| Ok(snap.documents()?))?;
        let roots = self.real_roots();
        Ok(docs
            .iter()
            .filter(|d| self.kind_of(&d.path) != Kind::History)
            .filter_map(|d| match check(&self.root, &roots, d) {
                Freshness::Fresh => None,
                f => Some((d.path.clone(), f)),
            })
            .collect())
    }

    /// The section or code definition around a chunk, within `max_tokens`
    /// (0: [`limits::DEFAULT_READ_TOKENS`]; at most [`limits::MAX_TOKENS`]).
    ///
    /// For a doc or a memory: from the chunk's heading to the next heading of
    /// the same or a higher level (text before the first heading: up to that
    /// heading). For code: the smallest definition (function, method, impl,
    /// type, class) that holds the chunk, its doc comment included, found by
    /// parsing the file with the chunker's grammar; code outside any
    /// definition gives the chunk's own lines. Then widened by
    /// `context_lines` on each side, and cut at a line boundary to the
    /// budget: from the section's first line when the chunk is still in what
    /// fits, else from the chunk's first line. Read from the file as it is
    /// now; when the file is gone, the chunk's indexed text.
    pub fn expand(&self, chunk_id: &str, context_lines: u32, max_tokens: usize) -> Result<Section> {
        let budget = limits::count(max_tokens, limits::DEFAULT_READ_TOKENS, limits::MAX_TOKENS);
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
            // A notebook's lines are JSON: its cell, as indexed, is the
            // section (with the file's freshness).
            Some(Ok(_)) if cairn_ingest::is_notebook(&chunk.path) => {
                let mut section = gone_section(chunk, budget);
                section.scope = "cell".into();
                section.freshness = freshness;
                section.hint = section.hint.map(|_| {
                    format!("cut to max_tokens {budget}: ask a larger max_tokens for the rest of the cell")
                });
                return Ok(section);
            }
            Some(Ok(t)) => env_redacted(&chunk.path, t),
            // Gone: the indexed text is all there is.
            _ => return Ok(gone_section(chunk, budget)),
        };
        let lines: Vec<&str> = text.lines().collect();
        let total = u32::try_from(lines.len()).unwrap_or(u32::MAX).max(1);
        let (scope, start, end) = self.expand_scope(&chunk, &text, total);
        // Blank lines before the next heading or definition are not part of it.
        let mut end = end.max(start);
        while end > start
            && lines
                .get(end as usize - 1)
                .is_some_and(|l| l.trim().is_empty())
        {
            end -= 1;
        }
        let start = start.saturating_sub(context_lines).max(1);
        let end = end.saturating_add(context_lines).min(total).max(start);
        let (from, fit) = window(
            &lines,
            (start, end),
            (chunk.start_line, chunk.end_line),
            budget,
        );
        let shown = fit.end.max(from);
        let hint = fit.truncated.then(|| {
            let cut = Cut {
                budget,
                range: (start, end),
                shown: (from, shown),
                partial: is_partial(&lines, shown, &fit.text),
            };
            cut.hint(&chunk.path, "expand")
        });
        Ok(Section {
            chunk_id: chunk.id.clone(),
            breadcrumb: chunk.breadcrumb(),
            scope,
            path: chunk.path,
            start_line: from,
            end_line: shown,
            text: fit.text,
            freshness,
            truncated: fit.truncated,
            full_start_line: fit.truncated.then_some(start),
            full_end_line: fit.truncated.then_some(end),
            hint,
        })
    }

    /// What [`Self::expand`] widens `chunk` to, before context and the
    /// budget: its scope's name (`fn name`, `section`, `chunk`) and lines, in
    /// a file of `total` lines now reading `text`.
    fn expand_scope(&self, chunk: &Chunk, text: &str, total: u32) -> (String, u32, u32) {
        if self.kind_of(&chunk.path) == Kind::Code {
            match enclosing_definition(&chunk.path, text, chunk.start_line, chunk.end_line) {
                Some(d) => (
                    format!("{} {}", d.kind, d.name),
                    d.start_line,
                    d.end_line.min(total),
                ),
                None => (
                    "chunk".to_string(),
                    chunk.start_line.min(total),
                    chunk.end_line.min(total),
                ),
            }
        } else {
            // A chunk merged from several small sections carries the last
            // one's heading: the section is never narrower than the chunk.
            let (start, end) = doc_section(text, chunk, total);
            (
                "section".to_string(),
                start.min(chunk.start_line.clamp(1, total)),
                end.max(chunk.end_line.min(total)),
            )
        }
    }

    /// Lines `start..=end` (1-based; whole file when absent) of an indexed
    /// file, within `max_tokens` (0: [`limits::DEFAULT_READ_TOKENS`]; at most
    /// [`limits::MAX_TOKENS`]): the text is cut after the last whole line that
    /// fits, and the answer says where to go on. `path` is relative to the
    /// project root; absolute paths, `..`, symbolic links that lead out of
    /// the indexed roots and files the index does not hold are refused.
    pub fn read_file(
        &self,
        path: &str,
        start: Option<u32>,
        end: Option<u32>,
        max_tokens: usize,
    ) -> Result<FileText> {
        let budget = limits::count(max_tokens, limits::DEFAULT_READ_TOKENS, limits::MAX_TOKENS);
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
        let text = env_redacted(&rel, text);
        let lines: Vec<&str> = text.lines().collect();
        let total = u32::try_from(lines.len()).unwrap_or(u32::MAX);
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
        let fit = fit_lines(&lines, first, last, budget);
        let shown = if total == 0 { last } else { fit.end.max(first) };
        let hint = fit.truncated.then(|| {
            let cut = Cut {
                budget,
                range: (first, last),
                shown: (first, shown),
                partial: is_partial(&lines, shown, &fit.text),
            };
            cut.hint(&rel, "get")
        });
        Ok(FileText {
            freshness: check(&self.root, &roots, &rec),
            text: fit.text,
            path: rel,
            start_line: first,
            end_line: shown,
            total_lines: total,
            truncated: fit.truncated,
            full_end_line: fit.truncated.then_some(last),
            hint,
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

/// A doc chunk's section in `text` (of `total` lines): from its heading to
/// the next heading of the same or a higher level; text before the first
/// heading runs up to that heading.
fn doc_section(text: &str, chunk: &cairn_core::Chunk, total: u32) -> (u32, u32) {
    let heads = doc_headings(&chunk.path, text);
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
    match own {
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
    }
}

/// A chunk whose file is gone, as [`Engine::expand`] answers it: its indexed
/// text, cut to `budget`.
fn gone_section(chunk: Chunk, budget: usize) -> Section {
    let lines: Vec<&str> = chunk.text.lines().collect();
    let fit = fit_lines(
        &lines,
        1,
        u32::try_from(lines.len()).unwrap_or(u32::MAX),
        budget,
    );
    let offset = chunk.start_line.saturating_sub(1);
    let (start, end) = (chunk.start_line, chunk.end_line);
    let shown = fit.end + offset;
    Section {
        chunk_id: chunk.id.clone(),
        breadcrumb: chunk.breadcrumb(),
        scope: "chunk".into(),
        start_line: start,
        end_line: shown,
        text: fit.text,
        freshness: Freshness::Deleted,
        truncated: fit.truncated,
        full_start_line: fit.truncated.then_some(start),
        full_end_line: fit.truncated.then_some(end),
        hint: fit.truncated.then(|| {
            format!(
                "cut to max_tokens {budget}: lines {start}-{shown} of {start}-{end} shown; \
                 the file is gone, so ask a larger max_tokens for the rest"
            )
        }),
        path: chunk.path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_inclusive_and_clamped() {
        let t = ["a", "b", "c", "d"];
        let all = |s, e| fit_lines(&t, s, e, 1000);
        assert_eq!(all(2, 3).text, "b\nc");
        assert_eq!(all(1, 1).text, "a");
        assert_eq!(all(3, 99).text, "c\nd");
        assert_eq!(all(3, 99).end, 4);
        assert!(!all(3, 99).truncated);
    }

    #[test]
    fn lines_are_cut_to_the_budget_at_a_line_boundary() {
        let lines: Vec<String> = (1..=100)
            .map(|i| format!("    let value_{i} = compute(&input, {i});"))
            .collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let fit = fit_lines(&lines, 1, 100, 200);
        assert!(fit.truncated);
        assert!(
            estimate_tokens(&fit.text) <= 200,
            "{}",
            estimate_tokens(&fit.text)
        );
        assert_eq!(fit.text.lines().count() as u32, fit.end);
        assert_eq!(fit.text.lines().last(), Some(lines[fit.end as usize - 1]));
        // One more line would not have fitted.
        let more = fit_lines(&lines, 1, fit.end + 1, usize::MAX);
        assert!(estimate_tokens(&more.text) > 200);
        // A line longer than the whole budget is shown in part.
        let long = "word ".repeat(1000);
        let fit = fit_lines(&[long.as_str(), "next"], 1, 2, 50);
        assert!(fit.truncated && fit.end == 1 && !fit.text.is_empty());
        assert!(estimate_tokens(&fit.text) <= 50);
        assert!(long.starts_with(&fit.text));
        assert!(is_partial(&[long.as_str(), "next"], 1, &fit.text));
        assert!(!is_partial(
            &lines,
            3,
            "a\nb\n    let value_3 = compute(&input, 3);"
        ));
    }

    #[test]
    fn a_hint_says_which_lines_are_left_out_on_each_side() {
        let cut = |range, shown, partial| Cut {
            budget: 2000,
            range,
            shown,
            partial,
        };
        let h = cut((10, 500), (10, 90), false).hint("src/a.rs", "expand");
        assert_eq!(
            h,
            "cut to max_tokens 2000: lines 10-90 of 10-500 shown. For more, call get on \
             src/a.rs with start_line 91 (after), or expand with a larger max_tokens"
        );
        let h = cut((10, 500), (300, 500), false).hint("src/a.rs", "expand");
        assert!(h.contains("start_line 10, end_line 299 (before)"), "{h}");
        assert!(!h.contains("(after)"), "{h}");
        let h = cut((1, 3), (1, 1), true).hint("a.md", "get");
        assert!(h.contains("Line 1 alone is over the budget"), "{h}");
        assert!(h.contains("start_line 2 (after)"), "{h}");
        let h = cut((1, 1), (1, 1), true).hint("a.md", "get");
        assert!(
            h.ends_with("For more, call get with a larger max_tokens"),
            "{h}"
        );
    }
}
