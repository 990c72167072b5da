//! `cairn bench embed`: embedding throughput per kernel path, and short-query latency.

use crate::print;
use crate::progress::Bars;

pub(crate) fn run(
    opts: &cairn_bench::EmbedBenchOptions<'_>,
    json: bool,
    bars: &Bars,
) -> anyhow::Result<()> {
    let rows = cairn_bench::run_embed_bench(opts, bars)?;
    if json {
        return print::json(&rows);
    }
    let given = opts.index.is_some() || opts.texts.is_some();
    for r in &rows {
        let kernel = match &r.int8_kernel {
            Some(k) => format!("{} int8 ({k})", r.kernel),
            None => format!("{} {}", r.kernel, r.precision),
        };
        say!(
            "{} {kernel:<24} {} chunks of {} chars ({:.0} tokens avg), {} thread(s): {:.2} chunks/s; short query median {:.2} ms",
            r.model,
            r.chunks,
            if given {
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
