//! MCP over a line-delimited byte stream (stdio, the daemon's socket), with
//! every line checked before rmcp sees it.
//!
//! rmcp's own stream transport drops a line that is not JSON without a word
//! (its issue 938: an answer could start an error storm with a peer that
//! echoes), answers a line that is JSON but no message with an error that has
//! no `id` member, and reads lines up to 16 MiB. So five kinds of malformed
//! frame got no answer at all (100,000 nested `[`, an id past `i64`, a lone
//! surrogate `"\ud800"`, bytes that are not UTF-8, text that is not JSON),
//! and a 10 MB memory was stored over stdio where HTTP refuses a body over
//! 4 MiB. Here, as JSON-RPC 2.0 says, each line gets one of:
//!
//! * its message, handed to rmcp (a notification rmcp ignores for
//!   compatibility, such as a non-MCP one, is ignored as rmcp would);
//! * `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: …"}}`
//!   when it is not UTF-8 or not JSON (serde_json's nesting limit of 128
//!   and its refusal of lone surrogates and out-of-range numbers included);
//! * `-32600` ("Invalid Request: …") when it is JSON but not a JSON-RPC
//!   message rmcp can read, with the line's `id` when it has a usable one
//!   (an integer in `i64` or a string), else `null`;
//! * `-32600` when it is longer than [`MAX_MESSAGE_BYTES`], the cap HTTP
//!   puts on a request body: the line is skipped to its end, never held
//!   whole, and nothing of it runs.
//!
//! Empty lines are skipped. Then the next line is read: the session goes
//! on. One task writes every outgoing line, rmcp's answers and these errors
//! alike, each whole, so two frames never interleave.

use std::io;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::bytes::{BufMut, BytesMut};
use tokio_util::codec::Decoder;

/// The largest MCP message Cairn reads, over every transport: a line over
/// stdio or the daemon's socket, a request body over HTTP
/// ([`crate::http::HttpLimits::max_body_bytes`] defaults to it). 4 MiB: far
/// above any tool call an agent makes (a memory is a few KB), far below what
/// would hurt to hold.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Outgoing lines queued for the writer task before senders wait.
const QUEUED_LINES: usize = 64;

/// What one incoming line is.
#[derive(Debug)]
enum Line {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do (an empty line, a notification rmcp ignores).
    Skip,
    /// Not a message: the error line to answer with.
    Refused(Vec<u8>),
}

/// A JSON-RPC error line.
fn error_line(id: Value, code: i32, message: String) -> Vec<u8> {
    let mut line = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// The error line for a line over [`MAX_MESSAGE_BYTES`].
fn too_long() -> Vec<u8> {
    error_line(
        Value::Null,
        -32600,
        format!(
            "Invalid Request: the message is over {MAX_MESSAGE_BYTES} bytes; none of it was read"
        ),
    )
}

/// The `id` of a JSON-RPC line, when it is one rmcp could have used.
fn usable_id(text: &str) -> Value {
    let id = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("id").cloned());
    match id {
        Some(Value::String(s)) => Value::String(s),
        Some(Value::Number(n)) if n.as_i64().is_some() => Value::Number(n),
        _ => Value::Null,
    }
}

/// Reads one line (its newline and a `\r` before it removed; at most
/// [`MAX_MESSAGE_BYTES`]).
fn classify(line: &[u8]) -> Line {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Line::Refused(error_line(
                Value::Null,
                -32700,
                format!(
                    "Parse error: the line is not UTF-8 (invalid byte at offset {})",
                    e.valid_up_to()
                ),
            ));
        }
    };
    // rmcp's own reading, so what it accepts and ignores is unchanged.
    let mut codec = JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::new();
    let mut buf = BytesMut::with_capacity(line.len() + 1);
    buf.put_slice(line);
    buf.put_u8(b'\n');
    match codec.decode(&mut buf) {
        Ok(Some(message)) => Line::Message(Box::new(message)),
        Ok(None) => Line::Skip,
        Err(JsonRpcMessageCodecError::Serde(e)) if e.is_data() => Line::Refused(error_line(
            usable_id(text),
            -32600,
            format!("Invalid Request: {e}"),
        )),
        Err(e) => {
            let e = match e {
                JsonRpcMessageCodecError::Serde(e) => e.to_string(),
                other => other.to_string(),
            };
            Line::Refused(error_line(Value::Null, -32700, format!("Parse error: {e}")))
        }
    }
}

/// How a bounded line read ended.
enum Read {
    /// A whole line is in the buffer.
    Line,
    /// A line over the cap ended (or the stream did, inside it).
    TooLong,
    /// The stream ended.
    End,
}

/// rmcp's [`Transport`] over a line-delimited stream, checking each line
/// (see the module).
pub(crate) struct Lines<R> {
    read: BufReader<R>,
    /// The line being read; kept across a cancelled `receive`.
    line: Vec<u8>,
    /// Skipping the rest of a line over the cap.
    skipping: bool,
    /// An error line not yet queued; kept across a cancelled `receive`.
    answer: Option<Vec<u8>>,
    out: mpsc::Sender<Vec<u8>>,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// Reads into `self.line` until a newline, never past the cap. Safe to
    /// cancel: `fill_buf` consumes nothing, and the copy and `consume` run
    /// with no await between them.
    async fn read_line(&mut self) -> io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                if self.skipping {
                    self.skipping = false;
                    return Ok(Read::TooLong);
                }
                // A last line without its newline is still a line.
                return Ok(if self.line.is_empty() {
                    Read::End
                } else {
                    Read::Line
                });
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            if !self.skipping {
                if self.line.len() + take > MAX_MESSAGE_BYTES + 2 {
                    // Over the cap (a `\r\n` ending allowed): drop what
                    // was read and skip to the line's end.
                    self.line = Vec::new();
                    self.skipping = true;
                } else {
                    self.line.extend_from_slice(&available[..take]);
                }
            }
            self.read.consume(take);
            if newline.is_some() {
                if self.skipping {
                    self.skipping = false;
                    return Ok(Read::TooLong);
                }
                return Ok(Read::Line);
            }
        }
    }

    /// The line read, without its ending; over the cap when its text is.
    fn take_line(&mut self) -> Option<Vec<u8>> {
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        (line.len() <= MAX_MESSAGE_BYTES).then_some(line)
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for Lines<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            out.send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the output is closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.answer.is_some() {
                // `reserve` is safe to cancel: the answer stays until sent.
                let permit = self.out.reserve().await.ok()?;
                if let Some(answer) = self.answer.take() {
                    permit.send(answer);
                }
            }
            match self.read_line().await {
                Ok(Read::Line) => {}
                Ok(Read::TooLong) => {
                    tracing::debug!("a message over {MAX_MESSAGE_BYTES} bytes refused");
                    self.answer = Some(too_long());
                    continue;
                }
                Ok(Read::End) => return None,
                Err(e) => {
                    tracing::warn!("reading MCP input: {e}");
                    return None;
                }
            }
            let Some(line) = self.take_line() else {
                self.answer = Some(too_long());
                continue;
            };
            match classify(&line) {
                Line::Message(m) => return Some(*m),
                Line::Skip => {}
                Line::Refused(answer) => {
                    tracing::debug!("a malformed MCP line answered with an error");
                    self.answer = Some(answer);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Writes each queued line whole, flushing when the queue is empty, until
/// every sender is gone or the output fails.
async fn write_lines<W: AsyncWrite + Unpin>(mut write: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if let Err(e) = write.write_all(&line).await {
            tracing::debug!("writing MCP output: {e}");
            return;
        }
        if lines.is_empty()
            && let Err(e) = write.flush().await
        {
            tracing::debug!("writing MCP output: {e}");
            return;
        }
    }
    let _ = write.flush().await;
}

/// A checked transport over `read`, and the task that writes its output to
/// `write` (it ends once the transport and its sends are dropped).
pub(crate) fn transport<R, W>(read: R, write: W) -> (Lines<R>, tokio::task::JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, lines) = mpsc::channel(QUEUED_LINES);
    let writer = tokio::spawn(write_lines(write, lines));
    let transport = Lines {
        read: BufReader::new(read),
        line: Vec::new(),
        skipping: false,
        answer: None,
        out,
    };
    (transport, writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &[u8]) -> Value {
        match classify(line) {
            Line::Refused(answer) => serde_json::from_slice(&answer).expect("a JSON answer"),
            other => panic!(
                "{:?} was not refused: {other:?}",
                String::from_utf8_lossy(line)
            ),
        }
    }

    #[test]
    fn each_malformed_kind_is_refused_with_its_code() {
        let deep = "[".repeat(100_000);
        let cases: [(&[u8], i64); 7] = [
            (deep.as_bytes(), -32700),
            (br#"{"jsonrpc":"2.0","id":1e999,"method":"ping"}"#, -32700),
            (
                br#"{"jsonrpc":"2.0","id":99999999999999999999999,"method":"ping"}"#,
                -32600,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
                -32700,
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}",
                -32700,
            ),
            (b"hello, server", -32700),
            (br#"{"hello": 1}"#, -32600),
        ];
        for (line, code) in cases {
            let v = refused(line);
            let shown = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
            assert_eq!(v["jsonrpc"], "2.0", "{shown}: {v}");
            assert_eq!(v["error"]["code"], code, "{shown}: {v}");
            assert!(v.get("id").is_some_and(Value::is_null), "{shown}: {v}");
        }
    }

    #[test]
    fn an_invalid_request_with_a_usable_id_is_answered_with_it() {
        let v = refused(br#"{"jsonrpc":"2.0","id":"a7","method":"tools/call","params":5}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!("a7"), json!(-32600))
        );
    }

    #[test]
    fn messages_and_ignored_lines_pass_as_rmcp_reads_them() {
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Line::Message(_)
        ));
        // A notification rmcp cannot read but ignores (not an MCP one):
        // not answered.
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            Line::Skip
        ));
        // One of MCP's, unreadable: answered.
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
            Line::Refused(_)
        ));
        assert!(matches!(classify(b"  "), Line::Skip));
    }
}
