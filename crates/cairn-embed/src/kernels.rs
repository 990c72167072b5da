//! Matrix and element-wise kernels for the encoder, chosen once at load by
//! the CPU's features: AVX-512, AVX2 + FMA, or portable code the compiler
//! vectorises for any target. `CAIRN_KERNEL=avx512|avx2|portable` (or
//! `MiniLmOptions::kernel`) forces one path; all give the same vectors
//! (cosine ≥ 0.999 against the reference, tested on every path).
//!
//! Why our own GEMM: the model's weights never change, so they are packed once
//! at load into column panels laid out for the micro-kernel (`k`-major, one
//! register row per `k`). A call then streams the panel straight from cache
//! into FMAs: no per-call packing, which dominated short queries, and a
//! register-blocked 12×32 (AVX-512) or 6×16 (AVX2) tile that keeps the FMA units
//! busy for the long chunks. Each tile asks for the weights 4 KiB ahead
//! (software prefetch): measured, it cut a 10-token query from ~4.5 to ~3.8 ms.

use std::fmt;

use crate::aligned::Aligned;

/// Which instruction set the kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelPath {
    /// AVX-512F: up to 12 rows × 32 columns per micro-tile.
    Avx512,
    /// AVX2 + FMA (+ F16C): 6 rows × 16 columns per micro-tile.
    Avx2,
    /// Plain Rust, vectorised by the compiler for the build target.
    Portable,
}

impl fmt::Display for KernelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl KernelPath {
    /// The path's name as `CAIRN_KERNEL` spells it.
    pub fn name(self) -> &'static str {
        match self {
            KernelPath::Avx512 => "avx512",
            KernelPath::Avx2 => "avx2",
            KernelPath::Portable => "portable",
        }
    }

    /// Parses a name (`avx512`, `avx2`, `portable`).
    pub fn parse(name: &str) -> Option<KernelPath> {
        match name.trim().to_ascii_lowercase().as_str() {
            "avx512" | "avx-512" => Some(KernelPath::Avx512),
            "avx2" | "fma" => Some(KernelPath::Avx2),
            "portable" | "scalar" => Some(KernelPath::Portable),
            _ => None,
        }
    }

    /// Whether this CPU can run the path.
    pub fn supported(self) -> bool {
        self.missing_features().is_empty()
    }

    /// The CPU features the path needs that this CPU lacks (none when it
    /// runs here), as `/proc/cpuinfo` names them.
    pub fn missing_features(self) -> Vec<&'static str> {
        lacking(match self {
            KernelPath::Avx512 => &["avx512f"],
            KernelPath::Avx2 => &["avx2", "fma", "f16c"],
            KernelPath::Portable => &[],
        })
    }

    /// For tests of one path: true when this CPU runs it; otherwise writes
    /// `skipped: CPU lacks …` to the process's real stderr (past the test
    /// harness's capture, so every log shows which paths were not tested
    /// here) and returns false.
    #[doc(hidden)]
    pub fn runs_here_or_say_skipped(self, test: &str) -> bool {
        runs_or_say_skipped(
            test,
            &self.missing_features(),
            &format!("the {self} kernel path"),
        )
    }

    /// Every path this CPU can run, fastest first.
    pub fn available() -> Vec<KernelPath> {
        [KernelPath::Avx512, KernelPath::Avx2, KernelPath::Portable]
            .into_iter()
            .filter(|p| p.supported())
            .collect()
    }

    /// The fastest supported path.
    pub fn detect() -> KernelPath {
        KernelPath::available()
            .first()
            .copied()
            .unwrap_or(KernelPath::Portable)
    }

    /// Columns per packed panel.
    pub(crate) fn nr(self) -> usize {
        match self {
            KernelPath::Avx512 => 32,
            KernelPath::Avx2 | KernelPath::Portable => 16,
        }
    }
}

/// Of `needs` (CPU features as `/proc/cpuinfo` names them), those this CPU
/// lacks: one place that knows how each name is detected, for the f32 and
/// the int8 paths.
pub(crate) fn lacking(needs: &[&'static str]) -> Vec<&'static str> {
    needs
        .iter()
        .copied()
        .filter(|feature| !has_feature(feature))
        .collect()
}

/// Whether this CPU has `feature` (a `/proc/cpuinfo` name): never off
/// x86-64, where every SIMD path here is missing.
fn has_feature(feature: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512_vnni" => std::arch::is_x86_feature_detected!("avx512vnni"),
            "avx_vnni" => std::arch::is_x86_feature_detected!("avxvnni"),
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "fma" => std::arch::is_x86_feature_detected!("fma"),
            "f16c" => std::arch::is_x86_feature_detected!("f16c"),
            // Not yet detectable with std's macro on stable Rust: CPUID.
            "amx_tile" | "amx_int8" => crate::amx::cpu_has(feature),
            "amx_os_permission" => crate::amx::permitted(),
            _ => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = feature;
        false
    }
}

/// For tests of one path (`what`): true when `missing` is empty; otherwise
/// writes `skipped: CPU lacks …` to the process's real stderr (past the
/// test harness's capture, so every log shows which paths were not tested
/// here) and returns false.
pub(crate) fn runs_or_say_skipped(test: &str, missing: &[&str], what: &str) -> bool {
    if missing.is_empty() {
        return true;
    }
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "{test}: skipped: CPU lacks {} ({what})",
        missing.join(", ")
    );
    false
}

/// Calls with at most this many rows (short queries) read the half-precision
/// copy of the weights: such a call is bound by streaming the weights from
/// cache (42 MB in f32 for MiniLM), not by arithmetic, so halving the bytes
/// halves its time. Longer inputs use the exact f32 weights.
const SMALL_M: usize = 32;

/// A linear layer `y = x Wᵀ + b`, its weights packed for one kernel path.
pub(crate) struct PackedLinear {
    path: KernelPath,
    /// `panels × k × nr` floats: `packed[p][kk][j] = W[p·nr + j][kk]` (0 past `n`).
    packed: Aligned<f32>,
    /// The same panels as IEEE half floats (SIMD paths only), for short inputs.
    half: Aligned<half::f16>,
    bias: Vec<f32>,
    k: usize,
    n: usize,
}

/// Rows of `x` per block: keeps a block of the input in L2 while every panel passes over it.
const MC: usize = 120;

/// Splits `rows` into tiles of at most `mr` rows, as even as possible (10 rows
/// with `mr` 12 → one tile of 10; 14 → 7 + 7, not 12 + 2): a short tail tile
/// has too few accumulators to keep the FMA units busy.
#[inline(always)]
pub(crate) fn tiles(rows: usize, mr: usize) -> impl Iterator<Item = (usize, usize)> {
    let n = rows.div_ceil(mr).max(1);
    let (base, extra) = (rows / n, rows % n);
    (0..n).scan(0, move |start, i| {
        let len = base + usize::from(i < extra);
        let tile = (*start, len);
        *start += len;
        Some(tile)
    })
}

impl PackedLinear {
    /// Packs `w` (`n × k`, row-major as PyTorch stores it) and its bias.
    pub(crate) fn new(
        path: KernelPath,
        w: &[f32],
        bias: Vec<f32>,
        n: usize,
        k: usize,
    ) -> PackedLinear {
        let nr = path.nr();
        let panels = n.div_ceil(nr);
        let mut packed = Aligned::filled(panels * k * nr, 0.0f32);
        for p in 0..panels {
            for kk in 0..k {
                for j in 0..nr {
                    let col = p * nr + j;
                    if col < n {
                        packed[(p * k + kk) * nr + j] = w[col * k + kk];
                    }
                }
            }
        }
        let half = match path {
            KernelPath::Portable => Aligned::default(),
            _ => {
                // One SIMD pass (F16C where the CPU has it), not a call per value.
                use half::slice::HalfFloatSliceExt;
                let mut h = Aligned::filled(packed.len(), half::f16::ZERO);
                h.convert_from_f32_slice(&packed);
                h
            }
        };
        PackedLinear {
            path,
            packed,
            half,
            bias,
            k,
            n,
        }
    }

    /// Output width.
    pub(crate) fn out(&self) -> usize {
        self.n
    }

    /// `y[..m × n] = x[..m × k] · Wᵀ + b`.
    pub(crate) fn forward(&self, x: &[f32], m: usize, y: &mut [f32]) {
        assert!(
            x.len() >= m * self.k && y.len() >= m * self.n,
            "linear layer buffers too small"
        );
        match self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the path was chosen only if the CPU supports it (see `supported`).
            KernelPath::Avx512 => unsafe { self.forward_avx512(x, m, y) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            KernelPath::Avx2 => unsafe { self.forward_avx2(x, m, y) },
            _ => self.forward_portable(x, m, y),
        }
    }

    /// Adds the bias and copies a computed tile (`rows × nr`, row-major) into `y`.
    #[inline(always)]
    fn store(&self, tile: &[f32], rows: usize, row0: usize, p: usize, y: &mut [f32]) {
        let nr = self.path.nr();
        let c0 = p * nr;
        let cols = nr.min(self.n - c0);
        for r in 0..rows {
            let dst = &mut y[(row0 + r) * self.n + c0..][..cols];
            let src = &tile[r * nr..][..cols];
            let b = &self.bias[c0..c0 + cols];
            for j in 0..cols {
                dst[j] = src[j] + b[j];
            }
        }
    }

    /// The cache blocking every path shares: blocks of `MC` rows, then each
    /// panel, then even row tiles of at most `MR`. `tile(rows, x_tile, panel,
    /// buf)` computes one `rows × NR` tile into `buf`; the bias is added on store.
    #[inline(always)]
    fn blocked<const MR: usize, const NR: usize>(
        &self,
        x: &[f32],
        m: usize,
        y: &mut [f32],
        mut tile: impl FnMut(usize, &[f32], usize, &mut [[f32; NR]; MR]),
    ) {
        let k = self.k;
        let mut buf = [[0.0f32; NR]; MR];
        for mb in (0..m).step_by(MC) {
            let mend = (mb + MC).min(m);
            for p in 0..self.n.div_ceil(NR) {
                for (start, rows) in tiles(mend - mb, MR) {
                    let r0 = mb + start;
                    tile(rows, &x[r0 * k..(r0 + rows) * k], p, &mut buf);
                    self.store(buf.as_flattened(), rows, r0, p, y);
                }
            }
        }
    }

    fn forward_portable(&self, x: &[f32], m: usize, y: &mut [f32]) {
        let k = self.k;
        self.blocked::<4, 16>(x, m, y, |rows, xt, p, acc| {
            let panel = &self.packed[p * k * 16..(p + 1) * k * 16];
            for a in acc.iter_mut() {
                a.fill(0.0);
            }
            for (kk, b) in panel.chunks_exact(16).enumerate() {
                for (r, acc_r) in acc.iter_mut().enumerate().take(rows) {
                    let a = xt[r * k + kk];
                    for j in 0..16 {
                        acc_r[j] += a * b[j];
                    }
                }
            }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn forward_avx2(&self, x: &[f32], m: usize, y: &mut [f32]) {
        let (k, small) = (self.k, m <= SMALL_M);
        self.blocked::<6, 16>(x, m, y, |rows, xt, p, buf| {
            let (xp, out) = (xt.as_ptr(), buf.as_mut_ptr().cast::<f32>());
            macro_rules! go {
                ($tile:ident, $panel:expr, $($n:literal)*) => {
                    match rows {
                        $($n => avx2::$tile::<$n>(xp, k, k, $panel, out),)*
                        _ => unreachable!("tiles() yields 1..=MR rows"),
                    }
                };
            }
            // SAFETY: `xt` holds `rows` rows of `k` floats, each panel `k × 16`
            // elements, `buf` `6 × 16` floats; the CPU has AVX2, FMA and F16C.
            unsafe {
                if small {
                    go!(tile_f16, self.half[p * k * 16..].as_ptr().cast::<u16>(), 1 2 3 4 5 6)
                } else {
                    go!(tile, self.packed[p * k * 16..].as_ptr(), 1 2 3 4 5 6)
                }
            }
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn forward_avx512(&self, x: &[f32], m: usize, y: &mut [f32]) {
        let (k, small) = (self.k, m <= SMALL_M);
        self.blocked::<12, 32>(x, m, y, |rows, xt, p, buf| {
            let (xp, out) = (xt.as_ptr(), buf.as_mut_ptr().cast::<f32>());
            macro_rules! go {
                ($tile:ident, $panel:expr, $($n:literal)*) => {
                    match rows {
                        $($n => avx512::$tile::<$n>(xp, k, k, $panel, out),)*
                        _ => unreachable!("tiles() yields 1..=MR rows"),
                    }
                };
            }
            // SAFETY: `xt` holds `rows` rows of `k` floats, each panel `k × 32`
            // elements, `buf` `12 × 32` floats; the CPU has AVX-512F.
            unsafe {
                if small {
                    go!(tile_f16, self.half[p * k * 32..].as_ptr().cast::<u16>(), 1 2 3 4 5 6 7 8 9 10 11 12)
                } else {
                    go!(tile, self.packed[p * k * 32..].as_ptr(), 1 2 3 4 5 6 7 8 9 10 11 12)
                }
            }
        });
    }
}

/// Packs a `k × n` matrix `B` (element `(kk, j)` at `b[kk·rs + j·cs]`) into
/// `path`'s column panels, `packed[p][kk][j] = B[kk][p·nr + j]` (0 past `n`),
/// the layout the micro-kernels stream: for attention's `Kᵀ` (`rs` 1) and
/// `V` (`cs` 1), packed once per head into a reused buffer.
pub(crate) fn pack_panels(
    path: KernelPath,
    b: &[f32],
    rs: usize,
    cs: usize,
    k: usize,
    n: usize,
    packed: &mut Aligned<f32>,
) {
    let nr = path.nr();
    let panels = n.div_ceil(nr);
    packed.resize(panels * k * nr, 0.0);
    packed.fill(0.0);
    for p in 0..panels {
        let cols = nr.min(n - p * nr);
        let panel = &mut packed[p * k * nr..(p + 1) * k * nr];
        if cs == 1 {
            // Rows of B are contiguous (attention's V): one copy per row.
            for (kk, dst) in panel.chunks_exact_mut(nr).enumerate() {
                dst[..cols].copy_from_slice(&b[kk * rs + p * nr..][..cols]);
            }
        } else if rs == 1 {
            // Columns of B are contiguous (attention's Kᵀ, B[kk][j] =
            // K[j][kk]): read each column whole, write it down the panel.
            // The element-wise gather was 5 % of an int8 profile.
            for j in 0..cols {
                let src = &b[(p * nr + j) * cs..][..k];
                for (kk, &v) in src.iter().enumerate() {
                    panel[kk * nr + j] = v;
                }
            }
        } else {
            for kk in 0..k {
                let dst = &mut panel[kk * nr..][..cols];
                for (j, d) in dst.iter_mut().enumerate() {
                    *d = b[kk * rs + (p * nr + j) * cs];
                }
            }
        }
    }
}

/// `y[i·ldy + j] = alpha · Σ_kk x[i·ldx + kk] · B[kk][j]` for `i < m`, `j < n`,
/// `B` packed by [`pack_panels`] for the same path: attention's `QKᵀ` and
/// `PV` on the linear layers' micro-kernels. Why not `matrixmultiply` (as
/// before): it packs both operands on every call, and for a head (`k` =
/// 32 for `QKᵀ`) the packing cost as much as half its kernel time; here
/// `x` is read in place and `B` is packed once, small. SIMD paths only:
/// the portable path keeps `matrixmultiply`.
#[allow(clippy::too_many_arguments)] // the BLAS shape: two operands, their strides, the sizes
pub(crate) fn gemm_packed(
    path: KernelPath,
    x: &[f32],
    ldx: usize,
    m: usize,
    k: usize,
    packed: &[f32],
    n: usize,
    alpha: f32,
    y: &mut [f32],
    ldy: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    let nr = path.nr();
    assert!(
        x.len() >= (m - 1) * ldx + k
            && y.len() >= (m - 1) * ldy + n
            && packed.len() >= n.div_ceil(nr) * k * nr
            && ldx >= k
            && ldy >= n,
        "packed gemm buffers too small"
    );
    match path {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the path was chosen only if the CPU supports it; the assert above.
        KernelPath::Avx512 => unsafe { gemm_packed_avx512(x, ldx, m, k, packed, n, alpha, y, ldy) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        KernelPath::Avx2 => unsafe { gemm_packed_avx2(x, ldx, m, k, packed, n, alpha, y, ldy) },
        _ => {
            for i in 0..m {
                for j in 0..n {
                    let (p, jj) = (j / nr, j % nr);
                    let dot: f32 = (0..k)
                        .map(|kk| x[i * ldx + kk] * packed[(p * k + kk) * nr + jj])
                        .sum();
                    y[i * ldy + j] = alpha * dot;
                }
            }
        }
    }
}

/// Stores a `rows × nr` tile (row-major) times `alpha` into `y` at row
/// `row0`, columns from `c0` (at most `n`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn store_scaled(
    tile: &[f32],
    nr: usize,
    rows: usize,
    row0: usize,
    c0: usize,
    n: usize,
    alpha: f32,
    y: &mut [f32],
    ldy: usize,
) {
    let cols = nr.min(n - c0);
    for r in 0..rows {
        let dst = &mut y[(row0 + r) * ldy + c0..][..cols];
        for (d, s) in dst.iter_mut().zip(&tile[r * nr..][..cols]) {
            *d = alpha * s;
        }
    }
}

macro_rules! gemm_packed_on {
    ($name:ident, $feature:literal, $module:ident, $mr:literal, $nr:literal, $($n:literal)*) => {
        /// [`gemm_packed`] on this instruction set.
        ///
        /// # Safety
        /// The CPU has the features; the buffers are as `gemm_packed` asserts.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $name(
            x: &[f32],
            ldx: usize,
            m: usize,
            k: usize,
            packed: &[f32],
            n: usize,
            alpha: f32,
            y: &mut [f32],
            ldy: usize,
        ) {
            let mut buf = [[0.0f32; $nr]; $mr];
            for (start, rows) in tiles(m, $mr) {
                let xp = x[start * ldx..].as_ptr();
                for p in 0..n.div_ceil($nr) {
                    let panel = packed[p * k * $nr..].as_ptr();
                    let out = buf.as_mut_ptr().cast::<f32>();
                    // SAFETY: `x` holds `rows` rows of `k` floats at stride
                    // `ldx` from `start`, the panel `k × NR` floats, `buf`
                    // `MR × NR`; the CPU has the features.
                    unsafe {
                        match rows {
                            $($n => $module::tile::<$n>(xp, ldx, k, panel, out),)*
                            _ => unreachable!("tiles() yields 1..=MR rows"),
                        }
                    }
                    store_scaled(buf.as_flattened(), $nr, rows, start, p * $nr, n, alpha, y, ldy);
                }
            }
        }
    };
}

gemm_packed_on!(gemm_packed_avx512, "avx512f", avx512, 12, 32, 1 2 3 4 5 6 7 8 9 10 11 12);
gemm_packed_on!(gemm_packed_avx2, "avx2,fma", avx2, 6, 16, 1 2 3 4 5 6);

/// Defines a micro-kernel `out[r][0..2·W] = Σ_k x[r][k] · panel[k][0..2·W]` for
/// `MR` rows, where a panel row is two registers of `W` lanes. The f32 and f16
/// variants of each instruction set differ only in how a panel row is loaded
/// (`$load`), so one body serves both.
#[cfg(target_arch = "x86_64")]
macro_rules! micro_kernel {
    (
        $(#[$doc:meta])* $name:ident, $feature:literal, $elem:ty, lanes $w:literal,
        $zero:ident, $set1:ident, $fma:ident, $store:ident, $prefetch_ahead:literal,
        load |$panel:ident, $at:ident| $load:expr
    ) => {
        $(#[$doc])*
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn $name<const MR: usize>(
            x: *const f32,
            ldx: usize,
            k: usize,
            $panel: *const $elem,
            out: *mut f32,
        ) {
            // SAFETY: the caller guarantees the pointers cover MR×ldx floats,
            // k×2W panel elements and MR×2W floats, and that the CPU has the
            // features enabled above.
            unsafe {
                let mut c0 = [$zero(); MR];
                let mut c1 = [$zero(); MR];
                for kk in 0..k {
                    // Ask for the weights 4 KiB ahead: short inputs are bound
                    // by streaming them from L3.
                    _mm_prefetch::<_MM_HINT_T0>($panel.wrapping_add(kk * 2 * $w + $prefetch_ahead) as *const i8);
                    let $at = kk * 2 * $w;
                    let (b0, b1) = $load;
                    for r in 0..MR {
                        let a = $set1(*x.add(r * ldx + kk));
                        c0[r] = $fma(a, b0, c0[r]);
                        c1[r] = $fma(a, b1, c1[r]);
                    }
                }
                for r in 0..MR {
                    $store(out.add(r * 2 * $w), c0[r]);
                    $store(out.add(r * 2 * $w + $w), c1[r]);
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    micro_kernel!(
        /// 12×32-capable AVX-512 tile over an f32 panel.
        tile, "avx512f", f32, lanes 16,
        _mm512_setzero_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps, 1024,
        load |panel, at| (_mm512_loadu_ps(panel.add(at)), _mm512_loadu_ps(panel.add(at + 16)))
    );

    micro_kernel!(
        /// As [`tile`], with the panel in half precision (widened in registers).
        tile_f16, "avx512f", u16, lanes 16,
        _mm512_setzero_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps, 2048,
        load |panel, at| (
            _mm512_cvtph_ps(_mm256_loadu_si256(panel.add(at) as *const __m256i)),
            _mm512_cvtph_ps(_mm256_loadu_si256(panel.add(at + 16) as *const __m256i)),
        )
    );
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    micro_kernel!(
        /// 6×16-capable AVX2 tile over an f32 panel.
        tile, "avx2,fma", f32, lanes 8,
        _mm256_setzero_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps, 1024,
        load |panel, at| (_mm256_loadu_ps(panel.add(at)), _mm256_loadu_ps(panel.add(at + 8)))
    );

    micro_kernel!(
        /// As [`tile`], with the panel in half precision (widened in registers).
        tile_f16, "avx2,fma,f16c", u16, lanes 8,
        _mm256_setzero_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps, 2048,
        load |panel, at| (
            _mm256_cvtph_ps(_mm_loadu_si128(panel.add(at) as *const __m128i)),
            _mm256_cvtph_ps(_mm_loadu_si128(panel.add(at + 8) as *const __m128i)),
        )
    );
}

// ---- element-wise kernels -------------------------------------------------
//
// Written as plain loops with no calls and no branches so that the compiler
// vectorises them; each is compiled three times (AVX-512, AVX2, baseline) and
// `Elementwise` calls the copy for the chosen path.

/// `a·b + c`: one fused multiply-add on the SIMD paths (`FMA`), where it
/// takes softmax and GELU a tenth faster (one instruction and one rounding
/// for two); a multiply and an add on the portable path, where `mul_add`
/// is a libm call per element on a CPU without FMA.
#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

/// e^x to ~2 ulp for x in [-87, 88] (clamped outside): Cody–Waite range
/// reduction x = n·ln2 + r, a degree-6 polynomial for e^r (Horner, fused
/// where `FMA`), and 2^n built in the exponent bits. Branch-free so loops
/// over it vectorise (std's exp is a libm call per element).
#[inline(always)]
fn exp_fast<const FMA: bool>(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // Round to nearest with the 1.5·2^23 trick (no SSE4.1 round needed).
    let shifted = x * std::f32::consts::LOG2_E + 12_582_912.0;
    let n = shifted - 12_582_912.0;
    let r = madd::<FMA>(n, -0.693_145_75, x);
    let r = madd::<FMA>(n, -1.428_606_8e-6, r);
    let mut p = madd::<FMA>(r, 0.001_388_889, 0.008_333_334);
    for c in [0.041_666_668, 0.166_666_67, 0.5, 1.0, 1.0] {
        p = madd::<FMA>(r, p, c);
    }
    // n as an integer straight from `shifted`'s low mantissa bits (|n| ≤ 127
    // sits in the binade of 1.5·2^23): an integer subtract where `n as i32`
    // (a saturating conversion) compiled to a scalar convert + two compares
    // per lane and kept softmax and GELU from vectorising.
    let n_int = shifted.to_bits().wrapping_sub(12_582_912.0f32.to_bits());
    f32::from_bits(n_int.wrapping_add(127) << 23) * p
}

/// Exact-erf GELU, erf by Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7).
#[inline(always)]
fn gelu_body<const FMA: bool>(v: &mut [f32]) {
    for x in v.iter_mut() {
        let z = *x * std::f32::consts::FRAC_1_SQRT_2;
        let a = z.abs();
        let t = 1.0 / (1.0 + 0.327_591_1 * a);
        let mut poly = madd::<FMA>(t, 1.061_405_4, -1.453_152_1);
        for c in [1.421_413_8, -0.284_496_74, 0.254_829_6] {
            poly = madd::<FMA>(poly, t, c);
        }
        let erf_abs = 1.0 - poly * t * exp_fast::<FMA>(-a * a);
        let erf = erf_abs.copysign(z);
        *x = 0.5 * *x * (1.0 + erf);
    }
}

/// The maximum of `body` (whole blocks of 16) and of `start`, found in 16
/// independent lanes: one running `max` is a serial chain the compiler does
/// not vectorise (it was most of the cost of softmax). The maximum is
/// exact, so the lanes give the same value.
#[inline(always)]
fn lane_max(body: &[f32], start: [f32; 16]) -> f32 {
    let mut lanes = start;
    for c in body.chunks_exact(16) {
        for j in 0..16 {
            lanes[j] = if c[j] > lanes[j] { c[j] } else { lanes[j] };
        }
    }
    let mut max = f32::NEG_INFINITY;
    for v in lanes {
        max = if v > max { v } else { max };
    }
    max
}

/// `x ← e^(x − max)` over `body` (whole blocks of 16), and the sums of its
/// 16 lanes.
#[inline(always)]
fn exp_in_lanes<const FMA: bool>(body: &mut [f32], max: f32) -> [f32; 16] {
    let mut lanes = [0.0f32; 16];
    for c in body.chunks_exact_mut(16) {
        for j in 0..16 {
            c[j] = exp_fast::<FMA>(c[j] - max);
            lanes[j] += c[j];
        }
    }
    lanes
}

/// Row-wise softmax of `rows × t` scores.
///
/// A row's last `t % 16` scores run through the vector code too, in one
/// block padded to 16 lanes (as a scalar tail they took a fifth of
/// softmax's time at t = 251).
#[inline(always)]
fn softmax_body<const FMA: bool>(scores: &mut [f32], t: usize) {
    for row in scores.chunks_exact_mut(t) {
        let (body, tail) = row.split_at_mut(t - t % 16);
        let mut pad = [f32::NEG_INFINITY; 16];
        pad[..tail.len()].copy_from_slice(tail);
        let max = lane_max(body, pad);
        let lanes = exp_in_lanes::<FMA>(body, max);
        // The padding's lanes come out as e^-87 (or NaN when the row is
        // all -inf) and are dropped.
        for v in pad.iter_mut() {
            *v = exp_fast::<FMA>(*v - max);
        }
        tail.copy_from_slice(&pad[..tail.len()]);
        let mut sum: f32 = 0.0;
        for v in tail.iter() {
            sum += *v;
        }
        sum += lanes.iter().sum::<f32>();
        let inv = 1.0 / sum;
        for v in row.iter_mut() {
            *v *= inv;
        }
    }
}

/// Softmax of a `valid × valid` block of scores laid out in rows `width`
/// wide (a multiple of 32), written to `out` in bfloat16 (`width × width`,
/// zeros outside the block): [`softmax_body`]'s arithmetic with the
/// normalising multiply and the rounding in one pass, for the tiled
/// attention ([`crate::amx`]). `scores`' padding columns are overwritten.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(crate) fn softmax_to_bf16<R: crate::amx::Rounding>(
    round: R,
    scores: &mut [f32],
    width: usize,
    valid: usize,
    out: &mut [u16],
) {
    assert!(width.is_multiple_of(32) && valid <= width && out.len() >= scores.len());
    for (i, (row, p)) in scores
        .chunks_exact_mut(width)
        .zip(out.chunks_exact_mut(width))
        .enumerate()
    {
        if i >= valid {
            p.fill(0);
            continue;
        }
        row[valid..].fill(f32::NEG_INFINITY);
        let max = lane_max(row, [f32::NEG_INFINITY; 16]);
        let lanes = exp_in_lanes::<true>(row, max);
        // The padding's e^-87 are in the sum (1e-38 each): nothing at f32.
        let inv = 1.0 / lanes.iter().sum::<f32>();
        for (d, x) in p.chunks_exact_mut(32).zip(row.chunks_exact(32)) {
            // SAFETY: 32 values each; the rounding is the caller's.
            unsafe { round.scaled32(x.as_ptr(), inv, d.as_mut_ptr()) };
        }
        p[valid..].fill(0);
    }
}

/// Sum of a slice in 16 independent lanes (so it vectorises).
#[inline(always)]
fn lane_sum(v: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0.0f32; 16];
    let chunks = v.chunks_exact(16);
    let rest: f32 = chunks.remainder().iter().map(|&x| f(x)).sum();
    for c in chunks {
        for j in 0..16 {
            lanes[j] += f(c[j]);
        }
    }
    lanes.iter().sum::<f32>() + rest
}

/// `x = LayerNorm(x + residual)` row by row (width = gamma.len()).
#[inline(always)]
fn add_norm_body(x: &mut [f32], residual: &[f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = gamma.len();
    for (row, res) in x.chunks_exact_mut(n).zip(residual.chunks_exact(n)) {
        for (v, r) in row.iter_mut().zip(res) {
            *v += r;
        }
        let mean = lane_sum(row, |v| v) / n as f32;
        let var = lane_sum(row, |v| (v - mean) * (v - mean)) / n as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

/// Runs a body on the chosen path: `$body::<true>` (fused multiply-adds)
/// compiled for AVX-512 or AVX2, `$body::<false>` on the portable path; or
/// one expression for the SIMD paths and another for the portable one.
macro_rules! dispatch {
    ($path:expr, $body:ident ( $($arg:expr),* )) => {
        dispatch!($path, $body::<true>($($arg),*), $body::<false>($($arg),*))
    };
    ($path:expr, $simd:expr, $portable:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f")]
            unsafe fn on_avx512(f: impl FnOnce()) { f() }
            #[target_feature(enable = "avx2,fma")]
            unsafe fn on_avx2(f: impl FnOnce()) { f() }
            match $path {
                // SAFETY: the path was chosen only if the CPU supports it.
                KernelPath::Avx512 => unsafe { on_avx512(|| $simd) },
                // SAFETY: as above.
                KernelPath::Avx2 => unsafe { on_avx2(|| $simd) },
                KernelPath::Portable => $portable,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = $path;
            $portable
        }
    }};
}

/// The element-wise kernels of one path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Elementwise(pub KernelPath);

impl Elementwise {
    pub(crate) fn gelu(self, v: &mut [f32]) {
        dispatch!(self.0, gelu_body(v))
    }

    pub(crate) fn softmax(self, scores: &mut [f32], t: usize) {
        dispatch!(self.0, softmax_body(scores, t))
    }

    pub(crate) fn add_norm(
        self,
        x: &mut [f32],
        residual: &[f32],
        gamma: &[f32],
        beta: &[f32],
        eps: f32,
    ) {
        dispatch!(
            self.0,
            add_norm_body(x, residual, gamma, beta, eps),
            add_norm_body(x, residual, gamma, beta, eps)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_are_even_and_cover_all_rows() {
        let t: Vec<_> = tiles(10, 12).collect();
        assert_eq!(t, vec![(0, 10)]);
        let t: Vec<_> = tiles(14, 12).collect();
        assert_eq!(t, vec![(0, 7), (7, 7)]);
        for rows in 1..100 {
            let t: Vec<_> = tiles(rows, 12).collect();
            assert_eq!(t.iter().map(|x| x.1).sum::<usize>(), rows);
            assert!(t.iter().all(|x| x.1 >= 1 && x.1 <= 12));
        }
    }

    #[test]
    fn exp_fast_is_accurate() {
        for i in -870..=880 {
            let x = i as f32 / 10.0;
            let want = x.exp();
            for got in [exp_fast::<false>(x), exp_fast::<true>(x)] {
                assert!(
                    ((got - want) / want).abs() < 4e-7,
                    "exp({x}) = {got}, want {want}"
                );
            }
        }
    }

    /// The integer 2^n changed from `n as i32` to the bits of the shifted
    /// value: the same n, so the same results, bit for bit.
    #[test]
    fn exp_fast_takes_n_from_the_bits_exactly_as_the_conversion_did() {
        let old = |x: f32| {
            let x = x.clamp(-87.0, 88.0);
            let n = (x * std::f32::consts::LOG2_E + 12_582_912.0) - 12_582_912.0;
            let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
            let p = 1.0
                + r * (1.0
                    + r * (0.5
                        + r * (0.166_666_67
                            + r * (0.041_666_668 + r * (0.008_333_334 + r * 0.001_388_889)))));
            f32::from_bits(((n as i32 + 127) as u32) << 23) * p
        };
        for i in -200_000..=200_000 {
            let x = i as f32 / 1000.0;
            assert_eq!(exp_fast::<false>(x).to_bits(), old(x).to_bits(), "exp({x})");
        }
    }

    /// One test per path, so a path this CPU lacks shows up as a skip line
    /// rather than passing unnoticed; the portable path runs everywhere.
    macro_rules! per_path {
        ($check:ident: $portable:ident, $avx2:ident, $avx512:ident) => {
            #[test]
            fn $portable() {
                $check(KernelPath::Portable);
            }

            #[test]
            fn $avx2() {
                if KernelPath::Avx2.runs_here_or_say_skipped(stringify!($avx2)) {
                    $check(KernelPath::Avx2);
                }
            }

            #[test]
            fn $avx512() {
                if KernelPath::Avx512.runs_here_or_say_skipped(stringify!($avx512)) {
                    $check(KernelPath::Avx512);
                }
            }
        };
    }

    per_path!(linear_layer_matches_naive:
        portable_path_computes_the_linear_layer,
        avx2_path_computes_the_linear_layer,
        avx512_path_computes_the_linear_layer);

    per_path!(elementwise_ops_match_reference:
        portable_path_computes_the_elementwise_ops,
        avx2_path_computes_the_elementwise_ops,
        avx512_path_computes_the_elementwise_ops);

    per_path!(packed_gemm_matches_naive:
        portable_path_computes_the_packed_gemm,
        avx2_path_computes_the_packed_gemm,
        avx512_path_computes_the_packed_gemm);

    /// Attention's two products as `bert` runs them: `alpha · Q Kᵀ` (B
    /// packed from rows, transposed) and `P V` (B packed as is), strided.
    fn packed_gemm_matches_naive(path: KernelPath) {
        for (m, k, n) in [
            (1, 32, 1),
            (5, 32, 40),
            (40, 32, 40),
            (251, 32, 251),
            (33, 251, 32),
            (251, 251, 32),
            (13, 7, 17),
        ] {
            let (ldx, ldy) = (k + 3, n + 5);
            let x: Vec<f32> = (0..m * ldx)
                .map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0)
                .collect();
            // B stored as n rows of k (transposed, as K) and as k rows of n (as V).
            let bt: Vec<f32> = (0..n * k)
                .map(|i| ((i * 104_729) % 97) as f32 / 48.0 - 1.0)
                .collect();
            for transposed in [true, false] {
                let (rs, cs) = if transposed { (1, k) } else { (n, 1) };
                let mut packed = Aligned::filled(3, 7.0f32);
                pack_panels(path, &bt, rs, cs, k, n, &mut packed);
                let mut y = vec![f32::NAN; (m - 1) * ldy + n];
                gemm_packed(path, &x, ldx, m, k, &packed, n, 0.5, &mut y, ldy);
                for i in 0..m {
                    for j in 0..n {
                        let want = 0.5
                            * (0..k)
                                .map(|kk| {
                                    f64::from(x[i * ldx + kk]) * f64::from(bt[kk * rs + j * cs])
                                })
                                .sum::<f64>();
                        let got = f64::from(y[i * ldy + j]);
                        assert!(
                            (got - want).abs() < 1e-4 * (1.0 + want.abs()),
                            "{path} m={m} k={k} n={n} t={transposed} ({i},{j}): {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    fn linear_layer_matches_naive(path: KernelPath) {
        let (n, k) = (40, 37); // not multiples of the panel widths
        let w: Vec<f32> = (0..n * k)
            .map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0)
            .collect();
        let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.1).collect();
        for m in [1, 5, 9, 13, 130, 250] {
            let x: Vec<f32> = (0..m * k)
                .map(|i| ((i * 104_729) % 97) as f32 / 48.0 - 1.0)
                .collect();
            let mut want = vec![0.0f32; m * n];
            for r in 0..m {
                for c in 0..n {
                    want[r * n + c] =
                        bias[c] + (0..k).map(|kk| x[r * k + kk] * w[c * k + kk]).sum::<f32>();
                }
            }
            let lin = PackedLinear::new(path, &w, bias.clone(), n, k);
            let mut y = vec![0.0f32; m * n];
            lin.forward(&x, m, &mut y);
            // Short inputs on SIMD paths read half-precision weights.
            let tol = if m <= SMALL_M && path != KernelPath::Portable {
                2e-2
            } else {
                1e-4
            };
            for (g, w) in y.iter().zip(&want) {
                assert!((g - w).abs() < tol, "{path} m={m}: {g} vs {w}");
            }
        }
    }

    fn elementwise_ops_match_reference(path: KernelPath) {
        let base: Vec<f32> = (0..70).map(|i| (i as f32 - 35.0) / 7.0).collect();
        let mut want_gelu = base.clone();
        Elementwise(KernelPath::Portable).gelu(&mut want_gelu);
        for (x, g) in base.iter().zip(&want_gelu) {
            let exact = 0.5 * x * (1.0 + erf_ref(x / std::f32::consts::SQRT_2));
            assert!((g - exact).abs() < 1e-5, "gelu({x})");
        }
        let e = Elementwise(path);
        let mut g = base.clone();
        e.gelu(&mut g);
        assert!(
            g.iter().zip(&want_gelu).all(|(a, b)| (a - b).abs() < 1e-6),
            "{path} gelu"
        );
        let mut s = base.clone();
        e.softmax(&mut s, 35);
        for row in s.chunks(35) {
            assert!(
                (row.iter().sum::<f32>() - 1.0).abs() < 1e-5,
                "{path} softmax"
            );
        }
        let mut x = base[..64].to_vec();
        e.add_norm(&mut x, &[0.5; 64], &[1.0; 32], &[0.0; 32], 1e-12);
        for row in x.chunks(32) {
            let mean = row.iter().sum::<f32>() / 32.0;
            let var = row.iter().map(|v| v * v).sum::<f32>() / 32.0;
            assert!(
                mean.abs() < 1e-5 && (var - 1.0).abs() < 1e-3,
                "{path} layer norm"
            );
        }
    }

    /// Softmax as it was written before its tail ran on the vector code
    /// (the last `t % 16` scores of a row one by one) and before the SIMD
    /// paths fused multiply-adds.
    fn softmax_scalar_tail(scores: &mut [f32], t: usize) {
        for row in scores.chunks_exact_mut(t) {
            let mut lane_max = [f32::NEG_INFINITY; 16];
            let mut chunks = row.chunks_exact(16);
            for c in &mut chunks {
                for j in 0..16 {
                    lane_max[j] = lane_max[j].max(c[j]);
                }
            }
            let mut max = f32::NEG_INFINITY;
            for &v in chunks.remainder().iter().chain(&lane_max) {
                max = max.max(v);
            }
            let mut lanes = [0.0f32; 16];
            let mut chunks = row.chunks_exact_mut(16);
            for c in &mut chunks {
                for j in 0..16 {
                    c[j] = exp_fast::<false>(c[j] - max);
                    lanes[j] += c[j];
                }
            }
            let mut sum: f32 = 0.0;
            for v in chunks.into_remainder() {
                *v = exp_fast::<false>(*v - max);
                sum += *v;
            }
            sum += lanes.iter().sum::<f32>();
            let inv = 1.0 / sum;
            for v in row.iter_mut() {
                *v *= inv;
            }
        }
    }

    /// The portable path gives the old softmax's bits (its tail now in a
    /// padded block, summed in the same order); the SIMD paths, with
    /// fused multiply-adds, are within a few ulp of it.
    #[test]
    fn softmax_matches_the_scalar_tail_one() {
        for path in [KernelPath::Portable, KernelPath::Avx2, KernelPath::Avx512] {
            if !path.runs_here_or_say_skipped("softmax_matches_the_scalar_tail_one") {
                continue;
            }
            for t in (1..=40).chain([63, 64, 65, 127, 251, 256]) {
                let rows = 3;
                let base: Vec<f32> = (0..rows * t)
                    .map(|i| ((i * 7919) % 211) as f32 / 9.0 - 11.0)
                    .collect();
                let mut want = base.clone();
                softmax_scalar_tail(&mut want, t);
                let mut got = base;
                Elementwise(path).softmax(&mut got, t);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    if path == KernelPath::Portable {
                        assert_eq!(g.to_bits(), w.to_bits(), "{path} t={t} [{i}]: {g} vs {w}");
                    } else {
                        assert!(
                            (g - w).abs() <= 1e-6 * w.abs(),
                            "{path} t={t} [{i}]: {g} vs {w}"
                        );
                    }
                }
            }
        }
    }

    /// erf by its Taylor series (slow, for reference only).
    fn erf_ref(x: f32) -> f32 {
        let x = f64::from(x);
        let mut sum = 0.0;
        let mut term = x;
        for n in 0..200 {
            sum += term / (2 * n + 1) as f64;
            term *= -x * x / (n + 1) as f64;
        }
        (sum * 2.0 / std::f64::consts::PI.sqrt()) as f32
    }
}
