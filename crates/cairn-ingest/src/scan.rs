//! Which files exist under a root (and which were left out, and why), and
//! reading one of them as text.

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
    /// Keep every other file too, to be read in line windows, unless
    /// [`ScanOptions::other_left_out`] names a reason (binary by its name,
    /// in `skip`, vendored, test data); each one left out is a
    /// [`ScanIssue`] with its [`LeftOut`] kind. Off: other files are passed
    /// over without a word (memory folders).
    pub other_files: bool,
    /// Extensions (without the dot) or whole file names that `other_files`
    /// never keeps (`json`, `lock`, `svg`), compared case-insensitively.
    pub skip: Vec<String>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            extensions: ["md", "markdown", "mdx"].map(String::from).to_vec(),
            ignore_rules: true,
            other_files: false,
            skip: Vec::new(),
        }
    }
}

/// Extensions of files that are binary by their name: never opened, counted
/// as binary. (Any other file holding a NUL byte is found binary when read.)
const BINARY_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "ico",
    "icns",
    "webp",
    "tif",
    "tiff",
    "psd",
    "xcf",
    "afdesign",
    "pdf",
    "zip",
    "gz",
    "tgz",
    "bz2",
    "xz",
    "zst",
    "lz4",
    "7z",
    "rar",
    "tar",
    "jar",
    "war",
    "class",
    "pyc",
    "pyo",
    "pyd",
    "so",
    "dylib",
    "dll",
    "exe",
    "o",
    "a",
    "lib",
    "obj",
    "wasm",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "mp3",
    "mp4",
    "m4a",
    "wav",
    "ogg",
    "flac",
    "mov",
    "avi",
    "mkv",
    "webm",
    "bin",
    "sqlite",
    "sqlite3",
    "db",
    "npy",
    "npz",
    "pkl",
    "pickle",
    "h5",
    "hdf5",
    "parquet",
    "onnx",
    "safetensors",
    "whl",
    "egg",
    "deb",
    "rpm",
    "dmg",
    "iso",
    "fits",
    "mo",
];

/// Folders whose other files are someone else's (`node_modules/`,
/// `vendor/`): their code is still indexed where its extension is listed
/// (and ranks lower), their other files are left out.
const VENDORED_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "vendor",
    "third_party",
    "third-party",
    "site-packages",
    "__pycache__",
];

/// Folders of tests and their fixtures: an other file there (an expected
/// `.html` output, a `.stderr` snapshot) is a test's data, not an answer.
pub const TEST_DATA_DIRS: [&str; 8] = [
    "test",
    "tests",
    "testdata",
    "test_data",
    "fixtures",
    "__fixtures__",
    "spec",
    "testing",
];

/// Why the walk, or the index pass after it, left a file out: the kinds
/// `cairn status` counts, one line each.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum LeftOut {
    /// Binary: by its extension, or a NUL byte in its first 8 KiB.
    Binary,
    /// Its extension or name is in `[index] skip`.
    Excluded,
    /// An other file under a vendored folder (`node_modules/`, `vendor/`).
    Vendored,
    /// Test data: an other file (or plain text) in a test or fixture folder.
    TestData,
    /// Generated: by its name or a marker in its first lines.
    Generated,
    /// Minified: very long lines.
    Minified,
    /// Larger than `[index] max_file_mb`.
    TooLarge,
    /// A symbolic link, not followed.
    Link,
    /// A FIFO, socket or device.
    Special,
    /// It could not be read (permissions, an I/O error).
    Unreadable,
    /// Its chunker failed on it.
    Failed,
}

impl LeftOut {
    /// The words `cairn status` and `cairn index` say it with.
    pub fn label(self) -> &'static str {
        match self {
            LeftOut::Binary => "binary",
            LeftOut::Excluded => "excluded by [index] skip",
            LeftOut::Vendored => "vendored",
            LeftOut::TestData => "test data",
            LeftOut::Generated => "generated",
            LeftOut::Minified => "minified",
            LeftOut::TooLarge => "larger than [index] max_file_mb",
            LeftOut::Link => "symbolic link, not followed",
            LeftOut::Special => "not a regular file",
            LeftOut::Unreadable => "unreadable",
            LeftOut::Failed => "the chunker failed",
        }
    }

    /// Whether a file left out so is a problem to name one by one (a link,
    /// an unreadable file), rather than one to count (binary, vendored).
    pub fn is_problem(self) -> bool {
        matches!(
            self,
            LeftOut::Link | LeftOut::Special | LeftOut::Unreadable | LeftOut::Failed
        )
    }
}

impl ScanOptions {
    /// Why an other file (one [`ScanOptions::accepts`] does not name) is
    /// left out, if it is: binary by its extension, in `skip`, under a
    /// vendored folder, or test data. A path relative to the walked root.
    pub fn other_left_out(&self, rel: &Path) -> Option<(LeftOut, String)> {
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ext = rel
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if let Some(ext) = &ext
            && BINARY_EXTENSIONS.contains(&ext.as_str())
        {
            return Some((LeftOut::Binary, format!("binary (.{ext})")));
        }
        if let Some(entry) = self.skip.iter().find(|s| {
            let s = s.trim_start_matches('.');
            s.eq_ignore_ascii_case(name)
                || ext.as_deref().is_some_and(|e| s.eq_ignore_ascii_case(e))
        }) {
            return Some((
                LeftOut::Excluded,
                format!("excluded by [index] skip ({entry})"),
            ));
        }
        let dirs: Vec<String> = rel
            .parent()
            .into_iter()
            .flat_map(|p| p.components())
            .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase())
            .collect();
        // A Python package's build metadata repeats its README whole
        // (`PKG-INFO`, `*.egg-info/`): Python-Markdown's and dateutil's
        // took first places from their code (code-QA's tuning half).
        if name == "PKG-INFO" || dirs.iter().any(|d| d.ends_with(".egg-info")) {
            return Some((
                LeftOut::Generated,
                "generated package metadata (PKG-INFO, .egg-info)".to_string(),
            ));
        }
        if let Some(d) = dirs.iter().find(|d| VENDORED_DIRS.contains(&d.as_str())) {
            return Some((LeftOut::Vendored, format!("vendored (under {d}/)")));
        }
        if let Some(d) = dirs.iter().find(|d| TEST_DATA_DIRS.contains(&d.as_str())) {
            return Some((LeftOut::TestData, format!("test data (under {d}/)")));
        }
        None
    }

    fn accepts(&self, path: &Path) -> bool {
        // An environment template (`.env.example`) is read as configuration,
        // its values redacted (`crate::config::redact_env`).
        if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(crate::config::is_env_template)
        {
            return true;
        }
        // An entry may name a whole file (`Makefile`, `package.json`).
        if let Some(name) = path.file_name().and_then(|n| n.to_str())
            && self.extensions.iter().any(|e| e.eq_ignore_ascii_case(name))
        {
            return true;
        }
        // A man page (`man/cairn.1`) is kept where `man` is.
        if self
            .extensions
            .iter()
            .any(|e| e.trim_start_matches('.') == "man")
            && cairn_core::is_man_page(&path.to_string_lossy().to_ascii_lowercase())
        {
            return true;
        }
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            // `README`, `NEWS`: plain-text docs, kept where `txt` files are.
            return path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(cairn_core::is_doc_name)
                && self
                    .extensions
                    .iter()
                    .any(|e| e.trim_start_matches('.') == "txt");
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

/// Something [`scan`] could not look at, or left out though its name says it
/// might be meant to be indexed (a link, a FIFO); the walk went on without it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScanIssue {
    /// The path concerned (the root when the error names no path).
    pub path: PathBuf,
    /// What went wrong, or why it was left out (`symbolic link loop`).
    pub reason: String,
    /// Which kind of reason it is.
    pub kind: LeftOut,
}

/// Walks `root` and returns the files to index, sorted by path, and the
/// problems met on the way.
///
/// The walk uses the `ignore` crate: it respects `.gitignore` files (also
/// outside a git repository), `.ignore` files and `.cairnignore` files, skips
/// hidden files and folders, follows no symbolic links and keeps the files
/// whose extension is in `opts.extensions`. A folder or file that cannot be
/// read becomes a [`ScanIssue`] and the walk goes on. So does what is left
/// out on purpose but could have been meant to be indexed, each with its
/// reason: a FIFO, socket or device with an accepted extension ("not a
/// regular file (FIFO)"; it is never opened), a symbolic link with an
/// accepted extension ("symbolic link, not followed"), any symbolic link to
/// a folder ("symbolic link to a folder, not followed") and any link that
/// loops ("symbolic link loop"). Nothing is opened here: links are resolved
/// with `stat` only, to name the reason. If `root` is itself a file with an
/// accepted extension, the result is just that file.
pub fn scan(root: &Path, opts: &ScanOptions) -> (Vec<ScannedFile>, Vec<ScanIssue>) {
    let mut files = Vec::new();
    let mut issues = Vec::new();

    if let Ok(meta) = fs::metadata(root)
        && meta.is_file()
    {
        let name = Path::new(root.file_name().unwrap_or_default());
        if opts.accepts(root) || (opts.other_files && opts.other_left_out(name).is_none()) {
            files.push(scanned(root.to_path_buf(), &meta));
        }
        return (files, issues);
    }

    let mut builder = ignore::WalkBuilder::new(root);
    builder
        // Hidden files and folders are left out, but for `.github/workflows`
        // (CI workflows answer "how is the release built"); the rest of
        // `.github` (issue and pull-request templates) is boilerplate that
        // took places from code (code-QA's test half, attrs 0.7569 → 0.7396).
        .hidden(false)
        .filter_entry(|e| {
            let name = e.file_name().to_str().unwrap_or("");
            let in_github = e
                .path()
                .parent()
                .and_then(|p| p.file_name())
                .is_some_and(|p| p == ".github");
            e.depth() == 0
                || (in_github && name == "workflows" && e.file_type().is_some_and(|t| t.is_dir()))
                || (!name.starts_with('.') && !in_github)
                || name == ".github"
                || (crate::config::is_env_template(name)
                    && e.file_type().is_some_and(|t| t.is_file()))
        })
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
                    kind: LeftOut::Unreadable,
                });
                continue;
            }
        };
        // Symbolic links report their own type here (the walk does not
        // follow them): they, FIFOs and devices are skipped, and named.
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            continue;
        }
        if !file_type.is_file() {
            let reason = if file_type.is_symlink() {
                link_reason(entry.path(), opts).map(|r| (r, LeftOut::Link))
            } else {
                opts.accepts(entry.path()).then(|| {
                    (
                        format!("not a regular file ({})", special_kind(&file_type)),
                        LeftOut::Special,
                    )
                })
            };
            if let Some((reason, kind)) = reason {
                issues.push(ScanIssue {
                    path: entry.into_path(),
                    reason,
                    kind,
                });
            }
            continue;
        }
        if !opts.accepts(entry.path()) {
            if !opts.other_files {
                continue;
            }
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            if let Some((kind, reason)) = opts.other_left_out(rel) {
                issues.push(ScanIssue {
                    path: entry.into_path(),
                    reason,
                    kind,
                });
                continue;
            }
        }
        match entry.metadata() {
            Ok(meta) => files.push(scanned(entry.into_path(), &meta)),
            Err(err) => issues.push(ScanIssue {
                path: entry.into_path(),
                reason: err.to_string(),
                kind: LeftOut::Unreadable,
            }),
        }
    }

    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    issues.sort_by(|a, b| a.path.cmp(&b.path));
    if !issues.is_empty() {
        tracing::debug!(root = %root.display(), issues = issues.len(), "scan met paths it left out");
    }
    (files, issues)
}

/// Why a symbolic link met by the walk is worth naming, if it is: one with
/// an accepted extension, one to a folder, one that loops. The link is
/// resolved with `stat` (never opened) only to say which.
fn link_reason(link: &Path, opts: &ScanOptions) -> Option<String> {
    match fs::metadata(link) {
        Ok(meta) if meta.is_dir() => {
            // A link to its own folder or one above it would walk forever.
            let target = fs::canonicalize(link).ok();
            let here = link.parent().and_then(|p| fs::canonicalize(p).ok());
            let loops = matches!((&target, &here), (Some(t), Some(h)) if h.starts_with(t));
            Some(if loops {
                "symbolic link loop (to a folder it is in), not followed".to_string()
            } else {
                "symbolic link to a folder, not followed".to_string()
            })
        }
        Ok(_) => opts
            .accepts(link)
            .then(|| "symbolic link, not followed".to_string()),
        Err(err) if is_loop(&err) => Some("symbolic link loop".to_string()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => opts
            .accepts(link)
            .then(|| "broken symbolic link (its target is missing)".to_string()),
        Err(err) => opts
            .accepts(link)
            .then(|| format!("symbolic link, not followed ({err})")),
    }
}

/// Whether an error is "too many levels of symbolic links".
fn is_loop(err: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// What sort of file other than a regular file, folder or link this is.
fn special_kind(file_type: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "FIFO";
        }
        if file_type.is_socket() {
            return "socket";
        }
        if file_type.is_block_device() {
            return "block device";
        }
        if file_type.is_char_device() {
            return "character device";
        }
    }
    if file_type.is_symlink() {
        return "symbolic link";
    }
    if file_type.is_dir() {
        return "folder";
    }
    "special file"
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
    /// The file holds a NUL byte in its first 8 KiB (after decoding, for a
    /// UTF-16 file), so it is not text.
    #[error("{} is binary (NUL byte in its first 8 KiB)", path.display())]
    Binary {
        /// The file.
        path: PathBuf,
    },
}

/// A file's text as [`read_text_noted`] decoded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The text, without a byte-order mark.
    pub text: String,
    /// What was not read as written, when something was: invalid UTF-8
    /// (or an unpaired UTF-16 surrogate) replaced by U+FFFD. `None` when
    /// every byte decoded.
    pub note: Option<String>,
}

/// Reads the bytes of a regular file, refusing anything else (a FIFO, a
/// socket, a device, a folder) with [`std::io::ErrorKind::InvalidInput`].
///
/// A FIFO is never opened for reading, which would wait for a writer: the
/// file is checked with `stat` first, then opened non-blocking (so one
/// swapped in meanwhile does not block either) and checked again through
/// the open handle before a byte is read.
pub fn read_regular_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let not_regular = |t: &fs::FileType| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", special_kind(t)),
        )
    };
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta.file_type()));
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let mut file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta.file_type()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    std::io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// Reads a file as text (see [`read_text_noted`]), without the note.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    read_text_noted(path).map(|d| d.text)
}

/// Reads a file as text: UTF-8 (a leading byte-order mark dropped), or
/// UTF-16 LE or BE when it starts with that byte-order mark. Bytes that do
/// not decode become U+FFFD and the [`Decoded::note`] says how many: one
/// bad byte (a Latin-1 `é` in a UTF-8 file) costs one character, not the
/// file. Every reader of indexed files (the indexer, the freshness check,
/// `get`, `expand`) reads through here, so the content hash of what was
/// indexed is the hash of what is read back.
///
/// Fails with [`ReadError::Binary`] when a NUL occurs in the first 8 KiB
/// (of the decoded text, for UTF-16), and with [`ReadError::Io`] when the
/// file cannot be read or is not a regular file (see
/// [`read_regular_file`]: a FIFO never blocks it).
pub fn read_text_noted(path: &Path) -> Result<Decoded, ReadError> {
    let bytes = read_regular_file(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode_text(bytes).ok_or_else(|| ReadError::Binary {
        path: path.to_path_buf(),
    })
}

/// Which UTF-16 byte order a byte-order mark announces, if one does. A
/// UTF-32 LE mark (`FF FE 00 00`) is not one: read as UTF-16 it would be a
/// NUL, and the file is reported binary.
fn utf16_order(bytes: &[u8]) -> Option<bool> {
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] => None,
        [0xFF, 0xFE, ..] => Some(true),
        [0xFE, 0xFF, ..] => Some(false),
        _ => None,
    }
}

/// Decodes a file's bytes as [`read_text_noted`] does; `None` for binary.
pub fn decode_text(mut bytes: Vec<u8>) -> Option<Decoded> {
    if let Some(little) = utf16_order(&bytes) {
        let units: Vec<u16> = bytes[2..]
            .chunks(2)
            .map(|p| match (p, little) {
                ([a, b], true) => u16::from_le_bytes([*a, *b]),
                ([a, b], false) => u16::from_be_bytes([*a, *b]),
                // An odd last byte: no whole code unit, a replacement.
                _ => 0xFFFD,
            })
            .collect();
        let mut bad = usize::from(bytes.len() % 2 == 1);
        let text: String = char::decode_utf16(units.iter().copied())
            .map(|c| {
                c.unwrap_or_else(|_| {
                    bad += 1;
                    char::REPLACEMENT_CHARACTER
                })
            })
            .collect();
        let mut probe = text.char_indices().take_while(|&(i, _)| i < BINARY_PROBE);
        if probe.any(|(_, c)| c == '\0') {
            return None;
        }
        let order = if little { "LE" } else { "BE" };
        let note =
            (bad > 0).then(|| format!("UTF-16 {order}: {bad} invalid code unit(s) read as U+FFFD"));
        return Some(Decoded { text, note });
    }
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return None;
    }
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Some(Decoded { text, note: None }),
        Err(e) => {
            let bytes = e.into_bytes();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let bad = invalid_sequences(&bytes);
            Some(Decoded {
                text,
                note: Some(format!(
                    "not valid UTF-8: {bad} invalid byte sequence(s) read as U+FFFD"
                )),
            })
        }
    }
}

/// How many invalid sequences `String::from_utf8_lossy` replaces in `bytes`.
fn invalid_sequences(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .filter(|c| !c.invalid().is_empty())
        .count()
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
        // But `.github`: its workflows and templates (issue 63), not its
        // hidden files.
        write(root, ".github/workflows/ci.md", "x");
        write(root, ".github/.hidden.md", "x");
        write(root, ".github/ISSUE_TEMPLATE.md", "x");
        assert_eq!(
            found(root, &ScanOptions::default()),
            [".github/workflows/ci.md", "sub/visible.md"]
        );
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
    fn other_files_are_kept_unless_binary_skipped_vendored_or_test_data() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in [
            "a.md",
            "LICENSE",
            "bin/deploy",
            "src/schema.graphql",
            "assets/logo.png",
            "data/points.json",
            "PKG-INFO",
            "src/demo.egg-info/SOURCES",
            "Cargo.lock",
            "node_modules/x/readme.html",
            "tests/fixtures/out.html",
        ] {
            write(root, name, "x");
        }
        let opts = ScanOptions {
            other_files: true,
            skip: vec!["json".into(), "Cargo.lock".into()],
            ..ScanOptions::default()
        };
        let (files, issues) = scan(root, &opts);
        let kept: Vec<String> = files
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            kept,
            ["LICENSE", "a.md", "bin/deploy", "src/schema.graphql"]
        );
        let left: Vec<(String, LeftOut, String)> = issues
            .iter()
            .map(|i| {
                let rel = i
                    .path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (rel, i.kind, i.reason.clone())
            })
            .collect();
        assert_eq!(
            left,
            [
                (
                    "Cargo.lock".into(),
                    LeftOut::Excluded,
                    "excluded by [index] skip (Cargo.lock)".into()
                ),
                (
                    "PKG-INFO".into(),
                    LeftOut::Generated,
                    "generated package metadata (PKG-INFO, .egg-info)".into()
                ),
                (
                    "assets/logo.png".into(),
                    LeftOut::Binary,
                    "binary (.png)".into()
                ),
                (
                    "data/points.json".into(),
                    LeftOut::Excluded,
                    "excluded by [index] skip (json)".into()
                ),
                (
                    "node_modules/x/readme.html".into(),
                    LeftOut::Vendored,
                    "vendored (under node_modules/)".into()
                ),
                (
                    "src/demo.egg-info/SOURCES".into(),
                    LeftOut::Generated,
                    "generated package metadata (PKG-INFO, .egg-info)".into()
                ),
                (
                    "tests/fixtures/out.html".into(),
                    LeftOut::TestData,
                    "test data (under tests/)".into()
                ),
            ]
        );
        // Without `other_files` the same walk keeps the markdown alone and
        // says nothing of the rest.
        let (files, issues) = scan(root, &ScanOptions::default());
        assert_eq!(files.len(), 1);
        assert!(issues.is_empty(), "{issues:?}");
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

    /// The issues of a scan as `(path relative to root, reason)`, sorted.
    fn issues_of(root: &Path, opts: &ScanOptions) -> Vec<(String, String)> {
        let (_, issues) = scan(root, opts);
        let mut out: Vec<(String, String)> = issues
            .into_iter()
            .map(|i| {
                let rel = i.path.strip_prefix(root).unwrap_or(&i.path);
                (rel.to_string_lossy().replace('\\', "/"), i.reason)
            })
            .collect();
        out.sort();
        out
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_followed_and_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "far.md", "x");
        write(dir.path(), "real.md", "x");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.md"), dir.path().join("alias.md"))
            .unwrap();
        // A link whose name is not indexed and that leads to a file says nothing.
        std::os::unix::fs::symlink(dir.path().join("real.md"), dir.path().join("alias.so"))
            .unwrap();
        let (files, _) = scan(dir.path(), &ScanOptions::default());
        let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(paths, [dir.path().join("real.md")]);
        assert_eq!(
            issues_of(dir.path(), &ScanOptions::default()),
            [
                ("alias.md".into(), "symbolic link, not followed".into()),
                (
                    "linked".into(),
                    "symbolic link to a folder, not followed".into()
                ),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sub/real.md", "x");
        std::os::unix::fs::symlink("loop2.md", root.join("loop1.md")).unwrap();
        std::os::unix::fs::symlink("loop1.md", root.join("loop2.md")).unwrap();
        std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("missing.md", root.join("broken.md")).unwrap();
        assert_eq!(
            issues_of(root, &ScanOptions::default()),
            [
                (
                    "broken.md".into(),
                    "broken symbolic link (its target is missing)".into()
                ),
                ("loop1.md".into(), "symbolic link loop".into()),
                ("loop2.md".into(), "symbolic link loop".into()),
                (
                    "sub/up".into(),
                    "symbolic link loop (to a folder it is in), not followed".into()
                ),
            ]
        );
        let (files, _) = scan(root, &ScanOptions::default());
        assert_eq!(files.len(), 1);
    }

    /// Makes a FIFO at `path`.
    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
        assert_eq!(rc, 0, "mkfifo {}", path.display());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_named_and_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "good.md", "x");
        mkfifo(&root.join("pipe.md"));
        mkfifo(&root.join("pipe.bin"));
        // The scan names it by its type from the folder listing alone.
        assert_eq!(
            issues_of(root, &ScanOptions::default()),
            [("pipe.md".into(), "not a regular file (FIFO)".into())]
        );
        let (files, _) = scan(root, &ScanOptions::default());
        assert_eq!(files.len(), 1);
        // Reading it refuses at once: `fs::read` waited for a writer forever.
        let err = read_text(&root.join("pipe.md")).unwrap_err();
        assert!(
            err.to_string().contains("not a regular file (FIFO)"),
            "{err}"
        );
        let err = read_regular_file(&root.join("pipe.md")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        // So does a file root that is a FIFO.
        let (files, issues) = scan(&root.join("pipe.md"), &ScanOptions::default());
        assert!(files.is_empty());
        assert_eq!(issues.len(), 1, "{issues:?}");
    }

    #[test]
    fn read_regular_file_refuses_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_regular_file(dir.path()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("folder"), "{err}");
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
    fn one_invalid_byte_costs_one_character_and_is_noted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("latin1.md");
        fs::write(
            &path,
            b"# Caf\xE9\n\nThe rest of the file is fine.\n\xFF\xFEend\n",
        )
        .unwrap();
        let d = read_text_noted(&path).unwrap();
        assert_eq!(
            d.text,
            "# Caf\u{FFFD}\n\nThe rest of the file is fine.\n\u{FFFD}\u{FFFD}end\n"
        );
        let note = d.note.expect("a lossy read is noted");
        assert!(note.contains("not valid UTF-8"), "{note}");
        assert!(note.contains("3 invalid"), "{note}");
        assert_eq!(read_text(&path).unwrap(), d.text);
        // Valid text carries no note.
        fs::write(&path, "# Café 中文\n").unwrap();
        assert_eq!(read_text_noted(&path).unwrap().note, None);
    }

    /// `text` as UTF-16 with its byte-order mark.
    fn utf16(text: &str, little: bool) -> Vec<u8> {
        let mut out = if little {
            vec![0xFF, 0xFE]
        } else {
            vec![0xFE, 0xFF]
        };
        for u in text.encode_utf16() {
            out.extend(if little {
                u.to_le_bytes()
            } else {
                u.to_be_bytes()
            });
        }
        out
    }

    #[test]
    fn utf16_with_a_byte_order_mark_is_decoded_not_binary() {
        let dir = tempfile::tempdir().unwrap();
        let text = "# 部署说明\n\nRun the release script, then tag the commit. 😀\n";
        for little in [true, false] {
            let path = dir.path().join(format!("u16-{little}.md"));
            fs::write(&path, utf16(text, little)).unwrap();
            let d = read_text_noted(&path).unwrap();
            assert_eq!(d.text, text, "little endian: {little}");
            assert_eq!(d.note, None);
        }
        // An unpaired surrogate and an odd last byte: replaced and noted.
        let mut bytes = utf16("ab", true);
        bytes.extend([0x00, 0xD8, b'c', 0, 0x41]);
        let d = decode_text(bytes).unwrap();
        assert_eq!(d.text, "ab\u{FFFD}c\u{FFFD}");
        assert!(d.note.as_deref().unwrap().contains("UTF-16 LE: 2"), "{d:?}");
        // UTF-16 holding a NUL is binary; so is a UTF-32 mark.
        assert_eq!(decode_text(utf16("a\0b", true)), None);
        assert_eq!(decode_text(vec![0xFF, 0xFE, 0, 0, b'a', 0, 0, 0]), None);
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
