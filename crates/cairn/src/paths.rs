//! Where Cairn's files are, in one place: every file name under a project's
//! `.cairn/` folder and the project's `cairn.toml` is spelled here and
//! nowhere else (the engine, the CLI, the daemon and the tests ask these
//! functions). Also paths inside a project as the index stores them:
//! relative to the project root, `/`-separated.

use std::path::{Component, Path, PathBuf};

/// The folder of Cairn's own files in a project, relative to its root.
pub const CAIRN_DIR: &str = ".cairn";
/// The project's configuration file, relative to its root.
pub const CONFIG_FILE: &str = "cairn.toml";
/// The default memory folder (`[memory] dir`), relative to the project root.
pub const MEMORY_DIR: &str = ".cairn/memory";

/// The project's `.cairn/` folder.
pub fn cairn_dir(root: &Path) -> PathBuf {
    root.join(CAIRN_DIR)
}

/// The project's `cairn.toml`.
pub fn config_file(root: &Path) -> PathBuf {
    root.join(CONFIG_FILE)
}

/// The SQLite index file of the project at `root`.
pub fn index_file(root: &Path) -> PathBuf {
    cairn_dir(root).join("index.sqlite")
}

/// The default memory folder of the project at `root` (`[memory] dir` may
/// name another).
pub fn memory_dir(root: &Path) -> PathBuf {
    root.join(MEMORY_DIR)
}

/// The lock memory writers take.
pub fn memory_lock(root: &Path) -> PathBuf {
    cairn_dir(root).join("memory.lock")
}

/// What the memory sync of the index last saw.
pub fn synced_memories(root: &Path) -> PathBuf {
    cairn_dir(root).join("synced-memories")
}

/// The capture hooks' folder.
pub fn hooks_dir(root: &Path) -> PathBuf {
    cairn_dir(root).join("hooks")
}

/// The capture hooks' health (last success and failure per client).
pub fn hooks_health(root: &Path) -> PathBuf {
    hooks_dir(root).join("health.json")
}

/// The lock the live daemon holds (its pid inside).
pub fn daemon_lock(root: &Path) -> PathBuf {
    cairn_dir(root).join("daemon.lock")
}

/// The daemon's socket when the project path is short enough for one.
pub fn daemon_socket(root: &Path) -> PathBuf {
    cairn_dir(root).join("daemon.sock")
}

/// Where the daemon's stderr goes.
pub fn daemon_log(root: &Path) -> PathBuf {
    cairn_dir(root).join("daemon.log")
}

/// Cairn's per-user data folder: `$CAIRN_DATA_DIR`, else the platform's
/// data folder + `cairn` (`~/.local/share/cairn` on Linux). Holds the
/// personal memories and the list of projects; `None` when there is no
/// home folder.
pub fn user_data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CAIRN_DATA_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::data_dir().map(|d| d.join("cairn"))
}

/// The default personal memory folder's home (`[memory] personal` left
/// empty): `<user data dir>/personal`, holding `memory/` and its index.
pub fn default_personal_dir() -> Option<PathBuf> {
    user_data_dir().map(|d| d.join("personal"))
}

/// The list of projects `cairn index` registered (`cairn projects`).
pub fn projects_file() -> Option<PathBuf> {
    user_data_dir().map(|d| d.join("projects.json"))
}

/// The per-user embedding cache (`[embed] user_cache`): in Cairn's cache
/// folder (`$CAIRN_CACHE_DIR`, else `~/.cache/cairn`), beside the models.
pub fn user_embedding_cache() -> Option<PathBuf> {
    cairn_embed::cache_root()
        .ok()
        .map(|d| d.join("embeddings.sqlite"))
}

/// `path` relative to `root`, `/`-separated, when it lies inside it; else the
/// path as given (normalised, `/`-separated).
pub(crate) fn relative_path(root: &Path, path: &Path) -> String {
    let norm = normalize(path);
    let root = normalize(root);
    let rel = norm.strip_prefix(&root).unwrap_or(&norm);
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::RootDir => Some(String::new()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Lexically removes `.` and `..` (no file system access: paths may not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_under_the_project() {
        let root = Path::new("/p");
        assert_eq!(index_file(root), Path::new("/p/.cairn/index.sqlite"));
        assert_eq!(memory_dir(root), Path::new("/p/.cairn/memory"));
        assert_eq!(config_file(root), Path::new("/p/cairn.toml"));
        assert_eq!(hooks_health(root), Path::new("/p/.cairn/hooks/health.json"));
        for p in [
            memory_lock(root),
            synced_memories(root),
            daemon_lock(root),
            daemon_socket(root),
            daemon_log(root),
        ] {
            assert_eq!(
                p.parent(),
                Some(cairn_dir(root).as_path()),
                "{}",
                p.display()
            );
        }
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("/p"), Path::new("/p/docs/a.md")),
            "docs/a.md"
        );
        assert_eq!(
            relative_path(Path::new("/p"), Path::new("/p/./docs/../x.md")),
            "x.md"
        );
        assert_eq!(
            relative_path(Path::new("/p"), Path::new("/q/a.md")),
            "/q/a.md"
        );
    }
}
