//! Forward-pass time against sequence length (is a short query memory-bound?).
//! `cargo run --release -p cairn-embed --example rows`

use cairn_embed::{MiniLm, MiniLmOptions, ModelSpec, NoProgress, fetch_model};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let loc = fetch_model(&ModelSpec::MINILM_L6_V2, &NoProgress)?;
    let model = MiniLm::load(
        &loc,
        MiniLmOptions {
            threads: 1,
            ..MiniLmOptions::default()
        },
    )?;
    println!("kernel {}", model.kernel());
    for len in [1usize, 4, 10, 24, 48, 96] {
        let seq: Vec<u32> = (0..len as u32).map(|i| 1000 + i).collect();
        let seqs = vec![seq];
        model.embed_tokens(&seqs);
        let mut times: Vec<f64> = (0..40)
            .map(|_| {
                let t = std::time::Instant::now();
                model.embed_tokens(&seqs);
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!("{len:>4} tokens: median {:.2} ms", times[times.len() / 2]);
    }
    Ok(())
}
