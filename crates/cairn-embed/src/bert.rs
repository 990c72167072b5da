//! A BERT encoder forward pass (the architecture of all-MiniLM-L6-v2), written
//! out by hand on `matrixmultiply`'s SGEMM.
//!
//! Why our own instead of a framework: the model is six small layers, and a
//! framework pays per-op allocation, thread barriers and padding on every call.
//! Here a batch of sequences is *packed*: the rows of all its sequences are
//! concatenated, so the linear layers run as one large GEMM with no padding at
//! all, and only attention is done sequence by sequence. Buffers live in a
//! [`Workspace`] that is reused across calls.

use std::path::Path;

use safetensors::SafeTensors;

use crate::error::{Error, Result};

/// Hyper-parameters read from the model's `config.json`.
#[derive(Clone, Debug)]
pub(crate) struct BertConfig {
    pub hidden: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub layers: usize,
    pub max_positions: usize,
    pub eps: f32,
}

impl BertConfig {
    pub(crate) fn from_file(path: &Path) -> Result<BertConfig> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Model {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let get = |key: &str| -> Result<usize> {
            v.get(key)
                .and_then(|x| x.as_u64())
                .map(|x| x as usize)
                .ok_or_else(|| Error::Model {
                    path: path.to_path_buf(),
                    message: format!("missing integer `{key}`"),
                })
        };
        let act = v
            .get("hidden_act")
            .and_then(|x| x.as_str())
            .unwrap_or("gelu");
        if act != "gelu" {
            return Err(Error::Model {
                path: path.to_path_buf(),
                message: format!("unsupported hidden_act `{act}` (only exact gelu)"),
            });
        }
        let cfg = BertConfig {
            hidden: get("hidden_size")?,
            heads: get("num_attention_heads")?,
            intermediate: get("intermediate_size")?,
            layers: get("num_hidden_layers")?,
            max_positions: get("max_position_embeddings")?,
            eps: v
                .get("layer_norm_eps")
                .and_then(|x| x.as_f64())
                .unwrap_or(1e-12) as f32,
        };
        if cfg.heads == 0 || !cfg.hidden.is_multiple_of(cfg.heads) {
            return Err(Error::Model {
                path: path.to_path_buf(),
                message: "hidden_size is not a multiple of num_attention_heads".into(),
            });
        }
        Ok(cfg)
    }
}

/// `y = x Wᵀ + b` with `W` stored `[out][in]` as PyTorch saves it.
struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

impl Linear {
    /// `x` is `rows × inp`, `y` is `rows × out`.
    fn forward(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        debug_assert!(x.len() >= rows * self.inp && y.len() >= rows * self.out);
        for row in y[..rows * self.out].chunks_exact_mut(self.out) {
            row.copy_from_slice(&self.b);
        }
        // SAFETY: the slices hold at least rows×inp, out×inp and rows×out
        // elements (checked above and at load), and the strides describe them.
        unsafe {
            matrixmultiply::sgemm(
                rows,
                self.inp,
                self.out,
                1.0,
                x.as_ptr(),
                self.inp as isize,
                1,
                self.w.as_ptr(),
                1,
                self.inp as isize,
                1.0,
                y.as_mut_ptr(),
                self.out as isize,
                1,
            );
        }
    }
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

impl LayerNorm {
    /// Normalises each row of `x` (width = gamma.len()) in place.
    fn forward(&self, x: &mut [f32], eps: f32) {
        let n = self.gamma.len();
        for row in x.chunks_exact_mut(n) {
            let mean = row.iter().sum::<f32>() / n as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    ln_attn: LayerNorm,
    inter: Linear,
    out: Linear,
    ln_out: LayerNorm,
}

/// The loaded encoder.
pub(crate) struct Bert {
    cfg: BertConfig,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    ln_emb: LayerNorm,
    layers: Vec<Layer>,
    vocab: usize,
}

/// Scratch buffers for one forward pass; grown on demand, reused across calls.
#[derive(Default)]
pub(crate) struct Workspace {
    h: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    ctx: Vec<f32>,
    tmp: Vec<f32>,
    inter: Vec<f32>,
    scores: Vec<f32>,
}

fn grow(buf: &mut Vec<f32>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
}

impl Bert {
    pub(crate) fn load(weights: &Path, cfg: BertConfig) -> Result<Bert> {
        let bytes = std::fs::read(weights).map_err(|source| Error::Io {
            path: weights.to_path_buf(),
            source,
        })?;
        let st = SafeTensors::deserialize(&bytes).map_err(|e| Error::Model {
            path: weights.to_path_buf(),
            message: e.to_string(),
        })?;
        // Some exports prefix every name with `bert.`; accept both.
        let prefix = if st.names().iter().any(|n| n.starts_with("bert.")) {
            "bert."
        } else {
            ""
        };
        let tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>> {
            let full = format!("{prefix}{name}");
            let t = st.tensor(&full).map_err(|e| Error::Model {
                path: weights.to_path_buf(),
                message: format!("{full}: {e}"),
            })?;
            if t.dtype() != safetensors::Dtype::F32 || t.shape() != shape {
                return Err(Error::Model {
                    path: weights.to_path_buf(),
                    message: format!(
                        "{full}: expected f32 {shape:?}, found {:?} {:?}",
                        t.dtype(),
                        t.shape()
                    ),
                });
            }
            Ok(t.data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect())
        };
        let h = cfg.hidden;
        let i = cfg.intermediate;
        let linear = |name: &str, out: usize, inp: usize| -> Result<Linear> {
            Ok(Linear {
                w: tensor(&format!("{name}.weight"), &[out, inp])?,
                b: tensor(&format!("{name}.bias"), &[out])?,
                inp,
                out,
            })
        };
        let norm = |name: &str| -> Result<LayerNorm> {
            Ok(LayerNorm {
                gamma: tensor(&format!("{name}.weight"), &[h])?,
                beta: tensor(&format!("{name}.bias"), &[h])?,
            })
        };
        let word_shape = st
            .tensor(&format!("{prefix}embeddings.word_embeddings.weight"))
            .map_err(|e| Error::Model {
                path: weights.to_path_buf(),
                message: e.to_string(),
            })?
            .shape()
            .to_vec();
        let vocab = word_shape.first().copied().unwrap_or(0);
        let mut layers = Vec::with_capacity(cfg.layers);
        for l in 0..cfg.layers {
            let p = format!("encoder.layer.{l}");
            layers.push(Layer {
                query: linear(&format!("{p}.attention.self.query"), h, h)?,
                key: linear(&format!("{p}.attention.self.key"), h, h)?,
                value: linear(&format!("{p}.attention.self.value"), h, h)?,
                attn_out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                ln_attn: norm(&format!("{p}.attention.output.LayerNorm"))?,
                inter: linear(&format!("{p}.intermediate.dense"), i, h)?,
                out: linear(&format!("{p}.output.dense"), h, i)?,
                ln_out: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            word: tensor("embeddings.word_embeddings.weight", &[vocab, h])?,
            position: tensor(
                "embeddings.position_embeddings.weight",
                &[cfg.max_positions, h],
            )?,
            token_type: tensor(
                "embeddings.token_type_embeddings.weight",
                &word_shape_tt(&st, prefix, h),
            )?,
            ln_emb: norm("embeddings.LayerNorm")?,
            layers,
            vocab,
            cfg,
        })
    }

    pub(crate) fn max_positions(&self) -> usize {
        self.cfg.max_positions
    }

    pub(crate) fn hidden(&self) -> usize {
        self.cfg.hidden
    }

    /// Runs the encoder over a packed batch of token-id sequences and writes one
    /// mean-pooled, L2-normalised vector per sequence into `out` (`seqs.len() × hidden`).
    pub(crate) fn embed_packed(&self, seqs: &[&[u32]], ws: &mut Workspace, out: &mut [f32]) {
        let h = self.cfg.hidden;
        let nh = self.cfg.heads;
        let dh = h / nh;
        let rows: usize = seqs.iter().map(|s| s.len()).sum();
        let max_t = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        grow(&mut ws.h, rows * h);
        grow(&mut ws.q, rows * h);
        grow(&mut ws.k, rows * h);
        grow(&mut ws.v, rows * h);
        grow(&mut ws.ctx, rows * h);
        grow(&mut ws.tmp, rows * h);
        grow(&mut ws.inter, rows * self.cfg.intermediate);
        grow(&mut ws.scores, max_t * max_t);

        // Embeddings: word + position + token type 0, then LayerNorm.
        let mut r = 0;
        for seq in seqs {
            for (pos, &id) in seq.iter().enumerate() {
                let id = (id as usize).min(self.vocab.saturating_sub(1));
                let row = &mut ws.h[r * h..(r + 1) * h];
                let w = &self.word[id * h..(id + 1) * h];
                let p = &self.position[pos * h..(pos + 1) * h];
                let t = &self.token_type[..h];
                for j in 0..h {
                    row[j] = w[j] + p[j] + t[j];
                }
                r += 1;
            }
        }
        self.ln_emb.forward(&mut ws.h[..rows * h], self.cfg.eps);

        let scale = 1.0 / (dh as f32).sqrt();
        for layer in &self.layers {
            let x = &ws.h[..rows * h];
            layer.query.forward(x, rows, &mut ws.q);
            layer.key.forward(x, rows, &mut ws.k);
            layer.value.forward(x, rows, &mut ws.v);

            let mut offset = 0;
            for seq in seqs {
                let t = seq.len();
                let scores = &mut ws.scores[..t * t];
                for head in 0..nh {
                    let col = offset * h + head * dh;
                    // SAFETY: q/k/v/ctx hold rows×h elements; this sequence's
                    // rows are offset..offset+t and this head's columns are
                    // head*dh..(head+1)*dh, all in bounds with row stride h.
                    unsafe {
                        matrixmultiply::sgemm(
                            t,
                            dh,
                            t,
                            scale,
                            ws.q.as_ptr().add(col),
                            h as isize,
                            1,
                            ws.k.as_ptr().add(col),
                            1,
                            h as isize,
                            0.0,
                            scores.as_mut_ptr(),
                            t as isize,
                            1,
                        );
                    }
                    for row in scores.chunks_exact_mut(t) {
                        softmax(row);
                    }
                    // SAFETY: as above; scores is t×t.
                    unsafe {
                        matrixmultiply::sgemm(
                            t,
                            t,
                            dh,
                            1.0,
                            scores.as_ptr(),
                            t as isize,
                            1,
                            ws.v.as_ptr().add(col),
                            h as isize,
                            1,
                            0.0,
                            ws.ctx.as_mut_ptr().add(col),
                            h as isize,
                            1,
                        );
                    }
                }
                offset += t;
            }

            layer.attn_out.forward(&ws.ctx, rows, &mut ws.tmp);
            add_assign(&mut ws.h[..rows * h], &ws.tmp[..rows * h]);
            layer.ln_attn.forward(&mut ws.h[..rows * h], self.cfg.eps);

            layer.inter.forward(&ws.h, rows, &mut ws.inter);
            for v in &mut ws.inter[..rows * self.cfg.intermediate] {
                *v = gelu(*v);
            }
            layer.out.forward(&ws.inter, rows, &mut ws.tmp);
            add_assign(&mut ws.h[..rows * h], &ws.tmp[..rows * h]);
            layer.ln_out.forward(&mut ws.h[..rows * h], self.cfg.eps);
        }

        // Mean pooling over each sequence's tokens, then L2 normalisation.
        let mut r = 0;
        for (s, seq) in seqs.iter().enumerate() {
            let o = &mut out[s * h..(s + 1) * h];
            o.fill(0.0);
            for _ in 0..seq.len() {
                add_assign(o, &ws.h[r * h..(r + 1) * h]);
                r += 1;
            }
            let n = seq.len().max(1) as f32;
            o.iter_mut().for_each(|v| *v /= n);
            normalize(o);
        }
    }
}

fn word_shape_tt(st: &SafeTensors<'_>, prefix: &str, h: usize) -> Vec<usize> {
    st.tensor(&format!("{prefix}embeddings.token_type_embeddings.weight"))
        .map(|t| t.shape().to_vec())
        .unwrap_or_else(|_| vec![2, h])
}

fn add_assign(a: &mut [f32], b: &[f32]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Scales `v` to unit length (left as is when it is all zeros).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= inv);
}

/// Exact (erf) GELU, as BERT's `gelu` activation.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf by Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5e-7, below f32 noise
/// for this use); std has no erf.
fn erf(x: f32) -> f32 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let y = 1.0
        - (((((1.061_405_4 * t - 1.453_152_1) * t) + 1.421_413_8) * t - 0.284_496_74) * t
            + 0.254_829_6)
            * t
            * (-x * x).exp();
    sign * y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
        ] {
            assert!((erf(x) - want).abs() < 1e-6, "erf({x})");
        }
    }

    #[test]
    fn softmax_sums_to_one() {
        let mut v = vec![1.0, 2.0, 3.0, -100.0];
        softmax(&mut v);
        assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(v[2] > v[1] && v[1] > v[0]);
    }

    #[test]
    fn linear_matches_naive() {
        let (inp, out, rows) = (5, 3, 4);
        let w: Vec<f32> = (0..out * inp).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..out).map(|i| i as f32).collect();
        let x: Vec<f32> = (0..rows * inp).map(|i| (i as f32 * 0.11).cos()).collect();
        let lin = Linear {
            w: w.clone(),
            b: b.clone(),
            inp,
            out,
        };
        let mut y = vec![0.0; rows * out];
        lin.forward(&x, rows, &mut y);
        for r in 0..rows {
            for o in 0..out {
                let want: f32 = b[o]
                    + (0..inp)
                        .map(|k| x[r * inp + k] * w[o * inp + k])
                        .sum::<f32>();
                assert!((y[r * out + o] - want).abs() < 1e-5);
            }
        }
    }
}
