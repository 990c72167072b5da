//! The connection layer under the HTTP router: an accept loop with a cap on
//! open connections, and hyper's HTTP/1.1 with a header read timeout
//! (`axum::serve` has neither knob).
//!
//! hyper runs the header timer whenever a connection waits for a request
//! head: from accept, and again after each response. So the one timeout
//! closes a slow-header connection and an idle keep-alive connection alike;
//! a response being written (an SSE stream) is not timed.
//!
//! At the cap, a new connection waits for a slot, and makes room by closing
//! the oldest connection that has been open [`UNUSED_GRACE`] (or one header
//! timeout, if shorter) without a complete request: an idle or slow client,
//! which the header timeout would close anyway; a client in a burst, whose
//! request is merely not parsed yet, is left alone. A new connection that
//! gets no slot within two header timeouts (by then every idle connection
//! has been closed) is answered 503 and closed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Limits of the connection layer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnLimits {
    /// Most connections open at once (1 to `u32::MAX`).
    pub(crate) max_connections: usize,
    /// Longest wait for a complete request head.
    pub(crate) header_timeout: Duration,
    /// How long shutdown waits for requests in flight.
    pub(crate) shutdown_grace: Duration,
}

/// How long a connection without a complete request is safe from being
/// closed to make room (a client in a burst gets its request parsed sooner).
const UNUSED_GRACE: Duration = Duration::from_millis(500);

/// How often a connection waiting for a slot looks again for one to close.
const RECHECK: Duration = Duration::from_millis(100);

/// The answer to a connection that found no slot.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 52\r\n\r\nService Unavailable: too many open HTTP connections\n";

/// One open connection, as the accept loop sees it.
struct Open {
    opened: Instant,
    /// No complete request has come in on it yet.
    unused: Arc<AtomicBool>,
    /// Closes it (dropped, not drained).
    close: CancellationToken,
}

/// The open connections, oldest first.
#[derive(Default)]
struct Table {
    next: u64,
    open: BTreeMap<u64, Open>,
}

#[derive(Clone, Default)]
struct Conns(Arc<Mutex<Table>>);

impl Conns {
    fn lock(&self) -> MutexGuard<'_, Table> {
        cairn_core::sync::lock(&self.0)
    }

    fn add(&self, open: Open) -> Registered {
        let mut t = self.lock();
        let id = t.next;
        t.next += 1;
        t.open.insert(id, open);
        Registered {
            conns: self.clone(),
            id,
        }
    }

    /// Closes the oldest connection open `grace` without a complete
    /// request, unless one is being closed already.
    fn close_oldest_unused(&self, grace: Duration) {
        let t = self.lock();
        if t.open.values().any(|o| o.close.is_cancelled()) {
            return;
        }
        let victim = t
            .open
            .values()
            .find(|o| o.unused.load(Ordering::Relaxed) && o.opened.elapsed() >= grace);
        if let Some(v) = victim {
            v.close.cancel();
        }
    }
}

/// A slot for a new connection when all are taken: closes an unused
/// connection once one is old enough, else waits for one to end; `None`
/// after `limit`.
async fn wait_for_slot(
    slots: &Arc<Semaphore>,
    conns: &Conns,
    grace: Duration,
    limit: Duration,
) -> Option<OwnedSemaphorePermit> {
    let deadline = tokio::time::Instant::now() + limit;
    let slot = slots.clone().acquire_owned();
    let mut slot = std::pin::pin!(slot);
    loop {
        conns.close_oldest_unused(grace);
        let next = (tokio::time::Instant::now() + RECHECK).min(deadline);
        tokio::select! {
            slot = &mut slot => return slot.ok(),
            _ = tokio::time::sleep_until(next) => {
                if next >= deadline {
                    return None;
                }
            }
        }
    }
}

/// A connection's entry in the table, removed when its task ends.
struct Registered {
    conns: Conns,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.conns.lock().open.remove(&self.id);
    }
}

/// Whether an accept error is about one connection (go on at once) rather
/// than the process (out of descriptors: pause before trying again).
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// Serves `app` on `listener` until `cancel` fires, then lets requests in
/// flight finish for up to `limits.shutdown_grace`.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    cancel: CancellationToken,
) {
    let max = limits.max_connections;
    let slots = Arc::new(Semaphore::new(max));
    let conns = Conns::default();
    loop {
        let (stream, peer) = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    tracing::warn!("HTTP accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                let grace = UNUSED_GRACE.min(limits.header_timeout);
                let wait = wait_for_slot(
                    &slots,
                    &conns,
                    grace,
                    limits.header_timeout.saturating_mul(2),
                );
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    got = wait => match got {
                        Some(slot) => slot,
                        None => {
                            tracing::debug!("HTTP: {max} connections busy; one more refused");
                            // Best effort, never blocking: the socket buffer takes it.
                            let _ = stream.try_write(BUSY);
                            continue;
                        }
                    },
                }
            }
        };
        let unused = Arc::new(AtomicBool::new(true));
        let close = CancellationToken::new();
        let registered = conns.add(Open {
            opened: Instant::now(),
            unused: unused.clone(),
            close: close.clone(),
        });
        let conn = Connection {
            app: app.clone(),
            peer,
            header_timeout: limits.header_timeout,
            unused,
            close,
            shutdown: cancel.clone(),
        };
        tokio::spawn(conn.run(stream, slot, registered));
    }
    // Every slot back: every connection has ended.
    let drained = tokio::time::timeout(limits.shutdown_grace, slots.acquire_many(max as u32));
    if drained.await.is_err() {
        tracing::info!("HTTP: connections still open after the shutdown grace period");
    }
}

/// One accepted connection and what can end it.
struct Connection {
    app: Router,
    /// The client's address, given to each request as `ConnectInfo`.
    peer: SocketAddr,
    header_timeout: Duration,
    unused: Arc<AtomicBool>,
    close: CancellationToken,
    shutdown: CancellationToken,
}

impl Connection {
    async fn run(self, stream: TcpStream, _slot: OwnedSemaphorePermit, _entry: Registered) {
        let Connection {
            app,
            peer,
            header_timeout,
            unused,
            close,
            shutdown,
        } = self;
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            unused.store(false, Ordering::Relaxed);
            let mut req = req.map(Body::new);
            req.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(req)
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout);
        let conn = builder.serve_connection(TokioIo::new(stream), service);
        let mut conn = std::pin::pin!(conn);
        tokio::select! {
            done = conn.as_mut() => {
                if let Err(e) = done {
                    tracing::debug!("HTTP connection ended: {e}");
                }
            }
            _ = close.cancelled() => {}
            _ = shutdown.cancelled() => {
                conn.as_mut().graceful_shutdown();
                let _ = conn.await;
            }
        }
    }
}
