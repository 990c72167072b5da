//! `cairn serve` and the hidden `cairn daemon` it starts.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use cairn::{Engine, IndexOptions};
use cairn_mcp::Shared;

use crate::args::{Cli, DaemonArgs, ServeArgs};
use crate::progress::Bars;
use crate::project::{open_engine, project_root};

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Indexes with embeddings deferred, then starts them in the background.
fn build_index(shared: &Arc<Shared>, bars: &Bars) -> anyhow::Result<()> {
    let engine = &shared.engine;
    let roots = engine.default_roots();
    let report = engine.index_with(
        &roots,
        IndexOptions {
            defer_embedding: true,
        },
        bars,
    )?;
    tell!(
        "cairn: indexed {} files ({} added, {} changed, {} deleted); serving; embeddings continue in the background",
        report.files_seen,
        report.files_added,
        report.files_changed,
        report.files_deleted
    );
    shared.spawn_backfill();
    Ok(())
}

fn shared_engine(cli: &Cli, bars: &Bars) -> anyhow::Result<Arc<Shared>> {
    let engine: Engine = open_engine(cli, bars, false)?;
    Ok(Shared::new(Arc::new(engine)))
}

/// The engine of this process, indexed first and watched when asked; the
/// watcher lives as long as the returned handle.
fn own_engine(
    cli: &Cli,
    args: &ServeArgs,
    bars: &Bars,
) -> anyhow::Result<(Arc<Shared>, Option<cairn_mcp::watch::Watch>)> {
    let shared = shared_engine(cli, bars)?;
    if args.build_index {
        build_index(&shared, bars)?;
    }
    let watch = if args.watch {
        let debounce = Duration::from_millis(args.debounce_ms);
        Some(cairn_mcp::watch::start(shared.clone(), debounce)?)
    } else {
        None
    };
    Ok((shared, watch))
}

/// The first line of a token file, trimmed; an error naming the file when it
/// cannot be read or holds no token.
fn read_token_file(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the token file {}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        anyhow::bail!(
            "the token file {} is empty (its first line should hold the token)",
            path.display()
        );
    }
    Ok(token.to_string())
}

/// The bearer token: `--token-file`, else `--token` or CAIRN_HTTP_TOKEN.
fn http_token(args: &ServeArgs) -> anyhow::Result<Option<String>> {
    let Some(path) = &args.token_file else {
        return Ok(args.token.clone().filter(|t| !t.is_empty()));
    };
    // clap fills `token` from the environment too; only a flag conflicts.
    let from_env = std::env::var("CAIRN_HTTP_TOKEN").ok();
    if args.token.is_some() && args.token != from_env {
        anyhow::bail!("give the token with --token or --token-file, not both");
    }
    read_token_file(path).map(Some)
}

pub fn serve(cli: &Cli, args: &ServeArgs, bars: &Bars) -> anyhow::Result<()> {
    if let Some(addr) = args.http {
        let token = http_token(args)?;
        let (shared, _watch) = own_engine(cli, args, bars)?;
        // The page's API wants a key too: the bearer token when there is
        // one (the page sends it), else the cookie a one-time token in the
        // page's address gets.
        let page = match &token {
            Some(t) => cairn_mcp::ui::PageKeys::fixed(t)?,
            None => cairn_mcp::ui::PageKeys::new()?,
        };
        let opts = cairn_mcp::http::HttpOptions {
            addr: Some(addr),
            token,
            page: Some(page),
            allowed_hosts: args.allow_host.clone(),
            allowed_origins: args.allow_origin.clone(),
            limits: cairn_mcp::http::HttpLimits::default(),
        };
        let rt = runtime()?;
        rt.block_on(async move {
            let cancel = cairn_mcp::http::CancellationToken::new();
            let c = cancel.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                c.cancel();
            });
            cairn_mcp::http::serve(shared, opts, cancel).await
        })?;
        return Ok(());
    }

    #[cfg(unix)]
    if !args.no_daemon {
        match attach(cli, args) {
            Ok((root, opts, stream)) => return Ok(cairn_mcp::proxy::pump(&root, &opts, stream)?),
            Err(e) => {
                tell!("cairn: shared daemon unavailable ({e:#}); serving from this process")
            }
        }
    }
    let (shared, _watch) = own_engine(cli, args, bars)?;
    runtime()?.block_on(cairn_mcp::serve_stdio(shared))?;
    Ok(())
}

/// `cairn ui`: the page on loopback, served by the project's daemon (see
/// [`ui_via_daemon`]), or — with `CAIRN_NO_DAEMON`, or when no daemon can be
/// had — by this process with the project's engine (watching for changes unless `--no-watch`, so the page
/// follows a re-index); prints the address, which carries a one-time token
/// (`/?token=…`: the page's first load trades it for a cookie; each `cairn
/// ui` through the daemon prints a new one), and opens the browser unless
/// `--no-open`.
pub fn ui(cli: &Cli, args: &crate::args::UiArgs, bars: &Bars) -> anyhow::Result<()> {
    #[cfg(unix)]
    if std::env::var_os("CAIRN_NO_DAEMON").is_none() {
        match ui_via_daemon(cli, args) {
            Ok(()) => return Ok(()),
            Err(e) => tell!(
                "cairn: shared daemon unavailable ({e:#}); serving the page from this process"
            ),
        }
    }
    let shared = shared_engine(cli, bars)?;
    let _watch = if args.no_watch {
        None
    } else {
        Some(cairn_mcp::watch::start(
            shared.clone(),
            cairn_mcp::watch::DEFAULT_DEBOUNCE,
        )?)
    };
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], args.port));
    let rt = runtime()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr} (another `cairn ui`? try --port 0)"))?;
        let bound = listener.local_addr()?;
        let keys = cairn_mcp::ui::PageKeys::new()?;
        let url = format!("http://{bound}/?token={}", keys.issue()?);
        say!("{url}");
        if !args.no_open {
            open_browser(&url);
        }
        let cancel = cairn_mcp::http::CancellationToken::new();
        let c = cancel.clone();
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            c.cancel();
        });
        let opts = cairn_mcp::http::HttpOptions {
            addr: Some(bound),
            page: Some(keys),
            ..Default::default()
        };
        cairn_mcp::http::serve_on_listener(shared, opts, listener, cancel).await?;
        anyhow::Ok(())
    })
}

/// Opens `url` in the desktop's browser; says so when it cannot.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        tell!("cairn: could not start {opener}; open {url} yourself");
    }
}

#[cfg(unix)]
fn attach(
    cli: &Cli,
    args: &ServeArgs,
) -> anyhow::Result<(
    std::path::PathBuf,
    cairn_mcp::daemon::AttachOptions,
    std::os::unix::net::UnixStream,
)> {
    use cairn_mcp::daemon::{Ask, Hello, attach};

    let root = project_root(cli)?;
    let opts = attach_options(
        cli,
        &root,
        args.idle_timeout,
        args.debounce_ms,
        Hello::new(Ask::Mcp {
            watch: args.watch,
            build_index: args.build_index,
        }),
    )?;
    let stream = attach(&root, &opts)?;
    Ok((root, opts, stream))
}

/// How to reach (or start) the project's daemon with `hello`.
#[cfg(unix)]
fn attach_options(
    cli: &Cli,
    root: &Path,
    idle_timeout: u64,
    debounce_ms: u64,
    hello: cairn_mcp::daemon::Hello,
) -> anyhow::Result<cairn_mcp::daemon::AttachOptions> {
    let exe = std::env::current_exe().context("locating the cairn executable")?;
    let mut daemon_args = vec![
        "-C".to_string(),
        root.to_string_lossy().into_owned(),
        "daemon".to_string(),
        "--idle-timeout".to_string(),
        idle_timeout.to_string(),
        "--debounce-ms".to_string(),
        debounce_ms.to_string(),
    ];
    if cli.quiet {
        daemon_args.push("-q".into());
    }
    for set in &cli.sets {
        daemon_args.push("--set".into());
        daemon_args.push(set.clone());
    }
    Ok(cairn_mcp::daemon::AttachOptions {
        exe,
        daemon_args,
        hello,
        start_timeout: Duration::from_secs(20),
    })
}

/// `cairn ui` through the project's daemon (started when absent): it
/// serves the page from its warm engine; this process prints the address,
/// opens the browser and stays a client of the daemon until it ends.
#[cfg(unix)]
fn ui_via_daemon(cli: &Cli, args: &crate::args::UiArgs) -> anyhow::Result<()> {
    use std::io::Read;

    let root = project_root(cli)?;
    let opts = attach_options(
        cli,
        &root,
        args.idle_timeout,
        cairn_mcp::watch::DEFAULT_DEBOUNCE_MS,
        cairn_mcp::daemon::Hello::new(cairn_mcp::daemon::Ask::Ui {
            port: args.port,
            watch: !args.no_watch,
        }),
    )?;
    let (mut stream, url) = cairn_mcp::daemon::attach_for(&root, &opts)?;
    let url = url.context("the daemon did not say where the page is")?;
    say!("{url}");
    if !args.no_open {
        open_browser(&url);
    }
    tell!("cairn: the page is served by the project's daemon; Ctrl-C ends this client");
    let mut buf = [0u8; 64];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
    tell!("cairn: the daemon ended");
    Ok(())
}

pub fn daemon(cli: &Cli, args: &DaemonArgs, bars: &Bars) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let root = project_root(cli)?;
        // Only one daemon per project: take the lock before loading the model.
        let Some(lock) = cairn_mcp::daemon::try_lock(&root)? else {
            tracing::info!("another daemon serves {}", root.display());
            return Ok(());
        };
        let shared = shared_engine(cli, bars)?;
        let opts = cairn_mcp::daemon::DaemonOptions {
            idle: Duration::from_secs(args.idle_timeout),
            watch: args.watch,
            debounce: Duration::from_millis(args.debounce_ms),
        };
        runtime()?.block_on(cairn_mcp::daemon::run(shared, opts, lock))?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        let _ = (cli, args, bars);
        anyhow::bail!("the shared daemon needs Unix domain sockets; use `cairn serve --no-daemon`")
    }
}

/// `cairn watch`: indexes once, then re-indexes files as they change
/// (debounced), until the process is interrupted. Each write is one
/// transaction, so an interrupt loses nothing written.
pub(crate) fn watch(cli: &Cli, a: &crate::args::WatchArgs, bars: &Bars) -> anyhow::Result<()> {
    let shared = shared_engine(cli, bars)?;
    let roots = shared.engine.default_roots();
    let report = shared.engine.index(&roots, bars)?;
    if !bars.quiet() {
        crate::print::index_report(&report, shared.engine.embedder().is_some());
        tell!(
            "cairn: watching {} for changes (Ctrl-C to stop)",
            shared.engine.root().display()
        );
    }
    let _watch = cairn_mcp::watch::start(shared.clone(), Duration::from_millis(a.debounce_ms))?;
    loop {
        std::thread::park();
    }
}
