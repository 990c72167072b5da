//! LoCoMo as a memory benchmark, on a two-session toy set (fake embedder).

use cairn::NoProgress;

#[test]
fn the_locomo_memory_benchmark_scores_turns_and_sessions() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    let files = [
        (
            "corpus/conv-1/session-01.md",
            "# conv-1 session 1: A and B, 1:56 pm on 8 May, 2023\n\nDate: 1:56 pm on 8 May, 2023\n\n## D1:1\n**Ann:** I adopted a greyhound called Pixel last week.\n\n## D1:2\n**Bob:** My sister plays the cello in an orchestra.\n",
        ),
        (
            "corpus/conv-1/session-02.md",
            "# conv-1 session 2: A and B, 9:00 am on 1 June, 2023\n\nDate: 9:00 am on 1 June, 2023\n\n## D2:1\n**Ann:** We moved to Lisbon for the sunshine.\n\n## D2:2\n**Bob:** I am learning to bake sourdough bread.\n",
        ),
        (
            "queries.jsonl",
            "{\"id\": \"conv-1_q001\", \"text\": \"What is the name of the greyhound?\"}\n{\"id\": \"conv-1_q002\", \"text\": \"Which city did Ann move to?\"}\n",
        ),
        (
            "qrels.tsv",
            "query-id\tdoc-id\trelevance\nconv-1_q001\tconv-1/session-01\t1\nconv-1_q002\tconv-1/session-02\t1\n",
        ),
        (
            "qrels_turns.tsv",
            "query-id\tturn-id\trelevance\nconv-1_q001\tconv-1:D1:1\t1\nconv-1_q002\tconv-1:D2:1\t1\n",
        ),
        (
            "turns.tsv",
            "turn-id\tdoc-id\tspeaker\nconv-1:D1:1\tconv-1/session-01\tAnn\nconv-1:D1:2\tconv-1/session-01\tBob\nconv-1:D2:1\tconv-1/session-02\tAnn\nconv-1:D2:2\tconv-1/session-02\tBob\n",
        ),
    ];
    for (name, content) in files {
        let path = d.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let work = tempfile::tempdir().unwrap();
    let opts = cairn_bench::MemoryEvalOptions {
        work_dir: work.path().to_path_buf(),
        fresh: false,
        max_queries: 0,
        config: cairn::Config::default(),
    };
    let embedder: Option<std::sync::Arc<dyn cairn_core::Embedder>> =
        Some(std::sync::Arc::new(cairn_embed::FakeEmbedder::new(64)));
    let r = cairn_bench::run_memory_eval(d, embedder.clone(), &opts, &NoProgress).unwrap();
    assert_eq!(
        (r.conversations, r.turns, r.memories, r.queries),
        (1, 4, 4, 2)
    );
    assert_eq!(r.turn_recall_at_5, 1.0);
    assert_eq!(r.session_recall_at_5, 1.0);
    // Each memory carries its session date and its turn id.
    let text = std::fs::read_dir(work.path().join("conv-1/.cairn/memory"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .find(|t| t.contains("Lisbon"))
        .unwrap();
    assert!(
        text.contains("created: 2023-06-01T09:00:00Z") && text.contains("conv-1:D2:1"),
        "{text}"
    );
    // A second run reuses the stored memories.
    let again = cairn_bench::run_memory_eval(d, embedder, &opts, &NoProgress).unwrap();
    assert_eq!((again.memories, again.store_seconds), (4, 0.0));
}
