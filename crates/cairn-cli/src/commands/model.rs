//! `cairn model fetch | status`: a local model's files and kernel path (the
//! embedding model, or with `--model ms-marco-minilm-l12-v2-int8dq` the
//! reranker).

use cairn_core::{Embedder, Reranker};
use cairn_embed::{
    CrossEncoder, CrossEncoderOptions, KernelPath, MiniLm, MiniLmOptions, ModelKind, ModelSpec,
    fetch_model, locate_model, resolve_kernel,
};

use crate::args::ModelAction;
use crate::print;
use crate::progress::Bars;

pub(crate) fn run(action: &ModelAction, bars: &Bars) -> anyhow::Result<()> {
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
            let loc = locate_model(&spec)?;
            let loaded = loc.as_ref().map(|l| match spec.kind {
                ModelKind::Embedder => MiniLm::load(l, MiniLmOptions::for_model(&spec))
                    .map(|m| m.model_id().to_string()),
                ModelKind::CrossEncoder => CrossEncoder::load(l, CrossEncoderOptions::default())
                    .map(|m| m.model_id().to_string()),
            });
            // Which kernel path an embedder loaded now would run (CAIRN_KERNEL
            // included), and every path this CPU can run.
            let kernel = resolve_kernel(None).map_err(|e| e.to_string());
            let runs: Vec<&str> = KernelPath::available().iter().map(|p| p.name()).collect();
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
