//! Cairn over the Model Context Protocol.
//!
//! A thin adapter: [`server::CairnServer`] turns the tools `search`, `expand`,
//! `get` and `status` into engine calls. Around it: stdio ([`serve_stdio`]),
//! streamable HTTP ([`http`]), the per-project daemon that lets every stdio
//! client share one warm engine ([`daemon`]), and watch mode ([`watch`]).
#![deny(missing_docs)]

mod budget;
#[cfg(unix)]
pub mod daemon;
mod error;
pub mod http;
pub mod server;
pub mod watch;

pub use error::{Error, Result};
pub use server::{CairnServer, Shared};

/// Serves one MCP session over this process's stdin and stdout.
pub async fn serve_stdio(shared: std::sync::Arc<Shared>) -> Result<()> {
    use rmcp::ServiceExt;
    let running = CairnServer::new(shared)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Protocol(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| Error::Protocol(e.to_string()))?;
    Ok(())
}
