//! Our own BERT tokenizer (src/wordpiece.rs) must give the ids the
//! `tokenizers` crate gives for the shipped all-MiniLM-L6-v2 file, on real
//! text: this repository's own docs and sources, the reference fixture's
//! texts, and any folders named in `CAIRN_TOKENIZER_TEXTS` (`:`-separated;
//! BENCHMARKS.md names the corpora it was run on).

use cairn_embed::{MiniLm, MiniLmOptions, ModelSpec, NoProgress, Precision, fetch_model};
use tokenizers::{Tokenizer, TruncationParams};

/// The texts: each file cut into pieces of about 1,500 bytes at line ends.
fn pieces(dirs: &[std::path::PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = dirs.to_vec();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "target" || name.starts_with('.') {
                continue;
            }
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            let mut piece = String::new();
            for line in text.split_inclusive('\n') {
                piece.push_str(line);
                if piece.len() > 1500 {
                    out.push(std::mem::take(&mut piece));
                }
            }
            out.push(piece);
        }
    }
    out
}

#[test]
#[ignore = "full tier: needs the model"]
fn our_tokenizer_gives_the_crates_ids_on_real_text() {
    let location =
        fetch_model(&ModelSpec::MINILM_L6_V2, &NoProgress).expect("model available or fetchable");
    let opts = MiniLmOptions {
        precision: Precision::Fp32,
        ..MiniLmOptions::default()
    };
    let max = opts.max_tokens;
    let model = MiniLm::load(&location, opts).expect("model loads");
    let mut theirs = Tokenizer::from_file(location.dir.join("tokenizer.json")).unwrap();
    theirs
        .with_truncation(Some(TruncationParams {
            max_length: max,
            ..Default::default()
        }))
        .unwrap();
    theirs.with_padding(None);

    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut dirs = vec![repo.join("crates/cairn-embed"), repo.join("eval")];
    for doc in ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"] {
        dirs.push(repo.join(doc));
    }
    dirs.extend(repo.join("../shared/fixtures").canonicalize().ok());
    if let Ok(more) = std::env::var("CAIRN_TOKENIZER_TEXTS") {
        dirs.extend(more.split(':').map(std::path::PathBuf::from));
    }
    let texts = pieces(&dirs);
    assert!(texts.len() > 100, "{} pieces", texts.len());
    let (mut ids, mut non_ascii) = (0usize, 0usize);
    for text in &texts {
        let want = theirs.encode(text.as_str(), true).unwrap();
        assert_eq!(model.tokenize(text).unwrap(), want.get_ids(), "{text:?}");
        ids += want.get_ids().len();
        non_ascii += usize::from(!text.is_ascii());
    }
    eprintln!(
        "{} pieces ({non_ascii} not ASCII), {ids} ids: all the crate's",
        texts.len()
    );
    assert!(non_ascii > 0, "some text beyond ASCII is compared");
}
