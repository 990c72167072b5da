//! Which markdown files exist under a root, and reading one of them as text.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;

/// The name of Cairn's own ignore file, read in every folder like `.gitignore`.
const CAIRN_IGNORE: &str = ".cairnignore";

/// How many leading bytes [`read_text`] inspects for a NUL byte.
const BINARY_PROBE: usize = 8 * 1024;

/// What [`scan`] keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// File extensions to keep, without the dot, compared case-insensitively.
    /// Defaults to `md`, `markdown` and `mdx`.
    pub extensions: Vec<String>,
    /// Honour `.gitignore`, `.ignore` and `.cairnignore` (here and in parent
    /// folders). Off for folders that are always indexed, such as memories.
    pub ignore_rules: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            extensions: ["md", "markdown", "mdx"].map(String::from).to_vec(),
            ignore_rules: true,
        }
    }
}

impl ScanOptions {
    fn accepts(&self, path: &Path) -> bool {
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            return false;
        };
        self.extensions
            .iter()
            .any(|want| want.trim_start_matches('.').eq_ignore_ascii_case(ext))
    }
}

/// A file found by [`scan`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScannedFile {
    /// The file's path as walked: the root given to [`scan`] joined with the
    /// path below it.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Last modification time in nanoseconds since the Unix epoch, 0 if unknown.
    pub mtime_ns: i64,
}

/// Something [`scan`] could not look at; the walk went on without it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScanIssue {
    /// The path concerned (the root when the error names no path).
    pub path: PathBuf,
    /// What went wrong.
    pub reason: String,
}

/// Walks `root` and returns the files to index, sorted by path, and the
/// problems met on the way.
///
/// The walk uses the `ignore` crate: it respects `.gitignore` files (also
/// outside a git repository), `.ignore` files and `.cairnignore` files, skips
/// hidden files and folders, follows no symbolic links and keeps the files
/// whose extension is in `opts.extensions`. A folder or file that cannot be
/// read becomes a [`ScanIssue`] and the walk goes on. If `root` is itself a
/// file with an accepted extension, the result is just that file.
pub fn scan(root: &Path, opts: &ScanOptions) -> (Vec<ScannedFile>, Vec<ScanIssue>) {
    let mut files = Vec::new();
    let mut issues = Vec::new();

    if let Ok(meta) = fs::metadata(root)
        && meta.is_file()
    {
        if opts.accepts(root) {
            files.push(scanned(root.to_path_buf(), &meta));
        }
        return (files, issues);
    }

    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(true)
        .ignore(opts.ignore_rules)
        .git_ignore(opts.ignore_rules)
        .git_exclude(opts.ignore_rules)
        .git_global(opts.ignore_rules)
        .parents(opts.ignore_rules)
        .require_git(false)
        .follow_links(false);
    if opts.ignore_rules {
        builder.add_custom_ignore_filename(CAIRN_IGNORE);
    }
    let walker = builder.build();

    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                issues.push(ScanIssue {
                    path: error_path(&err).unwrap_or_else(|| root.to_path_buf()),
                    reason: err.to_string(),
                });
                continue;
            }
        };
        // Symbolic links report their own type here, so they are skipped.
        if !entry.file_type().is_some_and(|t| t.is_file()) || !opts.accepts(entry.path()) {
            continue;
        }
        match entry.metadata() {
            Ok(meta) => files.push(scanned(entry.into_path(), &meta)),
            Err(err) => issues.push(ScanIssue {
                path: entry.into_path(),
                reason: err.to_string(),
            }),
        }
    }

    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    if !issues.is_empty() {
        tracing::debug!(root = %root.display(), issues = issues.len(), "scan met unreadable paths");
    }
    (files, issues)
}

fn scanned(path: PathBuf, meta: &fs::Metadata) -> ScannedFile {
    ScannedFile {
        path,
        size: meta.len(),
        mtime_ns: meta.modified().map_or(0, unix_nanos),
    }
}

/// Unix nanoseconds of a file time (negative before 1970): the `mtime_ns` of
/// [`ScannedFile`], for callers that compare a file with what was scanned.
pub fn unix_nanos(time: std::time::SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

/// The first path an `ignore` error names, if any.
fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        ignore::Error::WithLineNumber { err, .. } | ignore::Error::WithDepth { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        _ => None,
    }
}

/// Why [`read_text`] could not return a file's text.
#[non_exhaustive]
#[derive(thiserror::Error, Debug)]
pub enum ReadError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file holds a NUL byte in its first 8 KiB, so it is not text.
    #[error("{} is binary (NUL byte in its first 8 KiB)", path.display())]
    Binary {
        /// The file.
        path: PathBuf,
    },
    /// The file is not valid UTF-8.
    #[error("{} is not valid UTF-8", path.display())]
    InvalidUtf8 {
        /// The file.
        path: PathBuf,
    },
}

/// Reads a file as UTF-8 text, without a leading byte-order mark.
///
/// Fails with [`ReadError::Binary`] when a NUL byte occurs in the first 8 KiB,
/// with [`ReadError::InvalidUtf8`] when the bytes are not UTF-8, and with
/// [`ReadError::Io`] when the file cannot be read.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    let mut bytes = fs::read(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return Err(ReadError::Binary {
            path: path.to_path_buf(),
        });
    }
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|_| ReadError::InvalidUtf8 {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, content: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    /// Paths found under `root`, relative to it and `/`-separated.
    fn found(root: &Path, opts: &ScanOptions) -> Vec<String> {
        let (files, issues) = scan(root, opts);
        assert!(issues.is_empty(), "{issues:?}");
        files
            .iter()
            .map(|f| {
                let rel = f.path.strip_prefix(root).unwrap();
                rel.to_string_lossy().replace('\\', "/")
            })
            .collect()
    }

    #[test]
    fn gitignore_is_respected_without_a_git_dir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".gitignore", "build/\nsecret.md\n");
        write(root, "a.md", "# A");
        write(root, "secret.md", "# S");
        write(root, "build/out.md", "# B");
        write(root, "docs/b.md", "# B");
        assert!(!root.join(".git").exists());
        assert_eq!(found(root, &ScanOptions::default()), ["a.md", "docs/b.md"]);
    }

    #[test]
    fn cairnignore_and_ignore_files_are_respected() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".cairnignore", "drafts/\n");
        write(root, "notes/.ignore", "old.md\n");
        write(root, "drafts/wip.md", "x");
        write(root, "notes/old.md", "x");
        write(root, "notes/new.md", "x");
        write(root, "readme.md", "x");
        assert_eq!(
            found(root, &ScanOptions::default()),
            ["notes/new.md", "readme.md"]
        );
    }

    #[test]
    fn hidden_files_and_folders_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".hidden.md", "x");
        write(root, ".obsidian/config.md", "x");
        write(root, "sub/.secret/deep.md", "x");
        write(root, "sub/visible.md", "x");
        assert_eq!(found(root, &ScanOptions::default()), ["sub/visible.md"]);
    }

    #[test]
    fn extensions_filter_case_insensitively_and_sorts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in [
            "z.md",
            "b.MD",
            "c.markdown",
            "d.mdx",
            "e.txt",
            "f.rs",
            "g",
            "a.Markdown",
        ] {
            write(root, name, "x");
        }
        assert_eq!(
            found(root, &ScanOptions::default()),
            ["a.Markdown", "b.MD", "c.markdown", "d.mdx", "z.md"]
        );
        let txt = ScanOptions {
            extensions: vec![".TXT".into()],
            ..ScanOptions::default()
        };
        assert_eq!(found(root, &txt), ["e.txt"]);
    }

    #[test]
    fn scanned_files_carry_size_and_mtime() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.md", "hello");
        let (files, _) = scan(dir.path(), &ScanOptions::default());
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, dir.path().join("a.md"));
        assert_eq!(files[0].size, 5);
        assert!(files[0].mtime_ns > 0);
    }

    #[test]
    fn a_file_root_is_returned_alone() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "one.md", "x");
        write(dir.path(), "two.md", "x");
        write(dir.path(), "three.txt", "x");
        let file = dir.path().join("one.md");
        let (files, issues) = scan(&file, &ScanOptions::default());
        assert!(issues.is_empty());
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, file);
        let (files, _) = scan(&dir.path().join("three.txt"), &ScanOptions::default());
        assert!(files.is_empty());
    }

    #[test]
    fn a_missing_root_is_an_issue() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let (files, issues) = scan(&missing, &ScanOptions::default());
        assert!(files.is_empty());
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].path, missing);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "far.md", "x");
        write(dir.path(), "real.md", "x");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.md"), dir.path().join("alias.md"))
            .unwrap();
        assert_eq!(found(dir.path(), &ScanOptions::default()), ["real.md"]);
    }

    #[test]
    fn read_text_strips_bom() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bom.md");
        fs::write(&path, b"\xEF\xBB\xBF# Title\n").unwrap();
        assert_eq!(read_text(&path).unwrap(), "# Title\n");
    }

    #[test]
    fn read_text_rejects_binary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bin.md");
        fs::write(&path, b"# Title\n\0\x01\x02").unwrap();
        let err = read_text(&path).unwrap_err();
        assert!(matches!(err, ReadError::Binary { .. }), "{err:?}");
        assert!(err.to_string().contains("bin.md"), "{err}");
    }

    #[test]
    fn read_text_rejects_invalid_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("latin1.md");
        fs::write(&path, b"caf\xE9\n").unwrap();
        let err = read_text(&path).unwrap_err();
        assert!(matches!(err, ReadError::InvalidUtf8 { .. }), "{err:?}");
        assert!(err.to_string().contains("latin1.md"), "{err}");
    }

    #[test]
    fn read_text_reports_io_errors_with_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.md");
        let err = read_text(&path).unwrap_err();
        assert!(matches!(err, ReadError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains("missing.md"), "{err}");
    }
}
