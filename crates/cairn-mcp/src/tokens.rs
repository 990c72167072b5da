//! Secrets of the HTTP server: comparing them, and the web page's keys.
//!
//! The page is opened with a one-time token in its address (`/?token=…`,
//! what `cairn ui` prints). A browser keeps the address it was told to
//! open in its history and session-restore files, even when the server
//! redirects away from it (Chromium records the redirect's source), so
//! that token must be worth nothing once the page has it: the first load
//! trades it for the session key, held in an `HttpOnly` cookie, and spends
//! it. The session key is random per start and never printed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// Constant-time equality, so a token cannot be guessed byte by byte from
/// how long a refusal takes (only its length shows).
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 32 bytes from the operating system's random source, as 64 hex digits.
pub(crate) fn random_hex() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Most one-time tokens waiting to be used; the oldest is dropped past it
/// (each `cairn ui` makes one, whether or not a browser opens it).
const MAX_WAITING: usize = 32;

/// The web page's keys: one-time tokens for its address, and the session
/// key its cookie carries.
pub struct PageKeys {
    /// What the page's cookie holds: random per start, never printed.
    session: String,
    /// One-time tokens not yet exchanged, oldest first.
    waiting: Mutex<VecDeque<String>>,
    /// A token that is never spent: the bearer token of `serve --http
    /// --token`, which the user chose and keeps; the page may send it in
    /// `X-Cairn-Token` (it comes in the address's fragment, `#token=…`).
    fixed: Option<String>,
}

impl std::fmt::Debug for PageKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Secrets stay out of logs and panics.
        f.debug_struct("PageKeys").finish_non_exhaustive()
    }
}

impl PageKeys {
    /// New keys: a new session key and no one-time token yet.
    pub fn new() -> Result<Arc<PageKeys>> {
        Ok(Arc::new(PageKeys {
            session: random_hex()?,
            waiting: Mutex::new(VecDeque::new()),
            fixed: None,
        }))
    }

    /// Keys whose token is `fixed`, never spent (the bearer token).
    pub fn fixed(token: &str) -> Result<Arc<PageKeys>> {
        Ok(Arc::new(PageKeys {
            session: random_hex()?,
            waiting: Mutex::new(VecDeque::new()),
            fixed: Some(token.to_string()).filter(|t| !t.is_empty()),
        }))
    }

    /// A new one-time token for the page's address: the first load that
    /// gives it gets the session cookie, and it is spent.
    pub fn issue(&self) -> Result<String> {
        let token = random_hex()?;
        let mut waiting = cairn_core::sync::lock(&self.waiting);
        if waiting.len() >= MAX_WAITING {
            waiting.pop_front();
        }
        waiting.push_back(token.clone());
        Ok(token)
    }

    /// Whether `given` opens the page: a waiting one-time token (spent
    /// now) or the fixed token.
    pub(crate) fn exchange(&self, given: &str) -> bool {
        if self.is_fixed(given) {
            return true;
        }
        let mut waiting = cairn_core::sync::lock(&self.waiting);
        // Every entry is compared, so the time taken says nothing of which.
        let mut found = None;
        for (i, t) in waiting.iter().enumerate() {
            if same(t.as_bytes(), given.as_bytes()) {
                found = Some(i);
            }
        }
        found.and_then(|i| waiting.remove(i)).is_some()
    }

    /// Whether `given` is the fixed token.
    pub(crate) fn is_fixed(&self, given: &str) -> bool {
        self.fixed
            .as_deref()
            .is_some_and(|f| same(f.as_bytes(), given.as_bytes()))
    }

    /// Whether `given` is the session key.
    pub(crate) fn is_session(&self, given: &str) -> bool {
        same(given.as_bytes(), self.session.as_bytes())
    }

    /// The session key, for the cookie.
    pub(crate) fn session(&self) -> &str {
        &self.session
    }

    /// Whether the page's token is the bearer token (its address then
    /// carries it in the fragment, and it is not printed).
    pub fn has_fixed(&self) -> bool {
        self.fixed.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_time_token_opens_the_page_once() {
        let keys = PageKeys::new().expect("keys");
        let (a, b) = (keys.issue().expect("a"), keys.issue().expect("b"));
        assert_ne!(a, b);
        assert!(!keys.exchange("0".repeat(64).as_str()));
        assert!(keys.exchange(&b));
        assert!(!keys.exchange(&b), "spent");
        assert!(keys.exchange(&a));
        assert!(
            !keys.exchange(keys.session()),
            "the session key is no token"
        );
    }

    #[test]
    fn the_fixed_token_is_never_spent_and_waiting_ones_are_bounded() {
        let keys = PageKeys::fixed("s3cret").expect("keys");
        assert!(keys.exchange("s3cret") && keys.exchange("s3cret"));
        let first = keys.issue().expect("first");
        for _ in 0..MAX_WAITING {
            keys.issue().expect("more");
        }
        assert!(!keys.exchange(&first), "the oldest was dropped");
        assert_eq!(cairn_core::sync::lock(&keys.waiting).len(), MAX_WAITING);
    }
}
