//! Reading a safetensors file tensor by tensor, straight into the `f32`
//! buffers the encoder keeps.
//!
//! Why not `SafeTensors::deserialize`: it wants the whole file in one buffer,
//! so loading read 91 MB into a temporary, then copied every tensor out of
//! it — a third of the time to load the model, which a one-off `cairn
//! search` pays in full, and 91 MB of peak memory. Here only the header
//! (JSON, a few KB) is read whole; each tensor is read from its offset into
//! its final buffer. (A memory map would skip even that copy, but a model
//! file truncated under the map would kill the process with SIGBUS.)

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Largest header accepted (safetensors' own limit).
const MAX_HEADER: u64 = 100_000_000;

/// Where a tensor is and what it holds.
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    /// Byte range in the data section (after the header).
    start: u64,
    end: u64,
}

/// An open safetensors file and its header.
pub(crate) struct Weights {
    path: PathBuf,
    file: RefCell<File>,
    /// Offset of the data section: 8 + header length.
    data: u64,
    entries: HashMap<String, Entry>,
}

impl Weights {
    /// Opens `path` and reads its header, checking every tensor lies in the file.
    pub(crate) fn open(path: &Path) -> Result<Weights> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let bad = |message: String| Error::Model {
            path: path.to_path_buf(),
            message,
        };
        let mut file = File::open(path).map_err(io)?;
        let size = file.metadata().map_err(io)?.len();
        let mut len = [0u8; 8];
        file.read_exact(&mut len)
            .map_err(|_| bad("not a safetensors file: no header length".into()))?;
        let n = u64::from_le_bytes(len);
        if n > MAX_HEADER || n + 8 > size {
            return Err(bad(format!("header of {n} bytes in a {size}-byte file")));
        }
        let mut header = vec![0u8; n as usize];
        file.read_exact(&mut header).map_err(io)?;
        let json: serde_json::Value =
            serde_json::from_slice(&header).map_err(|e| bad(format!("header is not JSON: {e}")))?;
        let map = json
            .as_object()
            .ok_or_else(|| bad("header is not a JSON object".into()))?;
        let data = 8 + n;
        let mut entries = HashMap::new();
        for (name, v) in map {
            if name == "__metadata__" {
                continue;
            }
            let dtype = v["dtype"].as_str().unwrap_or_default().to_string();
            let shape: Vec<usize> = v["shape"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|d| d.as_u64())
                        .map(|d| d as usize)
                        .collect()
                })
                .unwrap_or_default();
            let offsets = v["data_offsets"].as_array();
            let (Some(start), Some(end)) = (
                offsets.and_then(|o| o.first()).and_then(|x| x.as_u64()),
                offsets.and_then(|o| o.get(1)).and_then(|x| x.as_u64()),
            ) else {
                return Err(bad(format!("{name}: no data_offsets")));
            };
            if start > end || data + end > size {
                return Err(bad(format!(
                    "{name}: bytes {start}..{end} lie outside the file"
                )));
            }
            entries.insert(
                name.clone(),
                Entry {
                    dtype,
                    shape,
                    start,
                    end,
                },
            );
        }
        Ok(Weights {
            path: path.to_path_buf(),
            file: RefCell::new(file),
            data,
            entries,
        })
    }

    /// Whether any tensor's name starts with `prefix`.
    /// How many tensors the file holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn any_starts_with(&self, prefix: &str) -> bool {
        self.entries.keys().any(|k| k.starts_with(prefix))
    }

    /// The shape of a tensor, if there is one of that name.
    pub(crate) fn shape(&self, name: &str) -> Option<&[usize]> {
        self.entries.get(name).map(|e| e.shape.as_slice())
    }

    /// An f32 tensor of exactly `shape`, read from the file.
    pub(crate) fn f32(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let count = self.count(name, shape)?;
        let mut out = vec![0f32; count];
        self.f32_into(name, &mut out)?;
        Ok(out)
    }

    /// [`Weights::f32`] into a buffer aligned for the kernels.
    pub(crate) fn f32_aligned(
        &self,
        name: &str,
        shape: &[usize],
    ) -> Result<crate::aligned::Aligned<f32>> {
        let count = self.count(name, shape)?;
        let mut out = crate::aligned::Aligned::filled(count, 0.0);
        self.f32_into(name, &mut out)?;
        Ok(out)
    }

    /// The element count of tensor `name`, checked to be f32 of `shape`.
    fn count(&self, name: &str, shape: &[usize]) -> Result<usize> {
        let bad = |message: String| Error::Model {
            path: self.path.clone(),
            message,
        };
        let e = self
            .entries
            .get(name)
            .ok_or_else(|| bad(format!("{name}: no such tensor")))?;
        let count: usize = shape.iter().product();
        if e.dtype != "F32" || e.shape != shape || e.end - e.start != count as u64 * 4 {
            return Err(bad(format!(
                "{name}: expected f32 {shape:?}, found {} {:?}",
                e.dtype, e.shape
            )));
        }
        Ok(count)
    }

    /// Reads tensor `name` (checked by [`Weights::count`] to hold
    /// `out.len()` f32s) into `out`.
    fn f32_into(&self, name: &str, out: &mut [f32]) -> Result<()> {
        let Some(e) = self.entries.get(name) else {
            return Err(Error::Model {
                path: self.path.clone(),
                message: format!("{name}: no such tensor"),
            });
        };
        let count = out.len();
        {
            // SAFETY: the bytes of an initialised `[f32]`, which any bit
            // pattern of the same length leaves a valid `[f32]`.
            let bytes: &mut [u8] =
                unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), count * 4) };
            let mut file = self.file.borrow_mut();
            let io = |source| Error::Io {
                path: self.path.clone(),
                source,
            };
            file.seek(SeekFrom::Start(self.data + e.start))
                .map_err(io)?;
            file.read_exact(bytes).map_err(io)?;
        }
        // The file is little-endian: a no-op on x86 and ARM.
        for x in out.iter_mut() {
            *x = f32::from_bits(u32::from_le(x.to_bits()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file written by hand in the format: tensors read back exactly, and
    /// a wrong shape, a wrong dtype or offsets past the end are refused.
    #[test]
    fn reads_tensors_by_offset_and_refuses_what_does_not_fit() {
        let dir = std::env::temp_dir().join(format!("cairn-weights-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, header: &str, data: &[u8]| {
            let p = dir.join(name);
            let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
            bytes.extend_from_slice(header.as_bytes());
            bytes.extend_from_slice(data);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let data: Vec<u8> = [1.5f32, -2.0, 0.25, 8.0, 3.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let good = write(
            "good.safetensors",
            r#"{"__metadata__":{"format":"pt"},"a.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"a.bias":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}}"#,
            &data,
        );
        let w = Weights::open(&good).unwrap();
        assert!(w.any_starts_with("a."));
        assert_eq!(w.shape("a.weight"), Some(&[2, 2][..]));
        assert_eq!(
            w.f32("a.weight", &[2, 2]).unwrap(),
            vec![1.5, -2.0, 0.25, 8.0]
        );
        assert_eq!(w.f32("a.bias", &[1]).unwrap(), vec![3.0]);
        assert!(w.f32("a.weight", &[4, 1]).is_err());
        assert!(w.f32("missing", &[1]).is_err());
        let past = write(
            "past.safetensors",
            r#"{"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}}"#,
            &data,
        );
        assert!(Weights::open(&past).is_err());
        let half = write(
            "half.safetensors",
            r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#,
            &data,
        );
        assert!(Weights::open(&half).unwrap().f32("a", &[2]).is_err());
        std::fs::write(dir.join("short"), b"abc").unwrap();
        assert!(Weights::open(&dir.join("short")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
