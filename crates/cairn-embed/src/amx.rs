//! Intel AMX (Advanced Matrix Extensions) for the int8 linear layers: the
//! tile instructions of Xeons since Sapphire Rapids.
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

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Tiles, block32, cpu_has, permitted};

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
            asm!(
                "tilezero tmm0",
                "tilezero tmm1",
                "tilezero tmm2",
                "tilezero tmm3",
                options(nostack, nomem)
            );
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
            let c1 = c.add(ROWS);
            let c2 = c.add(ROWS * 32);
            let c3 = c2.add(ROWS);
            asm!(
                "tilestored [{c0} + {ldc}*1], tmm0",
                "tilestored [{c1} + {ldc}*1], tmm1",
                "tilestored [{c2} + {ldc}*1], tmm2",
                "tilestored [{c3} + {ldc}*1], tmm3",
                c0 = in(reg) c,
                c1 = in(reg) c1,
                c2 = in(reg) c2,
                c3 = in(reg) c3,
                ldc = in(reg) 128usize,
                options(nostack)
            );
        }
    }
}
