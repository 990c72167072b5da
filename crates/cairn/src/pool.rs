//! The engine's pool of read connections: a read takes an idle one (opening
//! another when none is idle and the writer is free) and gives it back when
//! dropped, so concurrent searches run side by side, each on its own
//! connection, and an index pass holding the writer does not block them.

use cairn_core::{IndexReader, IndexSnapshot, sync};

use crate::engine::Engine;
use crate::error::Result;

/// Idle read connections kept for reuse; more are closed when returned.
const MAX_IDLE_READERS: usize = 8;

/// A read connection borrowed from the engine's pool.
pub(crate) struct PooledReader<'a> {
    engine: &'a Engine,
    reader: Option<Box<dyn IndexReader>>,
}

impl std::ops::Deref for PooledReader<'_> {
    type Target = Box<dyn IndexReader>;
    fn deref(&self) -> &Self::Target {
        self.reader.as_ref().expect("reader present until drop")
    }
}

impl std::ops::DerefMut for PooledReader<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.reader.as_mut().expect("reader present until drop")
    }
}

impl Drop for PooledReader<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.reader.take() {
            let mut idle = sync::lock(&self.engine.readers);
            if idle.len() < MAX_IDLE_READERS {
                idle.push(r);
            }
            self.engine.reader_back.notify_one();
        }
    }
}

impl Engine {
    /// A read connection from the pool, back in it when dropped.
    pub(crate) fn reader(&self) -> Result<PooledReader<'_>> {
        let mut idle = sync::lock(&self.readers);
        loop {
            if let Some(r) = idle.pop() {
                return Ok(PooledReader {
                    engine: self,
                    reader: Some(r),
                });
            }
            // A new connection comes from the writer; while an index pass
            // holds it, wait for a reader to come back instead.
            if let Some(store) = sync::try_lock(&self.store) {
                drop(idle);
                let r = store.reader()?;
                return Ok(PooledReader {
                    engine: self,
                    reader: Some(r),
                });
            }
            idle = sync::wait_timeout(
                &self.reader_back,
                idle,
                std::time::Duration::from_millis(50),
            )
            .0;
        }
    }

    /// A read snapshot of the index, for the engine's other read paths.
    pub(crate) fn with_snapshot<T>(
        &self,
        f: impl FnOnce(&dyn IndexSnapshot) -> Result<T>,
    ) -> Result<T> {
        let mut reader = self.reader()?;
        let snap = reader.snapshot()?;
        f(&*snap)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::engine::Engine;
    use cairn_core::sync;

    #[test]
    fn concurrent_reads_take_their_own_connection_and_give_it_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let e = Engine::open(dir.path(), Config::default(), None).expect("engine");
        let idle = |e: &Engine| sync::lock(&e.readers).len();
        assert_eq!(idle(&e), 1);
        {
            let mut a = e.reader().expect("first reader");
            let mut b = e.reader().expect("second reader, opened beside the first");
            assert_eq!(idle(&e), 0);
            // Both read at once.
            let sa = a.snapshot().expect("snapshot a");
            let sb = b.snapshot().expect("snapshot b");
            assert_eq!(sa.generation().ok(), sb.generation().ok());
        }
        assert_eq!(idle(&e), 2, "both back in the pool");
        // While a pass holds the writer, a read reuses an idle connection
        // instead of waiting for the writer.
        let _writer = sync::lock(&e.store);
        let r = e.reader().expect("idle reader while the writer is busy");
        drop(r);
        assert_eq!(idle(&e), 2);
    }
}
