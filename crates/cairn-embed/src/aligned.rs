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
impl Plain for f32 {}
// A `repr(transparent)` `u16`: every bit pattern is a half float.
impl Plain for half::f16 {}

/// A growable buffer of `T` whose first element starts on a 64-byte
/// boundary. Derefs to `[T]`.
#[derive(Clone)]
pub(crate) struct Aligned<T: Plain> {
    lines: Vec<Line>,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Plain> Default for Aligned<T> {
    fn default() -> Self {
        Aligned {
            lines: Vec::new(),
            len: 0,
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

    /// Makes the length `len`; elements past the old length are `fill`.
    pub(crate) fn resize(&mut self, len: usize, fill: T) {
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
}

impl<T: Plain> std::ops::Deref for Aligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `lines` holds at least `len · size_of::<T>()` initialised
        // bytes, 64-byte aligned (so aligned for `T`), and `T: Plain` takes
        // any bit pattern.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Plain> std::ops::DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, uniquely borrowed.
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
}
