//! Files in other scripts and encodings: measured by characters, decoded
//! from UTF-16, read lossily when a byte is not UTF-8 — and read back the
//! same way, so they are never reported changed when they are not.

use cairn::{NoProgress, SearchOptions};
use cairn_core::Freshness;

use crate::{Project, roots};

fn bm25(e: &cairn::Engine, q: &str) -> Vec<cairn_core::Hit> {
    let opts = SearchOptions {
        limit: 10,
        mode: cairn::Mode::Bm25,
        ..Default::default()
    };
    e.search(q, &opts).unwrap()
}

/// `text` as UTF-16 with its byte-order mark.
fn utf16(text: &str, little: bool) -> Vec<u8> {
    let mut out = if little {
        vec![0xFF, 0xFE]
    } else {
        vec![0xFE, 0xFF]
    };
    for u in text.encode_utf16() {
        out.extend(if little {
            u.to_le_bytes()
        } else {
            u.to_be_bytes()
        });
    }
    out
}

#[test]
fn cjk_code_utf16_docs_and_a_bad_byte_are_indexed_and_stay_fresh() {
    let p = Project::with_config("[chunk]\nmin_chars = 0\n");
    let zh = "用户登录失败次数过多时锁定账户并通知管理员检查日志";
    let line: String = zh.chars().cycle().take(120).collect();
    let py: String = (0..40)
        .map(|i| format!("ZHMSG_{i} = \"{line}\"  # zhpytoken\n"))
        .collect();
    p.write("app/messages_zh.py", &py);
    let en: String = "lock the account after too many failed logins "
        .chars()
        .cycle()
        .take(120)
        .collect();
    let py_en: String = (0..40)
        .map(|i| format!("ENMSG_{i} = \"{en}\"  # enpytoken\n"))
        .collect();
    p.write("app/messages_en.py", &py_en);
    let long: String = zh.chars().cycle().take(2000).collect();
    let body: String = (0..30).map(|i| format!("    let v{i} = {i};\n")).collect();
    p.write(
        "src/lock.rs",
        &format!("// {long}\npub fn zhrusttoken() -> u32 {{\n{body}    1\n}}\n"),
    );
    std::fs::create_dir_all(p.path("docs")).unwrap();
    let doc = "# 部署\n\nThe utfsixteen release notes: run the script, then tag. 完成\n";
    std::fs::write(
        p.path("docs/le.md"),
        utf16(&doc.replace("utfsixteen", "utfle"), true),
    )
    .unwrap();
    std::fs::write(
        p.path("docs/be.md"),
        utf16(&doc.replace("utfsixteen", "utfbe"), false),
    )
    .unwrap();
    std::fs::write(
        p.path("docs/latin1.md"),
        b"# Caf\xe9\n\nThe latintoken menu, written by an editor in Latin-1.\n",
    )
    .unwrap();

    let e = p.engine();
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert!(r.skipped.is_empty(), "nothing skipped: {:?}", r.skipped);
    // The lossy read is said, by file; the clean ones say nothing.
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(r.notes[0].path.ends_with("docs/latin1.md"), "{:?}", r.notes);
    assert!(r.notes[0].note.contains("not valid UTF-8"), "{:?}", r.notes);

    for (word, path) in [
        ("zhpytoken", "app/messages_zh.py"),
        ("enpytoken", "app/messages_en.py"),
        ("zhrusttoken", "src/lock.rs"),
        ("utfle", "docs/le.md"),
        ("utfbe", "docs/be.md"),
        ("latintoken", "docs/latin1.md"),
    ] {
        let hits = bm25(&e, word);
        let hit = hits.iter().find(|h| h.path == path);
        let hit = hit.unwrap_or_else(|| panic!("{path} found by {word}: {hits:?}"));
        assert_eq!(hit.source, Freshness::Fresh, "{path}");
    }
    let le = bm25(&e, "utfle");
    assert!(le[0].text.contains("完成"), "decoded: {:?}", le[0].text);
    let latin = bm25(&e, "latintoken");
    assert!(
        latin
            .iter()
            .any(|h| h.text.contains('\u{FFFD}') || h.breadcrumb.contains('\u{FFFD}'))
    );

    // The same bytes written again (a new mtime): the freshness check reads
    // them as the indexer did, so none is stale, and a pass changes nothing.
    std::thread::sleep(std::time::Duration::from_millis(20));
    for rel in [
        "docs/le.md",
        "docs/be.md",
        "docs/latin1.md",
        "app/messages_zh.py",
    ] {
        let bytes = std::fs::read(p.path(rel)).unwrap();
        std::fs::write(p.path(rel), bytes).unwrap();
    }
    assert_eq!(e.stale_files().unwrap(), []);
    let r = e.index(&roots(&p.root()), &NoProgress).unwrap();
    assert_eq!(r.files_changed + r.files_added, 0, "{r:?}");
}
