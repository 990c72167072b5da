//! int8 linear layers: the same `y = x Wᵀ + b` as [`crate::kernels`], with
//! 8-bit integer products and 32-bit integer sums. Attention, LayerNorm,
//! GELU and softmax stay f32; only the six matrix products per layer that
//! hold nearly all of the arithmetic change.
//!
//! The scheme (`s` a scale, `q` an integer):
//!
//! - **Weights**, once at load, per output column `c` (symmetric):
//!   `s_w[c] = max_k |W[c][k]| / 127`, `q_w = round(W / s_w)` in −127..=127.
//! - **Activations**, per call, per row `r` (asymmetric, u8 with a zero
//!   point): over the row's range `[lo, hi]` (widened to hold 0),
//!   `s_x[r] = (hi − lo) / QMAX`, `z[r] = round(−lo / s_x)`,
//!   `q_x = clamp(round(x / s_x) + z, 0, QMAX)`. `QMAX` is 255 on the VNNI
//!   and portable paths and 127 on AVX2 (below).
//! - **Product**: `acc[r][c] = Σ_k q_x[r][k] · q_w[c][k]` in i32, exact. The
//!   zero point is taken out with one *compensation term* per output,
//!   `z[r] · colsum[c]` where `colsum[c] = Σ_k q_w[c][k]` is summed at load:
//!   `Σ (q_x − z) · q_w = acc − z · colsum`.
//! - **Dequantize + bias** in f32: `y = (acc − z·colsum) · (s_x[r] · s_w[c]) + b[c]`,
//!   in the one scalar epilogue every path shares, so paths whose integer
//!   sums agree give bit-identical outputs.
//! - **Outlier channels** ([`outlier_channels`], chosen at load from a
//!   calibration): left out of the integer product (weights 0, activations
//!   0 before the row's range is taken); their f32 products are added in
//!   the epilogue, tile by tile, from the f32 micro-kernels of the same
//!   instruction set: so AMX and AVX-512 VNNI still give the same bits,
//!   while the portable path's f32 sums differ in their last bits.
//!
//! Paths, chosen at run time like the f32 kernels ([`Int8Path::for_kernel`]):
//!
//! - **AVX-512 VNNI** (`avx512_vnni` + `avx512bw`): `vpdpbusd` multiplies 4
//!   u8 activations by 4 s8 weights and adds the 4 products into an i32
//!   lane, with no intermediate rounding or saturation; 12 × 32 tiles.
//! - **AVX-VNNI** (`avx_vnni`, the VEX form on AVX2-only cores that have it):
//!   the same instruction on 256-bit registers; 6 × 16 tiles.
//! - **AVX2**: `vpmaddubsw` (u8 × s8, adjacent pairs summed into i16) then
//!   `vpmaddwd` by ones (pairs of i16 summed into i32). `vpmaddubsw`
//!   *saturates* its i16 sums: 2 · 255 · 127 = 64,770 does not fit, so this
//!   path keeps the **activations to 7 bits** (`QMAX` = 127; 2 · 127 · 127 =
//!   32,258 fits) and its sums stay exact. Weights keep their full ±127.
//! - **Portable**: plain Rust over the same packed layout, any `QMAX`; run
//!   with the AVX2 path's 7 bits it must agree with it bit for bit, and
//!   with 8 bits with the VNNI paths.
//!
//! Weights are packed per panel of `NR` columns in groups of 4 along `k`
//! (`packed[p][g][j][t] = q_w[p·NR + j][4g + t]`, zero past `n` and `k`),
//! the layout both `vpdpbusd` and `vpmaddubsw` + `vpmaddwd` read: one
//! broadcast i32 of 4 activation bytes against 4 bytes of each column.

use std::fmt;

use crate::aligned::Aligned;
use crate::kernels::{KernelPath, gemm_packed, pack_panels, tiles};

/// The arithmetic of the linear layers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// 32-bit floats throughout (the reference).
    #[default]
    Fp32,
    /// int8 weights and activations in the linear layers, i32 sums; the rest f32.
    Int8,
}

impl Precision {
    /// The name as `[embed] precision` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
        }
    }

    /// Parses `fp32` or `int8`.
    pub fn parse(name: &str) -> Option<Precision> {
        match name.trim().to_ascii_lowercase().as_str() {
            "fp32" | "f32" => Some(Precision::Fp32),
            "int8" | "i8" => Some(Precision::Int8),
            _ => None,
        }
    }

    /// The faster precision on this CPU with the f32 kernels of `kernel`
    /// (what `[embed] precision = "auto"` gives a new index): int8 where
    /// the int8 path that goes with it has integer dot products (AMX,
    /// VNNI, AVX-VNNI, AVX2's `vpmaddubsw`: 1.4–2.1× the f32 chunks/s,
    /// BENCHMARKS.md), f32 where only the portable int8 loops would run
    /// (about 3.6× slower than the portable f32 ones).
    pub fn fastest(kernel: KernelPath) -> Precision {
        if Int8Path::for_kernel(kernel) == Int8Path::Portable {
            Precision::Fp32
        } else {
            Precision::Int8
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which instructions the int8 linear layers use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Int8Path {
    /// Intel AMX tiles (`tdpbusd`, 16 × 16 × 64 per instruction; see
    /// [`crate::amx`]), 8-bit activations; AVX-512 for the rest, and
    /// AVX-512 VNNI for inputs of under 32 rows.
    Amx,
    /// AVX-512 VNNI (`vpdpbusd` on 512-bit registers), 8-bit activations.
    Avx512Vnni,
    /// AVX-VNNI (`vpdpbusd`, VEX, 256-bit), 8-bit activations.
    AvxVnni,
    /// AVX2 `vpmaddubsw` + `vpmaddwd`, 7-bit activations.
    Avx2,
    /// Plain Rust, 8-bit activations.
    Portable,
}

impl fmt::Display for Int8Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Int8Path {
    /// Every path, fastest first.
    pub const ALL: [Int8Path; 5] = [
        Int8Path::Amx,
        Int8Path::Avx512Vnni,
        Int8Path::AvxVnni,
        Int8Path::Avx2,
        Int8Path::Portable,
    ];

    /// The path's name.
    pub fn name(self) -> &'static str {
        match self {
            Int8Path::Amx => "amx-int8",
            Int8Path::Avx512Vnni => "avx512-vnni",
            Int8Path::AvxVnni => "avx-vnni",
            Int8Path::Avx2 => "avx2-int8",
            Int8Path::Portable => "portable-int8",
        }
    }

    /// The CPU features the path needs that this CPU lacks, as
    /// `/proc/cpuinfo` names them (none when it runs here). AMX also needs
    /// the kernel's leave to use the tile data (`amx_os_permission` when
    /// refused).
    pub fn missing_features(self) -> Vec<&'static str> {
        let lacks = crate::kernels::lacking(match self {
            Int8Path::Amx => &["avx512f", "avx512bw", "avx512_vnni", "amx_tile", "amx_int8"],
            Int8Path::Avx512Vnni => &["avx512f", "avx512bw", "avx512_vnni"],
            Int8Path::AvxVnni => &["avx2", "avx_vnni"],
            Int8Path::Avx2 => &["avx2"],
            Int8Path::Portable => &[],
        });
        if self == Int8Path::Amx && lacks.is_empty() {
            return crate::kernels::lacking(&["amx_os_permission"]);
        }
        lacks
    }

    /// Whether this CPU can run the path.
    pub fn supported(self) -> bool {
        self.missing_features().is_empty()
    }

    /// For tests of one path: true when this CPU runs it; otherwise writes
    /// `skipped: CPU lacks …` (the missing features) to the process's real
    /// stderr and returns false.
    #[doc(hidden)]
    pub fn runs_here_or_say_skipped(self, test: &str) -> bool {
        crate::kernels::runs_or_say_skipped(
            test,
            &self.missing_features(),
            &format!("the {self} int8 path"),
        )
    }

    /// Parses a name as [`Int8Path::name`] spells it (`CAIRN_INT8_KERNEL`).
    pub fn parse(name: &str) -> Option<Int8Path> {
        let name = name.trim().to_ascii_lowercase();
        Int8Path::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The int8 path that goes with an f32 kernel path: under AVX-512, AMX
    /// where the CPU and kernel allow it, else VNNI (else AVX-VNNI, else
    /// AVX2); under AVX2, AVX-VNNI where present, else `vpmaddubsw`;
    /// portable stays portable.
    pub fn for_kernel(path: KernelPath) -> Int8Path {
        let candidates: &[Int8Path] = match path {
            KernelPath::Avx512 => &[
                Int8Path::Amx,
                Int8Path::Avx512Vnni,
                Int8Path::AvxVnni,
                Int8Path::Avx2,
            ],
            KernelPath::Avx2 => &[Int8Path::AvxVnni, Int8Path::Avx2],
            KernelPath::Portable => &[],
        };
        candidates
            .iter()
            .copied()
            .find(|p| p.supported())
            .unwrap_or(Int8Path::Portable)
    }

    /// The largest quantized activation: 7 bits on AVX2 (`vpmaddubsw`'s i16
    /// saturation), 8 elsewhere.
    pub(crate) fn act_max(self) -> u8 {
        match self {
            Int8Path::Avx2 => 127,
            _ => 255,
        }
    }

    /// Columns per packed panel.
    fn nr(self) -> usize {
        match self {
            Int8Path::Amx | Int8Path::Avx512Vnni => 32,
            _ => 16,
        }
    }

    /// The f32 kernel path of the same instruction set (for the outlier
    /// channels' products).
    fn f32_kernel(self) -> KernelPath {
        match self {
            Int8Path::Amx | Int8Path::Avx512Vnni => KernelPath::Avx512,
            Int8Path::AvxVnni | Int8Path::Avx2 => KernelPath::Avx2,
            Int8Path::Portable => KernelPath::Portable,
        }
    }

    /// What `k` is padded to: a whole tile step on AMX, a group of 4 elsewhere.
    fn k_align(self) -> usize {
        match self {
            Int8Path::Amx => crate::amx::K_STEP,
            _ => 4,
        }
    }
}

/// Rows of activations per cache block (as in the f32 kernels).
const MC: usize = 120;

/// Fewer rows than this run the AMX path's layers on its VNNI kernel.
const AMX_MIN_ROWS: usize = 32;

/// Rows of activations per AMX cache block (a multiple of 32): each weight
/// panel is read once per block. 512, the steadiest of 32–512 in two runs
/// of `int8_gemm_throughput` on the lent Xeon (171–335 and 192–210 GMAC/s
/// over the encoder's four shapes; 32 rows: 107–355 and 195–242);
/// `CAIRN_AMX_MC` sets it for tuning runs on other CPUs.
static AMX_MC: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn amx_rows_per_block() -> usize {
    use std::sync::atomic::Ordering;
    match AMX_MC.load(Ordering::Relaxed) {
        0 => {
            let mc = std::env::var("CAIRN_AMX_MC")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .map_or(512, |v| v.clamp(32, 4096).next_multiple_of(32));
            AMX_MC.store(mc, Ordering::Relaxed);
            mc
        }
        mc => mc,
    }
}

/// The quantized activations of one call, reused across calls.
#[derive(Default)]
pub(crate) struct Int8Scratch {
    /// `m × kp` bytes, row-major, zero past `k`.
    q: Aligned<u8>,
    /// Per row: the scale `s_x`.
    scale: Vec<f32>,
    /// Per row: the zero point `z`.
    zero: Vec<i32>,
    /// The activations divided by a smoothed layer's factors, before they
    /// are quantized.
    smoothed: Vec<f32>,
    /// Per row, the activations of the layer's outlier channels (f32).
    outlier_x: Vec<f32>,
}

/// Which quantizer [`quantize_rows`] runs: the same arithmetic in the same
/// order on every variant, so the same bytes, scales and zero points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QuantizePath {
    /// 16 lanes (AVX-512F).
    Avx512,
    /// 8 lanes (AVX2).
    Avx2,
    /// Plain Rust, one value at a time (the reference).
    Scalar,
}

impl QuantizePath {
    /// The quantizer that goes with an int8 path (the CPU has its features).
    fn for_path(path: Int8Path) -> QuantizePath {
        match path {
            Int8Path::Amx | Int8Path::Avx512Vnni => QuantizePath::Avx512,
            Int8Path::AvxVnni | Int8Path::Avx2 => QuantizePath::Avx2,
            Int8Path::Portable => QuantizePath::Scalar,
        }
    }
}

/// A row's scale and zero point from its range `[lo, hi]` (both hold 0).
#[inline(always)]
fn scale_and_zero(lo: f32, hi: f32, qmax: f32) -> (f32, f32, f32) {
    let scale = if hi > lo { (hi - lo) / qmax } else { 1.0 };
    let inv = 1.0 / scale;
    // Round half up by truncating a non-negative value + 0.5.
    let zero = ((-lo * inv).clamp(0.0, qmax) + 0.5) as i32 as f32;
    (scale, inv, zero)
}

/// Quantizes `m` rows of `k` floats (`x`, row-major) to u8 in `0..=qmax`
/// with a scale and zero point per row, rows `kp` bytes apart (zero-padded).
pub(crate) fn quantize_rows(
    x: &[f32],
    m: usize,
    k: usize,
    kp: usize,
    qmax: u8,
    path: QuantizePath,
    s: &mut Int8Scratch,
) {
    assert!(x.len() >= m * k && kp >= k, "quantizer buffers too small");
    // Every byte below `m × kp` is written (padding included), so the buffer
    // is only grown, never cleared.
    if s.q.len() < m * kp {
        s.q.resize(m * kp, 0);
    }
    s.scale.clear();
    s.zero.clear();
    let qmax = f32::from(qmax);
    for (row, q) in x[..m * k].chunks_exact(k).zip(s.q.chunks_exact_mut(kp)) {
        let (q, pad) = q.split_at_mut(k);
        pad.fill(0);
        let (scale, zero) = match path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the path is chosen for an int8 path this CPU runs.
            QuantizePath::Avx512 => unsafe { quant_x86::row_avx512(row, q, qmax) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            QuantizePath::Avx2 => unsafe { quant_x86::row_avx2(row, q, qmax) },
            _ => quantize_row_scalar(row, q, qmax),
        };
        s.scale.push(scale);
        s.zero.push(zero as i32);
    }
}

/// One row in plain Rust: the reference every SIMD variant matches bit for bit.
fn quantize_row_scalar(row: &[f32], q: &mut [u8], qmax: f32) -> (f32, f32) {
    let (lo, hi) = range_with(&[], &[], row);
    let (scale, inv, zero) = scale_and_zero(lo, hi, qmax);
    quantize_values_scalar(row, q, inv, zero, qmax);
    (scale, zero)
}

/// The range of a row, 0 included: the lowest of `lows` and `tail`, the
/// highest of `highs` and `tail` (a SIMD path's lanes and its remainder),
/// each compared as `v < lo ? v : lo`, NaN included.
#[inline(always)]
fn range_with(lows: &[f32], highs: &[f32], tail: &[f32]) -> (f32, f32) {
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    for (&a, &b) in lows.iter().zip(highs).chain(tail.iter().zip(tail)) {
        lo = if a < lo { a } else { lo };
        hi = if b > hi { b } else { hi };
    }
    (lo, hi)
}

/// `q = trunc(clamp(v · inv + zero, 0, qmax) + 0.5)`, value by value.
#[inline(always)]
fn quantize_values_scalar(row: &[f32], q: &mut [u8], inv: f32, zero: f32, qmax: f32) {
    for (d, &v) in q.iter_mut().zip(row) {
        *d = ((v * inv + zero).clamp(0.0, qmax) + 0.5) as u8;
    }
}

/// The quantizer on SIMD registers. Hand-written because the compiler
/// leaves the scalar loop's `as u8` (a saturating conversion) one value at
/// a time, with a compare and select around each convert: it was a tenth
/// of int8 embedding time. Each step is the scalar one on lanes:
/// `min`/`max` as `v < lo ? v : lo` (the instructions' own definition, NaN
/// included), multiply then add (no FMA, as in the scalar code), the clamp
/// as `max(·, 0)` then `min(·, qmax)`, and a truncating convert whose NaN
/// result (`0x8000_0000`) narrows to 0, as `NaN as u8` does.
#[cfg(target_arch = "x86_64")]
mod quant_x86 {
    use super::{quantize_values_scalar, range_with, scale_and_zero};
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn row_avx512(row: &[f32], q: &mut [u8], qmax: f32) -> (f32, f32) {
        let k = row.len().min(q.len());
        let body = k / 16 * 16;
        let (xp, qp) = (row.as_ptr(), q.as_mut_ptr());
        // SAFETY: every load reads 16 floats below `body ≤ row.len()`, every
        // store writes 16 bytes below `body ≤ q.len()`; the CPU has AVX-512F.
        unsafe {
            // Four independent minima and maxima: one pair is a chain of
            // dependent instructions that held this loop to their latency.
            // Minima and maxima are exact, so the order changes nothing.
            let mut lo = [_mm512_setzero_ps(); 4];
            let mut hi = lo;
            let body64 = k / 64 * 64;
            for i in (0..body64).step_by(64) {
                for j in 0..4 {
                    let v = _mm512_loadu_ps(xp.add(i + 16 * j));
                    lo[j] = _mm512_min_ps(v, lo[j]);
                    hi[j] = _mm512_max_ps(v, hi[j]);
                }
            }
            let (mut lo, mut hi) = (
                _mm512_min_ps(_mm512_min_ps(lo[0], lo[1]), _mm512_min_ps(lo[2], lo[3])),
                _mm512_max_ps(_mm512_max_ps(hi[0], hi[1]), _mm512_max_ps(hi[2], hi[3])),
            );
            for i in (body64..body).step_by(16) {
                let v = _mm512_loadu_ps(xp.add(i));
                lo = _mm512_min_ps(v, lo);
                hi = _mm512_max_ps(v, hi);
            }
            let mut lanes = [[0.0f32; 16]; 2];
            _mm512_storeu_ps(lanes[0].as_mut_ptr(), lo);
            _mm512_storeu_ps(lanes[1].as_mut_ptr(), hi);
            let (l, h) = range_with(&lanes[0], &lanes[1], &row[body..k]);
            let (scale, inv, zero) = scale_and_zero(l, h, qmax);
            let (vinv, vzero, vmax, vhalf) = (
                _mm512_set1_ps(inv),
                _mm512_set1_ps(zero),
                _mm512_set1_ps(qmax),
                _mm512_set1_ps(0.5),
            );
            for i in (0..body).step_by(16) {
                let v = _mm512_loadu_ps(xp.add(i));
                let y = _mm512_add_ps(_mm512_mul_ps(v, vinv), vzero);
                let y = _mm512_min_ps(_mm512_max_ps(y, _mm512_setzero_ps()), vmax);
                let n = _mm512_cvttps_epi32(_mm512_add_ps(y, vhalf));
                _mm_storeu_si128(qp.add(i).cast(), _mm512_cvtepi32_epi8(n));
            }
            quantize_values_scalar(&row[body..k], &mut q[body..k], inv, zero, qmax);
            (scale, zero)
        }
    }

    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn row_avx2(row: &[f32], q: &mut [u8], qmax: f32) -> (f32, f32) {
        let k = row.len().min(q.len());
        let (body8, body32) = (k / 8 * 8, k / 32 * 32);
        let (xp, qp) = (row.as_ptr(), q.as_mut_ptr());
        // SAFETY: loads read 8 floats below `body8 ≤ row.len()`, stores write
        // 32 bytes below `body32 ≤ q.len()`; the CPU has AVX2.
        unsafe {
            // Four independent minima and maxima, as in `row_avx512`.
            let mut lo = [_mm256_setzero_ps(); 4];
            let mut hi = lo;
            for i in (0..body32).step_by(32) {
                for j in 0..4 {
                    let v = _mm256_loadu_ps(xp.add(i + 8 * j));
                    lo[j] = _mm256_min_ps(v, lo[j]);
                    hi[j] = _mm256_max_ps(v, hi[j]);
                }
            }
            let (mut lo, mut hi) = (
                _mm256_min_ps(_mm256_min_ps(lo[0], lo[1]), _mm256_min_ps(lo[2], lo[3])),
                _mm256_max_ps(_mm256_max_ps(hi[0], hi[1]), _mm256_max_ps(hi[2], hi[3])),
            );
            for i in (body32..body8).step_by(8) {
                let v = _mm256_loadu_ps(xp.add(i));
                lo = _mm256_min_ps(v, lo);
                hi = _mm256_max_ps(v, hi);
            }
            let mut lanes = [[0.0f32; 8]; 2];
            _mm256_storeu_ps(lanes[0].as_mut_ptr(), lo);
            _mm256_storeu_ps(lanes[1].as_mut_ptr(), hi);
            let (l, h) = range_with(&lanes[0], &lanes[1], &row[body8..k]);
            let (scale, inv, zero) = scale_and_zero(l, h, qmax);
            let (vinv, vzero, vmax, vhalf) = (
                _mm256_set1_ps(inv),
                _mm256_set1_ps(zero),
                _mm256_set1_ps(qmax),
                _mm256_set1_ps(0.5),
            );
            macro_rules! convert {
                ($i:expr) => {{
                    let v = _mm256_loadu_ps(xp.add($i));
                    let y = _mm256_add_ps(_mm256_mul_ps(v, vinv), vzero);
                    let y = _mm256_min_ps(_mm256_max_ps(y, _mm256_setzero_ps()), vmax);
                    _mm256_cvttps_epi32(_mm256_add_ps(y, vhalf))
                }};
            }
            // The values are 0..=255 or NaN's 0x8000_0000: the signed then
            // unsigned saturating packs keep the first and make the second 0.
            for i in (0..body32).step_by(32) {
                let ab = _mm256_packs_epi32(convert!(i), convert!(i + 8));
                let cd = _mm256_packs_epi32(convert!(i + 16), convert!(i + 24));
                // The packs work within 128-bit halves: put the 4-byte
                // groups back in order.
                let bytes = _mm256_permutevar8x32_epi32(
                    _mm256_packus_epi16(ab, cd),
                    _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7),
                );
                _mm256_storeu_si256(qp.add(i).cast(), bytes);
            }
            quantize_values_scalar(&row[body32..k], &mut q[body32..k], inv, zero, qmax);
            (scale, zero)
        }
    }
}

/// A linear layer `y = x Wᵀ + b` with int8 weights, packed for one path.
pub(crate) struct QLinear {
    path: Int8Path,
    /// `panels × kp/4 × nr × 4` weights (see the module doc).
    packed: Aligned<i8>,
    /// Per output column: `s_w`.
    scale: Vec<f32>,
    /// Per output column: `Σ_k q_w` (the zero point's compensation).
    colsum: Vec<i32>,
    bias: Vec<f32>,
    k: usize,
    /// `k` rounded up to a multiple of 4 (of 64 on AMX).
    kp: usize,
    n: usize,
    /// The activations' largest quantized value (the path's, or set for a test).
    act_max: u8,
    /// Per input channel, `1 / s_j` of a smoothed layer ([`QLinear::smoothed`]).
    inv_smooth: Option<Vec<f32>>,
    /// Input channels left out of the int8 product ([`outlier_channels`]).
    outliers: Option<Outliers>,
}

/// A layer's outlier channels and their weights in f32, unsmoothed,
/// packed for the f32 micro-kernels in panels as wide as the int8 ones:
/// the epilogue ([`QLinear::store`]) multiplies each tile's rows of the
/// channels' activations by its panel.
struct Outliers {
    channels: Vec<usize>,
    /// The f32 kernel path `weights` are packed for.
    kernel: KernelPath,
    /// `channels.len() × n`, packed by [`pack_panels`].
    weights: Aligned<f32>,
}

/// A layer input channel whose largest activation on the calibration
/// texts is more than this many times the median channel's is an outlier.
const OUTLIER_RATIO: f32 = 3.0;

/// At most this many outlier channels per layer, the largest first.
const MAX_OUTLIERS: usize = 8;

/// The input channels of a linear layer that [`QLinear::quantized`] keeps
/// out of the int8 product and multiplies in f32 (the mixed-precision
/// decomposition of LLM.int8(), Dettmers et al. 2022), from the largest
/// activation of each channel on the calibration texts, `x_max`.
///
/// One channel that runs far above the rest sets its row's int8 step for
/// every channel: in MiniLM a GELU output reaches 24 where the median
/// channel's largest is 1.15. Taken out, the row's step shrinks to what
/// the other channels need, and the few products it leaves cost almost
/// nothing in f32. Measured on all-MiniLM-L6-v2 as the mean of 1 − cosine
/// of int8 vectors to f32 ones over 310 texts of no eval set
/// (`eval/models/int8_texts.py`, the ignored test `distance_on_a_text_file`
/// in `tests/int8.rs`): VNNI 8.05e-4 → 4.53e-4, AVX2 (7-bit activations)
/// 1.43e-3 → 6.94e-4. The ratio and count were chosen on an earlier draw
/// of such texts (with C from crates): ratios 2–4 and 2–8 channels landed
/// within 0.4e-4 of each other, one channel per layer 0.7e-4 higher.
pub(crate) fn outlier_channels(x_max: &[f32]) -> Vec<usize> {
    let mut sorted = x_max.to_vec();
    sorted.sort_by(f32::total_cmp);
    let Some(&median) = sorted.get(sorted.len() / 2) else {
        return Vec::new();
    };
    let mut channels: Vec<usize> = (0..x_max.len())
        .filter(|&j| x_max[j] > OUTLIER_RATIO * median)
        .collect();
    channels.sort_by(|&a, &b| x_max[b].total_cmp(&x_max[a]).then(a.cmp(&b)));
    channels.truncate(MAX_OUTLIERS);
    channels.sort_unstable();
    channels
}

/// The smoothing factors of one linear layer (SmoothQuant, Xiao et al.
/// 2023): `s_j = max|x_j|^α / max|w_j|^(1−α)` per input channel `j`, from
/// the largest activations `x_max` seen on calibration texts and the
/// layer's weights `w` (`n × k`). The layer then computes `(x / s)(s · W)ᵀ`:
/// the same product, with the few channels whose activations run far above
/// the rest (the ones that set each row's int8 step) moved into the
/// weights, whose per-column scales absorb them.
pub(crate) fn smoothing(x_max: &[f32], w: &[f32], n: usize, k: usize, alpha: f32) -> Vec<f32> {
    let mut w_max = vec![0.0f32; k];
    for row in w[..n * k].chunks_exact(k) {
        for (m, v) in w_max.iter_mut().zip(row) {
            *m = m.max(v.abs());
        }
    }
    x_max
        .iter()
        .zip(&w_max)
        .map(|(&x, &w)| {
            if x > 0.0 && w > 0.0 {
                (x.powf(alpha) / w.powf(1.0 - alpha)).clamp(1e-2, 1e2)
            } else {
                1.0
            }
        })
        .collect()
}

/// One weight's int8 value, `(v / s).round().clamp(-127.0, 127.0) as i8`
/// to the bit, without branches or calls so that a row's loop vectorises:
/// `f32::round` is a libm call at the baseline target (no SSE4.1), and
/// quantizing the weights at load, once per weight, was a third of a
/// one-off int8 search's time.
#[inline(always)]
fn quantize_weight(v: f32, s: f32) -> i8 {
    let x = v / s;
    // NaN to 0 (as `NaN as i8` is), the rest into range: selects, no branch.
    let x = if x.is_nan() {
        0.0
    } else {
        x.clamp(-128.0, 128.0)
    };
    // SAFETY: `x` is finite and within ±128.
    let t = unsafe { x.to_int_unchecked::<i32>() };
    // Truncated toward zero; the remainder is exact, so are the ties.
    let f = x - t as f32;
    (t + i32::from(f >= 0.5) - i32::from(f <= -0.5)).clamp(-127, 127) as i8
}

impl QLinear {
    /// Quantizes and packs `w` (`n × k`, row-major as PyTorch stores it).
    #[cfg(test)]
    pub(crate) fn new(path: Int8Path, w: &[f32], bias: Vec<f32>, n: usize, k: usize) -> QLinear {
        Self::smoothed(path, w, bias, n, k, None)
    }

    /// [`QLinear::smoothed`], with the input channels `outliers` (valid,
    /// distinct indices below `k`; see [`outlier_channels`]) left out of
    /// the int8 product: their weights are 0 there, their activations are
    /// set to 0 before each row is quantized (so they no longer set the
    /// row's step), and their products are added in f32.
    pub(crate) fn quantized(
        path: Int8Path,
        w: &[f32],
        bias: Vec<f32>,
        n: usize,
        k: usize,
        smooth: Option<&[f32]>,
        outliers: &[usize],
    ) -> QLinear {
        if outliers.is_empty() {
            return Self::smoothed(path, w, bias, n, k, smooth);
        }
        let mut rest = w[..n * k].to_vec();
        let mut kept = vec![0.0f32; outliers.len() * n];
        for (c, row) in rest.chunks_exact_mut(k).enumerate() {
            for (j, &o) in outliers.iter().enumerate() {
                kept[j * n + c] = row[o];
                row[o] = 0.0;
            }
        }
        let kernel = path.f32_kernel();
        let mut weights = Aligned::default();
        pack_panels(kernel, &kept, n, 1, outliers.len(), n, &mut weights);
        let mut layer = Self::smoothed(path, &rest, bias, n, k, smooth);
        layer.outliers = Some(Outliers {
            channels: outliers.to_vec(),
            kernel,
            weights,
        });
        layer
    }

    /// Quantizes and packs `w` (`n × k`, row-major as PyTorch stores it),
    /// with input channel `j` of the weights multiplied by `smooth[j]` and
    /// of the activations divided by it, when given ([`smoothing`]).
    pub(crate) fn smoothed(
        path: Int8Path,
        w: &[f32],
        bias: Vec<f32>,
        n: usize,
        k: usize,
        smooth: Option<&[f32]>,
    ) -> QLinear {
        let nr = path.nr();
        let kp = k.next_multiple_of(path.k_align());
        let groups = kp / 4;
        let mut packed = Aligned::filled(n.div_ceil(nr) * groups * nr * 4, 0i8);
        let mut scale = vec![1.0f32; n];
        let mut colsum = vec![0i32; n];
        let mut scaled = Vec::new();
        let mut quantized: Vec<i8> = Vec::with_capacity(k);
        for (c, row) in w[..n * k].chunks_exact(k).enumerate() {
            let row = match smooth {
                Some(f) => {
                    scaled.clear();
                    scaled.extend(row.iter().zip(f).map(|(v, s)| v * s));
                    scaled.as_slice()
                }
                None => row,
            };
            let amax = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let s = if amax > 0.0 { amax / 127.0 } else { 1.0 };
            let (p, j) = (c / nr, c % nr);
            quantized.clear();
            quantized.extend(row.iter().map(|&v| quantize_weight(v, s)));
            colsum[c] = quantized.iter().map(|&q| i32::from(q)).sum();
            // Each group of 4 along `k` is 4 adjacent bytes of the panel
            // (fixed-size copies: a slice of unknown length was a memmove call).
            let quads = quantized.chunks_exact(4);
            let tail = quads.remainder();
            for (g, quad) in quads.enumerate() {
                let at = ((p * groups + g) * nr + j) * 4;
                packed[at..at + 4].copy_from_slice(quad);
            }
            if !tail.is_empty() {
                let at = ((p * groups + k / 4) * nr + j) * 4;
                packed[at..at + tail.len()].copy_from_slice(tail);
            }
            scale[c] = s;
        }
        QLinear {
            path,
            packed,
            scale,
            colsum,
            bias,
            k,
            kp,
            n,
            act_max: path.act_max(),
            inv_smooth: smooth.map(|f| f.iter().map(|s| 1.0 / s).collect()),
            outliers: None,
        }
    }

    /// Writes the layer as it is packed ([`crate::prepared`]).
    pub(crate) fn save(&self, w: &mut crate::prepared::Writer) {
        for v in [self.k, self.kp, self.n, usize::from(self.act_max)] {
            w.u64(v as u64);
        }
        w.array(&self.packed);
        w.array(&self.scale);
        w.array(&self.colsum);
        w.array(&self.bias);
        w.array(self.inv_smooth.as_deref().unwrap_or_default());
        match &self.outliers {
            Some(o) => {
                let channels: Vec<u32> = o.channels.iter().map(|&c| c as u32).collect();
                w.array(&channels);
                w.array(&o.weights);
            }
            None => {
                w.array::<u32>(&[]);
                w.array::<f32>(&[]);
            }
        }
    }

    /// A layer [`QLinear::save`] wrote for `path`, `n × k`, its packed
    /// weights read in place; `None` unless every length is the one this
    /// path packs a layer of that shape to.
    pub(crate) fn load(
        r: &mut crate::prepared::Reader,
        path: Int8Path,
        n: usize,
        k: usize,
    ) -> Option<QLinear> {
        let mut next = || r.u64().and_then(|v| usize::try_from(v).ok());
        let (rk, kp, rn, act_max) = (next()?, next()?, next()?, next()?);
        let kp_want = k.next_multiple_of(path.k_align());
        if rk != k || rn != n || kp != kp_want || act_max != usize::from(path.act_max()) {
            return None;
        }
        let nr = path.nr();
        let packed = r.mapped::<i8>(n.div_ceil(nr) * (kp / 4) * nr * 4)?;
        let scale = r.vec::<f32>(n)?;
        let colsum = r.vec::<i32>(n)?;
        let bias = r.vec::<f32>(n)?;
        let smooth = r.vec_any::<f32>(k)?;
        let inv_smooth = match smooth.len() {
            0 => None,
            l if l == k => Some(smooth),
            _ => return None,
        };
        let channels = r.vec_any::<u32>(MAX_OUTLIERS)?;
        let kernel = path.f32_kernel();
        let outliers = if channels.is_empty() {
            r.vec_any::<f32>(0)?;
            None
        } else {
            let channels: Vec<usize> = channels.iter().map(|&c| c as usize).collect();
            if channels.iter().any(|&c| c >= k) || !channels.is_sorted() {
                return None;
            }
            let knr = kernel.nr();
            let weights = r.mapped::<f32>(n.div_ceil(knr) * channels.len() * knr)?;
            Some(Outliers {
                channels,
                kernel,
                weights,
            })
        };
        Some(QLinear {
            path,
            packed,
            scale,
            colsum,
            bias,
            k,
            kp,
            n,
            act_max: path.act_max(),
            inv_smooth,
            outliers,
        })
    }

    /// The path this layer runs on.
    #[cfg(test)]
    fn path(&self) -> Int8Path {
        self.path
    }

    /// Output width.
    pub(crate) fn out(&self) -> usize {
        self.n
    }

    /// `y[..m × n] = x[..m × k] · Wᵀ + b`.
    pub(crate) fn forward(&self, x: &[f32], m: usize, y: &mut [f32], s: &mut Int8Scratch) {
        self.check(x, m, y);
        let quantizer = QuantizePath::for_path(self.path);
        let x = &x[..m * self.k];
        if self.inv_smooth.is_none() && self.outliers.is_none() {
            quantize_rows(x, m, self.k, self.kp, self.act_max, quantizer, s);
        } else {
            // What is quantized: the activations divided by the smoothing
            // factors, the outlier channels 0.
            let mut xs = std::mem::take(&mut s.smoothed);
            xs.clear();
            match &self.inv_smooth {
                Some(inv) => {
                    for row in x.chunks_exact(self.k) {
                        xs.extend(row.iter().zip(inv).map(|(v, f)| v * f));
                    }
                }
                None => xs.extend_from_slice(x),
            }
            self.take_outliers(&mut xs, Some(x), &mut s.outlier_x);
            quantize_rows(&xs, m, self.k, self.kp, self.act_max, quantizer, s);
            s.smoothed = xs;
        }
        self.gemm(s, m, y);
    }

    /// [`QLinear::forward`] for an input nobody reads after: it is smoothed
    /// and its outlier channels are taken out in place, with no copy.
    pub(crate) fn forward_spent(
        &self,
        x: &mut [f32],
        m: usize,
        y: &mut [f32],
        s: &mut Int8Scratch,
    ) {
        self.check(x, m, y);
        let quantizer = QuantizePath::for_path(self.path);
        let x = &mut x[..m * self.k];
        self.take_outliers(x, None, &mut s.outlier_x);
        if let Some(inv) = &self.inv_smooth {
            for row in x.chunks_exact_mut(self.k) {
                row.iter_mut().zip(inv).for_each(|(v, f)| *v *= f);
            }
        }
        quantize_rows(x, m, self.k, self.kp, self.act_max, quantizer, s);
        self.gemm(s, m, y);
    }

    fn check(&self, x: &[f32], m: usize, y: &[f32]) {
        assert!(
            x.len() >= m * self.k && y.len() >= m * self.n,
            "linear layer buffers too small"
        );
    }

    /// Notes the outlier channels' activations, row by row, in `kept`, and
    /// sets them to 0 in `xs`, the rows to quantize: read from `x` where
    /// `xs` is a smoothed copy of it, else from `xs` itself (not smoothed
    /// yet).
    fn take_outliers(&self, xs: &mut [f32], x: Option<&[f32]>, kept: &mut Vec<f32>) {
        let Some(out) = &self.outliers else {
            return;
        };
        kept.clear();
        for (r, row) in xs.chunks_exact_mut(self.k).enumerate() {
            let orig = x.map(|x| &x[r * self.k..][..self.k]);
            for &o in &out.channels {
                kept.push(orig.map_or(row[o], |x| x[o]));
                row[o] = 0.0;
            }
        }
    }

    /// The integer product of the quantized rows in `s` and its epilogue.
    fn gemm(&self, s: &mut Int8Scratch, m: usize, y: &mut [f32]) {
        match self.path {
            #[cfg(target_arch = "x86_64")]
            Int8Path::Amx if m >= AMX_MIN_ROWS => {
                self.pad_rows_for_amx(s, m);
                // SAFETY: the path was chosen only if the CPU supports it
                // (and the kernel gave the permission); `s` is padded.
                unsafe { self.gemm_amx(s, m, y) }
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the path was chosen only if the CPU supports it. A
            // short input on AMX takes the VNNI kernel over the same panels:
            // the same sums, without padding a few rows to 32 (a query's
            // embedding was 2.46 ms on AMX, 1.77 ms on VNNI, on the lent Xeon).
            Int8Path::Amx | Int8Path::Avx512Vnni => unsafe { self.gemm_avx512_vnni(s, m, y) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Int8Path::AvxVnni => unsafe { self.gemm_avx_vnni(s, m, y) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            Int8Path::Avx2 => unsafe { self.gemm_avx2(s, m, y) },
            _ => self.gemm_portable(s, m, y),
        }
    }

    /// Dequantizes a computed tile (`rows × nr` i32 sums, row-major) into
    /// `y` with the bias, and the outlier channels' f32 products for the
    /// same rows and columns (computed here into `extra`, at least
    /// `rows × nr` long): the one epilogue every path shares.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn store(
        &self,
        s: &Int8Scratch,
        tile: &[i32],
        rows: usize,
        row0: usize,
        p: usize,
        y: &mut [f32],
        extra: &mut [f32],
    ) {
        let nr = self.path.nr();
        let c0 = p * nr;
        let cols = nr.min(self.n - c0);
        let (sw, cs, b) = (
            &self.scale[c0..c0 + cols],
            &self.colsum[c0..c0 + cols],
            &self.bias[c0..c0 + cols],
        );
        if let Some(out) = &self.outliers {
            // The tile's share of the outlier products, while its rows are
            // at hand: written into `y` in a pass of its own, they were
            // read back from memory here (12 % of an int8 forward).
            let len = out.channels.len();
            gemm_packed(
                out.kernel,
                &s.outlier_x[row0 * len..],
                len,
                rows,
                len,
                &out.weights[p * len * nr..(p + 1) * len * nr],
                cols,
                1.0,
                extra,
                nr,
            );
            for r in 0..rows {
                let (sx, z) = (s.scale[row0 + r], s.zero[row0 + r]);
                let dst = &mut y[(row0 + r) * self.n + c0..][..cols];
                let (src, add) = (&tile[r * nr..][..cols], &extra[r * nr..][..cols]);
                for j in 0..cols {
                    let exact = src[j].wrapping_sub(z.wrapping_mul(cs[j]));
                    dst[j] = exact as f32 * (sx * sw[j]) + b[j] + add[j];
                }
            }
            return;
        }
        for r in 0..rows {
            let (sx, z) = (s.scale[row0 + r], s.zero[row0 + r]);
            let dst = &mut y[(row0 + r) * self.n + c0..][..cols];
            let src = &tile[r * nr..][..cols];
            for j in 0..cols {
                let exact = src[j].wrapping_sub(z.wrapping_mul(cs[j]));
                dst[j] = exact as f32 * (sx * sw[j]) + b[j];
            }
        }
    }

    /// Blocks of `MC` rows, then each panel, then even row tiles of at most
    /// `MR`; `tile(rows, x_tile, p, buf)` sums one `rows × NR` tile into `buf`.
    #[inline(always)]
    fn blocked<const MR: usize, const NR: usize>(
        &self,
        s: &Int8Scratch,
        m: usize,
        y: &mut [f32],
        mut tile: impl FnMut(usize, &[u8], usize, &mut [[i32; NR]; MR]),
    ) {
        let kp = self.kp;
        let mut buf = [[0i32; NR]; MR];
        let mut extra = [[0.0f32; NR]; MR];
        for mb in (0..m).step_by(MC) {
            let mend = (mb + MC).min(m);
            for p in 0..self.n.div_ceil(NR) {
                for (start, rows) in tiles(mend - mb, MR) {
                    let r0 = mb + start;
                    tile(rows, &s.q[r0 * kp..(r0 + rows) * kp], p, &mut buf);
                    self.store(
                        s,
                        buf.as_flattened(),
                        rows,
                        r0,
                        p,
                        y,
                        extra.as_flattened_mut(),
                    );
                }
            }
        }
    }

    /// AMX reads activations 32 rows at a time: grows the buffer to whole
    /// 32-row blocks (the rows past `m` give sums that are never stored).
    fn pad_rows_for_amx(&self, s: &mut Int8Scratch, m: usize) {
        let len = m.next_multiple_of(2 * crate::amx::ROWS) * self.kp;
        if s.q.len() < len {
            s.q.resize(len, 0);
        }
    }

    /// The AMX product: tiles configured on this thread for the call, the
    /// epilogue on AVX-512.
    ///
    /// # Safety
    /// The CPU has AMX and AVX-512BW, the kernel gave the permission, and
    /// `s` was padded by [`QLinear::pad_rows_for_amx`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn gemm_amx(&self, s: &Int8Scratch, m: usize, y: &mut [f32]) {
        // SAFETY: the caller's contract.
        let _tiles = unsafe { crate::amx::Tiles::configure() };
        // SAFETY: the tiles are configured on this thread until `_tiles`
        // drops; `s` is padded.
        unsafe { self.amx_blocks(s, m, y, crate::amx::block32) }
    }

    /// Blocks of `MC_AMX` rows, then each 32-column panel, then 32-row
    /// blocks through `block` ([`crate::amx::block32`], or its emulation
    /// in tests).
    ///
    /// # Safety
    /// `block` can run here (for AMX: tiles configured on this thread);
    /// `s` was padded by [`QLinear::pad_rows_for_amx`].
    #[inline(always)]
    unsafe fn amx_blocks(
        &self,
        s: &Int8Scratch,
        m: usize,
        y: &mut [f32],
        block: crate::amx::Block32,
    ) {
        let mc_amx = amx_rows_per_block();
        let (kp, groups) = (self.kp, self.kp / 4);
        let steps = kp / crate::amx::K_STEP;
        assert!(
            s.q.len() >= m.next_multiple_of(32) * kp && kp % crate::amx::K_STEP == 0,
            "AMX activation buffer not padded"
        );
        // The block's sums, each row a cache line apart and aligned as one
        // (`tilestored` writes 64-byte rows).
        #[repr(C, align(64))]
        struct Sums([[i32; 32]; 32]);
        let mut buf = Sums([[0; 32]; 32]);
        let mut extra = [[0.0f32; 32]; 32];
        for mb in (0..m).step_by(mc_amx) {
            let mend = (mb + mc_amx).min(m);
            for p in 0..self.n.div_ceil(32) {
                let panel = self.packed[p * groups * 128..].as_ptr();
                for r0 in (mb..mend).step_by(32) {
                    let rows = (mend - r0).min(32);
                    // SAFETY: 32 rows of `kp` bytes from `r0` (padded), the
                    // panel's `steps × 2048` bytes, 32 × 32 i32 of `buf`.
                    unsafe {
                        block(
                            s.q[r0 * kp..].as_ptr(),
                            kp,
                            steps,
                            panel,
                            buf.0.as_mut_ptr().cast(),
                        )
                    };
                    self.store(
                        s,
                        buf.0.as_flattened(),
                        rows,
                        r0,
                        p,
                        y,
                        extra.as_flattened_mut(),
                    );
                }
            }
        }
    }

    fn gemm_portable(&self, s: &Int8Scratch, m: usize, y: &mut [f32]) {
        let (kp, groups) = (self.kp, self.kp / 4);
        self.blocked::<4, 16>(s, m, y, |rows, xt, p, acc| {
            let panel = &self.packed[p * groups * 64..(p + 1) * groups * 64];
            for a in acc.iter_mut() {
                a.fill(0);
            }
            for (g, b) in panel.chunks_exact(64).enumerate() {
                for (r, acc_r) in acc.iter_mut().enumerate().take(rows) {
                    let a = &xt[r * kp + 4 * g..][..4];
                    for j in 0..16 {
                        let w = &b[4 * j..4 * j + 4];
                        acc_r[j] += (0..4)
                            .map(|t| i32::from(a[t]) * i32::from(w[t]))
                            .sum::<i32>();
                    }
                }
            }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn gemm_avx512_vnni(&self, s: &Int8Scratch, m: usize, y: &mut [f32]) {
        let (kp, groups) = (self.kp, self.kp / 4);
        self.blocked::<12, 32>(s, m, y, |rows, xt, p, buf| {
            let (xp, out) = (xt.as_ptr(), buf.as_mut_ptr().cast::<i32>());
            let panel = self.packed[p * groups * 128..].as_ptr();
            macro_rules! go {
                ($($n:literal)*) => {
                    match rows {
                        $($n => x86::vnni512::<$n>(xp, kp, groups, panel, out),)*
                        _ => unreachable!("tiles() yields 1..=MR rows"),
                    }
                };
            }
            // SAFETY: `xt` holds `rows` rows of `kp` bytes, the panel
            // `groups × 128` bytes, `buf` 12 × 32 i32; the CPU has the features.
            unsafe { go!(1 2 3 4 5 6 7 8 9 10 11 12) }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,avxvnni")]
    unsafe fn gemm_avx_vnni(&self, s: &Int8Scratch, m: usize, y: &mut [f32]) {
        let (kp, groups) = (self.kp, self.kp / 4);
        self.blocked::<6, 16>(s, m, y, |rows, xt, p, buf| {
            let (xp, out) = (xt.as_ptr(), buf.as_mut_ptr().cast::<i32>());
            let panel = self.packed[p * groups * 64..].as_ptr();
            macro_rules! go {
                ($($n:literal)*) => {
                    match rows {
                        $($n => x86::avx_vnni::<$n>(xp, kp, groups, panel, out),)*
                        _ => unreachable!("tiles() yields 1..=MR rows"),
                    }
                };
            }
            // SAFETY: `xt` holds `rows` rows of `kp` bytes, the panel
            // `groups × 64` bytes, `buf` 6 × 16 i32; the CPU has the features.
            unsafe { go!(1 2 3 4 5 6) }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn gemm_avx2(&self, s: &Int8Scratch, m: usize, y: &mut [f32]) {
        let (kp, groups) = (self.kp, self.kp / 4);
        self.blocked::<4, 16>(s, m, y, |rows, xt, p, buf| {
            let (xp, out) = (xt.as_ptr(), buf.as_mut_ptr().cast::<i32>());
            let panel = self.packed[p * groups * 64..].as_ptr();
            macro_rules! go {
                ($($n:literal)*) => {
                    match rows {
                        $($n => x86::avx2::<$n>(xp, kp, groups, panel, out),)*
                        _ => unreachable!("tiles() yields 1..=MR rows"),
                    }
                };
            }
            // SAFETY: `xt` holds `rows` rows of `kp` bytes, the panel
            // `groups × 64` bytes, `buf` 4 × 16 i32; the CPU has AVX2.
            unsafe { go!(1 2 3 4) }
        });
    }
}

/// The integer micro-kernels: `out[r][0..NR] = Σ_g x[r][4g..4g+4] · panel[g][0..NR][0..4]`
/// for `MR` rows, `NR` columns as two registers.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Four activation bytes of row `r`, group `g`, broadcast as one i32.
    ///
    /// # Safety
    /// `x + r·ldx + 4g + 4` must be in bounds.
    #[inline(always)]
    unsafe fn quad(x: *const u8, ldx: usize, r: usize, g: usize) -> i32 {
        // SAFETY: the caller's bounds; an unaligned read.
        unsafe { x.add(r * ldx + 4 * g).cast::<i32>().read_unaligned() }
    }

    /// 12 × 32-capable tile with `vpdpbusd` on 512-bit registers.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn vnni512<const MR: usize>(
        x: *const u8,
        ldx: usize,
        groups: usize,
        panel: *const i8,
        out: *mut i32,
    ) {
        // SAFETY: the caller guarantees MR × ldx bytes of x, groups × 128
        // bytes of panel, MR × 32 i32 of out, and the CPU features.
        unsafe {
            let mut c0 = [_mm512_setzero_si512(); MR];
            let mut c1 = [_mm512_setzero_si512(); MR];
            for g in 0..groups {
                let b = panel.add(g * 128);
                _mm_prefetch::<_MM_HINT_T0>(b.wrapping_add(2048));
                let b0 = _mm512_loadu_si512(b.cast());
                let b1 = _mm512_loadu_si512(b.add(64).cast());
                for r in 0..MR {
                    let a = _mm512_set1_epi32(quad(x, ldx, r, g));
                    c0[r] = _mm512_dpbusd_epi32(c0[r], a, b0);
                    c1[r] = _mm512_dpbusd_epi32(c1[r], a, b1);
                }
            }
            for r in 0..MR {
                _mm512_storeu_si512(out.add(r * 32).cast(), c0[r]);
                _mm512_storeu_si512(out.add(r * 32 + 16).cast(), c1[r]);
            }
        }
    }

    /// 6 × 16-capable tile with the VEX `vpdpbusd` (AVX-VNNI).
    #[target_feature(enable = "avx2,avxvnni")]
    pub(super) unsafe fn avx_vnni<const MR: usize>(
        x: *const u8,
        ldx: usize,
        groups: usize,
        panel: *const i8,
        out: *mut i32,
    ) {
        // SAFETY: the caller guarantees MR × ldx bytes of x, groups × 64
        // bytes of panel, MR × 16 i32 of out, and the CPU features.
        unsafe {
            let mut c0 = [_mm256_setzero_si256(); MR];
            let mut c1 = [_mm256_setzero_si256(); MR];
            for g in 0..groups {
                let b = panel.add(g * 64);
                _mm_prefetch::<_MM_HINT_T0>(b.wrapping_add(2048));
                let b0 = _mm256_loadu_si256(b.cast());
                let b1 = _mm256_loadu_si256(b.add(32).cast());
                for r in 0..MR {
                    let a = _mm256_set1_epi32(quad(x, ldx, r, g));
                    c0[r] = _mm256_dpbusd_avx_epi32(c0[r], a, b0);
                    c1[r] = _mm256_dpbusd_avx_epi32(c1[r], a, b1);
                }
            }
            for r in 0..MR {
                _mm256_storeu_si256(out.add(r * 16).cast(), c0[r]);
                _mm256_storeu_si256(out.add(r * 16 + 8).cast(), c1[r]);
            }
        }
    }

    /// 4 × 16-capable tile with `vpmaddubsw` + `vpmaddwd`; exact only for
    /// activations ≤ 127 (the i16 pair sums saturate past that).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2<const MR: usize>(
        x: *const u8,
        ldx: usize,
        groups: usize,
        panel: *const i8,
        out: *mut i32,
    ) {
        // SAFETY: as for `avx_vnni`, with AVX2.
        unsafe {
            let ones = _mm256_set1_epi16(1);
            let mut c0 = [_mm256_setzero_si256(); MR];
            let mut c1 = [_mm256_setzero_si256(); MR];
            for g in 0..groups {
                let b = panel.add(g * 64);
                _mm_prefetch::<_MM_HINT_T0>(b.wrapping_add(2048));
                let b0 = _mm256_loadu_si256(b.cast());
                let b1 = _mm256_loadu_si256(b.add(32).cast());
                for r in 0..MR {
                    let a = _mm256_set1_epi32(quad(x, ldx, r, g));
                    let p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(a, b0), ones);
                    let p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(a, b1), ones);
                    c0[r] = _mm256_add_epi32(c0[r], p0);
                    c1[r] = _mm256_add_epi32(c1[r], p1);
                }
            }
            for r in 0..MR {
                _mm256_storeu_si256(out.add(r * 16).cast(), c0[r]);
                _mm256_storeu_si256(out.add(r * 16 + 8).cast(), c1[r]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(len: usize, seed: usize, scale: f32) -> Vec<f32> {
        (0..len)
            .map(|i| (((i * 7919 + seed * 104_729) % 211) as f32 / 105.0 - 1.0) * scale)
            .collect()
    }

    /// `x Wᵀ + b` in f64.
    fn naive(x: &[f32], w: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        let mut y = vec![0.0f32; m * n];
        for r in 0..m {
            for c in 0..n {
                let dot: f64 = (0..k)
                    .map(|kk| f64::from(x[r * k + kk]) * f64::from(w[c * k + kk]))
                    .sum();
                y[r * n + c] = (dot + f64::from(b[c])) as f32;
            }
        }
        y
    }

    /// Shapes with tails everywhere: `k` not a multiple of 4, `n` not of
    /// any panel width, row counts around every tile height.
    const SHAPES: [(usize, usize); 3] = [(40, 37), (33, 130), (17, 5)];
    const ROWS: [usize; 8] = [1, 3, 5, 9, 13, 25, 130, 250];

    /// The path against the f32 product with activations of `act_max`:
    /// off by at most what the two roundings allow (a few hundredths of the
    /// output's scale here).
    fn matches_fp32(path: Int8Path, act_max: u8) {
        for &(n, k) in &SHAPES {
            let w = data(n * k, 1, 0.5);
            let b = data(n, 2, 0.1);
            let mut lin = QLinear::new(path, &w, b.clone(), n, k);
            assert_eq!(lin.path(), path);
            lin.act_max = act_max;
            let mut s = Int8Scratch::default();
            for m in ROWS {
                // Activations with an offset, as after GELU: the zero point matters.
                let x: Vec<f32> = data(m * k, 3, 2.0).iter().map(|v| v + 0.7).collect();
                let want = naive(&x, &w, &b, m, n, k);
                let mut y = vec![f32::NAN; m * n];
                lin.forward(&x, m, &mut y, &mut s);
                let top = want.iter().fold(0.0f32, |a, v| a.max(v.abs()));
                let worst = y
                    .iter()
                    .zip(&want)
                    .map(|(g, w)| (g - w).abs())
                    .fold(0.0f32, f32::max);
                let tol = top * if act_max == 127 { 0.03 } else { 0.015 };
                assert!(
                    worst <= tol,
                    "{path} n={n} k={k} m={m}: off by {worst} (outputs up to {top})"
                );
            }
        }
    }

    /// Smoothing computes the same product, and with activations whose
    /// few outlier channels set each row's step (as a BERT layer's inputs
    /// have), a closer one: the outliers' range moves into the weights.
    #[test]
    fn smoothing_keeps_the_product_and_tames_outlier_channels() {
        let (m, n, k) = (24, 40, 64);
        let w = data(n * k, 7, 0.5);
        let b = data(n, 8, 0.1);
        // Channels 3 and 40 run 30 times wider than the rest. Mean |error|
        // here: 0.0256 smoothed, 0.0573 plain.
        let x: Vec<f32> = data(m * k, 9, 1.0)
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if i % k == 3 || i % k == 40 {
                    v * 30.0
                } else {
                    *v
                }
            })
            .collect();
        let want = naive(&x, &w, &b, m, n, k);
        let mut x_max = vec![0.0f32; k];
        for row in x.chunks_exact(k) {
            for (a, v) in x_max.iter_mut().zip(row) {
                *a = a.max(v.abs());
            }
        }
        let f = smoothing(&x_max, &w, n, k, 0.5);
        assert!(f[3] > 3.0 * f[0] && f[40] > 3.0 * f[0], "{f:?}");
        let err = |lin: &QLinear| {
            let mut y = vec![f32::NAN; m * n];
            lin.forward(&x, m, &mut y, &mut Int8Scratch::default());
            y.iter().zip(&want).map(|(g, w)| (g - w).abs()).sum::<f32>() / (m * n) as f32
        };
        let plain = err(&QLinear::new(Int8Path::Portable, &w, b.clone(), n, k));
        let smoothed = err(&QLinear::smoothed(
            Int8Path::Portable,
            &w,
            b,
            n,
            k,
            Some(&f),
        ));
        assert!(
            smoothed < 0.6 * plain,
            "mean |error| smoothed {smoothed}, plain {plain}"
        );
        // A channel never seen, or a zero weight column, keeps factor 1.
        let f = smoothing(&[0.0, 2.0], &[0.0, 1.0, 0.0, 1.0], 2, 2, 0.5);
        assert_eq!(f[0], 1.0);
    }

    /// The widest channels, over 3 times the median's, at most 8, in order.
    #[test]
    fn outlier_channels_are_the_widest_few() {
        let mut x_max = vec![1.0f32; 64];
        x_max[5] = 3.5;
        x_max[9] = 2.9;
        x_max[40] = 30.0;
        assert_eq!(outlier_channels(&x_max), vec![5, 40]);
        for (j, v) in x_max.iter_mut().enumerate().step_by(6) {
            *v = 10.0 + j as f32;
        }
        // Thirteen channels qualify; the eight widest are kept (18's 28 is
        // under 40's 30).
        assert_eq!(
            outlier_channels(&x_max),
            vec![24, 30, 36, 40, 42, 48, 54, 60]
        );
        assert!(outlier_channels(&[]).is_empty());
        assert!(outlier_channels(&[0.0; 8]).is_empty());
    }

    /// Outlier channels taken out of the int8 product: their products are
    /// exact (only those channels nonzero: the f32 result), and with the
    /// rest, the error falls below both the plain and the smoothed layer's.
    #[test]
    fn outlier_channels_are_multiplied_in_f32() {
        let (m, n, k) = (24, 40, 64);
        let w = data(n * k, 7, 0.5);
        let b = data(n, 8, 0.1);
        let wide = |i: usize| i % k == 3 || i % k == 40;
        let x: Vec<f32> = data(m * k, 9, 1.0)
            .iter()
            .enumerate()
            .map(|(i, v)| if wide(i) { v * 30.0 } else { *v })
            .collect();
        let mut x_max = vec![0.0f32; k];
        for row in x.chunks_exact(k) {
            for (a, v) in x_max.iter_mut().zip(row) {
                *a = a.max(v.abs());
            }
        }
        let outliers = outlier_channels(&x_max);
        assert_eq!(outliers, vec![3, 40]);
        let f = smoothing(&x_max, &w, n, k, 0.5);
        for path in [
            Int8Path::Portable,
            Int8Path::for_kernel(KernelPath::detect()),
        ] {
            let err = |lin: &QLinear, x: &[f32]| {
                let want = naive(x, &w, &b, m, n, k);
                let mut y = vec![f32::NAN; m * n];
                lin.forward(x, m, &mut y, &mut Int8Scratch::default());
                let e: Vec<f32> = y.iter().zip(&want).map(|(g, w)| (g - w).abs()).collect();
                (
                    e.iter().sum::<f32>() / e.len() as f32,
                    e.iter().fold(0.0f32, |a, &b| a.max(b)),
                )
            };
            for smooth in [None, Some(f.as_slice())] {
                let lin = QLinear::quantized(path, &w, b.clone(), n, k, smooth, &outliers);
                let only: Vec<f32> = x
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| if wide(i) { v } else { 0.0 })
                    .collect();
                let (_, worst) = err(&lin, &only);
                assert!(
                    worst < 1e-4,
                    "{path}: outlier channels alone off by {worst}"
                );
            }
            let (plain, _) = err(&QLinear::smoothed(path, &w, b.clone(), n, k, None), &x);
            let (smoothed, _) = err(&QLinear::smoothed(path, &w, b.clone(), n, k, Some(&f)), &x);
            let (decomposed, _) = err(
                &QLinear::quantized(path, &w, b.clone(), n, k, Some(&f), &outliers),
                &x,
            );
            assert!(
                decomposed < 0.5 * smoothed && smoothed < plain,
                "{path}: mean |error| with outliers in f32 {decomposed}, smoothed {smoothed}, plain {plain}"
            );
        }
    }

    /// The path's integer sums equal the portable path's with the same
    /// activation range, so its outputs are the same bits.
    fn matches_portable_bit_for_bit(path: Int8Path) {
        for &(n, k) in &SHAPES {
            let w = data(n * k, 4, 1.0);
            let b = data(n, 5, 0.3);
            let lin = QLinear::new(path, &w, b.clone(), n, k);
            let mut reference = QLinear::new(Int8Path::Portable, &w, b, n, k);
            reference.act_max = path.act_max();
            let mut s = Int8Scratch::default();
            for m in ROWS {
                let x = data(m * k, 6, 3.0);
                let (mut got, mut want) = (vec![0.0f32; m * n], vec![1.0f32; m * n]);
                lin.forward(&x, m, &mut got, &mut s);
                reference.forward(&x, m, &mut want, &mut s);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "{path} n={n} k={k} m={m} at {i}: {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn portable_int8_path_matches_fp32() {
        matches_fp32(Int8Path::Portable, 255);
    }

    #[test]
    fn portable_int8_path_with_7_bit_activations_matches_fp32() {
        matches_fp32(Int8Path::Portable, 127);
    }

    /// One pair of tests per SIMD path, so a path this CPU lacks shows up
    /// as a `skipped: CPU lacks …` line rather than passing unnoticed.
    macro_rules! per_path {
        ($path:expr, $fp32:ident, $exact:ident) => {
            #[test]
            fn $fp32() {
                if $path.runs_here_or_say_skipped(stringify!($fp32)) {
                    matches_fp32($path, $path.act_max());
                }
            }

            #[test]
            fn $exact() {
                if $path.runs_here_or_say_skipped(stringify!($exact)) {
                    matches_portable_bit_for_bit($path);
                }
            }
        };
    }

    per_path!(
        Int8Path::Avx2,
        avx2_int8_path_matches_fp32,
        avx2_int8_path_matches_portable_bit_for_bit
    );
    per_path!(
        Int8Path::AvxVnni,
        avx_vnni_int8_path_matches_fp32,
        avx_vnni_int8_path_matches_portable_bit_for_bit
    );
    per_path!(
        Int8Path::Amx,
        amx_int8_path_matches_fp32,
        amx_int8_path_matches_portable_bit_for_bit
    );
    per_path!(
        Int8Path::Avx512Vnni,
        avx512_vnni_int8_path_matches_fp32,
        avx512_vnni_int8_path_matches_portable_bit_for_bit
    );

    /// The AMX path's blocking, padding and addressing on any CPU: its
    /// loop over 32 × 32 blocks with the tile instructions emulated (the
    /// same bytes read, the same sums written) gives the portable path's
    /// bits, over shapes with every tail.
    #[test]
    fn amx_blocking_with_emulated_tiles_matches_portable_bit_for_bit() {
        for &(n, k) in SHAPES.iter().chain(&[(64, 384), (70, 130)]) {
            let w = data(n * k, 4, 1.0);
            let b = data(n, 5, 0.3);
            let lin = QLinear::new(Int8Path::Amx, &w, b.clone(), n, k);
            assert_eq!(lin.kp % 64, 0);
            let reference = QLinear::new(Int8Path::Portable, &w, b, n, k);
            let mut s = Int8Scratch::default();
            for m in ROWS.iter().chain(&[31, 32, 33, 127, 128, 129, 300, 1100]) {
                let m = *m;
                let x = data(m * k, 6, 3.0);
                let (mut got, mut want) = (vec![0.0f32; m * n], vec![1.0f32; m * n]);
                quantize_rows(&x, m, k, lin.kp, 255, QuantizePath::Scalar, &mut s);
                lin.pad_rows_for_amx(&mut s, m);
                // SAFETY: the emulation runs anywhere; `s` is padded.
                unsafe { lin.amx_blocks(&s, m, &mut got, crate::amx::block32_emulated) };
                reference.forward(&x, m, &mut want, &mut s);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g.to_bits(), w.to_bits(), "n={n} k={k} m={m} at {i}");
                }
            }
        }
    }

    /// Throughput of each int8 path this CPU runs on the encoder's shapes
    /// (quantization and epilogue included), and on AMX per row block and
    /// with the tile work left out (loop and epilogue alone). Run by hand:
    /// `cargo test -p cairn-embed --lib int8_gemm_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "a benchmark, by hand"]
    fn int8_gemm_throughput() {
        let m = 512;
        for (n, k) in [(1152, 384), (384, 384), (1536, 384), (384, 1536)] {
            let w = data(n * k, 1, 0.5);
            let x = data(m * k, 3, 2.0);
            let mut y = vec![0.0f32; m * n];
            let mut s = Int8Scratch::default();
            let time = |f: &mut dyn FnMut()| {
                f();
                let t = std::time::Instant::now();
                let reps = 20;
                for _ in 0..reps {
                    f();
                }
                let secs = t.elapsed().as_secs_f64() / reps as f64;
                (m * n * k) as f64 / secs / 1e9
            };
            for path in Int8Path::ALL.into_iter().filter(|p| p.supported()) {
                let lin = QLinear::new(path, &w, vec![0.0; n], n, k);
                if path == Int8Path::Amx {
                    for mc in [32, 64, 128, 256, 512] {
                        AMX_MC.store(mc, std::sync::atomic::Ordering::Relaxed);
                        let g = time(&mut || lin.forward(&x, m, &mut y, &mut s));
                        eprintln!("n={n} k={k} m={m} {path} mc={mc}: {g:.1} GMAC/s");
                    }
                    AMX_MC.store(512, std::sync::atomic::Ordering::Relaxed);
                    // SAFETY: the no-op block writes nothing.
                    let g = time(&mut || unsafe {
                        lin.pad_rows_for_amx(&mut s, m);
                        lin.amx_blocks(&s, m, &mut y, noop_block)
                    });
                    eprintln!("n={n} k={k} m={m} {path} loop + epilogue alone: {g:.1} GMAC/s");
                } else {
                    let g = time(&mut || lin.forward(&x, m, &mut y, &mut s));
                    eprintln!("n={n} k={k} m={m} {path}: {g:.1} GMAC/s");
                }
            }
        }
    }

    unsafe fn noop_block(_: *const u8, _: usize, _: usize, _: *const i8, _: *mut i32) {}

    /// Activations far out of the 7-bit range would saturate `vpmaddubsw`;
    /// the AVX2 path's quantizer never makes them, even with a row of one
    /// sign and the weights at ±127.
    #[test]
    fn avx2_activations_stay_within_seven_bits() {
        let (n, k) = (16, 64);
        let w: Vec<f32> = (0..n * k)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let x: Vec<f32> = (0..2 * k).map(|i| if i < k { 5.0 } else { -5.0 }).collect();
        let mut s = Int8Scratch::default();
        quantize_rows(
            &x,
            2,
            k,
            k,
            Int8Path::Avx2.act_max(),
            QuantizePath::Scalar,
            &mut s,
        );
        assert!(s.q.iter().all(|&q| q <= 127));
        let want = naive(&x, &w, &[0.0; 16], 2, n, k);
        let mut y = vec![0.0; 2 * n];
        let mut lin = QLinear::new(Int8Path::Portable, &w, vec![0.0; 16], n, k);
        lin.act_max = Int8Path::Avx2.act_max();
        lin.forward(&x, 2, &mut y, &mut s);
        for (g, w) in y.iter().zip(&want) {
            assert!((g - w).abs() < 0.05, "{g} vs {w}");
        }
    }

    /// The SIMD quantizers against the scalar one, bit for bit: bytes,
    /// padding, scales and zero points, over rows of every tail length,
    /// of one sign, all zero, and with NaN and infinities.
    fn quantizer_matches_scalar(path: QuantizePath) {
        for k in [
            1usize, 5, 8, 15, 16, 17, 31, 32, 33, 63, 64, 100, 127, 128, 130, 384, 1536,
        ] {
            let kp = k.next_multiple_of(4);
            let mut x: Vec<f32> = data(6 * k, k, 3.0).iter().map(|v| v + 0.4).collect();
            x[k..2 * k].iter_mut().for_each(|v| *v = v.abs() + 0.1);
            x[2 * k..3 * k].iter_mut().for_each(|v| *v = -v.abs() - 0.1);
            x[3 * k..4 * k].fill(0.0);
            x[4 * k] = f32::NAN;
            x[5 * k + k / 2] = if k % 2 == 0 {
                f32::INFINITY
            } else {
                -f32::INFINITY
            };
            for qmax in [127, 255] {
                let (mut want, mut got) = (Int8Scratch::default(), Int8Scratch::default());
                // A dirty buffer: padding must still come out zero.
                got.q = Aligned::filled(6 * kp, 0xAA);
                quantize_rows(&x, 6, k, kp, qmax, QuantizePath::Scalar, &mut want);
                quantize_rows(&x, 6, k, kp, qmax, path, &mut got);
                assert_eq!(
                    got.q[..6 * kp],
                    want.q[..6 * kp],
                    "{path:?} k={k} qmax={qmax}"
                );
                assert_eq!(got.zero, want.zero, "{path:?} k={k} qmax={qmax}");
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got.scale), bits(&want.scale), "{path:?} k={k}");
            }
        }
    }

    #[test]
    fn avx512_quantizer_matches_scalar_bit_for_bit() {
        if Int8Path::Avx512Vnni.runs_here_or_say_skipped("avx512_quantizer_matches_scalar") {
            quantizer_matches_scalar(QuantizePath::Avx512);
        }
    }

    #[test]
    fn avx2_quantizer_matches_scalar_bit_for_bit() {
        if Int8Path::Avx2.runs_here_or_say_skipped("avx2_quantizer_matches_scalar") {
            quantizer_matches_scalar(QuantizePath::Avx2);
        }
    }

    #[test]
    fn quantized_rows_reproduce_their_values() {
        let k = 37;
        let x: Vec<f32> = data(3 * k, 9, 4.0).iter().map(|v| v - 1.0).collect();
        let mut s = Int8Scratch::default();
        quantize_rows(&x, 3, k, 40, 255, QuantizePath::Scalar, &mut s);
        for r in 0..3 {
            for kk in 0..k {
                let back = (f32::from(s.q[r * 40 + kk]) - s.zero[r] as f32) * s.scale[r];
                assert!((back - x[r * k + kk]).abs() <= s.scale[r] * 0.5 + 1e-6);
            }
            assert!(s.q[r * 40 + k..(r + 1) * 40].iter().all(|&q| q == 0));
        }
    }

    #[test]
    fn a_weight_quantizes_as_std_round_and_clamp_would() {
        let mut values = vec![0.0f32, -0.0, 0.5, -0.5, 1.5, -1.5, 126.5, -126.5, 127.0];
        values.extend([
            0.49999997f32,
            -0.49999997,
            2.5000002,
            -2.4999998,
            127.5,
            -127.5,
        ]);
        values.extend([
            128.5f32,
            -300.0,
            1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ]);
        let mut x = 0x1234_5678u32;
        for _ in 0..100_000 {
            // xorshift: values spread over ±130, ties and near-ties included.
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            values.push((x as f32 / u32::MAX as f32 - 0.5) * 260.0);
            values.push((x % 521) as f32 * 0.5 - 130.0);
        }
        for v in values {
            for s in [1.0f32, 0.37, 3.0e-3] {
                let want = (v / s).round().clamp(-127.0, 127.0) as i8;
                assert_eq!(quantize_weight(v, s), want, "{v} / {s}");
            }
        }
    }

    #[test]
    fn the_int8_path_follows_the_kernel_path() {
        assert_eq!(
            Int8Path::for_kernel(KernelPath::Portable),
            Int8Path::Portable
        );
        for path in KernelPath::available() {
            assert!(Int8Path::for_kernel(path).supported());
        }
        assert_eq!(Precision::parse("INT8"), Some(Precision::Int8));
        assert_eq!(Precision::parse("fp16"), None);
        // Portable int8 is slower than portable f32: never the faster one.
        assert_eq!(Precision::fastest(KernelPath::Portable), Precision::Fp32);
        if Int8Path::Avx2.supported() {
            assert_eq!(Precision::fastest(KernelPath::Avx2), Precision::Int8);
        }
    }
}
