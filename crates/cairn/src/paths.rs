//! Paths inside a project as the index stores them: relative to the project
//! root, `/`-separated. Shared by the engine, the indexer and export/import,
//! which used to reach into the indexer for it (a file cycle).

use std::path::{Component, Path, PathBuf};

/// The SQLite index file of the project at `root`.
pub(crate) fn index_file(root: &Path) -> PathBuf {
    root.join(".cairn").join("index.sqlite")
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
