//! What git says about a project folder, read from its files (no `git`
//! process but for the first commit): whether it is a linked worktree
//! (`git worktree add`) and where its main worktree is, so every worktree
//! keeps its memories in one folder; and the project's identity, the same
//! for every worktree and every clone of one repository.

use std::path::{Path, PathBuf};

/// A folder's git checkout, as its `.git` entry describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    /// The checkout's own git folder (`.git`, or `.git/worktrees/NAME` of
    /// the main worktree for a linked one).
    pub git_dir: PathBuf,
    /// The folder every worktree shares (objects, refs, config).
    pub common_dir: PathBuf,
    /// The main worktree's root, when the common folder is a `.git` inside one
    /// (not a bare repository).
    pub main_root: Option<PathBuf>,
}

impl Checkout {
    /// Whether this is a linked worktree (not the main one).
    pub fn is_linked(&self) -> bool {
        self.git_dir != self.common_dir
    }

    /// Whether the repository has linked worktrees (`.git/worktrees/` holds
    /// one), so memories written from one checkout should be looked for
    /// from another.
    pub fn has_worktrees(&self) -> bool {
        std::fs::read_dir(self.common_dir.join("worktrees"))
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    }
}

/// The checkout `root` is the top of (its `.git` a folder, or a file
/// `gitdir: …` in a linked worktree); `None` outside git or when the files
/// are not what git writes.
pub fn checkout(root: &Path) -> Option<Checkout> {
    let dot_git = root.join(".git");
    let meta = std::fs::metadata(&dot_git).ok()?;
    if meta.is_dir() {
        let dir = dot_git.canonicalize().ok()?;
        return Some(Checkout {
            git_dir: dir.clone(),
            common_dir: dir,
            main_root: root.canonicalize().ok(),
        });
    }
    // A linked worktree: `.git` is a file naming its git folder, whose
    // `commondir` names the shared one (relative to it).
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let named = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let git_dir = root.join(named).canonicalize().ok()?;
    let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => git_dir.join(c.trim()).canonicalize().ok()?,
        Err(_) => git_dir.clone(),
    };
    let main_root = (common_dir.file_name()? == ".git")
        .then(|| common_dir.parent().map(Path::to_path_buf))
        .flatten()
        .filter(|r| r.is_dir());
    Some(Checkout {
        git_dir,
        common_dir,
        main_root,
    })
}

/// The root whose memory folder a project at `root` uses: the main
/// worktree's for a linked worktree (one set of memories for every
/// worktree, seen at once, committed or not), else `root` itself.
pub fn memory_root(root: &Path) -> PathBuf {
    match checkout(root) {
        Some(c) if c.is_linked() => c.main_root.unwrap_or_else(|| root.to_path_buf()),
        _ => root.to_path_buf(),
    }
}

/// A project's identity: a short id and what it was derived from.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    /// 16 hex digits of the basis's hash.
    pub id: String,
    /// `first-commit <sha>`, `remote <url>`, `git <common dir>` or
    /// `folder <path>`, the first that can be had.
    pub basis: String,
}

/// The identity of the project at `root`: from its repository's first
/// commit (the same in every clone and worktree), else its `origin`
/// remote (a clone with no commit yet), else its shared git folder (every
/// worktree of one repository), else the folder.
pub fn identity(root: &Path) -> Identity {
    let basis = match checkout(root) {
        Some(c) => first_commit(root)
            .map(|sha| format!("first-commit {sha}"))
            .or_else(|| origin_url(&c.common_dir).map(|u| format!("remote {u}")))
            .unwrap_or_else(|| format!("git {}", c.common_dir.display())),
        None => format!(
            "folder {}",
            root.canonicalize()
                .unwrap_or_else(|_| root.to_path_buf())
                .display()
        ),
    };
    Identity {
        id: cairn_core::content_hash(basis.as_bytes())[..16].to_string(),
        basis,
    }
}

/// The oldest root commit of `HEAD` (`git rev-list --max-parents=0`; the
/// smallest sha when history has several roots).
fn first_commit(root: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-list", "--max-parents=0", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout)
        .ok()?
        .lines()
        .map(str::trim)
        .filter(|l| l.len() >= 40 && l.chars().all(|c| c.is_ascii_hexdigit()))
        .min()
        .map(str::to_string)
}

/// The `url` of `[remote "origin"]` in the shared git folder's config,
/// without credentials and a trailing `.git`.
fn origin_url(common_dir: &Path) -> Option<String> {
    let config = std::fs::read_to_string(common_dir.join("config")).ok()?;
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line == "[remote \"origin\"]";
        } else if in_origin && let Some(v) = line.strip_prefix("url") {
            let url = v.trim_start().strip_prefix('=')?.trim();
            let url = cairn_core::redact_uri(url);
            return Some(
                url.trim_end_matches('/')
                    .trim_end_matches(".git")
                    .to_string(),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_test_support::{git, git_worktree_add};

    #[test]
    fn worktrees_and_clones_share_an_identity_and_worktrees_the_main_memory_root() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let main = base.join("main");
        std::fs::create_dir_all(&main).unwrap();
        if !git(&main, &["init", "-q"]) {
            eprintln!("no git here: skipped");
            return;
        }
        std::fs::write(main.join("a.md"), "# A\n").unwrap();
        assert!(git(&main, &["add", "."]));
        assert!(git(&main, &["commit", "-q", "-m", "first"]));
        let wt = base.join("wt");
        assert!(git_worktree_add(&main, &wt, "feature"));
        let clone = base.join("clone");
        assert!(git(
            &base,
            &[
                "clone",
                "-q",
                main.to_str().unwrap(),
                clone.to_str().unwrap()
            ]
        ));

        let c = checkout(&wt).expect("a worktree is a checkout");
        assert!(c.is_linked() && c.has_worktrees());
        assert_eq!(c.main_root.as_deref(), Some(main.as_path()));
        assert!(!checkout(&main).unwrap().is_linked());
        assert_eq!(memory_root(&wt), main);
        assert_eq!(memory_root(&main), main);
        assert_eq!(memory_root(&clone), clone, "a clone keeps its own memories");

        let id = identity(&main);
        assert!(id.basis.starts_with("first-commit "), "{id:?}");
        assert_eq!(identity(&wt), id);
        assert_eq!(identity(&clone), id);
        let other = base.join("other");
        std::fs::create_dir_all(&other).unwrap();
        assert_ne!(identity(&other).id, id.id);
    }

    #[test]
    fn the_origin_url_loses_its_password() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("config"),
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://me:hunter2@example.com/a/b.git\n",
        )
        .unwrap();
        let url = origin_url(tmp.path()).unwrap();
        assert!(
            !url.contains("hunter2") && url.ends_with("example.com/a/b"),
            "{url}"
        );
    }
}
