//! The web page (`cairn ui`, and `/` of `serve --http`): its assets,
//! compiled into the binary, and the JSON API it reads, behind the same
//! `Host`/`Origin` checks and token as `/mcp` (the assets alone are served
//! without the token: they hold no data; see `http_guard.rs`).
//!
//! The API also wants the page's own keys
//! ([`crate::http::HttpOptions::page`], [`PageKeys`]). The address `cairn
//! ui` prints (`http://127.0.0.1:PORT/?token=…`, the daemon's page too; `serve
//! --http` prints one on stderr) carries a one-time token, 256 bits from
//! the OS. Its first load is answered `303 See Other` to `/`, with the
//! session key in a cookie (`HttpOnly`, so no script reads it;
//! `SameSite=Strict`; `Path=/`; named for the port, since browsers share
//! loopback cookies across ports) and `Cache-Control: no-store`; the token
//! is then spent. The browser keeps the address it opened (Chromium's
//! history and session-restore files record the redirect's source; its
//! disk cache kept the page too while it could), so what it keeps must
//! open nothing; run `cairn ui` again for a new address.
//! An API call is let through with the cookie and the page's own header
//! `X-Cairn-Page` (a page of another origin cannot send it without a CORS
//! preflight, which is never granted, so a local web app on another port,
//! same-site for the cookie, cannot use it), from no other `Origin` than
//! the page's own; or with the bearer token of `serve --http --token` in
//! `X-Cairn-Token` (its page address carries it as `#token=…`). Anything
//! else is answered 403 (keys compared in constant time).
//!
//! Every answer (of every route, refusals too; see `security_headers`)
//! forbids framing (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`)
//! and allows only the page's own files ([`CONTENT_SECURITY_POLICY`]: no
//! inline script or style; the page has none), no MIME sniffing, no
//! referrer, and no copy kept by a cache (`Cache-Control: no-store`).
//!
//! The page is plain HTML, CSS and JavaScript with no library and no build
//! step (`ui/`): a home (counts, freshness, the embedding queue, the feed
//! of recent sessions with the memories each stored, memories by type, the
//! hooks' recent injections); a search with kind filters, expand and
//! explain, code numbered and coloured from the tokens the server gives
//! (`cairn::highlight`, the indexer's tree-sitter grammars); memories
//! with filters, edit and forget (each previewed as a dry run first), the
//! audit log as a timeline with undo of exactly the row clicked (refused
//! with 409 once undone or superseded; a store's undo, which removes the
//! memory, previewed and confirmed); a graph neighbourhood drawn as SVG
//! (duplicates merged, labels pushed apart until none overlaps, relations
//! on hover and listed by relation, a hub capped with "show more", click to
//! recentre) and communities as labelled clusters; health, polled every
//! 2 s, so it follows a `serve --watch` re-index live.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Json, Query, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use cairn::{Engine, Mode, SearchOptions};
use cairn_core::Kind;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{CallError, Result};
use crate::graph::{GraphView, MIN_COMMUNITY_SIZE, graph_view};
use crate::server::{DEFAULT_GRAPH_LIMIT, MAX_GRAPH_LIMIT, Shared, UpdateArgs};

const INDEX_HTML: &str = include_str!("../ui/index.html");
const APP_JS: &str = include_str!("../ui/app.js");
const APP_CSS: &str = include_str!("../ui/app.css");

/// Most hits one search of the page returns.
const MAX_HITS: usize = 50;
/// Hits one search of the page returns when not told.
const DEFAULT_HITS: usize = 10;
/// Most memories one list returns (and how many when not told).
const MAX_MEMORIES: usize = 500;
/// Most log entries the timeline shows.
const MAX_LOG: usize = 200;
/// Log entries the timeline shows when not told.
const DEFAULT_LOG: usize = 50;
/// Most neighbours drawn.
const MAX_NEIGHBORS: usize = 150;
/// Neighbours drawn when not told.
const DEFAULT_NEIGHBORS: usize = 60;
/// Days of session logs the home reads.
const HOME_DAYS: usize = 7;
/// Sessions the home's feed shows.
const HOME_SESSIONS: usize = 12;
/// Memories the home lists under one session.
const HOME_SESSION_MEMORIES: usize = 20;
/// Newest memories the home lists.
const HOME_MEMORIES: usize = 10;
/// Recent hook injections the home shows.
const HOME_INJECTIONS: usize = 20;
/// Newest memories the home reads to find each session's (each is a file
/// read).
const HOME_SCAN: usize = 200;
/// Characters of a memory's text the home shows.
const HOME_TEXT_CHARS: usize = 200;

/// Whether a path is one of the page's assets (served without the token).
pub(crate) fn is_asset(path: &str) -> bool {
    matches!(path, "/" | "/ui/app.js" | "/ui/app.css")
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// The page's policy: its own scripts, styles and API only (no inline
/// script or style, no `eval`), no plugins, never in a frame.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The header the page sends the bearer token in (`serve --http --token`).
pub const TOKEN_HEADER: &str = "x-cairn-token";

/// The header every API call of the page carries with its cookie. A page
/// of another origin cannot send it without a CORS preflight, which this
/// server never grants.
pub const PAGE_HEADER: &str = "x-cairn-page";

pub use crate::tokens::PageKeys;

/// The page's keys as one server uses them: with the name of its cookie.
#[derive(Debug)]
pub(crate) struct PageAuth {
    pub(crate) keys: Arc<PageKeys>,
    /// `cairn-page-PORT`: a browser sends loopback cookies to every port,
    /// so two pages (two projects) must not overwrite each other's.
    pub(crate) cookie: String,
}

impl PageAuth {
    pub(crate) fn new(keys: Arc<PageKeys>, port: Option<u16>) -> PageAuth {
        let cookie = match port {
            Some(p) => format!("cairn-page-{p}"),
            None => "cairn-page".to_string(),
        };
        PageAuth { keys, cookie }
    }

    /// The value of this page's cookie in `headers`, if sent.
    fn cookie_in<'a>(&self, headers: &'a HeaderMap) -> Option<&'a str> {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == self.cookie)
            .map(|(_, value)| value.trim())
    }

    /// Whether the request carries this page's session cookie.
    fn has_session(&self, headers: &HeaderMap) -> bool {
        self.cookie_in(headers)
            .is_some_and(|v| self.keys.is_session(v))
    }

    /// Whether an API call may pass on its cookie: the cookie, the page's
    /// header (no cross-origin page can send it unasked), and no `Origin`
    /// but the page's own (`http://` and the `Host` it asked).
    pub(crate) fn cookie_call_ok(&self, headers: &HeaderMap) -> bool {
        let own_origin = match headers.get(header::ORIGIN) {
            None => true,
            Some(origin) => {
                let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
                let origin = origin.to_str().ok();
                matches!((origin, host), (Some(o), Some(h))
                    if o.strip_prefix("http://").is_some_and(|o| o.eq_ignore_ascii_case(h)))
            }
        };
        headers.contains_key(PAGE_HEADER) && own_origin && self.has_session(headers)
    }

    /// Whether an API call may pass: on its cookie, or with the fixed
    /// (bearer) token in `X-Cairn-Token`.
    fn call_ok(&self, headers: &HeaderMap) -> bool {
        let fixed = headers
            .get(TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| self.keys.is_fixed(t));
        fixed || self.cookie_call_ok(headers)
    }

    /// The cookie that carries the session key.
    fn set_cookie(&self) -> String {
        format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie,
            self.keys.session()
        )
    }
}

/// Sets the page's security headers on an answer that lacks them: every
/// route's, the API's refusals and `/mcp`'s included. `no-store`: no answer
/// is for a cache to keep (the API's hold memories; the page's first load
/// came with a token).
pub(crate) async fn security_headers(mut resp: Response) -> Response {
    let headers = resp.headers_mut();
    let set: [(HeaderName, &str); 5] = [
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in set {
        headers
            .entry(name)
            .or_insert(HeaderValue::from_static(value));
    }
    resp
}

/// Lets an API call through only as [`PageAuth::call_ok`] says (when the
/// page has keys).
async fn check_page(
    State(auth): State<Arc<Option<PageAuth>>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(auth) = auth.as_ref()
        && !auth.call_ok(req.headers())
    {
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({"error": "the page's key is missing or wrong: open the address `cairn ui` prints (each opens the page once; run `cairn ui` again for a new one)"})),
        )
            .into_response();
    }
    next.run(req).await
}

/// `GET /`: the page. Its first load, `/?token=…`, trades a one-time token
/// for the session cookie and is sent on to `/`, so the address the
/// browser shows and keeps from then on has no token; a token already
/// spent, or wrong, is refused unless the browser has the cookie.
async fn page(
    State(auth): State<Arc<Option<PageAuth>>>,
    Query(p): Params,
    headers: HeaderMap,
) -> Response {
    let Some(given) = p.get("token") else {
        return asset("text/html; charset=utf-8", INDEX_HTML);
    };
    let clean = [
        (header::LOCATION, "/".to_string()),
        (header::CACHE_CONTROL, "no-store".to_string()),
    ];
    let Some(auth) = auth.as_ref() else {
        return (StatusCode::SEE_OTHER, clean).into_response();
    };
    if auth.keys.exchange(given) {
        return (
            StatusCode::SEE_OTHER,
            clean,
            [(header::SET_COOKIE, auth.set_cookie())],
        )
            .into_response();
    }
    if auth.has_session(&headers) {
        return (StatusCode::SEE_OTHER, clean).into_response();
    }
    (
        StatusCode::FORBIDDEN,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        "This address's token is wrong or was used already: each address `cairn ui` \
         prints opens the page once. Run `cairn ui` again for a new one.\n",
    )
        .into_response()
}

/// A refused call as the page reads it: `{"error": …}` with a status (409
/// for a change that no longer fits the files, an undo of a change already
/// undone; 500 for work that did not finish; else 400).
impl IntoResponse for CallError {
    fn into_response(self) -> Response {
        let status = match &self {
            CallError::Engine(cairn::Error::Conflict(_)) => StatusCode::CONFLICT,
            CallError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        (status, axum::Json(self)).into_response()
    }
}

/// Runs engine work off the executor: its answer as JSON, or the error.
async fn blocking<T: Serialize + Send + 'static>(
    shared: Arc<Shared>,
    f: impl FnOnce(&Shared) -> Result<T, CallError> + Send + 'static,
) -> Response {
    let out = tokio::task::spawn_blocking(move || f(&shared))
        .await
        .unwrap_or_else(|e| Err(CallError::Internal(e.to_string())));
    match out {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

type Params = Query<HashMap<String, String>>;

fn param<'a>(p: &'a HashMap<String, String>, k: &str) -> Option<&'a str> {
    p.get(k).map(|s| s.trim()).filter(|s| !s.is_empty())
}

/// A count the page asks for: `default` when absent; a value that is not a
/// whole number from 1 to `max` is refused (never clamped in silence).
fn count(
    p: &HashMap<String, String>,
    k: &str,
    default: usize,
    max: usize,
) -> Result<usize, CallError> {
    let Some(v) = param(p, k) else {
        return Ok(default);
    };
    match v.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("{k} must be a whole number from 1 to {max} (got {v:?})").into()),
    }
}

/// The `max_tokens` of an `expand` or a file read: as `get` of MCP takes it.
fn read_budget(p: &HashMap<String, String>) -> Result<usize, CallError> {
    count(
        p,
        "max_tokens",
        cairn::DEFAULT_READ_TOKENS,
        cairn::MAX_TOKENS,
    )
}

fn list(p: &HashMap<String, String>, k: &str) -> Vec<String> {
    param(p, k)
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// `GET /api/search?q=&kind=doc,code&limit=&mode=`: hits with what explains them.
fn search(e: &Engine, p: &HashMap<String, String>) -> Result<Value, CallError> {
    let q = param(p, "q").ok_or("give q, what to look for")?;
    let kinds = list(p, "kind")
        .iter()
        .map(|k| match k.as_str() {
            "doc" => Ok(Kind::Doc),
            "code" => Ok(Kind::Code),
            "memory" => Ok(Kind::Memory),
            "history" => Ok(Kind::History),
            other => Err(format!("kind {other:?}: doc, code, memory or history")),
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mode = match param(p, "mode") {
        None | Some("hybrid") => Mode::Hybrid,
        Some("bm25") => Mode::Bm25,
        Some("vector") => Mode::Vector,
        Some(other) => return Err(format!("mode {other:?}: hybrid, bm25 or vector").into()),
    };
    let started = std::time::Instant::now();
    let opts = SearchOptions {
        limit: count(p, "limit", DEFAULT_HITS, MAX_HITS)?,
        kinds,
        mode,
        explain: true,
        raw_fts: param(p, "syntax") == Some("fts"),
        ..SearchOptions::default()
    };
    let found = e.search_with_retrievers(q, &opts)?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    // The words BM25 matched in each hit, for the page to mark (none for a
    // raw FTS5 expression, whose operators are not words to mark).
    let texts: Vec<&str> = found.hits.iter().map(|h| h.text.as_str()).collect();
    let marks = if opts.raw_fts {
        vec![Vec::new(); texts.len()]
    } else {
        cairn::matched_words(q, &texts)?
    };
    let hits: Vec<Value> = found
        .hits
        .iter()
        .zip(marks)
        .map(|(h, marks)| {
            let mut v = with_code(json!(h), &h.path, &h.text);
            v["marks"] = json!(marks);
            v
        })
        .collect();
    Ok(json!({
        "query": q,
        "retrievers": found.retrievers.join("+"),
        "total_count": found.total,
        "ms": ms,
        "hits": hits,
    }))
}

/// `v` with `code`: `text`'s lines as classed tokens (`[[class, text], …]`
/// per line), when `path` is code in a language the indexer parses; the
/// page colours them and numbers the lines.
fn with_code(mut v: Value, path: &str, text: &str) -> Value {
    if let Some(lines) = cairn::highlight(path, text) {
        v["code"] = json!(lines);
    }
    v
}

/// A memory as the page lists it: frontmatter, text, and whether a cited
/// source changed since it was written.
fn memory_json(
    e: &Engine,
    m: &cairn::MemoryView,
    now: &str,
    chains: &HashMap<String, cairn::ChainLinks>,
) -> Value {
    let mut v = json!(m);
    v["stale_source"] = json!(e.source_changed(&m.memory));
    v["expired"] = json!(m.memory.expires.as_deref().is_some_and(|x| x < now));
    // What this memory replaced and what replaced it, as the index has the
    // chains now (`supersedes` above is only what its own file names).
    if let Some(links) = chains.get(&m.memory.id) {
        v["replaces"] = json!(links.replaces);
        v["replaced_by"] = json!(links.replaced_by);
    }
    v
}

/// `GET /api/memories?type=&tag=&entity=&min_importance=&since=&until=&expired=1`.
fn memories(e: &Engine, p: &HashMap<String, String>) -> Result<Value, CallError> {
    let all = e.list_memories(&cairn::ListOptions {
        types: list(p, "type"),
        tags: list(p, "tag"),
        include_expired: param(p, "expired") == Some("1"),
        limit: count(p, "limit", MAX_MEMORIES, MAX_MEMORIES)?,
        offset: 0,
    })?;
    let entity = param(p, "entity").map(str::to_lowercase);
    let min_importance = param(p, "min_importance")
        .map(|v| {
            v.parse::<u8>()
                .map_err(|_| format!("min_importance {v:?}: 1 to 10"))
        })
        .transpose()?;
    let (since, until) = (param(p, "since"), param(p, "until"));
    let now = jiff::Timestamp::now().to_string();
    let chains = e.supersessions()?;
    let chains = cairn::chain_links(&chains);
    let kept: Vec<Value> = all
        .iter()
        .filter(|m| {
            let f = &m.memory;
            entity
                .as_ref()
                .is_none_or(|en| f.entities.iter().any(|x| x.to_lowercase() == *en))
                && min_importance.is_none_or(|i| f.importance >= i)
                && since.is_none_or(|s| f.created.as_str() >= s)
                && until.is_none_or(|u| f.created.get(..u.len()).is_some_and(|c| c <= u))
        })
        .map(|m| memory_json(e, m, &now, &chains))
        .collect();
    Ok(json!({"total_count": kept.len(), "memories": kept}))
}

/// A forget from the page.
#[derive(Debug, Deserialize)]
struct IdBody {
    id: Option<String>,
    #[serde(default)]
    dry_run: bool,
}

/// An undo from the page: one entry of the audit log, named by its line
/// (as `/api/log` numbers it) and its memory, never "this memory's latest
/// change", so a click undoes the row clicked or nothing.
#[derive(Debug, Deserialize)]
struct UndoBody {
    line: Option<usize>,
    id: Option<String>,
    #[serde(default)]
    dry_run: bool,
    /// Needed when the undo removes the memory (the change created it),
    /// after a dry run has shown what goes.
    #[serde(default)]
    confirm: bool,
}

/// `GET /api/status`: the MCP `status` answer, and the project's shared
/// daemon (the one agents' `cairn serve` attach to), if one runs.
fn status(shared: &Shared) -> Result<Value, CallError> {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut v = crate::server::status(shared)?;
    #[cfg(unix)]
    {
        let e = &shared.engine;
        let req = crate::daemon::StatusRequest {
            config: crate::daemon::config_fingerprint(e.config()),
        };
        v["daemon"] = match crate::daemon::daemon_clients(e.root(), req) {
            Some((pid, clients)) => json!({"pid": pid, "clients": clients}),
            None => Value::Null,
        };
    }
    Ok(v)
}

type Shares = State<Arc<Shared>>;

async fn api_search(State(s): Shares, Query(p): Params) -> Response {
    blocking(s, move |s| search(&s.engine, &p)).await
}

async fn api_expand(State(s): Shares, Query(p): Params) -> Response {
    blocking(s, move |s| {
        let id = param(&p, "id").ok_or("give id, a chunk id")?;
        let budget = read_budget(&p)?;
        let section = s.engine.expand(id, 0, budget)?;
        Ok(with_code(json!(section), &section.path, &section.text))
    })
    .await
}

/// A file's lines, through the one path check (`get` of MCP).
async fn api_file(State(s): Shares, Query(p): Params) -> Response {
    blocking(s, move |s| {
        let path = param(&p, "path").ok_or("give path")?;
        let line = |k: &str| param(&p, k).and_then(|v| v.parse::<u32>().ok());
        let budget = read_budget(&p)?;
        let file = s
            .engine
            .read_file(path, line("start"), line("end"), budget)?;
        Ok(with_code(json!(file), &file.path, &file.text))
    })
    .await
}

async fn api_memories(State(s): Shares, Query(p): Params) -> Response {
    blocking(s, move |s| memories(&s.engine, &p)).await
}

async fn api_update(State(s): Shares, Json(b): Json<UpdateArgs>) -> Response {
    let (id, mut patch, dry_run) = b.into_patch("ui");
    patch.ttl = patch.ttl.filter(|t| !t.trim().is_empty());
    blocking(s, move |s| {
        let memory = s.engine.update_memory(&id, &patch, dry_run)?;
        Ok(json!({"dry_run": dry_run, "memory": memory}))
    })
    .await
}

async fn api_forget(State(s): Shares, Json(IdBody { id, dry_run }): Json<IdBody>) -> Response {
    blocking(s, move |s| {
        let id = id.ok_or("give id")?;
        let memory = s.engine.forget(&id, dry_run, "ui")?;
        Ok(json!({"dry_run": dry_run, "memory": memory}))
    })
    .await
}

/// The audit log, newest first, each entry with its line number and where
/// it stands for undo (`undo.state`: `undoable` only for each memory's
/// newest change not yet undone; `undone`, `superseded`, `purged`, `final`).
async fn api_log(State(s): Shares, Query(p): Params) -> Response {
    blocking(s, move |s| {
        let n = count(&p, "limit", DEFAULT_LOG, MAX_LOG)?;
        let entries = s.engine.vault().entries()?;
        let states = cairn::undo_states(&entries);
        let chains = s.engine.supersessions()?;
        let chains = cairn::chain_links(&chains);
        let start = entries.len().saturating_sub(n);
        let mut recent: Vec<Value> = entries[start..]
            .iter()
            .zip(&states[start..])
            .enumerate()
            .map(|(i, (x, state))| {
                let mut v = json!(x);
                v["line"] = json!(start + i);
                v["undo"] = json!(state);
                if let Some(links) = chains.get(&x.id).filter(|_| x.after.is_some()) {
                    v["chain"] = json!(links);
                }
                v
            })
            .collect();
        recent.reverse();
        Ok(json!({"total_count": entries.len(), "entries": recent}))
    })
    .await
}

/// `POST /api/undo {line, id, dry_run, confirm}`: undoes exactly that log
/// entry, or answers 409 when it is not its memory's newest change not yet
/// undone. An undo that removes the memory (of a `store`) is refused with
/// 409 unless `confirm` is set: the page shows its dry run first, as for a
/// forget.
async fn api_undo(
    State(s): Shares,
    Json(UndoBody {
        line,
        id,
        dry_run,
        confirm,
    }): Json<UndoBody>,
) -> Response {
    blocking(s, move |s| {
        let (Some(line), Some(id)) = (line, id) else {
            return Err("give line and id: the log entry to undo, as /api/log lists it".into());
        };
        let undone = s.engine.undo_change(line, &id, dry_run, confirm, "ui")?;
        Ok(json!({"dry_run": dry_run, "undone": undone}))
    })
    .await
}

async fn api_neighbors(State(s): Shares, Query(p): Params) -> Response {
    blocking(s, move |s| {
        let view = GraphView::Neighbors {
            name: param(&p, "name").ok_or("give name, an entity")?.to_string(),
            limit: count(&p, "limit", DEFAULT_NEIGHBORS, MAX_NEIGHBORS)?,
        };
        Ok(graph_view(&s.engine, &view)?.into_value())
    })
    .await
}

async fn api_communities(State(s): Shares, Query(p): Params) -> Response {
    blocking(s, move |s| {
        let view = GraphView::Communities {
            min_size: MIN_COMMUNITY_SIZE,
            limit: count(
                &p,
                "limit",
                DEFAULT_GRAPH_LIMIT as usize,
                MAX_GRAPH_LIMIT as usize,
            )?,
        };
        Ok(graph_view(&s.engine, &view)?.into_value())
    })
    .await
}

/// The index file's checks (integrity, FTS, schema): read once when the
/// health view opens, not polled (they read the file).
async fn api_checks(State(s): Shares) -> Response {
    blocking(s, |s| Ok(s.engine.check_index()?)).await
}

async fn api_status(State(s): Shares) -> Response {
    blocking(s, status).await
}

async fn api_home(State(s): Shares) -> Response {
    blocking(s, home).await
}

/// One captured turn of a session log (`### HH:MM`, its anchor, its
/// summary).
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Turn {
    /// `HH:MM` (UTC).
    time: String,
    /// The session it belongs to (the anchor's `session:`), if it says.
    session: Option<String>,
    /// The summary, anchors left out.
    summary: String,
}

/// The turns of one day's session log, in order (compactions and entries
/// without a time left out).
fn turns(log: &str) -> Vec<Turn> {
    let mut out = Vec::new();
    for part in log.split("\n### ").skip(1) {
        let (head, body) = part.split_once('\n').unwrap_or((part, ""));
        let time = head.trim();
        let is_time = time.len() == 5
            && time
                .char_indices()
                .all(|(i, c)| if i == 2 { c == ':' } else { c.is_ascii_digit() });
        if !is_time {
            continue;
        }
        let session = body
            .lines()
            .find(|l| l.trim_start().starts_with("<!--"))
            .and_then(|l| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix("session:"))
            })
            .map(str::to_string);
        let summary: Vec<&str> = body
            .lines()
            .filter(|l| !l.trim_start().starts_with("<!--"))
            .collect();
        out.push(Turn {
            time: time.to_string(),
            session,
            summary: summary.join("\n").trim().to_string(),
        });
    }
    out
}

/// A session of one day: its turns, and the window its memories were
/// stored in: after the turn captured before its first (or the day's
/// start), up to the minute of its last.
#[derive(Debug, Clone, PartialEq)]
struct DaySession {
    session: Option<String>,
    turns: Vec<Turn>,
    after: String,
    until: String,
}

/// A day's turns grouped by session, in order of their last turn.
fn day_sessions(day: &str, turns: &[Turn]) -> Vec<DaySession> {
    let mut out: Vec<DaySession> = Vec::new();
    for (i, t) in turns.iter().enumerate() {
        let until = format!("{day}T{}:59Z", t.time);
        match out
            .iter_mut()
            .find(|s| s.session.is_some() && s.session == t.session)
        {
            Some(s) => {
                s.turns.push(t.clone());
                s.until = until;
            }
            None => out.push(DaySession {
                session: t.session.clone(),
                turns: vec![t.clone()],
                after: match i {
                    0 => format!("{day}T00:00:00Z"),
                    _ => format!("{day}T{}:59Z", turns[i - 1].time),
                },
                until,
            }),
        }
    }
    out.sort_by(|a, b| a.until.cmp(&b.until));
    out
}

/// `text` on one line, cut to `n` characters.
fn short(text: &str, n: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// A memory as the home lists it.
fn home_memory(m: &cairn::MemoryView) -> Value {
    json!({
        "id": m.memory.id,
        "type": m.memory.kind,
        "importance": m.memory.importance,
        "created": m.memory.created,
        "text": short(&m.text, HOME_TEXT_CHARS),
    })
}

/// `GET /api/home`: what the page opens on. The index's counts and
/// freshness (the `status` answer), memories by type, the feed of recent
/// sessions (newest first, each with the memories stored while it ran),
/// the newest memories, and the hooks' recent injections (newest first:
/// the prompt, and each memory with what let it through).
fn home(shared: &Shared) -> Result<Value, CallError> {
    let e = &shared.engine;
    let status = status(shared)?;
    let counts = e.memory_counts()?;
    let listed = |types: Vec<String>, limit: usize| {
        e.list_memories(&cairn::ListOptions {
            types,
            tags: Vec::new(),
            include_expired: false,
            limit,
            offset: 0,
        })
    };
    let logs = listed(vec!["session".into()], HOME_DAYS)?;
    let kinds: Vec<String> = counts
        .keys()
        .filter(|k| k.as_str() != "session")
        .cloned()
        .collect();
    let recent = if kinds.is_empty() {
        Vec::new()
    } else {
        listed(kinds, HOME_SCAN)?
    };
    let mut sessions = Vec::new();
    for log in &logs {
        let day = log.memory.created.get(..10).unwrap_or_default();
        for s in day_sessions(day, &turns(&log.text)).into_iter().rev() {
            let memories: Vec<Value> = recent
                .iter()
                .filter(|m| {
                    let c = m.memory.created.as_str();
                    c > s.after.as_str() && c <= s.until.as_str()
                })
                .take(HOME_SESSION_MEMORIES)
                .map(home_memory)
                .collect();
            let first = s.turns.first().map(|t| t.time.clone()).unwrap_or_default();
            let last = s.turns.last().map(|t| t.time.clone()).unwrap_or_default();
            sessions.push(json!({
                "log": log.memory.id,
                "day": day,
                "session": s.session,
                "first": first,
                "last": last,
                "until": s.until,
                "turns": s.turns,
                "memories": memories,
            }));
        }
    }
    sessions.sort_by(|a, b| b["until"].as_str().cmp(&a["until"].as_str()));
    sessions.truncate(HOME_SESSIONS);
    let mut injections: Vec<Value> = status["hooks"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(client, h)| {
            h["recent"].as_array().into_iter().flatten().map(move |x| {
                let mut x = x.clone();
                x["client"] = json!(client);
                x
            })
        })
        .collect();
    injections.sort_by(|a, b| b["time"].as_str().cmp(&a["time"].as_str()));
    injections.truncate(HOME_INJECTIONS);
    // Each injected memory with its text (the hooks record ids and reasons)
    // and, when a newer one has replaced it since, which.
    let chains = e.supersessions()?;
    let vault = e.vault();
    for x in &mut injections {
        let ids: Vec<String> = x["why"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str())
            .map(|w| w.split_once(": ").map_or(w, |(id, _)| id).to_string())
            .collect();
        let memories: Vec<Value> = ids
            .iter()
            .map(|id| {
                let text = vault.read(id).map(|m| m.text).unwrap_or_default();
                let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
                let text = match text.char_indices().nth(160) {
                    Some((i, _)) => format!("{}…", &text[..i]),
                    None => text,
                };
                json!({"id": id, "text": text, "replaced_by": chains.get(id)})
            })
            .collect();
        x["memories"] = json!(memories);
    }
    Ok(json!({
        "status": status,
        "memory_types": counts,
        "memories": recent.iter().take(HOME_MEMORIES).map(home_memory).collect::<Vec<_>>(),
        "sessions": sessions,
        "injections": injections,
    }))
}

/// The page and its API; with `auth`, the page's first load wants a token
/// and each API call the cookie it gets (see [`PageAuth::call_ok`]).
pub(crate) fn routes(shared: Arc<Shared>, auth: Arc<Option<PageAuth>>) -> Router {
    let api = Router::new()
        .route("/api/search", get(api_search))
        .route("/api/expand", get(api_expand))
        .route("/api/file", get(api_file))
        .route("/api/memories", get(api_memories))
        .route("/api/memory/update", post(api_update))
        .route("/api/memory/forget", post(api_forget))
        .route("/api/log", get(api_log))
        .route("/api/undo", post(api_undo))
        .route("/api/graph/neighbors", get(api_neighbors))
        .route("/api/graph/communities", get(api_communities))
        .route("/api/checks", get(api_checks))
        .route("/api/status", get(api_status))
        .route("/api/home", get(api_home))
        .with_state(shared)
        .route_layer(from_fn_with_state(auth.clone(), check_page));
    let home = Router::new().route("/", get(page)).with_state(auth);
    [
        ("/ui/app.js", "text/javascript; charset=utf-8", APP_JS),
        ("/ui/app.css", "text/css; charset=utf-8", APP_CSS),
    ]
    .into_iter()
    .fold(Router::new(), |router, (path, kind, body)| {
        router.route(path, get(move || async move { asset(kind, body) }))
    })
    .merge(home)
    .merge(api)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# Sessions 2026-11-25\n\n### 09:10\n\n<!-- session:a turn:u1 client:claude-code -->\n\n**Asked:**\n- why is the deploy slow\n\n\
                       ### 09:40 compact\n\n<!-- compact: 3 memories -->\n\nsquashed\n\n\
                       ### 11:02\n\n<!-- session:b turn:u1 client:claude-code -->\n\n**Asked:**\n- add a cache\n\n\
                       ### 11:30\n\n<!-- session:a turn:u4 client:claude-code -->\n\n**Concluded:**\n- the gate waits for main\n";

    #[test]
    fn a_day_log_reads_as_turns_grouped_by_session() {
        let t = turns(LOG);
        assert_eq!(
            t.iter().map(|t| t.time.as_str()).collect::<Vec<_>>(),
            ["09:10", "11:02", "11:30"],
            "the compaction is no turn"
        );
        assert_eq!(t[0].session.as_deref(), Some("a"));
        assert_eq!(t[0].summary, "**Asked:**\n- why is the deploy slow");
        let s = day_sessions("2026-11-25", &t);
        assert_eq!(s.len(), 2);
        // Ordered by their last turn: b ends at 11:02, a at 11:30.
        assert_eq!(s[0].session.as_deref(), Some("b"));
        assert_eq!(s[0].after, "2026-11-25T09:10:59Z");
        assert_eq!(s[0].until, "2026-11-25T11:02:59Z");
        assert_eq!(s[1].session.as_deref(), Some("a"));
        assert_eq!(s[1].turns.len(), 2);
        assert_eq!(s[1].after, "2026-11-25T00:00:00Z");
        assert_eq!(s[1].until, "2026-11-25T11:30:59Z");
    }

    #[test]
    fn home_text_is_one_line_and_cut() {
        assert_eq!(short("a\n  b", 10), "a b");
        assert_eq!(short("élan vital", 4), "élan…");
    }
}
