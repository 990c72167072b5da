//! `cairn index [PATHS…]`: scan, chunk, embed and store; incremental on re-run.

use std::path::{Path, PathBuf};

use anyhow::Context;
use cairn::Engine;

use crate::args::{Cli, IndexArgs};
use crate::print;
use crate::progress::Bars;
use crate::project::{load_config, open_engine_with, paths_base, project_root};

/// The engine `cairn index` works on, after a check of the index file
/// (header, `PRAGMA quick_check`): a damaged file is set aside
/// (`index.sqlite.damaged-<time>`) and the index rebuilt from the files,
/// memory files first, with a line on stderr that says so. The index is
/// derived, so nothing is lost; the damaged file is kept, never deleted.
pub(crate) fn open_recovering(cli: &Cli, bars: &Bars) -> anyhow::Result<Engine> {
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    let problems = cairn::index_problems(&root, &config)?;
    if let Some(first) = problems.first() {
        set_aside(&root, &config, first)?;
    }
    match open_engine_with(&root, &config, bars, false) {
        Err(e)
            if e.downcast_ref::<cairn::Error>()
                .is_some_and(cairn::Error::is_damaged_index) =>
        {
            set_aside(&root, &config, &e.to_string())?;
            open_engine_with(&root, &config, bars, false)
        }
        other => other,
    }
}

/// `path` (given as `given`) when it lies in the project at `root`; a path
/// that leads out of it is refused: its files would go into this project's
/// index under their absolute paths. A path that does not exist is passed
/// on, for the index pass to name.
fn inside_project(root: &Path, path: &Path, given: &Path) -> anyhow::Result<PathBuf> {
    let Ok(real) = path.canonicalize() else {
        return Ok(path.to_path_buf());
    };
    let project = root.canonicalize().context("project folder")?;
    if !real.starts_with(&project) {
        anyhow::bail!(
            "{} is outside the project {}: `cairn index` takes the project's own folders and files (index that folder as a project of its own: `cairn -C {} index`)",
            given.display(),
            project.display(),
            real.display()
        );
    }
    Ok(path.to_path_buf())
}

fn set_aside(root: &Path, config: &cairn::Config, why: &str) -> anyhow::Result<()> {
    let aside = cairn::set_index_aside(root, config)?;
    eprintln!(
        "the index was damaged ({}); it is kept as {} and rebuilt now from the files (memory files first)",
        why.lines().next().unwrap_or(why),
        aside.display()
    );
    Ok(())
}

pub(crate) fn run(cli: &Cli, engine: &Engine, a: &IndexArgs, bars: &Bars) -> anyhow::Result<()> {
    let roots: Vec<PathBuf> = if a.paths.is_empty() {
        engine
            .config()
            .index
            .roots
            .iter()
            .map(|r| engine.root().join(r))
            .collect()
    } else {
        let base = paths_base(cli, engine.root())?;
        a.paths
            .iter()
            .map(|p| inside_project(engine.root(), &base.join(p), p))
            .collect::<anyhow::Result<_>>()?
    };
    let report = engine.index(&roots, bars)?;
    // Listed for `cairn projects` and `--project NAME` (best effort: an
    // index is not failed by a list it could not write).
    match cairn::Projects::load()
        .and_then(|mut p| p.register(engine.root(), &engine.config().store.project))
    {
        Ok(entry) => tracing::info!("registered as project {:?} ({})", entry.name, entry.id),
        Err(e) => tracing::warn!("not registered in the project list: {e}"),
    }
    if a.json {
        print::json(&report)
    } else {
        // `-q`: errors only.
        if !bars.quiet() {
            print::index_report(&report, engine.embedder().is_some());
            // What the index holds in all, as `status` counts it: this
            // pass's roots are not all of it (memories another command
            // wrote, vectors a backfill made), and the two counts read as a
            // contradiction side by side (issue 61: 68 files here, 69 there).
            if let Ok(s) = engine.status() {
                say!(
                    "the index holds {} documents (files, memories, commit records), {} chunks ({} with a vector), as `cairn status` counts them",
                    s.files,
                    s.chunks,
                    s.embedded_chunks
                );
            }
        }
        Ok(())
    }
}
