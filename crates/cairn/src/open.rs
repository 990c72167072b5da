//! One way to open a project: [`open`] / [`Open`] pick the index backend
//! (the SQLite file, or PostgreSQL when `[store] uri` says so) and the
//! embedder (local MiniLM, a remote model — OpenAI-compatible, Ollama,
//! Gemini, Voyage, Jina, Mistral — or none), both from one [`Config`]; the
//! LLM provider (`[llm]`) is read from the same config when a capture first
//! asks for it ([`Engine::llm`]).
//!
//! The CLI, the hooks, the daemon and the tests open projects through here;
//! `Engine::open*` are the lower-level doors for callers that already hold a
//! store or an embedder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_core::{Embedder, IndexWriter, Reranker, redact_uri as redact};
use cairn_embed::{
    CrossEncoderOptions, FetchProgress, KernelPath, LazyCrossEncoder, LazyMiniLm, MiniLmOptions,
    ModelKind, ModelSpec, Precision, fetch_model, locate_model, model_id, resolve_kernel,
};

use crate::{Config, EmbedProvider, Engine, Error, Result};

/// Opens the project at `root` with everything `config` asks for: its store,
/// its embedder (fetching the model on first use, silently) and its LLM
/// provider. The same as `Open::new(root, config).engine()`.
pub fn open(root: &Path, config: &Config) -> Result<Engine> {
    Open::new(root, config).engine()
}

/// How to open a project, when [`open`]'s defaults are not enough: a progress
/// bar for a first model fetch, or an embedder the caller already holds.
pub struct Open<'a> {
    root: &'a Path,
    config: &'a Config,
    progress: &'a dyn FetchProgress,
    embedder: EmbedderChoice,
}

/// Which embedder an [`Open`] gives the engine.
enum EmbedderChoice {
    /// The one `[embed]` configures (fetching the model on first use).
    Configured,
    /// This one, whatever the configuration says.
    Given(Arc<dyn Embedder>),
    /// None: BM25 only.
    Bm25Only,
}

impl<'a> Open<'a> {
    /// Opens `root` with `config`; nothing shown while a model downloads.
    pub fn new(root: &'a Path, config: &'a Config) -> Open<'a> {
        Open {
            root,
            config,
            progress: &cairn_embed::NoProgress,
            embedder: EmbedderChoice::Configured,
        }
    }

    /// Shows a first model download on `progress`.
    pub fn progress(mut self, progress: &'a dyn FetchProgress) -> Open<'a> {
        self.progress = progress;
        self
    }

    /// Uses this embedder (or none: BM25 only) instead of the configured one.
    pub fn embedder(mut self, embedder: Option<Arc<dyn Embedder>>) -> Open<'a> {
        self.embedder = match embedder {
            Some(e) => EmbedderChoice::Given(e),
            None => EmbedderChoice::Bm25Only,
        };
        self
    }

    /// The engine, on the configured store.
    pub fn engine(self) -> Result<Engine> {
        // The per-user embedding cache serves the configured model only: an
        // embedder handed in (a test's fake) keeps to the index.
        let user_cache = matches!(self.embedder, EmbedderChoice::Configured)
            .then(crate::paths::user_embedding_cache)
            .flatten();
        let (shown, store) = open_store(self.root, self.config)?;
        let embedder = match self.embedder {
            EmbedderChoice::Given(e) => Some(e),
            EmbedderChoice::Bm25Only => None,
            EmbedderChoice::Configured => embedder_for(
                self.config,
                self.progress,
                Some(&crate::paths::cairn_dir(self.root).join(DIMENSION_CACHE)),
                Some(Held {
                    index: Some(store.as_ref()),
                    user_cache: user_cache.as_deref(),
                }),
            ),
        };
        keep_out_of_git(&crate::paths::cairn_dir(self.root));
        Ok(
            Engine::open_with(self.root, shown, store, self.config.clone(), embedder)?
                .with_user_cache(user_cache, self.config.embed.user_cache_rows),
        )
    }
}

/// What `.cairn/.gitignore` says: everything in the folder is derived from
/// the project or private to this machine, but for the memories.
const CAIRN_GITIGNORE: &str = "\
# Written by cairn. Everything in .cairn/ is derived from the project or
# private to this machine (the index and its caches, the daemon's lock and
# log, the audit history), except memory/: the memories, meant to be
# committed and shared. Edit freely; cairn writes this file only when it is
# missing.
*
!.gitignore
!memory/
!memory/**
";

/// Writes `.cairn/.gitignore` when the folder exists and has none, so that
/// `git add .` never stages the index, its log or the daemon's files (a
/// user's own file is left as it is). A failure is only a warning: the
/// index works without it.
fn keep_out_of_git(dir: &Path) {
    let file = dir.join(".gitignore");
    if !dir.is_dir() || file.exists() {
        return;
    }
    if let Err(e) = crate::vault::write_atomic(&file, CAIRN_GITIGNORE) {
        tracing::warn!("{e}; .cairn/ is not kept out of git");
    }
}

/// The configured index backend for the project at `root`, with what
/// `status` shows for it (a file path, or a URI without its password).
pub fn open_store(root: &Path, config: &Config) -> Result<(PathBuf, Box<dyn IndexWriter>)> {
    let uri = config.store.uri.trim();
    if uri.is_empty() {
        let store = cairn_store::Store::open(&crate::paths::index_file(root))?;
        return Ok((store.path().to_path_buf(), Box::new(store)));
    }
    let project = store_project(root, config);
    let store = server_store(uri, &project, config)?;
    let shown = PathBuf::from(format!("{} (project {project})", redact(uri)));
    Ok((shown, store))
}

/// A store on the configured server under an explicit project name (the
/// benchmarks and evals keep their data apart from the project's own).
pub fn server_store(uri: &str, project: &str, config: &Config) -> Result<Box<dyn IndexWriter>> {
    let uri = uri.trim();
    if !(uri.starts_with("postgres://") || uri.starts_with("postgresql://")) {
        return Err(Error::UnknownBackend { uri: redact(uri) });
    }
    postgres_store(uri, project, config)
}

#[cfg(feature = "postgres")]
fn postgres_store(uri: &str, project: &str, config: &Config) -> Result<Box<dyn IndexWriter>> {
    let store =
        cairn_postgres::PgStore::connect(uri, project).map_err(|source| Error::Backend {
            uri: redact(uri),
            source,
        })?;
    Ok(Box::new(
        store
            .with_ef_search(config.store.ef_search)
            .with_exact_scan_max(config.store.exact_scan_max)
            .with_bm25_cut(config.store.bm25_cut),
    ))
}

#[cfg(not(feature = "postgres"))]
fn postgres_store(uri: &str, _: &str, _: &Config) -> Result<Box<dyn IndexWriter>> {
    Err(Error::BackendNotBuilt { uri: redact(uri) })
}

/// The project's name in a shared store: `[store] project`, else the root
/// folder's name.
fn store_project(root: &Path, config: &Config) -> String {
    let named = config.store.project.trim();
    if !named.is_empty() {
        return named.to_string();
    }
    root.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "project".into())
}

/// The file in `.cairn/` that remembers each remote model's vector length,
/// so that a process with nothing to embed asks the model nothing.
const DIMENSION_CACHE: &str = "embed-dimensions.json";

/// The configured embedder, fetching the model on first use; `None` (with one
/// warning) when it cannot be had, so search falls back to BM25. A remote
/// model opened here learns its vector length anew in each process (from
/// its first answer); [`Open`] keeps it in the project's `.cairn/`.
/// With no index to follow, `[embed] precision = "auto"` is the faster
/// precision on this CPU, as for a new index.
pub fn load_embedder(config: &Config, progress: &dyn FetchProgress) -> Option<Arc<dyn Embedder>> {
    embedder_for(config, progress, None, None)
}

/// Where vectors a model was already run for are kept: what `auto`
/// precision keeps to ([`precision_for`]).
#[derive(Clone, Copy)]
pub(crate) struct Held<'a> {
    /// The project's index, when it has one.
    pub index: Option<&'a dyn IndexWriter>,
    /// The per-user embedding cache file, when it is used.
    pub user_cache: Option<&'a Path>,
}

/// [`load_embedder`], a remote model keeping its vector length in `cache`,
/// a local one in the precision of the vectors already `held`
/// ([`precision_for`]).
fn embedder_for(
    config: &Config,
    progress: &dyn FetchProgress,
    cache: Option<&Path>,
    held: Option<Held<'_>>,
) -> Option<Arc<dyn Embedder>> {
    let model = config.embed.model.as_str();
    if model == "none" {
        return None;
    }
    match config.embed.provider {
        EmbedProvider::Local => local_embedder(config, progress, held),
        EmbedProvider::None => None,
        EmbedProvider::Remote(api) => remote_embedder(api, config, cache),
    }
}

/// The local MiniLM, fetched on first use when `auto_fetch` allows it;
/// `None` (with one warning) when it cannot be had.
fn local_embedder(
    config: &Config,
    progress: &dyn FetchProgress,
    held: Option<Held<'_>>,
) -> Option<Arc<dyn Embedder>> {
    let model = config.embed.model.as_str();
    let Some(spec) = ModelSpec::named(model).filter(|m| m.kind == ModelKind::Embedder) else {
        let known = ModelSpec::names_of(ModelKind::Embedder);
        tracing::warn!(
            "unknown model {model:?} in [embed] model (local models: {}); searching with BM25 only",
            known.join(", ")
        );
        return None;
    };
    let located = match locate_model(&spec) {
        Ok(Some(l)) => Ok(l),
        Ok(None) if config.embed.auto_fetch => {
            // Said to the progress display, which shows it even when
            // quiet: a first fetch takes a while and a user should know why.
            progress.note(&format!(
                "fetching the embedding model {} (first use)…",
                spec.name
            ));
            fetch_model(&spec, progress)
        }
        Ok(None) => {
            tracing::warn!(
                "model {} is not cached and auto_fetch is off: run `cairn model fetch`; BM25 only",
                spec.name
            );
            return None;
        }
        Err(e) => Err(e),
    };
    // The model's pooling and query prefix; the token budget is the
    // setting's (256 by default for every model: bge reads up to 512, at
    // twice the time per chunk).
    let opts = MiniLmOptions {
        max_tokens: config.embed.max_tokens,
        threads: if config.embed.threads == 0 {
            MiniLmOptions::default().threads
        } else {
            config.embed.threads
        },
        precision: precision_for(config, &spec, held).precision,
        ..MiniLmOptions::for_model(&spec)
    };
    // Loaded on first use: a command that never embeds does not pay for it.
    match located.and_then(|l| LazyMiniLm::new(l, opts)) {
        Ok(m) => Some(Arc::new(m)),
        Err(e) => {
            tracing::warn!("embedding model unavailable, searching with BM25 only: {e}");
            None
        }
    }
}

/// The cross-encoder for `[search] rerank` (loaded on its first score),
/// fetched now when it is not cached and `[embed] auto_fetch` allows;
/// `None`, with one warning, when it cannot be had (searches then keep
/// their fused order).
pub(crate) fn load_reranker(config: &Config) -> Option<Arc<dyn Reranker>> {
    let spec = ModelSpec::MS_MARCO_MINILM_L12_V2_INT8DQ;
    let located = match locate_model(&spec) {
        Ok(Some(l)) => Ok(l),
        Ok(None) if config.embed.auto_fetch => {
            tracing::warn!("fetching the reranker model {} (first use)…", spec.name);
            fetch_model(&spec, &cairn_embed::NoProgress)
        }
        Ok(None) => {
            tracing::warn!(
                "reranker {} is not cached and auto_fetch is off: run `cairn model fetch --model {}`; searching without reranking",
                spec.name,
                spec.name
            );
            return None;
        }
        Err(e) => Err(e),
    };
    let opts = CrossEncoderOptions {
        threads: if config.embed.threads == 0 {
            CrossEncoderOptions::default().threads
        } else {
            config.embed.threads
        },
        precision: rerank_precision(config).precision,
        ..CrossEncoderOptions::default()
    };
    match located.and_then(|l| LazyCrossEncoder::new(&spec, l, opts)) {
        Ok(m) => Some(Arc::new(m)),
        Err(e) => {
            tracing::warn!("reranker unavailable, searching without reranking: {e}");
            None
        }
    }
}

/// The faster precision on this CPU, with the f32 kernels a model gets
/// (`CAIRN_KERNEL`, else the fastest; one it cannot run fails the load
/// itself, with its reason).
fn fastest_precision() -> Precision {
    Precision::fastest(resolve_kernel(None).unwrap_or_else(|_| KernelPath::detect()))
}

/// The precision the local model `spec` runs in by `[embed] precision`.
/// `auto` keeps to the vectors already `held` of the model: an index built
/// in fp32 stays fp32 (nothing is re-embedded by an upgrade), and every
/// machine writing a shared index keeps to the precision of the first. An
/// index with none of them takes the user cache's side the same way, so a
/// new worktree or clone of a project indexed in fp32 takes its vectors
/// from the cache instead of embedding anew. With neither (or nothing
/// held) it gets the faster precision on this CPU: int8 where it has
/// integer dot products, fp32 elsewhere.
pub(crate) fn precision_for(
    config: &Config,
    spec: &ModelSpec,
    held: Option<Held<'_>>,
) -> PrecisionChoice {
    let choice = |precision, why| PrecisionChoice { precision, why };
    if let Some(p) = config.embed.precision.fixed() {
        return choice(p, PrecisionWhy::Setting);
    }
    let fastest = fastest_precision();
    let Some(held) = held else {
        return choice(fastest, PrecisionWhy::Cpu);
    };
    let id = |precision: Precision| {
        let opts = MiniLmOptions {
            max_tokens: config.embed.max_tokens,
            precision,
            ..MiniLmOptions::for_model(spec)
        };
        model_id(spec.name, &opts)
    };
    let other = match fastest {
        Precision::Fp32 => Precision::Int8,
        Precision::Int8 => Precision::Fp32,
    };
    let in_index = |precision: Precision| {
        let id = id(precision);
        held.index.is_some_and(|index| {
            index.has_vectors(&id).unwrap_or_else(|e| {
                tracing::warn!("{e}; reading the index's vectors of {id} as none");
                false
            })
        })
    };
    if in_index(fastest) {
        return choice(fastest, PrecisionWhy::Index);
    }
    if in_index(other) {
        return choice(other, PrecisionWhy::Index);
    }
    // A new index: the user cache's side, read only when it exists.
    let cache = held
        .user_cache
        .filter(|p| config.embed.user_cache_rows > 0 && p.is_file())
        .and_then(|p| cairn_store::UserCache::open(p, config.embed.user_cache_rows).ok());
    let in_cache = |precision: Precision| {
        cache
            .as_ref()
            .is_some_and(|c| c.has_model(&id(precision)).unwrap_or(false))
    };
    if !in_cache(fastest) && in_cache(other) {
        choice(other, PrecisionWhy::UserCache)
    } else {
        choice(fastest, PrecisionWhy::Cpu)
    }
}

/// Which precision a local model runs in, and why ([`embed_precision`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrecisionChoice {
    /// The precision.
    pub precision: Precision,
    /// What chose it.
    pub why: PrecisionWhy,
}

/// What chose a model's precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecisionWhy {
    /// `[embed] precision` (or `[search] rerank_precision`) names it.
    Setting,
    /// `auto`: the index's vectors of the model are in it.
    Index,
    /// `auto`: the user embedding cache holds the model's vectors in it only.
    UserCache,
    /// `auto`: the faster one on this CPU.
    Cpu,
}

impl PrecisionWhy {
    /// In words, for `cairn model status`.
    pub fn says(self) -> &'static str {
        match self {
            PrecisionWhy::Setting => "named in the settings",
            PrecisionWhy::Index => "auto: kept to this index's vectors",
            PrecisionWhy::UserCache => "auto: kept to the vectors in the user embedding cache",
            PrecisionWhy::Cpu => "auto: the faster on this CPU",
        }
    }
}

/// The precision the local model `spec` runs in for the project at
/// `root`, as [`Open`] would give it (`cairn model status`): the index is
/// read only when one exists.
pub fn embed_precision(root: &Path, config: &Config, spec: &ModelSpec) -> Result<PrecisionChoice> {
    if config.embed.precision.fixed().is_some() {
        return Ok(precision_for(config, spec, None));
    }
    let has_index = !config.store.uri.trim().is_empty() || crate::paths::index_file(root).is_file();
    let store = has_index.then(|| open_store(root, config)).transpose()?;
    let user_cache = crate::paths::user_embedding_cache();
    Ok(precision_for(
        config,
        spec,
        Some(Held {
            index: store.as_ref().map(|(_, s)| s.as_ref()),
            user_cache: user_cache.as_deref(),
        }),
    ))
}

/// The precision the reranker runs in by `[search] rerank_precision`
/// (`auto`: the faster on this CPU).
pub fn rerank_precision(config: &Config) -> PrecisionChoice {
    match config.search.rerank_precision.fixed() {
        Some(precision) => PrecisionChoice {
            precision,
            why: PrecisionWhy::Setting,
        },
        None => PrecisionChoice {
            precision: fastest_precision(),
            why: PrecisionWhy::Cpu,
        },
    }
}

/// A remote embedding model (`[embed] provider` names its API). Nothing is
/// asked of it here: a process with nothing to embed never reaches it, and
/// an endpoint that is down shows in the first embedding's error. `None`,
/// with one warning, when its key is not in the environment.
fn remote_embedder(
    api: cairn_llm::EmbedApi,
    config: &Config,
    cache: Option<&Path>,
) -> Option<Arc<dyn Embedder>> {
    let e = &config.embed;
    // The key's variable: the one named, else the API's usual one (none for
    // a local Ollama, nor for an OpenAI-compatible server of one's own).
    let key_env = if !e.api_key_env.is_empty() {
        Some(e.api_key_env.as_str())
    } else if api == cairn_llm::EmbedApi::OpenAi && !e.base_url.trim().is_empty() {
        None
    } else {
        api.default_key_env()
    };
    let api_key = match key_env.map(|var| (var, std::env::var(var))) {
        None => String::new(),
        Some((_, Ok(key))) if !key.trim().is_empty() => key.trim().to_string(),
        Some((var, _)) => {
            tracing::warn!(
                "[embed] provider {} reads its key from {var}, which is not set \
                 (or name another variable in [embed] api_key_env); BM25 only",
                api.name()
            );
            return None;
        }
    };
    // The local model's name means "not chosen": the API's usual model.
    let model = match e.model.trim() {
        "" => api.default_model(),
        m if m == ModelSpec::MINILM_L6_V2.name => api.default_model(),
        m => m,
    };
    Some(Arc::new(cairn_llm::RemoteEmbedder::new(
        cairn_llm::EmbedOptions {
            api,
            base_url: e.base_url.clone(),
            model: model.to_string(),
            api_key,
            timeout: std::time::Duration::from_secs(60),
            dimension_cache: cache.map(Path::to_path_buf),
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::WriteBatch;

    /// Vectors of `spec` in `precision`, as an index built with it holds them.
    fn hold(store: &mut cairn_store::Store, spec: &ModelSpec, precision: Precision) {
        let opts = MiniLmOptions {
            precision,
            ..MiniLmOptions::for_model(spec)
        };
        let batch = WriteBatch {
            changes: Vec::new(),
            model: Some((model_id(spec.name, &opts), 3)),
            embeddings: vec![("a-text-hash".into(), vec![1.0, 0.0, 0.0])],
        };
        store.write(&batch).expect("write vectors");
    }

    fn index(store: &cairn_store::Store) -> Option<Held<'_>> {
        Some(Held {
            index: Some(store),
            user_cache: None,
        })
    }

    #[test]
    fn auto_precision_keeps_to_the_vectors_an_index_holds() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut store = cairn_store::Store::open(&tmp.path().join("index.sqlite")).expect("store");
        let spec = ModelSpec::named("all-MiniLM-L6-v2").expect("the default model");
        let config = Config::default();
        assert_eq!(config.embed.precision, crate::EmbedPrecision::Auto);
        let fastest = fastest_precision();
        let other = match fastest {
            Precision::Fp32 => Precision::Int8,
            Precision::Int8 => Precision::Fp32,
        };
        // No index, or one with no vectors: the faster one on this CPU.
        let of = |precision, why| PrecisionChoice { precision, why };
        assert_eq!(
            precision_for(&config, &spec, None),
            of(fastest, PrecisionWhy::Cpu)
        );
        assert_eq!(
            precision_for(&config, &spec, index(&store)),
            of(fastest, PrecisionWhy::Cpu)
        );
        // An index built in the other precision stays in it (no re-embed).
        hold(&mut store, &spec, other);
        assert_eq!(
            precision_for(&config, &spec, index(&store)),
            of(other, PrecisionWhy::Index)
        );
        // Vectors of another model say nothing about this one.
        let bge = ModelSpec::named("bge-small-en-v1.5-int8dq").expect("bge");
        assert_eq!(
            precision_for(&config, &bge, index(&store)).precision,
            fastest
        );
        // Holding both: the faster.
        hold(&mut store, &spec, fastest);
        assert_eq!(
            precision_for(&config, &spec, index(&store)),
            of(fastest, PrecisionWhy::Index)
        );
        // A precision named in the settings is taken as it is.
        for (setting, want) in [
            (crate::EmbedPrecision::Fp32, Precision::Fp32),
            (crate::EmbedPrecision::Int8, Precision::Int8),
        ] {
            let mut named = config.clone();
            named.embed.precision = setting;
            for held in [index(&store), None] {
                let got = precision_for(&named, &spec, held);
                assert_eq!(got, of(want, PrecisionWhy::Setting));
            }
        }
    }

    #[test]
    fn a_new_index_takes_the_user_caches_side() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store = cairn_store::Store::open(&tmp.path().join("index.sqlite")).expect("store");
        let cache_file = tmp.path().join("embeddings.sqlite");
        let spec = ModelSpec::named("all-MiniLM-L6-v2").expect("the default model");
        let fastest = fastest_precision();
        let other = match fastest {
            Precision::Fp32 => Precision::Int8,
            Precision::Int8 => Precision::Fp32,
        };
        let id = |precision: Precision| {
            let opts = MiniLmOptions {
                precision,
                ..MiniLmOptions::for_model(&spec)
            };
            model_id(spec.name, &opts)
        };
        let pick = |config: &Config| {
            precision_for(
                config,
                &spec,
                Some(Held {
                    index: Some(&store),
                    user_cache: Some(&cache_file),
                }),
            )
        };
        let of = |precision, why| PrecisionChoice { precision, why };
        let config = Config::default();
        // No cache file yet: the faster one, and no file is made.
        assert_eq!(pick(&config), of(fastest, PrecisionWhy::Cpu));
        assert!(!cache_file.exists());
        // The user's vectors so far are the other precision's: a new
        // worktree or clone keeps to them (and takes them from the cache).
        let mut cache = cairn_store::UserCache::open(&cache_file, 100).expect("cache");
        let vector = || vec![("a-text-hash".to_string(), vec![1.0, 0.0, 0.0])];
        cache.put(&id(other), &vector()).expect("put");
        assert_eq!(pick(&config), of(other, PrecisionWhy::UserCache));
        // With the cache turned off it is not read.
        let mut off = config.clone();
        off.embed.user_cache_rows = 0;
        assert_eq!(pick(&off), of(fastest, PrecisionWhy::Cpu));
        // Both precisions in the cache: the faster.
        cache.put(&id(fastest), &vector()).expect("put");
        assert_eq!(pick(&config), of(fastest, PrecisionWhy::Cpu));
    }
}
