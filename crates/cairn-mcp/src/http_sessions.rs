//! A cap on live MCP sessions over HTTP, around rmcp's `LocalSessionManager`.
//!
//! Each session holds one of `max` slots from its creation until rmcp closes
//! it: on `DELETE /mcp`, or when its worker stops after `idle` without a
//! message (rmcp's `SessionConfig::keep_alive`, which then calls
//! `close_session`). The request that will create a session reserves its slot
//! first ([`Sessions::reserve`]), so a full table is answered 503 before any
//! work is done; the reservation reaches `create_session` through a task-local
//! value, since rmcp calls it from inside that request's future.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

tokio::task_local! {
    /// The slot reserved by the request now being served, if it may create a session.
    static RESERVED: RefCell<Option<OwnedSemaphorePermit>>;
}

/// What the capped session table can answer besides rmcp's own errors.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    /// Every slot is taken.
    #[error("too many live MCP sessions (at most {0})")]
    Full(usize),
    /// rmcp's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// A slot for one session, taken before the request that creates it runs.
pub(crate) struct Reservation(OwnedSemaphorePermit);

/// rmcp's in-memory sessions, at most `max` of them, each dropped after
/// `idle` without a message.
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    slots: Arc<Semaphore>,
    held: Mutex<HashMap<SessionId, OwnedSemaphorePermit>>,
    max: usize,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Sessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Sessions {
            inner,
            slots: Arc::new(Semaphore::new(max)),
            held: Mutex::new(HashMap::new()),
            max,
        }
    }

    /// The cap.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// A slot for a session about to be created; `None` when all are taken.
    pub(crate) fn reserve(&self) -> Option<Reservation> {
        self.slots.clone().try_acquire_owned().ok().map(Reservation)
    }

    /// Runs `f` (the request) with `slot` available to `create_session`;
    /// a slot it did not use is given back when `f` ends.
    pub(crate) async fn with_reservation<F: Future>(slot: Reservation, f: F) -> F::Output {
        RESERVED.scope(RefCell::new(Some(slot.0)), f).await
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, OwnedSemaphorePermit>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
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
        let slot = match reserved {
            Some(slot) => slot,
            None => self
                .slots
                .clone()
                .try_acquire_owned()
                .map_err(|_| SessionsError::Full(self.max))?,
        };
        let (id, transport) = self.inner.create_session().await?;
        self.held().insert(id.clone(), slot);
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
        let slot = self.held().remove(id);
        let closed = self.inner.close_session(id).await;
        drop(slot);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
