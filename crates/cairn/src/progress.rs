//! Progress of long operations (index, embed, eval): the [`Progress`] trait
//! the CLI draws bars with, and [`NoProgress`], which shows nothing.

/// Receives progress of long operations (the CLI draws bars with it).
pub trait Progress: Sync {
    /// A stage begins with `total` units (`0` when unknown).
    fn stage(&self, name: &str, total: u64);
    /// `n` more units of the current stage are done.
    fn inc(&self, n: u64);
    /// The current stage is over.
    fn finish(&self);
}

/// Progress that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn stage(&self, _: &str, _: u64) {}
    fn inc(&self, _: u64) {}
    fn finish(&self) {}
}
