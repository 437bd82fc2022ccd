"""How many connections one listener holds: a budget per address and one in all, idle connections shed first.

Each listener of ``wasdi-server serve`` (the API, the built-in broker, SFTP) keeps one ``ConnectionBudget``
and asks it at every accepted connection.  A new connection always gets in while some held connection is idle:
when its address already holds ``per_address`` connections, that address's idlest one is closed; when the
listener holds ``total``, the idlest one of the address holding the most is.  Only when everything that would
have to go is in use (a request being served, a logged-in session) is the new connection refused.  So no
number of connections from one address stops another address's requests, and the process never holds more
descriptors than the budgets say.

Addresses are counted as IPv4 addresses and IPv6 /64 networks (one host usually owns a whole /64).
A budget is used by its listener's one thread (an event loop): it takes no lock.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from typing import Protocol

log = logging.getLogger("wasdi_server.connections")

LISTEN_BACKLOG = 1024
"""Connections the kernel queues for a listener until it accepts them (waitress's default; asyncio's is 100,
which under a storm of connections makes clients wait a second per retry)."""
IDLE = 0
"""Rank of a connection that is doing nothing (between requests, or never sent a byte): shed first."""
STARTED = 1
"""Rank of a connection part-way through a handshake or a request's headers: shed after the idle ones."""


class Held(Protocol):
    """A connection a budget may shed."""

    def shed_rank(self) -> tuple[int, float] | None:
        """``(rank, since)``: the lowest rank, then the oldest ``since``, is shed first; ``None`` while in use."""

    def shed(self) -> None:
        """Close the connection now (the listener's own thread calls this)."""


def address_key(address: str) -> str:
    """What one address counts as: the IPv4 address, or the IPv6 /64 network (an IPv4-mapped one as IPv4)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class ConnectionBudget:
    """The connections one listener holds, by address."""

    def __init__(self, name: str, total: int, per_address: int) -> None:
        self.name = name
        self.total = max(1, total)
        self.per_address = max(1, min(per_address, self.total))
        self._by_address: dict[str, dict[Held, None]] = {}
        self._address_of: dict[Held, str] = {}
        self.shed_count = 0
        """Connections closed to make room, since the start."""
        self.refused_count = 0
        """Connections refused because every one that would have to go was in use."""

    def __len__(self) -> int:
        return len(self._address_of)

    def held_by(self, address: str) -> int:
        return len(self._by_address.get(address_key(address), ()))

    def admit(self, address: str, connection: Held) -> bool:
        """Count ``connection`` from ``address``, closing idle ones to make room; False: refused (not counted)."""
        key = address_key(address)
        mine = self._by_address.get(key)
        if mine is not None and len(mine) >= self.per_address:
            victim = _idlest(mine)
            if victim is None:
                return self._refuse(address, f"its address holds {len(mine)} connections, all in use")
            self._shed(victim)
        elif len(self._address_of) >= self.total:
            victim = self._idlest_anywhere()
            if victim is None:
                return self._refuse(address, f"{len(self._address_of)} connections are held, all in use")
            self._shed(victim)
        self._by_address.setdefault(key, {})[connection] = None
        self._address_of[connection] = key
        return True

    def release(self, connection: Held) -> None:
        """Forget ``connection`` (it closed); again is fine."""
        key = self._address_of.pop(connection, None)
        if key is None:
            return
        mine = self._by_address.get(key)
        if mine is not None:
            mine.pop(connection, None)
            if not mine:
                del self._by_address[key]

    def _idlest_anywhere(self) -> Held | None:
        # The address holding the most gives first; if all of its connections are busy, any idle one goes.
        crowded = max(self._by_address.values(), key=len)
        return _idlest(crowded) or _idlest(self._address_of)

    def _shed(self, victim: Held) -> None:
        self.release(victim)
        self.shed_count += 1
        if self.shed_count in (1, 10, 100) or self.shed_count % 1000 == 0:
            log.warning("%s: %d idle connection(s) closed to make room for new ones so far (budget %d in all, "
                        "%d per address)", self.name, self.shed_count, self.total, self.per_address)
        try:
            victim.shed()
        except Exception:  # a connection that cannot even be closed cleanly is gone all the same
            log.debug("%s: closing a shed connection failed", self.name, exc_info=True)

    def _refuse(self, address: str, why: str) -> bool:
        self.refused_count += 1
        if self.refused_count in (1, 10, 100) or self.refused_count % 1000 == 0:
            log.warning("%s: refused a connection from %s: %s (%d refused so far)", self.name, address, why,
                        self.refused_count)
        return False


def _idlest(connections: Iterable[Held]) -> Held | None:
    best: Held | None = None
    best_rank: tuple[int, float] | None = None
    for connection in connections:
        rank = connection.shed_rank()
        if rank is not None and (best_rank is None or rank < best_rank):
            best, best_rank = connection, rank
    return best
