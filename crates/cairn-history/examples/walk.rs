//! Times a history read: `cargo run --release -p cairn-history --example
//! walk -- REPO [THREADS [MAX_COMMITS]]` prints the commits read, the
//! files and symbols they changed, and the seconds it took (THREADS 0: one
//! per core, up to four).

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(repo) = args.next() else {
        eprintln!("usage: walk REPO [THREADS [MAX_COMMITS]]");
        std::process::exit(2);
    };
    let mut opts = cairn_history::HistoryOptions::default();
    if let Some(t) = args.next().and_then(|t| t.parse().ok()) {
        opts.threads = t;
    }
    if let Some(m) = args.next().and_then(|m| m.parse().ok()) {
        opts.max_commits = m;
    }
    let started = std::time::Instant::now();
    match cairn_history::read_history(std::path::Path::new(&repo), &opts) {
        Ok(h) => {
            let secs = started.elapsed().as_secs_f64();
            let files: usize = h.commits.iter().map(|c| c.files.len()).sum();
            let symbols: usize = h
                .commits
                .iter()
                .flat_map(|c| &c.files)
                .map(|f| f.symbols.len())
                .sum();
            // What was read, as one number: two builds that read alike
            // print the same digest (FNV-1a over each file's path and symbols).
            let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
            for c in &h.commits {
                for f in &c.files {
                    for part in std::iter::once(&f.path).chain(&f.symbols) {
                        for b in part.bytes().chain([0]) {
                            digest = (digest ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
                        }
                    }
                }
            }
            println!(
                "{} commits, {files} files, {symbols} symbols (digest {digest:016x}), {} warnings: {secs:.1} s ({:.1} commits/s, threads {})",
                h.commits.len(),
                h.warnings.len(),
                h.commits.len() as f64 / secs.max(1e-9),
                opts.threads
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
