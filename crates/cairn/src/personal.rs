//! Personal memory: the user's own memories ("I prefer small commits"),
//! kept in a folder of the user's data dir (`[memory] personal`; default
//! `<user data dir>/personal`, `none` turns it off), never in a project.
//!
//! The folder is a tiny project of its own: its memories in `memory/`
//! (history, trash and audit log beside it, as a project's), its index in
//! `.cairn/`, always a local SQLite file whatever `[store]` says (a shared
//! server must never receive them). A project's engine opens it on demand
//! with the project's embedder; recall asks both and merges the answers,
//! each personal one marked [`Recalled::personal`]. A personal memory is
//! stored with `remember --personal` (the same redaction, near-duplicate
//! check, undo and audit log as a project's).

use std::path::PathBuf;
use std::sync::Arc;

use cairn_core::{Embedder, sync};

use crate::config::Config;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{RecallOptions, Recalled};

/// The personal folder's memory folder, relative to it.
const PERSONAL_MEMORY: &str = "memory";

/// The personal folder's home `config` names: `[memory] personal`, else the
/// default in the user data dir; `None` when it is `none` (or there is no
/// home folder).
pub(crate) fn personal_dir(config: &Config) -> Option<PathBuf> {
    match config.memory.personal.trim() {
        "none" => None,
        "" => crate::paths::default_personal_dir(),
        dir => Some(PathBuf::from(dir)),
    }
}

/// Opens the personal memories' engine for a project configured by
/// `config`, embedding with `embedder` (created when `create`, else `None`
/// when the folder does not exist; `None` too when personal memory is
/// off). Nothing is written into any project.
pub fn open_personal(
    config: &Config,
    embedder: Option<Arc<dyn Embedder>>,
    create: bool,
) -> Result<Option<Engine>> {
    let Some(dir) = personal_dir(config) else {
        return Ok(None);
    };
    let memory = dir.join(PERSONAL_MEMORY);
    if !memory.is_dir() {
        if !create {
            return Ok(None);
        }
        std::fs::create_dir_all(&memory).map_err(|source| Error::Io {
            path: memory.clone(),
            source,
        })?;
    }
    let mut config = config.clone();
    config.memory.dir = PERSONAL_MEMORY.into();
    config.memory.personal = "none".into();
    config.index.roots = Vec::new();
    config.store = crate::config::StoreConfig::default();
    let engine = crate::open::Open::new(&dir, &config)
        .embedder(embedder)
        .engine()?;
    // A store from another project's process is picked up before use.
    engine.index(&[], &crate::progress::NoProgress)?;
    Ok(Some(engine))
}

impl Engine {
    /// The personal memories' engine, opened once per engine
    /// ([`open_personal`] with this engine's embedder); `None` when
    /// personal memory is off, or absent and not to be created.
    pub fn personal_engine(&self, create: bool) -> Result<Option<Arc<Engine>>> {
        if self.personal_dir.is_none() {
            return Ok(None);
        }
        let mut slot = sync::lock(&self.personal);
        if let Some(e) = slot.as_ref() {
            return Ok(Some(e.clone()));
        }
        let Some(engine) = open_personal(&self.config, self.embedder.clone(), create)? else {
            return Ok(None);
        };
        let engine = Arc::new(engine);
        *slot = Some(engine.clone());
        Ok(Some(engine))
    }

    /// A recall of the project's memories and the personal ones, merged by
    /// score. A personal memory must be close to the query on its own
    /// terms: its relevance is measured within the personal folder, where
    /// one memory is always the best match, so one the vectors ranked is
    /// kept only at a similarity of `[search] confident_similarity` or more
    /// (one BM25 alone found matched the query's words).
    pub(crate) fn recall_with_personal(
        &self,
        personal: &Engine,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<(Vec<Recalled>, usize)> {
        let limit = crate::limits::count(opts.limit, 5, crate::limits::MAX_HITS);
        let offset = opts.offset.min(crate::limits::MAX_OFFSET);
        let page = RecallOptions {
            limit: (offset + limit).min(crate::limits::MAX_HITS),
            offset: 0,
            standing: false,
            ..opts.clone()
        };
        // Another process may have stored a personal memory since.
        if let Err(e) = personal.index(&[], &crate::progress::NoProgress) {
            tracing::warn!("personal memories as last indexed: {e}");
        }
        let (mut out, total) = self.recall_here(query, &page)?;
        let floor = self.config.search.confident_similarity;
        let (mine, mine_total) = personal.recall_here(query, &page)?;
        let before = mine.len();
        let mine: Vec<Recalled> = mine
            .into_iter()
            .filter(|r| r.similarity.is_none_or(|s| s >= floor))
            .map(|mut r| {
                r.personal = true;
                r
            })
            .collect();
        let mine_total = mine_total - (before - mine.len());
        out.extend(mine);
        out.sort_by(|a, b| b.score.total_cmp(&a.score));
        let out = out.into_iter().skip(offset).take(limit).collect();
        Ok((out, total + mine_total))
    }
}
