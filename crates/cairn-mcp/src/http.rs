//! Streamable HTTP at `/mcp`, plus `GET /health`.
//!
//! Safe by default: it binds loopback; any other address needs a bearer
//! token, checked on every `/mcp` request. `Host` is checked against the
//! allowed host names and a browser `Origin` must be a loopback origin (or
//! one the user allows), which defeats DNS rebinding from web pages.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
pub use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::server::{CairnServer, Shared};

/// How to serve over HTTP.
#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// Address to bind.
    pub addr: Option<SocketAddr>,
    /// Bearer token clients must send (`Authorization: Bearer …`).
    pub token: Option<String>,
    /// Extra host names accepted in `Host` (besides loopback names and the bound address).
    pub allowed_hosts: Vec<String>,
    /// Extra browser origins accepted in `Origin` (scheme://host:port).
    pub allowed_origins: Vec<String>,
}

/// The default address: loopback only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8765";

/// Constant-time equality, so the token cannot be guessed byte by byte.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn bearer(State(token): State<Arc<Option<String>>>, req: Request, next: Next) -> Response {
    if let Some(expected) = token.as_ref() {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !given.is_some_and(|g| same(g.as_bytes(), expected.as_bytes())) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "missing or wrong bearer token\n",
            )
                .into_response();
        }
    }
    next.run(req).await
}

/// The router: `/mcp` (streamable HTTP) and `/health`.
pub fn router(shared: Arc<Shared>, opts: &HttpOptions, cancel: CancellationToken) -> Router {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if let Some(addr) = opts.addr {
        hosts.push(addr.ip().to_string());
        hosts.push(addr.to_string());
    }
    hosts.extend(opts.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
    ];
    origins.extend(opts.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_cancellation_token(cancel);
    let for_service = shared.clone();
    let service = StreamableHttpService::new(
        move || Ok(CairnServer::new(for_service.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    let token = Arc::new(opts.token.clone());
    // The token layer wraps only what is added before it: `/mcp`, not `/health`.
    Router::new()
        .nest_service("/mcp", service)
        .layer(from_fn_with_state(token, bearer))
        .route(
            "/health",
            get(move || {
                let shared = shared.clone();
                async move {
                    let status = tokio::task::spawn_blocking(move || shared.engine.status()).await;
                    match status {
                        Ok(Ok(s)) => axum::Json(serde_json::json!({
                            "status": "ok",
                            "files": s.files,
                            "chunks": s.chunks,
                            "embedded_chunks": s.embedded_chunks,
                            "embedding_in_progress": s.embedding_in_progress,
                        }))
                        .into_response(),
                        Ok(Err(e)) => {
                            (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response()
                        }
                        Err(e) => {
                            (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response()
                        }
                    }
                }
            }),
        )
}

/// Binds and serves until `cancel` fires. Refuses a non-loopback address
/// without a token.
pub async fn serve(
    shared: Arc<Shared>,
    opts: HttpOptions,
    cancel: CancellationToken,
) -> Result<()> {
    let addr = opts.addr.unwrap_or_else(|| {
        DEFAULT_ADDR
            .parse()
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 8765)))
    });
    if !addr.ip().is_loopback() && opts.token.as_deref().is_none_or(str::is_empty) {
        return Err(Error::Http {
            addr: addr.to_string(),
            message: "binding an address other than loopback needs a bearer token \
                      (--token or CAIRN_HTTP_TOKEN)"
                .into(),
        });
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Http {
            addr: addr.to_string(),
            message: e.to_string(),
        })?;
    let bound = listener.local_addr().map_err(|e| Error::Http {
        addr: addr.to_string(),
        message: e.to_string(),
    })?;
    let opts = HttpOptions {
        addr: Some(bound),
        ..opts
    };
    eprintln!("cairn: MCP over streamable HTTP at http://{bound}/mcp (health: /health)");
    let app = router(shared, &opts, cancel.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { cancel.cancelled().await })
        .await
        .map_err(|e| Error::Http {
            addr: bound.to_string(),
            message: e.to_string(),
        })
}
