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

/// The transcript of an OpenClaw session: the `sessionFile` its session
/// entry names, else `<state>/agents/<agent>/sessions/<sessionId>.jsonl`
/// with the agent taken from the session key (`agent:<agentId>:…`, else
/// `main`). None without a usable id.
pub fn openclaw_transcript(
    session_key: &str,
    session_id: &str,
    session_file: &str,
) -> Option<PathBuf> {
    let file = Path::new(session_file);
    if file.is_absolute() && file.extension().is_some_and(|x| x == "jsonl") {
        return Some(file.to_path_buf());
    }
    if !safe_id(session_id) {
        return None;
    }
    let agent = session_key
        .strip_prefix("agent:")
        .and_then(|rest| rest.split(':').next())
        .filter(|a| safe_id(a))
        .unwrap_or("main");
    Some(
        openclaw_state_dir()?
            .join("agents")
            .join(agent)
            .join("sessions")
            .join(format!("{session_id}.jsonl")),
    )
}

/// A session's text as its client's parser reads it: OpenCode's from its
/// store, the others' transcript file as it is.
pub(crate) fn read_session(client: &str, source: &Path, session: &str) -> Result<String> {
    match client {
        "opencode" => load_opencode(source, session),
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
}
