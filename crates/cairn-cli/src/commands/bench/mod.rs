//! `cairn bench …`: measure this machine — embedding, recall, MCP, the graph,
//! vector search at scale, concurrent writers.

mod embed;
mod mcp;
mod recall;
mod vectors;
mod writers;

use std::path::Path;

use anyhow::{Context, bail};
use cairn::Engine;
use cairn_embed::{KernelPath, ModelSpec, Precision};

use crate::args::{BenchWhat, Cli};
use crate::print;
use crate::progress::Bars;
use crate::project::{load_config, open_engine, project_root};

pub(crate) fn run(cli: &Cli, what: &BenchWhat, bars: &Bars) -> anyhow::Result<()> {
    match what {
        BenchWhat::Recall {
            memories,
            queries,
            json,
        } => recall::run(*memories, *queries, *json, bars),
        BenchWhat::Mcp(args) => mcp::run(&project_root(cli)?, args),
        BenchWhat::Graph {
            edges,
            queries,
            json,
        } => {
            let b = cairn_bench::run_graph_bench(*edges, (*queries).max(1));
            if *json {
                return print::json(&b);
            }
            print::graph_bench(&b);
            Ok(())
        }
        BenchWhat::Writer { writer, memories } => {
            let engine = open_engine(cli, bars, false)?;
            writers::child(&engine, *writer, *memories)
        }
        BenchWhat::Writers {
            processes,
            memories,
            json,
        } => {
            let uri = load_config(cli, &project_root(cli)?)?.store.uri;
            if uri.trim().is_empty() {
                bail!("bench writers needs a shared store: --store postgres://user@host/db");
            }
            let open = |dir: &Path, project: &str| -> anyhow::Result<Engine> {
                let mut config = load_config(cli, dir)?;
                config.store.project = project.to_string();
                Ok(cairn::Open::new(dir, &config).progress(bars).engine()?)
            };
            let b = writers::run(uri.trim(), (*processes).max(1), *memories, &cli.sets, &open)?;
            if *json {
                return print::json(&b);
            }
            writers::print(&b);
            Ok(())
        }
        BenchWhat::Vectors {
            vectors,
            queries,
            planted,
            dim,
            json,
        } => {
            let opts = cairn_bench::VectorBenchOptions {
                vectors: *vectors,
                queries: *queries,
                planted: *planted,
                dim: *dim,
                k: 10,
            };
            vectors::run(cli, &opts, *json, bars)
        }
        BenchWhat::Embed {
            chunks,
            chars,
            index,
            texts,
            kernel,
            model,
            precision,
            threads,
            json,
        } => {
            let paths = match kernel {
                Some(name) => vec![
                    KernelPath::parse(name).with_context(|| format!("unknown kernel {name:?}"))?,
                ],
                None => KernelPath::available(),
            };
            let precisions =
                match precision.as_str() {
                    "both" => vec![Precision::Fp32, Precision::Int8],
                    name => vec![Precision::parse(name).with_context(|| {
                        format!("unknown precision {name:?} (fp32, int8 or both)")
                    })?],
                };
            let Some(model) = ModelSpec::named(model) else {
                let known: Vec<&str> = ModelSpec::ALL.iter().map(|m| m.name).collect();
                bail!(
                    "no local model {model:?}: the local models are {}",
                    known.join(", ")
                );
            };
            let opts = cairn_bench::EmbedBenchOptions {
                chunks: *chunks,
                chars: *chars,
                index: index.as_deref(),
                texts: texts.as_deref(),
                model,
                paths: &paths,
                precisions: &precisions,
                threads: *threads,
            };
            embed::run(&opts, *json, bars)
        }
    }
}
