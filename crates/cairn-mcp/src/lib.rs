//! Cairn over the Model Context Protocol.
//!
//! A thin adapter: [`server::CairnServer`] turns the tools `search`, `expand`,
//! `get` and `status` into engine calls. Around it: stdio ([`serve_stdio`],
//! each line checked before rmcp reads it: see [`serve_lines`]), streamable
//! HTTP ([`http`]), the per-project daemon that lets every stdio client share
//! one warm engine ([`daemon`]; the client side, which restarts a daemon that
//! went away, is [`proxy`]), and watch mode ([`watch`]).
#![deny(missing_docs)]

mod budget;
#[cfg(unix)]
pub mod daemon;
mod error;
mod frames;
pub mod graph;
pub mod http;
mod http_conn;
mod http_guard;
mod http_sessions;
#[cfg(unix)]
pub mod proxy;
mod schema;
pub mod server;
mod tokens;
pub mod ui;
pub mod watch;

pub use error::{CallError, Error, Result};
pub use frames::MAX_MESSAGE_BYTES;
pub use server::{CairnServer, Shared};

/// Serves one MCP session over this process's stdin and stdout.
pub async fn serve_stdio(shared: std::sync::Arc<Shared>) -> Result<()> {
    let (read, write) = rmcp::transport::stdio();
    serve_lines(shared, read, write).await
}

/// How long the end of a session waits for its last answers to be written.
const FLUSH_AT_END: std::time::Duration = std::time::Duration::from_secs(5);

/// Serves one MCP session of newline-delimited JSON-RPC (stdio, the
/// daemon's socket) until the client leaves. Every line is checked before
/// it is read as a message: a malformed one, or one over
/// [`MAX_MESSAGE_BYTES`], is answered with a JSON-RPC error and the session
/// goes on (see `frames.rs`).
pub async fn serve_lines<R, W>(shared: std::sync::Arc<Shared>, read: R, write: W) -> Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::ServiceExt;
    let (transport, writer) = frames::transport(read, write);
    let served = async {
        let running = CairnServer::new(shared)
            .serve(transport)
            .await
            .map_err(|e| Error::Protocol(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::Protocol(e.to_string()))?;
        Ok(())
    }
    .await;
    // The writer ends once the transport and its sends are gone, having
    // written what they queued.
    if tokio::time::timeout(FLUSH_AT_END, writer).await.is_err() {
        tracing::debug!("MCP output not written within {FLUSH_AT_END:?} of the session's end");
    }
    served
}
