//! Intel AMX (Advanced Matrix Extensions) for the int8 linear layers and,
//! where the CPU has `amx_bf16`, the int8 path's attention: the tile
//! instructions of Xeons since Sapphire Rapids.
//!
//! Why: one `tdpbusd` multiplies a 16 × 64 block of u8 activations by a
//! 64 × 16 block of s8 weights into 16 × 16 i32 sums, 16,384 products,
//! where a 512-bit `vpdpbusd` makes 64. On such a Xeon (the lent 16-core
//! machine) onnxruntime's int8 ran 1.7× our AVX-512 VNNI path at one thread,
//! and the integer products were half of our int8 time.
//!
//! The layout needs no new packing: a weight tile is 16 rows of 64 bytes,
//! each row one group of 4 along `k` for 16 columns, and a VNNI panel of
//! 32 columns holds exactly that at a stride of 128 bytes (its left and
//! right halves). Activations are read in place, 16 rows of 64 bytes at
//! the row stride, so `k` is padded to a multiple of 64 and the activation
//! buffer to whole 32-row blocks (see `QLinear`).
//!
//! Attention (`QKᵀ`, then the probabilities times `V`) runs on `tdpbf16ps`,
//! 16 × 32 bfloat16 by 32 × 16 into 16 × 16 f32 sums: a 32-wide head is one
//! tile row, so a 16 × 16 block of scores is one instruction per pair of
//! parts (queries and keys are each two bfloat16, `hi + lo`: three). Keys
//! and values are packed in pairs along `k` ([`pack_keys`],
//! [`pack_values`]); queries and probabilities are read in place.
//!
//! Rust has no stable AMX intrinsics, so the few instructions are written
//! as inline assembly; the compiler never uses the tile registers, so their
//! contents persist between the `asm!` blocks of one tile. Linux gives a
//! process the tile state only on request (`arch_prctl(ARCH_REQ_XCOMP_PERM,
//! XFEATURE_XTILEDATA)`), made once; a refusal makes the path unsupported.

/// Rows of a tile and of each half of a 32-row block.
pub(crate) const ROWS: usize = 16;
/// Bytes of `k` one tile step covers (16 groups of 4).
pub(crate) const K_STEP: usize = 64;

/// A 32 × 32 block of i32 sums: `c[r][j] = Σ_k a[r][k] · b[k][j]` over
/// `steps` steps of 64 bytes of `k`. `a` is 32 rows of u8 activations `lda`
/// bytes apart; `b` is a 32-column VNNI panel (`steps × 16` groups of 128
/// bytes); `c` receives 32 rows of 32 i32, row-major.
pub(crate) type Block32 =
    unsafe fn(a: *const u8, lda: usize, steps: usize, b: *const i8, c: *mut i32);

/// [`Block32`] in plain Rust with the tile instructions' semantics, reading
/// and writing exactly the bytes the AMX version does: the tests run the
/// AMX path's blocking and addressing on any CPU with it.
///
/// # Safety
/// As [`Block32`]: 32 rows of `lda ≥ 64·steps` bytes at `a`, `steps × 2048`
/// bytes at `b`, 1,024 i32 at `c`.
#[cfg(test)]
pub(crate) unsafe fn block32_emulated(
    a: *const u8,
    lda: usize,
    steps: usize,
    b: *const i8,
    c: *mut i32,
) {
    let mut acc = [[0i32; 32]; 32];
    for step in 0..steps {
        for (r, acc_r) in acc.iter_mut().enumerate() {
            for g in 0..ROWS {
                for (j, acc_rj) in acc_r.iter_mut().enumerate() {
                    for t in 0..4 {
                        // SAFETY: within the caller's bounds.
                        let (x, w) = unsafe {
                            (
                                *a.add(r * lda + step * K_STEP + 4 * g + t),
                                *b.add((step * ROWS + g) * 128 + 4 * j + t),
                            )
                        };
                        *acc_rj += i32::from(x) * i32::from(w);
                    }
                }
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            // SAFETY: within the caller's bounds.
            unsafe { c.add(r * 32 + j).write(*v) };
        }
    }
}

/// bf16 pairs along `k` one tile row holds (64 bytes).
pub(crate) const BF16_K: usize = 32;

/// `x` as the sum of two bfloat16, `hi` (nearest) and `lo` (nearest of
/// what is left).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn split(x: f32) -> (u16, u16) {
    let hi = bf16(x);
    (hi, bf16(x - f32::from_bits(u32::from(hi) << 16)))
}

/// Rounds runs of 32 f32 to bfloat16, nearest even: in plain Rust
/// ([`Plain`], for the tests on any CPU) or by `vcvtne2ps2bf16`
/// ([`Avx512Bf16`], every CPU with AMX has it: one instruction for 32
/// values where the plain rounding took a sixth of the tiled attention).
pub(crate) trait Rounding: Copy {
    /// `dst[i] = bf16(src[i] · s)` for `i < 32`.
    ///
    /// # Safety
    /// 32 values at `src` and at `dst`; the CPU has what the rounding uses.
    unsafe fn scaled32(self, src: *const f32, s: f32, dst: *mut u16);
    /// `(hi[i], lo[i]) = split(src[i] · s)` for `i < 32`.
    ///
    /// # Safety
    /// As [`Rounding::scaled32`], with 32 values at `hi` and at `lo`.
    unsafe fn split32(self, src: *const f32, s: f32, hi: *mut u16, lo: *mut u16);
}

/// [`Rounding`] in plain Rust ([`bf16`], [`split`]).
#[derive(Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Plain;

impl Rounding for Plain {
    unsafe fn scaled32(self, src: *const f32, s: f32, dst: *mut u16) {
        for i in 0..32 {
            // SAFETY: the caller's bounds.
            unsafe { *dst.add(i) = bf16(*src.add(i) * s) };
        }
    }

    unsafe fn split32(self, src: *const f32, s: f32, hi: *mut u16, lo: *mut u16) {
        for i in 0..32 {
            // SAFETY: the caller's bounds.
            unsafe { (*hi.add(i), *lo.add(i)) = split(*src.add(i) * s) };
        }
    }
}

/// [`Rounding`] by AVX-512 BF16's `vcvtne2ps2bf16` (the same values as
/// [`Plain`] for normal numbers; subnormals become zero).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx512Bf16;

#[cfg(target_arch = "x86_64")]
impl Rounding for Avx512Bf16 {
    #[inline(always)]
    unsafe fn scaled32(self, src: *const f32, s: f32, dst: *mut u16) {
        // SAFETY: the caller's bounds and CPU.
        unsafe { x86::scaled32(src, s, dst) }
    }

    #[inline(always)]
    unsafe fn split32(self, src: *const f32, s: f32, hi: *mut u16, lo: *mut u16) {
        // SAFETY: the caller's bounds and CPU.
        unsafe { x86::split32(src, s, hi, lo) }
    }
}

/// `x` in bfloat16 (its top 16 bits), rounded to nearest, ties to even:
/// what `vcvtneps2bf16` gives for normal values (it makes subnormals zero).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    (b.wrapping_add(0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

/// The f32 a bfloat16 stands for.
#[cfg(test)]
#[inline(always)]
pub(crate) fn f32_of(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// One 32-row block of attention scores on bf16 tiles, each operand as
/// the sum of two bfloat16 (`x ≈ hi + lo`, [`split`]: 16 bits of mantissa
/// where one bfloat16 keeps 8): `c[r][16·j + n] = Σ_k (qh·kh + qh·kl +
/// ql·kh)`, the `ql·kl` term (2⁻¹⁶ of the product) left out. `a` is 32
/// query rows `lda` bytes apart, each 32 `hi` then 32 `lo`; `b` holds `nb`
/// key tiles of 2,048 bytes ([`pack_keys`]: `hi`, then `lo`); `c` receives
/// 32 rows of `16·nb` f32, `ldc` bytes apart.
///
/// Why two: a score's error goes through `exp` into its probability as a
/// relative error, and with one bfloat16 per operand it moved code-QA's
/// test half by 0.003 MRR; the tiles do three products as fast as the
/// conversions around them take.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) type ScoresRow =
    unsafe fn(a: *const u16, lda: usize, b: *const u16, nb: usize, c: *mut f32, ldc: usize);

/// One 32-row block of a head's context on bf16 tiles:
/// `c[r][n] = Σ_k a[r][k] · v[k][n]` over `steps` steps of 32 keys, where
/// `a` is 32 rows of bf16 probabilities `lda` bytes apart and `b` the
/// value tiles of [`pack_values`] (two per step); `c` receives 32 rows of
/// 32 f32, row-major.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) type ContextRow =
    unsafe fn(a: *const u16, lda: usize, steps: usize, b: *const u16, c: *mut f32);

/// Keys as `tdpbf16ps`'s right operand for `QKᵀ`, 16 keys a tile pair:
/// tile `j`'s row `r` holds, for each key `n` of the 16, its elements `2r`
/// and `2r + 1`, the `hi` parts' tile first and the `lo` parts' after it
/// (`dst[j·1024 + 512·part + r·32 + 2n + p] = split(K[16j + n][2r + p])`).
/// `k` holds `t` rows of 32 values `ld` apart; keys from `t` to
/// `dst.len() / 64` are zeros.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn pack_keys<R: Rounding>(round: R, k: &[f32], ld: usize, t: usize, dst: &mut [u16]) {
    let (mut hi_row, mut lo_row) = ([0u16; BF16_K], [0u16; BF16_K]);
    for (j, pair) in dst.chunks_exact_mut(32 * BF16_K).enumerate() {
        let (hi, lo) = pair.split_at_mut(16 * BF16_K);
        for n in 0..16 {
            let key = 16 * j + n;
            if key < t {
                let row = &k[key * ld..][..BF16_K];
                // SAFETY: 32 values in `row` and in each of the two rows.
                unsafe {
                    round.split32(row.as_ptr(), 1.0, hi_row.as_mut_ptr(), lo_row.as_mut_ptr())
                };
            } else {
                hi_row = [0; BF16_K];
                lo_row = [0; BF16_K];
            }
            for r in 0..16 {
                for p in 0..2 {
                    hi[r * 32 + 2 * n + p] = hi_row[2 * r + p];
                    lo[r * 32 + 2 * n + p] = lo_row[2 * r + p];
                }
            }
        }
    }
}

/// Values as `tdpbf16ps`'s right operand for `PV`: per step of 32 keys,
/// two tiles (the head's columns 0–15, then 16–31), each row `r` holding
/// keys `2r` and `2r + 1` of the step for its 16 columns
/// (`dst[(2s + h)·512 + r·32 + 2n + p] = V[32s + 2r + p][16h + n]`). `v`
/// holds `t` rows of 32 values `ld` apart; keys from `t` on are zeros.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn pack_values<R: Rounding>(round: R, v: &[f32], ld: usize, t: usize, dst: &mut [u16]) {
    let mut row16 = [0u16; BF16_K];
    for (s, step) in dst.chunks_exact_mut(2 * 16 * BF16_K).enumerate() {
        for r in 0..16 {
            for p in 0..2 {
                let key = 32 * s + 2 * r + p;
                if key < t {
                    let row = &v[key * ld..][..BF16_K];
                    // SAFETY: 32 values in `row` and in `row16`.
                    unsafe { round.scaled32(row.as_ptr(), 1.0, row16.as_mut_ptr()) };
                } else {
                    row16 = [0; BF16_K];
                }
                for h in 0..2 {
                    let tile = &mut step[h * 512..][..512];
                    for n in 0..16 {
                        tile[r * 32 + 2 * n + p] = row16[16 * h + n];
                    }
                }
            }
        }
    }
}

/// [`ScoresRow`] in plain Rust with `tdpbf16ps`'s operands (products of
/// bf16 values summed in f32), reading and writing the bytes the AMX
/// version does.
///
/// # Safety
/// As [`ScoresRow`].
#[cfg(test)]
pub(crate) unsafe fn scores_row_emulated(
    a: *const u16,
    lda: usize,
    b: *const u16,
    nb: usize,
    c: *mut f32,
    ldc: usize,
) {
    for j in 0..nb {
        for r in 0..32 {
            for n in 0..16 {
                let mut acc = 0.0f32;
                // hi·hi, hi·lo, lo·hi, as the tiles sum them.
                for (qa, kb) in [(0, 0), (0, 512), (32, 0)] {
                    for kk in 0..16 {
                        for p in 0..2 {
                            // SAFETY: within the caller's bounds.
                            let (x, w) = unsafe {
                                (
                                    *a.cast::<u8>()
                                        .add(r * lda)
                                        .cast::<u16>()
                                        .add(qa + 2 * kk + p),
                                    *b.add(j * 1024 + kb + kk * 32 + 2 * n + p),
                                )
                            };
                            acc += f32_of(x) * f32_of(w);
                        }
                    }
                }
                // SAFETY: within the caller's bounds.
                unsafe { *c.cast::<u8>().add(r * ldc).cast::<f32>().add(16 * j + n) = acc };
            }
        }
    }
}

/// [`ContextRow`] in plain Rust, as [`scores_row_emulated`].
///
/// # Safety
/// As [`ContextRow`].
#[cfg(test)]
pub(crate) unsafe fn context_row_emulated(
    a: *const u16,
    lda: usize,
    steps: usize,
    b: *const u16,
    c: *mut f32,
) {
    let mut acc = [[0.0f32; 32]; 32];
    for s in 0..steps {
        for (r, acc_r) in acc.iter_mut().enumerate() {
            for h in 0..2 {
                for n in 0..16 {
                    for kk in 0..16 {
                        for p in 0..2 {
                            // SAFETY: within the caller's bounds.
                            let (x, w) = unsafe {
                                (
                                    *a.cast::<u8>()
                                        .add(r * lda)
                                        .cast::<u16>()
                                        .add(32 * s + 2 * kk + p),
                                    *b.add((2 * s + h) * 512 + kk * 32 + 2 * n + p),
                                )
                            };
                            acc_r[16 * h + n] += f32_of(x) * f32_of(w);
                        }
                    }
                }
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        for (n, v) in row.iter().enumerate() {
            // SAFETY: within the caller's bounds.
            unsafe { c.add(r * 32 + n).write(*v) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Tiles, block32, context_row, cpu_has, permitted, permitted_bf16, scores_row};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;
    use std::sync::OnceLock;

    use super::{K_STEP, ROWS};

    /// Whether CPUID reports `feature` (`amx_tile`, `amx_int8`).
    pub(crate) fn cpu_has(feature: &str) -> bool {
        let bit = match feature {
            "amx_tile" => 24,
            "amx_int8" => 25,
            "amx_bf16" => 22,
            _ => return false,
        };
        // SAFETY: CPUID is on every x86-64 CPU; leaf 7 reads as zeros
        // where unsupported.
        let leaf = std::arch::x86_64::__cpuid_count(7, 0);
        (leaf.edx >> bit) & 1 == 1
    }

    /// Whether the kernel lets this process use the tile data: asked once.
    pub(crate) fn permitted() -> bool {
        static PERMITTED: OnceLock<bool> = OnceLock::new();
        *PERMITTED.get_or_init(|| {
            if !(cpu_has("amx_tile") && cpu_has("amx_int8")) {
                return false;
            }
            #[cfg(target_os = "linux")]
            {
                const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
                const XFEATURE_XTILEDATA: libc::c_long = 18;
                // SAFETY: a plain system call with two integer arguments.
                let rc = unsafe {
                    libc::syscall(
                        libc::SYS_arch_prctl,
                        ARCH_REQ_XCOMP_PERM,
                        XFEATURE_XTILEDATA,
                    )
                };
                rc == 0
            }
            #[cfg(not(target_os = "linux"))]
            {
                false
            }
        })
    }

    /// 32 values of `src` times `s` in bfloat16 at `dst`.
    ///
    /// # Safety
    /// 32 values at each; a CPU with AVX-512 F and BF16.
    #[target_feature(enable = "avx512f,avx512bf16")]
    #[inline]
    pub(crate) unsafe fn scaled32(src: *const f32, s: f32, dst: *mut u16) {
        use std::arch::x86_64::*;
        // SAFETY: the caller's bounds.
        unsafe {
            let s = _mm512_set1_ps(s);
            let a = _mm512_mul_ps(_mm512_loadu_ps(src), s);
            let b = _mm512_mul_ps(_mm512_loadu_ps(src.add(16)), s);
            let r: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(b, a));
            _mm512_storeu_si512(dst.cast(), r);
        }
    }

    /// 32 values of `src` times `s` as `hi` + `lo` bfloat16.
    ///
    /// # Safety
    /// As [`scaled32`], with 32 values at `hi` and at `lo`.
    #[target_feature(enable = "avx512f,avx512bf16")]
    #[inline]
    pub(crate) unsafe fn split32(src: *const f32, s: f32, hi: *mut u16, lo: *mut u16) {
        use std::arch::x86_64::*;
        // SAFETY: the caller's bounds.
        unsafe {
            let s = _mm512_set1_ps(s);
            let a = _mm512_mul_ps(_mm512_loadu_ps(src), s);
            let b = _mm512_mul_ps(_mm512_loadu_ps(src.add(16)), s);
            let h: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(b, a));
            // hi back in f32: each 16-bit half shifted to the top of a lane.
            let ha = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(
                _mm512_castsi512_si256(h),
            )));
            let hb = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(
                _mm512_extracti64x4_epi64::<1>(h),
            )));
            let l: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(
                _mm512_sub_ps(b, hb),
                _mm512_sub_ps(a, ha),
            ));
            _mm512_storeu_si512(hi.cast(), h);
            _mm512_storeu_si512(lo.cast(), l);
        }
    }

    /// Whether the tiles may also multiply bfloat16 (`amx_bf16`, Sapphire
    /// Rapids on, with AVX-512 BF16 for the rounding): the attention of the
    /// int8 path runs on them.
    pub(crate) fn permitted_bf16() -> bool {
        // Asked once: CPUID traps to the hypervisor in a virtual machine,
        // and every attention layer asks.
        static PERMITTED: OnceLock<bool> = OnceLock::new();
        *PERMITTED.get_or_init(|| {
            permitted() && cpu_has("amx_bf16") && std::arch::is_x86_feature_detected!("avx512bf16")
        })
    }

    /// The tile registers configured as eight 16 × 64-byte tiles for as
    /// long as this value lives on this thread (`ldtilecfg` … `tilerelease`).
    pub(crate) struct Tiles(());

    impl Tiles {
        /// # Safety
        /// [`permitted`] returned true.
        pub(crate) unsafe fn configure() -> Tiles {
            // The 64-byte configuration: palette 1, start row 0, then the
            // bytes per row of each tile (u16 from byte 16) and its rows
            // (u8 from byte 48).
            #[repr(C, align(64))]
            struct Config([u8; 64]);
            let mut cfg = Config([0; 64]);
            cfg.0[0] = 1;
            for t in 0..8 {
                cfg.0[16 + 2 * t..18 + 2 * t].copy_from_slice(&(K_STEP as u16).to_le_bytes());
                cfg.0[48 + t] = ROWS as u8;
            }
            // SAFETY: a valid configuration; the CPU has AMX and the
            // process the permission (the caller's contract).
            unsafe { asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly)) };
            Tiles(())
        }
    }

    impl Drop for Tiles {
        fn drop(&mut self) {
            // SAFETY: the tiles were configured by `configure`.
            unsafe { asm!("tilerelease", options(nostack, nomem)) };
        }
    }

    /// tmm0–3, the four 16 × 16 blocks of sums of a 32 × 32 block, zeroed.
    ///
    /// # Safety
    /// Inside a live [`Tiles`] on this thread.
    #[inline(always)]
    unsafe fn zero_sums() {
        // SAFETY: the caller's configuration.
        unsafe {
            asm!(
                "tilezero tmm0",
                "tilezero tmm1",
                "tilezero tmm2",
                "tilezero tmm3",
                options(nostack, nomem)
            )
        };
    }

    /// tmm0–3 written out as one row-major 32 × 32 block of 4-byte sums
    /// (i32 or f32) at `c`: tmm0 its top left, tmm1 top right, tmm2 bottom
    /// left, tmm3 bottom right.
    ///
    /// # Safety
    /// 4,096 bytes at `c`, inside a live [`Tiles`] on this thread.
    #[inline(always)]
    unsafe fn store_sums(c: *mut u8) {
        // SAFETY: the caller's bounds and configuration.
        unsafe {
            asm!(
                "tilestored [{c0} + {ldc}*1], tmm0",
                "tilestored [{c1} + {ldc}*1], tmm1",
                "tilestored [{c2} + {ldc}*1], tmm2",
                "tilestored [{c3} + {ldc}*1], tmm3",
                c0 = in(reg) c,
                c1 = in(reg) c.add(64),
                c2 = in(reg) c.add(16 * 128),
                c3 = in(reg) c.add(16 * 128 + 64),
                ldc = in(reg) 128usize,
                options(nostack)
            );
        }
    }

    /// [`super::Block32`] on the tiles: tmm0–3 hold the four 16 × 16 sums,
    /// tmm4–5 the two 16-row halves of the activations, tmm6–7 the two
    /// 16-column halves of the weights.
    ///
    /// # Safety
    /// As [`super::Block32`], inside a live [`Tiles`] on this thread.
    pub(crate) unsafe fn block32(
        a: *const u8,
        lda: usize,
        steps: usize,
        b: *const i8,
        c: *mut i32,
    ) {
        // SAFETY: the caller's bounds and configuration; tileloadd reads
        // 16 rows of 64 bytes at the given stride, tilestored writes them.
        unsafe {
            zero_sums();
            for step in 0..steps {
                let a0 = a.add(step * K_STEP);
                let a1 = a0.add(ROWS * lda);
                let b0 = b.add(step * ROWS * 128);
                let b1 = b0.add(64);
                asm!(
                    "tileloadd tmm4, [{a0} + {lda}*1]",
                    "tileloadd tmm6, [{b0} + {ldb}*1]",
                    "tileloadd tmm7, [{b1} + {ldb}*1]",
                    "tdpbusd tmm0, tmm4, tmm6",
                    "tileloadd tmm5, [{a1} + {lda}*1]",
                    "tdpbusd tmm1, tmm4, tmm7",
                    "tdpbusd tmm2, tmm5, tmm6",
                    "tdpbusd tmm3, tmm5, tmm7",
                    a0 = in(reg) a0,
                    a1 = in(reg) a1,
                    b0 = in(reg) b0,
                    b1 = in(reg) b1,
                    lda = in(reg) lda,
                    ldb = in(reg) 128usize,
                    options(nostack, readonly)
                );
            }
            store_sums(c.cast());
        }
    }

    /// [`super::ScoresRow`] on the tiles: tmm2–5 hold the queries' `hi`
    /// and `lo` parts for rows 0–15 and 16–31, tmm6–7 a key tile's `hi` and
    /// `lo`, tmm0–1 the two 16 × 16 blocks of its scores (two sums in
    /// flight, three products each).
    ///
    /// # Safety
    /// As [`super::ScoresRow`], inside a live [`Tiles`] on this thread, on
    /// a CPU with `amx_bf16`.
    pub(crate) unsafe fn scores_row(
        a: *const u16,
        lda: usize,
        b: *const u16,
        nb: usize,
        c: *mut f32,
        ldc: usize,
    ) {
        // SAFETY: the caller's bounds and configuration.
        unsafe {
            let a1 = a.cast::<u8>().add(16 * lda).cast::<u16>();
            asm!(
                "tileloadd tmm2, [{a0} + {lda}*1]",
                "tileloadd tmm3, [{a0l} + {lda}*1]",
                "tileloadd tmm4, [{a1} + {lda}*1]",
                "tileloadd tmm5, [{a1l} + {lda}*1]",
                a0 = in(reg) a,
                a0l = in(reg) a.add(32),
                a1 = in(reg) a1,
                a1l = in(reg) a1.add(32),
                lda = in(reg) lda,
                options(nostack, readonly)
            );
            for j in 0..nb {
                let c0 = c.add(16 * j);
                asm!(
                    "tilezero tmm0",
                    "tilezero tmm1",
                    "tileloadd tmm6, [{bh} + {ldb}*1]",
                    "tileloadd tmm7, [{bl} + {ldb}*1]",
                    "tdpbf16ps tmm0, tmm2, tmm6",
                    "tdpbf16ps tmm1, tmm4, tmm6",
                    "tdpbf16ps tmm0, tmm2, tmm7",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    "tdpbf16ps tmm0, tmm3, tmm6",
                    "tdpbf16ps tmm1, tmm5, tmm6",
                    "tilestored [{c0} + {ldc}*1], tmm0",
                    "tilestored [{c1} + {ldc}*1], tmm1",
                    bh = in(reg) b.add(j * 1024),
                    bl = in(reg) b.add(j * 1024 + 512),
                    ldb = in(reg) 64usize,
                    c0 = in(reg) c0,
                    c1 = in(reg) c0.cast::<u8>().add(16 * ldc),
                    ldc = in(reg) ldc,
                    options(nostack)
                );
            }
        }
    }

    /// [`super::ContextRow`] on the tiles: tmm4–5 hold the two 16-row
    /// halves of a step's 32 probabilities, tmm6–7 its two value tiles,
    /// tmm0–3 the four 16 × 16 blocks of sums.
    ///
    /// # Safety
    /// As [`super::ContextRow`], inside a live [`Tiles`] on this thread, on
    /// a CPU with `amx_bf16`.
    pub(crate) unsafe fn context_row(
        a: *const u16,
        lda: usize,
        steps: usize,
        b: *const u16,
        c: *mut f32,
    ) {
        // SAFETY: the caller's bounds and configuration.
        unsafe {
            zero_sums();
            let a1 = a.cast::<u8>().add(16 * lda).cast::<u16>();
            for s in 0..steps {
                let b0 = b.add(2 * s * 512);
                asm!(
                    "tileloadd tmm4, [{a0} + {lda}*1]",
                    "tileloadd tmm6, [{b0} + {ldb}*1]",
                    "tileloadd tmm7, [{b1} + {ldb}*1]",
                    "tdpbf16ps tmm0, tmm4, tmm6",
                    "tileloadd tmm5, [{a1} + {lda}*1]",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    "tdpbf16ps tmm3, tmm5, tmm7",
                    a0 = in(reg) a.add(32 * s),
                    a1 = in(reg) a1.add(32 * s),
                    lda = in(reg) lda,
                    b0 = in(reg) b0,
                    b1 = in(reg) b0.add(512),
                    ldb = in(reg) 64usize,
                    options(nostack, readonly)
                );
            }
            store_sums(c.cast());
        }
    }
}
