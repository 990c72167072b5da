//! `cairn status`: files, chunks, embedded chunks, model, index size, last pass.

use cairn::Engine;

use crate::args::StatusArgs;
use crate::print;

pub(crate) fn run(engine: &Engine, a: &StatusArgs) -> anyhow::Result<()> {
    let status = engine.status()?;
    if a.json {
        print::json(&status)
    } else {
        print::status(&status);
        Ok(())
    }
}
