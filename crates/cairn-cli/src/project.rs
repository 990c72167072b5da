//! Which project a command works on and how it is opened: the root found
//! from `-C` or the current folder, the layered configuration with `--set`
//! and `--store`, and the engine from `cairn::Open` (store, embedder and LLM
//! provider all chosen by the configuration).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use cairn::{Config, Engine, find_project_root};

use crate::args::Cli;
use crate::progress::Bars;

/// The project folder: `-C DIR` (or the name of a registered project),
/// else found from the current folder. Only `search` takes several.
pub(crate) fn project_root(cli: &Cli) -> anyhow::Result<PathBuf> {
    match cli.project.as_slice() {
        [] => Ok(find_project_root(
            &std::env::current_dir().context("current folder")?,
        )),
        [one] => resolve_project(one),
        _ => bail!(
            "this command works on one project: give --project once (only search takes several)"
        ),
    }
}

/// A project named on the command line: a folder (the project around it),
/// else a name or identity `cairn projects` lists.
pub(crate) fn resolve_project(p: &Path) -> anyhow::Result<PathBuf> {
    if p.is_dir() {
        let dir = p
            .canonicalize()
            .with_context(|| format!("project folder {}", p.display()))?;
        return Ok(find_project_root(&dir));
    }
    let name = p.to_string_lossy();
    let projects = cairn::Projects::load()?;
    projects
        .resolve(&name)
        .with_context(|| format!("project folder {}", p.display()))
}

/// The project's configuration with every layer, `--set` included.
pub(crate) fn load_config(cli: &Cli, root: &Path) -> anyhow::Result<Config> {
    Ok(Config::load_layers(root, &cairn::Layers::from_env(flag_sets(cli)))?.0)
}

/// `--set` pairs, with `--store` as `store.uri`.
pub(crate) fn flag_sets(cli: &Cli) -> Vec<String> {
    let mut sets = cli.sets.clone();
    if let Some(uri) = &cli.store {
        sets.push(format!("store.uri={uri}"));
    }
    sets
}

/// The folder relative paths on the command line are read from: with `-C
/// DIR`, that folder (as `git -C` makes it the working folder: `cairn -C
/// proj index .` from elsewhere indexed the other folder into the project);
/// with `-C NAME` of a registered project, its root; else the current
/// folder.
pub(crate) fn paths_base(cli: &Cli, root: &Path) -> anyhow::Result<PathBuf> {
    match cli.project.as_slice() {
        [one] if one.is_dir() => one
            .canonicalize()
            .with_context(|| format!("project folder {}", one.display())),
        [_] => Ok(root.to_path_buf()),
        _ => std::env::current_dir().context("current folder"),
    }
}

/// The project's engine; with `must_exist`, a missing SQLite index is an
/// error ("run `cairn index` first") instead of a new empty one, and so is
/// one that was never built (a zero-length file, which SQLite reads as an
/// empty database and which answered every read with nothing).
pub(crate) fn open_engine(cli: &Cli, bars: &Bars, must_exist: bool) -> anyhow::Result<Engine> {
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    open_engine_with(&root, &config, bars, must_exist)
}

/// [`open_engine`] for a root and configuration the command already has.
pub(crate) fn open_engine_with(
    root: &Path,
    config: &Config,
    bars: &Bars,
    must_exist: bool,
) -> anyhow::Result<Engine> {
    let engine = open_index(root, config, bars, must_exist)?;
    if must_exist && config.store.uri.trim().is_empty() && engine.index_unbuilt()? {
        bail!("{}", unbuilt(&engine));
    }
    Ok(engine)
}

/// What a read says of an index that was never built.
pub(crate) fn unbuilt(engine: &Engine) -> String {
    format!(
        "the index at {} is empty (never built): run `cairn index` first (memory files are kept apart from it: nothing is lost)",
        engine.index_path().display()
    )
}

/// The engine on the project's index; with `must_exist`, a missing SQLite
/// file is an error.
pub(crate) fn open_index(
    root: &Path,
    config: &Config,
    bars: &Bars,
    must_exist: bool,
) -> anyhow::Result<Engine> {
    let index = cairn::paths::index_file(root);
    if must_exist && config.store.uri.trim().is_empty() && !index.exists() {
        bail!("no index at {}: run `cairn index` first", index.display());
    }
    Ok(cairn::Open::new(root, config).progress(bars).engine()?)
}

/// A path given on the command line (read from `base`, see [`paths_base`]),
/// relative to the project root when it lies inside it.
pub(crate) fn project_relative(root: &Path, base: &Path, p: &str) -> String {
    let abs = base.join(p);
    match abs
        .canonicalize()
        .ok()
        .and_then(|a| a.strip_prefix(root).ok().map(Path::to_path_buf))
    {
        Some(rel) => rel.to_string_lossy().replace('\\', "/"),
        None => p.trim_start_matches("./").to_string(),
    }
}

/// A read the project's running daemon answers when it can (its model,
/// vectors and graph are warm): `ask` puts the question to it (`None`: no
/// daemon, another configuration, or it declined), else `here` computes it in
/// this process. `CAIRN_NO_DAEMON=1` always computes here.
pub(crate) fn daemon_or_here<T>(
    ask: impl FnOnce() -> Option<T>,
    here: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    if std::env::var_os("CAIRN_NO_DAEMON").is_none()
        && let Some(answer) = ask()
    {
        tracing::debug!("answered by the project's daemon");
        return Ok(answer);
    }
    here()
}
