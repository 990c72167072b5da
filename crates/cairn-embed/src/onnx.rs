//! The parts of an ONNX file that hold a BERT encoder's weights: the graph's
//! initializers (tensors) and its nodes (who consumes which tensor).
//!
//! Why our own reader and not a crate: what is needed is five fields of three
//! protobuf messages. The ONNX crates either run the model (tract, ort: a
//! runtime of their own, or a C++ library) or generate code from the `.proto`
//! at build time (prost + protoc, which this machine's toolchain does not
//! carry). The protobuf wire format is small and stable; this reader checks
//! every length against the bytes it has, so a damaged file is an error with
//! its path, never a panic or an allocation the file did not pay for.
//!
//! Message and field numbers (onnx/onnx.proto3): `ModelProto.graph = 7`;
//! `GraphProto.node = 1`, `.initializer = 5`; `NodeProto.input = 1`,
//! `.output = 2`, `.op_type = 4`; `TensorProto.dims = 1`, `.data_type = 2`,
//! `.float_data = 4`, `.int32_data = 5`, `.int64_data = 7`, `.name = 8`,
//! `.raw_data = 9`, `.data_location = 14` (1 = external: refused).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Element types of [`Tensor::data_type`] this reader turns into numbers.
pub(crate) mod dtype {
    /// 32-bit float.
    pub const FLOAT: i32 = 1;
    /// Unsigned 8-bit integer.
    pub const UINT8: i32 = 2;
    /// Signed 8-bit integer.
    pub const INT8: i32 = 3;
    /// Signed 32-bit integer.
    pub const INT32: i32 = 6;
    /// Signed 64-bit integer.
    pub const INT64: i32 = 7;
}

/// One initializer of the graph.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tensor {
    pub name: String,
    pub dims: Vec<usize>,
    pub data_type: i32,
    /// Little-endian element bytes, when the tensor stores them raw.
    pub raw: Vec<u8>,
    /// `float_data`, for small float tensors (scales).
    pub floats: Vec<f32>,
    /// `int32_data`: also where 8-bit tensors (zero points) keep their values.
    pub ints: Vec<i64>,
}

impl Tensor {
    /// Element count the dims give.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// The values as `f32`, whatever the storage: floats as they are, 8-bit
    /// and 32-bit integers converted. `None` for another element type or a
    /// tensor whose data does not hold `len()` elements.
    pub fn values(&self) -> Option<Vec<f32>> {
        let n = self.len();
        let out: Vec<f32> = match self.data_type {
            dtype::FLOAT if !self.raw.is_empty() => self
                .raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            dtype::FLOAT => self.floats.clone(),
            dtype::UINT8 if !self.raw.is_empty() => {
                self.raw.iter().map(|&b| f32::from(b)).collect()
            }
            dtype::INT8 if !self.raw.is_empty() => {
                self.raw.iter().map(|&b| f32::from(b as i8)).collect()
            }
            dtype::INT32 if !self.raw.is_empty() => self
                .raw
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32)
                .collect(),
            dtype::UINT8 | dtype::INT8 | dtype::INT32 | dtype::INT64 => {
                self.ints.iter().map(|&v| v as f32).collect()
            }
            _ => return None,
        };
        (out.len() == n).then_some(out)
    }
}

/// One node of the graph: what it does and which tensors it reads and writes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Node {
    pub op_type: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

/// The graph of an ONNX model, as far as weights go.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    pub initializers: HashMap<String, Tensor>,
    pub nodes: Vec<Node>,
}

impl Graph {
    /// Reads the graph of the ONNX file at `path`.
    pub fn read(path: &Path) -> Result<Graph> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Graph::parse(&bytes).map_err(|message| Error::Model {
            path: path.to_path_buf(),
            message: format!("not a readable ONNX model: {message}"),
        })
    }

    /// Parses a serialized `ModelProto`.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Graph, String> {
        let mut graph = None;
        for field in Fields::new(bytes) {
            let (number, value) = field?;
            if number == 7 {
                graph = Some(parse_graph(value.bytes()?)?);
            }
        }
        graph.ok_or_else(|| "no graph".to_string())
    }

    /// The nodes that read tensor `name`.
    pub fn consumers<'g>(&'g self, name: &'g str) -> impl Iterator<Item = &'g Node> + 'g {
        self.nodes
            .iter()
            .filter(move |n| n.inputs.iter().any(|i| i == name))
    }

    /// The initializer `name`, or an error naming it.
    pub fn tensor(&self, name: &str, path: &Path) -> Result<&Tensor> {
        self.initializers.get(name).ok_or_else(|| Error::Model {
            path: PathBuf::from(path),
            message: format!("no initializer {name:?}"),
        })
    }
}

fn parse_graph(bytes: &[u8]) -> std::result::Result<Graph, String> {
    let mut g = Graph::default();
    for field in Fields::new(bytes) {
        let (number, value) = field?;
        match number {
            1 => g.nodes.push(parse_node(value.bytes()?)?),
            5 => {
                let t = parse_tensor(value.bytes()?)?;
                g.initializers.insert(t.name.clone(), t);
            }
            _ => {}
        }
    }
    Ok(g)
}

fn parse_node(bytes: &[u8]) -> std::result::Result<Node, String> {
    let mut n = Node::default();
    for field in Fields::new(bytes) {
        let (number, value) = field?;
        match number {
            1 => n.inputs.push(value.string()?),
            2 => n.outputs.push(value.string()?),
            4 => n.op_type = value.string()?,
            _ => {}
        }
    }
    Ok(n)
}

fn parse_tensor(bytes: &[u8]) -> std::result::Result<Tensor, String> {
    let mut t = Tensor::default();
    for field in Fields::new(bytes) {
        let (number, value) = field?;
        match number {
            1 => {
                for d in value.varints()? {
                    t.dims
                        .push(usize::try_from(d).map_err(|_| format!("dimension {d}"))?);
                }
            }
            2 => t.data_type = value.varint()? as i32,
            4 => t.floats.extend(value.floats()?),
            5 | 7 => t
                .ints
                .extend(value.varints()?.into_iter().map(|v| v as i64)),
            8 => t.name = value.string()?,
            9 => t.raw = value.bytes()?.to_vec(),
            14 if value.varint()? == 1 => {
                return Err(format!(
                    "tensor {:?} keeps its data in another file",
                    t.name
                ));
            }
            _ => {}
        }
    }
    let n = t
        .dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| format!("tensor {:?}: dims {:?} overflow", t.name, t.dims))?;
    let width = match t.data_type {
        dtype::FLOAT | dtype::INT32 => 4,
        dtype::INT64 => 8,
        _ => 1,
    };
    if !t.raw.is_empty() && t.raw.len() != n.saturating_mul(width) {
        return Err(format!(
            "tensor {:?}: {} raw bytes for dims {:?}",
            t.name,
            t.raw.len(),
            t.dims
        ));
    }
    Ok(t)
}

/// A field's value as the wire format carries it.
enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl<'a> Value<'a> {
    fn bytes(&self) -> std::result::Result<&'a [u8], String> {
        match self {
            Value::Bytes(b) => Ok(b),
            _ => Err("a length-delimited field holds a number".into()),
        }
    }

    fn string(&self) -> std::result::Result<String, String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| "a name is not UTF-8".into())
    }

    fn varint(&self) -> std::result::Result<u64, String> {
        match self {
            Value::Varint(v) => Ok(*v),
            _ => Err("a number field holds bytes".into()),
        }
    }

    /// A repeated integer field: one value, or a packed run of varints.
    fn varints(&self) -> std::result::Result<Vec<u64>, String> {
        match self {
            Value::Varint(v) => Ok(vec![*v]),
            Value::Fixed64(v) => Ok(vec![*v]),
            Value::Fixed32(v) => Ok(vec![u64::from(*v)]),
            Value::Bytes(b) => {
                let mut b: &[u8] = b;
                let mut out = Vec::new();
                while !b.is_empty() {
                    out.push(read_varint(&mut b)?);
                }
                Ok(out)
            }
        }
    }

    /// A repeated float field: one value, or a packed run of 4-byte floats.
    fn floats(&self) -> std::result::Result<Vec<f32>, String> {
        match self {
            Value::Fixed32(v) => Ok(vec![f32::from_bits(*v)]),
            Value::Bytes(b) if b.len() % 4 == 0 => Ok(b
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()),
            _ => Err("a float field of the wrong width".into()),
        }
    }
}

fn read_varint(b: &mut &[u8]) -> std::result::Result<u64, String> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = b.split_first().ok_or("a number runs past the end")?;
        *b = rest;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a number longer than 10 bytes".into())
}

/// The fields of one message, in order: `(field number, value)`.
struct Fields<'a> {
    rest: &'a [u8],
    failed: bool,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Fields<'a> {
        Fields {
            rest: bytes,
            failed: false,
        }
    }

    fn next_field(&mut self) -> std::result::Result<(u64, Value<'a>), String> {
        let key = read_varint(&mut self.rest)?;
        let number = key >> 3;
        let take = |rest: &mut &'a [u8], n: usize| -> std::result::Result<&'a [u8], String> {
            if rest.len() < n {
                return Err(format!("field {number} runs past the end"));
            }
            let (v, r) = rest.split_at(n);
            *rest = r;
            Ok(v)
        };
        let value = match key & 7 {
            0 => Value::Varint(read_varint(&mut self.rest)?),
            1 => {
                let b = take(&mut self.rest, 8)?;
                Value::Fixed64(u64::from_le_bytes(b.try_into().map_err(|_| "fixed64")?))
            }
            2 => {
                let n = read_varint(&mut self.rest)?;
                let n = usize::try_from(n).map_err(|_| format!("field {number}: length {n}"))?;
                Value::Bytes(take(&mut self.rest, n)?)
            }
            5 => {
                let b = take(&mut self.rest, 4)?;
                Value::Fixed32(u32::from_le_bytes(b.try_into().map_err(|_| "fixed32")?))
            }
            t => return Err(format!("field {number}: wire type {t}")),
        };
        Ok((number, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = std::result::Result<(u64, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        let r = self.next_field();
        self.failed = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Protobuf encoding for tests: the writer's side of the reader above.
    pub(crate) fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    pub(crate) fn field_bytes(number: u64, bytes: &[u8], out: &mut Vec<u8>) {
        varint(number << 3 | 2, out);
        varint(bytes.len() as u64, out);
        out.extend_from_slice(bytes);
    }

    pub(crate) fn field_varint(number: u64, v: u64, out: &mut Vec<u8>) {
        varint(number << 3, out);
        varint(v, out);
    }

    /// A `TensorProto`: dims packed, data raw or, for zero points and
    /// scales, in `int32_data` / `float_data` as exporters write them.
    pub(crate) fn tensor(name: &str, dims: &[usize], data_type: i32, raw: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        let mut packed = Vec::new();
        for &d in dims {
            varint(d as u64, &mut packed);
        }
        field_bytes(1, &packed, &mut t);
        field_varint(2, data_type as u64, &mut t);
        field_bytes(8, name.as_bytes(), &mut t);
        field_bytes(9, raw, &mut t);
        t
    }

    pub(crate) fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> Vec<u8> {
        let mut n = Vec::new();
        for i in inputs {
            field_bytes(1, i.as_bytes(), &mut n);
        }
        for o in outputs {
            field_bytes(2, o.as_bytes(), &mut n);
        }
        field_bytes(4, op.as_bytes(), &mut n);
        n
    }

    pub(crate) fn model(nodes: &[Vec<u8>], tensors: &[Vec<u8>]) -> Vec<u8> {
        let mut g = Vec::new();
        for n in nodes {
            field_bytes(1, n, &mut g);
        }
        for t in tensors {
            field_bytes(5, t, &mut g);
        }
        let mut m = Vec::new();
        field_varint(1, 7, &mut m); // ir_version, skipped by the reader
        field_bytes(7, &g, &mut m);
        m
    }

    #[test]
    fn reads_initializers_in_every_storage_and_nodes() {
        let w: Vec<u8> = [1i8, -2, 3, -4, 5, -6].iter().map(|&v| v as u8).collect();
        // A zero point the way exporters write it: int32_data, unpacked.
        let mut zero = Vec::new();
        field_bytes(8, b"w_zero_point", &mut zero);
        field_varint(2, dtype::INT8 as u64, &mut zero);
        field_varint(5, (-3i64) as u64, &mut zero);
        let mut scale = Vec::new();
        field_bytes(1, &[2], &mut scale);
        field_varint(2, dtype::FLOAT as u64, &mut scale);
        field_bytes(
            4,
            &[0.5f32.to_le_bytes(), 0.25f32.to_le_bytes()].concat(),
            &mut scale,
        );
        field_bytes(8, b"w_scale", &mut scale);
        let bytes = model(
            &[node("MatMulInteger", &["x", "w"], &["y"])],
            &[tensor("w", &[2, 3], dtype::INT8, &w), zero, scale],
        );
        let g = Graph::parse(&bytes).unwrap();
        assert_eq!(
            g.initializers["w"].values().unwrap(),
            vec![1.0, -2.0, 3.0, -4.0, 5.0, -6.0]
        );
        // -3 as protobuf writes a negative int32: ten bytes, sign-extended.
        assert_eq!(g.initializers["w_zero_point"].values().unwrap(), vec![-3.0]);
        assert_eq!(g.initializers["w_scale"].values().unwrap(), vec![0.5, 0.25]);
        assert_eq!(g.nodes[0].op_type, "MatMulInteger");
        assert_eq!(g.consumers("w").count(), 1);
        assert_eq!(g.consumers("y").count(), 0);
    }

    #[test]
    fn a_damaged_file_is_an_error_never_a_panic() {
        let good = model(
            &[node("Add", &["a", "b"], &["c"])],
            &[tensor("b", &[4], dtype::FLOAT, &[0u8; 16])],
        );
        for cut in 0..good.len() {
            let _ = Graph::parse(&good[..cut]);
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0xff;
            let _ = Graph::parse(&bad);
        }
        // A tensor whose raw bytes disagree with its dims.
        let short = model(&[], &[tensor("b", &[5], dtype::FLOAT, &[0u8; 16])]);
        assert!(Graph::parse(&short).unwrap_err().contains("16 raw bytes"));
        // A length far beyond the buffer.
        let mut huge = Vec::new();
        varint(7 << 3 | 2, &mut huge);
        varint(u64::MAX >> 1, &mut huge);
        assert!(Graph::parse(&huge).is_err());
        assert!(Graph::parse(&[]).unwrap_err().contains("no graph"));
    }
}
