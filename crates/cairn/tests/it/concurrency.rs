//! One engine shared by threads: searches go on while index passes write.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn::{NoProgress, SearchOptions};

use crate::Project;

#[test]
fn searches_never_fail_while_index_passes_write() {
    let p = Project::new();
    for i in 0..40 {
        p.write(
            &format!("docs/f{i}.md"),
            &format!("# File {i}\n\nRedis session cache notes, revision 0, for file {i}.\n"),
        );
    }
    let engine = Arc::new(p.engine());
    engine.index(&engine.default_roots(), &NoProgress).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let searchers: Vec<_> = (0..3)
        .map(|_| {
            let (engine, stop) = (engine.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    let hits = engine
                        .search("redis session cache", &SearchOptions::default())
                        .expect("search during writes");
                    assert!(!hits.is_empty());
                    engine.status().expect("status during writes");
                    n += 1;
                }
                n
            })
        })
        .collect();
    // Two writers on the one engine: passes serialise, nothing is lost.
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let engine = engine.clone();
            let root = p.root();
            std::thread::spawn(move || {
                for rev in 1..=5 {
                    for i in (w..40).step_by(2) {
                        std::fs::write(
                            root.join(format!("docs/f{i}.md")),
                            format!("# File {i}\n\nRedis session cache notes, revision {rev}, for file {i}.\n"),
                        )
                        .unwrap();
                    }
                    engine
                        .index(&engine.default_roots(), &NoProgress)
                        .expect("index pass");
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    stop.store(true, Ordering::SeqCst);
    let searches: usize = searchers
        .into_iter()
        .map(|s| s.join().expect("searcher"))
        .sum();
    assert!(searches > 0);
    // Every file's last revision is what the index holds.
    engine.index(&engine.default_roots(), &NoProgress).unwrap();
    let st = engine.status().unwrap();
    assert_eq!(st.files, 40);
    assert_eq!(st.embedded_chunks, st.chunks);
    for i in [0, 1, 38, 39] {
        let hits = engine
            .search(
                &format!("revision 5 file {i}"),
                &SearchOptions {
                    path_prefix: Some(format!("docs/f{i}.md")),
                    ..SearchOptions::default()
                },
            )
            .unwrap();
        assert!(hits[0].snippet.contains("revision 5"), "{:?}", hits[0]);
    }
}
