//! Watch mode: file events under the indexed roots, debounced, become one
//! incremental index pass per burst while the server keeps answering from the
//! last committed state.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cairn::NoProgress;
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::error::{Error, Result};
use crate::server::Shared;

/// Default debounce in milliseconds: quiet time after the last event of a
/// path (`--debounce-ms` of `serve`, `daemon`, `ui` and `watch`).
pub const DEFAULT_DEBOUNCE_MS: u64 = 1500;

/// [`DEFAULT_DEBOUNCE_MS`] as a duration.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(DEFAULT_DEBOUNCE_MS);

/// After a batch arrives, further batches within this gap join it.
const COALESCE: Duration = Duration::from_millis(300);

/// A running watcher; dropping it stops watching (an index pass in flight
/// finishes first, on its own thread).
pub struct Watch {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    _thread: std::thread::JoinHandle<()>,
}

/// Whether an event on `path` can change the index: inside the project and
/// either in the memory folder (always indexed) or outside hidden folders and
/// files (`.cairn/` holds the index itself, `.git/` churns).
fn relevant(root: &Path, memory: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    if rel.starts_with(memory) {
        return path.extension().is_some_and(|e| e == "md");
    }
    // An environment template (`.env.example`) is the one hidden file
    // indexed outside `.github`.
    let env_template = rel
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(cairn::is_env_template);
    let mut parts: Vec<Component<'_>> = rel.components().collect();
    if env_template {
        parts.pop();
    }
    !parts.iter().any(|c| match c {
        Component::Normal(s) => s.to_string_lossy().starts_with('.'),
        _ => false,
    })
}

/// Starts watching the engine's roots; index passes run on a thread of their own.
pub fn start(shared: Arc<Shared>, debounce: Duration) -> Result<Watch> {
    let (tx, rx) = mpsc::channel::<DebounceEventResult>();
    // A fine tick: events leave the debouncer at most 100 ms after their
    // quiet time, not a quarter of the debounce later.
    let tick = Some(Duration::from_millis(100).min(debounce));
    let mut debouncer = new_debouncer(debounce, tick, move |r: DebounceEventResult| {
        let _ = tx.send(r);
    })
    .map_err(|source| Error::Watch {
        path: shared.engine.root().to_path_buf(),
        source,
    })?;
    let roots = shared.engine.default_roots();
    for r in &roots {
        debouncer
            .watch(r, RecursiveMode::Recursive)
            .map_err(|source| Error::Watch {
                path: r.clone(),
                source,
            })?;
    }
    shared.watching.store(true, Ordering::SeqCst);
    let worker = shared.clone();
    let thread = std::thread::Builder::new()
        .name("cairn-watch".into())
        .spawn(move || run(worker, rx, roots))
        .map_err(|source| Error::Io {
            path: shared.engine.root().to_path_buf(),
            source,
        })?;
    tracing::info!(
        "watching {} (debounce {} ms)",
        shared.engine.root().display(),
        debounce.as_millis()
    );
    Ok(Watch {
        _debouncer: debouncer,
        _thread: thread,
    })
}

fn run(shared: Arc<Shared>, rx: mpsc::Receiver<DebounceEventResult>, roots: Vec<PathBuf>) {
    let root = shared
        .engine
        .root()
        .canonicalize()
        .unwrap_or_else(|_| shared.engine.root().to_path_buf());
    let memory = PathBuf::from(shared.engine.memory_prefix().trim_end_matches('/'));
    while let Ok(first) = rx.recv() {
        let mut changed = std::collections::BTreeSet::new();
        let mut collect = |r: DebounceEventResult| match r {
            Ok(events) => {
                for e in events {
                    for p in &e.event.paths {
                        if relevant(&root, &memory, p) || relevant(shared.engine.root(), &memory, p)
                        {
                            changed.insert(p.clone());
                        }
                    }
                }
            }
            Err(errors) => {
                for e in errors {
                    tracing::warn!("watch: {e}");
                }
            }
        };
        collect(first);
        // A burst spread over several debounce ticks is still one pass.
        while let Ok(more) = rx.recv_timeout(COALESCE) {
            collect(more);
        }
        if changed.is_empty() {
            continue;
        }
        // Backpressure: a burst of changes waits while the embedding queue
        // is past 80 % full, and the log says so.
        match shared.engine.admit_write() {
            Ok(Some(note)) => tracing::warn!("watch: {note}"),
            Ok(None) => {}
            Err(e) => tracing::debug!("watch: embedding queue unknown: {e}"),
        }
        let started = Instant::now();
        shared.indexing.store(true, Ordering::SeqCst);
        let result = shared.engine.index(&roots, &NoProgress);
        shared.indexing.store(false, Ordering::SeqCst);
        match result {
            // A pass that found nothing new (the events were already covered
            // by the previous pass, or only touched ignored files) is noise.
            Ok(r) if r.files_added + r.files_changed + r.files_deleted == 0 => tracing::debug!(
                "watch: {} file events, nothing to re-index ({:.2} s)",
                changed.len(),
                started.elapsed().as_secs_f64()
            ),
            Ok(r) => tracing::info!(
                "watch: one index pass for {} file events: {} added, {} changed, {} deleted, {} embedded in {:.2} s",
                changed.len(),
                r.files_added,
                r.files_changed,
                r.files_deleted,
                r.chunks_embedded,
                started.elapsed().as_secs_f64()
            ),
            Err(e) => tracing::warn!("watch: index pass failed: {e}"),
        }
    }
    shared.watching.store(false, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::relevant;
    use std::path::Path;

    #[test]
    fn index_files_and_hidden_paths_are_ignored() {
        let root = Path::new("/p");
        let memory = Path::new(".cairn/memory");
        assert!(relevant(root, memory, Path::new("/p/docs/a.md")));
        assert!(relevant(root, memory, Path::new("/p/.cairn/memory/m1.md")));
        assert!(!relevant(
            root,
            memory,
            Path::new("/p/.cairn/memory/.m1.md.1-0.tmp")
        ));
        assert!(!relevant(
            root,
            memory,
            Path::new("/p/.cairn/index.sqlite-wal")
        ));
        assert!(!relevant(root, memory, Path::new("/p/.git/index")));
        assert!(relevant(root, memory, Path::new("/p/api/.env.example")));
        assert!(!relevant(root, memory, Path::new("/p/api/.env")));
        assert!(!relevant(root, memory, Path::new("/p/.venv/.env.example")));
        assert!(!relevant(root, memory, Path::new("/q/a.md")));
    }
}
