//! The vector matrix as a file beside the index, so that a process that
//! searches once (a CLI `search` with no daemon) maps the matrix another
//! process wrote instead of reading every vector out of SQLite: on the
//! PowerShell corpus (122,627 vectors) that read was ~0.6 s of a 0.8 s
//! search, an ordered join through the embeddings table and a sort that
//! spilled to disk. Mapped, the matrix costs no read up front, is shared
//! through the page cache by every process that maps it (the daemon's too),
//! and is never copied.
//!
//! ```text
//! magic "CAIRNVF" + version byte
//! stamp        str        what the matrix was built from (the caller's)
//! dim          u32
//! rows         u64
//! ids          i64 × rows
//! paths        u32 count, str each
//! path_of      u32 × rows (index into paths)
//! zeros        to the next multiple of 64 bytes from the start
//! matrix       f16 × rows × dim, little-endian
//! str = u32 byte length + UTF-8
//! ```
//!
//! The file ends exactly where the matrix does. Every count is checked
//! against what is left and every path index against the table: a damaged
//! file is an error, never a panic or a read out of bounds.

use std::io::Write;
use std::path::Path;

use half::f16;

use crate::cache_file::{CacheFileError, Reader, put_str};
use crate::vector::{Matrix, VectorIndex};

const MAGIC: &[u8; 7] = b"CAIRNVF";
/// The format's version: a file of another is stale, not damaged.
const FORMAT: u8 = 1;
/// The matrix starts at a multiple of this many bytes.
const ALIGN: usize = 64;

impl VectorIndex {
    /// Writes the index with `stamp` (what it was built from) in the header:
    /// [`VectorIndex::open_file`] maps it back only with the same stamp.
    pub fn write_to(&self, out: &mut dyn Write, stamp: &str) -> std::io::Result<()> {
        let mut head = Vec::with_capacity(64 + self.ids.len() * 12);
        head.extend_from_slice(MAGIC);
        head.push(FORMAT);
        put_str(&mut head, stamp);
        head.extend_from_slice(&(self.dim as u32).to_le_bytes());
        head.extend_from_slice(&(self.ids.len() as u64).to_le_bytes());
        for id in &self.ids {
            head.extend_from_slice(&id.to_le_bytes());
        }
        head.extend_from_slice(&(self.path_table.len() as u32).to_le_bytes());
        for p in &self.path_table {
            put_str(&mut head, p);
        }
        for i in &self.path_of {
            head.extend_from_slice(&i.to_le_bytes());
        }
        head.resize(head.len().next_multiple_of(ALIGN), 0);
        out.write_all(&head)?;
        let mut buf = Vec::with_capacity(8192);
        for block in self.data.as_slice().chunks(4096) {
            buf.clear();
            for x in block {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            out.write_all(&buf)?;
        }
        Ok(())
    }

    /// The index [`VectorIndex::write_to`] left in `path`, if its stamp is
    /// `stamp`: the small arrays are read, the matrix is mapped.
    pub fn open_file(path: &Path, stamp: &str) -> Result<VectorIndex, VectorFileError> {
        let map = crate::cache_file::map_file(path)?;
        let (mut index, offset) = parse_head(&map, stamp)?;
        let len = index.ids.len() * index.dim;
        if cfg!(target_endian = "little") {
            index.data = Matrix::Mapped { map, offset, len };
        } else {
            let halves = map[offset..offset + len * 2]
                .chunks_exact(2)
                .map(|b| f16::from_le_bytes([b[0], b[1]]))
                .collect();
            index.data = Matrix::Owned(halves);
        }
        Ok(index)
    }
}

/// Why a vector file was not used.
#[derive(Debug, thiserror::Error)]
pub enum VectorFileError {
    /// It could not be opened or mapped.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// It is stale or damaged.
    #[error(transparent)]
    File(#[from] CacheFileError),
}

/// Everything but the matrix, and the matrix's byte offset (checked: in
/// bounds, aligned, and the last thing in the file).
fn parse_head(bytes: &[u8], stamp: &str) -> Result<(VectorIndex, usize), CacheFileError> {
    let mut r = Reader::open(bytes, MAGIC, FORMAT, stamp, "not a vector file")?;
    let dim = u32::from_le_bytes(r.array()?) as usize;
    // Each row takes 12 bytes of ids and path indexes, and 2 × dim of matrix.
    let rows = r.count(12 + 2 * dim)?;
    if dim == 0 && rows > 0 {
        return Err(CacheFileError::Corrupt("rows of no length"));
    }
    let ids = r
        .take(rows * 8)?
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    let paths = r.count32(4)?;
    let mut path_table = Vec::with_capacity(paths);
    for _ in 0..paths {
        path_table.push(r.str()?.to_string());
    }
    let path_of: Vec<u32> = r.words(rows)?.map(u32::from_le_bytes).collect();
    if path_of.iter().any(|&i| i as usize >= path_table.len()) {
        return Err(CacheFileError::Corrupt("a row names no path"));
    }
    let offset = r.at.next_multiple_of(ALIGN);
    if offset.checked_add(rows * dim * 2) != Some(bytes.len()) {
        return Err(CacheFileError::Corrupt(
            "the matrix is not the rest of the file",
        ));
    }
    Ok((
        VectorIndex {
            ids,
            path_of,
            path_table,
            data: Matrix::Owned(Vec::new()),
            dim,
        },
        offset,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> VectorIndex {
        let data: Vec<f16> = [0.6f32, 0.8, 1.0, 0.0, 0.0, 1.0]
            .iter()
            .map(|x| f16::from_f32(*x))
            .collect();
        VectorIndex::new(
            vec![7, 9, 12],
            vec!["a/x.md".into(), "b/y.rs".into(), "a/x.md".into()],
            data,
            2,
        )
    }

    fn written(idx: &VectorIndex, stamp: &str) -> Vec<u8> {
        let mut out = Vec::new();
        idx.write_to(&mut out, stamp).unwrap();
        out
    }

    #[test]
    fn a_written_index_maps_back_and_answers_the_same() {
        let idx = sample();
        let dir = std::env::temp_dir().join(format!("cairn-vf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("index.sqlite.vectors");
        std::fs::write(&file, written(&idx, "id:3:model")).unwrap();
        let back = VectorIndex::open_file(&file, "id:3:model").unwrap();
        assert!(back.is_mapped() == cfg!(target_endian = "little"));
        assert_eq!(back.len(), 3);
        assert_eq!(back.matrix_bytes(), idx.matrix_bytes());
        for prefix in [None, Some("a/"), Some("b/")] {
            assert_eq!(
                back.top_k(&[0.0, 1.0], 3, prefix),
                idx.top_k(&[0.0, 1.0], 3, prefix)
            );
        }
        assert!(matches!(
            VectorIndex::open_file(&file, "id:4:model"),
            Err(VectorFileError::File(CacheFileError::Stale))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_cut_or_damage_is_an_error_not_a_panic() {
        let bytes = written(&sample(), "s");
        assert!(parse_head(&bytes, "s").is_ok());
        for len in 0..bytes.len() {
            assert!(parse_head(&bytes[..len], "s").is_err(), "cut at {len}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(parse_head(&longer, "s").is_err());
        // A path index past the table.
        let mut bad = bytes.clone();
        let head_end = {
            let mut r = Reader { bytes: &bad, at: 0 };
            r.take(8).unwrap();
            r.str().unwrap();
            r.take(4 + 8 + 3 * 8).unwrap();
            let n = r.count32(4).unwrap();
            for _ in 0..n {
                r.str().unwrap();
            }
            r.at
        };
        bad[head_end..head_end + 4].copy_from_slice(&99u32.to_le_bytes());
        assert_eq!(
            parse_head(&bad, "s").err(),
            Some(CacheFileError::Corrupt("a row names no path"))
        );
        let mut rows = bytes.clone();
        // rows = u64 after magic+version (8), stamp (4 + 1), dim (4).
        rows[17..25].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_head(&rows, "s").is_err());
    }
}
