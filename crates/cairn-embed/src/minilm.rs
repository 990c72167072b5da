//! The MiniLM embedder: tokenizer + [`Bert`] + batching across threads.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;

use cairn_core::{EmbedError, EmbedSink, Embedder, TextSource, sync};
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{Bert, BertConfig, Calibration, Workspace};
use crate::error::{Error, Result};
use crate::fetch::{ModelLocation, ModelSpec, Pooling};
use crate::int8::{Int8Path, Precision};
use crate::kernels::KernelPath;

/// Settings of the local embedder.
#[derive(Clone, Debug)]
pub struct MiniLmOptions {
    /// Tokens per text, special tokens included (sentence-transformers' `max_seq_length`).
    pub max_tokens: usize,
    /// Worker threads for large batches (default: the machine's available parallelism).
    pub threads: usize,
    /// Rows (tokens) per packed batch: sequences of similar length are grouped
    /// until their total length reaches this; 0 (the default): by precision
    /// ([`FP32_BATCH_TOKENS`], [`INT8_BATCH_TOKENS`]).
    pub batch_tokens: usize,
    /// Kernel path; `None` = `CAIRN_KERNEL` if set, else the fastest this CPU runs.
    pub kernel: Option<KernelPath>,
    /// f32 or int8 linear layers (`[embed] precision`). int8 vectors differ
    /// from f32 ones, so the model id says which ([`model_id`]).
    pub precision: Precision,
    /// In int8, this instruction path instead of the one that goes with
    /// the kernel path ([`Int8Path::for_kernel`]); for tests and benchmarks.
    pub int8_kernel: Option<Int8Path>,
    /// How token vectors are pooled (the model's own: [`ModelSpec::pooling`]).
    pub pooling: Pooling,
    /// Put before every query, not before documents ([`ModelSpec::query_prefix`]).
    pub query_prefix: String,
    /// In int8, the folder that keeps what the calibration measured, so a
    /// later load skips it (default: the user cache, [`crate::cache_root`];
    /// `None`: calibrate on every load).
    pub calibration_cache: Option<std::path::PathBuf>,
}

impl MiniLmOptions {
    /// The options a model is run with by default: its pooling, query
    /// prefix and token budget.
    pub fn for_model(spec: &ModelSpec) -> MiniLmOptions {
        MiniLmOptions {
            max_tokens: spec.max_tokens,
            pooling: spec.pooling,
            query_prefix: spec.query_prefix.to_string(),
            ..MiniLmOptions::default()
        }
    }
}

impl Default for MiniLmOptions {
    fn default() -> Self {
        MiniLmOptions {
            max_tokens: 256,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            batch_tokens: 0,
            kernel: None,
            precision: Precision::Fp32,
            int8_kernel: None,
            pooling: Pooling::Mean,
            query_prefix: String::new(),
            calibration_cache: crate::fetch::cache_root().ok(),
        }
    }
}

/// all-MiniLM-L6-v2 (or any BERT encoder of the same shape) in process.
pub struct MiniLm {
    id: String,
    tokenizer: TextTokenizer,
    bert: Bert,
    opts: MiniLmOptions,
    /// Scratch space for the calling thread's path (queries and small batches).
    workspace: Mutex<Workspace>,
}

impl MiniLm {
    /// Loads the model from a folder holding `model.safetensors`,
    /// `tokenizer.json` and `config.json`.
    pub fn load(location: &ModelLocation, opts: MiniLmOptions) -> Result<MiniLm> {
        let started = std::time::Instant::now();
        let ms = |t: std::time::Instant| (t.elapsed().as_secs_f64() * 1e4).round() / 10.0;
        let dir = &location.dir;
        let mut cfg = BertConfig::from_file(&dir.join("config.json"))?;
        cfg.pooling = opts.pooling;
        let path = resolve_kernel(opts.kernel)?;
        let int8_kernel = resolve_int8_kernel(opts.precision, opts.int8_kernel)?;
        let tok_path = dir.join("tokenizer.json");
        let max_tokens = opts.max_tokens.min(cfg.max_positions);
        let weights = dir.join("model.safetensors");
        // In f32 the weights are read first, so a broken model file is the
        // error named; int8 needs the tokenizer first, for its calibration.
        let early = match opts.precision {
            Precision::Int8 => Some(load_tokenizer(&tok_path, Some(max_tokens))?),
            Precision::Fp32 => None,
        };
        let t_tokenizer = ms(started);
        let calibration = match &early {
            Some(t) => Calibration {
                cache: opts.calibration_cache.clone(),
                ..crate::calibration::for_embedder(t, &opts.query_prefix)?
            },
            None => Calibration::default(),
        };
        let t_calibration = ms(started);
        let bert = Bert::load(
            &weights,
            cfg,
            path,
            opts.precision,
            int8_kernel,
            &calibration,
        )?;
        let t_weights = ms(started);
        let tokenizer = match early {
            Some(t) => t,
            None => load_tokenizer(&tok_path, Some(max_tokens))?,
        };
        // Where a load's time goes (`CAIRN_LOG=debug`), cumulative.
        tracing::debug!(
            tokenizer = t_tokenizer,
            calibration = t_calibration,
            weights = t_weights,
            done = ms(started),
            "model loaded: milliseconds from the start"
        );
        Ok(MiniLm {
            id: model_id(&location.name, &opts),
            tokenizer,
            bert,
            opts,
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

    /// Token ids of a text, truncated at `max_tokens` (special tokens included).
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>> {
        self.tokenizer
            .ids(bounded_prefix(text, self.opts.max_tokens), true)
    }

    /// The sequences of these lengths grouped into packed batches of at
    /// most `batch_tokens` rows (a longer sequence alone), longest first so
    /// that each batch holds sequences of similar size: indexes into `lens`.
    /// A few texts are cut into smaller batches so each thread gets one
    /// ([`pack_for_threads`]): 48 chunks made 6 batches for 16 threads.
    fn pack(&self, lens: impl ExactSizeIterator<Item = usize>) -> Vec<Vec<usize>> {
        pack_for_threads(lens, self.batch_tokens(), self.opts.threads)
    }

    /// Rows per packed batch: the options' number, else the precision's.
    fn batch_tokens(&self) -> usize {
        match (self.opts.batch_tokens, self.precision()) {
            (0, Precision::Fp32) => FP32_BATCH_TOKENS,
            (0, Precision::Int8) => INT8_BATCH_TOKENS,
            (n, _) => n,
        }
    }

    /// One vector per sequence of a packed batch.
    fn run_batch(&self, batch: &[&[u32]], ws: &mut Workspace) -> Vec<Vec<f32>> {
        let dim = self.bert.hidden();
        let mut flat = vec![0.0f32; batch.len() * dim];
        self.bert.embed_packed(batch, ws, &mut flat);
        flat.chunks_exact(dim).map(<[f32]>::to_vec).collect()
    }

    /// Embeds already tokenized sequences; one vector per sequence.
    pub fn embed_tokens(&self, seqs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let batches = self.pack(seqs.iter().map(Vec::len));

        let mut out = vec![Vec::new(); seqs.len()];
        let run = |batch: &[usize], ws: &mut Workspace| -> Vec<(usize, Vec<f32>)> {
            let refs: Vec<&[u32]> = batch.iter().map(|&i| seqs[i].as_slice()).collect();
            batch
                .iter()
                .copied()
                .zip(self.run_batch(&refs, ws))
                .collect()
        };

        run_batches(&batches, self.opts.threads, &self.workspace, &mut out, run);
        out
    }
}

/// Runs `run` over packed `batches` and puts each `(index, result)` it
/// gives into `out`: on the caller's thread with the model's own
/// `workspace` when one thread is asked for (or there is one batch), else
/// on up to `threads` scoped workers that take the next batch as they
/// finish, each with its own workspace. The embedder and the cross-encoder
/// share it.
pub(crate) fn run_batches<T: Send>(
    batches: &[Vec<usize>],
    threads: usize,
    workspace: &Mutex<Workspace>,
    out: &mut [T],
    run: impl Fn(&[usize], &mut Workspace) -> Vec<(usize, T)> + Sync,
) {
    let threads = threads.clamp(1, batches.len().max(1));
    if threads == 1 {
        let mut ws = sync::lock(workspace);
        for batch in batches {
            for (i, v) in run(batch, &mut ws) {
                out[i] = v;
            }
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(out.len()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut ws = Workspace::default();
                loop {
                    let b = next.fetch_add(1, Ordering::Relaxed);
                    let Some(batch) = batches.get(b) else { break };
                    let done = run(batch, &mut ws);
                    sync::lock(&results).extend(done);
                }
            });
        }
    });
    for (i, v) in sync::into_inner(results) {
        out[i] = v;
    }
}

/// Packed batches waiting for a worker in [`MiniLm::embed_stream`]: each
/// sequence with its text's number.
type Batches = VecDeque<Vec<(u64, Vec<u32>)>>;

/// The source of [`MiniLm::embed_stream`] and how far it has got.
struct Feed<'s, 'a> {
    source: &'s mut TextSource<'a>,
    /// The number of the next text handed out.
    seq: u64,
    done: bool,
}

impl MiniLm {
    /// Pulls one group from the feed, tokenizes and packs it onto `queue`;
    /// `false` when the source has no more.
    fn refill(&self, feed: &mut Feed<'_, '_>, queue: &Mutex<Batches>) -> Result<bool, EmbedError> {
        if feed.done {
            return Ok(false);
        }
        let Some(texts) = (feed.source)()? else {
            feed.done = true;
            return Ok(false);
        };
        let first = feed.seq;
        feed.seq += texts.len() as u64;
        let mut seqs = texts
            .iter()
            .map(|t| self.tokenize(t))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| EmbedError::new(e.to_string()))?;
        let batches: Vec<Vec<(u64, Vec<u32>)>> = self
            .pack(seqs.iter().map(Vec::len))
            .into_iter()
            .map(|b| {
                b.into_iter()
                    .map(|i| (first + i as u64, std::mem::take(&mut seqs[i])))
                    .collect()
            })
            .collect();
        sync::lock(queue).extend(batches);
        Ok(true)
    }

    /// A worker's look at the queue before it takes a batch: with nothing
    /// queued it refills (or waits for whoever is refilling); with the
    /// queue running low (under `low_water`) it refills unless another
    /// worker already is. `false`: the source is done and nothing is left.
    fn top_up(
        &self,
        feed: &Mutex<Feed<'_, '_>>,
        queue: &Mutex<Batches>,
        low_water: usize,
    ) -> Result<bool, EmbedError> {
        let waiting = sync::lock(queue).len();
        if waiting == 0 {
            // Nothing to take: refill, or wait for whoever is.
            let mut f = sync::lock(feed);
            let still_empty = sync::lock(queue).is_empty();
            if still_empty {
                return self.refill(&mut f, queue);
            }
        } else if waiting < low_water
            && let Ok(mut f) = feed.try_lock()
        {
            self.refill(&mut f, queue)?;
        }
        Ok(true)
    }

    /// [`Embedder::embed_stream`] on every worker thread with no barrier
    /// between groups: the packed batches of all groups wait in one queue,
    /// and whichever worker sees it run low (fewer than two batches a
    /// thread) tokenizes and packs the next group while the others go on
    /// with theirs. A worker waits only when the queue is empty and another
    /// is still refilling it. The first error (source, tokenizer or sink)
    /// stops every worker after its current batch.
    fn stream(
        &self,
        source: &mut TextSource<'_>,
        sink: &mut EmbedSink<'_>,
    ) -> std::result::Result<(), EmbedError> {
        let threads = self.opts.threads.max(1);
        let low_water = 2 * threads;
        let feed = Mutex::new(Feed {
            source,
            seq: 0,
            done: false,
        });
        let queue: Mutex<Batches> = Mutex::new(VecDeque::new());
        let sink = Mutex::new(sink);
        let failed: Mutex<Option<EmbedError>> = Mutex::new(None);
        let stop = AtomicBool::new(false);
        let fail = |e: EmbedError| {
            sync::lock(&failed).get_or_insert(e);
            stop.store(true, Ordering::SeqCst);
        };
        let worker = || {
            let mut ws = Workspace::default();
            while !stop.load(Ordering::SeqCst) {
                match self.top_up(&feed, &queue, low_water) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(e) => {
                        fail(e);
                        break;
                    }
                }
                let Some(batch) = sync::lock(&queue).pop_front() else {
                    continue;
                };
                let refs: Vec<&[u32]> = batch.iter().map(|(_, s)| s.as_slice()).collect();
                let vecs = self.run_batch(&refs, &mut ws);
                let done: Vec<(u64, Vec<f32>)> = batch.iter().map(|(n, _)| *n).zip(vecs).collect();
                let mut sink = sync::lock(&sink);
                if let Err(e) = (*sink)(done) {
                    fail(e);
                    break;
                }
            }
        };
        if threads == 1 {
            worker();
        } else {
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(worker);
                }
            });
        }
        match sync::into_inner(failed) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Rows per packed batch in f32: the f32 GEMM gains from tall inputs (at
/// 256 rows, one chunk a batch, `bench embed --threads 2` lost 5 %,
/// EPYC-512).
pub const FP32_BATCH_TOKENS: usize = 2048;

/// Rows per packed batch in int8: about one chunk, so that a layer's
/// activations (256 × 1536 f32 after FFN-up, 1.5 MB) stay near the core
/// between the GEMM, GELU and the next layer's quantizer rather than
/// streaming through L3 at 2048 rows (12 MB). EPYC-512, alternating runs:
/// with the other core busy, `bench embed --chunks 192 --threads 1` 32.5 →
/// 34.6 chunks/s and bge-small against onnxruntime 0.86–0.88× → 0.95–0.99×;
/// quiet, bge 0.82–0.90× → 0.86–0.91×, `--threads 2` 56.1 → 60.5 chunks/s,
/// SciFact's index 77.7 → 78.6 chunks/s. On the lent 16-core Xeon (2 MB
/// L2 a core, its L3 shared by 16), MiniLM, two alternating runs each:
/// AMX 25.5, 25.9 → 44.1, 35.8 chunks/s at 1 thread, 55.7, 53.4 → 68.5,
/// 75.8 at 2, 338.8, 281.1 → 506.3, 505.9 at 16; VNNI 25.8, 25.7 → 29.0,
/// 33.9 / 48.3, 53.8 → 59.0, 59.8 / 313.7, 315.8 → 392.2, 383.4. The rows
/// of a batch are independent, so the vectors do not change.
pub const INT8_BATCH_TOKENS: usize = 256;

/// The smallest packed batch [`pack_for_threads`] makes to spread a few
/// texts over the threads: about one 256-token chunk.
const MIN_BATCH_TOKENS: usize = 256;

/// [`pack`] with batches no larger than an even share of all the tokens
/// over `threads` (but at least [`MIN_BATCH_TOKENS`]), so a few texts still
/// keep every thread busy. `bench embed --threads 2`, EPYC-512: 6 chunks
/// 15.2 → 22.5 chunks/s, 12 chunks 22.7 → 29.0; 64 chunks unchanged.
fn pack_for_threads(
    lens: impl ExactSizeIterator<Item = usize>,
    batch_tokens: usize,
    threads: usize,
) -> Vec<Vec<usize>> {
    let lens: Vec<usize> = lens.collect();
    let total: usize = lens.iter().sum();
    let share = total.div_ceil(threads.max(1)).max(MIN_BATCH_TOKENS);
    pack(lens.into_iter(), batch_tokens.min(share))
}

/// Sequences of these lengths grouped into packed batches of at most
/// `batch_tokens` rows (a longer sequence alone), longest first so that each
/// batch holds sequences of similar size: indexes into `lens`.
pub(crate) fn pack(
    lens: impl ExactSizeIterator<Item = usize>,
    batch_tokens: usize,
) -> Vec<Vec<usize>> {
    let lens: Vec<usize> = lens.collect();
    let mut order: Vec<usize> = (0..lens.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(lens[i]));
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    let mut cur_tokens = 0;
    for i in order {
        if !cur.is_empty() && cur_tokens + lens[i] > batch_tokens {
            batches.push(std::mem::take(&mut cur));
            cur_tokens = 0;
        }
        cur.push(i);
        cur_tokens += lens[i];
    }
    if !cur.is_empty() {
        batches.push(cur);
    }
    batches
}

/// The id vectors of this model and these options are stored under:
/// `name@max_tokens`, with `+int8sqo` in int8 (smoothed int8 layers with
/// their outlier channels in f32; without those channels taken out it was
/// `+int8sq`, unsmoothed `+int8`: their vectors differ). A different id
/// leaves every chunk without a vector of the model, so switching the
/// precision (like switching the model or its token budget) re-embeds the
/// index.
pub fn model_id(name: &str, opts: &MiniLmOptions) -> String {
    match opts.precision {
        Precision::Fp32 => format!("{name}@{}", opts.max_tokens),
        Precision::Int8 => format!("{name}@{}+int8sqo", opts.max_tokens),
    }
}

/// The int8 path a model asked to run in `precision` takes: the asked one,
/// else `CAIRN_INT8_KERNEL` if set, else `None` (the one that goes with the
/// kernel path); an asked path this CPU cannot run is an error.
pub(crate) fn resolve_int8_kernel(
    precision: Precision,
    asked: Option<Int8Path>,
) -> Result<Option<Int8Path>> {
    let path = match (precision, asked) {
        (Precision::Int8, None) => int8_kernel_from_env()?,
        (_, asked) => asked,
    };
    if let Some(p) = path.filter(|p| !p.supported()) {
        return Err(Error::Kernel(format!(
            "this CPU cannot run the {p} int8 path (no {})",
            p.missing_features().join(", no ")
        )));
    }
    Ok(path)
}

/// `CAIRN_INT8_KERNEL` (an [`Int8Path`] name, e.g. `avx512-vnni` to time
/// it beside `amx-int8`), if set.
fn int8_kernel_from_env() -> Result<Option<Int8Path>> {
    match std::env::var("CAIRN_INT8_KERNEL") {
        Ok(name) if !name.trim().is_empty() => Int8Path::parse(&name).map(Some).ok_or_else(|| {
            let names: Vec<&str> = Int8Path::ALL.iter().map(|p| p.name()).collect();
            Error::Kernel(format!(
                "CAIRN_INT8_KERNEL={name:?}: expected one of {}",
                names.join(", ")
            ))
        }),
        _ => Ok(None),
    }
}

/// The asked path, else `CAIRN_KERNEL`, else the fastest supported one; an
/// asked path this CPU cannot run is an error, never a crash.
pub fn resolve_kernel(asked: Option<KernelPath>) -> Result<KernelPath> {
    let asked = match asked {
        Some(p) => Some(p),
        None => match std::env::var("CAIRN_KERNEL") {
            Ok(name) if !name.trim().is_empty() => {
                Some(KernelPath::parse(&name).ok_or_else(|| {
                    Error::Kernel(format!(
                        "CAIRN_KERNEL={name:?}: expected avx512, avx2 or portable"
                    ))
                })?)
            }
            _ => None,
        },
    };
    match asked {
        Some(p) if !p.supported() => Err(Error::Kernel(format!(
            "this CPU cannot run the {p} kernels"
        ))),
        Some(p) => Ok(p),
        None => Ok(KernelPath::detect()),
    }
}

/// The part of `text` that its first `max_tokens` tokens can come from,
/// so the tokenizer never sees a 20 MB line whole (2.56 GB of RSS before
/// this cut; the tokenizer works on the whole text before it truncates).
/// A WordPiece token covers at most one word, and a word over 100
/// characters becomes one `[UNK]`: `max_tokens` × 128 characters, cut back
/// to whitespace, keep every token that truncation would keep, but for a
/// word of over 100 characters cut in its last few.
pub(crate) fn bounded_prefix(text: &str, max_tokens: usize) -> &str {
    let limit = max_tokens.saturating_mul(128).max(1024);
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind(char::is_whitespace) {
        Some(ws) if ws > end / 2 => &text[..ws],
        _ => &text[..end],
    }
}

pub(crate) fn load_tokenizer(path: &Path, max_tokens: Option<usize>) -> Result<TextTokenizer> {
    // Our own BERT tokenizer where the file has BERT's shape (2 ms where
    // the crate's takes 20); the crate's for any other file, and for the
    // error of a broken one.
    if let Some(tok) = std::fs::read(path)
        .ok()
        .and_then(|b| crate::wordpiece::read(&b, max_tokens.unwrap_or(usize::MAX)))
    {
        return Ok(TextTokenizer::Bert(tok));
    }
    let mut tok = Tokenizer::from_file(path).map_err(|e| Error::Model {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    // The shipped tokenizer.json truncates at 128 and pads to a fixed 128;
    // sentence-transformers uses 256 and no padding (we pack, never pad).
    tok.with_truncation(max_tokens.map(|max_length| TruncationParams {
        max_length,
        ..Default::default()
    }))
    .map_err(|e| Error::Model {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    tok.with_padding(None);
    Ok(TextTokenizer::Crate(Box::new(tok)))
}

/// A model's tokenizer: our own for BERT's WordPiece files
/// (`wordpiece.rs`), the `tokenizers` crate's for any other.
pub(crate) enum TextTokenizer {
    Bert(crate::wordpiece::BertWordPiece),
    Crate(Box<Tokenizer>),
}

impl TextTokenizer {
    /// The ids of `text`, with the model's special tokens around them when
    /// `specials`, truncated as loaded.
    pub(crate) fn ids(&self, text: &str, specials: bool) -> Result<Vec<u32>> {
        match self {
            TextTokenizer::Bert(t) => Ok(t.ids(text, specials)),
            TextTokenizer::Crate(t) => t
                .encode(text, specials)
                .map(|e| e.get_ids().to_vec())
                .map_err(|e| Error::Tokenizer(e.to_string())),
        }
    }

    /// The id of one token of the vocabulary.
    pub(crate) fn token_to_id(&self, token: &str) -> Option<u32> {
        match self {
            TextTokenizer::Bert(t) => t.token_to_id(token),
            TextTokenizer::Crate(t) => t.token_to_id(token),
        }
    }
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dimension(&self) -> usize {
        self.bert.hidden()
    }

    fn embed_stream(
        &self,
        source: &mut TextSource<'_>,
        sink: &mut EmbedSink<'_>,
    ) -> std::result::Result<(), EmbedError> {
        self.stream(source, sink)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let seqs = texts
            .iter()
            .map(|t| self.tokenize(t))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| EmbedError::new(e.to_string()))?;
        Ok(self.embed_tokens(&seqs))
    }

    /// A query with the model's query prefix (bge's retrieval instruction);
    /// documents are embedded without it.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let text = format!("{}{query}", self.opts.query_prefix);
        self.embed(&[text.as_str()])?
            .pop()
            .ok_or_else(|| EmbedError::new("no vector for the query"))
    }
}

/// A [`MiniLm`] loaded on its first `embed`: opening a project for a
/// command that never embeds (`status`, `graph`, a BM25 search, `recall`
/// with no vectors) then skips the ~160 ms and ~185 MB of reading and packing
/// the weights. Its id and dimension come from the location, the options
/// and `config.json`, so the index can be checked against them unloaded. A
/// model that fails to load fails each `embed` with the reason.
pub struct LazyMiniLm {
    id: String,
    dim: usize,
    location: ModelLocation,
    opts: MiniLmOptions,
    model: std::sync::OnceLock<std::result::Result<MiniLm, String>>,
}

impl LazyMiniLm {
    /// Reads `config.json` now; the weights and the tokenizer on first use.
    pub fn new(location: ModelLocation, opts: MiniLmOptions) -> Result<LazyMiniLm> {
        let cfg = BertConfig::from_file(&location.dir.join("config.json"))?;
        Ok(LazyMiniLm {
            id: model_id(&location.name, &opts),
            dim: cfg.hidden,
            location,
            opts,
            model: std::sync::OnceLock::new(),
        })
    }

    /// The model, loading it on the first call.
    pub fn get(&self) -> std::result::Result<&MiniLm, EmbedError> {
        self.model
            .get_or_init(|| {
                MiniLm::load(&self.location, self.opts.clone()).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| EmbedError::new(e.clone()))
    }
}

impl Embedder for LazyMiniLm {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn is_cold(&self) -> bool {
        self.model.get().is_none()
    }

    fn warm_up(&self) {
        // Two callers at once: the second waits for the first's load.
        let _ = self.get();
    }

    fn dimension(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        self.get()?.embed(texts)
    }

    fn embed_query(&self, query: &str) -> std::result::Result<Vec<f32>, EmbedError> {
        self.get()?.embed_query(query)
    }

    fn embed_stream(
        &self,
        source: &mut TextSource<'_>,
        sink: &mut EmbedSink<'_>,
    ) -> std::result::Result<(), EmbedError> {
        self.get()?.embed_stream(source, sink)
    }
}

#[cfg(test)]
mod lazy_tests {
    use super::*;

    /// Id and dimension come without the weights; broken weights fail each
    /// embed with the file's name, not the open.
    #[test]
    fn a_lazy_model_answers_its_id_unloaded_and_fails_embeds_with_the_reason() {
        let dir = std::env::temp_dir().join(format!("cairn-lazy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.json"),
            r#"{"hidden_size": 384, "num_attention_heads": 12, "intermediate_size": 1536,
                "num_hidden_layers": 6, "max_position_embeddings": 512}"#,
        )
        .unwrap();
        std::fs::write(dir.join("model.safetensors"), b"not a model").unwrap();
        let location = ModelLocation {
            name: "all-MiniLM-L6-v2".into(),
            dir: dir.clone(),
        };
        let lazy = LazyMiniLm::new(location, MiniLmOptions::default()).unwrap();
        assert_eq!(lazy.model_id(), "all-MiniLM-L6-v2@256");
        let int8 = MiniLmOptions {
            precision: Precision::Int8,
            ..MiniLmOptions::default()
        };
        let lazy8 = LazyMiniLm::new(lazy.location.clone(), int8).unwrap();
        assert_eq!(lazy8.model_id(), "all-MiniLM-L6-v2@256+int8sqo");
        assert_eq!(lazy.dimension(), 384);
        // Warmed on another thread: the load is tried once, and its failure
        // kept for the embeds that follow.
        assert!(lazy.is_cold());
        std::thread::scope(|s| {
            s.spawn(|| lazy.warm_up());
        });
        assert!(!lazy.is_cold());
        for _ in 0..2 {
            let err = lazy.embed(&["hello"]).unwrap_err().to_string();
            assert!(err.contains("model.safetensors"), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod prefix_tests {
    use super::bounded_prefix;

    #[test]
    fn long_texts_are_cut_at_whitespace_short_ones_kept() {
        assert_eq!(bounded_prefix("short text", 256), "short text");
        let long = "word ".repeat(20_000);
        let cut = bounded_prefix(&long, 256);
        assert!(
            cut.len() <= 256 * 128 && cut.len() > 256 * 64,
            "{}",
            cut.len()
        );
        assert!(cut.ends_with("word"), "cut between words");
        // No whitespace at all: cut at a character boundary.
        let blob = "é".repeat(40_000);
        let cut = bounded_prefix(&blob, 256);
        assert!(cut.len() <= 256 * 128 && cut.chars().all(|c| c == 'é'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_texts_are_spread_over_the_threads() {
        // 4 texts of 300 tokens fit one 2048-token batch; 4 threads get one each.
        let lens = [300usize; 4];
        assert_eq!(pack(lens.into_iter(), 2048).len(), 1);
        let batches = pack_for_threads(lens.into_iter(), 2048, 4);
        assert_eq!(batches.len(), 4);
        let mut all: Vec<usize> = batches.concat();
        all.sort_unstable();
        assert_eq!(all, vec![0, 1, 2, 3]);
        // Many texts: the configured batch size stands.
        let many = [250usize; 64];
        assert_eq!(
            pack_for_threads(many.into_iter(), 2048, 2),
            pack(many.into_iter(), 2048)
        );
        // Short texts are not cut below a chunk's worth per batch.
        let short = [10usize; 8];
        assert_eq!(pack_for_threads(short.into_iter(), 2048, 8).len(), 1);
        // One thread: unchanged.
        assert_eq!(pack_for_threads(lens.into_iter(), 2048, 1).len(), 1);
    }
}
