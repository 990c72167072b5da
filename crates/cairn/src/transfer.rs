//! `cairn export` / `cairn import`: the index and the memories as JSON Lines,
//! streamed, so moving a project between machines or backends is one pipe.
//!
//! One JSON object per line, each with a `record` field:
//!
//! * `header` — `format` (1), the cairn version, the model id and dimension;
//! * `memory` — a file of the memory folder, verbatim: `path` (project
//!   relative) and `text` (memories and session logs are the source of
//!   truth, so import writes them back as files);
//! * `document` — a document as indexed: path, hash, stat data, title, tags,
//!   domain, frontmatter (`meta`), its chunks (heading path, level, lines,
//!   text) and its links (chunk index or source entity, target, relation,
//!   weight);
//! * `vector` — with `--vectors`: one embedding of the current model, keyed
//!   by the hash of the text it embeds, so import needs no model run.
//!
//! Import reads the whole stream once before it writes anything (into a
//! spool file in `.cairn/`, so a pipe can be read twice): a malformed line,
//! a newer format, a document path that is absolute, climbs with `..`, has
//! a drive or UNC prefix, a backslash or a NUL, or resolves out of the
//! project through a link, or a memory path that is not a plain id under
//! the memory folder, ends the import with its line and nothing written.
//! Then it writes memory files (atomically, logged as `import`), documents
//! and vectors in transactions of `[index] batch_files` documents.
//! Documents of the memory folder are skipped: the memory files are indexed
//! from disk instead, so the index always agrees with them.

use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};

use cairn_core::{Change, DocWrite, WriteBatch, sync};
use cairn_ingest::{ScanOptions, read_text_noted, scan};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::progress::NoProgress;

/// Version of the export format.
pub const EXPORT_FORMAT: u32 = 1;

/// What an export or an import moved.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Transfer {
    /// Documents (with their chunks and links).
    pub documents: usize,
    /// Chunks.
    pub chunks: usize,
    /// Links.
    pub links: usize,
    /// Files of the memory folder (memories, session logs).
    pub memories: usize,
    /// Vectors.
    pub vectors: usize,
    /// Import only: memory files already there with the same content.
    pub memories_unchanged: usize,
    /// Import only: what the imported memory files replace, or were
    /// refused replacing (the index pass's [`crate::IndexReport::replacements`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct ChunkRecord {
    heading_path: Vec<String>,
    level: u8,
    start_line: u32,
    end_line: u32,
    text: String,
}

#[derive(Serialize, Deserialize)]
struct DocumentRecord {
    path: String,
    hash: String,
    mtime_ns: i64,
    size: u64,
    /// Absent in files written before it was recorded: such documents are
    /// re-chunked by the next index pass.
    #[serde(default)]
    pipeline: String,
    title: Option<String>,
    tags: Vec<String>,
    domain: String,
    meta: serde_json::Value,
    chunks: Vec<ChunkRecord>,
    links: Vec<cairn_core::Link>,
}

#[derive(Deserialize)]
#[serde(tag = "record", rename_all = "lowercase")]
enum Record {
    Header {
        format: u32,
    },
    Memory {
        path: String,
        text: String,
    },
    Document(Box<DocumentRecord>),
    Vector {
        model: String,
        hash: String,
        vector: Vec<f32>,
    },
}

impl DocumentRecord {
    /// The document as the index writes it.
    fn into_write(self) -> DocWrite {
        let chunks = self
            .chunks
            .into_iter()
            .map(|c| {
                cairn_core::Chunk::new(
                    &self.path,
                    c.heading_path,
                    c.level,
                    c.start_line,
                    c.end_line,
                    c.text,
                )
            })
            .collect();
        DocWrite {
            path: self.path,
            hash: self.hash,
            mtime_ns: self.mtime_ns,
            size: self.size,
            pipeline: self.pipeline,
            title: self.title,
            tags: self.tags,
            domain: self.domain,
            meta: self.meta.to_string(),
            chunks,
            links: self.links,
            source: None,
        }
    }
}

fn io_err(e: std::io::Error) -> String {
    e.to_string()
}

impl Engine {
    /// Writes the index and the memories to `out` as JSON Lines; with
    /// `vectors`, the current model's vectors too.
    pub fn export(&self, out: &mut dyn Write, vectors: bool) -> Result<Transfer> {
        let mut t = Transfer::default();
        let model = self
            .embedder
            .as_ref()
            .map(|e| (e.model_id().to_string(), e.dimension()));
        let line =
            |out: &mut dyn Write, v: &serde_json::Value| -> std::result::Result<(), String> {
                serde_json::to_writer(&mut *out, v).map_err(|e| e.to_string())?;
                out.write_all(b"\n").map_err(io_err)
            };
        let sink = |e: String| Error::Io {
            path: "<export output>".into(),
            source: std::io::Error::other(e),
        };
        line(
            out,
            &json!({
                "record": "header",
                "format": EXPORT_FORMAT,
                "cairn": env!("CARGO_PKG_VERSION"),
                "model": model.as_ref().map(|m| &m.0),
                "dim": model.as_ref().map(|m| m.1),
            }),
        )
        .map_err(sink)?;
        let prefix = self.memory_prefix();
        let dir = self.memory_dir();
        if dir.is_dir() {
            let opts = ScanOptions {
                extensions: vec!["md".into()],
                ignore_rules: false,
                ..ScanOptions::default()
            };
            let (files, _) = scan(&dir, &opts);
            for f in files {
                let read = read_text_noted(&f.path).map_err(|e| Error::Io {
                    path: f.path.clone(),
                    source: std::io::Error::other(e.to_string()),
                })?;
                // Exported as the index read it; the file itself is left as it is.
                if let Some(note) = &read.note {
                    tracing::warn!("{}: exported as read: {note}", f.path.display());
                }
                let text = read.text;
                let rel = crate::paths::relative_path(&self.root, &f.path);
                line(out, &json!({"record": "memory", "path": rel, "text": text})).map_err(sink)?;
                t.memories += 1;
            }
        }
        self.with_snapshot(|snap| {
            snap.for_each_document(&mut |d: DocWrite| {
                if d.path.starts_with(&prefix) {
                    return Ok(());
                }
                t.documents += 1;
                t.chunks += d.chunks.len();
                t.links += d.links.len();
                let rec = DocumentRecord {
                    meta: serde_json::from_str(&d.meta).unwrap_or(json!({})),
                    chunks: d
                        .chunks
                        .into_iter()
                        .map(|c| ChunkRecord {
                            heading_path: c.heading_path,
                            level: c.level,
                            start_line: c.start_line,
                            end_line: c.end_line,
                            text: c.text,
                        })
                        .collect(),
                    links: d.links,
                    path: d.path,
                    hash: d.hash,
                    mtime_ns: d.mtime_ns,
                    size: d.size,
                    pipeline: d.pipeline,
                    title: d.title,
                    tags: d.tags,
                    domain: d.domain,
                };
                let mut v = serde_json::to_value(rec).map_err(|e| e.to_string())?;
                v["record"] = json!("document");
                line(out, &v)
            })?;
            if vectors && let Some((model, _)) = &model {
                snap.for_each_vector(model, &mut |hash: &str, vector: &[f32]| {
                    t.vectors += 1;
                    line(
                        out,
                        &json!({"record": "vector", "model": model, "hash": hash, "vector": vector}),
                    )
                })?;
            }
            Ok(())
        })?;
        out.flush().map_err(|e| sink(e.to_string()))?;
        Ok(t)
    }

    /// Reads an export stream (`source_name` names it in errors): memory
    /// files are written back, documents and vectors go into the index.
    /// Every line is checked first ([`Engine::check_import`]): a bad one
    /// is an [`Error::Import`] naming it, and nothing is written.
    pub fn import(&self, input: &mut dyn BufRead, source_name: &str) -> Result<Transfer> {
        let mut spool = Spool::create(&crate::paths::cairn_dir(&self.root))?;
        self.check_import(input, source_name, &mut spool)?;
        let mut checked = spool.rewind()?;
        self.import_checked(&mut checked, source_name)
    }

    /// The first reading: every line parsed and checked, and copied to
    /// `spool` as it is (so line numbers stay the same).
    fn check_import(
        &self,
        input: &mut dyn BufRead,
        source_name: &str,
        spool: &mut Spool,
    ) -> Result<()> {
        let real_root = self
            .root
            .canonicalize()
            .map_err(crate::error::io(&self.root))?;
        let prefix = self.memory_prefix();
        let mut buf = String::new();
        let mut n = 0usize;
        loop {
            if !next_line(input, &mut buf, &mut n, source_name)? {
                return Ok(());
            }
            spool.write(buf.as_bytes())?;
            if buf.trim().is_empty() {
                continue;
            }
            let bad = |message: String| Error::Import {
                source_name: source_name.to_string(),
                line: n,
                message: format!("{message}; nothing was imported"),
            };
            let rec: Record = serde_json::from_str(&buf).map_err(|e| bad(e.to_string()))?;
            match rec {
                Record::Header { format } if format > EXPORT_FORMAT => {
                    return Err(bad(format!(
                        "export format {format}; this cairn reads up to {EXPORT_FORMAT}"
                    )));
                }
                Record::Memory { path, text } => {
                    let inside = path.strip_prefix(&prefix).is_some_and(is_plain_memory_path)
                        && stays_within(&self.memory_dir(), &self.root.join(&path));
                    if !inside {
                        return Err(bad(format!(
                            "memory path {path:?} is not a markdown file under {prefix} named by a plain id (letters, digits, - and _)"
                        )));
                    }
                    // A tag or entity holding a secret refuses the import.
                    if text.starts_with("---") {
                        let m = crate::vault::parse(&text, "");
                        crate::secrets::names("tag", &m.tags)
                            .and_then(|_| crate::secrets::names("entity", &m.entities))
                            .map_err(|e| bad(format!("memory {path:?}: {e}")))?;
                    }
                }
                Record::Document(d) => {
                    let why = refused_document_path(&d.path).or_else(|| {
                        (!stays_within(&real_root, &real_root.join(&d.path))).then_some(
                            "it resolves outside the project (a symbolic link leading out?)",
                        )
                    });
                    if let Some(why) = why {
                        return Err(bad(format!("document path {:?} refused: {why}", d.path)));
                    }
                }
                Record::Header { .. } | Record::Vector { .. } => {}
            }
        }
    }

    /// The second reading, of a stream [`Engine::check_import`] passed.
    fn import_checked(&self, input: &mut dyn BufRead, source_name: &str) -> Result<Transfer> {
        let mut t = Transfer::default();
        let prefix = self.memory_prefix();
        let batch_docs = self.config.index.batch_files.max(1);
        let mut batch = WriteBatch::default();
        let mut pending_docs = 0usize;
        let flush = |batch: &mut WriteBatch| -> Result<()> {
            if batch.changes.is_empty() && batch.embeddings.is_empty() {
                return Ok(());
            }
            let mut store = sync::lock(&self.store);
            store.write(batch)?;
            batch.changes.clear();
            batch.embeddings.clear();
            Ok(())
        };
        let mut buf = String::new();
        let mut n = 0usize;
        loop {
            if !next_line(input, &mut buf, &mut n, source_name)? {
                break;
            }
            if buf.trim().is_empty() {
                continue;
            }
            let bad = |message: String| Error::Import {
                source_name: source_name.to_string(),
                line: n,
                message,
            };
            // Checked: what fails here is the disk or the index, not the line.
            let rec: Record = serde_json::from_str(&buf).map_err(|e| bad(e.to_string()))?;
            match rec {
                Record::Header { .. } => {}
                Record::Memory { path, text } => {
                    self.import_memory_file(&path, &text, &mut t)?;
                }
                Record::Document(d) => {
                    if d.path.starts_with(&prefix) {
                        continue;
                    }
                    t.documents += 1;
                    t.chunks += d.chunks.len();
                    t.links += d.links.len();
                    batch.changes.push(Change::Upsert((*d).into_write()));
                    pending_docs += 1;
                }
                Record::Vector {
                    model,
                    hash,
                    vector,
                } => {
                    let dim = vector.len();
                    match &batch.model {
                        Some((m, d)) if *m != model || *d != dim => {
                            flush(&mut batch)?;
                            batch.model = Some((model, dim));
                        }
                        None => batch.model = Some((model, dim)),
                        _ => {}
                    }
                    batch.embeddings.push((hash, vector));
                    t.vectors += 1;
                    if batch.embeddings.len() >= 4096 {
                        flush(&mut batch)?;
                    }
                }
            }
            if pending_docs >= batch_docs {
                flush(&mut batch)?;
                pending_docs = 0;
            }
        }
        flush(&mut batch)?;
        // Memory files were written: index them from disk.
        t.replacements = self.index(&[], &NoProgress)?.replacements;
        Ok(t)
    }

    /// Writes an imported memory file (`path` checked to lie in the memory
    /// folder), unless the file there already has this text.
    /// Writes one memory file back, redacted like every stored memory
    /// (secrets in its text, and in a session log, replaced; a tag or
    /// entity holding one was refused by [`Engine::check_import`]).
    fn import_memory_file(&self, path: &str, text: &str, t: &mut Transfer) -> Result<()> {
        let text = cairn_ingest::redact(text);
        let text = text.as_str();
        let target = self.root.join(path);
        if std::fs::read_to_string(&target).is_ok_and(|old| old == text) {
            t.memories_unchanged += 1;
        } else {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            crate::vault::write_atomic(&target, text)?;
            t.memories += 1;
        }
        Ok(())
    }
}

/// Why a document path of an import is refused, if it is: the index keeps
/// paths relative to the project root, `/`-separated, each part a name, so
/// anything else (`/etc/passwd`, `../outside/secret.md`, `C:\x`, `\\host\share`)
/// did not come from an export of a project and would name a place outside.
fn refused_document_path(path: &str) -> Option<&'static str> {
    let bytes = path.as_bytes();
    if path.is_empty() {
        Some("it is empty")
    } else if path.chars().any(char::is_control) {
        Some("it holds a NUL or another control character")
    } else if path.contains('\\') {
        Some("it holds a backslash (a Windows path?)")
    } else if path.starts_with('/') {
        Some("it is absolute")
    } else if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        Some("it starts with a drive (a Windows path)")
    } else if path.split('/').any(|c| c == "..") {
        Some("it climbs out with `..`")
    } else if path.split('/').any(|c| c.is_empty() || c == ".") {
        Some("it has an empty or `.` part")
    } else if !crate::access::is_plain_relative(path) {
        Some("it is not relative to the project root")
    } else {
        None
    }
}

/// `rest` (a memory path less the memory folder's prefix) is `ID.md` or
/// `FOLDER/ID.md` (session logs), each part a plain id as the vault takes.
fn is_plain_memory_path(rest: &str) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let mut parts: Vec<&str> = rest.split('/').collect();
    let Some(file) = parts.pop() else {
        return false;
    };
    file.strip_suffix(".md").is_some_and(plain) && parts.into_iter().all(plain)
}

/// `target` (a path below `base`) resolves, links followed, within `base`:
/// its nearest part that exists lies in the real `base` (or in its nearest
/// existing folder, when `base` is not there yet). A folder swapped for a
/// link to `/etc` fails; what does not exist yet cannot lead anywhere.
fn stays_within(base: &Path, target: &Path) -> bool {
    let real = |p: &Path| {
        p.ancestors()
            .find(|a| a.symlink_metadata().is_ok())
            .and_then(|a| a.canonicalize().ok())
    };
    match (real(base), real(target)) {
        (Some(base), Some(target)) => target.starts_with(base),
        _ => false,
    }
}

/// The import's first reading, kept to be read again: a file in `.cairn/`,
/// removed when dropped.
struct Spool {
    path: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
}

impl Spool {
    fn create(dir: &Path) -> Result<Spool> {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        std::fs::create_dir_all(dir).map_err(crate::error::io(dir))?;
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("import-{}-{seq}.jsonl", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(crate::error::io(&path))?;
        Ok(Spool {
            path,
            file: std::io::BufWriter::new(file),
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(crate::error::io(&self.path))
    }

    /// The spool from its start, for the second reading.
    fn rewind(&mut self) -> Result<std::io::BufReader<&std::fs::File>> {
        let io = crate::error::io(&self.path);
        self.file.flush().map_err(&io)?;
        let mut file = self.file.get_ref();
        file.rewind().map_err(&io)?;
        Ok(std::io::BufReader::new(file))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads the next line of an import into `buf` (cleared first) and counts
/// it in `n` (1-based, for errors); `false` at the end. Both passes of an
/// import read through it.
fn next_line(
    input: &mut dyn BufRead,
    buf: &mut String,
    n: &mut usize,
    source_name: &str,
) -> Result<bool> {
    buf.clear();
    *n += 1;
    let read = input.read_line(buf).map_err(|source| Error::Io {
        path: source_name.into(),
        source,
    })?;
    Ok(read > 0)
}
