//! `cairn bench embed`: embedding throughput per kernel path, and short-query latency.

use std::time::Instant;

use cairn_core::Embedder;
use cairn_embed::{KernelPath, MiniLm, MiniLmOptions, ModelSpec, fetch_model};

use crate::print;
use crate::progress::Bars;

pub(crate) fn run(
    chunks: usize,
    chars: usize,
    paths: &[KernelPath],
    threads: Option<usize>,
    json: bool,
    bars: &Bars,
) -> anyhow::Result<()> {
    let loc = fetch_model(&ModelSpec::MINILM_L6_V2, bars)?;
    let texts = cairn_embed::synthetic_prose(chunks.max(1), chars, 42);
    let query = "how long do sessions stay cached?";
    let mut rows = Vec::new();
    for &path in paths {
        let opts = MiniLmOptions {
            kernel: Some(path),
            threads: threads.unwrap_or(MiniLmOptions::default().threads).max(1),
            ..MiniLmOptions::default()
        };
        let threads = opts.threads;
        let model = MiniLm::load(&loc, opts)?;
        let seqs = texts
            .iter()
            .map(|t| model.tokenize(t))
            .collect::<Result<Vec<_>, _>>()?;
        let avg_tokens = seqs.iter().map(Vec::len).sum::<usize>() as f64 / seqs.len() as f64;
        model.embed_tokens(&seqs[..1]); // warm up
        let t = Instant::now();
        model.embed_tokens(&seqs);
        let secs = t.elapsed().as_secs_f64();
        let _ = model.embed(&[query]);
        let mut times: Vec<f64> = (0..50)
            .map(|_| {
                let t = Instant::now();
                let _ = model.embed(&[query]);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let row = serde_json::json!({
            "kernel": path.name(),
            "model": model.model_id(),
            "chunks": seqs.len(),
            "chars_per_chunk": chars,
            "avg_tokens": avg_tokens,
            "threads": threads,
            "seconds": secs,
            "chunks_per_sec": seqs.len() as f64 / secs,
            "query_median_ms": times[times.len() / 2],
        });
        if !json {
            println!(
                "{:<8} {} chunks of {chars} chars ({avg_tokens:.0} tokens avg), {threads} thread(s): {:.2} chunks/s; short query median {:.2} ms",
                path.name(),
                seqs.len(),
                seqs.len() as f64 / secs,
                times[times.len() / 2]
            );
        }
        rows.push(row);
    }
    if json {
        print::json(&rows)?;
    }
    Ok(())
}
