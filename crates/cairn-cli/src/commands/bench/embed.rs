//! `cairn bench embed`: embedding throughput per kernel path, and short-query latency.

use cairn_embed::KernelPath;

use crate::print;
use crate::progress::Bars;

pub(crate) fn run(
    chunks: usize,
    chars: usize,
    index: Option<&std::path::Path>,
    paths: &[KernelPath],
    threads: Option<usize>,
    json: bool,
    bars: &Bars,
) -> anyhow::Result<()> {
    let rows = cairn_bench::run_embed_bench(chunks, chars, index, paths, threads, bars)?;
    if json {
        return print::json(&rows);
    }
    for r in &rows {
        say!(
            "{:<8} {} chunks of {} chars ({:.0} tokens avg), {} thread(s): {:.2} chunks/s; short query median {:.2} ms",
            r.kernel,
            r.chunks,
            if index.is_some() {
                format!("~{}", r.chars_per_chunk)
            } else {
                r.chars_per_chunk.to_string()
            },
            r.avg_tokens,
            r.threads,
            r.chunks_per_sec,
            r.query_median_ms
        );
    }
    Ok(())
}
