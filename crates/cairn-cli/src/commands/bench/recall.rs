//! `cairn bench recall`: `recall` latency over N synthetic memories.

use cairn_embed::cache_root;

use crate::print;
use crate::progress::Bars;

pub(crate) fn run(n: usize, queries: usize, json: bool, bars: &Bars) -> anyhow::Result<()> {
    let dir = cache_root()?.join("bench").join(format!("recall-{n}"));
    let r = cairn_bench::run_recall_bench(&dir, n, queries, bars)?;
    if json {
        return print::json(&r);
    }
    say!(
        "recall over {n} memories ({} recalls, each query new, limit 5): p50 {:.1} ms, p95 {:.1} ms",
        r.recalls,
        r.p50_ms,
        r.p95_ms
    );
    Ok(())
}
