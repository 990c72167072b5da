//! Fake HTTP servers on loopback for the tests: they record what they are
//! asked and answer what the test says.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// Reads one HTTP request: its head and its body.
pub(crate) fn read_request(s: &TcpStream) -> (String, Vec<u8>) {
    let mut reader = BufReader::new(s.try_clone().unwrap());
    let mut head = String::new();
    let mut len = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
        head.push_str(&line);
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    (head, body)
}

/// Writes an HTTP answer and closes the connection (so a client never
/// reuses it for a second request this server would not read).
fn answer(s: &mut TcpStream, status: u16, body: &str) {
    let _ = write!(
        s,
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
}

/// A one-request HTTP server on loopback answering `body` after `delay`;
/// returns its base URL and a handle giving the request it saw.
pub(crate) fn serve_once(
    body: &'static str,
    delay: Duration,
) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let (head, req) = read_request(&s);
        std::thread::sleep(delay);
        answer(&mut s, 200, body);
        head + &String::from_utf8_lossy(&req)
    });
    (url, handle)
}

/// One request a [`Fake`] server saw.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    /// The request line and headers, header names lower-cased.
    pub head: String,
    /// The body, parsed as JSON (`null` when it is not).
    pub body: Value,
}

impl Seen {
    /// The request line: `POST /path HTTP/1.1`.
    pub fn line(&self) -> &str {
        self.head.lines().next().unwrap_or("")
    }

    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            (n.trim().eq_ignore_ascii_case(name)).then(|| v.trim().to_string())
        })
    }
}

/// A server on loopback answering every request with what `reply` makes of
/// its body (a status and a body), and keeping every request.
pub(crate) struct Fake {
    /// `http://127.0.0.1:port`.
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    pub fn new(reply: impl Fn(&Value) -> (u16, String) + Send + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let (head, body) = read_request(&s);
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let (status, out) = reply(&body);
                log.lock().unwrap().push(Seen { head, body });
                answer(&mut s, status, &out);
            }
        });
        Fake { url, seen }
    }

    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}
