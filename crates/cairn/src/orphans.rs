//! Temporary files a killed writer left behind. Every file cairn writes goes
//! through a temp file and a rename ([`crate::vault::write_atomic`]); a
//! process killed between the two leaves `.<name>.<pid>-<seq>.tmp`. On open,
//! those of dead processes are cleared: a memory whose file never appeared
//! is restored from a complete temp file (the writer had written and synced
//! it, only the rename was missing) and said on stderr; every other one is
//! removed and counted. `cairn doctor` shows both counts.

use std::path::Path;

use serde::Serialize;

/// What the clean-up on open did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Orphans {
    /// Memory files brought back from a complete temp file.
    pub restored: usize,
    /// Temp files removed (a partial write, an older version, history,
    /// trash and hook state).
    pub removed: usize,
}

/// The pid in a temp file's name `.<name>.<pid>-<seq>.tmp`, and `<name>`.
fn parse_tmp(file: &str) -> Option<(&str, u32)> {
    let inner = file.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (name, tail) = inner.rsplit_once('.')?;
    let (pid, seq) = tail.split_once('-')?;
    seq.parse::<u64>().ok()?;
    Some((name, pid.parse().ok()?))
}

/// Whether the process that named a temp file may still be writing it: our
/// own, or (where `/proc` tells) one still running; elsewhere any file
/// younger than a minute.
fn may_be_live(pid: u32, path: &Path) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if proc.is_dir() {
        return proc.join(pid.to_string()).exists();
    }
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age.as_secs() < 60)
}

/// Clears the orphan temp files under `memory` (recursively: session logs
/// too, where a complete memory file is restored) and directly in each of
/// `others` (history, trash, hook state: removed).
pub(crate) fn clean(memory: &Path, others: &[&Path]) -> Orphans {
    let mut done = Orphans::default();
    clean_dir(memory, true, &mut done);
    for dir in others {
        clean_dir(dir, false, &mut done);
    }
    done
}

fn clean_dir(dir: &Path, memories: bool, done: &mut Orphans) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            if memories {
                clean_dir(&path, true, done);
            }
            continue;
        }
        let file = e.file_name().to_string_lossy().into_owned();
        let Some((name, pid)) = parse_tmp(&file) else {
            continue;
        };
        if !kind.is_file() || may_be_live(pid, &path) {
            continue;
        }
        let target = dir.join(name);
        if memories && name.ends_with(".md") && !target.exists() && complete_memory(&path, name) {
            if std::fs::rename(&path, &target).is_ok() {
                tracing::warn!(
                    "restored {} from a write that was cut short (its writer was killed before the rename)",
                    target.display()
                );
                done.restored += 1;
            }
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            done.removed += 1;
        }
    }
}

/// Whether a temp file holds a whole memory file for `name`: frontmatter
/// closed, its id the file's stem, a body after it.
fn complete_memory(path: &Path, name: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let stem = name.trim_end_matches(".md");
    let Some(rest) = text.strip_prefix("---\n") else {
        return false;
    };
    let Some((front, body)) = rest.split_once("\n---\n") else {
        return false;
    };
    front.lines().any(|l| l.trim() == format!("id: {stem}")) && !body.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_read() {
        assert_eq!(parse_tmp(".m1.md.4242-7.tmp"), Some(("m1.md", 4242)));
        assert_eq!(parse_tmp("m1.md"), None);
        assert_eq!(parse_tmp(".m1.md.x-7.tmp"), None);
    }

    #[test]
    fn a_dead_writers_complete_memory_is_restored_and_the_rest_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mem = dir.path().join("memory");
        let hist = dir.path().join("history");
        std::fs::create_dir_all(mem.join("sessions")).unwrap();
        std::fs::create_dir_all(&hist).unwrap();
        // A pid that is not running: the largest, never handed out on Linux.
        let dead = 4_194_303u32;
        let whole = "---\nid: m1\ntype: note\n---\n\nkept text\n";
        std::fs::write(mem.join(format!(".m1.md.{dead}-0.tmp")), whole).unwrap();
        std::fs::write(mem.join(format!(".m2.md.{dead}-1.tmp")), "---\nid: m2\n").unwrap();
        std::fs::write(mem.join("m3.md"), "new").unwrap();
        std::fs::write(
            mem.join(format!(".m3.md.{dead}-2.tmp")),
            whole.replace("m1", "m3"),
        )
        .unwrap();
        std::fs::write(mem.join(format!("sessions/.d.md.{dead}-3.tmp")), "partial").unwrap();
        std::fs::write(hist.join(format!(".abc.md.{dead}-4.tmp")), "x").unwrap();
        let ours = mem.join(format!(".m4.md.{}-5.tmp", std::process::id()));
        std::fs::write(&ours, whole.replace("m1", "m4")).unwrap();
        let done = clean(&mem, &[&hist]);
        assert_eq!(
            done,
            Orphans {
                restored: 1,
                removed: 4
            }
        );
        assert_eq!(std::fs::read_to_string(mem.join("m1.md")).unwrap(), whole);
        assert_eq!(std::fs::read_to_string(mem.join("m3.md")).unwrap(), "new");
        assert!(ours.exists(), "a live writer's temp file stays");
    }
}
