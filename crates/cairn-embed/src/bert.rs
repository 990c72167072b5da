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

use crate::aligned::Aligned;
use crate::calibration_cache::{StatsKey, stats_hash};
use crate::error::{Error, Result};
use crate::fetch::Pooling;
use crate::int8::{Int8Path, Int8Scratch, Precision, QLinear, outlier_channels, smoothing};
use crate::kernels::{Elementwise, KernelPath, PackedLinear, gemm_packed, pack_panels};
use crate::prepared;
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
    /// How token vectors become the sequence's vector (the model's, not
    /// config.json's: set by [`crate::ModelSpec::pooling`]).
    pub pooling: Pooling,
}

impl BertConfig {
    /// The dimensions a prepared model must have ([`crate::prepared`]).
    pub(crate) fn shape(&self) -> String {
        format!(
            "layers {} hidden {} heads {} intermediate {} positions {} eps {:08x}",
            self.layers,
            self.hidden,
            self.heads,
            self.intermediate,
            self.max_positions,
            self.eps.to_bits()
        )
    }

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
            pooling: Pooling::Mean,
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

/// A linear layer in f32 or int8 ([`Precision`]).
enum Linear {
    F32(PackedLinear),
    I8(QLinear),
}

impl Linear {
    /// `y[..m × n] = x[..m × k] · Wᵀ + b`; `scratch` holds the quantized
    /// activations of an int8 layer.
    fn forward(&self, x: &[f32], m: usize, y: &mut [f32], scratch: &mut Int8Scratch) {
        match self {
            Linear::F32(l) => l.forward(x, m, y),
            Linear::I8(l) => l.forward(x, m, y, scratch),
        }
    }

    /// [`Linear::forward`] for an input nobody reads after, which an int8
    /// layer transforms in place ([`QLinear::forward_spent`]).
    fn forward_spent(&self, x: &mut [f32], m: usize, y: &mut [f32], scratch: &mut Int8Scratch) {
        match self {
            Linear::F32(l) => l.forward(x, m, y),
            Linear::I8(l) => l.forward_spent(x, m, y, scratch),
        }
    }

    fn out(&self) -> usize {
        match self {
            Linear::F32(l) => l.out(),
            Linear::I8(l) => l.out(),
        }
    }
}

struct Layer {
    /// Query, key and value projections fused into one `3h × h` layer.
    qkv: Linear,
    attn_out: Linear,
    ln_attn: LayerNorm,
    inter: Linear,
    out: Linear,
    ln_out: LayerNorm,
}

/// The loaded encoder.
pub(crate) struct Bert {
    cfg: BertConfig,
    path: KernelPath,
    /// The int8 path of the linear layers; `None` in f32.
    int8: Option<Int8Path>,
    /// `vocab × hidden`; mapped from a prepared model ([`crate::prepared`]).
    word: Aligned<f32>,
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
    /// One head's Q, K, V and probabilities in bfloat16 for
    /// [`tiled_attention`].
    bf16: Vec<u16>,
    /// One head's `Kᵀ` or `V` packed for [`gemm_packed`].
    panel: Aligned<f32>,
    quant: Int8Scratch,
    /// While calibrating: per layer, the largest |activation| of each
    /// input channel of its linear layers.
    calib: Option<Vec<InputMax>>,
}

/// The largest |activation| per input channel of one encoder layer's
/// linear layers, over the calibration texts.
#[derive(Clone, Debug, Default)]
pub(crate) struct InputMax {
    qkv: Vec<f32>,
    attn_out: Vec<f32>,
    inter: Vec<f32>,
    /// The feed-forward output's inputs (GELU's outputs).
    out: Vec<f32>,
}

impl InputMax {
    /// The inputs' maxima of the QKV, attention-output, FFN-up and
    /// FFN-down layers, in the order [`InputMax::parts`] gives them.
    pub(crate) fn from_parts([qkv, attn_out, inter, out]: [Vec<f32>; 4]) -> InputMax {
        InputMax {
            qkv,
            attn_out,
            inter,
            out,
        }
    }

    /// [`InputMax::from_parts`]'s four, in that order.
    pub(crate) fn parts(&self) -> [&[f32]; 4] {
        [&self.qkv, &self.attn_out, &self.inter, &self.out]
    }
}

/// Which of a layer's inputs [`record`] notes.
#[derive(Clone, Copy)]
enum Input {
    Qkv,
    AttnOut,
    Inter,
    Out,
}

/// Notes the largest |value| of each column of `x` (`rows × k`) in the
/// calibration statistics of layer `l`, when calibrating.
fn record(
    calib: &mut Option<Vec<InputMax>>,
    l: usize,
    which: Input,
    x: &[f32],
    rows: usize,
    k: usize,
) {
    let Some(stats) = calib.as_mut() else {
        return;
    };
    if stats.len() <= l {
        stats.resize(l + 1, InputMax::default());
    }
    let m = match which {
        Input::Qkv => &mut stats[l].qkv,
        Input::AttnOut => &mut stats[l].attn_out,
        Input::Inter => &mut stats[l].inter,
        Input::Out => &mut stats[l].out,
    };
    if m.len() < k {
        m.resize(k, 0.0);
    }
    for row in x[..rows * k].chunks_exact(k) {
        for (a, v) in m.iter_mut().zip(row) {
            *a = a.max(v.abs());
        }
    }
}

/// The SmoothQuant migration strength α of [`smoothing`]: how much of an
/// activation channel's range moves into the weights.
const SMOOTH_ALPHA: f32 = 0.5;

/// What an int8 model is calibrated on: token ids (and types) of a few
/// texts of the kinds it reads, run once through the plain int8 layers at
/// load.
#[derive(Clone, Debug, Default)]
pub(crate) struct Calibration {
    pub ids: Vec<Vec<u32>>,
    pub types: Option<Vec<Vec<u32>>>,
    /// Where what it measured is kept for the next load (the user cache;
    /// `None`: measured on every load). See [`StatsKey`].
    pub cache: Option<std::path::PathBuf>,
}

impl Workspace {
    /// Row `r` (of width `h`) of the last [`Bert::encode`]'s output.
    pub(crate) fn row(&self, r: usize, h: usize) -> &[f32] {
        &self.h[r * h..(r + 1) * h]
    }
}

fn grow<T: Clone + Default>(buf: &mut Vec<T>, len: usize) {
    if buf.len() < len {
        buf.resize(len, T::default());
    }
}

/// What the calibration measured of one linear layer's inputs, and
/// whether the layer is smoothed by it.
#[derive(Clone, Copy)]
struct Inputs<'a> {
    max: Option<&'a [f32]>,
    smooth: bool,
}

/// Reads the tensors of one model file (names under `prefix`), packing
/// the linear layers for one kernel path; `h` is the hidden size.
struct Loader<'a> {
    st: &'a Weights,
    prefix: &'a str,
    path: KernelPath,
    int8: Option<Int8Path>,
    h: usize,
    /// In int8, the calibration statistics that smooth the layers.
    x_max: Option<&'a [InputMax]>,
}

impl<'a> Loader<'a> {
    fn new(
        st: &'a Weights,
        path: KernelPath,
        int8: Option<Int8Path>,
        h: usize,
        x_max: Option<&'a [InputMax]>,
    ) -> Loader<'a> {
        // Some exports prefix every name with `bert.`; accept both.
        let prefix = if st.any_starts_with("bert.") {
            "bert."
        } else {
            ""
        };
        Loader {
            st,
            prefix,
            path,
            int8,
            h,
            x_max,
        }
    }

    /// Every encoder layer.
    fn layers(&self, cfg: &BertConfig) -> Result<Vec<Layer>> {
        (0..cfg.layers)
            .map(|l| self.layer(l, cfg.intermediate))
            .collect()
    }

    fn tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        self.st.f32(&format!("{}{name}", self.prefix), shape)
    }

    /// Packs `w` (`out × inp`) for the kernel path, quantized when int8.
    /// With `inputs`, the calibration's largest input activations, the
    /// int8 layer keeps its outlier channels in f32 ([`outlier_channels`])
    /// and, when `inputs.smooth`, smooths the rest.
    fn pack(&self, w: &[f32], b: Vec<f32>, out: usize, inp: usize, inputs: Inputs<'_>) -> Linear {
        match self.int8 {
            Some(p) => {
                let x_max = inputs.max.filter(|m| m.len() == inp);
                let smooth = x_max
                    .filter(|_| inputs.smooth)
                    .map(|m| smoothing(m, w, out, inp, SMOOTH_ALPHA));
                let outliers = x_max.map(outlier_channels).unwrap_or_default();
                Linear::I8(QLinear::quantized(
                    p,
                    w,
                    b,
                    out,
                    inp,
                    smooth.as_deref(),
                    &outliers,
                ))
            }
            None => Linear::F32(PackedLinear::new(self.path, w, b, out, inp)),
        }
    }

    fn linear(&self, name: &str, out: usize, inp: usize, inputs: Inputs<'_>) -> Result<Linear> {
        let w = self.tensor(&format!("{name}.weight"), &[out, inp])?;
        let b = self.tensor(&format!("{name}.bias"), &[out])?;
        Ok(self.pack(&w, b, out, inp, inputs))
    }

    /// Q, K and V read the same input: stacked into one 3h × h layer.
    fn qkv(&self, p: &str, inputs: Inputs<'_>) -> Result<Linear> {
        let h = self.h;
        let mut w = Vec::with_capacity(3 * h * h);
        let mut b = Vec::with_capacity(3 * h);
        for part in ["query", "key", "value"] {
            w.extend(self.tensor(&format!("{p}.attention.self.{part}.weight"), &[h, h])?);
            b.extend(self.tensor(&format!("{p}.attention.self.{part}.bias"), &[h])?);
        }
        Ok(self.pack(&w, b, 3 * h, h, inputs))
    }

    fn norm(&self, name: &str) -> Result<LayerNorm> {
        Ok(LayerNorm {
            gamma: self.tensor(&format!("{name}.weight"), &[self.h])?,
            beta: self.tensor(&format!("{name}.bias"), &[self.h])?,
        })
    }

    /// Encoder layer `l` (feed-forward width `i`).
    fn layer(&self, l: usize, i: usize) -> Result<Layer> {
        let (p, h) = (format!("encoder.layer.{l}"), self.h);
        let stats = self.x_max.and_then(|s| s.get(l));
        let smoothed = |max: Option<&'a [f32]>| Inputs { max, smooth: true };
        Ok(Layer {
            qkv: self.qkv(&p, smoothed(stats.map(|s| s.qkv.as_slice())))?,
            attn_out: self.linear(
                &format!("{p}.attention.output.dense"),
                h,
                h,
                smoothed(stats.map(|s| s.attn_out.as_slice())),
            )?,
            ln_attn: self.norm(&format!("{p}.attention.output.LayerNorm"))?,
            inter: self.linear(
                &format!("{p}.intermediate.dense"),
                i,
                h,
                smoothed(stats.map(|s| s.inter.as_slice())),
            )?,
            // The feed-forward output is not smoothed: its GELU inputs'
            // largest channels moved into the weights lost more than they
            // saved (a numpy simulation over SciFact texts; on the texts of
            // `outlier_channels`' measure, α 0.5 took 1 − cosine only from
            // 8.09e-4 to 7.88e-4, and 0.3 or 0.6 raised it). Its outlier
            // channels are kept in f32 like every layer's.
            out: self.linear(
                &format!("{p}.output.dense"),
                h,
                i,
                Inputs {
                    max: stats.map(|s| s.out.as_slice()),
                    smooth: false,
                },
            )?,
            ln_out: self.norm(&format!("{p}.output.LayerNorm"))?,
        })
    }
}

impl Bert {
    /// Loads the weights, packed for `path`; in int8 the linear layers
    /// are quantized for `int8` (default: [`Int8Path::for_kernel`]).
    pub(crate) fn load(
        weights: &Path,
        cfg: BertConfig,
        path: KernelPath,
        precision: Precision,
        int8: Option<Int8Path>,
        calibration: &Calibration,
    ) -> Result<Bert> {
        let int8 = match precision {
            Precision::Fp32 => None,
            Precision::Int8 => Some(int8.unwrap_or_else(|| Int8Path::for_kernel(path))),
        };
        let Some(p8) = int8.filter(|_| !calibration.ids.is_empty()) else {
            let st = Weights::open(weights)?;
            return Self::build(weights, &st, cfg, path, int8, None);
        };
        // int8: the plain int8 layers read the calibration texts, and their
        // largest activations smooth the encoder layers, quantized again
        // (the embeddings are kept). The f32 layers' activations differ
        // from these by a few parts in a thousand; packing them too doubled
        // the time to load. What a calibration measured is kept in the user
        // cache: the next load on the same paths quantizes once.
        let cache = calibration.cache.as_deref();
        let key = StatsKey::new(weights, path, p8, calibration);
        let kept = cache
            .zip(key.as_ref())
            .and_then(|(root, key)| key.read(root))
            .filter(|x| x.len() == cfg.layers);
        // The model as the last load on these paths packed it from the
        // same measures, when the user cache holds it: mapped, nothing
        // quantized again.
        let prepared = |x_max: &[InputMax]| {
            cache
                .zip(key.as_ref())
                .map(|(root, key)| prepared::location(root, key, &cfg.shape(), stats_hash(x_max)))
        };
        if let Some(x_max) = &kept
            && let Some((file, text)) = prepared(x_max)
            && let Some(bert) = prepared::Reader::open(&file, &text)
                .and_then(|r| Self::from_prepared(r, &cfg, path, p8))
        {
            return Ok(bert);
        }
        let st = Weights::open(weights)?;
        let (bert, x_max) = if let Some(x_max) = kept {
            let bert = Self::build(weights, &st, cfg.clone(), path, int8, Some(&x_max))?;
            (bert, x_max)
        } else {
            let mut bert = Self::build(weights, &st, cfg.clone(), path, int8, None)?;
            let x_max = bert.calibrate(calibration);
            bert.layers =
                Loader::new(&st, path, int8, bert.cfg.hidden, Some(&x_max)).layers(&bert.cfg)?;
            if let (Some(root), Some(key)) = (cache, key.as_ref()) {
                key.write(root, &x_max);
            }
            (bert, x_max)
        };
        if let Some((file, text)) = prepared(&x_max) {
            bert.save(&text).finish(&file);
        }
        Ok(bert)
    }

    /// The model as [`crate::prepared`] keeps it: the embeddings, then
    /// each layer's four int8 linear layers and two norms.
    fn save(&self, key: &str) -> prepared::Writer {
        let mut w = prepared::Writer::new(key);
        w.u64(self.vocab as u64);
        w.array(&self.word);
        w.array(&self.position);
        w.array(&self.token_type);
        w.array(&self.ln_emb.gamma);
        w.array(&self.ln_emb.beta);
        for layer in &self.layers {
            for linear in [&layer.qkv, &layer.attn_out, &layer.inter, &layer.out] {
                if let Linear::I8(q) = linear {
                    q.save(&mut w);
                }
            }
            for norm in [&layer.ln_attn, &layer.ln_out] {
                w.array(&norm.gamma);
                w.array(&norm.beta);
            }
        }
        w
    }

    /// [`Bert::save`]'s model for `cfg` on these paths; `None` unless
    /// every part has the length the shape gives it and nothing follows.
    fn from_prepared(
        mut r: prepared::Reader,
        cfg: &BertConfig,
        path: KernelPath,
        p8: Int8Path,
    ) -> Option<Bert> {
        let (h, i) = (cfg.hidden, cfg.intermediate);
        let vocab = usize::try_from(r.u64()?).ok()?;
        let word = r.mapped::<f32>(vocab.checked_mul(h)?)?;
        let position = r.vec::<f32>(cfg.max_positions.checked_mul(h)?)?;
        let token_type = r.vec_any::<f32>(16 * h)?;
        if token_type.is_empty() || !token_type.len().is_multiple_of(h) {
            return None;
        }
        let norm = |r: &mut prepared::Reader| {
            Some(LayerNorm {
                gamma: r.vec::<f32>(h)?,
                beta: r.vec::<f32>(h)?,
            })
        };
        let ln_emb = norm(&mut r)?;
        let mut layers = Vec::with_capacity(cfg.layers);
        for _ in 0..cfg.layers {
            let qkv = QLinear::load(&mut r, p8, 3 * h, h)?;
            let attn_out = QLinear::load(&mut r, p8, h, h)?;
            let inter = QLinear::load(&mut r, p8, i, h)?;
            let out = QLinear::load(&mut r, p8, h, i)?;
            let ln_attn = norm(&mut r)?;
            let ln_out = norm(&mut r)?;
            layers.push(Layer {
                qkv: Linear::I8(qkv),
                attn_out: Linear::I8(attn_out),
                ln_attn,
                inter: Linear::I8(inter),
                out: Linear::I8(out),
                ln_out,
            });
        }
        r.at_end().then_some(Bert {
            cfg: cfg.clone(),
            path,
            int8: Some(p8),
            word,
            position,
            token_type,
            ln_emb,
            layers,
            vocab,
        })
    }

    /// The largest |activation| of each linear layer's input channels over
    /// `calibration`, run through these (plain int8) layers.
    fn calibrate(&self, calibration: &Calibration) -> Vec<InputMax> {
        let mut ws = Workspace {
            calib: Some(Vec::new()),
            ..Workspace::default()
        };
        // One packed batch: more than 32 rows, as when indexing.
        let seqs: Vec<&[u32]> = calibration.ids.iter().map(Vec::as_slice).collect();
        let types: Option<Vec<&[u32]>> = calibration
            .types
            .as_ref()
            .map(|t| t.iter().map(Vec::as_slice).collect());
        self.encode(&seqs, types.as_deref(), &mut ws);
        ws.calib.unwrap_or_default()
    }

    /// Reads the embeddings and packs the layers (int8 when `int8`,
    /// smoothed by `x_max` when given).
    fn build(
        weights: &Path,
        st: &Weights,
        cfg: BertConfig,
        path: KernelPath,
        int8: Option<Int8Path>,
        x_max: Option<&[InputMax]>,
    ) -> Result<Bert> {
        let h = cfg.hidden;
        let ld = Loader::new(st, path, int8, h, x_max);
        let prefix = ld.prefix;
        let word_name = format!("{prefix}embeddings.word_embeddings.weight");
        let word_shape = st
            .shape(&word_name)
            .ok_or_else(|| Error::Model {
                path: weights.to_path_buf(),
                message: format!("{word_name}: no such tensor"),
            })?
            .to_vec();
        let vocab = word_shape.first().copied().unwrap_or(0);
        let layers = ld.layers(&cfg)?;
        Ok(Bert {
            word: st.f32_aligned(&word_name, &[vocab, h])?,
            position: ld.tensor(
                "embeddings.position_embeddings.weight",
                &[cfg.max_positions, h],
            )?,
            token_type: ld.tensor(
                "embeddings.token_type_embeddings.weight",
                &word_shape_tt(st, prefix, h),
            )?,
            ln_emb: ld.norm("embeddings.LayerNorm")?,
            layers,
            vocab,
            cfg,
            path,
            int8,
        })
    }

    pub(crate) fn hidden(&self) -> usize {
        self.cfg.hidden
    }

    /// The kernel path in use.
    pub(crate) fn path(&self) -> KernelPath {
        self.path
    }

    /// The int8 path of the linear layers (`None`: f32).
    pub(crate) fn int8(&self) -> Option<Int8Path> {
        self.int8
    }

    /// Runs the encoder over a packed batch of token-id sequences and writes one
    /// pooled ([`BertConfig::pooling`]), L2-normalised vector per sequence into
    /// `out` (`seqs.len() × hidden`).
    pub(crate) fn embed_packed(&self, seqs: &[&[u32]], ws: &mut Workspace, out: &mut [f32]) {
        self.encode(seqs, None, ws);
        match self.cfg.pooling {
            Pooling::Mean => pool(seqs, self.cfg.hidden, &ws.h, out),
            Pooling::Cls => pool_cls(seqs, self.cfg.hidden, &ws.h, out),
        }
    }

    /// Runs the encoder over a packed batch of token-id sequences, each
    /// with its token types (`None`: all 0, a single text); the last
    /// layer's rows are left in the workspace ([`Workspace::row`]), the
    /// sequences' rows one after another.
    pub(crate) fn encode(&self, seqs: &[&[u32]], types: Option<&[&[u32]]>, ws: &mut Workspace) {
        let rows: usize = seqs.iter().map(|s| s.len()).sum();
        self.reserve(seqs, rows, ws);
        self.embeddings(seqs, types, ws);
        for (l, layer) in self.layers.iter().enumerate() {
            self.attention(l, layer, seqs, rows, ws);
            self.feed_forward(l, layer, rows, ws);
        }
    }

    /// Grows the workspace to what a batch of `rows` packed rows needs.
    fn reserve(&self, seqs: &[&[u32]], rows: usize, ws: &mut Workspace) {
        let h = self.cfg.hidden;
        let max_t = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        grow(&mut ws.h, rows * h);
        grow(&mut ws.qkv, rows * 3 * h);
        grow(&mut ws.ctx, rows * h);
        grow(&mut ws.tmp, rows * h);
        grow(&mut ws.inter, rows * self.cfg.intermediate);
        // Tiled attention pads a sequence to whole steps of 32 keys.
        let padded = max_t.next_multiple_of(crate::amx::BF16_K);
        grow(&mut ws.scores, padded * padded);
        if self.bf16_attention() {
            grow(&mut ws.bf16, padded * (5 * crate::amx::BF16_K + padded));
        }
    }

    /// Whether this model's attention runs on AMX bfloat16 tiles: its
    /// linear layers on the AMX int8 path, heads 32 wide, and the CPU with
    /// `amx_bf16`, unless `CAIRN_ATTENTION=f32` (to compare or time the f32
    /// attention the other paths use).
    fn bf16_attention(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            static F32: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            self.int8 == Some(Int8Path::Amx)
                && self.cfg.hidden == crate::amx::BF16_K * self.cfg.heads
                && crate::amx::permitted_bf16()
                && !*F32.get_or_init(|| {
                    std::env::var("CAIRN_ATTENTION").is_ok_and(|v| v.eq_ignore_ascii_case("f32"))
                })
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// Embeddings into `ws.h`: LayerNorm(word + token type + position),
    /// sequence by sequence; a missing or out-of-range type is read as the
    /// last the model has (0 for a single text).
    fn embeddings(&self, seqs: &[&[u32]], types: Option<&[&[u32]]>, ws: &mut Workspace) {
        let h = self.cfg.hidden;
        let ew = Elementwise(self.path);
        let type_count = (self.token_type.len() / h.max(1)).max(1);
        let mut r = 0;
        for (s, seq) in seqs.iter().enumerate() {
            let first = r;
            let seq_types = types.and_then(|t| t.get(s));
            for (i, &id) in seq.iter().enumerate() {
                let id = (id as usize).min(self.vocab.saturating_sub(1));
                let tt = seq_types
                    .and_then(|t| t.get(i))
                    .map_or(0, |&t| (t as usize).min(type_count - 1));
                let row = &mut ws.h[r * h..(r + 1) * h];
                let w = &self.word[id * h..(id + 1) * h];
                let t = &self.token_type[tt * h..(tt + 1) * h];
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
    }

    /// Self-attention of one layer: Q, K, V projected together, each head of
    /// each sequence attended on its own into `ws.ctx`, then the output
    /// projection added to `ws.h` and normalised.
    fn attention(&self, l: usize, layer: &Layer, seqs: &[&[u32]], rows: usize, ws: &mut Workspace) {
        let h = self.cfg.hidden;
        let nh = self.cfg.heads;
        let dh = h / nh;
        let ew = Elementwise(self.path);
        let scale = 1.0 / (dh as f32).sqrt();
        record(&mut ws.calib, l, Input::Qkv, &ws.h, rows, h);
        layer.qkv.forward(&ws.h, rows, &mut ws.qkv, &mut ws.quant);
        #[cfg(target_arch = "x86_64")]
        let tiles = (self.bf16_attention() && seqs.iter().any(|s| s.len() > SMALL_ATTENTION))
            // SAFETY: `bf16_attention` checked the CPU and the permission.
            .then(|| unsafe { crate::amx::Tiles::configure() });
        let mut offset = 0;
        for seq in seqs {
            let t = seq.len();
            for index in 0..nh {
                let head = Head::new(&ws.qkv, h, dh, offset, t, index);
                let ctx = HeadOut {
                    ctx: &mut ws.ctx,
                    at: offset * h + index * dh,
                    ld: h,
                };
                #[cfg(target_arch = "x86_64")]
                if t > SMALL_ATTENTION && tiles.is_some() {
                    // SAFETY: the tiles are configured on this thread and
                    // the CPU has `amx_bf16` (`bf16_attention`).
                    unsafe {
                        tiled_attention_avx512(
                            &head,
                            scale,
                            &mut ws.scores,
                            &mut ws.bf16,
                            ctx,
                            (crate::amx::scores_row, crate::amx::context_row),
                        );
                    }
                    continue;
                }
                let scores = &mut ws.scores[..t * t];
                if t <= SMALL_ATTENTION {
                    small_attention(&head, scale, scores, ctx, ew);
                } else if self.path == KernelPath::Portable {
                    gemm_attention(&head, scale, scores, ctx, ew);
                } else {
                    packed_attention(&head, scale, scores, &mut ws.panel, ctx, ew);
                }
            }
            offset += t;
        }
        #[cfg(target_arch = "x86_64")]
        drop(tiles);
        record(&mut ws.calib, l, Input::AttnOut, &ws.ctx, rows, h);
        // The context is rebuilt by the next layer: spent here.
        layer
            .attn_out
            .forward_spent(&mut ws.ctx, rows, &mut ws.tmp, &mut ws.quant);
        ew.add_norm(
            &mut ws.h[..rows * h],
            &ws.tmp[..rows * h],
            &layer.ln_attn.gamma,
            &layer.ln_attn.beta,
            self.cfg.eps,
        );
    }

    /// The feed-forward block of one layer: `h = LayerNorm(h + out(gelu(inter(h))))`.
    fn feed_forward(&self, l: usize, layer: &Layer, rows: usize, ws: &mut Workspace) {
        let h = self.cfg.hidden;
        let ew = Elementwise(self.path);
        record(&mut ws.calib, l, Input::Inter, &ws.h, rows, h);
        layer
            .inter
            .forward(&ws.h, rows, &mut ws.inter, &mut ws.quant);
        ew.gelu(&mut ws.inter[..rows * layer.inter.out()]);
        record(
            &mut ws.calib,
            l,
            Input::Out,
            &ws.inter,
            rows,
            layer.inter.out(),
        );
        layer
            .out
            .forward_spent(&mut ws.inter, rows, &mut ws.tmp, &mut ws.quant);
        ew.add_norm(
            &mut ws.h[..rows * h],
            &ws.tmp[..rows * h],
            &layer.ln_out.gamma,
            &layer.ln_out.beta,
            self.cfg.eps,
        );
    }
}

/// Mean pooling of each sequence's rows of `hs` (row width `h`) into `out`,
/// then L2 normalisation.
fn pool(seqs: &[&[u32]], h: usize, hs: &[f32], out: &mut [f32]) {
    let mut r = 0;
    for (s, seq) in seqs.iter().enumerate() {
        let o = &mut out[s * h..(s + 1) * h];
        o.fill(0.0);
        for _ in 0..seq.len() {
            for (a, b) in o.iter_mut().zip(&hs[r * h..(r + 1) * h]) {
                *a += b;
            }
            r += 1;
        }
        let n = seq.len().max(1) as f32;
        o.iter_mut().for_each(|v| *v /= n);
        normalize(o);
    }
}

/// The first token's (`[CLS]`) row of each sequence of `hs` into `out`,
/// then L2 normalisation: bge's pooling.
fn pool_cls(seqs: &[&[u32]], h: usize, hs: &[f32], out: &mut [f32]) {
    let mut r = 0;
    for (s, seq) in seqs.iter().enumerate() {
        let o = &mut out[s * h..(s + 1) * h];
        o.copy_from_slice(&hs[r * h..(r + 1) * h]);
        r += seq.len();
        normalize(o);
    }
}

/// Sequences up to this length compute attention with direct loops: for a
/// short query the GEMM library's per-call packing costs more than the math.
const SMALL_ATTENTION: usize = 32;

/// One head of one sequence, as a view of the packed Q|K|V rows: the
/// head's Q, K and V start at offsets `q`, `k`, `v` of `qkv`, each row of
/// the sequence `ld` floats after the last.
struct Head<'a> {
    qkv: &'a [f32],
    ld: usize,
    q: usize,
    k: usize,
    v: usize,
    /// Tokens in the sequence.
    t: usize,
    /// Width of a head.
    dh: usize,
}

impl<'a> Head<'a> {
    /// Head `index` (of width `dh`) of the sequence whose `t` rows start at
    /// packed row `offset`, in a `qkv` of rows `3h` wide.
    fn new(qkv: &'a [f32], h: usize, dh: usize, offset: usize, t: usize, index: usize) -> Self {
        let ld = 3 * h;
        let q = offset * ld + index * dh;
        Head {
            qkv,
            ld,
            q,
            k: q + h,
            v: q + 2 * h,
            t,
            dh,
        }
    }
}

/// Where a head's context goes: `ctx` from offset `at`, row stride `ld`.
struct HeadOut<'a> {
    ctx: &'a mut [f32],
    at: usize,
    ld: usize,
}

/// One head's attention for a short sequence with direct loops:
/// `ctx = softmax(scale·QKᵀ)·V`.
fn small_attention(
    head: &Head<'_>,
    scale: f32,
    scores: &mut [f32],
    out: HeadOut<'_>,
    ew: Elementwise,
) {
    let Head {
        qkv,
        ld,
        q,
        k,
        v,
        t,
        dh,
    } = *head;
    for i in 0..t {
        let qi = &qkv[q + i * ld..][..dh];
        for j in 0..t {
            let kj = &qkv[k + j * ld..][..dh];
            scores[i * t + j] = scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>();
        }
    }
    ew.softmax(&mut scores[..t * t], t);
    for i in 0..t {
        let o = &mut out.ctx[out.at + i * out.ld..][..dh];
        o.fill(0.0);
        for j in 0..t {
            let p = scores[i * t + j];
            for (o, x) in o.iter_mut().zip(&qkv[v + j * ld..][..dh]) {
                *o += p * x;
            }
        }
    }
}

/// One head's attention on the linear layers' micro-kernels ([`gemm_packed`]),
/// for longer sequences on the SIMD paths: the same `ctx = softmax(scale·QKᵀ)·V`.
fn packed_attention(
    head: &Head<'_>,
    scale: f32,
    scores: &mut [f32],
    panel: &mut Aligned<f32>,
    out: HeadOut<'_>,
    ew: Elementwise,
) {
    let (qkv, ld, t, dh) = (head.qkv, head.ld, head.t, head.dh);
    let path = ew.0;
    // Kᵀ: element (kk, j) is K[j][kk].
    pack_panels(path, &qkv[head.k..], 1, ld, dh, t, panel);
    gemm_packed(
        path,
        &qkv[head.q..],
        ld,
        t,
        dh,
        panel,
        t,
        scale,
        &mut scores[..t * t],
        t,
    );
    ew.softmax(&mut scores[..t * t], t);
    pack_panels(path, &qkv[head.v..], ld, 1, t, dh, panel);
    gemm_packed(
        path,
        &scores[..t * t],
        t,
        t,
        t,
        panel,
        dh,
        1.0,
        &mut out.ctx[out.at..],
        out.ld,
    );
}

/// One head's attention on bfloat16 tiles (AMX's `tdpbf16ps`), for longer
/// sequences on the AMX int8 path: the same `ctx = softmax(scale·QKᵀ)·V`
/// with Q·scale and K each as two bfloat16 (`hi + lo`), V and the
/// probabilities as one, their products summed in f32, and softmax in f32.
///
/// Why: on such a Xeon the int8 linear layers run on the tiles, and the
/// f32 attention (`packed_attention`) had become the largest part of a
/// forward pass (30 % at one thread, against the GEMMs' 26 %). A 32-wide
/// head is one tile row of bfloat16, so a 16 × 16 block of scores is
/// three instructions (`hi·hi + hi·lo + lo·hi`). The sequence is padded to
/// whole steps of 32 keys: padded keys are zeros, their scores set to -∞
/// before softmax, padded query rows computed and dropped.
///
/// # Safety
/// `kernels` are [`crate::amx::scores_row`] and
/// [`crate::amx::context_row`] inside live tiles on a CPU with
/// `amx_bf16`, or their emulations; `head.dh` is 32; `scores` holds
/// `tp²` and `bf16` `tp·(160 + tp)` for `tp` = `head.t` rounded up to 32.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
unsafe fn tiled_attention<R: crate::amx::Rounding>(
    round: R,
    head: &Head<'_>,
    scale: f32,
    scores: &mut [f32],
    bf16: &mut [u16],
    out: HeadOut<'_>,
    kernels: (crate::amx::ScoresRow, crate::amx::ContextRow),
) {
    use crate::amx::{BF16_K, pack_keys, pack_values};
    let (qkv, ld, t) = (head.qkv, head.ld, head.t);
    assert!(head.dh == BF16_K, "tiled attention needs heads 32 wide");
    let tp = t.next_multiple_of(BF16_K);
    // Queries and keys as `hi` and `lo` bfloat16 each (`ScoresRow`).
    let (qb, rest) = bf16.split_at_mut(2 * tp * BF16_K);
    let (kb, rest) = rest.split_at_mut(2 * tp * BF16_K);
    let (vb, rest) = rest.split_at_mut(tp * BF16_K);
    let pb = &mut rest[..tp * tp];
    let scores = &mut scores[..tp * tp];
    for (i, dst) in qb.chunks_exact_mut(2 * BF16_K).enumerate() {
        let (hi, lo) = dst.split_at_mut(BF16_K);
        if i < t {
            let row = &qkv[head.q + i * ld..][..BF16_K];
            // SAFETY: 32 values each; the rounding is the caller's.
            unsafe { round.split32(row.as_ptr(), scale, hi.as_mut_ptr(), lo.as_mut_ptr()) };
        } else {
            hi.fill(0);
            lo.fill(0);
        }
    }
    pack_keys(round, &qkv[head.k..], ld, t, kb);
    pack_values(round, &qkv[head.v..], ld, t, vb);
    let (scores_row, context_row) = kernels;
    for block in 0..tp / 32 {
        // SAFETY: 32 query rows of 128 bytes from `block·32`, `tp / 16`
        // key tile pairs, 32 rows of `tp` scores: all within the buffers
        // sized above.
        unsafe {
            scores_row(
                qb.as_ptr().add(block * 32 * 2 * BF16_K),
                4 * BF16_K,
                kb.as_ptr(),
                tp / 16,
                scores.as_mut_ptr().add(block * 32 * tp),
                4 * tp,
            );
        }
    }
    crate::kernels::softmax_to_bf16(round, scores, tp, t, pb);
    let mut sums = [0.0f32; 32 * BF16_K];
    for block in 0..tp / 32 {
        // SAFETY: 32 rows of `tp` probabilities from `block·32`, `tp / 32`
        // steps of two value tiles, 32 × 32 sums into `sums`.
        unsafe {
            context_row(
                pb.as_ptr().add(block * 32 * tp),
                2 * tp,
                tp / BF16_K,
                vb.as_ptr(),
                sums.as_mut_ptr(),
            );
        }
        for r in 0..32 {
            let i = block * 32 + r;
            if i >= t {
                break;
            }
            out.ctx[out.at + i * out.ld..][..BF16_K].copy_from_slice(&sums[r * BF16_K..][..BF16_K]);
        }
    }
}

/// [`tiled_attention`] compiled for AVX-512 (every CPU with AMX has it),
/// rounding to bfloat16 by `vcvtne2ps2bf16`.
///
/// # Safety
/// As [`tiled_attention`], on a CPU with AVX-512 (F, BW, VL, BF16).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
unsafe fn tiled_attention_avx512(
    head: &Head<'_>,
    scale: f32,
    scores: &mut [f32],
    bf16: &mut [u16],
    out: HeadOut<'_>,
    kernels: (crate::amx::ScoresRow, crate::amx::ContextRow),
) {
    // SAFETY: the caller's contract.
    unsafe {
        tiled_attention(
            crate::amx::Avx512Bf16,
            head,
            scale,
            scores,
            bf16,
            out,
            kernels,
        )
    }
}

/// One head's attention on SGEMM, for longer sequences: the same
/// `ctx = softmax(scale·QKᵀ)·V`.
fn gemm_attention(
    head: &Head<'_>,
    scale: f32,
    scores: &mut [f32],
    out: HeadOut<'_>,
    ew: Elementwise,
) {
    let (qkv, ld, t, dh) = (head.qkv, head.ld, head.t, head.dh);
    assert!(
        scores.len() >= t * t
            && qkv.len() >= head.v + (t - 1) * ld + dh
            && out.ctx.len() >= out.at + (t - 1) * out.ld + dh,
        "attention buffers too small"
    );
    // SAFETY: the assert above: Q and K (before V) hold t rows of dh floats
    // at stride ld, scores t × t.
    unsafe {
        matrixmultiply::sgemm(
            t,
            dh,
            t,
            scale,
            qkv.as_ptr().add(head.q),
            ld as isize,
            1,
            qkv.as_ptr().add(head.k),
            1,
            ld as isize,
            0.0,
            scores.as_mut_ptr(),
            t as isize,
            1,
        );
    }
    ew.softmax(&mut scores[..t * t], t);
    // SAFETY: the assert above: V holds t rows of dh floats at stride ld,
    // ctx t rows of dh floats at stride out.ld from out.at.
    unsafe {
        matrixmultiply::sgemm(
            t,
            t,
            dh,
            1.0,
            scores.as_ptr(),
            t as isize,
            1,
            qkv.as_ptr().add(head.v),
            ld as isize,
            1,
            0.0,
            out.ctx.as_mut_ptr().add(out.at),
            out.ld as isize,
            1,
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1).
    fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// Packed Q|K|V rows of `t` tokens for `heads` heads 32 wide, scaled so
    /// that the scores spread (softmax far from uniform).
    fn qkv(t: usize, heads: usize, seed: u64) -> Vec<f32> {
        noise(t * 3 * 32 * heads, seed)
            .into_iter()
            .map(|x| 3.0 * x)
            .collect()
    }

    /// One head's `softmax(scale·QKᵀ)·V` in f64, row-major `t × 32`.
    fn reference(qkv: &[f32], h: usize, t: usize, index: usize, scale: f32) -> Vec<f64> {
        let head = Head::new(qkv, h, 32, 0, t, index);
        let mut out = vec![0.0f64; t * 32];
        for i in 0..t {
            let s: Vec<f64> = (0..t)
                .map(|j| {
                    (0..32)
                        .map(|d| {
                            f64::from(qkv[head.q + i * head.ld + d])
                                * f64::from(qkv[head.k + j * head.ld + d])
                        })
                        .sum::<f64>()
                        * f64::from(scale)
                })
                .collect();
            let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            for (j, p) in e.iter().enumerate() {
                for d in 0..32 {
                    out[i * 32 + d] += p / sum * f64::from(qkv[head.v + j * head.ld + d]);
                }
            }
        }
        out
    }

    fn tiled(
        qkv: &[f32],
        h: usize,
        t: usize,
        index: usize,
        scale: f32,
        kernels: (crate::amx::ScoresRow, crate::amx::ContextRow),
        wide: bool,
    ) -> Vec<f32> {
        let tp = t.next_multiple_of(32);
        let mut scores = vec![0.0; tp * tp];
        // Poisoned, so that a value read before it is written shows.
        let mut bf = vec![0x7FC0u16; tp * (160 + tp)];
        let mut ctx = vec![f32::NAN; t * h];
        let head = Head::new(qkv, h, 32, 0, t, index);
        let out = HeadOut {
            ctx: &mut ctx,
            at: index * 32,
            ld: h,
        };
        #[cfg(target_arch = "x86_64")]
        if wide {
            // SAFETY: buffers as `tiled_attention` asks, the caller's
            // kernels, and `wide` only where the CPU has AVX-512.
            unsafe { tiled_attention_avx512(&head, scale, &mut scores, &mut bf, out, kernels) };
            return (0..t)
                .flat_map(|i| ctx[i * h + index * 32..][..32].to_vec())
                .collect();
        }
        let _ = wide;
        // SAFETY: buffers as `tiled_attention` asks; the kernels are the
        // caller's (emulated, or on tiles it configured).
        unsafe {
            tiled_attention(
                crate::amx::Plain,
                &head,
                scale,
                &mut scores,
                &mut bf,
                out,
                kernels,
            )
        };
        (0..t)
            .flat_map(|i| ctx[i * h + index * 32..][..32].to_vec())
            .collect()
    }

    #[test]
    fn tiled_attention_is_f32_attention_within_bfloat16_rounding() {
        let scale = 1.0 / 32f32.sqrt();
        for t in [33, 47, 64, 100, 251] {
            let heads = 3;
            let h = 32 * heads;
            let qkv = qkv(t, heads, t as u64);
            for index in 0..heads {
                let want = reference(&qkv, h, t, index, scale);
                let got = tiled(
                    &qkv,
                    h,
                    t,
                    index,
                    scale,
                    (
                        crate::amx::scores_row_emulated,
                        crate::amx::context_row_emulated,
                    ),
                    false,
                );
                let worst = got
                    .iter()
                    .zip(&want)
                    .map(|(g, w)| (f64::from(*g) - w).abs())
                    .fold(0.0, f64::max);
                // V within ±3: bfloat16's 8 bits give ~1e-2 at worst.
                assert!(worst < 0.05, "t {t} head {index}: worst {worst}");
                assert!(worst > 0.0, "t {t}: bit for bit f64, so not rounded");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn amx_bfloat16_tiles_are_as_close_to_f64_as_their_emulation() {
        if !crate::amx::permitted_bf16() {
            eprintln!("skipped: no AMX bf16 here");
            return;
        }
        // Not bit for bit: the tiles sum a `hi`·`lo` product's low bits
        // otherwise than the instruction's pseudo-code does (0.006 apart
        // at t 200, both 0.0096 from f64).
        let scale = 1.0 / 32f32.sqrt();
        let worst = |got: &[f32], want: &[f64]| {
            got.iter()
                .zip(want)
                .map(|(g, w)| (f64::from(*g) - w).abs())
                .fold(0.0, f64::max)
        };
        for t in [33, 64, 200, 256] {
            let qkv = qkv(t, 2, 7 + t as u64);
            for index in 0..2 {
                let want = reference(&qkv, 64, t, index, scale);
                let emulated = tiled(
                    &qkv,
                    64,
                    t,
                    index,
                    scale,
                    (
                        crate::amx::scores_row_emulated,
                        crate::amx::context_row_emulated,
                    ),
                    false,
                );
                // SAFETY: permitted_bf16 above.
                let _tiles = unsafe { crate::amx::Tiles::configure() };
                let real = tiled(
                    &qkv,
                    64,
                    t,
                    index,
                    scale,
                    (crate::amx::scores_row, crate::amx::context_row),
                    true,
                );
                let (e, r) = (worst(&emulated, &want), worst(&real, &want));
                assert!(
                    r <= 1.25 * e + 1e-3,
                    "t {t} head {index}: tiles {r}, emulation {e}"
                );
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_hardware_rounding_to_bfloat16_is_the_plain_one() {
        use crate::amx::{Avx512Bf16, Plain, Rounding};
        if !std::arch::is_x86_feature_detected!("avx512bf16") {
            eprintln!("skipped: no AVX-512 BF16 here");
            return;
        }
        // Normal values of every size, ties included (1 + 2⁻⁸ is one).
        let mut values = qkv(64, 1, 3);
        values.extend([1.0 + 1.0 / 256.0, -3.0, 0.0, 1e-30, 65504.0, 0.1]);
        values.resize(values.len().next_multiple_of(32), 0.5);
        for chunk in values.chunks_exact(32) {
            for s in [1.0, 0.176_776_7] {
                let (mut a, mut b) = ([0u16; 32], [0u16; 32]);
                let (mut ah, mut al, mut bh, mut bl) =
                    ([0u16; 32], [0u16; 32], [0u16; 32], [0u16; 32]);
                // SAFETY: 32 values each; AVX-512 BF16 checked above (every
                // CPU with it has AVX-512 F).
                unsafe {
                    Plain.scaled32(chunk.as_ptr(), s, a.as_mut_ptr());
                    Avx512Bf16.scaled32(chunk.as_ptr(), s, b.as_mut_ptr());
                    Plain.split32(chunk.as_ptr(), s, ah.as_mut_ptr(), al.as_mut_ptr());
                    Avx512Bf16.split32(chunk.as_ptr(), s, bh.as_mut_ptr(), bl.as_mut_ptr());
                }
                assert_eq!(a, b);
                assert_eq!(ah, bh);
                assert_eq!(al, bl);
            }
        }
    }
}
