//! Our own BERT tokenizer (src/wordpiece.rs) must give the ids the
//! `tokenizers` crate gives for the three shipped models' files, on real
//! text: this repository's own docs and sources, the reference fixture's
//! texts, and any folders named in `CAIRN_TOKENIZER_TEXTS` (`:`-separated;
//! BENCHMARKS.md names the corpora it was run on).

use cairn_embed::{
    CrossEncoder, CrossEncoderOptions, MiniLm, MiniLmOptions, ModelSpec, NoProgress, Precision,
    fetch_model,
};
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

/// The crate's tokenizer for a model's file, truncating at `max` (none: `None`).
fn crates(dir: &std::path::Path, max: Option<usize>) -> Tokenizer {
    let mut t = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    t.with_truncation(max.map(|max_length| TruncationParams {
        max_length,
        ..Default::default()
    }))
    .unwrap();
    t.with_padding(None);
    t
}

/// The texts every model is checked on.
fn texts() -> Vec<String> {
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
    assert!(
        texts.iter().any(|t| !t.is_ascii()),
        "some text beyond ASCII is compared"
    );
    texts
}

/// `ours` and `theirs` give the same ids for every text.
fn same_ids(
    model: &str,
    texts: &[String],
    ours: impl Fn(&str) -> Vec<u32>,
    theirs: impl Fn(&str) -> Vec<u32>,
) {
    let mut ids = 0usize;
    for text in texts {
        let want = theirs(text);
        assert_eq!(ours(text), want, "{model}: {text:?}");
        ids += want.len();
    }
    eprintln!(
        "{model}: {} pieces, {ids} ids: all the crate's",
        texts.len()
    );
}

/// The two embedding models, through `MiniLm::tokenize` (256 tokens).
#[test]
#[ignore = "full tier: needs the models"]
fn our_tokenizer_gives_the_crates_ids_on_real_text() {
    let texts = texts();
    for spec in [ModelSpec::MINILM_L6_V2, ModelSpec::BGE_SMALL_EN_V15_INT8DQ] {
        let location = fetch_model(&spec, &NoProgress).expect("model available or fetchable");
        let opts = MiniLmOptions {
            precision: Precision::Fp32,
            ..MiniLmOptions::for_model(&spec)
        };
        let theirs = crates(&location.dir, Some(opts.max_tokens));
        let model = MiniLm::load(&location, opts).expect("model loads");
        same_ids(
            &location.name,
            &texts,
            |t| model.tokenize(t).unwrap(),
            |t| theirs.encode(t, true).unwrap().get_ids().to_vec(),
        );
    }
}

/// The reranker, through `CrossEncoder::encode_pair` with an empty
/// passage: `[CLS]`, the query's pieces (no truncation of their own, cut
/// to the pair's room), `[SEP] [SEP]`.
#[test]
#[ignore = "full tier: needs the model"]
fn our_tokenizer_gives_the_crates_ids_to_the_reranker() {
    let texts = texts();
    let spec = ModelSpec::MS_MARCO_MINILM_L12_V2_INT8DQ;
    let location = fetch_model(&spec, &NoProgress).expect("model available or fetchable");
    let opts = CrossEncoderOptions {
        precision: Precision::Fp32,
        ..CrossEncoderOptions::default()
    };
    let room = opts.max_tokens - 3;
    let theirs = crates(&location.dir, None);
    let (cls, sep) = (
        theirs.token_to_id("[CLS]").unwrap(),
        theirs.token_to_id("[SEP]").unwrap(),
    );
    let model = CrossEncoder::load(&location, opts).expect("model loads");
    same_ids(
        &location.name,
        &texts,
        |t| model.encode_pair(t, "").unwrap().ids,
        |t| {
            let pieces = theirs.encode(t, false).unwrap();
            let pieces = pieces.get_ids();
            let mut ids = vec![cls];
            ids.extend_from_slice(&pieces[..pieces.len().min(room)]);
            ids.extend([sep, sep]);
            ids
        },
    );
}
