//! The index pass's chunk stage: one file's text into chunks and links —
//! docs and memories by headings (with frontmatter, and the links a
//! memory's frontmatter states), code by its syntax; generated code is
//! skipped.

use std::path::Path;

use cairn_core::{Chunk, DocWrite, Link};
use cairn_ingest::{
    ChunkOptions, ScannedFile, chunk_code, chunk_markdown, doc_links, generated_reason,
};

use super::{IndexReport, Pending, Skipped};
use crate::engine::Engine;

impl Pending {
    /// A chunked file with the scan's stat data, its domain and, for a
    /// memory on a shared store, its text (so other machines can fetch it).
    pub(super) fn new(
        doc: DocWrite,
        file: &ScannedFile,
        domain: String,
        is_new: bool,
        source: Option<String>,
    ) -> Pending {
        Pending {
            is_new,
            doc: DocWrite {
                mtime_ns: file.mtime_ns,
                size: file.size,
                domain,
                source,
                ..doc
            },
        }
    }
}

impl Engine {
    /// The chunker's options from `[chunk]`.
    /// What a document records as the pipeline that chunked it: the
    /// chunker's version and the `[chunk]` settings, so that changing
    /// `max_chars` in `cairn.toml` re-chunks every file on the next pass.
    pub(super) fn pipeline_tag(&self) -> String {
        let c = &self.config.chunk;
        format!(
            "{}/{}/{}/{}",
            super::PIPELINE_VERSION,
            c.max_chars,
            c.overlap_lines,
            c.min_chars
        )
    }

    pub(super) fn chunk_options(&self) -> ChunkOptions {
        ChunkOptions {
            max_chars: self.config.chunk.max_chars,
            overlap_lines: self.config.chunk.overlap_lines,
            min_chars: self.config.chunk.min_chars,
        }
    }

    /// One file's chunks and links, without stat data or domain; `None` (and
    /// a skip in the report) for a generated or minified code file.
    pub(super) fn chunk_file(
        &self,
        rel: &str,
        abs: &Path,
        text: &str,
        hash: String,
        opts: &ChunkOptions,
        report: &mut IndexReport,
    ) -> Option<DocWrite> {
        let (chunks, mut links, title, tags, meta) = if self.kind_of(rel) != cairn_core::Kind::Code
        {
            // Docs and memories (by extension, as `Kind` classifies them) are
            // chunked by headings; every other indexed file is code.
            let md = chunk_markdown(rel, text, opts);
            if let Some(e) = &md.frontmatter_error {
                tracing::warn!("{}: invalid frontmatter ignored: {e}", abs.display());
            }
            let mut links = doc_links(rel, &md.chunks);
            let (title, tags, meta) = match md.frontmatter {
                Some(f) => {
                    let meta = serde_json::to_string(&f.raw).unwrap_or_default();
                    let memory = rel.starts_with(&self.memory_prefix());
                    if memory {
                        // A field of the wrong shape is read as absent (and
                        // named here); the memory keeps every other field.
                        let stem = abs.file_stem().map(|s| s.to_string_lossy());
                        let (_, dropped) = crate::vault::memory_from_yaml_checked(
                            &f.raw,
                            "",
                            stem.as_deref().unwrap_or(""),
                        );
                        crate::vault::warn_dropped(abs, &dropped);
                    } else {
                        for d in &f.dropped {
                            tracing::warn!("{}: frontmatter field ignored: {d}", abs.display());
                        }
                    }
                    if memory && let Ok(json) = serde_json::from_str::<serde_json::Value>(&meta) {
                        links.extend(memory_links(&json, md.chunks.len()));
                    }
                    (f.title, f.tags, meta)
                }
                None => Default::default(),
            };
            (md.chunks, links, title, tags, meta)
        } else {
            if let Some(reason) = generated_reason(rel, text) {
                tracing::info!("skipped {rel}: {reason}");
                report.skipped.push(Skipped {
                    path: abs.to_path_buf(),
                    reason: reason.to_string(),
                });
                return None;
            }
            let code = chunk_code(rel, text, opts);
            *report
                .languages
                .entry(code.language.to_string())
                .or_default() += code.chunks.len();
            (code.chunks, code.links, None, Vec::new(), String::new())
        };
        let chunks = cap_chunks(rel, chunks);
        // Every chunk sits in its file: chunks of one file are two hops apart,
        // and a mention of the path reaches them.
        links.extend((0..chunks.len()).map(|i| Link::from_chunk(i, rel, "in")));
        Some(DocWrite {
            path: rel.to_string(),
            hash,
            mtime_ns: 0,
            size: 0,
            pipeline: self.pipeline_tag(),
            title,
            tags,
            domain: String::new(),
            meta,
            chunks,
            links,
            source: None,
        })
    }
}

/// The most text one chunk keeps. The chunkers cut at lines, so one huge
/// line (minified or generated text, a 20 MB one-line file) would be one
/// chunk of all of it: stored, BM25-indexed and shown whole. Beyond this its
/// start stands for it.
const MAX_CHUNK_BYTES: usize = 64 * 1024;

/// Cuts chunks longer than [`MAX_CHUNK_BYTES`] (at a character boundary)
/// and says so; the chunk keeps its lines, so `expand` still shows them.
fn cap_chunks(rel: &str, chunks: Vec<Chunk>) -> Vec<Chunk> {
    chunks
        .into_iter()
        .map(|c| {
            if c.text.len() <= MAX_CHUNK_BYTES {
                return c;
            }
            let mut end = MAX_CHUNK_BYTES;
            while !c.text.is_char_boundary(end) {
                end -= 1;
            }
            tracing::warn!(
                "{rel}:{}-{}: a chunk of {} bytes cut to its first {end} (one line too long to split)",
                c.start_line,
                c.end_line,
                c.text.len()
            );
            Chunk::new(
                rel,
                c.heading_path,
                c.level,
                c.start_line,
                c.end_line,
                c.text[..end].to_string(),
            )
        })
        .collect()
}

/// Links a memory's frontmatter states: its `entities` (mentioned by every
/// chunk) and its `relations` (`[{from, to, rel}]`, written by `relate`).
fn memory_links(meta: &serde_json::Value, chunks: usize) -> Vec<Link> {
    let mut out = Vec::new();
    let names = |v: Option<&serde_json::Value>| -> Vec<String> {
        v.and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    for e in names(meta.get("entities")) {
        for i in 0..chunks {
            out.push(Link::from_chunk(i, e.clone(), "mentions"));
        }
    }
    if let Some(name) = meta.get("entity").and_then(|v| v.as_str()) {
        for i in 0..chunks {
            out.push(Link::from_chunk(i, name, "defines"));
        }
    }
    for r in meta
        .get("relations")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let (Some(from), Some(to)) = (
            r.get("from").and_then(|v| v.as_str()),
            r.get("to").and_then(|v| v.as_str()),
        ) else {
            continue;
        };
        let rel = r
            .get("rel")
            .and_then(|v| v.as_str())
            .unwrap_or("related_to");
        out.push(Link::between(from, to, rel));
        if chunks > 0 {
            out.push(Link::from_chunk(0, from, "mentions"));
            out.push(Link::from_chunk(0, to, "mentions"));
        }
    }
    out
}
