//! The int8 model as it runs — its layers quantized, smoothed and packed
//! for this CPU's paths — kept in the user cache (`<cache>/prepared/`) and
//! mapped by the next load instead of being made again.
//!
//! Why: a one-off `cairn search` loads the model for one query vector. On
//! pytest (EPYC, AVX2) the load was 92 ms of a 147 ms search: 23 ms the
//! tokenizer, 69 ms reading the 91 MB safetensors file and quantizing its
//! layers. From this file the load maps the packed layers and the word
//! embeddings in place (a query reads only its own tokens' rows) and
//! copies the few small vectors.
//!
//! A file is used only when its key matches to the byte: the calibration
//! file's key ([`StatsKey`]: the weights file's path, length and
//! modification time, the f32 and int8 paths, the calibration tokens), a
//! hash of the numbers that calibration measured, this format's version
//! and the model's shape. Anything else (another
//! model, a changed one, another CPU sharing the cache, a torn or foreign
//! file) is made again from the weights and written anew, atomically (a
//! temporary file renamed into place: a process that maps the old one
//! keeps it). Every length is checked against the shape before a layer is
//! built, so a damaged file is an error that falls back to the weights,
//! never a panic. The numbers are the bits the load would make, so the
//! vectors are the same (`a_prepared_model_gives_the_vectors_of_a_fresh_load`).
//!
//! Like the vector file beside the index, the file is mapped: one cut
//! short under the map by another program would end the process (SIGBUS);
//! cairn itself only ever replaces it by a rename.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::aligned::{Aligned, Plain};
use crate::calibration_cache::{StatsKey, fnv, keep_file};

/// Bumped whenever the layout of a prepared layer changes (what
/// `QLinear` or `Bert` keep, or how the packing lays out its panels).
const FORMAT: &str = "cairn prepared model 1";

const MAGIC: &[u8; 8] = b"CAIRNPM\x01";

/// Where a prepared model for `key` lives under `root` (the user cache),
/// and the key text its file starts with. `shape` names the model's
/// dimensions, so a file of another shape never matches; `stats` is the
/// hash of the calibration's numbers it was smoothed by.
pub(crate) fn location(root: &Path, key: &StatsKey, shape: &str, stats: u64) -> (PathBuf, String) {
    let text = format!("{FORMAT}\n{shape}\nstats {stats:016x}\n{}", key.text());
    let file = root
        .join("prepared")
        .join(format!("{:016x}.bin", fnv(text.bytes())));
    (file, text)
}

/// Builds a prepared file in memory: arrays start on 64-byte boundaries
/// of the file, so that mapped they are aligned as the kernels want.
pub(crate) struct Writer {
    out: Vec<u8>,
}

impl Writer {
    pub(crate) fn new(key: &str) -> Writer {
        let mut w = Writer { out: Vec::new() };
        w.out.extend_from_slice(MAGIC);
        w.u64(key.len() as u64);
        w.out.extend_from_slice(key.as_bytes());
        w
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    /// A count, then the elements from the next 64-byte boundary.
    pub(crate) fn array<T: Plain>(&mut self, xs: &[T]) {
        self.u64(xs.len() as u64);
        self.out.resize(self.out.len().next_multiple_of(64), 0);
        // SAFETY: `T: Plain` has no padding: its elements are plain bytes.
        let bytes =
            unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), size_of_val(xs)) };
        self.out.extend_from_slice(bytes);
    }

    /// Writes the bytes to `file` atomically; a failure costs only the
    /// next load's time.
    pub(crate) fn finish(self, file: &Path) {
        keep_file(file, &self.out, "the next load prepares the model again");
    }
}

/// Reads a mapped prepared file from its start, checking every length.
pub(crate) struct Reader {
    map: Arc<memmap2::Mmap>,
    at: usize,
}

impl Reader {
    /// The file for `key`, past its header; `None` when there is none, it
    /// is not one or its key differs.
    pub(crate) fn open(file: &Path, key: &str) -> Option<Reader> {
        // Only a little-endian machine reads the numbers as written.
        if cfg!(target_endian = "big") {
            return None;
        }
        let f = std::fs::File::open(file).ok()?;
        // SAFETY: the map is read only; cairn replaces the file by rename,
        // never in place (see the module doc for another program's cut).
        let map = unsafe { memmap2::Mmap::map(&f) }.ok()?;
        let mut r = Reader {
            map: Arc::new(map),
            at: 0,
        };
        if r.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let n = usize::try_from(r.u64()?).ok()?;
        if r.take(n)? != key.as_bytes() {
            return None;
        }
        Some(r)
    }

    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n)?;
        let bytes = self.map.get(self.at..end)?;
        self.at = end;
        Some(bytes)
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// An array's count and the offset of its first element.
    fn span<T: Plain>(&mut self) -> Option<(usize, usize)> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.at = self.at.next_multiple_of(64);
        let start = self.at;
        self.take(n.checked_mul(size_of::<T>())?)?;
        Some((n, start))
    }

    /// An array read in place, `None` unless it holds `len` elements.
    pub(crate) fn mapped<T: Plain>(&mut self, len: usize) -> Option<Aligned<T>> {
        let (n, start) = self.span::<T>()?;
        (n == len).then_some(())?;
        Aligned::mapped(&self.map, start, n)
    }

    /// An array copied out, `None` unless it holds `len` elements.
    pub(crate) fn vec<T: Plain>(&mut self, len: usize) -> Option<Vec<T>> {
        let a = self.mapped::<T>(len)?;
        Some(a.to_vec())
    }

    /// An array of any length copied out (at most `max` elements).
    pub(crate) fn vec_any<T: Plain>(&mut self, max: usize) -> Option<Vec<T>> {
        let (n, start) = self.span::<T>()?;
        (n <= max).then_some(())?;
        Some(Aligned::<T>::mapped(&self.map, start, n)?.to_vec())
    }

    /// Whether the whole file was read.
    pub(crate) fn at_end(&self) -> bool {
        self.at == self.map.len()
    }
}
