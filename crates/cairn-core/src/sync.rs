//! Locks that outlive a panic.
//!
//! A `Mutex` is poisoned when a thread panics while holding it. Cairn's
//! shared state (pools, queues, progress lines, the daemon's sessions) stays
//! consistent across such a panic — every critical section either finishes
//! its update or leaves the value as it was — and one request's panic must
//! never take down the daemon that serves the others. So every lock in the
//! workspace goes through these helpers, which take the guard back from the
//! poison instead of propagating the panic.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError, TryLockError, WaitTimeoutResult};
use std::time::Duration;

/// Locks `m`, recovering the guard if another thread panicked while holding it.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks `m` if no other thread holds it (recovering the guard from a
/// poison); `None` when it is held.
pub fn try_lock<T: ?Sized>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The value inside `m`, recovering it if `m` was poisoned.
pub fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `cv` for at most `timeout`, recovering the guard from a poison.
pub fn wait_timeout<'a, T>(
    cv: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Duration,
) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
    cv.wait_timeout(guard, timeout)
        .unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `cv` until notified, recovering the guard from a poison.
pub fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_panic_while_locked_does_not_poison_later_locks() {
        let m = Arc::new(Mutex::new(1));
        let m2 = Arc::clone(&m);
        let joined = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            panic!("a request panicked while holding the lock");
        })
        .join();
        assert!(joined.is_err());
        assert!(m.is_poisoned());
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 2);
        let held = lock(&m);
        assert!(try_lock(&m).is_none(), "held by this thread");
        drop(held);
        assert_eq!(try_lock(&m).map(|g| *g), Some(2));
        let m = Arc::try_unwrap(m).unwrap();
        assert_eq!(into_inner(m), 2);
    }
}
