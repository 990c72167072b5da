//! Many projects: the list of the user's projects (`cairn projects`;
//! `<user data dir>/projects.json`, each checkout registered by `cairn
//! index`) and a search over several of them at once, each hit naming its
//! project. Every project keeps its own index; a search opens each one
//! (the caller's embedder is shared when the model is the same) and merges
//! the answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cairn_core::Hit;
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::search::SearchOptions;

/// The most checkouts the list keeps (the least recently indexed go first;
/// checkouts whose folder is gone are dropped at every write).
pub const MAX_PROJECTS: usize = 1000;

/// The most projects one search may span.
pub const MAX_SEARCH_PROJECTS: usize = 8;

/// One registered checkout.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProjectEntry {
    /// The name `--project` takes: `[store] project`, else the folder's
    /// name (made unique with a suffix).
    pub name: String,
    /// The checkout's root.
    pub root: PathBuf,
    /// The project's identity ([`crate::identity`]): the same for every
    /// worktree and clone of one repository.
    pub id: String,
    /// What the identity was derived from.
    pub basis: String,
    /// When `cairn index` last ran here (RFC 3339).
    pub indexed_at: String,
}

/// The list of projects, as read from its file.
#[derive(Debug)]
pub struct Projects {
    file: Option<PathBuf>,
    entries: Vec<ProjectEntry>,
}

#[derive(Serialize, Deserialize, Default)]
struct ProjectsFile {
    projects: Vec<ProjectEntry>,
}

impl Projects {
    /// The user's list (`<user data dir>/projects.json`; empty when missing
    /// or when there is no home folder).
    pub fn load() -> Result<Projects> {
        match crate::paths::projects_file() {
            Some(f) => Projects::load_from(&f),
            None => Ok(Projects {
                file: None,
                entries: Vec::new(),
            }),
        }
    }

    /// The list in `file` (empty when missing).
    pub fn load_from(file: &Path) -> Result<Projects> {
        let entries = match std::fs::read_to_string(file) {
            Ok(text) => {
                serde_json::from_str::<ProjectsFile>(&text)
                    .map_err(|e| Error::Config {
                        path: file.to_path_buf(),
                        message: format!("not a project list: {e}"),
                    })?
                    .projects
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(Error::Io {
                    path: file.to_path_buf(),
                    source,
                });
            }
        };
        Ok(Projects {
            file: Some(file.to_path_buf()),
            entries,
        })
    }

    /// The registered checkouts, most recently indexed first.
    pub fn entries(&self) -> &[ProjectEntry] {
        &self.entries
    }

    /// Registers (or refreshes) the checkout at `root` and saves the list;
    /// `name` is the name asked for (`[store] project`), else the folder's.
    pub fn register(&mut self, root: &Path, name: &str) -> Result<ProjectEntry> {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let identity = crate::git::identity(&root);
        self.entries.retain(|e| e.root != root && e.root.is_dir());
        let wanted = match name.trim() {
            "" => root
                .file_name()
                .map_or_else(|| "project".into(), |n| n.to_string_lossy().into_owned()),
            n => n.to_string(),
        };
        let mut name = wanted.clone();
        let mut n = 2;
        while self.entries.iter().any(|e| e.name == name) {
            name = format!("{wanted}-{n}");
            n += 1;
        }
        let entry = ProjectEntry {
            name,
            root,
            id: identity.id,
            basis: identity.basis,
            indexed_at: crate::vault::now_rfc3339(),
        };
        self.entries.insert(0, entry.clone());
        self.entries.truncate(MAX_PROJECTS);
        self.save()?;
        Ok(entry)
    }

    fn save(&self) -> Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let text = serde_json::to_string_pretty(&ProjectsFile {
            projects: self.entries.clone(),
        })
        .map_err(|e| Error::Query(format!("project list: {e}")))?;
        crate::vault::write_atomic(file, text)
    }

    /// The root `project` names: a folder (its project root), else a
    /// registered name, else a registered identity (or 6+ leading digits
    /// of one: its most recently indexed checkout).
    pub fn resolve(&self, project: &str) -> Result<PathBuf> {
        let as_path = Path::new(project);
        if as_path.is_dir() {
            let dir = as_path.canonicalize().map_err(|source| Error::Io {
                path: as_path.to_path_buf(),
                source,
            })?;
            return Ok(crate::config::find_project_root(&dir));
        }
        if let Some(e) = self.entries.iter().find(|e| e.name == project) {
            return Ok(e.root.clone());
        }
        if project.len() >= 6
            && let Some(e) = self.entries.iter().find(|e| e.id.starts_with(project))
        {
            return Ok(e.root.clone());
        }
        Err(Error::NotFound(format!(
            "no project {project:?}: not a folder, nor a name or id `cairn projects` lists"
        )))
    }
}

/// A hit of a search over several projects.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProjectHit {
    /// The project's name, as asked.
    pub project: String,
    /// Its root (the hit's `path` is relative to it).
    pub root: PathBuf,
    /// The other projects asked that hold the same chunk (the same path
    /// and text: two worktrees of one repository, their shared memories),
    /// shown once under the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<String>,
    /// The hit.
    #[serde(flatten)]
    pub hit: Hit,
}

/// Searches each `(name, engine)` and merges the hits: by cosine
/// similarity when the vectors ranked them (the same model scores every
/// project alike; a hit the vectors did not reach comes after those they
/// did), else by score (each project's a share of its own best). At most
/// `opts.limit` (else the first project's `[search] limit`) in all, and
/// at most [`MAX_SEARCH_PROJECTS`] projects.
pub fn search_projects(
    engines: &[(String, &Engine)],
    query: &str,
    opts: &SearchOptions,
) -> Result<Vec<ProjectHit>> {
    if engines.len() > MAX_SEARCH_PROJECTS {
        return Err(Error::Query(format!(
            "{} projects asked: at most {MAX_SEARCH_PROJECTS} in one search",
            engines.len()
        )));
    }
    let Some((_, first)) = engines.first() else {
        return Ok(Vec::new());
    };
    let limit = crate::limits::count(
        opts.limit,
        first.config().search.limit,
        crate::limits::MAX_HITS,
    );
    let mut all = Vec::new();
    for (name, engine) in engines {
        for hit in engine.search(query, opts)? {
            all.push(ProjectHit {
                project: name.clone(),
                root: engine.root().to_path_buf(),
                also_in: Vec::new(),
                hit,
            });
        }
    }
    let key = |h: &ProjectHit| (h.hit.similarity.is_some(), h.hit.similarity, h.hit.score);
    all.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        kb.0.cmp(&ka.0)
            .then(kb.1.unwrap_or(0.0).total_cmp(&ka.1.unwrap_or(0.0)))
            .then(kb.2.total_cmp(&ka.2))
    });
    Ok(merge_same_chunks(all, limit))
}

/// `hits` (best first) with each chunk once: a hit whose path, lines and
/// text an earlier hit of another project has (two worktrees of one
/// repository hold the same files and share their memories) is folded into
/// that one's `also_in`. At most `limit` kept.
fn merge_same_chunks(hits: Vec<ProjectHit>, limit: usize) -> Vec<ProjectHit> {
    let mut out: Vec<ProjectHit> = Vec::new();
    let mut seen: HashMap<(String, u32, u32, String), usize> = HashMap::new();
    for h in hits {
        let key = (
            h.hit.path.clone(),
            h.hit.start_line,
            h.hit.end_line,
            h.hit.text.clone(),
        );
        match seen.get(&key) {
            Some(&k) if out[k].project != h.project && !out[k].also_in.contains(&h.project) => {
                out[k].also_in.push(h.project);
            }
            Some(_) => {}
            None if out.len() < limit => {
                seen.insert(key, out.len());
                out.push(h);
            }
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registering_names_each_checkout_once_and_resolves_names_and_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let file = base.join("data/projects.json");
        for d in ["a/api", "b/api", "web"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        let mut p = Projects::load_from(&file).unwrap();
        assert!(p.entries().is_empty());
        let one = p.register(&base.join("a/api"), "").unwrap();
        let two = p.register(&base.join("b/api"), "").unwrap();
        assert_eq!((one.name.as_str(), two.name.as_str()), ("api", "api-2"));
        p.register(&base.join("web"), "frontend").unwrap();
        // Again: refreshed, not doubled.
        p.register(&base.join("a/api"), "").unwrap();
        let p = Projects::load_from(&file).unwrap();
        assert_eq!(p.entries().len(), 3);
        assert_eq!(p.resolve("frontend").unwrap(), base.join("web"));
        assert_eq!(p.resolve("api-2").unwrap(), base.join("b/api"));
        let web_id = p
            .entries()
            .iter()
            .find(|e| e.name == "frontend")
            .unwrap()
            .id
            .clone();
        assert_eq!(p.resolve(&web_id[..8]).unwrap(), base.join("web"));
        assert!(p.resolve("nothing-here").is_err());

        // A folder gone is dropped at the next write.
        std::fs::remove_dir_all(base.join("web")).unwrap();
        let mut p = Projects::load_from(&file).unwrap();
        p.register(&base.join("a/api"), "").unwrap();
        assert_eq!(p.entries().len(), 2);

        std::fs::write(&file, "not json").unwrap();
        assert!(Projects::load_from(&file).is_err());
    }
}
