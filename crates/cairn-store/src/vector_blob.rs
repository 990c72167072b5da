//! How a vector is stored: a blob of little-endian IEEE half floats (f16),
//! two bytes a component. Unit vectors lose well under 0.001 of cosine that
//! way and the embeddings table halves. Indexes written before stored f32
//! (four bytes a component); both are read, told apart by length.

use half::f16;

/// The blob of a vector.
pub(crate) fn encode(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| f16::from_f32(*x).to_le_bytes())
        .collect()
}

/// The components of a blob of `dim` of them, appended to `out` as half
/// floats (an old f32 blob rounded); `false` (and nothing appended) when its
/// length fits neither format.
pub(crate) fn decode_half_into(blob: &[u8], dim: usize, out: &mut Vec<f16>) -> bool {
    if blob.len() == dim * 2 {
        out.extend(
            blob.chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]])),
        );
        true
    } else if blob.len() == dim * 4 {
        out.extend(
            blob.chunks_exact(4)
                .map(|b| f16::from_f32(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        );
        true
    } else {
        false
    }
}

/// [`decode_half_into`], widened to f32 (for exports).
pub(crate) fn decode_into(blob: &[u8], dim: usize, out: &mut Vec<f32>) -> bool {
    if blob.len() == dim * 4 {
        out.extend(
            blob.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        return true;
    }
    let mut half = Vec::with_capacity(dim);
    if !decode_half_into(blob, dim, &mut half) {
        return false;
    }
    out.extend(half.iter().map(|x| x.to_f32()));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_float_blobs_round_trip_and_old_f32_blobs_still_read() {
        let v = [0.5f32, -0.25, 0.123_456, 1.0];
        let blob = encode(&v);
        assert_eq!(blob.len(), 8);
        let mut out = Vec::new();
        assert!(decode_into(&blob, 4, &mut out));
        for (a, b) in v.iter().zip(&out) {
            assert!((a - b).abs() < 1e-3, "{a} {b}");
        }
        let old: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        out.clear();
        assert!(decode_into(&old, 4, &mut out));
        assert_eq!(out, v);
        out.clear();
        assert!(!decode_into(&blob[..7], 4, &mut out));
        assert!(out.is_empty());
        let mut half = Vec::new();
        assert!(decode_half_into(&old, 4, &mut half));
        assert!(decode_half_into(&blob, 4, &mut half));
        assert_eq!(half[..4], half[4..]);
    }
}
