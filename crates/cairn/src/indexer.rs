//! `cairn index`: scan, diff against the manifest, chunk, embed what the cache
//! lacks, and write in one transaction per batch of files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_core::{Change, DocWrite, WriteBatch};
use cairn_core::{Chunk, Embedder, Link, content_hash};
use cairn_ingest::{
    ChunkOptions, ScanOptions, chunk_code, chunk_markdown, doc_links, generated_reason, read_text,
    scan,
};
use cairn_search::domain_of;
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::paths::relative_path;
use crate::progress::Progress;

/// A file left out of the index, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: String,
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
    /// Files that could not be indexed (or were left out: generated code).
    pub skipped: Vec<Skipped>,
    /// Code chunks written per language (`rust`, `python`, …, `text`).
    pub languages: std::collections::BTreeMap<String, usize>,
    /// Memory files fetched from a shared store (written elsewhere or newer there).
    pub memories_pulled: usize,
    /// Local memory files removed because another machine forgot them.
    pub memories_dropped: usize,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// Version of everything that turns a file into stored chunks (chunker rules,
/// embed text). An index written by another version is re-chunked in full on
/// the next run; the embedding cache still skips every text already embedded.
const PIPELINE_VERSION: &str = "4";

struct Pending {
    doc: DocWrite,
    is_new: bool,
}

/// How to run an index pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct IndexOptions {
    /// Write chunks (and BM25) first and leave embedding to a later
    /// [`Engine::embed_pending`]: `serve --build-index` answers BM25 searches
    /// while the vectors are computed.
    pub defer_embedding: bool,
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

impl Engine {
    /// One file's chunks and links, without stat data or domain; `None` (and
    /// a skip in the report) for a generated or minified code file.
    fn chunk_file(
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
                    if rel.starts_with(&self.memory_prefix())
                        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&meta)
                    {
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
        // Every chunk sits in its file: chunks of one file are two hops apart,
        // and a mention of the path reaches them.
        links.extend((0..chunks.len()).map(|i| Link::from_chunk(i, rel, "in")));
        Some(DocWrite {
            path: rel.to_string(),
            hash,
            mtime_ns: 0,
            size: 0,
            title,
            tags,
            domain: String::new(),
            meta,
            chunks,
            links,
            source: None,
        })
    }

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
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let manifest = store.manifest()?;
        let same_pipeline = store.meta("pipeline_version")?.as_deref() == Some(PIPELINE_VERSION);
        if !same_pipeline && !manifest.is_empty() {
            tracing::info!("index written by another chunker version: re-chunking every file");
        }
        let scan_opts = ScanOptions {
            extensions: self.config.index.extensions.clone(),
            ignore_rules: true,
        };
        // The memory folder is always indexed (hidden or ignored or not),
        // with its own options: markdown only, no ignore rules.
        let memory_dir = self.memory_dir();
        let memory_opts = ScanOptions {
            extensions: vec!["md".into()],
            ignore_rules: false,
        };
        // On a shared store (a server other machines write to) the memory
        // folder is synced through the store, so it must exist to receive.
        let shared = store.shared();
        if shared {
            std::fs::create_dir_all(&memory_dir).map_err(|source| Error::Io {
                path: memory_dir.clone(),
                source,
            })?;
        }
        let mem_prefix = self.memory_prefix();
        let synced = if shared {
            self.synced_memories()
        } else {
            HashSet::new()
        };
        let mut pulls: Vec<(String, i64)> = Vec::new();
        let mut dropped: Vec<String> = Vec::new();
        let only_memories = roots.is_empty();
        let mut roots: Vec<(PathBuf, &ScanOptions)> =
            roots.iter().map(|r| (r.clone(), &scan_opts)).collect();
        if memory_dir.is_dir() {
            roots.push((memory_dir, &memory_opts));
        }
        let chunk_opts = ChunkOptions {
            max_chars: self.config.chunk.max_chars,
            overlap_lines: self.config.chunk.overlap_lines,
            min_chars: self.config.chunk.min_chars,
        };

        // 1. Scan every root.
        progress.stage("scanning", 0);
        let mut found = Vec::new();
        let mut prefixes = Vec::new();
        for (root, opts) in &roots {
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
            }));
            for f in files {
                let rel = relative_path(&self.root, &f.path);
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
        found.sort_by(|a, b| a.1.cmp(&b.1));
        found.dedup_by(|a, b| a.1 == b.1);
        report.files_seen = found.len();

        // 2. Diff against the manifest; chunk what is new or changed.
        progress.stage("chunking", found.len() as u64);
        let mut seen: HashSet<String> = HashSet::with_capacity(found.len());
        let mut touches = Vec::new();
        let mut pending: Vec<Pending> = Vec::new();
        for (file, rel, domain) in found {
            seen.insert(rel.clone());
            progress.inc(1);
            let old = manifest.get(&rel);
            if let Some(old) = old
                && same_pipeline
                && old.size == file.size
                && old.mtime_ns == file.mtime_ns
                && file.mtime_ns != 0
            {
                report.files_unchanged += 1;
                continue;
            }
            let shared_memory = shared && rel.starts_with(&mem_prefix);
            // Another machine wrote a newer version: fetch it.
            if shared_memory
                && let Some(old) = old
                && file.mtime_ns < old.mtime_ns
            {
                pulls.push((rel, old.mtime_ns));
                continue;
            }
            let text = match read_text(&file.path) {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!("skipped: {e}");
                    report.skipped.push(Skipped {
                        path: file.path.clone(),
                        reason: e.to_string(),
                    });
                    continue;
                }
            };
            let hash = content_hash(text.as_bytes());
            // Not in the store, and forgotten there in this very version:
            // another machine forgot it, so this copy goes too.
            if shared_memory
                && old.is_none()
                && store.meta(&format!("{FORGOTTEN}{rel}"))?.as_deref() == Some(hash.as_str())
            {
                dropped.push(rel);
                continue;
            }
            if let Some(old) = old
                && same_pipeline
                && old.hash == hash
            {
                report.files_unchanged += 1;
                touches.push(Change::Touch {
                    path: rel,
                    mtime_ns: file.mtime_ns,
                    size: file.size,
                });
                continue;
            }
            let Some(doc) =
                self.chunk_file(&rel, &file.path, &text, hash, &chunk_opts, &mut report)
            else {
                continue;
            };
            pending.push(Pending {
                is_new: old.is_none(),
                doc: DocWrite {
                    mtime_ns: file.mtime_ns,
                    size: file.size,
                    domain,
                    source: shared_memory.then_some(text),
                    ..doc
                },
            });
        }
        progress.finish();

        let mut deletes: Vec<Change> = Vec::new();
        for (path, old) in &manifest {
            if seen.contains(path) || !prefixes.iter().any(|pre| under(path, pre)) {
                continue;
            }
            if shared && path.starts_with(&mem_prefix) {
                if !synced.contains(path) {
                    // Never here: another machine's memory, to fetch.
                    pulls.push((path.clone(), old.mtime_ns));
                    continue;
                }
                // Here before and gone now: forgotten on this machine. The
                // tombstone tells the other machines to drop their copies.
                store.set_meta(&format!("{FORGOTTEN}{path}"), &old.hash)?;
            }
            deletes.push(Change::Delete(path.clone()));
        }
        report.files_deleted = deletes.len();
        let deleted: Vec<String> = deletes
            .iter()
            .filter_map(|c| match c {
                Change::Delete(p) => Some(p.clone()),
                _ => None,
            })
            .collect();

        // 3. Embed and write, one transaction per batch of files.
        let total_chunks: usize = pending.iter().map(|p| p.doc.chunks.len()).sum();
        let embedder = self.embedder.clone().filter(|_| !options.defer_embedding);
        if embedder.is_some() && total_chunks > 0 {
            progress.stage("embedding", total_chunks as u64);
        }
        let mut first = Some(deletes.into_iter().chain(touches).collect::<Vec<_>>());
        let batch_files = self.config.index.batch_files.max(1);
        let mut batches = pending.chunks(batch_files).peekable();
        if batches.peek().is_none() {
            let changes = first.take().unwrap_or_default();
            if !changes.is_empty() {
                store.write(&WriteBatch {
                    changes,
                    ..Default::default()
                })?;
            }
        }
        for batch in batches {
            let chunks: Vec<&Chunk> = batch.iter().flat_map(|p| &p.doc.chunks).collect();
            let mut write = WriteBatch {
                changes: first.take().unwrap_or_default(),
                ..Default::default()
            };
            if let Some(embedder) = &embedder {
                let (vectors, embedded, hits) =
                    embed_missing(&**store, embedder.as_ref(), &chunks, progress)?;
                report.chunks_embedded += embedded;
                report.embed_cache_hits += hits;
                write.model = Some((embedder.model_id().to_string(), embedder.dimension()));
                write.embeddings = vectors;
            }
            for p in batch {
                report.chunks_written += p.doc.chunks.len();
                if p.is_new {
                    report.files_added += 1;
                } else {
                    report.files_changed += 1;
                }
                write.changes.push(Change::Upsert(p.doc.clone()));
            }
            store.write(&write)?;
        }
        if embedder.is_some() && total_chunks > 0 {
            progress.finish();
        }

        if shared {
            let mut here: HashSet<String> = seen
                .iter()
                .filter(|p| p.starts_with(&mem_prefix))
                .cloned()
                .collect();
            for (path, mtime_ns) in &pulls {
                // A row written without its text (an older cairn, an import)
                // has nothing to fetch.
                if let Some(text) = store.source(path)? {
                    self.write_pulled(path, &text, *mtime_ns)?;
                    here.insert(path.clone());
                    report.memories_pulled += 1;
                }
            }
            for path in &dropped {
                let abs = self.root.join(path);
                if let Err(source) = std::fs::remove_file(&abs)
                    && source.kind() != std::io::ErrorKind::NotFound
                {
                    return Err(Error::Io { path: abs, source });
                }
                here.remove(path);
                report.memories_dropped += 1;
            }
            for p in &deleted {
                here.remove(p);
            }
            self.save_synced_memories(&here)?;
        }

        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        store.set_meta("last_indexed", &now.to_string())?;
        // A pass over the memory folder alone re-chunked only memories: the
        // rest of an index written by another pipeline still needs its turn.
        // An index of memories alone is wholly re-chunked by a memory pass:
        // without this, a project that only ever stored memories re-chunked
        // every memory file on every `remember`.
        let memories_only_index = manifest.keys().all(|p| p.starts_with(&mem_prefix));
        if !only_memories || memories_only_index {
            store.set_meta("pipeline_version", PIPELINE_VERSION)?;
        }
        if report.files_added + report.files_changed + report.files_deleted > 100 {
            store.optimize()?;
        }
        drop(store);

        // 4. Chunks still without a vector of this model (a model change, an
        //    earlier run without a model, a deferred pass): embed them now.
        if !options.defer_embedding {
            report.chunks_embedded += self.embed_pending(progress)?;
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Embeds every chunk that has no vector of the current model yet, in
    /// batches of 512, each written in its own transaction; returns how many
    /// were embedded. The index stays writable meanwhile (the store is locked
    /// only to read a batch and to write its vectors), and one backfill runs
    /// at a time: a second caller waits, then finds nothing left.
    pub fn embed_pending(&self, progress: &dyn Progress) -> Result<usize> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(0);
        };
        let _one = self.embed_lock.lock().unwrap_or_else(|p| p.into_inner());
        let model = embedder.model_id().to_string();
        let mut done = 0;
        let mut staged = false;
        let _active = ActiveFlag(&self.embedding_active);
        loop {
            let todo = self
                .store
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .unembedded(&model, 512)?;
            if todo.is_empty() {
                break;
            }
            if !staged {
                let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
                let total = store.unembedded_count(&model)?;
                drop(store);
                progress.stage("embedding", total);
                self.embedding_active.store(true, Ordering::SeqCst);
                staged = true;
            }
            let texts: Vec<String> = todo.iter().map(|(_, c)| c.embed_text()).collect();
            let mut embeddings = Vec::with_capacity(todo.len());
            // Groups of 64 keep the progress moving; each group is still
            // packed and spread over the worker threads by the embedder.
            for (group, chunks) in texts.chunks(64).zip(todo.chunks(64)) {
                let refs: Vec<&str> = group.iter().map(String::as_str).collect();
                let vecs = embed_exactly(embedder.as_ref(), &refs)?;
                progress.inc(group.len() as u64);
                embeddings.extend(chunks.iter().map(|(h, _)| h.clone()).zip(vecs));
            }
            done += todo.len();
            self.store
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .write(&WriteBatch {
                    changes: vec![],
                    model: Some((model.clone(), embedder.dimension())),
                    embeddings,
                })?;
        }
        if staged {
            progress.finish();
        }
        self.store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .index_vectors(embedder.dimension())?;
        Ok(done)
    }
}

/// Metadata key prefix of a memory forgotten on a shared store; the value is
/// the hash of the version forgotten.
const FORGOTTEN: &str = "forgotten:";

impl Engine {
    /// The machine-local list of memory files this folder held after the
    /// last pass against a shared store (`.cairn/synced-memories`): a file on
    /// the list and gone now was forgotten here; a stored memory never on
    /// it is another machine's, to fetch. Missing or unreadable: empty, which
    /// fetches rather than deletes.
    fn synced_memories(&self) -> HashSet<String> {
        std::fs::read_to_string(self.synced_path())
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    fn save_synced_memories(&self, paths: &HashSet<String>) -> Result<()> {
        let mut list: Vec<&String> = paths.iter().collect();
        list.sort();
        let mut text = String::with_capacity(list.len() * 40);
        for p in list {
            text.push_str(p);
            text.push('\n');
        }
        crate::vault::write_atomic(&self.synced_path(), &text)
    }

    fn synced_path(&self) -> PathBuf {
        self.root.join(".cairn").join("synced-memories")
    }

    /// Writes a memory fetched from the shared store, stamped with the
    /// writer's modification time so the next pass sees it unchanged.
    fn write_pulled(&self, rel: &str, text: &str, mtime_ns: i64) -> Result<()> {
        let abs = self.root.join(rel);
        crate::vault::write_atomic(&abs, text)?;
        let when = if mtime_ns >= 0 {
            std::time::UNIX_EPOCH + std::time::Duration::from_nanos(mtime_ns as u64)
        } else {
            std::time::UNIX_EPOCH
        };
        std::fs::File::options()
            .write(true)
            .open(&abs)
            .and_then(|f| f.set_modified(when))
            .map_err(|source| Error::Io { path: abs, source })
    }
}

/// Clears the "embedding in progress" flag however the backfill ends.
struct ActiveFlag<'a>(&'a AtomicBool);

impl Drop for ActiveFlag<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Whether `path` lies under the root `prefix` ("" is the project root itself).
fn under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|r| r.starts_with('/'))
}

/// One vector per text, or an error: a short answer would leave chunks
/// unembedded (and the backfill loop retrying them forever).
fn embed_exactly(embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
    let vecs = embedder.embed(texts)?;
    if vecs.len() != texts.len() {
        return Err(cairn_core::EmbedError::new(format!(
            "{} returned {} vectors for {} texts",
            embedder.model_id(),
            vecs.len(),
            texts.len()
        ))
        .into());
    }
    Ok(vecs)
}

/// New vectors by embed-text hash, texts embedded, cache hits.
type Embedded = (Vec<(String, Vec<f32>)>, usize, usize);

/// Vectors for the chunks whose embed text has none in the cache. Each
/// distinct text is embedded once. Returns (new vectors, texts embedded, cache hits).
fn embed_missing(
    store: &dyn cairn_core::IndexWriter,
    embedder: &dyn Embedder,
    chunks: &[&Chunk],
    progress: &dyn Progress,
) -> Result<Embedded> {
    let texts: Vec<String> = chunks.iter().map(|c| c.embed_text()).collect();
    let hashes: Vec<String> = texts.iter().map(|t| content_hash(t.as_bytes())).collect();
    let refs: Vec<&str> = hashes.iter().map(String::as_str).collect();
    let cached = store.cached_hashes(embedder.model_id(), &refs)?;
    let mut todo: Vec<(String, &str)> = Vec::new();
    let mut queued: HashSet<&str> = HashSet::new();
    let mut hits = 0;
    for (h, t) in hashes.iter().zip(&texts) {
        if cached.contains(h) || !queued.insert(h.as_str()) {
            hits += 1;
            progress.inc(1);
        } else {
            todo.push((h.clone(), t.as_str()));
        }
    }
    let mut out = Vec::with_capacity(todo.len());
    // Small groups keep the progress bar moving; each group is still packed
    // and spread over the worker threads by the embedder.
    for group in todo.chunks(64) {
        let texts: Vec<&str> = group.iter().map(|(_, t)| *t).collect();
        let vecs = embed_exactly(embedder, &texts)?;
        progress.inc(group.len() as u64);
        out.extend(group.iter().map(|(h, _)| h.clone()).zip(vecs));
    }
    Ok((out, todo.len(), hits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert!(under("docs/a.md", "docs") && !under("docs2/a.md", "docs") && under("x.md", ""));
    }
}
