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
//! Import writes memory files first (atomically, logged as `import`), then
//! documents and vectors in transactions of `[index] batch_files` documents.
//! Documents of the memory folder are skipped: the memory files are indexed
//! from disk instead, so the index always agrees with them.

use std::io::{BufRead, Write};

use cairn_core::{Change, DocWrite, WriteBatch};
use cairn_ingest::{ScanOptions, read_text, scan};
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
            };
            let (files, _) = scan(&dir, &opts);
            for f in files {
                let text = read_text(&f.path).map_err(|e| Error::Io {
                    path: f.path.clone(),
                    source: std::io::Error::other(e.to_string()),
                })?;
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
    pub fn import(&self, input: &mut dyn BufRead, source_name: &str) -> Result<Transfer> {
        let mut t = Transfer::default();
        let prefix = self.memory_prefix();
        let batch_docs = self.config.index.batch_files.max(1);
        let mut batch = WriteBatch::default();
        let mut pending_docs = 0usize;
        let flush = |batch: &mut WriteBatch| -> Result<()> {
            if batch.changes.is_empty() && batch.embeddings.is_empty() {
                return Ok(());
            }
            let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
            store.write(batch)?;
            batch.changes.clear();
            batch.embeddings.clear();
            Ok(())
        };
        let mut buf = String::new();
        let mut n = 0usize;
        loop {
            buf.clear();
            n += 1;
            let read = input.read_line(&mut buf).map_err(|source| Error::Io {
                path: source_name.into(),
                source,
            })?;
            if read == 0 {
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
            let rec: Record = serde_json::from_str(&buf).map_err(|e| bad(e.to_string()))?;
            match rec {
                Record::Header { format } => {
                    if format > EXPORT_FORMAT {
                        return Err(bad(format!(
                            "export format {format}; this cairn reads up to {EXPORT_FORMAT}"
                        )));
                    }
                }
                Record::Memory { path, text } => {
                    let inside = path.starts_with(&prefix)
                        && path.ends_with(".md")
                        && !path.split('/').any(|p| p == ".." || p.is_empty());
                    if !inside {
                        return Err(bad(format!(
                            "memory path {path:?} is not a markdown file under {prefix}"
                        )));
                    }
                    self.import_memory_file(&path, &text, &mut t)
                        .map_err(|e| bad(e.to_string()))?;
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
        self.index(&[], &NoProgress)?;
        Ok(t)
    }

    /// Writes an imported memory file (`path` checked to lie in the memory
    /// folder), unless the file there already has this text.
    /// Writes one memory file back, redacted like every stored memory: a
    /// tag or entity holding a secret refuses it; secrets in its text (and
    /// in a session log) are replaced.
    fn import_memory_file(&self, path: &str, text: &str, t: &mut Transfer) -> Result<()> {
        if text.starts_with("---") {
            let m = crate::vault::parse(text, "");
            crate::secrets::names("tag", &m.tags)?;
            crate::secrets::names("entity", &m.entities)?;
        }
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
