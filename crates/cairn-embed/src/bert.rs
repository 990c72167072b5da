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

use crate::error::{Error, Result};
use crate::kernels::{Elementwise, KernelPath, PackedLinear};
use crate::weights::Weights;

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

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    /// Query, key and value projections fused into one `3h × h` layer.
    qkv: PackedLinear,
    attn_out: PackedLinear,
    ln_attn: LayerNorm,
    inter: PackedLinear,
    out: PackedLinear,
    ln_out: LayerNorm,
}

/// The loaded encoder.
pub(crate) struct Bert {
    cfg: BertConfig,
    path: KernelPath,
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
    qkv: Vec<f32>,
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
    pub(crate) fn load(weights: &Path, cfg: BertConfig, path: KernelPath) -> Result<Bert> {
        let st = Weights::open(weights)?;
        // Some exports prefix every name with `bert.`; accept both.
        let prefix = if st.any_starts_with("bert.") {
            "bert."
        } else {
            ""
        };
        let tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>> {
            st.f32(&format!("{prefix}{name}"), shape)
        };
        let h = cfg.hidden;
        let i = cfg.intermediate;
        let linear = |name: &str, out: usize, inp: usize| -> Result<PackedLinear> {
            let w = tensor(&format!("{name}.weight"), &[out, inp])?;
            let b = tensor(&format!("{name}.bias"), &[out])?;
            Ok(PackedLinear::new(path, &w, b, out, inp))
        };
        // Q, K and V read the same input: stack them into one 3h × h layer.
        let qkv = |p: &str| -> Result<PackedLinear> {
            let mut w = Vec::with_capacity(3 * h * h);
            let mut b = Vec::with_capacity(3 * h);
            for part in ["query", "key", "value"] {
                w.extend(tensor(
                    &format!("{p}.attention.self.{part}.weight"),
                    &[h, h],
                )?);
                b.extend(tensor(&format!("{p}.attention.self.{part}.bias"), &[h])?);
            }
            Ok(PackedLinear::new(path, &w, b, 3 * h, h))
        };
        let norm = |name: &str| -> Result<LayerNorm> {
            Ok(LayerNorm {
                gamma: tensor(&format!("{name}.weight"), &[h])?,
                beta: tensor(&format!("{name}.bias"), &[h])?,
            })
        };
        let word_name = format!("{prefix}embeddings.word_embeddings.weight");
        let word_shape = st
            .shape(&word_name)
            .ok_or_else(|| Error::Model {
                path: weights.to_path_buf(),
                message: format!("{word_name}: no such tensor"),
            })?
            .to_vec();
        let vocab = word_shape.first().copied().unwrap_or(0);
        let mut layers = Vec::with_capacity(cfg.layers);
        for l in 0..cfg.layers {
            let p = format!("encoder.layer.{l}");
            layers.push(Layer {
                qkv: qkv(&p)?,
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
            path,
        })
    }

    pub(crate) fn max_positions(&self) -> usize {
        self.cfg.max_positions
    }

    pub(crate) fn hidden(&self) -> usize {
        self.cfg.hidden
    }

    /// The kernel path in use.
    pub(crate) fn path(&self) -> KernelPath {
        self.path
    }

    /// Runs the encoder over a packed batch of token-id sequences and writes one
    /// mean-pooled, L2-normalised vector per sequence into `out` (`seqs.len() × hidden`).
    pub(crate) fn embed_packed(&self, seqs: &[&[u32]], ws: &mut Workspace, out: &mut [f32]) {
        let h = self.cfg.hidden;
        let nh = self.cfg.heads;
        let dh = h / nh;
        let ew = Elementwise(self.path);
        let rows: usize = seqs.iter().map(|s| s.len()).sum();
        let max_t = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        grow(&mut ws.h, rows * h);
        grow(&mut ws.qkv, rows * 3 * h);
        grow(&mut ws.ctx, rows * h);
        grow(&mut ws.tmp, rows * h);
        grow(&mut ws.inter, rows * self.cfg.intermediate);
        grow(&mut ws.scores, max_t * max_t);

        // Embeddings: LayerNorm(word + token type 0 + position).
        let mut r = 0;
        for seq in seqs {
            let first = r;
            for &id in seq.iter() {
                let id = (id as usize).min(self.vocab.saturating_sub(1));
                let row = &mut ws.h[r * h..(r + 1) * h];
                let w = &self.word[id * h..(id + 1) * h];
                let t = &self.token_type[..h];
                for j in 0..h {
                    row[j] = w[j] + t[j];
                }
                r += 1;
            }
            let t = seq.len();
            ew.add_norm(
                &mut ws.h[first * h..r * h],
                &self.position[..t * h],
                &self.ln_emb.gamma,
                &self.ln_emb.beta,
                self.cfg.eps,
            );
        }

        let scale = 1.0 / (dh as f32).sqrt();
        let ld = 3 * h;
        for layer in &self.layers {
            layer.qkv.forward(&ws.h, rows, &mut ws.qkv);

            let mut offset = 0;
            for seq in seqs {
                let t = seq.len();
                let scores = &mut ws.scores[..t * t];
                for head in 0..nh {
                    let q = offset * ld + head * dh;
                    let (k, v) = (q + h, q + 2 * h);
                    let c = offset * h + head * dh;
                    if t <= SMALL_ATTENTION {
                        small_attention(
                            &ws.qkv,
                            ld,
                            q,
                            k,
                            v,
                            t,
                            dh,
                            scale,
                            scores,
                            &mut ws.ctx,
                            h,
                            c,
                            ew,
                        );
                        continue;
                    }
                    // SAFETY: qkv holds rows × 3h floats; this sequence's rows are
                    // offset..offset+t and this head's columns are in bounds with
                    // row stride 3h; ctx holds rows × h; scores t × t.
                    unsafe {
                        matrixmultiply::sgemm(
                            t,
                            dh,
                            t,
                            scale,
                            ws.qkv.as_ptr().add(q),
                            ld as isize,
                            1,
                            ws.qkv.as_ptr().add(k),
                            1,
                            ld as isize,
                            0.0,
                            scores.as_mut_ptr(),
                            t as isize,
                            1,
                        );
                    }
                    ew.softmax(scores, t);
                    // SAFETY: as above.
                    unsafe {
                        matrixmultiply::sgemm(
                            t,
                            t,
                            dh,
                            1.0,
                            scores.as_ptr(),
                            t as isize,
                            1,
                            ws.qkv.as_ptr().add(v),
                            ld as isize,
                            1,
                            0.0,
                            ws.ctx.as_mut_ptr().add(c),
                            h as isize,
                            1,
                        );
                    }
                }
                offset += t;
            }

            layer.attn_out.forward(&ws.ctx, rows, &mut ws.tmp);
            ew.add_norm(
                &mut ws.h[..rows * h],
                &ws.tmp[..rows * h],
                &layer.ln_attn.gamma,
                &layer.ln_attn.beta,
                self.cfg.eps,
            );

            layer.inter.forward(&ws.h, rows, &mut ws.inter);
            ew.gelu(&mut ws.inter[..rows * layer.inter.out()]);
            layer.out.forward(&ws.inter, rows, &mut ws.tmp);
            ew.add_norm(
                &mut ws.h[..rows * h],
                &ws.tmp[..rows * h],
                &layer.ln_out.gamma,
                &layer.ln_out.beta,
                self.cfg.eps,
            );
        }

        // Mean pooling over each sequence's tokens, then L2 normalisation.
        let mut r = 0;
        for (s, seq) in seqs.iter().enumerate() {
            let o = &mut out[s * h..(s + 1) * h];
            o.fill(0.0);
            for _ in 0..seq.len() {
                for (a, b) in o.iter_mut().zip(&ws.h[r * h..(r + 1) * h]) {
                    *a += b;
                }
                r += 1;
            }
            let n = seq.len().max(1) as f32;
            o.iter_mut().for_each(|v| *v /= n);
            normalize(o);
        }
    }
}

/// Sequences up to this length compute attention with direct loops: for a
/// short query the GEMM library's per-call packing costs more than the math.
const SMALL_ATTENTION: usize = 32;

/// One head's attention for a short sequence: `ctx = softmax(scale·QKᵀ)·V`,
/// reading Q, K, V at column offsets `q`, `k`, `v` of `qkv` (row stride `ld`)
/// and writing `ctx` at offset `c` (row stride `ldc`).
#[allow(clippy::too_many_arguments)]
fn small_attention(
    qkv: &[f32],
    ld: usize,
    q: usize,
    k: usize,
    v: usize,
    t: usize,
    dh: usize,
    scale: f32,
    scores: &mut [f32],
    ctx: &mut [f32],
    ldc: usize,
    c: usize,
    ew: Elementwise,
) {
    for i in 0..t {
        let qi = &qkv[q + i * ld..][..dh];
        for j in 0..t {
            let kj = &qkv[k + j * ld..][..dh];
            scores[i * t + j] = scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>();
        }
    }
    ew.softmax(&mut scores[..t * t], t);
    for i in 0..t {
        let out = &mut ctx[c + i * ldc..][..dh];
        out.fill(0.0);
        for j in 0..t {
            let p = scores[i * t + j];
            for (o, x) in out.iter_mut().zip(&qkv[v + j * ld..][..dh]) {
                *o += p * x;
            }
        }
    }
}

fn word_shape_tt(st: &Weights, prefix: &str, h: usize) -> Vec<usize> {
    st.shape(&format!("{prefix}embeddings.token_type_embeddings.weight"))
        .map(<[usize]>::to_vec)
        .unwrap_or_else(|| vec![2, h])
}

/// Scales `v` to unit length (left as is when it is all zeros).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
