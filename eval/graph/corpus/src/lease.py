"""Leases on interactive handles."""

import time


class LeaseKeeper:
    """Keeps leases alive while they are touched and reaps the idle ones."""

    def __init__(self, idle_seconds=1800):
        self.idle_seconds = idle_seconds
        self.leases = {}

    def touch(self, handle):
        self.leases[handle] = time.monotonic()

    def reap(self):
        now = time.monotonic()
        stale = [h for h, t in self.leases.items() if now - t > self.idle_seconds]
        for h in stale:
            revoke_handle(h)
            del self.leases[h]


def revoke_handle(handle):
    """Drops a handle everywhere it is cached."""
    handle_cache.evict(handle)
