//! Engine integration tests (fake embedder: fast and deterministic).

mod concurrency;
mod graph;
mod incremental;
mod memory;
mod search;
mod transfer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn::{Config, Engine};
use cairn_embed::FakeEmbedder;

/// A temporary project with helpers to write files and open an engine.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("cairn.toml"), "").expect("write cairn.toml");
        Project { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("canonical temp dir")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn engine(&self) -> Engine {
        Engine::open(
            &self.root(),
            Config::default(),
            Some(Arc::new(FakeEmbedder::new(64))),
        )
        .expect("engine opens")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

fn roots(p: &Path) -> Vec<PathBuf> {
    vec![p.to_path_buf()]
}
