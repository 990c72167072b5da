//! `cairn bench vectors`: nearest-neighbour search at scale on the current store.

use anyhow::Context;
use cairn_embed::cache_root;

use crate::args::Cli;
use crate::print;
use crate::progress::Bars;
use crate::project::load_config;

pub(crate) fn run(
    cli: &Cli,
    o: &cairn_bench::VectorBenchOptions,
    json: bool,
    bars: &Bars,
) -> anyhow::Result<()> {
    let root = std::env::current_dir().context("current folder")?;
    let config = load_config(cli, &root)?;
    let uri = config.store.uri.trim().to_string();
    let store: Box<dyn cairn_core::IndexWriter> = if uri.is_empty() {
        let dir = cache_root()?.join("bench");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        cairn_bench::sqlite_writer(&dir.join(format!("vectors-{}.sqlite", o.corpus_name())))?
    } else {
        let project = format!("bench-vectors-{}", o.corpus_name());
        cairn::server_store(&uri, &project, &config)?
    };
    let b = cairn_bench::run_vector_bench(store, o, bars)?;
    if json {
        return print::json(&b);
    }
    say!("store        {}", b.store);
    say!(
        "corpus       {} vectors × {} dims, {} queries, top {}",
        b.vectors,
        b.dim,
        b.queries,
        b.k
    );
    say!(
        "search       {}",
        if b.backend_index {
            "the backend's vector index (HNSW)"
        } else {
            "exact scan of the matrix loaded in memory"
        }
    );
    say!("load         {:.1} s", b.load_s);
    say!("index build  {:.1} s", b.build_s);
    say!("first query  {:.2} s", b.first_query_s);
    say!("recall@{}    {:.4}", b.k, b.recall_at_k);
    say!(
        "query        p50 {:.2} ms   p95 {:.2} ms",
        b.p50_ms,
        b.p95_ms
    );
    say!(
        "memory       RSS {:.0} MiB   peak {:.0} MiB",
        b.rss_mib,
        b.peak_rss_mib
    );
    Ok(())
}
