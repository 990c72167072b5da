//! Streamable HTTP at `/mcp`, plus `GET /health`.
//!
//! Safe by default: it binds loopback; any other address needs a bearer
//! token, checked on every request (`/health` too). `Host` is checked against
//! the allowed host names and a browser `Origin` must be a loopback origin (or
//! one the user allows), which defeats DNS rebinding from web pages.
//!
//! Bounded: at most [`HttpLimits::max_connections`] connections, each closed
//! when a request head takes longer than [`HttpLimits::header_timeout`] (idle
//! keep-alive connections too); request bodies are read within
//! [`HttpLimits::body_timeout`] and up to [`HttpLimits::max_body_bytes`]; at
//! most [`HttpLimits::max_sessions`] MCP sessions, each dropped after
//! [`HttpLimits::session_idle`] without a message, or
//! [`HttpLimits::session_unused`] after its creation when it sent nothing
//! after its `initialize`; one client address holds at most
//! [`HttpLimits::max_sessions_per_address`] of them, and a new session makes
//! room by ending the longest idle one (503 only when none is idle), so
//! `initialize` calls left open cannot lock other clients out. See
//! `http_conn.rs`, `http_guard.rs` and `http_sessions.rs`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware::{from_fn_with_state, map_response};
use axum::response::IntoResponse;
use axum::routing::get;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
pub use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::http_conn::ConnLimits;
use crate::http_guard::{Guard, check_caller, read_body};
use crate::http_sessions::{SessionLimits, Sessions};
use crate::server::{CairnServer, Shared};
use crate::ui::{PageAuth, PageKeys};

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
    /// The web page's keys: when set, the page opens only from an address
    /// with one of their one-time tokens (`http://…/?token=…`,
    /// [`PageKeys::issue`]), which its first load trades for a session
    /// cookie, and each `/api/*` call must carry that cookie (else 403; see
    /// `ui.rs`). `cairn ui` and `serve --http` make new keys at each start.
    pub page: Option<Arc<PageKeys>>,
    /// Timeouts and caps.
    pub limits: HttpLimits,
}

/// Timeouts and caps of the HTTP server; the defaults suit one machine's agents.
#[derive(Clone, Copy, Debug)]
pub struct HttpLimits {
    /// Longest wait for a complete request head, counted from when the
    /// connection can take one: a slow client, or a keep-alive connection
    /// idle this long, is closed. Default 10 s.
    pub header_timeout: Duration,
    /// Longest wait for a whole request body (answered 408). Default 30 s.
    pub body_timeout: Duration,
    /// Largest request body (answered 413). Default
    /// [`crate::MAX_MESSAGE_BYTES`] (4 MiB), the cap stdio has too.
    pub max_body_bytes: usize,
    /// Most connections open at once. Default 64.
    pub max_connections: usize,
    /// Most live MCP sessions. At the cap, a new session ends the longest
    /// idle one (no request in flight, no event stream open: first one
    /// unused since its `initialize`, but not one of the newest unused,
    /// which clients arriving together are still setting up; else the
    /// least recently used; else the oldest of those newest); an
    /// `initialize` is answered 503 only when none is idle. Default 128.
    pub max_sessions: usize,
    /// Most live MCP sessions of one client address (at most
    /// `max_sessions`). At its share, the address's new session ends its
    /// own longest idle one, or is answered 503. Default 64, half of
    /// `max_sessions`.
    pub max_sessions_per_address: usize,
    /// A session without a message for this long is dropped. Default 10 min.
    pub session_idle: Duration,
    /// A session that sends no message after its `initialize` (a client
    /// sends `notifications/initialized` at once) is dropped this long
    /// after its creation. Default 10 s.
    pub session_unused: Duration,
    /// How long shutdown waits for requests in flight. Default 5 s.
    pub shutdown_grace: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: crate::MAX_MESSAGE_BYTES,
            max_connections: 64,
            max_sessions: 128,
            max_sessions_per_address: 64,
            session_idle: Duration::from_secs(600),
            session_unused: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

impl HttpLimits {
    /// Within what the server can run with: timeouts from 1 ms to a day
    /// (hyper adds them to the clock), counts from 1 (sessions from 0) to
    /// what a semaphore holds, an address's share of sessions at most all.
    fn bounded(self) -> HttpLimits {
        let time = |d: Duration| d.clamp(Duration::from_millis(1), Duration::from_secs(86_400));
        let most = tokio::sync::Semaphore::MAX_PERMITS.min(u32::MAX as usize);
        HttpLimits {
            header_timeout: time(self.header_timeout),
            body_timeout: time(self.body_timeout),
            max_body_bytes: self.max_body_bytes,
            max_connections: self.max_connections.clamp(1, most),
            max_sessions: self.max_sessions.min(most),
            max_sessions_per_address: self
                .max_sessions_per_address
                .min(self.max_sessions.min(most)),
            session_idle: time(self.session_idle),
            session_unused: time(self.session_unused),
            shutdown_grace: time(self.shutdown_grace),
        }
    }
}

/// The default address: loopback only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8765";

/// `GET /health`: the index's counts as JSON.
async fn health(shared: Arc<Shared>) -> axum::response::Response {
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
        Ok(Err(e)) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// The router: `/mcp` (streamable HTTP), `/health` and the web page, behind
/// the `Host`/`Origin` checks, the token and the body limits; every answer
/// with the page's security headers.
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
    let limits = opts.limits.bounded();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins.clone())
        .with_max_request_body_bytes(limits.max_body_bytes)
        .with_cancellation_token(cancel);
    let sessions = Sessions::new(SessionLimits {
        max: limits.max_sessions,
        per_address: limits.max_sessions_per_address,
        idle: limits.session_idle,
        unused: limits.session_unused,
    });
    let for_service = shared.clone();
    let service = StreamableHttpService::new(
        move || Ok(CairnServer::new(for_service.clone())),
        sessions.clone(),
        config,
    );
    let page = Arc::new(
        opts.page
            .clone()
            .map(|keys| PageAuth::new(keys, opts.addr.map(|a| a.port()))),
    );
    let guard = Arc::new(Guard {
        hosts,
        origins,
        token: opts.token.clone().filter(|t| !t.is_empty()),
        page: page.clone(),
        body_timeout: limits.body_timeout,
        max_body_bytes: limits.max_body_bytes,
        sessions,
    });
    // The last layer runs first: caller checks, then the body.
    Router::new()
        .nest_service("/mcp", service)
        .merge(crate::ui::routes(shared.clone(), page))
        .route("/health", get(move || health(shared.clone())))
        .layer(from_fn_with_state(guard.clone(), read_body))
        .layer(from_fn_with_state(guard, check_caller))
        .layer(map_response(crate::ui::security_headers))
}

fn http_error(addr: SocketAddr, e: impl std::fmt::Display) -> Error {
    Error::Http {
        addr: addr.to_string(),
        message: e.to_string(),
    }
}

/// Refuses a non-loopback address without a token.
fn check_exposure(addr: SocketAddr, opts: &HttpOptions) -> Result<()> {
    if !addr.ip().is_loopback() && opts.token.as_deref().is_none_or(str::is_empty) {
        return Err(http_error(
            addr,
            "binding an address other than loopback needs a bearer token \
             (--token-file, CAIRN_HTTP_TOKEN or --token)",
        ));
    }
    Ok(())
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
    check_exposure(addr, &opts)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| http_error(addr, e))?;
    if let Ok(bound) = listener.local_addr() {
        match &opts.page {
            Some(keys) if keys.has_fixed() => {
                eprintln!("cairn: the web page at http://{bound}/#token=… (the bearer token)")
            }
            // One address, opening the page once (its token is then spent).
            Some(keys) => eprintln!(
                "cairn: the web page at http://{bound}/?token={} (opens once)",
                keys.issue()?
            ),
            None => {}
        }
    }
    serve_on_listener(shared, opts, listener, cancel).await
}

/// Serves on a listener already bound (`opts.addr` is ignored) until
/// `cancel` fires, then lets requests in flight finish for up to
/// [`HttpLimits::shutdown_grace`].
pub async fn serve_on_listener(
    shared: Arc<Shared>,
    opts: HttpOptions,
    listener: tokio::net::TcpListener,
    cancel: CancellationToken,
) -> Result<()> {
    let bound = listener
        .local_addr()
        .map_err(|e| http_error(opts.addr.unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0))), e))?;
    check_exposure(bound, &opts)?;
    let opts = HttpOptions {
        addr: Some(bound),
        ..opts
    };
    eprintln!("cairn: MCP over streamable HTTP at http://{bound}/mcp (health: /health)");
    let app = router(shared, &opts, cancel.clone());
    let limits = opts.limits.bounded();
    let limits = ConnLimits {
        max_connections: limits.max_connections,
        header_timeout: limits.header_timeout,
        shutdown_grace: limits.shutdown_grace,
    };
    crate::http_conn::serve(listener, app, limits, cancel).await;
    Ok(())
}
