//! What Cairn's test crates share: a temporary project folder ([`Project`]),
//! an engine on it with the deterministic fake embedder, the throwaway
//! PostgreSQL server of the full test tier ([`pg_uri`]) and the MCP tool
//! names every client must see ([`TOOL_NAMES`]), and the credential shapes
//! every channel must redact ([`secrets::shapes`]), and the OpenClaw
//! fixtures ([`openclaw`]).
//!
//! Test tiers: `cargo test --workspace` is the fast tier (no model, no
//! Python, no PostgreSQL); `cargo test --workspace -- --include-ignored` adds
//! the tests marked `#[ignore = "full tier: needs …"]`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cairn::{Config, Engine, Layers};
use cairn_core::Embedder;
use cairn_embed::FakeEmbedder;

pub mod openclaw;
pub mod secrets;

/// The tools `cairn serve` offers over MCP, sorted by name.
pub const TOOL_NAMES: [&str; 14] = [
    "expand",
    "get",
    "graph",
    "index_project",
    "memory_forget",
    "memory_list",
    "memory_recall",
    "memory_store",
    "memory_update",
    "relate",
    "search",
    "status",
    "transcript",
    "why",
];

/// A temporary project folder with a `cairn.toml`; removed when dropped.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Default for Project {
    fn default() -> Project {
        Project::new()
    }
}

impl Project {
    /// A project with an empty `cairn.toml` (every setting at its default).
    pub fn new() -> Project {
        Project::with_config("")
    }

    /// A project whose `cairn.toml` holds `toml`.
    pub fn with_config(toml: &str) -> Project {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(cairn::paths::config_file(dir.path()), toml).expect("write cairn.toml");
        Project { dir }
    }

    /// The project folder, canonical (symlinks resolved).
    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("canonical temp dir")
    }

    /// `rel` inside the project folder (`path("")`: the folder itself).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `text` to `rel`, making its parent folders.
    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// Deletes the file `rel`.
    pub fn remove(&self, rel: &str) {
        std::fs::remove_file(self.path(rel)).expect("remove");
    }

    /// The project's configuration: the defaults and its `cairn.toml` only
    /// (no user file, no `CAIRN_*` variables: tests stay hermetic).
    pub fn config(&self) -> Config {
        let mut config = Config::load_layers(&self.root(), &Layers::default())
            .expect("cairn.toml loads")
            .0;
        // No personal memories of whoever runs the tests, and no vectors
        // from (or into) their embedding cache: a test that wants either
        // names a folder of its own.
        if config.memory.personal.is_empty() {
            config.memory.personal = "none".into();
        }
        config.embed.user_cache_rows = 0;
        config
    }

    /// An engine on the configured store, embedding with [`fake_embedder`].
    pub fn engine(&self) -> Engine {
        let (root, config) = (self.root(), self.config());
        cairn::Open::new(&root, &config)
            .embedder(Some(fake_embedder()))
            .engine()
            .expect("engine opens")
    }
}

/// The deterministic fake embedder (64 dimensions): fast, no model files.
pub fn fake_embedder() -> Arc<dyn Embedder> {
    Arc::new(FakeEmbedder::new(64))
}

/// An embedder that fails once it has embedded `limit` texts, like an
/// indexer killed midway (or a model that goes away); it counts the texts
/// it was asked for. Vectors are `[text length, 1, 0, 0]`.
pub struct DyingEmbedder {
    limit: usize,
    done: std::sync::atomic::AtomicUsize,
}

impl DyingEmbedder {
    /// Fails from the call that would pass `limit` texts.
    pub fn new(limit: usize) -> Arc<DyingEmbedder> {
        Arc::new(DyingEmbedder {
            limit,
            done: 0.into(),
        })
    }
}

impl Embedder for DyingEmbedder {
    fn model_id(&self) -> &str {
        "dying"
    }
    fn dimension(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, cairn_core::EmbedError> {
        use std::sync::atomic::Ordering;
        let done = self.done.fetch_add(texts.len(), Ordering::SeqCst);
        if done + texts.len() > self.limit {
            return Err(cairn_core::EmbedError::new("the model went away"));
        }
        Ok(texts
            .iter()
            .map(|t| vec![t.len() as f32, 1.0, 0.0, 0.0])
            .collect())
    }
}

/// Runs git in `dir` as a fixed author and committer; false when git is
/// missing or the command fails.
pub fn git(dir: &Path, args: &[&str]) -> bool {
    git_at(dir, args, None)
}

/// [`git`], dated `date` (author and committer) when given.
pub fn git_at(dir: &Path, args: &[&str], date: Option<&str>) -> bool {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.org")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.org");
    if let Some(date) = date {
        cmd.env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date);
    }
    cmd.output().is_ok_and(|o| o.status.success())
}

/// `git worktree add` of a new `branch` at `at`, from the repository in
/// `main`; false when git is missing or fails.
pub fn git_worktree_add(main: &Path, at: &Path, branch: &str) -> bool {
    let at = at.to_string_lossy();
    git(main, &["worktree", "add", "-q", "-b", branch, &at])
}

/// Writes `text` to `root/rel`, its folders made.
pub fn write_file(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a relative file path")).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One index root: the folder itself.
pub fn roots(p: &Path) -> Vec<PathBuf> {
    vec![p.to_path_buf()]
}

/// The PostgreSQL server of the full tier: `CAIRN_TEST_PG_URI`, else the
/// throwaway server that `.ci/postgres start` fetches and starts once per
/// test process (so the full tier needs nothing installed by hand; its
/// versions go to stderr).
pub fn pg_uri() -> String {
    static URI: OnceLock<String> = OnceLock::new();
    URI.get_or_init(|| {
        if let Ok(uri) = std::env::var("CAIRN_TEST_PG_URI") {
            return uri;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/postgres");
        let out = std::process::Command::new("bash")
            .arg(&script)
            .arg("start")
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run .ci/postgres");
        assert!(out.status.success(), "{} start failed", script.display());
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
    .clone()
}
