//! The checks every HTTP request passes before a route sees it: `Host` and
//! `Origin` against the allow-lists (DNS rebinding), the bearer token, then
//! the body: read whole within a time limit and a size limit, and, for a
//! JSON post, parsed as a JSON-RPC message (400 when it is not one). A post
//! that would open an MCP session takes a session slot first, for the
//! client's address (`ConnectInfo`, set by `http_conn.rs`), ending the
//! longest idle session when the table or the address's share is full (503
//! when none is idle; see `http_sessions.rs`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};

use crate::http_sessions::{Reservation, Sessions};
use crate::tokens::same;

/// Everything the checks need.
pub(crate) struct Guard {
    pub(crate) hosts: Vec<String>,
    pub(crate) origins: Vec<String>,
    pub(crate) token: Option<String>,
    /// The page's keys: its API calls may pass on their cookie instead of
    /// the bearer token.
    pub(crate) page: Arc<Option<crate::ui::PageAuth>>,
    pub(crate) body_timeout: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) sessions: Arc<Sessions>,
}

/// A host as compared: lower case, no IPv6 brackets.
fn normal_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// `host[:port]` split, or a bare IPv6 address (`::1`).
fn host_and_port(authority: &str) -> Option<(String, Option<u16>)> {
    if let Ok(a) = authority.parse::<axum::http::uri::Authority>() {
        return Some((normal_host(a.host()), a.port_u16()));
    }
    authority
        .parse::<std::net::Ipv6Addr>()
        .ok()
        .map(|ip| (ip.to_string(), None))
}

/// Whether the request's `Host` (or absolute-form authority) is allowed; an
/// allowed entry without a port allows every port.
fn host_allowed(uri: &Uri, headers: &HeaderMap, allowed: &[String]) -> bool {
    let given = uri.authority().map(|a| a.as_str().to_owned()).or_else(|| {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned)
    });
    let Some((host, port)) = given.as_deref().and_then(host_and_port) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| host_and_port(a))
        .any(|(h, p)| h == host && p.is_none_or(|p| Some(p) == port))
}

/// An origin's scheme, host and port (the scheme's default when absent).
fn origin_parts(origin: &str) -> Option<(String, String, Option<u16>)> {
    let uri = origin.trim().parse::<Uri>().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    let port = authority.port_u16().or(match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    });
    Some((scheme, normal_host(authority.host()), port))
}

/// Whether a browser `Origin` is allowed: entries are `scheme://host:port`,
/// `:*` (or no port) for any port, or `null`.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    if origin.trim().eq_ignore_ascii_case("null") {
        return allowed.iter().any(|a| a.eq_ignore_ascii_case("null"));
    }
    let Some((scheme, host, port)) = origin_parts(origin) else {
        return false;
    };
    allowed.iter().any(|entry| {
        let (entry, any_port) = match entry.strip_suffix(":*") {
            Some(e) => (e, true),
            None => (entry.as_str(), false),
        };
        let Ok(uri) = entry.parse::<Uri>() else {
            return false;
        };
        let Some(authority) = uri.authority() else {
            return false;
        };
        uri.scheme_str()
            .is_some_and(|s| s.eq_ignore_ascii_case(&scheme))
            && normal_host(authority.host()) == host
            && (any_port || authority.port_u16().is_none_or(|p| Some(p) == port))
    })
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, format!("{message}\n")).into_response()
}

/// Refuses, and closes the connection after the answer (the rest of the
/// body is not read).
fn refuse_and_close(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(header::CONNECTION, "close")],
        format!("{message}\n"),
    )
        .into_response()
}

/// `Host`, `Origin` and the bearer token, on every route.
pub(crate) async fn check_caller(
    State(g): State<Arc<Guard>>,
    req: Request,
    next: Next,
) -> Response {
    if !host_allowed(req.uri(), req.headers(), &g.hosts) {
        return refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed",
        );
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| origin_allowed(o, &g.origins));
        if !ok {
            return refuse(
                StatusCode::FORBIDDEN,
                "Forbidden: Origin header is not allowed",
            );
        }
    }
    // The page's assets hold no data: a browser loads them before it can
    // send the token (the page then sends it with every API call). Its API
    // calls may pass on the page's cookie, got with the token.
    let asset = req.method() == Method::GET && crate::ui::is_asset(req.uri().path());
    let page_call = req.uri().path().starts_with("/api/")
        && g.page
            .as_ref()
            .as_ref()
            .is_some_and(|p| p.cookie_call_ok(req.headers()));
    if let Some(expected) = g.token.as_ref().filter(|_| !asset && !page_call) {
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

/// Why a body was not read.
enum BodyError {
    TooLarge,
    Broken(String),
}

async fn read_limited(body: Body, max: usize) -> Result<Bytes, BodyError> {
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(BodyError::TooLarge),
        Err(e) => Err(BodyError::Broken(e.to_string())),
    }
}

/// A JSON-RPC error answer without a request id, as HTTP 400.
fn bad_json_rpc(code: i32, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

fn opens_session(headers: &HeaderMap, message: &ClientJsonRpcMessage) -> bool {
    !headers.contains_key("mcp-session-id")
        && matches!(
            message,
            JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_))
        )
}

/// The body, read whole under the time and size limits; a JSON post checked
/// as JSON-RPC; a session slot for an `initialize`.
pub(crate) async fn read_body(State(g): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let too_large = format!(
        "Payload Too Large: the request body is over {} bytes",
        g.max_body_bytes
    );
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > g.max_body_bytes as u64) {
        return refuse_and_close(StatusCode::PAYLOAD_TOO_LARGE, &too_large);
    }
    let bytes =
        match tokio::time::timeout(g.body_timeout, read_limited(body, g.max_body_bytes)).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(BodyError::TooLarge)) => {
                return refuse_and_close(StatusCode::PAYLOAD_TOO_LARGE, &too_large);
            }
            Ok(Err(BodyError::Broken(e))) => {
                return refuse_and_close(StatusCode::BAD_REQUEST, &format!("Bad Request: {e}"));
            }
            Err(_) => {
                let message = format!(
                    "Request Timeout: the body did not arrive within {} ms",
                    g.body_timeout.as_millis()
                );
                return refuse_and_close(StatusCode::REQUEST_TIMEOUT, &message);
            }
        };
    let mut slot: Option<Reservation> = None;
    // Only `/mcp` speaks JSON-RPC; the page's API posts plain JSON.
    if parts.method == Method::POST
        && is_json(&parts.headers)
        && parts.uri.path().starts_with("/mcp")
    {
        let message = match serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
            Ok(m) => m,
            Err(e) if e.is_data() => {
                return bad_json_rpc(-32600, format!("Invalid Request: {e}"));
            }
            Err(e) => return bad_json_rpc(-32700, format!("Parse error: {e}")),
        };
        if opens_session(&parts.headers, &message) {
            let peer = parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip());
            match g.sessions.reserve(peer).await {
                Ok(s) => slot = Some(s),
                Err(e) => {
                    let message = format!(
                        "Service Unavailable: {e}; end one (DELETE /mcp with its Mcp-Session-Id) \
                         or retry once one is idle"
                    );
                    return (
                        StatusCode::SERVICE_UNAVAILABLE,
                        [(header::RETRY_AFTER, "5")],
                        format!("{message}\n"),
                    )
                        .into_response();
                }
            }
        }
    }
    let deleting = parts.method == Method::DELETE;
    let req = Request::from_parts(parts, Body::from(bytes));
    let mut resp = match slot {
        Some(slot) => Sessions::with_reservation(slot, next.run(req)).await,
        None => next.run(req).await,
    };
    // The transport answers a session's DELETE with 202, which the official
    // Python SDK reports as "Session termination failed: 202": the session
    // is ended when the answer is sent, so say 200.
    if deleting && resp.status() == StatusCode::ACCEPTED {
        *resp.status_mut() = StatusCode::OK;
    }
    resp
}
