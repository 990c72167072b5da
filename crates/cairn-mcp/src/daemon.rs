//! One warm process per project, shared by every stdio client.
//!
//! `cairn serve` (stdio) connects to the project's daemon over a Unix domain
//! socket, starting it when absent, and then only copies bytes between its
//! stdin/stdout and the socket: it never loads the model or opens the index.
//! The daemon holds the one engine (model, index, writer) and runs an MCP
//! session per connection. It exits after an idle timeout with no client.
//!
//! The wire: the client sends one JSON line ([`Hello`]); the daemon answers
//! with [`Reply`] lines (progress of an index pass the client asked for, then
//! `ready` or `refused`); after `ready` the connection carries MCP (newline
//! delimited JSON-RPC) both ways.
//!
//! Files, under `<project>/.cairn/`: `daemon.lock` (held locked by the live
//! daemon, so two never run), `daemon.sock` (the socket; in the temporary
//! folder when the project path is too long for a socket address) and
//! `daemon.log` (its stderr).

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cairn::{IndexOptions, Progress};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::graph::{GraphAnswer, GraphView, graph_view};
use crate::server::Shared;
use crate::watch::{self, Watch};

/// Protocol version of the hello line; a daemon of another build refuses.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Default idle timeout of the daemon.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(15 * 60);

/// The first line a client sends: its version, then what it asks for.
///
/// On the wire: `{"cairn": "<version>", "ask": {"<variant>": {…}}}`. The
/// daemon reads `cairn` first ([`Version`]) and refuses another build before
/// it reads the rest, so a request of another shape is always answered
/// "daemon is cairn X, client is Y", never "bad hello line".
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Hello {
    /// The client's version; must equal the daemon's.
    pub cairn: String,
    /// What the client asks for: exactly one thing.
    pub ask: Ask,
}

/// Only the version of a hello line, read before the rest.
#[derive(Deserialize)]
struct Version {
    cairn: String,
}

/// What a client asks the daemon for.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ask {
    /// An MCP session (`cairn serve`): the daemon answers [`Reply::Ready`]
    /// (after progress lines when it runs an index pass) and the connection
    /// then carries MCP.
    Mcp {
        /// Start watching the roots (if not already).
        #[serde(default)]
        watch: bool,
        /// Run an index pass first, streaming progress; embeddings follow
        /// in the background.
        #[serde(default)]
        build_index: bool,
    },
    /// A CLI search: the daemon answers one [`Reply::Hits`] line and closes.
    Search(SearchRequest),
    /// A CLI `status`: the daemon answers one [`Reply::Status`] line and closes.
    Status(StatusRequest),
    /// A CLI `recall`: the daemon answers one [`Reply::Recalled`] line and closes.
    Recall(RecallRequest),
    /// A CLI `graph` view: the daemon answers one [`Reply::Graph`] line and closes.
    Graph(GraphRequest),
    /// `cairn ui`: serve the web page from this daemon on this loopback
    /// port (0: any free one), or say where it already serves it; the
    /// daemon answers one [`Reply::Ui`] line and counts the connection as a
    /// client until the other side closes it.
    Ui {
        /// The port.
        port: u16,
        /// Start watching the roots (if not already).
        #[serde(default)]
        watch: bool,
    },
}

/// A `graph` view the CLI asks the daemon ([`graph_via_daemon`]): its
/// knowledge graph is built and warm.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GraphRequest {
    /// The view.
    pub view: GraphView,
    /// [`config_fingerprint`] of the client's configuration.
    pub config: String,
}

/// A `recall` the CLI hands to the warm daemon ([`recall_via_daemon`]): the
/// query's vector comes from the loaded model instead of a model loaded for
/// one question.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecallRequest {
    /// The query.
    pub query: String,
    /// The options, as the CLI would recall with them.
    pub options: cairn::RecallOptions,
    /// [`config_fingerprint`] of the client's configuration.
    pub config: String,
}

/// A `status` the CLI asks the daemon ([`status_via_daemon`]): only the
/// daemon knows whether it is computing vectors right now.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StatusRequest {
    /// [`config_fingerprint`] of the client's configuration (another store
    /// or model is another status).
    pub config: String,
}

/// A search the CLI hands to the warm daemon ([`search_via_daemon`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SearchRequest {
    /// The query.
    pub query: String,
    /// The options, as the CLI would search with them.
    pub options: cairn::SearchOptions,
    /// [`config_fingerprint`] of the client's configuration: a daemon
    /// configured otherwise (another `--set`, an edited `cairn.toml`, another
    /// store) refuses, and the CLI searches by itself.
    pub config: String,
}

/// A fingerprint of a configuration: the hash of its JSON form.
pub fn config_fingerprint(config: &cairn::Config) -> String {
    cairn_core::content_hash(serde_json::to_string(config).unwrap_or_default().as_bytes())
}

/// The daemon's lines before MCP starts.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Reply {
    /// Progress of an index pass.
    Progress {
        /// What is happening.
        message: String,
    },
    /// MCP can start.
    Ready {
        /// The daemon's process id.
        pid: u32,
    },
    /// The daemon will not serve this client.
    Refused {
        /// Why.
        error: String,
    },
    /// The answer to a [`Ask::Search`].
    Hits {
        /// The hits, as [`cairn::Engine::search`] returns them.
        hits: Vec<cairn_core::Hit>,
    },
    /// The answer to a [`Ask::Graph`].
    Graph {
        /// The view asked for.
        answer: GraphAnswer,
    },
    /// The answer to a [`Ask::Recall`].
    Recalled {
        /// The memories, as [`cairn::Engine::recall`] returns them.
        hits: Vec<cairn::Recalled>,
    },
    /// The answer to a [`Ask::Ui`]: where the page is.
    Ui {
        /// `http://127.0.0.1:PORT/`.
        url: String,
    },
    /// The answer to a [`Ask::Status`].
    Status {
        /// The status, as [`cairn::Engine::status`] returns it in the daemon
        /// (boxed: it is the largest answer by far).
        status: Box<cairn::Status>,
        /// The daemon's process id.
        pid: u32,
        /// Clients connected besides the one asking.
        #[serde(default)]
        clients: usize,
    },
}

/// The daemon's socket for a project.
pub fn socket_path(root: &Path) -> PathBuf {
    let p = cairn::paths::daemon_socket(root);
    // sun_path holds 108 bytes on Linux, 104 on macOS.
    if p.as_os_str().len() < 100 {
        p
    } else {
        let key = &cairn_core::content_hash(root.to_string_lossy().as_bytes())[..16];
        std::env::temp_dir().join(format!("cairn-{key}.sock"))
    }
}

/// The lock file the live daemon holds.
pub fn lock_path(root: &Path) -> PathBuf {
    cairn::paths::daemon_lock(root)
}

/// Where the daemon's stderr goes.
pub fn log_path(root: &Path) -> PathBuf {
    cairn::paths::daemon_log(root)
}

/// How the daemon runs.
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    /// Exit after this long without a client.
    pub idle: Duration,
    /// Watch from the start.
    pub watch: bool,
    /// Watch debounce.
    pub debounce: Duration,
}

impl Default for DaemonOptions {
    fn default() -> Self {
        DaemonOptions {
            idle: DEFAULT_IDLE,
            watch: false,
            debounce: watch::DEFAULT_DEBOUNCE,
        }
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Takes the daemon lock; `None` when another daemon holds it.
pub fn try_lock(root: &Path) -> Result<Option<std::fs::File>> {
    let path = lock_path(root);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err(&path))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(io_err(&path)(e)),
    }
}

/// What the daemon keeps beside the engine.
struct Daemon {
    shared: Arc<Shared>,
    opts: DaemonOptions,
    watch: Mutex<Option<Watch>>,
    /// The web page this daemon serves while a `cairn ui` is attached.
    ui: Mutex<Option<PageServe>>,
    /// The daemon's runtime, for servers started from a blocking hello.
    runtime: tokio::runtime::Handle,
    clients: AtomicUsize,
    last_seen: Mutex<Instant>,
}

/// The web page a daemon serves: its address, its keys (tokens and the
/// cookies they were traded for), how to stop it, and how many `cairn ui`
/// clients hold it open. The last one to leave (Ctrl-C) stops it: the page
/// and every token and cookie of it go at once, not when the daemon idles
/// out.
struct PageServe {
    addr: std::net::SocketAddr,
    keys: Arc<crate::ui::PageKeys>,
    cancel: crate::http::CancellationToken,
    clients: usize,
}

impl Daemon {
    fn ensure_watch(&self) {
        let mut w = cairn_core::sync::lock(&self.watch);
        if w.is_none() {
            match watch::start(self.shared.clone(), self.opts.debounce) {
                Ok(handle) => *w = Some(handle),
                Err(e) => tracing::warn!("{e}"),
            }
        }
    }

    /// Serves the web page on `127.0.0.1:port` from this process (its warm
    /// engine), once, with page keys of its own; later asks get the same
    /// port whatever port they name. Each ask's address carries a new
    /// one-time token (`/?token=…`): the `cairn ui` that asked prints it,
    /// the page's first load from it gets the session cookie, and the
    /// page's API answers 403 without that.
    fn ensure_ui(&self, port: u16) -> std::io::Result<String> {
        let mut ui = cairn_core::sync::lock(&self.ui);
        if let Some(page) = ui.as_mut() {
            let token = page.keys.issue().map_err(std::io::Error::other)?;
            page.clients += 1;
            return Ok(format!("http://{}/?token={token}", page.addr));
        }
        let listener = bind_page(port)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let listener = {
            let _in_runtime = self.runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let keys = crate::ui::PageKeys::new().map_err(std::io::Error::other)?;
        let token = keys.issue().map_err(std::io::Error::other)?;
        let opts = crate::http::HttpOptions {
            addr: Some(addr),
            page: Some(keys.clone()),
            ..Default::default()
        };
        let shared = self.shared.clone();
        let cancel = crate::http::CancellationToken::new();
        let stop = cancel.clone();
        self.runtime.spawn(async move {
            if let Err(e) = crate::http::serve_on_listener(shared, opts, listener, stop).await {
                tracing::warn!("web page: {e}");
            }
        });
        // The log shows the address, never the token.
        tracing::info!("web page at http://{addr}/");
        *ui = Some(PageServe {
            addr,
            keys,
            cancel,
            clients: 1,
        });
        Ok(format!("http://{addr}/?token={token}"))
    }

    /// A `cairn ui` client left: the last one stops the page.
    fn release_ui(&self) {
        let mut ui = cairn_core::sync::lock(&self.ui);
        if let Some(page) = ui.as_mut() {
            page.clients = page.clients.saturating_sub(1);
            if page.clients == 0 {
                page.cancel.cancel();
                tracing::info!(
                    "web page at http://{}/ stopped: no `cairn ui` left",
                    page.addr
                );
                *ui = None;
            }
        }
    }
}

/// The page's listener on `127.0.0.1:port`. A fixed port the page just
/// stopped serving is still closing for a moment: tried again for up to a
/// second.
fn bind_page(port: u16) -> std::io::Result<std::net::TcpListener> {
    let mut tries = 0;
    loop {
        match std::net::TcpListener::bind(("127.0.0.1", port)) {
            Err(e) if port != 0 && e.kind() == std::io::ErrorKind::AddrInUse && tries < 10 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Runs the daemon for `shared`'s project until idle. `lock` is the
/// project's daemon lock, taken with [`try_lock`] before the engine was
/// loaded (so a second daemon started at the same moment leaves at once).
#[cfg(unix)]
pub async fn run(shared: Arc<Shared>, opts: DaemonOptions, lock: std::fs::File) -> Result<()> {
    use tokio::net::UnixListener;

    let root = shared.engine.root().to_path_buf();
    let sock = socket_path(&root);
    // The lock is ours, so a socket file left behind is a dead daemon's.
    let _ = std::fs::remove_file(&sock);
    let listener = UnixListener::bind(&sock).map_err(io_err(&sock))?;
    {
        // Only this user may connect, whatever the umask.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o600))
            .map_err(io_err(&sock))?;
    }
    {
        let mut f = &lock;
        let _ = f.write_all(format!("{}\n", std::process::id()).as_bytes());
    }
    tracing::info!(
        "daemon {} serving {} on {}",
        std::process::id(),
        root.display(),
        sock.display()
    );
    let daemon = Arc::new(Daemon {
        shared,
        opts: opts.clone(),
        watch: Mutex::new(None),
        ui: Mutex::new(None),
        runtime: tokio::runtime::Handle::current(),
        clients: AtomicUsize::new(0),
        last_seen: Mutex::new(Instant::now()),
    });
    if opts.watch {
        daemon.ensure_watch();
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(io_err(&sock))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    daemon.clients.fetch_add(1, Ordering::SeqCst);
                    let d = daemon.clone();
                    tokio::spawn(async move {
                        if let Err(e) = session(d.clone(), stream).await {
                            tracing::warn!("client session: {e}");
                        }
                        *cairn_core::sync::lock(&d.last_seen) = Instant::now();
                        d.clients.fetch_sub(1, Ordering::SeqCst);
                    });
                }
                Err(e) => tracing::warn!("accept: {e}"),
            },
            _ = tokio::time::sleep(Duration::from_millis(500)) => {
                let idle = cairn_core::sync::lock(&daemon.last_seen).elapsed();
                if daemon.clients.load(Ordering::SeqCst) == 0 && idle >= opts.idle {
                    tracing::info!("idle for {} s: exiting", idle.as_secs());
                    break;
                }
            }
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    let _ = std::fs::remove_file(&sock);
    drop(lock);
    Ok(())
}

/// Sends progress as reply lines, at most one a second per stage.
struct LineProgress<'a> {
    out: Mutex<&'a mut std::os::unix::net::UnixStream>,
    state: Mutex<(String, u64, u64, Instant)>,
}

impl LineProgress<'_> {
    fn send(&self, message: String) {
        let line = serde_json::to_string(&Reply::Progress { message }).unwrap_or_default();
        let mut out = cairn_core::sync::lock(&self.out);
        let _ = out.write_all(line.as_bytes());
        let _ = out.write_all(b"\n");
    }
}

impl Progress for LineProgress<'_> {
    fn stage(&self, name: &str, total: u64) {
        *cairn_core::sync::lock(&self.state) = (name.to_string(), total, 0, Instant::now());
        self.send(name.to_string());
    }
    fn inc(&self, n: u64) {
        let msg = {
            let mut s = cairn_core::sync::lock(&self.state);
            s.2 += n;
            if s.3.elapsed() < Duration::from_secs(1) {
                return;
            }
            s.3 = Instant::now();
            format!("{} {}/{}", s.0, s.2, s.1)
        };
        self.send(msg);
    }
    fn finish(&self) {
        let s = cairn_core::sync::lock(&self.state).clone();
        if s.1 > 0 {
            self.send(format!("{} {}/{} done", s.0, s.2, s.1));
        }
    }
}

/// One client: hello, optional index pass, then an MCP session.
#[cfg(unix)]
async fn session(daemon: Arc<Daemon>, stream: tokio::net::UnixStream) -> Result<()> {
    let sock = socket_path(daemon.shared.engine.root());
    // The hello exchange is short and may run an index pass: do it blocking.
    let std_stream = stream.into_std().map_err(io_err(&sock))?;
    std_stream.set_nonblocking(false).map_err(io_err(&sock))?;
    let d = daemon.clone();
    let sock2 = sock.clone();
    let std_stream = tokio::task::spawn_blocking(move || hello(&d, std_stream, &sock2))
        .await
        .map_err(|e| Error::Protocol(e.to_string()))??;
    let Some(std_stream) = std_stream else {
        return Ok(());
    };
    std_stream.set_nonblocking(true).map_err(io_err(&sock))?;
    let stream = tokio::net::UnixStream::from_std(std_stream).map_err(io_err(&sock))?;
    let (read, write) = stream.into_split();
    crate::serve_lines(daemon.shared.clone(), read, write).await
}

/// Reads one line, byte by byte so nothing after it is consumed.
fn read_line(r: &mut impl Read, max: usize) -> std::io::Result<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while buf.len() < max {
        if r.read(&mut byte)? == 0 {
            break;
        }
        if byte[0] == b'\n' {
            break;
        }
        buf.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(unix)]
fn hello(
    daemon: &Daemon,
    mut stream: std::os::unix::net::UnixStream,
    sock: &Path,
) -> Result<Option<std::os::unix::net::UnixStream>> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(io_err(sock))?;
    let line = read_line(&mut stream, 1 << 20).map_err(io_err(sock))?;
    stream.set_read_timeout(None).map_err(io_err(sock))?;
    let refuse = |stream: &mut std::os::unix::net::UnixStream, error: String| {
        let line = serde_json::to_string(&Reply::Refused { error }).unwrap_or_default();
        let _ = stream.write_all(format!("{line}\n").as_bytes());
    };
    let version = match serde_json::from_str::<Version>(&line) {
        Ok(v) => v.cairn,
        Err(e) => {
            refuse(&mut stream, format!("bad hello line: {e}"));
            return Ok(None);
        }
    };
    if version != VERSION {
        refuse(
            &mut stream,
            format!("daemon is cairn {VERSION}, client is {version}"),
        );
        return Ok(None);
    }
    let hello: Hello = match serde_json::from_str(&line) {
        Ok(h) => h,
        Err(e) => {
            refuse(&mut stream, format!("bad hello line: {e}"));
            return Ok(None);
        }
    };
    let (watch, build_index) = match hello.ask {
        Ask::Mcp { watch, build_index } => (watch, build_index),
        Ask::Ui { port, watch } => {
            if watch {
                daemon.ensure_watch();
            }
            let reply = match daemon.ensure_ui(port) {
                Ok(url) => Reply::Ui { url },
                Err(e) => Reply::Refused {
                    error: format!("cannot serve the web page on port {port}: {e}"),
                },
            };
            let served = matches!(reply, Reply::Ui { .. });
            let line = serde_json::to_string(&reply).unwrap_or_default();
            stream
                .write_all(format!("{line}\n").as_bytes())
                .map_err(io_err(sock))?;
            // The `cairn ui` that asked stays a client (the daemon does not
            // idle out under an open page) until it closes the connection.
            if served {
                let mut sink = [0u8; 256];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                daemon.release_ui();
            }
            return Ok(None);
        }
        Ask::Status(req) => {
            let clients = daemon.clients.load(Ordering::SeqCst).saturating_sub(1);
            return answer(daemon, stream, sock, &req.config, move |e| {
                Ok(Reply::Status {
                    status: Box::new(e.status()?),
                    pid: std::process::id(),
                    clients,
                })
            });
        }
        Ask::Graph(req) => {
            return answer(daemon, stream, sock, &req.config, |e| {
                Ok(Reply::Graph {
                    answer: graph_view(e, &req.view)?,
                })
            });
        }
        Ask::Recall(req) => {
            return answer(daemon, stream, sock, &req.config, |e| {
                Ok(Reply::Recalled {
                    hits: e.recall(&req.query, &req.options)?,
                })
            });
        }
        Ask::Search(req) => {
            return answer(daemon, stream, sock, &req.config, |e| {
                Ok(Reply::Hits {
                    hits: e.search(&req.query, &req.options)?,
                })
            });
        }
    };
    if build_index {
        let engine = daemon.shared.engine.clone();
        let roots = engine.default_roots();
        daemon.shared.indexing.store(true, Ordering::SeqCst);
        let result = {
            let progress = LineProgress {
                out: Mutex::new(&mut stream),
                state: Mutex::new((String::new(), 0, 0, Instant::now())),
            };
            engine.index_with(
                &roots,
                IndexOptions {
                    defer_embedding: true,
                },
                &progress,
            )
        };
        daemon.shared.indexing.store(false, Ordering::SeqCst);
        match result {
            Ok(r) => {
                let msg = format!(
                    "indexed {} files ({} added, {} changed, {} deleted, {} unchanged); embeddings continue in the background",
                    r.files_seen,
                    r.files_added,
                    r.files_changed,
                    r.files_deleted,
                    r.files_unchanged
                );
                // Backfill first: a status read right after this line must
                // already say the vectors are on their way.
                daemon.shared.spawn_backfill();
                let line =
                    serde_json::to_string(&Reply::Progress { message: msg }).unwrap_or_default();
                let _ = stream.write_all(format!("{line}\n").as_bytes());
            }
            Err(e) => {
                refuse(&mut stream, format!("index pass failed: {e}"));
                return Ok(None);
            }
        }
    }
    if watch {
        daemon.ensure_watch();
    }
    let ready = serde_json::to_string(&Reply::Ready {
        pid: std::process::id(),
    })
    .unwrap_or_default();
    stream
        .write_all(format!("{ready}\n").as_bytes())
        .map_err(io_err(sock))?;
    Ok(Some(stream))
}

/// Answers a CLI question ([`Ask::Search`], [`Ask::Recall`],
/// [`Ask::Graph`], [`Ask::Status`]) with one
/// reply line from the warm engine; the connection then closes. A daemon
/// configured otherwise than the client refuses, and so does one whose
/// engine fails (a bad FTS5 query, the time budget): the CLI then asks by
/// itself and reports any error in its own words.
#[cfg(unix)]
fn answer(
    daemon: &Daemon,
    mut stream: std::os::unix::net::UnixStream,
    sock: &Path,
    config: &str,
    ask: impl FnOnce(&cairn::Engine) -> cairn::Result<Reply>,
) -> Result<Option<std::os::unix::net::UnixStream>> {
    let engine = &daemon.shared.engine;
    let reply = if config != config_fingerprint(engine.config()) {
        Reply::Refused {
            error: "the daemon runs with another configuration".into(),
        }
    } else {
        ask(engine).unwrap_or_else(|e| Reply::Refused {
            error: e.to_string(),
        })
    };
    let line = serde_json::to_string(&reply).unwrap_or_default();
    stream
        .write_all(format!("{line}\n").as_bytes())
        .map_err(io_err(sock))?;
    Ok(None)
}

/// A search answered by the project's running daemon (warm model, vectors
/// and graph), or `None` when no daemon runs or it does not answer it (then
/// the caller searches by itself). Never starts a daemon.
pub fn search_via_daemon(root: &Path, req: SearchRequest) -> Option<Vec<cairn_core::Hit>> {
    match ask(root, Hello::new(Ask::Search(req)))? {
        Reply::Hits { hits } => Some(hits),
        _ => None,
    }
}

/// A graph view of the project's running daemon (its graph warm), or `None`
/// when no daemon runs or it does not answer (then the caller builds the
/// view by itself, with [`graph_view`]). Never starts a daemon.
pub fn graph_via_daemon(root: &Path, req: GraphRequest) -> Option<GraphAnswer> {
    match ask(root, Hello::new(Ask::Graph(req)))? {
        Reply::Graph { answer } => Some(answer),
        _ => None,
    }
}

/// A recall answered by the project's running daemon (its model already
/// loaded), or `None` when no daemon runs or it does not answer (then the
/// caller recalls by itself). Never starts a daemon.
pub fn recall_via_daemon(root: &Path, req: RecallRequest) -> Option<Vec<cairn::Recalled>> {
    match ask(root, Hello::new(Ask::Recall(req)))? {
        Reply::Recalled { hits } => Some(hits),
        _ => None,
    }
}

/// The project's status as its running daemon sees it (whether it is
/// computing vectors right now, which another process cannot know) and the
/// daemon's pid, or `None` when no daemon runs or it does not answer (then
/// the caller reads the status by itself). Never starts a daemon.
pub fn status_via_daemon(root: &Path, req: StatusRequest) -> Option<(cairn::Status, u32)> {
    match ask(root, Hello::new(Ask::Status(req)))? {
        Reply::Status { status, pid, .. } => Some((*status, pid)),
        _ => None,
    }
}

/// The project's running daemon: its process id and how many clients it
/// serves now (the web page's health view), or `None` when none runs.
/// Never starts a daemon.
pub fn daemon_clients(root: &Path, req: StatusRequest) -> Option<(u32, usize)> {
    match ask(root, Hello::new(Ask::Status(req)))? {
        Reply::Status { pid, clients, .. } => Some((pid, clients)),
        _ => None,
    }
}

impl Hello {
    /// A hello of this build asking for `ask`.
    pub fn new(ask: Ask) -> Hello {
        Hello {
            cairn: VERSION.to_string(),
            ask,
        }
    }
}

/// Sends one hello to the project's daemon and reads its one reply line;
/// `None` when no daemon listens, it refuses, or the line is not a reply.
#[cfg(unix)]
fn ask(root: &Path, hello: Hello) -> Option<Reply> {
    use std::os::unix::net::UnixStream;
    let sock = socket_path(root);
    let mut stream = UnixStream::connect(&sock).ok()?;
    // The daemon's search has its own 10 s budget; past this, ask here.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let line = serde_json::to_string(&hello).ok()?;
    stream.write_all(format!("{line}\n").as_bytes()).ok()?;
    let mut reader = std::io::BufReader::new(stream);
    let mut answer = String::new();
    reader.read_line(&mut answer).ok()?;
    match serde_json::from_str::<Reply>(&answer) {
        Ok(Reply::Refused { error }) => {
            tracing::debug!("the daemon did not answer: {error}");
            None
        }
        Ok(reply) => Some(reply),
        Err(_) => None,
    }
}

#[cfg(not(unix))]
fn ask(_root: &Path, _hello: Hello) -> Option<Reply> {
    None
}

/// How a stdio client reaches the daemon.
#[derive(Clone, Debug)]
pub struct AttachOptions {
    /// The `cairn` executable to start the daemon with.
    pub exe: PathBuf,
    /// Arguments that make it run the daemon for this project.
    pub daemon_args: Vec<String>,
    /// The hello to send.
    pub hello: Hello,
    /// How long to wait for a daemon that was just started.
    pub start_timeout: Duration,
}

/// Connects to the project's daemon, starting it when absent, and sends the
/// hello; progress lines are printed to stderr. Returns the connection,
/// ready for MCP.
#[cfg(unix)]
pub fn attach(root: &Path, opts: &AttachOptions) -> Result<std::os::unix::net::UnixStream> {
    attach_for(root, opts).map(|(stream, _)| stream)
}

/// [`attach`], and the page's URL when the hello asked for it
/// ([`Ask::Ui`]); the connection then carries no MCP, and closing it ends
/// this client.
pub fn attach_for(
    root: &Path,
    opts: &AttachOptions,
) -> Result<(std::os::unix::net::UnixStream, Option<String>)> {
    use std::os::unix::net::UnixStream;
    use std::os::unix::process::CommandExt;

    let sock = socket_path(root);
    let daemon_err = |message: String| Error::Daemon {
        socket: sock.clone(),
        message,
    };
    let mut stream = match UnixStream::connect(&sock) {
        Ok(s) => s,
        Err(_) => {
            let log = log_path(root);
            if let Some(dir) = log.parent() {
                std::fs::create_dir_all(dir).map_err(io_err(dir))?;
            }
            let stderr = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log)
                .map_err(io_err(&log))?;
            let mut child = std::process::Command::new(&opts.exe)
                .args(&opts.daemon_args)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(stderr)
                // Its own process group: a Ctrl-C aimed at the client does not reach it.
                .process_group(0)
                .spawn()
                .map_err(|e| daemon_err(format!("cannot start {}: {e}", opts.exe.display())))?;
            let deadline = Instant::now() + opts.start_timeout;
            loop {
                match UnixStream::connect(&sock) {
                    Ok(s) => break s,
                    // A daemon that failed (it could not open the index or
                    // bind the socket) is not waited for. One that lost the
                    // lock race exits 0 while the winner comes up.
                    Err(_)
                        if child
                            .try_wait()
                            .ok()
                            .flatten()
                            .is_some_and(|s| !s.success()) =>
                    {
                        return Err(daemon_err(format!(
                            "it exited at start; see {}",
                            log.display()
                        )));
                    }
                    Err(e) if Instant::now() >= deadline => {
                        return Err(daemon_err(format!(
                            "not up after {} s ({e}); see {}",
                            opts.start_timeout.as_secs(),
                            log.display()
                        )));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(25)),
                }
            }
        }
    };
    let hello = serde_json::to_string(&opts.hello).map_err(|e| daemon_err(e.to_string()))?;
    stream
        .write_all(format!("{hello}\n").as_bytes())
        .map_err(io_err(&sock))?;
    let mut reader = std::io::BufReader::new(stream.try_clone().map_err(io_err(&sock))?);
    loop {
        // Replies come before any MCP byte, and MCP starts only after our
        // next write, so a buffered reader cannot swallow protocol bytes.
        let mut line = String::new();
        if reader.read_line(&mut line).map_err(io_err(&sock))? == 0 {
            return Err(daemon_err("closed the connection during the hello".into()));
        }
        match serde_json::from_str::<Reply>(line.trim()) {
            Ok(Reply::Progress { message }) => eprintln!("cairn: {message}"),
            Ok(Reply::Ready { pid }) => {
                tracing::info!("attached to daemon {pid} at {}", sock.display());
                break;
            }
            Ok(Reply::Ui { url }) => return Ok((stream, Some(url))),
            Ok(Reply::Refused { error }) => return Err(daemon_err(error)),
            Ok(
                Reply::Hits { .. }
                | Reply::Status { .. }
                | Reply::Recalled { .. }
                | Reply::Graph { .. },
            ) => {
                return Err(daemon_err("answered a question nobody asked".into()));
            }
            Err(e) => return Err(daemon_err(format!("bad reply {line:?}: {e}"))),
        }
    }
    Ok((stream, None))
}

#[cfg(test)]
mod hello_tests {
    use super::*;

    #[test]
    fn a_hello_asks_one_thing_and_its_version_reads_alone() {
        let hello = Hello::new(Ask::Mcp {
            watch: true,
            build_index: false,
        });
        let line = serde_json::to_string(&hello).unwrap_or_default();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&line).ok(),
            Some(serde_json::json!({
                "cairn": VERSION,
                "ask": {"mcp": {"watch": true, "build_index": false}}
            }))
        );
        let back: Hello = serde_json::from_str(&line).expect("a hello reads back");
        assert!(matches!(
            back.ask,
            Ask::Mcp {
                watch: true,
                build_index: false
            }
        ));
        // Another build's request of a shape this one does not know: the
        // version still reads, so the refusal names both versions.
        let other = r#"{"cairn": "0.0.1", "ask": {"teleport": {}}}"#;
        assert!(serde_json::from_str::<Hello>(other).is_err());
        assert_eq!(
            serde_json::from_str::<Version>(other).map(|v| v.cairn).ok(),
            Some("0.0.1".to_string())
        );
        // Two asks in one line cannot be written, nor read.
        let two =
            format!(r#"{{"cairn": "{VERSION}", "ask": {{"ui": {{"port": 0}}, "mcp": {{}}}}}}"#);
        assert!(serde_json::from_str::<Hello>(&two).is_err());
    }
}
