//! `cairn bench recall`: `recall` latency over N synthetic memories.

use std::time::Instant;

use anyhow::{Context, bail};
use cairn::Config;
use cairn_embed::cache_root;

use crate::print;
use crate::progress::Bars;

pub(crate) fn run(n: usize, queries: usize, json: bool, bars: &Bars) -> anyhow::Result<()> {
    let dir = cache_root()?.join("bench").join(format!("recall-{n}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let config = Config::default();
    let engine = cairn::Open::new(&dir, &config).progress(bars).engine()?;
    let have = engine.status()?.files as usize;
    if have != n {
        if have > 0 {
            bail!(
                "{} holds {have} memories, not {n}: delete it to rebuild",
                dir.display()
            );
        }
        let t = Instant::now();
        let inputs: Vec<cairn::MemoryInput> = cairn_embed::synthetic_prose(n, 160, 11)
            .into_iter()
            .enumerate()
            .map(|(i, text)| cairn::MemoryInput {
                text: format!("{text} (note {i})"),
                kind: Some("fact".into()),
                importance: Some((i % 10 + 1) as u8),
                client: "bench".into(),
                ..cairn::MemoryInput::default()
            })
            .collect();
        engine.import_memories(&inputs, bars)?;
        eprintln!("built {n} memories in {:.1} s", t.elapsed().as_secs_f64());
    }
    let qs = cairn_embed::synthetic_prose(queries.max(1), 60, 97);
    let mut times: Vec<f64> = Vec::with_capacity(qs.len());
    for q in &qs {
        let t = Instant::now();
        engine.recall(q, &cairn::RecallOptions::default())?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    let report = serde_json::json!({
        "memories": n,
        "recalls": times.len(),
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "model": engine.embedder().map(|e| e.model_id().to_string()),
    });
    if json {
        print::json(&report)?;
    } else {
        println!(
            "recall over {n} memories ({} recalls, each query new, limit 5): p50 {:.1} ms, p95 {:.1} ms",
            times.len(),
            pct(0.5),
            pct(0.95)
        );
    }
    Ok(())
}
