//! The cross-encoder: one relevance score per (query, passage) pair, from
//! the same BERT layers as the embedder ([`Bert`]) read over the pair at
//! once, then the pooler (dense + tanh on `[CLS]`) and the classifier (one
//! logit): cross-encoder/ms-marco-MiniLM-L-12-v2
//! ([`ModelSpec::MS_MARCO_MINILM_L12_V2_INT8DQ`]).
//!
//! A pair is `[CLS] query [SEP] passage [SEP]`, token type 0 up to the first
//! `[SEP]` and 1 after it, at most `max_tokens` tokens: the passage is cut
//! first, the query keeping up to half of the room when the passage needs
//! the rest. The pairs of a call are packed like the embedder's batches (no
//! padding, so no attention mask) and spread over worker threads.

use std::sync::Mutex;

use cairn_core::{EmbedError, Reranker};

use crate::bert::{Bert, BertConfig, Calibration, Workspace};
use crate::error::{Error, Result};
use crate::fetch::{ModelKind, ModelLocation, ModelSpec};
use crate::int8::{Int8Path, Precision};
use crate::kernels::KernelPath;
use crate::minilm::{
    TextTokenizer, bounded_prefix, load_tokenizer, pack, resolve_int8_kernel, resolve_kernel,
    run_batches,
};
use crate::weights::Weights;

/// Settings of the cross-encoder.
#[derive(Clone, Debug)]
pub struct CrossEncoderOptions {
    /// Tokens per pair, special tokens included (at most the model's 512).
    pub max_tokens: usize,
    /// Worker threads for a call's packed batches (default: the machine's
    /// available parallelism).
    pub threads: usize,
    /// Rows (tokens) per packed batch.
    pub batch_tokens: usize,
    /// Kernel path; `None` = `CAIRN_KERNEL` if set, else the fastest this CPU runs.
    pub kernel: Option<KernelPath>,
    /// f32 or int8 linear layers (`[search] rerank_precision`); the pooler
    /// and classifier stay f32.
    pub precision: Precision,
    /// In int8, this instruction path instead of the one that goes with
    /// the kernel path; for tests and benchmarks.
    pub int8_kernel: Option<Int8Path>,
    /// In int8, where the calibration's measures are kept (as
    /// [`crate::MiniLmOptions::calibration_cache`]).
    pub calibration_cache: Option<std::path::PathBuf>,
}

impl Default for CrossEncoderOptions {
    fn default() -> Self {
        CrossEncoderOptions {
            max_tokens: 512,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            // A pair or two a batch: a call scores a handful of pairs
            // (`cairn_search::RERANK_STEP`), which must still spread over
            // the threads.
            batch_tokens: 512,
            kernel: None,
            precision: Precision::Fp32,
            int8_kernel: None,
            calibration_cache: crate::fetch::cache_root().ok(),
        }
    }
}

/// One encoded pair: token ids and their types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairTokens {
    /// `[CLS] query [SEP] passage [SEP]`.
    pub ids: Vec<u32>,
    /// 0 up to the first `[SEP]`, 1 after it.
    pub types: Vec<u32>,
}

/// The pooler and classifier on top of the encoder.
struct Head {
    /// Pooler weight, `h × h` (`[out, in]`).
    pooler: Vec<f32>,
    pooler_bias: Vec<f32>,
    /// Classifier weight, one row of `h`.
    classifier: Vec<f32>,
    classifier_bias: f32,
}

impl Head {
    fn load(path: &std::path::Path, h: usize) -> Result<Head> {
        let st = Weights::open(path)?;
        let prefix = if st.any_starts_with("bert.") {
            "bert."
        } else {
            ""
        };
        let bias = st.f32("classifier.bias", &[1])?;
        Ok(Head {
            pooler: st.f32(&format!("{prefix}pooler.dense.weight"), &[h, h])?,
            pooler_bias: st.f32(&format!("{prefix}pooler.dense.bias"), &[h])?,
            classifier: st.f32("classifier.weight", &[1, h])?,
            classifier_bias: bias[0],
        })
    }

    /// `classifier(tanh(pooler(cls)))`, in plain f32 loops: a few hundred
    /// thousand multiply-adds a pair, too few for a GEMM (whose short-input
    /// path would read half-precision weights).
    fn score(&self, cls: &[f32]) -> f32 {
        let h = cls.len();
        let mut logit = self.classifier_bias;
        for o in 0..h {
            let w = &self.pooler[o * h..(o + 1) * h];
            let z: f32 = w.iter().zip(cls).map(|(a, b)| a * b).sum::<f32>() + self.pooler_bias[o];
            logit += self.classifier[o] * z.tanh();
        }
        logit
    }
}

/// The reranker model in process.
pub struct CrossEncoder {
    id: String,
    tokenizer: TextTokenizer,
    bert: Bert,
    head: Head,
    cls: u32,
    sep: u32,
    opts: CrossEncoderOptions,
    /// Scratch space for calls with one batch (on the calling thread).
    workspace: Mutex<Workspace>,
}

impl CrossEncoder {
    /// Loads the model from a folder holding `model.safetensors` (with the
    /// pooler and classifier), `tokenizer.json` and `config.json`.
    pub fn load(location: &ModelLocation, opts: CrossEncoderOptions) -> Result<CrossEncoder> {
        let dir = &location.dir;
        let cfg = BertConfig::from_file(&dir.join("config.json"))?;
        let path = resolve_kernel(opts.kernel)?;
        let weights = dir.join("model.safetensors");
        let int8_kernel = resolve_int8_kernel(opts.precision, opts.int8_kernel)?;
        let max_tokens = opts.max_tokens.clamp(8, cfg.max_positions);
        let tok_path = dir.join("tokenizer.json");
        // Truncation and padding are ours (the pair rule below); the
        // shipped file pads every input to 512.
        let tokenizer = load_tokenizer(&tok_path, None)?;
        let special = |name: &str| {
            tokenizer.token_to_id(name).ok_or_else(|| Error::Model {
                path: tok_path.clone(),
                message: format!("no {name} token"),
            })
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        let calibration = match opts.precision {
            Precision::Int8 => Calibration {
                cache: opts.calibration_cache.clone(),
                ..crate::calibration::for_pairs(|q, p| {
                    let pieces = |t: &str| tokenizer.ids(t, false);
                    let pair = join_pair(&pieces(q)?, &pieces(p)?, cls, sep, max_tokens);
                    Ok((pair.ids, pair.types))
                })?
            },
            Precision::Fp32 => Calibration::default(),
        };
        let bert = Bert::load(
            &weights,
            cfg,
            path,
            opts.precision,
            int8_kernel,
            &calibration,
        )?;
        let head = Head::load(&weights, bert.hidden())?;
        Ok(CrossEncoder {
            id: cross_encoder_id(&location.name, opts.precision),
            tokenizer,
            bert,
            head,
            cls,
            sep,
            opts: CrossEncoderOptions { max_tokens, ..opts },
            workspace: Mutex::new(Workspace::default()),
        })
    }

    /// The kernel path this model runs on.
    pub fn kernel(&self) -> KernelPath {
        self.bert.path()
    }

    /// The precision of its linear layers.
    pub fn precision(&self) -> Precision {
        self.opts.precision
    }

    /// The int8 path of its linear layers (`None` in f32).
    pub fn int8_kernel(&self) -> Option<Int8Path> {
        self.bert.int8()
    }

    /// A text's WordPiece ids, no special tokens, from the part of it that
    /// `max_tokens` tokens can come from.
    fn pieces(&self, text: &str) -> Result<Vec<u32>> {
        self.tokenizer
            .ids(bounded_prefix(text, self.opts.max_tokens), false)
    }

    fn join(&self, q: &[u32], p: &[u32]) -> PairTokens {
        join_pair(q, p, self.cls, self.sep, self.opts.max_tokens)
    }

    /// The tokens of one (query, passage) pair, as [`CrossEncoder::score`] reads them.
    pub fn encode_pair(&self, query: &str, passage: &str) -> Result<PairTokens> {
        Ok(self.join(&self.pieces(query)?, &self.pieces(passage)?))
    }

    /// Scores already encoded pairs; one logit per pair, in order.
    pub fn score_tokens(&self, pairs: &[PairTokens]) -> Vec<f32> {
        let batches = pack(pairs.iter().map(|p| p.ids.len()), self.opts.batch_tokens);
        let h = self.bert.hidden();
        let run = |batch: &[usize], ws: &mut Workspace| -> Vec<(usize, f32)> {
            let ids: Vec<&[u32]> = batch.iter().map(|&i| pairs[i].ids.as_slice()).collect();
            let types: Vec<&[u32]> = batch.iter().map(|&i| pairs[i].types.as_slice()).collect();
            self.bert.encode(&ids, Some(&types), ws);
            let mut row = 0;
            batch
                .iter()
                .map(|&i| {
                    let score = self.head.score(ws.row(row, h));
                    row += pairs[i].ids.len();
                    (i, score)
                })
                .collect()
        };
        let mut out = vec![0.0f32; pairs.len()];
        run_batches(&batches, self.opts.threads, &self.workspace, &mut out, run);
        out
    }

    /// One score per passage for `query` (a logit: higher is better).
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let q = self.pieces(query)?;
        let pairs = passages
            .iter()
            .map(|p| Ok(self.join(&q, &self.pieces(p)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.score_tokens(&pairs))
    }
}

/// `[CLS] q [SEP] p [SEP]` of already tokenized parts, cut to `max_tokens`:
/// the passage first; the query keeps up to half the room when the passage
/// needs the rest.
fn join_pair(q: &[u32], p: &[u32], cls: u32, sep: u32, max_tokens: usize) -> PairTokens {
    let room = max_tokens.saturating_sub(3);
    let keep_q = q.len().min((room / 2).max(room.saturating_sub(p.len())));
    let keep_p = p.len().min(room - keep_q);
    let mut ids = Vec::with_capacity(keep_q + keep_p + 3);
    ids.push(cls);
    ids.extend_from_slice(&q[..keep_q]);
    ids.push(sep);
    ids.extend_from_slice(&p[..keep_p]);
    ids.push(sep);
    let mut types = vec![0u32; keep_q + 2];
    types.resize(ids.len(), 1);
    PairTokens { ids, types }
}

/// The id a cross-encoder reports (`--explain`, logs): its name, with
/// `+int8` when its linear layers run in int8 (its scores differ a little).
fn cross_encoder_id(name: &str, precision: Precision) -> String {
    match precision {
        Precision::Fp32 => name.to_string(),
        Precision::Int8 => format!("{name}+int8"),
    }
}

impl Reranker for CrossEncoder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn score(&self, query: &str, passages: &[&str]) -> std::result::Result<Vec<f32>, EmbedError> {
        CrossEncoder::score(self, query, passages).map_err(|e| EmbedError::new(e.to_string()))
    }
}

/// A [`CrossEncoder`] loaded on its first score: opening a project never
/// pays for the reranker unless a search asks for it. A model that fails to
/// load fails each call with the reason.
pub struct LazyCrossEncoder {
    id: String,
    location: ModelLocation,
    opts: CrossEncoderOptions,
    model: std::sync::OnceLock<std::result::Result<CrossEncoder, String>>,
}

impl LazyCrossEncoder {
    /// Checks that `spec` is a cross-encoder; loads nothing yet.
    pub fn new(
        spec: &ModelSpec,
        location: ModelLocation,
        opts: CrossEncoderOptions,
    ) -> Result<LazyCrossEncoder> {
        if spec.kind != ModelKind::CrossEncoder {
            return Err(Error::Model {
                path: location.dir,
                message: format!("{} is not a cross-encoder", spec.name),
            });
        }
        Ok(LazyCrossEncoder {
            id: cross_encoder_id(&location.name, opts.precision),
            location,
            opts,
            model: std::sync::OnceLock::new(),
        })
    }

    /// The model, loading it on the first call.
    pub fn get(&self) -> std::result::Result<&CrossEncoder, EmbedError> {
        self.model
            .get_or_init(|| {
                CrossEncoder::load(&self.location, self.opts.clone()).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| EmbedError::new(e.clone()))
    }
}

impl Reranker for LazyCrossEncoder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn score(&self, query: &str, passages: &[&str]) -> std::result::Result<Vec<f32>, EmbedError> {
        Reranker::score(self.get()?, query, passages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_cls_query_sep_passage_sep_with_types() {
        let p = join_pair(&[5, 6], &[7, 8, 9], 1, 2, 512);
        assert_eq!(p.ids, vec![1, 5, 6, 2, 7, 8, 9, 2]);
        assert_eq!(p.types, vec![0, 0, 0, 0, 1, 1, 1, 1]);
    }

    #[test]
    fn the_passage_is_cut_first_and_the_query_keeps_half_the_room() {
        let q: Vec<u32> = (100..105).collect();
        let long: Vec<u32> = (1000..2000).collect();
        // Room 13: the short query whole, the passage the rest.
        let p = join_pair(&q, &long, 1, 2, 16);
        assert_eq!(p.ids.len(), 16);
        assert_eq!(&p.ids[1..6], &q[..]);
        assert_eq!(p.ids[6], 2);
        assert_eq!(&p.ids[7..15], &long[..8]);
        assert_eq!(p.types.iter().filter(|&&t| t == 0).count(), 7);
        // A query longer than half the room keeps half of it when the
        // passage needs the rest.
        let long_q: Vec<u32> = (100..140).collect();
        let p = join_pair(&long_q, &long, 1, 2, 16);
        assert_eq!(p.ids.len(), 16);
        assert_eq!(p.types.iter().filter(|&&t| t == 0).count(), 6 + 2);
        // ... and all of the room the passage leaves free.
        let p = join_pair(&long_q, &long[..2], 1, 2, 16);
        assert_eq!(p.ids.len(), 16);
        assert_eq!(&p.ids[p.ids.len() - 3..], &[1000, 1001, 2]);
        // Nothing to cut: nothing cut.
        let p = join_pair(&q, &long[..5], 1, 2, 512);
        assert_eq!(p.ids.len(), 13);
    }
}
