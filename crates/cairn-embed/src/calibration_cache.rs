//! The statistics an int8 model's calibration measured, kept in the user
//! cache (`<cache>/calibration/`) so that the next load of the same model
//! on the same paths skips the calibration pass and the plain int8 layers
//! it runs on: a one-off `cairn search` loads the model for one query, and
//! those two were most of the time int8 added to the load.
//!
//! A file holds its key (the weights file's path, length and modification
//! time; the f32 and int8 paths; a hash of the calibration tokens; this
//! format's version) before the numbers, and is used only when the key
//! matches to the byte: anything else (another model file, a changed one,
//! other texts, a torn or foreign file) is measured again and written
//! anew, atomically. The numbers are f32 bits, so a load from the file
//! gives the vectors a calibrating load gives.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::bert::{Calibration, InputMax};
use crate::int8::Int8Path;
use crate::kernels::KernelPath;

/// Bumped whenever what the calibration measures changes (the layers it
/// records, how the int8 layers it runs on compute, and the f32 parts of
/// the forward between them: softmax, GELU, LayerNorm), so older files stop
/// matching. 3: fused multiply-adds in softmax and GELU (6ec6036); with
/// files of 2 kept, a path calibrated before the upgrade and one calibrated
/// after gave vectors 1e-4 apart where they give the same bits.
const FORMAT: &str = "cairn int8 calibration 3";

/// What the statistics were measured on; the file's first bytes.
pub(crate) struct StatsKey {
    text: String,
}

/// FNV-1a, 64 bits: a stable hash (std's `DefaultHasher` may change
/// between Rust releases) for a file name and the token ids.
pub(crate) fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl StatsKey {
    /// The key of `calibration` run through the model in `weights` on these
    /// paths; `None` when the file's length or time cannot be read.
    pub(crate) fn new(
        weights: &Path,
        path: KernelPath,
        int8: Int8Path,
        calibration: &Calibration,
    ) -> Option<StatsKey> {
        let meta = std::fs::metadata(weights).ok()?;
        let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        let types = calibration.types.iter().flatten();
        let tokens = calibration
            .ids
            .iter()
            .chain(types)
            .flat_map(|seq| seq.iter().chain(&[u32::MAX]))
            .flat_map(|t| t.to_le_bytes());
        let text = format!(
            "{FORMAT}\n{}\n{} {}\n{} {}\n{:016x}\n",
            weights.display(),
            meta.len(),
            modified.as_nanos(),
            path.name(),
            int8.name(),
            fnv(tokens),
        );
        Some(StatsKey { text })
    }

    /// The key as written at the start of its file.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The file under `root` (the user cache).
    fn file(&self, root: &Path) -> PathBuf {
        root.join("calibration")
            .join(format!("{:016x}.bin", fnv(self.text.bytes())))
    }

    /// The statistics kept for this key, if a file holds them.
    pub(crate) fn read(&self, root: &Path) -> Option<Vec<InputMax>> {
        let bytes = std::fs::read(self.file(root)).ok()?;
        let body = bytes.strip_prefix(self.text.as_bytes())?;
        decode(body)
    }

    /// Keeps `stats` for this key (a temporary file renamed into place, so
    /// a reader sees the old file or the new one). A failure costs only
    /// the next load's calibration.
    pub(crate) fn write(&self, root: &Path, stats: &[InputMax]) {
        let file = self.file(root);
        let mut bytes = self.text.as_bytes().to_vec();
        encode(stats, &mut bytes);
        keep_file(&file, &bytes, "the next load calibrates again");
    }
}

/// Writes a file of the user cache whole or not at all (a temporary file
/// renamed into place, so a reader sees the old file or the new one, and a
/// process that maps the old one keeps it). A failure is logged with what
/// it costs (`then`): a cache file is only ever time saved.
pub(crate) fn keep_file(file: &Path, bytes: &[u8], then: &str) {
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    let written = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&tmp, bytes))
        .and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        tracing::debug!("{}: {e}; {then}", file.display());
    }
}

/// A hash of what a calibration measured: a prepared model
/// ([`crate::prepared`]) is made from these numbers and names them in its key.
pub(crate) fn stats_hash(stats: &[InputMax]) -> u64 {
    let mut bytes = Vec::new();
    encode(stats, &mut bytes);
    fnv(bytes)
}

/// Layer count, then per layer its four vectors, each a length and f32s
/// (little-endian).
fn encode(stats: &[InputMax], out: &mut Vec<u8>) {
    out.extend((stats.len() as u32).to_le_bytes());
    for layer in stats {
        for v in layer.parts() {
            out.extend((v.len() as u32).to_le_bytes());
            out.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
    }
}

/// [`encode`]'s inverse; `None` unless the bytes are exactly one such list.
fn decode(mut bytes: &[u8]) -> Option<Vec<InputMax>> {
    fn u32_at(bytes: &mut &[u8]) -> Option<usize> {
        let (head, rest) = bytes.split_first_chunk::<4>()?;
        *bytes = rest;
        usize::try_from(u32::from_le_bytes(*head)).ok()
    }
    fn floats(bytes: &mut &[u8]) -> Option<Vec<f32>> {
        let n = u32_at(bytes)?;
        let (head, rest) = bytes.split_at_checked(n.checked_mul(4)?)?;
        *bytes = rest;
        Some(
            head.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }
    let layers = u32_at(&mut bytes)?;
    // Each layer takes at least 16 bytes: a count this file cannot hold is
    // refused before anything is allocated for it.
    if layers > bytes.len() / 16 {
        return None;
    }
    let mut stats = Vec::with_capacity(layers);
    for _ in 0..layers {
        stats.push(InputMax::from_parts([
            floats(&mut bytes)?,
            floats(&mut bytes)?,
            floats(&mut bytes)?,
            floats(&mut bytes)?,
        ]));
    }
    bytes.is_empty().then_some(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> Vec<InputMax> {
        (0..3)
            .map(|l| {
                let v = |n: usize, f: f32| (0..n).map(|i| i as f32 * f + l as f32).collect();
                InputMax::from_parts([v(4, 0.5), v(4, 1.25), v(4, -3.0e-7), v(16, 2.5)])
            })
            .collect()
    }

    fn key(weights: &Path, int8: Int8Path, ids: Vec<Vec<u32>>) -> StatsKey {
        let calibration = Calibration {
            ids,
            types: None,
            cache: None,
        };
        StatsKey::new(weights, KernelPath::Portable, int8, &calibration).expect("key")
    }

    #[test]
    fn statistics_come_back_bit_for_bit_under_their_key_only() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let weights = tmp.path().join("model.safetensors");
        std::fs::write(&weights, b"weights").expect("write");
        let root = tmp.path().join("cache");
        let k = key(&weights, Int8Path::Portable, vec![vec![101, 7, 102]]);
        assert!(k.read(&root).is_none(), "nothing kept yet");
        k.write(&root, &stats());
        let back = k.read(&root).expect("kept");
        assert_eq!(back.len(), 3);
        for (a, b) in back.iter().zip(&stats()) {
            for (x, y) in a.parts().iter().zip(b.parts()) {
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(x), bits(y));
            }
        }
        // Other texts, another int8 path, or a changed model file: none of
        // them reads these numbers.
        assert!(
            key(&weights, Int8Path::Portable, vec![vec![101, 8, 102]])
                .read(&root)
                .is_none()
        );
        assert!(
            key(&weights, Int8Path::Avx2, vec![vec![101, 7, 102]])
                .read(&root)
                .is_none()
        );
        std::fs::write(&weights, b"other weights").expect("write");
        assert!(
            key(&weights, Int8Path::Portable, vec![vec![101, 7, 102]])
                .read(&root)
                .is_none()
        );
    }

    #[test]
    fn a_torn_or_foreign_file_is_no_statistics() {
        let mut bytes = Vec::new();
        encode(&stats(), &mut bytes);
        assert!(decode(&bytes).is_some());
        for cut in [0, 3, 4, 20, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_none());
        // A huge layer count is refused, not allocated.
        assert!(decode(&u32::MAX.to_le_bytes()).is_none());
    }
}
