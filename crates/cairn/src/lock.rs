//! An exclusive lock on a file, across threads and processes (flock): the
//! critical sections of one project — a capture's state, a memory's
//! near-duplicate check and write.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result, io};

/// An exclusive lock on a file for the life of the value, taken within
/// `wait` (hooks of several sessions may end at the same moment).
pub(crate) struct Locked(std::fs::File);

impl Locked {
    pub(crate) fn take(path: &Path, wait: Duration) -> Result<Locked> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(io(path))?;
        let deadline = Instant::now() + wait;
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(Locked(f)),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::Query(format!(
                        "{} is held by another cairn process past {} s",
                        path.display(),
                        wait.as_secs()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(path)(e)),
            }
        }
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}
