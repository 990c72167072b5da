//! The embedder must reproduce sentence-transformers' vectors for
//! all-MiniLM-L6-v2 (../shared/fixtures/minilm-reference.json): cosine ≥ 0.999
//! for every text, embedded one by one and as one batch.

use cairn_core::Embedder;
use cairn_embed::{KernelPath, MiniLm, MiniLmOptions, ModelSpec, NoProgress, fetch_model};

#[derive(serde::Deserialize)]
struct Reference {
    dimension: usize,
    items: Vec<Item>,
}

#[derive(serde::Deserialize)]
struct Item {
    text: String,
    embedding: Vec<f32>,
}

fn reference() -> Reference {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/minilm-reference.json"
    );
    let text =
        std::fs::read_to_string(path).expect("reference fixture (../shared/fixtures) is present");
    serde_json::from_str(&text).expect("fixture parses")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

// One test per kernel path: the portable path runs on every CPU; a path this
// CPU lacks prints `skipped: CPU lacks …` instead of passing unnoticed.
#[test]
#[ignore = "full tier: needs the model"]
fn portable_path_matches_sentence_transformers_reference() {
    assert!(KernelPath::Portable.supported());
    check_reference(KernelPath::Portable);
}

#[test]
#[ignore = "full tier: needs the model"]
fn avx2_path_matches_sentence_transformers_reference() {
    if KernelPath::Avx2
        .runs_here_or_say_skipped("avx2_path_matches_sentence_transformers_reference")
    {
        check_reference(KernelPath::Avx2);
    }
}

#[test]
#[ignore = "full tier: needs the model"]
fn avx512_path_matches_sentence_transformers_reference() {
    if KernelPath::Avx512
        .runs_here_or_say_skipped("avx512_path_matches_sentence_transformers_reference")
    {
        check_reference(KernelPath::Avx512);
    }
}

fn check_reference(path: KernelPath) {
    let reference = reference();
    let location =
        fetch_model(&ModelSpec::MINILM_L6_V2, &NoProgress).expect("model available or fetchable");
    let opts = MiniLmOptions {
        kernel: Some(path),
        ..MiniLmOptions::default()
    };
    let model = MiniLm::load(&location, opts).expect("model loads");
    assert_eq!(model.kernel(), path);
    assert_eq!(model.dimension(), reference.dimension);

    let texts: Vec<&str> = reference.items.iter().map(|i| i.text.as_str()).collect();
    let batch = model.embed(&texts).unwrap();
    for (i, item) in reference.items.iter().enumerate() {
        let single = model.embed(&[item.text.as_str()]).unwrap().remove(0);
        let c1 = cosine(&single, &item.embedding);
        let c2 = cosine(&batch[i], &item.embedding);
        assert!(c1 >= 0.999, "{path}: item {i} one by one: cosine {c1}");
        assert!(c2 >= 0.999, "{path}: item {i} in a batch: cosine {c2}");
    }
    // The long items are past 256 tokens: truncation must be at 256, not 128.
    assert!(
        reference
            .items
            .iter()
            .any(|i| model.tokenize(&i.text).unwrap().len() == 256)
    );
}

#[test]
#[ignore = "full tier: needs the model"]
fn an_unsupported_or_unknown_kernel_is_an_error() {
    let location =
        fetch_model(&ModelSpec::MINILM_L6_V2, &NoProgress).expect("model available or fetchable");
    for path in [KernelPath::Avx512, KernelPath::Avx2] {
        if !path.supported() {
            let opts = MiniLmOptions {
                kernel: Some(path),
                ..MiniLmOptions::default()
            };
            assert!(MiniLm::load(&location, opts).is_err());
        }
    }
    assert_eq!(KernelPath::parse("AVX512"), Some(KernelPath::Avx512));
    assert_eq!(KernelPath::parse("neon"), None);
}

/// A text far past the model's window tokenizes the same as its start: the
/// prefix cut that keeps a 20 MB line from the tokenizer changes nothing.
#[test]
#[ignore = "full tier: needs the model"]
fn a_huge_text_tokenizes_like_its_start() {
    let Some(loc) = cairn_embed::locate_model(&cairn_embed::ModelSpec::MINILM_L6_V2).unwrap()
    else {
        panic!("model not cached: run `cairn model fetch`");
    };
    let model = cairn_embed::MiniLm::load(&loc, cairn_embed::MiniLmOptions::default()).unwrap();
    let prose = cairn_embed::synthetic_prose(1, 400, 7).remove(0);
    let huge = prose.repeat(50_000); // ~20 MB, one line
    let start: String = huge.chars().take(4_000).collect();
    let a = model.tokenize(&huge).unwrap();
    let b = model.tokenize(&start).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 256);
}
