//! Where OpenCode and OpenClaw keep their sessions, and reading an OpenCode
//! session out of its store (the formats are described with their parsers in
//! `cairn_ingest`: `parse_opencode_session`, `parse_openclaw_session`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::{Value, json};

use crate::error::{Error, Result, io};

/// A session id or agent id that can stand in a file name: no separators,
/// no `..`, nothing odd.
fn safe_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id.len() <= 200
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// OpenCode's data folder: `$XDG_DATA_HOME/opencode`, else
/// `~/.local/share/opencode`.
pub fn opencode_data_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home().map(|h| h.join(".local").join("share")))
        .map(|d| d.join("opencode"))
}

/// OpenCode's stores, most likely first: `$OPENCODE_DB`, `opencode.db`, the
/// other channels' `opencode-<channel>.db`, then the older JSON `storage/`.
fn opencode_stores() -> Vec<PathBuf> {
    let dir = opencode_data_dir();
    let mut out = Vec::new();
    if let Some(db) = std::env::var_os("OPENCODE_DB").map(PathBuf::from)
        && db.as_os_str() != ":memory:"
    {
        match (&dir, db.is_absolute()) {
            (_, true) => out.push(db),
            (Some(d), false) => out.push(d.join(db)),
            (None, false) => {}
        }
    }
    if let Some(d) = &dir {
        out.push(d.join("opencode.db"));
        let mut channels: Vec<PathBuf> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("opencode-") && n.ends_with(".db"))
            })
            .collect();
        channels.sort();
        out.extend(channels);
        out.push(d.join("storage"));
    }
    out
}

fn open_db(path: &Path) -> Result<Connection> {
    let fail = |e: rusqlite::Error| Error::Transcript {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(fail)?;
    conn.busy_timeout(Duration::from_secs(2)).map_err(fail)?;
    Ok(conn)
}

/// Whether an OpenCode store holds messages of `session`.
fn opencode_has(store: &Path, session: &str) -> bool {
    if store.is_dir() {
        return store.join("message").join(session).is_dir();
    }
    if !store.is_file() {
        return false;
    }
    open_db(store)
        .ok()
        .and_then(|c| {
            c.query_row(
                "SELECT 1 FROM message WHERE session_id = ?1 LIMIT 1",
                [session],
                |_| Ok(()),
            )
            .optional()
            .ok()
            .flatten()
        })
        .is_some()
}

/// The OpenCode store (a database file, or the older `storage/` folder)
/// that holds `session`; None when no store has it.
pub fn opencode_store(session: &str) -> Option<PathBuf> {
    if !safe_id(session) {
        return None;
    }
    opencode_stores()
        .into_iter()
        .find(|s| opencode_has(s, session))
}

/// Reads a JSON file; None when it is missing or not JSON.
fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The JSON files of a folder, by name (OpenCode's ids sort in time order).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// One line per message, in order: `{"info": message, "parts": [part, …]}`
/// (what `parse_opencode_session` reads), from a database or the older
/// JSON storage folder.
pub(crate) fn load_opencode(store: &Path, session: &str) -> Result<String> {
    if !safe_id(session) {
        return Err(Error::Query(format!(
            "OpenCode session id {session:?} is not an id"
        )));
    }
    let mut messages: Vec<(i64, String, Value, Vec<Value>)> = Vec::new();
    if store.is_dir() {
        let dir = store.join("message").join(session);
        if !dir.is_dir() {
            return Err(Error::NotFound(format!(
                "no OpenCode session {session:?} in {}",
                store.display()
            )));
        }
        for file in json_files(&dir) {
            let Some(info) = read_json(&file) else {
                continue;
            };
            let Some(id) = info["id"]
                .as_str()
                .map(str::to_string)
                .or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()))
            else {
                continue;
            };
            let parts = json_files(&store.join("part").join(&id))
                .iter()
                .filter_map(|p| read_json(p))
                .collect();
            let created = info["time"]["created"].as_i64().unwrap_or(0);
            messages.push((created, id, info, parts));
        }
    } else {
        let conn = open_db(store)?;
        let fail = |e: rusqlite::Error| Error::Transcript {
            path: store.to_path_buf(),
            message: e.to_string(),
        };
        let mut parts: HashMap<String, Vec<Value>> = HashMap::new();
        let mut stmt = conn
            .prepare("SELECT message_id, id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id")
            .map_err(fail)?;
        let rows = stmt
            .query_map([session], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(fail)?;
        for row in rows {
            let (message, id, data) = row.map_err(fail)?;
            if let Ok(mut part) = serde_json::from_str::<Value>(&data) {
                part["id"] = json!(id);
                parts.entry(message).or_default().push(part);
            }
        }
        let mut stmt = conn
            .prepare("SELECT id, time_created, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
            .map_err(fail)?;
        let rows = stmt
            .query_map([session], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(fail)?;
        for row in rows {
            let (id, created, data) = row.map_err(fail)?;
            if let Ok(mut info) = serde_json::from_str::<Value>(&data) {
                info["id"] = json!(id);
                info["sessionID"] = json!(session);
                let p = parts.remove(&id).unwrap_or_default();
                messages.push((created, id, info, p));
            }
        }
        if messages.is_empty() {
            return Err(Error::NotFound(format!(
                "no OpenCode session {session:?} in {}",
                store.display()
            )));
        }
    }
    messages.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut out = String::new();
    for (_, _, info, parts) in messages {
        out.push_str(&json!({"info": info, "parts": parts}).to_string());
        out.push('\n');
    }
    Ok(out)
}

/// OpenClaw's state folder: `$OPENCLAW_STATE_DIR`, else `~/.openclaw`.
pub fn openclaw_state_dir() -> Option<PathBuf> {
    std::env::var_os("OPENCLAW_STATE_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home().map(|h| h.join(".openclaw")))
}

/// The agent of an OpenClaw session key (`agent:<agentId>:…`), else `main`.
fn openclaw_agent(session_key: &str) -> &str {
    session_key
        .strip_prefix("agent:")
        .and_then(|rest| rest.split(':').next())
        .filter(|a| safe_id(a))
        .unwrap_or("main")
}

/// Whether an OpenClaw agent database holds events of `session`; an error
/// when it cannot be read (locked past the busy timeout, not a database).
fn openclaw_db_has(db: &Path, session: &str) -> Result<bool> {
    let conn = open_db(db)?;
    conn.query_row(
        "SELECT 1 FROM transcript_events WHERE session_id = ?1 LIMIT 1",
        [session],
        |_| Ok(()),
    )
    .optional()
    .map(|found| found.is_some())
    .map_err(|e| Error::Transcript {
        path: db.to_path_buf(),
        message: e.to_string(),
    })
}

/// Where an OpenClaw session is kept. Releases from v2026.8 on keep it in
/// the agent's database, `<state>/agents/<agent>/agent/openclaw-agent.sqlite`
/// (openclaw/openclaw `src/state/openclaw-agent-db.paths.ts`), which is
/// preferred when it holds the session's events. Else the JSONL transcript:
/// the `sessionFile` its session entry names, else
/// `<state>/agents/<agent>/sessions/<sessionId>.jsonl`, the agent taken from
/// the session key (`agent:<agentId>:…`, else `main`). A database that
/// cannot be read stands when there is no JSONL file either, so the hook
/// records why. None without a usable id.
pub fn openclaw_transcript(
    session_key: &str,
    session_id: &str,
    session_file: &str,
) -> Option<PathBuf> {
    let agent = openclaw_agent(session_key);
    let state = openclaw_state_dir();
    let db = state
        .as_ref()
        .filter(|_| safe_id(session_id))
        .map(|s| {
            s.join("agents")
                .join(agent)
                .join("agent")
                .join("openclaw-agent.sqlite")
        })
        .filter(|db| db.is_file());
    let held = db.as_ref().map(|db| openclaw_db_has(db, session_id));
    if let (Some(db), Some(Ok(true))) = (&db, &held) {
        return Some(db.clone());
    }
    let file = Path::new(session_file);
    let jsonl = if file.is_absolute() && file.extension().is_some_and(|x| x == "jsonl") {
        Some(file.to_path_buf())
    } else if safe_id(session_id) {
        state.map(|s| {
            s.join("agents")
                .join(agent)
                .join("sessions")
                .join(format!("{session_id}.jsonl"))
        })
    } else {
        None
    };
    match (db, held, jsonl) {
        (Some(db), Some(Err(_)), j) if j.as_ref().is_none_or(|j| !j.is_file()) => Some(db),
        (_, _, j) => j,
    }
}

/// Largest event OpenClaw stores (its schema's bound on `event_utf8_bytes`).
const OPENCLAW_MAX_EVENT_BYTES: i64 = 4 * 1024 * 1024;

/// One OpenClaw event's JSON text: `event_json`, or `event_zstd` (one zstd
/// frame of the UTF-8 JSON, `event_utf8_bytes` long once decoded).
fn openclaw_event(
    json: Option<String>,
    zstd: Option<Vec<u8>>,
    size: Option<i64>,
) -> Option<String> {
    if let Some(json) = json {
        return Some(json);
    }
    let size = size.filter(|n| (1..=OPENCLAW_MAX_EVENT_BYTES).contains(n))? as usize;
    let bytes = zstd::bulk::decompress(&zstd?, size).ok()?;
    (bytes.len() == size).then_some(())?;
    String::from_utf8(bytes).ok()
}

/// An OpenClaw session from its agent database as the lines of its JSONL
/// transcript (what `parse_openclaw_session` reads): table
/// `transcript_events` (openclaw/openclaw `src/state/openclaw-agent-schema.sql`),
/// one row per event keyed by `(session_id, seq)`, in `seq` order. The row
/// holds the same entry a JSONL line does (`{"type": "session" | "message" |
/// …}`) in `event_json`, or, from v2026.9.6 on, zstd-compressed in
/// `event_zstd` with `event_json` NULL. Read only; a row that cannot be
/// decoded stays a line (`null`, skipped by the parser) so lines keep
/// counting events.
pub(crate) fn load_openclaw(db: &Path, session: &str) -> Result<String> {
    let conn = open_db(db)?;
    let fail = |e: rusqlite::Error| Error::Transcript {
        path: db.to_path_buf(),
        message: e.to_string(),
    };
    let compressed = conn
        .query_row(
            "SELECT 1 FROM pragma_table_info('transcript_events') WHERE name = 'event_zstd'",
            [],
            |_| Ok(()),
        )
        .optional()
        .map_err(fail)?
        .is_some();
    let sql = if compressed {
        "SELECT event_json, event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id = ?1 ORDER BY seq"
    } else {
        "SELECT event_json, NULL, NULL FROM transcript_events WHERE session_id = ?1 ORDER BY seq"
    };
    let mut stmt = conn.prepare(sql).map_err(fail)?;
    let rows = stmt
        .query_map([session], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<Vec<u8>>>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        })
        .map_err(fail)?;
    let mut out = String::new();
    let mut events = 0usize;
    for row in rows {
        let (json, zstd, size) = row.map_err(fail)?;
        let event = openclaw_event(json, zstd, size)
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .unwrap_or(Value::Null);
        if event.is_null() {
            tracing::warn!(db = %db.display(), session, "an OpenClaw event could not be decoded");
        }
        out.push_str(&event.to_string());
        out.push('\n');
        events += 1;
    }
    if events == 0 {
        return Err(Error::NotFound(format!(
            "no OpenClaw session {session:?} in {}",
            db.display()
        )));
    }
    Ok(out)
}

/// A session's text as its client's parser reads it: OpenCode's from its
/// store, OpenClaw's from its agent database or transcript, the others'
/// transcript file as it is.
pub(crate) fn read_session(client: &str, source: &Path, session: &str) -> Result<String> {
    match client {
        "opencode" => load_opencode(source, session),
        "openclaw" if source.extension().is_some_and(|x| x == "sqlite") => {
            load_openclaw(source, session)
        }
        _ => std::fs::read_to_string(source).map_err(io(source)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_leave_a_folder_are_refused() {
        for bad in ["", "..", "a/b", "a\\b", "../x", "x y"] {
            assert!(!safe_id(bad), "{bad}");
        }
        assert!(safe_id("ses_4a1b2c3dEFg") && safe_id("5f0c8a1e-0000-4000-8000-000000000001"));
        assert!(openclaw_transcript("agent:main:main", "../../etc/passwd", "").is_none());
        let p = openclaw_transcript("agent:work:telegram:group:1", "abc-1", "relative.jsonl");
        assert!(p.is_none_or(|p| p.ends_with("agents/work/sessions/abc-1.jsonl")));
    }

    #[test]
    fn the_json_storage_and_the_database_give_the_same_lines() {
        let dir = tempfile::tempdir().unwrap();
        let storage = dir.path().join("storage");
        let msg = storage.join("message").join("ses_1");
        std::fs::create_dir_all(&msg).unwrap();
        std::fs::write(
            msg.join("msg_02.json"),
            r#"{"id":"msg_02","sessionID":"ses_1","role":"assistant","time":{"created":2}}"#,
        )
        .unwrap();
        std::fs::write(
            msg.join("msg_01.json"),
            r#"{"id":"msg_01","sessionID":"ses_1","role":"user","time":{"created":1}}"#,
        )
        .unwrap();
        for (m, p, text) in [
            ("msg_01", "prt_01", "hello"),
            ("msg_02", "prt_02", "hi there"),
        ] {
            let d = storage.join("part").join(m);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join(format!("{p}.json")),
                json!({"id": p, "sessionID": "ses_1", "messageID": m, "type": "text", "text": text}).to_string(),
            )
            .unwrap();
        }
        let from_files = load_opencode(&storage, "ses_1").unwrap();
        let db = dir.path().join("opencode.db");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             INSERT INTO message VALUES ('msg_02','ses_1',2,2,'{\"role\":\"assistant\",\"time\":{\"created\":2}}');
             INSERT INTO message VALUES ('msg_01','ses_1',1,1,'{\"role\":\"user\",\"time\":{\"created\":1}}');
             INSERT INTO part VALUES ('prt_01','msg_01','ses_1',1,1,'{\"type\":\"text\",\"text\":\"hello\"}');
             INSERT INTO part VALUES ('prt_02','msg_02','ses_1',2,2,'{\"type\":\"text\",\"text\":\"hi there\"}');",
        )
        .unwrap();
        drop(conn);
        let from_db = load_opencode(&db, "ses_1").unwrap();
        for text in [&from_files, &from_db] {
            let turns = cairn_ingest::parse_opencode_session(text, 0);
            let said: Vec<(&str, &str)> = turns
                .iter()
                .map(|t| (t.role.as_str(), t.text.as_str()))
                .collect();
            assert_eq!(
                said,
                [("user", "hello"), ("assistant", "hi there")],
                "{text}"
            );
        }
        assert!(opencode_has(&db, "ses_1") && !opencode_has(&db, "ses_2"));
        assert!(opencode_has(&storage, "ses_1"));
        assert!(matches!(
            load_opencode(&db, "ses_2"),
            Err(Error::NotFound(_))
        ));
    }

    #[test]
    fn an_openclaw_database_gives_the_jsonl_lines_plain_or_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("openclaw-agent.sqlite");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(cairn_test_support::openclaw::SCHEMA)
            .unwrap();
        conn.execute_batch(
            "PRAGMA foreign_keys = ON;
             INSERT INTO session_nodes VALUES ('agent:main:main', 's-1', '{}', 1);
             INSERT INTO session_windows VALUES ('s-1', 'agent:main:main', 1, 1);
             INSERT INTO session_windows VALUES ('s-2', 'agent:main:main', 1, 1);",
        )
        .unwrap();
        let lines = [
            json!({"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-09-21T13:13:20.000Z", "cwd": "/w"}),
            json!({"type": "message", "id": "m1", "parentId": null, "message": {"role": "user", "content": "why?"}}),
            json!({"type": "message", "id": "m2", "parentId": "m1", "message": {"role": "assistant", "content": [{"type": "text", "text": "because"}]}}),
        ];
        let plain = "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?1, ?2, ?3, 1)";
        conn.execute(plain, rusqlite::params!["s-1", 1, lines[0].to_string()])
            .unwrap();
        let raw = lines[1].to_string();
        conn.execute(
            "INSERT INTO transcript_events (session_id, seq, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES ('s-1', 2, 1, ?1, ?2, '{}')",
            rusqlite::params![zstd::bulk::compress(raw.as_bytes(), 3).unwrap(), raw.len() as i64],
        )
        .unwrap();
        // Stored out of order: read in `seq` order.
        conn.execute(plain, rusqlite::params!["s-1", 4, lines[2].to_string()])
            .unwrap();
        // A compressed row whose recorded size is wrong stays a `null` line.
        conn.execute(
            "INSERT INTO transcript_events (session_id, seq, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES ('s-1', 3, 1, ?1, ?2, '{}')",
            rusqlite::params![zstd::bulk::compress(raw.as_bytes(), 3).unwrap(), raw.len() as i64 + 1],
        )
        .unwrap();
        conn.execute(plain, rusqlite::params!["s-2", 1, lines[0].to_string()])
            .unwrap();
        drop(conn);
        let text = read_session("openclaw", &db, "s-1").unwrap();
        let got: Vec<&str> = text.lines().collect();
        let want = [
            lines[0].to_string(),
            lines[1].to_string(),
            "null".into(),
            lines[2].to_string(),
        ];
        assert_eq!(got, want);
        let turns = cairn_ingest::parse_openclaw_session(&text, 0);
        let said: Vec<(&str, &str)> = turns
            .iter()
            .map(|t| (t.role.as_str(), t.text.as_str()))
            .collect();
        assert_eq!(said, [("user", "why?"), ("assistant", "because")]);
        assert!(openclaw_db_has(&db, "s-2").unwrap() && !openclaw_db_has(&db, "s-3").unwrap());
        assert!(matches!(load_openclaw(&db, "s-3"), Err(Error::NotFound(_))));

        // Before 2026.9.6 the table had only `event_json`.
        let old = dir.path().join("old.sqlite");
        let conn = Connection::open(&old).unwrap();
        conn.execute_batch(
            "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq)) STRICT;",
        )
        .unwrap();
        conn.execute(plain, rusqlite::params!["s-1", 1, lines[1].to_string()])
            .unwrap();
        drop(conn);
        assert_eq!(
            load_openclaw(&old, "s-1").unwrap(),
            format!("{}\n", lines[1])
        );

        // Garbage is an error, not a panic.
        let junk = dir.path().join("junk.sqlite");
        std::fs::write(&junk, "not a database at all, not even close......").unwrap();
        assert!(load_openclaw(&junk, "s-1").is_err() && openclaw_db_has(&junk, "s-1").is_err());
    }
}
