//! Cairn over the Model Context Protocol.
//!
//! A thin adapter: [`server::CairnServer`] turns the tools `search`, `expand`,
//! `get` and `status` into engine calls. Around it: stdio ([`serve_stdio`]),
//! streamable HTTP ([`http`]), the per-project daemon that lets every stdio
//! client share one warm engine ([`daemon`]; the client side, which restarts a
//! daemon that went away, is [`proxy`]), and watch mode ([`watch`]).
#![deny(missing_docs)]

mod budget;
#[cfg(unix)]
pub mod daemon;
mod error;
pub mod http;
mod http_conn;
mod http_guard;
mod http_sessions;
#[cfg(unix)]
pub mod proxy;
mod schema;
pub mod server;
pub mod ui;
pub mod watch;

pub use error::{Error, Result};
pub use server::{CairnServer, Shared};

/// Serves one MCP session over this process's stdin and stdout.
pub async fn serve_stdio(shared: std::sync::Arc<Shared>) -> Result<()> {
    serve_on(shared, rmcp::transport::stdio()).await
}

/// Serves one MCP session over any transport rmcp accepts (stdio, a socket,
/// a duplex pipe) until the client leaves.
pub(crate) async fn serve_on<T, E, A>(shared: std::sync::Arc<Shared>, transport: T) -> Result<()>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::ServiceExt;
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
