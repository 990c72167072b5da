//! `cairn export` and `cairn import`: the index and the memory files as JSON Lines.

use anyhow::Context;
use cairn::Engine;

use crate::args::{ExportArgs, ImportArgs};
use crate::print;

pub(crate) fn export(engine: &Engine, a: &ExportArgs) -> anyhow::Result<()> {
    let t = match &a.output {
        Some(path) => {
            // Written beside the target and renamed: a failed export leaves
            // any earlier file as it was.
            let tmp = path.with_extension("jsonl.tmp");
            let file =
                std::fs::File::create(&tmp).with_context(|| format!("create {}", tmp.display()))?;
            let mut w = std::io::BufWriter::new(file);
            let t = engine.export(&mut w, a.vectors)?;
            drop(w);
            std::fs::rename(&tmp, path).with_context(|| format!("rename to {}", path.display()))?;
            t
        }
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            engine.export(&mut w, a.vectors)?
        }
    };
    tell!(
        "exported {} documents ({} chunks, {} links), {} memory files, {} vectors",
        t.documents,
        t.chunks,
        t.links,
        t.memories,
        t.vectors
    );
    Ok(())
}

pub(crate) fn import(engine: &Engine, a: &ImportArgs) -> anyhow::Result<()> {
    let file = &a.file;
    let t = if file.as_os_str() == "-" {
        let stdin = std::io::stdin();
        engine.import(&mut stdin.lock(), "-")?
    } else {
        let f = std::fs::File::open(file).with_context(|| format!("open {}", file.display()))?;
        engine.import(&mut std::io::BufReader::new(f), &file.display().to_string())?
    };
    if a.json {
        print::json(&t)
    } else {
        print::imported(&t);
        Ok(())
    }
}
