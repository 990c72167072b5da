//! What the files a process leaves beside the index for the next one (the
//! knowledge graph, the vector matrix) have in common: why one is not read,
//! and bounds-checked reads over its bytes, so that a damaged file is an
//! error, never a panic or an index out of bounds.

/// Why a cache file (graph or vectors) was not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CacheFileError {
    /// The file was made from another state of the index (or by another version).
    #[error("built from another state of the index")]
    Stale,
    /// The file is damaged or not such a file.
    #[error("not a readable cache file: {0}")]
    Corrupt(&'static str),
}

/// Appends `s` as a u32 byte length and its UTF-8.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Bounds-checked reads over the file's bytes.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of a file that must open with `magic`, then
    /// the format byte `format` and the string `stamp` (what the file was
    /// made from): another format or stamp is stale, another magic is not
    /// such a file (`what` says which).
    pub(crate) fn open(
        bytes: &'a [u8],
        magic: &[u8],
        format: u8,
        stamp: &str,
        what: &'static str,
    ) -> Result<Reader<'a>, CacheFileError> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(magic.len())? != magic {
            return Err(CacheFileError::Corrupt(what));
        }
        if r.take(1)?[0] != format || r.str()? != stamp {
            return Err(CacheFileError::Stale);
        }
        Ok(r)
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], CacheFileError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(CacheFileError::Corrupt("cut short"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], CacheFileError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A u64 count whose items take at least `min_bytes` each: no larger
    /// than what is left could hold.
    pub(crate) fn count(&mut self, min_bytes: usize) -> Result<usize, CacheFileError> {
        let n = u64::from_le_bytes(self.array()?);
        self.fits(n, min_bytes)
    }

    /// [`Reader::count`] written as a u32.
    pub(crate) fn count32(&mut self, min_bytes: usize) -> Result<usize, CacheFileError> {
        let n = u64::from(u32::from_le_bytes(self.array()?));
        self.fits(n, min_bytes)
    }

    pub(crate) fn fits(&self, n: u64, min_bytes: usize) -> Result<usize, CacheFileError> {
        let left = (self.bytes.len() - self.at) as u64;
        if n.saturating_mul(min_bytes as u64) > left {
            return Err(CacheFileError::Corrupt("a count larger than the file"));
        }
        Ok(n as usize)
    }

    pub(crate) fn str(&mut self) -> Result<&'a str, CacheFileError> {
        let n = u32::from_le_bytes(self.array()?) as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| CacheFileError::Corrupt("text not UTF-8"))
    }

    /// `n` four-byte words.
    pub(crate) fn words(
        &mut self,
        n: usize,
    ) -> Result<impl Iterator<Item = [u8; 4]> + 'a, CacheFileError> {
        let bytes = self.take(n.checked_mul(4).ok_or(CacheFileError::Corrupt("count"))?)?;
        Ok(bytes.chunks_exact(4).map(|w| [w[0], w[1], w[2], w[3]]))
    }
}

/// A file kept beside the index (the vector matrix, the graph), mapped
/// read-only with its pages loaded up front: the graph's file is parsed
/// straight from the map, where reading it first copied it into a fresh
/// buffer (sympy's 20 MB graph: a tenth of a one-shot search in the copy
/// and the buffer's page faults).
pub fn map_file(path: &std::path::Path) -> std::io::Result<memmap2::Mmap> {
    let file = std::fs::File::open(path)?;
    // SAFETY: the map is read only and the files mapped here are only ever
    // replaced whole, by rename (a new inode), never truncated or written
    // in place; a process that has the old one mapped keeps it.
    unsafe { memmap2::MmapOptions::new().populate().map(&file) }
}
