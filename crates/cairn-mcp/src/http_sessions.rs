//! The table of live MCP sessions over HTTP, around rmcp's
//! `LocalSessionManager`: capped, and not to be hoarded.
//!
//! Each session takes one of `max` slots from its creation until it ends:
//! on `DELETE /mcp`, when its worker stops after `idle` without a message
//! (rmcp's `SessionConfig::keep_alive`; rmcp then calls `close_session`),
//! or when this table drops it:
//!
//! * a session that has sent no message since its `initialize` is dropped
//!   `unused` after its creation (a client sends `notifications/initialized`
//!   at once, so only an abandoned `initialize` waits that long);
//! * one client address holds at most `per_address` slots: at its share, its
//!   own longest idle session makes room for its new one;
//! * when every slot is taken, the longest idle session makes room.
//!
//! "Idle" is a session with no request in flight and no event stream open
//! (each stream rmcp asks for is counted until dropped). The one ended
//! first is one that never sent a message after its `initialize`, oldest
//! first, but not one of the newest unused ones (a quarter of the scope's
//! slots: [`protected_unused`]), which a client is still setting up; else
//! the least recently used of those that sent one; else, last, the oldest
//! of those newest unused. Only when none is idle is an `initialize`
//! answered 503. Before this, 150 `initialize` calls left unclosed, made in
//! a second, locked every other client out for the 10 minutes of `idle`;
//! and once one address held its share of used sessions (a client that
//! never ends its sessions), each of 10 clients arriving together ended
//! the one before it between its `initialize` and its next message, so 8
//! or 9 of them had that message answered 404.
//!
//! The request that will create a session reserves its slot first
//! ([`Sessions::reserve`], which may drop a session), so a full table is
//! answered before any work is done; the reservation reaches
//! `create_session` through a task-local value, since rmcp calls it from
//! inside that request's future.

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

tokio::task_local! {
    /// The slot reserved by the request now being served, if it may create a session.
    static RESERVED: RefCell<Option<Reservation>>;
}

/// What the session table can answer besides rmcp's own errors.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    /// Every slot is taken by a session in use.
    #[error("too many live MCP sessions (at most {0}), none of them idle")]
    Full(usize),
    /// The client's address holds its share, each session in use.
    #[error(
        "{address} holds {share} live MCP sessions, the most one address may, none of them idle"
    )]
    AddressFull {
        /// The client's address.
        address: IpAddr,
        /// Its share of the slots.
        share: usize,
    },
    /// rmcp's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// How many sessions, and for how long.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SessionLimits {
    /// Most live sessions.
    pub(crate) max: usize,
    /// Most live sessions of one client address.
    pub(crate) per_address: usize,
    /// A session without a message for this long ends (rmcp's keep-alive).
    pub(crate) idle: Duration,
    /// A session without a message since its `initialize` ends this long
    /// after its creation.
    pub(crate) unused: Duration,
}

/// One live session as the table sees it.
#[derive(Debug)]
struct Entry {
    /// The address of the client that created it (`None` when unknown).
    peer: Option<IpAddr>,
    /// Whether it has sent a message since its `initialize`.
    used: bool,
    /// When it was last used, on the table's clock (creation, else its
    /// latest message).
    seen: u64,
    /// Requests in flight and event streams open.
    busy: usize,
}

/// How many of the newest unused sessions, of a scope (an address, the
/// table) of `slots`, are ended only after every used idle one: a quarter,
/// at least one. That many clients arriving together keep their sessions
/// through their first message; a flood of `initialize` calls left unused
/// ends its own older sessions first, and so ends at most this many used
/// ones.
fn protected_unused(slots: usize) -> usize {
    (slots / 4).max(1)
}

/// The sessions and the slots reserved for sessions about to be created.
#[derive(Debug, Default)]
struct Table {
    live: HashMap<SessionId, Entry>,
    /// Reserved slots, by the address that reserved them.
    reserved: HashMap<Option<IpAddr>, usize>,
    /// A counter standing for time: each use takes the next value.
    clock: u64,
}

impl Table {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn held_by(&self, peer: IpAddr) -> usize {
        let live = self.live.values().filter(|e| e.peer == Some(peer)).count();
        live + self.reserved.get(&Some(peer)).copied().unwrap_or(0)
    }

    fn held(&self) -> usize {
        self.live.len() + self.reserved.values().sum::<usize>()
    }

    /// The session to drop first among the idle ones `mine` picks: one
    /// never used since its `initialize`, oldest first, except the newest
    /// `fresh` of those (clients between their `initialize` and their next
    /// message); else the least recently used; else the oldest of the
    /// newest unused.
    fn longest_idle(&self, mine: impl Fn(&Entry) -> bool, fresh: usize) -> Option<SessionId> {
        let mut unused: Vec<u64> = self
            .live
            .values()
            .filter(|e| !e.used && mine(e))
            .map(|e| e.seen)
            .collect();
        unused.sort_unstable_by(|a, b| b.cmp(a));
        // An unused session's `seen` is its creation: the newest `fresh`
        // are those at or after this one (all, when there are fewer).
        let newest = unused
            .get(fresh.saturating_sub(1))
            .or(unused.last())
            .copied();
        let protected = |e: &Entry| !e.used && fresh > 0 && newest.is_some_and(|n| e.seen >= n);
        self.live
            .iter()
            .filter(|(_, e)| e.busy == 0 && mine(e))
            .min_by_key(|(_, e)| {
                let rank = match (e.used, protected(e)) {
                    (false, false) => 0,
                    (true, _) => 1,
                    (false, true) => 2,
                };
                (rank, e.seen)
            })
            .map(|(id, _)| id.clone())
    }

    /// Takes a slot for `peer`: the session to drop to make room, if one
    /// had to be, else an error when none could be.
    fn take_slot(
        &mut self,
        peer: Option<IpAddr>,
        limits: &SessionLimits,
    ) -> Result<Option<SessionId>, SessionsError> {
        let victim = match peer {
            // At its share, an address makes room from its own sessions
            // (the share is at most the cap: the table then has room too).
            Some(address) if self.held_by(address) >= limits.per_address => Some(
                self.longest_idle(|e| e.peer == peer, protected_unused(limits.per_address))
                    .ok_or(SessionsError::AddressFull {
                        address,
                        share: limits.per_address,
                    })?,
            ),
            _ if self.held() >= limits.max => Some(
                self.longest_idle(|_| true, protected_unused(limits.max))
                    .ok_or(SessionsError::Full(limits.max))?,
            ),
            _ => None,
        };
        if let Some(id) = &victim {
            self.live.remove(id);
        }
        *self.reserved.entry(peer).or_default() += 1;
        Ok(victim)
    }

    fn unreserve(&mut self, peer: Option<IpAddr>) {
        if let Some(n) = self.reserved.get_mut(&peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.reserved.remove(&peer);
            }
        }
    }

    /// A message for `id`: it is used, now.
    fn touch(&mut self, id: &SessionId) {
        let now = self.tick();
        if let Some(e) = self.live.get_mut(id) {
            e.used = true;
            e.seen = now;
        }
    }
}

type Shared = Arc<Mutex<Table>>;

fn lock(table: &Mutex<Table>) -> MutexGuard<'_, Table> {
    cairn_core::sync::lock(table)
}

/// A slot for one session, taken before the request that creates it runs;
/// given back when dropped unused.
pub(crate) struct Reservation {
    table: Shared,
    peer: Option<IpAddr>,
    armed: bool,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.armed {
            lock(&self.table).unreserve(self.peer);
        }
    }
}

/// A session's request or stream in progress: the session is not idle
/// until it is dropped.
struct Busy {
    table: Shared,
    id: SessionId,
}

impl Busy {
    fn start(table: &Shared, id: &SessionId) -> Busy {
        let mut t = lock(table);
        t.touch(id);
        if let Some(e) = t.live.get_mut(id) {
            e.busy += 1;
        }
        Busy {
            table: table.clone(),
            id: id.clone(),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut t = lock(&self.table);
        let now = t.tick();
        if let Some(e) = t.live.get_mut(&self.id) {
            e.busy = e.busy.saturating_sub(1);
            e.seen = now;
        }
    }
}

/// A session's event stream, counted as busy while it lives.
struct Counted<S> {
    inner: Pin<Box<S>>,
    _busy: Busy,
}

impl<S: Stream> Stream for Counted<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// rmcp's in-memory sessions under [`SessionLimits`].
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    table: Shared,
    limits: SessionLimits,
    /// This table, for the timers of new sessions.
    me: Weak<Sessions>,
}

impl Sessions {
    pub(crate) fn new(limits: SessionLimits) -> Arc<Sessions> {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.idle);
        Arc::new_cyclic(|me| Sessions {
            inner,
            table: Shared::default(),
            limits,
            me: me.clone(),
        })
    }

    /// A slot for a session about to be created by a client at `peer`,
    /// made by ending the longest idle session when the table (or the
    /// address's share) is full; an error when no session is idle.
    pub(crate) async fn reserve(&self, peer: Option<IpAddr>) -> Result<Reservation, SessionsError> {
        let victim = lock(&self.table).take_slot(peer, &self.limits)?;
        let reservation = Reservation {
            table: self.table.clone(),
            peer,
            armed: true,
        };
        if let Some(id) = victim {
            tracing::debug!("HTTP: MCP session {id} ended to make room for a new one");
            if let Err(e) = self.inner.close_session(&id).await {
                tracing::debug!("HTTP: ending MCP session {id}: {e}");
            }
        }
        Ok(reservation)
    }

    /// Runs `f` (the request) with `slot` available to `create_session`;
    /// a slot it did not use is given back when `f` ends.
    pub(crate) async fn with_reservation<F: Future>(slot: Reservation, f: F) -> F::Output {
        RESERVED.scope(RefCell::new(Some(slot)), f).await
    }

    /// Ends `id` if it has sent nothing since its `initialize`.
    async fn end_if_unused(&self, id: &SessionId) {
        let unused = {
            let mut t = lock(&self.table);
            let unused = t.live.get(id).is_some_and(|e| !e.used && e.busy == 0);
            if unused {
                t.live.remove(id);
            }
            unused
        };
        if unused {
            tracing::debug!(
                "HTTP: MCP session {id} ended: no message within {:?} of its initialize",
                self.limits.unused
            );
            let _ = self.inner.close_session(id).await;
        }
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let reserved = RESERVED
            .try_with(|slot| slot.borrow_mut().take())
            .ok()
            .flatten();
        let mut slot = match reserved {
            Some(slot) => slot,
            None => self.reserve(None).await?,
        };
        let (id, transport) = self.inner.create_session().await?;
        {
            let mut t = lock(&self.table);
            t.unreserve(slot.peer);
            slot.armed = false;
            let seen = t.tick();
            t.live.insert(
                id.clone(),
                Entry {
                    peer: slot.peer,
                    used: false,
                    seen,
                    busy: 0,
                },
            );
        }
        let (me, unused, for_timer) = (self.me.clone(), self.limits.unused, id.clone());
        tokio::spawn(async move {
            tokio::time::sleep(unused).await;
            if let Some(sessions) = me.upgrade() {
                sessions.end_if_unused(&for_timer).await;
            }
        });
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.table).live.remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = Busy::start(&self.table, id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(Counted {
            inner: Box::pin(stream),
            _busy: busy,
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        lock(&self.table).touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = Busy::start(&self.table, id);
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(Counted {
            inner: Box::pin(stream),
            _busy: busy,
        })
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = Busy::start(&self.table, id);
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(Counted {
            inner: Box::pin(stream),
            _busy: busy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_address: usize) -> SessionLimits {
        SessionLimits {
            max,
            per_address,
            idle: Duration::from_secs(600),
            unused: Duration::from_secs(10),
        }
    }

    fn ip(last: u8) -> Option<IpAddr> {
        Some(IpAddr::from([10, 0, 0, last]))
    }

    /// Creates a session as `create_session` does, through a reservation.
    fn create(
        t: &mut Table,
        l: &SessionLimits,
        name: &str,
        peer: Option<IpAddr>,
    ) -> Option<String> {
        let victim = t.take_slot(peer, l).expect("a slot");
        t.unreserve(peer);
        let seen = t.tick();
        let entry = Entry {
            peer,
            used: false,
            seen,
            busy: 0,
        };
        t.live.insert(name.into(), entry);
        victim.map(|v| v.to_string())
    }

    #[test]
    fn a_full_table_ends_the_old_unused_first_then_the_least_recently_used() {
        // Eight slots: the newest two unused sessions are kept longest.
        let l = limits(8, 8);
        let mut t = Table::default();
        for (i, name) in ["a", "b", "c", "d", "e", "f", "g", "h"].iter().enumerate() {
            assert_eq!(create(&mut t, &l, name, ip(i as u8)), None);
        }
        // b, g and h never used; the others used in this order.
        for name in ["a", "c", "d", "e", "f"] {
            t.touch(&(*name).into());
        }
        // b is unused and not among the newest two: it goes first.
        assert_eq!(create(&mut t, &l, "i", ip(9)).as_deref(), Some("b"));
        // g is now the oldest unused past the newest two (h, i).
        assert_eq!(create(&mut t, &l, "j", ip(10)).as_deref(), Some("g"));
        // h, i and j unused: h goes, i and j are the newest two.
        assert_eq!(create(&mut t, &l, "k", ip(11)).as_deref(), Some("h"));
        t.touch(&"i".into());
        // Unused now: j and k, both among the newest two, so the least
        // recently used goes: a, then c.
        assert_eq!(create(&mut t, &l, "m", ip(12)).as_deref(), Some("a"));
        t.touch(&"m".into());
        assert_eq!(create(&mut t, &l, "n", ip(13)).as_deref(), Some("c"));
        assert!(["j", "k", "n"].iter().all(|id| t.live.contains_key(*id)));
        // Only the newest two unused (k, n) idle: the older of them goes.
        for (id, e) in t.live.iter_mut() {
            e.busy = usize::from(!["k", "n"].contains(&id.as_ref()));
        }
        assert_eq!(create(&mut t, &l, "o", ip(14)).as_deref(), Some("k"));
    }

    /// Issue 60: an address holds its share of used sessions (a client
    /// that never ends them), and ten clients arrive together: each new
    /// session makes room by ending a used one, never another client's
    /// new one before its first message. (Before, each ended the one
    /// created before it: 9 of the 10 were gone.)
    #[test]
    fn clients_arriving_together_do_not_end_each_other() {
        let l = limits(128, 64);
        let mut t = Table::default();
        let leaky = ip(1);
        for i in 0..64 {
            let name = format!("old{i}");
            create(&mut t, &l, &name, leaky);
            t.touch(&name.as_str().into());
        }
        let mut ended = Vec::new();
        for i in 0..10 {
            ended.extend(create(&mut t, &l, &format!("new{i}"), leaky));
        }
        assert_eq!(ended.len(), 10);
        assert!(ended.iter().all(|v| v.starts_with("old")), "{ended:?}");
        assert!((0..10).all(|i| t.live.contains_key(format!("new{i}").as_str())));
        assert_eq!(t.held_by(IpAddr::from([10, 0, 0, 1])), 64);
    }

    /// A flood of `initialize` calls never followed up ends its own older
    /// sessions, at most a quarter of the share of used ones, and a client
    /// after it still gets its session.
    #[test]
    fn a_flood_of_unused_sessions_ends_few_used_ones() {
        let l = limits(128, 64);
        let mut t = Table::default();
        let local = ip(1);
        for i in 0..60 {
            let name = format!("used{i}");
            create(&mut t, &l, &name, local);
            t.touch(&name.as_str().into());
        }
        for i in 0..300 {
            create(&mut t, &l, &format!("flood{i}"), local);
        }
        let kept = t.live.keys().filter(|id| id.starts_with("used")).count();
        assert!(kept >= 60 - protected_unused(64), "{kept} of 60 kept");
        assert_eq!(
            create(&mut t, &l, "client", local).map(|v| v.starts_with("flood")),
            Some(true)
        );
        assert!(t.live.contains_key("client"));
    }

    #[test]
    fn a_busy_session_is_never_ended_and_a_full_busy_table_refuses() {
        let l = limits(2, 2);
        let table: Shared = Shared::default();
        {
            let mut t = lock(&table);
            create(&mut t, &l, "a", ip(1));
            create(&mut t, &l, "b", ip(2));
        }
        let a = Busy::start(&table, &"a".into());
        // b is idle (and unused): it goes, a is busy.
        assert_eq!(
            create(&mut lock(&table), &l, "c", ip(3)).as_deref(),
            Some("b")
        );
        let c = Busy::start(&table, &"c".into());
        let refused = lock(&table).take_slot(ip(4), &l);
        assert!(
            matches!(refused, Err(SessionsError::Full(2))),
            "{refused:?}"
        );
        drop(a);
        assert_eq!(
            create(&mut lock(&table), &l, "d", ip(4)).as_deref(),
            Some("a")
        );
        drop(c);
    }

    #[test]
    fn one_address_holds_at_most_its_share() {
        let l = limits(6, 3);
        let mut t = Table::default();
        let (hoarder, other) = (ip(1), ip(2));
        for name in ["h1", "h2", "h3"] {
            assert_eq!(create(&mut t, &l, name, hoarder), None);
        }
        assert_eq!(create(&mut t, &l, "o1", other), None);
        // At its share, the hoarder's new session ends its own oldest, not
        // the other address's (older in use than h2 and h3 are not).
        t.touch(&"h1".into());
        assert_eq!(create(&mut t, &l, "h4", hoarder).as_deref(), Some("h2"));
        assert_eq!(t.held_by(IpAddr::from([10, 0, 0, 1])), 3);
        assert!(t.live.contains_key("o1"));
        // The other address still has room; no one is ended.
        assert_eq!(create(&mut t, &l, "o2", other), None);
        // Each of the hoarder's sessions busy: its next one is refused,
        // though the table has room.
        for id in ["h1", "h3", "h4"] {
            t.live.get_mut(id).expect("live").busy = 1;
        }
        let refused = t.take_slot(hoarder, &l);
        assert!(
            matches!(refused, Err(SessionsError::AddressFull { share: 3, .. })),
            "{refused:?}"
        );
        assert_eq!(t.held(), 5);
    }
}
