//! The web page's JSON API over real HTTP: what a click on the timeline's
//! Undo does to the memory files.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use cairn::{Engine, MemoryInput, MemoryPatch};
use cairn_mcp::http::{CancellationToken, HttpOptions, serve_on_listener};
use cairn_test_support::Project;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Serve, docs};

/// The page's API on a loopback port, and the engine behind it.
struct Page {
    addr: SocketAddr,
    engine: Arc<Engine>,
    cancel: CancellationToken,
    p: Project,
}

impl Drop for Page {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

async fn page() -> Page {
    let p = Project::new();
    docs(&p);
    let shared = p.shared();
    let engine = shared.engine.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let cancel = CancellationToken::new();
    tokio::spawn(serve_on_listener(
        shared,
        HttpOptions::default(),
        listener,
        cancel.clone(),
    ));
    Page {
        addr,
        engine,
        cancel,
        p,
    }
}

impl Page {
    /// One API call (a POST when `body` is given): its status and JSON.
    async fn call(&self, path: &str, body: Option<Value>) -> (u16, Value) {
        let a = self.addr;
        let request = match body {
            Some(b) => {
                let b = b.to_string();
                format!(
                    "POST {path} HTTP/1.1\r\nHost: {a}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
                    b.len()
                )
            }
            None => format!("GET {path} HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\n\r\n"),
        };
        let mut s = TcpStream::connect(a).await.expect("connect");
        s.write_all(request.as_bytes()).await.expect("send");
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut answer))
            .await
            .expect("an answer in time")
            .expect("read");
        let answer = String::from_utf8_lossy(&answer);
        let status = answer
            .get(9..12)
            .and_then(|c| c.parse().ok())
            .expect("a status line");
        let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
        (status, serde_json::from_str(body).expect("JSON"))
    }

    async fn undo(&self, body: Value) -> (u16, Value) {
        self.call("/api/undo", Some(body)).await
    }

    /// The timeline's entries of memory `id`, oldest first: (line, action,
    /// undo state).
    async fn log_of(&self, id: &str) -> Vec<(u64, String, String)> {
        let (status, v) = self.call("/api/log?limit=200", None).await;
        assert_eq!(status, 200, "{v}");
        let mut out: Vec<_> = v["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| e["id"] == id)
            .map(|e| {
                (
                    e["line"].as_u64().expect("line"),
                    e["action"].as_str().unwrap_or_default().to_string(),
                    e["undo"]["state"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        out.reverse();
        out
    }

    fn remember(&self, text: &str) -> String {
        let stored = self
            .engine
            .remember(&MemoryInput {
                text: text.into(),
                importance: Some(8),
                client: "cli".into(),
                ..MemoryInput::default()
            })
            .expect("remember");
        stored.memory.memory.id
    }

    fn update(&self, id: &str, patch: MemoryPatch) {
        self.engine
            .update_memory(id, &patch, false)
            .expect("update");
    }

    fn file(&self, id: &str) -> Option<String> {
        std::fs::read_to_string(self.p.path(&format!(".cairn/memory/{id}.md"))).ok()
    }
}

fn lines(log: &[(u64, String, String)]) -> Vec<(&str, &str)> {
    log.iter()
        .map(|(_, a, s)| (a.as_str(), s.as_str()))
        .collect()
}

/// Regression (v24 report): Undo sent only the memory id, so clicking it
/// twice on the same update row undid the update and then the store,
/// deleting the memory without a word.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_twice_on_one_row_is_refused_and_keeps_the_memory() {
    let page = page().await;
    let id = page.remember("Sessions are cached in Redis for five minutes.");
    page.update(
        &id,
        MemoryPatch {
            text: Some("Sessions are cached in Redis for ten minutes.".into()),
            client: "ui".into(),
            ..MemoryPatch::default()
        },
    );
    let log = page.log_of(&id).await;
    assert_eq!(
        lines(&log),
        [("store", "superseded"), ("update", "undoable")],
        "only the newest change has an Undo"
    );
    let (store, update) = (log[0].0, log[1].0);

    let (status, v) = page.undo(json!({"line": update, "id": id})).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["undone"]["removes"], false, "{v}");
    assert!(page.file(&id).unwrap().contains("five minutes"));

    // The same row again: already undone, refused; the memory stays.
    let (status, v) = page.undo(json!({"line": update, "id": id})).await;
    assert_eq!(status, 409, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("already undone"),
        "{v}"
    );
    assert!(page.file(&id).unwrap().contains("five minutes"));
    assert_eq!(
        lines(&page.log_of(&id).await),
        [
            ("store", "undoable"),
            ("update", "undone"),
            ("undo", "final")
        ]
    );

    // The store now is undoable, but it removes the memory: refused
    // without confirm; a dry run says so and writes nothing.
    let (status, v) = page.undo(json!({"line": store, "id": id})).await;
    assert_eq!(status, 409, "{v}");
    assert!(v["error"].as_str().unwrap().contains("removes"), "{v}");
    assert!(page.file(&id).is_some(), "refused: nothing removed");
    let (status, v) = page
        .undo(json!({"line": store, "id": id, "dry_run": true}))
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["undone"]["removes"], true, "{v}");
    assert!(
        v["undone"]["memory"]["text"]
            .as_str()
            .unwrap()
            .contains("five minutes"),
        "{v}"
    );
    assert!(page.file(&id).is_some(), "a dry run removes nothing");
    let (status, v) = page
        .undo(json!({"line": store, "id": id, "confirm": true}))
        .await;
    assert_eq!(status, 200, "{v}");
    assert!(page.file(&id).is_none(), "confirmed: removed");
    assert!(page.p.path(&format!(".cairn/trash/{id}.md")).exists());
    assert_eq!(
        lines(&page.log_of(&id).await),
        [
            ("store", "undone"),
            ("update", "undone"),
            ("undo", "final"),
            ("undo", "final")
        ]
    );
}

/// Regression (v24 report): after a CLI update, Undo on the memory's store
/// row reverted the update instead. An older row is refused while a later
/// change of the memory stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_of_an_older_row_is_refused_while_a_later_change_stands() {
    let page = page().await;
    let id = page.remember("Staging deploys need a green build on main.");
    page.update(
        &id,
        MemoryPatch {
            importance: Some(4),
            client: "cli".into(),
            ..MemoryPatch::default()
        },
    );
    let log = page.log_of(&id).await;
    let store = log[0].0;
    for body in [
        json!({"line": store, "id": id}),
        json!({"line": store, "id": id, "confirm": true}),
        json!({"line": store, "id": id, "dry_run": true}),
    ] {
        let (status, v) = page.undo(body).await;
        assert_eq!(status, 409, "{v}");
        assert!(v["error"].as_str().unwrap().contains("later change"), "{v}");
    }
    let file = page.file(&id).expect("still there");
    assert!(file.contains("importance: 4"), "the update stands: {file}");

    // A line that is not this memory's, or no line at all.
    let other = page.remember("Production deploys happen on Tuesdays only.");
    let (status, v) = page.undo(json!({"line": store, "id": other})).await;
    assert_eq!(status, 409, "{v}");
    let (status, v) = page.undo(json!({"line": 999, "id": id})).await;
    assert_eq!(status, 409, "{v}");
    let (status, v) = page.undo(json!({"id": id})).await;
    assert_eq!(status, 400, "{v}");
    assert!(page.file(&id).unwrap().contains("importance: 4"));
    assert!(page.file(&other).is_some());
}
