//! `cairn model fetch | status`: a local model's files, kernel path and
//! precision (the embedding model, or with `--model
//! ms-marco-minilm-l12-v2-int8dq` the reranker).

use cairn_core::{Embedder, Reranker};
use cairn_embed::{
    CrossEncoder, CrossEncoderOptions, Int8Path, KernelPath, MiniLm, MiniLmOptions, ModelKind,
    ModelSpec, Precision, fetch_model, locate_model, resolve_kernel,
};

use crate::args::{Cli, ModelAction};
use crate::print;
use crate::progress::Bars;
use crate::project::{load_config, project_root};

/// The precision this folder's configuration (with `--set`) gives the
/// model `spec`: `[embed] precision` for an embedder (`auto` as this
/// project's index decides it), `[search] rerank_precision` for the
/// reranker.
fn configured_precision(cli: &Cli, spec: &ModelSpec) -> anyhow::Result<cairn::PrecisionChoice> {
    let root = project_root(cli)?;
    let config = load_config(cli, &root)?;
    Ok(match spec.kind {
        ModelKind::Embedder => cairn::embed_precision(&root, &config, spec)?,
        ModelKind::CrossEncoder => cairn::rerank_precision(&config),
    })
}

pub(crate) fn run(cli: &Cli, action: &ModelAction, bars: &Bars) -> anyhow::Result<()> {
    let name = match action {
        ModelAction::Fetch { model } | ModelAction::Status { model, .. } => model,
    };
    let Some(spec) = ModelSpec::named(name) else {
        let known: Vec<&str> = ModelSpec::ALL.iter().map(|m| m.name).collect();
        anyhow::bail!(
            "no local model {name:?}: the local models are {}",
            known.join(", ")
        );
    };
    match action {
        ModelAction::Fetch { .. } => {
            let loc = fetch_model(&spec, bars)?;
            say!("model {} ready in {}", spec.name, loc.dir.display());
        }
        ModelAction::Status { json, .. } => {
            let chosen = configured_precision(cli, &spec)?;
            let precision = chosen.precision;
            let loc = locate_model(&spec)?;
            let opts = MiniLmOptions {
                precision,
                ..MiniLmOptions::for_model(&spec)
            };
            let loaded = loc.as_ref().map(|l| match spec.kind {
                ModelKind::Embedder => {
                    MiniLm::load(l, opts.clone()).map(|m| m.model_id().to_string())
                }
                ModelKind::CrossEncoder => CrossEncoder::load(
                    l,
                    CrossEncoderOptions {
                        precision,
                        ..CrossEncoderOptions::default()
                    },
                )
                .map(|m| m.model_id().to_string()),
            });
            // Which kernel path an embedder loaded now would run (CAIRN_KERNEL
            // included), and every path this CPU can run.
            let kernel = resolve_kernel(None).map_err(|e| e.to_string());
            let runs: Vec<&str> = KernelPath::available().iter().map(|p| p.name()).collect();
            // In int8, the integer path that goes with that kernel path.
            let int8 = match (precision, &kernel) {
                (Precision::Int8, Ok(p)) => Some(Int8Path::for_kernel(*p)),
                _ => None,
            };
            let runs_int8: Vec<&str> = Int8Path::ALL
                .iter()
                .filter(|p| p.supported())
                .map(|p| p.name())
                .collect();
            let value = serde_json::json!({
                "model": spec.name,
                "kind": match spec.kind {
                    ModelKind::Embedder => "embedder",
                    ModelKind::CrossEncoder => "reranker",
                },
                "licence": spec.licence,
                "kernel": kernel.as_ref().ok().map(|p| p.name()),
                "kernel_error": kernel.as_ref().err(),
                "kernels_this_cpu_runs": runs,
                "precision": precision.name(),
                "precision_why": chosen.why.says(),
                "int8_kernel": int8.map(Int8Path::name),
                "int8_kernels_this_cpu_runs": runs_int8,
                "dir": loc.as_ref().map(|l| l.dir.clone()),
                "present": loc.is_some(),
                "loads": matches!(loaded, Some(Ok(_))),
                "model_id": loaded.as_ref().and_then(|r| r.as_ref().ok().cloned()),
                "error": loaded.as_ref().and_then(|r| r.as_ref().err().map(|e| e.to_string())),
            });
            if *json {
                print::json(&value)?;
            } else {
                match &kernel {
                    Ok(p) => say!("kernel {p} (this CPU runs: {})", runs.join(", ")),
                    Err(e) => say!("kernel: {e}"),
                }
                let why = chosen.why.says();
                match int8 {
                    Some(p) => say!(
                        "precision int8 ({why}): linear layers on {p} (this CPU runs: {})",
                        runs_int8.join(", ")
                    ),
                    None => say!("precision {precision} ({why})"),
                }
                match (&loc, &loaded) {
                    (None, _) => say!(
                        "model {}: not downloaded (run `cairn model fetch --model {}`)",
                        spec.name,
                        spec.name
                    ),
                    (Some(l), Some(Ok(id))) => {
                        say!("model {}: ready ({id}) in {}", spec.name, l.dir.display());
                        say!("licence: {}", spec.licence)
                    }
                    (Some(l), Some(Err(e))) => say!(
                        "model {}: present in {} but does not load: {e}",
                        spec.name,
                        l.dir.display()
                    ),
                    (Some(l), None) => say!("model {}: in {}", spec.name, l.dir.display()),
                }
            }
        }
    }
    Ok(())
}
