//! `cairn index [PATHS…]`: scan, chunk, embed and store; incremental on re-run.

use std::path::PathBuf;

use anyhow::Context;
use cairn::Engine;

use crate::args::IndexArgs;
use crate::print;
use crate::progress::Bars;

pub(crate) fn run(engine: &Engine, a: &IndexArgs, bars: &Bars) -> anyhow::Result<()> {
    let roots: Vec<PathBuf> = if a.paths.is_empty() {
        engine
            .config()
            .index
            .roots
            .iter()
            .map(|r| engine.root().join(r))
            .collect()
    } else {
        let cwd = std::env::current_dir().context("current folder")?;
        a.paths.iter().map(|p| cwd.join(p)).collect()
    };
    let report = engine.index(&roots, bars)?;
    if a.json {
        print::json(&report)
    } else {
        // `-q`: errors only.
        if !bars.quiet() {
            print::index_report(&report, engine.embedder().is_some());
        }
        Ok(())
    }
}
