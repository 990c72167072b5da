//! The stdio client's side of the shared daemon: copies MCP lines between
//! this process's stdin/stdout and the daemon's socket.
//!
//! When the daemon goes away mid-session (killed, crashed, out of memory)
//! the agent must not see "Connection closed" and lose its tools: the proxy
//! starts (or reaches) a daemon again through [`attach`], sends it again the
//! requests in flight that cannot change anything (read-only tools, lists),
//! answers the others (a write may have happened) with an error the agent
//! can retry on, replays
//! the session's `initialize` and `notifications/initialized` (swallowing
//! the answer: the agent already has one), sends the lines the old daemon
//! never received, and carries on. To know what was
//! in flight it reads each line's JSON-RPC `id` and `method`; it forwards
//! every line byte for byte.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::daemon::{AttachOptions, attach, socket_path};
use crate::error::{Error, Result};

/// Attempts to reach a daemon again before the proxy gives up.
const RECONNECT_ATTEMPTS: u32 = 3;

/// A request the daemon has not answered.
struct Pending {
    id: Value,
    line: Vec<u8>,
    /// Whether sending it again cannot change anything: a request other
    /// than a tool call, or a call of a tool annotated read-only.
    replayable: bool,
}

/// What the proxy remembers of the session.
struct Session {
    /// Tools annotated read-only (see [`crate::server::read_only_tools`]).
    read_only: HashSet<String>,
    /// Where client lines go now.
    upstream: UnixStream,
    /// The client's `initialize` request, replayed to a new daemon.
    initialize: Option<Vec<u8>>,
    /// The client's `notifications/initialized`, replayed after it.
    initialized: Option<Vec<u8>>,
    /// The client's requests not answered yet, oldest first.
    pending: Vec<Pending>,
    /// Lines the daemon never got (the write failed: it was gone), sent
    /// again to the next daemon. Safe to resend: nothing ran them.
    unsent: Vec<Vec<u8>>,
}

impl Session {
    /// Notes a line from the client: a request to wait for, the handshake.
    fn note_client_line(&mut self, line: &[u8]) {
        let Ok(msg) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let method = msg.get("method").and_then(Value::as_str);
        match (method, msg.get("id")) {
            (Some(method), Some(id)) => {
                if method == "initialize" {
                    self.initialize = Some(line.to_vec());
                }
                let replayable = method != "tools/call"
                    || msg
                        .pointer("/params/name")
                        .and_then(Value::as_str)
                        .is_some_and(|name| self.read_only.contains(name));
                self.pending.push(Pending {
                    id: id.clone(),
                    line: line.to_vec(),
                    replayable,
                });
            }
            (Some("notifications/initialized"), None) => self.initialized = Some(line.to_vec()),
            _ => {}
        }
    }

    /// Notes a line from the daemon: an answer ends a wait.
    fn note_daemon_line(&mut self, line: &[u8]) {
        let Ok(msg) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        if msg.get("method").is_none()
            && let Some(id) = msg.get("id")
            && let Some(i) = self.pending.iter().position(|p| &p.id == id)
        {
            self.pending.remove(i);
        }
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Copies stdin to the daemon and the daemon's answers to stdout until the
/// client closes stdin; restarts the daemon when it goes away (see the
/// module). `stream` is the connection [`attach`] made with `opts`.
pub fn pump(root: &Path, opts: &AttachOptions, stream: UnixStream) -> Result<()> {
    let sock = socket_path(root);
    let session = Arc::new(Mutex::new(Session {
        read_only: crate::server::read_only_tools(),
        upstream: stream.try_clone().map_err(io_err(&sock))?,
        initialize: None,
        initialized: None,
        pending: Vec::new(),
        unsent: Vec::new(),
    }));
    let closed = Arc::new(AtomicBool::new(false));
    {
        let (session, closed) = (session.clone(), closed.clone());
        std::thread::Builder::new()
            .name("cairn-stdin".into())
            .spawn(move || client_to_daemon(&session, &closed))
            .map_err(io_err(&sock))?;
    }
    let mut reader = BufReader::new(stream);
    let mut stdout = std::io::stdout().lock();
    let out = PathBuf::from("stdout");
    loop {
        let mut line = Vec::new();
        let n = reader.read_until(b'\n', &mut line).unwrap_or(0);
        if n > 0 && line.ends_with(b"\n") {
            lock(&session).note_daemon_line(&line);
            stdout.write_all(&line).map_err(io_err(&out))?;
            stdout.flush().map_err(io_err(&out))?;
            continue;
        }
        // The daemon's side ended: the client left (we closed our half
        // after stdin ended), or the daemon went away.
        if closed.load(Ordering::SeqCst) {
            stdout.write_all(&line).map_err(io_err(&out))?;
            return stdout.flush().map_err(io_err(&out));
        }
        let mut s = lock(&session);
        tracing::warn!("the cairn daemon went away; starting it again");
        // Read-only requests go to the next daemon as they are; a write may
        // have happened, so its caller decides (a retryable error).
        let mut again = Vec::new();
        let mut lost = Vec::new();
        for p in std::mem::take(&mut s.pending) {
            if p.replayable {
                if s.initialize.as_deref() == Some(&p.line[..]) {
                    // Not answered yet: sent again as it is, answer forwarded.
                    s.initialize = None;
                }
                again.push(p.line);
            } else {
                lost.push(p.id);
            }
        }
        again.append(&mut s.unsent);
        s.unsent = again;
        for id in lost {
            let error = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32603,
                    "message": "the cairn daemon went away during this request and was started again: send the request again",
                },
            });
            writeln!(stdout, "{error}").map_err(io_err(&out))?;
        }
        stdout.flush().map_err(io_err(&out))?;
        reader = reconnect(&mut s, root, opts)?;
    }
}

fn lock(session: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    cairn_core::sync::lock(session)
}

/// The stdin thread: each line is noted and written to the current daemon.
/// A line whose write fails never reached a daemon: it is kept for the next
/// one. A line written is a request the daemon may have run: if it goes
/// away before answering, the reader answers it with a retryable error.
fn client_to_daemon(session: &Mutex<Session>, closed: &AtomicBool) {
    let mut stdin = BufReader::new(std::io::stdin().lock());
    loop {
        let mut line = Vec::new();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let mut s = lock(session);
                if s.upstream.write_all(&line).is_ok() {
                    s.note_client_line(&line);
                } else {
                    // The daemon is gone and never saw this line: the
                    // reader reconnects and sends it to the next one.
                    s.unsent.push(line);
                }
            }
        }
    }
    closed.store(true, Ordering::SeqCst);
    let _ = lock(session).upstream.shutdown(std::net::Shutdown::Write);
}

/// Reaches a daemon again (starting one), replays the handshake and returns
/// the reader of the new connection. Holds the session, so client lines
/// wait and then go to the new daemon.
fn reconnect(s: &mut Session, root: &Path, opts: &AttachOptions) -> Result<BufReader<UnixStream>> {
    let sock = socket_path(root);
    // A restart neither re-runs an index pass nor prints its progress again.
    let mut opts = opts.clone();
    if let crate::daemon::Ask::Mcp { build_index, .. } = &mut opts.hello.ask {
        *build_index = false;
    }
    let mut last = None;
    for attempt in 0..RECONNECT_ATTEMPTS {
        std::thread::sleep(Duration::from_millis(100 * u64::from(attempt)));
        match attach(root, &opts).and_then(|stream| replay(s, stream, &sock)) {
            Ok(reader) => {
                tracing::info!("reconnected to the cairn daemon");
                return Ok(reader);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| Error::Daemon {
        socket: sock,
        message: "could not reconnect".into(),
    }))
}

/// Sends the session's handshake to a new daemon and skips its answer.
fn replay(s: &mut Session, stream: UnixStream, sock: &Path) -> Result<BufReader<UnixStream>> {
    let mut up = stream.try_clone().map_err(io_err(sock))?;
    let mut reader = BufReader::new(stream);
    if let Some(init) = &s.initialize {
        let id = serde_json::from_slice::<Value>(init)
            .ok()
            .and_then(|m| m.get("id").cloned());
        up.write_all(init).map_err(io_err(sock))?;
        loop {
            let mut line = Vec::new();
            if reader.read_until(b'\n', &mut line).map_err(io_err(sock))? == 0 {
                return Err(Error::Daemon {
                    socket: sock.to_path_buf(),
                    message: "closed the connection during the replayed initialize".into(),
                });
            }
            let answer = serde_json::from_slice::<Value>(&line).ok();
            if answer.is_some_and(|m| m.get("method").is_none() && m.get("id") == id.as_ref()) {
                break;
            }
        }
        if let Some(done) = &s.initialized {
            up.write_all(done).map_err(io_err(sock))?;
        }
    }
    for line in &s.unsent {
        up.write_all(line).map_err(io_err(sock))?;
    }
    for line in std::mem::take(&mut s.unsent) {
        s.note_client_line(&line);
    }
    s.upstream = up;
    Ok(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        let (a, _b) = UnixStream::pair().unwrap();
        Session {
            read_only: ["search".to_string()].into(),
            upstream: a,
            initialize: None,
            initialized: None,
            pending: Vec::new(),
            unsent: Vec::new(),
        }
    }

    #[test]
    fn the_read_only_tools_are_the_annotated_ones() {
        let ro = crate::server::read_only_tools();
        assert!(ro.contains("search") && ro.contains("expand"), "{ro:?}");
        assert!(
            !ro.contains("memory_store") && !ro.contains("memory_forget"),
            "{ro:?}"
        );
    }

    #[test]
    fn requests_wait_until_answered_and_the_handshake_is_kept() {
        let mut s = session();
        s.note_client_line(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        s.note_client_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        s.note_client_line(
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"expand"}}"#,
        );
        s.note_client_line(b"not json");
        let ids = |s: &Session| s.pending.iter().map(|p| p.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&s), vec![Value::from(0), Value::from("a")]);
        // initialize and a read-only tool may be sent again; a write not.
        s.note_client_line(
            br#"{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"memory_store"}}"#,
        );
        let replay: Vec<bool> = s.pending.iter().map(|p| p.replayable).collect();
        assert_eq!(replay, vec![true, false, false]);
        s.note_daemon_line(br#"{"jsonrpc":"2.0","id":"w","result":{}}"#);
        assert!(s.initialize.is_some() && s.initialized.is_some());
        // A request from the daemon with the same id is not an answer.
        s.note_daemon_line(br#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#);
        s.note_daemon_line(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        assert_eq!(ids(&s), vec![Value::from("a")]);
        s.note_daemon_line(br#"{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"x"}}"#);
        assert!(s.pending.is_empty());
    }
}
