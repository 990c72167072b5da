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

/// The streaming path (no barrier between groups) gives each text the same
/// vector as a plain batch, numbered in the order the source handed texts
/// out, across groups of different sizes and on several threads; a source
/// error stops it with that error.
#[test]
#[ignore = "full tier: needs the model"]
fn a_stream_embeds_every_text_as_a_batch_does() {
    let location =
        fetch_model(&ModelSpec::MINILM_L6_V2, &NoProgress).expect("model available or fetchable");
    let texts = cairn_embed::synthetic_prose(70, 120, 11);
    let groups: Vec<Vec<String>> = [1usize, 30, 0, 25, 14]
        .iter()
        .scan(0, |at, &n| {
            let g = texts[*at..*at + n].to_vec();
            *at += n;
            Some(g)
        })
        .filter(|g| !g.is_empty())
        .collect();
    for threads in [1, 3] {
        let opts = MiniLmOptions {
            threads,
            batch_tokens: 512,
            ..MiniLmOptions::default()
        };
        let model = MiniLm::load(&location, opts).expect("model loads");
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batch = model.embed(&refs).unwrap();
        let mut left = groups.clone().into_iter();
        let mut got: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        model
            .embed_stream(&mut || Ok(left.next()), &mut |vecs| {
                for (n, v) in vecs {
                    assert!(got[n as usize].replace(v).is_none(), "text {n} twice");
                }
                Ok(())
            })
            .unwrap();
        for (i, v) in got.iter().enumerate() {
            let v = v.as_ref().unwrap_or_else(|| panic!("text {i} missing"));
            assert!(cosine(v, &batch[i]) > 0.9999, "{threads} threads: text {i}");
        }
        let mut calls = 0;
        let err = model
            .embed_stream(
                &mut || {
                    calls += 1;
                    if calls > 2 {
                        Err(cairn_core::EmbedError::new("the index went away"))
                    } else {
                        Ok(Some(texts[..20].to_vec()))
                    }
                },
                &mut |_| Ok(()),
            )
            .unwrap_err();
        assert!(err.to_string().contains("the index went away"), "{err}");
    }
}
