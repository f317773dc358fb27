"""Whether a server's address is this host's own: fio and a server on one host share its
CPUs and memory (the ``served-here`` finding)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket


def own_address(host: str) -> bool:
    """``host`` (an IP address; a name is resolved without the network only when it is
    ``localhost``) is an address of this host: loopback, or one this host can bind."""
    name = host.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # a name: iobench does not ask a resolver for it here
    if address.is_loopback:
        return True
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((str(address), 0))  # only an address of this host's interfaces binds
        return True
    return False


def served_here(hosts: list[str]) -> str | None:
    """Why a server at any of ``hosts`` runs on this host ("127.0.0.1 is this host's"),
    or None."""
    mine = [h for h in dict.fromkeys(hosts) if own_address(h)]
    if not mine:
        return None
    return f"{', '.join(mine)} {'is' if len(mine) == 1 else 'are'} this host's own address"
