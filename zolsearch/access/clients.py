"""Who a request comes from, without keeping who it is: the client's address behind trusted
proxies, and the keyed hashes that stand for it (the address itself is never stored or logged)."""

from __future__ import annotations

import ipaddress
from functools import cache

from django.conf import settings
from django.http import HttpRequest

from zolsearch.search.services import client_fingerprint

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@cache
def _networks(entries: tuple[str, ...]) -> tuple[_Network, ...]:
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())


def address_in(address: str, entries: list[str] | tuple[str, ...]) -> bool:
    """True if ``address`` (IPv4 or IPv6 text) lies in one of ``entries`` (addresses or CIDR
    networks such as ``10.0.0.0/8``); False for anything that is not an address."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in _networks(tuple(entries)))


def client_address(request: HttpRequest) -> str:
    """The client's IP address: ``REMOTE_ADDR``, or, when that is a trusted proxy
    (``TRUSTED_PROXIES``, default loopback), the right-most ``X-Forwarded-For`` entry that is not
    itself a trusted proxy (entries further left can be typed by the client, so they are never
    believed). "" when nothing usable is there. Kept in memory only: callers hash it."""
    remote = str(request.META.get("REMOTE_ADDR", "")).strip()
    trusted = list(getattr(settings, "TRUSTED_PROXIES", []))
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR", ""))
    if not forwarded or not address_in(remote, trusted):
        return remote
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not address_in(hop, trusted):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return remote  # a malformed entry: the proxy is the best we know
    return hops[0] if hops else remote


def request_fingerprint(request: HttpRequest) -> str:
    """The keyed hash of the request's client address (:func:`client_fingerprint`: HMAC-SHA-256
    under a key that rotates every ``CLIENT_HASH_ROTATION_S``), 64 hex characters."""
    return client_fingerprint(address=client_address(request))


def axes_client_ip(request: HttpRequest) -> str:
    """django-axes' ``AXES_CLIENT_IP_CALLABLE``: the client's fingerprint written as an IPv6
    address (its first 128 bits), because axes stores the "IP" in an address column and logs it.
    Lockouts still work per client (same client, same pseudonym within a rotation period), and no
    real address reaches axes' tables or log lines. A lockout ends at the latest when the key
    rotates."""
    return str(ipaddress.IPv6Address(bytes.fromhex(request_fingerprint(request)[:32])))
