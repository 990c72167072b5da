//! A remote embedding model (here a fake Ollama on loopback): asked for
//! vectors only when there is something to embed or a query to search.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn::{Mode, NoProgress, SearchOptions};

use crate::{Project, roots};

/// A fake Ollama (`POST /api/embed`) counting the requests it answers; each
/// text's vector is made from its bytes, 8 numbers long.
struct FakeOllama {
    url: String,
    requests: Arc<AtomicUsize>,
}

impl FakeOllama {
    fn start() -> FakeOllama {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let count = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let mut reader = BufReader::new(s.try_clone().unwrap());
                let (mut line, mut len, mut first) = (String::new(), 0, String::new());
                loop {
                    line.clear();
                    reader.read_line(&mut line).unwrap();
                    if first.is_empty() {
                        first = line.clone();
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                assert!(first.starts_with("POST /api/embed "), "{first}");
                let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let vectors: Vec<Vec<f64>> = req["input"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| {
                        let mut v = vec![1.0; 8];
                        for (i, b) in t.as_str().unwrap().bytes().enumerate() {
                            v[i % 8] += f64::from(b % 7);
                        }
                        v
                    })
                    .collect();
                count.fetch_add(1, Ordering::SeqCst);
                let out = serde_json::json!({"embeddings": vectors}).to_string();
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{out}",
                    out.len()
                );
            }
        });
        FakeOllama { url, requests }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

const LONG: &str = "The cache layer keeps session tokens in Redis with a five minute time to live.";

/// Opening and indexing an unchanged project asks the model nothing: its
/// vector length is cached in `.cairn/`, not probed at every start.
#[test]
fn a_remote_model_is_asked_nothing_when_nothing_changed() {
    let fake = FakeOllama::start();
    let p = Project::new();
    for (name, word) in [("a", "aardvark"), ("b", "badger"), ("c", "capybara")] {
        p.write(
            &format!("{name}.md"),
            &format!("# {name}\n\n{LONG} {word}\n"),
        );
    }
    let root = p.root();
    let mut config = p.config();
    config.embed.provider = cairn::EmbedProvider::Remote(cairn_llm::EmbedApi::Ollama);
    config.embed.base_url = fake.url.clone();
    config.embed.model = "fake-embed".into();

    let e = cairn::open(&root, &config).unwrap();
    assert_eq!(fake.requests(), 0, "opening asks nothing");
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(r.chunks_embedded, 3);
    let embedding = fake.requests();
    assert_eq!(embedding, 1, "three texts, one batch, no probe");
    let status = e.status().unwrap();
    assert_eq!(status.model.as_deref(), Some("ollama:fake-embed"));
    assert_eq!(status.embedded_chunks, 3);
    let cache = std::fs::read_to_string(p.path(".cairn/embed-dimensions.json")).unwrap();
    assert!(cache.contains("\"ollama:fake-embed "), "{cache}");
    drop(e);

    // A new process on the unchanged project: open and index, no request.
    let e = cairn::open(&root, &config).unwrap();
    let r = e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!((r.files_unchanged, r.chunks_embedded), (3, 0));
    assert_eq!(fake.requests(), embedding);

    // A search embeds its query: one request, and the vectors rank.
    let opts = SearchOptions {
        mode: Mode::Vector,
        ..Default::default()
    };
    let found = e.search_with_retrievers("badger", &opts).unwrap();
    assert_eq!(found.retrievers, vec!["vector"]);
    assert!(!found.hits.is_empty());
    assert_eq!(fake.requests(), embedding + 1);
}

/// A remote provider whose key is missing leaves search on BM25 (with a
/// warning).
#[test]
fn a_remote_model_without_its_key_means_bm25_only() {
    let p = Project::new();
    p.write("a.md", &format!("# A\n\n{LONG} aardvark\n"));
    let root = p.root();
    let mut config = p.config();
    config.embed.provider = cairn::EmbedProvider::Remote(cairn_llm::EmbedApi::Voyage);
    config.embed.api_key_env = "CAIRN_TEST_SURELY_UNSET_KEY".into();
    let e = cairn::open(&root, &config).unwrap();
    e.index(&roots(&root), &NoProgress).unwrap();
    assert_eq!(e.status().unwrap().model, None);
}
