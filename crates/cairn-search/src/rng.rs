//! A deterministic random number generator, and (for tests) random graphs.

/// SplitMix64 (Steele, Lea & Flood 2014): a small, fast, deterministic
/// generator, good enough for shuffles, sampling and synthetic benchmark
/// graphs; the same seed gives the same sequence on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A random permutation of `0..n` (Fisher–Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<u32> {
        let mut p: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            p.swap(i, self.below(i + 1));
        }
        p
    }
}

/// Random graph with hubs (Barabási–Albert style): node `i` joins `m / n`
/// earlier nodes, each picked proportionally to degree (by sampling a past
/// edge endpoint) or uniformly, with equal odds; weights 1–4.
#[cfg(test)]
pub(crate) fn random_edges(n: usize, m: usize, seed: u64) -> Vec<(u32, u32, f32)> {
    let mut rng = SplitMix64(seed);
    let per_node = (m / n.max(1)).max(1);
    let mut ends: Vec<u32> = Vec::with_capacity(2 * m);
    let mut edges = Vec::with_capacity(m);
    for a in 1..n {
        for _ in 0..per_node {
            let b = if !ends.is_empty() && rng.next_u64().is_multiple_of(2) {
                ends[rng.below(ends.len())]
            } else {
                rng.below(a) as u32
            };
            let w = 1.0 + (rng.next_u64() % 4) as f32;
            edges.push((a as u32, b, w));
            ends.push(a as u32);
            ends.push(b);
        }
    }
    edges
}
