//! The index pass's chunk stage: the files the plan found to read are read,
//! hashed and chunked on worker threads ([`Engine::chunk_stream`]) while the
//! calling thread writes what they give, in the plan's order. One file's text
//! becomes chunks and links — docs and memories by headings (with
//! frontmatter, and the links a memory's frontmatter states), code by its
//! syntax; generated code is skipped.

use std::path::Path;
use std::sync::mpsc::sync_channel;

use cairn_core::{Change, Chunk, DocWrite, Link, Relation, content_hash};
use cairn_ingest::{
    ChunkOptions, LeftOut, ReadError, ScannedFile, TEST_DATA_DIRS, chunk_code, chunk_doc,
    doc_links, generated_reason, read_text_noted,
};

use super::plan::Work;
use super::{IndexReport, Noted, Pending, Skipped};
use crate::engine::Engine;
use crate::error::Result;

/// What reading one file of the plan gave.
pub(super) enum Prepared {
    /// It could not be read.
    Unreadable(Skipped),
    /// Left out by the chunker (generated code); the worker's report says why.
    LeftOut,
    /// The content is what the index holds: only its stat data changed.
    Touch(Change),
    /// New or changed content, chunked. A memory new to a shared store
    /// carries its content hash: another machine may have forgotten it in
    /// this very version, which only the store can say.
    Chunked {
        /// The file's chunks, links and stat data.
        pending: Pending,
        /// The hash to check against the store's tombstones.
        check_forgotten: Option<String>,
    },
}

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

/// Runs the chunker on one file: a panic in it (a bug of ours on some input)
/// becomes that file skipped with its reason, and the pass goes on, rather
/// than ending the index run (or the daemon running it) for every file.
fn guarded<T>(path: &Path, chunk: impl FnOnce() -> T) -> std::result::Result<T, Skipped> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(chunk)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!("{}: the chunker failed: {what}", path.display());
        Skipped {
            path: path.to_path_buf(),
            reason: format!("the chunker failed on it (a bug in cairn, please report it): {what}"),
            kind: LeftOut::Failed,
        }
    })
}

impl Engine {
    /// Reads, hashes and chunks `work` on worker threads and hands each
    /// result to `consume` on the calling thread, in `work`'s order; stops at
    /// `consume`'s first error. File `i` goes to worker `i mod n`, each with a
    /// channel of its share of `ahead` results, so the order needs no buffer
    /// and memory stays bounded: the workers chunk the next `ahead` files
    /// while the writer writes a batch (with a channel of 16, a 256-file
    /// batch's write left the worker idle: no gain over one thread).
    /// Returns what the workers add to the report (files the chunker left
    /// out, chunks per language).
    pub(super) fn chunk_stream(
        &self,
        work: &[Work],
        workers: usize,
        ahead: usize,
        mut consume: impl FnMut(Prepared) -> Result<()>,
    ) -> Result<IndexReport> {
        let workers = workers.clamp(1, work.len().max(1));
        let per_worker = ahead.div_ceil(workers).max(1);
        let opts = self.chunk_options();
        let tag = self.pipeline_tag();
        std::thread::scope(|s| {
            let mut inboxes = Vec::with_capacity(workers);
            let mut handles = Vec::with_capacity(workers);
            for k in 0..workers {
                let (tx, rx) = sync_channel(per_worker);
                inboxes.push(rx);
                let (opts, tag) = (&opts, &tag);
                handles.push(s.spawn(move || {
                    let mut local = IndexReport::default();
                    for w in work.iter().skip(k).step_by(workers) {
                        if tx.send(self.prepare(w, opts, tag, &mut local)).is_err() {
                            break; // the writer stopped
                        }
                    }
                    local
                }));
            }
            let mut result = Ok(());
            for i in 0..work.len() {
                // A worker that panicked has dropped its sender.
                let Ok(p) = inboxes[i % workers].recv() else {
                    break;
                };
                if let Err(e) = consume(p) {
                    result = Err(e);
                    break;
                }
            }
            drop(inboxes);
            let mut report = IndexReport::default();
            for h in handles {
                match h.join() {
                    Ok(local) => report.add(local),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            result.map(|()| report)
        })
    }

    /// How many chunk workers a pass runs: one core stays with the writer
    /// (SQLite writes on one thread), and chunking is the smaller part of a
    /// pass (a third of the PowerShell corpus's), so a few suffice.
    pub(super) fn chunk_workers() -> usize {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get().saturating_sub(1))
            .clamp(1, 4)
    }

    /// Reads, hashes and (when its content changed) chunks one file.
    fn prepare(
        &self,
        w: &Work,
        opts: &ChunkOptions,
        tag: &str,
        report: &mut IndexReport,
    ) -> Prepared {
        let text = match read_text_noted(&w.file.path) {
            Ok(d) => {
                if let Some(note) = d.note {
                    tracing::warn!("{}: {note}", w.file.path.display());
                    report.notes.push(Noted {
                        path: w.file.path.clone(),
                        note,
                    });
                }
                d.text
            }
            Err(e) => {
                tracing::warn!("skipped: {e}");
                // The path is the skip's own: a binary file's reason says
                // what it is, an I/O error the error.
                let (kind, reason) = match e {
                    ReadError::Binary { .. } => (
                        LeftOut::Binary,
                        "binary (NUL byte in its first 8 KiB)".to_string(),
                    ),
                    _ => (LeftOut::Unreadable, e.to_string()),
                };
                return Prepared::Unreadable(Skipped {
                    path: w.file.path.clone(),
                    reason,
                    kind,
                });
            }
        };
        let hash = content_hash(text.as_bytes());
        if let Some(old) = &w.old
            && old.pipeline == tag
            && old.hash == hash
        {
            return Prepared::Touch(Change::Touch {
                path: w.rel.clone(),
                mtime_ns: w.file.mtime_ns,
                size: w.file.size,
            });
        }
        let check_forgotten = (w.shared_memory && w.old.is_none()).then(|| hash.clone());
        let chunked = guarded(&w.file.path, || {
            self.chunk_file(&w.rel, &w.file.path, &text, hash, opts, report)
        });
        let doc = match chunked {
            Ok(Some(doc)) => doc,
            Ok(None) => return Prepared::LeftOut,
            Err(skipped) => return Prepared::Unreadable(skipped),
        };
        Prepared::Chunked {
            pending: Pending::new(
                doc,
                &w.file,
                w.domain.clone(),
                w.old.is_none(),
                w.shared_memory.then_some(text),
            ),
            check_forgotten,
        }
    }

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
        if let Some((kind, reason)) = plain_text_data(rel) {
            tracing::info!("skipped {rel}: {reason}");
            report.skipped.push(Skipped {
                path: abs.to_path_buf(),
                reason: reason.to_string(),
                kind,
            });
            return None;
        }
        let (chunks, mut links, title, tags, meta) = if self.kind_of(rel) != cairn_core::Kind::Code
        {
            // Docs and memories (by extension, as `Kind` classifies them) are
            // chunked by headings; every other indexed file is code.
            let md = chunk_doc(rel, text, opts);
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
                        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
                        links.extend(memory_links(&json, md.chunks.len(), dir));
                    }
                    (f.title, f.tags, meta)
                }
                None => Default::default(),
            };
            (md.chunks, links, title, tags, meta)
        } else {
            // A notebook's outputs (base64 images) are long lines it is
            // not minified by; its cells are read without them.
            if !cairn_ingest::is_notebook(rel)
                && let Some(reason) = generated_reason(rel, text)
            {
                tracing::info!("skipped {rel}: {reason}");
                report.skipped.push(Skipped {
                    path: abs.to_path_buf(),
                    reason: reason.to_string(),
                    kind: if reason.starts_with("minified") {
                        LeftOut::Minified
                    } else {
                        LeftOut::Generated
                    },
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
        links.extend((0..chunks.len()).map(|i| Link::from_chunk(i, rel, Relation::In)));
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

/// Why a plain-text file is data rather than a doc, if it is: `.txt` under
/// a test or fixture folder is a test's input or expected output (Python-
/// Markdown's 104 test cases took first places from its code: code-QA's
/// tuning half 0.8565 → 0.8462 with them, Python-Markdown 0.9733 →
/// 0.9300), and a `.egg-info` folder is generated (`SOURCES.txt`).
fn plain_text_data(rel: &str) -> Option<(LeftOut, &'static str)> {
    let lower = rel.to_ascii_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    let file = parts.pop()?;
    if !file.ends_with(".txt") {
        return None;
    }
    if parts.iter().any(|d| d.ends_with(".egg-info")) {
        return Some((LeftOut::Generated, "generated package metadata (.egg-info)"));
    }
    parts.iter().any(|d| TEST_DATA_DIRS.contains(d)).then_some((
        LeftOut::TestData,
        "plain text in a test or fixture folder: test data, not a doc",
    ))
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
/// chunk), its `relations` (`[{from, to, rel}]`, written by `relate`) and
/// the memories it `supersedes` (an edge to each one's file in `dir`, the
/// memory folder, so the graph shows the chain).
fn memory_links(meta: &serde_json::Value, chunks: usize, dir: &str) -> Vec<Link> {
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
            out.push(Link::from_chunk(i, e.clone(), Relation::Mentions));
        }
    }
    if let Some(name) = meta.get("entity").and_then(|v| v.as_str()) {
        for i in 0..chunks {
            out.push(Link::from_chunk(i, name, Relation::Defines));
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
        out.push(Link::between(from, to, Relation::named(rel)));
        if chunks > 0 {
            out.push(Link::from_chunk(0, from, Relation::Mentions));
            out.push(Link::from_chunk(0, to, Relation::Mentions));
        }
    }
    if chunks > 0 {
        for old in names(meta.get("supersedes")) {
            // An id is a file name in the memory folder, never a path.
            if old.is_empty() || old.contains(['/', '\\']) || old.starts_with('.') {
                continue;
            }
            let file = if dir.is_empty() {
                format!("{old}.md")
            } else {
                format!("{dir}/{old}.md")
            };
            out.push(Link::from_chunk(0, file, Relation::named("supersedes")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_chunker_skips_its_file_and_says_why() {
        let path = Path::new("/p/src/odd.h");
        let got = guarded(path, || -> usize {
            panic!("index out of bounds: the len is 4")
        });
        let skipped = got.expect_err("the panic is caught");
        assert_eq!(skipped.path, path);
        assert!(
            skipped.reason.contains("the chunker failed"),
            "{}",
            skipped.reason
        );
        assert!(
            skipped.reason.contains("the len is 4"),
            "{}",
            skipped.reason
        );
        assert_eq!(guarded(path, || 7).ok(), Some(7));
    }
}
