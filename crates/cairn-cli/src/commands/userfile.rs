//! Writing a file of the user's (an agent's settings, `~/.claude.json`, the
//! clone's `.git/info/exclude`) as the user has it: a symbolic link (a
//! dotfile manager's) stays a link and its target gets the text; the file
//! keeps its mode and owner (`~/.claude.json` holds an account and an API
//! key: it stays 0600); the new text is complete on disk before it replaces
//! the old (a temporary file in the same folder, flushed, then renamed), or,
//! where a rename would change what the file is (a hard link, an owner this
//! process cannot give), written in place.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The file `path` names once symbolic links are followed (each relative
/// target read against its link's folder); the last target need not exist.
pub(crate) fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&at)
                    .with_context(|| format!("reading the link {}", at.display()))?;
                at = match at.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(at),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(at),
            Err(e) => return Err(e).with_context(|| format!("reading {}", at.display())),
        }
    }
    bail!("{}: too many levels of symbolic links", path.display())
}

/// The file's text (through links); None when there is none.
pub(crate) fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text; left unchanged", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes `text` to the file `path` names (see the module documentation).
/// A file made new gets `new_mode` (unix permission bits; None: the usual
/// 0666 less the umask).
pub(crate) fn write(path: &Path, text: &str, new_mode: Option<u32>) -> anyhow::Result<()> {
    let target = resolve(path)?;
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let existing = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", target.display())),
    };
    if existing.is_none() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if let Some(m) = &existing
        && must_write_in_place(m)
    {
        return write_in_place(&target, text);
    }
    let name = target
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.cairn-{}.tmp", std::process::id()));
    let result = (|| -> anyhow::Result<bool> {
        // Only this user can read it until it has the old file's mode; a
        // new file gets `new_mode` less the umask.
        let mut f = create_new(
            &tmp,
            existing
                .as_ref()
                .map_or(new_mode.unwrap_or(0o666), |_| 0o600),
        )?;
        f.write_all(text.as_bytes())
            .with_context(|| format!("writing {}", tmp.display()))?;
        let same = match &existing {
            Some(m) => keep_mode_and_owner(&f, m),
            None => true,
        };
        if !same {
            return Ok(false);
        }
        f.sync_all()
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &target)
            .with_context(|| format!("replacing {}", target.display()))?;
        // The rename itself is durable once the folder is.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(true)
    })();
    match result {
        Ok(true) => Ok(()),
        // The temporary file could not be made the file's equal (its owner
        // is another user's): the text goes into the file itself.
        Ok(false) => {
            let _ = std::fs::remove_file(&tmp);
            write_in_place(&target, text)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Removes the file `path` names (the target of a link: the link stays as
/// the user had it, pointing where it pointed).
pub(crate) fn remove(path: &Path) -> anyhow::Result<()> {
    let target = resolve(path)?;
    std::fs::remove_file(&target).with_context(|| format!("removing {}", target.display()))
}

fn write_in_place(target: &Path, text: &str) -> anyhow::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(target)
        .with_context(|| format!("opening {}", target.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", target.display()))
}

/// A new file with `mode` (less the umask).
fn create_new(path: &Path, mode: u32) -> anyhow::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    o.open(path)
        .with_context(|| format!("creating {}", path.display()))
}

#[cfg(unix)]
fn must_write_in_place(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // A rename would part a hard link from its other names.
    m.nlink() > 1
}

#[cfg(not(unix))]
fn must_write_in_place(_: &std::fs::Metadata) -> bool {
    false
}

/// Gives the new file the old one's permission bits and owner; false when
/// the owner cannot be given (then nothing is renamed over the file).
#[cfg(unix)]
fn keep_mode_and_owner(f: &File, old: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(new) = f.metadata() else {
        return false;
    };
    if (new.uid(), new.gid()) != (old.uid(), old.gid())
        && std::os::unix::fs::fchown(f, Some(old.uid()), Some(old.gid())).is_err()
    {
        return false;
    }
    // After the owner: chown clears the set-id bits.
    set_mode(f, old.mode() & 0o7777);
    true
}

#[cfg(not(unix))]
fn keep_mode_and_owner(f: &File, old: &std::fs::Metadata) -> bool {
    let _ = f.set_permissions(old.permissions());
    true
}

#[cfg(unix)]
fn set_mode(f: &File, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = f.set_permissions(std::fs::Permissions::from_mode(mode));
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

    #[test]
    fn mode_link_and_hard_link_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles").join("claude.json");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join(".claude.json");
        symlink("dotfiles/claude.json", &link).unwrap();
        write(&link, "{\"a\": 1}", None).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "{\"a\": 1}");
        assert_eq!(std::fs::metadata(&real).unwrap().mode() & 0o7777, 0o600);
        // A hard link keeps sharing the text.
        let other = dir.path().join("other");
        std::fs::hard_link(&real, &other).unwrap();
        write(&real, "{\"b\": 2}", None).unwrap();
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "{\"b\": 2}");
        // A new file gets the mode asked for; nothing else is left behind.
        let new = dir.path().join("new").join("f.json");
        write(&new, "{}", Some(0o600)).unwrap();
        assert_eq!(std::fs::metadata(&new).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(new.parent().unwrap()).unwrap().count(), 1);
        // A dangling link gets its target made.
        let dangling = dir.path().join("dangling");
        symlink("dotfiles/made.json", &dangling).unwrap();
        write(&dangling, "{}", None).unwrap();
        assert!(dir.path().join("dotfiles/made.json").is_file());
        remove(&dangling).unwrap();
        assert!(!dir.path().join("dotfiles/made.json").exists());
        assert!(std::fs::symlink_metadata(&dangling).is_ok());
    }
}
