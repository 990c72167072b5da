//! Buffers that start on a cache line.
//!
//! Why: the kernels load 64 bytes at a time (a 512-bit register of packed
//! weights, an AMX tile row), and a `Vec` from the allocator is only 16-byte
//! aligned (a large one sits 16 bytes into its mapped pages), so each such
//! load read parts of two cache lines. On the lent Xeon, aligned buffers
//! took the AMX GEMM from 295–366 to 396–544 GMAC/s and VNNI from 171–243
//! to 196–247 (`int8_gemm_throughput`, the two builds alternating); on
//! EPYC-512 the two were within noise.

use std::marker::PhantomData;

/// A cache line, aligned as one.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Element types for which every bit pattern is a value and that hold no
/// padding, so bytes of a [`Line`] can be read as them.
pub(crate) trait Plain: Copy + 'static {}
impl Plain for u8 {}
impl Plain for i8 {}
impl Plain for u16 {}
impl Plain for i32 {}
impl Plain for u32 {}
impl Plain for f32 {}
// A `repr(transparent)` `u16`: every bit pattern is a half float.
impl Plain for half::f16 {}

/// A growable buffer of `T` whose first element starts on a 64-byte
/// boundary. Derefs to `[T]`. It either owns its memory or reads a range of
/// a mapped file ([`Aligned::mapped`]: the prepared model of
/// [`crate::prepared`], whose packed weights a one-off search then reads in
/// place instead of quantizing them again); a mapped buffer that is written
/// to or resized first becomes an owned copy.
#[derive(Clone)]
pub(crate) struct Aligned<T: Plain> {
    lines: Vec<Line>,
    len: usize,
    /// The file's map and the byte offset of the first element, 64-byte
    /// aligned; `lines` is then empty.
    map: Option<(std::sync::Arc<memmap2::Mmap>, usize)>,
    _t: PhantomData<T>,
}

impl<T: Plain> Default for Aligned<T> {
    fn default() -> Self {
        Aligned {
            lines: Vec::new(),
            len: 0,
            map: None,
            _t: PhantomData,
        }
    }
}

impl<T: Plain> Aligned<T> {
    /// `len` elements, each `fill`.
    pub(crate) fn filled(len: usize, fill: T) -> Aligned<T> {
        let mut a = Aligned::default();
        a.resize(len, fill);
        a
    }

    /// `len` elements of `map` from byte `offset`; `None` unless the range
    /// lies in the map and starts on a 64-byte boundary of memory.
    pub(crate) fn mapped(
        map: &std::sync::Arc<memmap2::Mmap>,
        offset: usize,
        len: usize,
    ) -> Option<Aligned<T>> {
        let end = len.checked_mul(size_of::<T>())?.checked_add(offset)?;
        if end > map.len() || !(map.as_ptr() as usize + offset).is_multiple_of(64) {
            return None;
        }
        Some(Aligned {
            lines: Vec::new(),
            len,
            map: Some((map.clone(), offset)),
            _t: PhantomData,
        })
    }

    /// Whether the elements are read from a mapped file.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    /// Makes the length `len`; elements past the old length are `fill`.
    pub(crate) fn resize(&mut self, len: usize, fill: T) {
        self.own();
        let old = self.len;
        let bytes = len
            .checked_mul(size_of::<T>())
            .expect("buffer size overflows");
        self.lines.resize(bytes.div_ceil(64), Line([0; 64]));
        self.len = len;
        if len > old {
            self[old..].fill(fill);
        }
    }

    /// A mapped buffer becomes an owned copy of its elements.
    fn own(&mut self) {
        if self.map.is_none() {
            return;
        }
        let bytes = self.len * size_of::<T>();
        let mut lines = vec![Line([0; 64]); bytes.div_ceil(64)];
        // SAFETY: `lines` holds at least `bytes` bytes; the source is the
        // mapped range `mapped` checked, `bytes` long.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.as_ptr().cast::<u8>(),
                lines.as_mut_ptr().cast::<u8>(),
                bytes,
            );
        }
        self.lines = lines;
        self.map = None;
    }
}

impl<T: Plain> std::ops::Deref for Aligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        let ptr = match &self.map {
            // SAFETY: `mapped` checked that `len` elements from `offset`
            // lie in the map, which the buffer keeps alive.
            Some((map, offset)) => unsafe { map.as_ptr().add(*offset) },
            None => self.lines.as_ptr().cast::<u8>(),
        };
        // SAFETY: at `ptr` lie at least `len · size_of::<T>()` initialised
        // bytes, 64-byte aligned (so aligned for `T`), and `T: Plain` takes
        // any bit pattern.
        unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), self.len) }
    }
}

impl<T: Plain> std::ops::DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.own();
        // SAFETY: as for `deref`, owned and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<T>(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_start_on_a_cache_line_and_keep_their_elements() {
        let mut b = Aligned::<f32>::filled(5, 7.0);
        assert_eq!(&b[..], &[7.0; 5]);
        for len in [70, 16, 1000, 4096 + 3] {
            let before: Vec<f32> = b.to_vec();
            b.resize(len, 9.0);
            assert_eq!(b.as_ptr() as usize % 64, 0, "len {len}");
            assert_eq!(b.len(), len);
            let kept = before.len().min(len);
            assert_eq!(&b[..kept], &before[..kept]);
            assert!(b[kept..].iter().all(|&v| v == 9.0));
            b[len - 1] = 1.0;
        }
        let bytes = Aligned::<u8>::filled(3, 0xAB);
        assert_eq!(&bytes[..], &[0xAB; 3]);
        assert_eq!(Aligned::<u16>::default().len(), 0);
    }

    #[test]
    fn a_mapped_buffer_reads_the_file_and_becomes_owned_when_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.bin");
        let mut bytes = vec![0u8; 64];
        bytes.extend((0..10u32).flat_map(|i| (i as f32).to_le_bytes()));
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let map = std::sync::Arc::new(unsafe { memmap2::Mmap::map(&file) }.unwrap());
        assert!(
            Aligned::<f32>::mapped(&map, 64, 11).is_none(),
            "past the end"
        );
        assert!(Aligned::<f32>::mapped(&map, 4, 2).is_none(), "unaligned");
        let mut m = Aligned::<f32>::mapped(&map, 64, 10).unwrap();
        assert!(m.is_mapped());
        assert_eq!(m[3], 3.0);
        m[3] = 7.0;
        assert!(!m.is_mapped());
        assert_eq!((m[2], m[3], m.len()), (2.0, 7.0, 10));
        assert_eq!(m.as_ptr() as usize % 64, 0);
        assert_eq!(
            &map[64 + 12..64 + 16],
            &3.0f32.to_le_bytes(),
            "the file unchanged"
        );
    }
}
