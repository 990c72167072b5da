//! Text to vectors: sentence-transformers all-MiniLM-L6-v2 run by our own
//! BERT forward pass in pure Rust, the code that fetches and caches its files,
//! and a deterministic fake embedder for tests; and the same forward pass as
//! a cross-encoder that scores (query, passage) pairs for reranking.
//!
//! This is the only crate that knows about tokenizers, safetensors and matrix
//! kernels; everything else sees the [`cairn_core::Embedder`] trait.
#![deny(missing_docs)]

mod aligned;
mod amx;
mod bert;
mod calibration;
mod calibration_cache;
mod cross;
mod dequantize;
mod error;
mod fake;
mod fetch;
mod int8;
mod kernels;
mod minilm;
mod onnx;
mod prepared;
mod prose;
mod weights;
mod wordpiece;

pub use cross::{CrossEncoder, CrossEncoderOptions, LazyCrossEncoder, PairTokens};
pub use error::{Error, Result};
pub use fake::{FakeEmbedder, FakeReranker};
pub use fetch::{
    FetchProgress, ModelKind, ModelLocation, ModelSpec, NoProgress, Pooling, cache_root,
    convert_onnx, fetch_model, locate_model, verify_model,
};
pub use int8::{Int8Path, Precision};
pub use kernels::KernelPath;
pub use minilm::{
    FP32_BATCH_TOKENS, INT8_BATCH_TOKENS, LazyMiniLm, MiniLm, MiniLmOptions, model_id,
    resolve_kernel,
};
pub use prose::synthetic_prose;
