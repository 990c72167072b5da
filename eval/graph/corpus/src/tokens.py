"""One-time links."""

import secrets


def mint_link(user, hours=1):
    token = secrets.token_urlsafe(32)
    vault_put(user, token, ttl=hours * 3600)
    return f"/reset/{token}"


def vault_put(user, token, ttl):
    link_store.replace(user, token, ttl)
